//! Witnesses: each node says which worlds it sees, so that a world can
//! tell whether it is the one cut off (docs/checkpoints.md, "Network
//! partitions").
//!
//! A standby world that loses the running world's liveliness token cannot
//! tell on its own whether that world crashed or only its own link to it
//! was cut; a running world that loses its standby cannot tell whether it
//! is itself cut off from everyone. The nodes can: every node tells, every
//! [`TELL_EVERY`] on [`Keys::witness`], the ids of the worlds it sees, and
//! a world counts as the nodes' answers their last words heard within
//! [`FRESH_FOR`] ([`Witnesses`]). A standby takes over only when more than
//! half of the nodes it knew answer and none of them still sees the world;
//! a running world that lost its standby steps only while more than half
//! of its nodes answer. Two majorities of one set of nodes share a node, so
//! at most one world steps.
//!
//! The nodes are not asked with a query: Zenoh 1.10 routed a world's
//! queries to the nodes through the other world's router, and while the
//! two worlds' link was cut (before Zenoh's lease closed it) they were
//! lost, so a world that reached all its nodes heard none of them.
//!
//! A world's token alone is not enough to tell: Zenoh 1.10 can withdraw the
//! token of a world from a node connected to both worlds when only the two
//! worlds' link goes (the node hears of the token through the other world
//! too, and the other world's undeclaration wins), while the node still
//! exchanges every message with the world on its own link. So a running
//! world also sends a beacon ([`beacon`], every [`BEACON_EVERY`]) naming
//! its Zenoh session, and a node sees a world whose token is alive *or* to
//! whose session it has a link of its own. A crashed world's link closes at
//! once, as its token goes; a world cut off keeps both until Zenoh's lease
//! expires.
//!
//! Worlds send beacons only once they have seen a standby, and nodes tell
//! only once they have heard a beacon: nobody listens without a standby.
//!
//! An answer also says the terms of the running worlds the node sees (see
//! `flotilla_world::fence`): a world cut off while a standby took over
//! learns of the higher term from the nodes as soon as it reaches them
//! again, even when its own link to the new world does not come back
//! whole (Zenoh 1.10 can lose the declarations of two routers that
//! reconnect, eclipse-zenoh/zenoh#1886).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use flotilla_wire::Keys;

use crate::error::{Error, Result};
use crate::subscribe::watch_tokens;

/// How often a running world sends its beacon.
pub const BEACON_EVERY: Duration = Duration::from_millis(500);

/// How often a node tells which worlds it sees (and looks again at the
/// sessions it has links of its own to).
pub const TELL_EVERY: Duration = Duration::from_millis(100);

/// How long a node's last word counts as its answer: a few of its
/// tellings, so that one lost or late does not make it silent.
pub const FRESH_FOR: Duration = Duration::from_millis(500);

/// A node's witness: tells the worlds it sees; held as long as the node
/// runs.
pub struct Witness {
    _worlds: zenoh::pubsub::Subscriber<()>,
    _beacons: zenoh::pubsub::Subscriber<()>,
    _terms: zenoh::pubsub::Subscriber<()>,
    telling: tokio::task::JoinHandle<()>,
}

impl Drop for Witness {
    fn drop(&mut self) {
        self.telling.abort();
    }
}

/// What a node sees: the worlds whose tokens are alive or to whose
/// sessions it has a link, and the terms of the running worlds whose
/// tokens are alive.
#[derive(Default)]
struct Seen {
    /// The worlds whose tokens are alive.
    tokens: BTreeSet<String>,
    /// Each running world's Zenoh session id, as its beacon says.
    sessions: BTreeMap<String, String>,
    /// The Zenoh sessions this node has a link of its own to.
    linked: BTreeSet<String>,
    terms: BTreeSet<u64>,
}

/// The prefix of an answer's lines that carry a term, beside the lines that
/// carry a world's id (`world-…`).
const TERM_LINE: &str = "term ";

