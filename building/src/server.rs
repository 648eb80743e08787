//! The building's node: every `Door` instance's leaf moved from world
//! states and `rmf_door_msgs/DoorRequest`s, and its `DoorState` published.
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

use flotilla_messages::rmf_door_msgs::{DoorMode, DoorRequest, DoorState};
use flotilla_node_kit::runtime::{Answering, BadInput, NodePlugin, Outbox, Rebuild};
use flotilla_plugins::door::DoorConfig;
use flotilla_plugins::registry::Role;
use flotilla_plugins::robots::RobotModel;
use flotilla_wire::description::{Footprint, FootprintShape, WorldDescription};
use flotilla_wire::drive_to_world::BodyCommand;
use flotilla_wire::geometry::Pose2;
use flotilla_wire::names::resolve_topic;
use flotilla_wire::time::SimTime;
use flotilla_wire::update_timer::UpdateTimer;
use flotilla_wire::world_to_nodes::{BodyId, WorldState};

use crate::door::Door;

/// How often, per sim second, robots are looked for near automatic doors, Hz.
pub const PROXIMITY_CHECK_HZ: f64 = 10.0;

/// One served door.
#[derive(Debug)]
struct Served {
    door: Door,
    body: BodyId,
    /// The closed leaf's centre, world m (what `auto_open` is measured to).
    centre: [f64; 2],
    /// Its requests' and states' keys.
    requests_key: String,
    states_key: String,
    timer: UpdateTimer,
    /// The mode last published.
    published: Option<u32>,
}

/// Serves `Door` instances.
#[derive(Debug, Default)]
pub struct BuildingServer {
    /// By key (`model/plugin`).
    doors: BTreeMap<String, Served>,
    /// The bodies of robots, for automatic doors.
    robot_bodies: Vec<BodyId>,
    /// When robots are next looked for near automatic doors.
    proximity_timer: Option<UpdateTimer>,
}

