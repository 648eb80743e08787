//! The world's log of the changes asked of it from outside the simulation
//! (see [`flotilla_plugins::channels::ControlLogEntry`]): each request to
//! its control service that changed the world (a user's `flotilla spawn`,
//! `delete`, `move`, `set-map`, the Python package's, a Pioneer program's)
//! and each ROS service call that did, with the state it was applied at,
//! published on `/flotilla/control_log` for recorders. Requests from the
//! simulation's own nodes (the map-transition manager's map requests) are
//! not logged: a re-run runs those nodes again. Pausing, resuming and
//! stepping by hand are not logged either: in lockstep they change when
//! steps are taken, not what they compute.

use flotilla_messages::services::Service;
use flotilla_messages::std_msgs::StdString;
use flotilla_plugins::channels::{ControlLogEntry, LoggedRequest, CONTROL_LOG_TOPIC};
use flotilla_wire::control::ControlRequest;
use flotilla_wire::Keys;
use zenoh::Wait;

/// Whether a control request that succeeded is logged: those that change
/// the world.
pub fn logs_control(request: &ControlRequest) -> bool {
    matches!(
        request,
        ControlRequest::Spawn { .. }
            | ControlRequest::Delete { .. }
            | ControlRequest::Move { .. }
            | ControlRequest::SetMap { .. }
    )
}

/// Whether a call of `service` that changed the world is logged: all but
/// those that pause, resume or step it.
pub fn logs_service(service: Service) -> bool {
    !matches!(
        service,
        Service::Pause | Service::Resume | Service::TogglePause | Service::SetSimulationState | Service::StepSimulation
    )
}

/// Publishes `request`, applied at state `step`, on the control log.
pub fn publish(session: &zenoh::Session, keys: &Keys, step: u64, request: LoggedRequest) {
    let entry = ControlLogEntry { step, request };
    let message = StdString { data: entry.to_json() };
    let put = session
        .put(keys.ros(CONTROL_LOG_TOPIC), flotilla_messages::encode(&message))
        .congestion_control(zenoh::qos::CongestionControl::Block)
        .wait();
    if let Err(e) = put {
        tracing::warn!("cannot log a control request on {CONTROL_LOG_TOPIC}: {e}");
    }
}
