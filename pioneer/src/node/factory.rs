//! AMRISim's robot factory (`--robot-factory`): every client that connects
//! to the factory port gets a robot of its own, spawned for it from a
//! model file and deleted when it disconnects. The connection waits while
//! the world spawns the model; the node's next rebuild finds the new robot
//! and hands it the connection instead of opening a port for it.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use flotilla_node_kit::client::call_control;
use flotilla_wire::control::{verbs, ControlRequest};
use flotilla_wire::geometry::Pose2;
use tokio::net::{TcpListener, TcpStream};

use super::{World, CONTROL_TIMEOUT};

/// Connections waiting for their robot, by model name.
#[derive(Debug, Default)]
pub struct Waiting {
    streams: Mutex<HashMap<String, TcpStream>>,
}

impl Waiting {
    /// The connection waiting for model `name`, if any.
    pub fn take(&self, name: &str) -> Option<TcpStream> {
        self.streams.lock().unwrap_or_else(|e| e.into_inner()).remove(name)
    }

    fn put(&self, name: String, stream: TcpStream) {
        self.streams.lock().unwrap_or_else(|e| e.into_inner()).insert(name, stream);
    }
}

/// What the factory spawns.
#[derive(Debug, Clone)]
pub struct FactorySpec {
    /// The model file (it must have a `Pioneer` plugin).
    pub model: PathBuf,
    /// Where new robots appear.
    pub pose: Pose2,
    /// New robots are named `<prefix><n>` (and namespaced so).
    pub prefix: String,
}

/// Accepts clients on `listener` and spawns a robot for each.
pub async fn run(listener: TcpListener, spec: FactorySpec, world: World, waiting: Arc<Waiting>) {
    let mut next = 1u64;
    loop {
        let (stream, peer): (TcpStream, SocketAddr) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                tracing::warn!("robot factory: accepting a client failed: {e}");
                continue;
            }
        };
        let name = format!("{}{next}", spec.prefix);
        next += 1;
        let request = ControlRequest::Spawn {
            yaml_path: spec.model.to_string_lossy().into_owned(),
            name: name.clone(),
            namespace: name.clone(),
            pose: spec.pose,
        };
        // Waiting before the spawn: the rebuild it causes may come first.
        waiting.put(name.clone(), stream);
        match call_control(&world.session, &world.keys, verbs::SPAWN, &request, CONTROL_TIMEOUT).await {
            Ok(reply) if reply.success => tracing::info!("robot factory: {name} spawned for {peer}"),
            Ok(reply) => {
                tracing::warn!("robot factory: spawning {name} for {peer} was refused: {}", reply.message);
                drop(waiting.take(&name));
            }
            Err(e) => {
                tracing::warn!("robot factory: spawning {name} for {peer} failed: {e}");
                drop(waiting.take(&name));
            }
        }
    }
}

/// Deletes a factory robot whose client is gone.
pub async fn delete(world: World, name: String) {
    let request = ControlRequest::Delete { name: name.clone() };
    match call_control(&world.session, &world.keys, verbs::DELETE, &request, CONTROL_TIMEOUT).await {
        Ok(reply) if reply.success => tracing::info!("robot factory: {name} deleted (its client left)"),
        Ok(reply) => tracing::warn!("robot factory: deleting {name} was refused: {}", reply.message),
        Err(e) => tracing::warn!("robot factory: deleting {name} failed: {e}"),
    }
}
