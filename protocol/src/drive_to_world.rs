//! Messages drive nodes send to the world.

use serde::{Deserialize, Serialize};

use crate::codec::WireMessage;
use crate::world_to_nodes::BodyId;

/// The velocity command of every body one drive node controls, for one step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Actuation {
    /// Node id of the sender (also the last chunk of the key).
    pub node: String,
    /// The world step whose state these commands answer; they apply from
    /// step `step + 1` on and stay in force until replaced. The world also
    /// counts the message as the sender's lockstep report for `step`.
    pub step: u64,
    /// One command per driven body.
    pub commands: Vec<BodyCommand>,
}

impl WireMessage for Actuation {
    const KIND: &'static str = "Actuation";
}

/// A velocity to hold a body at.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BodyCommand {
    /// The body.
    pub body: BodyId,
    /// Velocity of the body origin along the body's own x axis, m/s.
    pub local_vx_mps: f64,
    /// Velocity of the body origin along the body's own y axis, m/s.
    pub local_vy_mps: f64,
    /// Angular velocity, rad/s.
    pub omega_radps: f64,
}

impl BodyCommand {
    /// Whether every component is finite (a NaN command is dropped).
    pub fn is_finite(&self) -> bool {
        self.local_vx_mps.is_finite() && self.local_vy_mps.is_finite() && self.omega_radps.is_finite()
    }
}
