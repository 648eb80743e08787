//! `flotilla bench`: runs a standard scenario with every node in its own
//! process and measures it from outside — real-time factor, laser beams per
//! second per core, CPU seconds and peak memory per process, messages and
//! bytes per second on the main keys, and (scenario `latency`) the
//! cmd_vel → odometry latency in realtime mode.

mod barrier_floor;
mod compare_clocks;
mod latency;
mod link;
mod processes;
mod procstat;
mod record_cost;
mod repeat;
mod running;
mod scenarios;
mod soak;
mod traffic;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::bail;
use flotilla_messages::{rosgraph_msgs::Clock, sensor_msgs::LaserScan};
use flotilla_node_kit::runtime::serve::MATCHING_SETTLES_IN;
use flotilla_record::bag::ChunkCompression;
use flotilla_wire::codec::decode;
use flotilla_wire::control::ClockMode;
use flotilla_wire::world_to_nodes::WorldStatus;
use flotilla_wire::Keys;
use serde::Serialize;

use running::Running;
pub use scenarios::Scenario;

/// Traffic is counted over this share of `--duration` after the timed run,
/// and over at least [`MIN_TRAFFIC_WINDOW_S`] sim seconds.
const TRAFFIC_WINDOW_SHARE: f64 = 0.25;
const MIN_TRAFFIC_WINDOW_S: f64 = 0.5;

pub use barrier_floor::{answer, AnswerArgs};

