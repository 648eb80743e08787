//! `flotilla-bumper`: serves the Bumper plugins of a running world.

fn main() -> std::process::ExitCode {
    flotilla_node_kit::runtime::main(flotilla_sensors::contact::node::BumperServer::default())
}
