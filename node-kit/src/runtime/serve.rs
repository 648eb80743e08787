//! The one loop every plugin node runs: announce itself, wait for the
//! world, claim and build its instances, join the lockstep barrier, then
//! answer what arrives — on the receiving thread or on the main loop, as
//! the plugin chose ([`Answering`]) — and rework the instances when claims,
//! the description or the world itself change.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, TryLockError};

use flotilla_plugins::channels::forwarded_topics;
use flotilla_plugins::registry::{self, Role};
use flotilla_plugins::selection::Selection;
use flotilla_wire::codec::decode;
use flotilla_wire::delivery::output_delivery;
use flotilla_wire::description::WorldDescription;
use flotilla_wire::drive_to_world::{encode_actuation, Actuation};
use flotilla_wire::world_to_nodes::{WorldEvent, WorldStateHead, WorldStatus};
use flotilla_wire::Keys;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

use super::core::{Arrival, Core, Reply, Rework};
use super::handover::{may_send_here, Handover};
use super::latched::Latched;
use super::outbox::folder_of;
use super::plugin::{Answering, Input, NodePlugin, Rebuild};
use super::publishers::Publishers;
pub use super::publishers::MATCHING_SETTLES_IN;
use super::state_gate::StateGate;
use super::state_stream::StateStream;
use super::static_tf::StaticTf;
use crate::claims::{watch_claims, Claims};
use crate::client::{fetch_description, fetch_memory, wait_for_world};
use crate::error::{Error, Result};
use crate::follow_world::FETCH_TIMEOUT;
use crate::health::BadMessages;
use crate::lockstep::LockstepReporter;
use crate::recording::forwarding::InputForwarding;
use crate::recording::RecorderTap;
use crate::subscribe::{on_message, on_world_presence};

/// How long a node waits, before it joins the barrier, for its batches to
/// reach the recorders already there; and for one that its launcher says
/// records the run (as long as `flotilla run` waits for its recorder).
const RECORDERS_REACHED_WITHIN: std::time::Duration = std::time::Duration::from_secs(5);
const RECORDER_EXPECTED_WITHIN: std::time::Duration = std::time::Duration::from_secs(30);

/// Runs `plugin` as node `node_id` until `shutdown` completes; with
/// `recorded`, a recorder records the run from its first state, and the
/// node joins the barrier only once its batches reach it.
pub async fn serve<P: NodePlugin>(
    session: zenoh::Session,
    keys: Keys,
    node_id: String,
    selection: Selection,
    plugin: P,
    recorded: bool,
    shutdown: impl Future<Output = ()>,
) -> Result<()> {
    let token_key = keys.node_token(&node_id);
    let _token =
        session.liveliness().declare_token(&token_key).await.map_err(Error::zenoh("declare the token", token_key))?;
    let _witness = crate::witness::declare(&session, &keys, &node_id).await?;
    let (role, extra_roles) = (plugin.role(), plugin.also_serves());
    let (shared, mut handed) = Shared::new(&session, &keys, &node_id, plugin);
    let tap = RecorderTap::open(&session, &keys, &node_id).await?;
    shared.lock().core.outbox.follow_recorders(tap.listening());
    let _ = shared.recording.set(tap);
    let (full_states, _world) = subscribe_world(&shared).await?;
    let (_claims, mut claim_events) = watch_claims(&session, &keys, role.aspect).await?;

    tokio::pin!(shutdown);
    let description = tokio::select! {
        _ = &mut shutdown => return Ok(()),
        d = wait_for_world(&session, &keys) => d,
    };
    let mut main = MainLoop {
        shared: &shared,
        role,
        extra_roles,
        selection,
        description,
        claims: Claims::new(&node_id, role.aspect),
        inputs: BTreeMap::new(),
        folders: HashMap::new(),
        static_tf: StaticTf::new(keys.ros("/tf_static")),
        latched: Latched::default(),
        states: StateStream::new(full_states),
        inputs_of: InputsOf::default(),
    };
    main.claims.load(&session, &keys, &mut claim_events).await;
    main.rebuild(false).await;
    // Join the barrier only now, ready to serve what it claimed with every
    // input subscribed: a command sent at the first step a participant sees
    // is never lost.
    if let Some(tap) = shared.recording.get() {
        let within = if recorded { RECORDER_EXPECTED_WITHIN } else { RECORDERS_REACHED_WITHIN };
        tap.reach_present_recorders(&keys, within, recorded).await;
    }
    let lockstep = LockstepReporter::join(&session, &keys, &node_id).await?;
    let _ = shared.lockstep.set(lockstep);
    shared.lock().core.release();

    loop {
        let next = tokio::select! {
            biased;
            _ = &mut shutdown => break,
            Some(claim) = claim_events.recv() => {
                if main.claims.seen(&claim.instance, &claim.node, claim.alive) {
                    shared.gate.open();
                    shared.lock().core.hold();
                    main.rebuild(false).await;
                    shared.lock().core.release();
                }
                continue;
            }
            next = handed.recv() => match next { Some(next) => next, None => break },
        };
        let rework = match next {
            ToLoop::Arrival(arrival) => shared.handle(|core| shared.arrive_at(core, arrival)),
            ToLoop::Handed(arrival) => {
                let rework = shared.handle(|core| shared.arrive_at(core, arrival));
                shared.handover.answered();
                rework
            }
            ToLoop::Send(reply) => {
                let rework = shared.send(&mut shared.lock(), reply);
                shared.handover.answered();
                rework
            }
            ToLoop::Rework(rework) => Some(rework),
            ToLoop::ThinFlowing(stride) => {
                main.states.flowing(stride);
                None
            }
        };
        if let Some(rework) = rework {
            main.rework(rework).await;
        }
    }
    if let Some(tap) = shared.recording.get() {
        tap.flush();
    }
    Ok(())
}

