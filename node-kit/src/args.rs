//! Command-line arguments every Flotilla binary shares.

use clap::Args;
use flotilla_wire::keys::DEFAULT_SIM;

use crate::error::{Error, Result};

/// The loopback endpoint the world listens on when nothing else is said.
/// Flotilla's own port, so it never clashes with a zenohd on 7447.
pub const DEFAULT_ENDPOINT: &str = "tcp/127.0.0.1:7450";

/// Zenoh connection options, flattened into every binary.
#[derive(Debug, Clone, Args, Default)]
pub struct ZenohArgs {
    /// Endpoint to connect to (repeatable), e.g. `tcp/10.0.0.5:7450`.
    /// Defaults to `$FLOTILLA_ENDPOINT` (set by `flotilla run` for the
    /// programs it starts), else the world's loopback endpoint.
    #[arg(long = "connect", short = 'e', value_name = "ENDPOINT", env = "FLOTILLA_ENDPOINT", value_delimiter = ',')]
    pub connect: Vec<String>,
    /// Endpoint to listen on (repeatable). The world defaults to
    /// `tcp/127.0.0.1:7450`.
    #[arg(long = "listen", short = 'l', value_name = "ENDPOINT")]
    pub listen: Vec<String>,
    /// A Zenoh JSON5 configuration file; the options above override it.
    #[arg(long = "config", value_name = "FILE")]
    pub config: Option<std::path::PathBuf>,
    /// Zenoh mode: `router`, `peer` or `client`. The world defaults to
    /// `router`, every other node to `client`.
    #[arg(long = "mode", value_name = "MODE")]
    pub mode: Option<String>,
    /// Pass every message through the socket, never Zenoh's shared memory
    /// (which is on by default where this process may lock memory). For a
    /// machine where many simulations start and stop side by side, where
    /// Zenoh 1.10 can remove a process's pool while it is in use
    /// (docs/several-machines.md, "Shared memory on one machine"). Also
    /// `$FLOTILLA_NO_SHARED_MEMORY=1`, which `flotilla run` passes on to
    /// the programs it starts.
    #[arg(
        long = "no-shared-memory",
        env = "FLOTILLA_NO_SHARED_MEMORY",
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    pub no_shared_memory: bool,
}

/// Arguments of every node: the simulation id and the Zenoh options.
#[derive(Debug, Clone, Args)]
pub struct NodeArgs {
    /// Simulation id: the `<sim>` in `flotilla/<sim>/...`.
    #[arg(long, default_value = DEFAULT_SIM, env = "FLOTILLA_SIM")]
    pub sim: String,
    /// Zenoh options.
    #[command(flatten)]
    pub zenoh: ZenohArgs,
}

/// What role a process plays, which decides its Zenoh defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The world: listens on the default endpoint, routes for everyone.
    World,
    /// Any other node: connects to the world's endpoint.
    Node,
}

/// How long, in µs, a world beside a standby waits for room on a link
/// before it closes it (Zenoh's default: 5 s); see
/// [`ZenohArgs::zenoh_config`].
const BLOCKED_LINK_CLOSES_AFTER_US: u64 = 500_000;

