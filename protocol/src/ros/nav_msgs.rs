//! `nav_msgs`.

use serde::{Deserialize, Serialize};

use super::geometry_msgs::{PoseWithCovariance, TwistWithCovariance};
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
}
