//! `flotilla-building`: moves the Door plugins of a running world.

fn main() -> std::process::ExitCode {
    flotilla_node_kit::runtime::main(flotilla_building::server::BuildingServer::default())
}
