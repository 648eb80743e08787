//! `flotilla-odom`: serves the odometry of the DiffDrive plugins of a running world.

fn main() -> std::process::ExitCode {
    flotilla_node_kit::runtime::main(flotilla_sensors::odom::node::OdomServer::default())
}