impl ZenohArgs {
    /// Builds the Zenoh configuration: the file if given, then multicast
    /// scouting off, then mode, endpoints and role defaults.
    pub fn zenoh_config(&self, role: Role) -> Result<zenoh::Config> {
        let mut config = match &self.config {
            Some(path) => zenoh::Config::from_file(path)
                .map_err(|e| Error::Config(format!("cannot read {}: {e}", path.display())))?,
            None => zenoh::Config::default(),
        };
        let set = set_option;
        // Loopback has no multicast here and in many containers; Flotilla's
        // single-machine default needs none.
        set(&mut config, "scouting/multicast/enabled", "false".into())?;
        shared_memory(&mut config, self.config.is_none())?;
        if self.no_shared_memory {
            set(&mut config, "transport/shared_memory/enabled", "false".into())?;
        }
        if self.config.is_none() && role == Role::World && !self.connect.is_empty() {
            // A world beside a standby (or the standby): every node that
            // reads a message from a pool keeps it mapped, and locked,
            // after its owner died, so each world process a take-over
            // brings would add its pool to every node (8 MB a take-over,
            // without end). Its messages go through the socket instead.
            set(&mut config, "transport/shared_memory/enabled", "false".into())?;
            // Zenoh routes a node's messages to the other world through
            // this one (the node sends through one of its routers), and a
            // lockstep node's messages must not be dropped: while the link
            // between the worlds is cut but not yet closed, each one that
            // cannot go on holds up everything this world reads from that
            // node. Closing such a link after 0.5 s instead of Zenoh's 5 s
            // keeps the nodes' words in time for the fence
            // (`flotilla_world::fence`), which pauses a world that hears
            // too few of them for 2 s.
            set(
                &mut config,
                "transport/link/tx/queue/congestion_control/block/wait_before_close",
                BLOCKED_LINK_CLOSES_AFTER_US.to_string(),
            )?;
        }
        let mode = match (&self.mode, role) {
            (Some(mode), _) => mode.clone(),
            (None, Role::World) => "router".into(),
            (None, Role::Node) => "client".into(),
        };
        if !matches!(mode.as_str(), "router" | "peer" | "client") {
            return Err(Error::Config(format!("--mode must be router, peer or client (got {mode:?})")));
        }
        set(&mut config, "mode", format!("{mode:?}"))?;
        let listen = match (self.listen.is_empty(), role) {
            (false, _) => self.listen.clone(),
            (true, Role::World) if self.config.is_none() => vec![DEFAULT_ENDPOINT.to_string()],
            (true, _) => vec![],
        };
        if !listen.is_empty() {
            set(&mut config, "listen/endpoints", json_list(&listen))?;
        }
        let connect = match (self.connect.is_empty(), role) {
            (false, _) => self.connect.clone(),
            (true, Role::Node) if self.config.is_none() => vec![DEFAULT_ENDPOINT.to_string()],
            (true, _) => vec![],
        };
        if !connect.is_empty() {
            set(&mut config, "connect/endpoints", json_list(&connect))?;
            // A node started before the world keeps trying instead of failing.
            set(&mut config, "connect/timeout_ms", "-1".into())?;
            set(&mut config, "connect/exit_on_failure", "false".into())?;
        }
        Ok(config)
    }

    /// The endpoint other programs should connect to, for display.
    pub fn advertised_endpoint(&self) -> String {
        self.listen.first().cloned().unwrap_or_else(|| DEFAULT_ENDPOINT.to_string())
    }
}

/// Where a node started beside the world as a loopback peer listens: a free
/// port, on loopback only.
pub const LOOPBACK_PEER_LISTEN: &str = "tcp/127.0.0.1:0";

/// The Zenoh arguments of a node that `flotilla run` or `flotilla bench`
/// starts on the world's machine: a peer that connects to the world and
/// listens on a loopback port of its own. Zenoh's gossip tells the peers
/// where the others listen and they connect to each other, so a scan goes
/// from the laser node to the controller using it without passing through
/// the world's router, which as a client's router copied every one (the
/// world's CPU fell by a quarter to a third). A node started by hand stays a client unless told
/// otherwise.
pub fn loopback_peer_args(world_endpoint: &str) -> Vec<String> {
    ["--connect", world_endpoint, "--mode", "peer", "--listen", LOOPBACK_PEER_LISTEN]
        .into_iter()
        .map(String::from)
        .collect()
}

/// Zenoh's shared-memory pool of a process when no configuration file says
/// otherwise, bytes: room for the largest messages office-50 makes (a laser
/// node's batch of one step's scans for a recorder, about 0.4 MB) several
/// times over, and a quarter of Zenoh's 16 MiB default, since each process
/// locks its own pool and every pool it reads from, and a larger pool made
/// recording no faster; a message that finds no room goes through the
/// socket.
const SHARED_MEMORY_POOL_BYTES: usize = 4 << 20;

