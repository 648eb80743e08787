//! `flotilla-world`: loads a Flatland world and runs it.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;
use flotilla_node_kit::args::{open_session, NodeArgs, Role, ZenohArgs};
use flotilla_node_kit::witness::Witnesses;
use flotilla_wire::Keys;
use flotilla_world::node::{run, CheckpointEvery, ModelDirs, WorldNodeConfig};
use flotilla_world::physics::Physics;
use flotilla_world::standby::{standby_form, Standby, TakeOver};
use flotilla_world_file::{load_world, ClockMode};

/// The authoritative world process of a Flotilla simulation.
#[derive(Parser)]
#[command(name = "flotilla-world", version)]
struct Args {
    /// The Flatland world file.
    world: PathBuf,
    /// Clock mode: realtime, fast, lockstep or external (overrides the
    /// world's `properties.clock`).
    #[arg(long)]
    clock: Option<ClockMode>,
    /// Real-time factor in realtime mode (overrides `properties.real_time_factor`).
    #[arg(long)]
    rate: Option<f64>,
    /// World seed (overrides `properties.seed`).
    #[arg(long)]
    seed: Option<u64>,
    /// Physics step in seconds (overrides `properties.step_size`).
    #[arg(long)]
    step_size: Option<f64>,
    /// Prefix of every ROS-facing key (overrides `properties.ros_prefix`).
    #[arg(long)]
    ros_prefix: Option<String>,
    /// Seconds a lockstep participant may take per step before it is reported
    /// (overrides `properties.lockstep_timeout`).
    #[arg(long)]
    lockstep_timeout: Option<f64>,
    /// What to do about a stalled lockstep participant: wait or drop
    /// (overrides `properties.on_stall`).
    #[arg(long)]
    on_stall: Option<flotilla_world::node::StallPolicy>,
    /// Microseconds the world looks for the lockstep participants' answers
    /// before it sleeps (0: sleep at once). Trades CPU for speed in
    /// lockstep: a sleeping world costs one more thread wake-up per step.
    #[arg(long, value_name = "MICROSECONDS", default_value_t = flotilla_world::node::DEFAULT_LOCKSTEP_SPIN_US)]
    lockstep_spin: u64,
    /// In lockstep, wait for every drive's answer to every state. By
    /// default a drive whose commands cannot change before a new `cmd_vel`
    /// (it says so with its answer) is not waited for at states after
    /// which no other participant worked; the outputs are the same bits
    /// either way, this only costs speed.
    #[arg(long)]
    wait_on_drives: bool,
    /// In lockstep, how many states a sensor node whose outputs are no
    /// plugin's input may run behind the world while no participant that
    /// may command a robot (a controller, the Python environments) is in
    /// the barrier: its work then overlaps the world's next steps. The
    /// outputs are the same bits either way; observers outside the barrier
    /// may see `/clock` up to this many steps ahead of such a node's
    /// messages. 0: every node reports each state before the next.
    #[arg(long, value_name = "STEPS", default_value_t = flotilla_world::node::DEFAULT_LOCKSTEP_SENSOR_LAG_STEPS)]
    lockstep_sensor_lag: u64,
    /// Start paused; `flotilla resume` (or the launcher) starts stepping.
    #[arg(long)]
    start_paused: bool,
    /// A directory spawn requests may load model files from, besides the
    /// world file's own directory (repeatable).
    #[arg(long = "model-dir", value_name = "DIR")]
    model_dirs: Vec<PathBuf>,
    /// Resume from this checkpoint (`flotilla checkpoint save`) instead of
    /// from the world file's start: every body, spawned model, map and the
    /// sim time as saved. It must have been saved from this world file's
    /// content, seed and step size, by this Flotilla.
    #[arg(long, value_name = "FILE")]
    from_checkpoint: Option<PathBuf>,
    /// Save a checkpoint to this file every `--checkpoint-every` wall
    /// seconds (written beside it, then renamed over it). When the file
    /// exists at start, the world resumes from it (before
    /// `--from-checkpoint`): a world restarted after a crash goes on from
    /// its last checkpoint.
    #[arg(long, value_name = "FILE", requires = "checkpoint_every")]
    checkpoint: Option<PathBuf>,
    /// Wall seconds between two checkpoints (with `--checkpoint`).
    #[arg(long, value_name = "SECONDS", requires = "checkpoint")]
    checkpoint_every: Option<f64>,
    /// Stand by for the world of this simulation that is running (or
    /// about to start) and take over as it when it goes: from its last
    /// checkpoint and state, under its id, so that its nodes carry on. A
    /// world that finds another of its simulation running stands by
    /// without being asked (see docs/checkpoints.md).
    #[arg(long)]
    standby: bool,
    #[command(flatten)]
    node: NodeArgs,
}

