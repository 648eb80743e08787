//! An MCAP file of ROS 2 topics, as rosbag2's MCAP storage writes one:
//! profile `ros2`, one channel per topic with its type's `ros2msg` schema,
//! CDR payloads (encapsulation header included, as on the wire), and each
//! channel's QoS in `offered_qos_profiles`, so `ros2 bag play` offers a
//! latched topic latched again.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use flotilla_plugins::registry::{Durability, TopicSpec};

use flotilla_wire::recording::IndexEntry;

use crate::direct_file::{DirectFile, Lent};
use crate::mcap_file::{McapWriter, Rewritable};
use flotilla_messages::definitions::{schema, SCHEMA_ENCODING};

/// What went wrong writing a bag.
#[derive(Debug, thiserror::Error)]
pub enum BagError {
    /// The file could not be written.
    #[error("cannot write the recording: {0}")]
    Write(#[from] std::io::Error),
    /// The file could not be created.
    #[error("cannot create {path}: {error}")]
    Create {
        /// The file.
        path: String,
        /// Why.
        error: std::io::Error,
    },
    /// A topic's type has no definition compiled in.
    #[error("no message definition of {missing} (topic {topic}, type {ros_type})")]
    NoDefinition {
        /// The topic.
        topic: String,
        /// Its type.
        ros_type: String,
        /// The type without a definition.
        missing: String,
    },
    /// A message on a topic not added to this bag.
    #[error("topic #{0} was not added to this recording")]
    UnknownTopic(usize),
    /// More topics than an MCAP file has channel ids.
    #[error("more than 65,535 topics: an MCAP file has no more channel ids")]
    TooManyTopics,
}

/// A topic added to a bag, as [`Bag::write`] takes it: looked up once,
/// not by name with every message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TopicId(usize);

/// A channel of the bag.
struct Channel {
    topic: String,
    id: u16,
    sequence: u32,
}

/// An MCAP file being written.
pub struct Bag<W: Rewritable> {
    writer: McapWriter<W>,
    /// Per ROS type, its schema's id: topics of one type share it.
    schemas: HashMap<&'static str, u16>,
    /// Per topic name, its channel in `channels`.
    ids: HashMap<String, TopicId>,
    channels: Vec<Channel>,
}

/// How a bag's chunks are compressed. Foxglove and rosbag2's MCAP storage
/// read all three.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ChunkCompression {
    /// Not compressed, the default: files about 2.5 times lz4's, and a
    /// node's batch written without being read, so that recording slows
    /// a fast simulation least.
    #[default]
    None,
    /// lz4 (fast mode): a quarter of zstd's CPU.
    Lz4,
    /// zstd: the smallest files, the most CPU.
    Zstd,
}

impl ChunkCompression {
    /// Every choice.
    pub const ALL: [ChunkCompression; 3] = [ChunkCompression::None, ChunkCompression::Lz4, ChunkCompression::Zstd];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            ChunkCompression::None => "none",
            ChunkCompression::Lz4 => "lz4",
            ChunkCompression::Zstd => "zstd",
        }
    }
}

impl std::fmt::Display for ChunkCompression {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for ChunkCompression {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        Self::ALL.into_iter().find(|c| c.name() == text).ok_or_else(|| {
            let names: Vec<&str> = Self::ALL.iter().map(|c| c.name()).collect();
            format!("unknown compression {text:?}; expected one of {}", names.join(", "))
        })
    }
}

impl Bag<DirectFile> {
    /// Creates (or truncates) the file at `path`, written around the page
    /// cache where its file system allows (see [`DirectFile`]).
    pub fn create(path: &Path, compression: ChunkCompression) -> Result<Self, BagError> {
        let file =
            DirectFile::create(path).map_err(|error| BagError::Create { path: path.display().to_string(), error })?;
        Bag::new(file, compression)
    }
}

impl<W: Rewritable> Bag<W> {
    /// A bag written to `out`, its chunks compressed with `compression`,
    /// profile `ros2`.
    pub fn new(out: W, compression: ChunkCompression) -> Result<Self, BagError> {
        let library = concat!("flotilla ", env!("CARGO_PKG_VERSION"));
        let writer = McapWriter::new(out, compression, "ros2", library)?;
        Ok(Bag { writer, schemas: HashMap::new(), ids: HashMap::new(), channels: Vec::new() })
    }

