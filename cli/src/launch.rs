//! `flotilla run`: start the world and every node its plugins need as child
//! processes, restart any that crashes, show a live status line, stop
//! everything cleanly on Ctrl-C or SIGTERM.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use flotilla_node_kit::args::{
    loopback_peer_args, open_session, shutdown_signal, NodeArgs, Role, ZenohArgs, DEFAULT_ENDPOINT,
};
use flotilla_plugins::registry::binaries_for;
use flotilla_record::bag::ChunkCompression;
use flotilla_wire::codec::decode;
use flotilla_wire::world_to_nodes::WorldStatus;
use flotilla_wire::Keys;
use flotilla_world_file::{load_world, WorldSpec};

use crate::status_line::{format_status, Console};

mod children;
pub(crate) mod start_gate;
use children::{look_after, start, stop_all, supervised, Supervised};
use start_gate::{
    batches_wanted, participants_joined, recorder_listens, start_wait, StartGate, RECORDER_LISTENS_WITHIN,
};

/// Arguments of `flotilla run`.
#[derive(clap::Args)]
pub struct RunArgs {
    /// The Flatland world file.
    world: PathBuf,
    /// Clock mode: realtime, fast, lockstep or external. In lockstep mode the
    /// world starts paused and steps once every node has joined the barrier.
    #[arg(long)]
    clock: Option<flotilla_wire::control::ClockMode>,
    /// Real-time factor in realtime mode (2.0 = twice as fast as real time).
    #[arg(long)]
    rate: Option<f64>,
    /// World seed for every random generator.
    #[arg(long)]
    seed: Option<u64>,
    /// Prefix of every ROS-facing key.
    #[arg(long)]
    ros_prefix: Option<String>,
    /// Also start the ROS 2 bridge (`flotilla-bridge`), so that rviz2, Nav2
    /// and the ros2 CLI see the simulation. It reads ROS_DISTRO,
    /// ROS_DOMAIN_ID and CYCLONEDDS_URI from the environment.
    #[arg(long)]
    ros: bool,
    /// DDS domain of the ROS 2 bridge (default: $ROS_DOMAIN_ID, else 0).
    #[arg(long, value_name = "ID", requires = "ros")]
    ros_domain: Option<u32>,
    /// A directory spawn requests may load model files from, besides the
    /// world file's directory (repeatable).
    #[arg(long = "model-dir", value_name = "DIR")]
    model_dirs: Vec<PathBuf>,
    /// Another program to start and supervise with the simulation
    /// (repeatable; run with `sh -c`, with FLOTILLA_ENDPOINT and FLOTILLA_SIM set).
    #[arg(long = "exec", value_name = "COMMAND")]
    exec: Vec<String>,
    /// Stop everything after this many wall seconds.
    #[arg(long = "for", value_name = "SECONDS")]
    for_s: Option<f64>,
    /// Stop everything once every `--exec` program has finished
    /// successfully: a recorded run (`--record`) then ends with its
    /// controller.
    #[arg(long, requires = "exec")]
    until_exec: bool,
    /// Serve the live view in the browser (`flotilla view`), on this
    /// address or 127.0.0.1:8080.
    #[arg(long, value_name = "HOST:PORT", num_args = 0..=1, default_missing_value = crate::view::DEFAULT_VIEW_ADDR)]
    view: Option<String>,
    /// Record every ROS-facing topic to this MCAP file while the world
    /// runs (`flotilla record`).
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
    /// How `--record` compresses the file's chunks: none, lz4 or zstd
    /// (`flotilla record --compression`).
    #[arg(long, value_name = "NAME", default_value = "none", requires = "record")]
    record_compression: ChunkCompression,
    /// Make every robot an emulated Pioneer on a TCP port (8101 and up), as
    /// AMRISim does: `flotilla-pioneer --every-robot`. Robots whose model
    /// has a `Pioneer` entry get one without this.
    #[arg(long)]
    pioneer: bool,
    /// An option for `flotilla-pioneer` (repeatable), e.g.
    /// `--pioneer-arg=--robot-factory=configs/pioneer/p3dx.model.yaml`;
    /// starts it even if no robot has a `Pioneer` entry.
    #[arg(long = "pioneer-arg", value_name = "ARG", allow_hyphen_values = true)]
    pioneer_args: Vec<String>,
    /// Resume the world from this checkpoint (`flotilla checkpoint save`)
    /// instead of from the world file's start; nodes start afresh.
    #[arg(long, value_name = "FILE")]
    from_checkpoint: Option<PathBuf>,
    /// Save the world to this file every `--checkpoint-every` wall seconds;
    /// a world restarted after a crash resumes from it, and so does the next
    /// `flotilla run` given it (delete it to start afresh).
    #[arg(long, value_name = "FILE", requires = "checkpoint_every")]
    checkpoint: Option<PathBuf>,
    /// Wall seconds between two checkpoints (with `--checkpoint`).
    #[arg(long, value_name = "SECONDS", requires = "checkpoint")]
    checkpoint_every: Option<f64>,
    /// Run a standby world beside the world (`flotilla-world --standby`):
    /// when the world crashes, the standby takes over within a second from
    /// the world's last state, and the nodes carry on; the crashed world,
    /// started again, stands by in turn (docs/checkpoints.md).
    #[arg(long)]
    standby_world: bool,
    /// Where the standby world listens (default: the world's endpoint with
    /// the next port).
    #[arg(long, value_name = "ENDPOINT", requires = "standby_world")]
    standby_listen: Option<String>,
    /// Lockstep participants besides the nodes launched to wait for before
    /// the clock starts: a lockstep controller started with `--exec` (or
    /// by hand) then sees the world from step 0, as the nodes do.
    #[arg(long, value_name = "N", default_value_t = 0)]
    participants: usize,
    /// Serve a role's plugins with another program instead of Flotilla's
    /// own node (repeatable): `laser=python3 my_laser.py`, the role being
    /// the node's name without `flotilla-` (drive, odom, laser, sonar, …).
    /// The program runs under `sh -c` with FLOTILLA_ENDPOINT and
    /// FLOTILLA_SIM set, as a node: the clock waits for it to join, and it
    /// is stopped and restarted as the nodes are.
    #[arg(long = "replace", value_name = "ROLE=COMMAND")]
    replace: Vec<String>,
    /// Start the nodes only once the `--participants` have joined the
    /// barrier: for a participant that must see every node's first
    /// outputs, which a node sends as it joins (`flotilla resim`).
    #[arg(long, requires = "participants")]
    participants_first: bool,
    /// An option for `flotilla-world` (repeatable), e.g.
    /// `--world-arg=--wait-on-drives`.
    #[arg(long = "world-arg", value_name = "ARG", allow_hyphen_values = true)]
    world_args: Vec<String>,
    #[command(flatten)]
    node: NodeArgs,
}

