//! ROS 2 message definitions (`.msg`, in `messages/msg/`) of every type
//! Flotilla publishes or takes in, compiled in beside their Rust types, and the `ros2msg` schema text MCAP readers
//! (Foxglove, rosbag2, `mcap-ros2-support`) decode messages with: the
//! type's definition, then each type it uses, once, after a line of 80 `=`
//! and `MSG: <package>/<Type>`.

use std::collections::BTreeSet;

/// `(type name, definition)`, the type as `package/msg/Type`.
pub(crate) const DEFINITIONS: &[(&str, &str)] = &[
    ("builtin_interfaces/msg/Duration", include_str!("../msg/builtin_interfaces/Duration.msg")),
    ("builtin_interfaces/msg/Time", include_str!("../msg/builtin_interfaces/Time.msg")),
    ("flatland_msgs/msg/Collision", include_str!("../msg/flatland_msgs/Collision.msg")),
    ("flatland_msgs/msg/Collisions", include_str!("../msg/flatland_msgs/Collisions.msg")),
    ("flatland_msgs/msg/DebugTopicList", include_str!("../msg/flatland_msgs/DebugTopicList.msg")),
    ("flatland_msgs/msg/Vector2", include_str!("../msg/flatland_msgs/Vector2.msg")),
    ("geometry_msgs/msg/Accel", include_str!("../msg/geometry_msgs/Accel.msg")),
    ("geometry_msgs/msg/Point", include_str!("../msg/geometry_msgs/Point.msg")),
    ("geometry_msgs/msg/Pose", include_str!("../msg/geometry_msgs/Pose.msg")),
    ("geometry_msgs/msg/Pose2D", include_str!("../msg/geometry_msgs/Pose2D.msg")),
    ("geometry_msgs/msg/PoseStamped", include_str!("../msg/geometry_msgs/PoseStamped.msg")),
    ("geometry_msgs/msg/PoseWithCovariance", include_str!("../msg/geometry_msgs/PoseWithCovariance.msg")),
    ("geometry_msgs/msg/Quaternion", include_str!("../msg/geometry_msgs/Quaternion.msg")),
    ("geometry_msgs/msg/Transform", include_str!("../msg/geometry_msgs/Transform.msg")),
    ("geometry_msgs/msg/TransformStamped", include_str!("../msg/geometry_msgs/TransformStamped.msg")),
    ("geometry_msgs/msg/Twist", include_str!("../msg/geometry_msgs/Twist.msg")),
    ("geometry_msgs/msg/TwistStamped", include_str!("../msg/geometry_msgs/TwistStamped.msg")),
    ("geometry_msgs/msg/TwistWithCovariance", include_str!("../msg/geometry_msgs/TwistWithCovariance.msg")),
    (
        "geometry_msgs/msg/TwistWithCovarianceStamped",
        include_str!("../msg/geometry_msgs/TwistWithCovarianceStamped.msg"),
    ),
    ("geometry_msgs/msg/Vector3", include_str!("../msg/geometry_msgs/Vector3.msg")),
    ("geometry_msgs/msg/Vector3Stamped", include_str!("../msg/geometry_msgs/Vector3Stamped.msg")),
    ("nav_msgs/msg/MapMetaData", include_str!("../msg/nav_msgs/MapMetaData.msg")),
    ("nav_msgs/msg/OccupancyGrid", include_str!("../msg/nav_msgs/OccupancyGrid.msg")),
    ("nav_msgs/msg/Odometry", include_str!("../msg/nav_msgs/Odometry.msg")),
    ("people_msgs/msg/People", include_str!("../msg/people_msgs/People.msg")),
    ("people_msgs/msg/Person", include_str!("../msg/people_msgs/Person.msg")),
    ("rmf_door_msgs/msg/DoorMode", include_str!("../msg/rmf_door_msgs/DoorMode.msg")),
    ("rmf_door_msgs/msg/DoorRequest", include_str!("../msg/rmf_door_msgs/DoorRequest.msg")),
    ("rmf_door_msgs/msg/DoorState", include_str!("../msg/rmf_door_msgs/DoorState.msg")),
    ("rmf_lift_msgs/msg/LiftRequest", include_str!("../msg/rmf_lift_msgs/LiftRequest.msg")),
    ("rmf_lift_msgs/msg/LiftState", include_str!("../msg/rmf_lift_msgs/LiftState.msg")),
    ("rosgraph_msgs/msg/Clock", include_str!("../msg/rosgraph_msgs/Clock.msg")),
    ("sensor_msgs/msg/BatteryState", include_str!("../msg/sensor_msgs/BatteryState.msg")),
    ("sensor_msgs/msg/CompressedImage", include_str!("../msg/sensor_msgs/CompressedImage.msg")),
    ("sensor_msgs/msg/Imu", include_str!("../msg/sensor_msgs/Imu.msg")),
    ("sensor_msgs/msg/JointState", include_str!("../msg/sensor_msgs/JointState.msg")),
    ("sensor_msgs/msg/LaserScan", include_str!("../msg/sensor_msgs/LaserScan.msg")),
    ("sensor_msgs/msg/NavSatFix", include_str!("../msg/sensor_msgs/NavSatFix.msg")),
    ("sensor_msgs/msg/NavSatStatus", include_str!("../msg/sensor_msgs/NavSatStatus.msg")),
    ("sensor_msgs/msg/PointCloud2", include_str!("../msg/sensor_msgs/PointCloud2.msg")),
    ("sensor_msgs/msg/PointField", include_str!("../msg/sensor_msgs/PointField.msg")),
    ("sensor_msgs/msg/Range", include_str!("../msg/sensor_msgs/Range.msg")),
    ("std_msgs/msg/Bool", include_str!("../msg/std_msgs/Bool.msg")),
    ("std_msgs/msg/ColorRGBA", include_str!("../msg/std_msgs/ColorRGBA.msg")),
    ("std_msgs/msg/Header", include_str!("../msg/std_msgs/Header.msg")),
    ("std_msgs/msg/String", include_str!("../msg/std_msgs/String.msg")),
    ("tf2_msgs/msg/TFMessage", include_str!("../msg/tf2_msgs/TFMessage.msg")),
    ("visualization_msgs/msg/Marker", include_str!("../msg/visualization_msgs/Marker.msg")),
    ("visualization_msgs/msg/MarkerArray", include_str!("../msg/visualization_msgs/MarkerArray.msg")),
    ("visualization_msgs/msg/MeshFile", include_str!("../msg/visualization_msgs/MeshFile.msg")),
    ("visualization_msgs/msg/UVCoordinate", include_str!("../msg/visualization_msgs/UVCoordinate.msg")),
];

