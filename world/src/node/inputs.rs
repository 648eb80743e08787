//! Everything the world node takes in, declared on Zenoh: drives'
//! actuations, nodes' and lockstep participants' tokens, lockstep reports,
//! the external clock, claims, description queries, control requests and
//! the ROS services. Each callback updates the shared [`Sim`] and wakes the
//! stepping loop.

use std::sync::{Arc, Mutex, MutexGuard};

use flotilla_messages::rosgraph_msgs::Clock;
use flotilla_node_kit::health::BadMessages;
use flotilla_node_kit::subscribe::watch_tokens;
use flotilla_node_kit::{Error, Result};
use flotilla_wire::codec::{decode, encode};
use flotilla_wire::control::{ClockMode, ControlRequest};
use flotilla_wire::drive_to_world::decode_actuation;
use flotilla_wire::lockstep::decode_step_done;
use flotilla_wire::world_to_nodes::{WorldChange, WorldEvent};
use flotilla_wire::Keys;
use tokio::sync::watch;

use super::wake::Wake;
use zenoh::pubsub::Subscriber;
use zenoh::query::Queryable;
use zenoh::Wait;

use super::control_log;
use super::ros_adapter;
use super::stepper::Sim;
use crate::ros_services::World;
use flotilla_plugins::channels::LoggedRequest;

/// The shared simulation, locked.
pub fn lock(shared: &Mutex<Sim>) -> MutexGuard<'_, Sim> {
    // A panic while holding the lock would be a bug; keep serving regardless.
    shared.lock().unwrap_or_else(|e| e.into_inner())
}

/// What the world's inputs need: the session, keys, the shared simulation,
/// and the loop's wake-up.
#[derive(Clone)]
pub struct Wiring {
    /// The world's session.
    pub session: zenoh::Session,
    /// The simulation's keys.
    pub keys: Keys,
    /// The simulation, shared with the stepping loop.
    pub shared: Arc<Mutex<Sim>>,
    /// Wakes the stepping loop.
    pub wake: Arc<Wake>,
}

/// The world's declared inputs; dropping them undeclares them.
pub struct Inputs {
    _subscribers: Vec<Subscriber<()>>,
    _queryables: Vec<Queryable<()>>,
}

/// Declares every input of the world. `external_clock` is the ROS name of
/// the clock followed in external mode; `published` carries the step of
/// each state published (ROS services that step wait on it).
pub async fn declare(wiring: &Wiring, external_clock: &str, published: watch::Receiver<u64>) -> Result<Inputs> {
    let subscribers = vec![
        actuations(wiring).await?,
        node_tokens(wiring).await?,
        lockstep_tokens(wiring).await?,
        standby_tokens(wiring).await?,
        lockstep_reports(wiring).await?,
        external_clock_of(wiring, external_clock).await?,
        claims(wiring).await?,
        map_requests(wiring).await?,
    ];
    let mut queryables = vec![description(wiring).await?, checkpoint(wiring).await?, control(wiring).await?];
    queryables.extend(ros_services(wiring, published).await?);
    Ok(Inputs { _subscribers: subscribers, _queryables: queryables })
}

/// Drives' actuations, into the inbox.
async fn actuations(wiring: &Wiring) -> Result<Subscriber<()>> {
    let (shared, wake, key) = (wiring.shared.clone(), wiring.wake.clone(), wiring.keys.actuation_all());
    let bad = BadMessages::new(key.clone());
    wiring
        .session
        .declare_subscriber(&key)
        .callback(move |sample| match decode_actuation(&sample.payload().to_bytes()) {
            Ok((actuation, promise)) => {
                let mut s = lock(&shared);
                // A drive's actuation for step k is also its lockstep
                // report for k: one message on the barrier's critical
                // path per step instead of two.
                s.barrier.actuated(&actuation.node, actuation.step, promise.as_ref().map(|p| p.through));
                s.inbox.push(actuation, promise);
                drop(s);
                wake.notify_one();
            }
            Err(e) => bad.record(&e),
        })
        .await
        .map_err(Error::zenoh("subscribe to", key))
}

/// Map changes sent as messages (by the map-transition manager), applied
/// at once: between two steps, and in lockstep before the sender's report
/// of the step it answered, which follows on the same link.
async fn map_requests(wiring: &Wiring) -> Result<Subscriber<()>> {
    let key = wiring.keys.world_map_requests();
    let bad = BadMessages::new(key.clone());
    let for_callback = wiring.clone();
    wiring
        .session
        .declare_subscriber(&key)
        .callback(move |sample| {
            let request = match decode::<ControlRequest>(&sample.payload().to_bytes()) {
                Ok(request @ ControlRequest::SetMap { .. }) => request,
                Ok(other) => return bad.record(&format!("only SetMap requests travel as messages, got {other:?}")),
                Err(e) => return bad.record(&e),
            };
            // The simulation's own: not logged.
            let reply = carry_out(&for_callback, request, false);
            if !reply.success {
                tracing::info!("map request not applied: {}", reply.message);
            }
        })
        .await
        .map_err(Error::zenoh("subscribe to", key))
}

