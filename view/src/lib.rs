//! The live view: `flotilla view` (and `flotilla run --view`) serves a page
//! on `http://127.0.0.1:8080` that draws a running simulation — walls by
//! layer colour, every body's footprint at its pose, laser scans and sonar
//! cones, trails, names, sim time and the world's status — and lets a user
//! drag, turn, spawn and delete models and pause, resume or step the world
//! through the same control services as the CLI.
//!
//! * [`scene`]: what changes only with the description, as JSON;
//! * [`frame`]: poses and readings, batched into one binary frame;
//! * [`live`]: following the simulation over Zenoh;
//! * [`server`]: the page and its WebSocket (axum).
//!
//! The page (`web/`) is plain HTML, CSS and JavaScript on a canvas,
//! compiled into the binary: it works offline.

pub mod frame;
pub mod live;
pub mod scene;
pub mod server;