fn main() -> std::process::ExitCode {
    // Zenoh's own thread pools, not `zenoh_threads::configure()`: the world
    // routes for clients and must never wait for room to send on the thread
    // that serves its sockets (see `flotilla_node_kit::zenoh_threads`).
    flotilla_node_kit::logging::init("info,zenoh=warn");
    let args = Args::parse();
    match main_inner(args) {
        Ok(Ending::Stopped) => std::process::ExitCode::SUCCESS,
        Ok(Ending::SteppedDown(reason)) => {
            eprintln!("flotilla-world: stepping down: {reason}; standing by instead");
            let e = stand_by_instead();
            eprintln!("flotilla-world: cannot start again as a standby: {e}");
            std::process::ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("flotilla-world: {e:#}");
            std::process::ExitCode::from(2)
        }
    }
}

/// How a world ends when nothing went wrong.
enum Ending {
    /// Told to stop.
    Stopped,
    /// Another world of a higher term runs the simulation (see
    /// `flotilla_world::fence`): a world restarted after a crash can find
    /// none yet while its standby is still taking over, and start beside it.
    SteppedDown(String),
}

/// Replaces this process with itself as a standby (`--standby`), keeping
/// its pid for whoever supervises it: a world that stepped down for
/// another stands by for it, as one that finds it at start does. Returns
/// only when that cannot be done.
fn stand_by_instead() -> std::io::Error {
    use std::os::unix::process::CommandExt;
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if !args.iter().any(|a| a == "--standby") {
        args.push("--standby".into());
    }
    match std::env::current_exe() {
        Ok(me) => std::process::Command::new(me).args(args).exec(),
        Err(e) => e,
    }
}

