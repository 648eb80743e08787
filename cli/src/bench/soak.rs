//! `flotilla bench SCENARIO --soak WALL_SECONDS`: the scenario runs for a
//! long wall time driven from outside — this process sends `cmd_vel` to
//! every robot at 100 Hz (instead of the wander node) and checks every
//! odometry reply — while every process's memory is sampled. It passes
//! when no message is lost on the lossless odometry stream, none comes out
//! of order, every robot answers and moves, no node restarts, the commands
//! keep their rate and every process's memory stays flat after warm-up.
//!
//! With `--kill-world-every S`, a standby world runs beside the world and
//! whichever world runs is killed every S wall seconds and started again
//! (to stand by in turn): the same checks then say that the take-overs lost
//! nothing and restarted no node.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use flotilla_messages::geometry_msgs::{Twist, Vector3};
use flotilla_messages::nav_msgs::Odometry;
use flotilla_wire::Keys;
use serde::Serialize;
use zenoh::sample::SampleKind;

use super::{procstat, scenarios, BenchArgs, ClockMode, Running};

/// Commands per robot per wall second.
pub const COMMAND_RATE_HZ: f64 = 100.0;
/// The least share of [`COMMAND_RATE_HZ`] the sender must keep.
const COMMAND_RATE_KEPT: f64 = 0.9;
/// The share of the run before memory must be flat, at least
/// [`MIN_WARMUP`].
const WARMUP_SHARE: f64 = 0.2;
const MIN_WARMUP: Duration = Duration::from_secs(5);
/// How much a process's resident memory may vary after warm-up.
const MEMORY_TOLERANCE: f64 = 0.05;
/// Memory samples over the run, at most one a second.
const MEMORY_SAMPLES: f64 = 60.0;
/// The speed a commanded robot reaches at least, m/s (commanded: 0.4 m/s,
/// reached within 0.4 s at the scenario robot's 1 m/s² limit).
const MOVED_SPEED: f64 = 0.1;

/// One robot's odometry, as received.
#[derive(Debug, Clone, Default)]
struct Replies {
    /// Stamp of the latest reply, ns.
    last_ns: Option<u64>,
    received: u64,
    /// Replies missing between two received ones (by their stamps).
    lost: u64,
    /// Replies stamped no later than the one before.
    out_of_order: u64,
    /// The fastest forward speed reported, m/s.
    max_speed: f64,
}

impl Replies {
    fn arrived(&mut self, stamp_ns: u64, speed: f64, period_ns: u64) {
        self.received += 1;
        self.max_speed = self.max_speed.max(speed);
        if let Some(last) = self.last_ns {
            if stamp_ns <= last {
                self.out_of_order += 1;
                return;
            }
            // Rounded: a stamp lands on a step, not exactly on the period.
            let periods = ((stamp_ns - last) as f64 / period_ns as f64).round() as u64;
            self.lost += periods.saturating_sub(1);
        }
        self.last_ns = Some(stamp_ns);
    }
}

/// One process's resident memory over the run.
#[derive(Debug, Clone, Serialize)]
pub struct MemoryTrace {
    /// The process: world, drive, …, and `bench` (this one).
    pub name: String,
    /// Resident memory at each sample, MB.
    pub rss_mb: Vec<f64>,
    /// (max − min) / min over the samples after warm-up.
    pub spread_after_warmup: f64,
    /// Whether the soak killed it (a world): each sample is then of the
    /// process running under its name at the time, and the spread is not
    /// checked.
    pub killed: bool,
}

/// What a soak found.
#[derive(Debug, Clone, Serialize)]
pub struct SoakReport {
    /// The scenario, e.g. `warehouse-1000`.
    pub scenario: String,
    /// The clock mode.
    pub clock: String,
    /// Robots in the world.
    pub robots: usize,
    /// Wall seconds soaked.
    pub wall_seconds: f64,
    /// Sim seconds they took the world to.
    pub sim_seconds: f64,
    /// `cmd_vel` messages sent.
    pub commands_sent: u64,
    /// `cmd_vel` messages per robot per wall second, Hz.
    pub command_rate_hz: f64,
    /// Odometry replies received, on every robot.
    pub odometry_received: u64,
    /// Replies missing between received ones (by their stamps).
    pub odometry_lost: u64,
    /// Replies stamped no later than the one before.
    pub odometry_out_of_order: u64,
    /// Robots that never answered.
    pub silent_robots: Vec<String>,
    /// Robots that answered but never moved.
    pub still_robots: Vec<String>,
    /// Node liveliness tokens that went away (a node stopped or restarted;
    /// a killed world's token comes back with the world that took over).
    pub restarts: Vec<String>,
    /// Worlds killed (`--kill-world-every`).
    pub worlds_killed: u32,
    /// Seconds between memory samples.
    pub sample_every_s: f64,
    /// The warm-up, seconds, whose samples the memory check skips.
    pub warmup_s: f64,
    /// Every process's resident memory over the run.
    pub memory: Vec<MemoryTrace>,
    /// Why it failed; empty when it passed.
    pub failures: Vec<String>,
}

