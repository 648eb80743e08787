//! The rapier2d world behind a registry of models and body ids, with an
//! explicit [`Physics::step`] and no Zenoh.
//!
//! Flatland's semantics carried over: gravity is off (a top-down world),
//! layers are collision groups (two footprints collide when they share a
//! layer), `collision: false` footprints collide with nothing, sensor
//! footprints detect but do not respond, and a dynamic body whose footprints
//! all have zero density gets Box2D's default mass of 1 kg.

mod build;
mod contacts;
mod error;
mod snapshot;
mod take_up;

use std::collections::BTreeMap;
use std::path::PathBuf;

use flotilla_plugins::channels::{model_topics, ChannelNumbers};
use flotilla_plugins::registry;
use flotilla_plugins::robots::{assign_map, placed_bodies};
use flotilla_wire::claim_book::instance_id;
use flotilla_wire::description::{
    every_layer, BodyKind, LayerDescription, MapDescription, MapTransition, ModelDescription, Place, WorldDescription,
};
use flotilla_wire::drive_to_world::BodyCommand;
use flotilla_wire::geometry::{Pose2, Twist2};
use flotilla_wire::time::SimTime;
use flotilla_wire::world_to_nodes::{BodyId, BodyState, WorldContacts, WorldState};
use rapier2d::prelude::*;

use flotilla_world_file::{NamedPose, WorldSettings, WorldSpec};

pub use error::PhysicsError;
pub(crate) use snapshot::PhysicsSnapshot;
pub use take_up::TakeUpError;

/// The most bodies one world may hold (spawns beyond are refused).
pub const MAX_BODIES: usize = 100_000;

struct ModelEntry {
    description: ModelDescription,
    handles: Vec<RigidBodyHandle>,
    joints: Vec<ImpulseJointHandle>,
    labels: EntityLabels,
}

/// What a user said a model is (simulation_interfaces' SetEntityInfo),
/// beyond what its file says; kept until the model is deleted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EntityLabels {
    /// Its category, if set (otherwise derived from the model).
    pub category: Option<u8>,
    /// Its description, if set.
    pub description: Option<String>,
    /// Its tags.
    pub tags: Vec<String>,
}

struct BodyEntry {
    handle: RigidBodyHandle,
    kind: BodyKind,
    /// Placed by a plugin along a path (kinematic, position-based).
    placed: bool,
}

/// The world's physics: rapier plus Flotilla's registry of models and bodies.
pub struct Physics {
    world: PhysicsWorld,
    step_ns: u64,
    step: u64,
    revision: u64,
    /// How many resets so far (see `WorldDescription::resets`).
    resets: u64,
    seed: u64,
    world_path: PathBuf,
    layer_names: Vec<String>,
    layers: Vec<LayerDescription>,
    models: Vec<ModelEntry>,
    bodies: BTreeMap<BodyId, BodyEntry>,
    next_body_id: BodyId,
    /// The velocity each commanded body is held at, with its rapier
    /// handle: the step reads no other map (a lookup per commanded body
    /// was a tenth of the world's CPU with 1000 robots).
    commands: BTreeMap<BodyId, (RigidBodyHandle, BodyCommand)>,
    /// The bodies whose contacts are published (those of models with a
    /// contact plugin), sorted by id.
    watched: Vec<(BodyId, RigidBodyHandle)>,
    /// The models as loaded, for resets.
    initial_models: Vec<ModelDescription>,
    /// The places the world file names.
    named_poses: Vec<NamedPose>,
    /// The settings the world was built with, for unloading it.
    settings: WorldSettings,
    /// Where the world's origin is on Earth (see `WorldDescription`).
    georeference: Option<[f64; 3]>,
    /// The maps models live on (see `MapDescription`).
    maps: Vec<MapDescription>,
    /// Where robots change maps, for the transition manager.
    transitions: Vec<MapTransition>,
    /// The content digest of the world file loaded.
    world_digest: u64,
    /// The recorded topics' channel numbers, kept across a replaced world
    /// (see `flotilla_plugins::channels`).
    channels: ChannelNumbers,
}

