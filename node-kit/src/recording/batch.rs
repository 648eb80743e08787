//! The batch for recorders a node fills moment by moment (see
//! [`flotilla_wire::recording`]).
//!
//! One batch a moment would be thousands of batches a wall second in a
//! fast fleet run, each costing the node a hand-over from the receiving
//! thread to its main loop (a lossless send must not wait on the thread
//! that drives the sockets), a put and a wake-up of Zenoh's sending
//! thread, and the recorder a wake-up and a route lookup. So a moment whose
//! messages only the recorder wants is added to the batch being filled, on
//! the thread that answered it, and nothing is sent; the batch goes out
//! when it holds `BATCH_MOMENTS` moments or `BATCH_BYTES` bytes, when a
//! moment also has a message for a key a recorder still takes there (the
//! batch must reach the recorder before the same message on its key; see
//! [`super::RecordersOnKeys`]), at most [`BATCH_AGE`] after its first
//! moment (a paused or slow simulation), and when the node stops.
//!
//! Where this process has Zenoh's shared memory, a batch is written
//! straight into a buffer of it, which Zenoh then sends as it is (a batch
//! in process memory would be copied again into shared memory at its
//! put). Otherwise (shared memory off, its pool full while the recorder
//! still holds earlier batches, a moment larger than the room left) the
//! batch is written in process memory, which Zenoh is done with once its
//! put returns (it copies it into shared memory or the link's buffer), so
//! the next such batch reuses it.
//!
//! A message the node received and forwards ([`PendingBatch::forward`])
//! is written into a moment left open until the answer's messages join it
//! and close it; messages of the last moment's sim time join it even after
//! it closed, so that a drive's commands between two states make one
//! moment.
//!
//! Each message's record carries its topic's channel id, the world's
//! number for it ([`flotilla_plugins::channels`]), and the node's
//! sequence number on that channel; a message on a key the world numbers
//! no topic for is no recorder's, and stays out. In shared memory a
//! batch's records start on a boundary of [`BATCH_ALIGN`] bytes, so that
//! a recorder can write them to its file with direct I/O straight from
//! there.

use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::{Duration, Instant};

use flotilla_wire::recording::{
    batch_end_len, message_len, write_batch_end, write_record_head, IndexEntry, BATCH_END_LEN,
};
use zenoh::shm::{GarbageCollect, OwnedShmBuf, PosixShmProviderBackend, ShmProvider, ZShmMut};
use zenoh::Wait;

pub(crate) use super::channels::BatchChannels;

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

/// Where a batch's records start in shared memory: on a multiple of 4096
/// bytes, the largest logical block size of common disks, as direct I/O
/// wants.
pub const BATCH_ALIGN: usize = 4096;

/// A moment's messages: key and payload each.
pub type Messages = [(String, Vec<u8>)];

/// Where the batch being filled is written.
enum Memory {
    /// The process memory of [`PendingBatch::heap`].
    Heap,
    /// A buffer of Zenoh's shared memory, its records starting `at` bytes
    /// in (on a boundary of [`BATCH_ALIGN`]), its first `len` bytes
    /// written.
    Shared { buffer: ZShmMut, at: usize, len: usize },
}

/// A moment still taking forwarded messages (see
/// [`PendingBatch::forward`]).
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
    /// The moment whose messages are being forwarded, if any: it
    /// counts among `moments` already.
    open: Option<OpenMoment>,
    /// The batch's last moment, once closed: messages of its sim time join
    /// it again rather than making a moment of their own. A node that
    /// forwards what it receives (a drive's commands, see
    /// `PendingBatch::forward`) closes its moment at each message, and would
    /// otherwise fill a batch every [`BATCH_MOMENTS`] commands.
    closed: Option<OpenMoment>,
    /// Whether a batch started since [`PendingBatch::take_started`] last
    /// said so.
    started: bool,
    /// The index of the batch being filled, written at its end.
    index: Vec<IndexEntry>,
    /// The keys' channel ids and sequences.
    pub(crate) channels: BatchChannels,
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
            closed: None,
            started: false,
            index: Vec::new(),
            channels: BatchChannels::default(),
        }
    }
}

