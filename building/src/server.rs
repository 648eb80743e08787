//! The building's node: every `Door` instance's leaf moved from world
//! states and `rmf_door_msgs/DoorRequest`s, and its `DoorState` published;
//! every `Lift` run from `rmf_lift_msgs/LiftRequest`s, its doors asked and
//! its riders put on the destination floor's map, and its `LiftState`
//! published.
//!
//! Requests for all doors share a topic (`/door_requests` unless told), as
//! Open-RMF's do: the node subscribes to each topic once and hands a
//! request to the doors of that name on it.
//!
//! Doors at rest cost the lockstep barrier nothing: their answers are zero
//! commands until a request, a robot near an automatic door (looked for
//! [`PROXIMITY_CHECK_HZ`] times a sim second) or a state due, so the node
//! promises them as a drive promises a robot at constant speed.

use std::collections::BTreeMap;

use flotilla_messages::builtin_interfaces::Time;
use flotilla_messages::rmf_door_msgs::{DoorMode, DoorRequest, DoorState};
use flotilla_messages::rmf_lift_msgs::{LiftRequest, LiftState};
use flotilla_node_kit::runtime::{Answering, BadInput, NodePlugin, Outbox, Rebuild};
use flotilla_plugins::door::DoorConfig;
use flotilla_plugins::lift::LiftConfig;
use flotilla_plugins::registry::Role;
use flotilla_plugins::robots::RobotModel;
use flotilla_wire::control::ControlRequest;
use flotilla_wire::description::{footprints_box, Footprint, FootprintShape, WorldDescription};
use flotilla_wire::drive_to_world::BodyCommand;
use flotilla_wire::geometry::Pose2;
use flotilla_wire::names::resolve_topic;
use flotilla_wire::time::SimTime;
use flotilla_wire::update_timer::UpdateTimer;
use flotilla_wire::world_to_nodes::{BodyId, WorldState};

use crate::door::Door;
use crate::lift::{Lift, LiftAction};
use crate::requests::{Stamp, Waiting};

/// How often, per sim second, robots are looked for near automatic doors, Hz.
pub const PROXIMITY_CHECK_HZ: f64 = 10.0;

/// One served door.
#[derive(Debug)]
struct ServedDoor {
    door: Door,
    body: BodyId,
    /// The closed leaf's centre, world m (what `auto_open` is measured to).
    centre: [f64; 2],
    /// The map its model is on ("" for a world of one map): robots on
    /// other floors do not open it.
    map: String,
    /// Its requests' and states' keys.
    requests_key: String,
    states_key: String,
    timer: UpdateTimer,
    /// The mode last due to be published (sent if anyone listened).
    published: Option<u32>,
    /// The last command sent was the zero command: the world holds the
    /// leaf still until told otherwise, and a resting door sends nothing
    /// more (a hundred idle doors cost the world no command a step).
    held_still: bool,
}

/// One served lift.
#[derive(Debug)]
struct ServedLift {
    lift: Lift,
    body: BodyId,
    /// The cabin: the lift body's pose and footprints.
    cabin: (Pose2, Vec<Footprint>),
    requests_key: String,
    states_key: String,
    timer: UpdateTimer,
    /// The state last due to be published (sent if anyone listened), its
    /// time left out.
    published: Option<LiftState>,
    /// Where the world keeps the floor it is at, for a node that serves it
    /// next (after a restart): the floor's name.
    floor_key: String,
}

impl ServedDoor {
    /// Whether a request for door `door_name`, on the requests topic
    /// `topic`, is for this door.
    fn serves(&self, topic: &str, door_name: &str) -> bool {
        self.requests_key == topic && self.door.config().door_name == door_name
    }
}

impl ServedLift {
    /// Whether `request`, on the requests topic `topic`, is for this lift.
    fn serves(&self, topic: &str, request: &LiftRequest) -> bool {
        self.requests_key == topic && self.lift.config().lift_name == request.lift_name
    }
}

/// A robot: its model's name, its first body, and the map it is on.
#[derive(Debug, Clone)]
struct Robot {
    name: String,
    body: BodyId,
    map: String,
}

/// Serves `Door` and `Lift` instances.
#[derive(Debug, Default)]
pub struct BuildingServer {
    /// By key (`model/plugin`).
    doors: BTreeMap<String, ServedDoor>,
    /// By key (`model/plugin`).
    lifts: BTreeMap<String, ServedLift>,
    /// The robots, for automatic doors and lift rides.
    robots: Vec<Robot>,
    /// When robots are next looked for near automatic doors.
    proximity_timer: Option<UpdateTimer>,
    /// Where map changes go (`world/map_requests`).
    map_requests_key: String,
    /// Requests until the state they take effect at.
    waiting: Waiting<Request>,
    /// Requests stamped by another clock than sim time, told now and then.
    other_clock: u64,
}