/// Sets up Zenoh's shared memory (see [`crate::shared_memory`]): off where
/// this process may not lock memory without limit, else as the
/// configuration file says or, without one (`defaults`), on with
/// Flotilla's pool size.
fn shared_memory(config: &mut zenoh::Config, defaults: bool) -> Result<()> {
    if !crate::shared_memory::memory_lockable() {
        tracing::debug!(
            "Zenoh's shared memory off: this process may not lock memory (no CAP_IPC_LOCK, ulimit -l limited)"
        );
        return set_option(config, "transport/shared_memory/enabled", "false".into());
    }
    if defaults {
        let pool = SHARED_MEMORY_POOL_BYTES.to_string();
        set_option(config, "transport/shared_memory/transport_optimization/pool_size", pool)?;
    }
    Ok(())
}

fn set_option(config: &mut zenoh::Config, key: &str, value: String) -> Result<()> {
    config.insert_json5(key, &value).map_err(|e| Error::Config(format!("option {key} = {value}: {e}")))
}

fn json_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| format!("{s:?}")).collect();
    format!("[{}]", quoted.join(","))
}

/// Opens a Zenoh session for a node, with a clear error.
pub async fn open_session(args: &ZenohArgs, role: Role) -> Result<zenoh::Session> {
    let config = args.zenoh_config(role)?;
    crate::shared_memory::watch_if_enabled(&config);
    zenoh::open(config).await.map_err(Error::zenoh("open a Zenoh session for", "this node"))
}

/// How long a process waits at a clean stop, once its subscriptions are
/// gone, for what its peers had already sent to arrive before it closes its
/// session.
pub const DRAIN: std::time::Duration = std::time::Duration::from_millis(200);

/// Closes a process's session at a clean stop. Ending `runtime` ends the
/// tasks that hold the process's subscriptions, which undeclares them so
/// the peers stop sending; after [`DRAIN`] for the messages already in
/// flight, the session closes.
pub fn close_after_drain(runtime: tokio::runtime::Runtime, session: zenoh::Session) {
    use zenoh::Wait;
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    std::thread::sleep(DRAIN);
    let _ = session.close().wait();
}

