//! The node runtime: one loop for every plugin node, drives and sensors
//! alike.
//!
//! A plugin is a [`NodePlugin`], free of Zenoh: it builds its instances
//! from the world's description, names the inputs it takes (a drive's
//! `cmd_vel`), and answers world states and inputs through an [`Outbox`]
//! (ROS messages, a drive's actuation). The runtime does what every node
//! must do the same way:
//!
//! * [`serve()`]: the node's token, waiting for the world, claims and
//!   take-over, rebuilding on spawn/delete, resynchronising with a new
//!   world, the lockstep barrier (a report once per quiet stretch, resent
//!   when the world's link comes back), publishing with the clock mode's
//!   urgency, `tf_static` and the plugin's own latched messages;
//! * [`core`]: the same, as a state machine without Zenoh, which tests
//!   drive directly;
//! * [`cli`]: the command line of every plugin binary (`--models`,
//!   `--shard`, `--threads`, Zenoh options), so that a binary is one line.
//!
//! Where a plugin's answers are computed is its choice ([`Answering`]): on
//! the thread that received the message (a drive: one wake-up less on each
//! lockstep step), or on the node's main loop (a laser, whose scans must
//! not hold up the receiving thread).

pub mod cli;
pub mod core;
mod flags;
mod handover;
mod latched;
mod outbox;
pub mod plugin;
mod publishers;
mod rebuild;
pub mod serve;
mod state_gate;
mod state_stream;
mod static_tf;

pub use cli::{main, main_with};
pub use plugin::{
    steps_before_first_due, stride_of, Answering, BadInput, Input, Interest, NodePlugin, Outbox, Rebuild,
};
pub use serve::serve;
