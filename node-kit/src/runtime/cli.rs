//! The command line every plugin node binary shares.

use clap::{CommandFactory, FromArgMatches, Parser};
use flotilla_plugins::selection::Selection;
use flotilla_wire::keys::check_key_chunk;
use flotilla_wire::Keys;

use super::plugin::NodePlugin;
use super::serve::serve;
use crate::args::{close_after_drain, open_session, shutdown_signal, NodeArgs, Role};
use crate::node_id;

/// Options of every plugin node.
#[derive(Parser, Debug)]
pub struct PluginNodeArgs {
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
    /// plugins whose outputs are cheap ignore it). Default: one per core.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=256))]
    pub threads: Option<u64>,
    /// A recorder records this run from its first state (`flotilla run
    /// --record` says so): join the lockstep barrier only once this node's
    /// batches reach it, so that its answers to the first state are in the
    /// recording.
    #[arg(long)]
    pub recorded: bool,
    /// Print the plugin roles this binary serves (`<type>/<aspect>`, from
    /// the plugin registry), one a line, and exit.
    #[arg(long, hide = true)]
    pub served_role: bool,
    /// Simulation id and Zenoh options.
    #[command(flatten)]
    pub node: NodeArgs,
}

/// Parses arguments, opens Zenoh and serves `plugin`'s role (which names
/// the binary and the node kind) until SIGINT/SIGTERM; the process exit
/// code says how it went.
pub fn main<P: NodePlugin>(plugin: P) -> std::process::ExitCode {
    let role = plugin.role();
    crate::zenoh_threads::configure();
    crate::logging::init("info,zenoh=warn");
    let command = PluginNodeArgs::command()
        .name(role.binary)
        .version(env!("CARGO_PKG_VERSION"))
        .about(format!("Serves the {} plugins of a running Flotilla world ({} side).", role.plugin_type, role.aspect));
    let args = PluginNodeArgs::from_arg_matches(&command.get_matches()).unwrap_or_else(|e| e.exit());
    if args.served_role {
        for role in std::iter::once(role).chain(plugin.also_serves()) {
            println!("{}/{}", role.plugin_type, role.aspect);
        }
        return std::process::ExitCode::SUCCESS;
    }
    match run(&args, plugin) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}: {e:#}", role.binary);
            std::process::ExitCode::from(2)
        }
    }
}

fn run<P: NodePlugin>(args: &PluginNodeArgs, plugin: P) -> anyhow::Result<()> {
    run_made(args, plugin.role(), |_, _| plugin)
}

/// Runs the plugin that `make` builds from the open session and the keys.
fn run_made<P: NodePlugin>(
    args: &PluginNodeArgs,
    role: &'static flotilla_plugins::registry::Role,
    make: impl FnOnce(&zenoh::Session, &Keys) -> P,
) -> anyhow::Result<()> {
    let selection = Selection::new(args.models.as_deref(), args.shard.as_deref())?;
    check_key_chunk("--sim", &args.node.sim).map_err(anyhow::Error::msg)?;
    let keys = Keys::new(&args.node.sim).with_ros_prefix(&args.ros_prefix);
    let node = node_id(role.aspect);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build()?;
    let (session, result) = runtime.block_on(async {
        let session = open_session(&args.node.zenoh, Role::Node).await?;
        let mut plugin = make(&session, &keys);
        if let Some(threads) = args.threads {
            plugin.set_threads(threads as usize);
        }
        let result = serve(session.clone(), keys, node, selection, plugin, args.recorded, shutdown_signal()).await;
        Ok::<_, anyhow::Error>((session, result))
    })?;
    close_after_drain(runtime, session);
    Ok(result?)
}

/// A node binary with options of its own (`X`, flattened beside the
/// shared ones) whose plugin needs the Zenoh session (e.g. to call the
/// world's control services): `make` builds it once the session is open.
pub fn main_with<X: clap::Args, P: NodePlugin>(
    role: &'static flotilla_plugins::registry::Role,
    make: impl FnOnce(X, &zenoh::Session, &Keys) -> P,
) -> std::process::ExitCode {
    #[derive(Parser)]
    struct WithExtra<X: clap::Args> {
        #[command(flatten)]
        shared: PluginNodeArgs,
        #[command(flatten)]
        extra: X,
    }
    crate::zenoh_threads::configure();
    crate::logging::init("info,zenoh=warn");
    let command = WithExtra::<X>::command()
        .name(role.binary)
        .version(env!("CARGO_PKG_VERSION"))
        .about(format!("Serves the {} plugins of a running Flotilla world ({} side).", role.plugin_type, role.aspect));
    let args = WithExtra::<X>::from_arg_matches(&command.get_matches()).unwrap_or_else(|e| e.exit());
    if args.shared.served_role {
        println!("{}/{}", role.plugin_type, role.aspect);
        return std::process::ExitCode::SUCCESS;
    }
    let extra = args.extra;
    match run_made(&args.shared, role, |session, keys| make(extra, session, keys)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}: {e:#}", role.binary);
            std::process::ExitCode::from(2)
        }
    }
}
