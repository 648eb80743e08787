//! `flotilla-imu`: serves the Imu plugins of a running world.

fn main() -> std::process::ExitCode {
    flotilla_node_kit::runtime::main(flotilla_sensors::imu::node::ImuServer::default())
}
