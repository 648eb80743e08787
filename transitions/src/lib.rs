//! The map-transition manager (`flotilla-transitions`): watches every
//! robot that lives on a map and moves it to another map where the world's
//! Flat world file says (`properties: transitions:`), as Flat did.
//!
//! * [`manager`]: when a transition fires, free of Zenoh — automatic ones
//!   when a robot enters their circle, command ones when the command
//!   arrives while the robot is inside; never back and forth (a robot that
//!   arrives on a map inside a circle has not entered it);
//! * [`grid`]: a map's walls as a `nav_msgs/OccupancyGrid`;
//! * [`node`]: the node, on the shared runtime: map changes go to the world
//!   as messages before the node's lockstep report (deterministic), and
//!   each robot's `map_name` and `map` are latched for ROS.

pub mod grid;
pub mod manager;
pub mod node;
