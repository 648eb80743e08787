//! The drive node: serves every `DiffDrive` plugin instance it selects.
//!
//! On each world state (step k) it advances every drive model by one step and
//! publishes one batched [`Actuation`](flotilla_protocol::drive_to_world::Actuation)
//! with the velocity of each driven body for step k+1, from the thread that
//! received the state (see [`crate::driving`]). `cmd_vel` arrives as CDR
//! `geometry_msgs/Twist` or `TwistStamped` on the model-namespaced ROS key.
//!
//! In realtime and external clock modes, a plain `Twist` is not held until
//! the next state: the drive redoes its last step with it and publishes that
//! body's actuation at once, so the world applies it at its very next step
//! (one step of latency instead of two). In lockstep, commands only take
//! effect at states, which keeps runs independent of message timing; in fast
//! mode too, as there is no wall-clock latency to save.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use flotilla_node_kit::claims::{watch_claims, Claims};
use flotilla_node_kit::client::{fetch_description, wait_for_world};
use flotilla_node_kit::health::BadMessages;
use flotilla_node_kit::lockstep::LockstepReporter;
use flotilla_node_kit::step_publisher::StepPublisher;
use flotilla_node_kit::subscribe::{on_message, on_world_presence};
use flotilla_protocol::claim_book::ClaimEvent;
use flotilla_protocol::codec::encode;
use flotilla_protocol::description::WorldDescription;
use flotilla_protocol::names::resolve_topic;
use flotilla_protocol::plugins::diff_drive::DiffDriveConfig;
use flotilla_protocol::plugins::{configured, Configured};
use flotilla_protocol::ros::geometry_msgs::{Twist, TwistStamped};
use flotilla_protocol::ros::{self, CdrError};
use flotilla_protocol::world_to_nodes::{WorldEvent, WorldState, WorldStatus};
use flotilla_protocol::Keys;
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};

use crate::diff_drive::DiffDrive;
use crate::driving::{Answer, Arrival, Command, Driving, Served};

/// How to run a drive node.
pub struct DriveNodeConfig {
    /// Keys of the simulation.
    pub keys: Keys,
    /// This node's id.
    pub node_id: String,
    /// Which models to serve.
    pub selection: flotilla_protocol::selection::Selection,
}

/// What only the main loop can do.
enum Input {
    /// An arrival the receiving thread could not handle (see
    /// [`Driving::admits_here`]).
    Handed(Arrival),
    /// A new world or description: fetch it and rebuild.
    Rework(Answer),
}

/// Where arrivals are handled, on whichever thread brings them.
struct Gate {
    driving: Mutex<Driving>,
    to_loop: UnboundedSender<Input>,
    actuation: StepPublisher,
    /// Set once the node has joined the barrier (nothing is answered before).
    lockstep: OnceLock<LockstepReporter>,
}

impl Gate {
    fn driving(&self) -> MutexGuard<'_, Driving> {
        // A panic while holding the lock would be a bug; keep serving regardless.
        self.driving.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Handles an arrival on the thread it came on, or hands it to the main
    /// loop when it must wait its turn there.
    fn arrive(&self, arrival: Arrival) {
        let mut driving = self.driving();
        if !driving.admits_here() {
            let _ = self.to_loop.send(Input::Handed(arrival));
            return;
        }
        let answer = driving.arrive(arrival);
        if let Some(rework) = self.send(&mut driving, answer) {
            let _ = self.to_loop.send(Input::Rework(rework));
        }
    }

    /// Sends what an answer asks for, still holding the lock so that
    /// actuations leave in the order they were made. Returns the answers
    /// only the main loop can act on.
    fn send(&self, driving: &mut Driving, answer: Answer) -> Option<Answer> {
        match answer {
            Answer::Nothing => None,
            Answer::Actuate { actuation, urgent } => {
                if let Err(e) = self.actuation.put_now(encode(&actuation), urgent) {
                    tracing::warn!("cannot publish actuation: {e}");
                }
                driving.recycle(actuation);
                None
            }
            Answer::Report { step, urgent } => {
                if let Some(lockstep) = self.lockstep.get() {
                    lockstep.done_now(step, urgent);
                }
                None
            }
            rework @ (Answer::Resync(_) | Answer::Refresh) => Some(rework),
        }
    }
}

/// A subscriber's callback: each message, as an arrival at `gate`.
fn arriving<T: 'static>(gate: &Arc<Gate>, wrap: fn(T) -> Arrival) -> impl Fn(T) + Send + Sync + 'static {
    let gate = gate.clone();
    move |message| gate.arrive(wrap(message))
}

