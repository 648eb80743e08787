//! The processes of one measurement: the world, paused until every node
//! is up (and, for a soak that kills worlds, a standby world), and one
//! process per node role the scenario needs, each logging to its own file;
//! all stopped when the measurement is dropped.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;
use flotilla_node_kit::args::loopback_peer_args;
use flotilla_wire::control::ClockMode;

use super::{scenarios, BenchArgs};

/// Child processes with their command lines, stopped (SIGTERM, then
/// SIGKILL) when dropped.
pub(super) struct Children(pub(super) Vec<(String, Child, CommandLine)>);

/// How a process was started: a Flotilla binary with its arguments.
pub(super) struct CommandLine {
    binary: String,
    args: Vec<String>,
}

impl CommandLine {
    /// Starts it, its output into `log`.
    fn spawn(&self, log: std::fs::File) -> anyhow::Result<Child> {
        Command::new(crate::launch::sibling(&self.binary)?)
            .args(&self.args)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .with_context(|| format!("starting {}", self.binary))
    }
}

impl Children {
    /// The first process that has exited, with its status.
    pub(super) fn exited(&mut self) -> anyhow::Result<Option<(String, std::process::ExitStatus)>> {
        for (name, child, _) in &mut self.0 {
            if let Some(status) = child.try_wait()? {
                return Ok(Some((name.clone(), status)));
            }
        }
        Ok(None)
    }

    /// Kills `name` (SIGKILL), waits for it and starts it again with the
    /// same command line, logging after what it logged; its new pid.
    pub(super) fn kill_and_restart(&mut self, name: &str, dir: &std::path::Path) -> anyhow::Result<u32> {
        let (_, child, command) =
            self.0.iter_mut().find(|(n, ..)| n == name).with_context(|| format!("no process {name}"))?;
        child.kill().with_context(|| format!("killing {name}"))?;
        child.wait()?;
        let log = std::fs::OpenOptions::new().append(true).open(dir.join(format!("{name}.log")))?;
        *child = command.spawn(log)?;
        Ok(child.id())
    }
}

