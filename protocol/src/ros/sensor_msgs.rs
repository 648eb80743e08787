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

    fn to_cdr(&self) -> Vec<u8> {
        self.view().to_cdr()
    }

    fn from_cdr(bytes: &[u8]) -> Result<Self, super::CdrError> {
        let (head, mut rest) = SequenceReader::after_head::<LaserScanHead>(bytes, Self::TYPE_NAME)?;
        let ranges = rest.f32_sequence()?;
        let intensities = rest.f32_sequence()?;
        Ok(LaserScan { ranges, intensities, ..head.into() })
    }
}

impl LaserScan {
    /// The scan as a [`LaserScanView`] of its fields.
    pub fn view(&self) -> LaserScanView<'_> {
        LaserScanView {
            header: &self.header,
            angle_min: self.angle_min,
            angle_max: self.angle_max,
            angle_increment: self.angle_increment,
            time_increment: self.time_increment,
            scan_time: self.scan_time,
            range_min: self.range_min,
            range_max: self.range_max,
            ranges: &self.ranges,
            intensities: &self.intensities,
        }
    }
}

/// A [`LaserScan`] whose header and sequences are borrowed from wherever
/// they live (a laser's own buffers), so that it is encoded without first
/// being copied into a message. Same fields, same bytes.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct LaserScanView<'a> {
    /// See [`LaserScan::header`].
    pub header: &'a Header,
    /// See [`LaserScan::angle_min`].
    pub angle_min: f32,
    /// See [`LaserScan::angle_max`].
    pub angle_max: f32,
    /// See [`LaserScan::angle_increment`].
    pub angle_increment: f32,
    /// See [`LaserScan::time_increment`].
    pub time_increment: f32,
    /// See [`LaserScan::scan_time`].
    pub scan_time: f32,
    /// See [`LaserScan::range_min`].
    pub range_min: f32,
    /// See [`LaserScan::range_max`].
    pub range_max: f32,
    /// See [`LaserScan::ranges`].
    pub ranges: &'a [f32],
    /// See [`LaserScan::intensities`].
    pub intensities: &'a [f32],
}

impl LaserScanView<'_> {
    /// The message, owning copies of the borrowed parts.
    pub fn to_message(&self) -> LaserScan {
        LaserScan {
            header: self.header.clone(),
            angle_min: self.angle_min,
            angle_max: self.angle_max,
            angle_increment: self.angle_increment,
            time_increment: self.time_increment,
            scan_time: self.scan_time,
            range_min: self.range_min,
            range_max: self.range_max,
            ranges: self.ranges.to_vec(),
            intensities: self.intensities.to_vec(),
        }
    }

    /// The CDR payload: the fields before the sequences through serde, the
    /// sequences copied whole (see `float_seq`), into one allocation sized
    /// up front.
    pub fn to_cdr(&self) -> Vec<u8> {
        // The scan without its floats ends in two zero counts, which the
        // copies replace.
        let head = LaserScanView { ranges: &[], intensities: &[], ..*self };
        // Encapsulation, stamp, frame string, seven floats and two counts,
        // with padding: under 64 bytes besides the frame's characters.
        let floats_bytes = 4 * (self.ranges.len() + self.intensities.len());
        let mut payload = Vec::with_capacity(64 + self.header.frame_id.len() + floats_bytes);
        // Writing plain fields into a Vec with no size limit cannot fail;
        // more than 2^32 floats (no laser has them) can, and serde says so.
        let encode = |value: &LaserScanView, into: &mut Vec<u8>| {
            cdr::serialize_into::<_, _, _, cdr::CdrLe>(into, value, cdr::Infinite).unwrap_or_else(|e| {
                panic!("{}: CDR encoding into a Vec failed: {e}", <LaserScan as super::RosMessage>::TYPE_NAME)
            })
        };
        encode(&head, &mut payload);
        payload.truncate(payload.len() - 8);
        let copied =
            float_seq::push(&mut payload, self.ranges).and_then(|()| float_seq::push(&mut payload, self.intensities));
        if copied.is_none() {
            payload.clear();
            encode(self, &mut payload);
        }
        payload
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
