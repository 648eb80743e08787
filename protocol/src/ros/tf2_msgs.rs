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

    fn to_cdr(&self) -> Vec<u8> {
        super::cdr_ser::CdrWriter::encode(self)
    }

    fn to_cdr_in(&self, buffer: Vec<u8>) -> Vec<u8> {
        super::cdr_ser::CdrWriter::encode_in(self, buffer)
    }
}
