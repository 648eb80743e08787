//! Scaffolding every drive and sensor node shares: its id and liveliness
//! token, and the world's state and events delivered in order to one loop
//! (or handled where they arrive).

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

use crate::codec::{decode, WireMessage};
use crate::health::BadMessages;

/// A fresh node id: `<kind>-<8 hex digits>`.
pub fn node_id(kind: &str) -> String {
    format!("{kind}-{}", &uuid::Uuid::new_v4().simple().to_string()[..8])
}

/// Subscribes to an internal key, decoding each sample and forwarding it
/// through `wrap` to a node's input channel; bad samples are counted.
pub async fn forward<T, I>(
    session: &zenoh::Session,
    key: String,
    tx: UnboundedSender<I>,
    wrap: fn(T) -> I,
) -> Result<zenoh::pubsub::Subscriber<()>, String>
where
    T: WireMessage + Send + 'static,
    I: Send + 'static,
{
    forward_if(session, key, tx, wrap, |_| true).await
}

/// [`forward`], for the samples whose payload `wanted` accepts (checked
/// before decoding, so that a node can drop what it does not need cheaply;
/// it should accept what it cannot read, which is then counted as bad).
pub async fn forward_if<T, I>(
    session: &zenoh::Session,
    key: String,
    tx: UnboundedSender<I>,
    wrap: fn(T) -> I,
    wanted: impl Fn(&[u8]) -> bool + Send + Sync + 'static,
) -> Result<zenoh::pubsub::Subscriber<()>, String>
where
    T: WireMessage + Send + 'static,
    I: Send + 'static,
{
    on_message(session, key, wanted, move |message| {
        let _ = tx.send(wrap(message));
    })
    .await
}

/// Subscribes to an internal key and calls `handle` with each decoded
/// message that `wanted` accepts (see [`forward_if`]), on the thread that
/// received it: for answers on a step's critical path, which a hand-over
/// to another thread would delay. Bad samples are counted.
pub async fn on_message<T>(
    session: &zenoh::Session,
    key: String,
    wanted: impl Fn(&[u8]) -> bool + Send + Sync + 'static,
    handle: impl Fn(T) + Send + Sync + 'static,
) -> Result<zenoh::pubsub::Subscriber<()>, String>
where
    T: WireMessage + Send + 'static,
{
    let bad = BadMessages::new(key.clone());
    session
        .declare_subscriber(&key)
        .callback(move |sample| {
            let bytes = sample.payload().to_bytes();
            if !wanted(&bytes) {
                return;
            }
            match decode::<T>(&bytes) {
                Ok(message) => handle(message),
                Err(e) => bad.record(&e),
            }
        })
        .await
        .map_err(|e| format!("cannot subscribe to {key}: {e}"))
}

/// The world appearing or disappearing, as a node sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorldPresence {
    /// A world process (with this node id) is up.
    Up(String),
    /// That world process is gone.
    Down(String),
}

/// Subscribes to the liveliness tokens matching `key_expr` (those already
/// declared first), calling `on_change(key, alive)` for each change.
pub async fn watch_tokens(
    session: &zenoh::Session,
    key_expr: String,
    on_change: impl Fn(&str, bool) + Send + Sync + 'static,
) -> Result<zenoh::pubsub::Subscriber<()>, String> {
    session
        .liveliness()
        .declare_subscriber(&key_expr)
        .history(true)
        .callback(move |sample| on_change(sample.key_expr().as_str(), sample.kind() == zenoh::sample::SampleKind::Put))
        .await
        .map_err(|e| format!("cannot watch the tokens on {key_expr}: {e}"))
}

/// Watches the world's liveliness token, forwarding presence changes.
pub async fn watch_world<I: Send + 'static>(
    session: &zenoh::Session,
    keys: &crate::Keys,
    tx: UnboundedSender<I>,
    wrap: fn(WorldPresence) -> I,
) -> Result<zenoh::pubsub::Subscriber<()>, String> {
    on_world_presence(session, keys, move |presence| {
        let _ = tx.send(wrap(presence));
    })
    .await
}

/// Watches the world's liveliness token, calling `handle` with each
/// presence change on the thread that received it.
pub async fn on_world_presence(
    session: &zenoh::Session,
    keys: &crate::Keys,
    handle: impl Fn(WorldPresence) + Send + Sync + 'static,
) -> Result<zenoh::pubsub::Subscriber<()>, String> {
    let prefix = keys.node_token("");
    watch_tokens(session, keys.world_tokens(), move |key, alive| {
        let id = key.strip_prefix(&prefix).unwrap_or_default().to_string();
        handle(if alive { WorldPresence::Up(id) } else { WorldPresence::Down(id) });
    })
    .await
}

