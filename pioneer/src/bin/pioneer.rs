//! `flotilla-pioneer`: every selected robot with a `Pioneer` plugin as an
//! emulated Pioneer on its TCP port (8101 and up).

use flotilla_pioneer::node::{PioneerArgs, PioneerServer, World};
use flotilla_plugins::pioneer::PioneerConfig;

fn main() -> std::process::ExitCode {
    flotilla_node_kit::runtime::main_with(&PioneerConfig::ROLE, |args: PioneerArgs, session, keys| {
        PioneerServer::new(args, Some(World { session: session.clone(), keys: keys.clone() }))
    })
}
