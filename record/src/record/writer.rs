//! The recording's writer ([`Writer`]): the bag, the sim time known, and
//! per recorded topic where its messages are taken from; fed by the
//! subscribers' callbacks, on the thread that received each message.

use std::sync::{Arc, Mutex};

use flotilla_messages::rosgraph_msgs::Clock;
use flotilla_plugins::channels::{channel_ids, CLOCK_TOPIC};
use flotilla_plugins::registry::TopicSpec;
use flotilla_wire::recording::{read_batch, Batch, BatchMessage};
use flotilla_wire::DecodeError;
use flotilla_wire::Keys;
use rustc_hash::FxHashMap;

use super::gaps::BatchGaps;
use super::source::Source;
use crate::bag::{Bag, BagError, ChunkCompression, TopicId};
use crate::direct_file::{Lender, Lent};

/// The bag and the sim time, shared by the subscribers' callbacks: each
/// message is written on the thread that received it: a hand-over to a
/// writer thread would cost a wake-up per message, which at high message
/// rates was the recorder's main cost.
pub(super) struct Writer {
    pub(super) bag: Bag<crate::direct_file::DirectFile>,
    /// How the bag's chunks are compressed: only stored chunks take a
    /// node's batch as it is.
    compression: ChunkCompression,
    /// The latest sim time known, ns, from the latest `clock` or batch:
    /// the log time of what comes on its key.
    pub(super) now_ns: u64,
    /// The first error, after which nothing more is written.
    pub(super) failed: Option<BagError>,
    /// The topics recorded.
    pub(super) recorded: Vec<Recorded>,
    /// Per recorded topic's key, its place in `recorded`: one lookup a
    /// message, hashed with the Fx hash (SipHash, the standard one, was
    /// 3.5 % of the recorder's samples; these keys come from the
    /// simulation's nodes).
    topics: FxHashMap<String, usize>,
    /// Per channel id the world gives a topic (see
    /// [`flotilla_plugins::channels`]), the recorded topic of that name.
    by_channel: Vec<Option<usize>>,
    /// The nodes' batches that never arrived.
    pub(super) gaps: BatchGaps,
    /// Per batch key (one per node), what its batches lent to the file
    /// count in: each node's pool of shared memory is its own.
    lenders: FxHashMap<String, Lender>,
    /// The time of the latest `clock` written as it came on its key, until
    /// the world's batches bring the clock: a first batch may hold clocks
    /// this recorder already has (it is sent at once to a recorder that
    /// comes alone, but a recorder that comes while another records gets
    /// the next batch of twenty steps).
    live_clock_ns: Option<u64>,
    /// The recorded topics whose source is [`Source::KeyUntilForwarded`].
    awaiting_forwarder: Vec<usize>,
    /// The batch keys of the nodes whose [`Keys::forwarding`] token says
    /// they forward what they receive.
    forwarding: std::collections::HashSet<String>,
}

/// A topic being recorded.
pub(super) struct Recorded {
    /// Its ROS name.
    pub(super) name: String,
    /// Its channel in the bag.
    id: TopicId,
    /// Its channel id in the bag.
    channel: u16,
    /// Whether it is `/clock`, whose messages set the log time.
    clock: bool,
    /// Where its messages are taken from.
    pub(super) source: Source,
    /// The log time of its latest message copied or written as it came,
    /// ns: one that comes on its key is logged no earlier, so that a
    /// reader in log-time order gets a topic's messages in the order they
    /// came even where the sim time known went back (a node's batch of
    /// moments older than the world's last clock).
    last_ns: u64,
}

/// Records in a batch below which it is copied rather than lent to the
/// file (see [`Writer::write_batch`]): a chunk of its own each would make
/// the world's batches of twenty clocks twenty-message chunks.
const LENT_FROM_BYTES: usize = 64 * 1024;

/// A batch as Zenoh delivered it, in one piece of shared memory: lent to
/// the file's writing thread, which holds it until its bytes are written.
struct Received(zenoh::bytes::ZBytes);

impl AsRef<[u8]> for Received {
    fn as_ref(&self) -> &[u8] {
        self.0.slices().next().unwrap_or_default()
    }
}

pub(super) type Shared = Arc<Mutex<Writer>>;

