//! Flotilla's shared language.
//!
//! Every Flotilla process — world, drives, sensors, bridge, launcher — and every
//! third-party program that wants to take part speaks through the types here:
//!
//! * [`keys`]: the Zenoh key space (`flotilla/<sim>/...` internal keys and the
//!   ROS-facing keys), built in one place so call sites never format keys by hand;
//! * [`codec`]: the one encoder/decoder for internal payloads (bincode behind a
//!   schema-version header that is checked on receive);
//! * [`world_to_nodes`], [`drive_to_world`], [`control`], [`description`]: the
//!   internal wire types, named by direction;
//! * [`ros`]: ROS 2 message types, CDR-encoded byte-for-byte as ROS 2 does;
//! * [`config`] and [`plugins`]: the Flatland YAML reader and the typed parameter
//!   sets of the plugin types Flotilla implements, shared by the nodes that serve
//!   them and by `flotilla check`;
//! * [`args`]: the command-line arguments every binary shares (Zenoh endpoints,
//!   simulation id);
//! * [`lockstep`] and [`step_publisher`]: the barrier handshake, and messages
//!   a step waits on sent at once;
//! * [`zenoh_threads`]: Zenoh's thread pools arranged so that a node reads a
//!   message on the thread that sees it arrive.
//!
//! Dependencies beyond the workspace's core set: `thiserror` for error types
//! that carry data, `tokio` for the request helpers' timers, `tracing` and
//! `tracing-subscriber` for the one logging set-up every binary shares.

pub mod args;
pub mod client;
pub mod codec;
pub mod config;
pub mod control;
pub mod description;
pub mod drive_to_world;
pub mod geometry;
pub mod health;
pub mod keys;
pub mod lockstep;
pub mod logging;
pub mod names;
pub mod node_kit;
pub mod plugins;
pub mod ros;
pub mod seed;
pub mod step_publisher;
pub mod time;
pub mod update_timer;
pub mod world_to_nodes;
pub mod zenoh_threads;

pub use codec::{decode, encode, DecodeError, SCHEMA_VERSION};
pub use keys::Keys;
pub use time::SimTime;