/// What the main loop is given by the receiving threads.
enum ToLoop {
    /// An arrival, for a plugin answering on the main loop.
    Arrival(Arrival),
    /// An arrival the receiving thread could not handle (see
    /// [`Core::admits_here`] and [`Handover`]).
    Handed(Arrival),
    /// What a receiving thread answered and left in the outbox for the
    /// main loop to send (see [`Handover`]).
    Send(Reply),
    /// Work the receiving thread found and only the main loop can do.
    Rework(Rework),
    /// The first state of the thinned stream of this stride arrived.
    ThinFlowing(u64),
}

/// What the receiving threads and the main loop share.
struct Shared<P> {
    session: zenoh::Session,
    keys: Keys,
    node: String,
    answering: Answering,
    locked: Mutex<Locked<P>>,
    /// Arrivals handed to the main loop and not answered yet.
    handover: Handover,
    to_loop: UnboundedSender<ToLoop>,
    gate: StateGate,
    /// Set once the node has joined the barrier (nothing is answered before).
    lockstep: OnceLock<LockstepReporter>,
    /// The recorders' tap, set before anything arrives.
    recording: OnceLock<RecorderTap>,
    /// Whether nothing the node publishes is any instance's input, so that
    /// its lockstep work commands no robot (see
    /// [`flotilla_plugins::registry::commands_nothing`]); said
    /// with every report, and worked out again at every rebuild.
    commands_nothing: AtomicBool,
}

/// The core and its publishers, used under one lock so that messages
/// leave in the order they were made.
struct Locked<P> {
    core: Core<P>,
    publishers: Publishers,
}

impl<P: NodePlugin> Shared<P> {
    /// What `plugin`, served as node `node`, shares between the receiving
    /// threads and the main loop; and the main loop's end of `to_loop`.
    fn new(
        session: &zenoh::Session,
        keys: &Keys,
        node: &str,
        plugin: P,
    ) -> (Arc<Shared<P>>, UnboundedReceiver<ToLoop>) {
        let role = plugin.role();
        // A plugin's roles are constants of its code: a mismatch is a bug.
        for other in plugin.also_serves() {
            assert!(
                other.aspect == role.aspect && other.binary == role.binary,
                "{other:?} is not served as {role:?} is: one binary, one claim aspect"
            );
        }
        let (to_loop, handed) = unbounded_channel();
        let shared = Arc::new(Shared {
            session: session.clone(),
            keys: keys.clone(),
            node: node.to_string(),
            answering: plugin.answering(),
            locked: Mutex::new(Locked { core: Core::new(plugin), publishers: Publishers::default() }),
            handover: Handover::default(),
            to_loop,
            gate: StateGate::default(),
            lockstep: OnceLock::new(),
            recording: OnceLock::new(),
            commands_nothing: AtomicBool::new(false),
        });
        (shared, handed)
    }