/// What a reset puts back (simulation_interfaces' ResetSimulation scopes
/// that apply to Flotilla; sim time never goes back, see docs/ros2.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResetScope {
    /// Every model of the world file back at its initial pose, at rest;
    /// models of the world file that were deleted come back.
    pub state: bool,
    /// Models spawned since the start are deleted.
    pub spawned: bool,
}

impl Physics {
    /// Builds the physics world of a loaded world, with every model.
    pub fn new(spec: &WorldSpec) -> Result<Physics, PhysicsError> {
        Physics::build(spec, flotilla_world_file::FIRST_BODY_ID, ChannelNumbers::new())
    }

    /// [`Physics::new`], numbering bodies from `first_body_id` and the
    /// topics without a channel number after those of `channels`.
    fn build(spec: &WorldSpec, first_body_id: BodyId, channels: ChannelNumbers) -> Result<Physics, PhysicsError> {
        let step_ns = flotilla_wire::time::step_size_ns(spec.settings.step_size_s).map_err(PhysicsError::StepSize)?;
        let mut world = PhysicsWorld::new();
        world.gravity = Vector::ZERO;
        world.integration_parameters.dt = step_ns as f64 * 1e-9;
        world.integration_parameters.num_solver_iterations = spec.settings.velocity_iterations as usize;
        for (index, layer) in spec.layers.iter().enumerate() {
            build::insert_layer(&mut world, layer, contacts::layer_tag(index));
        }
        let mut physics = Physics {
            world,
            step_ns,
            step: 0,
            revision: 1,
            resets: 0,
            seed: spec.settings.seed,
            world_path: spec.path.clone(),
            layer_names: spec.layer_names.clone(),
            layers: spec.layers.clone(),
            models: Vec::new(),
            bodies: BTreeMap::new(),
            next_body_id: first_body_id,
            commands: BTreeMap::new(),
            watched: Vec::new(),
            initial_models: spec.models.clone(),
            named_poses: spec.named_poses.clone(),
            settings: spec.settings.clone(),
            georeference: spec.georeference,
            maps: spec.maps.clone(),
            transitions: spec.transitions.iter().flat_map(|(_, t)| t.clone()).collect(),
            world_digest: spec.content_digest(),
            channels,
        };
        for model in &spec.models {
            physics.add_model(model.clone())?;
        }
        physics.revision = 1;
        Ok(physics)
    }

    /// Replaces the whole world, layers and models, by `spec`
    /// (simulation_interfaces' LoadWorld). Sim time goes on (it never goes
    /// back, as for resets), the description's revision moves on, and body
    /// ids go on from the last one given, so no node mistakes a new body for
    /// an old one. A world with another step size is refused: every node
    /// paces itself by the step it started with.
    pub fn replace_world(&mut self, spec: &WorldSpec) -> Result<(), PhysicsError> {
        let mut next = Physics::build(spec, self.next_body_id, self.channels.clone())?;
        if next.step_ns != self.step_ns {
            return Err(PhysicsError::StepSize(format!(
                "the world steps {} s and {} steps {} s; a world's step size cannot change while it runs",
                self.step_ns as f64 * 1e-9,
                spec.path.display(),
                spec.settings.step_size_s
            )));
        }
        next.step = self.step;
        next.revision = self.revision + 1;
        *self = next;
        Ok(())
    }

    /// Empties the world (simulation_interfaces' UnloadWorld): no layer,
    /// no model, no world file; sim time and the step size go on.
    pub fn unload(&mut self) -> Result<(), PhysicsError> {
        let empty = WorldSpec {
            path: PathBuf::new(),
            settings: self.settings.clone(),
            layer_names: Vec::new(),
            layers: Vec::new(),
            models: Vec::new(),
            world_plugin_types: Vec::new(),
            named_poses: Vec::new(),
            georeference: None,
            maps: Vec::new(),
            transitions: None,
        };
        self.replace_world(&empty)
    }

