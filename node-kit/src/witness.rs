//! Witnesses: each node says which worlds it sees, so that a world can
//! tell whether it is the one cut off (docs/checkpoints.md, "Network
//! partitions").
//!
//! A standby world that loses the running world's liveliness token cannot
//! tell on its own whether that world crashed or only its own link to it
//! was cut; a running world that loses its standby cannot tell whether it
//! is itself cut off from everyone. The nodes can: every node answers a
//! query on [`Keys::witnesses`] with the ids of the worlds whose tokens it
//! sees. A standby takes over only when more than half of the nodes it
//! knew answer and none of them still sees the world; a running world that
//! lost its standby steps only while more than half of its nodes answer.
//! Two majorities of one set of nodes share a node, so at most one world
//! steps.
//!
//! An answer also says the terms of the running worlds the node sees (see
//! `flotilla_world::fence`): a world cut off while a standby took over
//! learns of the higher term from the nodes as soon as it reaches them
//! again, even when its own link to the new world does not come back
//! whole (Zenoh 1.10 can lose the declarations of two routers that
//! reconnect, eclipse-zenoh/zenoh#1886).

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use flotilla_wire::Keys;
use zenoh::query::QueryTarget;
use zenoh::Wait;

use crate::error::{Error, Result};
use crate::subscribe::watch_tokens;

/// A node's witness: the worlds it sees, answered to whoever asks; held
/// as long as the node runs.
pub struct Witness {
    _worlds: zenoh::pubsub::Subscriber<()>,
    _terms: zenoh::pubsub::Subscriber<()>,
    _answers: zenoh::query::Queryable<()>,
}

/// What a node sees: the ids of the worlds and the terms of the running
/// worlds whose tokens are alive.
#[derive(Default)]
struct Seen {
    worlds: BTreeSet<String>,
    terms: BTreeSet<u64>,
}

/// The prefix of an answer's lines that carry a term, beside the lines that
/// carry a world's id (`world-…`).
const TERM_LINE: &str = "term ";

impl Seen {
    /// The answer's payload: a line per world id, then a line `term N` per
    /// term.
    fn payload(&self) -> String {
        let worlds = self.worlds.iter().cloned();
        let terms = self.terms.iter().map(|t| format!("{TERM_LINE}{t}"));
        worlds.chain(terms).collect::<Vec<_>>().join("\n")
    }
}

/// Starts answering as node `node` which worlds of `keys`' simulation it
/// sees.
pub async fn declare(session: &zenoh::Session, keys: &Keys, node: &str) -> Result<Witness> {
    let seen: Arc<Mutex<Seen>> = Arc::default();
    let worlds = {
        let (seen, keys) = (seen.clone(), keys.clone());
        watch_tokens(session, keys.world_tokens(), move |key, alive| {
            let Some(id) = keys.parse_node_token(key) else { return };
            let worlds = &mut lock(&seen).worlds;
            if alive {
                worlds.insert(id.to_string());
            } else {
                worlds.remove(id);
            }
        })
        .await?
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
    let answers = {
        let (seen, answer_key) = (seen.clone(), key.clone());
        session
            .declare_queryable(&key)
            .callback(move |query| {
                let payload = lock(&seen).payload();
                if let Err(e) = query.reply(&answer_key, payload).wait() {
                    tracing::debug!("cannot answer a world's question on {answer_key}: {e}");
                }
            })
            .await
            .map_err(Error::zenoh("answer on", key))?
    };
    Ok(Witness { _worlds: worlds, _terms: terms, _answers: answers })
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

/// Asks every node that can be reached which worlds it sees, waiting
/// `timeout` for the answers.
pub async fn ask(session: &zenoh::Session, keys: &Keys, timeout: Duration) -> Result<Vec<Answer>> {
    let key = keys.witnesses();
    let replies = session
        .get(&key)
        .target(QueryTarget::All)
        .timeout(timeout)
        .await
        .map_err(Error::zenoh("ask the witnesses on", key))?;
    let mut answers = Vec::new();
    while let Ok(reply) = replies.recv_async().await {
        let Ok(sample) = reply.result() else { continue };
        let Some(node) = keys.parse_witness(sample.key_expr().as_str()) else { continue };
        let text = sample.payload().try_to_string().map(|s| s.into_owned()).unwrap_or_default();
        answers.push(Answer::parse(node, &text));
    }
    answers.sort_by(|a, b| a.node.cmp(&b.node));
    answers.dedup_by(|a, b| a.node == b.node);
    Ok(answers)
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
        let seen = Seen { worlds: ["world-a".into(), "world-b".into()].into(), terms: [0, 1].into() };
        let answer = Answer::parse("drive-1", &seen.payload());
        assert_eq!(answer.worlds, ["world-a", "world-b"]);
        assert_eq!(answer.terms, [0, 1]);
        assert!(answer.sees("world-b") && !answer.sees("world-c"));
        // A node that sees nothing answers nothing, which is an answer.
        assert_eq!(Answer::parse("odom-2", ""), Answer { node: "odom-2".into(), ..Answer::default() });
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