pub(super) fn lock(writer: &Shared) -> std::sync::MutexGuard<'_, Writer> {
    writer.lock().unwrap_or_else(|e| e.into_inner())
}

impl Writer {
    pub(super) fn new(bag: Bag<crate::direct_file::DirectFile>, compression: ChunkCompression) -> Writer {
        Writer {
            bag,
            compression,
            now_ns: 0,
            failed: None,
            recorded: Vec::new(),
            topics: FxHashMap::default(),
            by_channel: Vec::new(),
            gaps: BatchGaps::default(),
            lenders: FxHashMap::default(),
            live_clock_ns: None,
            awaiting_forwarder: Vec::new(),
            forwarding: std::collections::HashSet::new(),
        }
    }

    /// Records `topic` on `key`, as the world's channel `channel` where
    /// the bag has it free, taken from `source`; its place among the
    /// recorded topics, unless the recording failed.
    pub(super) fn add_topic(&mut self, key: String, topic: &TopicSpec, channel: u16, source: Source) -> Option<usize> {
        if self.failed.is_some() {
            return None;
        }
        match self.bag.add_topic(topic, channel) {
            Ok(id) => {
                let clock = topic.name == CLOCK_TOPIC;
                let channel = self.bag.channel(id).unwrap_or_default();
                let at = self.recorded.len();
                if matches!(source, Source::KeyUntilForwarded { .. }) {
                    self.awaiting_forwarder.push(at);
                }
                self.topics.insert(key, at);
                self.recorded.push(Recorded { name: topic.name.clone(), id, channel, clock, source, last_ns: 0 });
                Some(at)
            }
            Err(e) => {
                self.failed = Some(e);
                None
            }
        }
    }

    /// Follows the world's channel numbers (a description's `channels`),
    /// its topics' keys made by `keys`.
    pub(super) fn follow_channels(&mut self, channels: &[String], keys: &Keys) {
        self.by_channel.clear();
        self.by_channel.resize(channels.len() + 1, None);
        for (name, id) in channel_ids(channels) {
            self.by_channel[usize::from(id)] = self.topics.get(&keys.ros(name)).copied();
        }
    }

    /// The forwarder recorded topic `at` was taken from went: from now on
    /// it is taken on its key, and from that forwarder's last batches.
    pub(super) fn forwarder_gone(&mut self, at: usize) {
        let topic = &mut self.recorded[at];
        if let Source::Forwarded(from) = &topic.source {
            topic.source = Source::Key { also_from: Some(from.clone()) };
        }
    }

    /// The node sending batches on `batch_key` forwards recorded topic
    /// `at` again: if it is the forwarder the topic was taken from, its
    /// batches now overlap what comes on the key, and are left out.
    pub(super) fn forwarder_back(&mut self, at: usize, batch_key: &str) {
        let topic = &mut self.recorded[at];
        if matches!(&topic.source, Source::Key { also_from: Some(from) } if from == batch_key) {
            topic.source = Source::Key { also_from: None };
        }
    }

    /// Where recorded topic `at` is taken from now.
    pub(super) fn source(&self, at: usize) -> &Source {
        &self.recorded[at].source
    }

    /// Writes a message that arrived on the key of recorded topic `at`,
    /// unless the topic is taken from batches. A topic awaiting its
    /// forwarder is then taken on its key for good.
    pub(super) fn write_arrived(&mut self, at: usize, payload: &[u8]) {
        let topic = &mut self.recorded[at];
        if let Source::KeyUntilForwarded { .. } = topic.source {
            topic.source = Source::Key { also_from: None };
            self.awaiting_forwarder.retain(|&awaiting| awaiting != at);
        }
        if self.recorded[at].source.takes_key() {
            self.write_now(at, payload);
        }
    }

    /// The node that recorded topic `at` would be taken from, if it is
    /// still awaiting one: its batches' key, or `None` while no node
    /// forwards the topic. Returns whether the topic is taken from its
    /// batches now: that node forwards what it receives already (its
    /// token says so, or a batch of it came).
    pub(super) fn await_forwarder(&mut self, at: usize, forwarder: Option<String>) -> bool {
        let Source::KeyUntilForwarded { forwarder: awaited } = &mut self.recorded[at].source else { return false };
        match forwarder {
            Some(from) if self.forwarding.contains(&from) || self.gaps.knows(&from) => {
                self.recorded[at].source = Source::Forwarded(from);
                self.awaiting_forwarder.retain(|&awaiting| awaiting != at);
                true
            }
            forwarder => {
                *awaited = forwarder;
                false
            }
        }
    }

