//! One logging set-up for every binary: `RUST_LOG` if set, else the given
//! filter; colours only on a terminal (the launcher pipes children's logs).

/// Zenoh's own messages that are not news to a Flotilla user: a peer logs
/// "Unknown token" at ERROR for each liveliness token a router it lost
/// had declared for others, which is what a standby world's take-over
/// looks like from every node (the tokens come back with the new world).
const QUIET_ZENOH: &str = "zenoh::net::routing::hat::peer::token=off";

/// Initialises tracing on stderr.
pub fn init(default_filter: &str) {
    use std::io::IsTerminal;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| format!("{default_filter},{QUIET_ZENOH}").into());
    let ansi = std::io::stderr().is_terminal();
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(ansi);
    if ansi {
        builder.init();
    } else {
        // Under `flotilla run` each line is already prefixed with the node's name.
        builder.without_time().with_target(false).init();
    }
}
