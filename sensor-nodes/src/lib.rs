//! Flotilla's sensor processes.
//!
//! The models — [`raycast`] (the ray-casting kernel), [`scene`] (walls and
//! bodies), [`laser::Laser`], [`odom::Odom`] — are plain structs with no Zenoh;
//! [`serve`] is the one loop every sensor node runs around them.

pub mod cli;
pub mod laser;
pub mod odom;
pub mod raycast;
pub mod scene;
pub mod serve;
