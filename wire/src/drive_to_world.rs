//! Messages drive nodes send to the world.

use serde::{Deserialize, Serialize};

use crate::codec::{decode_with_rest, encode, DecodeError, WireMessage};
use crate::geometry::{wrap_angle, Pose2};
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

/// The start of an [`Actuation`]: who sent it and the state it answers,
/// read without its commands (a standby outside lockstep keeps only how far
/// the drives got, not what they commanded).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActuationHead {
    /// See [`Actuation::node`].
    pub node: String,
    /// See [`Actuation::step`].
    pub step: u64,
}

impl WireMessage for ActuationHead {
    const KIND: &'static str = "Actuation";
}

/// What a drive that publishes nothing but its actuation knows, with its
/// answer to a state, of its answers to the states after it: they are
/// known up to `through` unless a `cmd_vel` arrives, and differ from this
/// answer only by `changes` — a robot still ramping toward its commanded
/// velocity under its acceleration limits, a queued stamped command
/// taking effect, a command going stale. In lockstep the world need not
/// wait for those answers while no other participant has worked; it then
/// applies the changes itself (ARCHITECTURE.md, "Rules every process
/// follows").
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Promise {
    /// The last state whose answer is known; the actuation's own step when
    /// nothing is promised.
    pub through: u64,
    /// The commands that change in the answers to the states after the
    /// actuation's, up to `through`: (state answered, its new command for
    /// the body), in the order of the states.
    pub changes: Vec<(u64, BodyCommand)>,
}

/// Bytes of one planned change on the wire: the state (u64), the body
/// (u32) and the three velocities (f64), little-endian.
const CHANGE_BYTES: usize = 8 + 4 + 3 * 8;

/// Encodes an actuation followed, from a drive that publishes nothing
/// else, by its [`Promise`]: the last state known (8 bytes, little-endian
/// u64), then each change in `CHANGE_BYTES`. A reader of the plain
/// [`Actuation`] ignores the trailer.
pub fn encode_actuation(actuation: &Actuation, promise: Option<&Promise>) -> Vec<u8> {
    let mut bytes = encode(actuation);
    if let Some(promise) = promise {
        bytes.reserve(8 + promise.changes.len() * CHANGE_BYTES);
        bytes.extend_from_slice(&promise.through.to_le_bytes());
        for (step, command) in &promise.changes {
            bytes.extend_from_slice(&step.to_le_bytes());
            bytes.extend_from_slice(&command.body.to_le_bytes());
            for v in [command.local_vx_mps, command.local_vy_mps, command.omega_radps] {
                bytes.extend_from_slice(&v.to_le_bytes());
            }
        }
    }
    bytes
}

/// Decodes an actuation and its promise, if it has one. A promise whose
/// changes are not for states after the actuation's, up to `through`, in
/// order, is refused with the message.
pub fn decode_actuation(bytes: &[u8]) -> Result<(Actuation, Option<Promise>), DecodeError> {
    let (actuation, rest) = decode_with_rest::<Actuation>(bytes)?;
    let malformed = |reason: String| DecodeError::Malformed { kind: Actuation::KIND, reason };
    if rest.is_empty() {
        return Ok((actuation, None));
    }
    let (through, changes) = rest.split_at_checked(8).ok_or_else(|| {
        malformed(format!("{} bytes after the commands, where a promise takes 8 and more", rest.len()))
    })?;
    let through = u64::from_le_bytes(through.try_into().expect("8 bytes"));
    if !changes.len().is_multiple_of(CHANGE_BYTES) {
        return Err(malformed(format!(
            "a promise's changes take {CHANGE_BYTES} bytes each, not {} bytes in all",
            changes.len()
        )));
    }
    let f64_at = |b: &[u8], at: usize| f64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"));
    let mut promise = Promise { through, changes: Vec::with_capacity(changes.len() / CHANGE_BYTES) };
    let mut after = actuation.step;
    for change in changes.chunks_exact(CHANGE_BYTES) {
        let step = u64::from_le_bytes(change[..8].try_into().expect("8 bytes"));
        if step <= actuation.step || step > through || step < after {
            return Err(malformed(format!(
                "a promise's change for state {step}, not in order within states {}..={through}",
                actuation.step + 1
            )));
        }
        after = step;
        let body = u32::from_le_bytes(change[8..12].try_into().expect("4 bytes"));
        let command = BodyCommand {
            body,
            local_vx_mps: f64_at(change, 12),
            local_vy_mps: f64_at(change, 20),
            omega_radps: f64_at(change, 28),
        };
        promise.changes.push((step, command));
    }
    Ok((actuation, Some(promise)))
}

