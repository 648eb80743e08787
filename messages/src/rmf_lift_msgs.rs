//! `rmf_lift_msgs`: Open-RMF's lift requests and states, as its lift
//! adapters and fleet adapters speak them (the `Lift` plugin's topics).

use serde::{Deserialize, Serialize};

use super::builtin_interfaces::Time;

/// `rmf_lift_msgs/msg/LiftRequest`: take the lift to a floor.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LiftRequest {
    /// The lift.
    pub lift_name: String,
    /// When it was asked.
    pub request_time: Time,
    /// Who holds the lift (a fleet adapter's session).
    pub session_id: String,
    /// `REQUEST_*`.
    pub request_type: u8,
    /// The floor to go to.
    pub destination_floor: String,
    /// The door there: `DOOR_OPEN` or `DOOR_CLOSED`.
    pub door_state: u8,
}

impl LiftRequest {
    /// The session ends: the lift is free.
    pub const REQUEST_END_SESSION: u8 = 0;
    /// A robot's session.
    pub const REQUEST_AGV_MODE: u8 = 1;
    /// A person's session.
    pub const REQUEST_HUMAN_MODE: u8 = 2;
    /// The door closed at the floor.
    pub const DOOR_CLOSED: u8 = 0;
    /// The door open at the floor.
    pub const DOOR_OPEN: u8 = 2;
}

impl super::RosMessage for LiftRequest {
    const TYPE_NAME: &'static str = "rmf_lift_msgs/msg/LiftRequest";
}

/// `rmf_lift_msgs/msg/LiftState`: where a lift is and what it does.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LiftState {
    /// When it was so (sim time).
    pub lift_time: Time,
    /// The lift.
    pub lift_name: String,
    /// The floors it serves.
    pub available_floors: Vec<String>,
    /// The floor it is at, or last passed.
    pub current_floor: String,
    /// The floor it goes to.
    pub destination_floor: String,
    /// `DOOR_*`: its door at the current floor.
    pub door_state: u8,
    /// `MOTION_*`.
    pub motion_state: u8,
    /// The `MODE_*`s it can be in.
    pub available_modes: Vec<u8>,
    /// `MODE_*`.
    pub current_mode: u8,
    /// The session holding it ("" for none).
    pub session_id: String,
}

impl LiftState {
    /// Door closed.
    pub const DOOR_CLOSED: u8 = 0;
    /// Door moving.
    pub const DOOR_MOVING: u8 = 1;
    /// Door open.
    pub const DOOR_OPEN: u8 = 2;
    /// Standing at a floor.
    pub const MOTION_STOPPED: u8 = 0;
    /// Going up.
    pub const MOTION_UP: u8 = 1;
    /// Going down.
    pub const MOTION_DOWN: u8 = 2;
    /// Not known.
    pub const MOTION_UNKNOWN: u8 = 3;
    /// Mode not known.
    pub const MODE_UNKNOWN: u8 = 0;
    /// Serving people.
    pub const MODE_HUMAN: u8 = 1;
    /// Serving robots.
    pub const MODE_AGV: u8 = 2;
    /// Fire service.
    pub const MODE_FIRE: u8 = 3;
    /// Offline.
    pub const MODE_OFFLINE: u8 = 4;
    /// Emergency.
    pub const MODE_EMERGENCY: u8 = 5;
}

impl super::RosMessage for LiftState {
    const TYPE_NAME: &'static str = "rmf_lift_msgs/msg/LiftState";
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{decode, encode};

    #[test]
    fn a_lift_request_has_rmf_s_cdr_layout() {
        let request = LiftRequest {
            lift_name: "L".into(),
            request_time: Time { sec: 1, nanosec: 0 },
            session_id: "s".into(),
            request_type: LiftRequest::REQUEST_AGV_MODE,
            destination_floor: "2".into(),
            door_state: LiftRequest::DOOR_OPEN,
        };
        let bytes = encode(&request);
        #[rustfmt::skip]
        let golden = [
            0, 1, 0, 0,                 // CDR little-endian
            2, 0, 0, 0, b'L', 0, 0, 0,  // lift_name "L", padded to 4
            1, 0, 0, 0, 0, 0, 0, 0,     // request_time 1 s
            2, 0, 0, 0, b's', 0,        // session_id "s"
            1,                          // AGV mode
            0,                          // padding to 4
            2, 0, 0, 0, b'2', 0,        // destination_floor "2"
            2,                          // door open
        ];
        assert_eq!(bytes, golden);
        assert_eq!(decode::<LiftRequest>(&bytes).unwrap(), request);
    }

    #[test]
    fn a_lift_state_goes_through_cdr_and_back() {
        let state = LiftState {
            lift_name: "L".into(),
            available_floors: vec!["1".into(), "2".into()],
            current_floor: "1".into(),
            destination_floor: "2".into(),
            motion_state: LiftState::MOTION_UP,
            available_modes: vec![LiftState::MODE_AGV],
            current_mode: LiftState::MODE_AGV,
            ..LiftState::default()
        };
        assert_eq!(decode::<LiftState>(&encode(&state)).unwrap(), state);
    }
}