impl PendingBatch {
    /// Writes the batches from now on in `shared` where it has room.
    pub(crate) fn use_shared_memory(&mut self, shared: SharedMemory) {
        self.shared = Some(shared);
    }

    /// Whether it has no shared memory yet. Given some in the middle of a
    /// batch, it writes the next batch there: a node that forwards what it
    /// receives may start a batch before it is asked.
    pub(crate) fn wants_shared_memory(&self) -> bool {
        self.shared.is_none()
    }

    /// The bytes of records written so far.
    fn len(&self) -> usize {
        match &self.memory {
            Memory::Heap => self.heap.len(),
            Memory::Shared { at, len, .. } => len - at,
        }
    }

    /// Whether a moment of `messages` at sim time `time_ns` (joining the
    /// moment open at that time, if there is one) would be added without
    /// filling the batch, so that nothing is sent.
    pub(crate) fn takes_without_sending(&self, time_ns: u64, messages: &Messages) -> bool {
        let joins = self.open_at(time_ns) || self.closed_at(time_ns);
        let moments = if joins { self.moments } else { self.moments + 1 };
        moments < BATCH_MOMENTS && self.bytes() + self.messages_len(messages) < BATCH_BYTES
    }

    /// The bytes of the batch as it would go now: its records, index and
    /// end.
    fn bytes(&self) -> usize {
        self.len() + batch_end_len(self.index.len())
    }

    /// The bytes `messages` add to the batch: the records and index
    /// entries of those on a numbered topic.
    fn messages_len(&self, messages: &Messages) -> usize {
        messages.iter().filter(|(key, _)| self.channels.id(key).is_some()).map(|(_, p)| message_len(p.len())).sum()
    }

    /// Adds `messages` as a moment of sim time `time_ns`, to the one open
    /// or last closed at that time if there is one, and closes it.
    pub(crate) fn add(&mut self, time_ns: u64, messages: &Messages) {
        let len = self.messages_len(messages);
        if !self.open_at(time_ns) {
            self.close_moment();
            if messages.is_empty() {
                return;
            }
            self.open_moment(time_ns, len);
        }
        self.make_room(len);
        for (key, payload) in messages {
            let Some(channel) = self.channels.id(key) else { continue };
            self.write_head(channel, time_ns, payload.len());
            self.write(|pieces| pieces(payload));
        }
        self.close_moment();
    }

    /// Writes a message the node received on `key` (a command it
    /// forwards) at sim time `time_ns`: it joins the moment open at that
    /// time, or opens one, which [`PendingBatch::add`] closes with the
    /// moment's other messages. A key of no numbered topic writes nothing.
    pub(crate) fn forward(&mut self, time_ns: u64, key: &str, payload: &[u8]) {
        let Some(channel) = self.channels.id(key) else { return };
        let message = message_len(payload.len());
        if !self.open_at(time_ns) {
            // A moment of another time is done.
            self.close_moment();
            self.open_moment(time_ns, message);
        }
        self.make_room(message);
        self.write_head(channel, time_ns, payload.len());
        self.write(|pieces| pieces(payload));
    }

    /// Writes the head of a record on `channel` at `time_ns` whose
    /// payload of `len` bytes follows, and its index entry.
    fn write_head(&mut self, channel: u16, time_ns: u64, len: usize) {
        // Under 4 GiB: a batch goes at a megabyte.
        let offset = u32::try_from(self.len()).expect("a batch under 4 GiB");
        self.index.push(IndexEntry { offset, channel, time_ns });
        let sequence = self.channels.next_sequence(channel);
        self.write(|pieces| write_record_head(channel, sequence, time_ns, len, pieces));
    }

    /// Whether a moment is open for messages forwarded.
    pub(crate) fn has_open_moment(&self) -> bool {
        self.open.is_some()
    }

    /// Whether the moment open for messages forwarded is of sim
    /// time `time_ns`.
    fn open_at(&self, time_ns: u64) -> bool {
        self.open.as_ref().is_some_and(|open| open.time_ns == time_ns)
    }

    /// Whether the batch's last moment, closed, is of sim time `time_ns`.
    fn closed_at(&self, time_ns: u64) -> bool {
        self.closed.as_ref().is_some_and(|closed| closed.time_ns == time_ns)
    }

