//! The world node: the Zenoh adapter around [`Physics`].
//!
//! It publishes one [`WorldState`] and one ROS `clock` per step, applies the
//! actuation of drive nodes at the next step, serves the description and the
//! control services, announces world events, runs the lockstep barrier, and
//! publishes a status summary about twice per wall second.

mod barrier;
pub(crate) mod inbox;
mod pacing;
mod ros_adapter;

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use anyhow::Context;
use flotilla_node_kit::health::BadMessages;
use flotilla_node_kit::step_publisher::StepPublisher;
use flotilla_node_kit::subscribe::watch_tokens;
use flotilla_protocol::codec::{decode, encode};
use flotilla_protocol::control::{ClockMode, ControlRequest};
use flotilla_protocol::delivery::urgent;
use flotilla_protocol::drive_to_world::Actuation;
use flotilla_protocol::lockstep::{StepDone, FAST_MAX_LEAD_STEPS};
use flotilla_protocol::ros::{self, rosgraph_msgs::Clock};
use flotilla_protocol::world_to_nodes::{WorldEvent, WorldState, WorldStatus};
use flotilla_protocol::Keys;
use tokio::sync::Notify;
use zenoh::qos::CongestionControl;
use zenoh::Wait;

pub use crate::control::{ModelDirs, RunState, SpawnError, MAX_STEPS_PER_REQUEST};
pub use barrier::Barrier;
pub use flotilla_world_file::StallPolicy;
pub use pacing::Pacer;

use crate::physics::Physics;
use crate::ros_services::World;
use inbox::Inbox;

/// How to run the world node.
pub struct WorldNodeConfig {
    /// Keys of this simulation (with its ROS prefix).
    pub keys: Keys,
    /// Pacing at start (switchable at run time).
    pub clock: ClockMode,
    /// Sim seconds per wall second in realtime mode.
    pub real_time_factor: f64,
    /// Start paused (e.g. until every lockstep participant is up).
    pub start_paused: bool,
    /// How long a lockstep participant may take before it is reported.
    pub lockstep_timeout: Duration,
    /// What happens to a participant that stalls past the timeout.
    pub stall_policy: StallPolicy,
    /// The ROS name of the clock followed in external mode.
    pub external_clock: String,
    /// The endpoint other programs connect to (for the status message).
    pub endpoint: String,
    /// Directories spawn requests may load model files from.
    pub model_dirs: ModelDirs,
    /// This node's id (last chunk of its liveliness token).
    pub node_id: String,
}

struct Shared {
    physics: Physics,
    run: RunState,
    inbox: Inbox,
    nodes: BTreeSet<String>,
    barrier: Barrier,
    /// Step of the last published state.
    published_step: u64,
    /// Latest external clock, ns.
    external_ns: Option<u64>,
    /// Live claims: instance → nodes.
    claims: std::collections::BTreeMap<String, BTreeSet<String>>,
    /// A participant joined while paused: publish the current state again so
    /// that it sees (and reports) the step the world waits at.
    republish: bool,
}

fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    // A panic while holding the lock would be a bug; keep serving regardless.
    shared.lock().unwrap_or_else(|e| e.into_inner())
}

