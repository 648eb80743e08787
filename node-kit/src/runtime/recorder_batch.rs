//! The batch for recorders a node fills moment by moment (see
//! [`flotilla_protocol::recording`]).
//!
//! A batch a moment was 3,500 batches a wall second at office-50's 50×
//! real time, and each cost the node a hand-over from the receiving thread
//! to its main loop (a lossless send must not wait on the thread that
//! drives the sockets, see `super::handover`), a put and a wake-up of
//! Zenoh's sending thread, and the recorder a wake-up and a route lookup.
//! Now a moment whose messages only the recorder wants is added to the
//! batch being filled, on the thread that answered it, and nothing is
//! sent; the batch goes out, from the main loop, when it holds
//! `BATCH_MOMENTS` moments or `BATCH_BYTES` bytes, when a moment also
//! has a message for a subscriber of its key (the batch must reach the
//! recorder before the same message on its key, which the recorder may
//! still take there), at most [`BATCH_AGE`] after its first moment (a
//! paused or slow simulation), and when the node stops.
//!
//! Where this process has Zenoh's shared memory, a batch is written
//! straight into a buffer of it, which Zenoh then sends as it is: a batch
//! in process memory was copied again into shared memory at its put, 6 %
//! of the odometry node's samples while recording office-50. Otherwise
//! (shared memory off, its pool full while the recorder still holds
//! earlier batches, a moment larger than the room left) the batch is
//! written in process memory, which Zenoh is done with once its put returns
//! (it copies it into shared memory or the link's buffer), so the next such
//! batch reuses it.
//!
//! A message that only the recorder wants and that can write itself into
//! memory of its exact size (odometry, twists, transforms: see
//! `Outbox::put_encoded`) is written straight into the batch, in a moment
//! left open until the answer's other messages join it and close it.

use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::{Duration, Instant};

use flotilla_protocol::recording::{
    record_len, set_batch_number, write_batch_start, write_record_head, BatchKeys, KeyNumberCache, Messages,
    BATCH_END_LEN, BATCH_START_LEN,
};
use zenoh::shm::{GarbageCollect, OwnedShmBuf, PosixShmProviderBackend, ShmProvider, ZShmMut};
use zenoh::Wait;

/// The shared memory this process's Zenoh session sends from.
pub(crate) type SharedMemory = Arc<ShmProvider<PosixShmProviderBackend>>;

/// Moments in a batch at most.
pub(crate) const BATCH_MOMENTS: usize = 20;

/// Bytes in a batch before it goes: well within Zenoh's shared-memory
/// pool of 4 MiB, so that a batch or two in flight never pushes one
/// through the socket (office-50's odometry node makes about 100 kB a
/// moment, its laser about 220 kB).
pub(crate) const BATCH_BYTES: usize = 1 << 20;

/// How long a batch waits for more moments at most, wall time: what a
/// recorder about to stop waits for before it asks the world for its last
/// clocks.
pub const BATCH_AGE: Duration = Duration::from_millis(50);

/// Where the batch being filled is written.
enum Memory {
    /// The process memory of [`PendingBatch::heap`].
    Heap,
    /// A buffer of Zenoh's shared memory, its first `len` bytes written.
    Shared { buffer: ZShmMut, len: usize },
}

/// A moment still taking messages written in place (see
/// [`PendingBatch::put_in_place`]).
struct OpenMoment {
    /// Where it starts in the batch.
    at: usize,
    time_ns: u64,
}

/// The batch being filled, and the numbering of those sent.
pub(crate) struct PendingBatch {
    memory: Memory,
    /// Process memory, reused from batch to batch.
    heap: bytes::BytesMut,
    /// The shared memory to write batches in, if this process has it.
    shared: Option<SharedMemory>,
    moments: usize,
    /// When its first moment was added.
    since: Option<Instant>,
    /// The length of the last batch sent: the next reserves as much.
    last_len: usize,
    /// The largest moment so far, bytes: a batch in shared memory has room
    /// for one more than the last batch held.
    largest_moment: usize,
    /// Batches sent so far: the next one's number.
    sent: u64,
    /// The moment whose messages are being written in place, if any: it
    /// counts among `moments` already.
    open: Option<OpenMoment>,
    /// Whether a batch started since [`PendingBatch::take_started`] last
    /// said so.
    started: bool,
    /// The keys of the batch being filled, written at its end.
    keys: BatchKeys,
    /// Whether a message was left out for want of a key number (said once).
    warned_keys: bool,
}