/// A door or lift request, checked, on the requests topic it came on.
#[derive(Debug)]
enum Request {
    Door { topic: String, door_name: String, open: bool },
    Lift { topic: String, request: LiftRequest },
}

/// Input tags: a door's requests topic, or a lift's.
const DOOR_TAG: &str = "door:";
const LIFT_TAG: &str = "lift:";

impl NodePlugin for BuildingServer {
    fn role(&self) -> &'static Role {
        &DoorConfig::ROLE
    }

    fn also_serves(&self) -> &'static [Role] {
        &[LiftConfig::ROLE]
    }

    /// A door's answer is a few multiplications.
    fn answering(&self) -> Answering {
        Answering::OnReceivingThread
    }

    /// Keeps the doors that still move the same leaf and the lifts that
    /// still have the same cabin, and subscribes to every requests topic
    /// once.
    fn rebuild(&mut self, rebuild: &mut Rebuild<'_>) {
        let mut old = std::mem::take(&mut self.doors);
        let mut topics = Vec::new();
        for c in rebuild.configured::<DoorConfig>() {
            let requests_key = rebuild.keys.ros(&resolve_topic(&c.model.namespace, &c.config.requests_topic));
            if !topics.contains(&requests_key) {
                topics.push(requests_key.clone());
            }
            // The leaf's closed pose is where its model file puts it, not
            // where it is now: a node that restarts, or a door model moved,
            // finds the leaf part or fully open and goes on from there.
            let leaf = c.model.body(&c.config.body);
            let closed = leaf.map_or(Pose2::default(), |b| c.model.pose.compose(&b.pose_in_model));
            let served = match old.remove(&c.key) {
                Some(existing)
                    if existing.body == c.body
                        && existing.door.config() == &c.config
                        && existing.door.closed() == closed =>
                {
                    existing
                }
                _ => {
                    let centre = centre(closed, leaf.map_or(&[][..], |b| &b.footprints));
                    tracing::info!("serving door {} ({}): requests on {requests_key}", c.config.door_name, c.key);
                    ServedDoor {
                        body: c.body,
                        centre,
                        map: c.model.map.clone(),
                        states_key: rebuild.keys.ros(&resolve_topic(&c.model.namespace, &c.config.states_topic)),
                        requests_key,
                        timer: UpdateTimer::new(c.config.state_rate_hz),
                        published: None,
                        held_still: false,
                        door: Door::new(c.config, closed),
                    }
                }
            };
            self.doors.insert(c.key, served);
        }
        for key in topics {
            rebuild.subscribe(key.clone(), format!("{DOOR_TAG}{key}"));
        }
        let mut old = std::mem::take(&mut self.lifts);
        let mut topics = Vec::new();
        for c in rebuild.configured::<LiftConfig>() {
            let requests_key = rebuild.keys.ros(&resolve_topic(&c.model.namespace, &c.config.requests_topic));
            if !topics.contains(&requests_key) {
                topics.push(requests_key.clone());
            }
            let served = match old.remove(&c.key) {
                Some(existing) if existing.body == c.body && existing.lift.config() == &c.config => existing,
                _ => {
                    let cabin = c
                        .model
                        .body(&c.config.body)
                        .map_or((Pose2::default(), Vec::new()), |b| (b.pose, b.footprints.clone()));
                    let floor_key = rebuild.keys.world_memory(&format!("{}/floor", c.key));
                    let kept =
                        rebuild.recall(&floor_key).and_then(|name| c.config.floor(std::str::from_utf8(name).ok()?));
                    let lift = match kept {
                        Some(floor) => Lift::new(c.config.clone()).standing_at(floor),
                        None => Lift::new(c.config.clone()),
                    };
                    let at = &lift.config().floors[lift.floor()].name;
                    tracing::info!(
                        "serving lift {} ({}) at {at}: requests on {requests_key}",
                        c.config.lift_name,
                        c.key
                    );
                    ServedLift {
                        body: c.body,
                        cabin,
                        states_key: rebuild.keys.ros(&resolve_topic(&c.model.namespace, &c.config.states_topic)),
                        requests_key,
                        timer: UpdateTimer::new(c.config.state_rate_hz),
                        published: None,
                        floor_key,
                        lift,
                    }
                }
            };
            for floor in &served.lift.config().floors {
                if !floor.door.is_empty() && !self.doors.values().any(|d| d.door.config().door_name == floor.door) {
                    tracing::error!(
                        "lift {}: no door {:?} served here (floor {}): a lift and its doors must be served by one \
                         flotilla-building",
                        served.lift.config().lift_name,
                        floor.door,
                        floor.name
                    );
                }
            }
            self.lifts.insert(c.key, served);
        }
        for key in topics {
            rebuild.subscribe(key.clone(), format!("{LIFT_TAG}{key}"));
        }
        self.robots = robots(rebuild.description);
        self.map_requests_key = rebuild.keys.world_map_requests();
        let automatic = self.doors.values().any(|d| d.door.config().auto_open_m > 0.0);
        match (&self.proximity_timer, automatic) {
            (None, true) => self.proximity_timer = Some(UpdateTimer::new(PROXIMITY_CHECK_HZ)),
            (Some(_), false) => self.proximity_timer = None,
            _ => {}
        }
    }

    fn reset(&mut self) {
        *self = BuildingServer::default();
    }

    /// Moves every leaf on by the state's step, and publishes the states
    /// due or changed.
    fn on_state(&mut self, state: &WorldState, out: &mut Outbox) {
        if self.doors.is_empty() && self.lifts.is_empty() {
            return; // the runtime reports the step
        }
        let (now_ns, step_ns) = (state.time.nanos, state.step_ns);
        for request in self.waiting.take_due(now_ns) {
            self.carry_out(request);
        }
        let dt_s = step_ns as f64 * 1e-9;
        let body = |id: BodyId| state.bodies.binary_search_by_key(&id, |b| b.id).ok().map(|i| &state.bodies[i]);
        if self.proximity_timer.as_mut().is_some_and(|t| t.check(now_ns, step_ns)) {
            let robots: Vec<([f64; 2], &str)> = self
                .robots
                .iter()
                .filter_map(|r| body(r.body).map(|b| ([b.pose.x_m, b.pose.y_m], r.map.as_str())))
                .collect();
            for served in self.doors.values_mut() {
                let reach_m = served.door.config().auto_open_m;
                let [cx, cy] = served.centre;
                let near = |([x, y], map): &([f64; 2], &str)| *map == served.map && (x - cx).hypot(y - cy) <= reach_m;
                if reach_m > 0.0 && robots.iter().any(near) {
                    served.door.robot_near(now_ns);
                }
            }
        }
        self.run_lifts(state, out);
        let commands = out.actuate(state.step);
        for served in self.doors.values_mut() {
            if let Some(leaf) = body(served.body) {
                let command = served.door.step(served.body, leaf.pose, state.step, now_ns, dt_s);
                let still = command.is_zero();
                if !(still && served.held_still) {
                    commands.push(command);
                }
                served.held_still = still;
            }
        }
        for served in self.doors.values_mut() {
            let mode = served.door.mode();
            let due = served.timer.check(now_ns, step_ns);
            // What goes out is decided whether or not anyone listens, so a
            // subscriber sees the same states whenever it came.
            if due || served.published != Some(mode) {
                if out.wants(&served.states_key) {
                    out.put_encoded(&served.states_key, &door_state(&served.door, mode, state.time));
                }
                served.published = Some(mode);
            }
        }
        for served in self.lifts.values_mut() {
            let door = &served.lift.config().floors[served.lift.floor()].door;
            let mode = self.doors.values().find(|d| &d.door.config().door_name == door).map(|d| d.door.mode());
            let now = served.lift.state(Default::default(), mode);
            let due = served.timer.check(now_ns, step_ns);
            if due || served.published.as_ref() != Some(&now) {
                if out.wants(&served.states_key) {
                    out.put_encoded(&served.states_key, &LiftState { lift_time: state.time.to_ros(), ..now.clone() });
                }
                served.published = Some(now);
            }
        }
    }

    /// While every door rests, the answers are known until the first of: an
    /// automatic opening ending, the next look for robots, the next state
    /// due. No command changes in between (a request cuts the promise
    /// short, as a command does a drive's; one waiting for its step
    /// cuts it here).
    fn promise(&self, state: &WorldState, changes: &mut Vec<(u64, BodyCommand)>) -> Option<u64> {
        changes.clear();
        let (now_ns, step_ns) = (state.time.nanos, state.step_ns);
        if !self.waiting.is_empty() || self.lifts.values().any(|l| !l.lift.at_rest()) {
            return Some(0);
        }
        let timers = self
            .doors
            .values()
            .map(|d| &d.timer)
            .chain(self.lifts.values().map(|l| &l.timer))
            .chain(&self.proximity_timer);
        let due = timers.map(|t| t.steps_until_due(now_ns, step_ns).saturating_sub(1));
        let resting = self.doors.values().map(|d| d.door.resting_steps(now_ns, step_ns));
        Some(due.chain(resting).min().unwrap_or(0))
    }

    /// A `DoorRequest` on one of the doors' requests topics: open or close
    /// the doors of that name on it; a `LiftRequest` on a lifts' one: the
    /// lift of that name goes. Checked now, carried out at the state after
    /// its `request_time` (see [`crate::requests`]).
    fn on_input(&mut self, tag: &str, payload: &[u8], _out: &mut Outbox) -> Result<(), BadInput> {
        let (request, asked_at) = match tag.strip_prefix(LIFT_TAG) {
            Some(topic) => self.lift_request(topic, payload)?,
            None => self.door_request(tag.strip_prefix(DOOR_TAG).unwrap_or(tag), payload)?,
        };
        let (stamp, dropped) = self.waiting.push(request, &asked_at);
        if stamp == Stamp::OtherClock {
            self.other_clock += 1;
            if self.other_clock.is_power_of_two() {
                tracing::warn!(
                    "{} request(s) stamped {}.{:09} s, not within {} s of sim time (a ROS node without \
                     use_sim_time?): carried out at the next state",
                    self.other_clock,
                    asked_at.sec,
                    asked_at.nanosec,
                    crate::requests::FURTHEST_AHEAD_NS / 1_000_000_000
                );
            }
        }
        if dropped {
            tracing::warn!(
                "{} door and lift requests waiting for their step: the first dropped",
                crate::requests::MAX_WAITING
            );
        }
        Ok(())
    }
}