impl Drop for Children {
    fn drop(&mut self) {
        for (_, child, _) in &mut self.0 {
            let pid = nix::unistd::Pid::from_raw(child.id() as i32);
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        for (_, child, _) in &mut self.0 {
            while child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Starts the Flotilla binary `binary` with `args` as process `name`,
/// logging to `name.log` in `dir`.
pub(super) fn spawn(
    dir: &std::path::Path,
    name: &str,
    binary: &str,
    args: &[String],
) -> anyhow::Result<(String, Child, CommandLine)> {
    let log = std::fs::File::create(dir.join(format!("{name}.log"))).with_context(|| format!("log of {name}"))?;
    let command = CommandLine { binary: binary.to_string(), args: args.to_vec() };
    let child = command.spawn(log)?;
    Ok((name.to_string(), child, command))
}

/// Where a run's world listens and how the nodes reach it.
pub(super) struct Network<'a> {
    /// Where the world listens.
    pub(super) world: String,
    /// Where the nodes connect to reach the world: the world's endpoint,
    /// or a relay to it that adds latency (`--link-latency`).
    pub(super) world_for_nodes: String,
    /// Where a standby world listens, if there is one.
    pub(super) standby: Option<&'a str>,
}

/// Starts the world (and a standby world, if given) and every node of
/// `generated` for simulation `sim` on `network`; returns them with how many
/// lockstep participants they make.
pub(super) fn start(
    args: &BenchArgs,
    clock: ClockMode,
    dir: &std::path::Path,
    generated: &scenarios::Generated,
    sim: &str,
    network: &Network,
) -> anyhow::Result<(Children, usize)> {
    let spawn = |name: &str, binary: &str, extra: &[String]| spawn(dir, name, binary, extra);
    // Paused until every node is up, in both modes: otherwise a fast world
    // runs thousands of steps ahead while the nodes are still starting.
    let world_args = |listen: &str| -> Vec<String> {
        let world = generated.world.to_string_lossy().into_owned();
        [world.as_str(), "--sim", sim, "--listen", listen, "--clock", &clock.to_string(), "--start-paused"]
            .map(String::from)
            .to_vec()
    };
    let endpoint = &network.world;
    let mut node = vec!["--sim".to_string(), sim.to_string()];
    let mut children = Children(Vec::new());
    match network.standby {
        Some(standby) => {
            // Each world connected to the other, every node to both.
            let mut world = world_args(endpoint);
            world.extend(["--connect".into(), standby.to_string()]);
            let mut standing_by = world_args(standby);
            standing_by.extend(["--standby".into(), "--connect".into(), endpoint.clone()]);
            children.0.push(spawn("world", "flotilla-world", &world)?);
            children.0.push(spawn("standby", "flotilla-world", &standing_by)?);
            node.extend(loopback_peer_args(&format!("{},{standby}", network.world_for_nodes)));
        }
        None => {
            children.0.push(spawn("world", "flotilla-world", &world_args(endpoint))?);
            node.extend(loopback_peer_args(&network.world_for_nodes));
        }
    }
    if args.world_alone {
        return Ok((children, 0));
    }
    for i in 0..args.drive_shards {
        let (name, mut drive_args) = (sharded_name("drive", i, args.drive_shards), node.clone());
        if args.drive_shards > 1 {
            drive_args.extend(["--shard".to_string(), format!("{i}/{}", args.drive_shards)]);
        }
        children.0.push(spawn(&name, "flotilla-drive", &drive_args)?);
    }
    children.0.push(spawn("odom", "flotilla-odom", &node)?);
    if generated.beams_per_scan > 0 {
        let shards = args.laser_shards;
        for i in 0..shards {
            let (name, mut laser_args) = (sharded_name("laser", i, shards), node.clone());
            if shards > 1 {
                // The cores shared out: more scanning threads than cores
                // only add switches (measured 7 % slower in lockstep).
                let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
                let threads = (cores / shards as usize).max(1);
                laser_args.extend([
                    "--shard".to_string(),
                    format!("{i}/{shards}"),
                    "--threads".into(),
                    threads.to_string(),
                ]);
            }
            children.0.push(spawn(&name, "flotilla-laser", &laser_args)?);
        }
        if args.soak.is_none() {
            // A soak drives the robots itself.
            children.0.push(spawn("wander", "flotilla-wander", &node)?);
        }
    }
    if generated.pioneer {
        children.0.push(spawn("sonar", "flotilla-sonar", &node)?);
        children.0.push(spawn("bumper", "flotilla-bumper", &node)?);
    }
    if generated.people > 0 {
        children.0.push(spawn("crowd", "flotilla-crowd", &node)?);
    }
    if generated.doors > 0 {
        children.0.push(spawn("building", "flotilla-building", &node)?);
    }
    // Loopback peers, as `flotilla run --record` and `--view` start them.
    let client = node.clone();
    if args.record {
        let mut record = vec!["record".to_string(), dir.join("bench.mcap").to_string_lossy().into_owned()];
        record.extend(["--compression".to_string(), args.compression().to_string()]);
        record.extend(client.iter().cloned());
        children.0.push(spawn("record", "flotilla", &record)?);
    }
    if let Some(addr) = &args.view {
        let mut view = vec!["view".to_string(), "--addr".into(), addr.clone()];
        view.extend(client.iter().cloned());
        children.0.push(spawn("view", "flotilla", &view)?);
    }
    Ok((children, lockstep_participants(args, generated)))
}

/// How many processes of `generated` take part in the lockstep barrier:
/// the drives, odometry, the lasers, a Pioneer's sonar and bumper, the
/// crowd and the building (the wander node, a recorder and the view do
/// not).
pub(super) fn lockstep_participants(args: &BenchArgs, generated: &scenarios::Generated) -> usize {
    if args.world_alone {
        return 0;
    }
    let lasers = if generated.beams_per_scan > 0 { args.laser_shards as usize } else { 0 };
    let pioneer = if generated.pioneer { 2 } else { 0 };
    args.drive_shards as usize
        + 1
        + lasers
        + pioneer
        + usize::from(generated.people > 0)
        + usize::from(generated.doors > 0)
}

/// `role` alone, `role.0` … `role.{n-1}` when sharded.
fn sharded_name(role: &str, shard: u64, shards: u64) -> String {
    if shards == 1 {
        role.to_string()
    } else {
        format!("{role}.{shard}")
    }
}
