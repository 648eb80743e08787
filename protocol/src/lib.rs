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
//! * [`recording`]: the batches nodes send recorders, and [`channels`]: the
//!   topics recordings hold, numbered by the world;
//! * [`lockstep`]: the barrier handshake's message; [`delivery`]: how
//!   urgently and reliably messages travel in each clock mode;
//! * [`claim_book`], [`selection`] and [`world_tracker`]: the pure state
//!   machines every node runs (who serves which instance, which models a
//!   node selects, which world it follows).
//!
//! No Zenoh, tokio or clap: a program that only decodes Flotilla messages,
//! and every model's unit tests, build without them. The runtime (sessions,
//! arguments, the node loop) is in `flotilla-node-kit`.
//!
//! Dependencies beyond the workspace's core set: `thiserror` for error types
//! that carry data, `globset` for `--models` globs, `tracing` (the facade
//! only) for the warnings of the pure state machines.

pub mod channels;
pub mod claim_book;
pub mod codec;
pub mod config;
pub mod control;
pub mod delivery;
pub mod description;
pub mod drive_to_world;
pub mod geometry;
pub mod keys;
pub mod lockstep;
pub mod maps;
pub mod names;
pub mod plugins;
pub mod recording;
pub mod ros;
pub mod seed;
pub mod selection;
pub mod time;
pub mod update_timer;
pub mod world_to_nodes;
pub mod world_tracker;

pub use codec::{decode, encode, DecodeError, SCHEMA_VERSION};
pub use keys::Keys;
pub use time::SimTime;