/// Arguments of `flotilla bench`.
#[derive(clap::Args, Clone)]
pub struct BenchArgs {
    /// office-50, warehouse-200, warehouse-1000 (or office-N, warehouse-N; add -pioneer for a P3-DX sonar ring on every robot,
    /// -crowd-M for M people walking among the robots, -doors-K for K idle doors out of the robots' way),
    /// or latency.
    scenario: Scenario,
    /// fast or lockstep (realtime for latency, which always runs realtime).
    #[arg(long, default_value = "fast")]
    clock: ClockMode,
    /// Sim seconds measured, after the warm-up.
    #[arg(long = "duration", value_name = "SIM_SECONDS", default_value_t = 10.0)]
    duration_s: f64,
    /// Sim seconds run before measuring (processes start, claims settle);
    /// the warm-up also lasts at least 2 wall seconds, until the nodes know
    /// which of their outputs anyone reads (they publish every output for
    /// their first second).
    #[arg(long = "warmup", value_name = "SIM_SECONDS", default_value_t = 1.0)]
    warmup_s: f64,
    /// Give up after this many wall seconds (with `--soak`, on top of the
    /// soak's own).
    #[arg(long = "timeout", value_name = "SECONDS", default_value_t = 900.0)]
    timeout_s: f64,
    /// Laser processes, each serving a shard of the robots (`--shard i/n`)
    /// with an equal share of the cores as scanning threads. One process
    /// already scans on every core.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=64))]
    laser_shards: u64,
    /// Drive processes, each serving a shard of the robots (`--shard i/n`):
    /// what more lockstep participants on one machine cost.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=64))]
    drive_shards: u64,
    /// Measure the scenario this many times (each run with fresh
    /// processes) and report each figure's median and range.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=100))]
    repeat: u64,
    /// Also record every ROS-facing topic (`flotilla record`, into
    /// `bench.mcap` in the scenario's directory), to measure what recording
    /// costs.
    #[arg(long)]
    record: bool,
    /// Measure what recording costs instead: this many rounds of two runs,
    /// one without a recorder and one with (`--record`), each with fresh
    /// processes; reports each round's cost (one minus the ratio of the
    /// real-time factors), their median and range, and the CPU seconds
    /// recording adds to each process.
    #[arg(long, value_name = "ROUNDS", conflicts_with_all = ["record", "repeat", "soak", "world_alone"],
          value_parser = clap::value_parser!(u64).range(1..=100))]
    record_cost: Option<u64>,
    /// Compare the clocks instead: this many rounds of two runs, one fast
    /// and one in lockstep, each with fresh processes; reports each round's
    /// ratio (the fast run's real-time factor over the lockstep run's),
    /// their median and range, and each process's CPU µs per step in both
    /// modes.
    #[arg(long, value_name = "ROUNDS", conflicts_with_all = ["record", "record_cost", "repeat", "soak", "world_alone"],
          value_parser = clap::value_parser!(u64).range(1..=100))]
    compare_clocks: Option<u64>,
    /// Measure the floor instead: the least a lockstep barrier over as
    /// many processes as the scenario has lockstep participants costs on
    /// this machine (one small message to each and back per step, nothing
    /// else), over `--duration`'s steps: wall time and every process's CPU
    /// per step.
    #[arg(long, conflicts_with_all = ["record", "record_cost", "compare_clocks", "repeat", "soak", "world_alone",
          "link_latency_ms", "standby_world"])]
    barrier_floor: bool,
    /// How `--record` (or `--record-cost`) compresses the file's chunks:
    /// none, lz4 or zstd (`flotilla record --compression`; none when not
    /// given).
    #[arg(long, value_name = "NAME")]
    record_compression: Option<ChunkCompression>,
    /// Also serve the live view (`flotilla view`) on this address, to
    /// measure what it costs with a page open.
    #[arg(long, value_name = "HOST:PORT")]
    view: Option<String>,
    /// Soak instead of measuring: run for this many wall seconds with this
    /// process sending `cmd_vel` to every robot at 100 Hz (no wander node)
    /// and checking every odometry reply, sampling every process's memory;
    /// fails on a lost or reordered reply, a silent or still robot, a node
    /// gone, or memory varying over 5 % after warm-up (the first fifth).
    #[arg(long, value_name = "WALL_SECONDS")]
    soak: Option<f64>,
    /// With `--soak`: run a standby world beside the world and kill
    /// whichever world is running (SIGKILL) every this many wall seconds,
    /// starting it again to stand by in turn; the soak then also checks
    /// that every take-over loses nothing (the worlds' own memory, a new
    /// process each time, is reported but not checked).
    #[arg(long, value_name = "WALL_SECONDS", requires = "soak")]
    kill_world_every: Option<f64>,
    /// Run a standby world beside the world (`flotilla run
    /// --standby-world`), never killed: to measure what following the
    /// world and fetching its checkpoint once a second costs the run.
    #[arg(long, conflicts_with = "world_alone")]
    standby_world: bool,
    /// Run the world alone, without any node: its robots stand still (no
    /// drive, odometry, laser or wander), to measure what the world's step
    /// and its state stream cost per robot.
    #[arg(long, conflicts_with_all = ["soak", "record", "view"])]
    world_alone: bool,
    /// Emulate the world on one machine and the nodes on another, this
    /// many ms apart each way: every connection of a node to the world
    /// goes through a relay that holds each direction's bytes that long
    /// (a kernel without `tc netem` cannot delay a link). What lockstep
    /// costs across a real link.
    #[arg(long = "link-latency", value_name = "MS",
          conflicts_with_all = ["standby_world", "kill_world_every", "world_alone"])]
    link_latency_ms: Option<f64>,
    /// Print one JSON object instead of the report.
    #[arg(long)]
    json: bool,
    /// Where the scenario and the process logs are written (default: a
    /// directory under the system's temporary directory).
    #[arg(long)]
    dir: Option<PathBuf>,
}

/// One measured process.
#[derive(Debug, Clone, Serialize)]
pub struct ProcessReport {
    /// Its role: world, drive, odom, laser, wander.
    pub name: String,
    /// CPU seconds (user + system) during the measurement.
    pub cpu_s: f64,
    /// CPU seconds per wall second during the measurement (1.0 = one core).
    pub cores: f64,
    /// Peak resident memory of the process, bytes.
    pub peak_rss_bytes: u64,
    /// CPU seconds of each kind of thread during the measurement, busiest
    /// first (threads that ended meanwhile are missing).
    pub threads: Vec<ThreadReport>,
}

