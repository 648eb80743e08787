//! Flatland's services, carried out by the world's control handler so that
//! they behave exactly like `flotilla spawn` / `delete` / `move` / `pause`.

use flotilla_messages::flatland_msgs::{DeleteModel, ModelServiceResponse, MoveModel, SpawnModel};
use flotilla_messages::geometry_msgs::Pose2D;
use flotilla_messages::std_srvs::{Empty, EmptyMessage};
use flotilla_wire::control::ControlRequest;
use flotilla_wire::geometry::Pose2;

use super::{request, Answer, Service, World};
use crate::control;

pub(super) fn answer(service: Service, bytes: &[u8], world: World<'_>) -> Answer {
    let control_request = match service {
        Service::SpawnModel => request::<SpawnModel>(bytes).map(|r| ControlRequest::Spawn {
            yaml_path: r.yaml_path,
            name: r.name,
            namespace: r.ns,
            pose: pose2(r.pose),
        }),
        Service::DeleteModel => request::<DeleteModel>(bytes).map(|r| ControlRequest::Delete { name: r.name }),
        Service::MoveModel => {
            request::<MoveModel>(bytes).map(|r| ControlRequest::Move { name: r.name, pose: pose2(r.pose) })
        }
        Service::Pause | Service::Resume | Service::TogglePause => {
            return empty_service(service, bytes, world);
        }
        _ => unreachable!("{service:?} is not a Flatland service"),
    };
    match control_request {
        Ok(control_request) => {
            let (reply, change) = control::handle(world.physics, world.run, control_request);
            let result = if reply.success { Ok(()) } else { Err(reply.message) };
            Answer::reply(&ModelServiceResponse::from_result(result)).with_changes(change)
        }
        Err(message) => Answer::reply(&ModelServiceResponse::from_result(Err(message))),
    }
}

/// `pause`, `resume` and `toggle_pause`: std_srvs/Empty has no failure
/// field, so a garbled request gets a Zenoh error reply.
fn empty_service(service: Service, bytes: &[u8], world: World<'_>) -> Answer {
    if let Err(message) = request::<Empty>(bytes) {
        return Answer { reply: Err(message), changes: Vec::new(), after_step: None };
    }
    let pause = match service {
        Service::Pause => true,
        Service::Resume => false,
        _ => !world.run.paused,
    };
    let control_request = if pause { ControlRequest::Pause } else { ControlRequest::Resume };
    control::handle(world.physics, world.run, control_request);
    Answer::reply(&EmptyMessage::default())
}

fn pose2(pose: Pose2D) -> Pose2 {
    Pose2::new(pose.x, pose.y, pose.theta)
}