impl BuildingServer {
    /// A `DoorRequest` on the requests topic `topic`, and when it was asked.
    fn door_request(&self, topic: &str, payload: &[u8]) -> Result<(Request, Time), BadInput> {
        let request = flotilla_messages::decode::<DoorRequest>(payload)?;
        let open = match request.requested_mode.value {
            DoorMode::MODE_OPEN => true,
            DoorMode::MODE_CLOSED => false,
            other => {
                return Err(BadInput(format!(
                    "door \"{}\": requested mode {other} is neither MODE_OPEN (2) nor MODE_CLOSED (0)",
                    request.door_name
                )))
            }
        };
        let known = self.doors.values().any(|d| d.serves(topic, &request.door_name));
        if !known && !self.doors.is_empty() {
            tracing::debug!("no door \"{}\" here (another shard's, or none)", request.door_name);
        }
        let door = Request::Door { topic: topic.to_string(), door_name: request.door_name, open };
        Ok((door, request.request_time))
    }

    /// A `LiftRequest` on the requests topic `topic`, and when it was
    /// asked; one to a floor the lift does not have is refused.
    fn lift_request(&self, topic: &str, payload: &[u8]) -> Result<(Request, Time), BadInput> {
        let request = flotilla_messages::decode::<LiftRequest>(payload)?;
        for served in self.lifts.values().filter(|l| l.serves(topic, &request)) {
            served.lift.check(&request).map_err(BadInput)?;
        }
        let asked_at = request.request_time;
        Ok((Request::Lift { topic: topic.to_string(), request }, asked_at))
    }

