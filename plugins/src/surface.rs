//! What the simulation shows ROS 2: every topic it publishes, with its type
//! and QoS, and every service it serves. Worked out from the world
//! description the same way the nodes work out their keys, with no Zenoh:
//! the bridge announces it to DDS, the Python package finds a topic's type
//! in it.

use crate::registry::{self, Direction, TopicSpec};
use flotilla_messages::rosgraph_msgs::Clock;
use flotilla_messages::services::ACTIONS;
use flotilla_wire::description::WorldDescription;
use flotilla_wire::Keys;

pub use crate::registry::Durability;

/// A topic the simulation publishes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Topic {
    /// The Zenoh key (the ROS name without its leading slash).
    pub key: String,
    /// ROS type, e.g. `sensor_msgs/msg/LaserScan`.
    pub ros_type: &'static str,
    /// Writer durability.
    pub durability: Durability,
    /// Writer history depth (KEEP_LAST).
    pub depth: u32,
}

/// A service the simulation serves.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ServiceEndpoint {
    /// The Zenoh key.
    pub key: String,
    /// ROS type, e.g. `flatland_msgs/srv/SpawnModel`.
    pub ros_type: &'static str,
}

/// The whole ROS-facing surface of one simulation.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Surface {
    /// Published topics, sorted by key.
    pub topics: Vec<Topic>,
    /// Services, sorted by key.
    pub services: Vec<ServiceEndpoint>,
    /// Actions (the world's `simulate_steps`), sorted by key.
    pub actions: Vec<ServiceEndpoint>,
}

impl Topic {
    /// The topic of `spec`, its key built by `keys`.
    fn of(spec: TopicSpec, keys: &Keys) -> Topic {
        Topic { key: keys.ros(&spec.name), ros_type: spec.ros_type, durability: spec.durability, depth: spec.depth }
    }
}

/// The surface of `description`, with keys built by `keys` (which carries
/// the world's ROS prefix): `clock`, `tf`, `tf_static`, the world's
/// `services` and actions, and what every
/// registered plugin instance publishes (from the plugin registry, as the
/// nodes that serve them derive their keys). Plugin types no Flotilla node
/// serves publish nothing, so they are left out.
pub fn surface(description: &WorldDescription, keys: &Keys, services: &[(&str, &'static str)]) -> Surface {
    let always = [TopicSpec::publish::<Clock>("/clock"), TopicSpec::tf(), TopicSpec::tf_static()];
    let plugins = registry::topics_of(description)
        .into_iter()
        .chain(crate::maps::topics(description))
        .filter(|t| t.direction == Direction::Publish);
    let mut topics: Vec<Topic> = always.into_iter().chain(plugins).map(|spec| Topic::of(spec, keys)).collect();
    topics.sort();
    topics.dedup_by(|a, b| a.key == b.key);
    let mut services: Vec<ServiceEndpoint> =
        services.iter().map(|(name, ros_type)| ServiceEndpoint { key: keys.ros(name), ros_type }).collect();
    services.sort();
    let mut actions: Vec<ServiceEndpoint> = ACTIONS
        .iter()
        .map(|action| ServiceEndpoint { key: keys.ros(action.ros_name), ros_type: action.type_name })
        .collect();
    actions.sort();
    Surface { topics, services, actions }
}