    /// Whether a world file is loaded (not after [`Physics::unload`]).
    pub fn has_world(&self) -> bool {
        !self.world_path.as_os_str().is_empty()
    }

    /// The places the world file names.
    pub fn named_poses(&self) -> &[NamedPose] {
        &self.named_poses
    }

    /// The world seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The content digest of the world file loaded
    /// ([`WorldSpec::content_digest`]): a checkpoint is resumed only over
    /// a world of the same.
    pub fn world_digest(&self) -> u64 {
        self.world_digest
    }

    /// Step size in nanoseconds.
    pub fn step_ns(&self) -> u64 {
        self.step_ns
    }
    /// Number of steps taken.
    pub fn step_count(&self) -> u64 {
        self.step
    }
    /// Current sim time.
    pub fn time(&self) -> SimTime {
        SimTime::at_step(self.step, self.step_ns)
    }
    /// Description revision.
    pub fn revision(&self) -> u64 {
        self.revision
    }
    /// Number of models.
    pub fn model_count(&self) -> usize {
        self.models.len()
    }
    /// Number of robots: models with a drive plugin.
    pub fn robot_count(&self) -> usize {
        use flotilla_plugins::robots::RobotModel;
        self.models.iter().filter(|m| m.description.is_robot()).count()
    }
    /// Every plugin instance a Flotilla node can serve: `<model>/<plugin>/<aspect>`.
    pub fn servable_instances(&self) -> Vec<String> {
        let mut out = Vec::new();
        for m in &self.models {
            for p in &m.description.plugins {
                let Some(registered) = registry::plugin_type(&p.plugin_type) else { continue };
                for role in registered.roles {
                    out.push(instance_id(&m.description.name, &p.name, role.aspect));
                }
            }
        }
        out
    }
    /// Every layer name.
    pub fn layer_names(&self) -> &[String] {
        &self.layer_names
    }
    /// The world file.
    pub fn world_path(&self) -> &std::path::Path {
        &self.world_path
    }
    /// Whether a model of that name exists.
    pub fn has_model(&self, name: &str) -> bool {
        self.models.iter().any(|m| m.description.name == name)
    }

    /// Adds a loaded model, assigning body ids. Refuses duplicates.
    pub fn add_model(&mut self, mut model: ModelDescription) -> Result<(), PhysicsError> {
        if self.has_model(&model.name) {
            return Err(PhysicsError::ModelExists(model.name));
        }
        if self.bodies.len() + model.bodies.len() > MAX_BODIES {
            return Err(PhysicsError::TooManyBodies { held: self.bodies.len(), max: MAX_BODIES });
        }
        if !model.map.is_empty() && !self.maps.iter().any(|m| m.name == model.map) {
            return Err(PhysicsError::NoMap(model.map));
        }
        assign_map(&mut model, &self.maps, every_layer(self.layer_names.len()));
        let placed_bodies =
            placed_bodies(&model, &self.layer_names).map_err(|e| PhysicsError::BadPlugin(e.to_string()))?;
        let mut handles = Vec::with_capacity(model.bodies.len());
        for body in &mut model.bodies {
            body.id = self.next_body_id;
            self.next_body_id += 1;
            let placed = placed_bodies.contains(&body.name);
            let tag = contacts::body_tag(body.id);
            let handle = build::insert_body(&mut self.world, body, model.layer_mask, tag, placed);
            self.bodies.insert(body.id, BodyEntry { handle, kind: body.kind, placed });
            handles.push(handle);
        }
        if model.plugins.iter().any(|p| registry::watches_contacts(&p.plugin_type)) {
            self.watched.extend(model.bodies.iter().map(|b| b.id).zip(handles.iter().copied()));
        }
        let joints = model
            .joints
            .iter()
            .map(|joint| {
                let index = |name: &str| model.bodies.iter().position(|b| b.name == name).unwrap_or(0);
                let (a, b) = (handles[index(&joint.bodies[0])], handles[index(&joint.bodies[1])]);
                build::insert_joint(&mut self.world, joint, a, b)
            })
            .collect();
        self.channels.add(&model_topics(&model, &self.layer_names));
        self.models.push(ModelEntry { description: model, handles, joints, labels: EntityLabels::default() });
        self.revision += 1;
        Ok(())
    }

