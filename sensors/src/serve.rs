//! The loop every sensor node runs: announce itself, wait for the world,
//! select its plugin instances, then turn each world state into outputs.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use flotilla_node_kit::claims::{watch_claims, Claims};
use flotilla_node_kit::client::{fetch_description, wait_for_world};
use flotilla_node_kit::step_publisher::congestion_control;
use flotilla_node_kit::subscribe::{forward, forward_if, watch_world};
use flotilla_protocol::claim_book::ClaimEvent;
use flotilla_protocol::codec::decode;
use flotilla_protocol::delivery::{output_delivery, urgent};
use flotilla_protocol::description::WorldDescription;
use flotilla_protocol::plugins::registry::Role;
use flotilla_protocol::ros::geometry_msgs::TransformStamped;
use flotilla_protocol::world_to_nodes::{WorldEvent, WorldState, WorldStateHead, WorldStatus};
use flotilla_protocol::world_tracker::{StateVerdict, WorldPresence, WorldTracker};
use flotilla_protocol::Keys;

use crate::state_gate::StateGate;
use crate::static_tf::StaticTf;
use tokio::sync::mpsc::unbounded_channel;
use zenoh::qos::CongestionControl;

pub use flotilla_protocol::selection::Selection;

/// Messages produced while handling one state: (key, payload) pairs.
#[derive(Default)]
pub struct Outbox {
    items: Vec<(String, Vec<u8>)>,
    /// Per key published on so far, whether any subscriber matches it, as
    /// Zenoh's matching listener last said.
    subscribed: HashMap<String, Arc<AtomicBool>>,
}

impl Outbox {
    /// Queues a payload for a key.
    pub fn put(&mut self, key: String, payload: Vec<u8>) {
        self.items.push((key, payload));
    }

    /// Whether a message on `key` would reach anyone: true until the key's
    /// first message is out (its publisher then learns of subscribers),
    /// then whether any subscriber matches it. A server skips encoding and
    /// queuing what nobody listens to, as Gazebo's sensors do; it still
    /// updates its model (state, noise), so that a subscriber that comes
    /// later sees what it would have seen from the start.
    pub fn wants(&self, key: &str) -> bool {
        self.subscribed.get(key).is_none_or(|matching| matching.load(Ordering::Relaxed))
    }

    /// The flag [`Outbox::wants`] reads for `key`, created false.
    fn subscribed_flag(&mut self, key: &str) -> Arc<AtomicBool> {
        self.subscribed.entry(key.to_string()).or_default().clone()
    }

    /// Takes every queued message.
    pub fn drain(&mut self) -> std::vec::Drain<'_, (String, Vec<u8>)> {
        self.items.drain(..)
    }
}

/// A sensor node's logic, free of Zenoh.
pub trait PluginServer {
    /// The role this node serves, from the plugin registry: its plugin
    /// type, binary and claim aspect.
    fn role(&self) -> &'static Role;
    /// (Re)builds the plugin instances to serve: those of the description for
    /// which `serves(model, plugin)` holds.
    fn rebuild(&mut self, description: &WorldDescription, keys: &Keys, serves: &dyn Fn(&str, &str) -> bool);
    /// Handles one world state, queuing outputs.
    fn on_state(&mut self, state: &WorldState, out: &mut Outbox);
    /// Forgets everything: a new world process came up.
    fn reset(&mut self);
    /// How many steps after `state` are sure to bring no output (0: the next
    /// one may). The node reports them done to the lockstep barrier at once,
    /// so that the world does not wait for a 10 Hz laser at the 19 steps of
    /// every 20 at which it has nothing to do.
    fn steps_without_output(&self, _state: &WorldState) -> u64 {
        0
    }
    /// The fixed transforms of the served instances (e.g. sensor mounts),
    /// published latched on `tf_static`.
    fn static_transforms(&self) -> Vec<TransformStamped> {
        Vec::new()
    }
    /// How many threads may compute the outputs due at one step (`--threads`);
    /// servers whose outputs are cheap ignore it.
    fn set_threads(&mut self, _threads: usize) {}
}

/// At most this many steps are reported done ahead: a node that serves
/// nothing yet, or a 0.1 Hz sensor, still answers the barrier now and then,
/// and an instance spawned meanwhile is waited for soon.
const MAX_QUIET_STEPS_REPORTED: u64 = 100;

enum Input {
    State(WorldState),
    Event(WorldEvent),
    World(WorldPresence),
    Status(WorldStatus),
    Claim(ClaimEvent),
}

