//! A recording's file, written around the page cache.
//!
//! A recorder writes hundreds of megabytes a wall second: office-50 makes
//! 7.3 MB per sim second, and runs at 40–60× real time in fast mode.
//! Through the page cache each byte is copied into a page the kernel must
//! first find and account for. On the virtual machines this project runs
//! on, whose free memory the host takes back (virtio's free page
//! reporting), that copy ran at about 0.45 GB/s and took two thirds of the
//! recorder's CPU: `dd` of 2 GB spent 4.6 s of system time through the
//! page cache and 0.14 s with `O_DIRECT`.
//!
//! So the file is opened with `O_DIRECT` where the file system allows it:
//! whole blocks go from aligned buffers straight to the device, on a
//! thread of their own, so that the recorder's callbacks never wait for the
//! disk. Where `O_DIRECT` is refused (tmpfs, some network file systems),
//! the same blocks go through the page cache. A flush writes the block
//! being filled, padded to the alignment, and cuts the file back to the
//! bytes written; later writes go on filling that block and write it
//! again whole.
//!
//! Bytes of another owner — a node's batch in Zenoh's shared memory — go
//! to the device from where they lie ([`DirectFile::write_lent`]): the
//! recorder writes them without reading them, the block being filled
//! ending where they start.
//!
//! The thread gathers what goes on where the last piece ended into one
//! write of up to 2 MiB (see `gather`): on a virtual machine each write
//! costs an exit to the host, and a node's batch is a few hundred
//! kilobytes.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
#[cfg(not(target_os = "linux"))]
use std::os::unix::fs::FileExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender, TryRecvError, TrySendError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Direct I/O's alignment of buffers, file offsets and lengths, bytes:
/// the largest logical block size of common devices.
const ALIGN: usize = 4096;

/// Bytes per write to the device: one huge page.
const BLOCK_BYTES: usize = HUGE_PAGE;

/// The size and alignment of x86-64's and arm64's (4 KiB granule) huge
/// pages, bytes.
const HUGE_PAGE: usize = 2 << 20;

/// Blocks in memory at most: one being filled, the others being written
/// or waiting to be. Each lent piece takes the block that ends where it
/// starts (its chunk's head, and the message indexes of the chunk before),
/// so a run of [`RUN_BYTES`] of a few hundred kilobytes' batches holds
/// several. A recorder that outruns the disk waits for a block to come
/// back, and its senders for it.
const BLOCKS: usize = 12;

/// Lent pieces of one [`Lender`] (a node's batches) held for the writing
/// thread at most: the bytes of more are copied. A node's batches come
/// from its pool of shared memory (4 MiB, see `flotilla_node_kit::args`),
/// which it needs back for its next batch. Holding up to four batches of a
/// megabyte (of any node), the odometry node's CPU and the recorder's rose
/// from about 0.18 to 0.35 s per 60 sim s of office-50 in two rounds of
/// eight, as when a node's pool runs out and its batches go through
/// process memory and the socket.
const LENT_IN_FLIGHT: usize = 2;

/// Bytes the writing thread gathers before it writes, when they come one
/// after the other: on the virtual machines this project runs on, each
/// write to the disk costs an exit to the host, and `dd` of 1 GB with
/// `O_DIRECT` spent 0.21–0.23 s of system time in writes of 256 KiB, 0.09
/// s in writes of 2 MiB.
const RUN_BYTES: usize = BLOCK_BYTES;

/// How long the writing thread waits at most, wall time, for a run to grow
/// to [`RUN_BYTES`]: a recording of a slow simulation still reaches the
/// disk at once.
const RUN_WAIT: Duration = Duration::from_millis(10);

/// Jobs written at once at most (two pieces each at most, well within
/// `pwritev`'s 1024).
const RUN_JOBS: usize = 64;

#[cfg(target_os = "linux")]
const O_DIRECT: i32 = libc::O_DIRECT;
#[cfg(not(target_os = "linux"))]
const O_DIRECT: i32 = 0;

/// A file written in aligned blocks by a thread of its own, around the
/// page cache where it can be (see the module's documentation).
pub struct DirectFile {
    /// The block being filled.
    block: Block,
    /// Blocks allocated so far, at most [`BLOCKS`].
    allocated: usize,
    /// Whether bytes were written since the last flush.
    dirty: bool,
    /// Where the bytes held for a rewrite start (see [`DirectFile::hold`]).
    hold_from: Option<u64>,
    /// Full blocks kept back for a rewrite, in file order.
    held: Vec<Block>,
    jobs: Option<SyncSender<Job>>,
    /// Blocks the thread has written, to be filled again.
    free: Receiver<Block>,
    thread: Option<JoinHandle<io::Result<()>>>,
    /// Why writing stopped, once it has: every later call fails with it.
    failed: Option<String>,
}