impl Default for PendingBatch {
    fn default() -> PendingBatch {
        PendingBatch {
            memory: Memory::Heap,
            heap: bytes::BytesMut::new(),
            shared: None,
            moments: 0,
            since: None,
            last_len: 0,
            largest_moment: 0,
            sent: 0,
            open: None,
            started: false,
            keys: BatchKeys::default(),
            warned_keys: false,
        }
    }
}

impl PendingBatch {
    /// Writes the batches from now on in `shared` where it has room.
    pub(crate) fn use_shared_memory(&mut self, shared: SharedMemory) {
        self.shared = Some(shared);
    }

    /// Whether it has no shared memory yet. Given some in the middle of a
    /// batch, it writes the next batch there: a node whose messages are
    /// written in place starts each batch before it is asked.
    pub(crate) fn wants_shared_memory(&self) -> bool {
        self.shared.is_none()
    }

    /// The bytes written so far.
    fn len(&self) -> usize {
        match &self.memory {
            Memory::Heap => self.heap.len(),
            Memory::Shared { len, .. } => *len,
        }
    }

    /// Whether a moment of `messages` at sim time `time_ns` (joining the
    /// moment open at that time, if there is one) would be added without
    /// filling the batch, so that nothing is sent.
    pub(crate) fn takes_without_sending(&self, time_ns: u64, messages: &Messages) -> bool {
        let moments = if self.open_at(time_ns) { self.moments } else { self.moments + 1 };
        let added = self.records_len(messages);
        moments < BATCH_MOMENTS
            && self.len().max(BATCH_START_LEN) + added + self.keys.end_len() < BATCH_BYTES
            && messages.iter().all(|(key, _)| self.keys.takes(key))
    }

    /// The bytes `messages` add to the batch: their records, and the keys
    /// it has no number for yet (a key twice among them counted twice).
    fn records_len(&self, messages: &Messages) -> usize {
        messages.iter().map(|(key, payload)| record_len(payload.len()) + self.keys.len_if_new(key)).sum()
    }

    /// Adds `messages` as a moment of sim time `time_ns`, to the one open
    /// at that time if there is one, and closes it.
    pub(crate) fn add(&mut self, time_ns: u64, messages: &Messages) {
        let joins = self.open_at(time_ns);
        if !joins {
            self.close_moment();
            if messages.is_empty() {
                return;
            }
        }
        let len = self.records_len(messages);
        if !joins {
            self.largest_moment = self.largest_moment.max(len);
            self.start_if_empty(len);
            self.moments += 1;
        }
        self.make_room(len);
        for (key, payload) in messages {
            if let Some(number) = self.key_number(key, &mut KeyNumberCache::default()) {
                self.write(|pieces| {
                    write_record_head(number, time_ns, payload.len(), &mut *pieces);
                    pieces(payload);
                });
            }
        }
        if joins {
            self.close_moment();
        }
    }

    /// Writes a message of `len` bytes on `key` at sim time `time_ns` in
    /// place: `write` fills the room made for its payload, where the batch
    /// goes from (Zenoh's shared memory, most often), so that the payload
    /// is neither written in a buffer of its own nor copied. It joins the
    /// moment open at that time, or opens one; [`PendingBatch::add`]
    /// closes it with the moment's other messages.
    ///
    /// `cache` keeps the key's number in this batch for the key's next
    /// message (see [`KeyNumberCache`]).
    pub(crate) fn put_in_place(
        &mut self,
        time_ns: u64,
        key: &str,
        cache: &mut KeyNumberCache,
        len: usize,
        write: impl FnOnce(&mut [u8]),
    ) {
        let new_key = if self.keys.cached(*cache).is_some() { 0 } else { self.keys.len_if_new(key) };
        let message = record_len(len) + new_key;
        if !self.open_at(time_ns) {
            // A moment of another time is done.
            self.close_moment();
            self.start_if_empty(message);
            self.open = Some(OpenMoment { at: self.len(), time_ns });
            self.moments += 1;
        }
        self.make_room(message);
        let Some(number) = self.key_number(key, cache) else { return };
        self.write(|pieces| write_record_head(number, time_ns, len, pieces));
        write(self.extend(len));
    }

