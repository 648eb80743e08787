//! `flotilla-building`: the parts of a building that move, starting with
//! doors.
//!
//! Every `Door` plugin instance is a leaf whose body the world places as
//! commanded (see `flotilla_plugins::door`). [`door`] is the model, free of
//! Zenoh; [`server`] is its node: world states and Open-RMF door requests
//! in, one velocity command per leaf and the doors' states out.

pub mod door;
pub mod server;
