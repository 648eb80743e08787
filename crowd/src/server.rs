//! The crowd's node: every `Pedestrian` instance's body moved from world
//! states, one command per agent and update.
//!
//! The crowd is worked out whole, from the world state of the step, even
//! by a node that serves only some of its agents (`--shard`): an agent's
//! move depends on where everyone is, never on who computed it.

use flotilla_messages::builtin_interfaces::Duration;
use flotilla_messages::geometry_msgs::{Point, Quaternion, Vector3};
use flotilla_messages::people_msgs::{People, Person};
use flotilla_messages::std_msgs::{ColorRGBA, Header};
use flotilla_messages::visualization_msgs::{Marker, MarkerArray};
use flotilla_node_kit::runtime::{stride_of, NodePlugin, Outbox, Rebuild};
use flotilla_plugins::pedestrian::{Behaviour, PedestrianConfig, MARKERS_TOPIC, PEOPLE_TOPIC, TOPICS_RATE_HZ};
use flotilla_plugins::registry::Role;
use flotilla_plugins::robots::RobotModel;
use flotilla_wire::description::{footprints_box, FootprintShape, LayerBits, ModelDescription, WorldDescription};
use flotilla_wire::seed::plugin_seed;
use flotilla_wire::update_timer::UpdateTimer;
use flotilla_wire::world_to_nodes::{BodyId, WorldState};

use flotilla_crowd_model::command::held_command;
use flotilla_crowd_model::crowd::{AgentSetup, Crowd, Move, Robot, Snapshot, JUMP_MPS, OFFSTAGE_TOLERANCE_M};
use flotilla_crowd_model::grid::WallGrid;
use flotilla_crowd_model::social_force::CUTOFF_RANGES;
use flotilla_crowd_model::vec2::Vec2;

/// Where an agent whose body is not in the state is taken to be: far from
/// everyone, so that it pushes no one.
const ABSENT: Vec2 = Vec2::new(1e12, 1e12);

/// One agent of the world's crowd.
#[derive(Debug)]
struct Agent {
    /// `<model>/<plugin>`.
    key: String,
    body: BodyId,
    /// Whether this node moves it.
    served: bool,
    timer: UpdateTimer,
    /// How it is drawn: its model's name, its radius (m), its colour,
    /// whether it is a person (else a scripted agent), and the box around its
    /// footprints in its body's frame (centre and size, m).
    name: String,
    radius_m: f64,
    color: [f64; 4],
    person: bool,
    outline: ([f64; 2], [f64; 2]),
    /// Where it waits when it is not on stage, if it ever is not.
    offstage: Option<Vec2>,
}

/// How tall people and scripted agents are drawn, m.
const PERSON_HEIGHT_M: f64 = 1.7;
const SCRIPTED_HEIGHT_M: f64 = 1.0;

/// Serves `Pedestrian` instances.
#[derive(Default)]
pub struct CrowdServer {
    agents: Vec<Agent>,
    crowd: Option<Crowd>,
    /// The bodies of every model but the agents: the radius of a circle
    /// around their footprints, m, and whether they are a robot's.
    robots: Vec<(BodyId, f64, bool)>,
    positions: Vec<Vec2>,
    velocities: Vec<Vec2>,
    headings: Vec<f64>,
    robot_states: Vec<Robot>,
    moves: Vec<Move>,
    /// The keys of the marker and people topics, and when they are next
    /// due.
    markers_key: String,
    people_key: String,
    topics_timer: Option<UpdateTimer>,
}

