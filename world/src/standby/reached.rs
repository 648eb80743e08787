//! How far the nodes got in the world a standby follows, so that a world
//! taken over outside lockstep never starts behind them.
//!
//! A standby's last state can be behind what the nodes saw: the states
//! still on the standby's own link when the world went, or those dropped
//! on it under load (states reach a standby droppable: see `standby`). A world that took
//! over there would publish states the nodes had already had, at sim times
//! they had already passed: their tracker would take it for a new world,
//! and odometry and `/clock` would go back in time. The drives' answers
//! say how far the nodes got (an answer names the state it answers, and a
//! drive answers each state it gets), so the new world steps on to the
//! highest state answered before it publishes, each robot held at the
//! velocity of its last state, as the world would have moved it without a
//! new command. In lockstep the standby re-runs those steps exactly instead
//! (`standby/lockstep.rs`), and no node is ever more than a state ahead.

use flotilla_wire::codec::decode;
use flotilla_wire::drive_to_world::ActuationHead;

use crate::physics::Physics;

/// The most sim time a new world steps on by itself to reach the nodes. An
/// answer further ahead than this of the last state received is not taken
/// for this world's: a standby whose link was cut for that long would not
/// have gone on following it (see `RELINK_AFTER`).
const MOST_STEPPED_ON_S: f64 = 10.0;

/// The highest state the drives answered, in the world followed now.
#[derive(Debug, Default, Clone)]
pub struct NodesReached {
    /// The step of the last state received.
    last_state: Option<u64>,
    /// The highest state a drive answered since the world began (a state
    /// of a lower step than the one before is a new world).
    answered: Option<u64>,
}

impl NodesReached {
    /// A world state of step `step` was received.
    pub fn state(&mut self, step: u64) {
        if self.last_state.is_some_and(|last| step < last) {
            self.answered = None;
        }
        self.last_state = Some(step);
    }

    /// A drive's answer (an actuation's encoding) was received.
    pub fn answer(&mut self, bytes: &[u8]) {
        if let Ok(head) = decode::<ActuationHead>(bytes) {
            self.answered = self.answered.max(Some(head.step));
        }
    }

    /// Steps `world`, taken over by a standby, on to the highest state the
    /// drives answered when that is ahead of it, and says so in the log
    /// (`gone`, the world taken over). Nothing is done when it is further
    /// ahead than [`MOST_STEPPED_ON_S`].
    pub fn step_on(&self, world: &mut Physics, gone: &str) {
        let at = world.step_count();
        let Some(to) = self.answered.filter(|&to| to > at) else { return };
        let step_s = world.step_ns() as f64 * 1e-9;
        let ahead_s = (to - at) as f64 * step_s;
        if ahead_s > MOST_STEPPED_ON_S {
            tracing::warn!(
                "{gone} gone: the drives answered state {to}, {ahead_s:.1} s of sim time ahead of this standby's last \
                 state ({at}); not stepping on to it (more than {MOST_STEPPED_ON_S} s: an answer of another run?)"
            );
            return;
        }
        for _ in at..to {
            world.step();
        }
        tracing::info!(
            "{gone} gone: stepped on from state {at} to {to} ({:.0} ms), the last the drives answered, before \
             publishing: this standby had missed the states between",
            ahead_s * 1e3
        );
    }
}

#[cfg(test)]
mod tests {
    use flotilla_wire::codec::encode;
    use flotilla_wire::drive_to_world::{Actuation, BodyCommand};

    use super::*;

    fn room() -> Physics {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/tests/room/world.yaml");
        Physics::new(&flotilla_world_file::load_world(&path).expect("the test room loads")).unwrap()
    }

    fn answer(step: u64) -> Vec<u8> {
        let command = BodyCommand { body: 1, local_vx_mps: 0.5, local_vy_mps: 0.0, omega_radps: 0.0 };
        encode(&Actuation { node: "drive".into(), step, commands: vec![command] })
    }

    #[test]
    fn a_world_taken_over_behind_the_drives_steps_on_to_the_last_state_they_answered() {
        let mut reached = NodesReached::default();
        reached.state(10);
        reached.answer(&answer(10));
        reached.answer(&answer(12));
        reached.answer(&answer(11));
        let mut world = room();
        reached.step_on(&mut world, "world-a");
        assert_eq!(world.step_count(), 12, "stepped on to the highest state answered");
        reached.step_on(&mut world, "world-a");
        assert_eq!(world.step_count(), 12, "not past it");
    }

    #[test]
    fn answers_of_a_world_before_a_restart_or_far_ahead_are_not_stepped_on_to() {
        let mut reached = NodesReached::default();
        reached.state(500);
        reached.answer(&answer(500));
        reached.state(3);
        let mut world = room();
        reached.step_on(&mut world, "world-a");
        assert_eq!(world.step_count(), 0, "time went back: a new world, whose drives answered nothing yet");
        reached.answer(&answer(1_000_000));
        reached.step_on(&mut world, "world-a");
        assert_eq!(world.step_count(), 0, "1.4 h of sim time ahead");
    }
}
