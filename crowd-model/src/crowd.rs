//! The crowd: every agent's next velocity from one snapshot of where
//! everyone is, so that no agent's move depends on the order they are
//! worked out in (nor on which process works them out).

use flotilla_plugins::pedestrian::{Behaviour, PedestrianConfig, Release};
use rand::SeedableRng;
use rand_distr::{Distribution, Normal};
use rand_xoshiro::Xoshiro256PlusPlus;

use flotilla_wire::geometry::wrap_angle;

use crate::grid::{PointGrid, WallGrid};
use crate::plan::Plan;
use crate::social_force::{self, CUTOFF_RANGES, LOOK_AHEAD_S};
use crate::vec2::Vec2;

/// A scripted agent is at a waypoint within this distance, m: it lands on
/// each, but a late command (realtime) may leave it a little short.
const SCRIPTED_ARRIVAL_M: f64 = 1e-3;

/// A scripted agent heads along its way within this angle, rad.
const TURNED_RAD: f64 = 1e-9;

/// One agent as the crowd is given it.
#[derive(Debug, Clone)]
pub struct AgentSetup {
    /// Its parameters.
    pub config: PedestrianConfig,
    /// The seed of its random pushes (see `flotilla_wire::seed`).
    pub seed: u64,
    /// The index of the walls it keeps away from (those of its layers).
    pub walls: usize,
}

/// Something the agents keep away from as from a person, but do not walk:
/// a robot, or a body of any other model (a crate, a Tween's door).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Robot {
    /// Where it is, m.
    pub position: Vec2,
    /// How it moves, m/s.
    pub velocity: Vec2,
    /// The radius of a circle around its footprints, m.
    pub radius_m: f64,
    /// Whether it is a robot's (which `sees_robots: false` ignores).
    pub is_robot: bool,
}

/// Where everyone is at one step.
#[derive(Debug, Clone, Copy)]
pub struct Snapshot<'a> {
    /// Every agent's position, m, in the crowd's order.
    pub positions: &'a [Vec2],
    /// Every agent's velocity, m/s.
    pub velocities: &'a [Vec2],
    /// Every agent's heading, rad.
    pub headings: &'a [f64],
    /// Every robot.
    pub robots: &'a [Robot],
}

/// An agent's move until its next update.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Move {
    /// The agent.
    pub agent: usize,
    /// Its velocity in the world frame, m/s.
    pub velocity: Vec2,
    /// The heading it turns to, rad (`None`: it keeps its heading).
    pub heading_rad: Option<f64>,
    /// Where it must be at its next update, exactly, whatever the time
    /// until then (coming on stage or going off): the velocity is then
    /// whatever takes it there.
    pub arrive: Option<Vec2>,
}

impl Move {
    /// A move at `velocity`, turning to `heading_rad`.
    pub fn walk(agent: usize, velocity: Vec2, heading_rad: Option<f64>) -> Move {
        Move { agent, velocity, heading_rad, arrive: None }
    }
}

/// Faster than this no one walks, m/s: a velocity above it is an agent's
/// jump on or off stage, and the agent counts as standing.
pub const JUMP_MPS: f64 = 50.0;

/// An agent this near its offstage place is there, m.
pub const OFFSTAGE_TOLERANCE_M: f64 = 1.0;

/// Where an agent with a `release` is.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Stage {
    /// Walking among the others.
    On,
    /// Jumping on stage: there at its next update.
    Entering,
    /// Jumping offstage: there at its next update.
    Leaving,
    /// Waiting offstage until this sim time, ns (`None`: for good).
    Off(Option<u64>),
}

struct Agent {
    config: PedestrianConfig,
    stage: Stage,
    home: Vec2,
    plan: Plan,
    group: Option<usize>,
    rng: Xoshiro256PlusPlus,
    noise: Option<Normal<f64>>,
    walls: usize,
    cos_half_view: f64,
}

struct Group {
    members: Vec<usize>,
    plan: Plan,
    /// The sim time its plan was last brought up to date, ns.
    planned_at_ns: Option<u64>,
    target: Option<Vec2>,
}