/// A buffer of [`BLOCK_BYTES`] at an aligned address, and where in the
/// file it goes.
struct Block {
    bytes: memmap2::MmapMut,
    /// Where the aligned part of `bytes` starts.
    start: usize,
    /// Its position in the file, bytes: a multiple of [`ALIGN`].
    offset: u64,
    /// Bytes filled.
    len: usize,
}

impl Block {
    /// A block on a huge page of its own where the kernel gives one. Each
    /// direct write pins the pages it reads from: 512 small pages a block
    /// took 9 % of the recorder's CPU (`gup_fast_fallback`), where one
    /// huge page is pinned at once. The advice comes before the first
    /// write makes the pages; where transparent huge pages are off, the
    /// block keeps small ones.
    fn new() -> io::Result<Block> {
        let bytes = memmap2::MmapOptions::new().len(BLOCK_BYTES + HUGE_PAGE).map_anon()?;
        // A misaligned buffer only makes direct writes fail, which then
        // go through the page cache.
        let start = bytes.as_ptr().align_offset(HUGE_PAGE).min(HUGE_PAGE);
        #[cfg(target_os = "linux")]
        if let Err(e) = bytes.advise_range(memmap2::Advice::HugePage, start, BLOCK_BYTES) {
            tracing::debug!("no huge page for a recording block: {e}");
        }
        Ok(Block { bytes, start, offset: 0, len: 0 })
    }

    fn filled(&self) -> &[u8] {
        &self.bytes[self.start..self.start + self.len]
    }
}

/// Bytes another owner keeps in memory as long as it is held (a batch in
/// shared memory, which its sender reuses once every holder let it go).
pub struct Lent {
    owner: Arc<dyn AsRef<[u8]> + Send + Sync>,
    start: usize,
    len: usize,
    lender: Lender,
}

/// Whoever lends pieces (a node, whose batches come from its pool of
/// shared memory): how many of its pieces wait for the disk, at most
/// two.
#[derive(Debug, Clone, Default)]
pub struct Lender(Arc<AtomicUsize>);

impl Lender {
    /// Its pieces handed to the writing thread and not written yet.
    fn waiting(&self) -> usize {
        self.0.load(Ordering::Acquire)
    }

    /// One more of its pieces is handed to the writing thread.
    fn handed(&self) {
        self.0.fetch_add(1, Ordering::AcqRel);
    }

    /// One of its pieces is in the file.
    fn written(&self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Lent {
    /// `owner`'s bytes from `start`, `len` of them (all it has when they
    /// are fewer), lent by `lender`.
    pub fn new(owner: Arc<dyn AsRef<[u8]> + Send + Sync>, start: usize, len: usize, lender: &Lender) -> Lent {
        let have = (*owner).as_ref().len();
        let start = start.min(have);
        Lent { len: len.min(have - start), owner, start, lender: lender.clone() }
    }

    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        &(*self.owner).as_ref()[self.start..self.start + self.len]
    }
}

/// What the writing thread is given.
enum Job {
    /// A block, filled or ended early (at an aligned length).
    Write(Block),
    /// Lent bytes, written from where they lie at `offset`, after the
    /// block that ends there, if one does.
    Lent { block: Option<Block>, lent: Lent, offset: u64 },
    /// The block being filled, padded; then the file's length is set.
    Flush { block: Block, file_len: u64, done: Sender<io::Result<()>> },
    /// Write what was gathered now: a lender has as many pieces waiting
    /// as it may, or the recorder has no block left to fill.
    Now,
}

impl Job {
    /// Where its bytes go in the file (none for a flush).
    fn offset(&self) -> Option<u64> {
        match self {
            Job::Write(block) => Some(block.offset),
            Job::Lent { block: Some(block), .. } => Some(block.offset),
            Job::Lent { offset, .. } => Some(*offset),
            Job::Flush { .. } | Job::Now => None,
        }
    }

    /// Where its bytes end in the file (0 for a [`Job::Now`], which is
    /// never part of a run).
    fn end(&self) -> u64 {
        match self {
            Job::Write(block) | Job::Flush { block, .. } => block.offset + block.len as u64,
            Job::Lent { lent, offset, .. } => offset + lent.len as u64,
            Job::Now => 0,
        }
    }