/// Claims what it may, then rebuilds the server for the held instances and
/// republishes their static transforms if they changed.
async fn claim_and_rebuild<S: PluginServer>(
    session: &zenoh::Session,
    keys: &Keys,
    description: &WorldDescription,
    selection: &Selection,
    claims: &mut Claims,
    server: &mut S,
    static_tf: &mut StaticTf,
) {
    let wanted = selection.instances(description, server.role());
    claims.sync(session, keys, &wanted).await;
    server.rebuild(description, keys, &|model, plugin| claims.holds(&claims.instance(model, plugin)));
    static_tf.update(session, server.static_transforms()).await;
}

/// Runs `server` as node `node_id` until `shutdown` completes.
pub async fn serve<S: PluginServer>(
    session: zenoh::Session,
    keys: Keys,
    node_id: String,
    selection: Selection,
    mut server: S,
    shutdown: impl Future<Output = ()>,
) -> anyhow::Result<()> {
    let _token =
        session.liveliness().declare_token(keys.node_token(&node_id)).await.map_err(|e| anyhow::anyhow!("{e}"))?;
    let (tx, mut rx) = unbounded_channel();
    // States the loop does not need are dropped before their bodies are
    // decoded (see `StateGate`); one whose head cannot be read goes on, to
    // be counted as bad.
    let gate = Arc::new(StateGate::default());
    let admit = {
        let gate = gate.clone();
        move |bytes: &[u8]| decode::<WorldStateHead>(bytes).map_or(true, |head| gate.admits(head.revision, head.step))
    };
    let _state = forward_if(&session, keys.world_state(), tx.clone(), Input::State, admit).await?;
    let _events = forward(&session, keys.world_events(), tx.clone(), Input::Event).await?;
    let _world = watch_world(&session, &keys, tx.clone(), Input::World).await?;
    let (_claims, mut claim_rx) = watch_claims(&session, &keys).await?;
    // The clock mode, for how urgently to report steps done.
    let _status = forward(&session, keys.status(), tx.clone(), Input::Status).await?;
    let mut clock = None;
    let mut claims = Claims::new(&node_id, server.role().aspect);

    tokio::pin!(shutdown);
    let mut description = tokio::select! {
        _ = &mut shutdown => return Ok(()),
        d = wait_for_world(&session, &keys) => d,
    };
    claims.load(&session, &keys, &mut claim_rx).await;
    let mut static_tf = StaticTf::new(keys.ros("/tf_static"));
    claim_and_rebuild(&session, &keys, &description, &selection, &mut claims, &mut server, &mut static_tf).await;
    // Join the barrier only now, ready to serve what it claimed.
    let lockstep = flotilla_node_kit::lockstep::LockstepReporter::join(&session, &keys, &node_id).await?;
    let mut revision = description.revision;
    // Per output key and congestion control (see output_congestion_control):
    // the clock mode can change while the node runs.
    let mut publishers: HashMap<(String, CongestionControl), zenoh::pubsub::Publisher<'static>> = HashMap::new();
    let mut outbox = Outbox::default();
    let mut tracker = WorldTracker::default();
    let mut last_report = None;
    loop {
        let input = tokio::select! {
            biased;
            _ = &mut shutdown => break,
            Some(claim) = claim_rx.recv() => Input::Claim(claim),
            input = rx.recv() => match input { Some(i) => i, None => break },
        };
        match input {
            Input::Claim(ClaimEvent { instance, node, alive }) => {
                if !claims.seen(&instance, &node, alive) {
                    continue;
                }
                gate.open();
                claim_and_rebuild(&session, &keys, &description, &selection, &mut claims, &mut server, &mut static_tf)
                    .await;
            }
            Input::Event(event) if event.revision > revision => {
                gate.open();
                match fetch_description(&session, &keys, Duration::from_secs(5)).await {
                    Ok(d) => {
                        revision = d.revision;
                        description = d;
                        claim_and_rebuild(
                            &session,
                            &keys,
                            &description,
                            &selection,
                            &mut claims,
                            &mut server,
                            &mut static_tf,
                        )
                        .await;
                    }
                    Err(e) => tracing::warn!("cannot refresh the world description: {e}"),
                }
            }
            Input::Event(_) => {}
            Input::World(presence) => {
                gate.open();
                // Reports are sent once (see `report_needed`); one lost with
                // a cut link would leave the world waiting for it.
                if tracker.presence(&presence) {
                    if let Some(report) = last_report {
                        lockstep.done(report, urgent(clock)).await;
                    }
                }
            }
            Input::Status(status) => clock = Some(status.clock),
            Input::State(state) => {
                let resync = match tracker.state(state.step) {
                    StateVerdict::Duplicate => continue, // the world re-published a state we handled
                    StateVerdict::Handle { resync } => resync,
                };
                if resync {
                    last_report = None; // a new world counts its steps afresh
                    match fetch_description(&session, &keys, Duration::from_secs(5)).await {
                        Ok(d) => {
                            revision = d.revision;
                            description = d;
                            server.reset();
                            claim_and_rebuild(
                                &session,
                                &keys,
                                &description,
                                &selection,
                                &mut claims,
                                &mut server,
                                &mut static_tf,
                            )
                            .await;
                        }
                        Err(e) => {
                            tracing::warn!("cannot resynchronise yet: {e}");
                            tracker.resync_failed();
                            continue;
                        }
                    }
                }
                if state.revision > revision {
                    // A change we have not heard about (missed event, world restart).
                    if let Ok(d) = fetch_description(&session, &keys, Duration::from_secs(5)).await {
                        revision = d.revision;
                        description = d;
                        claim_and_rebuild(
                            &session,
                            &keys,
                            &description,
                            &selection,
                            &mut claims,
                            &mut server,
                            &mut static_tf,
                        )
                        .await;
                    }
                }
                server.on_state(&state, &mut outbox);
                let congestion = congestion_control(output_delivery(clock));
                // Taken out (and put back, keeping its capacity) so that
                // new publishers can register their matching flags.
                let mut outputs = std::mem::take(&mut outbox.items);
                for (key, payload) in outputs.drain(..) {
                    let slot = (key, congestion);
                    if !publishers.contains_key(&slot) {
                        match session.declare_publisher(slot.0.clone()).congestion_control(congestion).await {
                            Ok(p) => {
                                // Called at once (in `await`) when a
                                // subscriber already matches, then on every
                                // change.
                                let flag = outbox.subscribed_flag(&slot.0);
                                let listener = p
                                    .matching_listener()
                                    .callback(move |status| flag.store(status.matching(), Ordering::Relaxed))
                                    .background()
                                    .await;
                                if let Err(e) = listener {
                                    // Unknown matching: keep publishing.
                                    tracing::warn!("cannot watch subscribers of {}: {e}", slot.0);
                                    outbox.subscribed_flag(&slot.0).store(true, Ordering::Relaxed);
                                }
                                publishers.insert(slot.clone(), p);
                            }
                            Err(e) => {
                                tracing::warn!("cannot publish on {}: {e}", slot.0);
                                continue;
                            }
                        }
                    }
                    let key = &slot.0;
                    if let Some(publisher) = publishers.get(&slot) {
                        if let Err(e) = publisher.put(payload).await {
                            tracing::warn!("cannot publish on {key}: {e}");
                        }
                    }
                }
                outbox.items = outputs;
                // Everything due at this step is out, and nothing is due
                // until the next update: the world may go on.
                let quiet = server.steps_without_output(&state).min(MAX_QUIET_STEPS_REPORTED);
                let report = state.step + quiet;
                if report_needed(last_report, report) {
                    lockstep.done(report, urgent(clock)).await;
                    last_report = Some(report);
                }
                gate.quiet_until(report, revision);
            }
        }
    }
    Ok(())
}

/// Whether to send the lockstep report `report` when the last one sent was
/// `last`. A report that repeats the last tells the world nothing: a 10 Hz
/// laser, quiet until step k+19, reports it once instead of after each of
/// the 19 states before it. The world keeps what a participant reported
/// across a link cut (see the world's barrier), so it is never owed a
/// repeat.
fn report_needed(last: Option<u64>, report: u64) -> bool {
    last != Some(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_are_wanted_until_their_publisher_knows_of_no_subscriber() {
        let mut out = Outbox::default();
        assert!(out.wants("robot1/odom"), "no publisher yet: the first message goes out");
        let matching = out.subscribed_flag("robot1/odom");
        assert!(!out.wants("robot1/odom"), "a publisher that no subscriber matches");
        matching.store(true, Ordering::Relaxed);
        assert!(out.wants("robot1/odom"), "a subscriber came");
        assert!(out.wants("robot2/odom"), "other keys are their own");
    }

    #[test]
    fn reports_that_repeat_the_last_are_skipped() {
        assert!(!report_needed(Some(119), 119));
        assert!(report_needed(Some(119), 120));
        assert!(report_needed(Some(119), 3), "a new world starts again");
        assert!(report_needed(None, 119));
    }
}
