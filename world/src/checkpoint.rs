//! Checkpoints: a running world saved to a file and resumed from it, later
//! or on another machine, free of Zenoh (the world node answers
//! `flotilla checkpoint save` and writes `--checkpoint` files with it). The
//! file's envelope (header, checksum, version) is
//! [`flotilla_wire::checkpoint_file`]'s; the state inside is the physics'.
//!
//! A checkpoint holds what the world owns: every body's pose, velocity and
//! sleep state, joints, contacts, spawned and deleted models (with what was
//! loaded from their files), maps, held commands, sim time and step,
//! whether the run was paused, and what nodes asked the world to keep for
//! them (a lift's floor). It does not hold the world file's own
//! content: a checkpoint is resumed over the same world file, loaded again,
//! and is refused when that file's content (or the seed or step size)
//! differs from the one it was saved from. Everything else nodes hold (a
//! drive's state, noise generators) is theirs: a resumed world is a new
//! world to them, and they start their plugins afresh, taking up what the
//! world kept for them.

use flotilla_wire::checkpoint_file::{self, CheckpointHeader, EnvelopeError, Mismatch};
use std::collections::BTreeMap;

use rapier2d::prelude::PhysicsWorld;
use serde::{Deserialize, Serialize};

use crate::physics::{Physics, PhysicsSnapshot};

/// What nodes asked the world to keep for them, by key.
pub type NodeMemory = BTreeMap<String, Vec<u8>>;

/// A checkpoint read and checked, ready to restore.
pub struct Checkpoint {
    /// What it says about itself.
    pub header: CheckpointHeader,
    state: SavedState<PhysicsWorld, NodeMemory>,
}

/// What a checkpoint's state holds: the physics, generic over how rapier's
/// world is held (by reference to save, owned when read back), and the
/// nodes' memory.
#[derive(Serialize, Deserialize)]
struct SavedState<W, M> {
    physics: PhysicsSnapshot<W>,
    memory: M,
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

/// The checkpoint of `physics`, paused or not, with the nodes' `memory`,
/// as the bytes of a file.
pub fn save(physics: &Physics, paused: bool, memory: &NodeMemory) -> Vec<u8> {
    let header = CheckpointHeader::new(
        physics.world_path().display().to_string(),
        physics.world_digest(),
        physics.seed(),
        physics.step_ns(),
        physics.step_count(),
        paused,
    );
    let state = SavedState { physics: physics.snapshot(), memory };
    let state = bincode::serialize(&state).expect("rapier's world encodes");
    checkpoint_file::assemble(&header, &state)
}

/// Reads a whole checkpoint.
pub fn read(bytes: &[u8]) -> Result<Checkpoint, CheckpointError> {
    let (header, state) = checkpoint_file::open(bytes)?;
    let state = bincode::deserialize(state).map_err(|e| CheckpointError::State(e.to_string()))?;
    Ok(Checkpoint { header, state })
}

impl Checkpoint {
    /// Puts the checkpoint's state into `physics`, a world freshly built
    /// from the world file the checkpoint was saved from (checked: refused,
    /// with `physics` untouched, when it is another); gives back its header
    /// and the nodes' memory.
    pub fn restore_into(self, physics: &mut Physics) -> Result<(CheckpointHeader, NodeMemory), CheckpointError> {
        let header = self.header;
        let world_file = physics.world_path().display().to_string();
        header.matches(&world_file, physics.world_digest(), physics.seed(), physics.step_ns())?;
        physics.restore(self.state.physics);
        Ok((header, self.state.memory))
    }
}

#[cfg(test)]
mod tests;
