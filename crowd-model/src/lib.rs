//! The crowd's model, free of Zenoh: every `Pedestrian` agent's next move
//! from one snapshot of where everyone is.
//!
//! * [`crowd`]: the agents, their plans and groups, and the update;
//! * [`social_force`]: Helbing and Molnár's force terms;
//! * [`plan`]: waypoints and the pauses at them;
//! * [`grid`]: the neighbour and wall look-ups that keep an update linear
//!   in the number of agents;
//! * [`command`]: a move as the body command the world holds;
//! * [`vec2`]: the plane vector they share.
//!
//! `flotilla-crowd` is its node.

pub mod command;
pub mod crowd;
pub mod grid;
pub mod plan;
pub mod social_force;
pub mod vec2;