/// Which models a node serves: `--models GLOB` and `--shard i/n`.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    models: Option<globset::GlobMatcher>,
    shard: Option<(u64, u64)>,
}

impl Selection {
    /// From the command-line values (`--models`, `--shard i/n`).
    pub fn new(models: Option<&str>, shard: Option<&str>) -> Result<Selection, String> {
        let models = models
            .map(|g| globset::Glob::new(g).map(|g| g.compile_matcher()).map_err(|e| format!("--models {g:?}: {e}")))
            .transpose()?;
        let shard = shard
            .map(|text| {
                let (i, n) =
                    text.split_once('/').ok_or_else(|| format!("--shard must be i/n, e.g. 0/2 (got {text:?})"))?;
                let (i, n): (u64, u64) = (
                    i.trim().parse().map_err(|_| format!("--shard {text:?}: {i:?} is not a number"))?,
                    n.trim().parse().map_err(|_| format!("--shard {text:?}: {n:?} is not a number"))?,
                );
                if n == 0 || i >= n {
                    return Err(format!("--shard {text:?}: need 0 ≤ i < n"));
                }
                Ok((i, n))
            })
            .transpose()?;
        Ok(Selection { models, shard })
    }

    /// Whether this node serves the model. Shards split models by a stable
    /// hash of their name, so every node agrees without talking.
    pub fn serves(&self, model: &str) -> bool {
        let by_name = self.models.as_ref().is_none_or(|glob| glob.is_match(model));
        let by_shard = self.shard.is_none_or(|(i, n)| crate::seed::plugin_seed(0, model, "") % n == i);
        by_name && by_shard
    }
}

#[cfg(test)]
mod tests {
    use super::Selection;

    #[test]
    fn shards_partition_the_models() {
        let names: Vec<String> = (0..50).map(|i| format!("robot{i}")).collect();
        let shards: Vec<Selection> = (0..3).map(|i| Selection::new(None, Some(&format!("{i}/3"))).unwrap()).collect();
        for name in &names {
            assert_eq!(shards.iter().filter(|s| s.serves(name)).count(), 1, "{name} is served exactly once");
        }
        assert!(shards.iter().all(|s| names.iter().any(|n| s.serves(n))), "no shard is empty");
    }

    #[test]
    fn globs_and_bad_shards() {
        let s = Selection::new(Some("robot[12]"), None).unwrap();
        assert!(s.serves("robot1") && !s.serves("robot3"));
        for bad in ["2/2", "1", "a/b", "0/0"] {
            assert!(Selection::new(None, Some(bad)).is_err(), "{bad}");
        }
    }
}

/// Who claims which plugin instances, as one node sees it (DESIGN.md §4).
///
/// An instance id is `<model>/<plugin>/<aspect>`, the aspect being the kind of
/// node that serves it (`drive`, `odom`, `laser`): a DiffDrive has a drive and
/// an odometry side. A node claims an instance only when no other node does;
/// two nodes that claimed at the same moment settle it by id (the lower one
/// keeps it). A node that stands by takes over when the claim disappears.
#[derive(Debug, Clone, Default)]
pub struct ClaimBook {
    others: std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
}

impl ClaimBook {
    /// Another node's claim appeared (`alive`) or disappeared.
    pub fn seen(&mut self, instance: &str, node: &str, alive: bool) {
        let nodes = self.others.entry(instance.to_string()).or_default();
        if alive {
            nodes.insert(node.to_string());
        } else {
            nodes.remove(node);
        }
    }

    /// The nodes (other than us) claiming an instance.
    pub fn claimants(&self, instance: &str) -> Vec<String> {
        self.others.get(instance).map(|n| n.iter().cloned().collect()).unwrap_or_default()
    }

    /// Whether `me` may claim an instance nobody else claims.
    pub fn may_claim(&self, instance: &str, me: &str) -> bool {
        self.others.get(instance).is_none_or(|n| n.iter().all(|other| other == me))
    }

    /// Whether `me`, holding an instance, must give it up to a lower id.
    pub fn must_yield(&self, instance: &str, me: &str) -> bool {
        self.others.get(instance).is_some_and(|n| n.iter().any(|other| other.as_str() < me))
    }
}

