//! Flotilla's authoritative world process.
//!
//! [`loader`] reads Flatland worlds unchanged; [`physics`] owns the rapier2d
//! world with a registry of model and body ids and an explicit `step`; and
//! [`node`] is the Zenoh adapter that paces the steps, publishes state and
//! clock, applies actuation and serves the description and control services.

pub mod loader;
pub mod node;
pub mod physics;
