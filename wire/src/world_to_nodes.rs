//! Messages the world publishes to every node.

use serde::{Deserialize, Serialize};

use crate::codec::WireMessage;
use crate::geometry::{Pose2, Twist2};
use crate::time::SimTime;

/// Numeric id of a body, unique for the lifetime of a world process; stable
/// across description revisions for bodies that still exist.
pub type BodyId = u32;

/// The state of every non-static body after one step, in one message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorldState {
    /// Revision of the world description this state belongs to.
    pub revision: u64,
    /// Step number; the state is the result of stepping `step` times.
    pub step: u64,
    /// Simulation time of this state (`step × step size`).
    pub time: SimTime,
    /// Step size in nanoseconds, so that nodes can count rates.
    pub step_ns: u64,
    /// One entry per non-static body, sorted by id.
    pub bodies: Vec<BodyState>,
}

impl WireMessage for WorldState {
    const KIND: &'static str = "WorldState";
}

impl WorldState {
    /// The state of step `step` with every non-static body of `description`
    /// at its described pose and at rest: what a model's tests and benches
    /// feed a sensor without running the world.
    pub fn at_rest(description: &crate::description::WorldDescription, step: u64) -> WorldState {
        let mut bodies: Vec<BodyState> = description
            .models
            .iter()
            .flat_map(|m| &m.bodies)
            .filter(|b| b.kind != crate::description::BodyKind::Static)
            .map(|b| BodyState { id: b.id, pose: b.pose, twist: Twist2::default() })
            .collect();
        bodies.sort_by_key(|b| b.id);
        WorldState {
            revision: description.revision,
            step,
            time: SimTime::at_step(step, description.step_ns),
            step_ns: description.step_ns,
            bodies,
        }
    }
}

/// The leading fields of a [`WorldState`], decoded without its bodies (the
/// rest of the payload is left unread): enough for a node to tell whether it
/// needs the state at all. (Encoded alone it is no `WorldState`: it is for
/// decoding.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorldStateHead {
    /// See [`WorldState::revision`].
    pub revision: u64,
    /// See [`WorldState::step`].
    pub step: u64,
}

impl WireMessage for WorldStateHead {
    const KIND: &'static str = "WorldState";
}

/// Pose and velocity of one body.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BodyState {
    /// The body.
    pub id: BodyId,
    /// Pose of the body origin in the world frame.
    pub pose: Pose2,
    /// Velocity of the body origin in the world frame.
    pub twist: Twist2,
}

/// The contacts of the bodies that contact plugins (Bumper, BoolSensor)
/// watch, after one step: published on `flotilla/<sim>/world/contacts`
/// just before the step's [`WorldState`], at every step while any body is
/// watched, and never in a world without such plugins.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct WorldContacts {
    /// Revision of the world description the contacts belong to.
    pub revision: u64,
    /// The step after which the bodies touch.
    pub step: u64,
    /// Simulation time of that step.
    pub time: SimTime,
    /// Every touching pair with a watched body, from the watched body's
    /// side (a pair of two watched bodies appears twice), sorted by body.
    pub contacts: Vec<Contact>,
}

impl WireMessage for WorldContacts {
    const KIND: &'static str = "WorldContacts";
}

/// What a watched body touches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum ContactPeer {
    /// Another model's body (or one of the same model not joined to it).
    Body(BodyId),
    /// A layer's walls: the index of the layer entry in the description's
    /// `layers` (named by its first name).
    Layer(u32),
}

/// One touching pair of shapes: a footprint of a watched body and one of
/// what it touches (Box2D's `b2Contact`, as Flatland's bumper reads it).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Contact {
    /// The watched body.
    pub body: BodyId,
    /// What it touches.
    pub peer: ContactPeer,
    /// Unit normal in the world frame, from the body towards the peer;
    /// zero when a sensor footprint is involved (it overlaps, it does not
    /// push).
    pub normal: [f64; 2],
    /// How many of `points` are used: 0 when a sensor footprint is
    /// involved, else 1 or 2.
    pub point_count: u8,
    /// Where the shapes touch.
    pub points: [ContactPoint; 2],
}

/// One point where two shapes touch.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct ContactPoint {
    /// Position in the world frame, m (midway between the two surfaces).
    pub position_m: [f64; 2],
    /// Magnitude of the force the solver applied there over the step, N
    /// (normal and friction impulses over the step size): a ball-park
    /// figure of the impact, as Flatland says of its own.
    pub force_n: f64,
}

impl Contact {
    /// The points where the shapes touch (none for a sensor footprint).
    pub fn points(&self) -> &[ContactPoint] {
        &self.points[..usize::from(self.point_count.min(2))]
    }
}

/// A change to the world that nodes must apply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorldEvent {
    /// Description revision after the change.
    pub revision: u64,
    /// What changed.
    pub change: WorldChange,
}

impl WireMessage for WorldEvent {
    const KIND: &'static str = "WorldEvent";
}

/// The kinds of world change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum WorldChange {
    /// A model was added; fetch the description for its bodies and plugins.
    ModelSpawned {
        /// Model name.
        model: String,
    },
    /// A model and its bodies are gone.
    ModelDeleted {
        /// Model name.
        model: String,
    },
    /// A model was teleported.
    ModelMoved {
        /// Model name.
        model: String,
        /// The new model pose.
        pose: Pose2,
    },
    /// The world went back to its initial state.
    WorldReset,
    /// Another world file replaced the whole world (layers and models).
    WorldLoaded {
        /// The world file.
        path: String,
    },
    /// The world was emptied: no layer, no model.
    WorldUnloaded,
    /// A model went to another map (and was teleported with `pose`).
    MapChanged {
        /// Model name.
        model: String,
        /// The map it is on now.
        map: String,
        /// Its new model pose, when it was moved.
        pose: Option<Pose2>,
    },
}

/// A summary the world publishes about twice per wall second.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorldStatus {
    /// Current sim time.
    pub time: SimTime,
    /// Current step.
    pub step: u64,
    /// Measured sim seconds per wall second over the last interval.
    pub real_time_factor: f64,
    /// Whether stepping is paused.
    pub paused: bool,
    /// The clock mode.
    pub clock: crate::control::ClockMode,
    /// Live lockstep participants (the barrier's size).
    pub lockstep_participants: u32,
    /// Number of models in the world.
    pub models: u32,
    /// Number of robots: models with a drive plugin.
    pub robots: u32,
    /// Number of live Flotilla nodes (liveliness tokens), the world included.
    pub nodes: u32,
    /// The endpoint other programs connect to.
    pub endpoint: String,
    /// Plugin instances of implemented types that no node serves
    /// (`<model>/<plugin>/<aspect>`), at most 20.
    pub unclaimed: Vec<String>,
    /// How many there are in all.
    pub unclaimed_count: u32,
}

impl WireMessage for WorldStatus {
    const KIND: &'static str = "WorldStatus";
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{decode, encode};

    #[test]
    fn a_state_head_is_read_from_a_whole_state() {
        let body = BodyState { id: 7, pose: Pose2 { x_m: 1.0, y_m: 2.0, theta_rad: 0.5 }, twist: Twist2::default() };
        let state = WorldState {
            revision: 3,
            step: 4321,
            time: SimTime { nanos: 21_605_000_000 },
            step_ns: 5_000_000,
            bodies: vec![body; 50],
        };
        let head = decode::<WorldStateHead>(&encode(&state)).unwrap();
        assert_eq!(head, WorldStateHead { revision: 3, step: 4321 });
        assert!(decode::<WorldStateHead>(&encode(&state)[..10]).is_err(), "cut short");
    }
}
