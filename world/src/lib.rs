//! Flotilla's authoritative world process.
//!
//! The world file is read by `flotilla-world-file`; [`physics`] owns the rapier2d
//! world with a registry of model and body ids and an explicit `step`;
//! [`control`] carries out the control operations on it and holds the run
//! state (paused, clock mode); [`ros_services`] answers the ROS services
//! (Flatland's and simulation_interfaces) through them; and [`node`] is the
//! Zenoh adapter that paces the steps, publishes state and clock, applies
//! actuation and serves the description, control and ROS services.
//! [`checkpoint`] saves the physics to a file and restores it, between
//! [`physics`] and [`node`]; [`standby`] follows a running world and
//! takes over as it when it goes. The modules depend on each other in that
//! order, with no cycle.
//!
//! Dependencies beyond the workspace's core set: `rapier2d` for physics,
//! `regex` for GetEntities' name filter, `serde` and `bincode` for
//! checkpoints, `anyhow` for the binary's error
//! context.

pub mod checkpoint;
pub mod control;
pub mod fence;
pub mod node;
pub mod physics;
pub mod ros_services;
pub mod standby;
