//! When robots change maps, free of Zenoh.
//!
//! A robot is watched while it lives on a map. A transition of that map
//! fires:
//!
//! * automatic (no command): when the robot **enters** its circle — it was
//!   outside at the previous look and is inside now;
//! * with a command: when the command arrives and the robot is inside.
//!
//! A robot that arrives on a map (it started there, was moved there, or the
//! manager restarted) is not entering the circles it already stands in.
//! That is the guard against the loop Flat's documentation warns of: two
//! automatic transitions at one place (map A → B and B → A) fire once, not
//! back and forth at every step. While a change it asked for is not yet in
//! the world's description, a robot fires nothing else; a request the world
//! did not apply (lost on a congested link) is sent again after
//! [`RETRY_AFTER_NS`] of sim time, and the world applies it once at most
//! (it carries the map it leaves, see `ControlRequest::SetMap`).

use std::collections::BTreeMap;

use flotilla_wire::control::ControlRequest;
use flotilla_wire::description::{MapTransition, WorldDescription};
use flotilla_wire::geometry::Pose2;
use flotilla_wire::world_to_nodes::{BodyId, WorldState};

/// How long a requested map change may take to show in the description
/// before it is asked again, ns of sim time.
pub const RETRY_AFTER_NS: u64 = 1_000_000_000;

/// A map change to ask the world for.
#[derive(Debug, Clone, PartialEq)]
pub struct Fire {
    /// The robot (model name).
    pub robot: String,
    /// The map it leaves.
    pub from_map: String,
    /// The map it goes to.
    pub to_map: String,
    /// Where it lands, if it moves.
    pub pose: Option<Pose2>,
    /// Where the transition was written (`<file>:<line>`).
    pub source: String,
}

impl Fire {
    /// The world's request for this change.
    pub fn request(&self) -> ControlRequest {
        ControlRequest::SetMap {
            name: self.robot.clone(),
            map: self.to_map.clone(),
            pose: self.pose,
            only_from: Some(self.from_map.clone()),
        }
    }
}

/// Why a command fired nothing.
#[derive(Debug, Clone, PartialEq)]
pub enum Ignored {
    /// No robot of that name lives on a map.
    UnknownRobot,
    /// No transition of the robot's map takes that command.
    UnknownCommand {
        /// The robot's map.
        map: String,
    },
    /// The robot is not inside the circle of any transition taking it.
    NotThere {
        /// The robot's map.
        map: String,
        /// How far the robot is from the nearest such circle's rim, m.
        distance_m: f64,
    },
    /// No state has shown where the robot is yet.
    NoPosition,
    /// A change it asked for is not in the description yet.
    Changing,
}

impl std::fmt::Display for Ignored {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ignored::UnknownRobot => write!(f, "no robot of that name lives on a map"),
            Ignored::UnknownCommand { map } => write!(f, "no transition of map \"{map}\" takes this command"),
            Ignored::NotThere { map, distance_m } => {
                write!(f, "the robot is {distance_m:.2} m outside the nearest circle of this command on map \"{map}\"")
            }
            Ignored::NoPosition => write!(f, "the robot's position is not known yet"),
            Ignored::Changing => write!(f, "the robot is already changing maps"),
        }
    }
}

/// One watched robot.
#[derive(Debug)]
struct Watched {
    /// Its first body, whose position is the robot's.
    body: BodyId,
    /// The map it is on, as the description says.
    map: String,
    /// Transitions (indices) of its map whose circle it was in at the last
    /// look; `None` until the first look on this map.
    inside: Option<Vec<usize>>,
    /// Its position at the last look, m.
    position: Option<[f64; 2]>,
    /// The change it asked for, and when (sim time, ns).
    pending: Option<(Fire, u64)>,
}

/// Every robot on a map, and the transitions.
#[derive(Debug, Default)]
pub struct Manager {
    transitions: Vec<MapTransition>,
    robots: BTreeMap<String, Watched>,
}