impl RunArgs {
    /// `flotilla run WORLD` in lockstep with `participants` lockstep
    /// participants waited for, on simulation `sim` listening on
    /// `endpoint` (what `flotilla resim` runs).
    pub fn lockstep_command_line(
        world: &Path,
        seed: u64,
        sim: &str,
        endpoint: &str,
        participants: usize,
    ) -> Vec<String> {
        let mut line = vec!["run".to_string(), world.to_string_lossy().into_owned()];
        line.extend(["--clock".into(), "lockstep".into(), "--seed".into(), seed.to_string()]);
        line.extend(["--sim".into(), sim.to_string(), "--listen".into(), endpoint.to_string()]);
        line.extend(["--participants".into(), participants.to_string(), "--participants-first".into()]);
        line
    }

    /// The `--replace` programs by role, each role known to be one of
    /// `binaries`' (the nodes this world would launch).
    fn replacements(&self, binaries: &BTreeSet<&'static str>) -> anyhow::Result<BTreeMap<String, String>> {
        let mut replaced = BTreeMap::new();
        for given in &self.replace {
            let Some((role, command)) = given.split_once('=').filter(|(r, c)| !r.is_empty() && !c.trim().is_empty())
            else {
                bail!("--replace {given:?}: expected ROLE=COMMAND, e.g. laser=\"python3 my_laser.py\"");
            };
            if !binaries.contains(format!("flotilla-{role}").as_str()) {
                let roles: Vec<&str> = binaries.iter().map(|b| b.trim_start_matches("flotilla-")).collect();
                bail!("--replace {role}=…: this world runs no {role} node (its nodes: {})", roles.join(", "));
            }
            if replaced.insert(role.to_string(), command.to_string()).is_some() {
                bail!("--replace {role}=…: given twice");
            }
        }
        Ok(replaced)
    }
}

