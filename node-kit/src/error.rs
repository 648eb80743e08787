//! What can go wrong in a node's runtime, as data.

use std::time::Duration;

use flotilla_wire::DecodeError;

/// An error of the node runtime: Zenoh refusing a declaration, a world
/// that does not answer or refuses, a reply that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Zenoh refused to declare or do something on a key.
    #[error("cannot {action} {key}: {cause}")]
    Zenoh {
        /// What was tried: "subscribe to", "publish on", "query", ...
        action: &'static str,
        /// The key (or key expression).
        key: String,
        /// Zenoh's own error.
        cause: zenoh::Error,
    },
    /// The Zenoh configuration cannot be built from the arguments.
    #[error("Zenoh configuration: {0}")]
    Config(String),
    /// No world answered a query in time.
    #[error("no world answered on {key} within {timeout:?}")]
    NoWorld {
        /// The key queried.
        key: String,
        /// How long the query waited.
        timeout: Duration,
    },
    /// The world answered with an error.
    #[error("the world refused {key}: {reason}")]
    Refused {
        /// The key queried.
        key: String,
        /// The world's words.
        reason: String,
    },
    /// A reply that does not decode.
    #[error("cannot read the reply on {key}: {cause}")]
    Decode {
        /// The key queried.
        key: String,
        /// Why it does not decode (in the message, so not also a `source`
        /// that `{:#}` would print twice).
        cause: DecodeError,
    },
    /// A liveliness query that ended early: the tokens found may not be all.
    #[error("liveliness query {key}: {reason} after {found} tokens")]
    Incomplete {
        /// The key expression queried.
        key: String,
        /// Why it ended.
        reason: String,
        /// Tokens found before it ended.
        found: usize,
    },
}

impl Error {
    /// Zenoh refused `action` on `key`.
    pub fn zenoh(action: &'static str, key: impl Into<String>) -> impl FnOnce(zenoh::Error) -> Error {
        let key = key.into();
        move |cause| Error::Zenoh { action, key, cause }
    }
}

/// Results of the node runtime.
pub type Result<T, E = Error> = std::result::Result<T, E>;
