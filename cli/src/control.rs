//! `flotilla spawn | delete | move | pause | resume | step | set-map |
//! map-command`.

use std::time::Duration;

use anyhow::bail;
use flotilla_node_kit::args::{open_session, NodeArgs, Role};
use flotilla_node_kit::client::call_control;
use flotilla_wire::control::ControlRequest;
use flotilla_wire::geometry::Pose2;
use flotilla_wire::Keys;

fn call(node: &NodeArgs, request: ControlRequest) -> anyhow::Result<()> {
    let verb = request.verb();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build()?;
    runtime.block_on(async {
        let session = open_session(&node.zenoh, Role::Node).await?;
        let reply = call_control(&session, &Keys::new(&node.sim), verb, &request, Duration::from_secs(10)).await;
        let _ = session.close().await;
        let reply = reply?;
        if !reply.success {
            bail!("{verb} refused: {}", reply.message);
        }
        println!("{verb}: ok (world revision {})", reply.revision);
        Ok(())
    })
}

/// Spawns a model.
pub fn spawn(node: &NodeArgs, yaml_path: String, name: String, namespace: String, pose: Pose2) -> anyhow::Result<()> {
    // The world resolves relative paths against the world file; an existing
    // path relative to here is made absolute so both readings agree.
    let yaml_path = match std::fs::canonicalize(&yaml_path) {
        Ok(abs) => abs.to_string_lossy().into_owned(),
        Err(_) => yaml_path,
    };
    call(node, ControlRequest::Spawn { yaml_path, name, namespace, pose })
}

/// Deletes a model.
pub fn delete(node: &NodeArgs, name: String) -> anyhow::Result<()> {
    call(node, ControlRequest::Delete { name })
}

/// Moves a model.
pub fn move_model(node: &NodeArgs, name: String, pose: Pose2) -> anyhow::Result<()> {
    call(node, ControlRequest::Move { name, pose })
}

/// Pause, resume, step or change the clock.
pub fn simple(node: &NodeArgs, request: ControlRequest) -> anyhow::Result<()> {
    call(node, request)
}

/// Puts a model on another map, optionally moving it.
pub fn set_map(node: &NodeArgs, name: String, map: String, pose: Option<Pose2>) -> anyhow::Result<()> {
    call(node, ControlRequest::SetMap { name, map, pose, only_from: None })
}

/// Sends a map command (Flat's `t` command) to a robot's `map_command`
/// topic, for the map-transition manager. The manager's answer shows on the
/// robot's `map_name`; a command it cannot use is logged by the manager.
pub fn map_command(node: &NodeArgs, ros_prefix: &str, robot: String, command: String) -> anyhow::Result<()> {
    use flotilla_messages::std_msgs::StdString;
    use flotilla_plugins::maps::{self, MAP_COMMAND_TOPIC};
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build()?;
    runtime.block_on(async {
        let session = open_session(&node.zenoh, Role::Node).await?;
        let result = async {
            let keys = Keys::new(&node.sim).with_ros_prefix(ros_prefix);
            let description =
                flotilla_node_kit::client::fetch_description(&session, &keys, Duration::from_secs(10)).await?;
            let Some(model) = description.model(&robot) else { bail!("no model named \"{robot}\"") };
            if model.map.is_empty() {
                bail!("model \"{robot}\" lives on no map: the world declares no maps, or it is not a robot");
            }
            let key = keys.ros(&maps::topic(&model.namespace, MAP_COMMAND_TOPIC));
            let payload = flotilla_messages::encode(&StdString { data: command.clone() });
            session
                .put(&key, payload)
                .congestion_control(zenoh::qos::CongestionControl::Block)
                .await
                .map_err(|e| anyhow::anyhow!("cannot publish on {key}: {e}"))?;
            println!("map-command: {command:?} sent to {robot} on {key} (its map is {})", model.map);
            Ok(())
        }
        .await;
        let _ = session.close().await;
        result
    })
}
