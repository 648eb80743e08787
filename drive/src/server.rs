//! The drive node's plugin: every selected `DiffDrive` and `TricycleDrive`
//! instance, answered on the thread that receives each message.
//!
//! On each world state (step k) it advances every drive model by one step
//! and actuates: one batched
//! [`Actuation`](flotilla_wire::drive_to_world::Actuation) with the
//! velocity of each driven body for step k+1, which the world also takes as
//! the node's lockstep report of step k. `cmd_vel` arrives as CDR
//! `geometry_msgs/Twist` or `TwistStamped` on the model-namespaced ROS key.
//!
//! In lockstep the world waits on every drive's answer to every state, so
//! the plugin answers where the state arrives
//! ([`Answering::OnReceivingThread`]): one thread wake-up less on the
//! critical path of every step.
//!
//! In realtime and external clock modes, a plain `Twist` is not held until
//! the next state: the drive redoes its last step with it and actuates that
//! body at once, so the world applies it at its very next step (one step of
//! latency instead of two). In lockstep, commands only take effect at
//! states, which keeps runs independent of message timing; in fast mode
//! too, as there is no wall-clock latency to save.

use std::collections::BTreeMap;

use flotilla_messages::geometry_msgs::{decode_cmd_vel, Twist, TwistStamped};
use flotilla_messages::sensor_msgs::JointState;
use flotilla_messages::std_msgs::Bool;
use flotilla_node_kit::runtime::{Answering, BadInput, NodePlugin, Outbox, Rebuild};
use flotilla_plugins::battery::BatteryConfig;
use flotilla_plugins::diff_drive::DiffDriveConfig;
use flotilla_plugins::registry::Role;
use flotilla_plugins::tricycle_drive::TricycleDriveConfig;
use flotilla_plugins::tween::TweenConfig;
use flotilla_plugins::vehicle::VehicleConfig;
use flotilla_plugins::PluginConfig;
use flotilla_wire::control::ClockMode;
use flotilla_wire::drive_to_world::BodyCommand;
use flotilla_wire::geometry::Pose2;
use flotilla_wire::names::{resolve_frame, resolve_topic};
use flotilla_wire::world_to_nodes::{BodyId, WorldState};

use crate::diff_drive::{DiffDrive, DriveOutput};
use crate::power::Power;
use crate::tricycle::Tricycle;
use crate::tween::Tween;
use crate::vehicle::Vehicle;

/// How many states ahead a changing diff drive's answers are planned (see
/// [`DiffDrive::plan`]). The drive answers every state even when the world
/// does not wait for it, each answer promising the next ones, so the plan
/// need only cover how far the drive may fall behind the world before the
/// world waits: 4 states. Each costs a model step per ramping robot and up
/// to 36 bytes in the actuation, and a longer plan does not make lockstep
/// faster: the world rarely runs further ahead.
const PLANNED_STEPS: u64 = 4;

/// One served drive instance.
#[derive(Debug)]
struct Served {
    /// Its model's name (whose battery, if any, powers it).
    model_name: String,
    /// The body it drives.
    body: BodyId,
    /// Its model.
    model: Model,
    /// Where a vehicle publishes the velocity it reached, and in which frame.
    twist_actual: Option<(String, String)>,
    /// Where a bicycle vehicle publishes its steering state, and its joint's name.
    joint_states: Option<(String, String)>,
    /// Commands beyond the model's limits so far (clamped as the model says).
    clamped: u64,
    /// Commands ignored so far because the battery was empty.
    unpowered: u64,
}

/// The drive models served.
#[derive(Debug)]
enum Model {
    Diff(DiffDrive),
    Tricycle(Box<Tricycle>),
    Vehicle(Box<Vehicle>),
    Tween(Box<Tween>),
}

impl Model {
    fn plugin_type(&self) -> &'static str {
        match self {
            Model::Diff(_) => DiffDriveConfig::TYPE,
            Model::Tricycle(_) => TricycleDriveConfig::TYPE,
            Model::Vehicle(_) => VehicleConfig::TYPE,
            Model::Tween(_) => TweenConfig::TYPE,
        }
    }
}

/// A served instance's parameters, before its model is made.
enum Wanted {
    Diff(Box<DiffDriveConfig>),
    Tricycle(Box<TricycleDriveConfig>),
    Vehicle(Box<VehicleConfig>),
    /// A tween, and where its body starts.
    Tween(Box<TweenConfig>, Pose2),
}