/// Every agent of a world, with its plan and random stream.
pub struct Crowd {
    agents: Vec<Agent>,
    groups: Vec<Group>,
    walls: Vec<WallGrid>,
    /// The side of the neighbour grid's cells: farther people and robots
    /// push with less than e⁻⁶ of their strength.
    reach_m: f64,
    grid: PointGrid,
    robot_grid: PointGrid,
    /// The snapshot's velocities, jumps on and off stage made standing.
    velocities: Vec<Vec2>,
    /// Every agent's radius, m, apart from its parameters: the neighbour
    /// loop reads only these (a tenth of the memory of the parameters).
    radii: Vec<f64>,
}

impl Crowd {
    /// The crowd of `agents`, in this order, walking among `walls` (one
    /// grid per set of layers, as [`AgentSetup::walls`] indexes them).
    /// Agents naming the same group walk as one.
    pub fn new(agents: Vec<AgentSetup>, walls: Vec<WallGrid>) -> Crowd {
        let mut groups: Vec<(String, Group)> = Vec::new();
        let mut reach_m: f64 = 0.0;
        let agents: Vec<Agent> = agents
            .into_iter()
            .enumerate()
            .map(|(i, setup)| {
                let c = &setup.config;
                reach_m = reach_m.max(
                    2.0 * c.radius_m
                        + CUTOFF_RANGES * c.agent_range_m.max(c.robot_range_m)
                        + LOOK_AHEAD_S * c.max_speed_mps / 2.0,
                );
                let group = (!c.group.is_empty()).then(|| match groups.iter().position(|(name, _)| *name == c.group) {
                    Some(g) => {
                        groups[g].1.members.push(i);
                        g
                    }
                    None => {
                        let group = Group { members: vec![i], plan: Plan::new(), planned_at_ns: None, target: None };
                        groups.push((c.group.clone(), group));
                        groups.len() - 1
                    }
                });
                let (stage, home) = match &c.release {
                    Some(r) => (Stage::Off(Some(secs_to_ns(r.first_s))), Vec2::new(r.offstage[0], r.offstage[1])),
                    None => (Stage::On, Vec2::ZERO),
                };
                Agent {
                    stage,
                    home,
                    noise: (c.noise > 0.0).then(|| Normal::new(0.0, c.noise).expect("validated ≥ 0")),
                    cos_half_view: c.view_half_angle_rad.cos(),
                    rng: Xoshiro256PlusPlus::seed_from_u64(setup.seed),
                    plan: Plan::new(),
                    walls: setup.walls,
                    group,
                    config: setup.config,
                }
            })
            .collect();
        let radii = agents.iter().map(|a| a.config.radius_m).collect();
        Crowd {
            radii,
            agents,
            groups: groups.into_iter().map(|(_, g)| g).collect(),
            walls,
            reach_m,
            grid: PointGrid::default(),
            robot_grid: PointGrid::default(),
            velocities: Vec::new(),
        }
    }

    /// How many agents.
    pub fn len(&self) -> usize {
        self.agents.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.agents.is_empty()
    }

    /// The moves of the agents for which `due` holds, at `now_ns`, each
    /// integrated over its update period, from `snapshot` alone.
    pub fn update(&mut self, now_ns: u64, snapshot: Snapshot<'_>, due: impl Fn(usize) -> bool, out: &mut Vec<Move>) {
        debug_assert_eq!(snapshot.positions.len(), self.agents.len());
        let mut velocities = std::mem::take(&mut self.velocities);
        velocities.clear();
        velocities.extend(snapshot.velocities.iter().map(|&v| {
            if v.norm_squared() > JUMP_MPS * JUMP_MPS {
                Vec2::ZERO
            } else {
                v
            }
        }));
        let snapshot = Snapshot { velocities: &velocities, ..snapshot };
        self.grid = PointGrid::new(snapshot.positions, self.reach_m);
        let robot_positions: Vec<Vec2> = snapshot.robots.iter().map(|r| r.position).collect();
        let sight = self.agents.iter().map(|a| a.config.robot_sight_m).fold(0.0, f64::max);
        self.robot_grid = PointGrid::new(&robot_positions, sight.max(self.reach_m));
        self.plan_groups(now_ns, snapshot, &due);
        for i in 0..self.agents.len() {
            if due(i) {
                out.extend(self.staged_move(i, now_ns, snapshot));
            }
        }
        self.velocities = velocities;
    }