    /// Its bytes' count.
    fn len(&self) -> usize {
        self.pieces().map(<[u8]>::len).sum()
    }

    /// Its bytes, in file order.
    fn pieces(&self) -> impl Iterator<Item = &[u8]> {
        let (block, lent) = match self {
            Job::Write(block) => (Some(block), None),
            Job::Lent { block, lent, .. } => (block.as_ref(), Some(lent)),
            Job::Flush { block, .. } => (Some(block), None),
            Job::Now => (None, None),
        };
        block.map(Block::filled).into_iter().chain(lent.map(Lent::bytes))
    }
}

/// Writes `pieces`, one after the other, at `offset` in `file`: in one
/// `pwritev` call where nothing goes wrong.
fn write_all_vectored_at(file: &File, mut pieces: &[&[u8]], mut offset: u64) -> io::Result<()> {
    // Bytes of the first piece written already.
    let mut done = 0;
    loop {
        while pieces.first().is_some_and(|first| first.len() == done) {
            (pieces, done) = (&pieces[1..], 0);
        }
        let Some(first) = pieces.first() else { return Ok(()) };
        let slices: Vec<io::IoSlice<'_>> =
            std::iter::once(&first[done..]).chain(pieces[1..].iter().copied()).map(io::IoSlice::new).collect();
        let mut written = positioned_write(file, &slices, offset)?;
        if written == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        offset += written as u64;
        while written > 0 {
            let left = pieces[0].len() - done;
            if written < left {
                done += written;
                break;
            }
            written -= left;
            (pieces, done) = (&pieces[1..], 0);
        }
    }
}

/// One `pwritev` of `slices` at `offset`; the bytes written.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)] // std's positioned vectored write is not stable yet (`unix_file_vectored_at`)
fn positioned_write(file: &File, slices: &[io::IoSlice<'_>], offset: u64) -> io::Result<usize> {
    use std::os::fd::AsRawFd;
    let count = slices.len().min(1024) as libc::c_int; // IOV_MAX
    let offset = libc::off_t::try_from(offset).map_err(|_| io::Error::other("an offset past what off_t holds"))?;
    // SAFETY: `IoSlice` is ABI-compatible with `iovec` on Unix (std's
    // documented guarantee), the slices outlive the call, and `count`
    // of them are there.
    let written = unsafe { libc::pwritev(file.as_raw_fd(), slices.as_ptr().cast::<libc::iovec>(), count, offset) };
    if written < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(written as usize)
}

/// The first slice's `write_at`, where `pwritev` is not at hand.
#[cfg(not(target_os = "linux"))]
fn positioned_write(file: &File, slices: &[io::IoSlice<'_>], offset: u64) -> io::Result<usize> {
    file.write_at(slices.first().map_or(&[][..], |s| &s[..]), offset)
}

impl DirectFile {
    /// Creates (or truncates) the file at `path`.
    pub fn create(path: &Path) -> io::Result<DirectFile> {
        let create = |flags| OpenOptions::new().write(true).create(true).truncate(true).custom_flags(flags).open(path);
        let (file, direct) = match create(O_DIRECT) {
            Ok(file) => (file, O_DIRECT != 0),
            Err(e) if e.raw_os_error() == Some(EINVAL) => (create(0)?, false),
            Err(e) => return Err(e),
        };
        if !direct {
            tracing::debug!("{} is written through the page cache: its file system refuses O_DIRECT", path.display());
        }
        let (jobs, queued) = mpsc::sync_channel(BLOCKS);
        let (freed, free) = mpsc::channel();
        let writer = BlockWriter { file, path: path.to_path_buf(), direct };
        let thread =
            std::thread::Builder::new().name("recording-file".into()).spawn(move || writer.run(queued, freed))?;
        Ok(DirectFile {
            block: Block::new()?,
            allocated: 1,
            dirty: false,
            hold_from: None,
            held: Vec::new(),
            jobs: Some(jobs),
            free,
            thread: Some(thread),
            failed: None,
        })
    }

    /// A block to fill: one the thread has written, a new one while fewer
    /// than [`BLOCKS`] exist, or else the next the thread gives back, once
    /// told to write what it gathered.
    fn free_block(&mut self) -> io::Result<Block> {
        if let Ok(block) = self.free.try_recv() {
            return Ok(block);
        }
        // Blocks held for a rewrite are not given back until it: more
        // may be made meanwhile.
        if self.allocated < BLOCKS + self.held.len() {
            self.allocated += 1;
            return Block::new();
        }
        self.send(Job::Now)?;
        match self.free.recv() {
            Ok(block) => Ok(block),
            Err(_) => Err(self.stopped()),
        }
    }

    /// Hands `job` to the thread. While it gathers a run the thread
    /// sleeps, and a job wakes it only when it is to be written at once
    /// (or finds the queue full): a wake-up for each of a node's batches
    /// was 5 % of the recorder's samples while it recorded office-50.
    fn send(&mut self, job: Job) -> io::Result<()> {
        let wake = matches!(job, Job::Now | Job::Flush { .. });
        let sent = match &self.jobs {
            None => false,
            Some(jobs) => match jobs.try_send(job) {
                Ok(()) => true,
                Err(TrySendError::Full(job)) => {
                    self.wake_writer();
                    jobs.send(job).is_ok()
                }
                Err(TrySendError::Disconnected(_)) => false,
            },
        };
        if !sent {
            return Err(self.stopped());
        }
        if wake {
            self.wake_writer();
        }
        Ok(())
    }

    /// Wakes the thread if it sleeps while gathering a run (see [`gather`]).
    fn wake_writer(&self) {
        if let Some(thread) = &self.thread {
            thread.thread().unpark();
        }
    }

    /// Hands the block being filled (full, or ended at an aligned length)
    /// to the thread, or keeps it back while bytes in it are held, and
    /// starts the next one.
    fn submit(&mut self) -> io::Result<()> {
        let mut next = self.free_block()?;
        next.offset = self.position();
        next.len = 0;
        let full = std::mem::replace(&mut self.block, next);
        if self.hold_from.is_some() {
            self.held.push(full);
            return Ok(());
        }
        self.send(Job::Write(full))
    }

    /// The position of the next byte written.
    fn position(&self) -> u64 {
        self.block.offset + self.block.len as u64
    }

    /// Keeps the bytes from `position` on (already written, or about to
    /// be) in memory, so that [`DirectFile::rewrite`] can write over them:
    /// a chunk's header, whose lengths are known once its records are
    /// written after it. The blocks they are in go to the disk after the
    /// rewrite.
    pub fn hold(&mut self, position: u64) -> io::Result<()> {
        let (start, end) = (self.held.first().unwrap_or(&self.block).offset, self.position());
        if let Some(from) = self.hold_from {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("cannot hold the bytes from {position}: those from {from} are held already"),
            ));
        }
        if position < start || position > end {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("cannot hold the bytes from {position}: only those from {start} to {end} are in memory"),
            ));
        }
        self.hold_from = Some(position);
        Ok(())
    }

    /// Writes `bytes` over those held from `position`, and lets every
    /// block held go to the disk.
    pub fn rewrite(&mut self, position: u64, bytes: &[u8]) -> io::Result<()> {
        self.check()?;
        let end = position + bytes.len() as u64;
        if self.hold_from.is_none_or(|from| position < from) || end > self.position() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("bytes {position}..{end} were not held or not written yet"),
            ));
        }
        for block in self.held.iter_mut().chain(std::iter::once(&mut self.block)) {
            let (from, to) = (position.max(block.offset), end.min(block.offset + block.len as u64));
            if from < to {
                let at = block.start + (from - block.offset) as usize;
                let taken = &bytes[(from - position) as usize..(to - position) as usize];
                block.bytes[at..at + taken.len()].copy_from_slice(taken);
            }
        }
        self.hold_from = None;
        for block in std::mem::take(&mut self.held) {
            self.send(Job::Write(block))?;
        }
        Ok(())
    }

    /// Writes `lent` as [`Write::write_all`] would, but the whole blocks
    /// of its bytes from where they lie (when they and the file's end are
    /// on the alignment, nothing is held for a rewrite, and fewer than
    /// `LENT_IN_FLIGHT` pieces of its lender wait for the disk): the
    /// block being filled goes with them, and the rest of them (less than
    /// a block) starts the next. The writing thread holds `lent` until its
    /// bytes are in the file; it writes them with those that follow once
    /// it has gathered `RUN_BYTES`, or at once when their lender may
    /// lend no more.
    pub fn write_lent(&mut self, lent: Lent) -> io::Result<()> {
        self.check()?;
        let bytes = lent.bytes();
        let waiting = lent.lender.waiting();
        let aligned = waiting < LENT_IN_FLIGHT
            && self.hold_from.is_none()
            && self.position().is_multiple_of(ALIGN as u64)
            && (bytes.as_ptr() as usize).is_multiple_of(ALIGN);
        let whole = if aligned { bytes.len() / ALIGN * ALIGN } else { 0 };
        if whole == 0 {
            return self.write_all(bytes);
        }
        let at = self.position();
        // The block being filled goes with the lent bytes, in one write.
        let block = if self.block.len > 0 {
            let mut next = self.free_block()?;
            (next.offset, next.len) = (at, 0);
            Some(std::mem::replace(&mut self.block, next))
        } else {
            None
        };
        self.block.offset = at + whole as u64;
        lent.lender.handed();
        let rest = Lent {
            owner: lent.owner.clone(),
            start: lent.start + whole,
            len: lent.len - whole,
            lender: lent.lender.clone(),
        };
        self.send(Job::Lent { block, lent: Lent { len: whole, ..lent }, offset: at })?;
        if waiting + 1 == LENT_IN_FLIGHT {
            self.send(Job::Now)?;
        }
        self.dirty = true;
        self.write_all(rest.bytes())
    }

    /// The error the thread stopped with (it stops at its first).
    fn stopped(&mut self) -> io::Error {
        if self.failed.is_none() {
            self.jobs = None;
            self.wake_writer();
            let why = match self.thread.take().map(JoinHandle::join) {
                Some(Ok(Err(e))) => e.to_string(),
                Some(Err(_)) => "its writing thread panicked".to_string(),
                Some(Ok(Ok(()))) | None => "its writing thread stopped".to_string(),
            };
            self.failed = Some(why);
        }
        io::Error::other(self.failed.clone().unwrap_or_default())
    }

    fn check(&self) -> io::Result<()> {
        match &self.failed {
            Some(why) => Err(io::Error::other(why.clone())),
            None => Ok(()),
        }
    }
}

