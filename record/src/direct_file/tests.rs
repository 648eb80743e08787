//! The file's tests: what is written is what it holds, lent or copied,
//! held and written over, gathered into runs.

use super::*;

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
}

fn temp_path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("flotilla-direct-file-{name}-{}", std::process::id()))
}

#[test]
fn what_is_written_is_what_the_file_holds_across_blocks_and_flushes() {
    let path = temp_path("blocks");
    // More than the blocks in memory, in pieces that straddle blocks
    // and the alignment, with a flush in the middle of a block.
    let pieces = [pattern(10, 1), pattern(BLOCK_BYTES + 5000, 2), pattern(3 * BLOCK_BYTES, 3), pattern(77, 4)];
    let mut file = DirectFile::create(&path).unwrap();
    let mut expected = Vec::new();
    for (i, piece) in pieces.iter().enumerate() {
        file.write_all(piece).unwrap();
        expected.extend_from_slice(piece);
        if i == 1 {
            file.flush().unwrap();
            assert_eq!(std::fs::read(&path).unwrap(), expected, "a flush leaves exactly the bytes written");
        }
    }
    file.flush().unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), expected);
    file.write_all(&pattern(9000, 5)).unwrap();
    expected.extend_from_slice(&pattern(9000, 5));
    drop(file);
    assert_eq!(std::fs::read(&path).unwrap(), expected, "dropping the file flushes it");
    std::fs::remove_file(&path).unwrap();
}

/// The first `len` of `bytes`, copied to the start of a page of their
/// own (as a node's batch lies in shared memory), lent.
pub(crate) fn lent_from_page(bytes: &[u8], len: usize, lender: &Lender) -> Lent {
    struct Page(memmap2::MmapMut);
    impl AsRef<[u8]> for Page {
        fn as_ref(&self) -> &[u8] {
            &self.0
        }
    }
    let mut page = memmap2::MmapMut::map_anon(bytes.len() + 1).unwrap();
    page[..bytes.len()].copy_from_slice(bytes);
    Lent::new(std::sync::Arc::new(Page(page)), 0, len, lender)
}

#[test]
fn lent_bytes_go_from_where_they_lie_when_aligned_and_are_copied_otherwise() {
    let path = temp_path("lent");
    let mut file = DirectFile::create(&path).unwrap();
    let mut expected = pattern(2 * ALIGN, 1);
    file.write_all(&expected).unwrap();
    // On the alignment: the block being filled goes as it is, the
    // lent bytes' whole blocks after it, the rest starts the next.
    let first = pattern(3 * ALIGN + 100, 2);
    file.write_lent(lent_from_page(&first, first.len(), &Lender::default())).unwrap();
    expected.extend_from_slice(&first);
    assert_eq!((file.block.offset, file.block.len), (5 * ALIGN as u64, 100), "written from the page");
    // Off the alignment (100 bytes into a block): copied.
    let second = pattern(2 * ALIGN, 3);
    file.write_lent(lent_from_page(&second, second.len(), &Lender::default())).unwrap();
    expected.extend_from_slice(&second);
    assert_eq!((file.block.offset, file.block.len), (5 * ALIGN as u64, 100 + 2 * ALIGN), "copied");
    file.flush().unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), expected, "a flush leaves exactly the bytes written");
    // A lent run of whole blocks right after a flush, on the alignment
    // again once 100 bytes more fill the block to it.
    let pad = pattern(ALIGN - 100, 4);
    file.write_all(&pad).unwrap();
    expected.extend_from_slice(&pad);
    let third = pattern(BLOCK_BYTES + ALIGN, 5);
    file.write_lent(lent_from_page(&third, third.len(), &Lender::default())).unwrap();
    expected.extend_from_slice(&third);
    assert_eq!(file.block.len, 0, "no rest");
    file.write_all(&pattern(7, 6)).unwrap();
    expected.extend_from_slice(&pattern(7, 6));
    drop(file);
    assert_eq!(std::fs::read(&path).unwrap(), expected);
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn a_lender_with_as_many_pieces_waiting_as_it_may_has_its_next_copied() {
    let path = temp_path("lender");
    let mut file = DirectFile::create(&path).unwrap();
    // As if two of its batches waited for the disk: its node wants its
    // shared memory back.
    let busy = Lender::default();
    busy.0.store(LENT_IN_FLIGHT, Ordering::Release);
    let first = pattern(2 * ALIGN, 1);
    file.write_lent(lent_from_page(&first, first.len(), &busy)).unwrap();
    assert_eq!((file.block.offset, file.block.len), (0, 2 * ALIGN), "copied");
    // Another node's pool is its own.
    let second = pattern(3 * ALIGN, 2);
    file.write_lent(lent_from_page(&second, second.len(), &Lender::default())).unwrap();
    assert_eq!((file.block.offset, file.block.len), (5 * ALIGN as u64, 0), "written from the page");
    drop(file);
    assert_eq!(std::fs::read(&path).unwrap(), [first, second].concat());
    std::fs::remove_file(&path).unwrap();
}

/// A lent piece of `len` bytes at `offset` in the file, for the writing
/// thread.
fn lent_job(offset: u64, len: usize) -> Job {
    Job::Lent { block: None, lent: lent_from_page(&pattern(len, 7), len, &Lender::default()), offset }
}

