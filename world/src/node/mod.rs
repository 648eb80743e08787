//! The world node: the Zenoh adapter around [`Physics`], in three parts.
//!
//! * [`inputs`]: everything it takes in — actuations, tokens, lockstep
//!   reports, the external clock, claims, description queries, control
//!   requests, ROS services — each updating the shared [`Sim`];
//! * [`stepper`]: when to step, free of Zenoh (pacing, the lockstep barrier
//!   and its stall policy, pausing, the external clock, the actuation inbox);
//! * `clock_batches`: the clock for recorders, several steps to a batch;
//! * [`run`] (here): the loop that asks the stepper, steps, and publishes one
//!   [`WorldState`] and one ROS `clock` per step (preceded by the step's
//!   [`WorldContacts`] in a world with contact plugins), and the status
//!   summary ([`status`]) about twice per wall second.

mod action;
mod barrier;
mod checkpoints;
mod clock_batches;
mod control_log;
pub(crate) mod inbox;
pub mod inputs;
mod memory;
mod pacing;
mod ros_adapter;
pub mod status;
pub mod stepper;
mod thinned;
mod wake;

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use flotilla_messages::rosgraph_msgs::Clock;
use flotilla_node_kit::step_publisher::StepPublisher;
use flotilla_wire::codec::encode;
use flotilla_wire::control::ClockMode;
use flotilla_wire::delivery::urgent;
use flotilla_wire::world_to_nodes::{WorldContacts, WorldState};
use flotilla_wire::Keys;
use zenoh::qos::CongestionControl;

pub use crate::control::{ModelDirs, RunState, SpawnError, MAX_STEPS_PER_REQUEST};
pub use barrier::Barrier;
pub use checkpoints::CheckpointEvery;
pub use flotilla_world_file::StallPolicy;
pub use pacing::Pacer;
pub use stepper::Handover;

/// The default of [`WorldNodeConfig::lockstep_spin`], in µs: about half a
/// drive's round trip on loopback, so that a drive's answer usually lands
/// while the world still spins instead of after it went to sleep (a few
/// per cent faster lockstep for about 0.15 of a core).
pub const DEFAULT_LOCKSTEP_SPIN_US: u64 = 60;

/// The default of [`WorldNodeConfig::lockstep_sensor_lag`], in states:
/// as far as fast mode lets any node fall behind
/// ([`flotilla_wire::lockstep::FAST_MAX_LEAD_STEPS`]), room for a scan of
/// every robot to overlap the world's next steps.
pub const DEFAULT_LOCKSTEP_SENSOR_LAG_STEPS: u64 = flotilla_wire::lockstep::FAST_MAX_LEAD_STEPS;