    fn lock(&self) -> MutexGuard<'_, Locked<P>> {
        // A panic while holding the lock would be a bug; keep serving regardless.
        self.locked.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// An arrival from a subscriber: handled here, or handed to the main
    /// loop when the plugin answers there or the arrival must wait its turn.
    fn arrive(&self, arrival: Arrival) {
        if matches!(arrival, Arrival::World(_)) {
            // What was quiet before the link was cut is due again.
            self.gate.open();
        }
        if self.answering == Answering::OnMainLoop {
            let _ = self.to_loop.send(ToLoop::Arrival(arrival));
            return;
        }
        // Answered here only if nothing handed earlier waits on the main
        // loop and the lock is free: this thread must not wait (see
        // `Handover`).
        if !self.handover.queued() {
            if let Some(mut locked) = self.try_lock().filter(|locked| locked.core.admits_here()) {
                let reply = self.arrive_at(&mut locked.core, arrival);
                if !self.may_send_here(&locked.core) {
                    // The main loop sends them, and the report after them.
                    self.handover.hand();
                    let _ = self.to_loop.send(ToLoop::Send(reply));
                    return;
                }
                if let Some(rework) = self.send(&mut locked, reply) {
                    let _ = self.to_loop.send(ToLoop::Rework(rework));
                }
                return;
            }
        }
        self.handover.hand();
        let _ = self.to_loop.send(ToLoop::Handed(arrival));
    }

    /// The lock if no one holds it.
    fn try_lock(&self) -> Option<MutexGuard<'_, Locked<P>>> {
        match self.locked.try_lock() {
            Ok(locked) => Some(locked),
            // A panic while holding the lock would be a bug; keep serving regardless.
            Err(TryLockError::Poisoned(e)) => Some(e.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        }
    }

    /// Hands `arrival` to the core, a forwarded input's message going to
    /// the recorders' tap first.
    fn arrive_at(&self, core: &mut Core<P>, arrival: Arrival) -> Reply {
        if let (Arrival::Input { forwarded: Some(key), payload, .. }, Some(tap)) = (&arrival, self.recording.get()) {
            tap.forward(core.outbox.moment_ns(), key, payload);
        }
        core.arrive(arrival)
    }

    /// Whether the receiving thread may send what `core`'s answer made
    /// (see [`may_send_here`]); a moment that only joins the recorders'
    /// batch sends nothing.
    fn may_send_here(&self, core: &Core<P>) -> bool {
        let (outbox, tap) = (&core.outbox, self.recording.get());
        let items = outbox.items();
        if tap.is_some_and(|tap| tap.only_joins_batch(outbox.moment_ns(), items, |key| outbox.subscribed(key))) {
            return true;
        }
        let made_messages = !items.is_empty() || tap.is_some_and(RecorderTap::has_open_moment);
        may_send_here(output_delivery(core.clock()), made_messages, tap.is_some_and(RecorderTap::listens))
    }

    /// Runs `answer` on the core and sends what it produced.
    fn handle(&self, answer: impl FnOnce(&mut Core<P>) -> Reply) -> Option<Rework> {
        let mut locked = self.lock();
        let reply = answer(&mut locked.core);
        self.send(&mut locked, reply)
    }

    /// Sends what the plugin put in its outbox and what `reply` asks for;
    /// returns the work only the main loop can do.
    fn send(&self, locked: &mut Locked<P>, reply: Reply) -> Option<Rework> {
        let Locked { core, publishers } = locked;
        let (urgent, delivery) = (core.urgent(), output_delivery(core.clock()));
        publishers.publish(&self.session, &mut core.outbox, delivery, self.recording.get());
        if let Some((step, commands)) = core.outbox.take_actuation() {
            let actuation = Actuation { node: self.node.clone(), step, commands };
            let bytes = encode_actuation(&actuation, core.outbox.take_promise());
            publishers.actuate(&self.session, &self.keys, &self.node, bytes, urgent);
            core.outbox.recycle(actuation.commands);
        }
        if let (Some(step), Some(lockstep)) = (reply.report, self.lockstep.get()) {
            lockstep.report_now(step, urgent, self.commands_nothing.load(Ordering::Relaxed));
        }
        if let Some(step) = reply.quiet_until {
            self.gate.quiet_until(step, core.revision);
        }
        if reply.rework.is_some() {
            self.gate.open();
        }
        reply.rework
    }
}