    /// Carries out a request whose step has come.
    fn carry_out(&mut self, request: Request) {
        match request {
            Request::Door { topic, door_name, open } => {
                let asked = self.doors.values_mut().filter(|d| d.serves(&topic, &door_name));
                asked.for_each(|served| served.door.ask(open));
            }
            Request::Lift { topic, request } => {
                let mut asked = Vec::new();
                for served in self.lifts.values_mut().filter(|l| l.serves(&topic, &request)) {
                    match served.lift.request(&request) {
                        Ok(actions) => asked.extend(actions),
                        // Checked on arrival; the world's lifts changed since.
                        Err(e) => tracing::warn!("{e}"),
                    }
                }
                self.ask_doors(&asked);
            }
        }
    }

    /// Moves every lift's ride on, and carries out what it asks: doors
    /// opened or closed, riders put on the destination floor's map (as the
    /// map-transition manager does, only from the map they are on, so a
    /// ride asked twice moves no one twice).
    fn run_lifts(&mut self, state: &WorldState, out: &mut Outbox) {
        let mut actions = Vec::new();
        for served in self.lifts.values_mut() {
            let doors = &self.doors;
            let mode = |name: &str| doors.values().find(|d| d.door.config().door_name == name).map(|d| d.door.mode());
            let was_at = served.lift.floor();
            let actions_now = served.lift.step(state.time.nanos, mode);
            if served.lift.floor() != was_at {
                let at = &served.lift.config().floors[served.lift.floor()].name;
                out.put(served.floor_key.clone(), at.as_bytes().to_vec());
            }
            for action in actions_now {
                if let LiftAction::Ride { from, to } = &action {
                    for robot in self.robots.iter().filter(|r| &r.map == from) {
                        let Ok(i) = state.bodies.binary_search_by_key(&robot.body, |b| b.id) else { continue };
                        let at = state.bodies[i].pose;
                        if inside(&served.cabin, [at.x_m, at.y_m]) {
                            tracing::info!(
                                "lift {}: {} rides from {from} to {to}",
                                served.lift.config().lift_name,
                                robot.name
                            );
                            let request = ControlRequest::SetMap {
                                name: robot.name.clone(),
                                map: to.clone(),
                                pose: None,
                                only_from: Some(from.clone()),
                            };
                            out.put(self.map_requests_key.clone(), flotilla_wire::codec::encode(&request));
                        }
                    }
                }
                actions.push(action);
            }
        }
        self.ask_doors(&actions);
    }

