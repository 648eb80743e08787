//! `flotilla-drive`: serves the DiffDrive plugins of a running world.

use clap::Parser;
use flotilla_drive::node::{run, DriveNodeConfig};
use flotilla_node_kit::args::{open_session, shutdown_signal, NodeArgs, Role};
use flotilla_node_kit::node_id;
use flotilla_protocol::plugins::diff_drive::DiffDriveConfig;
use flotilla_protocol::Keys;

/// Drive node of a Flotilla simulation: turns cmd_vel into body velocities.
#[derive(Parser)]
#[command(name = "flotilla-drive", version)]
struct Args {
    /// Serve only models whose name matches this glob (e.g. `robot_*`).
    #[arg(long)]
    models: Option<String>,
    /// Serve only shard i of n (models split by a stable hash of their name).
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
    /// Prefix of every ROS-facing key (must match the world's).
    #[arg(long, default_value = "")]
    ros_prefix: String,
    /// Print the plugin role this binary serves (`<type>/<aspect>`, from
    /// the plugin registry) and exit.
    #[arg(long, hide = true)]
    served_role: bool,
    #[command(flatten)]
    node: NodeArgs,
}

fn main() -> std::process::ExitCode {
    flotilla_node_kit::zenoh_threads::configure();
    flotilla_node_kit::logging::init("info,zenoh=warn");
    let args = Args::parse();
    let role = DiffDriveConfig::DRIVE_ROLE;
    if args.served_role {
        println!("{}/{}", role.plugin_type, role.aspect);
        return std::process::ExitCode::SUCCESS;
    }
    let result = (|| -> anyhow::Result<()> {
        let selection = flotilla_protocol::selection::Selection::new(args.models.as_deref(), args.shard.as_deref())?;
        let config = DriveNodeConfig {
            keys: Keys::new(&args.node.sim).with_ros_prefix(&args.ros_prefix),
            node_id: node_id(role.aspect),
            selection,
        };
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build()?;
        runtime.block_on(async {
            let session = open_session(&args.node.zenoh, Role::Node).await?;
            let result = run(session.clone(), config, shutdown_signal()).await;
            let _ = session.close().await;
            result
        })
    })();
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("flotilla-drive: {e:#}");
            std::process::ExitCode::from(2)
        }
    }
}
