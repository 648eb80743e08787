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

/// `sensor_msgs/msg/NavSatStatus`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct NavSatStatus {
    /// Fix status: [`NavSatStatus::STATUS_FIX`] and others.
    pub status: i8,
    /// Satellite systems used, a bit field ([`NavSatStatus::SERVICE_GPS`], ...).
    pub service: u16,
}

impl NavSatStatus {
    /// Status not yet set (the message definition's default).
    pub const STATUS_UNKNOWN: i8 = -2;
    /// Unable to fix position.
    pub const STATUS_NO_FIX: i8 = -1;
    /// Unaugmented fix.
    pub const STATUS_FIX: i8 = 0;
    /// GPS.
    pub const SERVICE_GPS: u16 = 1;
}

impl Default for NavSatStatus {
    /// The message definition's defaults: status unknown, no service.
    fn default() -> NavSatStatus {
        NavSatStatus { status: NavSatStatus::STATUS_UNKNOWN, service: 0 }
    }
}

/// `sensor_msgs/msg/NavSatFix`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct NavSatFix {
    /// Stamp (sim time of the fix) and the antenna's frame.
    pub header: Header,
    /// Fix status and service.
    pub status: NavSatStatus,
    /// Latitude, degrees; positive north of the equator.
    pub latitude: f64,
    /// Longitude, degrees; positive east of the prime meridian.
    pub longitude: f64,
    /// Altitude above the WGS 84 ellipsoid, m.
    pub altitude: f64,
    /// Position covariance in the ENU frame, m², row-major.
    pub position_covariance: [f64; 9],
    /// How the covariance is known ([`NavSatFix::COVARIANCE_TYPE_DIAGONAL_KNOWN`], ...).
    pub position_covariance_type: u8,
}

impl NavSatFix {
    /// No covariance known.
    pub const COVARIANCE_TYPE_UNKNOWN: u8 = 0;
    /// Approximated.
    pub const COVARIANCE_TYPE_APPROXIMATED: u8 = 1;
    /// The diagonal is known.
    pub const COVARIANCE_TYPE_DIAGONAL_KNOWN: u8 = 2;
    /// The whole matrix is known.
    pub const COVARIANCE_TYPE_KNOWN: u8 = 3;
}

impl super::RosMessage for NavSatFix {
    const TYPE_NAME: &'static str = "sensor_msgs/msg/NavSatFix";
}

/// `sensor_msgs/msg/Imu`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Imu {
    /// Stamp (sim time of the sample) and the IMU's frame.
    pub header: Header,
    /// Orientation in the world frame.
    pub orientation: super::geometry_msgs::Quaternion,
    /// Its covariance (roll, pitch, yaw), rad², row-major.
    pub orientation_covariance: [f64; 9],
    /// Angular velocity in the IMU frame, rad/s.
    pub angular_velocity: super::geometry_msgs::Vector3,
    /// Its covariance, (rad/s)², row-major.
    pub angular_velocity_covariance: [f64; 9],
    /// Linear acceleration (specific force) in the IMU frame, m/s².
    pub linear_acceleration: super::geometry_msgs::Vector3,
    /// Its covariance, (m/s²)², row-major.
    pub linear_acceleration_covariance: [f64; 9],
}

impl super::RosMessage for Imu {
    const TYPE_NAME: &'static str = "sensor_msgs/msg/Imu";
}

/// `sensor_msgs/msg/BatteryState`: a battery's charge, voltage and status.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct BatteryState {
    /// Stamp (sim time of the reading) and the battery's frame.
    pub header: Header,
    /// Terminal voltage, V.
    pub voltage: f32,
    /// Temperature, °C (NaN: not measured).
    pub temperature: f32,
    /// Current, A, negative while discharging (NaN: not measured).
    pub current: f32,
    /// Charge left, Ah.
    pub charge: f32,
    /// Charge when full (last full capacity), Ah.
    pub capacity: f32,
    /// Capacity by design, Ah.
    pub design_capacity: f32,
    /// Charge left as a fraction of `capacity`, 0 to 1.
    pub percentage: f32,
    /// `POWER_SUPPLY_STATUS_*`.
    pub power_supply_status: u8,
    /// `POWER_SUPPLY_HEALTH_*`.
    pub power_supply_health: u8,
    /// `POWER_SUPPLY_TECHNOLOGY_*`.
    pub power_supply_technology: u8,
    /// Whether a battery is there.
    pub present: bool,
    /// Each cell's voltage, V.
    pub cell_voltage: Vec<f32>,
    /// Each cell's temperature, °C.
    pub cell_temperature: Vec<f32>,
    /// Where the battery sits (slot, plug).
    pub location: String,
    /// Its serial number.
    pub serial_number: String,
}