impl Manager {
    /// Follows a (new) description: robots come, go and change maps; a
    /// robot on a new map arrives there (its circles are not entered).
    pub fn follow(&mut self, description: &WorldDescription) {
        self.transitions = description.transitions.clone();
        let mut robots = BTreeMap::new();
        for model in description.models.iter().filter(|m| !m.map.is_empty()) {
            let Some(body) = model.bodies.first() else { continue };
            let watched = match self.robots.remove(&model.name) {
                Some(w) if w.map == model.map && w.body == body.id => w,
                _ => Watched { body: body.id, map: model.map.clone(), inside: None, position: None, pending: None },
            };
            robots.insert(model.name.clone(), watched);
        }
        self.robots = robots;
    }

    /// Forgets everything (a new world).
    pub fn clear(&mut self) {
        *self = Manager::default();
    }

    /// The robots watched, with their maps.
    pub fn robots(&self) -> impl Iterator<Item = (&str, &str)> {
        self.robots.iter().map(|(name, w)| (name.as_str(), w.map.as_str()))
    }

    /// Looks at every robot in `state`: the automatic transitions entered,
    /// and requests due again.
    pub fn on_state(&mut self, state: &WorldState) -> Vec<Fire> {
        let mut fired = Vec::new();
        for (name, robot) in &mut self.robots {
            let Some(position) = position_of(state, robot.body) else { continue };
            robot.position = Some(position);
            let inside_now: Vec<usize> = self
                .transitions
                .iter()
                .enumerate()
                .filter(|(_, t)| t.from_map == robot.map && t.contains(position))
                .map(|(i, _)| i)
                .collect();
            let was_inside = robot.inside.replace(inside_now.clone());
            if let Some((fire, since)) = &mut robot.pending {
                if state.time.nanos >= *since + RETRY_AFTER_NS {
                    *since = state.time.nanos;
                    fired.push(fire.clone());
                }
                continue;
            }
            // Arriving on a map enters nothing.
            let Some(was_inside) = was_inside else { continue };
            let entered = inside_now
                .iter()
                .map(|&i| (i, &self.transitions[i]))
                .find(|(i, t)| t.command.is_none() && !was_inside.contains(i));
            if let Some((_, transition)) = entered {
                let fire = fire_of(name, transition);
                robot.pending = Some((fire.clone(), state.time.nanos));
                fired.push(fire);
            }
        }
        fired
    }

    /// A command for `robot` (case-sensitive): the first transition of its
    /// map that takes it and whose circle the robot is in, or why none.
    pub fn on_command(&mut self, robot: &str, command: &str, now_ns: u64) -> Result<Fire, Ignored> {
        let watched = self.robots.get_mut(robot).ok_or(Ignored::UnknownRobot)?;
        if watched.pending.is_some() {
            return Err(Ignored::Changing);
        }
        let taking: Vec<&MapTransition> = self
            .transitions
            .iter()
            .filter(|t| t.from_map == watched.map && t.command.as_deref() == Some(command))
            .collect();
        if taking.is_empty() {
            return Err(Ignored::UnknownCommand { map: watched.map.clone() });
        }
        let position = watched.position.ok_or(Ignored::NoPosition)?;
        match taking.iter().find(|t| t.contains(position)) {
            Some(transition) => {
                let fire = fire_of(robot, transition);
                watched.pending = Some((fire.clone(), now_ns));
                Ok(fire)
            }
            None => {
                let rim =
                    |t: &&MapTransition| (position[0] - t.center_m[0]).hypot(position[1] - t.center_m[1]) - t.radius_m;
                let distance_m = taking.iter().map(rim).fold(f64::INFINITY, f64::min);
                Err(Ignored::NotThere { map: watched.map.clone(), distance_m })
            }
        }
    }
}

fn fire_of(robot: &str, transition: &MapTransition) -> Fire {
    Fire {
        robot: robot.to_string(),
        from_map: transition.from_map.clone(),
        to_map: transition.to_map.clone(),
        pose: transition.pose,
        source: transition.source.clone(),
    }
}

/// A body's position in a state (whose bodies are sorted by id).
fn position_of(state: &WorldState, body: BodyId) -> Option<[f64; 2]> {
    let index = state.bodies.binary_search_by_key(&body, |b| b.id).ok()?;
    let pose = state.bodies[index].pose;
    Some([pose.x_m, pose.y_m])
}

#[cfg(test)]
mod tests;
