//! The world node: the Zenoh adapter around [`Physics`].
//!
//! It publishes one [`WorldState`] and one ROS `clock` per step, applies the
//! actuation of drive nodes at the next step, serves the description and the
//! control services, announces world events, and publishes a status summary
//! about twice per wall second.

mod control;
mod inbox;
mod pacing;

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use anyhow::Context;
use flotilla_protocol::codec::{decode, encode, encode_into};
use flotilla_protocol::control::ControlRequest;
use flotilla_protocol::drive_to_world::Actuation;
use flotilla_protocol::health::BadMessages;
use flotilla_protocol::ros::{self, rosgraph_msgs::Clock};
use flotilla_protocol::world_to_nodes::{WorldEvent, WorldState, WorldStatus};
use flotilla_protocol::Keys;
use zenoh::qos::CongestionControl;
use zenoh::sample::SampleKind;
use zenoh::Wait;

pub use control::{RunState, MAX_STEPS_PER_REQUEST};
pub use pacing::Pacer;

use crate::loader::ClockMode;
use crate::physics::Physics;
use inbox::Inbox;

/// How to run the world node.
pub struct WorldNodeConfig {
    /// Keys of this simulation (with its ROS prefix).
    pub keys: Keys,
    /// Pacing.
    pub clock: ClockMode,
    /// Sim seconds per wall second in realtime mode.
    pub real_time_factor: f64,
    /// The endpoint other programs connect to (for the status message).
    pub endpoint: String,
    /// This node's id (last chunk of its liveliness token).
    pub node_id: String,
}

struct Shared {
    physics: Physics,
    run: RunState,
    inbox: Inbox,
    nodes: BTreeSet<String>,
}

fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    // A panic while holding the lock would be a bug; keep serving regardless.
    shared.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs the world until `shutdown` completes.
