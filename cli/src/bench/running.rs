//! A scenario's processes while they run: started (again on new ports if
//! a world's was taken), watched, and checked for a process that exited.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::bail;
use flotilla_node_kit::args::{Role, ZenohArgs};
use flotilla_node_kit::client::{call_control, wait_for_description};
use flotilla_wire::control::{ClockMode, ControlRequest};
use flotilla_wire::world_to_nodes::WorldStatus;
use flotilla_wire::Keys;

use super::link::Link;
use super::processes::{self, Children};
use super::{scenarios, BenchArgs, Watch};

/// A scenario's processes, up with every plugin instance claimed and every
/// node in the barrier (the world still paused), and what watches them.
pub(super) struct Running {
    pub(super) children: Children,
    /// The relay between the nodes and the world (`--link-latency`),
    /// kept while the processes run.
    _link: Option<Link>,
    pub(super) session: zenoh::Session,
    pub(super) keys: Keys,
    pub(super) description: flotilla_wire::description::WorldDescription,
    pub(super) watch: Watch,
    /// When the run gives up (`--timeout`).
    pub(super) deadline: Instant,
    /// Where the logs are.
    pub(super) dir: PathBuf,
}

impl Running {
    /// Starts the scenario's processes, this process's session (a client of
    /// the world) and waits until they are ready. A world's port is picked
    /// free and bound a moment later by the world; if another process took
    /// it meanwhile (an outgoing connection's port, while the last run's
    /// processes still stop), everything starts again on new ports.
    pub(super) async fn start(
        args: &BenchArgs,
        clock: ClockMode,
        dir: &std::path::Path,
        generated: &scenarios::Generated,
    ) -> anyhow::Result<Running> {
        const ATTEMPTS: usize = 3;
        for attempt in 1..=ATTEMPTS {
            if let Some(running) = Running::start_once(args, clock, dir, generated).await? {
                return Ok(running);
            }
            eprintln!("a world's port was taken before it could bind it (attempt {attempt} of {ATTEMPTS}): new ports");
        }
        bail!("no world could bind its port in {ATTEMPTS} attempts; logs in {}", dir.display())
    }

    /// [`Running::start`] once: `None` if a world could not bind its port.
    async fn start_once(
        args: &BenchArgs,
        clock: ClockMode,
        dir: &std::path::Path,
        generated: &scenarios::Generated,
    ) -> anyhow::Result<Option<Running>> {
        let free_port =
            || -> anyhow::Result<u16> { Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port()) };
        let free_endpoint = || -> anyhow::Result<String> { Ok(format!("tcp/127.0.0.1:{}", free_port()?)) };
        let port = free_port()?;
        let endpoint = format!("tcp/127.0.0.1:{port}");
        let link = args
            .link_latency_ms
            .map(|latency_ms| Link::start(std::net::SocketAddr::from(([127, 0, 0, 1], port)), latency_ms))
            .transpose()?;
        let standby = (args.standby_world || args.kill_world_every.is_some()).then(free_endpoint).transpose()?;
        let sim = format!("bench{}", std::process::id());
        let network = processes::Network {
            world: endpoint.clone(),
            world_for_nodes: link.as_ref().map_or_else(|| endpoint.clone(), |link| link.endpoint.clone()),
            standby: standby.as_deref(),
        };
        let (mut children, lockstep_participants) = processes::start(args, clock, dir, generated, &sim, &network)?;
        // With a standby world, a peer of both, as the nodes are.
        let zenoh = match standby {
            Some(standby) => {
                ZenohArgs { connect: vec![endpoint, standby], mode: Some("peer".into()), ..Default::default() }
            }
            None => ZenohArgs { connect: vec![endpoint], ..Default::default() },
        };
        let session = zenoh::open(zenoh.zenoh_config(Role::Node)?).await.map_err(|e| anyhow::anyhow!("{e}"))?;
        let keys = Keys::new(&sim);
        let Some(description) = await_world(&session, &keys, &mut children, dir).await? else {
            return Ok(None);
        };
        let watch = Watch::start(&session, &keys, generated.beams_per_scan > 0 && !args.world_alone).await?;
        let mut run = Running {
            children,
            _link: link,
            session,
            keys,
            description,
            watch,
            deadline: Instant::now() + Duration::from_secs_f64(args.timeout_s + args.soak.unwrap_or(0.0)),
            dir: dir.to_path_buf(),
        };
        // Every plugin instance claimed and every node in the barrier (which
        // paces fast mode too, as flow control).
        loop {
            run.check()?;
            // Alone, the world's plugin instances stay unclaimed.
            let claimed = |s: &WorldStatus| s.unclaimed_count == 0 || args.world_alone;
            let ready = run
                .watch
                .status
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .as_ref()
                .is_some_and(|s| claimed(s) && s.lockstep_participants as usize >= lockstep_participants);
            if ready {
                return Ok(Some(run));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Kills the process `name` (SIGKILL), waits for it and starts it again
    /// with the same command line; its new pid.
    pub(super) fn kill_and_restart(&mut self, name: &str) -> anyhow::Result<u32> {
        self.children.kill_and_restart(name, &self.dir)
    }

    /// Fails if a process exited or the run is past its deadline.
    pub(super) fn check(&mut self) -> anyhow::Result<()> {
        if let Some((name, status)) = self.children.exited()? {
            bail!("{name} exited ({status}); see {}", self.dir.join(format!("{name}.log")).display());
        }
        if Instant::now() > self.deadline {
            bail!("timed out (see --timeout); logs in {}", self.dir.display());
        }
        Ok(())
    }

    pub(super) async fn resume(&self) -> anyhow::Result<()> {
        call_control(&self.session, &self.keys, "resume", &ControlRequest::Resume, Duration::from_secs(10))
            .await
            .map_err(|e| anyhow::anyhow!("resuming the world: {e}"))
            .map(drop)
    }

    /// Every process's name and pid.
    pub(super) fn pids(&self) -> Vec<(String, u32)> {
        self.children.0.iter().map(|(n, c, _)| (n.clone(), c.id())).collect()
    }

    /// Waits until the pipeline has delivered sim time `target_ns` (as
    /// counted by the watch), checking the processes every 10 ms.
    pub(super) async fn wait_for_sim(&mut self, target_ns: u64) -> anyhow::Result<()> {
        while self.watch.sim_ns.load(Ordering::Relaxed) < target_ns {
            self.check()?;
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        Ok(())
    }
}

/// How long a world may take to answer with its description.
const WORLD_UP_TIMEOUT: Duration = Duration::from_secs(60);

/// Waits for the world's description, watching the processes meanwhile:
/// `None` if a world exited because its port was taken, an error if a
/// process exited otherwise or the world did not answer in time.
async fn await_world(
    session: &zenoh::Session,
    keys: &Keys,
    children: &mut Children,
    dir: &std::path::Path,
) -> anyhow::Result<Option<flotilla_wire::description::WorldDescription>> {
    let deadline = Instant::now() + WORLD_UP_TIMEOUT;
    loop {
        match wait_for_description(session, keys, Duration::from_millis(500)).await {
            Ok(description) => return Ok(Some(description)),
            Err(e) if Instant::now() >= deadline => {
                bail!("the world did not come up (logs in {}): {e}", dir.display())
            }
            Err(_) => {}
        }
        if let Some((name, status)) = children.exited()? {
            let log = dir.join(format!("{name}.log"));
            let said = std::fs::read_to_string(&log).unwrap_or_default();
            if said.contains("Address already in use") {
                return Ok(None);
            }
            bail!("{name} exited ({status}) while the world was starting; see {}", log.display());
        }
    }
}
