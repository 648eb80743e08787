//! The world's ROS 2 services: Flatland's (`spawn_model`, `delete_model`,
//! `move_model`, `pause`, `resume`, `toggle_pause`) and the standard
//! `simulation_interfaces` ones that apply to a 2D world.
//!
//! Each is a Zenoh queryable on the service's ROS name (ARCHITECTURE.md, "Rules every process follows"): CDR
//! request in, exactly one CDR reply out, so that zenoh-plugin-ros2dds serves
//! them to ROS 2 unchanged and any Zenoh client can call them without ROS.
//! This module is the pure part: bytes in, reply bytes and the world change
//! out. A request that cannot be decoded gets the service's failure reply
//! and changes nothing.

mod flatland;
pub mod simulate_steps;
mod simulation;
mod worlds;

pub use flotilla_messages::services::Service;
use flotilla_messages::simulation_interfaces::{result_code, tags_filter_mode, SimResult, TagsFilter};
use flotilla_messages::{RosMessage, RosService};
use flotilla_wire::world_to_nodes::WorldChange;

use crate::control::RunState;
use crate::physics::Physics;

/// What a service call produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The CDR reply, or a Zenoh error reply for a request whose response
    /// type has no way to say "failed" (std_srvs/Empty).
    pub reply: Result<Vec<u8>, String>,
    /// The changes to announce on `world/events`, in order.
    pub changes: Vec<WorldChange>,
    /// Hold the reply until the world has published this step
    /// (StepSimulation returns once stepping is complete).
    pub after_step: Option<u64>,
}

impl Answer {
    fn reply<T: RosMessage>(response: &T) -> Answer {
        Answer { reply: Ok(flotilla_messages::encode(response)), changes: Vec::new(), after_step: None }
    }

    fn with_changes(mut self, changes: impl IntoIterator<Item = WorldChange>) -> Answer {
        self.changes.extend(changes);
        self
    }
}

/// The world as the services see it.
pub struct World<'a> {
    /// Physics and registry.
    pub physics: &'a mut Physics,
    /// Pause, stepping and spawn policy.
    pub run: &'a mut RunState,
}

impl World<'_> {
    /// The same world, borrowed again: for a service that runs another's
    /// handler several times.
    pub fn reborrow(&mut self) -> World<'_> {
        World { physics: self.physics, run: self.run }
    }
}

/// Answers one call of `service` with `request` (CDR bytes).
pub fn answer(service: Service, request: &[u8], world: World<'_>) -> Answer {
    match service {
        Service::SpawnModel
        | Service::DeleteModel
        | Service::MoveModel
        | Service::Pause
        | Service::Resume
        | Service::TogglePause => flatland::answer(service, request, world),
        _ => simulation::answer(service, request, world),
    }
}

/// Refuses a tags filter whose mode is neither ANY nor ALL.
fn tags_filter_check(filter: &TagsFilter) -> Result<(), SimResult> {
    if filter.filter_mode > tags_filter_mode::ALL {
        return Err(SimResult::fail(
            result_code::OPERATION_FAILED,
            format!("tags.filter_mode {} is neither ANY (0) nor ALL (1)", filter.filter_mode),
        ));
    }
    Ok(())
}

/// Whether `tags` pass `filter`: an empty filter passes everything; ANY
/// wants one of its tags, ALL every one.
fn tags_pass(filter: &TagsFilter, tags: &[String]) -> bool {
    match filter.filter_mode {
        _ if filter.tags.is_empty() => true,
        tags_filter_mode::ALL => filter.tags.iter().all(|t| tags.contains(t)),
        _ => filter.tags.iter().any(|t| tags.contains(t)),
    }
}

/// Decodes `bytes` as `S`'s request.
fn request<S: RosService>(bytes: &[u8]) -> Result<S::Request, String> {
    flotilla_messages::decode::<S::Request>(bytes).map_err(|e| format!("{}: bad request: {e}", S::TYPE_NAME))
}

#[cfg(test)]
mod tests;
