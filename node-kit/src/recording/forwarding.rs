//! A node's inputs forwarded to recorders.
//!
//! A topic that the simulation's nodes take in and nothing of it
//! publishes (see [`flotilla_plugins::channels::forwarded_topics`]) comes
//! from a controller outside: a fleet's `cmd_vel`s. A recorder would
//! subscribe to it, and receiving a fleet's commands through Zenoh was
//! about half of its work. The node that receives them anyway puts each
//! into its batch instead ([`super::RecorderTap::forward`]), and says so
//! with a [`Keys::forwarder`] token per input, and a [`Keys::forwarding`]
//! token once a recorder listens, so that a recorder (or a test) that
//! waits for the tokens misses no message.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use flotilla_wire::Keys;
use tokio::sync::mpsc::UnboundedReceiver;

/// Whether one input's messages go into the node's batches, and the
/// token that tells recorders so.
#[derive(Default)]
pub(crate) struct InputForwarding {
    on: Arc<AtomicBool>,
    token: Option<zenoh::liveliness::LivelinessToken>,
}

impl InputForwarding {
    /// The flag the input's subscriber reads for each message.
    pub(crate) fn flag(&self) -> Arc<AtomicBool> {
        self.on.clone()
    }

    /// Forwards the messages of input `key` of node `node` from now on, or
    /// stops.
    pub(crate) async fn set(&mut self, session: &zenoh::Session, keys: &Keys, node: &str, key: &str, forward: bool) {
        if !forward {
            self.on.store(false, Ordering::Relaxed);
            self.token = None;
            return;
        }
        if self.token.is_some() {
            return;
        }
        // Forwarding before the token says so: a recorder that finds the
        // token misses nothing.
        self.on.store(true, Ordering::Relaxed);
        let token_key = keys.forwarder(node, key);
        match session.liveliness().declare_token(&token_key).await {
            Ok(token) => self.token = Some(token),
            Err(e) => {
                // Recorders then subscribe to the key themselves.
                tracing::warn!("cannot declare {token_key}: {e}");
                self.on.store(false, Ordering::Relaxed);
            }
        }
    }
}

/// Holds the node's [`Keys::forwarding`] token (`key`) while a recorder
/// listens to its batches, as `changes` tells: from then on every message
/// it receives on a forwarded input goes into them.
pub(crate) async fn hold_node_token(session: zenoh::Session, key: String, mut changes: UnboundedReceiver<bool>) {
    let mut token = None;
    while let Some(listens) = changes.recv().await {
        token = match (listens, token.take()) {
            (true, None) => match session.liveliness().declare_token(&key).await {
                Ok(token) => Some(token),
                Err(e) => {
                    tracing::warn!("cannot declare {key}: {e}");
                    None
                }
            },
            (true, held) => held,
            (false, _) => None,
        };
    }
}
