//! `nav_msgs`.

use serde::{Deserialize, Serialize};

use super::builtin_interfaces::Time;
use super::geometry_msgs::{Pose, PoseWithCovariance, TwistWithCovariance};
use super::std_msgs::Header;

/// `nav_msgs/msg/Odometry`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Odometry {
    /// Stamp and the frame of the pose (e.g. `odom`).
    pub header: Header,
    /// The frame of the twist (the robot body).
    pub child_frame_id: String,
    /// Pose in `header.frame_id`.
    pub pose: PoseWithCovariance,
    /// Twist in `child_frame_id`.
    pub twist: TwistWithCovariance,
}

impl super::RosMessage for Odometry {
    const TYPE_NAME: &'static str = "nav_msgs/msg/Odometry";

    super::cdr_ser::written_without_serde!();
}

/// `nav_msgs/msg/MapMetaData`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MapMetaData {
    /// When the map was loaded.
    pub map_load_time: Time,
    /// Cell size, m/cell.
    pub resolution: f32,
    /// Width, cells.
    pub width: u32,
    /// Height, cells.
    pub height: u32,
    /// The pose of cell (0, 0)'s corner in the map frame.
    pub origin: Pose,
}

/// `nav_msgs/msg/OccupancyGrid`: row-major from (0, 0), occupancy 0..100
/// or -1 for unknown.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct OccupancyGrid {
    /// Stamp and frame (`map`).
    pub header: super::std_msgs::Header,
    /// Size, resolution and placement.
    pub info: MapMetaData,
    /// The cells.
    pub data: Vec<i8>,
}

impl super::RosMessage for OccupancyGrid {
    const TYPE_NAME: &'static str = "nav_msgs/msg/OccupancyGrid";
}
