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

impl Time {
    /// The time in ns; times before 0 count as 0.
    pub fn nanos(self) -> u64 {
        u64::try_from(self.sec).unwrap_or(0) * 1_000_000_000 + u64::from(self.nanosec)
    }
}

impl super::RosMessage for Time {
    const TYPE_NAME: &'static str = "builtin_interfaces/msg/Time";
}

/// `builtin_interfaces/msg/Duration`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Duration {
    /// Seconds.
    pub sec: i32,
    /// Nanoseconds within the second.
    pub nanosec: u32,
}

impl super::RosMessage for Duration {
    const TYPE_NAME: &'static str = "builtin_interfaces/msg/Duration";
}

#[cfg(test)]
mod tests {
    use super::Time;

    #[test]
    fn a_time_in_nanoseconds_counts_from_zero() {
        assert_eq!(Time { sec: 2, nanosec: 5 }.nanos(), 2_000_000_005);
        assert_eq!(Time { sec: -1, nanosec: 5 }.nanos(), 5, "before 0: seconds count as 0");
    }
}