impl Write for DirectFile {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.check()?;
        let at = self.block.start + self.block.len;
        let taken = bytes.len().min(BLOCK_BYTES - self.block.len);
        self.block.bytes[at..at + taken].copy_from_slice(&bytes[..taken]);
        self.block.len += taken;
        self.dirty |= taken > 0;
        if self.block.len == BLOCK_BYTES {
            self.submit()?;
        }
        Ok(taken)
    }

    /// Writes every full block and the one being filled, and waits until
    /// they are in the file.
    fn flush(&mut self) -> io::Result<()> {
        self.check()?;
        if self.hold_from.is_some() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "a flush while bytes are held for a rewrite"));
        }
        let mut tail = self.free_block()?;
        let len = self.block.len;
        let padded = len.next_multiple_of(ALIGN);
        tail.bytes[tail.start..tail.start + len].copy_from_slice(self.block.filled());
        tail.bytes[tail.start + len..tail.start + padded].fill(0);
        (tail.offset, tail.len) = (self.block.offset, padded);
        let (done, result) = mpsc::channel();
        self.send(Job::Flush { block: tail, file_len: self.block.offset + len as u64, done })?;
        let flushed = result.recv().map_err(|_| self.stopped())?;
        self.dirty = false;
        flushed
    }
}

impl crate::mcap_file::Rewritable for DirectFile {
    fn hold(&mut self, position: u64) -> io::Result<()> {
        DirectFile::hold(self, position)
    }

