//! Everything [`Physics`] holds beyond what the world file gives it, as
//! data: rapier's whole world (bodies with their velocities and sleep
//! states, colliders, joints, the broad and narrow phases with their
//! contact manifolds and warm-start impulses, islands), Flotilla's registry
//! of models and bodies, the held commands, the step, the revision and the
//! channel numbers. Restored over a world freshly built from the same file,
//! it gives a world that steps on exactly as the saved one would have.

use flotilla_wire::description::{BodyKind, MapDescription, ModelDescription};
use flotilla_wire::drive_to_world::BodyCommand;
use flotilla_wire::world_to_nodes::BodyId;
use rapier2d::prelude::*;
use serde::{Deserialize, Serialize};

use super::{BodyEntry, EntityLabels, ModelEntry, Physics};
use flotilla_plugins::channels::ChannelNumbers;

/// The state of a [`Physics`], generic over how rapier's world is held: by
/// reference to save, owned when read back (bincode writes both alike).
#[derive(Serialize, Deserialize)]
pub(crate) struct PhysicsSnapshot<W> {
    world: W,
    step: u64,
    revision: u64,
    resets: u64,
    models: Vec<ModelSnapshot>,
    bodies: Vec<(BodyId, RigidBodyHandle, BodyKind, bool)>,
    next_body_id: BodyId,
    commands: Vec<(BodyId, RigidBodyHandle, BodyCommand)>,
    watched: Vec<(BodyId, RigidBodyHandle)>,
    maps: Vec<MapDescription>,
    channels: Vec<String>,
}

#[derive(Serialize, Deserialize)]
struct ModelSnapshot {
    description: ModelDescription,
    handles: Vec<RigidBodyHandle>,
    joints: Vec<ImpulseJointHandle>,
    category: Option<u8>,
    entity_description: Option<String>,
    tags: Vec<String>,
}

impl Physics {
    /// The world's state, to encode.
    pub(crate) fn snapshot(&self) -> PhysicsSnapshot<&PhysicsWorld> {
        PhysicsSnapshot {
            world: &self.world,
            step: self.step,
            revision: self.revision,
            resets: self.resets,
            models: self
                .models
                .iter()
                .map(|m| ModelSnapshot {
                    description: m.description.clone(),
                    handles: m.handles.clone(),
                    joints: m.joints.clone(),
                    category: m.labels.category,
                    entity_description: m.labels.description.clone(),
                    tags: m.labels.tags.clone(),
                })
                .collect(),
            bodies: self.bodies.iter().map(|(&id, b)| (id, b.handle, b.kind, b.placed)).collect(),
            next_body_id: self.next_body_id,
            commands: self.commands.iter().map(|(&id, &(handle, command))| (id, handle, command)).collect(),
            watched: self.watched.clone(),
            maps: self.maps.clone(),
            channels: self.channels.names().to_vec(),
        }
    }

    /// Takes on a saved state: everything but what the world file gives
    /// (layers, named places, settings, the models as loaded, for resets).
    pub(crate) fn restore(&mut self, saved: PhysicsSnapshot<PhysicsWorld>) {
        let PhysicsSnapshot {
            world,
            step,
            revision,
            resets,
            models,
            bodies,
            next_body_id,
            commands,
            watched,
            maps,
            channels,
        } = saved;
        self.world = world;
        self.step = step;
        self.revision = revision;
        self.resets = resets;
        self.models = models
            .into_iter()
            .map(|m| ModelEntry {
                description: m.description,
                handles: m.handles,
                joints: m.joints,
                labels: EntityLabels { category: m.category, description: m.entity_description, tags: m.tags },
            })
            .collect();
        self.bodies =
            bodies.into_iter().map(|(id, handle, kind, placed)| (id, BodyEntry { handle, kind, placed })).collect();
        self.next_body_id = next_body_id;
        self.commands = commands.into_iter().map(|(id, handle, command)| (id, (handle, command))).collect();
        self.watched = watched;
        self.maps = maps;
        self.channels = ChannelNumbers::from_names(channels);
    }
}
