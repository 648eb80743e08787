//! The processes `flotilla run` starts: each in its own process group,
//! its output forwarded to the console (and its last lines kept for an
//! error), restarted with a growing back-off when it exits, and stopped in
//! stages at the end.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::status_line::Console;

/// A supervised child process.
pub(super) struct Supervised {
    pub(super) name: String,
    program: PathBuf,
    args: Vec<String>,
    pub(super) env: Vec<(String, String)>,
    pub(super) child: Option<Child>,
    /// Process group of the current or last child (its pid).
    pub(super) group: Option<u32>,
    started: Instant,
    restarts: u32,
    pub(super) restart_at: Option<Instant>,
    tail: Arc<Mutex<VecDeque<String>>>,
}

/// A child not started yet: `program` with `args`, and `env` on top of
/// this process's environment.
pub(super) fn supervised(name: &str, program: PathBuf, args: Vec<String>, env: Vec<(String, String)>) -> Supervised {
    Supervised {
        name: name.to_string(),
        program,
        args,
        env,
        child: None,
        group: None,
        started: Instant::now(),
        restarts: 0,
        restart_at: None,
        tail: Arc::new(Mutex::new(VecDeque::new())),
    }
}

/// Starts (or starts again) a child, forwarding its output to `console`.
pub(super) fn start(s: &mut Supervised, console: &Arc<Mutex<Console>>) -> anyhow::Result<()> {
    let mut command = Command::new(&s.program);
    command
        .args(&s.args)
        .envs(s.env.iter().cloned())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group, so that stopping it also stops whatever it
        // started (an `--exec` command runs under `sh -c`).
        .process_group(0);
    let mut child = command.spawn().with_context(|| format!("starting {}", s.program.display()))?;
    s.group = child.id();
    for stream in [
        child.stdout.take().map(|o| Box::new(o) as Box<dyn tokio::io::AsyncRead + Unpin + Send>),
        child.stderr.take().map(|e| Box::new(e) as Box<dyn tokio::io::AsyncRead + Unpin + Send>),
    ]
    .into_iter()
    .flatten()
    {
        let console = console.clone();
        let tail = s.tail.clone();
        let name = s.name.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stream).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                {
                    let mut t = tail.lock().unwrap_or_else(|e| e.into_inner());
                    if t.len() >= 20 {
                        t.pop_front();
                    }
                    t.push_back(line.clone());
                }
                console.lock().unwrap_or_else(|e| e.into_inner()).log(&format!("[{name}] {line}"));
            }
        });
    }
    s.started = Instant::now();
    s.child = Some(child);
    Ok(())
}

/// Sends a signal to a child's whole process group.
pub(super) fn signal_group(s: &Supervised, signal: nix::sys::signal::Signal) {
    if let Some(pid) = s.group {
        let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid as i32), signal);
    }
}

/// Restarts the children that exited (with a growing back-off for those
/// that die right after starting) and those whose restart is due. A world
/// that fails before it ever published a status is the run's failure.
pub(super) fn look_after(
    children: &mut [Supervised],
    console: &Arc<Mutex<Console>>,
    world_seen: bool,
) -> Option<anyhow::Error> {
    let log = |line: String| console.lock().unwrap_or_else(|e| e.into_inner()).log(&line);
    for c in children.iter_mut() {
        if let Some(at) = c.restart_at {
            if Instant::now() >= at {
                c.restart_at = None;
                if let Err(e) = start(c, console) {
                    log(format!("flotilla: cannot restart {}: {e:#}", c.name));
                }
            }
            continue;
        }
        let Some(child) = c.child.as_mut() else { continue };
        let Ok(Some(exit)) = child.try_wait() else { continue };
        c.child = None;
        signal_group(c, nix::sys::signal::Signal::SIGKILL);
        let lived = c.started.elapsed();
        if c.name == "world" && !world_seen && !exit.success() {
            let tail = c.tail.lock().unwrap_or_else(|e| e.into_inner()).iter().cloned().collect::<Vec<_>>().join("\n");
            return Some(anyhow::anyhow!("the world exited ({exit}) before it started:\n{tail}"));
        }
        if c.name.starts_with("exec") && exit.success() {
            log(format!("flotilla: {} finished", c.name));
            continue;
        }
        // Back off when a process dies again and again right after starting.
        c.restarts = if lived > Duration::from_secs(10) { 1 } else { c.restarts + 1 };
        let delay = Duration::from_millis(100 * 2u64.pow(c.restarts.min(6) - 1)).min(Duration::from_secs(5));
        log(format!("flotilla: {} exited ({exit}); restarting in {} ms", c.name, delay.as_millis()));
        c.restart_at = Some(Instant::now() + delay);
    }
    None
}

/// Stops every child in stages, each waited for before the next: first
/// what only watches the simulation (the live view, the recorder, the
/// bridge), so that a recorder still gets the nodes' last batches and the
/// world's clocks while it stops, and none of them logs its peers going
/// away; then the nodes and the `--exec` programs; the world last, so that
/// nodes do not log a lost world. Each stage gets SIGTERM and 5 s
/// in all before SIGKILL, and whatever a child left in its process group
/// goes too.
pub(super) async fn stop_all(children: &mut [Supervised]) {
    for stage in [StopStage::Watchers, StopStage::Nodes, StopStage::World] {
        stop_stage(children.iter_mut().filter(|c| StopStage::of(&c.name) == stage)).await;
    }
}

/// When [`stop_all`] stops a child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StopStage {
    /// The live view, the recorder and the bridge: they only watch.
    Watchers,
    /// Plugin nodes and `--exec` programs.
    Nodes,
    /// The world.
    World,
}

impl StopStage {
    fn of(name: &str) -> StopStage {
        match name {
            "view" | "record" | "bridge" => StopStage::Watchers,
            "world" | "standby" => StopStage::World,
            _ => StopStage::Nodes,
        }
    }
}

/// SIGTERM to each of `children`, then waits for them, SIGKILL after 5 s.
async fn stop_stage<'a>(children: impl Iterator<Item = &'a mut Supervised>) {
    use nix::sys::signal::Signal::{SIGKILL, SIGTERM};
    let mut stopping: Vec<&mut Supervised> = children.collect();
    for c in stopping.iter().filter(|c| c.child.is_some()) {
        signal_group(c, SIGTERM);
    }
    let grace = Instant::now() + Duration::from_secs(5);
    for c in stopping.iter_mut() {
        if let Some(child) = &mut c.child {
            let left = grace.saturating_duration_since(Instant::now());
            if tokio::time::timeout(left, child.wait()).await.is_err() {
                signal_group(c, SIGKILL);
                if let Some(child) = &mut c.child {
                    let _ = child.wait().await;
                }
            }
        }
        signal_group(c, SIGKILL);
    }
}