    /// The node whose batches come on `key` holds its
    /// [`Keys::forwarding`] token (`alive`) or no longer: it forwards what
    /// it receives, so the topics awaiting it are taken from its batches
    /// from now on, pushed onto `first`.
    pub(super) fn node_forwards(&mut self, key: &str, alive: bool, first: &mut Vec<String>) {
        if !alive {
            self.forwarding.remove(key);
            return;
        }
        self.forwarding.insert(key.to_string());
        self.take_from_forwarder(key, first);
    }

    /// A batch came on `key`: the topics awaiting that forwarder are taken
    /// from its batches from now on (this one included), and pushed onto
    /// `first`.
    fn take_from_forwarder(&mut self, key: &str, first: &mut Vec<String>) {
        let recorded = &mut self.recorded;
        self.awaiting_forwarder.retain(|&at| {
            let topic = &mut recorded[at];
            match &topic.source {
                Source::KeyUntilForwarded { forwarder: Some(from) } if from == key => {
                    topic.source = Source::Forwarded(from.clone());
                    first.push(topic.name.clone());
                    false
                }
                _ => true,
            }
        });
    }

    /// Writes the recorded messages of a node's batch, which came on
    /// `key`; returns the topics it brought for the first time.
    ///
    /// Each message is logged at the sim time of its moment: the state a
    /// node answered, or a `clock`'s own time (the world sends each step's
    /// clock as a moment of its own). The latest sets the time of what
    /// comes on keys next.
    ///
    /// A large batch in shared memory whose every message is of a topic
    /// the bag has under the world's channel id (the clock's aside) goes
    /// into the file as it is, a stored chunk of its own, without being
    /// read (see [`flotilla_wire::recording`]); any other, or one with
    /// a message the recorder takes elsewhere (see [`Source`]), is copied
    /// message by message.
    pub(super) fn write_batch(
        &mut self,
        key: &str,
        payload: &zenoh::bytes::ZBytes,
    ) -> Result<Vec<String>, DecodeError> {
        let bytes = payload.to_bytes();
        let batch = read_batch(&bytes)?;
        self.gaps.saw(key, batch.number());
        let mut first = Vec::new();
        if !self.awaiting_forwarder.is_empty() {
            self.take_from_forwarder(key, &mut first);
        }
        let mut as_it_is = self.compression == ChunkCompression::None && batch.records().len() >= LENT_FROM_BYTES;
        let mut last_ns = None;
        for entry in batch.index() {
            last_ns = Some(entry.time_ns);
            let Some(topic) = self.by_channel.get(usize::from(entry.channel)).copied().flatten() else {
                as_it_is = false;
                continue;
            };
            let topic = &mut self.recorded[topic];
            if topic.source == Source::KeyUntilBatched {
                topic.source = Source::Batches;
                first.push(topic.name.clone());
            }
            as_it_is &= !topic.clock && topic.channel == entry.channel && topic.source.takes_batch_of(key);
        }
        // In one piece of shared memory, which the file's writing thread can
        // hold: a batch that came through a socket lies in a buffer of
        // Zenoh's, which it reuses.
        as_it_is &= payload.as_shm().is_some() && payload.slices().count() == 1;
        if as_it_is {
            let start = batch.records().as_ptr() as usize - bytes.as_ptr() as usize;
            if !self.lenders.contains_key(key) {
                self.lenders.insert(key.to_string(), Lender::default());
            }
            let lent = Lent::new(Arc::new(Received(payload.clone())), start, batch.records().len(), &self.lenders[key]);
            self.now_ns = last_ns.unwrap_or(self.now_ns);
            if self.failed.is_none() {
                if let Err(e) = self.bag.write_lent(lent, batch.index()) {
                    self.failed = Some(e);
                }
            }
        } else {
            self.copy_batch(key, &batch)?;
        }
        if first.iter().any(|topic| topic == CLOCK_TOPIC) {
            // From now on the clock comes in batches only.
            self.live_clock_ns = None;
        }
        Ok(first)
    }