/// Where the binaries of this installation are: next to `flotilla`.
pub(crate) fn sibling(binary: &str) -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe().context("locating the flotilla binary")?;
    let path = exe.parent().unwrap_or(Path::new(".")).join(binary);
    if !path.exists() {
        bail!("cannot find {} next to {} (build the whole workspace: cargo build --workspace)", binary, exe.display());
    }
    Ok(path)
}

/// The endpoint nodes should connect to, given the world's listen endpoint:
/// a wildcard host becomes loopback.
fn connect_endpoint(listen: &str) -> String {
    listen.replace("0.0.0.0", "127.0.0.1").replace("[::]", "127.0.0.1")
}

/// Runs a world until Ctrl-C, SIGTERM or `--for`.
pub fn run(args: RunArgs) -> anyhow::Result<()> {
    // Validate everything first: a bad world stops here, nothing starts.
    let spec = load_world(&args.world)?;
    flotilla_wire::keys::check_key_chunk("--sim", &args.node.sim).map_err(anyhow::Error::msg)?;
    let listen = args.node.zenoh.listen.first().cloned().unwrap_or_else(|| DEFAULT_ENDPOINT.to_string());
    let standby_listen = match (&args.standby_listen, args.standby_world) {
        (Some(standby), _) => Some(standby.clone()),
        (None, true) => Some(next_port(&listen)?),
        (None, false) => None,
    };
    // Every program connects to both worlds, so that it is already
    // connected to the one that takes over.
    let endpoint =
        std::iter::once(&listen).chain(&standby_listen).map(|l| connect_endpoint(l)).collect::<Vec<_>>().join(",");
    let sim = args.node.sim.clone();
    let ros_prefix = args.ros_prefix.clone().unwrap_or_else(|| spec.settings.ros_prefix.clone());
    let clock = args.clock.unwrap_or(spec.settings.clock);
    let (binaries, unserved) = node_binaries(&spec, &args);
    let replaced = args.replacements(&binaries)?;
    let seed = args.seed.unwrap_or(spec.settings.seed);
    let resumed = crate::checkpoint::resumed(args.checkpoint.as_deref(), args.from_checkpoint.as_deref(), &spec, seed)?;

    let node_args = || -> Vec<String> { vec!["--sim".into(), sim.clone(), "--ros-prefix".into(), ros_prefix.clone()] };
    let mut world = world_args(&args, &listen, &ros_prefix);
    let mut children = Vec::new();
    if let Some(standby_listen) = &standby_listen {
        let mut standby = world_args(&args, standby_listen, &ros_prefix);
        standby.extend(["--standby".into(), "--connect".into(), connect_endpoint(&listen)]);
        world.extend(["--connect".into(), connect_endpoint(standby_listen)]);
        children.push(supervised("standby", sibling("flotilla-world")?, standby, vec![]));
    }
    children.insert(0, supervised("world", sibling("flotilla-world")?, world, vec![]));
    // The nodes that send a recorder batches (Flotilla's own, the
    // Pioneer interface aside): a recording starts once each has seen it.
    let batching = (binaries.iter())
        .filter(|b| **b != flotilla_plugins::pioneer::PioneerConfig::ROLE.binary)
        .filter(|b| !replaced.contains_key(b.trim_start_matches("flotilla-")))
        .count();
    let start = StartGate {
        nodes: binaries.len() + args.participants,
        recorder: args.record.is_some().then_some(batching),
        participants_first: args.participants_first.then_some(args.participants),
        wait_at_most: start_wait(clock),
        clock,
    };
    let pioneer = flotilla_plugins::pioneer::PioneerConfig::ROLE.binary;
    for binary in &binaries {
        let name = binary.trim_start_matches("flotilla-").to_string();
        // The plugin nodes are loopback peers, so their messages to each
        // other skip the world's router; the bridge and `--exec` programs
        // stay clients of the world.
        if let Some(command) = replaced.get(&name) {
            let env =
                vec![("FLOTILLA_ENDPOINT".to_string(), endpoint.clone()), ("FLOTILLA_SIM".to_string(), sim.clone())];
            children.push(supervised(&name, PathBuf::from("sh"), vec!["-c".into(), command.clone()], env));
            continue;
        }
        let mut node = node_args();
        node.extend(loopback_peer_args(&endpoint));
        if *binary == pioneer {
            node.extend(pioneer_args(&args));
        } else if args.record.is_some() {
            // Its answers to the first state go to the recorder started
            // before it (see `start_gate`).
            node.push("--recorded".into());
        }
        children.push(supervised(&name, sibling(binary)?, node, vec![]));
    }
    children.extend(companions(&args, &endpoint, node_args)?);
    if args.node.zenoh.no_shared_memory {
        // Every program started, `--exec` ones included, reads it.
        for child in &mut children {
            child.env.push(("FLOTILLA_NO_SHARED_MEMORY".to_string(), "1".to_string()));
        }
    }

    let console = Arc::new(Mutex::new(Console::new()));
    {
        let mut c = console.lock().unwrap_or_else(|e| e.into_inner());
        c.log(&format!(
            "flotilla: running {} (sim \"{sim}\") — connect other programs to {endpoint} (e.g. --connect {endpoint} --sim {sim})",
            args.world.display()
        ));
        if let Some((file, header)) = &resumed {
            c.log(&format!(
                "flotilla: resuming from checkpoint {} at t = {:.3} s (step {}); nodes start afresh",
                file.display(),
                header.time_s(),
                header.step
            ));
        }
        if !unserved.is_empty() {
            c.log(&format!(
                "flotilla: warning: no node implements plugin type(s) {} yet; those plugins do nothing",
                unserved.into_iter().collect::<Vec<_>>().join(", ")
            ));
        }
    }

    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let stop = Stop { after_s: args.for_s, with_exec: args.until_exec };
    // The launcher's own client, for the status line.
    let own = ZenohArgs {
        connect: endpoint.split(',').map(String::from).collect(),
        no_shared_memory: args.node.zenoh.no_shared_memory,
        ..Default::default()
    };
    runtime.block_on(supervise(children, console, endpoint, own, sim, stop, start))
}