/// The CPU of one kind of thread of a process: Zenoh's `net` (receiving
/// and routing), `tx` (sending), tokio's workers, the main thread (named
/// after the binary), a laser's `scan` threads.
#[derive(Debug, Clone, Serialize)]
pub struct ThreadReport {
    /// The threads' name without its `-<number>`.
    pub name: String,
    /// CPU seconds (user + system) during the measurement.
    pub cpu_s: f64,
}

/// The CPU each kind of thread used between two samples, busiest first.
fn threads_between(before: &BTreeMap<String, f64>, after: &BTreeMap<String, f64>) -> Vec<ThreadReport> {
    let mut threads: Vec<ThreadReport> = after
        .iter()
        .map(|(name, cpu_s)| ThreadReport {
            name: name.clone(),
            cpu_s: cpu_s - before.get(name).copied().unwrap_or(0.0),
        })
        .collect();
    threads.sort_by(|a, b| b.cpu_s.total_cmp(&a.cpu_s));
    threads
}

/// Traffic of one key class, counted over a window after the timed run.
#[derive(Debug, Clone, Serialize)]
pub struct TrafficReport {
    /// The key class, e.g. `scan` or `world/state`.
    pub key: String,
    /// Messages per wall second.
    pub msgs_per_s: f64,
    /// Payload bytes per wall second.
    pub bytes_per_s: f64,
}

/// Everything `flotilla bench` reports.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The scenario.
    pub scenario: String,
    /// The clock mode.
    pub clock: String,
    /// Robots in the world.
    pub robots: usize,
    /// Sim seconds measured.
    pub sim_seconds: f64,
    /// Wall seconds they took.
    pub wall_seconds: f64,
    /// Real-time factor: sim seconds per wall second.
    pub rtf: f64,
    /// Laser processes (shards).
    pub laser_shards: u64,
    /// Drive processes (shards).
    pub drive_shards: u64,
    /// Laser beams cast per wall second.
    pub beams_per_s: f64,
    /// Laser beams cast per CPU second of the laser processes.
    pub beams_per_s_per_core: f64,
    /// Peak resident memory of the world process divided by its robots, bytes.
    pub world_memory_per_robot_bytes: u64,
    /// Every process.
    pub processes: Vec<ProcessReport>,
    /// The main keys.
    pub traffic: Vec<TrafficReport>,
    /// Sim seconds over which `traffic` was counted, after the timed run.
    pub traffic_sim_seconds: f64,
    /// Wall seconds over which `traffic` was counted.
    pub traffic_wall_seconds: f64,
    /// cmd_vel → odometry latency (scenario `latency`).
    pub latency: Option<latency::Latency>,
    /// The physics step, ms.
    pub step_ms: f64,
    /// Logical CPUs of this machine.
    pub cpus: usize,
    /// Latency added to each direction between the world's machine and
    /// the nodes' (`--link-latency`), ms; `None` on one machine.
    pub link_latency_ms: Option<f64>,
}

#[cfg(test)]
impl Report {
    /// A report of office-50 fast at `rtf` over `sim_seconds`, with these
    /// processes and made-up figures for the rest, for tests.
    pub(crate) fn of_office_50(rtf: f64, sim_seconds: f64, processes: Vec<ProcessReport>) -> Report {
        Report {
            scenario: "office-50".into(),
            clock: "fast".into(),
            robots: 50,
            sim_seconds,
            wall_seconds: sim_seconds / rtf,
            rtf,
            laser_shards: 1,
            drive_shards: 1,
            beams_per_s: 1e7,
            beams_per_s_per_core: 2e7,
            world_memory_per_robot_bytes: 10_000,
            processes,
            traffic: vec![],
            traffic_sim_seconds: 1.0,
            traffic_wall_seconds: 1.0,
            latency: None,
            step_ms: 5.0,
            cpus: 2,
            link_latency_ms: None,
        }
    }