    /// Agent `i`'s move by its stage: none while it waits offstage, a jump
    /// on stage when its time comes, and off again when a walk that is not
    /// cyclic ends.
    fn staged_move(&mut self, i: usize, now_ns: u64, snapshot: Snapshot<'_>) -> Option<Move> {
        let agent = &mut self.agents[i];
        match agent.stage {
            Stage::Off(Some(back)) if now_ns >= back => {
                let [x, y, heading] = agent.config.release.map_or([0.0; 3], |r| r.at);
                agent.stage = Stage::Entering;
                agent.plan = Plan::new();
                Some(Move { agent: i, velocity: Vec2::ZERO, heading_rad: Some(heading), arrive: Some(Vec2::new(x, y)) })
            }
            // Offstage, wherever its model was placed.
            Stage::Off(_) if (snapshot.positions[i] - agent.home).norm() > OFFSTAGE_TOLERANCE_M => {
                agent.stage = Stage::Leaving;
                Some(Move { agent: i, velocity: Vec2::ZERO, heading_rad: None, arrive: Some(agent.home) })
            }
            Stage::Off(_) => None,
            Stage::Leaving => {
                let first = agent.config.release.map(|r| secs_to_ns(r.first_s));
                agent.stage = match first {
                    // placed on stage by its model: not yet released
                    Some(first) if now_ns < first => Stage::Off(Some(first)),
                    _ => Stage::Off(next_release(agent.config.release.as_ref(), now_ns)),
                };
                Some(Move::walk(i, Vec2::ZERO, None))
            }
            Stage::Entering | Stage::On => {
                agent.stage = Stage::On;
                let walk = self.move_of(i, now_ns, snapshot);
                let agent = &mut self.agents[i];
                if agent.config.release.is_some() && agent.plan.finished() {
                    agent.stage = Stage::Leaving;
                    return Some(Move { agent: i, velocity: Vec2::ZERO, heading_rad: None, arrive: Some(agent.home) });
                }
                Some(walk)
            }
        }
    }

    /// Brings the plans of the groups with a member due up to date, once
    /// per instant: a group moves on when its centre reaches a waypoint.
    fn plan_groups(&mut self, now_ns: u64, snapshot: Snapshot<'_>, due: &impl Fn(usize) -> bool) {
        for group in &mut self.groups {
            if group.planned_at_ns == Some(now_ns) || !group.members.iter().any(|&m| due(m)) {
                continue;
            }
            let centre = centre_of(&group.members, snapshot.positions);
            let leader = &self.agents[group.members[0]].config;
            group.target =
                group.plan.target(centre, now_ns, &leader.waypoints, leader.cyclic, leader.waypoint_radius_m);
            group.planned_at_ns = Some(now_ns);
        }
    }

    fn move_of(&mut self, i: usize, now_ns: u64, snapshot: Snapshot<'_>) -> Move {
        let me = snapshot.positions[i];
        let velocity = snapshot.velocities[i];
        let target = {
            let agent = &mut self.agents[i];
            let c = &agent.config;
            // A scripted agent lands on its waypoints (see below).
            let radius_m = match c.behaviour {
                Behaviour::Social => c.waypoint_radius_m,
                Behaviour::Scripted => SCRIPTED_ARRIVAL_M,
            };
            match agent.group {
                Some(g) => self.groups[g].target,
                None => agent.plan.target(me, now_ns, &c.waypoints, c.cyclic, radius_m),
            }
        };
        let agent = &self.agents[i];
        let c = &agent.config;
        let period_s = 1.0 / c.update_rate_hz;
        if c.behaviour == Behaviour::Scripted {
            // Straight to the waypoint at the set speed, landing on it; at
            // a corner it first turns on the spot (for one update), so that
            // its origin never leaves the lines between its waypoints.
            let Some(target) = target else {
                return Move::walk(i, Vec2::ZERO, None);
            };
            let to = target - me;
            let heading = to.y.atan2(to.x);
            if wrap_angle(heading - snapshot.headings[i]).abs() > TURNED_RAD {
                return Move::walk(i, Vec2::ZERO, Some(heading));
            }
            let speed = c.desired_speed_mps.min(to.norm() / period_s);
            return Move::walk(i, to.unit() * speed, Some(heading));
        }
        let desired = target.map_or(Vec2::ZERO, |t| (t - me).unit() * c.desired_speed_mps);
        let mut force = social_force::driving(desired, velocity, c.relaxation_time_s)
            + self.pushes(i, me, desired.unit(), snapshot);
        let agent = &mut self.agents[i];
        if let Some(noise) = &agent.noise {
            force += Vec2::new(noise.sample(&mut agent.rng), noise.sample(&mut agent.rng));
        }
        let c = &agent.config;
        let next = (velocity + force * period_s).clamped(c.max_speed_mps);
        let heading_rad = (next.norm() > 0.1).then(|| next.y.atan2(next.x));
        Move::walk(i, next, heading_rad)
    }