    /// Removes a model with its bodies, joints and commands.
    pub fn remove_model(&mut self, name: &str) -> Result<(), PhysicsError> {
        let index = self.model_index(name)?;
        let entry = self.models.remove(index);
        for joint in entry.joints {
            self.world.remove_impulse_joint(joint);
        }
        for &handle in &entry.handles {
            self.world.remove_body_with_colliders(handle, true);
        }
        for body in &entry.description.bodies {
            self.bodies.remove(&body.id);
            self.commands.remove(&body.id);
        }
        self.watched.retain(|(_, handle)| !entry.handles.contains(handle));
        self.revision += 1;
        Ok(())
    }

    /// Teleports a model rigidly so that its model frame becomes `pose`,
    /// each body keeping its offset from the frame *as it is now* (a robot
    /// that drove 2 m from its frame stays 2 m from it); velocities are
    /// zeroed. What users and transitions ask for is
    /// [`Physics::place_model`].
    pub fn move_model(&mut self, name: &str, pose: Pose2) -> Result<(), PhysicsError> {
        if !pose.is_finite() {
            return Err(PhysicsError::NonFinitePose(pose));
        }
        let index = self.model_index(name)?;
        let old = self.models[index].description.pose;
        let entry = &mut self.models[index];
        for handle in &entry.handles {
            let Some(body) = self.world.bodies.get_mut(*handle) else { continue };
            let current = body_pose(body);
            // current pose in the old model frame, re-expressed in the new one
            let (s, c) = (-old.theta_rad).sin_cos();
            let (dx, dy) = (current.x_m - old.x_m, current.y_m - old.y_m);
            let local = Pose2::new(c * dx - s * dy, s * dx + c * dy, current.theta_rad - old.theta_rad);
            let target = pose.compose(&local);
            body.set_position(Pose::new(Vector::new(target.x_m, target.y_m), target.theta_rad), true);
            body.set_linvel(Vector::ZERO, true);
            body.set_angvel(0.0, true);
        }
        entry.description.pose = pose;
        self.revision += 1;
        Ok(())
    }

    /// Teleports a model rigidly so that its first body lands at `pose`
    /// (the inverse of [`Physics::model_state`]), the other bodies where
    /// they are relative to it; velocities are zeroed. This is Flatland's
    /// MoveModel, and what `move`, `set-map --pose`, a map transition's new
    /// location and SetEntityState do: the robot lands at the pose however
    /// far it drove since it was placed.
    pub fn place_model(&mut self, name: &str, pose: Pose2) -> Result<(), PhysicsError> {
        if !pose.is_finite() {
            return Err(PhysicsError::NonFinitePose(pose));
        }
        let index = self.model_index(name)?;
        let (body_pose, _) = self.model_state(name)?;
        let model_pose = self.models[index].description.pose;
        let body_in_model = model_pose.inverse().compose(&body_pose);
        self.move_model(name, pose.compose(&body_in_model.inverse()))
    }

    /// Puts a model on map `map` (see `MapDescription`): its footprints
    /// collide and are seen only in that map's layers from the next step
    /// on. With `only_from`, only if the model is on that map now: `Ok(false)`
    /// when it is not (nothing changes). Does not move the model.
    pub fn set_map(&mut self, name: &str, map: &str, only_from: Option<&str>) -> Result<bool, PhysicsError> {
        let index = self.model_index(name)?;
        if !self.maps.iter().any(|m| m.name == map) {
            return Err(PhysicsError::NoMap(map.to_string()));
        }
        if only_from.is_some_and(|from| from != self.models[index].description.map) {
            return Ok(false);
        }
        self.put_on_map(index, map);
        self.revision += 1;
        Ok(true)
    }

