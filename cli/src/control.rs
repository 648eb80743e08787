//! `flotilla spawn | delete | move | pause | resume | step`.

use std::time::Duration;

use anyhow::bail;
use flotilla_node_kit::args::{open_session, NodeArgs, Role};
use flotilla_node_kit::client::call_control;
use flotilla_protocol::control::ControlRequest;
use flotilla_protocol::geometry::Pose2;
use flotilla_protocol::Keys;

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