use crate::physics::Physics;
use clock_batches::{ClockBatches, FLUSH_BEFORE_WAITING};
use inputs::{lock, Wiring};
use status::StatusBoard;
use stepper::{Next, Sim, Stepper};
use thinned::ThinnedStates;
use wake::Wake;

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
    /// How long the loop looks for the participants' answers before it
    /// sleeps, in lockstep (see `wake`).
    pub lockstep_spin: Duration,
    /// In lockstep, wait for every drive's answer to every state, even one
    /// that promised its commands steady (see `barrier`).
    pub wait_on_drives: bool,
    /// In lockstep, how many states a node whose work commands nothing may
    /// run behind the world while no participant may command (see
    /// `barrier`); 0 waits for every report of every state.
    pub lockstep_sensor_lag: u64,
    /// The ROS name of the clock followed in external mode.
    pub external_clock: String,
    /// The endpoint other programs connect to (for the status message).
    pub endpoint: String,
    /// Directories spawn requests may load model files from.
    pub model_dirs: ModelDirs,
    /// This node's id (last chunk of its liveliness token).
    pub node_id: String,
    /// Save the world to a file now and then (`--checkpoint`).
    pub checkpoint_every: Option<CheckpointEvery>,
    /// What nodes asked the world to keep, at the start (a checkpoint's).
    pub node_memory: std::collections::BTreeMap<String, Vec<u8>>,
    /// The barrier and answers of a lockstep run taken over (see
    /// `crate::standby`).
    pub handover: Option<Handover>,
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
    let run_state =
        RunState::new(config.clock, config.real_time_factor, config.start_paused, config.model_dirs.clone());
    let mut sim = Sim::new(physics, run_state);
    sim.memory = config.node_memory.clone();
    let mut catch_up = None;
    if let Some(handover) = config.handover {
        (sim.barrier, sim.inbox, catch_up) = (handover.barrier, handover.inbox, Some(handover.catch_up));
    }
    sim.barrier.honour_promises(!config.wait_on_drives);
    sim.barrier.lag_sensors(config.lockstep_sensor_lag);
    let wiring = Wiring {
        session: session.clone(),
        keys: keys.clone(),
        shared: Arc::new(Mutex::new(sim)),
        wake: Arc::new(Wake::default()),
    };
    // Everything a node may send or ask once it sees the world is declared
    // before the world's token: a node that sees the world asks for its
    // memory and the description next, and one that sees a world it knew
    // come back (a standby taking over) sends its last report again.
    let _memory = memory::declare(&wiring).await?;
    let (published_tx, published_rx) = tokio::sync::watch::channel(0u64);
    let _action = action::declare(&wiring, published_rx.clone()).await?;
    let _inputs = inputs::declare(&wiring, &config.external_clock, published_rx).await?;
    if let Some(catch_up) = catch_up {
        let standby_listening = {
            let mut s = lock(&wiring.shared);
            let s = &mut *s;
            catch_up(&mut s.barrier, &mut s.inbox)
        };
        drop(standby_listening);
    }
    let outputs = Outputs::declare(&session, &keys, &config.node_id).await?;
    let _token = session
        .liveliness()
        .declare_token(keys.node_token(&config.node_id))
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))
        .context("declaring the world's liveliness token")?;
    let shared = &wiring.shared;
    let checkpoints = config.checkpoint_every.clone().map(|every| checkpoints::spawn(shared.clone(), every));

    let mut state = WorldState { revision: 0, step: 0, time: Default::default(), step_ns, bodies: Vec::new() };
    // The state at step 0, so that sensors due at t = 0 fire.
    outputs.publish(shared, &mut state).await?;
    published_tx.send_replace(state.step);

    let mut stepper = Stepper::new(step_ns, config.real_time_factor, config.lockstep_timeout, config.stall_policy);
    let mut status = StatusBoard::new(config.endpoint.clone(), Instant::now());
    let spin = config.lockstep_spin;
    tokio::pin!(shutdown);
    loop {
        // Counted before looking, so that news arriving meanwhile ends a spin.
        let news = wiring.wake.news();
        let next = stepper.next(&mut lock(shared), state.step, state.time.nanos, Instant::now());
        match next {
            Next::Republish => outputs.publish(shared, &mut state).await?,
            Next::Wait { until, paused, on_answers } => {
                if on_answers && !spin.is_zero() && wiring.wake.spin_for_news(news, spin) {
                    continue;
                }
                // Waiting for time, not for answers: the clocks batched
                // so far go now (in fast and lockstep modes the answers
                // come within milliseconds, and the batch fills on).
                let long = until.saturating_duration_since(Instant::now()) >= FLUSH_BEFORE_WAITING;
                if paused || (long && lock(shared).run.clock == ClockMode::Realtime) {
                    outputs.clock_batches.flush().await?;
                }
                tokio::select! {
                    biased;
                    _ = &mut shutdown => break,
                    _ = wiring.wake.notified() => {}
                    _ = tokio::time::sleep_until(until.into()) => {}
                }
                if paused {
                    stepper.paused(Instant::now());
                }
            }
            Next::Step { yield_first } => {
                if yield_first {
                    // Fast modes still let shutdown and control in now and then.
                    tokio::select! {
                        biased;
                        _ = &mut shutdown => break,
                        _ = tokio::task::yield_now() => {}
                    }
                }
                stepper.step(&mut lock(shared));
                outputs.publish(shared, &mut state).await?;
                published_tx.send_replace(state.step);
                stepper.stepped(Instant::now());
            }
        }
        let due = status.due(&lock(shared), state.step, state.time, Instant::now());
        if let Some(status) = due {
            let put = session.put(keys.status(), encode(&status)).congestion_control(CongestionControl::Drop).await;
            if let Err(e) = put {
                tracing::warn!("cannot publish status: {e}");
            }
        }
    }
    outputs.clock_batches.flush().await?;
    if let Some(checkpoints) = checkpoints {
        checkpoints.abort();
    }
    tracing::info!("world stopping at step {} (t = {:.3} s)", state.step, state.time.as_secs_f64());
    Ok(())
}

