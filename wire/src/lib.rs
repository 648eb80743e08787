//! Flotilla's internal wire language.
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
//! * [`recording`]: the batches nodes send recorders;
//! * [`lockstep`]: the barrier handshake's message; [`delivery`]: how
//!   urgently and reliably messages travel in each clock mode;
//! * [`claim_book`] and [`world_tracker`]: the pure state machines every
//!   node runs (who serves which instance, which world it follows), and
//!   [`update_timer`], [`seed`]: rates counted in sim time, seeds derived
//!   from names; [`geodesy`]: where a georeferenced world's points are on
//!   Earth.
//!
//! The ROS 2 message types are in `flotilla-messages` below this crate; what
//! each plugin type is (configs, registry) in `flotilla-plugins` above it.
//! No Zenoh, tokio or clap: a program that only decodes Flotilla messages,
//! and every model's unit tests, build without them. The runtime (sessions,
//! arguments, the node loop) is in `flotilla-node-kit`.
//!
//! Dependencies beyond the workspace's core set: `thiserror` for error types
//! that carry data, `tracing` (the facade only) for the warnings of the pure
//! state machines.

pub mod checkpoint_file;
pub mod claim_book;
pub mod codec;
pub mod control;
pub mod delivery;
pub mod description;
pub mod digest;
pub mod drive_to_world;
pub mod geodesy;
pub mod geometry;
pub mod keys;
pub mod lockstep;
pub mod names;
pub mod recording;
pub mod seed;
pub mod time;
pub mod update_timer;
pub mod world_to_nodes;
pub mod world_tracker;

pub use codec::{decode, encode, DecodeError, SCHEMA_VERSION};
pub use keys::Keys;
pub use time::SimTime;
