//! `flotilla-transitions`: the map-transition manager of a world with maps.

use flotilla_transitions::node::TransitionServer;

fn main() -> std::process::ExitCode {
    flotilla_node_kit::runtime::main(TransitionServer::default())
}