    /// Everything that pushes agent `i` at `me`, heading along the unit
    /// `heading`: other people, robots, the nearest wall and its group.
    fn pushes(&self, i: usize, me: Vec2, heading: Vec2, snapshot: Snapshot<'_>) -> Vec2 {
        let agent = &self.agents[i];
        let c = &agent.config;
        let mut force = Vec2::ZERO;
        for j in self.grid.near(me) {
            if j == i {
                continue;
            }
            let (p, v) = (snapshot.positions[j], snapshot.velocities[j]);
            let radii = c.radius_m + self.radii[j];
            if too_far(me - p, v, radii + CUTOFF_RANGES * c.agent_range_m) {
                continue;
            }
            let push = social_force::repulsion(me, p, v, radii, c.agent_strength, c.agent_range_m);
            force += push * social_force::view_weight(heading, p - me, agent.cos_half_view, c.out_of_view_weight);
        }
        for k in self.robot_grid.near(me) {
            let robot = snapshot.robots[k];
            let gap = robot.position - me;
            if (robot.is_robot && !c.sees_robots) || gap.norm() > c.robot_sight_m + robot.radius_m {
                continue;
            }
            {
                let radii = c.radius_m + robot.radius_m;
                let push = social_force::repulsion(
                    me,
                    robot.position,
                    robot.velocity,
                    radii,
                    c.robot_strength,
                    c.robot_range_m,
                );
                force += push * social_force::view_weight(heading, gap, agent.cos_half_view, c.out_of_view_weight);
            }
        }
        if let Some(nearest) = self.walls.get(agent.walls).and_then(|w| w.nearest(me)) {
            force += social_force::wall(me, nearest, c.radius_m, c.wall_strength, c.wall_range_m);
        }
        if let Some(g) = agent.group {
            let members = &self.groups[g].members;
            force +=
                social_force::cohesion(me, centre_of(members, snapshot.positions), members.len(), c.group_strength);
        }
        force
    }
}

fn secs_to_ns(s: f64) -> u64 {
    (s * 1e9).round() as u64
}

/// The first release after `now_ns`: `first + k·every` (none without `every`).
fn next_release(release: Option<&Release>, now_ns: u64) -> Option<u64> {
    let release = release?;
    let (first, every) = (secs_to_ns(release.first_s), secs_to_ns(release.every_s?).max(1));
    Some(if now_ns < first { first } else { first + ((now_ns - first) / every + 1) * every })
}

/// Whether someone at `r` from a walker (`r` pointing from them to it),
/// moving at `v`, is surely out of reach: the ellipse's semi-minor axis is
/// at least √(|r|² − |r|·|v|Δt) once |r| exceeds |v|Δt.
fn too_far(r: Vec2, v: Vec2, reach_m: f64) -> bool {
    let d = r.norm();
    let ahead = v.norm() * LOOK_AHEAD_S;
    d > ahead && d * d - d * ahead > reach_m * reach_m
}

fn centre_of(members: &[usize], positions: &[Vec2]) -> Vec2 {
    let sum = members.iter().fold(Vec2::ZERO, |s, &m| s + positions[m]);
    sum * (1.0 / members.len().max(1) as f64)
}

#[cfg(test)]
mod tests;
