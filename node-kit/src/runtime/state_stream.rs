//! Which world states a node receives: every one (`world/state`), or only
//! those at multiples of `n` steps (`world/state_every/<n>`), when every
//! output of its instances is due at such multiples (see
//! [`NodePlugin::state_stride`](super::NodePlugin::state_stride)). A 10 Hz
//! sensor at 200 Hz then receives one state in twenty: its process no
//! longer copies, reassembles and wakes up for the nineteen it would drop.
//!
//! Switching never leaves a gap, which in lockstep would stall the
//! barrier: the node subscribes to the thinned stream and declares its
//! interest token (the world publishes the stream while such a token
//! lives), and drops the full stream only once a thinned state has
//! arrived; going back, the full stream is subscribed before the thinned
//! one is dropped. A state that comes on both is a duplicate, which the
//! loop recognises.

use std::sync::atomic::{AtomicBool, Ordering};

/// The thinned stream a node follows.
struct Thin {
    stride: u64,
    _subscriber: zenoh::pubsub::Subscriber<()>,
    _token: zenoh::liveliness::LivelinessToken,
    /// Whether a state has come on it.
    flowing: std::sync::Arc<AtomicBool>,
}

/// A node's state subscriptions.
#[derive(Default)]
pub(super) struct StateStream {
    full: Option<zenoh::pubsub::Subscriber<()>>,
    thin: Option<Thin>,
}

impl StateStream {
    /// Every state, on `full`.
    pub(super) fn new(full: zenoh::pubsub::Subscriber<()>) -> StateStream {
        StateStream { full: Some(full), thin: None }
    }

    /// The stride followed (1: every state).
    pub(super) fn stride(&self) -> u64 {
        self.thin.as_ref().map_or(1, |t| t.stride)
    }

    /// Whether the full stream is subscribed.
    pub(super) fn has_full(&self) -> bool {
        self.full.is_some()
    }

    /// Sets the full stream's subscriber (subscribed again before leaving
    /// a thinned stream).
    pub(super) fn set_full(&mut self, full: zenoh::pubsub::Subscriber<()>) {
        self.full = Some(full);
    }

    /// Follows the thinned stream of `stride`, whose states arriving set
    /// `flowing`; the full stream stays until [`StateStream::flowing`].
    pub(super) fn set_thin(
        &mut self,
        stride: u64,
        subscriber: zenoh::pubsub::Subscriber<()>,
        token: zenoh::liveliness::LivelinessToken,
        flowing: std::sync::Arc<AtomicBool>,
    ) {
        self.thin = Some(Thin { stride, _subscriber: subscriber, _token: token, flowing });
    }

    /// Back to every state (the full stream must be subscribed).
    pub(super) fn drop_thin(&mut self) {
        debug_assert!(self.full.is_some(), "never without a stream");
        self.thin = None;
    }

    /// A thinned state of `stride` has arrived: the full stream can go.
    pub(super) fn flowing(&mut self, stride: u64) {
        let thin_flows = self.thin.as_ref().is_some_and(|t| t.stride == stride && t.flowing.load(Ordering::Acquire));
        if thin_flows && self.full.take().is_some() {
            tracing::info!("receiving every {stride}th world state only");
        }
    }
}
