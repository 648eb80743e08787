//! `flotilla view`: the live view of a running simulation in the browser
//! (see the `flotilla-view` crate).

use clap::Args;
use flotilla_node_kit::args::{close_after_drain, open_session, shutdown_signal, NodeArgs, Role};
use flotilla_wire::Keys;

/// Where the page is served by default.
pub const DEFAULT_VIEW_ADDR: &str = "127.0.0.1:8080";

/// `flotilla view`.
#[derive(Args, Debug)]
pub struct ViewArgs {
    /// Address to serve the page on.
    #[arg(long, default_value = DEFAULT_VIEW_ADDR, value_name = "HOST:PORT")]
    pub addr: String,
    /// Prefix of the world's ROS-facing keys, if it has one (for scans).
    #[arg(long, default_value = "")]
    pub ros_prefix: String,
    #[command(flatten)]
    pub node: NodeArgs,
}

/// Serves the view until Ctrl-C or SIGTERM.
pub fn view(args: ViewArgs) -> anyhow::Result<()> {
    let keys = Keys::new(&args.node.sim).with_ros_prefix(&args.ros_prefix);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let (session, served) = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(&args.addr)
            .await
            .map_err(|e| anyhow::anyhow!("cannot serve the view on {}: {e} (choose another with --addr)", args.addr))?;
        let session = open_session(&args.node.zenoh, Role::Node).await?;
        eprintln!("flotilla view: waiting for the world (sim \"{}\")", args.node.sim);
        let live = flotilla_view::live::follow(session.clone(), keys.clone()).await?;
        eprintln!("flotilla view: open http://{}/", args.addr);
        let served = flotilla_view::server::serve(listener, live, session.clone(), keys, shutdown_signal()).await;
        anyhow::Ok((session, served))
    })?;
    // The tasks that follow the simulation hold its subscriptions.
    close_after_drain(runtime, session);
    served
}
