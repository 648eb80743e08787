//! The publisher a process sends recorders its batches on
//! (`flotilla/<sim>/recording/<sender>`, see
//! [`flotilla_wire::recording`]), whether any recorder listens, and
//! which keys a recorder still takes on the keys themselves.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rustc_hash::{FxHashMap, FxHashSet};
use zenoh::qos::CongestionControl;

use crate::{Error, Result};

/// Declares the batch publisher on `key`, lossless in every clock mode (a
/// recording has every message or says which batches it misses: the
/// senders slow down instead), and keeps `listening` set to whether a
/// recorder subscribes, from Zenoh's matching listener (called at once
/// when one already does), which then calls `changed` with it.
pub async fn declare_batch_publisher(
    session: &zenoh::Session,
    key: String,
    listening: Arc<AtomicBool>,
    changed: impl Fn(bool) + Send + Sync + 'static,
) -> Result<zenoh::pubsub::Publisher<'static>> {
    let publisher = session
        .declare_publisher(key.clone())
        .congestion_control(CongestionControl::Block)
        .await
        .map_err(Error::zenoh("publish on", key.clone()))?;
    publisher
        .matching_listener()
        .callback(move |status| {
            listening.store(status.matching(), Ordering::Relaxed);
            changed(status.matching());
        })
        .background()
        .await
        .map_err(Error::zenoh("watch for recorders on", key))?;
    Ok(publisher)
}

/// The ROS-facing keys some recorder still takes messages on, rather than
/// from the nodes' batches: told by its tokens on
/// [`flotilla_wire::Keys::recorder_on_key`].
///
/// A message on such a key must follow the batch that holds it, or the
/// recorder, which switches a topic to the batches at the first batch that
/// brings it, would write it twice. A message on a key that only other
/// subscribers want (office-50's scans, which its wander steers by) need
/// not: its batch keeps filling. Sent before every such message, the
/// laser's batches were one a moment, 220 kB each, and the recorder's
/// receiving, waking and writing of them cost more than their bytes.
#[derive(Debug, Default)]
pub struct RecordersOnKeys {
    /// Tokens alive, so that a moment's check is free while there are none
    /// (every recorder switched, or none has come).
    tokens: AtomicUsize,
    held: Mutex<Held>,
}

#[derive(Debug, Default)]
struct Held {
    /// The tokens alive.
    tokens: FxHashSet<String>,
    /// Per key, the recorders whose token names it.
    recorders: FxHashMap<String, usize>,
}

impl RecordersOnKeys {
    /// A recorder's token for `key` is alive (`alive`) or gone. A token
    /// heard of twice (from the watch and its first query) counts once.
    pub fn token(&self, token: &str, key: &str, alive: bool) {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        if alive {
            if held.tokens.insert(token.to_string()) {
                *held.recorders.entry(key.to_string()).or_default() += 1;
            }
        } else if held.tokens.remove(token) {
            if let Some(count) = held.recorders.get_mut(key) {
                *count -= 1;
                if *count == 0 {
                    held.recorders.remove(key);
                }
            }
        }
        self.tokens.store(held.tokens.len(), Ordering::Relaxed);
    }

    /// Whether any recorder takes a key on that key.
    pub fn any(&self) -> bool {
        self.tokens.load(Ordering::Relaxed) > 0
    }

    /// Whether some recorder takes the messages of one of `keys` on that
    /// key.
    pub fn takes_any<'k>(&self, mut keys: impl Iterator<Item = &'k str>) -> bool {
        if !self.any() {
            return false;
        }
        let held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        keys.any(|key| held.recorders.contains_key(key))
    }
}

/// Keeps `on_keys` to the recorders' tokens on
/// [`flotilla_wire::Keys::recorders_on_keys`]; returns once those
/// already declared are known, so that a node that then declares its batch
/// publisher never defers a batch whose messages a recorder takes on their
/// keys.
pub async fn watch_recorders_on_keys(
    session: &zenoh::Session,
    keys: &flotilla_wire::Keys,
    on_keys: Arc<RecordersOnKeys>,
) -> Result<zenoh::pubsub::Subscriber<()>> {
    let watched = keys.recorders_on_keys();
    let take = {
        let keys = keys.clone();
        move |token: &str, alive: bool| {
            if let Some(key) = keys.parse_recorder_on_key(token) {
                on_keys.token(token, key, alive);
            }
        }
    };
    // Asked first, and the answer waited for: the watch's history comes
    // when it comes, and a query made just after the watch's declaration
    // found none of the tokens (Zenoh 1.x answers it from what the session
    // knows while the history is on its way; seen with the forwarders'
    // tokens, `flotilla_record`). A query that fails or times out leaves
    // the node to the watch, whose history may come after the node's first
    // messages on a recorder's key: one of them could then go ahead of its
    // batch and be recorded twice (the same hazard as the recorder's
    // `TOKENS_SETTLE`), hence the warning. A token gone between the query
    // and the watch stays counted: the node then sends its batch ahead of
    // such a key's messages for nothing, which costs time, not messages.
    match crate::claims::live_tokens(session, watched.clone(), TOKENS_QUERY_TIMEOUT).await {
        Ok(tokens) => tokens.iter().for_each(|token| take(token, true)),
        Err(e) => tracing::warn!("cannot load the recorders' tokens yet: {e}; going by those the watch brings"),
    }
    crate::subscribe::watch_tokens(session, watched, take).await
}

/// How long a node waits for the recorders' tokens at its start.
const TOKENS_QUERY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_taken_while_any_recorder_s_token_for_it_lives() {
        let on_keys = RecordersOnKeys::default();
        let scan = |recorder: &str| format!("flotilla/s/recorders_on_keys/{recorder}/robot1/scan");
        assert!(!on_keys.any());
        assert!(!on_keys.takes_any(["robot1/scan"].into_iter()));
        on_keys.token(&scan("a1"), "robot1/scan", true);
        on_keys.token(&scan("a1"), "robot1/scan", true); // heard again, from the query
        on_keys.token(&scan("b2"), "robot1/scan", true);
        assert!(on_keys.takes_any(["robot1/odom", "robot1/scan"].into_iter()));
        assert!(!on_keys.takes_any(["robot1/odom"].into_iter()));
        on_keys.token(&scan("a1"), "robot1/scan", false);
        assert!(on_keys.takes_any(["robot1/scan"].into_iter()), "recorder b2 still takes it");
        on_keys.token(&scan("b2"), "robot1/scan", false);
        on_keys.token(&scan("b2"), "robot1/scan", false); // a token gone twice counts once
        assert!(!on_keys.any());
        assert!(!on_keys.takes_any(["robot1/scan"].into_iter()));
    }
}