impl Seen {
    /// The worlds seen: by their tokens, or by a link to their sessions.
    fn worlds(&self) -> BTreeSet<&str> {
        let linked = self.sessions.iter().filter(|(_, zid)| self.linked.contains(*zid)).map(|(id, _)| id);
        self.tokens.iter().chain(linked).map(String::as_str).collect()
    }

    /// The answer's payload: a line per world id, then a line `term N` per
    /// term.
    fn payload(&self) -> String {
        let worlds = self.worlds().into_iter().map(str::to_string);
        let terms = self.terms.iter().map(|t| format!("{TERM_LINE}{t}"));
        worlds.chain(terms).collect::<Vec<_>>().join("\n")
    }
}

/// Starts telling, as node `node`, which worlds of `keys`' simulation it
/// sees.
pub async fn declare(session: &zenoh::Session, keys: &Keys, node: &str) -> Result<Witness> {
    let seen: Arc<Mutex<Seen>> = Arc::default();
    let worlds = {
        let (seen, keys) = (seen.clone(), keys.clone());
        watch_tokens(session, keys.world_tokens(), move |key, alive| {
            let Some(id) = keys.parse_node_token(key) else { return };
            let worlds = &mut lock(&seen).tokens;
            if alive {
                worlds.insert(id.to_string());
            } else {
                worlds.remove(id);
            }
        })
        .await?
    };
    let beacons = {
        let (seen, keys) = (seen.clone(), keys.clone());
        let key = keys.world_beacons();
        session
            .declare_subscriber(&key)
            .callback(move |sample| {
                let Some(id) = keys.parse_world_beacon(sample.key_expr().as_str()) else { return };
                let Ok(zid) = sample.payload().try_to_string() else { return };
                lock(&seen).sessions.insert(id.to_string(), zid.into_owned());
            })
            .await
            .map_err(Error::zenoh("listen to the worlds' beacons on", key))?
    };
    let terms = {
        let (seen, keys) = (seen.clone(), keys.clone());
        watch_tokens(session, keys.term_tokens(), move |key, alive| {
            let Some(term) = keys.parse_term(key) else { return };
            let terms = &mut lock(&seen).terms;
            if alive {
                terms.insert(term);
            } else {
                terms.remove(&term);
            }
        })
        .await?
    };
    let key = keys.witness(node);
    let publisher = session
        .declare_publisher(key.clone())
        .congestion_control(zenoh::qos::CongestionControl::Drop)
        .await
        .map_err(Error::zenoh("tell what this node sees on", key))?;
    let telling = tokio::spawn(tell(session.clone(), publisher, seen));
    Ok(Witness { _worlds: worlds, _beacons: beacons, _terms: terms, telling })
}

/// Every [`TELL_EVERY`] once a world's beacon has been heard (a world
/// sends one only beside a standby: without one nobody listens, and a run
/// is what it was without witnesses), brings `seen`'s sessions linked to
/// this node up to date and tells what it sees on `publisher`.
async fn tell(session: zenoh::Session, publisher: zenoh::pubsub::Publisher<'static>, seen: Arc<Mutex<Seen>>) {
    let mut every = tokio::time::interval(TELL_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        every.tick().await;
        if lock(&seen).sessions.is_empty() {
            continue;
        }
        let info = session.info();
        let routers = info.routers_zid().await;
        let peers = info.peers_zid().await;
        let payload = {
            let mut seen = lock(&seen);
            seen.linked = routers.chain(peers).map(|zid| zid.to_string()).collect();
            seen.payload()
        };
        if let Err(e) = publisher.put(payload).await {
            tracing::debug!("cannot tell which worlds this node sees: {e}");
        }
    }
}

