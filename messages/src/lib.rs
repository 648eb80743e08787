//! The ROS 2 messages Flotilla speaks, in one place: each type's Rust
//! struct, its CDR encoding exactly as ROS 2 (rmw) puts it on the wire, and
//! its `.msg` definition ([`definitions`], the text in `messages/msg/`).
//! [`RosMessage`] gives a type's name, its bytes and its definition.
//!
//! The encoding: a 4-byte encapsulation header (`00 01 00 00`,
//! little-endian CDR) followed by the fields with natural alignment counted
//! from after the header. Any Zenoh client in any language can read these
//! payloads without ROS, and zenoh-plugin-ros2dds forwards them to DDS
//! unchanged.
//!
//! This crate imports nothing else of Flotilla's: a program that only
//! decodes Flotilla's ROS-facing topics needs nothing more.

pub mod action_msgs;
pub mod builtin_interfaces;
pub mod by_name;
mod cdr_de;
mod cdr_ser;
mod covariance;
pub mod definitions;
pub mod flatland_msgs;
mod float_seq;
pub mod geometry_msgs;
pub mod nav_msgs;
pub mod people_msgs;
pub mod rmf_door_msgs;
pub mod rmf_lift_msgs;
pub mod rosgraph_msgs;
pub mod sensor_msgs;
pub mod services;
pub mod simulation_interfaces;
pub mod std_msgs;
pub mod std_srvs;
pub mod tf2_msgs;
pub mod visualization_msgs;

pub use covariance::Covariance;

use serde::{de::DeserializeOwned, Serialize};

/// A ROS 2 message type.
pub trait RosMessage: Serialize + DeserializeOwned {
    /// The ROS type name, e.g. `geometry_msgs/msg/Twist`.
    const TYPE_NAME: &'static str;

    /// The message's payload (see [`encode`]). Through serde unless a type
    /// has a faster way to the same bytes.
    fn to_cdr(&self) -> Vec<u8> {
        encode_with_serde(self)
    }

    /// The message of a payload (see [`decode`]). Through serde unless a
    /// type has a faster way to the same message.
    fn from_cdr(bytes: &[u8]) -> Result<Self, CdrError> {
        decode_with_serde(bytes)
    }

    /// The type's `.msg` definition (see [`definitions::definition`]);
    /// `None` for the request and response halves of services and actions,
    /// which no topic carries.
    fn definition() -> Option<&'static str> {
        definitions::definition(Self::TYPE_NAME)
    }
}

/// A ROS 2 service type: its name and its request and response messages.
pub trait RosService {
    /// The ROS type name, e.g. `flatland_msgs/srv/SpawnModel`.
    const TYPE_NAME: &'static str;
    /// The request message.
    type Request: RosMessage;
    /// The response message.
    type Response: RosMessage;
}

/// Why a CDR payload could not be decoded.
#[derive(Debug, thiserror::Error)]
#[error("{type_name}: malformed CDR payload ({len} bytes): {reason}")]
pub struct CdrError {
    /// The ROS type being decoded.
    pub type_name: &'static str,
    /// Payload length.
    pub len: usize,
    /// What the decoder reported.
    pub reason: String,
}

/// Encodes a message as little-endian CDR with the encapsulation header.
pub fn encode<T: RosMessage>(message: &T) -> Vec<u8> {
    message.to_cdr()
}

/// Decodes a CDR payload (either endianness, as announced by its header).
pub fn decode<T: RosMessage>(bytes: &[u8]) -> Result<T, CdrError> {
    T::from_cdr(bytes)
}

/// [`encode`] through serde, field by field: the reference that faster
/// paths are tested and measured against.
pub fn encode_with_serde<T: RosMessage>(message: &T) -> Vec<u8> {
    // Writing plain structs into a Vec with no size limit cannot fail.
    cdr::serialize::<_, _, cdr::CdrLe>(message, cdr::Infinite)
        .unwrap_or_else(|e| panic!("{}: CDR encoding into a Vec cannot fail: {e}", T::TYPE_NAME))
}

/// [`decode`] through serde, field by field (see [`encode_with_serde`]).
pub fn decode_with_serde<T: RosMessage>(bytes: &[u8]) -> Result<T, CdrError> {
    decode_leading_fields(bytes, T::TYPE_NAME).map(|(message, _)| message)
}

/// Decodes through serde the fields `T` that a payload of a `type_name`
/// message starts with (all of them, or those before what a faster path
/// reads itself), and how many bytes of the payload they took.
fn decode_leading_fields<T: DeserializeOwned>(bytes: &[u8], type_name: &'static str) -> Result<(T, usize), CdrError> {
    let fail = |reason: String| CdrError { type_name, len: bytes.len(), reason };
    if bytes.len() < 4 {
        return Err(fail("shorter than the 4-byte encapsulation header".into()));
    }
    // Every length is checked against the bytes left before anything is
    // allocated (see `cdr_de`).
    cdr_de::decode_prefix::<T>(bytes).map_err(|e| fail(e.to_string()))
}

#[cfg(test)]
mod tests;
