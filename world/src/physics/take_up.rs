//! A world restored from a checkpoint taken a little earlier, brought up to
//! a later state of the same world as it was published: what a standby
//! world does when it takes over (see `crate::standby`). A published state
//! holds every moving body's pose and velocity, which is all that moves
//! between two world events; what else changes only at events (models,
//! maps, labels) the checkpoint has, since a standby fetches a new one at
//! each event.

use flotilla_wire::description::BodyKind;
use flotilla_wire::world_to_nodes::WorldState;
use rapier2d::prelude::*;

use super::Physics;

/// Why a state cannot be taken up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TakeUpError {
    /// The world changed between the checkpoint and the state.
    #[error("the state is of revision {state}, the checkpoint of {checkpoint}: a world event came between them")]
    Revision {
        /// The state's revision.
        state: u64,
        /// The checkpoint's.
        checkpoint: u64,
    },
    /// The state is older than the checkpoint.
    #[error("the state of step {state} is older than the checkpoint's step {checkpoint}")]
    Older {
        /// The state's step.
        state: u64,
        /// The checkpoint's.
        checkpoint: u64,
    },
}

impl Physics {
    /// Takes up `state`, published by the same world after the checkpoint
    /// this one was restored from: every body in it goes to its pose and
    /// velocity there, each robot's held command becomes the velocity its
    /// body had (the velocity it was held at, unless something stopped
    /// it), and the step and sim time become the state's. Nothing changes
    /// when the state is of another revision or older.
    ///
    /// Contacts and warm-start impulses stay the checkpoint's, and rapier
    /// works them out afresh at the next step: the world goes on as the
    /// lost one would have within what one step's contact solving makes.
    pub fn take_up(&mut self, state: &WorldState) -> Result<(), TakeUpError> {
        if state.revision != self.revision {
            return Err(TakeUpError::Revision { state: state.revision, checkpoint: self.revision });
        }
        if state.step < self.step {
            return Err(TakeUpError::Older { state: state.step, checkpoint: self.step });
        }
        let dt_s = self.step_ns as f64 * 1e-9;
        for moving in &state.bodies {
            let Some(entry) = self.bodies.get(&moving.id) else { continue };
            if entry.kind == BodyKind::Static {
                continue;
            }
            let Some(body) = self.world.bodies.get_mut(entry.handle) else { continue };
            let (pose, twist) = (moving.pose, moving.twist);
            let position = Pose::new(Vector::new(pose.x_m, pose.y_m), pose.theta_rad);
            body.set_position(position, true);
            if body.body_type() == RigidBodyType::KinematicPositionBased {
                body.set_next_kinematic_position(position);
            }
            // rapier's linvel is the centre of mass's: the origin's plus ω × (com − origin)
            let r = body.center_of_mass() - body.translation();
            let omega = twist.omega_radps;
            body.set_linvel(Vector::new(twist.vx_mps - omega * r.y, twist.vy_mps + omega * r.x), true);
            body.set_angvel(omega, true);
            // A placed body's command is where it goes next, which its
            // node sends again at the next state; a robot's is a velocity,
            // which the state gives in the world frame with the heading the
            // body had before the step (the velocity the step was taken at).
            if entry.placed {
                continue;
            }
            if let Some((_, command)) = self.commands.get_mut(&moving.id) {
                let heading_before = pose.theta_rad - omega * dt_s;
                let (s, c) = heading_before.sin_cos();
                command.local_vx_mps = c * twist.vx_mps + s * twist.vy_mps;
                command.local_vy_mps = -s * twist.vx_mps + c * twist.vy_mps;
                command.omega_radps = omega;
            }
        }
        self.step = state.step;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkpoint;
    use flotilla_wire::drive_to_world::BodyCommand;
    use flotilla_world_file::load_world;
    use std::path::Path;

    fn room() -> Physics {
        let world = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/tests/room/world.yaml");
        Physics::new(&load_world(&world).unwrap()).unwrap()
    }

    fn state(p: &Physics) -> WorldState {
        let mut s = WorldState { revision: 0, step: 0, time: Default::default(), step_ns: 0, bodies: vec![] };
        p.state_into(&mut s);
        s
    }

    #[test]
    fn a_world_restored_from_an_older_checkpoint_goes_on_from_a_later_state() {
        // The lost world: a robot driving an arc, checkpointed at 1 s,
        // its state published at 1.5 s, then going on to 2.5 s.
        let mut lost = room();
        let robot = lost.model_body_ids("robot")[0];
        lost.command(BodyCommand { body: robot, local_vx_mps: 0.4, local_vy_mps: 0.0, omega_radps: 0.3 });
        for _ in 0..200 {
            lost.step();
        }
        let saved = checkpoint::save(&lost, false, &Default::default());
        for _ in 0..100 {
            lost.step();
        }
        let published = state(&lost);
        for _ in 0..200 {
            lost.step();
        }
        let lost_at_the_end = state(&lost);

        // The standby: the checkpoint, then the later state.
        let mut standby = room();
        checkpoint::read(&saved).unwrap().restore_into(&mut standby).unwrap();
        standby.take_up(&published).unwrap();
        assert_eq!(state(&standby), published, "exactly the published state");
        for _ in 0..200 {
            standby.step();
        }
        // On as the lost world went, to rounding (the command is worked
        // back from the state's velocity: a few 1e-12 m after 1 s).
        let ended = state(&standby);
        assert_eq!(ended.step, lost_at_the_end.step);
        let (a, b) = (ended.bodies[0].pose, lost_at_the_end.bodies[0].pose);
        assert!((a.x_m - b.x_m).hypot(a.y_m - b.y_m) < 1e-9 && (a.theta_rad - b.theta_rad).abs() < 1e-9, "{a:?} {b:?}");
    }

    #[test]
    fn a_state_of_another_revision_or_an_older_one_is_not_taken_up() {
        let mut p = room();
        for _ in 0..10 {
            p.step();
        }
        let now = state(&p);
        let before = p.step_count();
        let mut older = now.clone();
        older.step = 5;
        assert_eq!(p.take_up(&older), Err(TakeUpError::Older { state: 5, checkpoint: 10 }));
        let mut changed = now.clone();
        changed.step = 20;
        changed.revision += 1;
        assert!(matches!(p.take_up(&changed), Err(TakeUpError::Revision { .. })));
        assert_eq!(p.step_count(), before, "nothing changed");
    }
}