    /// Writes the recorded messages of `batch`, which came on `key`, one
    /// by one.
    fn copy_batch(&mut self, key: &str, batch: &Batch<'_>) -> Result<(), DecodeError> {
        for message in batch.messages() {
            let BatchMessage { time_ns, channel, sequence, payload, .. } = message?;
            self.now_ns = time_ns;
            let Some(topic) = self.by_channel.get(usize::from(channel)).copied().flatten() else { continue };
            let topic = &mut self.recorded[topic];
            if !topic.source.takes_batch_of(key) {
                continue;
            }
            topic.last_ns = topic.last_ns.max(time_ns);
            if !topic.clock || self.live_clock_ns.is_none_or(|live| time_ns > live) {
                let id = topic.id;
                if self.failed.is_none() {
                    if let Err(e) = self.bag.write_numbered(id, sequence, time_ns, payload) {
                        self.failed = Some(e);
                    }
                }
            }
        }
        Ok(())
    }

    /// The sim time a `clock` message says, or the latest known if it
    /// cannot be read.
    fn clock_time(&self, payload: &[u8]) -> u64 {
        match flotilla_messages::decode::<Clock>(payload) {
            Ok(clock) => clock.clock.nanos(),
            Err(e) => {
                tracing::warn!("a bad clock message: {e}");
                self.now_ns
            }
        }
    }

    /// Writes a message of recorded topic `at` that came on its key: at
    /// the latest sim time known (no earlier than the topic's last
    /// message), or, for a `clock`, at its own, which becomes the latest.
    fn write_now(&mut self, at: usize, payload: &[u8]) {
        if self.recorded[at].clock {
            self.now_ns = self.clock_time(payload);
            self.live_clock_ns = Some(self.now_ns);
        }
        let topic = &mut self.recorded[at];
        topic.last_ns = topic.last_ns.max(self.now_ns);
        let (id, time_ns) = (topic.id, topic.last_ns);
        self.write(id, time_ns, payload);
    }

