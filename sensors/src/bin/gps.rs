//! `flotilla-gps`: serves the Gps plugins of a running world.

fn main() -> std::process::ExitCode {
    flotilla_node_kit::runtime::main(flotilla_sensors::gps::node::GpsServer::default())
}