/// Decodes a `cmd_vel` payload: `Twist` (exactly 52 bytes) or `TwistStamped`
/// (with its stamp in ns, `None` when the stamp is zero or negative).
pub fn decode_cmd_vel(bytes: &[u8]) -> Result<(Twist, Option<u64>), CdrError> {
    if bytes.len() == 52 {
        ros::decode::<Twist>(bytes).map(|t| (t, None))
    } else {
        ros::decode::<TwistStamped>(bytes).map(|stamped| {
            let t = stamped.header.stamp;
            let ns = (t.sec > 0 || t.nanosec > 0).then(|| t.sec.max(0) as u64 * 1_000_000_000 + u64::from(t.nanosec));
            (stamped.twist, ns)
        })
    }
}

/// What the main loop keeps between rebuilds.
struct Rebuilder<'a> {
    session: &'a zenoh::Session,
    config: &'a DriveNodeConfig,
    gate: &'a Arc<Gate>,
    description: WorldDescription,
    claims: Claims,
    /// Each served instance's `cmd_vel` subscription.
    subscriptions: BTreeMap<String, zenoh::pubsub::Subscriber<()>>,
}

/// Runs the drive node until `shutdown` completes.
pub async fn run(
    session: zenoh::Session,
    config: DriveNodeConfig,
    shutdown: impl Future<Output = ()>,
) -> anyhow::Result<()> {
    let keys = &config.keys;
    let _token = session
        .liveliness()
        .declare_token(keys.node_token(&config.node_id))
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let (to_loop, mut inputs) = unbounded_channel();
    let actuation = StepPublisher::declare(&session, keys.actuation(&config.node_id)).await?;
    let gate = Arc::new(Gate {
        driving: Mutex::new(Driving::new(&config.node_id)),
        to_loop,
        actuation,
        lockstep: OnceLock::new(),
    });
    let all = |_: &[u8]| true;
    let _state = on_message(&session, keys.world_state(), all, arriving(&gate, Arrival::State)).await?;
    let _events =
        on_message(&session, keys.world_events(), all, arriving(&gate, |e: WorldEvent| Arrival::Revision(e.revision)))
            .await?;
    let _world = on_world_presence(&session, keys, arriving(&gate, Arrival::World)).await?;
    let _status =
        on_message(&session, keys.status(), all, arriving(&gate, |s: WorldStatus| Arrival::Clock(s.clock))).await?;
    let (_claims, mut claim_rx) = watch_claims(&session, keys).await?;

    tokio::pin!(shutdown);
    let description = tokio::select! {
        _ = &mut shutdown => return Ok(()),
        d = wait_for_world(&session, keys) => d,
    };
    let mut rebuilder = Rebuilder {
        session: &session,
        config: &config,
        gate: &gate,
        description,
        claims: Claims::new(&config.node_id, DiffDriveConfig::DRIVE_ROLE.aspect),
        subscriptions: BTreeMap::new(),
    };
    rebuilder.claims.load(&session, keys, &mut claim_rx).await;
    rebuilder.rebuild(false).await;
    // Join the barrier only now, with every cmd_vel subscribed: a command sent
    // at the first step a participant sees is never lost.
    let lockstep = LockstepReporter::join(&session, keys, &config.node_id).await?;
    let _ = gate.lockstep.set(lockstep);
    gate.driving().release();

    loop {
        let input = tokio::select! {
            biased;
            _ = &mut shutdown => break,
            Some(ClaimEvent { instance, node, alive }) = claim_rx.recv() => {
                if rebuilder.claims.seen(&instance, &node, alive) {
                    gate.driving().hold();
                    rebuilder.rebuild(false).await;
                }
                continue;
            }
            input = inputs.recv() => match input { Some(i) => i, None => break },
        };
        let rework = match input {
            Input::Handed(arrival) => {
                let mut driving = gate.driving();
                let answer = driving.arrive_handed(arrival);
                gate.send(&mut driving, answer)
            }
            Input::Rework(answer) => Some(answer),
        };
        match rework {
            Some(Answer::Resync(state)) => rebuilder.resync(state).await,
            Some(Answer::Refresh) => rebuilder.refresh().await,
            _ => {}
        }
    }
    Ok(())
}