/// Nodes coming and going; a drive that goes stops the bodies it drove.
async fn node_tokens(wiring: &Wiring) -> Result<Subscriber<()>> {
    let (shared, own) = (wiring.shared.clone(), wiring.keys.clone());
    watch_tokens(&wiring.session, wiring.keys.node_tokens(), move |key, alive| {
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
}

/// Standby worlds coming and going: while one follows, the barrier lets
/// no sensor run behind (see `Barrier::standby_follows`).
async fn standby_tokens(wiring: &Wiring) -> Result<Subscriber<()>> {
    let shared = wiring.shared.clone();
    watch_tokens(&wiring.session, wiring.keys.standby_tokens(), move |key, alive| {
        lock(&shared).barrier.standby_follows(key, alive);
    })
    .await
}

/// Lockstep participants joining and leaving the barrier.
async fn lockstep_tokens(wiring: &Wiring) -> Result<Subscriber<()>> {
    let (shared, wake, own) = (wiring.shared.clone(), wiring.wake.clone(), wiring.keys.clone());
    watch_tokens(&wiring.session, wiring.keys.lockstep_all(), move |key, alive| {
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
}

/// Lockstep participants' reports.
async fn lockstep_reports(wiring: &Wiring) -> Result<Subscriber<()>> {
    let (shared, wake, own) = (wiring.shared.clone(), wiring.wake.clone(), wiring.keys.clone());
    let key = wiring.keys.lockstep_all();
    let bad = BadMessages::new(key.clone());
    wiring
        .session
        .declare_subscriber(&key)
        .callback(move |sample| match decode_step_done(&sample.payload().to_bytes()) {
            Ok((done, commands_nothing)) => {
                let Some(node) = own.parse_lockstep(sample.key_expr().as_str()) else { return };
                lock(&shared).barrier.reported(node, done.step, commands_nothing);
                wake.notify_one();
            }
            Err(e) => bad.record(&e),
        })
        .await
        .map_err(Error::zenoh("subscribe to", key))
}

/// The clock followed in external mode (ROS `rosgraph_msgs/Clock`).
async fn external_clock_of(wiring: &Wiring, name: &str) -> Result<Subscriber<()>> {
    let (shared, wake) = (wiring.shared.clone(), wiring.wake.clone());
    let key = wiring.keys.ros(name);
    let bad = BadMessages::new(key.clone());
    let own_clock = wiring.keys.ros("/clock");
    let followed = key.clone();
    wiring
        .session
        .declare_subscriber(&key)
        .callback(move |sample| {
            let mut s = lock(&shared);
            // Our own clock echoes back on /clock; follow only in external mode.
            if s.run.clock != ClockMode::External && followed == own_clock {
                return;
            }
            match flotilla_messages::decode::<Clock>(&sample.payload().to_bytes()) {
                Ok(c) if c.clock.sec >= 0 => {
                    s.external_ns = Some(c.clock.sec as u64 * 1_000_000_000 + u64::from(c.clock.nanosec));
                    wake.notify_one();
                }
                Ok(c) => bad.record(&format!("negative clock {c:?}")),
                Err(e) => bad.record(&e),
            }
        })
        .await
        .map_err(Error::zenoh("subscribe to", key))
}

/// Every claim, for the status's unclaimed instances.
async fn claims(wiring: &Wiring) -> Result<Subscriber<()>> {
    let (shared, own) = (wiring.shared.clone(), wiring.keys.clone());
    watch_tokens(&wiring.session, wiring.keys.claim_tokens(), move |key, alive| {
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
}

/// The world's description, to every node that asks.
async fn description(wiring: &Wiring) -> Result<Queryable<()>> {
    answer_off_thread(wiring, wiring.keys.world_description(), "description", |s| encode(&s.physics.description()))
        .await
}

/// A checkpoint of the running world, to whoever asks
/// (`flotilla checkpoint save`), taken between two steps.
async fn checkpoint(wiring: &Wiring) -> Result<Queryable<()>> {
    answer_off_thread(wiring, wiring.keys.world_checkpoint(), "checkpoint", |s| {
        let bytes = crate::checkpoint::save(&s.physics, s.run.paused, &s.memory);
        tracing::debug!("checkpoint of step {} sent ({} bytes)", s.physics.step_count(), bytes.len());
        bytes
    })
    .await
}

/// Answers every query on `key` with what `answer` makes of the
/// simulation, off the Zenoh thread that runs the callback: a large answer
/// to a slow reader can wait for room to send, and that thread must keep
/// reading the links meanwhile (see `flotilla_node_kit::zenoh_threads`).
async fn answer_off_thread(
    wiring: &Wiring,
    key: String,
    what: &'static str,
    answer: impl Fn(&Sim) -> Vec<u8> + Send + Sync + 'static,
) -> Result<Queryable<()>> {
    let shared = wiring.shared.clone();
    let reply_key = key.clone();
    let answer = Arc::new(answer);
    let runtime = tokio::runtime::Handle::current();
    wiring
        .session
        .declare_queryable(&key)
        .callback(move |query| {
            let (shared, key, answer) = (shared.clone(), reply_key.clone(), answer.clone());
            runtime.spawn_blocking(move || {
                let bytes = answer(&lock(&shared));
                if let Err(e) = query.reply(&key, bytes).wait() {
                    tracing::warn!("cannot answer a {what} query: {e}");
                }
            });
        })
        .await
        .map_err(Error::zenoh("answer on", key))
}

/// Carries out a control request on the simulation, wakes the stepping
/// loop and announces the change it made, if any; with `logged`, a
/// request from outside the simulation that changed the world goes on the
/// control log.
fn carry_out(wiring: &Wiring, request: ControlRequest, logged: bool) -> flotilla_wire::control::ControlReply {
    let logged = (logged && control_log::logs_control(&request)).then(|| request.clone());
    let (reply, change, step) = {
        let mut s = lock(&wiring.shared);
        let s = &mut *s;
        let (reply, change) = crate::control::handle(&mut s.physics, &mut s.run, request);
        (reply, change, s.physics.step_count())
    };
    wiring.wake.notify_one();
    if let Some(request) = logged.filter(|_| reply.success) {
        control_log::publish(&wiring.session, &wiring.keys, step, LoggedRequest::Control(request));
    }
    if let Some(change) = change {
        announce(&wiring.session, &wiring.keys, reply.revision, change);
    }
    reply
}

/// Announces a change of the world to every node.
fn announce(session: &zenoh::Session, keys: &Keys, revision: u64, change: WorldChange) {
    let event = WorldEvent { revision, change };
    if let Err(e) = session.put(keys.world_events(), encode(&event)).wait() {
        tracing::warn!("cannot announce a world event: {e}");
    }
}

/// The control services (`flotilla spawn`, `pause`, `step`, ...).
async fn control(wiring: &Wiring) -> Result<Queryable<()>> {
    let for_callback = wiring.clone();
    let keys = wiring.keys.clone();
    let key = wiring.keys.control("*");
    let bad = BadMessages::new(key.clone());
    wiring
        .session
        .declare_queryable(&key)
        .callback(move |query| {
            let verb = keys.parse_control(query.key_expr().as_str()).unwrap_or_default().to_string();
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
            let reply = carry_out(&for_callback, request, true);
            if let Err(e) = query.reply(query.key_expr().clone(), encode(&reply)).wait() {
                tracing::warn!("cannot answer control/{verb}: {e}");
            }
        })
        .await
        .map_err(Error::zenoh("answer on", key))
}

/// The ROS services (simulation_interfaces, Flatland's), through the ROS
/// adapter.
async fn ros_services(wiring: &Wiring, published: watch::Receiver<u64>) -> Result<Vec<Queryable<()>>> {
    let Wiring { session, keys, shared, wake } = wiring.clone();
    let answer = move |service, request: &[u8]| {
        let (answer, step) = {
            let mut s = lock(&shared);
            let s = &mut *s;
            let answer =
                crate::ros_services::answer(service, request, World { physics: &mut s.physics, run: &mut s.run });
            if answer.changes.contains(&WorldChange::WorldReset) {
                s.inbox.world_reset(s.published_step);
            }
            // Nodes start a reset or newly loaded world as its file says.
            if answer.changes.iter().any(|c| matches!(c, WorldChange::WorldReset | WorldChange::WorldLoaded { .. })) {
                s.memory.clear();
            }
            (answer, s.physics.step_count())
        };
        wake.notify_one();
        if !answer.changes.is_empty() && control_log::logs_service(service) {
            let request =
                LoggedRequest::Service { name: service.ros_name().to_string(), request_cdr: request.to_vec() };
            control_log::publish(&session, &keys, step, request);
        }
        if !answer.changes.is_empty() {
            let revision = lock(&shared).physics.revision();
            for change in answer.changes.iter().cloned() {
                announce(&session, &keys, revision, change);
            }
        }
        answer
    };
    ros_adapter::declare(&wiring.session, &wiring.keys, Arc::new(answer), published)
        .await
        .map_err(Error::zenoh("answer on", "the ROS service keys"))
}