    /// [`Report::of_office_50`] with processes given as (name, CPU s).
    pub(crate) fn of_office_50_using(rtf: f64, sim_seconds: f64, cpu_s: &[(&str, f64)]) -> Report {
        let processes = cpu_s
            .iter()
            .map(|&(name, cpu_s)| ProcessReport {
                name: name.into(),
                cpu_s,
                cores: 0.0,
                peak_rss_bytes: 0,
                threads: vec![],
            })
            .collect();
        Report::of_office_50(rtf, sim_seconds, processes)
    }
}

/// Runs `flotilla bench`.
pub fn run(args: BenchArgs) -> anyhow::Result<()> {
    if args.record_compression.is_some() && !args.record && args.record_cost.is_none() {
        bail!("--record-compression needs --record or --record-cost: nothing is recorded without them");
    }
    if !(args.duration_s.is_finite() && args.duration_s > 0.0) {
        bail!("--duration must be a positive number of sim seconds, got {}", args.duration_s);
    }
    let clock = match (args.scenario, args.clock) {
        (Scenario::Latency, ClockMode::Fast | ClockMode::Realtime) => ClockMode::Realtime,
        (Scenario::Latency, other) => bail!("the latency scenario runs in realtime mode, not {other}"),
        (_, mode @ (ClockMode::Fast | ClockMode::Lockstep)) => mode,
        (_, other) => bail!("--clock must be fast or lockstep, not {other}"),
    };
    let dir =
        args.dir.clone().unwrap_or_else(|| std::env::temp_dir().join(format!("flotilla-bench-{}", args.scenario)));
    let generated = scenarios::generate(args.scenario, &dir)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    if let Some(rounds) = args.record_cost {
        return run_record_cost(&args, clock, &dir, &generated, &runtime, rounds);
    }
    if args.barrier_floor {
        let participants = processes::lockstep_participants(&args, &generated);
        let floor = barrier_floor::measure(participants, (args.duration_s / scenarios::STEP_S) as u64, &dir)?;
        match args.json {
            true => println!("{}", serde_json::to_string(&floor)?),
            false => barrier_floor::print(&floor),
        }
        return Ok(());
    }
    if let Some(rounds) = args.compare_clocks {
        return run_compare_clocks(&args, &dir, &generated, &runtime, rounds);
    }
    if let Some(wall_s) = args.soak {
        return run_soak(&args, clock, &dir, &generated, &runtime, wall_s);
    }
    // On Ctrl-C or SIGTERM (a `timeout`, a CI job cancelled) the measurement
    // is dropped, and with it the node processes it started: none is left
    // running.
    let mut runs = Vec::new();
    for run in 1..=args.repeat {
        let report = until_interrupted(&runtime, measure(&args, clock, &dir, &generated))?;
        if args.repeat > 1 && !args.json {
            println!("run {run} of {}: {:.2}× real time", args.repeat, report.rtf);
        }
        runs.push(report);
    }
    match (args.repeat, args.json) {
        (1, true) => println!("{}", serde_json::to_string(&runs[0])?),
        (1, false) => print_report(&runs[0], &dir),
        (_, true) => println!("{}", serde_json::to_string(&repeat::summarise(runs))?),
        (_, false) => {
            repeat::print(&repeat::summarise(runs));
            println!("scenario and logs: {}", dir.display());
        }
    }
    Ok(())
}

impl BenchArgs {
    /// The chunk compression of `--record` and `--record-cost`.
    fn compression(&self) -> ChunkCompression {
        self.record_compression.unwrap_or_default()
    }
}

