//! The harness of the end-to-end tests: start real binaries on a free
//! loopback port with a unique simulation id, talk to them over Zenoh, and
//! never wait without a timeout.

#![allow(dead_code, reason = "each test binary uses a different part of the harness")]

pub mod bench;
pub mod lockstep;
pub mod netns;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use flotilla_messages::RosMessage;
use flotilla_node_kit::args::{Role, ZenohArgs};
use flotilla_wire::Keys;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver};

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// A path under the workspace's `configs/`.
pub fn config(rel: &str) -> String {
    root().join("configs").join(rel).to_string_lossy().into_owned()
}

/// A Flotilla binary built next to this test (`target/<profile>/`).
pub fn bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    let path = dir.join(name);
    assert!(path.exists(), "{} is missing: build the binaries first (cargo build --workspace --bins)", path.display());
    path
}

/// How the tests' stand-ins for controllers publish: a command dropped on
/// a congested link (Zenoh's default for a put) would change the run.
pub const LOSSLESS: zenoh::qos::CongestionControl = zenoh::qos::CongestionControl::Block;

/// A free TCP port on loopback.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A simulation id no other test uses.
pub fn unique_sim(name: &str) -> String {
    format!("{name}-{}-{}", std::process::id(), free_port())
}

/// Where a test's child processes write their logs.
pub fn log_dir(sim: &str) -> PathBuf {
    let dir = root().join("target").join("e2e-logs").join(sim);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A running simulation: its processes and a Zenoh session connected to it.
pub struct Sim {
    pub sim: String,
    pub endpoint: String,
    pub keys: Keys,
    pub session: zenoh::Session,
    children: Vec<(String, Child)>,
    world_args: Vec<String>,
    logs: PathBuf,
}

impl Sim {
    /// Starts `flotilla-world WORLD` and the given node binaries.
    pub async fn start(test: &str, world: &str, nodes: &[&str], world_args: &[&str]) -> Sim {
        let sim = unique_sim(test);
        let endpoint = format!("tcp/127.0.0.1:{}", free_port());
        let logs = log_dir(&sim);
        let mut children = Vec::new();
        let mut args = vec![world, "--sim", &sim, "--listen", &endpoint];
        args.extend_from_slice(world_args);
        let world_args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        children.push(("world".to_string(), spawn(&bin("flotilla-world"), &args, &logs.join("world.log"))));
        for node in nodes {
            let child = spawn(&bin(node), &["--sim", &sim, "--connect", &endpoint], &logs.join(format!("{node}.log")));
            children.push((node.to_string(), child));
        }
        let session = connect(&endpoint).await;
        let keys = Keys::new(&sim);
        // The world answers its description once it is up.
        flotilla_node_kit::client::wait_for_description(&session, &keys, Duration::from_secs(30))
            .await
            .unwrap_or_else(|e| panic!("world did not come up (logs in {}): {e}", logs.display()));
        Sim { sim, endpoint, keys, session, children, world_args, logs }
    }

    /// Starts another node binary (named `label` among the children).
    pub fn spawn_node(&mut self, label: &str, binary: &str, extra: &[&str]) {
        let mut args = vec!["--sim", self.sim.as_str(), "--connect", self.endpoint.as_str()];
        args.extend_from_slice(extra);
        let child = spawn(&bin(binary), &args, &self.logs.join(format!("{label}.log")));
        self.children.push((label.to_string(), child));
    }

    /// Starts `program` with `args` followed by this simulation's `--sim`
    /// and `--connect` (a `flotilla` subcommand, e.g. `view`), named `label`.
    #[allow(dead_code)] // not every test binary starts one
    pub fn spawn_node_program(&mut self, label: &str, program: &Path, args: &[&str]) {
        let mut all: Vec<&str> = args.to_vec();
        all.extend_from_slice(&["--sim", self.sim.as_str(), "--connect", self.endpoint.as_str()]);
        let child = spawn(program, &all, &self.logs.join(format!("{label}.log")));
        self.children.push((label.to_string(), child));
    }

    /// Kills a child with SIGKILL.
    pub fn kill(&mut self, name: &str) {
        if let Some((_, child)) = self.children.iter_mut().find(|(n, _)| n == name) {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// A child's log so far.
    pub fn log(&self, name: &str) -> String {
        std::fs::read_to_string(self.logs.join(format!("{name}.log"))).unwrap_or_default()
    }

    /// Waits up to `timeout` until a child's log says `text`; panics with
    /// the log when it never does.
    pub async fn wait_for_log(&self, name: &str, text: &str, timeout: std::time::Duration) {
        let deadline = tokio::time::Instant::now() + timeout;
        while !self.log(name).contains(text) {
            assert!(tokio::time::Instant::now() < deadline, "{name} never logged {text:?}:\n{}", self.log(name));
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    /// Where this simulation's processes log.
    pub fn logs(&self) -> &Path {
        &self.logs
    }

    /// The process id of a child (`"world"` or a binary name).
    pub fn pid(&self, name: &str) -> u32 {
        self.children.iter().find(|(n, _)| n == name).map(|(_, c)| c.id()).expect("no such child")
    }

    /// Whether a child is still running.
    pub fn alive(&mut self, name: &str) -> bool {
        self.children.iter_mut().find(|(n, _)| n == name).is_some_and(|(_, c)| c.try_wait().unwrap().is_none())
    }

    /// Kills the world with SIGKILL.
    pub fn kill_world(&mut self) {
        if let Some((_, child)) = self.children.iter_mut().find(|(n, _)| n == "world") {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the world again with the same arguments (same sim id and endpoint).
    pub fn restart_world(&mut self) {
        let args: Vec<&str> = self.world_args.iter().map(String::as_str).collect();
        let child = spawn(&bin("flotilla-world"), &args, &self.logs.join("world-2.log"));
        match self.children.iter_mut().find(|(n, _)| n == "world") {
            Some(slot) => slot.1 = child,
            None => self.children.push(("world".into(), child)),
        }
    }

    /// Subscribes to a ROS topic, decoding every message.
    pub async fn subscribe<T: RosMessage + Send + 'static>(&self, ros_name: &str) -> Topic<T> {
        subscribe(&self.session, &self.keys, ros_name).await
    }

    /// Subscribes to the world's internal state messages.
    pub async fn subscribe_states(&self) -> Topic<flotilla_wire::world_to_nodes::WorldState> {
        self.subscribe_internal(self.keys.world_state()).await
    }

    /// Subscribes to the world's status messages (about 2 Hz).
    pub async fn subscribe_status(&self) -> Topic<flotilla_wire::world_to_nodes::WorldStatus> {
        self.subscribe_internal(self.keys.status()).await
    }

    /// Subscribes to an internal key, decoding every message.
    async fn subscribe_internal<T: flotilla_wire::codec::WireMessage + Send + 'static>(&self, key: String) -> Topic<T> {
        subscribe_internal(&self.session, key).await
    }

    /// Publishes a CDR message on a ROS topic.
    pub async fn publish<T: RosMessage>(&self, ros_name: &str, message: &T) {
        let payload = flotilla_messages::encode(message);
        self.session.put(self.keys.ros(ros_name), payload).congestion_control(LOSSLESS).await.unwrap();
    }

    /// Calls the world's ROS service `ros_name` (e.g. `/load_world`) as
    /// zenoh-plugin-ros2dds would: CDR request, CDR response.
    #[allow(dead_code)] // not every test binary calls services
    pub async fn call_service<S: flotilla_messages::RosService>(
        &self,
        ros_name: &str,
        request: &S::Request,
    ) -> S::Response {
        self.query(ros_name, request, Duration::from_secs(10)).await
    }

    /// Queries the ROS-facing key of `ros_name` with a CDR message and
    /// decodes the one reply (a service, or an action's `_action/...` part).
    #[allow(dead_code)]
    pub async fn query<Q: RosMessage, R: RosMessage>(&self, ros_name: &str, request: &Q, timeout: Duration) -> R {
        let replies = self
            .session
            .get(self.keys.ros(ros_name))
            .payload(flotilla_messages::encode(request))
            .timeout(timeout)
            .await
            .unwrap();
        let reply = replies.recv_async().await.unwrap_or_else(|e| panic!("no reply from {ros_name}: {e}"));
        let bytes = reply.result().unwrap_or_else(|e| panic!("{ros_name} failed: {e:?}")).payload().to_bytes();
        flotilla_messages::decode(&bytes).unwrap_or_else(|e| panic!("{ros_name}: bad response: {e}"))
    }

    /// Runs the `flotilla` CLI against this simulation; returns (success, output).
    pub fn cli(&self, args: &[&str]) -> (bool, String) {
        cli_against(&self.sim, &self.endpoint, args)
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        for (_, child) in self.children.iter_mut().rev() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Runs the `flotilla` CLI against simulation `sim` at `endpoint`; returns
/// (success, its stdout and stderr).
fn cli_against(sim: &str, endpoint: &str, args: &[&str]) -> (bool, String) {
    let mut all: Vec<&str> = args.to_vec();
    all.extend_from_slice(&["--sim", sim, "--connect", endpoint]);
    let out = Command::new(bin("flotilla")).args(&all).output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

/// A subscription with a timeout on every receive.
pub struct Topic<T> {
    pub key: String,
    rx: UnboundedReceiver<T>,
    _subscriber: zenoh::pubsub::Subscriber<()>,
}

impl<T> Topic<T> {
    /// The next message, or a panic naming the key after `timeout`.
    pub async fn next(&mut self, timeout: Duration) -> T {
        match tokio::time::timeout(timeout, self.rx.recv()).await {
            Ok(Some(m)) => m,
            _ => panic!("no message on {} within {timeout:?}", self.key),
        }
    }

    /// The first message for which `accept` holds, within `timeout`.
    pub async fn until(&mut self, timeout: Duration, mut accept: impl FnMut(&T) -> bool) -> T {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match tokio::time::timeout(left, self.rx.recv()).await {
                Ok(Some(m)) if accept(&m) => return m,
                Ok(Some(_)) => continue,
                _ => panic!("no matching message on {} within {timeout:?}", self.key),
            }
        }
    }

    /// The next message if one arrives (None when the channel closed).
    pub async fn next_opt(&mut self) -> Option<T> {
        self.rx.recv().await
    }

    /// A message already received, if any (never waits).
    pub fn try_next(&mut self) -> Option<T> {
        self.rx.try_recv().ok()
    }

    /// Drops everything received so far.
    pub fn clear(&mut self) {
        while self.rx.try_recv().is_ok() {}
    }
}

/// A Zenoh client session on `endpoint`, multicast off.
pub async fn connect(endpoint: &str) -> zenoh::Session {
    open(ZenohArgs { connect: vec![endpoint.to_string()], ..Default::default() }).await
}

/// A peer session connected to several endpoints (a world and its
/// standby), as the nodes `flotilla run` starts are: when one goes, it
/// still hears the others.
#[allow(dead_code)] // not every test binary has a standby world
pub async fn connect_all(endpoints: &[&str]) -> zenoh::Session {
    let connect = endpoints.iter().map(|e| e.to_string()).collect();
    open(ZenohArgs { connect, mode: Some("peer".into()), ..Default::default() }).await
}

/// A client session connected to the first of `endpoints` that answers,
/// and to the next when that one goes, as a program `flotilla run --exec`
/// starts beside a world and its standby is.
#[allow(dead_code)] // not every test binary has a standby world
pub async fn connect_client(endpoints: &[&str]) -> zenoh::Session {
    let connect = endpoints.iter().map(|e| e.to_string()).collect();
    open(ZenohArgs { connect, mode: Some("client".into()), ..Default::default() }).await
}

/// A node's session as `args` say, within 30 s.
async fn open(args: ZenohArgs) -> zenoh::Session {
    let config = args.zenoh_config(Role::Node).unwrap();
    tokio::time::timeout(Duration::from_secs(30), zenoh::open(config))
        .await
        .expect("connecting to the world timed out")
        .expect("zenoh session")
}

/// Starts a binary with its output in a log file.
pub fn spawn(program: &Path, args: &[&str], log: &Path) -> Child {
    let file = std::fs::File::create(log).unwrap();
    Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(file.try_clone().unwrap())
        .stderr(file)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", program.display()))
}

impl Drop for Launched {
    /// A test that panics still stops the launcher, which stops its nodes.
    fn drop(&mut self) {
        if let Some(mut launcher) = self.launcher.take() {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(launcher.id() as i32),
                nix::sys::signal::Signal::SIGTERM,
            );
            for _ in 0..100 {
                if launcher.try_wait().ok().flatten().is_some() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = launcher.kill();
            let _ = launcher.wait();
        }
    }
}

/// Process ids whose command line matches `pattern` (pgrep -f).
pub fn pids_of(pattern: &str) -> Vec<u32> {
    let out = Command::new("pgrep").args(["-f", pattern]).output().expect("pgrep (procps) is installed");
    String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| l.trim().parse().ok()).collect()
}

/// Sends a signal to a process.
pub fn signal(pid: u32, signal: nix::sys::signal::Signal) {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), signal).expect("the process exists");
}

/// Waits until `count` lockstep participants hold tokens.
pub async fn wait_for_participants(session: &zenoh::Session, keys: &Keys, count: usize, logs: &Path) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let joined = flotilla_node_kit::claims::live_tokens(session, keys.lockstep_all(), Duration::from_secs(2))
            .await
            .map_or(0, |tokens| tokens.len());
        if joined >= count {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{joined} of {count} lockstep participants joined; logs in {}",
            logs.display()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Subscribes to an internal key (`flotilla/<sim>/…`), decoding every message.
pub async fn subscribe_internal<T: flotilla_wire::codec::WireMessage + Send + 'static>(
    session: &zenoh::Session,
    key: String,
) -> Topic<T> {
    let (tx, rx) = unbounded_channel();
    let subscriber = session
        .declare_subscriber(&key)
        .callback(move |sample| {
            let _ = tx.send(flotilla_wire::codec::decode(&sample.payload().to_bytes()).expect("well-formed"));
        })
        .await
        .unwrap();
    Topic { key, rx, _subscriber: subscriber }
}

/// Subscribes to a ROS topic of a simulation, decoding every message.
pub async fn subscribe<T: RosMessage + Send + 'static>(
    session: &zenoh::Session,
    keys: &Keys,
    ros_name: &str,
) -> Topic<T> {
    let key = keys.ros(ros_name);
    let (tx, rx) = unbounded_channel();
    let subscriber = session
        .declare_subscriber(&key)
        .callback(move |sample| {
            let _ = tx.send(flotilla_messages::decode::<T>(&sample.payload().to_bytes()).expect("well-formed CDR"));
        })
        .await
        .unwrap();
    Topic { key, rx, _subscriber: subscriber }
}

/// Child processes that are killed when dropped — also when a test panics,
/// so that a failing test never leaves processes behind.
pub struct Processes(pub Vec<Child>);

impl Drop for Processes {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A simulation started by `flotilla run`, as a user starts it.
pub struct Launched {
    pub sim: String,
    /// Where it listens.
    pub endpoint: String,
    pub keys: Keys,
    pub session: zenoh::Session,
    /// The launcher's output.
    pub log: PathBuf,
    launcher: Option<Child>,
}

impl Launched {
    /// `flotilla run WORLD` on a free port with a unique sim id, plus `extra`.
    pub async fn start(test: &str, world: &str, extra: &[&str]) -> Launched {
        Launched::start_with_env(test, world, extra, &[]).await
    }

    /// As [`Launched::start`], with extra environment variables.
    pub async fn start_with_env(test: &str, world: &str, extra: &[&str], env: &[(&str, &str)]) -> Launched {
        let sim = unique_sim(test);
        let endpoint = format!("tcp/127.0.0.1:{}", free_port());
        let log = log_dir(&sim).join("flotilla-run.log");
        let mut args = vec!["run", world, "--sim", &sim, "--listen", &endpoint];
        args.extend_from_slice(extra);
        let file = std::fs::File::create(&log).unwrap();
        let launcher = Command::new(bin("flotilla"))
            .args(&args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(file.try_clone().unwrap())
            .stderr(file)
            .spawn()
            .expect("cannot start flotilla");
        let session = connect(&endpoint).await;
        Launched { keys: Keys::new(&sim), sim, endpoint, session, log, launcher: Some(launcher) }
    }

    /// Subscribes to a ROS topic of this simulation.
    pub async fn subscribe<T: RosMessage + Send + 'static>(&self, ros_name: &str) -> Topic<T> {
        subscribe(&self.session, &self.keys, ros_name).await
    }

    /// Subscribes to the world's internal state messages.
    #[allow(dead_code)] // not every test binary reads states
    pub async fn subscribe_states(&self) -> Topic<flotilla_wire::world_to_nodes::WorldState> {
        subscribe_internal(&self.session, self.keys.world_state()).await
    }

    /// Runs the `flotilla` CLI against this simulation; returns (success,
    /// output).
    #[allow(dead_code)] // not every test binary runs the CLI
    pub fn cli(&self, args: &[&str]) -> (bool, String) {
        cli_against(&self.sim, &self.endpoint, args)
    }

    /// The launcher's output so far.
    pub fn output(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The pid of the one node process of this simulation running `binary`.
    pub fn node_pid(&self, binary: &str) -> u32 {
        let pids = pids_of(&format!("{binary} --sim {} ", self.sim));
        assert_eq!(pids.len(), 1, "one {binary} process: {pids:?}");
        pids[0]
    }

    /// Kills a node with SIGKILL and waits until the launcher has started a
    /// new one; returns the new pid.
    pub async fn kill_and_await_restart(&self, binary: &str) -> u32 {
        let old = self.node_pid(binary);
        signal(old, nix::sys::signal::Signal::SIGKILL);
        let pattern = format!("{binary} --sim {} ", self.sim);
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            let now = pids_of(&pattern);
            if now.len() == 1 && now[0] != old {
                return now[0];
            }
            assert!(tokio::time::Instant::now() < deadline, "no new {binary}; see {}", self.log.display());
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Stops the launcher with SIGTERM and returns its exit status.
    pub async fn stop(mut self) -> std::process::ExitStatus {
        let mut launcher = self.launcher.take().expect("running");
        signal(launcher.id(), nix::sys::signal::Signal::SIGTERM);
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = launcher.try_wait().unwrap() {
                return status;
            }
            assert!(tokio::time::Instant::now() < deadline, "the launcher did not stop");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// An odometry message's stamp, s.
#[allow(dead_code)] // not every test binary reads odometry
pub fn stamp_s(o: &flotilla_messages::nav_msgs::Odometry) -> f64 {
    f64::from(o.header.stamp.sec) + f64::from(o.header.stamp.nanosec) * 1e-9
}

/// The mean yaw rate, rad/s, of the poses on `odometry` from `from` on over
/// `seconds` of sim time (turns unwrapped).
#[allow(dead_code)]
pub async fn yaw_rate_from(
    odometry: &mut Topic<flotilla_messages::nav_msgs::Odometry>,
    from: &flotilla_messages::nav_msgs::Odometry,
    seconds: f64,
) -> f64 {
    let (start, mut yaw, mut turned) = (stamp_s(from), from.pose.pose.orientation.yaw(), 0.0);
    loop {
        let o = odometry.next(Duration::from_secs(20)).await;
        let now = o.pose.pose.orientation.yaw();
        turned += flotilla_wire::geometry::wrap_angle(now - yaw);
        yaw = now;
        if stamp_s(&o) >= start + seconds {
            return turned / (stamp_s(&o) - start);
        }
    }
}
