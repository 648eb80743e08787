//! Several machines, emulated with network namespaces: the world in one
//! (host W), laser and drive shards and odometry in another (host N), joined
//! by a veth pair over TCP with the documented options. Robots drive, scans
//! arrive; cutting the link and restoring it recovers without restarting
//! anything. With the authenticated configuration (`configs/secure`: TLS
//! with mutual authentication, access control), a participant without the
//! network's certificate cannot join, and one not allowed cannot drive a
//! robot or spawn one, while the allowed ones do. Needs root, iproute2 and
//! openssl (CI runs as root; the set-up script installs both).

mod common;

use std::path::Path;
use std::process::{Child, Command};
use std::time::Duration;

use flotilla_messages::geometry_msgs::Twist;
use flotilla_messages::nav_msgs::Odometry;
use flotilla_messages::sensor_msgs::LaserScan;
use flotilla_node_kit::client::call_control;
use flotilla_wire::control::ControlRequest;
use flotilla_wire::geometry::Pose2;
use flotilla_wire::Keys;

use common::netns::ip;

const T: Duration = Duration::from_secs(30);
const ROBOTS: [&str; 4] = ["robot1", "robot2", "robot3", "robot4"];

/// Two namespaces joined by a veth pair, plus a veth from this (root)
/// namespace into the world's, so the test can watch. Removed on drop.
struct Hosts {
    w: String,
    n: String,
    link_n: String,
    world_for_nodes: String,
    world_for_test: String,
}

impl Hosts {
    fn new(tag: u32) -> Hosts {
        let (w, n) = (format!("flw{tag}"), format!("fln{tag}"));
        let subnet = common::netns::free_subnet(tag, &[201, 202]);
        for ns in [&w, &n] {
            let _ = Command::new("ip").args(["netns", "del", ns]).output();
            ip(&["netns", "add", ns]);
            ip(&["-n", ns, "link", "set", "lo", "up"]);
        }
        let (link_w, link_n) = (format!("v{tag}w"), format!("v{tag}n"));
        ip(&["link", "add", &link_w, "type", "veth", "peer", "name", &link_n]);
        ip(&["link", "set", &link_w, "netns", &w]);
        ip(&["link", "set", &link_n, "netns", &n]);
        ip(&["-n", &w, "addr", "add", &format!("10.201.{subnet}.1/24"), "dev", &link_w]);
        ip(&["-n", &n, "addr", "add", &format!("10.201.{subnet}.2/24"), "dev", &link_n]);
        ip(&["-n", &w, "link", "set", &link_w, "up"]);
        ip(&["-n", &n, "link", "set", &link_n, "up"]);
        let (root_end, w_end) = (format!("v{tag}r"), format!("v{tag}t"));
        let _ = Command::new("ip").args(["link", "del", &root_end]).output();
        ip(&["link", "add", &root_end, "type", "veth", "peer", "name", &w_end]);
        ip(&["link", "set", &w_end, "netns", &w]);
        ip(&["addr", "add", &format!("10.202.{subnet}.1/24"), "dev", &root_end]);
        ip(&["-n", &w, "addr", "add", &format!("10.202.{subnet}.2/24"), "dev", &w_end]);
        ip(&["link", "set", &root_end, "up"]);
        ip(&["-n", &w, "link", "set", &w_end, "up"]);
        Hosts {
            world_for_nodes: format!("10.201.{subnet}.1"),
            world_for_test: format!("10.202.{subnet}.2"),
            w,
            n,
            link_n,
        }
    }

    /// Starts a binary on a host, logging to `log`.
    fn run(&self, host: &str, binary: &str, args: &[&str], log: &std::path::Path) -> Child {
        common::netns::run(host, binary, args, log)
    }

    /// [`Hosts::run`] in directory `dir` (where a configuration's relative
    /// paths lead).
    fn run_in(&self, dir: &Path, host: &str, binary: &str, args: &[&str], log: &Path) -> Child {
        let program = common::bin(binary);
        let file = std::fs::File::create(log).unwrap();
        Command::new("ip")
            .args(["netns", "exec", host, program.to_str().unwrap()])
            .args(args)
            .current_dir(dir)
            .stdin(std::process::Stdio::null())
            .stdout(file.try_clone().unwrap())
            .stderr(file)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {binary}: {e}"))
    }

