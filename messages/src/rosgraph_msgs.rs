//! `rosgraph_msgs`.

use serde::{Deserialize, Serialize};

use super::builtin_interfaces::Time;

/// `rosgraph_msgs/msg/Clock`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Clock {
    /// Current sim time.
    pub clock: Time,
}

impl super::RosMessage for Clock {
    const TYPE_NAME: &'static str = "rosgraph_msgs/msg/Clock";
}
