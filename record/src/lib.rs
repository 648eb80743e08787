//! Keeping a run: `flotilla record` writes every ROS-facing topic of a
//! running simulation to MCAP with ROS 2 schemas (Foxglove Studio and
//! `ros2 bag` open it as it is), and `flotilla replay` publishes a recording
//! again on the same keys. Schemas come from the message types'
//! definitions (`flotilla_messages::definitions`).
//!
//! * [`bag`]: the MCAP file (channels, QoS, messages), written by
//!   [`mcap_file`] (its chunks compressed with [`lz4_frame`]) into a
//!   [`direct_file`] (around the page cache);
//! * [`record`] and [`replay`]: the Zenoh sides, the recorder finding
//!   the nodes that forward it what they take in with `forwarders`;
//! * [`rerun`]: what a lockstep recording carries so that `flotilla
//!   resim` can run it again, and [`compare`]: a re-run's messages against
//!   the recording's.

pub mod bag;
pub mod compare;
pub mod direct_file;
mod forwarders;
pub mod lz4_frame;
pub mod mcap_file;
mod mcap_records;
pub mod record;
pub mod replay;
pub mod rerun;