fn zerr(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow::anyhow!("{e}")
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
    let wake = Arc::new(Notify::new());
    let shared = Arc::new(Mutex::new(Shared {
        physics,
        run: RunState::new(config.clock, config.real_time_factor, config.start_paused, config.model_dirs.clone()),
        inbox: Inbox::default(),
        nodes: BTreeSet::new(),
        barrier: Barrier::default(),
        published_step: 0,
        external_ns: None,
        republish: false,
        claims: Default::default(),
    }));

    let _token = session
        .liveliness()
        .declare_token(keys.node_token(&config.node_id))
        .await
        .map_err(zerr)
        .context("declaring the world's liveliness token")?;

    let _actuation = {
        let (shared, wake) = (shared.clone(), wake.clone());
        let bad = BadMessages::new(keys.actuation_all());
        session
            .declare_subscriber(keys.actuation_all())
            .callback(move |sample| match decode::<Actuation>(&sample.payload().to_bytes()) {
                Ok(actuation) => {
                    let mut s = lock(&shared);
                    // A drive's actuation for step k is also its lockstep
                    // report for k: one message on the barrier's critical
                    // path per step instead of two.
                    s.barrier.done(&actuation.node, actuation.step);
                    s.inbox.push(actuation);
                    drop(s);
                    wake.notify_one();
                }
                Err(e) => bad.record(&e),
            })
            .await
            .map_err(zerr)?
    };

    let _node_tokens = {
        let shared = shared.clone();
        let own = keys.clone();
        watch_tokens(&session, keys.node_tokens(), move |key, alive| {
            let Some(node) = own.parse_node_token(key).map(str::to_string) else { return };
            let mut s = lock(&shared);
            if alive {
                s.nodes.insert(node);
            } else {
                s.nodes.remove(&node);
                let stopped = s.inbox.node_lost(&node);
                if stopped > 0 {
                    tracing::warn!("node {node} left; {stopped} bodies it drove are stopped");
                }
            }
        })
        .await
        .map_err(zerr)?
    };

    let _lockstep_tokens = {
        let (shared, wake) = (shared.clone(), wake.clone());
        let own = keys.clone();
        watch_tokens(&session, keys.lockstep_all(), move |key, alive| {
            let Some(node) = own.parse_lockstep(key).map(str::to_string) else { return };
            let mut s = lock(&shared);
            if alive {
                // While paused the world re-publishes the current state for
                // the newcomer, so it owes that step; otherwise the next one,
                // as it may have missed the current.
                let paused = s.run.paused && s.run.steps_pending == 0;
                let from = if paused { s.published_step } else { s.published_step + 1 };
                s.republish |= paused;
                s.barrier.join(&node, from);
                tracing::info!("lockstep: {node} joined (from step {from})");
            } else {
                s.barrier.leave(&node);
                tracing::info!("lockstep: {node} left");
            }
            wake.notify_one();
        })
        .await
        .map_err(zerr)?
    };

    let _lockstep_reports = {
        let (shared, wake) = (shared.clone(), wake.clone());
        let own = keys.clone();
        let bad = BadMessages::new(keys.lockstep_all());
        session
            .declare_subscriber(keys.lockstep_all())
            .callback(move |sample| match decode::<StepDone>(&sample.payload().to_bytes()) {
                Ok(done) => {
                    let Some(node) = own.parse_lockstep(sample.key_expr().as_str()) else { return };
                    lock(&shared).barrier.done(node, done.step);
                    wake.notify_one();
                }
                Err(e) => bad.record(&e),
            })
            .await
            .map_err(zerr)?
    };

    let _external_clock = {
        let (shared, wake) = (shared.clone(), wake.clone());
        let key = keys.ros(&config.external_clock);
        let bad = BadMessages::new(key.clone());
        let own_clock = keys.ros("/clock");
        session
            .declare_subscriber(key.clone())
            .callback(move |sample| {
                let mut s = lock(&shared);
                // Our own clock echoes back on /clock; follow only in external mode.
                if s.run.clock != ClockMode::External && key == own_clock {
                    return;
                }
                match ros::decode::<Clock>(&sample.payload().to_bytes()) {
                    Ok(c) if c.clock.sec >= 0 => {
                        s.external_ns = Some(c.clock.sec as u64 * 1_000_000_000 + u64::from(c.clock.nanosec));
                        wake.notify_one();
                    }
                    Ok(c) => bad.record(&format!("negative clock {c:?}")),
                    Err(e) => bad.record(&e),
                }
            })
            .await
            .map_err(zerr)?
    };

    let _claims = {
        let (shared, own) = (shared.clone(), keys.clone());
        watch_tokens(&session, keys.claim_tokens(), move |key, alive| {
            let Some((instance, node)) = own.parse_claim_token(key) else { return };
            let mut s = lock(&shared);
            let nodes = s.claims.entry(instance).or_default();
            if alive {
                nodes.insert(node);
            } else {
                nodes.remove(&node);
            }
        })
        .await
        .map_err(zerr)?
    };

    let _description = {
        let shared = shared.clone();
        let key = keys.world_description();
        let runtime = tokio::runtime::Handle::current();
        session
            .declare_queryable(keys.world_description())
            .callback(move |query| {
                // Answered off the Zenoh thread that runs this callback: a
                // large description to a slow reader can wait for room to
                // send, and that thread must keep reading the links
                // meanwhile (see `flotilla_node_kit::zenoh_threads`).
                let (shared, key) = (shared.clone(), key.clone());
                runtime.spawn_blocking(move || {
                    let bytes = encode(&lock(&shared).physics.description());
                    if let Err(e) = query.reply(&key, bytes).wait() {
                        tracing::warn!("cannot answer a description query: {e}");
                    }
                });
            })
            .await
            .map_err(zerr)?
    };

    let _control = {
        let (shared, wake) = (shared.clone(), wake.clone());
        let events_key = keys.world_events();
        let own = keys.clone();
        let session2 = session.clone();
        let bad = BadMessages::new(keys.control("*"));
        session
            .declare_queryable(keys.control("*"))
            .callback(move |query| {
                let verb = own.parse_control(query.key_expr().as_str()).unwrap_or_default().to_string();
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
                if request.verb() != verb {
                    let _ = query.reply_err(format!("control/{verb} cannot carry {request:?}")).wait();
                    return;
                }
                let (reply, change) = {
                    let mut s = lock(&shared);
                    let s = &mut *s;
                    crate::control::handle(&mut s.physics, &mut s.run, request)
                };
                wake.notify_one();
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
            .map_err(zerr)?
    };

    let (published_tx, published_rx) = tokio::sync::watch::channel(0u64);
    let _ros_services = {
        let (shared, wake, session2, events_key) = (shared.clone(), wake.clone(), session.clone(), keys.world_events());
        let answer = move |service, request: &[u8]| {
            let answer = {
                let mut s = lock(&shared);
                let s = &mut *s;
                crate::ros_services::answer(service, request, World { physics: &mut s.physics, run: &mut s.run })
            };
            wake.notify_one();
            if let Some(change) = answer.change.clone() {
                let event = WorldEvent { revision: lock(&shared).physics.revision(), change };
                if let Err(e) = session2.put(&events_key, encode(&event)).wait() {
                    tracing::warn!("cannot announce a world event: {e}");
                }
            }
            answer
        };
        ros_adapter::declare(&session, &keys, Arc::new(answer), published_rx).await.map_err(zerr)?
    };

    let state_pub = StepPublisher::declare(&session, keys.world_state()).await?;
    let clock_pub = session
        .declare_publisher(keys.ros("/clock"))
        .congestion_control(CongestionControl::Block)
        .await
        .map_err(zerr)?;

    let mut state = WorldState { revision: 0, step: 0, time: Default::default(), step_ns, bodies: Vec::new() };
    let publish = |state: &mut WorldState| -> (Vec<u8>, Vec<u8>, ClockMode) {
        let mut s = lock(&shared);
        s.physics.state_into(state);
        s.published_step = state.step;
        (encode(state), ros::encode(&Clock { clock: state.time.to_ros() }), s.run.clock)
    };
    macro_rules! publish_state {
        () => {{
            let (bytes, clock, mode) = publish(&mut state);
            // Every node's step starts from this message.
            state_pub.put(bytes, urgent(Some(mode))).await.map_err(zerr)?;
            let own_clock = mode != ClockMode::External;
            published_tx.send_replace(state.step);
            if own_clock {
                clock_pub.put(clock).await.map_err(zerr)?;
            }
        }};
    }

    // The state at step 0, so that sensors due at t = 0 fire.
    publish_state!();

    let mut pacer = Pacer::new(step_ns, config.real_time_factor);
    let mut last_status = (Instant::now(), state.time);
    let mut waiting = None;
    let started = Instant::now();
    let mut reported_unclaimed: Vec<String> = Vec::new();
    tokio::pin!(shutdown);
    loop {
        let (paused, pending, mode, rtf, changed) = {
            let mut s = lock(&shared);
            let changed = std::mem::take(&mut s.run.clock_changed);
            (s.run.paused, s.run.steps_pending, s.run.clock, s.run.real_time_factor, changed)
        };
        if changed {
            pacer.set_real_time_factor(rtf, Instant::now());
            tracing::info!("clock mode {mode} (real-time factor {rtf})");
        }
        let may_step = !paused || pending > 0;
        if !may_step && std::mem::take(&mut lock(&shared).republish) {
            publish_state!();
        }
        let ready = if !may_step {
            false
        } else {
            let barrier_ok = match mode {
                // Lockstep: every participant must be done with the last state.
                ClockMode::Lockstep => barrier_clear(&shared, state.step, &config, config.stall_policy, &mut waiting),
                // Fast: flow control only. Nodes that fall more than
                // FAST_MAX_LEAD_STEPS behind would otherwise queue states
                // without bound (memory) and spend their CPU on states long
                // gone; one that stops answering is dropped, never waited for.
                ClockMode::Fast => match state.step.checked_sub(FAST_MAX_LEAD_STEPS) {
                    Some(behind) => barrier_clear(&shared, behind, &config, StallPolicy::Drop, &mut waiting),
                    None => true,
                },
                ClockMode::Realtime | ClockMode::External => true,
            };
            // `step N` while paused steps at once in every mode.
            let stepping_by_hand = paused && pending > 0;
            barrier_ok
                && (stepping_by_hand
                    || match mode {
                        ClockMode::Realtime => Instant::now() >= pacer.next_due(),
                        ClockMode::Fast | ClockMode::Lockstep => true,
                        ClockMode::External => {
                            lock(&shared).external_ns.is_some_and(|target| state.time.nanos + step_ns <= target)
                        }
                    })
        };
        if !ready {
            let until = match (may_step, mode) {
                (true, ClockMode::Realtime) => pacer.next_due().max(Instant::now()),
                _ => Instant::now() + Duration::from_millis(20),
            };
            tokio::select! {
                biased;
                _ = &mut shutdown => break,
                _ = wake.notified() => {}
                _ = tokio::time::sleep_until(until.into()) => {}
            }
            if !may_step {
                pacer.restart(Instant::now());
            }
        } else {
            if mode != ClockMode::Realtime && state.step.is_multiple_of(64) {
                // Fast modes still let shutdown and control in now and then.
                tokio::select! {
                    biased;
                    _ = &mut shutdown => break,
                    _ = tokio::task::yield_now() => {}
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
            publish_state!();
            pacer.stepped(Instant::now());
        }

        let now = Instant::now();
        if now.duration_since(last_status.0) >= Duration::from_millis(500) {
            let status = {
                let s = lock(&shared);
                let unclaimed: Vec<String> = s
                    .physics
                    .servable_instances()
                    .into_iter()
                    .filter(|i| s.claims.get(i).is_none_or(|nodes| nodes.is_empty()))
                    .collect();
                // Nodes need a moment to start; report what stays unclaimed.
                if unclaimed != reported_unclaimed && now.duration_since(started) > Duration::from_secs(2) {
                    if !unclaimed.is_empty() {
                        tracing::warn!(
                            "{} plugin instance(s) served by no node: {}",
                            unclaimed.len(),
                            unclaimed.join(", ")
                        );
                    }
                    reported_unclaimed = unclaimed.clone();
                }
                let wall = now.duration_since(last_status.0).as_secs_f64();
                let sim = (state.time.nanos - last_status.1.nanos) as f64 * 1e-9;
                WorldStatus {
                    time: state.time,
                    step: state.step,
                    real_time_factor: sim / wall,
                    paused: s.run.paused,
                    clock: s.run.clock,
                    lockstep_participants: s.barrier.size() as u32,
                    models: s.physics.model_count() as u32,
                    robots: s.physics.robot_count() as u32,
                    nodes: s.nodes.len() as u32,
                    endpoint: config.endpoint.clone(),
                    unclaimed_count: unclaimed.len() as u32,
                    unclaimed: unclaimed.into_iter().take(20).collect(),
                }
            };
            last_status = (now, state.time);
            if let Err(e) =
                session.put(keys.status(), encode(&status)).congestion_control(CongestionControl::Drop).await
            {
                tracing::warn!("cannot publish status: {e}");
            }
        }
    }
    tracing::info!("world stopping at step {} (t = {:.3} s)", state.step, state.time.as_secs_f64());
    Ok(())
}

/// Whether every lockstep participant is done with `step`; one that has not
/// answered for the lockstep timeout is reported, and dropped under `policy`.
/// `waiting` remembers since when the world waits for which step.
fn barrier_clear(
    shared: &Mutex<Shared>,
    step: u64,
    config: &WorldNodeConfig,
    policy: StallPolicy,
    waiting: &mut Option<(u64, Instant)>,
) -> bool {
    let mut s = lock(shared);
    let pending = s.barrier.pending(step);
    if pending.is_empty() {
        *waiting = None;
        return true;
    }
    let now = Instant::now();
    let since = match *waiting {
        Some((k, t)) if k == step => t,
        _ => {
            *waiting = Some((step, now));
            now
        }
    };
    if now.duration_since(since) >= config.lockstep_timeout {
        match policy {
            StallPolicy::Wait => tracing::warn!(
                "lockstep: step {step}: still waiting for {} after {:?}",
                pending.join(", "),
                config.lockstep_timeout
            ),
            StallPolicy::Drop => {
                tracing::warn!(
                    "lockstep: step {step}: dropping {} from the barrier after {:?} without an answer",
                    pending.join(", "),
                    config.lockstep_timeout
                );
                s.barrier.drop_members(&pending);
            }
        }
        *waiting = Some((step, now));
    }
    false
}
