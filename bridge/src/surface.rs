//! What the simulation shows ROS 2: every topic it publishes, with its type
//! and QoS, and every service it serves. Worked out from the world
//! description the same way the nodes work out their keys, with no Zenoh.

use flotilla_protocol::description::WorldDescription;
use flotilla_protocol::names::resolve_topic;
use flotilla_protocol::plugins::diff_drive::DiffDriveConfig;
use flotilla_protocol::plugins::laser::LaserConfig;
use flotilla_protocol::plugins::{binaries_for, configured};
use flotilla_protocol::ros::geometry_msgs::TwistWithCovarianceStamped;
use flotilla_protocol::ros::nav_msgs::Odometry;
use flotilla_protocol::ros::rosgraph_msgs::Clock;
use flotilla_protocol::ros::sensor_msgs::LaserScan;
use flotilla_protocol::ros::tf2_msgs::TFMessage;
use flotilla_protocol::ros::RosMessage;
use flotilla_protocol::Keys;

/// DDS durability of a topic's writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Durability {
    /// Only live samples.
    Volatile,
    /// Late readers get the last samples (`tf_static`).
    TransientLocal,
}

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
}

/// History depth of ordinary topics, as rclcpp's default QoS.
const DEFAULT_DEPTH: u32 = 10;
/// `tf`: tf2_ros's broadcaster depth.
const TF_DEPTH: u32 = 100;
/// `tf_static`: one latched message per publishing node, so that a late
/// reader gets the mounts of every laser shard, not only the last one's.
const TF_STATIC_DEPTH: u32 = 100;

fn topic<T: RosMessage>(key: String) -> Topic {
    Topic { key, ros_type: T::TYPE_NAME, durability: Durability::Volatile, depth: DEFAULT_DEPTH }
}

/// The surface of `description`, with keys built by `keys` (which carries
/// the world's ROS prefix). Plugin types no Flotilla node serves publish
/// nothing, so they are left out.
pub fn surface(description: &WorldDescription, keys: &Keys, services: &[(&str, &'static str)]) -> Surface {
    let mut topics = vec![
        topic::<Clock>(keys.ros("/clock")),
        Topic { depth: TF_DEPTH, ..topic::<TFMessage>(keys.ros("/tf")) },
        Topic {
            durability: Durability::TransientLocal,
            depth: TF_STATIC_DEPTH,
            ..topic::<TFMessage>(keys.ros("/tf_static"))
        },
    ];
    let all = |_: &str, _: &str| true;
    let served = |plugin_type: &str| binaries_for(plugin_type).is_some();
    if served("Laser") {
        for laser in configured::<LaserConfig>(description, &all) {
            topics.push(topic::<LaserScan>(keys.ros(&resolve_topic(&laser.model.namespace, &laser.config.topic))));
        }
    }
    if served("DiffDrive") {
        for drive in configured::<DiffDriveConfig>(description, &all) {
            let (ns, c) = (&drive.model.namespace, &drive.config);
            if c.enable_odom_pub {
                topics.push(topic::<Odometry>(keys.ros(&resolve_topic(ns, &c.odom_pub))));
                topics.push(topic::<Odometry>(keys.ros(&resolve_topic(ns, &c.ground_truth_pub))));
            }
            if c.enable_twist_pub {
                topics.push(topic::<TwistWithCovarianceStamped>(keys.ros(&resolve_topic(ns, &c.twist_pub))));
            }
        }
    }
    topics.sort();
    topics.dedup_by(|a, b| a.key == b.key);
    let mut services: Vec<ServiceEndpoint> =
        services.iter().map(|(name, ros_type)| ServiceEndpoint { key: keys.ros(name), ros_type }).collect();
    services.sort();
    Surface { topics, services }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_world_file::load_world;

    /// The room's description, as the world serves it.
    fn room() -> WorldDescription {
        let world = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/tests/room/world.yaml");
        load_world(&world).unwrap().initial_description()
    }

    #[test]
    fn the_room_shows_clock_tf_scan_odometry_and_the_services() {
        let surface = surface(&room(), &Keys::new("s"), &[("/spawn_model", "flatland_msgs/srv/SpawnModel")]);
        let topics: Vec<(&str, &str)> = surface.topics.iter().map(|t| (t.key.as_str(), t.ros_type)).collect();
        assert_eq!(
            topics,
            vec![
                ("clock", "rosgraph_msgs/msg/Clock"),
                ("robot/odometry/filtered", "nav_msgs/msg/Odometry"),
                ("robot/odometry/ground_truth", "nav_msgs/msg/Odometry"),
                ("robot/scan", "sensor_msgs/msg/LaserScan"),
                ("robot/twist", "geometry_msgs/msg/TwistWithCovarianceStamped"),
                ("tf", "tf2_msgs/msg/TFMessage"),
                ("tf_static", "tf2_msgs/msg/TFMessage"),
            ]
        );
        let tf_static = surface.topics.iter().find(|t| t.key == "tf_static").unwrap();
        assert_eq!(tf_static.durability, Durability::TransientLocal, "latched");
        assert_eq!(
            surface.services,
            vec![ServiceEndpoint { key: "spawn_model".into(), ros_type: "flatland_msgs/srv/SpawnModel" }]
        );
    }

    #[test]
    fn the_ros_prefix_goes_in_front_of_every_key() {
        let surface = surface(&room(), &Keys::new("s").with_ros_prefix("env3"), &[("/pause", "std_srvs/srv/Empty")]);
        assert!(surface.topics.iter().all(|t| t.key.starts_with("env3/")), "{:?}", surface.topics);
        assert_eq!(surface.services[0].key, "env3/pause");
    }
}