impl NodePlugin for CrowdServer {
    fn role(&self) -> &'static Role {
        &PedestrianConfig::ROLE
    }

    /// The crowd is remade when its agents change (a spawn or a delete of
    /// one); agents that stay keep their plans only when nothing changed.
    fn rebuild(&mut self, rebuild: &mut Rebuild<'_>) {
        let description = rebuild.description;
        let all = flotilla_plugins::configured::<PedestrianConfig>(description, &|_, _| true);
        let same = all.len() == self.agents.len()
            && all.iter().zip(&self.agents).all(|(c, a)| c.key == a.key && c.body == a.body);
        if same && self.crowd.is_some() {
            for agent in &mut self.agents {
                let (model, plugin) = agent.key.split_once('/').unwrap_or_default();
                agent.served = rebuild.serves(model, plugin);
            }
        } else {
            let mut walls = WallSets::default();
            let mut setups = Vec::with_capacity(all.len());
            self.agents.clear();
            for c in &all {
                let reach_m = c.config.radius_m + CUTOFF_RANGES * c.config.wall_range_m;
                setups.push(AgentSetup {
                    seed: plugin_seed(description.seed, &c.model.name, &c.plugin.name),
                    walls: walls.index(description, layers_of(c.model, &c.config.body), reach_m),
                    config: c.config.clone(),
                });
                let body = c.model.body(&c.config.body);
                let color = body.map_or([1.0; 4], |b| b.color);
                let outline = body.map_or(([0.0; 2], [2.0 * c.config.radius_m; 2]), |b| {
                    footprints_box(&b.footprints).unwrap_or(([0.0; 2], [0.0; 2]))
                });
                self.agents.push(Agent {
                    key: c.key.clone(),
                    body: c.body,
                    served: rebuild.serves(&c.model.name, &c.plugin.name),
                    timer: UpdateTimer::new(c.config.update_rate_hz),
                    name: c.model.name.clone(),
                    radius_m: c.config.radius_m,
                    color,
                    person: c.config.behaviour == Behaviour::Social,
                    outline,
                    offstage: c.config.release.as_ref().map(|r| Vec2::new(r.offstage[0], r.offstage[1])),
                });
            }
            let served = self.agents.iter().filter(|a| a.served).count();
            tracing::info!("walking {served} of the crowd's {} agents", self.agents.len());
            self.crowd = Some(Crowd::new(setups, walls.into_grids()));
        }
        self.markers_key = rebuild.keys.ros(MARKERS_TOPIC);
        self.people_key = rebuild.keys.ros(PEOPLE_TOPIC);
        self.topics_timer.get_or_insert_with(|| UpdateTimer::new(TOPICS_RATE_HZ));
        let mut agents: Vec<BodyId> = self.agents.iter().map(|a| a.body).collect();
        agents.sort_unstable();
        self.robots = description
            .models
            .iter()
            .flat_map(|m| m.bodies.iter().map(move |b| (b.id, body_radius(&b.footprints), m.is_robot())))
            .filter(|(id, radius_m, _)| agents.binary_search(id).is_err() && *radius_m > 0.0)
            .collect();
    }

    fn reset(&mut self) {
        *self = CrowdServer::default();
    }

    fn on_state(&mut self, state: &WorldState, out: &mut Outbox) {
        let (now_ns, step_ns) = (state.time.nanos, state.step_ns);
        if self.agents.iter().any(|a| a.served) && self.topics_timer.as_mut().is_some_and(|t| t.check(now_ns, step_ns))
        {
            if out.wants(&self.markers_key) {
                let markers = self.markers(state);
                out.put_encoded(&self.markers_key, &markers);
            }
            // Every node sees everyone; the one walking the first agent
            // lists them all, so that `/people` has one publisher however
            // the crowd is sharded.
            if self.agents.first().is_some_and(|a| a.served) && out.wants(&self.people_key) {
                let people = self.people(state);
                out.put_encoded(&self.people_key, &people);
            }
        }
        let Some(crowd) = &mut self.crowd else { return };
        let due: Vec<bool> = self.agents.iter_mut().map(|a| a.served && a.timer.check(now_ns, step_ns)).collect();
        if !due.iter().any(|&d| d) {
            return;
        }
        let body = |id: BodyId| state.bodies.binary_search_by_key(&id, |b| b.id).ok().map(|i| &state.bodies[i]);
        self.positions.clear();
        self.velocities.clear();
        self.headings.clear();
        for agent in &self.agents {
            let (p, v, theta) = body(agent.body).map_or((ABSENT, Vec2::ZERO, 0.0), |b| {
                (Vec2::new(b.pose.x_m, b.pose.y_m), Vec2::new(b.twist.vx_mps, b.twist.vy_mps), b.pose.theta_rad)
            });
            self.positions.push(p);
            self.velocities.push(v);
            self.headings.push(theta);
        }
        self.robot_states.clear();
        for &(id, radius_m, is_robot) in &self.robots {
            if let Some(b) = body(id) {
                self.robot_states.push(Robot {
                    position: Vec2::new(b.pose.x_m, b.pose.y_m),
                    velocity: Vec2::new(b.twist.vx_mps, b.twist.vy_mps),
                    radius_m,
                    is_robot,
                });
            }
        }
        let snapshot = Snapshot {
            positions: &self.positions,
            velocities: &self.velocities,
            headings: &self.headings,
            robots: &self.robot_states,
        };
        self.moves.clear();
        crowd.update(now_ns, snapshot, |i| due[i], &mut self.moves);
        let dt_s = step_ns as f64 * 1e-9;
        let commands = out.actuate(state.step);
        for m in &self.moves {
            if self.positions[m.agent] == ABSENT {
                continue;
            }
            let agent = &self.agents[m.agent];
            let steps = agent.timer.steps_until_due(now_ns, step_ns);
            // A jump on or off stage lands where it goes at the next update.
            let velocity = match m.arrive {
                Some(at) => (at - self.positions[m.agent]) * (1.0 / (steps as f64 * dt_s)),
                None => m.velocity,
            };
            commands.push(held_command(agent.body, self.headings[m.agent], velocity, m.heading_rad, steps, dt_s));
        }
    }

    /// Only the states at which agents or markers may be due: the world
    /// holds every agent's command in between (at 50 Hz and a 5 ms step,
    /// one state in four).
    fn state_stride(&self, step_ns: u64) -> u64 {
        let served = self.agents.iter().filter(|a| a.served);
        let markers = self.topics_timer.iter().filter(|_| self.agents.iter().any(|a| a.served));
        stride_of(served.map(|a| a.timer.period_ns()).chain(markers.map(UpdateTimer::period_ns)), step_ns)
    }

    /// Nothing changes until the next agent or the markers are due: the
    /// world holds every agent's command.
    fn steps_without_output(&self, state: &WorldState) -> u64 {
        let (now_ns, step_ns) = (state.time.nanos, state.step_ns);
        let served = self.agents.iter().filter(|a| a.served);
        let markers = self.topics_timer.iter().filter(|_| self.agents.iter().any(|a| a.served));
        let due = served
            .map(|a| a.timer.steps_until_due(now_ns, step_ns))
            .chain(markers.map(|t| t.steps_until_due(now_ns, step_ns)));
        flotilla_node_kit::runtime::steps_before_first_due(due)
    }
}

