//! Flotilla's sensor processes.
//!
//! The models — [`raycast`] (the ray-casting kernel), [`scene`] (walls and
//! bodies), [`laser::Laser`], [`odom::Odom`], [`gps::Gps`], [`imu::Imu`], [`sonar::Sonar`], [`contact`]'s bumper and bool sensor — are
//! plain structs with no Zenoh;
//! each `node` module wraps them as a
//! [`NodePlugin`](flotilla_node_kit::runtime::NodePlugin), which the node
//! runtime serves.
//!
//! Dependencies beyond the workspace's core set: `rand`, `rand_xoshiro` and
//! `rand_distr` for seeded, platform-independent Gaussian noise
//! (Xoshiro256++ gives the same stream everywhere, and a normal sample in
//! 2.8 ns against ChaCha8's 6.1 ns: a laser draws one per beam); `criterion`
//! for the laser benchmark.

pub mod body_grid;
pub mod contact;
pub mod crew;
pub mod gps;
pub mod imu;
pub mod laser;
pub mod model_tf;
pub mod odom;
pub mod raycast;
pub mod scene;
pub mod sonar;
