//! `builtin_interfaces`.

use serde::{Deserialize, Serialize};

/// `builtin_interfaces/msg/Time`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Time {
    /// Seconds.
    pub sec: i32,
    /// Nanoseconds within the second.
    pub nanosec: u32,
}

impl super::RosMessage for Time {
    const TYPE_NAME: &'static str = "builtin_interfaces/msg/Time";
}
