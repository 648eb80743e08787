//! What the map-transition manager (`flotilla-transitions`) shows ROS for
//! each robot on a map: its current map's name and the map itself, both
//! latched, and the topic it takes map commands on (Flat's `t` command).

use crate::topic::{Durability, TopicSpec};
use flotilla_messages::nav_msgs::OccupancyGrid;
use flotilla_messages::std_msgs::StdString;
use flotilla_wire::description::{ModelDescription, WorldDescription};
use flotilla_wire::names::resolve_topic;

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
    description.models.iter().flat_map(topics_of_model).collect()
}

/// [`topics`] for one model: none unless it is on a map.
pub fn topics_of_model(model: &ModelDescription) -> Vec<TopicSpec> {
    if model.map.is_empty() {
        return Vec::new();
    }
    let latched = |spec: TopicSpec| TopicSpec { durability: Durability::TransientLocal, depth: 1, ..spec };
    let ns = model.namespace.as_str();
    vec![
        latched(TopicSpec::publish::<StdString>(topic(ns, MAP_NAME_TOPIC))),
        latched(TopicSpec::publish::<OccupancyGrid>(topic(ns, MAP_TOPIC))),
        TopicSpec::subscribe::<StdString>(topic(ns, MAP_COMMAND_TOPIC)),
    ]
}