/// A running world's beacon, sent as long as it is held.
pub struct Beacon {
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Beacon {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Starts sending, every [`BEACON_EVERY`], that world `world` of `keys`'
/// simulation is `session`, so that a node linked to that session sees the
/// world even when Zenoh withdrew its token (see the module's comment).
pub async fn beacon(session: &zenoh::Session, keys: &Keys, world: &str) -> Result<Beacon> {
    let key = keys.world_beacon(world);
    let publisher = session
        .declare_publisher(key.clone())
        .congestion_control(zenoh::qos::CongestionControl::Drop)
        .await
        .map_err(Error::zenoh("send the world's beacon on", key))?;
    let zid = session.zid().to_string();
    let task = tokio::spawn(async move {
        let mut every = tokio::time::interval(BEACON_EVERY);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            every.tick().await;
            if let Err(e) = publisher.put(zid.clone()).await {
                tracing::debug!("cannot send the world's beacon: {e}");
            }
        }
    });
    Ok(Beacon { task })
}

/// One node's answer: the worlds it sees.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Answer {
    /// The node's id.
    pub node: String,
    /// The ids of the worlds whose tokens it sees.
    pub worlds: Vec<String>,
    /// The terms of the running worlds whose term tokens it sees.
    pub terms: Vec<u64>,
}

impl Answer {
    /// Reads node `node`'s answer from its payload (see [`Seen::payload`]).
    fn parse(node: &str, text: &str) -> Answer {
        let mut answer = Answer { node: node.to_string(), ..Answer::default() };
        for line in text.lines().filter(|l| !l.is_empty()) {
            match line.strip_prefix(TERM_LINE).map(str::parse::<u64>) {
                Some(Ok(term)) => answer.terms.push(term),
                Some(Err(_)) => tracing::debug!("node {node} answered a term that is not a number: {line:?}"),
                None => answer.worlds.push(line.to_string()),
            }
        }
        answer
    }

    /// Whether this node sees world `id`.
    pub fn sees(&self, id: &str) -> bool {
        self.worlds.iter().any(|w| w == id)
    }
}

/// What the nodes tell a world: each one's last word, as long as it is
/// fresh ([`FRESH_FOR`]); held as long as the world listens.
pub struct Witnesses {
    heard: Arc<Mutex<BTreeMap<String, (Instant, Answer)>>>,
    _subscriber: zenoh::pubsub::Subscriber<()>,
}

impl Witnesses {
    /// Starts listening to what the nodes of `keys`' simulation tell, on
    /// `key`: [`Keys::witnesses`], or another wildcard matching the same
    /// keys (a standby world's, see `flotilla_world::standby`).
    pub async fn listen(session: &zenoh::Session, keys: &Keys, key: &str) -> Result<Witnesses> {
        let heard: Arc<Mutex<BTreeMap<String, (Instant, Answer)>>> = Arc::default();
        let (into, own, key) = (heard.clone(), keys.clone(), key.to_string());
        let subscriber = session
            .declare_subscriber(&key)
            .callback(move |sample| {
                let Some(node) = own.parse_witness(sample.key_expr().as_str()) else { return };
                let text = sample.payload().try_to_string().map(|s| s.into_owned()).unwrap_or_default();
                lock(&into).insert(node.to_string(), (Instant::now(), Answer::parse(node, &text)));
            })
            .await
            .map_err(Error::zenoh("listen to the witnesses on", key))?;
        Ok(Witnesses { heard, _subscriber: subscriber })
    }

    /// The answers of the nodes heard within [`FRESH_FOR`], by node.
    pub fn answers(&self) -> Vec<Answer> {
        fresh_answers(&mut lock(&self.heard), Instant::now())
    }
}

/// The answers in `heard` fresh at `now`, by node; the others forgotten.
fn fresh_answers(heard: &mut BTreeMap<String, (Instant, Answer)>, now: Instant) -> Vec<Answer> {
    heard.retain(|_, (at, _)| now.saturating_duration_since(*at) <= FRESH_FOR);
    heard.values().map(|(_, answer)| answer.clone()).collect()
}

/// Whether `answered` nodes are more than half of the `known` ones: a
/// majority, which two sides of a partition cannot both have. With no node
/// known, there is nobody to split: any number is enough.
pub fn majority(answered: usize, known: usize) -> bool {
    known == 0 || 2 * answered > known
}