    /// Adds a topic (its ROS name, type and QoS) as channel `channel` if
    /// no other has it, or else as the highest free one; adding it again
    /// gives the same id.
    pub fn add_topic(&mut self, topic: &TopicSpec, channel: u16) -> Result<TopicId, BagError> {
        if let Some(&id) = self.ids.get(&topic.name) {
            return Ok(id);
        }
        let channel = if channel != 0 && !self.writer.has_channel(channel) {
            channel
        } else {
            // Far from the world's numbers, which count up from 1.
            (1..=u16::MAX).rev().find(|&id| !self.writer.has_channel(id)).ok_or(BagError::TooManyTopics)?
        };
        let schema_id = match self.schemas.get(topic.ros_type) {
            Some(&id) => id,
            None => {
                let text = schema(topic.ros_type).map_err(|missing| BagError::NoDefinition {
                    topic: topic.name.clone(),
                    ros_type: topic.ros_type.to_string(),
                    missing,
                })?;
                let id = self.writer.add_schema(topic.ros_type, SCHEMA_ENCODING, text.as_bytes())?;
                self.schemas.insert(topic.ros_type, id);
                id
            }
        };
        let qos = qos_profile_yaml(topic);
        self.writer.add_channel(channel, schema_id, &topic.name, "cdr", &[("offered_qos_profiles", &qos)])?;
        let topic_id = TopicId(self.channels.len());
        self.channels.push(Channel { topic: topic.name.clone(), id: channel, sequence: 0 });
        self.ids.insert(topic.name.clone(), topic_id);
        Ok(topic_id)
    }

    /// The channel id of a topic added.
    pub fn channel(&self, topic: TopicId) -> Option<u16> {
        self.channels.get(topic.0).map(|channel| channel.id)
    }

    /// Writes one message of a topic at sim time `time_ns` (log and publish
    /// time alike), numbered by the bag.
    pub fn write(&mut self, topic: TopicId, time_ns: u64, payload: &[u8]) -> Result<(), BagError> {
        let channel = self.channels.get_mut(topic.0).ok_or(BagError::UnknownTopic(topic.0))?;
        channel.sequence = channel.sequence.wrapping_add(1);
        self.writer.write(channel.id, channel.sequence, time_ns, time_ns, payload)?;
        Ok(())
    }

    /// [`Bag::write`] for a message its sender numbered `sequence`.
    pub fn write_numbered(
        &mut self,
        topic: TopicId,
        sequence: u32,
        time_ns: u64,
        payload: &[u8],
    ) -> Result<(), BagError> {
        let channel = self.channels.get(topic.0).ok_or(BagError::UnknownTopic(topic.0))?;
        self.writer.write(channel.id, sequence, time_ns, time_ns, payload)?;
        Ok(())
    }

    /// Writes a node's batch of records as they are, a chunk of their own
    /// (see [`McapWriter::write_lent_chunk`]): each of a channel this bag
    /// has, as `index` says.
    pub fn write_lent(&mut self, lent: Lent, index: impl Iterator<Item = IndexEntry>) -> Result<(), BagError> {
        self.writer.write_lent_chunk(lent, index)?;
        Ok(())
    }

    /// Adds a file to the bag (an MCAP attachment), written at
    /// [`Bag::finish`].
    pub fn attach(&mut self, name: &str, media_type: &str, log_time: u64, data: Vec<u8>) {
        self.writer.attach(name, media_type, log_time, data);
    }

    /// Adds a metadata record of key-value pairs, written at [`Bag::finish`].
    pub fn add_metadata(&mut self, name: &str, entries: Vec<(String, String)>) {
        self.writer.add_metadata(name, entries);
    }

    /// Messages written per topic so far.
    pub fn counts(&self) -> BTreeMap<String, u64> {
        self.channels.iter().map(|c| (c.topic.clone(), self.writer.message_count(c.id))).collect()
    }

    /// Writes the summary and flushes: a bag not finished cannot be read.
    pub fn finish(self) -> Result<(), BagError> {
        self.writer.finish()?;
        Ok(())
    }
}

