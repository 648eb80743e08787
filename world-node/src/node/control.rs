//! The control services: spawn, delete, move, pause, resume, step.

use flotilla_protocol::control::{ClockMode, ControlReply, ControlRequest};
use flotilla_protocol::world_to_nodes::WorldChange;

use crate::loader::{load_model, resolve_path};
use crate::physics::Physics;

/// Run state the control services change besides the physics.
#[derive(Debug)]
pub struct RunState {
    /// Stepping is paused.
    pub paused: bool,
    /// Steps still to take while paused (from `step N`).
    pub steps_pending: u64,
    /// How steps are paced.
    pub clock: ClockMode,
    /// Sim seconds per wall second in realtime mode.
    pub real_time_factor: f64,
    /// Set when the clock changed, so that the pacer restarts.
    pub clock_changed: bool,
}

impl RunState {
    /// Running (or paused) in `clock` mode at `real_time_factor`.
    pub fn new(clock: ClockMode, real_time_factor: f64, paused: bool) -> RunState {
        RunState { paused, steps_pending: 0, clock, real_time_factor, clock_changed: false }
    }
}

/// The largest `step N` accepted in one request.
pub const MAX_STEPS_PER_REQUEST: u64 = 10_000_000;

/// Carries out a request; returns the reply and the world change to announce.
pub fn handle(
    physics: &mut Physics,
    run: &mut RunState,
    request: ControlRequest,
) -> (ControlReply, Option<WorldChange>) {
    let result = match request {
        ControlRequest::Spawn { yaml_path, name, namespace, pose } => {
            spawn(physics, &yaml_path, &name, &namespace, pose)
                .map(|()| Some(WorldChange::ModelSpawned { model: name }))
        }
        ControlRequest::Delete { name } => {
            physics.remove_model(&name).map(|()| Some(WorldChange::ModelDeleted { model: name }))
        }
        ControlRequest::Move { name, pose } => {
            physics.move_model(&name, pose).map(|()| Some(WorldChange::ModelMoved { model: name, pose }))
        }
        ControlRequest::Pause => {
            run.paused = true;
            run.steps_pending = 0;
            Ok(None)
        }
        ControlRequest::Resume => {
            run.paused = false;
            Ok(None)
        }
        ControlRequest::Step { steps } if steps == 0 || steps > MAX_STEPS_PER_REQUEST => {
            Err(format!("steps must be 1..={MAX_STEPS_PER_REQUEST}, got {steps}"))
        }
        ControlRequest::Step { steps } => {
            run.paused = true;
            run.steps_pending = run.steps_pending.saturating_add(steps);
            Ok(None)
        }
        ControlRequest::SetClock { real_time_factor: Some(f), .. } if !(f.is_finite() && f > 0.0) => {
            Err(format!("the real-time factor must be a positive number, got {f}"))
        }
        ControlRequest::SetClock { mode, real_time_factor } => {
            run.clock = mode;
            if let Some(f) = real_time_factor {
                run.real_time_factor = f;
            }
            run.clock_changed = true;
            Ok(None)
        }
    };
    match result {
        Ok(change) => (ControlReply { success: true, message: String::new(), revision: physics.revision() }, change),
        Err(message) => (ControlReply { success: false, message, revision: physics.revision() }, None),
    }
}

fn spawn(
    physics: &mut Physics,
    yaml_path: &str,
    name: &str,
    namespace: &str,
    pose: flotilla_protocol::geometry::Pose2,
) -> Result<(), String> {
    if name.is_empty() {
        return Err("the model name must not be empty".into());
    }
    flotilla_protocol::keys::check_key_chunk("model name", name)?;
    if physics.has_model(name) {
        return Err(format!("a model named \"{name}\" already exists"));
    }
    if !pose.is_finite() {
        return Err(format!("pose must be finite, got {pose:?}"));
    }
    let path = resolve_path(physics.world_path(), yaml_path);
    let layer_names = physics.layer_names().to_vec();
    let model = load_model(&path, name, namespace, pose, &layer_names).map_err(|e| e.to_string())?;
    physics.add_model(model)
}