/// Splits a claim key's tail `<model>/<plugin>/<aspect>/<node>` into
/// (instance id, node).
pub fn parse_claim(tail: &str) -> Option<(String, String)> {
    let (instance, node) = tail.rsplit_once('/')?;
    (instance.split('/').count() == 3).then(|| (instance.to_string(), node.to_string()))
}

/// The (instance id, node) of a full claim key of the simulation.
pub fn claim_of(keys: &crate::Keys, key: &str) -> Option<(String, String)> {
    parse_claim(key.strip_prefix(&keys.claims_prefix())?.strip_prefix('/')?)
}

/// A node's own claims: the book of others' claims plus the tokens it holds.
pub struct Claims {
    me: String,
    aspect: String,
    book: ClaimBook,
    held: std::collections::BTreeMap<String, zenoh::liveliness::LivelinessToken>,
    waiting: std::collections::BTreeSet<String>,
}

impl Claims {
    /// Claims of node `me`, serving the `aspect` of its plugin instances.
    pub fn new(me: &str, aspect: &str) -> Claims {
        Claims {
            me: me.to_string(),
            aspect: aspect.to_string(),
            book: ClaimBook::default(),
            held: Default::default(),
            waiting: Default::default(),
        }
    }

    /// The instance id of a model's plugin for this node's aspect.
    pub fn instance(&self, model: &str, plugin: &str) -> String {
        format!("{model}/{plugin}/{}", self.aspect)
    }

    /// Records another node's claim (events from [`watch_claims`]). Returns
    /// whether it can change what this node holds: a claim of another node
    /// on this node's aspect. Our own claims and other aspects' (a thousand
    /// robots' drive and odometry claims seen by a laser node) cannot, and
    /// need no rebuild.
    pub fn seen(&mut self, instance: &str, node: &str, alive: bool) -> bool {
        let relevant = node != self.me && instance.rsplit('/').next() == Some(self.aspect.as_str());
        if relevant {
            self.book.seen(instance, node, alive);
        }
        relevant
    }

    /// Loads every current claim (call before the first [`Claims::sync`]),
    /// `watched` being the events of this node's [`watch_claims`], declared
    /// before. Zenoh passes each token to a session once: when the
    /// watcher's first answer (its history) is still on its way as the query
    /// is made, the claims in it go to the watcher only, and the query
    /// leaves them out (every time, in `a_node_starting_beside_a_claim_stands_by`).
    /// They reach the watcher before the query ends, so they are taken
    /// from `watched` here. Without them a node started beside a serving
    /// one would claim the same instance, and take it over when its id is
    /// the lower.
    pub async fn load(
        &mut self,
        session: &zenoh::Session,
        keys: &crate::Keys,
        watched: &mut UnboundedReceiver<ClaimEvent>,
    ) {
        let all = format!("{}/**", keys.claims_prefix());
        const ATTEMPTS: u32 = 3;
        for attempt in 1..=ATTEMPTS {
            match live_tokens(session, all.clone(), std::time::Duration::from_secs(5)).await {
                Ok(tokens) => {
                    for (instance, node) in tokens.iter().filter_map(|key| claim_of(keys, key)) {
                        self.seen(&instance, &node, true);
                    }
                    break;
                }
                Err(e) if attempt < ATTEMPTS => tracing::warn!("cannot load the current claims yet: {e}"),
                Err(e) => tracing::warn!("cannot load the current claims: {e}; going by the claims seen so far"),
            }
        }
        while let Ok(ClaimEvent { instance, node, alive }) = watched.try_recv() {
            self.seen(&instance, &node, alive);
        }
    }