/// rosbag2's YAML of the QoS a topic was offered with (its rmw numbers:
/// history keep-last 1, reliability reliable 1, durability transient-local
/// 1 or volatile 2, liveliness automatic 1; infinite deadline, lifespan
/// and lease).
fn qos_profile_yaml(topic: &TopicSpec) -> String {
    let durability = match topic.durability {
        Durability::TransientLocal => 1,
        Durability::Volatile => 2,
    };
    let infinite = "{sec: 2147483647, nsec: 4294967295}";
    format!(
        "- history: 1\n  depth: {}\n  reliability: 1\n  durability: {durability}\n  deadline: {infinite}\n  \
         lifespan: {infinite}\n  liveliness: 1\n  liveliness_lease_duration: {infinite}\n  \
         avoid_ros_namespace_conventions: false\n",
        topic.depth
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_messages::std_msgs::StdString;
    use flotilla_wire::recording::{encode_batch, read_batch, ChannelMessage};

    #[test]
    fn a_bag_reads_back_with_its_schemas_channels_and_times() {
        for compression in ChunkCompression::ALL {
            bag_reads_back(compression);
        }
    }

    #[test]
    fn a_bag_larger_than_the_file_s_blocks_reads_back_through_its_indexes() {
        for compression in ChunkCompression::ALL {
            large_bag_reads_back(compression);
        }
    }

    /// Scans that do not compress (stored chunks, their headers written
    /// last) and odometry that does, interleaved, over several of the
    /// file's blocks; every message found again through the summary's
    /// chunk indexes and each chunk's message indexes.
    fn large_bag_reads_back(compression: ChunkCompression) {
        let path = std::env::temp_dir().join(format!("flotilla-bag-large-{}-{compression:?}.mcap", std::process::id()));
        let mut bag = Bag::create(&path, compression).unwrap();
        let scan = bag.add_topic(&TopicSpec::publish::<StdString>("/r/scan"), 0).unwrap();
        let odom = bag.add_topic(&TopicSpec::publish::<StdString>("/r/odom"), 0).unwrap();
        let pose = bag.add_topic(&TopicSpec::publish::<StdString>("/r/pose"), 9).unwrap();
        assert_eq!(bag.channel(pose), Some(9), "the world's channel id, free in the bag");
        let (mut written, mut state) = (Vec::new(), 0x9e37_79b9_7f4a_7c15_u64);
        for step in 0..800u64 {
            if step % 100 == 50 {
                // A node's batch, lent: its records go in as they are.
                let payloads: Vec<ChannelMessage> = (0..30u32)
                    .map(|k| (9, k, flotilla_messages::encode(&StdString { data: format!("{step}.{k}").repeat(200) })))
                    .collect();
                let moments: Vec<(u64, &[ChannelMessage])> = payloads
                    .chunks(3)
                    .enumerate()
                    .map(|(i, m)| (step * 1_000_000 + 1000 * i as u64 + 500, m))
                    .collect();
                for (time, messages) in &moments {
                    written.extend(messages.iter().map(|(_, _, payload)| ("/r/pose", *time, payload.clone())));
                }
                let bytes = encode_batch(step, &moments);
                let batch = read_batch(&bytes).unwrap();
                let lent =
                    crate::direct_file::tests::lent_from_page(&bytes, batch.records().len(), &Default::default());
                bag.write_lent(lent, batch.index()).unwrap();
            }
            // Scans as noise (xorshift), which lz4 cannot compress.
            let noise: Vec<u8> = (0..20_000)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state as u8
                })
                .collect();
            let odometry = flotilla_messages::encode(&StdString { data: "x".repeat(300) });
            let (topic, name, payload) =
                if step % 2 == 0 { (scan, "/r/scan", noise) } else { (odom, "/r/odom", odometry) };
            bag.write(topic, step * 1_000_000, &payload).unwrap();
            written.push((name, step * 1_000_000, payload));
        }
        bag.finish().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        assert!(bytes.len() > 3 * (2 << 20), "{compression:?}: {} bytes, more than the file's blocks", bytes.len());
        crate::mcap_file::tests::records_checked(&bytes); // every CRC

        let summary = mcap::Summary::read(&bytes).unwrap().expect("a summary");
        let mut found = Vec::new();
        for chunk in &summary.chunk_indexes {
            for (channel, entries) in summary.read_message_indexes(&bytes, chunk).unwrap() {
                for entry in entries {
                    let message = summary.seek_message(&bytes, chunk, &entry).unwrap();
                    assert_eq!(message.channel.topic, channel.topic);
                    found.push((message.channel.topic.clone(), message.log_time, message.data.into_owned()));
                }
            }
        }
        found.sort_by_key(|(_, time, _)| *time);
        let found: Vec<(&str, u64, Vec<u8>)> =
            found.iter().map(|(t, time, d)| (t.as_str(), *time, d.clone())).collect();
        written.sort_by_key(|(_, time, _)| *time);
        assert_eq!(found, written, "{compression:?}");
        let streamed = mcap::MessageStream::new(&bytes).unwrap().map(Result::unwrap).count();
        assert_eq!(streamed, written.len(), "{compression:?}: read in file order too");
    }

    fn bag_reads_back(compression: ChunkCompression) {
        let path = std::env::temp_dir().join(format!("flotilla-bag-{}-{compression:?}.mcap", std::process::id()));
        let mut bag = Bag::create(&path, compression).unwrap();
        let latched = TopicSpec {
            durability: Durability::TransientLocal,
            depth: 1,
            ..TopicSpec::publish::<StdString>("/r/map_name")
        };
        let map_name = bag.add_topic(&latched, 5).unwrap();
        assert_eq!(bag.add_topic(&latched, 6).unwrap(), map_name, "added once");
        let other = bag.add_topic(&TopicSpec::publish::<StdString>("/r/other"), 5).unwrap();
        assert_ne!(other, map_name);
        assert_eq!((bag.channel(map_name), bag.channel(other)), (Some(5), Some(u16::MAX)), "5 taken: the highest free");
        let payload = flotilla_messages::encode(&StdString { data: "floor-2".into() });
        bag.write(map_name, 1_500_000_000, &payload).unwrap();
        bag.write(map_name, 2_000_000_000, &payload).unwrap();
        assert!(matches!(bag.write(TopicId(7), 0, &payload), Err(BagError::UnknownTopic(7))));
        assert_eq!(bag.counts()["/r/map_name"], 2);
        bag.finish().unwrap();

        let bytes = std::fs::read(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        let messages: Vec<mcap::Message> = mcap::MessageStream::new(&bytes).unwrap().map(Result::unwrap).collect();
        assert_eq!(messages.len(), 2);
        let first = &messages[0];
        assert_eq!((first.channel.topic.as_str(), first.channel.message_encoding.as_str()), ("/r/map_name", "cdr"));
        assert_eq!((first.log_time, first.publish_time, first.sequence), (1_500_000_000, 1_500_000_000, 1));
        assert_eq!(first.data.as_ref(), payload.as_slice(), "the payload as it came");
        let schema = first.channel.schema.as_ref().unwrap();
        assert_eq!((schema.name.as_str(), schema.encoding.as_str()), ("std_msgs/msg/String", "ros2msg"));
        assert!(first.channel.metadata["offered_qos_profiles"].contains("durability: 1"));
        // The chunks say how they were compressed; topics of one type share
        // its schema.
        let summary = mcap::Summary::read(&bytes).unwrap().unwrap();
        assert_eq!((summary.schemas.len(), summary.channels.len()), (1, 2));
        let chunk = &summary.chunk_indexes[0];
        let expected = match compression {
            ChunkCompression::None => "",
            ChunkCompression::Lz4 => "lz4",
            ChunkCompression::Zstd => "zstd",
        };
        assert_eq!(chunk.compression, expected, "{compression:?}");
    }

    #[test]
    fn compression_names_parse_and_typos_are_refused() {
        assert_eq!("none".parse(), Ok(ChunkCompression::default()));
        assert_eq!("lz4".parse(), Ok(ChunkCompression::Lz4));
        assert_eq!("none".parse(), Ok(ChunkCompression::None));
        for compression in ChunkCompression::ALL {
            assert_eq!(compression.to_string().parse(), Ok(compression), "a name round-trips");
        }
        let error = "lz5".parse::<ChunkCompression>().unwrap_err();
        assert!(error.contains("\"lz5\"") && error.contains("none, lz4, zstd"), "{error}");
    }

    #[test]
    fn the_qos_of_a_latched_topic_says_transient_local() {
        let latched =
            TopicSpec { durability: Durability::TransientLocal, depth: 1, ..TopicSpec::publish::<StdString>("/m") };
        let yaml = qos_profile_yaml(&latched);
        assert!(yaml.contains("durability: 1") && yaml.contains("depth: 1"), "{yaml}");
        assert!(qos_profile_yaml(&TopicSpec::publish::<StdString>("/m")).contains("durability: 2"));
    }
}
