//! `flotilla-crowd`: walks the Pedestrian plugins of a running world.

fn main() -> std::process::ExitCode {
    flotilla_node_kit::runtime::main(flotilla_crowd::server::CrowdServer::default())
}
