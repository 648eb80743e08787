//! The served robots' batteries, beside their drives: each advanced by
//! every world state, published at its updates, and asked whether its
//! robot may move. The drive server's one seam to them.

use std::collections::BTreeMap;

use flotilla_messages::std_msgs::Header;
use flotilla_node_kit::runtime::{Outbox, Rebuild};
use flotilla_plugins::battery::BatteryConfig;
use flotilla_wire::names::{resolve_frame, resolve_topic};
use flotilla_wire::world_to_nodes::{BodyId, WorldState};

use crate::battery::Battery;

/// One served battery.
#[derive(Debug)]
struct Cell {
    battery: Battery,
    body: BodyId,
    /// Its `BatteryState` key, and the frame it is stamped in.
    key: String,
    frame: String,
    /// Where the world keeps its charge for a node that serves it next
    /// (after a restart), and when it was last put there (sim ns).
    charge_key: String,
    kept_at_ns: Option<u64>,
}

/// How often a battery's charge is given to the world to keep, sim ns:
/// what a drive restarted meanwhile loses at most.
const KEEP_EVERY_NS: u64 = 1_000_000_000;

/// The batteries of the served robots, by model name.
#[derive(Debug, Default)]
pub struct Power {
    cells: BTreeMap<String, Cell>,
}

impl Power {
    /// Keeps the batteries that still power the same body with the same
    /// configuration (and their charge); makes the others as configured,
    /// or with the charge the world kept for them (after a restart).
    pub fn rebuild(&mut self, rebuild: &Rebuild<'_>) {
        let mut old = std::mem::take(&mut self.cells);
        let places = &rebuild.description.places;
        for c in rebuild.configured::<BatteryConfig>() {
            let cell = match old.remove(&c.model.name) {
                Some(cell) if cell.body == c.body && cell.battery.config() == &c.config => cell,
                _ => {
                    let charge_key = rebuild.keys.world_memory(&format!("{}/charge", c.key));
                    let kept = rebuild.recall(&charge_key).and_then(|b| Some(f64::from_le_bytes(b.try_into().ok()?)));
                    let battery = match kept {
                        Some(charge_ah) => Battery::new(c.config.clone(), places).holding(charge_ah),
                        None => Battery::new(c.config.clone(), places),
                    };
                    if battery.charger_count() == 0 && !c.config.chargers.is_empty() {
                        tracing::warn!(
                            "{}: no named place is called or tagged {:?}: the battery never charges",
                            c.key,
                            c.config.chargers
                        );
                    }
                    Cell {
                        battery,
                        body: c.body,
                        key: rebuild.keys.ros(&resolve_topic(&c.model.namespace, &c.config.topic)),
                        frame: resolve_frame(&c.model.namespace, &c.config.body),
                        charge_key,
                        kept_at_ns: None,
                    }
                }
            };
            self.cells.insert(c.model.name.clone(), cell);
        }
    }

    /// Whether no battery is served.
    pub fn is_none(&self) -> bool {
        self.cells.is_empty()
    }

    /// Advances every battery by `state`, publishes those due; the models
    /// whose battery has just run empty.
    pub fn on_state(&mut self, state: &WorldState, out: &mut Outbox) -> Vec<String> {
        let (now_ns, step_ns) = (state.time.nanos, state.step_ns);
        let mut emptied = Vec::new();
        for (model, cell) in &mut self.cells {
            let Ok(i) = state.bodies.binary_search_by_key(&cell.body, |b| b.id) else { continue };
            let was_empty = cell.battery.empty();
            if !cell.battery.advance(state.step, now_ns, step_ns, state.bodies[i].pose) {
                continue;
            }
            if cell.kept_at_ns.is_none_or(|at| now_ns >= at + KEEP_EVERY_NS) {
                out.put(cell.charge_key.clone(), cell.battery.charge_ah().to_le_bytes().to_vec());
                cell.kept_at_ns = Some(now_ns);
            }
            if cell.battery.empty() && !was_empty {
                tracing::warn!("{model}: the battery is empty; the robot stops until it is charged");
                emptied.push(model.clone());
            }
            if out.wants(&cell.key) {
                let header = Header { stamp: state.time.to_ros(), frame_id: cell.frame.clone() };
                let message = cell.battery.state(header, now_ns);
                out.put_encoded(&cell.key, &message);
            }
        }
        emptied
    }

    /// Whether the robot `model` stands for want of charge.
    pub fn drained(&self, model: &str) -> bool {
        self.cells.get(model).is_some_and(|c| c.battery.empty())
    }

    /// For how many states after the one at `now_ns` the batteries leave
    /// the drives' answers alone: up to the state before the next update
    /// (which may stop a robot, and publishes); none while a robot stands
    /// drained (it moves again when charged). `u64::MAX` without batteries.
    pub fn steps_known(&self, now_ns: u64, step_ns: u64) -> u64 {
        self.cells
            .values()
            .map(|c| if c.battery.empty() { 0 } else { c.battery.steps_until_update(now_ns, step_ns) - 1 })
            .min()
            .unwrap_or(u64::MAX)
    }
}