/// The schema encoding of [`schema`]'s text.
pub const SCHEMA_ENCODING: &str = "ros2msg";

/// Types built into the `.msg` language: no definition of their own.
const PRIMITIVES: &[&str] = &[
    "bool", "byte", "char", "float32", "float64", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
    "uint64", "string", "wstring",
];

/// The definition of a type (`package/msg/Type`).
pub fn definition(type_name: &str) -> Option<&'static str> {
    DEFINITIONS.iter().find(|(name, _)| *name == type_name).map(|(_, text)| *text)
}

/// The `ros2msg` schema text of a type, or the type it cannot find a
/// definition of (itself or one it uses).
pub fn schema(type_name: &str) -> Result<String, String> {
    let main = definition(type_name).ok_or_else(|| type_name.to_string())?;
    let mut used = Vec::new();
    collect_uses(type_name, &mut BTreeSet::from([type_name.to_string()]), &mut used)?;
    let mut text = format!("{}\n", main.trim_end());
    for (name, body) in used {
        let short = name.replacen("/msg/", "/", 1);
        text.push_str(&format!("{}\nMSG: {short}\n{}\n", "=".repeat(80), body.trim_end()));
    }
    Ok(text)
}

/// Every type `type_name` uses, depth first in order of first use, each
/// once (those in `seen` left out).
fn collect_uses(
    type_name: &str,
    seen: &mut BTreeSet<String>,
    out: &mut Vec<(String, &'static str)>,
) -> Result<(), String> {
    let body = definition(type_name).ok_or_else(|| type_name.to_string())?;
    let package = type_name.split('/').next().unwrap_or_default();
    for used in dependencies(body, package) {
        if seen.insert(used.clone()) {
            let used_body = definition(&used).ok_or_else(|| used.clone())?;
            out.push((used.clone(), used_body));
            collect_uses(&used, seen, out)?;
        }
    }
    Ok(())
}

/// The message types a definition's fields use, as `package/msg/Type`, in
/// order of first use (a name without a package is of `package`).
fn dependencies(definition: &str, package: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in definition.lines() {
        let line = line.split('#').next().unwrap_or_default().trim();
        let Some(field_type) = line.split_whitespace().next() else { continue };
        let base = field_type.split('[').next().unwrap_or_default();
        let base = base.split("<=").next().unwrap_or_default();
        // Constants and defaults are of primitive types only.
        if PRIMITIVES.contains(&base) {
            continue;
        }
        let full = match base.split_once('/') {
            Some((pkg, name)) => format!("{pkg}/msg/{}", name.trim_start_matches("msg/")),
            None => format!("{package}/msg/{base}"),
        };
        if !out.contains(&full) {
            out.push(full);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schema_holds_its_type_then_every_type_it_uses_once() {
        let text = schema("sensor_msgs/msg/LaserScan").unwrap();
        assert!(text.starts_with("# Single scan from a planar laser range-finder"));
        let uses: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("MSG: ")).collect();
        assert_eq!(uses, ["std_msgs/Header", "builtin_interfaces/Time"]);
        let separators = text.lines().filter(|l| *l == "=".repeat(80)).count();
        assert_eq!(separators, 2);
    }

    #[test]
    fn nested_types_come_once_each() {
        let text = schema("nav_msgs/msg/Odometry").unwrap();
        let uses: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("MSG: ")).collect();
        for wanted in [
            "std_msgs/Header",
            "builtin_interfaces/Time",
            "geometry_msgs/PoseWithCovariance",
            "geometry_msgs/Pose",
            "geometry_msgs/Point",
            "geometry_msgs/Quaternion",
            "geometry_msgs/TwistWithCovariance",
            "geometry_msgs/Twist",
            "geometry_msgs/Vector3",
        ] {
            assert_eq!(uses.iter().filter(|u| **u == wanted).count(), 1, "{wanted} in {uses:?}");
        }
        assert_eq!(uses.len(), 9);
    }

    #[test]
    fn every_type_flotilla_speaks_on_a_topic_has_a_schema() {
        use crate::RosMessage;
        for name in [
            crate::sensor_msgs::LaserScan::TYPE_NAME,
            crate::sensor_msgs::Range::TYPE_NAME,
            crate::sensor_msgs::PointCloud2::TYPE_NAME,
            crate::sensor_msgs::Imu::TYPE_NAME,
            crate::sensor_msgs::NavSatFix::TYPE_NAME,
            crate::sensor_msgs::JointState::TYPE_NAME,
            crate::nav_msgs::Odometry::TYPE_NAME,
            crate::nav_msgs::OccupancyGrid::TYPE_NAME,
            crate::geometry_msgs::Twist::TYPE_NAME,
            crate::geometry_msgs::TwistStamped::TYPE_NAME,
            crate::geometry_msgs::TwistWithCovarianceStamped::TYPE_NAME,
            crate::tf2_msgs::TFMessage::TYPE_NAME,
            crate::rosgraph_msgs::Clock::TYPE_NAME,
            crate::std_msgs::Bool::TYPE_NAME,
            crate::std_msgs::StdString::TYPE_NAME,
            crate::flatland_msgs::Collisions::TYPE_NAME,
            crate::visualization_msgs::MarkerArray::TYPE_NAME,
            crate::people_msgs::People::TYPE_NAME,
            crate::rmf_door_msgs::DoorRequest::TYPE_NAME,
            crate::rmf_door_msgs::DoorState::TYPE_NAME,
            crate::sensor_msgs::BatteryState::TYPE_NAME,
            crate::rmf_lift_msgs::LiftRequest::TYPE_NAME,
            crate::rmf_lift_msgs::LiftState::TYPE_NAME,
        ] {
            schema(name).unwrap_or_else(|missing| panic!("{name}: no definition of {missing}"));
        }
    }

    #[test]
    fn an_unknown_type_is_named() {
        assert_eq!(schema("my_msgs/msg/Thing"), Err("my_msgs/msg/Thing".to_string()));
    }
}