/// `--record-cost ROUNDS`: each round a run without a recorder, then one
/// with; reports what recording cost.
fn run_record_cost(
    args: &BenchArgs,
    clock: ClockMode,
    dir: &std::path::Path,
    generated: &scenarios::Generated,
    runtime: &tokio::runtime::Runtime,
    rounds: u64,
) -> anyhow::Result<()> {
    let without = BenchArgs { record: false, ..args.clone() };
    let with = BenchArgs { record: true, ..args.clone() };
    let (without, with) = (&without, &with);
    let pairs = paired_rounds(runtime, rounds, args.json, |round| async move {
        let without = measure(without, clock, dir, generated).await?;
        let with = measure(with, clock, dir, generated).await?;
        let (a, b) = (without.rtf, with.rtf);
        let said = format!(
            "round {round} of {rounds}: {a:.2}× without a recorder, {b:.2}× with: {:.1} %",
            100.0 * (1.0 - b / a)
        );
        anyhow::Ok(((without, with), said))
    })?;
    let cost = record_cost::summarise(pairs, args.compression().name());
    if args.json {
        println!("{}", serde_json::to_string(&cost)?);
    } else {
        record_cost::print(&cost);
        println!("scenario, logs and the last recording: {}", dir.display());
    }
    Ok(())
}

fn run_compare_clocks(
    args: &BenchArgs,
    dir: &std::path::Path,
    generated: &scenarios::Generated,
    runtime: &tokio::runtime::Runtime,
    rounds: u64,
) -> anyhow::Result<()> {
    if args.scenario == Scenario::Latency {
        bail!("--compare-clocks compares fast and lockstep; the latency scenario runs in realtime");
    }
    let pairs = paired_rounds(runtime, rounds, args.json, |round| async move {
        let fast = measure(args, ClockMode::Fast, dir, generated).await?;
        let lockstep = measure(args, ClockMode::Lockstep, dir, generated).await?;
        let (a, b) = (fast.rtf, lockstep.rtf);
        let said = format!("round {round} of {rounds}: {a:.2}× fast, {b:.2}× lockstep: {:.2} times slower", a / b);
        anyhow::Ok(((fast, lockstep), said))
    })?;
    let comparison = compare_clocks::summarise(pairs);
    if args.json {
        println!("{}", serde_json::to_string(&comparison)?);
    } else {
        compare_clocks::print(&comparison);
        println!("scenario and logs: {}", dir.display());
    }
    Ok(())
}

/// `rounds` rounds of two runs made by `round(k)`, each round's line
/// printed as it ends (unless `json`): what `--record-cost` and
/// `--compare-clocks` take, the two runs of a round minutes apart at most.
fn paired_rounds<F, Fut>(
    runtime: &tokio::runtime::Runtime,
    rounds: u64,
    json: bool,
    round: F,
) -> anyhow::Result<Vec<(Report, Report)>>
where
    F: Fn(u64) -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<((Report, Report), String)>>,
{
    let mut pairs = Vec::new();
    for k in 1..=rounds {
        let (pair, said) = until_interrupted(runtime, round(k))?;
        if !json {
            println!("{said}");
        }
        pairs.push(pair);
    }
    Ok(pairs)
}

/// Runs `work` to its end on `runtime`, unless Ctrl-C or SIGTERM comes
/// first: then it is dropped, and with it the node processes it started.
fn until_interrupted<T>(
    runtime: &tokio::runtime::Runtime,
    work: impl std::future::Future<Output = anyhow::Result<T>>,
) -> anyhow::Result<T> {
    runtime.block_on(async {
        tokio::select! {
            done = work => done,
            _ = flotilla_node_kit::args::shutdown_signal() => bail!("interrupted; every node process stopped"),
        }
    })
}