/// `listen` with the next port: where a standby world listens unless told.
fn next_port(listen: &str) -> anyhow::Result<String> {
    let port = listen
        .rsplit_once(':')
        .and_then(|(_, port)| port.split(['?', '#']).next())
        .and_then(|port| port.parse::<u16>().ok())
        .filter(|port| *port < u16::MAX)
        .with_context(|| format!("cannot tell the standby world's port from {listen}: give --standby-listen"))?;
    let (head, _) = listen.rsplit_once(':').unwrap_or((listen, ""));
    Ok(format!("{head}:{}", port + 1))
}

/// The node binaries a world needs (one per plugin type, the Pioneer
/// interface when asked for, the map-transition manager for a world of
/// several maps), and the plugin types no node implements.
fn node_binaries(spec: &WorldSpec, args: &RunArgs) -> (BTreeSet<&'static str>, BTreeSet<String>) {
    let mut binaries = BTreeSet::new();
    let mut unserved = BTreeSet::new();
    for model in &spec.models {
        for plugin in &model.plugins {
            match binaries_for(&plugin.plugin_type) {
                Some(bins) => binaries.extend(bins),
                None => {
                    unserved.insert(plugin.plugin_type.clone());
                }
            }
        }
    }
    if !pioneer_args(args).is_empty() {
        binaries.insert(flotilla_plugins::pioneer::PioneerConfig::ROLE.binary);
    }
    // A world of several maps: the map-transition manager moves robots
    // between them and shows each robot's map to ROS.
    if !spec.maps.is_empty() {
        binaries.insert(flotilla_plugins::maps::BINARY);
    }
    (binaries, unserved)
}

/// The Pioneer interface's own arguments (`--pioneer` asks for it on every
/// robot); none: it does not run.
fn pioneer_args(args: &RunArgs) -> Vec<String> {
    let mut pioneer = args.pioneer_args.clone();
    if args.pioneer {
        pioneer.push("--every-robot".to_string());
    }
    pioneer
}

