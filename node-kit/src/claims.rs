//! A node's own claims on plugin instances (ARCHITECTURE.md, "Rules every process follows"): liveliness
//! tokens declared and watched, decided by the pure
//! [`ClaimBook`].

use std::collections::{BTreeMap, BTreeSet};

use flotilla_wire::claim_book::{aspect_of, instance_id, ClaimBook, ClaimEvent};
use flotilla_wire::Keys;
use tokio::sync::mpsc::UnboundedReceiver;

use crate::error::{Error, Result};
use crate::subscribe::watch_tokens;

/// A node's own claims: the book of others' claims plus the tokens it holds.
pub struct Claims {
    me: String,
    aspect: String,
    book: ClaimBook,
    held: BTreeMap<String, zenoh::liveliness::LivelinessToken>,
    waiting: BTreeSet<String>,
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
        instance_id(model, plugin, &self.aspect)
    }

    /// Records another node's claim (events from [`watch_claims`]). Returns
    /// whether it can change what this node holds: a claim of another node
    /// on this node's aspect. Our own claims and other aspects' (a thousand
    /// robots' drive and odometry claims seen by a laser node) cannot, and
    /// need no rebuild.
    pub fn seen(&mut self, instance: &str, node: &str, alive: bool) -> bool {
        let relevant = node != self.me && aspect_of(instance) == self.aspect;
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
    pub async fn load(&mut self, session: &zenoh::Session, keys: &Keys, watched: &mut UnboundedReceiver<ClaimEvent>) {
        let all = keys.claim_tokens_of(&self.aspect);
        const ATTEMPTS: u32 = 3;
        for attempt in 1..=ATTEMPTS {
            match live_tokens(session, all.clone(), std::time::Duration::from_secs(5)).await {
                Ok(tokens) => {
                    for (instance, node) in tokens.iter().filter_map(|key| keys.parse_claim_token(key)) {
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
    pub async fn sync(&mut self, session: &zenoh::Session, keys: &Keys, wanted: &[String]) -> bool {
        let mut changed = false;
        let wanted_set: BTreeSet<&str> = wanted.iter().map(String::as_str).collect();
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
            let token_key = keys.claim_token(instance, &self.me);
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

/// The keys of every live liveliness token matching `key_expr`, each once,
/// however many. A liveliness query's default handler holds 256 replies, and the
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
) -> Result<Vec<String>> {
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
        .map_err(Error::zenoh("query the tokens on", key_expr.clone()))?;
    let mut keys = Vec::new();
    while let Some(reply) = rx.recv().await {
        match reply {
            Ok(key) => keys.push(key),
            Err(reason) => return Err(Error::Incomplete { key: key_expr, reason, found: keys.len() }),
        }
    }
    // A token of this session comes twice: from the session and back from
    // its router.
    keys.sort_unstable();
    keys.dedup();
    Ok(keys)
}

/// Watches every claim on the instances of `aspect` (those already made
/// first): the only claims that can change what a node of that aspect
/// holds, and, in warehouse-1000, a third of them. Each change comes on a
/// channel of its own, which [`Claims::load`] drains of the claims seen
/// before it; keep the subscriber as long as the channel.
pub async fn watch_claims(
    session: &zenoh::Session,
    keys: &Keys,
    aspect: &str,
) -> Result<(zenoh::pubsub::Subscriber<()>, UnboundedReceiver<ClaimEvent>)> {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let own = keys.clone();
    let watcher = watch_tokens(session, keys.claim_tokens_of(aspect), move |key, alive| {
        if let Some((instance, node)) = own.parse_claim_token(key) {
            let _ = tx.send(ClaimEvent { instance, node, alive });
        }
    })
    .await?;
    Ok((watcher, rx))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_other_nodes_claims_on_our_aspect_matter() {
        let mut claims = Claims::new("laser-b", "laser");
        assert!(claims.seen("r/laser/laser", "laser-a", true), "another laser node: may change what we hold");
        assert!(!claims.seen("r/drive/odom", "odom-a", true), "another aspect: no rebuild");
        assert!(!claims.seen("r/laser/laser", "laser-b", true), "our own claim echoed back");
        assert!(!claims.holds("r/laser/laser"));
    }

    #[test]
    fn a_node_watches_the_claims_of_its_own_aspect_only() {
        let keys = Keys::new("s");
        let watched = zenoh::key_expr::KeyExpr::new(keys.claim_tokens_of("laser")).unwrap();
        let claim = |instance: &str| zenoh::key_expr::KeyExpr::new(keys.claim_token(instance, "n-1")).unwrap();
        assert!(watched.intersects(&claim("robot1/laser/laser")));
        assert!(watched.intersects(&claim("robot1/front_laser/laser")));
        assert!(!watched.intersects(&claim("robot1/drive/odom")));
        assert!(!watched.intersects(&claim("robot1/laser_drive/drive")), "a plugin named like an aspect");
    }
}
