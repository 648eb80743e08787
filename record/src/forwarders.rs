//! The nodes that forward the topics they take in to recorders (their
//! [`Keys::forwarder`] tokens): a recorder takes such a topic from one
//! of them, in its batches, rather than on the topic's key (see
//! [`flotilla_wire::recording`]).

use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

use flotilla_wire::Keys;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver};

/// Per ROS-facing key, the nodes whose token says they forward it.
#[derive(Debug, Default)]
pub(crate) struct Forwarders {
    by_key: HashMap<String, BTreeSet<String>>,
    /// The tokens (key, node) the watch told of: it tells of their going
    /// too, so [`Forwarders::recheck`] leaves them alone.
    watched: BTreeSet<(String, String)>,
}

/// A node's token for a key came (`alive`) or went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ForwarderToken {
    pub node: String,
    pub key: String,
    pub alive: bool,
}

/// How long a recorder waits for the forwarders' tokens.
const TOKENS_QUERY_TIMEOUT: Duration = Duration::from_secs(5);

/// When a recorder looks at the forwarders' tokens again, after its
/// start: see [`Forwarders::recheck`].
pub(crate) const RECHECK_AFTER: Duration = Duration::from_secs(1);

impl Forwarders {
    /// Takes a token's coming or going as the watch tells it; one heard
    /// of twice (from the watch and the query) counts once.
    pub(crate) fn token(&mut self, token: &ForwarderToken) {
        let id = (token.key.clone(), token.node.clone());
        if token.alive {
            self.watched.insert(id);
        } else {
            self.watched.remove(&id);
        }
        self.queried(token);
    }

    /// Takes a token the first query found alive.
    pub(crate) fn queried(&mut self, token: &ForwarderToken) {
        if token.alive {
            self.by_key.entry(token.key.clone()).or_default().insert(token.node.clone());
        } else if let Some(nodes) = self.by_key.get_mut(&token.key) {
            nodes.remove(&token.node);
            if nodes.is_empty() {
                self.by_key.remove(&token.key);
            }
        }
    }

    /// The node a recorder takes `key` from, if any forwards it: the first
    /// by name, so that recorders started together agree.
    pub(crate) fn of(&self, key: &str) -> Option<&str> {
        self.by_key.get(key).and_then(|nodes| nodes.first()).map(String::as_str)
    }

    /// The tokens held that the watch never told of and that are not
    /// among `alive`, the answer of a query made [`RECHECK_AFTER`] after the
    /// watch began, as gone: a token that went between the first query and
    /// the watch's declaration is told by neither. A token the watch told
    /// of is left alone: Zenoh 1.x may answer a query from what the session
    /// knows so far, without tokens alive all along, and taking such a
    /// token for gone would switch its topic to its key and lose the
    /// messages sent meanwhile.
    pub(crate) fn recheck(&self, alive: &[ForwarderToken]) -> Vec<ForwarderToken> {
        let mut gone = Vec::new();
        for (key, nodes) in &self.by_key {
            for node in nodes {
                let watched = self.watched.contains(&(key.clone(), node.clone()));
                if !watched && !alive.iter().any(|token| token.key == *key && token.node == *node) {
                    gone.push(ForwarderToken { node: node.clone(), key: key.clone(), alive: false });
                }
            }
        }
        gone
    }
}

/// The forwarders' tokens alive now.
pub(crate) async fn forwarder_tokens(session: &zenoh::Session, keys: &Keys) -> anyhow::Result<Vec<ForwarderToken>> {
    let tokens = flotilla_node_kit::claims::live_tokens(session, keys.forwarders(), TOKENS_QUERY_TIMEOUT).await?;
    Ok(tokens.iter().filter_map(|token| parse(keys, token, true)).collect())
}

fn parse(keys: &Keys, token: &str, alive: bool) -> Option<ForwarderToken> {
    let (node, key) = keys.parse_forwarder(token)?;
    Some(ForwarderToken { node: node.to_string(), key: key.to_string(), alive })
}

