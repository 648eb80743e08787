//! Which topics a recording holds, and the MCAP channel id each has.
//!
//! A recorder records every ROS-facing topic of the world's description:
//! what its plugin instances publish and take in, the map manager's, and
//! `/clock`, `/tf`, `/tf_static` ([`recorded_topics`]). The world numbers
//! them as its models come ([`ChannelNumbers`]) and says the numbers in its
//! description (`WorldDescription::channels`): topic `channels[i]` is MCAP
//! channel `i + 1` in every recording of that world. A number is never
//! given to another topic while the world runs, so a node can write it
//! into the records of its batches for recorders (see [`flotilla_wire::recording`])
//! once, and every recorder finds the records laid out as its file holds
//! them: it writes a batch without reading it.

use std::collections::{BTreeSet, HashMap};

use crate::registry::{self, TopicSpec};
use flotilla_messages::rosgraph_msgs::Clock;
use flotilla_wire::description::{ModelDescription, WorldDescription};

/// The ROS name of the clock, whose messages set a recording's time.
pub const CLOCK_TOPIC: &str = "/clock";

/// `/clock`'s channel id: the world's topics come first.
pub const CLOCK_CHANNEL: u16 = 1;

/// The most channels a world numbers: an MCAP channel id is a u16, and 0
/// is none.
pub const MAX_CHANNELS: usize = u16::MAX as usize;

/// The ROS name of the world's log of the changes asked of it from outside
/// the simulation (see [`ControlLogEntry`]): a re-run's inputs. Recorded
/// besides the numbered topics ([`control_log_topic`]): the world sends it
/// on its key only, a few messages a run.
pub const CONTROL_LOG_TOPIC: &str = "/flotilla/control_log";

/// The topics every recording holds besides its models': `/clock`, `/tf`
/// and `/tf_static`.
pub fn world_topics() -> [TopicSpec; 3] {
    [TopicSpec::publish::<Clock>(CLOCK_TOPIC), TopicSpec::tf(), TopicSpec::tf_static()]
}

/// The world's control log: recorded too, without a number of the world's.
pub fn control_log_topic() -> TopicSpec {
    TopicSpec::publish::<flotilla_messages::std_msgs::StdString>(CONTROL_LOG_TOPIC)
}

/// One change the world carried out at the request of something outside
/// the simulation (a user's `flotilla move`, a ROS service call), as the
/// world logs it on [`CONTROL_LOG_TOPIC`]: a `std_msgs/String` holding this
/// as JSON. A lockstep run applies it before stepping from state `step`,
/// and `flotilla resim` asks it again there.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ControlLogEntry {
    /// The state the world had published when it applied the request.
    pub step: u64,
    /// What was asked.
    #[serde(flatten)]
    pub request: LoggedRequest,
}

impl ControlLogEntry {
    /// The entry as the log's `std_msgs/String` holds it. Floats are
    /// written so that they read back to the same bits (a pose moved by
    /// one in the last bit would make a re-run differ).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a control log entry is plain data")
    }

    /// An entry from a log message's text, or why it is not one.
    pub fn from_json(text: &str) -> Result<ControlLogEntry, String> {
        serde_json::from_str(text).map_err(|e| format!("not a control log entry ({e}): {text}"))
    }
}

/// A logged request: to the world's control service, or a ROS service.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoggedRequest {
    /// A control request (`flotilla spawn`, `delete`, `move`, `set-map`).
    Control(flotilla_wire::control::ControlRequest),
    /// A ROS service call: the service's ROS name and its CDR request.
    Service {
        /// E.g. `/spawn_entity`.
        name: String,
        /// The request as called, CDR.
        request_cdr: Vec<u8>,
    },
}

/// The ROS-facing topics of one model of a world whose layers are
/// `layer_names`: its plugin instances' (both directions) and its map's.
pub fn model_topics(model: &ModelDescription, layer_names: &[String]) -> Vec<TopicSpec> {
    let mut topics = registry::topics_of_model(model, layer_names);
    topics.extend(crate::maps::topics_of_model(model));
    topics
}

