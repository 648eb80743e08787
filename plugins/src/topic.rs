//! What a plugin instance exposes to ROS: a [`TopicSpec`] names the topic,
//! its type, its direction and its QoS, as the bridge announces it and a
//! recording keeps it. Each type's config module says its instances'
//! topics; the [`registry`](crate::registry) gathers them.

use flotilla_messages::RosMessage;

/// Whether the simulation publishes a topic or takes it in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Direction {
    /// Flotilla publishes it (scans, odometry).
    Publish,
    /// Flotilla subscribes to it (`cmd_vel`).
    Subscribe,
}

/// DDS durability of a topic's writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Durability {
    /// Only live samples.
    Volatile,
    /// Late readers get the last samples (`tf_static`).
    TransientLocal,
}

/// History depth of ordinary topics, as rclcpp's default QoS.
pub const DEFAULT_DEPTH: u32 = 10;
/// `tf`: tf2_ros's broadcaster depth.
pub const TF_DEPTH: u32 = 100;
/// `tf_static`: one latched message per publishing node, so that a late
/// reader gets the mounts of every laser shard, not only the last one's.
pub const TF_STATIC_DEPTH: u32 = 100;

/// A topic a plugin instance exposes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TopicSpec {
    /// The resolved ROS name, e.g. `/robot1/scan` (see
    /// [`Keys::ros`](flotilla_wire::Keys::ros) for its key).
    pub name: String,
    /// ROS type, e.g. `sensor_msgs/msg/LaserScan`.
    pub ros_type: &'static str,
    /// Publish or subscribe.
    pub direction: Direction,
    /// Writer durability.
    pub durability: Durability,
    /// History depth (KEEP_LAST).
    pub depth: u32,
}

impl TopicSpec {
    /// A topic published with rclcpp's default QoS.
    pub fn publish<T: RosMessage>(name: impl Into<String>) -> TopicSpec {
        TopicSpec {
            name: name.into(),
            ros_type: T::TYPE_NAME,
            direction: Direction::Publish,
            durability: Durability::Volatile,
            depth: DEFAULT_DEPTH,
        }
    }

    /// A topic subscribed to with rclcpp's default QoS.
    pub fn subscribe<T: RosMessage>(name: impl Into<String>) -> TopicSpec {
        TopicSpec { direction: Direction::Subscribe, ..TopicSpec::publish::<T>(name) }
    }

    /// `/tf`, as tf2_ros broadcasts it.
    pub fn tf() -> TopicSpec {
        TopicSpec { depth: TF_DEPTH, ..TopicSpec::publish::<flotilla_messages::tf2_msgs::TFMessage>("/tf") }
    }

    /// `/tf_static`, latched.
    pub fn tf_static() -> TopicSpec {
        TopicSpec {
            durability: Durability::TransientLocal,
            depth: TF_STATIC_DEPTH,
            ..TopicSpec::publish::<flotilla_messages::tf2_msgs::TFMessage>("/tf_static")
        }
    }
}
