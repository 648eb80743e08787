//! The web server: the page (`web/`, compiled in: nothing is loaded from
//! elsewhere) on `/`, and one WebSocket per page on `/ws` that carries the
//! scene and status (JSON text), frames (binary), and the page's commands,
//! which go to the world's control services like the CLI's.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use flotilla_node_kit::client::call_control;
use flotilla_wire::control::ControlRequest;
use flotilla_wire::geometry::Pose2;
use flotilla_wire::Keys;
use serde::Deserialize;
use serde_json::json;

use crate::live::Live;

const INDEX_HTML: &str = include_str!("../web/index.html");
const VIEW_JS: &str = include_str!("../web/view.js");
const VIEW_CSS: &str = include_str!("../web/view.css");

/// How long a control request may take.
const CONTROL_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Clone)]
struct Ctx {
    live: Arc<Live>,
    session: zenoh::Session,
    keys: Keys,
}

/// Serves the view on `listener` until `shutdown` completes.
pub async fn serve(
    listener: tokio::net::TcpListener,
    live: Arc<Live>,
    session: zenoh::Session,
    keys: Keys,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let app = Router::new()
        .route("/", get(|| async { ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], INDEX_HTML) }))
        .route("/view.js", get(|| async { ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], VIEW_JS) }))
        .route("/view.css", get(|| async { ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], VIEW_CSS) }))
        .route("/ws", get(upgrade))
        .with_state(Ctx { live, session, keys });
    axum::serve(listener, app).with_graceful_shutdown(shutdown).await?;
    Ok(())
}

async fn upgrade(ws: WebSocketUpgrade, State(ctx): State<Ctx>) -> impl IntoResponse {
    ws.on_upgrade(move |socket| page(socket, ctx))
}

/// What a page asks for.
#[derive(Debug, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
enum Command {
    /// Teleport a model (model pose: x m, y m, θ rad).
    Move { name: String, pose: [f64; 3] },
    /// Spawn a model file (relative to the world file) as `name`.
    Spawn { model: String, name: String, pose: [f64; 3] },
    /// Delete a model.
    Delete { name: String },
    /// Pause stepping.
    Pause,
    /// Resume stepping.
    Resume,
    /// Take `steps` steps, then stay paused.
    Step { steps: u64 },
    /// Start or stop receiving sensor readings in frames.
    Readings { on: bool },
}

/// One page: scene, status and frames out; commands in.
async fn page(mut socket: WebSocket, ctx: Ctx) {
    let mut scene = ctx.live.scene.clone();
    let mut status = ctx.live.status.clone();
    let mut frames = ctx.live.frames.subscribe();
    let mut wants_readings = false;
    let first = scene.borrow_and_update().json.clone();
    if socket.send(Message::Text(first.into())).await.is_err() {
        return;
    }
    loop {
        let sent = tokio::select! {
            changed = scene.changed() => match changed {
                Ok(()) => {
                    let json = scene.borrow_and_update().json.clone();
                    socket.send(Message::Text(json.into())).await
                }
                Err(_) => break,
            },
            changed = status.changed() => match changed {
                Ok(()) => {
                    let json = status.borrow_and_update().as_str().to_string();
                    socket.send(Message::Text(json.into())).await
                }
                Err(_) => break,
            },
            frame = frames.recv() => match frame {
                Ok(bytes) => socket.send(Message::Binary(bytes)).await,
                // A slow page skips frames.
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => Ok(()),
                Err(_) => break,
            },
            incoming = socket.recv() => match incoming {
                Some(Ok(Message::Text(text))) => {
                    let reply = answer(&ctx, &text, &mut wants_readings).await;
                    socket.send(Message::Text(reply.into())).await
                }
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                Some(Ok(_)) => Ok(()),
            },
        };
        if sent.is_err() {
            break;
        }
    }
    if wants_readings {
        ctx.live.readings_wanted.fetch_sub(1, Ordering::Relaxed);
        ctx.live.readings_changed.notify_one();
    }
}

/// Carries out a page's command; the reply's JSON.
async fn answer(ctx: &Ctx, text: &str, wants_readings: &mut bool) -> String {
    let command: Command = match serde_json::from_str(text) {
        Ok(c) => c,
        Err(e) => return json!({"type": "reply", "ok": false, "message": format!("bad command: {e}")}).to_string(),
    };
    let pose = |p: [f64; 3]| Pose2::new(p[0], p[1], p[2]);
    let request = match command {
        Command::Readings { on } => {
            if on != *wants_readings {
                *wants_readings = on;
                if on {
                    ctx.live.readings_wanted.fetch_add(1, Ordering::Relaxed);
                } else {
                    ctx.live.readings_wanted.fetch_sub(1, Ordering::Relaxed);
                }
                ctx.live.readings_changed.notify_one();
            }
            return json!({"type": "reply", "op": "readings", "ok": true, "message": ""}).to_string();
        }
        Command::Move { name, pose: p } => ControlRequest::Move { name, pose: pose(p) },
        Command::Spawn { model, name, pose: p } => {
            ControlRequest::Spawn { yaml_path: model, namespace: name.clone(), name, pose: pose(p) }
        }
        Command::Delete { name } => ControlRequest::Delete { name },
        Command::Pause => ControlRequest::Pause,
        Command::Resume => ControlRequest::Resume,
        Command::Step { steps } => ControlRequest::Step { steps },
    };
    let verb = request.verb();
    match call_control(&ctx.session, &ctx.keys, verb, &request, CONTROL_TIMEOUT).await {
        Ok(reply) => json!({"type": "reply", "op": verb, "ok": reply.success, "message": reply.message}).to_string(),
        Err(e) => json!({"type": "reply", "op": verb, "ok": false, "message": e.to_string()}).to_string(),
    }
}