impl CrowdServer {
    /// The served agents for rviz2, in the world frame (`map`): a cylinder
    /// (namespace `people` or `scripted`) and an arrow of its velocity, 1 s
    /// long (`velocities`), each with the agent's index as its id, and its
    /// name above it (`names`). Each lasts 0.5 s, so a deleted agent's go.
    fn markers(&self, state: &WorldState) -> MarkerArray {
        let header = Header { stamp: state.time.to_ros(), frame_id: "map".to_string() };
        let lifetime = Duration { sec: 0, nanosec: 500_000_000 };
        let mut markers = MarkerArray::default();
        for (i, agent) in self.agents.iter().enumerate().filter(|(_, a)| a.served) {
            let Ok(k) = state.bodies.binary_search_by_key(&agent.body, |b| b.id) else { continue };
            let body = &state.bodies[k];
            let [r, g, b, a] = agent.color.map(|c| c as f32);
            let height_m = if agent.person { PERSON_HEIGHT_M } else { SCRIPTED_HEIGHT_M };
            // People are cylinders; scripted agents (a trolley, a forklift)
            // the box around their footprints.
            let mut shape = Marker {
                header: header.clone(),
                ns: if agent.person { "people" } else { "scripted" }.into(),
                id: i as i32,
                marker_type: if agent.person { Marker::CYLINDER } else { Marker::CUBE },
                action: Marker::ADD,
                color: ColorRGBA { r, g, b, a },
                lifetime,
                ..Marker::default()
            };
            let ([cx, cy], [length_m, width_m]) =
                if agent.person { ([0.0; 2], [2.0 * agent.radius_m; 2]) } else { agent.outline };
            let (sin, cos) = body.pose.theta_rad.sin_cos();
            shape.pose.position = Point {
                x: body.pose.x_m + cos * cx - sin * cy,
                y: body.pose.y_m + sin * cx + cos * cy,
                z: height_m / 2.0,
            };
            shape.pose.orientation = Quaternion::from_yaw(body.pose.theta_rad);
            shape.scale = Vector3 { x: length_m, y: width_m, z: height_m };
            let (vx, vy) = (body.twist.vx_mps, body.twist.vy_mps);
            let mut arrow = Marker { ns: "velocities".into(), marker_type: Marker::ARROW, ..shape.clone() };
            arrow.pose.orientation = Quaternion::from_yaw(vy.atan2(vx));
            arrow.scale = Vector3 { x: vx.hypot(vy).max(1e-3), y: 0.05, z: 0.05 };
            let mut name = Marker { ns: "names".into(), marker_type: Marker::TEXT_VIEW_FACING, ..shape.clone() };
            name.pose.position.z = height_m + 0.2;
            name.scale = Vector3 { x: 0.0, y: 0.0, z: 0.3 };
            name.text = agent.name.clone();
            markers.markers.extend([shape, arrow, name]);
        }
        markers
    }
}

