//! `sensor_msgs`.

use serde::{Deserialize, Serialize};

use super::float_seq::{self, SequenceReader};
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

    /// The fields before the sequences through serde, the sequences copied
    /// whole (see `float_seq`).
    fn to_cdr(&self) -> Vec<u8> {
        // The scan without its floats ends in two zero counts, which the
        // copies replace.
        let head = LaserScan { header: self.header.clone(), ranges: Vec::new(), intensities: Vec::new(), ..*self };
        let mut payload = super::encode_with_serde(&head);
        payload.truncate(payload.len() - 8);
        let copied =
            float_seq::push(&mut payload, &self.ranges).and_then(|()| float_seq::push(&mut payload, &self.intensities));
        // More than 2^32 floats: serde reports it.
        copied.map_or_else(|| super::encode_with_serde(self), |()| payload)
    }

    fn from_cdr(bytes: &[u8]) -> Result<Self, super::CdrError> {
        let (head, mut rest) = SequenceReader::after_head::<LaserScanHead>(bytes, Self::TYPE_NAME)?;
        let ranges = rest.f32_sequence()?;
        let intensities = rest.f32_sequence()?;
        Ok(LaserScan { ranges, intensities, ..head.into() })
    }
}

/// The fields of a [`LaserScan`] before its two sequences, in order: what
/// serde decodes before the sequences are read whole.
#[derive(Deserialize)]
struct LaserScanHead {
    header: Header,
    angle_min: f32,
    angle_max: f32,
    angle_increment: f32,
    time_increment: f32,
    scan_time: f32,
    range_min: f32,
    range_max: f32,
}

impl From<LaserScanHead> for LaserScan {
    /// The scan with those fields and no ranges or intensities yet.
    fn from(head: LaserScanHead) -> LaserScan {
        LaserScan {
            header: head.header,
            angle_min: head.angle_min,
            angle_max: head.angle_max,
            angle_increment: head.angle_increment,
            time_increment: head.time_increment,
            scan_time: head.scan_time,
            range_min: head.range_min,
            range_max: head.range_max,
            ..Default::default()
        }
    }
}
