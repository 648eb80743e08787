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
    _answers: zenoh::query::Queryable<()>,
}

/// Starts answering as node `node` which worlds of `keys`' simulation it
/// sees.
pub async fn declare(session: &zenoh::Session, keys: &Keys, node: &str) -> Result<Witness> {
    let seen: Arc<Mutex<BTreeSet<String>>> = Arc::default();
    let worlds = {
        let (seen, keys) = (seen.clone(), keys.clone());
        watch_tokens(session, keys.world_tokens(), move |key, alive| {
            let Some(id) = keys.parse_node_token(key) else { return };
            let mut seen = lock(&seen);
            if alive {
                seen.insert(id.to_string());
            } else {
                seen.remove(id);
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
                let payload = lock(&seen).iter().cloned().collect::<Vec<_>>().join("\n");
                if let Err(e) = query.reply(&answer_key, payload).wait() {
                    tracing::debug!("cannot answer a world's question on {answer_key}: {e}");
                }
            })
            .await
            .map_err(Error::zenoh("answer on", key))?
    };
    Ok(Witness { _worlds: worlds, _answers: answers })
}

/// One node's answer: the worlds it sees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The node's id.
    pub node: String,
    /// The ids of the worlds whose tokens it sees.
    pub worlds: Vec<String>,
}

impl Answer {
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
        let worlds = text.lines().filter(|l| !l.is_empty()).map(str::to_string).collect();
        answers.push(Answer { node: node.to_string(), worlds });
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