fn main_inner(args: Args) -> anyhow::Result<Ending> {
    let mut spec = load_world(&args.world)?;
    let s = &mut spec.settings;
    if let Some(clock) = args.clock {
        s.clock = clock;
    }
    if let Some(rate) = args.rate {
        s.real_time_factor = rate;
    }
    if let Some(seed) = args.seed {
        s.seed = seed;
    }
    if let Some(step) = args.step_size {
        s.step_size_s = step;
    }
    if let Some(prefix) = args.ros_prefix {
        s.ros_prefix = prefix;
    }
    if let Some(timeout) = args.lockstep_timeout {
        s.lockstep_timeout_s = timeout;
    }
    if let Some(policy) = args.on_stall {
        s.on_stall = policy;
    }
    s.validate().map_err(|e| anyhow::anyhow!("{}: {e}", args.world.display()))?;
    flotilla_wire::keys::check_key_chunk("--sim", &args.node.sim).map_err(anyhow::Error::msg)?;
    let physics = Physics::new(&spec)?;
    let checkpoint_every = match (&args.checkpoint, args.checkpoint_every) {
        (Some(path), Some(every_s)) if every_s.is_finite() && every_s > 0.0 => {
            Some(CheckpointEvery { path: path.clone(), every: std::time::Duration::from_secs_f64(every_s) })
        }
        (Some(_), Some(every_s)) => {
            anyhow::bail!("--checkpoint-every must be a positive number of seconds, got {every_s}")
        }
        _ => None,
    };
    let model_dirs = ModelDirs::new(&spec.path, &args.model_dirs)?;
    let mut config = WorldNodeConfig {
        keys: Keys::new(&args.node.sim).with_ros_prefix(&spec.settings.ros_prefix),
        clock: spec.settings.clock,
        real_time_factor: spec.settings.real_time_factor,
        start_paused: args.start_paused,
        lockstep_timeout: std::time::Duration::from_secs_f64(spec.settings.lockstep_timeout_s),
        stall_policy: spec.settings.on_stall,
        lockstep_spin: std::time::Duration::from_micros(args.lockstep_spin),
        wait_on_drives: args.wait_on_drives,
        lockstep_sensor_lag: args.lockstep_sensor_lag,
        external_clock: spec.settings.external_clock.clone(),
        endpoint: args.node.zenoh.advertised_endpoint(),
        model_dirs,
        node_id: flotilla_node_kit::node_id("world"),
        checkpoint_every,
        node_memory: Default::default(),
        handover: None,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let (session, result) = runtime.block_on(async move {
        let session = open_world_session(&args.node.zenoh).await?;
        let look_for = if args.node.zenoh.connect.is_empty() { Duration::ZERO } else { LOOK_FOR };
        let found = look_for_worlds(&session, &config.keys, look_for).await?;
        let mut term = 0;
        // What was found is said first, by a `--standby` world too.
        let (session, physics) = if found.says_stand_by(&args.node.sim) || args.standby {
            let (session, took) = stand_by_until_taken_over(
                session,
                &args.node.zenoh,
                &config.keys,
                &config.node_id,
                physics,
                args.checkpoint.as_deref(),
            )
            .await?;
            config.node_id = took.world_id;
            config.start_paused = took.paused;
            config.node_memory = took.memory;
            config.handover = took.handover.map(|h| *h);
            config.clock = took.clock.unwrap_or(config.clock);
            term = took.term;
            (session, took.physics)
        } else {
            (session, resume(physics, &args.checkpoint, &args.from_checkpoint, &mut config)?)
        };
        tracing::info!(
            "world {} loaded: {} models, {} layers; listening on {}",
            args.world.display(),
            physics.model_count(),
            spec.layers.len(),
            config.endpoint
        );
        // The guard runs as a task of its own: the world loop polls its
        // shutdown only between steps.
        let (step_down, mut stepping_down) = tokio::sync::oneshot::channel();
        let guard = tokio::spawn({
            let (session, keys, world) = (session.clone(), config.keys.clone(), config.node_id.clone());
            async move {
                match flotilla_world::fence::guard(session, keys, world, term).await {
                    Ok(reason) => {
                        let _ = step_down.send(reason);
                    }
                    Err(e) => tracing::error!("{e:#}: this world cannot tell whether it is cut off"),
                }
            }
        });
        let mut stepped_down = None;
        let shutdown = async {
            tokio::select! {
                _ = flotilla_node_kit::args::shutdown_signal() => {}
                Ok(reason) = &mut stepping_down => stepped_down = Some(reason),
            }
        };
        let result = run(session.clone(), physics, config, shutdown).await;
        guard.abort();
        let result = result.map(|()| stepped_down.map_or(Ending::Stopped, Ending::SteppedDown));
        anyhow::Ok((session, result))
    })?;
    flotilla_node_kit::args::close_after_drain(runtime, session);
    result
}

/// Opens the world's Zenoh session and, given endpoints to connect to,
/// waits to be connected.
async fn open_world_session(zenoh: &ZenohArgs) -> anyhow::Result<zenoh::Session> {
    let session = open_session(zenoh, Role::World).await?;
    if !zenoh.connect.is_empty() {
        wait_connected(&session).await;
    }
    Ok(session)
}

/// Stands by as `node_id` until the running world is gone, opening the
/// session again whenever the standby finds Zenoh lost its routes to the
/// world; returns the session and what was taken over (from the periodic
/// checkpoint file `on_disk` when no checkpoint of the world came).
async fn stand_by_until_taken_over(
    mut session: zenoh::Session,
    zenoh: &ZenohArgs,
    keys: &Keys,
    node_id: &str,
    physics: Physics,
    on_disk: Option<&std::path::Path>,
) -> anyhow::Result<(zenoh::Session, TakeOver)> {
    let (mut fresh, mut followed) = (physics, None);
    loop {
        match flotilla_world::standby::stand_by(&session, keys, node_id, fresh, followed, on_disk).await? {
            Standby::TookOver(took) => return Ok((session, took)),
            Standby::Relink(given_back, had) => {
                (fresh, followed) = (given_back, Some(had));
                let _ = session.close().await;
                session = open_world_session(zenoh).await?;
            }
        }
    }
}

/// How long a world given endpoints to connect to (another world, a
/// router) waits to be connected before it looks for a running world: a
/// world restarted on a busy machine took longer to connect than the look
/// itself, and started beside the world that was running.
const CONNECTED_WITHIN: std::time::Duration = std::time::Duration::from_secs(5);

/// Waits until the session is connected to a router (the other world is
/// one, as is a Zenoh router), for at most [`CONNECTED_WITHIN`] (none may
/// be up yet: the first of two worlds). Not to a peer: a world restarted
/// after its crash is connected to at once by the nodes, peers retrying
/// its endpoint, which know nothing of a standby taking over; looking then,
/// it found no world and no standby, and started beside them.
async fn wait_connected(session: &zenoh::Session) {
    let deadline = std::time::Instant::now() + CONNECTED_WITHIN;
    while std::time::Instant::now() < deadline {
        if session.info().routers_zid().await.next().is_some() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// How long a world given endpoints to connect to looks for a running
/// world or a standby taking over before it starts as the running world:
/// once connected, the other world's tokens reach it only after a while
/// (on a busy machine, later than a first look), and a world restarted
/// after its crash then started beside the one that had taken over.
const LOOK_FOR: Duration = Duration::from_secs(2);

/// How often a world looks again, within [`LOOK_FOR`].
const LOOK_EVERY: Duration = Duration::from_millis(200);

/// What a starting world found of its simulation's other worlds.
enum Found {
    /// This world runs (its id).
    Running(String),
    /// No world runs, but this standby follows one: it is taking over.
    TakingOver(String),
    /// No world or standby reached, but this node sees this world running.
    SeenByNode {
        world: String,
        node: String,
    },
    Nothing,
}

impl Found {
    /// Whether a world that found this stands by, said in the log for
    /// simulation `sim`.
    fn says_stand_by(&self, sim: &str) -> bool {
        match self {
            Found::Running(id) => {
                tracing::info!("a world of simulation \"{sim}\" is running ({id}): this one stands by for it");
            }
            Found::TakingOver(standby) => tracing::info!(
                "no world of simulation \"{sim}\" runs, but standby {standby} follows one: it is taking over (this \
                 world restarted after a crash?); this one stands by for it"
            ),
            Found::SeenByNode { world, node } => tracing::info!(
                "no world of simulation \"{sim}\" is reached from here, but node {node} sees {world} running (this \
                 world's link to it is not up yet?): this one stands by for it"
            ),
            Found::Nothing => return false,
        }
        true
    }
}

/// The world running in this simulation, or else a standby following one
/// (then taking it over), or else a world a node sees, looking again until
/// `look_for` is over.
///
/// The nodes are asked too because a restarted world's link to the world
/// that took over can take longer to come up than the look (a busy
/// router closed its first handshakes), while the nodes, peers retrying
/// its endpoint, are linked to it at once: started as the running world,
/// it published states from its world file's start to every node until it
/// learnt of the other and stepped down. The nodes tell only once a world
/// has had a standby ([`flotilla_node_kit::witness`]): after a take-over,
/// which is when a world restarts beside another.
async fn look_for_worlds(session: &zenoh::Session, keys: &Keys, look_for: Duration) -> anyhow::Result<Found> {
    // In a standby's form: the running world holds the other (see there).
    let witnesses = Witnesses::listen(session, keys, &standby_form(&keys.witnesses())).await?;
    let deadline = std::time::Instant::now() + look_for;
    loop {
        if let Some(world) = running_world(session, keys).await? {
            return Ok(Found::Running(world));
        }
        if let Some(standby) = following_standby(session, keys).await? {
            return Ok(Found::TakingOver(standby));
        }
        let answers = witnesses.answers();
        if let Some((node, world)) = answers.iter().find_map(|a| a.worlds.first().map(|w| (&a.node, w))) {
            return Ok(Found::SeenByNode { world: world.clone(), node: node.clone() });
        }
        if std::time::Instant::now() >= deadline {
            return Ok(Found::Nothing);
        }
        tokio::time::sleep(LOOK_EVERY).await;
    }
}

/// The world already running in this simulation, if any. Two worlds of one
/// simulation would each step the same robots and each answer the nodes: a
/// world that finds another stands by for it instead (see
/// `flotilla_world::standby`). (Across a network partition neither sees
/// the other; see docs/checkpoints.md.)
async fn running_world(session: &zenoh::Session, keys: &Keys) -> anyhow::Result<Option<String>> {
    first_token(session, &keys.world_tokens(), |key| keys.parse_node_token(key)).await
}

/// A standby of this simulation that follows a world, if any: with no
/// world running, it is taking over the one that went (see
/// `flotilla_world::standby`). A world restarted at once after its crash
/// finds it so; started as the running world, it would publish states
/// from its world file's start to every node until it learnt of the
/// standby's take-over and stepped down.
async fn following_standby(session: &zenoh::Session, keys: &Keys) -> anyhow::Result<Option<String>> {
    first_token(session, &keys.following_tokens(), |key| keys.parse_following_token(key)).await
}

/// The id `parse` reads from the first liveliness token alive on `tokens`.
async fn first_token(
    session: &zenoh::Session,
    tokens: &str,
    parse: impl for<'k> Fn(&'k str) -> Option<&'k str>,
) -> anyhow::Result<Option<String>> {
    let replies = session
        .liveliness()
        .get(tokens)
        .timeout(std::time::Duration::from_secs(1))
        .await
        .map_err(|e| anyhow::anyhow!("asking for the tokens on {tokens}: {e}"))?;
    while let Ok(reply) = replies.recv_async().await {
        if let Some(id) = reply.result().ok().and_then(|token| parse(token.key_expr().as_str())) {
            return Ok(Some(id.to_string()));
        }
    }
    Ok(None)
}

/// The world resumed from a checkpoint when one is given: the periodic
/// `--checkpoint` file when it exists (a world restarted after a crash),
/// else `--from-checkpoint`; else `physics` as its world file has it.
fn resume(
    mut physics: Physics,
    periodic: &Option<PathBuf>,
    from: &Option<PathBuf>,
    config: &mut WorldNodeConfig,
) -> anyhow::Result<Physics> {
    let Some(path) = periodic.as_ref().filter(|path| path.exists()).or(from.as_ref()) else { return Ok(physics) };
    let bytes = std::fs::read(path).with_context(|| format!("reading the checkpoint {}", path.display()))?;
    let (header, memory) = flotilla_world::checkpoint::read(&bytes)
        .and_then(|checkpoint| checkpoint.restore_into(&mut physics))
        .map_err(|e| anyhow::anyhow!("checkpoint {}: {e}", path.display()))?;
    config.node_memory = memory;
    config.start_paused |= header.paused;
    tracing::info!(
        "resuming from checkpoint {} at step {} (t = {:.3} s), {} models",
        path.display(),
        header.step,
        header.time_s(),
        physics.model_count()
    );
    Ok(physics)
}