    /// Puts model `index` on `map` (`""`: none) and its footprints in that
    /// map's layers.
    fn put_on_map(&mut self, index: usize, map: &str) {
        let entry = &mut self.models[index];
        entry.description.map = map.to_string();
        assign_map(&mut entry.description, &self.maps, every_layer(self.layer_names.len()));
        let mask = entry.description.layer_mask;
        for (handle, body) in entry.handles.iter().zip(&entry.description.bodies) {
            build::set_layers(&mut self.world, *handle, body, mask);
        }
    }

    /// Every model as registered (bodies at the poses they were placed at,
    /// `pose` as last spawned or moved), in load / spawn order. Cheaper than
    /// [`Physics::description`], which copies everything at current poses.
    pub fn models(&self) -> impl Iterator<Item = &ModelDescription> {
        self.models.iter().map(|m| &m.description)
    }

    /// Every model name, in load / spawn order.
    pub fn model_names(&self) -> impl Iterator<Item = &str> {
        self.models().map(|m| m.name.as_str())
    }

    /// Ground truth of a model: the pose and world-frame twist of its first
    /// body (Flatland's "base" body by convention).
    pub fn model_state(&self, name: &str) -> Result<(Pose2, Twist2), PhysicsError> {
        let entry = &self.models[self.model_index(name)?];
        let body = entry
            .handles
            .first()
            .and_then(|h| self.world.bodies.get(*h))
            .ok_or_else(|| PhysicsError::NoBody(name.to_string()))?;
        Ok((body_pose(body), origin_twist(body)))
    }

    /// A model's labels (see [`EntityLabels`]).
    pub fn labels(&self, name: &str) -> Result<&EntityLabels, PhysicsError> {
        Ok(&self.models[self.model_index(name)?].labels)
    }

    /// Replaces a model's labels.
    pub fn set_labels(&mut self, name: &str, labels: EntityLabels) -> Result<(), PhysicsError> {
        let index = self.model_index(name)?;
        self.models[index].labels = labels;
        Ok(())
    }

    /// The current pose of each body of a model, in the model's body order.
    pub fn body_poses(&self, name: &str) -> Result<Vec<Pose2>, PhysicsError> {
        let entry = &self.models[self.model_index(name)?];
        Ok(entry.handles.iter().filter_map(|h| self.world.bodies.get(*h)).map(body_pose).collect())
    }

    /// Sets the world-frame velocity of every body of a model, once: the
    /// bodies then move freely (or as their drive commands).
    pub fn set_model_twist(&mut self, name: &str, twist: Twist2) -> Result<(), PhysicsError> {
        if !(twist.vx_mps.is_finite() && twist.vy_mps.is_finite() && twist.omega_radps.is_finite()) {
            return Err(PhysicsError::NonFiniteTwist(twist));
        }
        let index = self.model_index(name)?;
        for handle in &self.models[index].handles {
            let Some(body) = self.world.bodies.get_mut(*handle) else { continue };
            let omega = twist.omega_radps;
            let r = body.center_of_mass() - body.translation();
            body.set_linvel(Vector::new(twist.vx_mps - omega * r.y, twist.vy_mps + omega * r.x), true);
            body.set_angvel(omega, true);
        }
        Ok(())
    }

