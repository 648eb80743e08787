//! `std_msgs`.

use serde::{Deserialize, Serialize};

use super::builtin_interfaces::Time;

/// `std_msgs/msg/Header`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Header {
    /// Time stamp (sim time).
    pub stamp: Time,
    /// Frame the data is expressed in.
    pub frame_id: String,
}

impl super::RosMessage for Header {
    const TYPE_NAME: &'static str = "std_msgs/msg/Header";
}

/// `std_msgs/msg/ColorRGBA`: each channel in 0..1.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct ColorRGBA {
    /// Red.
    pub r: f32,
    /// Green.
    pub g: f32,
    /// Blue.
    pub b: f32,
    /// Opacity.
    pub a: f32,
}

impl super::RosMessage for ColorRGBA {
    const TYPE_NAME: &'static str = "std_msgs/msg/ColorRGBA";
}

/// `std_msgs/msg/Bool`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Bool {
    /// The value.
    pub data: bool,
}

impl super::RosMessage for Bool {
    const TYPE_NAME: &'static str = "std_msgs/msg/Bool";
}

/// `std_msgs/msg/String` (named so as not to hide Rust's `String`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct StdString {
    /// The text.
    pub data: String,
}

impl super::RosMessage for StdString {
    const TYPE_NAME: &'static str = "std_msgs/msg/String";
}