/// `--soak`: runs, reports, and fails when the soak did not pass.
fn run_soak(
    args: &BenchArgs,
    clock: ClockMode,
    dir: &std::path::Path,
    generated: &scenarios::Generated,
    runtime: &tokio::runtime::Runtime,
    wall_s: f64,
) -> anyhow::Result<()> {
    if !(wall_s.is_finite() && wall_s > 0.0) {
        bail!("--soak must be a positive number of wall seconds, got {wall_s}");
    }
    if args.scenario == Scenario::Latency {
        bail!("the latency scenario has one robot and measures latency; soak office-N or warehouse-N");
    }
    let report = until_interrupted(runtime, soak::soak(args, clock, dir, generated, Duration::from_secs_f64(wall_s)))?;
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        soak::print(&report);
        println!("scenario and logs: {}", dir.display());
    }
    if !report.failures.is_empty() {
        bail!("the soak failed: {}", report.failures.join("; "));
    }
    Ok(())
}

/// The least wall time a measurement's warm-up lasts: twice the time the
/// nodes take to believe that nobody reads an output
/// ([`MATCHING_SETTLES_IN`]).
const MIN_WARMUP_WALL: Duration = MATCHING_SETTLES_IN.saturating_mul(2);

async fn measure(
    args: &BenchArgs,
    clock: ClockMode,
    dir: &std::path::Path,
    generated: &scenarios::Generated,
) -> anyhow::Result<Report> {
    let mut run = Running::start(args, clock, dir, generated).await?;
    let step_ms = run.description.step_ns as f64 * 1e-6;
    run.resume().await?;
    let resumed = Instant::now();
    let warmup_ns = (args.warmup_s * 1e9) as u64;
    run.wait_for_sim(warmup_ns).await?;
    // In fast mode a warm-up of a sim second is a few wall milliseconds,
    // and a 20 sim s run half a wall second: without this, the nodes'
    // first second, in which they encode and publish outputs nobody reads,
    // would be most of what is measured.
    let settled = resumed + MIN_WARMUP_WALL;
    while Instant::now() < settled {
        run.check()?;
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    let pids = run.pids();
    let sample_all = || -> anyhow::Result<Vec<procstat::ProcSample>> {
        pids.iter().map(|(_, pid)| procstat::sample(*pid)).collect()
    };
    let sample_threads = || -> anyhow::Result<Vec<BTreeMap<String, f64>>> {
        pids.iter().map(|(_, pid)| procstat::threads_cpu_s(*pid)).collect()
    };
    let sim_ns = run.watch.sim_ns.clone();
    let threads_0 = sample_threads()?;
    let (wall_0, sim_0, procs_0) = (Instant::now(), sim_ns.load(Ordering::Relaxed), sample_all()?);

    let latency = if args.scenario == Scenario::Latency {
        let period = Duration::from_millis(50);
        let samples = ((args.duration_s / period.as_secs_f64()) as usize).max(10);
        let cmd_vel = run.keys.ros("/robot1/cmd_vel");
        let odometry = run.keys.ros("/robot1/odometry/filtered");
        let step = Duration::from_nanos(run.description.step_ns);
        Some(latency::measure(&run.session, &cmd_vel, &odometry, samples, period, step).await?)
    } else {
        let target = sim_0 + (args.duration_s * 1e9) as u64;
        run.wait_for_sim(target).await?;
        None
    };
    let (wall_1, sim_1, procs_1) = (Instant::now(), sim_ns.load(Ordering::Relaxed), sample_all()?);
    let threads_1 = sample_threads()?;

    let traffic = count_traffic(&mut run, args).await?;

    let wall = wall_1.duration_since(wall_0).as_secs_f64();
    let sim_s = (sim_1 - sim_0) as f64 * 1e-9;
    let processes: Vec<ProcessReport> = pids
        .iter()
        .zip(procs_0.iter().zip(&procs_1))
        .zip(threads_0.iter().zip(&threads_1))
        .map(|(((name, _), (a, b)), (threads_a, threads_b))| ProcessReport {
            name: name.clone(),
            cpu_s: b.cpu_s - a.cpu_s,
            cores: (b.cpu_s - a.cpu_s) / wall,
            peak_rss_bytes: b.peak_rss_bytes,
            threads: threads_between(threads_a, threads_b),
        })
        .collect();
    // Every robot scans at the same steps, robot1's included: the window
    // holds exactly this many scans.
    let lasers = if args.world_alone { 0 } else { generated.beams_per_scan };
    let beams = generated.robots as f64 * generated.scan_rate_hz * sim_s * lasers as f64;
    let laser_cpu: f64 = processes.iter().filter(|p| p.name.starts_with("laser")).map(|p| p.cpu_s).sum();
    let world_peak = processes.iter().find(|p| p.name == "world").map(|p| p.peak_rss_bytes).unwrap_or(0);
    Ok(Report {
        scenario: args.scenario.to_string(),
        clock: clock.to_string(),
        robots: generated.robots,
        sim_seconds: sim_s,
        wall_seconds: wall,
        rtf: sim_s / wall,
        laser_shards: if lasers > 0 { args.laser_shards } else { 0 },
        drive_shards: if args.world_alone { 0 } else { args.drive_shards },
        beams_per_s: beams / wall,
        beams_per_s_per_core: if laser_cpu > 0.0 { beams / laser_cpu } else { 0.0 },
        world_memory_per_robot_bytes: world_peak / generated.robots.max(1) as u64,
        processes,
        traffic: traffic.keys,
        traffic_sim_seconds: traffic.sim_seconds,
        traffic_wall_seconds: traffic.wall_seconds,
        latency,
        step_ms,
        cpus: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        link_latency_ms: args.link_latency_ms,
    })
}

/// The traffic on the main keys over a window of its own.
struct CountedTraffic {
    keys: Vec<TrafficReport>,
    sim_seconds: f64,
    wall_seconds: f64,
}

/// Counts the traffic after the timed run, over a window of its own: a
/// subscriber on every scan and odometry key makes the world's router copy
/// every message to this process, matching wildcards per message, which
/// slowed office-50 by a fifth (8.3–9.8× instead of 10.8–11.1×).
async fn count_traffic(run: &mut Running, args: &BenchArgs) -> anyhow::Result<CountedTraffic> {
    let sim_ns = run.watch.sim_ns.clone();
    let traffic = traffic::Traffic::start(&run.session, &run.keys).await?;
    let window_ns = (args.duration_s * TRAFFIC_WINDOW_SHARE * 1e9).max(MIN_TRAFFIC_WINDOW_S * 1e9) as u64;
    let (wall_0, sim_0, before) = (Instant::now(), sim_ns.load(Ordering::Relaxed), traffic.snapshot());
    run.wait_for_sim(sim_0 + window_ns).await?;
    let (wall_seconds, sim_1, after) =
        (wall_0.elapsed().as_secs_f64(), sim_ns.load(Ordering::Relaxed), traffic.snapshot());
    let keys = before
        .iter()
        .zip(&after)
        .map(|((key, (m0, b0)), (_, (m1, b1)))| TrafficReport {
            key: key.clone(),
            msgs_per_s: (m1 - m0) as f64 / wall_seconds,
            bytes_per_s: (b1 - b0) as f64 / wall_seconds,
        })
        .collect();
    Ok(CountedTraffic { keys, sim_seconds: (sim_1 - sim_0) as f64 * 1e-9, wall_seconds })
}

/// What the bench watches while a scenario runs: the world's status (is
/// everything claimed and in the barrier?) and the sim time the whole
/// pipeline has delivered.
struct Watch {
    status: Arc<std::sync::Mutex<Option<WorldStatus>>>,
    sim_ns: Arc<AtomicU64>,
    _subscribers: [zenoh::pubsub::Subscriber<()>; 2],
}

impl Watch {
    async fn start(session: &zenoh::Session, keys: &Keys, with_laser: bool) -> anyhow::Result<Watch> {
        let status = Arc::new(std::sync::Mutex::new(None::<WorldStatus>));
        let status_subscriber = {
            let status = status.clone();
            session
                .declare_subscriber(keys.status())
                .callback(move |sample| {
                    if let Ok(s) = decode::<WorldStatus>(&sample.payload().to_bytes()) {
                        *status.lock().unwrap_or_else(|e| e.into_inner()) = Some(s);
                    }
                })
                .await
                .map_err(|e| anyhow::anyhow!("{e}"))?
        };
        // Progress is what the whole pipeline has delivered, not how far the
        // world has stepped: in fast mode the world does not wait, so it runs
        // ahead of sensors that cannot keep up. With lasers, the stamp of the
        // last scan of robot1 (the laser node handles every robot of a state
        // together); without, the clock.
        let sim_ns = Arc::new(AtomicU64::new(0));
        let progress = {
            let sim_ns = sim_ns.clone();
            let key = if with_laser { keys.ros("/robot1/scan") } else { keys.ros("/clock") };
            session
                .declare_subscriber(key)
                .callback(move |sample| {
                    let bytes = sample.payload().to_bytes();
                    let stamp = if with_laser {
                        flotilla_messages::decode::<LaserScan>(&bytes).map(|s| s.header.stamp).ok()
                    } else {
                        flotilla_messages::decode::<Clock>(&bytes).map(|c| c.clock).ok()
                    };
                    if let Some(t) = stamp {
                        sim_ns.fetch_max(t.nanos(), Ordering::Relaxed);
                    }
                })
                .await
                .map_err(|e| anyhow::anyhow!("{e}"))?
        };
        Ok(Watch { status, sim_ns, _subscribers: [status_subscriber, progress] })
    }
}

/// Prints one run's report.
fn print_report(r: &Report, dir: &std::path::Path) {
    println!(
        "{} ({} robots), clock {}: {:.2} sim s in {:.2} wall s = {:.2}× real time on {} CPUs",
        r.scenario, r.robots, r.clock, r.sim_seconds, r.wall_seconds, r.rtf, r.cpus
    );
    if r.beams_per_s > 0.0 {
        println!(
            "laser: {:.2} M beams/s, {:.2} M beams/s per laser-process core ({} laser process{})",
            r.beams_per_s / 1e6,
            r.beams_per_s_per_core / 1e6,
            r.laser_shards,
            if r.laser_shards == 1 { "" } else { "es" }
        );
    }
    if let Some(latency) = r.link_latency_ms {
        println!("the world on one machine, the nodes on another, {latency} ms added each way between them");
    }
    println!("world memory per robot: {:.3} MB (peak RSS / robots)", r.world_memory_per_robot_bytes as f64 / 1e6);
    println!("{:<8} {:>10} {:>8} {:>12}", "process", "CPU s", "cores", "peak RSS MB");
    for p in &r.processes {
        println!("{:<8} {:>10.2} {:>8.2} {:>12.1}", p.name, p.cpu_s, p.cores, p.peak_rss_bytes as f64 / 1e6);
        for t in p.threads.iter().filter(|t| t.cpu_s >= 0.005) {
            println!("  {:<18} {:>8.2}", t.name, t.cpu_s);
        }
    }
    println!(
        "traffic, counted after the timed run over {:.2} sim s ({:.2} wall s):",
        r.traffic_sim_seconds, r.traffic_wall_seconds
    );
    println!("{:<12} {:>12} {:>12}", "key", "msgs/s", "MB/s");
    for t in &r.traffic {
        println!("{:<12} {:>12.0} {:>12.3}", t.key, t.msgs_per_s, t.bytes_per_s / 1e6);
    }
    if let Some(l) = &r.latency {
        println!(
            "cmd_vel → odometry latency over {} commands: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms (step {:.1} ms)",
            l.samples, l.p50_ms, l.p99_ms, l.max_ms, r.step_ms
        );
    }
    println!("scenario and logs: {}", dir.display());
}
