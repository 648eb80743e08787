//! `flotilla-crowd`: people and scripted agents walking the world.
//!
//! Every `Pedestrian` plugin instance is an agent whose body the world
//! places as commanded (see `flotilla_plugins::pedestrian`). The model is
//! `flotilla-crowd-model`; [`server`] is its node: world states in, one
//! velocity command per agent and update out.

pub mod server;