impl BatteryState {
    /// Status: not known.
    pub const POWER_SUPPLY_STATUS_UNKNOWN: u8 = 0;
    /// Status: charging.
    pub const POWER_SUPPLY_STATUS_CHARGING: u8 = 1;
    /// Status: discharging.
    pub const POWER_SUPPLY_STATUS_DISCHARGING: u8 = 2;
    /// Status: neither (on a charger that gives nothing).
    pub const POWER_SUPPLY_STATUS_NOT_CHARGING: u8 = 3;
    /// Status: full, on a charger.
    pub const POWER_SUPPLY_STATUS_FULL: u8 = 4;
    /// Health: not known.
    pub const POWER_SUPPLY_HEALTH_UNKNOWN: u8 = 0;
    /// Health: good.
    pub const POWER_SUPPLY_HEALTH_GOOD: u8 = 1;
    /// Health: overheated.
    pub const POWER_SUPPLY_HEALTH_OVERHEAT: u8 = 2;
    /// Health: dead.
    pub const POWER_SUPPLY_HEALTH_DEAD: u8 = 3;
    /// Health: overvoltage.
    pub const POWER_SUPPLY_HEALTH_OVERVOLTAGE: u8 = 4;
    /// Health: an unspecified failure.
    pub const POWER_SUPPLY_HEALTH_UNSPEC_FAILURE: u8 = 5;
    /// Health: cold.
    pub const POWER_SUPPLY_HEALTH_COLD: u8 = 6;
    /// Health: its watchdog timer expired.
    pub const POWER_SUPPLY_HEALTH_WATCHDOG_TIMER_EXPIRE: u8 = 7;
    /// Health: its safety timer expired.
    pub const POWER_SUPPLY_HEALTH_SAFETY_TIMER_EXPIRE: u8 = 8;
    /// Chemistry: not known.
    pub const POWER_SUPPLY_TECHNOLOGY_UNKNOWN: u8 = 0;
    /// Chemistry: nickel-metal hydride.
    pub const POWER_SUPPLY_TECHNOLOGY_NIMH: u8 = 1;
    /// Chemistry: lithium-ion.
    pub const POWER_SUPPLY_TECHNOLOGY_LION: u8 = 2;
    /// Chemistry: lithium polymer.
    pub const POWER_SUPPLY_TECHNOLOGY_LIPO: u8 = 3;
    /// Chemistry: lithium iron phosphate.
    pub const POWER_SUPPLY_TECHNOLOGY_LIFE: u8 = 4;
    /// Chemistry: nickel-cadmium.
    pub const POWER_SUPPLY_TECHNOLOGY_NICD: u8 = 5;
    /// Chemistry: lithium manganese dioxide.
    pub const POWER_SUPPLY_TECHNOLOGY_LIMN: u8 = 6;
    /// Chemistry: ternary lithium.
    pub const POWER_SUPPLY_TECHNOLOGY_TERNARY: u8 = 7;
    /// Chemistry: valve-regulated lead-acid (a Pioneer's).
    pub const POWER_SUPPLY_TECHNOLOGY_VRLA: u8 = 8;
}

impl super::RosMessage for BatteryState {
    const TYPE_NAME: &'static str = "sensor_msgs/msg/BatteryState";
}

/// `sensor_msgs/msg/Range`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Range {
    /// Stamp (sim time of the reading) and the transducer's frame.
    pub header: Header,
    /// [`Range::ULTRASOUND`] or [`Range::INFRARED`].
    pub radiation_type: u8,
    /// Width of the cone the reading holds for, rad.
    pub field_of_view: f32,
    /// Nearest range, m.
    pub min_range: f32,
    /// Farthest range, m.
    pub max_range: f32,
    /// The reading, m.
    pub range: f32,
    /// Variance of the reading, m² (0: unknown).
    pub variance: f32,
}