/// Every ROS-facing topic of `description`, the world's first, then its
/// models' in order, each name once.
pub fn recorded_topics(description: &WorldDescription) -> Vec<TopicSpec> {
    let mut seen = BTreeSet::new();
    world_topics()
        .into_iter()
        .chain(description.models.iter().flat_map(|model| model_topics(model, &description.layer_names)))
        .filter(|topic| seen.insert(topic.name.clone()))
        .collect()
}

/// The recorded topics of `description` that its instances take in and
/// nothing of the simulation publishes (no instance, no map, not the
/// world): commands from controllers outside it, `cmd_vel` most often.
/// A node receiving such a topic forwards it to recorders in its batches,
/// and a recorder takes it from there (see [`flotilla_wire::recording`]): both
/// sides tell these topics apart by this.
pub fn forwarded_topics(description: &WorldDescription) -> BTreeSet<String> {
    let mut taken_in = BTreeSet::new();
    let mut published = BTreeSet::new();
    let models = description.models.iter().flat_map(|model| model_topics(model, &description.layer_names));
    for topic in world_topics().into_iter().chain(models) {
        match topic.direction {
            registry::Direction::Subscribe => taken_in.insert(topic.name),
            _ => published.insert(topic.name),
        };
    }
    taken_in.retain(|name| !published.contains(name));
    taken_in
}

/// The channel numbers a world gives its recorded topics, in the order it
/// first had them; never taken back.
#[derive(Debug, Default, Clone)]
pub struct ChannelNumbers {
    /// Channel `i + 1`'s topic.
    names: Vec<String>,
    ids: HashMap<String, u16>,
}

impl ChannelNumbers {
    /// The world's own topics numbered 1, 2, 3 (see [`world_topics`]).
    pub fn new() -> ChannelNumbers {
        let mut numbers = ChannelNumbers::default();
        numbers.add(&world_topics());
        numbers
    }

    /// Numbers the topics of `topics` that have no number yet. Past
    /// [`MAX_CHANNELS`] a topic gets none: nodes then leave it out of
    /// their batches, and recorders take it on its key.
    pub fn add(&mut self, topics: &[TopicSpec]) {
        for topic in topics {
            if self.names.len() >= MAX_CHANNELS || self.ids.contains_key(&topic.name) {
                continue;
            }
            self.names.push(topic.name.clone());
            let id = u16::try_from(self.names.len()).expect("at most MAX_CHANNELS");
            self.ids.insert(topic.name.clone(), id);
        }
    }

    /// The names, channel 1's first: what the description says.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The numbers `names` gives, channel 1's first (a checkpoint's).
    pub fn from_names(names: Vec<String>) -> ChannelNumbers {
        let ids = names.iter().cloned().zip(1..=u16::MAX).collect();
        ChannelNumbers { names, ids }
    }
}

/// The channel names of a world that starts as `description` (its
/// `channels` field aside): the world's topics, then its models' in order.
pub fn numbered_channels(description: &WorldDescription) -> Vec<String> {
    let mut numbers = ChannelNumbers::new();
    numbers.add(&recorded_topics(description));
    numbers.names
}

