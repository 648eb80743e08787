//! `geometry_msgs`.

use serde::{Deserialize, Serialize};

use super::std_msgs::Header;
use super::{Covariance, RosMessage};

/// `geometry_msgs/msg/Vector3`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Vector3 {
    /// x.
    pub x: f64,
    /// y.
    pub y: f64,
    /// z.
    pub z: f64,
}

/// `geometry_msgs/msg/Point`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Point {
    /// x, metres.
    pub x: f64,
    /// y, metres.
    pub y: f64,
    /// z, metres.
    pub z: f64,
}

/// `geometry_msgs/msg/Quaternion` (x, y, z, w).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Quaternion {
    /// x.
    pub x: f64,
    /// y.
    pub y: f64,
    /// z.
    pub z: f64,
    /// w.
    pub w: f64,
}

impl Default for Quaternion {
    fn default() -> Self {
        Quaternion { x: 0.0, y: 0.0, z: 0.0, w: 1.0 }
    }
}

impl Quaternion {
    /// Rotation about z by `yaw` radians.
    pub fn from_yaw(yaw_rad: f64) -> Quaternion {
        let (s, c) = (yaw_rad * 0.5).sin_cos();
        Quaternion { x: 0.0, y: 0.0, z: s, w: c }
    }

    /// Rotation from roll, pitch, yaw (radians), as tf2's `setRPY`.
    pub fn from_rpy(roll: f64, pitch: f64, yaw: f64) -> Quaternion {
        let (sr, cr) = (roll * 0.5).sin_cos();
        let (sp, cp) = (pitch * 0.5).sin_cos();
        let (sy, cy) = (yaw * 0.5).sin_cos();
        Quaternion {
            x: sr * cp * cy - cr * sp * sy,
            y: cr * sp * cy + sr * cp * sy,
            z: cr * cp * sy - sr * sp * cy,
            w: cr * cp * cy + sr * sp * sy,
        }
    }

    /// The yaw (rotation about z) of this quaternion, radians.
    pub fn yaw(&self) -> f64 {
        (2.0 * (self.w * self.z + self.x * self.y)).atan2(1.0 - 2.0 * (self.y * self.y + self.z * self.z))
    }
}

/// `geometry_msgs/msg/Pose`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Pose {
    /// Position.
    pub position: Point,
    /// Orientation.
    pub orientation: Quaternion,
}

/// `geometry_msgs/msg/Pose2D`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Pose2D {
    /// x, metres.
    pub x: f64,
    /// y, metres.
    pub y: f64,
    /// Heading, radians.
    pub theta: f64,
}

/// `geometry_msgs/msg/Twist`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Twist {
    /// Linear velocity, m/s.
    pub linear: Vector3,
    /// Angular velocity, rad/s.
    pub angular: Vector3,
}

/// `geometry_msgs/msg/TwistStamped`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TwistStamped {
    /// Stamp and frame.
    pub header: Header,
    /// The twist.
    pub twist: Twist,
}

/// `geometry_msgs/msg/Transform`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Transform {
    /// Translation, metres.
    pub translation: Vector3,
    /// Rotation.
    pub rotation: Quaternion,
}

/// `geometry_msgs/msg/TransformStamped`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TransformStamped {
    /// Stamp and parent frame.
    pub header: Header,
    /// Child frame.
    pub child_frame_id: String,
    /// Parent → child transform.
    pub transform: Transform,
}

/// `geometry_msgs/msg/PoseWithCovariance`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct PoseWithCovariance {
    /// The pose.
    pub pose: Pose,
    /// Row-major 6×6 covariance of (x, y, z, roll, pitch, yaw).
    pub covariance: Covariance,
}

/// `geometry_msgs/msg/TwistWithCovariance`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct TwistWithCovariance {
    /// The twist.
    pub twist: Twist,
    /// Row-major 6×6 covariance.
    pub covariance: Covariance,
}

/// `geometry_msgs/msg/TwistWithCovarianceStamped`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TwistWithCovarianceStamped {
    /// Stamp and frame.
    pub header: Header,
    /// The twist with covariance.
    pub twist: TwistWithCovariance,
}