    /// Puts the world back as loaded, within `scope`. Sim time keeps going.
    pub fn reset(&mut self, scope: ResetScope) -> Result<(), PhysicsError> {
        let initial = self.initial_models.clone();
        let is_initial = |name: &str| initial.iter().any(|m| m.name == name);
        if scope.spawned {
            let spawned: Vec<String> =
                self.model_names().filter(|name| !is_initial(name)).map(str::to_string).collect();
            for name in spawned {
                self.remove_model(&name)?;
            }
        }
        if scope.state {
            for model in &initial {
                let Ok(index) = self.model_index(&model.name) else {
                    self.add_model(model.clone())?;
                    continue;
                };
                let entry = &mut self.models[index];
                for (handle, body) in entry.handles.iter().zip(&model.bodies) {
                    let Some(rb) = self.world.bodies.get_mut(*handle) else { continue };
                    rb.set_position(Pose::new(Vector::new(body.pose.x_m, body.pose.y_m), body.pose.theta_rad), true);
                    rb.set_linvel(Vector::ZERO, true);
                    rb.set_angvel(0.0, true);
                }
                entry.description.pose = model.pose;
                for body in &entry.description.bodies {
                    self.commands.remove(&body.id);
                }
                // The map it was loaded on (the loader put robots on theirs).
                if entry.description.map != model.map {
                    self.put_on_map(index, &model.map);
                }
            }
        }
        self.revision += 1;
        self.resets += 1;
        Ok(())
    }

    fn model_index(&self, name: &str) -> Result<usize, PhysicsError> {
        self.models
            .iter()
            .position(|m| m.description.name == name)
            .ok_or_else(|| PhysicsError::NoModel(name.to_string()))
    }

    /// Holds a body at a velocity from now on (until replaced or cleared).
    /// Commands for unknown or static bodies (unless a plugin places them),
    /// and non-finite ones, are refused.
    pub fn command(&mut self, command: BodyCommand) -> bool {
        match self.bodies.get(&command.body) {
            // A placed body held at rest is one left alone: it stays where
            // it was put, and the step need not place it again (idle doors).
            Some(entry) if entry.placed && command.is_finite() && command.is_zero() => {
                self.commands.remove(&command.body);
                true
            }
            Some(entry) if (entry.kind != BodyKind::Static || entry.placed) && command.is_finite() => {
                self.commands.insert(command.body, (entry.handle, command));
                true
            }
            _ => false,
        }
    }

    /// Advances the world by one step: commands first, then rapier.
    pub fn step(&mut self) {
        let dt_s = self.step_ns as f64 * 1e-9;
        for (handle, command) in self.commands.values() {
            let Some(body) = self.world.bodies.get_mut(*handle) else { continue };
            if body.body_type() == RigidBodyType::KinematicPositionBased {
                body.set_next_kinematic_position(placed_after(body, command, dt_s));
                continue;
            }
            // A body held at a velocity never sleeps. rapier puts a body to
            // sleep once its farthest point has moved slowly for 0.5 s, and
            // sleeping zeroes its velocity for that step: a small robot
            // turning on the spot at 0.5 rad/s lost one step in 100, 1 % of
            // its yaw rate (Box2D, whose sleep test has an angular tolerance
            // of 2°/s, never slept it).
            let activation = body.activation_mut();
            activation.normalized_linear_threshold = -1.0;
            activation.angular_threshold = -1.0;
            // The rotation's own cosine and sine: no angle to work out and
            // turn back (atan2 and sin_cos were 7.5 % of the world's step
            // with 1000 commanded robots).
            let rotation = body.rotation();
            let (c, s) = (rotation.cos(), rotation.sin());
            let origin = body.translation();
            let origin_velocity = Vector::new(
                c * command.local_vx_mps - s * command.local_vy_mps,
                s * command.local_vx_mps + c * command.local_vy_mps,
            );
            // rapier's linvel is the centre of mass's: add ω × (com − origin)
            let r = body.center_of_mass() - origin;
            let omega = command.omega_radps;
            body.set_linvel(origin_velocity + Vector::new(-omega * r.y, omega * r.x), true);
            body.set_angvel(omega, true);
        }
        self.world.step();
        self.step += 1;
    }

