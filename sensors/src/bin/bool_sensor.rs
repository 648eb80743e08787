//! `flotilla-bool-sensor`: serves the BoolSensor plugins of a running world.

fn main() -> std::process::ExitCode {
    flotilla_node_kit::runtime::main(flotilla_sensors::contact::node::BoolSensorServer::default())
}
