//! `sensor_msgs`.

use serde::{Deserialize, Serialize};

use super::std_msgs::Header;

/// `sensor_msgs/msg/LaserScan`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct LaserScan {
    /// Stamp (sim time of the scan) and laser frame.
    pub header: Header,
    /// Angle of the first beam, rad.
    pub angle_min: f32,
    /// Angle of the last beam, rad.
    pub angle_max: f32,
    /// Angle between beams, rad (negative for clockwise scans).
    pub angle_increment: f32,
    /// Time between beams, s.
    pub time_increment: f32,
    /// Time between scans, s.
    pub scan_time: f32,
    /// Minimum range, m.
    pub range_min: f32,
    /// Maximum range, m.
    pub range_max: f32,
    /// Ranges, m; NaN where nothing was hit within range.
    pub ranges: Vec<f32>,
    /// Intensities (empty when the laser reports none).
    pub intensities: Vec<f32>,
}

impl super::RosMessage for LaserScan {
    const TYPE_NAME: &'static str = "sensor_msgs/msg/LaserScan";
}