/// The world's command line: its file, network, clock and the overrides
/// given to `flotilla run`. In lockstep it starts paused, until every node
/// launched has joined the barrier.
fn world_args(args: &RunArgs, listen: &str, ros_prefix: &str) -> Vec<String> {
    let zenoh = &args.node.zenoh;
    let mut world = vec![
        args.world.to_string_lossy().into_owned(),
        "--sim".into(),
        args.node.sim.clone(),
        "--listen".into(),
        listen.to_string(),
    ];
    for extra in zenoh.listen.iter().skip(1) {
        world.extend(["--listen".into(), extra.clone()]);
    }
    for c in &zenoh.connect {
        world.extend(["--connect".into(), c.clone()]);
    }
    if let Some(config) = &zenoh.config {
        world.extend(["--config".into(), config.to_string_lossy().into_owned()]);
    }
    if let Some(mode) = &zenoh.mode {
        world.extend(["--mode".into(), mode.clone()]);
    }
    // Every clock mode: the launcher starts stepping once the nodes it
    // launched have joined (see `StartGate`).
    world.push("--start-paused".into());
    for (flag, value) in [
        ("--clock", args.clock.map(|c| c.to_string())),
        ("--rate", args.rate.map(|r| r.to_string())),
        ("--seed", args.seed.map(|s| s.to_string())),
    ] {
        if let Some(v) = value {
            world.extend([flag.to_string(), v]);
        }
    }
    world.extend(["--ros-prefix".into(), ros_prefix.to_string()]);
    for dir in &args.model_dirs {
        world.extend(["--model-dir".into(), dir.to_string_lossy().into_owned()]);
    }
    for (flag, file) in [("--from-checkpoint", &args.from_checkpoint), ("--checkpoint", &args.checkpoint)] {
        if let Some(file) = file {
            world.extend([flag.to_string(), file.to_string_lossy().into_owned()]);
        }
    }
    if let Some(every_s) = args.checkpoint_every {
        world.extend(["--checkpoint-every".into(), every_s.to_string()]);
    }
    world.extend(args.world_args.iter().cloned());
    world
}

/// What runs beside the world and its nodes when asked for: the ROS 2
/// bridge, the live view, the recorder and the `--exec` programs.
fn companions(args: &RunArgs, endpoint: &str, node_args: impl Fn() -> Vec<String>) -> anyhow::Result<Vec<Supervised>> {
    let mut children = Vec::new();
    if args.ros {
        let mut bridge_args = node_args();
        bridge_args.extend(["--connect".into(), endpoint.to_string()]);
        if let Some(domain) = args.ros_domain {
            bridge_args.extend(["--domain".into(), domain.to_string()]);
        }
        children.push(supervised("bridge", sibling("flotilla-bridge")?, bridge_args, vec![]));
    }
    if let Some(addr) = &args.view {
        let mut view_args = vec!["view".to_string(), "--addr".into(), addr.clone()];
        view_args.extend(node_args());
        view_args.extend(loopback_peer_args(endpoint));
        let myself = std::env::current_exe().context("locating the flotilla binary")?;
        children.push(supervised("view", myself, view_args, vec![]));
    }
    if let Some(file) = &args.record {
        let mut record_args = vec!["record".to_string(), file.to_string_lossy().into_owned()];
        record_args.extend(["--compression".to_string(), args.record_compression.to_string()]);
        record_args.extend(node_args());
        // A peer, as the plugin nodes are: what it records comes straight
        // from the publishers, not through the world's router.
        record_args.extend(loopback_peer_args(endpoint));
        let myself = std::env::current_exe().context("locating the flotilla binary")?;
        children.push(supervised("record", myself, record_args, vec![]));
    }
    let env = vec![
        ("FLOTILLA_ENDPOINT".to_string(), endpoint.to_string()),
        ("FLOTILLA_SIM".to_string(), args.node.sim.clone()),
    ];
    for (i, command) in args.exec.iter().enumerate() {
        children.push(supervised(
            &format!("exec{}", i + 1),
            PathBuf::from("sh"),
            vec!["-c".into(), command.clone()],
            env.clone(),
        ));
    }
    Ok(children)
}

/// When `flotilla run` stops on its own (`--for`, `--until-exec`).
#[derive(Debug, Clone, Copy)]
struct Stop {
    after_s: Option<f64>,
    with_exec: bool,
}

impl Stop {
    /// Whether every `--exec` program of `children` finished (not one
    /// waiting to be restarted), when the run stops with them.
    fn exec_done(&self, children: &[Supervised]) -> bool {
        let mut programs = children.iter().filter(|c| c.name.starts_with("exec")).peekable();
        self.with_exec && programs.peek().is_some() && programs.all(|c| c.child.is_none() && c.restart_at.is_none())
    }
}