impl NodePlugin for BuildingServer {
    fn role(&self) -> &'static Role {
        &DoorConfig::ROLE
    }

    /// A door's answer is a few multiplications.
    fn answering(&self) -> Answering {
        Answering::OnReceivingThread
    }

    /// Keeps the doors that still move the same leaf, and subscribes to
    /// every requests topic once.
    fn rebuild(&mut self, rebuild: &mut Rebuild<'_>) {
        let mut old = std::mem::take(&mut self.doors);
        let mut topics = Vec::new();
        for c in rebuild.configured::<DoorConfig>() {
            let requests_key = rebuild.keys.ros(&resolve_topic(&c.model.namespace, &c.config.requests_topic));
            if !topics.contains(&requests_key) {
                topics.push(requests_key.clone());
            }
            let served = match old.remove(&c.key) {
                Some(existing) if existing.body == c.body && existing.door.config() == &c.config => existing,
                _ => {
                    let leaf = c.model.body(&c.config.body);
                    let closed = leaf.map_or(Pose2::default(), |b| b.pose);
                    let centre = centre(closed, leaf.map_or(&[][..], |b| &b.footprints));
                    tracing::info!("serving door {} ({}): requests on {requests_key}", c.config.door_name, c.key);
                    Served {
                        body: c.body,
                        centre,
                        states_key: rebuild.keys.ros(&resolve_topic(&c.model.namespace, &c.config.states_topic)),
                        requests_key,
                        timer: UpdateTimer::new(c.config.state_rate_hz),
                        published: None,
                        door: Door::new(c.config, closed),
                    }
                }
            };
            self.doors.insert(c.key, served);
        }
        for key in topics {
            rebuild.subscribe(key.clone(), key);
        }
        self.robot_bodies = robot_bodies(rebuild.description);
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
        if self.doors.is_empty() {
            return; // the runtime reports the step
        }
        let (now_ns, step_ns) = (state.time.nanos, state.step_ns);
        let dt_s = step_ns as f64 * 1e-9;
        let body = |id: BodyId| state.bodies.binary_search_by_key(&id, |b| b.id).ok().map(|i| &state.bodies[i]);
        if self.proximity_timer.as_mut().is_some_and(|t| t.check(now_ns, step_ns)) {
            let robots: Vec<[f64; 2]> =
                self.robot_bodies.iter().filter_map(|&id| body(id)).map(|b| [b.pose.x_m, b.pose.y_m]).collect();
            for served in self.doors.values_mut() {
                let reach_m = served.door.config().auto_open_m;
                let [cx, cy] = served.centre;
                if reach_m > 0.0 && robots.iter().any(|[x, y]| (x - cx).hypot(y - cy) <= reach_m) {
                    served.door.robot_near(now_ns);
                }
            }
        }
        let commands = out.actuate(state.step);
        for served in self.doors.values_mut() {
            if let Some(leaf) = body(served.body) {
                commands.push(served.door.step(served.body, leaf.pose, state.step, now_ns, dt_s));
            }
        }
        for served in self.doors.values_mut() {
            let mode = served.door.mode();
            let due = served.timer.check(now_ns, step_ns);
            if (due || served.published != Some(mode)) && out.wants(&served.states_key) {
                out.put_encoded(&served.states_key, &door_state(&served.door, mode, state.time));
                served.published = Some(mode);
            }
        }
    }

    /// While every door rests, the answers are known until the first of: an
    /// automatic opening ending, the next look for robots, the next state
    /// due. No command changes in between (a request cuts the promise
    /// short, as a command does a drive's).
    fn promise(&self, state: &WorldState, changes: &mut Vec<(u64, BodyCommand)>) -> Option<u64> {
        changes.clear();
        let (now_ns, step_ns) = (state.time.nanos, state.step_ns);
        let timers = self.doors.values().map(|d| &d.timer).chain(&self.proximity_timer);
        let due = timers.map(|t| t.steps_until_due(now_ns, step_ns).saturating_sub(1));
        let resting = self.doors.values().map(|d| d.door.resting_steps(now_ns, step_ns));
        Some(due.chain(resting).min().unwrap_or(0))
    }

    /// A `DoorRequest` on one of the requests topics: open or close the
    /// doors of that name on it.
    fn on_input(&mut self, tag: &str, payload: &[u8], _out: &mut Outbox) -> Result<(), BadInput> {
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
        let mut known = false;
        for served in self.doors.values_mut() {
            if served.requests_key == tag && served.door.config().door_name == request.door_name {
                served.door.ask(open);
                known = true;
            }
        }
        if !known && !self.doors.is_empty() {
            tracing::debug!("no door \"{}\" here (another shard's, or none)", request.door_name);
        }
        Ok(())
    }
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
    let (mut low, mut high) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
    let mut take = |[x, y]: [f64; 2]| {
        low = [low[0].min(x), low[1].min(y)];
        high = [high[0].max(x), high[1].max(y)];
    };
    for footprint in footprints.iter().filter(|f| !f.sensor) {
        match &footprint.shape {
            FootprintShape::Circle { center: [x, y], radius } => {
                take([x - radius, y - radius]);
                take([x + radius, y + radius]);
            }
            FootprintShape::Polygon { points } => points.iter().copied().for_each(&mut take),
        }
    }
    let [lx, ly] = if low[0] > high[0] { [0.0; 2] } else { [(low[0] + high[0]) / 2.0, (low[1] + high[1]) / 2.0] };
    let (sin, cos) = pose.theta_rad.sin_cos();
    [pose.x_m + cos * lx - sin * ly, pose.y_m + sin * lx + cos * ly]
}

/// Every body of every robot (a model with a drive).
fn robot_bodies(description: &WorldDescription) -> Vec<BodyId> {
    description.models.iter().filter(|m| m.is_robot()).flat_map(|m| m.bodies.iter().map(|b| b.id)).collect()
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
