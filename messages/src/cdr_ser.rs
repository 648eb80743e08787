//! CDR written field by field without serde, for the messages a node sends
//! by the thousand every sim second whose layout is fixed but for a few
//! strings: odometry, its twist and its transforms. Through serde each
//! float costs a call and an alignment check (an `Odometry` is 90 of
//! them); here the doubles go out eight bytes at a time into a payload
//! sized once. The bytes are the same: the tests in `super::tests` hold
//! both paths to them.

use super::builtin_interfaces::Time;
use super::geometry_msgs::{
    Point, Pose, PoseWithCovariance, Quaternion, Transform, TransformStamped, Twist, TwistWithCovariance,
    TwistWithCovarianceStamped, Vector3,
};
use super::nav_msgs::Odometry;
use super::std_msgs::Header;
use super::tf2_msgs::TFMessage;
use super::{Covariance, RosMessage};

/// Little-endian CDR: the encapsulation header that starts every payload.
const ENCAPSULATION: [u8; 4] = [0x00, 0x01, 0x00, 0x00];

/// A payload being written into memory of its exact size: the
/// encapsulation header, then fields with natural alignment counted from
/// after it.
pub(super) struct CdrWriter<'a> {
    out: &'a mut [u8],
    /// Bytes written so far, the header's included.
    at: usize,
}

impl CdrWriter<'_> {
    /// The payload of `message`, in one allocation of its exact size.
    /// A message of 4 GiB or more (a string or a count of that size, which
    /// CDR's 32-bit lengths cannot say) goes to serde, which refuses it.
    pub(super) fn encode<T: WriteCdr + RosMessage>(message: &T) -> Vec<u8> {
        let Some(len) = CdrWriter::payload_len(message) else {
            return super::encode_with_serde(message);
        };
        let mut buffer = vec![0; len];
        CdrWriter::write_into(message, &mut buffer);
        buffer
    }

    /// The length of `message`'s payload, header included, if CDR's
    /// 32-bit lengths can say it.
    pub(super) fn payload_len<T: WriteCdr>(message: &T) -> Option<usize> {
        let bytes = message.cdr_bytes_at(0);
        u32::try_from(bytes).ok().map(|_| ENCAPSULATION.len() + bytes)
    }

    /// Writes `message`'s payload into `out`, which is exactly
    /// [`CdrWriter::payload_len`] bytes long: every byte is written,
    /// padding as zeros.
    pub(super) fn write_into<T: WriteCdr + RosMessage>(message: &T, out: &mut [u8]) {
        out[..ENCAPSULATION.len()].copy_from_slice(&ENCAPSULATION);
        let mut writer = CdrWriter { out, at: ENCAPSULATION.len() };
        message.write_cdr(&mut writer);
        debug_assert_eq!(writer.at, writer.out.len(), "{}: size worked out wrong", T::TYPE_NAME);
    }

    fn put(&mut self, bytes: &[u8]) {
        self.out[self.at..self.at + bytes.len()].copy_from_slice(bytes);
        self.at += bytes.len();
    }

    /// Zero padding up to a multiple of `size` bytes after the header.
    /// Most fields need none: a fill of a length not known at compile
    /// time is a call to `memset`, 3 % of the odometry node's samples
    /// while it wrote office-50's odometry for a recorder, nearly all of
    /// them of no bytes.
    fn align(&mut self, size: usize) {
        let start = self.at - ENCAPSULATION.len();
        let padding = start.next_multiple_of(size) - start;
        if padding > 0 {
            self.out[self.at..self.at + padding].fill(0);
            self.at += padding;
        }
    }

    fn u32(&mut self, value: u32) {
        self.align(4);
        self.put(&value.to_le_bytes());
    }

    fn i32(&mut self, value: i32) {
        self.align(4);
        self.put(&value.to_le_bytes());
    }

    /// Doubles in a row (aligned once: each is 8 bytes), filled by
    /// chunks: a plain copy on little-endian machines (as
    /// `float_seq::push`).
    fn f64s(&mut self, values: &[f64]) {
        self.align(8);
        let end = self.at + 8 * values.len();
        for (bytes, value) in self.out[self.at..end].chunks_exact_mut(8).zip(values) {
            bytes.copy_from_slice(&value.to_le_bytes());
        }
        self.at = end;
    }

    /// A string: its length with the terminating NUL as a u32, its bytes,
    /// the NUL.
    fn string(&mut self, value: &str) {
        // Under 4 GiB: `encode` checked the whole message.
        self.u32((value.len() + 1) as u32);
        self.put(value.as_bytes());
        self.put(&[0]);
    }
}