impl Served {
    /// The world's command for this instance's body from a diff drive's output.
    fn body_command(&self, out: DriveOutput) -> BodyCommand {
        BodyCommand {
            body: self.body,
            local_vx_mps: out.forward_mps,
            local_vy_mps: 0.0,
            omega_radps: out.yaw_rate_radps,
        }
    }

    /// Advances the model by one step of `state`: the body's velocity for
    /// the next (`None` for a tween whose body is not in the state).
    fn step(&mut self, state: &WorldState, now_ns: u64, dt_s: f64) -> Option<BodyCommand> {
        let body = self.body;
        Some(match &mut self.model {
            Model::Diff(drive) => {
                let out = drive.step(now_ns, dt_s);
                self.body_command(out)
            }
            Model::Tricycle(tricycle) => tricycle.step(body, now_ns, dt_s),
            Model::Vehicle(vehicle) => vehicle.step(body, now_ns, dt_s),
            Model::Tween(tween) => {
                // bodies are sorted by id in the state
                let i = state.bodies.binary_search_by_key(&body, |b| b.id).ok()?;
                tween.step(body, state.bodies[i].pose, state.step, dt_s)
            }
        })
    }

    /// Whether a command asks for more than the model's limits allow.
    fn beyond_limits(&self, twist: &Twist) -> bool {
        let (linear, angular) = (twist.linear.x, twist.angular.z);
        match &self.model {
            Model::Diff(drive) => drive.beyond_limits(linear, angular),
            Model::Tricycle(tricycle) => tricycle.beyond_limits(linear, angular),
            Model::Vehicle(vehicle) => vehicle.beyond_limits([linear, twist.linear.y, angular]),
            Model::Tween(_) => false,
        }
    }

    /// Queues a command in force after `apply_after_ns`.
    fn command(&mut self, twist: &Twist, apply_after_ns: u64) {
        let (linear, angular) = (twist.linear.x, twist.angular.z);
        match &mut self.model {
            Model::Diff(drive) => drive.command(linear, angular, apply_after_ns),
            Model::Tricycle(tricycle) => tricycle.command(linear, angular, apply_after_ns),
            Model::Vehicle(vehicle) => vehicle.command([linear, twist.linear.y, angular], apply_after_ns),
            Model::Tween(_) => false, // a tween takes no cmd_vel
        };
    }

    /// A command folded into the last step, for the world's next step (a
    /// vehicle's actuators take commands at steps only: its is queued).
    fn command_now(&mut self, twist: &Twist, now_ns: u64) -> Option<BodyCommand> {
        let (linear, angular) = (twist.linear.x, twist.angular.z);
        match &mut self.model {
            Model::Diff(drive) => {
                let out = drive.command_now(linear, angular)?;
                Some(self.body_command(out))
            }
            Model::Tricycle(tricycle) => tricycle.command_now(self.body, linear, angular),
            Model::Vehicle(_) => {
                self.command(twist, now_ns);
                None
            }
            Model::Tween(_) => None,
        }
    }
}

/// The tag suffix of a tween's trigger input.
const TRIGGER_TAG: &str = "#trigger";

/// Serves `DiffDrive`, `TricycleDrive`, `VehicleDynamics` and `Tween`
/// plugin instances: `cmd_vel` (or a tween's trigger) in, actuations out;
/// and the `Battery` of each robot it drives (see [`Power`]).
#[derive(Debug, Default)]
pub struct DriveServer {
    /// Served instances by key (`model/plugin`).
    instances: BTreeMap<String, Served>,
    /// The served robots' batteries.
    power: Power,
    /// Unknown until the world's first status: treated as lockstep.
    clock: Option<ClockMode>,
    /// The step and sim time of the last state answered.
    last_step: Option<u64>,
    now_ns: u64,
}

