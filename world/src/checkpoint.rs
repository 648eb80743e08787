//! Checkpoints: a running world saved to a file and resumed from it, later
//! or on another machine, free of Zenoh (the world node answers
//! `flotilla checkpoint save` and writes `--checkpoint` files with it). The
//! file's envelope (header, checksum, version) is
//! [`flotilla_wire::checkpoint_file`]'s; the state inside is the physics'.
//!
//! A checkpoint holds what the world owns: every body's pose, velocity and
//! sleep state, joints, contacts, spawned and deleted models (with what was
//! loaded from their files), maps, held commands, sim time and step, and
//! whether the run was paused. It does not hold the world file's own
//! content: a checkpoint is resumed over the same world file, loaded again,
//! and is refused when that file's content (or the seed or step size)
//! differs from the one it was saved from. What nodes hold (a drive's
//! state, noise generators, batteries, lifts) is theirs: a resumed world is
//! a new world to them, and they start their plugins afresh.

use flotilla_wire::checkpoint_file::{self, CheckpointHeader, EnvelopeError, Mismatch};
use rapier2d::prelude::PhysicsWorld;

use crate::physics::{Physics, PhysicsSnapshot};

/// A checkpoint read and checked, ready to restore.
pub struct Checkpoint {
    /// What it says about itself.
    pub header: CheckpointHeader,
    physics: PhysicsSnapshot<PhysicsWorld>,
}

/// Why a checkpoint cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CheckpointError {
    /// Not a whole, sound checkpoint of this Flotilla.
    #[error(transparent)]
    Envelope(#[from] EnvelopeError),
    /// Its state does not decode (a bug, or a file forged to pass the
    /// envelope's checks).
    #[error("its state does not decode: {0}")]
    State(String),
    /// Saved from another world, seed or step size.
    #[error(transparent)]
    Mismatch(#[from] Mismatch),
}

/// The checkpoint of `physics`, paused or not, as the bytes of a file.
pub fn save(physics: &Physics, paused: bool) -> Vec<u8> {
    let header = CheckpointHeader::new(
        physics.world_path().display().to_string(),
        physics.world_digest(),
        physics.seed(),
        physics.step_ns(),
        physics.step_count(),
        paused,
    );
    let state = bincode::serialize(&physics.snapshot()).expect("rapier's world encodes");
    checkpoint_file::assemble(&header, &state)
}

/// Reads a whole checkpoint.
pub fn read(bytes: &[u8]) -> Result<Checkpoint, CheckpointError> {
    let (header, state) = checkpoint_file::open(bytes)?;
    let physics = bincode::deserialize(state).map_err(|e| CheckpointError::State(e.to_string()))?;
    Ok(Checkpoint { header, physics })
}

impl Checkpoint {
    /// Puts the checkpoint's state into `physics`, a world freshly built
    /// from the world file the checkpoint was saved from (checked: refused,
    /// with `physics` untouched, when it is another).
    pub fn restore_into(self, physics: &mut Physics) -> Result<CheckpointHeader, CheckpointError> {
        let header = self.header;
        let world_file = physics.world_path().display().to_string();
        header.matches(&world_file, physics.world_digest(), physics.seed(), physics.step_ns())?;
        physics.restore(self.physics);
        Ok(header)
    }
}

#[cfg(test)]
mod tests;