    /// Opens a moment of sim time `time_ns` whose first messages take
    /// `first_len` bytes: the last one again if it is of that time, else a
    /// new one (starting the batch if it is the first).
    fn open_moment(&mut self, time_ns: u64, first_len: usize) {
        if self.closed_at(time_ns) {
            self.open = self.closed.take();
            return;
        }
        self.closed = None;
        self.largest_moment = self.largest_moment.max(first_len);
        self.start_if_empty(first_len);
        self.open = Some(OpenMoment { at: self.len(), time_ns });
        self.moments += 1;
    }

    /// Closes the moment open, if one is.
    fn close_moment(&mut self) {
        let Some(open) = self.open.take() else { return };
        self.largest_moment = self.largest_moment.max(self.len() - open.at);
        self.closed = Some(open);
    }

    /// Starts a batch if none is being filled, its first moment
    /// `first_moment` bytes.
    fn start_if_empty(&mut self, first_moment: usize) {
        if self.moments > 0 {
            return;
        }
        self.start(first_moment);
        self.since = Some(Instant::now());
        self.started = true;
    }

    /// Whether a batch started since the last call, whose age the main
    /// loop then watches.
    pub(crate) fn take_started(&mut self) -> bool {
        std::mem::take(&mut self.started)
    }

    /// Starts a batch whose first moment is `first_moment` bytes: in a
    /// buffer of shared memory, its records from a boundary of
    /// [`BATCH_ALIGN`] bytes, with room for as much as the last batch (at
    /// most a full one) and one more moment as large as any so far (a
    /// first batch: its first moment and its end), or else in process
    /// memory. (The session's pool gives no buffer aligned so far, so the
    /// bytes before the boundary are skipped.)
    fn start(&mut self, first_moment: usize) {
        let room = self.last_len.min(BATCH_BYTES) + self.largest_moment.max(first_moment);
        let room = room.max(first_moment + BATCH_END_LEN) + BATCH_ALIGN - 1;
        let allocated = self.shared.as_ref().map(|shared| shared.alloc(room).with_policy::<GarbageCollect>().wait());
        self.memory = match allocated {
            Some(Ok(buffer)) => {
                let at = buffer.as_ptr().align_offset(BATCH_ALIGN).min(BATCH_ALIGN - 1);
                Memory::Shared { buffer, at, len: at }
            }
            _ => {
                self.heap.clear();
                // Reclaims the whole buffer when the last batch's payload is gone.
                self.heap.reserve(self.last_len.max(first_moment + BATCH_END_LEN));
                Memory::Heap
            }
        };
    }

    /// Makes room for `len` more bytes (records and their index entries),
    /// and the batch's index and end after them: a batch in shared memory
    /// without it goes on in process memory.
    fn make_room(&mut self, len: usize) {
        let len = len + batch_end_len(self.index.len());
        match &self.memory {
            Memory::Heap => self.heap.reserve(len),
            Memory::Shared { buffer, at, len: used } if buffer.len() - used < len => {
                self.heap.clear();
                self.heap.reserve(used - at + len);
                self.heap.extend_from_slice(&buffer[*at..*used]);
                self.memory = Memory::Heap;
            }
            Memory::Shared { .. } => {}
        }
    }

    /// Appends what `pieces` writes, in pieces, where room was made for it.
    fn write(&mut self, pieces: impl FnOnce(&mut dyn FnMut(&[u8]))) {
        match &mut self.memory {
            Memory::Heap => pieces(&mut |piece| self.heap.extend_from_slice(piece)),
            Memory::Shared { buffer, len, .. } => pieces(&mut |piece| {
                buffer[*len..*len + piece.len()].copy_from_slice(piece);
                *len += piece.len();
            }),
        }
    }

    /// Whether it must go now for its size.
    pub(crate) fn is_full(&self) -> bool {
        self.moments >= BATCH_MOMENTS || self.bytes() >= BATCH_BYTES
    }

    /// When it must go for its age; `None` while it is empty.
    pub(crate) fn due_at(&self) -> Option<Instant> {
        self.since.map(|since| since + BATCH_AGE)
    }