/// The forwarders' tokens alive now, then a watch of every change as it
/// comes. The query goes first: one made just after the watch's
/// declaration found none of the tokens the watch then brought (Zenoh
/// 1.x answers it from what the session knows while the watch's history
/// is still on its way). A token gone in between is found by
/// [`Forwarders::recheck`].
pub(crate) async fn watch_forwarders(
    session: &zenoh::Session,
    keys: &Keys,
) -> anyhow::Result<(Forwarders, UnboundedReceiver<ForwarderToken>, zenoh::pubsub::Subscriber<()>)> {
    let mut forwarders = Forwarders::default();
    match forwarder_tokens(session, keys).await {
        Ok(tokens) => tokens.iter().for_each(|token| forwarders.queried(token)),
        // Topics whose forwarder is not known are taken on their keys.
        Err(e) => tracing::warn!("cannot load the forwarders' tokens: {e}; taking their topics on their keys"),
    }
    let (changes_tx, changes) = unbounded_channel();
    let on_change = {
        let keys = keys.clone();
        move |token: &str, alive: bool| {
            if let Some(change) = parse(&keys, token, alive) {
                let _ = changes_tx.send(change);
            }
        }
    };
    let watch = flotilla_node_kit::subscribe::watch_tokens(session, keys.forwarders(), on_change).await?;
    Ok((forwarders, changes, watch))
}

/// A watch of the nodes' [`Keys::forwarding`] tokens, those alive first:
/// each change as (node, alive). A node holding one forwards to recorders
/// every message it receives on its forwarded inputs.
pub(crate) async fn watch_forwarding(
    session: &zenoh::Session,
    keys: &Keys,
) -> anyhow::Result<(UnboundedReceiver<(String, bool)>, zenoh::pubsub::Subscriber<()>)> {
    let (changes_tx, changes) = unbounded_channel();
    let on_change = {
        let keys = keys.clone();
        move |token: &str, alive: bool| {
            if let Some(node) = keys.parse_forwarding(token) {
                let _ = changes_tx.send((node.to_string(), alive));
            }
        }
    };
    let watch = flotilla_node_kit::subscribe::watch_tokens(session, keys.forwarding("*"), on_change).await?;
    Ok((changes, watch))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(node: &str, key: &str, alive: bool) -> ForwarderToken {
        ForwarderToken { node: node.into(), key: key.into(), alive }
    }

    #[test]
    fn a_key_is_taken_from_its_first_forwarder_by_name_while_any_lives() {
        let mut forwarders = Forwarders::default();
        assert_eq!(forwarders.of("robot1/cmd_vel"), None);
        forwarders.token(&token("drive-b", "robot1/cmd_vel", true));
        forwarders.token(&token("drive-a", "robot1/cmd_vel", true));
        forwarders.token(&token("drive-a", "robot1/cmd_vel", true)); // heard again, from the query
        assert_eq!(forwarders.of("robot1/cmd_vel"), Some("drive-a"));
        assert_eq!(forwarders.of("robot2/cmd_vel"), None);
        forwarders.token(&token("drive-a", "robot1/cmd_vel", false));
        assert_eq!(forwarders.of("robot1/cmd_vel"), Some("drive-b"));
        forwarders.token(&token("drive-b", "robot1/cmd_vel", false));
        forwarders.token(&token("drive-b", "robot1/cmd_vel", false)); // gone twice
        assert_eq!(forwarders.of("robot1/cmd_vel"), None);
    }

    #[test]
    fn a_second_look_finds_the_tokens_that_went_unseen() {
        let mut forwarders = Forwarders::default();
        forwarders.queried(&token("drive-a", "robot1/cmd_vel", true));
        forwarders.queried(&token("drive-a", "robot2/cmd_vel", true));
        let alive = [token("drive-a", "robot2/cmd_vel", true), token("drive-b", "robot3/cmd_vel", true)];
        assert_eq!(forwarders.recheck(&alive), [token("drive-a", "robot1/cmd_vel", false)]);
    }

    #[test]
    fn a_token_the_watch_told_of_is_not_taken_for_gone_by_a_second_look_that_missed_it() {
        let mut forwarders = Forwarders::default();
        forwarders.queried(&token("drive-a", "robot1/cmd_vel", true));
        forwarders.token(&token("drive-a", "robot1/cmd_vel", true)); // the watch's history
        assert_eq!(forwarders.recheck(&[]), [], "the watch tells of its going");
        forwarders.token(&token("drive-a", "robot1/cmd_vel", false));
        forwarders.queried(&token("drive-a", "robot1/cmd_vel", true)); // a stale answer, then
        assert_eq!(forwarders.recheck(&[]), [token("drive-a", "robot1/cmd_vel", false)]);
    }
}