    fn link(&self, up: bool) {
        ip(&["-n", &self.n, "link", "set", &self.link_n, if up { "up" } else { "down" }]);
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        for ns in [&self.w, &self.n] {
            let _ = Command::new("ip").args(["netns", "del", ns]).output();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shards_on_another_host_drive_scan_and_survive_a_cut_link() {
    // Shorter than the Zenoh lease: the sessions ride it out.
    survive_a_cut_link(&["--clock", "realtime", "--rate", "2"], 0, Duration::from_secs(2)).await;
}

/// In lockstep, with a cut longer than the lease: the world's barrier loses
/// every participant (their tokens expire) and goes on alone; when the link
/// is back they join again, and the barrier must not wait for a report it
/// already had or one lost in the cut (nodes report a step only once, and
/// resend their last report when they see the same world come back).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lockstep_shards_rejoin_the_barrier_after_a_cut_longer_than_the_lease() {
    survive_a_cut_link(&["--clock", "lockstep"], 1, Duration::from_secs(12)).await;
}

async fn survive_a_cut_link(clock: &[&str], tag_offset: u32, cut: Duration) {
    let tag = (std::process::id() + 211 * tag_offset) % 10_000;
    let hosts = Hosts::new(tag);
    let sim = common::unique_sim("netns");
    let logs = common::log_dir(&sim);
    let port = 7450;
    let for_nodes = format!("tcp/{}:{port}", hosts.world_for_nodes);
    let for_test = format!("tcp/{}:{port}", hosts.world_for_test);
    let world = common::config("tests/determinism/world.yaml");

    let mut children = common::Processes(vec![hosts.run(
        &hosts.w,
        "flotilla-world",
        &[&[world.as_str(), "--sim", &sim, "--listen", &for_nodes, "--listen", &for_test], clock].concat(),
        &logs.join("world.log"),
    )]);
    let nodes: [(&str, &[&str]); 5] = [
        ("flotilla-laser", &["--shard", "0/2"]),
        ("flotilla-laser", &["--shard", "1/2"]),
        ("flotilla-drive", &["--shard", "0/2"]),
        ("flotilla-drive", &["--shard", "1/2"]),
        ("flotilla-odom", &[]),
    ];
    for (i, (binary, extra)) in nodes.iter().enumerate() {
        let mut args = vec!["--sim", sim.as_str(), "--connect", for_nodes.as_str()];
        args.extend_from_slice(extra);
        children.0.push(hosts.run(&hosts.n, binary, &args, &logs.join(format!("{i}-{binary}.log"))));
    }

    let session = common::connect(&for_test).await;
    let keys = Keys::new(&sim);
    flotilla_node_kit::client::wait_for_description(&session, &keys, T).await.unwrap();
    let (tx, mut inbox) = tokio::sync::mpsc::unbounded_channel::<(String, Vec<u8>)>();
    let mut subs = Vec::new();
    for key in ["*/scan", "*/odometry/ground_truth"] {
        let tx = tx.clone();
        subs.push(
            session
                .declare_subscriber(key)
                .callback(move |s| {
                    let _ = tx.send((s.key_expr().to_string(), s.payload().to_bytes().into_owned()));
                })
                .await
                .unwrap(),
        );
    }
    let driver = {
        let session = session.clone();
        tokio::spawn(async move {
            let mut t = Twist::default();
            t.angular.z = 0.4;
            loop {
                for robot in ROBOTS {
                    let _ = session.put(format!("{robot}/cmd_vel"), flotilla_messages::encode(&t)).await;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
    };

    // Every robot turns and every laser scans, whichever shard serves it.
    async fn all_alive(inbox: &mut tokio::sync::mpsc::UnboundedReceiver<(String, Vec<u8>)>, logs: &std::path::Path) {
        let mut scanning = std::collections::BTreeSet::new();
        let mut turning = std::collections::BTreeSet::new();
        let deadline = tokio::time::Instant::now() + T;
        while scanning.len() < 4 || turning.len() < 4 {
            let (key, bytes) = tokio::time::timeout_at(deadline, inbox.recv())
                .await
                .unwrap_or_else(|_| panic!("scanning {scanning:?}, turning {turning:?}; logs in {}", logs.display()))
                .unwrap();
            let robot = key.split('/').next().unwrap().to_string();
            if key.ends_with("/scan") {
                flotilla_messages::decode::<LaserScan>(&bytes).unwrap();
                scanning.insert(robot);
            } else if (flotilla_messages::decode::<Odometry>(&bytes).unwrap().twist.twist.angular.z - 0.4).abs() < 1e-6
            {
                turning.insert(robot);
            }
        }
    }
    all_alive(&mut inbox, &logs).await;

    // Cut the link between the hosts: nothing from host N gets through.
    hosts.link(false);
    tokio::time::sleep(Duration::from_millis(500)).await;
    while inbox.try_recv().is_ok() {}
    tokio::time::sleep(cut).await;
    let mut scans_while_cut = 0;
    while let Ok((key, _)) = inbox.try_recv() {
        scans_while_cut += usize::from(key.ends_with("/scan"));
    }
    assert_eq!(scans_while_cut, 0, "no scans cross a cut link");

    // Restore it: the same processes carry on.
    hosts.link(true);
    all_alive(&mut inbox, &logs).await;
    for child in &mut children.0 {
        assert!(child.try_wait().unwrap().is_none(), "nothing was restarted or died; logs in {}", logs.display());
    }
    driver.abort();
    drop(children);
}

/// The authenticated configuration of `configs/secure`, copied with fresh
/// certificates (for the world's two addresses) into a directory of its own.
fn secure_configuration(dir: &Path, world_addresses: &[&str]) {
    std::fs::create_dir_all(dir).unwrap();
    let secure = common::root().join("configs/secure");
    for entry in std::fs::read_dir(&secure).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json5") {
            std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
        }
    }
    let certs = dir.join("certs");
    let out = Command::new(secure.join("make-certs.sh"))
        .arg("-o")
        .arg(&certs)
        .args(world_addresses)
        .output()
        .expect("openssl is installed");
    assert!(out.status.success(), "make-certs.sh: {}", String::from_utf8_lossy(&out.stderr));
}

/// A session of identity `who` (one of the configurations, absolute paths
/// put in), or with `who: None` one that shows no certificate; it gives up
/// after `patience` if it cannot connect.
async fn open_as(dir: &Path, who: Option<&str>, endpoint: &str, patience: Duration) -> zenoh::Result<zenoh::Session> {
    let mut config = zenoh::Config::from_file(dir.join(format!("{}.json5", who.unwrap_or("node")))).unwrap();
    let set = |config: &mut zenoh::Config, key: &str, value: String| config.insert_json5(key, &value).unwrap();
    let cert = |name: &str| format!("{:?}", dir.join("certs").join(name).to_str().unwrap());
    set(&mut config, "transport/link/tls/root_ca_certificate", cert("ca.pem"));
    match who {
        Some(who) => {
            set(&mut config, "transport/link/tls/connect_certificate", cert(&format!("{who}.pem")));
            set(&mut config, "transport/link/tls/connect_private_key", cert(&format!("{who}.key")));
        }
        None => {
            set(&mut config, "transport/link/tls/connect_certificate", "null".into());
            set(&mut config, "transport/link/tls/connect_private_key", "null".into());
        }
    }
    set(&mut config, "connect/endpoints", format!("[{endpoint:?}]"));
    set(&mut config, "connect/timeout_ms", patience.as_millis().to_string());
    set(&mut config, "connect/exit_on_failure", "true".into());
    set(&mut config, "scouting/multicast/enabled", "false".into());
    zenoh::open(config).await
}

/// Robot `robot`'s yaw rate from its ground-truth odometry, once one comes.
async fn yaw_rate(session: &zenoh::Session, robot: &str) -> f64 {
    let subscriber = session.declare_subscriber(format!("{robot}/odometry/ground_truth")).await.unwrap();
    let sample = tokio::time::timeout(T, subscriber.recv_async())
        .await
        .unwrap_or_else(|_| panic!("no odometry of {robot} in {T:?}"))
        .unwrap();
    flotilla_messages::decode::<Odometry>(&sample.payload().to_bytes()).unwrap().twist.twist.angular.z
}

/// Sends `robot` a turn command at 20 Hz for `how_long`.
async fn drive(session: &zenoh::Session, robot: &str, how_long: Duration) {
    let mut turn = Twist::default();
    turn.angular.z = 0.4;
    let end = tokio::time::Instant::now() + how_long;
    while tokio::time::Instant::now() < end {
        session.put(format!("{robot}/cmd_vel"), flotilla_messages::encode(&turn)).await.unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The authenticated configuration across the two hosts: the world on host
/// W, the plugin nodes on host N with the `node` identity, over QUIC with
/// the `configs/secure` files and fresh certificates; this test (outside
/// both) joins as the operator, robot controllers, a node and outsiders.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_certified_and_allowed_participants_join_drive_and_spawn() {
    let tag = (std::process::id() + 211 * 2) % 10_000;
    let hosts = Hosts::new(tag);
    let sim = common::unique_sim("secure");
    let logs = common::log_dir(&sim);
    let dir = logs.join("secure");
    secure_configuration(&dir, &[&hosts.world_for_nodes, &hosts.world_for_test]);
    let for_nodes = format!("quic/{}:7450", hosts.world_for_nodes);
    let for_test = &format!("quic/{}:7450", hosts.world_for_test);
    let world = common::config("tests/determinism/world.yaml");
    let world_args = [&world, "--sim", &sim, "--config", "world.json5", "--listen", &for_nodes, "--listen", for_test];
    let mut children = common::Processes(vec![hosts.run_in(
        &dir,
        &hosts.w,
        "flotilla-world",
        &[&world_args[..], &["--clock", "realtime"]].concat(),
        &logs.join("world.log"),
    )]);
    for binary in ["flotilla-laser", "flotilla-drive", "flotilla-odom"] {
        let args = ["--sim", sim.as_str(), "--config", "node.json5", "--connect", for_nodes.as_str()];
        children.0.push(hosts.run_in(&dir, &hosts.n, binary, &args, &logs.join(format!("{binary}.log"))));
    }
    let keys = Keys::new(&sim);
    let operator = open_as(&dir, Some("operator"), for_test, T).await.expect("the operator joins");
    flotilla_node_kit::client::wait_for_description(&operator, &keys, T).await.unwrap();
    // The nodes, certified, serve every robot.
    let scans = operator.declare_subscriber("*/scan").await.unwrap();
    let mut scanning = std::collections::BTreeSet::new();
    while scanning.len() < ROBOTS.len() {
        let sample = tokio::time::timeout(T, scans.recv_async()).await.expect("every robot scans").unwrap();
        scanning.insert(sample.key_expr().as_str().split('/').next().unwrap().to_string());
    }
    // Unread, its channel would fill and hold up the session's receiving.
    drop(scans);

    // Without a certificate of the network's authority: no session.
    let patience = Duration::from_secs(3);
    assert!(open_as(&dir, None, for_test, patience).await.is_err(), "joined without a certificate");
    // Nor with an operator's certificate of another authority.
    secure_configuration(&logs.join("rogue"), &[&hosts.world_for_test]);
    for ext in ["pem", "key"] {
        let (from, to) = (format!("rogue/certs/operator.{ext}"), format!("certs/rogue-operator.{ext}"));
        std::fs::copy(logs.join(from), dir.join(to)).unwrap();
    }
    std::fs::copy(dir.join("operator.json5"), dir.join("rogue-operator.json5")).unwrap();
    assert!(
        open_as(&dir, Some("rogue-operator"), for_test, patience).await.is_err(),
        "joined with an operator certificate of another authority"
    );

    // Certified but not allowed: robot2's controller cannot drive robot1,
    // and a node cannot spawn.
    let robot2 = open_as(&dir, Some("controller-robot2"), for_test, T).await.expect("robot2's controller joins");
    drive(&robot2, "robot1", Duration::from_secs(2)).await;
    let turned = yaw_rate(&operator, "robot1").await;
    assert!(turned.abs() < 0.01, "robot2's controller turned robot1 at {turned} rad/s");
    let node = open_as(&dir, Some("node"), for_test, T).await.expect("a node joins");
    let spawn = |name: &str| ControlRequest::Spawn {
        yaml_path: common::root().join("configs/tests/determinism/robot.model.yaml").to_string_lossy().into_owned(),
        name: name.to_string(),
        namespace: name.to_string(),
        pose: Pose2::new(20.0, 0.0, 0.0),
    };
    let refused = call_control(&node, &keys, "spawn", &spawn("intruder"), patience).await;
    assert!(refused.is_err(), "a node spawned a model: {refused:?}");

    // Allowed: robot1's controller turns robot1, the operator spawns.
    let robot1 = open_as(&dir, Some("controller-robot1"), for_test, T).await.expect("robot1's controller joins");
    drive(&robot1, "robot1", Duration::from_secs(2)).await;
    assert!((yaw_rate(&operator, "robot1").await - 0.4).abs() < 1e-6, "robot1's controller could not turn it");
    let reply = call_control(&operator, &keys, "spawn", &spawn("visitor"), T).await.unwrap();
    assert!(reply.success, "the operator's spawn failed: {}", reply.message);
    let description = flotilla_node_kit::client::fetch_description(&operator, &keys, T).await.unwrap();
    let names: Vec<&str> = description.models.iter().map(|m| m.name.as_str()).collect();
    assert!(names.contains(&"visitor") && !names.contains(&"intruder"), "models: {names:?}");
    for child in &mut children.0 {
        assert!(child.try_wait().unwrap().is_none(), "every process still runs; logs in {}", logs.display());
    }
}