impl RosMessage for Vector3 {
    const TYPE_NAME: &'static str = "geometry_msgs/msg/Vector3";
}
impl RosMessage for Point {
    const TYPE_NAME: &'static str = "geometry_msgs/msg/Point";
}
impl RosMessage for Quaternion {
    const TYPE_NAME: &'static str = "geometry_msgs/msg/Quaternion";
}
impl RosMessage for Pose {
    const TYPE_NAME: &'static str = "geometry_msgs/msg/Pose";
}
impl RosMessage for Pose2D {
    const TYPE_NAME: &'static str = "geometry_msgs/msg/Pose2D";
}
impl RosMessage for Twist {
    const TYPE_NAME: &'static str = "geometry_msgs/msg/Twist";
}
impl RosMessage for TwistStamped {
    const TYPE_NAME: &'static str = "geometry_msgs/msg/TwistStamped";
}
impl RosMessage for Transform {
    const TYPE_NAME: &'static str = "geometry_msgs/msg/Transform";
}
impl RosMessage for TransformStamped {
    const TYPE_NAME: &'static str = "geometry_msgs/msg/TransformStamped";

    super::cdr_ser::written_without_serde!();
}
impl RosMessage for PoseWithCovariance {
    const TYPE_NAME: &'static str = "geometry_msgs/msg/PoseWithCovariance";
}
impl RosMessage for TwistWithCovariance {
    const TYPE_NAME: &'static str = "geometry_msgs/msg/TwistWithCovariance";
}
impl RosMessage for TwistWithCovarianceStamped {
    const TYPE_NAME: &'static str = "geometry_msgs/msg/TwistWithCovarianceStamped";

    super::cdr_ser::written_without_serde!();
}

/// `geometry_msgs/msg/PoseStamped`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PoseStamped {
    /// Stamp and frame.
    pub header: Header,
    /// The pose.
    pub pose: Pose,
}

impl RosMessage for PoseStamped {
    const TYPE_NAME: &'static str = "geometry_msgs/msg/PoseStamped";
}

/// `geometry_msgs/msg/Accel`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Accel {
    /// Linear acceleration, m/s².
    pub linear: Vector3,
    /// Angular acceleration, rad/s².
    pub angular: Vector3,
}

impl RosMessage for Accel {
    const TYPE_NAME: &'static str = "geometry_msgs/msg/Accel";
}

/// Decodes a `cmd_vel` payload: `Twist` (exactly 52 bytes) or `TwistStamped`
/// (with its stamp in ns, `None` when the stamp is zero or negative).
pub fn decode_cmd_vel(bytes: &[u8]) -> Result<(Twist, Option<u64>), crate::CdrError> {
    if bytes.len() == 52 {
        crate::decode::<Twist>(bytes).map(|t| (t, None))
    } else {
        crate::decode::<TwistStamped>(bytes).map(|stamped| {
            let t = stamped.header.stamp;
            let ns = (t.sec > 0 || t.nanosec > 0).then(|| t.sec.max(0) as u64 * 1_000_000_000 + u64::from(t.nanosec));
            (stamped.twist, ns)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::std_msgs::Header;

    #[test]
    fn cmd_vel_accepts_twist_and_twist_stamped() {
        let mut twist = Twist::default();
        twist.linear.x = 0.4;
        twist.angular.z = -0.2;
        assert_eq!(decode_cmd_vel(&crate::encode(&twist)).unwrap(), (twist, None));
        let mut stamped = TwistStamped { header: Header { frame_id: "base_link".into(), ..Default::default() }, twist };
        assert_eq!(decode_cmd_vel(&crate::encode(&stamped)).unwrap(), (twist, None), "zero stamp: unstamped");
        stamped.header.stamp.sec = 2;
        stamped.header.stamp.nanosec = 5;
        assert_eq!(decode_cmd_vel(&crate::encode(&stamped)).unwrap(), (twist, Some(2_000_000_005)));
        assert!(decode_cmd_vel(&[0, 1, 0, 0, 1, 2, 3]).is_err());
    }
}