    fn write(&mut self, topic: TopicId, time_ns: u64, payload: &[u8]) {
        if self.failed.is_some() {
            return;
        }
        if let Err(e) = self.bag.write(topic, time_ns, payload) {
            self.failed = Some(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_plugins::channels::CLOCK_CHANNEL;
    use flotilla_wire::recording::{encode_batch, ChannelMessage};
    use std::path::Path;

    /// A recorder's writer on a file of its own, recording `/clock`; and
    /// the clock's place among its topics.
    fn clock_writer(path: &Path) -> (Writer, usize) {
        let mut writer = Writer::new(Bag::create(path, ChunkCompression::None).unwrap(), ChunkCompression::None);
        let clock = Keys::new("s").ros(CLOCK_TOPIC);
        let at = writer
            .add_topic(clock, &TopicSpec::publish::<Clock>(CLOCK_TOPIC), CLOCK_CHANNEL, Source::KeyUntilBatched)
            .unwrap();
        writer.follow_channels(&[CLOCK_TOPIC.to_string()], &Keys::new("s"));
        (writer, at)
    }

    fn clock_at(ms: u64) -> Vec<u8> {
        flotilla_messages::encode(&Clock { clock: flotilla_wire::time::SimTime { nanos: ms * 1_000_000 }.to_ros() })
    }

    /// The clock's times in a finished file, in file order, ms.
    fn clock_times(path: &Path) -> Vec<u64> {
        let bytes = std::fs::read(path).unwrap();
        mcap::MessageStream::new(&bytes).unwrap().map(|m| m.unwrap().log_time / 1_000_000).collect()
    }

    #[test]
    fn a_first_batch_of_clocks_the_recorder_already_has_adds_only_the_new_ones() {
        let path = std::env::temp_dir().join(format!("flotilla-record-clock-{}.mcap", std::process::id()));
        let (mut writer, clock) = clock_writer(&path);
        for ms in [5, 10, 15] {
            writer.write_arrived(clock, &clock_at(ms));
        }
        // The world's batch of twenty steps that another recorder's
        // presence had started: 5 to 25 ms, the first three already here.
        let clocks: Vec<ChannelMessage> = (1..=5).map(|k| (CLOCK_CHANNEL, k as u32, clock_at(5 * k))).collect();
        let moments: Vec<(u64, &[ChannelMessage])> =
            clocks.iter().zip(1..).map(|(clock, k)| (5_000_000 * k, std::slice::from_ref(clock))).collect();
        let first = zenoh::bytes::ZBytes::from(encode_batch(7, &moments));
        assert_eq!(writer.write_batch("s/recording/world", &first).unwrap(), [CLOCK_TOPIC]);
        writer.write_arrived(clock, &clock_at(30)); // the same clock's copy on its key: taken from batches now
        let next = encode_batch(8, &[(30_000_000, &[(CLOCK_CHANNEL, 6, clock_at(30))])]);
        writer.write_batch("s/recording/world", &zenoh::bytes::ZBytes::from(next)).unwrap();
        assert_eq!(writer.now_ns, 30_000_000, "the latest time known");
        writer.bag.finish().unwrap();
        assert_eq!(clock_times(&path), [5, 10, 15, 20, 25, 30], "each clock once, at its own time");
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_forwarded_topic_comes_from_its_forwarder_only_then_on_its_key_once_it_went() {
        use flotilla_messages::geometry_msgs::Twist;
        let path = std::env::temp_dir().join(format!("flotilla-record-forwarded-{}.mcap", std::process::id()));
        let (mut writer, _) = clock_writer(&path);
        let keys = Keys::new("s");
        let (drive_a, drive_b) = (keys.recording("drive-a"), keys.recording("drive-b"));
        let cmd_vel = TopicSpec::subscribe::<Twist>("/robot1/cmd_vel");
        let at = writer.add_topic(keys.ros(&cmd_vel.name), &cmd_vel, 4, Source::Forwarded(drive_a.clone())).unwrap();
        let channels = ["/clock", "/tf", "/tf_static", "/robot1/cmd_vel"].map(String::from);
        writer.follow_channels(&channels, &keys);
        let command = |n: u8| vec![n; 48];
        let batch = |number: u64, time_ms: u64, commands: &[u8]| {
            let messages: Vec<ChannelMessage> = commands.iter().map(|&n| (4, u32::from(n), command(n))).collect();
            zenoh::bytes::ZBytes::from(encode_batch(number, &[(time_ms * 1_000_000, &messages[..])]))
        };

        writer.write_arrived(at, &command(1)); // its key's copy: never taken while forwarded
        writer.write_batch(&drive_a, &batch(0, 20, &[1, 2])).unwrap();
        writer.write_batch(&drive_b, &batch(0, 20, &[1, 2])).unwrap(); // another node's copies
        writer.forwarder_gone(at);
        writer.write_arrived(at, &command(4));
        // drive-a's last batch, which it sent before it went: what it
        // received before this recorder subscribed to the key.
        writer.write_batch(&drive_a, &batch(1, 30, &[3])).unwrap();
        writer.write_batch(&drive_b, &batch(1, 40, &[4, 5])).unwrap();
        writer.write_arrived(at, &command(5));
        // drive-a forwards the key again (its instances rebuilt): what it
        // forwards from now on comes on the key too.
        writer.forwarder_back(at, &drive_a);
        writer.write_batch(&drive_a, &batch(2, 50, &[6])).unwrap();
        writer.write_arrived(at, &command(6));
        writer.bag.finish().unwrap();

        let bytes = std::fs::read(&path).unwrap();
        let written: Vec<(u8, u64)> = mcap::MessageStream::new(&bytes)
            .unwrap()
            .map(|m| m.unwrap())
            .filter(|m| m.channel.topic == "/robot1/cmd_vel")
            .map(|m| (m.data[0], m.log_time / 1_000_000))
            .collect();
        // Command 4 came on the key when the latest time known was drive-a's
        // 20 ms; 5 after drive-b's batch of 40 ms moved it on.
        assert_eq!(written, [(1, 20), (2, 20), (4, 20), (3, 30), (5, 40), (6, 50)], "each command once");
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_topic_no_node_forwarded_at_the_start_is_taken_from_its_forwarder_once_its_batches_come() {
        use flotilla_messages::geometry_msgs::Twist;
        let path = std::env::temp_dir().join(format!("flotilla-record-awaiting-{}.mcap", std::process::id()));
        let (mut writer, clock) = clock_writer(&path);
        let keys = Keys::new("s");
        let (drive, odom) = (keys.recording("drive-a"), keys.recording("odom-a"));
        let topic = |name: &str| TopicSpec::subscribe::<Twist>(name);
        let awaiting = Source::KeyUntilForwarded { forwarder: None };
        let (one, two) = (topic("/robot1/cmd_vel"), topic("/robot2/cmd_vel"));
        let first = writer.add_topic(keys.ros(&one.name), &one, 4, awaiting.clone()).unwrap();
        let second = writer.add_topic(keys.ros(&two.name), &two, 5, awaiting).unwrap();
        let channels = ["/clock", "/tf", "/tf_static", "/robot1/cmd_vel", "/robot2/cmd_vel"].map(String::from);
        writer.follow_channels(&channels, &keys);
        let command = |n: u8| vec![n; 48];
        let batch = |number: u64, time_ms: u64, commands: &[(u16, u8)]| {
            let messages: Vec<ChannelMessage> = commands.iter().map(|&(c, n)| (c, u32::from(n), command(n))).collect();
            zenoh::bytes::ZBytes::from(encode_batch(number, &[(time_ms * 1_000_000, &messages[..])]))
        };

        // The drive's token came; another node's batch changes nothing.
        assert!(!writer.await_forwarder(first, Some(drive.clone())), "no batch of the drive yet");
        assert!(!writer.await_forwarder(second, Some(drive.clone())));
        assert_eq!(writer.write_batch(&odom, &batch(0, 5, &[])).unwrap(), Vec::<String>::new());
        // A command to robot 2 came on its key first: robot 2's stay there.
        writer.write_arrived(second, &command(20));
        // The drive's first batch: robot 1's commands come from it now,
        // at the drive's moments, and their copies on the key are left out.
        assert_eq!(writer.write_batch(&drive, &batch(0, 5, &[(4, 1)])).unwrap(), ["/robot1/cmd_vel"]);
        writer.write_arrived(first, &command(1));
        writer.write_arrived(clock, &clock_at(40)); // the latest time known: 40 ms
        writer.write_arrived(first, &command(2));
        writer.write_arrived(second, &command(21));
        writer.write_batch(&drive, &batch(1, 15, &[(4, 2), (5, 21)])).unwrap();
        // A third robot's forwarder, whose token came after its batches: it
        // forwards already, so the topic is taken from its batches at once.
        let awaiting = || Source::KeyUntilForwarded { forwarder: None };
        let three = topic("/robot3/cmd_vel");
        let third = writer.add_topic(keys.ros(&three.name), &three, 6, awaiting()).unwrap();
        assert!(writer.await_forwarder(third, Some(odom.clone())));
        // A fourth's, which has sent no batch (nothing to record yet) but
        // says it forwards: from its token on.
        let (four, five) = (topic("/robot4/cmd_vel"), topic("/robot5/cmd_vel"));
        let fourth = writer.add_topic(keys.ros(&four.name), &four, 7, awaiting()).unwrap();
        let fifth = writer.add_topic(keys.ros(&five.name), &five, 8, awaiting()).unwrap();
        let pioneer = keys.recording("pioneer-a");
        assert!(!writer.await_forwarder(fourth, Some(pioneer.clone())));
        let mut taken = Vec::new();
        writer.node_forwards(&pioneer, true, &mut taken);
        assert_eq!(taken, ["/robot4/cmd_vel"]);
        assert!(writer.await_forwarder(fifth, Some(pioneer.clone())), "a token seen before");
        writer.bag.finish().unwrap();

        let bytes = std::fs::read(&path).unwrap();
        let written: Vec<(&str, u8, u64)> = mcap::MessageStream::new(&bytes)
            .unwrap()
            .map(|m| m.unwrap())
            .filter(|m| m.channel.topic.ends_with("cmd_vel"))
            .map(|m| {
                (
                    if m.channel.topic.starts_with("/robot1") { "robot1" } else { "robot2" },
                    m.data[0],
                    m.log_time / 1_000_000,
                )
            })
            .collect();
        assert_eq!(
            written,
            [("robot2", 20, 0), ("robot1", 1, 5), ("robot2", 21, 40), ("robot1", 2, 15)],
            "robot 1's at the drive's moments, robot 2's on its key at the latest time known, each once"
        );
        std::fs::remove_file(&path).unwrap();
    }
}