/// How far back answers count towards the nodes known: longer than
/// Zenoh's lease (10 s), during which a world cut off from everyone still
/// holds the other world's token but hears no node.
pub const KNOWN_FOR: Duration = Duration::from_secs(30);

/// The nodes known to a world: the most that answered in any one asking
/// of the last [`KNOWN_FOR`].
#[derive(Debug, Default)]
pub struct Known {
    answers: std::collections::VecDeque<(std::time::Instant, usize)>,
}

impl Known {
    /// `count` nodes answered now.
    pub fn answered(&mut self, count: usize) {
        let now = std::time::Instant::now();
        while self.answers.front().is_some_and(|(at, _)| now.duration_since(*at) > KNOWN_FOR) {
            self.answers.pop_front();
        }
        self.answers.push_back((now, count));
    }

    /// The nodes known.
    pub fn count(&self) -> usize {
        self.answers.iter().map(|(_, count)| *count).max().unwrap_or(0)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_says_the_worlds_and_the_terms_a_node_sees() {
        let seen =
            Seen { tokens: ["world-a".into(), "world-b".into()].into(), terms: [0, 1].into(), ..Seen::default() };
        let answer = Answer::parse("drive-1", &seen.payload());
        assert_eq!(answer.worlds, ["world-a", "world-b"]);
        assert_eq!(answer.terms, [0, 1]);
        assert!(answer.sees("world-b") && !answer.sees("world-c"));
        // A node that sees nothing answers nothing, which is an answer.
        assert_eq!(Answer::parse("odom-2", ""), Answer { node: "odom-2".into(), ..Answer::default() });
    }

    #[test]
    fn a_world_whose_token_went_is_seen_while_the_node_has_a_link_to_its_session() {
        let mut seen = Seen { tokens: ["world-a".into()].into(), ..Seen::default() };
        seen.sessions.insert("world-a".into(), "a1".into());
        seen.sessions.insert("world-b".into(), "b1".into());
        seen.linked = ["a1".into(), "b1".into()].into();
        assert_eq!(seen.worlds(), ["world-a", "world-b"].into(), "world-b by its link alone, world-a once");
        // Zenoh withdrew world-a's token, but the node's link to it is up.
        seen.tokens.clear();
        assert_eq!(seen.worlds(), ["world-a", "world-b"].into());
        // world-a crashed: its link went with its token.
        seen.linked.remove("a1");
        assert_eq!(seen.worlds(), ["world-b"].into());
        assert_eq!(Answer::parse("drive-1", &seen.payload()).worlds, ["world-b"]);
    }

    #[test]
    fn a_node_silent_for_longer_than_a_few_tellings_has_not_answered() {
        let start = Instant::now();
        let mut heard = BTreeMap::new();
        heard.insert("odom-1".to_string(), (start, Answer::parse("odom-1", "world-a")));
        heard.insert("drive-1".to_string(), (start + FRESH_FOR, Answer::parse("drive-1", "")));
        let nodes = |answers: Vec<Answer>| answers.into_iter().map(|a| a.node).collect::<Vec<_>>();
        assert_eq!(nodes(fresh_answers(&mut heard, start + FRESH_FOR)), ["drive-1", "odom-1"]);
        assert_eq!(nodes(fresh_answers(&mut heard, start + FRESH_FOR + TELL_EVERY)), ["drive-1"]);
        assert_eq!(heard.len(), 1, "the stale word is forgotten");
    }

    #[test]
    fn a_majority_is_more_than_half_of_the_nodes_known() {
        assert!(majority(2, 3));
        assert!(!majority(1, 2), "one of two is a tie, which both sides of a cut could have");
        assert!(majority(2, 2));
        assert!(!majority(0, 1));
        assert!(majority(3, 2), "nodes started since count too");
        assert!(majority(0, 0), "no node to split between two worlds");
    }

    #[test]
    fn the_nodes_known_are_the_most_that_answered_lately() {
        let mut known = Known::default();
        assert_eq!(known.count(), 0);
        known.answered(3);
        known.answered(0); // cut off, the other world's token not gone yet
        assert_eq!(known.count(), 3);
    }
}