    /// Claims what it may of `wanted`, yields what it must, releases what is
    /// no longer wanted. Returns whether the held set changed.
    pub async fn sync(&mut self, session: &zenoh::Session, keys: &crate::Keys, wanted: &[String]) -> bool {
        let mut changed = false;
        let wanted_set: std::collections::BTreeSet<&str> = wanted.iter().map(String::as_str).collect();
        let held: Vec<String> = self.held.keys().cloned().collect();
        for instance in held {
            let yield_now = self.book.must_yield(&instance, &self.me);
            if yield_now || !wanted_set.contains(instance.as_str()) {
                if yield_now {
                    tracing::warn!(
                        "{instance} is also claimed by {}; leaving it to them and standing by",
                        self.book.claimants(&instance).join(", ")
                    );
                }
                self.held.remove(&instance);
                changed = true;
            }
        }
        for instance in wanted {
            if self.held.contains_key(instance) {
                continue;
            }
            if !self.book.may_claim(instance, &self.me) {
                if self.waiting.insert(instance.clone()) {
                    tracing::warn!(
                        "{instance} is served by {}; standing by to take over",
                        self.book.claimants(instance).join(", ")
                    );
                }
                continue;
            }
            let token_key = format!("{}/{instance}/{}", keys.claims_prefix(), self.me);
            match session.liveliness().declare_token(&token_key).await {
                Ok(token) => {
                    if self.waiting.remove(instance) {
                        tracing::info!("taking over {instance}");
                    }
                    self.held.insert(instance.clone(), token);
                    changed = true;
                }
                Err(e) => tracing::warn!("cannot claim {instance}: {e}"),
            }
        }
        self.waiting.retain(|i| wanted_set.contains(i.as_str()));
        changed
    }

    /// Whether this node holds (serves) an instance.
    pub fn holds(&self, instance: &str) -> bool {
        self.held.contains_key(instance)
    }
}

/// The keys of every live liveliness token matching `key_expr`, however
/// many. A liveliness query's default handler holds 256 replies, and the
/// replies for tokens the session already knows are delivered inside the
/// `get` call itself: with more than 256 (a thousand robots' claims) the call
/// would block forever on its own full channel. Hence a callback into an
/// unbounded channel, which closes when the query ends. A query that ends by
/// its `timeout` (the router's last word not in by then) is an error: the
/// tokens it found may not be all there are.
pub async fn live_tokens(
    session: &zenoh::Session,
    key_expr: String,
    timeout: std::time::Duration,
) -> Result<Vec<String>, String> {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    session
        .liveliness()
        .get(&key_expr)
        .timeout(timeout)
        .callback(move |reply| {
            let _ = tx.send(match reply.result() {
                Ok(sample) => Ok(sample.key_expr().as_str().to_string()),
                Err(e) => Err(e.payload().try_to_string().map_or_else(|_| "an error".to_string(), |s| s.into_owned())),
            });
        })
        .await
        .map_err(|e| format!("liveliness query {key_expr}: {e}"))?;
    let mut keys = Vec::new();
    while let Some(reply) = rx.recv().await {
        match reply {
            Ok(key) => keys.push(key),
            Err(e) => return Err(format!("liveliness query {key_expr}: {e} after {} tokens", keys.len())),
        }
    }
    Ok(keys)
}

/// Another node's claim on a plugin instance appearing (`alive`) or going.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimEvent {
    /// The instance id, `<model>/<plugin>/<aspect>`.
    pub instance: String,
    /// The claiming node's id.
    pub node: String,
    /// Whether the claim appeared (or went).
    pub alive: bool,
}

/// Watches every claim of the simulation (those already made first). Each
/// change comes on a channel of its own, which [`Claims::load`] drains of
/// the claims seen before it; keep the subscriber as long as the channel.
pub async fn watch_claims(
    session: &zenoh::Session,
    keys: &crate::Keys,
) -> Result<(zenoh::pubsub::Subscriber<()>, UnboundedReceiver<ClaimEvent>), String> {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let own = keys.clone();
    let watcher = watch_tokens(session, format!("{}/**", keys.claims_prefix()), move |key, alive| {
        if let Some((instance, node)) = claim_of(&own, key) {
            let _ = tx.send(ClaimEvent { instance, node, alive });
        }
    })
    .await?;
    Ok((watcher, rx))
}

#[cfg(test)]
mod claim_tests {
    use super::*;

    #[test]
    fn the_first_claim_wins_and_a_simultaneous_one_goes_to_the_lower_id() {
        let mut book = ClaimBook::default();
        assert!(book.may_claim("r/laser/laser", "laser-b"));
        book.seen("r/laser/laser", "laser-a", true);
        assert!(!book.may_claim("r/laser/laser", "laser-b"), "a holds it: b stands by");
        assert!(book.must_yield("r/laser/laser", "laser-b"), "had b claimed at once, it yields to a");
        assert!(!book.must_yield("r/laser/laser", "laser-0"), "a lower id keeps it");
        book.seen("r/laser/laser", "laser-a", false);
        assert!(book.may_claim("r/laser/laser", "laser-b"), "a is gone: b takes over");
    }