/// The channel id of each name of a description's `channels`: name `i`
/// has `i + 1` (none past [`MAX_CHANNELS`]).
pub fn channel_ids(channels: &[String]) -> impl Iterator<Item = (&str, u16)> {
    channels.iter().zip(1..=u16::MAX).map(|(name, id)| (name.as_str(), id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::tests::robot;
    use crate::registry::Direction;

    fn topic(name: &str) -> TopicSpec {
        TopicSpec { name: name.to_string(), ..TopicSpec::tf() }
    }

    #[test]
    fn the_world_s_topics_come_first_and_numbers_are_never_given_again() {
        let mut numbers = ChannelNumbers::new();
        assert_eq!(numbers.names(), ["/clock", "/tf", "/tf_static"]);
        assert_eq!(channel_ids(numbers.names()).next(), Some((CLOCK_TOPIC, CLOCK_CHANNEL)));
        numbers.add(&[topic("/robot1/odom"), topic("/tf"), topic("/robot1/scan")]);
        numbers.add(&[topic("/robot2/odom"), topic("/robot1/odom")]);
        assert_eq!(numbers.names(), ["/clock", "/tf", "/tf_static", "/robot1/odom", "/robot1/scan", "/robot2/odom"]);
        let ids: Vec<(&str, u16)> = channel_ids(numbers.names()).collect();
        assert_eq!(ids[3], ("/robot1/odom", 4), "channel i + 1 is name i");
        assert_eq!(ids[5], ("/robot2/odom", 6));
    }

    #[test]
    fn numbers_stop_at_what_a_channel_id_holds() {
        let mut numbers = ChannelNumbers::new();
        let many: Vec<TopicSpec> = (0..MAX_CHANNELS + 10).map(|i| topic(&format!("/t{i}"))).collect();
        numbers.add(&many);
        assert_eq!(numbers.names().len(), MAX_CHANNELS);
        assert_eq!(channel_ids(numbers.names()).last().map(|(_, id)| id), Some(u16::MAX));
    }

    #[test]
    fn a_world_without_models_records_its_own_topics_only() {
        let description = WorldDescription::of_models(Vec::new());
        let names: Vec<String> = recorded_topics(&description).into_iter().map(|t| t.name).collect();
        assert_eq!(names, ["/clock", "/tf", "/tf_static"]);
        assert!(world_topics().iter().all(|t| t.direction == Direction::Publish));
    }

    #[test]
    fn a_control_log_entry_reads_back_to_the_same_bits() {
        use flotilla_wire::control::ControlRequest;
        use flotilla_wire::geometry::Pose2;
        let pose = Pose2::new(0.1 + 0.2, -1.0 / 3.0, std::f64::consts::PI - 1e-15);
        let moved = ControlLogEntry {
            step: 412,
            request: LoggedRequest::Control(ControlRequest::Move { name: "a".into(), pose }),
        };
        let json = moved.to_json();
        assert!(json.starts_with(r#"{"step":412,"control":{"Move""#), "{json}");
        assert_eq!(ControlLogEntry::from_json(&json), Ok(moved));
        let called = ControlLogEntry {
            step: 0,
            request: LoggedRequest::Service {
                name: "/delete_entity".into(),
                request_cdr: vec![0, 1, 0, 0, 2, 0, 0, 0, 97, 0],
            },
        };
        assert_eq!(ControlLogEntry::from_json(&called.to_json()), Ok(called));
        assert!(ControlLogEntry::from_json("{\"step\": 1}").unwrap_err().contains("not a control log entry"));
    }

    #[test]
    fn topics_forwarded_are_those_taken_in_that_nothing_in_the_simulation_publishes() {
        let drive = ("DiffDrive", "drive", "{type: DiffDrive, name: drive, body: base}");
        // robot2's drive steers by what robot2's laser publishes: a command
        // from inside the simulation.
        let steered = ("DiffDrive", "drive", "{type: DiffDrive, name: drive, body: base, twist_sub: scan}");
        let laser = (
            "Laser",
            "laser",
            "{type: Laser, name: laser, body: base, range: 20, angle: {min: -1.0, max: 1.0, increment: 0.5}}",
        );
        let world = WorldDescription::of_models(vec![robot("robot1", &[drive]), robot("robot2", &[steered, laser])]);
        let taken_in = registry::inputs_of(&world);
        assert!(taken_in.contains("/robot2/scan"), "{taken_in:?}");
        let forwarded: Vec<String> = forwarded_topics(&world).into_iter().collect();
        assert_eq!(forwarded, ["/robot1/cmd_vel"]);
    }
}