    /// Fills `out` with the state of every non-static body (reusing its
    /// allocation: no per-body allocation on this path).
    pub fn state_into(&self, out: &mut WorldState) {
        out.revision = self.revision;
        out.step = self.step;
        out.time = self.time();
        out.step_ns = self.step_ns;
        out.bodies.clear();
        for (&id, entry) in &self.bodies {
            if entry.kind == BodyKind::Static {
                continue;
            }
            let Some(body) = self.world.bodies.get(entry.handle) else { continue };
            out.bodies.push(BodyState { id, pose: body_pose(body), twist: origin_twist(body) });
        }
    }

    /// Whether any body is watched for contacts (a model has a Bumper or
    /// a BoolSensor): only then are contacts published.
    pub fn watches_contacts(&self) -> bool {
        !self.watched.is_empty()
    }

    /// Fills `out` with the contacts of the watched bodies after the last
    /// step (reusing its allocation).
    pub fn contacts_into(&self, out: &mut WorldContacts) {
        out.revision = self.revision;
        out.step = self.step;
        out.time = self.time();
        contacts::collect(&self.world, &self.watched, self.step_ns as f64 * 1e-9, &mut out.contacts);
    }

    /// The current description: layers, models, bodies at their current poses.
    pub fn description(&self) -> WorldDescription {
        let models = self
            .models
            .iter()
            .map(|entry| {
                let mut model = entry.description.clone();
                for (body, handle) in model.bodies.iter_mut().zip(&entry.handles) {
                    if let Some(rb) = self.world.bodies.get(*handle) {
                        body.pose = body_pose(rb);
                    }
                }
                model
            })
            .collect();
        WorldDescription {
            revision: self.revision,
            resets: self.resets,
            step_ns: self.step_ns,
            seed: self.seed,
            world_path: self.world_path.to_string_lossy().into_owned(),
            layer_names: self.layer_names.clone(),
            layers: self.layers.clone(),
            models,
            georeference: self.georeference,
            maps: self.maps.clone(),
            transitions: self.transitions.clone(),
            channels: self.channels.names().to_vec(),
            places: self
                .named_poses
                .iter()
                .map(|p| Place { name: p.name.clone(), pose: p.pose, tags: p.tags.clone() })
                .collect(),
        }
    }

    /// The bodies of a model, by id.
    pub fn model_body_ids(&self, name: &str) -> Vec<BodyId> {
        self.models
            .iter()
            .find(|m| m.description.name == name)
            .map(|m| m.description.bodies.iter().map(|b| b.id).collect())
            .unwrap_or_default()
    }
}

/// Where a placed body's origin goes in one step of `dt_s` at `command`'s
/// velocity: moved by exactly v·dt in its own frame and turned by ω·dt, so
/// that a plugin that commands "from here to the next pose in one step"
/// (Tween) lands on that pose to the last bit of rounding. (Integrating
/// the velocity about the centre of mass, as rapier does for other bodies,
/// would miss it by up to (ω·dt)²/2 times the centre's offset.)
fn placed_after(body: &RigidBody, command: &BodyCommand, dt_s: f64) -> Pose {
    let rotation = body.rotation();
    let (c, s) = (rotation.cos(), rotation.sin());
    let (vx, vy) = (command.local_vx_mps, command.local_vy_mps);
    let origin = body.translation() + Vector::new(c * vx - s * vy, s * vx + c * vy) * dt_s;
    Pose::new(origin, rotation.angle() + command.omega_radps * dt_s)
}

fn body_pose(body: &RigidBody) -> Pose2 {
    let t = body.translation();
    Pose2::new(t.x, t.y, body.rotation().angle())
}

/// Velocity of the body origin (not the centre of mass) in the world frame.
fn origin_twist(body: &RigidBody) -> Twist2 {
    let omega = body.angvel();
    let r = body.translation() - body.center_of_mass();
    let v = body.linvel() + Vector::new(-omega * r.y, omega * r.x);
    Twist2 { vx_mps: v.x, vy_mps: v.y, omega_radps: omega }
}

#[cfg(test)]
mod tests;