/// Subscribes to every world state (the subscriber returned first) and to
/// the world's events, status and liveliness, each arrival going to
/// [`Shared::arrive`].
#[allow(clippy::type_complexity)]
async fn subscribe_world<P: NodePlugin>(
    shared: &Arc<Shared<P>>,
) -> Result<(zenoh::pubsub::Subscriber<()>, Vec<zenoh::pubsub::Subscriber<()>>)> {
    let (session, keys) = (&shared.session, &shared.keys);
    let all = |_: &[u8]| true;
    let full = subscribe_states(shared, keys.world_state(), None).await?;
    let revision = |e: WorldEvent| Arrival::Revision(e.revision);
    let others = vec![
        on_message(session, keys.world_events(), all, arriving(shared, revision)).await?,
        // The clock mode, for how urgently to send.
        on_message(session, keys.status(), all, arriving(shared, |s: WorldStatus| Arrival::Clock(s.clock))).await?,
        on_world_presence(session, keys, arriving(shared, Arrival::World)).await?,
    ];
    Ok((full, others))
}

/// Subscribes to world states on `key` (every state, or a thinned stream
/// whose first arrival sets `flowing` and tells the main loop). States
/// the node does not need are dropped before their bodies are decoded (see
/// `StateGate`); one whose head cannot be read goes on, to be counted as
/// bad.
async fn subscribe_states<P: NodePlugin>(
    shared: &Arc<Shared<P>>,
    key: String,
    flowing: Option<(u64, Arc<std::sync::atomic::AtomicBool>)>,
) -> Result<zenoh::pubsub::Subscriber<()>> {
    let admit = {
        let shared = shared.clone();
        move |bytes: &[u8]| decode::<WorldStateHead>(bytes).map_or(true, |h| shared.gate.admits(h.revision, h.step))
    };
    let arrivals = shared.clone();
    on_message(&shared.session, key, admit, move |state: flotilla_wire::world_to_nodes::WorldState| {
        if let Some((stride, flowing)) = &flowing {
            if !flowing.swap(true, Ordering::AcqRel) {
                let _ = arrivals.to_loop.send(ToLoop::ThinFlowing(*stride));
            }
        }
        arrivals.arrive(Arrival::State(state));
    })
    .await
}

/// A subscriber's callback: each message, as an arrival.
fn arriving<P: NodePlugin, T: 'static>(
    shared: &Arc<Shared<P>>,
    wrap: fn(T) -> Arrival,
) -> impl Fn(T) + Send + Sync + 'static {
    let shared = shared.clone();
    move |message| shared.arrive(wrap(message))
}

/// What only the main loop keeps: the description, claims, the inputs'
/// subscriptions and `tf_static`.
struct MainLoop<'a, P> {
    shared: &'a Arc<Shared<P>>,
    role: &'static Role,
    /// The plugin's further roles (same aspect).
    extra_roles: &'static [Role],
    selection: Selection,
    description: WorldDescription,
    claims: Claims,
    inputs: BTreeMap<Input, Subscribed>,
    /// Per folder of announced outputs, a publisher on `<folder>/*` that
    /// only watches for subscribers.
    folders: HashMap<String, zenoh::pubsub::Publisher<'static>>,
    static_tf: StaticTf,
    /// The plugin's latched messages.
    latched: Latched,
    /// Every world state, or every n-th.
    states: StateStream,
    /// The topics the description's instances subscribe to.
    inputs_of: InputsOf,
}

/// The topics a description's instances subscribe to, and the keys of
/// those forwarded to recorders, worked out once per revision: claims come
/// and go far more often (a fleet's at start).
#[derive(Default)]
struct InputsOf {
    revision: Option<u64>,
    topics: std::collections::BTreeSet<String>,
    /// The keys of [`forwarded_topics`].
    forwarded: std::collections::BTreeSet<String>,
}

impl InputsOf {
    fn get(&mut self, description: &WorldDescription, keys: &Keys) -> &Self {
        if self.revision != Some(description.revision) {
            self.topics = registry::inputs_of(description);
            self.forwarded = forwarded_topics(description).iter().map(|name| keys.ros(name)).collect();
            self.revision = Some(description.revision);
        }
        self
    }
}

