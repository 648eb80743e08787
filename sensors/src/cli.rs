//! The command line shared by the sensor binaries.

use clap::Parser;
use flotilla_node_kit::args::{open_session, shutdown_signal, NodeArgs, Role};
use flotilla_node_kit::node_id;
use flotilla_protocol::Keys;

use crate::serve::{serve, PluginServer, Selection};

/// Options of every sensor node.
#[derive(Parser)]
pub struct SensorArgs {
    /// Serve only models whose name matches this glob (e.g. `robot_*`).
    #[arg(long)]
    pub models: Option<String>,
    /// Serve only shard i of n (models split by a stable hash of their name).
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Prefix of every ROS-facing key (must match the world's).
    #[arg(long, default_value = "")]
    pub ros_prefix: String,
    /// Threads that compute the outputs due at one step (the laser's scans;
    /// other sensors ignore it). Default: one per core.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=256))]
    pub threads: Option<u64>,
    /// Print the plugin role this binary serves (`<type>/<aspect>`, from
    /// the plugin registry) and exit.
    #[arg(long, hide = true)]
    pub served_role: bool,
    /// Simulation id and Zenoh options.
    #[command(flatten)]
    pub node: NodeArgs,
}

/// Parses arguments, opens Zenoh and serves `server`'s role (which names
/// the binary and the node kind) until SIGINT/SIGTERM; the process exit
/// code says how it went.
pub fn main<S: PluginServer>(mut server: S) -> std::process::ExitCode {
    let role = server.role();
    flotilla_node_kit::zenoh_threads::configure();
    flotilla_node_kit::logging::init("info,zenoh=warn");
    let args = SensorArgs::parse();
    if args.served_role {
        println!("{}/{}", role.plugin_type, role.aspect);
        return std::process::ExitCode::SUCCESS;
    }
    if let Some(threads) = args.threads {
        server.set_threads(threads as usize);
    }
    let result = (|| -> anyhow::Result<()> {
        let selection = Selection::new(args.models.as_deref(), args.shard.as_deref())?;
        flotilla_protocol::keys::check_key_chunk("--sim", &args.node.sim).map_err(anyhow::Error::msg)?;
        let keys = Keys::new(&args.node.sim).with_ros_prefix(&args.ros_prefix);
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build()?;
        runtime.block_on(async {
            let session = open_session(&args.node.zenoh, Role::Node).await?;
            let result = serve(session.clone(), keys, node_id(role.aspect), selection, server, shutdown_signal()).await;
            let _ = session.close().await;
            result
        })
    })();
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}: {e:#}", role.binary);
            std::process::ExitCode::from(2)
        }
    }
}
