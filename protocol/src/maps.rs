//! What the map-transition manager (`flotilla-transitions`) shows ROS for
//! each robot on a map: its current map's name and the map itself, both
//! latched, and the topic it takes map commands on (Flat's `t` command).

use crate::description::WorldDescription;
use crate::names::resolve_topic;
use crate::plugins::registry::{Durability, TopicSpec};
use crate::ros::nav_msgs::OccupancyGrid;
use crate::ros::std_msgs::StdString;

/// The manager's binary.
pub const BINARY: &str = "flotilla-transitions";

/// The robot's current map, `std_msgs/String`, latched.
pub const MAP_NAME_TOPIC: &str = "map_name";
/// The robot's current map, `nav_msgs/OccupancyGrid`, latched.
pub const MAP_TOPIC: &str = "map";
/// Commands that fire command transitions, `std_msgs/String`.
pub const MAP_COMMAND_TOPIC: &str = "map_command";

/// The resolved name of a robot's map topic `topic` (one of the above),
/// the robot's namespace being `namespace`.
pub fn topic(namespace: &str, topic: &str) -> String {
    resolve_topic(namespace, topic)
}

/// The topics the manager publishes and takes in, for every model on a
/// map (none in a world of one map).
pub fn topics(description: &WorldDescription) -> Vec<TopicSpec> {
    let latched = |spec: TopicSpec| TopicSpec { durability: Durability::TransientLocal, depth: 1, ..spec };
    let mut out = Vec::new();
    for model in description.models.iter().filter(|m| !m.map.is_empty()) {
        let ns = model.namespace.as_str();
        out.push(latched(TopicSpec::publish::<StdString>(topic(ns, MAP_NAME_TOPIC))));
        out.push(latched(TopicSpec::publish::<OccupancyGrid>(topic(ns, MAP_TOPIC))));
        out.push(TopicSpec::subscribe::<StdString>(topic(ns, MAP_COMMAND_TOPIC)));
    }
    out
}
