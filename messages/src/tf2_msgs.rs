//! `tf2_msgs`.

use serde::{Deserialize, Serialize};

use super::geometry_msgs::TransformStamped;

/// `tf2_msgs/msg/TFMessage`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TFMessage {
    /// The transforms.
    pub transforms: Vec<TransformStamped>,
}

impl super::RosMessage for TFMessage {
    const TYPE_NAME: &'static str = "tf2_msgs/msg/TFMessage";

    super::cdr_ser::written_without_serde!();
}
