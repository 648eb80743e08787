//! `flotilla-laser`: serves the Laser plugins of a running world.

fn main() -> std::process::ExitCode {
    flotilla_sensors::cli::main(flotilla_sensors::laser::node::LaserServer::default())
}