    #[test]
    fn only_other_nodes_claims_on_our_aspect_matter() {
        let mut claims = Claims::new("laser-b", "laser");
        assert!(claims.seen("r/laser/laser", "laser-a", true), "another laser node: may change what we hold");
        assert!(!claims.seen("r/drive/odom", "odom-a", true), "another aspect: no rebuild");
        assert!(!claims.seen("r/laser/laser", "laser-b", true), "our own claim echoed back");
        assert!(!claims.holds("r/laser/laser"));
    }

    #[test]
    fn claim_keys_parse() {
        assert_eq!(parse_claim("robot1/drive/odom/odom-1a2b"), Some(("robot1/drive/odom".into(), "odom-1a2b".into())));
        assert_eq!(parse_claim("robot1/drive"), None);
        let keys = crate::Keys::new("s");
        assert_eq!(
            claim_of(&keys, "flotilla/s/claims/r/laser/laser/laser-1"),
            Some(("r/laser/laser".into(), "laser-1".into()))
        );
        assert_eq!(claim_of(&keys, "flotilla/other/claims/r/laser/laser/laser-1"), None);
    }
}

/// What a node should do with a world state it received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateVerdict {
    /// Already handled (the world re-published it): ignore.
    Duplicate,
    /// Handle it; with `resync`, first rebuild everything from a fresh
    /// description, because a new world process is up.
    Handle {
        /// A new world: refetch the description and start over.
        resync: bool,
    },
}

/// Follows the world process a node depends on: notices when it goes, when a
/// new one comes (a different id, or time going backwards) and re-published
/// states.
#[derive(Debug, Default)]
pub struct WorldTracker {
    world_id: Option<String>,
    last_step: Option<u64>,
    resync: bool,
}

impl WorldTracker {
    /// The world's liveliness token appeared or disappeared. True when the
    /// world that came up is the one already known: its link to this node
    /// was cut and is back, and what was sent while it was down (a lockstep
    /// report, say) may be lost.
    pub fn presence(&mut self, presence: &WorldPresence) -> bool {
        match presence {
            WorldPresence::Down(id) => {
                tracing::warn!("lost the world ({id}); keeping on, waiting for it to come back");
                false
            }
            WorldPresence::Up(id) => {
                let known = self.world_id.as_ref();
                let back = known == Some(id);
                if known.is_some_and(|known| known != id) {
                    tracing::info!("a new world is up ({id}); resynchronising");
                    self.resync = true;
                }
                self.world_id = Some(id.clone());
                back
            }
        }
    }

    /// A state of step `step` arrived.
    pub fn state(&mut self, step: u64) -> StateVerdict {
        if self.last_step == Some(step) {
            return StateVerdict::Duplicate;
        }
        // Time going backwards also means a new world.
        self.resync |= self.last_step.is_some_and(|last| step < last);
        self.last_step = Some(step);
        StateVerdict::Handle { resync: std::mem::take(&mut self.resync) }
    }

    /// Resynchronising failed (no description yet): try again next state.
    pub fn resync_failed(&mut self) {
        self.resync = true;
    }
}

#[cfg(test)]
mod tracker_tests {
    use super::*;

    #[test]
    fn duplicates_new_worlds_and_time_going_backwards() {
        let mut t = WorldTracker::default();
        assert!(!t.presence(&WorldPresence::Up("world-a".into())), "the first world");
        assert_eq!(t.state(0), StateVerdict::Handle { resync: false });
        assert_eq!(t.state(0), StateVerdict::Duplicate);
        assert_eq!(t.state(1), StateVerdict::Handle { resync: false });
        assert!(!t.presence(&WorldPresence::Down("world-a".into())));
        assert!(t.presence(&WorldPresence::Up("world-a".into())), "the same world, back after a cut link");
        assert_eq!(t.state(2), StateVerdict::Handle { resync: false });
        t.presence(&WorldPresence::Down("world-a".into()));
        assert!(!t.presence(&WorldPresence::Up("world-b".into())), "another world");
        assert_eq!(t.state(3), StateVerdict::Handle { resync: true }, "a new world id");
        assert_eq!(t.state(4), StateVerdict::Handle { resync: false });
        assert_eq!(t.state(0), StateVerdict::Handle { resync: true }, "time went backwards");
        t.resync_failed();
        assert_eq!(t.state(1), StateVerdict::Handle { resync: true }, "retried");
    }
}
