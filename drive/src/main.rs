//! `flotilla-drive`: serves the DiffDrive plugins of a running world.

fn main() -> std::process::ExitCode {
    flotilla_node_kit::runtime::main(flotilla_drive::server::DriveServer::default())
}
