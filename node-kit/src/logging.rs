//! One logging set-up for every binary: `RUST_LOG` if set, else the given
//! filter; colours only on a terminal (the launcher pipes children's logs).

/// Initialises tracing on stderr.
pub fn init(default_filter: &str) {
    use std::io::IsTerminal;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| default_filter.into());
    let ansi = std::io::stderr().is_terminal();
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(ansi);
    if ansi {
        builder.init();
    } else {
        // Under `flotilla run` each line is already prefixed with the node's name.
        builder.without_time().with_target(false).init();
    }
}