impl NodePlugin for DriveServer {
    fn role(&self) -> &'static Role {
        &DiffDriveConfig::DRIVE_ROLE
    }

    fn answering(&self) -> Answering {
        Answering::OnReceivingThread
    }

    fn also_serves(&self) -> &'static [Role] {
        &[TricycleDriveConfig::DRIVE_ROLE, VehicleConfig::DRIVE_ROLE, TweenConfig::ROLE, BatteryConfig::ROLE]
    }

    /// Keeps the state of instances that still drive the same body, and
    /// subscribes each instance's `cmd_vel`.
    fn rebuild(&mut self, rebuild: &mut Rebuild<'_>) {
        let mut old = std::mem::take(&mut self.instances);
        let diff_drives = rebuild.configured::<DiffDriveConfig>().into_iter().map(|c| {
            let twist_sub = c.config.twist_sub.clone();
            (c.model, c.key, c.body, twist_sub, Wanted::Diff(Box::new(c.config)))
        });
        let tricycles = rebuild.configured::<TricycleDriveConfig>().into_iter().map(|c| {
            let twist_sub = c.config.twist_sub.clone();
            (c.model, c.key, c.body, twist_sub, Wanted::Tricycle(Box::new(c.config)))
        });
        let vehicles = rebuild.configured::<VehicleConfig>().into_iter().map(|c| {
            let twist_sub = c.config.twist_sub.clone();
            (c.model, c.key, c.body, twist_sub, Wanted::Vehicle(Box::new(c.config)))
        });
        let tweens = rebuild.configured::<TweenConfig>().into_iter().map(|c| {
            let start = c.model.body(&c.config.body).map_or(Pose2::default(), |b| b.pose);
            let trigger = c.config.trigger_topic.clone();
            (c.model, c.key, c.body, trigger, Wanted::Tween(Box::new(c.config), start))
        });
        let wanted: Vec<_> = diff_drives.chain(tricycles).chain(vehicles).chain(tweens).collect();
        for (model, key, body, input_topic, config) in wanted {
            let topic = rebuild.keys.ros(&resolve_topic(&model.namespace, &input_topic));
            match &config {
                // A tween's only input is its trigger, when it has one.
                Wanted::Tween(..) if input_topic.is_empty() => {}
                Wanted::Tween(..) => rebuild.subscribe(topic.clone(), format!("{key}{TRIGGER_TAG}")),
                _ => rebuild.subscribe(topic.clone(), key.clone()),
            }
            let served = match old.remove(&key) {
                Some(existing) if existing.body == body => existing,
                _ => {
                    let (twist_actual, joint_states) = match &config {
                        Wanted::Vehicle(c) => (
                            Some((
                                rebuild.keys.ros(&resolve_topic(&model.namespace, &c.twist_actual_pub)),
                                resolve_frame(&model.namespace, &c.body),
                            )),
                            Some((
                                rebuild.keys.ros(&resolve_topic(&model.namespace, &c.joint_states_pub)),
                                resolve_frame(&model.namespace, "steering"),
                            )),
                        ),
                        _ => (None, None),
                    };
                    let model_name = model.name.clone();
                    let model = match config {
                        Wanted::Diff(config) => Model::Diff(DiffDrive::new(&config)),
                        Wanted::Tricycle(config) => Model::Tricycle(Box::new(Tricycle::new(&config))),
                        Wanted::Vehicle(config) => Model::Vehicle(Box::new(Vehicle::new(&config))),
                        Wanted::Tween(config, start) => Model::Tween(Box::new(Tween::new(*config, start))),
                    };
                    tracing::info!("serving {} {key}: cmd_vel on {topic}", model.plugin_type());
                    Served { model_name, body, model, twist_actual, joint_states, clamped: 0, unpowered: 0 }
                }
            };
            self.instances.insert(key, served);
        }
        self.power.rebuild(rebuild);
    }

    fn reset(&mut self) {
        // A new world runs on the same clock (the world's status tells if not).
        *self = DriveServer { clock: self.clock, ..DriveServer::default() };
    }

    /// Advances every drive by the step of `state` and actuates the
    /// velocities for the next step; with nothing to drive, the runtime
    /// sends a bare lockstep report instead.
    fn on_state(&mut self, state: &WorldState, out: &mut Outbox) {
        self.now_ns = state.time.nanos;
        self.last_step = Some(state.step);
        if self.instances.is_empty() && self.power.is_none() {
            return;
        }
        // A robot whose battery ran empty stops at once, and forgets the
        // command it had: charged again, it waits for a new one.
        for model in self.power.on_state(state, out) {
            for served in self.instances.values_mut().filter(|s| s.model_name == model) {
                served.command(&Twist::default(), self.now_ns);
            }
        }
        let dt_s = state.step_ns as f64 * 1e-9;
        let commands = out.actuate(state.step);
        for served in self.instances.values_mut() {
            let command = served.step(state, self.now_ns, dt_s);
            if self.power.drained(&served.model_name) {
                commands.push(BodyCommand {
                    body: served.body,
                    local_vx_mps: 0.0,
                    local_vy_mps: 0.0,
                    omega_radps: 0.0,
                });
            } else {
                commands.extend(command);
            }
        }
        // A vehicle's velocity reached (vehicle_dynamics_sim's twist_actual).
        let stamp = state.time.to_ros();
        for served in self.instances.values() {
            let (Model::Vehicle(vehicle), Some((key, frame))) = (&served.model, &served.twist_actual) else { continue };
            if out.wants(key) {
                let [vx, vy, wz] = vehicle.actual();
                let mut twist = TwistStamped::default();
                twist.header.stamp = stamp;
                twist.header.frame_id = frame.clone();
                (twist.twist.linear.x, twist.twist.linear.y, twist.twist.angular.z) = (vx, vy, wz);
                out.put(key.clone(), flotilla_messages::encode(&twist));
            }
            // and a bicycle's steering state
            let (Some((angle, rate)), Some((key, joint))) = (vehicle.steering_state(), &served.joint_states) else {
                continue;
            };
            if out.wants(key) {
                let mut joints = JointState {
                    name: vec![joint.clone()],
                    position: vec![angle],
                    velocity: vec![rate],
                    ..JointState::default()
                };
                joints.header.stamp = stamp;
                out.put(key.clone(), flotilla_messages::encode(&joints));
            }
        }
    }

    /// Until a command arrives, the answers to the next states are known:
    /// a diff drive at its target keeps its output until a queued command
    /// or its timeout (see [`DiffDrive::steady_steps`]), and one still
    /// ramping, or due to change soon, is planned `PLANNED_STEPS` ahead
    /// (see [`DiffDrive::plan`]). Tricycles and tweens are not planned:
    /// their answers are known for no state ahead. A vehicle publishes the
    /// velocity it reached (and a bicycle its steering): a node serving one
    /// promises nothing at all.
    fn promise(&self, state: &WorldState, changes: &mut Vec<(u64, BodyCommand)>) -> Option<u64> {
        let (now_ns, step_ns) = (state.time.nanos, state.step_ns);
        let mut known = u64::MAX;
        for served in self.instances.values() {
            match &served.model {
                Model::Vehicle(_) => return None,
                Model::Tricycle(_) | Model::Tween(_) => known = 0,
                // Once nothing is known, only a vehicle can change the answer.
                Model::Diff(_) if known == 0 => {}
                Model::Diff(drive) => {
                    let steady = drive.steady_steps(now_ns, step_ns);
                    if steady >= PLANNED_STEPS {
                        known = known.min(steady);
                    } else {
                        drive.plan(now_ns, step_ns, PLANNED_STEPS, |ahead, out| {
                            changes.push((state.step + ahead, served.body_command(out)));
                        });
                        known = known.min(PLANNED_STEPS);
                    }
                }
            }
        }
        // Batteries publish, and may stop a robot, at their updates only.
        known = known.min(self.power.steps_known(now_ns, step_ns));
        if known == 0 || self.instances.is_empty() {
            changes.clear();
            return Some(0);
        }
        // Each drive's changes are in order; the world takes them by state.
        changes.sort_by_key(|(step, _)| *step);
        Some(known)
    }

    /// A `cmd_vel` for instance `tag`.
    fn on_input(&mut self, tag: &str, payload: &[u8], out: &mut Outbox) -> Result<(), BadInput> {
        if let Some(key) = tag.strip_suffix(TRIGGER_TAG) {
            let on = flotilla_messages::decode::<Bool>(payload)?.data;
            if let Some(Served { model: Model::Tween(tween), .. }) = self.instances.get_mut(key) {
                tween.trigger(on);
            }
            return Ok(());
        }
        let (twist, stamp_ns) = decode_cmd_vel(payload)?;
        if !(twist.linear.x.is_finite() && twist.linear.y.is_finite() && twist.angular.z.is_finite()) {
            return Err(BadInput(format!("non-finite command {twist:?}")));
        }
        let Some(served) = self.instances.get_mut(tag) else { return Ok(()) };
        if self.power.drained(&served.model_name) {
            served.unpowered += 1;
            if served.unpowered.is_power_of_two() {
                tracing::warn!("{tag}: {} command(s) while its battery is empty, ignored", served.unpowered);
            }
            return Ok(());
        }
        if served.beyond_limits(&twist) {
            // Counted, and told now and then: a controller asking for more
            // than the robot can do is worth knowing about.
            served.clamped += 1;
            if served.clamped.is_power_of_two() {
                tracing::warn!(
                    "{tag}: {} command(s) beyond its limits so far, clamped as the model says",
                    served.clamped
                );
            }
        }
        // Only where wall time matters: in fast mode the world is steps
        // ahead anyway, and one actuation per command (a thousand robots'
        // controllers) would only add traffic. In lockstep, commands only
        // take effect at states, which keeps runs independent of timing.
        let at_once =
            stamp_ns.is_none() && self.clock.is_some_and(|c| matches!(c, ClockMode::Realtime | ClockMode::External));
        match (at_once, self.last_step) {
            (true, Some(step)) => {
                if let Some(command) = served.command_now(&twist, self.now_ns) {
                    out.actuate(step).push(command);
                }
            }
            _ => served.command(&twist, stamp_ns.unwrap_or(self.now_ns)),
        }
        Ok(())
    }

    fn on_clock(&mut self, clock: ClockMode) {
        self.clock = Some(clock);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_node_kit::runtime::core::{Arrival, Core};
    use flotilla_wire::description::WorldDescription;
    use flotilla_wire::time::SimTime;
    use flotilla_wire::Keys;
    use flotilla_world_file::load_world;

    const STEP_NS: u64 = 5_000_000;

    fn state(step: u64) -> WorldState {
        WorldState { revision: 0, step, time: SimTime { nanos: step * STEP_NS }, step_ns: STEP_NS, bodies: Vec::new() }
    }

    /// One robot, `robot1`, with a DiffDrive named `drive` on its body.
    fn one_robot() -> WorldDescription {
        static WORLDS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = WORLDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("flotilla-drive-server-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let model = "bodies: [{name: base, type: dynamic, footprints: [{type: circle, radius: 0.2, density: 1}]}]\n\
                     plugins: [{type: DiffDrive, name: drive, body: base}]\n";
        std::fs::write(dir.join("robot.model.yaml"), model).unwrap();
        let world = "properties: {}\nlayers: []\nmodels: [{name: robot1, model: robot.model.yaml}]\n";
        std::fs::write(dir.join("world.yaml"), world).unwrap();
        let description = load_world(&dir.join("world.yaml")).unwrap().initial_description().unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        description
    }

    /// A drive core serving `robot1/drive`, in `clock` mode, released.
    fn drive(clock: ClockMode) -> Core<DriveServer> {
        let description = one_robot();
        let keys = Keys::new("test");
        let mut core = Core::new(DriveServer::default());
        let mut rebuild = Rebuild::new(&description, &keys, &|_, _| true);
        core.plugin.rebuild(&mut rebuild);
        assert_eq!(rebuild.inputs().len(), 1, "cmd_vel subscribed");
        assert_eq!(rebuild.inputs()[0].tag, "robot1/drive");
        core.release();
        core.arrive(Arrival::Clock(clock));
        core
    }

    fn forward(core: &mut Core<DriveServer>, mps: f64) {
        let mut twist = Twist::default();
        twist.linear.x = mps;
        let bad = std::sync::Arc::new(flotilla_node_kit::health::BadMessages::new("robot1/cmd_vel"));
        core.arrive(Arrival::Input {
            tag: "robot1/drive".into(),
            payload: flotilla_messages::encode(&twist),
            bad: bad.clone(),
            forwarded: None,
        });
        assert_eq!(bad.count(), 0);
    }

    /// The actuation waiting in the outbox: its step and first speed.
    fn actuated(core: &mut Core<DriveServer>) -> Option<(u64, f64)> {
        core.outbox.take_actuation().map(|(step, commands)| (step, commands[0].local_vx_mps))
    }

    /// The promise that went with the last actuation: its last state and
    /// the (state, speed) of its changes.
    fn promised(core: &mut Core<DriveServer>) -> Option<(u64, Vec<(u64, f64)>)> {
        let promise = core.outbox.take_promise()?;
        Some((promise.through, promise.changes.iter().map(|(step, c)| (*step, c.local_vx_mps)).collect()))
    }

    #[test]
    fn in_lockstep_a_drive_promises_its_next_answers() {
        let mut core = drive(ClockMode::Lockstep);
        core.arrive(Arrival::State(state(0)));
        assert_eq!(promised(&mut core), Some((100, vec![])), "at rest, no command: at most 100 steps");
        forward(&mut core, 0.5);
        core.arrive(Arrival::State(state(1)));
        // No dynamics limits: at the command from this step on.
        assert_eq!(actuated(&mut core), Some((1, 0.5)));
        assert_eq!(promised(&mut core), Some((101, vec![])));
        // A stamped command queued for state 4 takes effect in the answer
        // to state 5: within the plan, as a change.
        let mut stamped = TwistStamped::default();
        stamped.header.stamp = SimTime::at_step(4, 5_000_000).to_ros();
        stamped.twist.linear.x = 0.2;
        let bad = std::sync::Arc::new(flotilla_node_kit::health::BadMessages::new("robot1/cmd_vel"));
        core.arrive(Arrival::Input {
            tag: "robot1/drive".into(),
            payload: flotilla_messages::encode(&stamped),
            bad,
            forwarded: None,
        });
        core.arrive(Arrival::State(state(2)));
        assert_eq!(promised(&mut core), Some((2 + PLANNED_STEPS, vec![(5, 0.2)])));
        core.arrive(Arrival::Clock(ClockMode::Fast));
        core.arrive(Arrival::State(state(3)));
        assert_eq!(promised(&mut core), None, "only lockstep uses it");
    }

    #[test]
    fn a_state_is_answered_with_the_velocity_for_the_next_step() {
        let mut core = drive(ClockMode::Lockstep);
        let reply = core.arrive(Arrival::State(state(7)));
        assert_eq!(reply.report, None, "the actuation is the lockstep report");
        let (step, commands) = core.outbox.take_actuation().unwrap();
        assert_eq!((step, commands.len()), (7, 1));
        assert!(core.urgent(), "the world waits on it in lockstep");
        core.arrive(Arrival::State(state(7)));
        assert_eq!(actuated(&mut core), None, "a re-published state is answered once");
    }

    #[test]
    fn in_lockstep_a_command_takes_effect_at_the_state_after_it() {
        let mut core = drive(ClockMode::Lockstep);
        core.arrive(Arrival::State(state(0)));
        assert_eq!(actuated(&mut core), Some((0, 0.0)));
        forward(&mut core, 0.5);
        assert_eq!(actuated(&mut core), None, "held until the next state");
        core.arrive(Arrival::State(state(1)));
        assert_eq!(actuated(&mut core), Some((1, 0.5)));
    }

    #[test]
    fn in_realtime_a_plain_command_is_actuated_at_once() {
        let mut core = drive(ClockMode::Realtime);
        core.arrive(Arrival::State(state(0)));
        core.outbox.take_actuation();
        forward(&mut core, 0.5);
        assert_eq!(actuated(&mut core), Some((0, 0.5)), "redoes the last step");
        assert!(core.urgent());
    }

    #[test]
    fn without_instances_a_state_gets_a_bare_report() {
        let mut core = Core::new(DriveServer::default());
        core.release();
        core.arrive(Arrival::Clock(ClockMode::Fast));
        let reply = core.arrive(Arrival::State(state(4)));
        assert_eq!((reply.report, core.outbox.actuated()), (Some(4), None));
        assert!(!core.urgent(), "fast mode batches");
    }

    #[test]
    fn bad_commands_are_refused() {
        let mut server = DriveServer::default();
        let mut out = Outbox::default();
        assert!(server.on_input("robot1/drive", &[0, 1, 0, 0, 1, 2, 3], &mut out).is_err());
        let mut twist = Twist::default();
        twist.angular.z = f64::NAN;
        let refused = server.on_input("robot1/drive", &flotilla_messages::encode(&twist), &mut out).unwrap_err();
        assert!(refused.0.contains("non-finite"), "{refused}");
    }
}