/// The methods of [`RosMessage`] for a type written by [`CdrWriter`].
macro_rules! written_without_serde {
    () => {
        fn to_cdr(&self) -> Vec<u8> {
            $crate::cdr_ser::CdrWriter::encode(self)
        }
    };
}
pub(super) use written_without_serde;

/// Where a field of `size`-byte alignment starts when the previous one
/// ended at `at` (bytes after the encapsulation header).
fn aligned(at: usize, size: usize) -> usize {
    at.next_multiple_of(size)
}

/// A message or field written by [`CdrWriter`].
pub(super) trait WriteCdr {
    /// Appends the fields.
    fn write_cdr(&self, writer: &mut CdrWriter<'_>);
    /// Where the fields end when they start at `at` (bytes after the
    /// encapsulation header): what the payload is sized by.
    fn cdr_bytes_at(&self, at: usize) -> usize;
}

/// Types made of doubles only, written as one aligned run.
macro_rules! doubles {
    ($type:ty, $n:expr, |$v:ident| $values:expr) => {
        impl WriteCdr for $type {
            fn write_cdr(&self, writer: &mut CdrWriter<'_>) {
                let $v = self;
                writer.f64s(&$values);
            }
            fn cdr_bytes_at(&self, at: usize) -> usize {
                aligned(at, 8) + 8 * $n
            }
        }
    };
}

doubles!(Vector3, 3, |v| [v.x, v.y, v.z]);
doubles!(Point, 3, |p| [p.x, p.y, p.z]);
doubles!(Quaternion, 4, |q| [q.x, q.y, q.z, q.w]);
doubles!(Pose, 7, |p| [
    p.position.x,
    p.position.y,
    p.position.z,
    p.orientation.x,
    p.orientation.y,
    p.orientation.z,
    p.orientation.w
]);
doubles!(Twist, 6, |t| [t.linear.x, t.linear.y, t.linear.z, t.angular.x, t.angular.y, t.angular.z]);
doubles!(Transform, 7, |t| [
    t.translation.x,
    t.translation.y,
    t.translation.z,
    t.rotation.x,
    t.rotation.y,
    t.rotation.z,
    t.rotation.w
]);
doubles!(Covariance, 36, |c| c.0);

impl WriteCdr for Time {
    fn write_cdr(&self, writer: &mut CdrWriter<'_>) {
        writer.i32(self.sec);
        writer.u32(self.nanosec);
    }
    fn cdr_bytes_at(&self, at: usize) -> usize {
        aligned(at, 4) + 8
    }
}

impl WriteCdr for str {
    fn write_cdr(&self, writer: &mut CdrWriter<'_>) {
        writer.string(self);
    }
    fn cdr_bytes_at(&self, at: usize) -> usize {
        aligned(at, 4) + 4 + self.len() + 1
    }
}

/// Structs written as their fields in order.
macro_rules! fields {
    ($type:ty, |$m:ident| [$($field:expr),+]) => {
        impl WriteCdr for $type {
            fn write_cdr(&self, writer: &mut CdrWriter<'_>) {
                let $m = self;
                $($field.write_cdr(writer);)+
            }
            fn cdr_bytes_at(&self, at: usize) -> usize {
                let $m = self;
                let mut at = at;
                $(at = $field.cdr_bytes_at(at);)+
                at
            }
        }
    };
}

fields!(Header, |h| [h.stamp, h.frame_id.as_str()]);
fields!(PoseWithCovariance, |p| [p.pose, p.covariance]);
fields!(TwistWithCovariance, |t| [t.twist, t.covariance]);
fields!(TwistWithCovarianceStamped, |t| [t.header, t.twist]);
fields!(TransformStamped, |t| [t.header, t.child_frame_id.as_str(), t.transform]);
fields!(Odometry, |o| [o.header, o.child_frame_id.as_str(), o.pose, o.twist]);

impl WriteCdr for TFMessage {
    fn write_cdr(&self, writer: &mut CdrWriter<'_>) {
        // Fewer than 2^32: `encode` checked the whole message's size.
        writer.u32(self.transforms.len() as u32);
        for transform in &self.transforms {
            transform.write_cdr(writer);
        }
    }
    fn cdr_bytes_at(&self, at: usize) -> usize {
        self.transforms.iter().fold(aligned(at, 4) + 4, |at, transform| transform.cdr_bytes_at(at))
    }
}