    fn rewrite(&mut self, position: u64, bytes: &[u8]) -> io::Result<()> {
        DirectFile::rewrite(self, position, bytes)
    }

    fn alignment(&self) -> usize {
        ALIGN
    }

    fn write_lent(&mut self, lent: Lent) -> io::Result<()> {
        DirectFile::write_lent(self, lent)
    }

    fn written_since(&self, position: u64, each: &mut dyn FnMut(&[u8])) {
        for block in self.held.iter().chain(std::iter::once(&self.block)) {
            let filled = block.filled();
            let skip = position.saturating_sub(block.offset).min(filled.len() as u64) as usize;
            if skip < filled.len() {
                each(&filled[skip..]);
            }
        }
    }
}

impl Drop for DirectFile {
    /// Flushes what was written since the last flush (as a `BufWriter`
    /// does, errors ignored; bytes held for a rewrite as they are) and
    /// waits for the thread.
    fn drop(&mut self) {
        if self.hold_from.take().is_some() {
            for block in std::mem::take(&mut self.held) {
                let _ = self.send(Job::Write(block));
            }
        }
        if self.dirty && self.failed.is_none() {
            let _ = self.flush();
        }
        self.jobs = None;
        self.wake_writer();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(target_os = "linux")]
const EINVAL: i32 = libc::EINVAL;
#[cfg(not(target_os = "linux"))]
const EINVAL: i32 = 22;

/// `first` and the jobs that come after it and go on where it ends, until
/// they hold [`RUN_BYTES`] or [`RUN_JOBS`] jobs, [`RUN_WAIT`] has passed,
/// or a job says to write now; and the job of another place that ended
/// them, if one did. On the virtual machines this project runs on, each
/// write to the disk costs an exit to the host: a node's batch of a few
/// hundred kilobytes and the few bytes before it were one write each.
/// Between the jobs the thread
/// sleeps until [`RUN_WAIT`] is over or the sender wakes it (see
/// [`DirectFile::send`]).
fn gather(first: Job, jobs: &Receiver<Job>) -> (Vec<Job>, Option<Job>) {
    let until = Instant::now() + RUN_WAIT;
    let mut bytes = first.len();
    let mut run = vec![first];
    while bytes < RUN_BYTES && run.len() < RUN_JOBS {
        match jobs.try_recv() {
            Ok(Job::Now) => break,
            Ok(job) if job.offset() == run.last().map(Job::end) => {
                bytes += job.len();
                run.push(job);
            }
            Ok(job) => return (run, Some(job)),
            Err(TryRecvError::Empty) => {
                let left = until.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                std::thread::park_timeout(left);
            }
            // The next `recv` sees that the sender is gone.
            Err(TryRecvError::Disconnected) => break,
        }
    }
    (run, None)
}

/// The thread's side: the file, and whether it is still written directly.
struct BlockWriter {
    file: File,
    path: PathBuf,
    direct: bool,
}

impl BlockWriter {
    /// Writes the blocks and lent bytes it is given until the sender is
    /// dropped or a write fails, giving each block back once written. A
    /// job and those after it that go on where it ends are written at once
    /// (see [`gather`]).
    fn run(mut self, jobs: Receiver<Job>, freed: Sender<Block>) -> io::Result<()> {
        let mut next = None;
        loop {
            let job = match next.take() {
                Some(job) => job,
                None => match jobs.recv() {
                    Ok(job) => job,
                    Err(_) => return Ok(()),
                },
            };
            match job {
                Job::Flush { .. } => {
                    self.flush(job, &freed)?;
                    continue;
                }
                // Nothing gathered to write.
                Job::Now => continue,
                Job::Write(_) | Job::Lent { .. } => {}
            }
            let run;
            (run, next) = gather(job, &jobs);
            let pieces: Vec<&[u8]> = run.iter().flat_map(Job::pieces).collect();
            let offset = run[0].offset().expect("a write");
            self.write(&pieces, offset)?;
            for job in run {
                match job {
                    Job::Write(block) => {
                        let _ = freed.send(block);
                    }
                    Job::Lent { block, lent, .. } => {
                        lent.lender.written();
                        if let Some(block) = block {
                            let _ = freed.send(block);
                        }
                    }
                    Job::Flush { .. } | Job::Now => {}
                }
            }
        }
    }