/// What the world publishes at every step: the contacts of watched bodies
/// (if any), the state, and its ROS clock.
struct Outputs {
    contacts: StepPublisher,
    state: StepPublisher,
    /// Every n-th state, for the nodes that want no more.
    thinned: ThinnedStates,
    /// Every state again for standby worlds, droppable: a standby that
    /// falls behind must not hold the world up (see `standby`).
    for_standby: StepPublisher,
    clock: zenoh::pubsub::Publisher<'static>,
    /// The clock for recorders, several steps to a batch.
    clock_batches: Arc<ClockBatches>,
    /// Where a recorder about to stop asks for the clocks batched so far.
    _clock_flush: zenoh::query::Queryable<()>,
    /// The contacts message, its buffer kept between steps.
    contacts_message: Mutex<WorldContacts>,
}

impl Outputs {
    async fn declare(session: &zenoh::Session, keys: &Keys, node: &str) -> anyhow::Result<Outputs> {
        let contacts = StepPublisher::declare(session, keys.world_contacts()).await?;
        let state = StepPublisher::declare(session, keys.world_state()).await?;
        let thinned = ThinnedStates::declare(session, keys).await?;
        let clock_key = keys.ros("/clock");
        let clock = session
            .declare_publisher(clock_key.clone())
            .congestion_control(CongestionControl::Block)
            .await
            .map_err(flotilla_node_kit::Error::zenoh("publish on", clock_key))?;
        let (clock_batches, _clock_flush) = ClockBatches::declare(session, keys, node).await?;
        let for_standby = StepPublisher::declare_droppable(session, keys.world_standby_state())?;
        Ok(Outputs {
            contacts,
            state,
            thinned,
            for_standby,
            clock,
            clock_batches,
            _clock_flush,
            contacts_message: Mutex::default(),
        })
    }

    /// Publishes the simulation's current state (into `state`) and clock.
    async fn publish(&self, shared: &Mutex<Sim>, state: &mut WorldState) -> anyhow::Result<()> {
        let (contacts, bytes, clock, mode, thinned, at_once) = {
            let mut s = lock(shared);
            s.physics.state_into(state);
            s.published(state.step, state.revision);
            // In lockstep, a node that owes a report for this step gets it
            // on its thinned stream too (see `thinned`).
            let lockstep = s.run.clock == ClockMode::Lockstep;
            let thinned = self.thinned.due(state.step, |node| lockstep && s.barrier.owes(node, state.step));
            let contacts = s.physics.watches_contacts().then(|| {
                let mut message = self.contacts_message.lock().unwrap_or_else(|e| e.into_inner());
                s.physics.contacts_into(&mut message);
                encode(&*message)
            });
            // In lockstep, a state the world will not wait on (the drives'
            // promises cover it, no sensor is due or the ones due may run
            // behind, see `barrier`) joins Zenoh's batch like
            // every state in fast mode: the world steps on at once, and the
            // next state it waits on, sent at once, takes it along (Zenoh
            // keeps the order), one write and one wake-up for several
            // states. A state the world waits on goes at once.
            let at_once = match s.run.clock {
                ClockMode::Lockstep => s.barrier.awaits_anyone(state.step),
                mode => urgent(Some(mode)),
            };
            (
                contacts,
                encode(state),
                flotilla_messages::encode(&Clock { clock: state.time.to_ros() }),
                s.run.clock,
                thinned,
                at_once,
            )
        };
        // Before the state, on the same session and with the same urgency,
        // so that a contact plugin has a step's contacts when it answers
        // the step's state (Zenoh keeps the order of one priority's
        // messages).
        if let Some(contacts) = contacts {
            self.contacts.put(contacts, at_once).await.map_err(|e| anyhow::anyhow!("{e}"))?;
        }
        let bytes = zenoh::bytes::ZBytes::from(bytes);
        // A standby's copy first, at the state's priority and urgency: it
        // then reaches the standby before the drives' answers to it do (a
        // lockstep take-over re-runs to the last state it has, and must
        // not find the nodes a state further on). Sent only where a
        // standby subscribes.
        self.for_standby.put(bytes.clone(), at_once).await.map_err(|e| anyhow::anyhow!("{e}"))?;
        // Every node's step starts from this message (or its thinned copy).
        self.state.put(bytes.clone(), at_once).await.map_err(|e| anyhow::anyhow!("{e}"))?;
        for every in thinned {
            every.put(bytes.clone(), at_once).await.map_err(|e| anyhow::anyhow!("{e}"))?;
        }
        // In external mode the clock is someone else's.
        if mode != ClockMode::External {
            // A recorder's batch first (see `clock_batches`).
            self.clock_batches.clock(&clock, state.time.nanos).await?;
            self.clock.put(clock).await.map_err(|e| anyhow::anyhow!("{e}"))?;
        }
        Ok(())
    }
}
