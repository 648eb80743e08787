//! One logging set-up for every binary: `RUST_LOG` if set, else the given
//! filter; colours only on a terminal (the launcher pipes children's logs).

/// Zenoh's own messages that are not news to a Flotilla user: a peer logs
/// "Unknown token" at ERROR for each liveliness token a router it lost
/// had declared for others, which is what a standby world's take-over
/// looks like from every node (the tokens come back with the new world);
/// and a session logs "Received Data for unknown expr_id" at ERROR for a
/// message that arrives for a key expression just undeclared, which peers
/// that stop (a view, a controller, a node) make the others see at the end
/// of clean runs (`tests/tests/launcher.rs`: a drive, a laser, one stop in
/// four under load, while each process still undeclares what it has before
/// it closes).
const QUIET_ZENOH: &str = "zenoh::net::routing::hat::peer::token=off,zenoh::api::session=off";

/// Initialises tracing on stderr.
pub fn init(default_filter: &str) {
    use std::io::IsTerminal;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::Layer;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| format!("{default_filter},{QUIET_ZENOH}").into());
    let ansi = std::io::stderr().is_terminal();
    let layer = tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_ansi(ansi);
    let layer = if ansi {
        layer.boxed()
    } else {
        // Under `flotilla run` each line is already prefixed with the node's name.
        layer.without_time().with_target(false).boxed()
    };
    tracing_subscriber::registry().with(layer.with_filter(filter)).init();
}