impl<P: NodePlugin> MainLoop<'_, P> {
    /// Fetches the description and rebuilds from it (afresh for a new
    /// world or a reset one), then answers the state that revealed the change and lets
    /// arrivals through again.
    async fn rework(&mut self, Rework { afresh, then }: Rework) {
        let shared = self.shared;
        match fetch_description(&shared.session, &shared.keys, FETCH_TIMEOUT).await {
            Ok(description) => {
                // A reset world starts its nodes' plugins as its file does.
                let reset = description.resets != self.description.resets;
                self.description = description;
                self.rebuild(afresh || reset).await;
            }
            Err(e) if afresh => {
                tracing::warn!("cannot resynchronise yet: {e}");
                let mut locked = shared.lock();
                locked.core.resync_failed();
                locked.core.release();
                return;
            }
            // Answered with the instances as they are; the next state of
            // the new revision tries again.
            Err(e) => tracing::warn!("cannot refresh the world description: {e}"),
        }
        if let Some(state) = then {
            shared.handle(|core| core.answer(&state));
        }
        shared.lock().core.release();
    }

    /// Claims what the node may of its selection, then rebuilds the plugin
    /// for the held instances (afresh: forgetting everything first),
    /// subscribes the inputs it asks for and republishes its static
    /// transforms if they changed. Arrivals are held by the caller.
    async fn rebuild(&mut self, afresh: bool) {
        let shared = self.shared;
        let wanted: Vec<String> = std::iter::once(self.role)
            .chain(self.extra_roles)
            .flat_map(|role| self.selection.instances(&self.description, role))
            .collect();
        self.claims.sync(&shared.session, &shared.keys, &wanted).await;
        // After the claims: what the instance's last server kept is there.
        let memory = fetch_memory(&shared.session, &shared.keys, FETCH_TIMEOUT).await.unwrap_or_else(|e| {
            tracing::warn!("cannot read what the world keeps for nodes: {e}");
            BTreeMap::new()
        });
        let claims = &self.claims;
        let held = |model: &str, plugin: &str| claims.holds(&claims.instance(model, plugin));
        let mut rebuild = Rebuild::new(&self.description, &shared.keys, &held).with_memory(&memory);
        // Worked out before taking the lock: it reads every served entry.
        let roles: Vec<&Role> = std::iter::once(self.role).chain(self.extra_roles).collect();
        let inputs = &self.inputs_of.get(&self.description, &shared.keys).topics;
        let silent = registry::commands_nothing(&self.description, inputs, &roles, &held);
        let (static_transforms, latched) = {
            let mut locked = shared.lock();
            if afresh {
                locked.core.reset();
            }
            locked.core.plugin.rebuild(&mut rebuild);
            locked.core.revision = self.description.revision;
            if let Some(tap) = shared.recording.get() {
                tap.follow(&self.description.channels, &shared.keys);
            }
            shared.commands_nothing.store(silent, Ordering::Relaxed);
            (locked.core.plugin.static_transforms(), locked.core.plugin.latched())
        };
        let (inputs, outputs) = rebuild.into_wiring();
        self.subscribe(inputs).await;
        self.watch_folders(&outputs).await;
        self.static_tf.update(&shared.session, static_transforms).await;
        self.latched.update(&shared.session, latched).await;
        let stride = shared.lock().core.plugin.state_stride(self.description.step_ns).max(1);
        self.follow_stride(stride).await;
        shared.gate.open();
    }

    /// Keeps the subscriptions of inputs still wanted, declares the new
    /// ones and drops (undeclares) the rest; forwards to recorders those
    /// that nothing in the simulation publishes (see [`Subscribed`]).
    async fn subscribe(&mut self, inputs: Vec<Input>) {
        let shared = self.shared;
        let forwarded = &self.inputs_of.get(&self.description, &shared.keys).forwarded;
        let mut kept = BTreeMap::new();
        for input in inputs {
            let forward = forwarded.contains(&input.key);
            let subscribed = match self.inputs.remove(&input) {
                Some(subscribed) => Ok(subscribed),
                None => subscribe_input(shared, &input).await,
            };
            match subscribed {
                Ok(mut subscribed) => {
                    let (session, keys, node) = (&shared.session, &shared.keys, &shared.node);
                    subscribed.forwarding.set(session, keys, node, &input.key, forward).await;
                    kept.insert(input, subscribed);
                }
                Err(e) => tracing::error!("cannot serve {}: {e}", input.tag),
            }
        }
        self.inputs = kept;
    }
}