impl CrowdServer {
    /// Every agent on stage for people-aware navigation (`people_msgs`), in
    /// the world frame (`map`): its model's name, its position and velocity
    /// (z = 0), reliability 1, and as tags its `id` (its index, the markers'
    /// id), its `yaw` (rad) and its `kind` (`person` or `scripted`). An
    /// agent jumping on or off stage is listed standing, as the forces take
    /// it.
    fn people(&self, state: &WorldState) -> People {
        let header = Header { stamp: state.time.to_ros(), frame_id: "map".to_string() };
        let mut people = Vec::with_capacity(self.agents.len());
        for (i, agent) in self.agents.iter().enumerate() {
            let Ok(k) = state.bodies.binary_search_by_key(&agent.body, |b| b.id) else { continue };
            let body = &state.bodies[k];
            let position = Vec2::new(body.pose.x_m, body.pose.y_m);
            if agent.offstage.is_some_and(|o| (position - o).norm() <= OFFSTAGE_TOLERANCE_M) {
                continue;
            }
            let mut velocity = Vec2::new(body.twist.vx_mps, body.twist.vy_mps);
            if velocity.norm() > JUMP_MPS {
                velocity = Vec2::ZERO;
            }
            people.push(Person {
                name: agent.name.clone(),
                position: Point { x: position.x, y: position.y, z: 0.0 },
                velocity: Point { x: velocity.x, y: velocity.y, z: 0.0 },
                reliability: 1.0,
                tagnames: ["id", "yaw", "kind"].map(String::from).to_vec(),
                tags: vec![
                    i.to_string(),
                    body.pose.theta_rad.to_string(),
                    if agent.person { "person" } else { "scripted" }.to_string(),
                ],
            });
        }
        People { header, people }
    }
}

/// The wall grids of the sets of layers agents live on, one per set.
#[derive(Default)]
struct WallSets {
    sets: Vec<WallSet>,
}

/// The walls of one set of layers.
struct WallSet {
    layers: LayerBits,
    /// How far from a wall an agent still feels it, m.
    reach_m: f64,
    segments: Vec<(Vec2, Vec2)>,
}

impl WallSets {
    /// The index of the walls of `layers`, looked at up to `reach_m` away.
    fn index(&mut self, description: &WorldDescription, layers: LayerBits, reach_m: f64) -> usize {
        if let Some(i) = self.sets.iter().position(|set| set.layers == layers) {
            self.sets[i].reach_m = self.sets[i].reach_m.max(reach_m);
            return i;
        }
        let segments = description
            .layers
            .iter()
            .filter(|l| l.bits & layers != 0)
            .flat_map(|l| l.obstacles())
            .map(|s| (Vec2::new(s.a[0], s.a[1]), Vec2::new(s.b[0], s.b[1])))
            .collect();
        self.sets.push(WallSet { layers, reach_m, segments });
        self.sets.len() - 1
    }

