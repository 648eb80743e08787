//! `flotilla-sonar`: serves the Sonar plugins of a running world.

fn main() -> std::process::ExitCode {
    flotilla_node_kit::runtime::main(flotilla_sensors::sonar::node::SonarServer::default())
}