/// Runs the soak and reports; fails (after printing) when it did not pass.
pub async fn soak(
    args: &BenchArgs,
    clock: ClockMode,
    dir: &std::path::Path,
    generated: &scenarios::Generated,
    wall: Duration,
) -> anyhow::Result<SoakReport> {
    let mut run = Running::start(args, clock, dir, generated).await?;
    let robots: Vec<String> = (1..=generated.robots).map(|i| format!("robot{i}")).collect();
    let period_ns = (1e9 / scenarios::ODOMETRY_RATE_HZ) as u64;
    let replies = watch_replies(&run.session, &run.keys, &robots, period_ns).await?;
    let restarts = watch_restarts(&run.session, &run.keys).await?;
    let sent = Arc::new(AtomicU64::new(0));
    let sender = tokio::spawn(send_commands(run.session.clone(), run.keys.clone(), robots.clone(), sent.clone()));

    let mut pids = run.pids();
    pids.push(("bench".to_string(), std::process::id()));
    let sample_every = (wall.as_secs_f64() / MEMORY_SAMPLES).max(1.0);
    let warmup = wall.mul_f64(WARMUP_SHARE).max(MIN_WARMUP);
    let mut memory: Vec<Vec<f64>> = vec![Vec::new(); pids.len()];
    let mut warm_samples = 0;

    run.resume().await?;
    let (start, sim_0) = (Instant::now(), run.watch.sim_ns.load(Ordering::Relaxed));
    let mut next_sample = start;
    let kill_every = args.kill_world_every.map(Duration::from_secs_f64);
    let mut next_kill = kill_every.map(|every| start + every);
    // The world that runs: the first, then whichever took over.
    let mut running = "world";
    let mut worlds_killed = 0;
    let outcome = loop {
        if let (Some(at), Some(every)) = (next_kill, kill_every) {
            if Instant::now() >= at && start.elapsed() + every / 2 < wall {
                match run.kill_and_restart(running) {
                    Ok(pid) => {
                        if let Some(entry) = pids.iter_mut().find(|(name, _)| name == running) {
                            entry.1 = pid;
                        }
                        worlds_killed += 1;
                        running = if running == "world" { "standby" } else { "world" };
                    }
                    Err(e) => break Err(e),
                }
                next_kill = Some(at + every);
            }
        }
        if let Err(e) = run.check() {
            break Err(e);
        }
        if Instant::now() >= next_sample {
            if start.elapsed() < warmup {
                warm_samples += 1;
            }
            for ((_, pid), trace) in pids.iter().zip(&mut memory) {
                trace.push(procstat::sample(*pid).map_or(0.0, |s| s.rss_bytes as f64 / 1e6));
            }
            if start.elapsed() >= wall {
                break Ok(());
            }
            next_sample += Duration::from_secs_f64(sample_every);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    sender.abort();
    outcome?;
    let wall_s = start.elapsed().as_secs_f64();
    let sim_s = (run.watch.sim_ns.load(Ordering::Relaxed) - sim_0) as f64 * 1e-9;

    let replies = replies.replies.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let commands_sent = sent.load(Ordering::Relaxed);
    let memory: Vec<MemoryTrace> = pids
        .iter()
        .zip(memory)
        .map(|((name, _), rss_mb)| {
            let warm = &rss_mb[warm_samples.min(rss_mb.len().saturating_sub(1))..];
            let (low, high) = warm.iter().fold((f64::MAX, 0.0f64), |(l, h), &m| (l.min(m), h.max(m)));
            let killed = kill_every.is_some() && (name == "world" || name == "standby");
            MemoryTrace { name: name.clone(), spread_after_warmup: (high - low) / low.max(1e-9), rss_mb, killed }
        })
        .collect();
    let mut report = SoakReport {
        scenario: args.scenario.to_string(),
        clock: clock.to_string(),
        robots: robots.len(),
        wall_seconds: wall_s,
        sim_seconds: sim_s,
        commands_sent,
        command_rate_hz: commands_sent as f64 / robots.len().max(1) as f64 / wall_s,
        odometry_received: replies.values().map(|r| r.received).sum(),
        odometry_lost: replies.values().map(|r| r.lost).sum(),
        odometry_out_of_order: replies.values().map(|r| r.out_of_order).sum(),
        silent_robots: replies.iter().filter(|(_, r)| r.received == 0).map(|(n, _)| n.clone()).collect(),
        still_robots: replies
            .iter()
            .filter(|(_, r)| r.received > 0 && r.max_speed < MOVED_SPEED)
            .map(|(n, _)| n.clone())
            .collect(),
        restarts: restarts
            .gone
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|token| {
                kill_every.is_none() || run.keys.parse_node_token(token).is_none_or(|id| !id.starts_with("world-"))
            })
            .cloned()
            .collect(),
        worlds_killed,
        sample_every_s: sample_every,
        warmup_s: warmup.as_secs_f64(),
        memory,
        failures: Vec::new(),
    };
    report.failures = failures(&report);
    Ok(report)
}

/// What makes a soak fail.
fn failures(r: &SoakReport) -> Vec<String> {
    let mut failed = Vec::new();
    if r.odometry_lost > 0 {
        failed.push(format!("{} odometry messages lost", r.odometry_lost));
    }
    if r.odometry_out_of_order > 0 {
        failed.push(format!("{} odometry messages out of order", r.odometry_out_of_order));
    }
    if !r.silent_robots.is_empty() {
        failed.push(format!("no odometry from {}", r.silent_robots.join(", ")));
    }
    if !r.still_robots.is_empty() {
        failed.push(format!("never moved: {}", r.still_robots.join(", ")));
    }
    if !r.restarts.is_empty() {
        failed.push(format!("nodes went away: {}", r.restarts.join(", ")));
    }
    if r.command_rate_hz < COMMAND_RATE_HZ * COMMAND_RATE_KEPT {
        failed.push(format!("commands sent at {:.1} Hz per robot, not {COMMAND_RATE_HZ} Hz", r.command_rate_hz));
    }
    for m in r.memory.iter().filter(|m| !m.killed) {
        if m.spread_after_warmup > MEMORY_TOLERANCE {
            failed.push(format!(
                "{}'s memory varied by {:.1} % after warm-up (at most {:.0} %)",
                m.name,
                m.spread_after_warmup * 100.0,
                MEMORY_TOLERANCE * 100.0
            ));
        }
    }
    failed
}

/// Each robot's replies, and the subscriber that collects them.
struct RepliesWatch {
    replies: Arc<Mutex<BTreeMap<String, Replies>>>,
    _subscriber: zenoh::pubsub::Subscriber<()>,
}

/// Subscribes to every robot's odometry (`<robot>/odometry/filtered`).
async fn watch_replies(
    session: &zenoh::Session,
    keys: &Keys,
    robots: &[String],
    period_ns: u64,
) -> anyhow::Result<RepliesWatch> {
    let replies: Arc<Mutex<BTreeMap<String, Replies>>> =
        Arc::new(Mutex::new(robots.iter().map(|r| (r.clone(), Replies::default())).collect()));
    let into = replies.clone();
    let suffix = "/odometry/filtered";
    let subscriber = session
        .declare_subscriber(keys.ros(&format!("/*{suffix}")))
        .callback(move |sample| {
            let key = sample.key_expr().as_str();
            let Some(robot) = key.strip_suffix(suffix).and_then(|k| k.rsplit('/').next()) else { return };
            let Ok(odometry) = flotilla_messages::decode::<Odometry>(&sample.payload().to_bytes()) else { return };
            let stamp_ns = odometry.header.stamp.nanos();
            let speed = odometry.twist.twist.linear.x;
            if let Some(r) = into.lock().unwrap_or_else(|e| e.into_inner()).get_mut(robot) {
                r.arrived(stamp_ns, speed, period_ns);
            }
        })
        .await
        .map_err(|e| anyhow::anyhow!("cannot subscribe to the odometry: {e}"))?;
    Ok(RepliesWatch { replies, _subscriber: subscriber })
}

/// The node tokens that went away, and the subscriber that notes them.
struct RestartsWatch {
    gone: Arc<Mutex<Vec<String>>>,
    _subscriber: zenoh::pubsub::Subscriber<()>,
}

async fn watch_restarts(session: &zenoh::Session, keys: &Keys) -> anyhow::Result<RestartsWatch> {
    let gone: Arc<Mutex<Vec<String>>> = Arc::default();
    let into = gone.clone();
    let subscriber = session
        .liveliness()
        .declare_subscriber(keys.node_tokens())
        .callback(move |sample| {
            if sample.kind() == SampleKind::Delete {
                into.lock().unwrap_or_else(|e| e.into_inner()).push(sample.key_expr().to_string());
            }
        })
        .await
        .map_err(|e| anyhow::anyhow!("cannot watch the nodes: {e}"))?;
    Ok(RestartsWatch { gone, _subscriber: subscriber })
}

/// Sends every robot a `cmd_vel` at [`COMMAND_RATE_HZ`] until aborted:
/// forward at 0.4 m/s, turning one way then the other (±0.6 rad/s over
/// 8 s, each robot at its own phase), counting what it sent in `sent`.
async fn send_commands(session: zenoh::Session, keys: Keys, robots: Vec<String>, sent: Arc<AtomicU64>) {
    let mut publishers = Vec::with_capacity(robots.len());
    for robot in &robots {
        match session.declare_publisher(keys.ros(&format!("/{robot}/cmd_vel"))).await {
            Ok(publisher) => publishers.push(publisher),
            Err(e) => {
                tracing::error!("cannot command {robot}: {e}");
                return;
            }
        }
    }
    let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / COMMAND_RATE_HZ));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let start = Instant::now();
    loop {
        tick.tick().await;
        let t = start.elapsed().as_secs_f64();
        for (i, publisher) in publishers.iter().enumerate() {
            let turn = 0.6 * (std::f64::consts::TAU * t / 8.0 + i as f64).sin();
            let twist =
                Twist { linear: Vector3 { x: 0.4, y: 0.0, z: 0.0 }, angular: Vector3 { x: 0.0, y: 0.0, z: turn } };
            if publisher.put(flotilla_messages::encode(&twist)).await.is_ok() {
                sent.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// Prints a soak's report.
pub fn print(r: &SoakReport) {
    println!(
        "soak of {} ({} robots), clock {}: {:.0} wall s, {:.1} sim s ({:.2}× real time)",
        r.scenario,
        r.robots,
        r.clock,
        r.wall_seconds,
        r.sim_seconds,
        r.sim_seconds / r.wall_seconds
    );
    println!("cmd_vel: {} sent, {:.1} per robot per wall second", r.commands_sent, r.command_rate_hz);
    println!(
        "odometry: {} received, {} lost, {} out of order; {} robots silent, {} never moved",
        r.odometry_received,
        r.odometry_lost,
        r.odometry_out_of_order,
        r.silent_robots.len(),
        r.still_robots.len()
    );
    println!("nodes gone or restarted: {}", r.restarts.len());
    if r.worlds_killed > 0 {
        println!("worlds killed: {} (each taken over by the standby)", r.worlds_killed);
    }
    println!("resident memory, MB, every {:.0} s (spread after the {:.0} s warm-up):", r.sample_every_s, r.warmup_s);
    for m in &r.memory {
        let trace: Vec<String> = m.rss_mb.iter().map(|mb| format!("{mb:.1}")).collect();
        let killed = if m.killed { " (killed and restarted: not checked)" } else { "" };
        println!("{:<8} {:>6.2} %{killed}  {}", m.name, m.spread_after_warmup * 100.0, trace.join(" "));
    }
    if r.failures.is_empty() {
        println!("soak passed");
    } else {
        println!("soak FAILED: {}", r.failures.join("; "));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_count_the_periods_missing_between_stamps() {
        let mut r = Replies::default();
        for stamp_ms in [20, 40, 60, 120, 140, 140, 100] {
            r.arrived(stamp_ms * 1_000_000, 0.2, 20_000_000);
        }
        assert_eq!((r.received, r.lost, r.out_of_order), (7, 2, 2), "80 and 100 missing; 140 again and 100 late");
        assert_eq!(r.max_speed, 0.2);
    }
}