/// A velocity to hold a body at.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
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
    /// The command that takes a placed body from `now` to `target` in one
    /// step of `dt_s` (the world moves a placed body by exactly v·dt in
    /// its own frame and turns it by ω·dt): what Tween and Door answer.
    pub fn towards(body: BodyId, now: Pose2, target: Pose2, dt_s: f64) -> BodyCommand {
        let (sin, cos) = now.theta_rad.sin_cos();
        let (dx, dy) = ((target.x_m - now.x_m) / dt_s, (target.y_m - now.y_m) / dt_s);
        BodyCommand {
            body,
            local_vx_mps: cos * dx + sin * dy,
            local_vy_mps: -sin * dx + cos * dy,
            omega_radps: wrap_angle(target.theta_rad - now.theta_rad) / dt_s,
        }
    }

    /// Whether every component is finite (a NaN command is dropped).
    pub fn is_finite(&self) -> bool {
        self.local_vx_mps.is_finite() && self.local_vy_mps.is_finite() && self.omega_radps.is_finite()
    }

    /// Whether it holds the body at rest.
    pub fn is_zero(&self) -> bool {
        self.local_vx_mps == 0.0 && self.local_vy_mps == 0.0 && self.omega_radps == 0.0
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

    fn promise() -> Promise {
        let ramp = |step, v| (step, BodyCommand { body: 3, local_vx_mps: v, local_vy_mps: 0.0, omega_radps: -0.25 });
        Promise { through: 44, changes: vec![ramp(41, 0.505), ramp(42, 0.51), ramp(42, 0.51), ramp(44, 0.52)] }
    }

    #[test]
    fn a_promise_rides_after_the_commands_and_plain_readers_ignore_it() {
        let bytes = encode_actuation(&actuation(), Some(&promise()));
        assert_eq!(decode_actuation(&bytes).unwrap(), (actuation(), Some(promise())));
        assert_eq!(decode::<Actuation>(&bytes).unwrap(), actuation(), "a reader of the actuation alone");
        let steady = Promise { through: 140, changes: Vec::new() };
        let bytes = encode_actuation(&actuation(), Some(&steady));
        assert_eq!(bytes.len(), encode(&actuation()).len() + 8, "a steady promise is its last state alone");
        assert_eq!(decode_actuation(&bytes).unwrap(), (actuation(), Some(steady)));
        let plain = encode_actuation(&actuation(), None);
        assert_eq!(plain, encode(&actuation()));
        assert_eq!(decode_actuation(&plain).unwrap(), (actuation(), None));
        let head = ActuationHead { node: "drive-1".into(), step: 40 };
        assert_eq!(decode::<ActuationHead>(&bytes).unwrap(), head, "a reader of who answered which state");
    }

    #[test]
    fn a_cut_or_overlong_trailer_is_refused() {
        let bytes = encode_actuation(&actuation(), Some(&promise()));
        let plain = encode(&actuation()).len();
        for len in
            (plain + 1..bytes.len()).filter(|len| *len < plain + 8 || !(len - plain - 8).is_multiple_of(CHANGE_BYTES))
        {
            let err = decode_actuation(&bytes[..len]).unwrap_err();
            assert!(err.to_string().contains("promise"), "{err}");
        }
        let mut long = bytes.clone();
        long.push(0);
        assert!(decode_actuation(&long).is_err());
    }

    #[test]
    fn changes_outside_the_promised_states_or_out_of_order_are_refused() {
        let ramp = |step| (step, BodyCommand { body: 3, local_vx_mps: 0.5, local_vy_mps: 0.0, omega_radps: 0.0 });
        for changes in [vec![ramp(40)], vec![ramp(45)], vec![ramp(43), ramp(42)]] {
            let bytes = encode_actuation(&actuation(), Some(&Promise { through: 44, changes }));
            let err = decode_actuation(&bytes).unwrap_err();
            assert!(err.to_string().contains("not in order within states 41..=44"), "{err}");
        }
    }
}