    /// The number of `key` in this batch; `None`, said once, when the
    /// batch has numbered as many keys as it holds (see
    /// [`flotilla_protocol::recording::MAX_BATCH_KEYS`]: an MCAP file holds
    /// no more channels either), and the message is left out.
    fn key_number(&mut self, key: &str, cache: &mut KeyNumberCache) -> Option<u16> {
        let number = self.keys.number_cached(key, cache);
        if number.is_none() && !std::mem::replace(&mut self.warned_keys, true) {
            tracing::warn!("a batch for recorders holds 65,536 keys already: messages on more keys are not recorded");
        }
        number
    }

    /// Whether a moment is open for messages written in place.
    pub(crate) fn has_open_moment(&self) -> bool {
        self.open.is_some()
    }

    /// Whether the moment open for messages written in place is of sim
    /// time `time_ns`.
    fn open_at(&self, time_ns: u64) -> bool {
        self.open.as_ref().is_some_and(|open| open.time_ns == time_ns)
    }

    /// Closes the moment open for messages written in place, if one is.
    fn close_moment(&mut self) {
        let Some(open) = self.open.take() else { return };
        self.largest_moment = self.largest_moment.max(self.len() - open.at);
    }

    /// Starts a batch if none is being filled, its first moment
    /// `first_moment` bytes.
    fn start_if_empty(&mut self, first_moment: usize) {
        if self.moments > 0 {
            return;
        }
        self.start(first_moment);
        self.write(|write| write_batch_start(0, write));
        self.since = Some(Instant::now());
        self.started = true;
    }

    /// Whether a batch started since the last call, whose age the main
    /// loop then watches.
    pub(crate) fn take_started(&mut self) -> bool {
        std::mem::take(&mut self.started)
    }

    /// `len` more bytes, for which room was made, to be written.
    fn extend(&mut self, len: usize) -> &mut [u8] {
        match &mut self.memory {
            Memory::Heap => {
                let start = self.heap.len();
                self.heap.resize(start + len, 0);
                &mut self.heap[start..]
            }
            Memory::Shared { buffer, len: used } => {
                let start = *used;
                *used += len;
                &mut buffer[start..start + len]
            }
        }
    }

    /// Starts a batch whose first moment is `first_moment` bytes: in a
    /// buffer of shared memory with room for as much as the last batch (at
    /// most a full one) and one more moment as large as any so far (a
    /// first batch: its start, its first moment and its end), or else in
    /// process memory.
    fn start(&mut self, first_moment: usize) {
        let room = self.last_len.min(BATCH_START_LEN + BATCH_BYTES) + self.largest_moment.max(first_moment);
        let room = room.max(BATCH_START_LEN + first_moment + BATCH_END_LEN);
        let allocated = self.shared.as_ref().map(|shared| shared.alloc(room).with_policy::<GarbageCollect>().wait());
        self.memory = match allocated {
            Some(Ok(buffer)) => Memory::Shared { buffer, len: 0 },
            _ => {
                self.heap.clear();
                // Reclaims the whole buffer when the last batch's payload is gone.
                self.heap.reserve(self.last_len.max(BATCH_START_LEN + first_moment));
                Memory::Heap
            }
        };
    }

    /// Makes room for `len` more bytes, and the batch's keys after them
    /// (`len` counting those not numbered yet): a batch in shared memory
    /// without it goes on in process memory.
    fn make_room(&mut self, len: usize) {
        let len = len + self.keys.end_len();
        match &self.memory {
            Memory::Heap => self.heap.reserve(len),
            Memory::Shared { buffer, len: used } if buffer.len() - used < len => {
                self.heap.clear();
                self.heap.reserve(used + len);
                self.heap.extend_from_slice(&buffer[..*used]);
                self.memory = Memory::Heap;
            }
            Memory::Shared { .. } => {}
        }
    }

    /// Appends what `pieces` writes, in pieces, where room was made for it.
    fn write(&mut self, pieces: impl FnOnce(&mut dyn FnMut(&[u8]))) {
        match &mut self.memory {
            Memory::Heap => pieces(&mut |piece| self.heap.extend_from_slice(piece)),
            Memory::Shared { buffer, len } => pieces(&mut |piece| {
                buffer[*len..*len + piece.len()].copy_from_slice(piece);
                *len += piece.len();
            }),
        }
    }