    /// Opens or closes the doors the actions name.
    fn ask_doors(&mut self, actions: &[LiftAction]) {
        for action in actions {
            let LiftAction::Door { door, open } = action else { continue };
            for served in self.doors.values_mut().filter(|d| &d.door.config().door_name == door) {
                served.door.ask(*open);
            }
        }
    }
}

/// Whether the world point `p` is in the cabin (any of its footprints, the
/// body at its pose).
fn inside((pose, footprints): &(Pose2, Vec<Footprint>), [x, y]: [f64; 2]) -> bool {
    let (sin, cos) = pose.theta_rad.sin_cos();
    let (dx, dy) = (x - pose.x_m, y - pose.y_m);
    let local = [cos * dx + sin * dy, -sin * dx + cos * dy];
    footprints.iter().any(|f| match &f.shape {
        FootprintShape::Circle { center, radius } => (local[0] - center[0]).hypot(local[1] - center[1]) <= *radius,
        // Convex: on the same side of every edge.
        FootprintShape::Polygon { points } => {
            let sides = points
                .iter()
                .zip(points.iter().cycle().skip(1))
                .map(|(a, b)| (b[0] - a[0]) * (local[1] - a[1]) - (b[1] - a[1]) * (local[0] - a[0]));
            let (mut left, mut right) = (false, false);
            for side in sides {
                left |= side > 0.0;
                right |= side < 0.0;
            }
            !(left && right)
        }
    })
}

/// A door's `DoorState` at `time`.
fn door_state(door: &Door, mode: u32, time: SimTime) -> DoorState {
    DoorState {
        door_time: time.to_ros(),
        door_name: door.config().door_name.clone(),
        current_mode: DoorMode { value: mode },
    }
}

/// The centre of the box around a body's solid footprints, in the world,
/// the body at `pose`.
fn centre(pose: Pose2, footprints: &[Footprint]) -> [f64; 2] {
    let [lx, ly] = footprints_box(footprints).map_or([0.0; 2], |(centre, _)| centre);
    let (sin, cos) = pose.theta_rad.sin_cos();
    [pose.x_m + cos * lx - sin * ly, pose.y_m + sin * lx + cos * ly]
}

/// Every robot (a model with a drive): its first body and its map.
fn robots(description: &WorldDescription) -> Vec<Robot> {
    description
        .models
        .iter()
        .filter(|m| m.is_robot())
        .filter_map(|m| Some(Robot { name: m.name.clone(), body: m.bodies.first()?.id, map: m.map.clone() }))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_centre_of_a_leaf_turned_about_its_hinge() {
        // A 1 m × 0.1 m leaf from its hinge at the body's origin along +x,
        // the body turned 90°: the centre is 0.5 m up from the hinge.
        let leaf = Footprint {
            shape: FootprintShape::Polygon { points: vec![[0.0, -0.05], [1.0, -0.05], [1.0, 0.05], [0.0, 0.05]] },
            layers: Default::default(),
            collision: true,
            density: 1.0,
            friction: 0.0,
            restitution: 0.0,
            sensor: false,
        };
        let [x, y] = centre(Pose2::new(2.0, 3.0, std::f64::consts::FRAC_PI_2), &[leaf]);
        assert!((x - 2.0).abs() < 1e-12 && (y - 3.5).abs() < 1e-12, "({x}, {y})");
    }
}
