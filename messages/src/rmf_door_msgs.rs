//! `rmf_door_msgs`: Open-RMF's door requests and states, as its door
//! adapters and fleet adapters speak them (the `Door` plugin's topics).

use serde::{Deserialize, Serialize};

use super::builtin_interfaces::Time;

/// `rmf_door_msgs/msg/DoorMode`: what a door is doing, or is asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DoorMode {
    /// One of the `MODE_*` values.
    pub value: u32,
}

impl DoorMode {
    /// Closed.
    pub const MODE_CLOSED: u32 = 0;
    /// Between closed and open.
    pub const MODE_MOVING: u32 = 1;
    /// Open.
    pub const MODE_OPEN: u32 = 2;
    /// Its controller does not answer.
    pub const MODE_OFFLINE: u32 = 3;
    /// Not known.
    pub const MODE_UNKNOWN: u32 = 4;
}

impl super::RosMessage for DoorMode {
    const TYPE_NAME: &'static str = "rmf_door_msgs/msg/DoorMode";
}

/// `rmf_door_msgs/msg/DoorRequest`: open or close a door.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DoorRequest {
    /// When it was asked.
    pub request_time: Time,
    /// Who asks (a fleet adapter, a robot).
    pub requester_id: String,
    /// The door.
    pub door_name: String,
    /// `MODE_OPEN` or `MODE_CLOSED`.
    pub requested_mode: DoorMode,
}

impl super::RosMessage for DoorRequest {
    const TYPE_NAME: &'static str = "rmf_door_msgs/msg/DoorRequest";
}

/// `rmf_door_msgs/msg/DoorState`: where a door is.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DoorState {
    /// When it was so (sim time).
    pub door_time: Time,
    /// The door.
    pub door_name: String,
    /// Closed, moving or open.
    pub current_mode: DoorMode,
}

impl super::RosMessage for DoorState {
    const TYPE_NAME: &'static str = "rmf_door_msgs/msg/DoorState";
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{decode, encode};

    #[test]
    fn a_door_request_has_rmf_s_cdr_layout() {
        let request = DoorRequest {
            request_time: Time { sec: 3, nanosec: 500 },
            requester_id: "r".into(),
            door_name: "d1".into(),
            requested_mode: DoorMode { value: DoorMode::MODE_OPEN },
        };
        let bytes = encode(&request);
        #[rustfmt::skip]
        let golden = [
            0, 1, 0, 0,                 // CDR little-endian
            3, 0, 0, 0, 244, 1, 0, 0,   // request_time: 3 s, 500 ns
            2, 0, 0, 0, b'r', 0, 0, 0,  // requester_id "r" (with its NUL), padded to 4
            3, 0, 0, 0, b'd', b'1', 0,  // door_name "d1"
            0,                          // padding to 4
            2, 0, 0, 0,                 // requested_mode: MODE_OPEN
        ];
        assert_eq!(bytes, golden);
        assert_eq!(decode::<DoorRequest>(&bytes).unwrap(), request);
    }

    #[test]
    fn a_door_state_goes_through_cdr_and_back() {
        let state = DoorState {
            door_time: Time { sec: 1, nanosec: 2 },
            door_name: "main".into(),
            current_mode: DoorMode { value: DoorMode::MODE_MOVING },
        };
        assert_eq!(decode::<DoorState>(&encode(&state)).unwrap(), state);
    }
}
