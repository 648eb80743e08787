//! The runtime every Flotilla node shares, between the pure
//! [`flotilla_wire`] and the nodes.
//!
//! * [`args`]: the command-line arguments every binary shares (Zenoh
//!   endpoints, simulation id) and opening a session;
//! * [`client`]: requests every program makes of the world (description,
//!   control services), and [`follow_world`]: the description followed
//!   through the world's changes;
//! * [`subscribe`]: internal keys decoded and delivered, liveliness watched;
//! * [`claims`]: a node's own claim tokens on plugin instances;
//! * [`lockstep`] and [`step_publisher`]: the barrier report, and messages
//!   a step waits on sent at once;
//! * [`health`]: bad messages counted, with a rate-limited log line;
//! * [`runtime`]: the one loop every plugin node runs, around a plugin
//!   free of Zenoh;
//! * [`recording`]: everything a node does for recorders, one tap the
//!   runtime feeds once per moment;
//! * [`logging`] and [`zenoh_threads`]: the process set-up every binary shares;
//! * [`shared_memory`]: whether Zenoh may pass large messages in shared memory.
//!
//! Dependencies beyond the workspace's core set: `uuid` for node ids,
//! `tracing-subscriber` for the one logging set-up, `zenoh-ext` for the
//! latched `tf_static` publisher, `anyhow` for the plugin binaries' `main`.

pub mod args;
pub mod claims;
pub mod client;
pub mod error;
pub mod follow_world;
pub mod health;
pub mod lockstep;
pub mod logging;
pub mod recording;
pub mod runtime;
pub mod shared_memory;
pub mod step_publisher;
pub mod subscribe;
pub mod witness;
pub mod zenoh_threads;

pub use error::{Error, Result};

/// A fresh node id: `<kind>-<8 hex digits>`.
pub fn node_id(kind: &str) -> String {
    format!("{kind}-{}", &uuid::Uuid::new_v4().simple().to_string()[..8])
}
