//! Where a recorded topic's messages are taken from ([`Source`]): its key,
//! the nodes' batches, or the batches of the node that forwards it, and
//! how a topic moves from one to another.

/// Where a recorded topic's messages are taken from: each once, whichever
/// ways they reach the recorder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Source {
    /// On its key until a node's batch brings it, then from the batches
    /// (the topics the simulation's nodes publish).
    KeyUntilBatched,
    /// From the nodes' batches.
    Batches,
    /// From the batches on this key only: those of the node that forwards
    /// the topic (see [`crate::forwarders`]).
    Forwarded(String),
    /// On its key, and from the batches on `also_from` if given: a
    /// forwarder that went, whose last batches hold what it received
    /// before this recorder subscribed. Other nodes' copies (a forwarder
    /// that came later) are left out: they overlap what comes on the key.
    Key { also_from: Option<String> },
    /// A topic forwarded by no node yet when recording began (`flotilla
    /// run --record` starts the recorder before the nodes), of which
    /// nothing has come: on its key until a batch comes on the key of
    /// `forwarder` (the first by name of the nodes whose token says they
    /// forward it, once one does), then from its batches as
    /// [`Source::Forwarded`]. A node's batch comes only once it forwards
    /// every message it receives to recorders, so none is lost or written
    /// twice; a message that comes on the key first makes it
    /// [`Source::Key`] for good. This matters to a re-run: a forwarder
    /// logs each input at the state it had answered when the input came
    /// (the step it took effect after), while on its key an input can only
    /// be logged at the latest sim time this recorder knows, which may lie
    /// a step or more either side of that.
    KeyUntilForwarded { forwarder: Option<String> },
}

impl Source {
    /// Whether a batch that came on `batch_key` is a source, once a batch
    /// brought the topic.
    pub(super) fn takes_batch_of(&self, batch_key: &str) -> bool {
        match self {
            Source::KeyUntilBatched | Source::Batches => true,
            Source::Forwarded(from) | Source::Key { also_from: Some(from) } => from == batch_key,
            Source::Key { also_from: None } | Source::KeyUntilForwarded { .. } => false,
        }
    }

    /// Whether what comes on the topic's key is written.
    pub(super) fn takes_key(&self) -> bool {
        matches!(self, Source::KeyUntilBatched | Source::Key { .. } | Source::KeyUntilForwarded { .. })
    }
}
