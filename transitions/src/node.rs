//! The manager as a node on the shared runtime.
//!
//! * In: every world state at [`LOOK_PERIOD_NS`] (the thinned stream), and
//!   each robot's `map_command` (`std_msgs/String`).
//! * Out: map changes to the world (`world/map_requests`), sent before the
//!   node's lockstep report of the step that fired them, so a lockstep run
//!   changes maps at the same step every time; and per robot, latched,
//!   `map_name` (`std_msgs/String`) and `map` (`nav_msgs/OccupancyGrid`,
//!   frame `map`).
//!
//! A restarted manager rebuilds from the description: robots are on the
//! maps it says, and arrive there (nothing fires for a robot already in a
//! circle), so no transition fires twice.

use std::collections::BTreeMap;
use std::sync::Arc;

use flotilla_messages::std_msgs::StdString;
use flotilla_node_kit::runtime::{BadInput, NodePlugin, Outbox, Rebuild};
use flotilla_plugins::maps::{self, MAP_COMMAND_TOPIC, MAP_NAME_TOPIC, MAP_TOPIC};
use flotilla_plugins::registry::Role;
use flotilla_wire::codec::encode;
use flotilla_wire::description::{LayerDescription, MapDescription, WorldDescription};
use flotilla_wire::world_to_nodes::WorldState;

use crate::grid::occupancy_grid;
use crate::manager::{Fire, Manager};

/// How often the manager looks where the robots are, ns of sim time: a
/// robot at 2 m/s moves 10 cm between looks, well inside Flat's circles
/// (half a metre in its examples).
pub const LOOK_PERIOD_NS: u64 = 50_000_000;

/// The frame of the published grids.
pub const MAP_FRAME: &str = "map";

/// The manager's role: no model carries a plugin entry for it (it serves
/// the world), so it claims nothing and serves every robot on a map.
pub const ROLE: Role = Role::commander("MapTransitions", maps::BINARY, "transitions");

/// Serves the world's map transitions.
#[derive(Default)]
pub struct TransitionServer {
    manager: Manager,
    /// Where map changes go.
    requests_key: String,
    /// Latched messages: each robot's map name and grid.
    latched: Vec<(String, Arc<[u8]>)>,
    /// Each map's encoded grid, kept across rebuilds (a spawn or a move
    /// changes no wall).
    grids: Grids,
    /// Sim time of the last state, ns.
    now_ns: u64,
}

/// Encoded grids by map, for the walls they were drawn from.
#[derive(Default)]
struct Grids {
    layers: Vec<LayerDescription>,
    maps: Vec<MapDescription>,
    encoded: BTreeMap<String, Arc<[u8]>>,
}

impl Grids {
    /// The encoded grid of `map`, drawn again only when the world's walls
    /// or maps changed.
    fn of(&mut self, description: &WorldDescription, map: &str) -> Arc<[u8]> {
        if self.layers != description.layers || self.maps != description.maps {
            self.layers = description.layers.clone();
            self.maps = description.maps.clone();
            self.encoded.clear();
        }
        self.encoded
            .entry(map.to_string())
            .or_insert_with(|| flotilla_messages::encode(&occupancy_grid(description, map, MAP_FRAME)).into())
            .clone()
    }
}

impl TransitionServer {
    fn send(&self, fire: &Fire, out: &mut Outbox, why: &str) {
        tracing::info!(
            "{}: map {} -> {}{} ({why}, {})",
            fire.robot,
            fire.from_map,
            fire.to_map,
            fire.pose.map(|p| format!(" at ({:.3}, {:.3}, {:.3} rad)", p.x_m, p.y_m, p.theta_rad)).unwrap_or_default(),
            fire.source
        );
        out.put(self.requests_key.clone(), encode(&fire.request()));
    }
}

impl NodePlugin for TransitionServer {
    fn role(&self) -> &'static Role {
        &ROLE
    }

    fn rebuild(&mut self, rebuild: &mut Rebuild<'_>) {
        let (description, keys) = (rebuild.description, rebuild.keys);
        self.requests_key = keys.world_map_requests();
        self.manager.follow(description);
        self.latched.clear();
        for model in description.models.iter().filter(|m| !m.map.is_empty()) {
            let topic = |name: &str| keys.ros(&maps::topic(&model.namespace, name));
            rebuild.subscribe(topic(MAP_COMMAND_TOPIC), model.name.clone());
            let name = flotilla_messages::encode(&StdString { data: model.map.clone() });
            self.latched.push((topic(MAP_NAME_TOPIC), name.into()));
            self.latched.push((topic(MAP_TOPIC), self.grids.of(description, &model.map)));
        }
        tracing::info!(
            "watching {} robot(s) on {} map(s), {} transition(s)",
            self.manager.robots().count(),
            description.maps.len(),
            description.transitions.len()
        );
    }

    fn reset(&mut self) {
        *self = TransitionServer::default();
    }

    fn on_state(&mut self, state: &WorldState, out: &mut Outbox) {
        self.now_ns = state.time.nanos;
        for fire in self.manager.on_state(state) {
            self.send(&fire, out, "entered");
        }
    }

    fn on_input(&mut self, robot: &str, payload: &[u8], out: &mut Outbox) -> Result<(), BadInput> {
        let command = flotilla_messages::decode::<StdString>(payload)?.data;
        match self.manager.on_command(robot, &command, self.now_ns) {
            Ok(fire) => self.send(&fire, out, &format!("command {command:?}")),
            Err(why) => tracing::warn!("{robot}: map command {command:?} ignored: {why}"),
        }
        Ok(())
    }

    fn steps_without_output(&self, state: &WorldState) -> u64 {
        // Quiet until the next look (commands are not steps' outputs).
        let stride = self.state_stride(state.step_ns);
        stride - 1 - state.step % stride
    }

    fn state_stride(&self, step_ns: u64) -> u64 {
        if step_ns > 0 && LOOK_PERIOD_NS.is_multiple_of(step_ns) {
            LOOK_PERIOD_NS / step_ns
        } else {
            1
        }
    }

    fn latched(&self) -> Vec<(String, Arc<[u8]>)> {
        self.latched.clone()
    }
}