/// Resolves when the process is asked to stop: Ctrl-C (SIGINT) or SIGTERM,
/// which is what `flotilla run` sends its children.
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_world_connected_to_another_uses_no_shared_memory() {
        let enabled = |connect: &[&str]| {
            let args = ZenohArgs { connect: connect.iter().map(|c| c.to_string()).collect(), ..Default::default() };
            args.zenoh_config(Role::World).unwrap().get_json("transport/shared_memory/enabled").unwrap()
        };
        assert_eq!(enabled(&["tcp/127.0.0.1:7451"]), "false", "a world and its standby");
        let alone = if crate::shared_memory::memory_lockable() { "true" } else { "false" };
        assert_eq!(enabled(&[]), alone, "a world alone");
    }

    #[test]
    fn a_world_connected_to_another_closes_a_blocked_link_after_half_a_second() {
        let wait = |connect: &[&str]| {
            let args = ZenohArgs { connect: connect.iter().map(|c| c.to_string()).collect(), ..Default::default() };
            let config = args.zenoh_config(Role::World).unwrap();
            config.get_json("transport/link/tx/queue/congestion_control/block/wait_before_close").unwrap()
        };
        assert_eq!(wait(&["tcp/127.0.0.1:7451"]), "500000", "a world and its standby");
        assert_eq!(wait(&[]), "5000000", "a world alone keeps Zenoh's default");
    }

    #[test]
    fn world_listens_and_nodes_connect_by_default() {
        let world = ZenohArgs::default().zenoh_config(Role::World).unwrap();
        assert!(world.get_json("listen/endpoints").unwrap().contains("127.0.0.1:7450"));
        assert!(world.get_json("mode").unwrap().contains("router"));
        let node = ZenohArgs::default().zenoh_config(Role::Node).unwrap();
        assert!(node.get_json("connect/endpoints").unwrap().contains("127.0.0.1:7450"));
        assert_eq!(node.get_json("scouting/multicast/enabled").unwrap(), "false");
    }

    #[test]
    fn a_node_started_beside_the_world_is_a_loopback_peer() {
        #[derive(clap::Parser)]
        struct Node {
            #[command(flatten)]
            zenoh: ZenohArgs,
        }
        let argv = std::iter::once("node".to_string()).chain(loopback_peer_args("tcp/127.0.0.1:7999"));
        let node = <Node as clap::Parser>::try_parse_from(argv).unwrap();
        let config = node.zenoh.zenoh_config(Role::Node).unwrap();
        assert_eq!(config.get_json("mode").unwrap(), "\"peer\"");
        assert_eq!(config.get_json("connect/endpoints").unwrap(), "[\"tcp/127.0.0.1:7999\"]");
        assert_eq!(config.get_json("listen/endpoints").unwrap(), "[\"tcp/127.0.0.1:0\"]");
        // Gossip is how the peers find each other without multicast.
        assert_eq!(config.get_json("scouting/multicast/enabled").unwrap(), "false");
        assert_ne!(config.get_json("scouting/gossip/enabled").unwrap(), "false");
    }

    #[test]
    fn shared_memory_is_on_with_a_small_pool_only_where_memory_can_be_locked() {
        let config = ZenohArgs::default().zenoh_config(Role::Node).unwrap();
        let enabled = config.get_json("transport/shared_memory/enabled").unwrap();
        let pool = config.get_json("transport/shared_memory/transport_optimization/pool_size").unwrap();
        if crate::shared_memory::memory_lockable() {
            assert_eq!(enabled, "true");
            assert_eq!(pool, (4 * 1024 * 1024).to_string());
        } else {
            assert_eq!(enabled, "false", "a pool this process cannot lock would drop the messages sent in it");
        }
    }

    #[test]
    fn no_shared_memory_turns_it_off() {
        #[derive(clap::Parser)]
        struct Node {
            #[command(flatten)]
            zenoh: ZenohArgs,
        }
        let enabled = |argv: &[&str]| {
            let node = <Node as clap::Parser>::try_parse_from(argv).unwrap();
            node.zenoh.zenoh_config(Role::Node).unwrap().get_json("transport/shared_memory/enabled").unwrap()
        };
        assert_eq!(enabled(&["node", "--no-shared-memory"]), "false");
        // Without the flag, `$FLOTILLA_NO_SHARED_MEMORY` decides when set
        // (the test suite sets it), else whether memory can be locked.
        if std::env::var_os("FLOTILLA_NO_SHARED_MEMORY").is_none() {
            assert_eq!(enabled(&["node"]), crate::shared_memory::memory_lockable().to_string());
        }
    }

    #[test]
    fn a_configuration_file_keeps_its_own_shared_memory_pool() {
        let file = std::env::temp_dir().join(format!("flotilla-shm-pool-{}.json5", std::process::id()));
        let options = "{transport: {shared_memory: {transport_optimization: {pool_size: 33554432}}}}";
        std::fs::write(&file, options).unwrap();
        let args = ZenohArgs { config: Some(file.clone()), ..Default::default() };
        let config = args.zenoh_config(Role::Node).unwrap();
        std::fs::remove_file(&file).unwrap();
        let pool = config.get_json("transport/shared_memory/transport_optimization/pool_size").unwrap();
        assert_eq!(pool, "33554432");
        let enabled = config.get_json("transport/shared_memory/enabled").unwrap();
        assert_eq!(
            enabled,
            crate::shared_memory::memory_lockable().to_string(),
            "off wherever memory cannot be locked"
        );
    }

    #[test]
    fn bad_mode_is_rejected() {
        let args = ZenohArgs { mode: Some("satellite".into()), ..Default::default() };
        assert!(args.zenoh_config(Role::Node).unwrap_err().to_string().contains("satellite"));
    }
}