    /// The batch, numbered, as Zenoh's payload, if it has a moment; it is
    /// then empty.
    pub(crate) fn take(&mut self) -> Option<zenoh::bytes::ZBytes> {
        self.close_moment();
        self.closed = None;
        if self.moments == 0 {
            return None;
        }
        // The index and end: room was made for them with every message.
        let (index, number) = (std::mem::take(&mut self.index), self.sent);
        let records_at = match &self.memory {
            Memory::Heap => 0,
            Memory::Shared { at, .. } => *at,
        };
        self.write(|pieces| write_batch_end(&index, records_at, number, pieces));
        self.index = index;
        self.index.clear();
        let len = self.len();
        self.sent += 1;
        (self.moments, self.since, self.last_len) = (0, None, len);
        match std::mem::replace(&mut self.memory, Memory::Heap) {
            Memory::Heap => Some(zenoh::bytes::ZBytes::from(self.heap.split().freeze())),
            Memory::Shared { mut buffer, len, .. } => {
                // Shrinking always fits; a batch holds at least its end.
                let _ = NonZeroUsize::new(len).and_then(|len| buffer.try_resize(len));
                Some(zenoh::bytes::ZBytes::from(buffer))
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use flotilla_plugins::channels::{ChannelNumbers, CLOCK_CHANNEL};
    use flotilla_plugins::registry::TopicSpec;
    use flotilla_wire::recording::{encode_batch, read_batch, ChannelMessage};
    use flotilla_wire::Keys;

    /// Gives `batch` the world's channels with [`TOPICS`] numbered after
    /// `/clock`, `/tf` and `/tf_static`, their keys those of sim `s`.
    pub(crate) fn numbered(batch: &mut PendingBatch) {
        let mut numbers = ChannelNumbers::new();
        let topics: Vec<TopicSpec> =
            TOPICS.iter().map(|name| TopicSpec { name: name.to_string(), ..TopicSpec::tf() }).collect();
        numbers.add(&topics);
        batch.channels.follow(numbers.names(), &Keys::new("s"));
    }

    /// The channels [`numbered`] gives the topics of these tests: `/tf` 2,
    /// then `/robot1/odom` 4, `/robot1/scan` 5, … in the order given.
    const TOPICS: [&str; 5] = ["/robot1/odom", "/robot1/scan", "/robot1/watched", "/robot1/cmd", "/robot2/odom"];

    /// What a node's batches must be: [`encode_batch`] of their moments,
    /// each key's topic numbered as [`numbered`] numbers [`TOPICS`], each
    /// channel's sequence going on from batch to batch.
    #[derive(Default)]
    pub(crate) struct Expected {
        sequences: std::collections::HashMap<u16, u32>,
    }

    impl Expected {
        pub(crate) fn batch(&mut self, number: u64, moments: &[(u64, &Messages)]) -> Vec<u8> {
            let channel = |key: &str| match key {
                "tf" => 2,
                key => TOPICS.iter().position(|t| &t[1..] == key).map(|i| i as u16 + 4).expect("a test topic"),
            };
            let moments: Vec<(u64, Vec<ChannelMessage>)> = moments
                .iter()
                .map(|(time_ns, messages)| {
                    let messages = messages
                        .iter()
                        .map(|(key, payload)| {
                            let id = channel(key);
                            let sequence = self.sequences.entry(id).or_default();
                            *sequence += 1;
                            (id, *sequence - 1, payload.clone())
                        })
                        .collect();
                    (*time_ns, messages)
                })
                .collect();
            let borrowed: Vec<(u64, &[ChannelMessage])> = moments.iter().map(|(t, m)| (*t, &m[..])).collect();
            encode_batch(number, &borrowed)
        }
    }

    /// What a batch holds: its number, index and records (not the bytes
    /// skipped before the records).
    fn content(bytes: &[u8]) -> (u64, Vec<IndexEntry>, Vec<u8>) {
        let batch = read_batch(bytes).unwrap();
        (batch.number(), batch.index().collect(), batch.records().to_vec())
    }

    /// A batch of the test topics.
    fn batch_of_test_topics() -> PendingBatch {
        let mut batch = PendingBatch::default();
        numbered(&mut batch);
        batch
    }

    fn odometry() -> Vec<(String, Vec<u8>)> {
        vec![("robot1/odom".to_string(), vec![1; 700]), ("tf".to_string(), vec![2; 90])]
    }

    #[test]
    fn moments_added_go_as_one_numbered_batch_of_what_encode_batch_writes() {
        let (items, mut batch, mut expected) = (odometry(), batch_of_test_topics(), Expected::default());
        assert!(batch.take().is_none() && batch.due_at().is_none(), "nothing to send");
        batch.add(20_000_000, &items);
        assert!(batch.take_started(), "the first moment starts the batch");
        batch.add(40_000_000, &items[..1]);
        assert!(!batch.take_started(), "the second adds to it");
        let due = batch.due_at().expect("a batch with moments is due");
        assert!(due > Instant::now() && due <= Instant::now() + BATCH_AGE);
        let first = batch.take().unwrap().to_bytes().into_owned();
        assert_eq!(first, expected.batch(0, &[(20_000_000, &items), (40_000_000, &items[..1])]));
        assert!(batch.due_at().is_none(), "sent: nothing waits");
        batch.add(60_000_000, &items);
        let second = batch.take().unwrap().to_bytes().into_owned();
        assert_eq!(read_batch(&second).unwrap().number(), 1, "numbered as sent");
        assert_eq!(second, expected.batch(1, &[(60_000_000, &items)]), "sequences go on from batch to batch");
    }

    #[test]
    fn a_message_on_a_topic_the_world_numbers_not_stays_out() {
        let mut batch = batch_of_test_topics();
        let items = vec![("robot1/odom".to_string(), vec![1; 7]), ("robot9/odom".to_string(), vec![2; 9])];
        assert!(batch.takes_without_sending(5, &items));
        batch.add(5, &items);
        let sent = batch.take().unwrap().to_bytes().into_owned();
        assert_eq!(sent, Expected::default().batch(0, &[(5, &items[..1])]));
        batch.forward(6, "robot9/scan", &[3; 3]);
        assert!(!batch.has_open_moment(), "nothing is written for it");
    }

    #[test]
    fn channels_follow_the_world_and_start_again_with_another() {
        let mut channels = BatchChannels::default();
        let keys = Keys::new("s");
        let mut names: Vec<String> = ["/clock", "/tf", "/tf_static", "/robot1/odom"].map(String::from).to_vec();
        channels.follow(&names, &keys);
        assert_eq!(channels.id("robot1/odom"), Some(4));
        assert_eq!((channels.next_sequence(4), channels.next_sequence(4)), (0, 1));
        assert_eq!(channels.id("clock"), Some(CLOCK_CHANNEL));
        names.push("/robot2/odom".into());
        channels.follow(&names, &keys);
        assert_eq!(channels.id("robot2/odom"), Some(5), "a model spawned: its topics numbered after");
        assert_eq!(channels.id("robot1/odom"), Some(4));
        assert_eq!(channels.next_sequence(4), 2, "the same channel goes on");
        // Another world: the same names in another order.
        names.swap(3, 4);
        channels.follow(&names, &keys);
        assert_eq!(channels.id("robot1/odom"), Some(5), "numbered afresh");
        assert_eq!(channels.next_sequence(5), 0, "a new world's channels start their sequences");
    }

    #[test]
    fn a_batch_is_full_at_its_moments_or_its_bytes() {
        let (items, mut batch) = (odometry(), batch_of_test_topics());
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
        let (items, mut batch, mut want) = (odometry(), batch_of_test_topics(), Expected::default());
        batch.add(10_000_000, &items);
        assert!(batch.wants_shared_memory());
        batch.use_shared_memory(shared);
        assert!(!batch.wants_shared_memory(), "it has some");
        let started_before = batch.take().unwrap();
        assert!(started_before.as_shm().is_none(), "a batch started in process memory stays there");
        want.batch(0, &[(10_000_000, &items)]);
        batch.add(20_000_000, &items);
        let first = batch.take().unwrap();
        assert!(first.as_shm().is_some(), "in shared memory, which Zenoh sends without a copy");
        let records = read_batch(&first.to_bytes()).unwrap().records().as_ptr();
        assert_eq!(records as usize % BATCH_ALIGN, 0, "its records on a boundary direct I/O takes");
        assert_eq!(content(&first.to_bytes()), content(&want.batch(1, &[(20_000_000, &items)])));
        // Room for as much as the last batch and one more moment.
        batch.add(40_000_000, &items);
        batch.add(60_000_000, &items[..1]);
        let second = batch.take().unwrap();
        assert!(second.as_shm().is_some());
        let expected = want.batch(2, &[(40_000_000, &items), (60_000_000, &items[..1])]);
        assert_eq!(content(&second.to_bytes()), content(&expected));
    }

    #[test]
    fn a_first_batch_given_shared_memory_from_the_start_is_written_there() {
        let Some(shared) = shared_memory(4 * BATCH_BYTES) else { return };
        let (items, mut batch) = (odometry(), batch_of_test_topics());
        batch.use_shared_memory(shared);
        batch.add(10_000_000, &items);
        let first = batch.take().unwrap();
        assert!(first.as_shm().is_some(), "room for its first moment and its end");
        assert_eq!(content(&first.to_bytes()), content(&Expected::default().batch(0, &[(10_000_000, &items)])));
    }

    #[test]
    fn a_batch_goes_on_in_process_memory_when_shared_memory_has_no_room() {
        let Some(shared) = shared_memory(4 * BATCH_BYTES) else { return };
        let (small, mut batch, mut want) = (odometry(), batch_of_test_topics(), Expected::default());
        batch.use_shared_memory(shared);
        // Room for one moment in the first batch: a second moves it.
        batch.add(1, &small);
        batch.add(2, &small);
        batch.add(3, &small);
        let sent = batch.take().unwrap();
        assert!(sent.as_shm().is_none(), "moved to process memory");
        assert_eq!(sent.to_bytes().into_owned(), want.batch(0, &[(1, &small), (2, &small), (3, &small)]));
        // The pool exhausted by batches of a megabyte the recorder still holds.
        let large = vec![("robot1/scan".to_string(), vec![7; BATCH_BYTES])];
        let mut held = Vec::new();
        for time in 0..6 {
            batch.add(time, &large);
            held.push(batch.take().unwrap());
        }
        assert!(held.iter().any(|b| b.as_shm().is_some()) && held.iter().any(|b| b.as_shm().is_none()));
        for (number, sent) in held.iter().enumerate() {
            let expected = want.batch(number as u64 + 1, &[(number as u64, &large)]);
            assert_eq!(content(&sent.to_bytes()), content(&expected), "batch {number}");
        }
    }

    #[test]
    fn the_next_batch_reuses_the_memory_once_zenoh_let_the_last_go() {
        let (items, mut batch, mut want) = (odometry(), batch_of_test_topics(), Expected::default());
        want.batch(0, &[(1, &items)]);
        want.batch(1, &[(2, &items)]);
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
        assert_eq!(third.to_bytes().into_owned(), want.batch(2, &[(3, &items)]));
    }

    /// [`PendingBatch::forward`] for each of `messages`.
    fn forward_each(batch: &mut PendingBatch, time_ns: u64, messages: &[(String, Vec<u8>)]) {
        for (key, payload) in messages {
            batch.forward(time_ns, key, payload);
        }
    }

    #[test]
    fn forwarded_messages_are_numbered_on_from_batch_to_batch() {
        let (items, mut batch, mut want) = (odometry(), batch_of_test_topics(), Expected::default());
        let swapped = [items[1].clone(), items[0].clone()];
        forward_each(&mut batch, 1, &items);
        forward_each(&mut batch, 2, &swapped);
        let sent = batch.take().unwrap().to_bytes().into_owned();
        assert_eq!(sent, want.batch(0, &[(1, &items[..]), (2, &swapped[..])]));
        forward_each(&mut batch, 3, &swapped);
        let sent = batch.take().unwrap().to_bytes().into_owned();
        assert_eq!(sent, want.batch(1, &[(3, &swapped[..])]), "the same channels in the next batch");
    }

    #[test]
    fn forwarded_messages_make_the_moment_they_would_have_made_added() {
        let (items, mut batch) = (odometry(), batch_of_test_topics());
        // All of a moment forwarded, then closed by an add of nothing.
        forward_each(&mut batch, 20_000_000, &items);
        assert!(batch.has_open_moment() && batch.take_started(), "the first message starts the batch");
        batch.add(20_000_000, &[]);
        assert!(!batch.has_open_moment(), "closed");
        // Part forwarded, the rest added at the same time.
        forward_each(&mut batch, 40_000_000, &items[..1]);
        assert!(!batch.take_started(), "the batch was started already");
        assert!(batch.takes_without_sending(40_000_000, &items[1..]), "joins the open moment");
        batch.add(40_000_000, &items[1..]);
        // Forwarded at a later time: the open moment is closed, another opened.
        forward_each(&mut batch, 60_000_000, &items[..1]);
        forward_each(&mut batch, 80_000_000, &items[1..]);
        let sent = batch.take().unwrap().to_bytes().into_owned();
        let expected =
            [(20_000_000, &items[..]), (40_000_000, &items[..]), (60_000_000, &items[..1]), (80_000_000, &items[1..])];
        let expected = Expected::default().batch(0, &expected);
        assert_eq!(sent, expected, "the open moment is closed when the batch goes");
        assert!(!batch.has_open_moment() && batch.due_at().is_none(), "nothing waits");
    }

    #[test]
    fn messages_of_the_last_moment_s_time_join_it_after_it_closed() {
        let (items, mut batch, mut want) = (odometry(), batch_of_test_topics(), Expected::default());
        // A forwarded command at a time, each closing its moment as the
        // node publishes after it: more than a batch holds in moments.
        let commands: Vec<(String, Vec<u8>)> = (0..BATCH_MOMENTS + 5).map(|i| items[i % 2].clone()).collect();
        for command in &commands {
            forward_each(&mut batch, 20_000_000, std::slice::from_ref(command));
            batch.add(20_000_000, &[]);
        }
        assert!(!batch.is_full(), "one moment");
        assert!(batch.takes_without_sending(20_000_000, &items), "the same time joins it");
        batch.add(20_000_000, &items);
        forward_each(&mut batch, 40_000_000, &items[..1]);
        let sent = batch.take().unwrap().to_bytes().into_owned();
        let first: Vec<(String, Vec<u8>)> = commands.iter().chain(&items).cloned().collect();
        assert_eq!(sent, want.batch(0, &[(20_000_000, &first[..]), (40_000_000, &items[..1])]));
        forward_each(&mut batch, 40_000_000, &items[1..]);
        let next = batch.take().unwrap().to_bytes().into_owned();
        assert_eq!(next, want.batch(1, &[(40_000_000, &items[1..])]), "a new batch, a new moment");
    }

    #[test]
    fn an_open_moment_counts_toward_a_full_batch() {
        let (items, mut batch) = (odometry(), batch_of_test_topics());
        for moment in 1..BATCH_MOMENTS as u64 {
            forward_each(&mut batch, moment, &items);
            batch.add(moment, &[]);
        }
        forward_each(&mut batch, 0, &items[..1]);
        assert!(batch.is_full(), "the open moment is the last one a batch holds");
        assert!(!batch.takes_without_sending(0, &[]), "full already: nothing more joins it without sending");
    }

    #[test]
    fn in_shared_memory_forwarded_messages_go_on_in_process_memory_past_the_room() {
        let Some(shared) = shared_memory(4 * BATCH_BYTES) else { return };
        // Larger than the bytes a buffer may have beyond its room, for the
        // skip to the records' boundary.
        let small = vec![("robot1/odom".to_string(), vec![1; 5000]), ("tf".to_string(), vec![2; 900])];
        let (mut batch, mut want) = (batch_of_test_topics(), Expected::default());
        batch.use_shared_memory(shared);
        // The first batch has room for its first message only.
        forward_each(&mut batch, 1, &small);
        batch.add(1, &[]);
        forward_each(&mut batch, 2, &small);
        let moved = batch.take().unwrap();
        assert!(moved.as_shm().is_none(), "moved to process memory");
        assert_eq!(moved.to_bytes().into_owned(), want.batch(0, &[(1, &small), (2, &small)]));
        // The next has room for as much, and goes from shared memory.
        forward_each(&mut batch, 3, &small);
        batch.add(3, &small[..1]);
        let in_place = batch.take().unwrap();
        assert!(in_place.as_shm().is_some(), "written where it is sent from");
        let mut both = small.clone();
        both.push(small[0].clone());
        assert_eq!(content(&in_place.to_bytes()), content(&want.batch(1, &[(3, &both)])));
    }
}
