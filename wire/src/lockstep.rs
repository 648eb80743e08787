//! The lockstep handshake (ARCHITECTURE.md, "Rules every process follows"), which any program can join.
//!
//! A participant declares a liveliness token on `flotilla/<sim>/lockstep/<id>`
//! and, for every world state it receives, publishes a [`StepDone`] on the
//! same key once everything it does for that step is published (a drive: its
//! commands for the next step; a sensor: every output due at that step; a
//! controller: its commands). In lockstep mode the world publishes state k+1
//! only after every live participant has reported step k. A participant whose
//! token disappears leaves the barrier. A report may run ahead: a sensor with
//! nothing due until step k+19 reports k+19 as soon as it is done with k,
//! and need not answer states k+1 to k+18 (the world keeps each node's last
//! report, also across a link cut). The world may publish a state again
//! (to a newcomer while paused, and every second while the barrier waits
//! on it, in case a participant missed it): a participant ignores a state
//! whose step it has answered. In
//! fast mode the same reports are the world's flow control: it stays at most
//! [`FAST_MAX_LEAD_STEPS`] ahead of them.
//!
//! On the wire a `StepDone` is 10 bytes: the schema version as a little-endian
//! u16, then the step as a little-endian u64 (Python:
//! `struct.pack("<HQ", SCHEMA_VERSION, step)`). Flotilla's sensor nodes add an 11th byte,
//! 1, when nothing they publish is any plugin's input: their work then
//! commands no robot, and a drive's promise may spare the world its answer
//! at the state after (see [`crate::drive_to_world::Promise`]), and such a
//! node may run some states behind the world while no participant that may
//! command works on the next state (`flotilla-world
//! --lockstep-sensor-lag`). A report without it counts as one whose work
//! may command a robot: before a state such a participant works on, every
//! node has reported every state before it.

use serde::{Deserialize, Serialize};

use crate::codec::{decode_with_rest, encode, DecodeError, WireMessage};

/// How many steps the world may run ahead of the slowest lockstep
/// participant in fast mode (0.5 s of sim time at 200 Hz): flow control, so
/// that nodes never queue states without bound.
pub const FAST_MAX_LEAD_STEPS: u64 = 100;

/// "I am done with step `step`."
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepDone {
    /// The step of the world state that was handled.
    pub step: u64,
}

impl WireMessage for StepDone {
    const KIND: &'static str = "StepDone";
}

/// Encodes a report, with the byte that says the reporter's work commands
/// nothing when `commands_nothing`.
pub fn encode_step_done(step: u64, commands_nothing: bool) -> Vec<u8> {
    let mut bytes = encode(&StepDone { step });
    if commands_nothing {
        bytes.push(1);
    }
    bytes
}

/// Decodes a report, and whether its sender's work commands nothing.
pub fn decode_step_done(bytes: &[u8]) -> Result<(StepDone, bool), DecodeError> {
    let (done, rest) = decode_with_rest::<StepDone>(bytes)?;
    match rest {
        [] | [0] => Ok((done, false)),
        [1] => Ok((done, true)),
        _ => Err(DecodeError::Malformed {
            kind: StepDone::KIND,
            reason: format!("{} bytes after the step, where only a flag byte (0 or 1) may follow", rest.len()),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_done_is_ten_bytes_as_documented() {
        let bytes = crate::codec::encode(&StepDone { step: 258 });
        let mut expected = crate::SCHEMA_VERSION.to_le_bytes().to_vec();
        expected.extend_from_slice(&258u64.to_le_bytes());
        assert_eq!(bytes, expected);
        assert_eq!(encode_step_done(258, false), expected);
        assert_eq!(decode_step_done(&expected).unwrap(), (StepDone { step: 258 }, false));
    }

    #[test]
    fn a_sensor_s_report_says_its_work_commands_nothing_in_an_11th_byte() {
        let bytes = encode_step_done(258, true);
        assert_eq!(bytes.len(), 11);
        assert_eq!(decode_step_done(&bytes).unwrap(), (StepDone { step: 258 }, true));
        for bad in [vec![2], vec![1, 1]] {
            let mut long = encode_step_done(258, false);
            long.extend(bad);
            assert!(decode_step_done(&long).unwrap_err().to_string().contains("flag byte"));
        }
    }
}