    fn into_grids(self) -> Vec<WallGrid> {
        self.sets.into_iter().map(|set| WallGrid::new(set.segments, set.reach_m)).collect()
    }
}

/// The layers a model's body collides in.
fn layers_of(model: &ModelDescription, body: &str) -> LayerBits {
    let Some(body) = model.body(body) else { return 0 };
    body.footprints.iter().filter(|f| !f.sensor).fold(0, |bits, f| bits | model.footprint_layers(f))
}

/// The radius of a circle about a body's origin around its solid footprints, m.
fn body_radius(footprints: &[flotilla_wire::description::Footprint]) -> f64 {
    let reach = |shape: &FootprintShape| match shape {
        FootprintShape::Circle { center, radius } => center[0].hypot(center[1]) + radius,
        FootprintShape::Polygon { points } => points.iter().map(|p| p[0].hypot(p[1])).fold(0.0, f64::max),
    };
    footprints.iter().filter(|f| !f.sensor).map(|f| reach(&f.shape)).fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_wire::geometry::{Pose2, Twist2};
    use flotilla_wire::time::SimTime;
    use flotilla_wire::world_to_nodes::BodyState;

    fn agent(name: &str, body: BodyId, person: bool, offstage: Option<Vec2>) -> Agent {
        Agent {
            key: format!("{name}/walk"),
            body,
            served: true,
            timer: UpdateTimer::new(50.0),
            name: name.to_string(),
            radius_m: 0.25,
            color: [1.0; 4],
            person,
            outline: ([0.0; 2], [0.5; 2]),
            offstage,
        }
    }

    fn body(id: BodyId, x_m: f64, y_m: f64, theta_rad: f64, vx_mps: f64) -> BodyState {
        BodyState { id, pose: Pose2 { x_m, y_m, theta_rad }, twist: Twist2 { vx_mps, vy_mps: 0.0, omega_radps: 0.0 } }
    }

    /// `/people` lists who is on stage, where the world has them: an agent
    /// waiting at its offstage place is left out, one jumping on stage is
    /// listed standing, a scripted agent is tagged so.
    #[test]
    fn people_lists_the_agents_on_stage_with_their_id_pose_velocity_and_kind() {
        let server = CrowdServer {
            agents: vec![
                agent("alice", 1, true, None),
                agent("waiting", 2, true, Some(Vec2::new(0.0, -10_000.0))),
                agent("arriving", 3, true, Some(Vec2::new(0.0, -10_000.0))),
                agent("trolley", 4, false, None),
            ],
            ..CrowdServer::default()
        };
        let state = WorldState {
            revision: 1,
            step: 400,
            time: SimTime::at_step(400, 5_000_000),
            step_ns: 5_000_000,
            bodies: vec![
                body(1, 2.0, 3.0, 0.5, 1.2),
                body(2, 0.3, -10_000.2, 0.0, 0.0),
                body(3, 5.0, 5.0, 0.0, 9_000.0),
                body(4, 7.0, 1.0, std::f64::consts::PI, -0.5),
            ],
        };
        let people = server.people(&state);
        assert_eq!((people.header.stamp.sec, people.header.frame_id.as_str()), (2, "map"));
        let names: Vec<&str> = people.people.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["alice", "arriving", "trolley"]);
        let [alice, arriving, trolley] = &people.people[..] else { unreachable!() };
        assert_eq!((alice.position.x, alice.position.y, alice.velocity.x), (2.0, 3.0, 1.2));
        assert_eq!((alice.tag("id"), alice.tag("yaw"), alice.tag("kind")), (Some("0"), Some("0.5"), Some("person")));
        assert_eq!((arriving.velocity.x, arriving.tag("id")), (0.0, Some("2")), "a jump is standing");
        assert_eq!(trolley.tag("kind"), Some("scripted"));
        assert_eq!(trolley.tag("yaw").unwrap().parse::<f64>().unwrap(), std::f64::consts::PI);
        assert!(people.people.iter().all(|p| p.reliability == 1.0 && p.position.z == 0.0));
    }
}
