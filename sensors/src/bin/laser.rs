//! `flotilla-laser`: serves the Laser plugins of a running world.

fn main() -> std::process::ExitCode {
    flotilla_node_kit::runtime::main(flotilla_sensors::laser::node::LaserServer::default())
}
