//! `flotilla-building`: the parts of a building that move: doors and lifts.
//!
//! Every `Door` plugin instance is a leaf whose body the world places as
//! commanded (see `flotilla_plugins::door`); every `Lift` a cabin serving
//! several maps (see `flotilla_plugins::lift`). [`door`] and [`lift`] are
//! the models, free of Zenoh, and [`requests`] holds Open-RMF's requests
//! until their step; [`server`] is their node: world states and
//! Open-RMF door and lift requests in; one velocity command per leaf, map
//! changes for lift riders, and the doors' and lifts' states out.

pub mod door;
pub mod lift;
pub mod requests;
pub mod server;