impl Rebuilder<'_> {
    /// A new world: its description, every instance afresh, then the state
    /// that revealed it.
    async fn resync(&mut self, state: WorldState) {
        match fetch_description(self.session, &self.config.keys, Duration::from_secs(5)).await {
            Ok(d) => {
                self.description = d;
                self.rebuild(true).await;
                let mut driving = self.gate.driving();
                let answer = driving.answer(&state);
                self.gate.send(&mut driving, answer);
            }
            Err(e) => {
                tracing::warn!("cannot resynchronise yet: {e}");
                let mut driving = self.gate.driving();
                driving.resync_failed();
                driving.release();
            }
        }
    }

    /// The description changed: rebuild from the new one.
    async fn refresh(&mut self) {
        match fetch_description(self.session, &self.config.keys, Duration::from_secs(5)).await {
            Ok(d) => {
                self.description = d;
                self.rebuild(false).await;
            }
            Err(e) => {
                tracing::warn!("cannot refresh the world description: {e}");
                self.gate.driving().release();
            }
        }
    }

    /// Selects the DiffDrive instances to serve and (re)subscribes their
    /// cmd_vel, keeping the state of instances that still exist unless
    /// `afresh`; arrivals wait for it (the caller holds them) and are
    /// released after.
    async fn rebuild(&mut self, afresh: bool) {
        let mut instances = std::mem::take(&mut self.gate.driving().instances);
        if afresh {
            instances.clear();
            self.subscriptions.clear();
        }
        let description = &self.description;
        let wanted = self.config.selection.instances(description, &DiffDriveConfig::DRIVE_ROLE);
        self.claims.sync(self.session, &self.config.keys, &wanted).await;
        let mut next = BTreeMap::new();
        let mut subscriptions = BTreeMap::new();
        let claims = &self.claims;
        let held = |model: &str, plugin: &str| claims.holds(&claims.instance(model, plugin));
        for Configured { model, key, body, config: drive_config, .. } in
            configured::<DiffDriveConfig>(description, &held)
        {
            if let (Some(existing), Some(subscription)) = (instances.remove(&key), self.subscriptions.remove(&key)) {
                if existing.body == body {
                    next.insert(key.clone(), existing);
                    subscriptions.insert(key, subscription);
                    continue;
                }
            }
            let topic = self.config.keys.ros(&resolve_topic(&model.namespace, &drive_config.twist_sub));
            match subscribe_cmd_vel(self.session, &topic, key.clone(), self.gate.clone()).await {
                Ok(subscription) => {
                    tracing::info!("serving DiffDrive {key}: cmd_vel on {topic}");
                    next.insert(key.clone(), Served { body, drive: DiffDrive::new(&drive_config) });
                    subscriptions.insert(key, subscription);
                }
                Err(e) => tracing::error!("cannot serve {key}: {e}"),
            }
        }
        self.subscriptions = subscriptions;
        let mut driving = self.gate.driving();
        driving.instances = next;
        driving.revision = description.revision;
        driving.release();
    }
}

async fn subscribe_cmd_vel(
    session: &zenoh::Session,
    topic: &str,
    instance: String,
    gate: Arc<Gate>,
) -> Result<zenoh::pubsub::Subscriber<()>, String> {
    let bad = Arc::new(BadMessages::new(topic.to_string()));
    session
        .declare_subscriber(topic.to_string())
        .callback(move |sample| match decode_cmd_vel(&sample.payload().to_bytes()) {
            Ok((t, stamp_ns)) if t.linear.x.is_finite() && t.angular.z.is_finite() => {
                gate.arrive(Arrival::Command(Command {
                    instance: instance.clone(),
                    forward_mps: t.linear.x,
                    yaw_rate_radps: t.angular.z,
                    stamp_ns,
                }));
            }
            Ok((t, _)) => bad.record(&format!("non-finite command {t:?}")),
            Err(e) => bad.record(&e),
        })
        .await
        .map_err(|e| format!("cannot subscribe to {topic}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_protocol::ros::std_msgs::Header;

    #[test]
    fn cmd_vel_accepts_twist_and_twist_stamped() {
        let mut twist = Twist::default();
        twist.linear.x = 0.4;
        twist.angular.z = -0.2;
        assert_eq!(decode_cmd_vel(&ros::encode(&twist)).unwrap(), (twist, None));
        let mut stamped = TwistStamped { header: Header { frame_id: "base_link".into(), ..Default::default() }, twist };
        assert_eq!(decode_cmd_vel(&ros::encode(&stamped)).unwrap(), (twist, None), "zero stamp: unstamped");
        stamped.header.stamp.sec = 2;
        stamped.header.stamp.nanosec = 5;
        assert_eq!(decode_cmd_vel(&ros::encode(&stamped)).unwrap(), (twist, Some(2_000_000_005)));
        assert!(decode_cmd_vel(&[0, 1, 0, 0, 1, 2, 3]).is_err());
    }
}
