//! Flotilla's authoritative world process.
//!
//! [`loader`] reads Flatland worlds unchanged; [`physics`] owns the rapier2d
//! world with a registry of model and body ids and an explicit `step`; and
//! [`node`] is the Zenoh adapter that paces the steps, publishes state and
//! clock, applies actuation and serves the description and control services.
//!
//! Dependencies beyond the workspace's core set: `image` (PNG only) to read
//! map_server images, `anyhow` for the binary's error context.

pub mod loader;
pub mod node;
pub mod physics;
pub mod ros_services;