pub async fn run(
    session: zenoh::Session,
    physics: Physics,
    config: WorldNodeConfig,
    shutdown: impl Future<Output = ()>,
) -> anyhow::Result<()> {
    let keys = config.keys.clone();
    let step_ns = physics.step_ns();
    let shared = Arc::new(Mutex::new(Shared {
        physics,
        run: RunState::default(),
        inbox: Inbox::default(),
        nodes: BTreeSet::new(),
    }));

    let _token = session
        .liveliness()
        .declare_token(keys.node_token(&config.node_id))
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))
        .context("declaring the world's liveliness token")?;

    let bad_actuation = Arc::new(BadMessages::new(keys.actuation_all()));
    let _actuation = {
        let shared = shared.clone();
        let bad = bad_actuation.clone();
        session
            .declare_subscriber(keys.actuation_all())
            .callback(move |sample| match decode::<Actuation>(&sample.payload().to_bytes()) {
                Ok(actuation) => lock(&shared).inbox.push(actuation),
                Err(e) => bad.record(&e),
            })
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?
    };

    let _liveliness = {
        let shared = shared.clone();
        let prefix = keys.node_token("");
        session
            .liveliness()
            .declare_subscriber(keys.node_tokens())
            .history(true)
            .callback(move |sample| {
                let node = sample.key_expr().as_str().trim_start_matches(&prefix).to_string();
                let mut s = lock(&shared);
                match sample.kind() {
                    SampleKind::Put => {
                        s.nodes.insert(node);
                    }
                    SampleKind::Delete => {
                        s.nodes.remove(&node);
                        let stopped = s.inbox.node_lost(&node);
                        if stopped > 0 {
                            tracing::warn!("node {node} left; {stopped} bodies it drove are stopped");
                        }
                    }
                }
            })
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?
    };

    let _description = {
        let shared = shared.clone();
        let key = keys.world_description();
        session
            .declare_queryable(keys.world_description())
            .callback(move |query| {
                let bytes = encode(&lock(&shared).physics.description());
                if let Err(e) = query.reply(&key, bytes).wait() {
                    tracing::warn!("cannot answer a description query: {e}");
                }
            })
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?
    };

    let _control = {
        let shared = shared.clone();
        let events_key = keys.world_events();
        let control_prefix = keys.control("");
        let session2 = session.clone();
        let bad = Arc::new(BadMessages::new(keys.control("*")));
        session
            .declare_queryable(keys.control("*"))
            .callback(move |query| {
                let verb = query.key_expr().as_str().trim_start_matches(&control_prefix).to_string();
                let request = match query.payload().map(|p| decode::<ControlRequest>(&p.to_bytes())) {
                    Some(Ok(r)) => r,
                    Some(Err(e)) => {
                        bad.record(&e);
                        let _ = query.reply_err(format!("bad request on control/{verb}: {e}")).wait();
                        return;
                    }
                    None => {
                        let _ = query.reply_err(format!("control/{verb} needs a ControlRequest payload")).wait();
                        return;
                    }
                };
                if !verb_matches(&verb, &request) {
                    let _ = query.reply_err(format!("control/{verb} cannot carry {request:?}")).wait();
                    return;
                }
                let (reply, change) = {
                    let mut s = lock(&shared);
                    let s = &mut *s;
                    control::handle(&mut s.physics, &mut s.run, request)
                };
                if let Some(change) = change {
                    let event = WorldEvent { revision: reply.revision, change };
                    if let Err(e) = session2.put(&events_key, encode(&event)).wait() {
                        tracing::warn!("cannot announce a world event: {e}");
                    }
                }
                if let Err(e) = query.reply(query.key_expr().clone(), encode(&reply)).wait() {
                    tracing::warn!("cannot answer control/{verb}: {e}");
                }
            })
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?
    };

    let state_pub = session
        .declare_publisher(keys.world_state())
        .congestion_control(CongestionControl::Block)
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let clock_pub = session
        .declare_publisher(keys.ros("/clock"))
        .congestion_control(CongestionControl::Block)
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let status_key = keys.status();

    let mut state = WorldState { revision: 0, step: 0, time: Default::default(), step_ns, bodies: Vec::new() };
    let mut buffer = Vec::new();
    let publish = |state: &mut WorldState, buffer: &mut Vec<u8>| -> (Vec<u8>, Vec<u8>) {
        let s = lock(&shared);
        s.physics.state_into(state);
        encode_into(state, buffer);
        (buffer.clone(), ros::encode(&Clock { clock: state.time.to_ros() }))
    };

    // The state at step 0, so that sensors due at t = 0 fire.
    let (bytes, clock) = publish(&mut state, &mut buffer);
    state_pub.put(bytes).await.map_err(|e| anyhow::anyhow!("{e}"))?;
    clock_pub.put(clock).await.map_err(|e| anyhow::anyhow!("{e}"))?;

    let mut pacer = Pacer::new(step_ns, config.real_time_factor);
    let mut last_status = (Instant::now(), state.time);
    tokio::pin!(shutdown);
    loop {
        let (paused, pending) = {
            let s = lock(&shared);
            (s.run.paused, s.run.steps_pending)
        };
        if paused && pending == 0 {
            tokio::select! {
                biased;
                _ = &mut shutdown => break,
                _ = tokio::time::sleep(Duration::from_millis(5)) => {}
            }
            pacer.restart(Instant::now());
        } else {
            match config.clock {
                ClockMode::Realtime => {
                    tokio::select! {
                        biased;
                        _ = &mut shutdown => break,
                        _ = tokio::time::sleep_until(pacer.next_due().into()) => {}
                    }
                }
                ClockMode::Fast => {
                    if state.step.is_multiple_of(64) {
                        tokio::select! {
                            biased;
                            _ = &mut shutdown => break,
                            _ = tokio::task::yield_now() => {}
                        }
                    }
                }
            }
            {
                let mut s = lock(&shared);
                let s = &mut *s;
                for command in s.inbox.drain() {
                    s.physics.command(command);
                }
                s.physics.step();
                s.run.steps_pending = s.run.steps_pending.saturating_sub(1);
            }
            let (bytes, clock) = publish(&mut state, &mut buffer);
            state_pub.put(bytes).await.map_err(|e| anyhow::anyhow!("{e}"))?;
            clock_pub.put(clock).await.map_err(|e| anyhow::anyhow!("{e}"))?;
            pacer.stepped(Instant::now());
        }

        let now = Instant::now();
        if now.duration_since(last_status.0) >= Duration::from_millis(500) {
            let status = {
                let s = lock(&shared);
                let wall = now.duration_since(last_status.0).as_secs_f64();
                let sim = (state.time.nanos - last_status.1.nanos) as f64 * 1e-9;
                WorldStatus {
                    time: state.time,
                    step: state.step,
                    real_time_factor: sim / wall,
                    paused: s.run.paused,
                    models: s.physics.model_count() as u32,
                    robots: s.physics.robot_count() as u32,
                    nodes: s.nodes.len() as u32,
                    endpoint: config.endpoint.clone(),
                }
            };
            last_status = (now, state.time);
            if let Err(e) = session.put(&status_key, encode(&status)).congestion_control(CongestionControl::Drop).await
            {
                tracing::warn!("cannot publish status: {e}");
            }
        }
    }
    tracing::info!("world stopping at step {} (t = {:.3} s)", state.step, state.time.as_secs_f64());
    Ok(())
}

fn verb_matches(verb: &str, request: &ControlRequest) -> bool {
    use flotilla_protocol::control::verbs;
    matches!(
        (verb, request),
        (verbs::SPAWN, ControlRequest::Spawn { .. })
            | (verbs::DELETE, ControlRequest::Delete { .. })
            | (verbs::MOVE, ControlRequest::Move { .. })
            | (verbs::PAUSE, ControlRequest::Pause)
            | (verbs::RESUME, ControlRequest::Resume)
            | (verbs::STEP, ControlRequest::Step { .. })
    )
}
