//! Messages drive nodes send to the world.

use serde::{Deserialize, Serialize};

use crate::codec::{decode_with_rest, encode, DecodeError, WireMessage};
use crate::world_to_nodes::BodyId;

/// The velocity command of every body one drive node controls, for one step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Actuation {
    /// Node id of the sender (also the last chunk of the key).
    pub node: String,
    /// The world step whose state these commands answer; they apply from
    /// step `step + 1` on and stay in force until replaced. The world also
    /// counts the message as the sender's lockstep report for `step`.
    pub step: u64,
    /// One command per driven body.
    pub commands: Vec<BodyCommand>,
}

impl WireMessage for Actuation {
    const KIND: &'static str = "Actuation";
}

/// Encodes an actuation, followed, from a drive that publishes nothing
/// else, by its steady step: the last state whose answer will be this same
/// actuation unless a `cmd_vel` arrives (8 bytes, little-endian u64; the
/// actuation's own step when it promises nothing). In lockstep the world
/// need not wait for the answers up to that step while no other
/// participant has worked (ARCHITECTURE.md, "Rules every process
/// follows"). A reader of the plain [`Actuation`] ignores the trailer.
pub fn encode_actuation(actuation: &Actuation, steady_through: Option<u64>) -> Vec<u8> {
    let mut bytes = encode(actuation);
    if let Some(step) = steady_through {
        bytes.extend_from_slice(&step.to_le_bytes());
    }
    bytes
}

/// Decodes an actuation and its steady step, if it has one.
pub fn decode_actuation(bytes: &[u8]) -> Result<(Actuation, Option<u64>), DecodeError> {
    let (actuation, rest) = decode_with_rest::<Actuation>(bytes)?;
    let steady_through = match rest {
        [] => None,
        rest => Some(u64::from_le_bytes(rest.try_into().map_err(|_| DecodeError::Malformed {
            kind: Actuation::KIND,
            reason: format!("{} bytes after the commands, where a steady step takes 8", rest.len()),
        })?)),
    };
    Ok((actuation, steady_through))
}

/// A velocity to hold a body at.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BodyCommand {
    /// The body.
    pub body: BodyId,
    /// Velocity of the body origin along the body's own x axis, m/s.
    pub local_vx_mps: f64,
    /// Velocity of the body origin along the body's own y axis, m/s.
    pub local_vy_mps: f64,
    /// Angular velocity, rad/s.
    pub omega_radps: f64,
}

impl BodyCommand {
    /// Whether every component is finite (a NaN command is dropped).
    pub fn is_finite(&self) -> bool {
        self.local_vx_mps.is_finite() && self.local_vy_mps.is_finite() && self.omega_radps.is_finite()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::decode;

    fn actuation() -> Actuation {
        let command = BodyCommand { body: 3, local_vx_mps: 0.5, local_vy_mps: 0.0, omega_radps: -0.25 };
        Actuation { node: "drive-1".into(), step: 40, commands: vec![command] }
    }

    #[test]
    fn a_steady_step_rides_after_the_commands_and_plain_readers_ignore_it() {
        let bytes = encode_actuation(&actuation(), Some(140));
        assert_eq!(decode_actuation(&bytes).unwrap(), (actuation(), Some(140)));
        assert_eq!(decode::<Actuation>(&bytes).unwrap(), actuation(), "a reader of the actuation alone");
        let plain = encode_actuation(&actuation(), None);
        assert_eq!(plain, encode(&actuation()));
        assert_eq!(decode_actuation(&plain).unwrap(), (actuation(), None));
    }

    #[test]
    fn a_cut_or_overlong_trailer_is_refused() {
        let bytes = encode_actuation(&actuation(), Some(140));
        for cut in 1..8 {
            let err = decode_actuation(&bytes[..bytes.len() - cut]).unwrap_err();
            assert!(err.to_string().contains("steady step"), "{err}");
        }
        let mut long = bytes.clone();
        long.push(0);
        assert!(decode_actuation(&long).is_err());
    }
}