    /// Whether it must go now for its size.
    pub(crate) fn is_full(&self) -> bool {
        self.moments >= BATCH_MOMENTS || self.len() >= BATCH_BYTES
    }

    /// When it must go for its age; `None` while it is empty.
    pub(crate) fn due_at(&self) -> Option<Instant> {
        self.since.map(|since| since + BATCH_AGE)
    }

    /// The batch, numbered, as Zenoh's payload, if it has a moment; it is
    /// then empty.
    pub(crate) fn take(&mut self) -> Option<zenoh::bytes::ZBytes> {
        self.close_moment();
        if self.moments == 0 {
            return None;
        }
        // The keys, at the end: room was made for them with every message.
        let mut keys = std::mem::take(&mut self.keys);
        let keys_at = self.len();
        self.write(|pieces| keys.write_end(keys_at, pieces));
        self.keys = keys;
        let (number, len) = (self.sent, self.len());
        self.sent += 1;
        (self.moments, self.since, self.last_len) = (0, None, len);
        match std::mem::replace(&mut self.memory, Memory::Heap) {
            Memory::Heap => {
                set_batch_number(&mut self.heap, number);
                Some(zenoh::bytes::ZBytes::from(self.heap.split().freeze()))
            }
            Memory::Shared { mut buffer, len } => {
                set_batch_number(&mut buffer[..len], number);
                // Shrinking always fits; a batch holds at least its start.
                let _ = NonZeroUsize::new(len).and_then(|len| buffer.try_resize(len));
                Some(zenoh::bytes::ZBytes::from(buffer))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_protocol::recording::{encode_batch, read_batch};

    fn odometry() -> Vec<(String, Vec<u8>)> {
        vec![("robot1/odom".to_string(), vec![1; 700]), ("tf".to_string(), vec![2; 90])]
    }

    #[test]
    fn moments_added_go_as_one_numbered_batch_of_what_encode_batch_writes() {
        let (items, mut batch) = (odometry(), PendingBatch::default());
        assert!(batch.take().is_none() && batch.due_at().is_none(), "nothing to send");
        batch.add(20_000_000, &items);
        assert!(batch.take_started(), "the first moment starts the batch");
        batch.add(40_000_000, &items[..1]);
        assert!(!batch.take_started(), "the second adds to it");
        let due = batch.due_at().expect("a batch with moments is due");
        assert!(due > Instant::now() && due <= Instant::now() + BATCH_AGE);
        let first = batch.take().unwrap().to_bytes().into_owned();
        assert_eq!(first, encode_batch(0, &[(20_000_000, &items), (40_000_000, &items[..1])]));
        assert!(batch.due_at().is_none(), "sent: nothing waits");
        batch.add(60_000_000, &items);
        assert_eq!(read_batch(&batch.take().unwrap().to_bytes()).unwrap().number(), 1, "numbered as sent");
    }

    #[test]
    fn a_batch_is_full_at_its_moments_or_its_bytes() {
        let (items, mut batch) = (odometry(), PendingBatch::default());
        for moment in 1..BATCH_MOMENTS {
            assert!(batch.takes_without_sending(moment as u64, &items), "moment {moment}");
            batch.add(moment as u64, &items);
            assert!(!batch.is_full());
        }
        assert!(!batch.takes_without_sending(0, &items), "the last moment fills it");
        batch.add(0, &items);
        assert!(batch.is_full());
        batch.take();
        let scans = vec![("robot1/scan".to_string(), vec![0; BATCH_BYTES / 2])];
        assert!(batch.takes_without_sending(1, &scans));
        batch.add(1, &scans);
        assert!(!batch.takes_without_sending(2, &scans), "a second half would fill it");
        batch.add(2, &scans);
        assert!(batch.is_full());
    }

    /// A shared-memory pool of its own, where this process may lock
    /// memory (as Zenoh's sessions here have one only there).
    fn shared_memory(bytes: usize) -> Option<SharedMemory> {
        if !crate::shared_memory::memory_lockable() {
            eprintln!("this process may not lock memory: no shared memory to test with");
            return None;
        }
        Some(Arc::new(zenoh::shm::ShmProviderBuilder::default_backend(bytes).wait().expect("a shared-memory pool")))
    }

    #[test]
    fn with_shared_memory_a_batch_is_written_there_and_sent_as_it_is() {
        let Some(shared) = shared_memory(4 * BATCH_BYTES) else { return };
        let (items, mut batch) = (odometry(), PendingBatch::default());
        batch.add(10_000_000, &items);
        assert!(batch.wants_shared_memory());
        batch.use_shared_memory(shared);
        assert!(!batch.wants_shared_memory(), "it has some");
        let started_before = batch.take().unwrap();
        assert!(started_before.as_shm().is_none(), "a batch started in process memory stays there");
        batch.add(20_000_000, &items);
        let first = batch.take().unwrap();
        assert!(first.as_shm().is_some(), "in shared memory, which Zenoh sends without a copy");
        assert_eq!(
            first.to_bytes().into_owned(),
            encode_batch(1, &[(20_000_000, &items)]),
            "no more bytes than written"
        );
        // Room for as much as the last batch and one more moment.
        batch.add(40_000_000, &items);
        batch.add(60_000_000, &items[..1]);
        let second = batch.take().unwrap();
        assert!(second.as_shm().is_some());
        let expected = encode_batch(2, &[(40_000_000, &items), (60_000_000, &items[..1])]);
        assert_eq!(second.to_bytes().into_owned(), expected);
    }

    #[test]
    fn a_first_batch_given_shared_memory_from_the_start_is_written_there() {
        let Some(shared) = shared_memory(4 * BATCH_BYTES) else { return };
        let (items, mut batch) = (odometry(), PendingBatch::default());
        batch.use_shared_memory(shared);
        batch.add(10_000_000, &items);
        let first = batch.take().unwrap();
        assert!(first.as_shm().is_some(), "room for its first moment and its keys");
        assert_eq!(first.to_bytes().into_owned(), encode_batch(0, &[(10_000_000, &items)]));
    }

    #[test]
    fn a_batch_goes_on_in_process_memory_when_shared_memory_has_no_room() {
        let Some(shared) = shared_memory(4 * BATCH_BYTES) else { return };
        let (small, mut batch) = (odometry(), PendingBatch::default());
        batch.use_shared_memory(shared);
        // Room for one moment in the first batch: a second moves it.
        batch.add(1, &small);
        batch.add(2, &small);
        batch.add(3, &small);
        let sent = batch.take().unwrap();
        assert!(sent.as_shm().is_none(), "moved to process memory");
        assert_eq!(sent.to_bytes().into_owned(), encode_batch(0, &[(1, &small), (2, &small), (3, &small)]));
        // The pool exhausted by batches of a megabyte the recorder still holds.
        let large = vec![("robot1/scan".to_string(), vec![7; BATCH_BYTES])];
        let mut held = Vec::new();
        for time in 0..6 {
            batch.add(time, &large);
            held.push(batch.take().unwrap());
        }
        assert!(held.iter().any(|b| b.as_shm().is_some()) && held.iter().any(|b| b.as_shm().is_none()));
        for (number, sent) in held.iter().enumerate() {
            let expected = encode_batch(number as u64 + 1, &[(number as u64, &large)]);
            assert_eq!(sent.to_bytes().into_owned(), expected, "batch {number}");
        }
    }

    #[test]
    fn the_next_batch_reuses_the_memory_once_zenoh_let_the_last_go() {
        let (items, mut batch) = (odometry(), PendingBatch::default());
        batch.add(1, &items);
        let first = batch.take().unwrap();
        let memory = first.to_bytes().as_ptr();
        drop(first);
        batch.add(2, &items);
        let second = batch.take().unwrap();
        assert_eq!(second.to_bytes().as_ptr(), memory, "the first batch's memory");
        // While a batch is still held, the next gets memory of its own.
        batch.add(3, &items);
        let third = batch.take().unwrap();
        assert_ne!(third.to_bytes().as_ptr(), second.to_bytes().as_ptr());
        assert_eq!(third.to_bytes().into_owned(), encode_batch(2, &[(3, &items)]));
    }

    /// `put_in_place` for `messages`, each payload written by copying it.
    fn put_each_in_place(batch: &mut PendingBatch, time_ns: u64, messages: &[(String, Vec<u8>)]) {
        for (key, payload) in messages {
            batch.put_in_place(time_ns, key, &mut KeyNumberCache::default(), payload.len(), |out| {
                out.copy_from_slice(payload)
            });
        }
    }

    #[test]
    fn a_key_number_kept_for_a_batch_numbers_its_messages_until_the_batch_goes() {
        let (items, mut batch) = (odometry(), PendingBatch::default());
        let mut caches = [KeyNumberCache::default(); 2];
        let put = |batch: &mut PendingBatch, caches: &mut [KeyNumberCache; 2], time_ns: u64, which: &[usize]| {
            for &i in which {
                let (key, payload) = &items[i];
                batch.put_in_place(time_ns, key, &mut caches[i], payload.len(), |out| out.copy_from_slice(payload));
            }
        };
        put(&mut batch, &mut caches, 1, &[0, 1]);
        put(&mut batch, &mut caches, 2, &[1, 0]);
        let sent = batch.take().unwrap().to_bytes().into_owned();
        let swapped = [items[1].clone(), items[0].clone()];
        assert_eq!(sent, encode_batch(0, &[(1, &items[..]), (2, &swapped[..])]), "numbered once, kept");
        // The next batch numbers its keys afresh: tf first, so number 0;
        // the kept numbers are of the batch that went.
        put(&mut batch, &mut caches, 3, &[1, 0]);
        let sent = batch.take().unwrap().to_bytes().into_owned();
        assert_eq!(sent, encode_batch(1, &[(3, &swapped[..])]), "the kept numbers were not used");
    }

    #[test]
    fn messages_written_in_place_make_the_moment_they_would_have_made_added() {
        let (items, mut batch) = (odometry(), PendingBatch::default());
        // All of a moment in place, then closed by an add of nothing.
        put_each_in_place(&mut batch, 20_000_000, &items);
        assert!(batch.has_open_moment() && batch.take_started(), "the first message starts the batch");
        batch.add(20_000_000, &[]);
        assert!(!batch.has_open_moment(), "closed");
        // Part in place, the rest added at the same time.
        put_each_in_place(&mut batch, 40_000_000, &items[..1]);
        assert!(!batch.take_started(), "the batch was started already");
        assert!(batch.takes_without_sending(40_000_000, &items[1..]), "joins the open moment");
        batch.add(40_000_000, &items[1..]);
        // In place at a later time: the open moment is closed, another opened.
        put_each_in_place(&mut batch, 60_000_000, &items[..1]);
        put_each_in_place(&mut batch, 80_000_000, &items[1..]);
        let sent = batch.take().unwrap().to_bytes().into_owned();
        let expected =
            [(20_000_000, &items[..]), (40_000_000, &items[..]), (60_000_000, &items[..1]), (80_000_000, &items[1..])];
        assert_eq!(sent, encode_batch(0, &expected), "the open moment is closed when the batch goes");
        assert!(!batch.has_open_moment() && batch.due_at().is_none(), "nothing waits");
    }

    #[test]
    fn an_open_moment_counts_toward_a_full_batch() {
        let (items, mut batch) = (odometry(), PendingBatch::default());
        for moment in 1..BATCH_MOMENTS as u64 {
            put_each_in_place(&mut batch, moment, &items);
            batch.add(moment, &[]);
        }
        put_each_in_place(&mut batch, 0, &items[..1]);
        assert!(batch.is_full(), "the open moment is the last one a batch holds");
        assert!(!batch.takes_without_sending(0, &[]), "full already: nothing more joins it without sending");
    }

    #[test]
    fn in_shared_memory_messages_written_in_place_go_on_in_process_memory_past_the_room() {
        let Some(shared) = shared_memory(4 * BATCH_BYTES) else { return };
        let (small, mut batch) = (odometry(), PendingBatch::default());
        batch.use_shared_memory(shared);
        // The first batch has room for its first message only.
        put_each_in_place(&mut batch, 1, &small);
        batch.add(1, &[]);
        put_each_in_place(&mut batch, 2, &small);
        let moved = batch.take().unwrap();
        assert!(moved.as_shm().is_none(), "moved to process memory");
        assert_eq!(moved.to_bytes().into_owned(), encode_batch(0, &[(1, &small), (2, &small)]));
        // The next has room for as much, and goes from shared memory.
        put_each_in_place(&mut batch, 3, &small);
        batch.add(3, &small[..1]);
        let in_place = batch.take().unwrap();
        assert!(in_place.as_shm().is_some(), "written where it is sent from");
        let mut both = small.clone();
        both.push(small[0].clone());
        assert_eq!(in_place.to_bytes().into_owned(), encode_batch(1, &[(3, &both)]));
    }
}
