//! Flotilla's drive processes.
//!
//! A drive turns `cmd_vel` into the velocity the world holds a body at. The
//! models here are plain structs — [`limits::DynamicsLimits`] (Flatland's
//! acceleration, deceleration and velocity limits) and
//! [`diff_drive::DiffDrive`] — with a `step(input, dt)` API and no Zenoh;
//! [`driving`] answers what reaches a node (states, commands), free of Zenoh,
//! on whichever thread it arrives; [`node`] adapts it to the world's state
//! and actuation keys.
//!
//! Dependencies: only the workspace's core set.

pub mod diff_drive;
pub mod driving;
pub mod limits;
pub mod node;
