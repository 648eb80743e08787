//! Flotilla's drive processes.
//!
//! A drive turns `cmd_vel` into the velocity the world holds a body at. The
//! models here are plain structs — [`limits::DynamicsLimits`] (Flatland's
//! acceleration, deceleration and velocity limits) and
//! [`diff_drive::DiffDrive`] — with a `step(input, dt)` API and no Zenoh;
//! [`server::DriveServer`] wraps them as a
//! [`NodePlugin`](flotilla_node_kit::runtime::NodePlugin), which the node
//! runtime serves.
//!
//! Dependencies: only the workspace's core set.

pub mod actuators;
pub mod battery;
pub mod commands;
pub mod diff_drive;
pub mod limits;
pub mod power;
pub mod server;
pub mod tricycle;
pub mod tween;
pub mod vehicle;
