//! `flotilla-bridge`: makes a Flotilla simulation visible to and
//! controllable from ROS 2.
//!
//! It is a Zenoh runtime with zenoh-plugin-ros2dds embedded as a static
//! plugin (namespace `/`, timestamping on, so that latched topics work),
//! plus an announcer that tells the plugin about every topic and service of
//! the simulation, so that they exist on DDS before a ROS node asks. The
//! data never passes through Flotilla code here: the world and the nodes
//! publish CDR on the ROS-facing keys and the plugin forwards it unchanged.

pub mod announce;
pub mod plugin_config;

use std::time::Duration;

use anyhow::Context;
use clap::Args;
use flotilla_messages::services::Service;
use flotilla_node_kit::args::{NodeArgs, Role};
use flotilla_node_kit::follow_world::DescriptionFollower;
use flotilla_wire::Keys;
use zenoh::internal::plugins::PluginsManager;
use zenoh::internal::runtime::RuntimeBuilder;

pub use plugin_config::Ros2ddsOptions;

/// The bridge's options.
#[derive(Debug, Clone, Args)]
pub struct BridgeArgs {
    /// DDS domain id of the ROS 2 side.
    #[arg(long, env = "ROS_DOMAIN_ID", default_value_t = 0)]
    pub domain: u32,
    /// ROS 2 distribution of the ROS 2 side (rolling, kilted, jazzy, iron,
    /// humble...): it decides how nodes are announced on ros_discovery_info.
    #[arg(long, env = "ROS_DISTRO", default_value = "jazzy")]
    pub ros_distro: String,
    /// Talk DDS with this host only.
    #[arg(long, env = "ROS_LOCALHOST_ONLY")]
    pub localhost_only: bool,
    /// Only route ROS names matching this regular expression.
    #[arg(long, value_name = "REGEX")]
    pub allow: Option<String>,
    /// Never route ROS names matching this regular expression.
    #[arg(long, value_name = "REGEX", conflicts_with = "allow")]
    pub deny: Option<String>,
    /// Prefix of the simulation's ROS-facing keys: the world's
    /// `properties.ros_prefix` / `--ros-prefix`.
    #[arg(long, env = "FLOTILLA_ROS_PREFIX", default_value = "")]
    pub ros_prefix: String,
    /// Name of the bridge's ROS node.
    #[arg(long, default_value = "flotilla_bridge")]
    pub node_name: String,
    /// Simulation id and Zenoh options.
    #[command(flatten)]
    pub node: NodeArgs,
}

impl BridgeArgs {
    /// The plugin options these arguments ask for.
    pub fn ros2dds_options(&self) -> Ros2ddsOptions {
        Ros2ddsOptions {
            domain: self.domain,
            node_name: self.node_name.clone(),
            localhost_only: self.localhost_only,
            allow: self.allow.clone(),
            deny: self.deny.clone(),
        }
    }
}

/// Every service the world serves, as (ROS name, ROS type).
fn services() -> Vec<(&'static str, &'static str)> {
    Service::ALL.iter().map(|s| (s.ros_name(), s.type_name())).collect()
}

/// Runs the bridge until `shutdown` completes. The caller must have set
/// `ROS_DISTRO` in the environment (the plugin reads it).
pub async fn run(args: BridgeArgs, shutdown: impl std::future::Future<Output = ()>) -> anyhow::Result<()> {
    flotilla_wire::keys::check_key_chunk("--sim", &args.node.sim).map_err(anyhow::Error::msg)?;
    let mut config = args.node.zenoh.zenoh_config(Role::Node)?;
    let plugin = plugin_config::plugin_json(&args.ros2dds_options()).to_string();
    let set = |config: &mut zenoh::Config, key: &str, value: &str| {
        config.insert_json5(key, value).map_err(|e| anyhow::anyhow!("Zenoh option {key} = {value}: {e}"))
    };
    // Latched (transient-local) topics are served from publication caches,
    // which need timestamps.
    set(&mut config, "timestamping/enabled", "true")?;
    set(&mut config, "plugins_loading/enabled", "true")?;
    set(&mut config, "plugins/ros2dds", &plugin)?;

    let mut plugins = PluginsManager::static_plugins_only();
    plugins.declare_static_plugin::<zenoh_plugin_ros2dds::ROS2Plugin, &str>("ros2dds", true);
    let mut runtime = RuntimeBuilder::new(config)
        .plugins_manager(plugins)
        .build()
        .await
        .map_err(|e| anyhow::anyhow!("cannot build the bridge's Zenoh runtime: {e}"))?;
    runtime.start().await.map_err(|e| anyhow::anyhow!("cannot start the bridge's Zenoh runtime: {e}"))?;
    tracing::info!(
        "ROS 2 bridge up: DDS domain {}, ROS_DISTRO {}, simulation {:?}",
        args.domain,
        args.ros_distro,
        args.node.sim
    );

    // The announcer is a session of its own: the plugin ignores
    // announcements carrying its own Zenoh id.
    let config = args.node.zenoh.zenoh_config(Role::Node)?;
    flotilla_node_kit::shared_memory::watch_if_enabled(&config);
    let session =
        zenoh::open(config).await.map_err(|e| anyhow::anyhow!("cannot open the announcer's Zenoh session: {e}"))?;
    let keys = Keys::new(&args.node.sim).with_ros_prefix(&args.ros_prefix);
    let result = announce_until(&session, &keys, shutdown).await;
    let _ = session.close().await;
    // The runtime and the plugin are not torn down here: dropping the
    // plugin's routes while the runtime closes trips an internal assertion
    // of zenoh 1.10. The process exits right after `run` returns (see
    // main), which releases everything at once.
    std::mem::forget(runtime);
    result
}

/// Keeps the announcements in step with the world until `shutdown`.
async fn announce_until(
    session: &zenoh::Session,
    keys: &Keys,
    shutdown: impl std::future::Future<Output = ()>,
) -> anyhow::Result<()> {
    tokio::pin!(shutdown);
    let (mut world, mut description) = tokio::select! {
        _ = &mut shutdown => return Ok(()),
        started = DescriptionFollower::start(session, keys) => started.context("following the world")?,
    };
    // Events say when the world changed; the periodic look catches a world
    // that restarted.
    world = world.looking_every(Duration::from_secs(2));
    let mut announcer = announce::Announcer::default();
    let mut revision = None;
    let services = services();
    loop {
        if revision != Some((description.revision, description.models.len())) {
            revision = Some((description.revision, description.models.len()));
            let surface = flotilla_plugins::surface::surface(&description, keys, &services);
            announcer.update(session, &surface).await;
            tracing::info!(
                "announcing {} topics, {} services and {} actions to ROS 2 (world revision {})",
                surface.topics.len(),
                surface.services.len(),
                surface.actions.len(),
                description.revision
            );
        }
        description = tokio::select! {
            biased;
            _ = &mut shutdown => return Ok(()),
            changed = world.changed() => changed,
        };
    }
}