impl Range {
    /// Sound.
    pub const ULTRASOUND: u8 = 0;
    /// Infrared light.
    pub const INFRARED: u8 = 1;
}

impl super::RosMessage for Range {
    const TYPE_NAME: &'static str = "sensor_msgs/msg/Range";
}

/// `sensor_msgs/msg/PointField`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PointField {
    /// Name of the field (`x`, `y`, `z`, ...).
    pub name: String,
    /// Offset from the start of a point, bytes.
    pub offset: u32,
    /// Its type ([`PointField::FLOAT32`], ...).
    pub datatype: u8,
    /// Elements in the field.
    pub count: u32,
}

impl PointField {
    /// 32-bit float.
    pub const FLOAT32: u8 = 7;
}

/// `sensor_msgs/msg/PointCloud2`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PointCloud2 {
    /// Stamp and the frame the points are in.
    pub header: Header,
    /// Rows (1 for an unordered cloud).
    pub height: u32,
    /// Points per row.
    pub width: u32,
    /// The layout of one point.
    pub fields: Vec<PointField>,
    /// Whether the data is big-endian.
    pub is_bigendian: bool,
    /// Bytes per point.
    pub point_step: u32,
    /// Bytes per row.
    pub row_step: u32,
    /// The points, `row_step × height` bytes.
    pub data: Vec<u8>,
    /// No invalid points.
    pub is_dense: bool,
}

impl super::RosMessage for PointCloud2 {
    const TYPE_NAME: &'static str = "sensor_msgs/msg/PointCloud2";
}

impl PointCloud2 {
    /// An unordered little-endian cloud of `x, y, z` float32 points in
    /// `header`'s frame.
    pub fn xyz(header: Header, points: impl IntoIterator<Item = [f32; 3]>) -> PointCloud2 {
        let field =
            |name: &str, offset| PointField { name: name.into(), offset, datatype: PointField::FLOAT32, count: 1 };
        let mut data = Vec::new();
        for p in points {
            for v in p {
                data.extend_from_slice(&v.to_le_bytes());
            }
        }
        let mut cloud = PointCloud2 {
            header,
            height: 1,
            width: 0,
            fields: vec![field("x", 0), field("y", 4), field("z", 8)],
            is_bigendian: false,
            point_step: 12,
            row_step: 0,
            data,
            is_dense: true,
        };
        cloud.fit_row_to_data();
        cloud
    }

    /// Sets the width and row step of an unordered cloud from its data
    /// (after points were written into `data` in place).
    pub fn fit_row_to_data(&mut self) {
        self.width = self.data.len() as u32 / self.point_step.max(1);
        self.row_step = self.width * self.point_step;
    }

    /// The points of an `x, y, z` float32 cloud made by [`PointCloud2::xyz`].
    pub fn xyz_points(&self) -> Vec<[f32; 3]> {
        self.data
            .chunks_exact(12)
            .map(|p| {
                let f = |k: usize| f32::from_le_bytes([p[k], p[k + 1], p[k + 2], p[k + 3]]);
                [f(0), f(4), f(8)]
            })
            .collect()
    }
}

/// `sensor_msgs/msg/CompressedImage` (a marker's texture).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CompressedImage {
    /// Stamp and optical frame.
    pub header: Header,
    /// How `data` is compressed, e.g. `png`.
    pub format: String,
    /// The compressed image.
    pub data: Vec<u8>,
}

impl super::RosMessage for CompressedImage {
    const TYPE_NAME: &'static str = "sensor_msgs/msg/CompressedImage";
}

/// `sensor_msgs/msg/JointState`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct JointState {
    /// Stamp.
    pub header: Header,
    /// Joint names.
    pub name: Vec<String>,
    /// Positions, rad or m.
    pub position: Vec<f64>,
    /// Velocities, rad/s or m/s.
    pub velocity: Vec<f64>,
    /// Efforts, N·m or N (empty: not known).
    pub effort: Vec<f64>,
}

impl super::RosMessage for JointState {
    const TYPE_NAME: &'static str = "sensor_msgs/msg/JointState";
}