    /// Writes a flush's block, sets the file's length and says how it
    /// went; gives the block back.
    fn flush(&mut self, job: Job, freed: &Sender<Block>) -> io::Result<()> {
        let Job::Flush { block, file_len, done } = job else { return Ok(()) };
        let written = self.write(&[block.filled()], block.offset).and_then(|()| self.file.set_len(file_len));
        let _ = freed.send(block);
        if let Err(e) = written {
            let why = e.to_string();
            let _ = done.send(Err(e));
            return Err(io::Error::other(why));
        }
        let _ = done.send(Ok(()));
        Ok(())
    }

    /// Writes `pieces`, one after the other, at `offset`. A file system
    /// that took `O_DIRECT` at the open but refuses a direct write gets
    /// the file reopened through the page cache.
    fn write(&mut self, pieces: &[&[u8]], offset: u64) -> io::Result<()> {
        match write_all_vectored_at(&self.file, pieces, offset) {
            Err(e) if self.direct && e.raw_os_error() == Some(EINVAL) => {
                tracing::debug!(
                    "{} refused a direct write: written through the page cache from now on",
                    self.path.display()
                );
                self.file = OpenOptions::new().write(true).open(&self.path)?;
                self.direct = false;
                write_all_vectored_at(&self.file, pieces, offset)
            }
            written => written,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