fn offsets(run: &[Job]) -> Vec<u64> {
    run.iter().filter_map(Job::offset).collect()
}

#[test]
fn the_writing_thread_gathers_what_goes_on_where_the_last_job_ended_until_told_to_write() {
    let (jobs, queued) = mpsc::sync_channel(8);
    let a = ALIGN as u64;
    for job in [lent_job(a, ALIGN), lent_job(2 * a, ALIGN), Job::Now, lent_job(3 * a, ALIGN)] {
        jobs.send(job).unwrap();
    }
    let (run, next) = gather(lent_job(0, ALIGN), &queued);
    assert_eq!(offsets(&run), [0, a, 2 * a]);
    assert!(next.is_none(), "told to write now");
    // A job somewhere else ends a run, and is the next one.
    jobs.send(lent_job(9 * a, ALIGN)).unwrap();
    let (run, next) = gather(queued.recv().unwrap(), &queued);
    assert_eq!(offsets(&run), [3 * a]);
    assert_eq!(next.and_then(|job| job.offset()), Some(9 * a));
}

#[test]
fn the_writing_thread_writes_once_it_has_gathered_enough_or_waited_enough() {
    let (jobs, queued) = mpsc::sync_channel(8);
    let half = RUN_BYTES / 2;
    for at in [half, 2 * half] {
        jobs.send(lent_job(at as u64, half)).unwrap();
    }
    let (run, next) = gather(lent_job(0, half), &queued);
    assert_eq!(offsets(&run), [0, half as u64]);
    assert!(next.is_none());
    assert!(queued.try_recv().is_ok(), "the job past the run's bytes is left for the next run");
    // Nothing more comes: the run goes as it is once the wait is over.
    let since = Instant::now();
    let (run, next) = gather(lent_job(0, ALIGN), &queued);
    assert_eq!((run.len(), next.is_none()), (1, true));
    assert!(since.elapsed() >= RUN_WAIT, "waited for more");
}

#[test]
fn a_file_system_in_memory_gets_the_same_bytes() {
    // tmpfs refuses O_DIRECT on older kernels and takes it on newer
    // ones: either way the file holds what was written.
    let shm = Path::new("/dev/shm");
    if !shm.is_dir() {
        return;
    }
    let path = shm.join(format!("flotilla-direct-file-{}", std::process::id()));
    let mut file = DirectFile::create(&path).unwrap();
    let bytes = pattern(BLOCK_BYTES + 123, 6);
    file.write_all(&bytes).unwrap();
    drop(file);
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn bytes_held_are_written_over_even_across_blocks_and_reach_the_file_after() {
    let path = temp_path("rewrite");
    let mut file = DirectFile::create(&path).unwrap();
    let mut expected = pattern(BLOCK_BYTES - 20, 1);
    file.write_all(&expected).unwrap();
    // A header of 49 bytes across the first block's end, then records
    // filling two more blocks: the blocks wait for the rewrite.
    let at = expected.len() as u64;
    file.hold(at).unwrap();
    file.write_all(&[0; 49]).unwrap();
    let records = pattern(2 * BLOCK_BYTES + 300, 2);
    file.write_all(&records).unwrap();
    assert!(file.hold(at + 100).is_err(), "one hold at a time");
    let header = pattern(49, 3);
    file.rewrite(at, &header).unwrap();
    expected.extend_from_slice(&header);
    expected.extend_from_slice(&records);
    assert!(file.rewrite(at, &header).is_err(), "let go after the rewrite");
    file.flush().unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), expected);
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn only_bytes_held_and_written_can_be_written_over_and_none_flushed_while_held() {
    let path = temp_path("rewrite-refused");
    let mut file = DirectFile::create(&path).unwrap();
    file.write_all(&pattern(100, 1)).unwrap();
    assert!(file.rewrite(10, &[1, 2]).is_err(), "nothing held");
    file.hold(100).unwrap();
    file.write_all(&[0; 8]).unwrap();
    assert!(file.rewrite(99, &[1, 2]).is_err(), "before the bytes held");
    assert!(file.rewrite(104, &[1; 8]).is_err(), "past the bytes written");
    assert_eq!(file.flush().unwrap_err().kind(), io::ErrorKind::InvalidInput, "a flush would write them unfinished");
    file.rewrite(100, &[5; 8]).unwrap();
    file.flush().unwrap();
    assert_eq!(std::fs::read(&path).unwrap()[100..], [5; 8]);
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn a_block_is_a_whole_huge_page_aligned_for_direct_writes() {
    let block = Block::new().unwrap();
    let aligned = &block.bytes[block.start..block.start + BLOCK_BYTES];
    assert_eq!(aligned.as_ptr() as usize % HUGE_PAGE, 0, "one huge page, not parts of two");
    assert!(aligned.iter().all(|&b| b == 0));
}

#[test]
fn an_empty_file_stays_empty() {
    let path = temp_path("empty");
    let mut file = DirectFile::create(&path).unwrap();
    file.flush().unwrap();
    drop(file);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn a_file_that_cannot_be_created_says_why() {
    let path = temp_path("missing-dir").join("out.mcap");
    let error = DirectFile::create(&path).err().expect("no such directory");
    assert_eq!(error.kind(), io::ErrorKind::NotFound);
}
