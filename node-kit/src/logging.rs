//! One logging set-up for every binary: `RUST_LOG` if set, else the given
//! filter; colours only on a terminal (the launcher pipes children's logs).

use std::sync::atomic::{AtomicBool, Ordering};

/// Zenoh's own messages that are not news to a Flotilla user: a peer logs
/// "Unknown token" at ERROR for each liveliness token a router it lost
/// had declared for others, which is what a standby world's take-over
/// looks like from every node (the tokens come back with the new world).
const QUIET_ZENOH: &str = "zenoh::net::routing::hat::peer::token=off";

/// Where Zenoh's session logs a message that arrives for a session being
/// closed ("Received Data for unknown expr_id", at ERROR).
const ZENOH_SESSION_TARGET: &str = "zenoh::api::session";

/// Set once the process closes its session at a clean stop.
static CLOSING: AtomicBool = AtomicBool::new(false);

/// Initialises tracing on stderr.
pub fn init(default_filter: &str) {
    use std::io::IsTerminal;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::Layer;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| format!("{default_filter},{QUIET_ZENOH}").into());
    let ansi = std::io::stderr().is_terminal();
    let closing = tracing_subscriber::filter::filter_fn(|meta| !silenced_while_closing(meta.target()));
    let layer = tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_ansi(ansi);
    let layer = if ansi {
        layer.boxed()
    } else {
        // Under `flotilla run` each line is already prefixed with the node's name.
        layer.without_time().with_target(false).boxed()
    };
    tracing_subscriber::registry().with(layer.with_filter(filter).with_filter(closing)).init();
}

/// Says that the process is about to end its subscriptions and publishers
/// and close its Zenoh session at a clean stop. A peer that has not yet
/// heard of the ends may still send, and Zenoh logs each message that
/// arrives for a key expression just undeclared, or for a session taken
/// apart, at ERROR ("Received Data for unknown expr_id"); for a process
/// stopping on purpose that is not news, so from here on Zenoh's
/// session-level messages are dropped (its transport and routing still
/// log).
pub fn session_closing() {
    CLOSING.store(true, Ordering::Relaxed);
}

fn silenced_while_closing(target: &str) -> bool {
    CLOSING.load(Ordering::Relaxed) && target.starts_with(ZENOH_SESSION_TARGET)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_zenoh_session_messages_are_silenced_and_only_once_closing() {
        assert!(!silenced_while_closing("zenoh::api::session"));
        session_closing();
        assert!(silenced_while_closing("zenoh::api::session"));
        assert!(!silenced_while_closing("zenoh::net::runtime"));
        assert!(!silenced_while_closing("flotilla_world"));
    }
}
