//! `flotilla-bridge`: the ROS 2 bridge of a Flotilla simulation.

use clap::Parser;
use flotilla_bridge::BridgeArgs;

/// Makes a Flotilla simulation visible to and controllable from ROS 2.
#[derive(Parser)]
#[command(name = "flotilla-bridge", version)]
struct Cli {
    #[command(flatten)]
    bridge: BridgeArgs,
}

fn main() {
    flotilla_node_kit::logging::init("info,zenoh=warn,zenoh_plugin_ros2dds=warn");
    let cli = Cli::parse();
    // The plugin reads ROS_DISTRO from the environment; set it before any
    // thread exists.
    std::env::set_var("ROS_DISTRO", &cli.bridge.ros_distro);
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("flotilla-bridge: cannot start the async runtime: {e}");
            std::process::exit(2);
        }
    };
    let result = runtime.block_on(flotilla_bridge::run(cli.bridge, flotilla_node_kit::args::shutdown_signal()));
    // Exit without dropping the async runtime: its tasks include the
    // plugin's, whose teardown is not clean (see flotilla_bridge::run).
    match result {
        Ok(()) => std::process::exit(0),
        Err(e) => {
            eprintln!("flotilla-bridge: {e:#}");
            std::process::exit(2)
        }
    }
}