async fn supervise(
    mut children: Vec<Supervised>,
    console: Arc<Mutex<Console>>,
    endpoint: String,
    own: ZenohArgs,
    sim: String,
    stop: Stop,
    start_gate: StartGate,
) -> anyhow::Result<()> {
    let log = |line: String| console.lock().unwrap_or_else(|e| e.into_inner()).log(&line);
    start_world(&mut children[0], &console, &endpoint).await?;
    let session = open_session(&own, Role::Node).await?;
    // `--participants-first`: the nodes once those participants joined.
    if let Some(participants) = start_gate.participants_first {
        let give_up = Instant::now() + start_gate.wait_at_most;
        if let Err(joined) = participants_joined(&session, &Keys::new(&sim), participants, give_up).await {
            log(format!("flotilla: only {joined} of {participants} participants joined; starting the nodes anyway"));
        }
    }
    // A recorder before the nodes: a node answers the paused world's first
    // state as soon as it joins, and those answers go into its batches only
    // if a recorder already listens (a recording then starts at t = 0).
    if let Some(recorder) = children.iter_mut().find(|c| c.name == "record") {
        start(recorder, &console)?;
        if !batches_wanted(&session, &Keys::new(&sim), Instant::now() + RECORDER_LISTENS_WITHIN).await {
            log("flotilla: the recorder does not listen yet; starting the nodes anyway".to_string());
        }
    }
    for child in children[1..].iter_mut().filter(|c| c.child.is_none() && !c.name.starts_with("exec")) {
        start(child, &console)?;
    }
    // The `--exec` programs once the nodes forward the recorder what they
    // take in: a controller's first command comes as soon as it sees the
    // paused world's first state.
    if let Some(batching) = start_gate.recorder {
        if !recorder_listens(&session, &Keys::new(&sim), batching, Instant::now() + RECORDER_LISTENS_WITHIN).await {
            log("flotilla: the nodes do not send the recorder their messages yet; starting the programs anyway".into());
        }
    }
    for child in children[1..].iter_mut().filter(|c| c.child.is_none()) {
        start(child, &console)?;
    }
    let (status_tx, mut status_rx) = tokio::sync::mpsc::unbounded_channel();
    let _status_sub = session
        .declare_subscriber(Keys::new(&sim).status())
        .callback(move |sample| {
            if let Ok(status) = decode::<WorldStatus>(&sample.payload().to_bytes()) {
                let _ = status_tx.send(status);
            }
        })
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;

    // The world starts paused; started again after a crash, it is paused
    // again, and its nodes (still joined) let it go at once.
    let open_gate = |world_group: Option<u32>| {
        let (session, console, sim) = (session.clone(), console.clone(), sim.clone());
        tokio::spawn(async move { start_gate.open_when_joined(&session, &sim, &console).await });
        world_group
    };
    let mut gated_world = open_gate(children[0].group);

    let deadline = stop.after_s.map(|s| Instant::now() + Duration::from_secs_f64(s.max(0.0)));
    let signal = shutdown_signal();
    tokio::pin!(signal);
    let mut tick = tokio::time::interval(Duration::from_millis(50));
    let mut world_seen = false;
    let mut failure: Option<anyhow::Error> = None;
    loop {
        tokio::select! {
            _ = &mut signal => {
                log("flotilla: stopping".into());
                break;
            }
            Some(status) = status_rx.recv() => {
                world_seen = true;
                let up = children.iter().filter(|c| c.child.is_some()).count();
                console.lock().unwrap_or_else(|e| e.into_inner()).status(format_status(&status, up, children.len()));
            }
            _ = tick.tick() => {
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    break;
                }
                failure = look_after(&mut children, &console, world_seen);
                if failure.is_some() {
                    break;
                }
                if stop.exec_done(&children) {
                    log("flotilla: the --exec programs finished; stopping".into());
                    break;
                }
                // A world started again after a crash stands by when a
                // standby took over: the run goes on as it was, paused or not.
                let standby = children.iter().any(|c| c.name == "standby");
                if !standby && children[0].child.is_some() && children[0].group != gated_world {
                    gated_world = open_gate(children[0].group);
                }
            }
        }
    }

    stop_all(&mut children).await;
    let _ = session.close().await;
    console.lock().unwrap_or_else(|e| e.into_inner()).finish();
    match failure {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Starts the world first, the rest once it listens: a Zenoh peer that
/// cannot reach its endpoint within its start-up delay logs a warning, and
/// each node would wait for the world anyway. A port taken by another
/// program, or a world that exits before it listens, ends the run: this
/// launcher's client would reach whatever else listens there.
async fn start_world(world: &mut Supervised, console: &Arc<Mutex<Console>>, endpoint: &str) -> anyhow::Result<()> {
    let address = endpoint.split(',').next().and_then(tcp_address);
    if let Some(address) = &address {
        if let Err(e) = std::net::TcpListener::bind(address) {
            bail!("cannot listen on {address}: {e} (another program listens there; choose another --listen)");
        }
    }
    start(world, console)?;
    if let Some(address) = &address {
        wait_for_listener(world, address, WORLD_LISTENS_WITHIN).await;
    }
    if let Some(Ok(Some(status))) = world.child.as_mut().map(|child| child.try_wait()) {
        bail!("the world exited ({status}) before it listened on {endpoint}; its last lines are above");
    }
    Ok(())
}

/// How long the other processes wait for the world to listen before they
/// start anyway (a world that loads a large map takes a while).
const WORLD_LISTENS_WITHIN: Duration = Duration::from_secs(30);

/// The `HOST:PORT` of a `tcp/HOST:PORT` endpoint (without Zenoh's `?` and
/// `#` suffixes), to probe whether it listens; None for other protocols
/// (TLS, QUIC, Unix sockets), whose listeners a bare connection would not
/// tell apart from a failed handshake.
fn tcp_address(endpoint: &str) -> Option<String> {
    let address = endpoint.strip_prefix("tcp/")?;
    Some(address.split(['?', '#']).next().unwrap_or(address).to_string())
}

/// Waits until `address` accepts a TCP connection, `world` has exited (its
/// supervision then says why), or `within` has passed.
async fn wait_for_listener(world: &mut Supervised, address: &str, within: Duration) {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if tokio::net::TcpStream::connect(address).await.is_ok() {
            return;
        }
        if world.child.as_mut().is_none_or(|child| !matches!(child.try_wait(), Ok(None))) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_standby_world_listens_on_the_next_port_unless_told() {
        assert_eq!(next_port("tcp/127.0.0.1:7450").unwrap(), "tcp/127.0.0.1:7451");
        assert_eq!(next_port("tcp/[::1]:7450").unwrap(), "tcp/[::1]:7451");
        assert_eq!(next_port("tcp/0.0.0.0:7450?iface=lo").unwrap(), "tcp/0.0.0.0:7451");
        let err = next_port("unixsock-stream/tmp/world.sock").unwrap_err().to_string();
        assert!(err.contains("give --standby-listen"), "{err}");
    }

    #[test]
    fn only_a_tcp_endpoint_is_probed_and_zenoh_s_suffixes_are_dropped() {
        assert_eq!(tcp_address("tcp/127.0.0.1:7450").as_deref(), Some("127.0.0.1:7450"));
        assert_eq!(tcp_address("tcp/127.0.0.1:7450?prio=1-7#iface=lo").as_deref(), Some("127.0.0.1:7450"));
        assert_eq!(tcp_address("tls/127.0.0.1:7450"), None);
        assert_eq!(tcp_address("unixsock-stream//tmp/zenoh.sock"), None);
    }

    /// The wait ends because of what the world did, well before the 60 s
    /// it is allowed here.
    #[tokio::test]
    async fn the_others_start_once_the_world_listens_or_has_exited() {
        let console = Arc::new(Mutex::new(Console::new()));
        let allowed = Duration::from_secs(60);

        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap().to_string();
        let mut listening = supervised("world", PathBuf::from("sleep"), vec!["60".into()], vec![]);
        start(&mut listening, &console).unwrap();
        let waited = Instant::now();
        wait_for_listener(&mut listening, &address, allowed).await;
        assert!(waited.elapsed() < allowed / 2, "a listening world: {:?}", waited.elapsed());
        children::signal_group(&listening, nix::sys::signal::Signal::SIGKILL);
        drop(listener);

        let mut exiting = supervised("world", PathBuf::from("false"), vec![], vec![]);
        start(&mut exiting, &console).unwrap();
        let waited = Instant::now();
        wait_for_listener(&mut exiting, &address, allowed).await;
        assert!(waited.elapsed() < allowed / 2, "a world that exited: {:?}", waited.elapsed());
    }
}