impl<P: NodePlugin> MainLoop<'_, P> {
    /// Receives every `stride`-th world state (1: every state), switching
    /// streams without a gap (see [`StateStream`]).
    async fn follow_stride(&mut self, stride: u64) {
        if stride == self.states.stride() {
            return;
        }
        let shared = self.shared;
        if !self.states.has_full() {
            match subscribe_states(shared, shared.keys.world_state(), None).await {
                Ok(full) => self.states.set_full(full),
                Err(e) => {
                    tracing::error!("cannot subscribe to the world's states again: {e}");
                    return;
                }
            }
        }
        if stride == 1 {
            self.states.drop_thin();
            return;
        }
        let flowing = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let key = shared.keys.world_state_every(stride);
        let subscriber = match subscribe_states(shared, key, Some((stride, flowing.clone()))).await {
            Ok(subscriber) => subscriber,
            Err(e) => {
                tracing::warn!("receiving every world state: {e}");
                self.states.drop_thin();
                return;
            }
        };
        let token_key = shared.keys.state_interest(stride, &shared.node);
        match shared.session.liveliness().declare_token(&token_key).await {
            Ok(token) => self.states.set_thin(stride, subscriber, token, flowing),
            Err(e) => {
                tracing::warn!("receiving every world state: cannot declare {token_key}: {e}");
                self.states.drop_thin();
            }
        }
    }

    /// Watches the folders of the announced outputs for subscribers (see
    /// [`Outbox::wants`](super::outbox::Outbox::wants)), dropping the
    /// watches of folders no longer used.
    async fn watch_folders(&mut self, outputs: &[String]) {
        let wanted: std::collections::BTreeSet<&str> = outputs.iter().filter_map(|key| folder_of(key)).collect();
        self.folders.retain(|folder, _| wanted.contains(folder.as_str()));
        self.shared.lock().core.outbox.retain_folders(&|folder| wanted.contains(folder));
        for folder in wanted {
            if self.folders.contains_key(folder) {
                continue;
            }
            let pattern = format!("{folder}/*");
            let publisher = match self.shared.session.declare_publisher(pattern.clone()).await {
                Ok(publisher) => publisher,
                Err(e) => {
                    // Unknown: the keys are each declared at their first message.
                    tracing::warn!("cannot watch for subscribers on {pattern}: {e}");
                    continue;
                }
            };
            let flag = self.shared.lock().core.outbox.folder_flag(folder);
            let watching = flag.clone();
            // Called at once (in `await`) when a subscriber already matches.
            let listener = publisher
                .matching_listener()
                .callback(move |status| watching.set(status.matching()))
                .background()
                .await;
            if let Err(e) = listener {
                tracing::warn!("cannot watch for subscribers on {pattern}: {e}");
                flag.set(true);
            }
            self.folders.insert(folder.to_string(), publisher);
        }
    }
}

/// An input's subscription, and whether its messages are forwarded to
/// recorders (see [`crate::recording::forwarding`]).
struct Subscribed {
    /// Dropped first: the node no longer receives the key when its token
    /// goes, so that a recorder that then subscribes to the key itself
    /// cannot receive a message the node forwarded.
    _subscriber: zenoh::pubsub::Subscriber<()>,
    forwarding: InputForwarding,
}

async fn subscribe_input<P: NodePlugin>(shared: &Arc<Shared<P>>, input: &Input) -> Result<Subscribed> {
    let tag: Arc<str> = input.tag.as_str().into();
    let key: Arc<str> = input.key.as_str().into();
    let bad = Arc::new(BadMessages::new(input.key.clone()));
    let forwarding = InputForwarding::default();
    let (arrivals, forwarded) = (shared.clone(), forwarding.flag());
    let subscriber = shared
        .session
        .declare_subscriber(input.key.clone())
        .callback(move |sample| {
            let payload = sample.payload().to_bytes().into_owned();
            let forwarded = forwarded.load(Ordering::Relaxed).then(|| key.clone());
            arrivals.arrive(Arrival::Input { tag: tag.clone(), payload, bad: bad.clone(), forwarded });
        })
        .await
        .map_err(Error::zenoh("subscribe to", input.key.clone()))?;
    Ok(Subscribed { _subscriber: subscriber, forwarding })
}
