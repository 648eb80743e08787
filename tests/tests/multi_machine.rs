//! Several machines, emulated with network namespaces: the world in one
//! (host W), laser and drive shards and odometry in another (host N), joined
//! by a veth pair over TCP with the documented options. Robots drive, scans
//! arrive; cutting the link and restoring it recovers without restarting
//! anything. Needs root and iproute2 (CI runs as root).

mod common;

use std::process::{Child, Command};
use std::time::Duration;

use flotilla_protocol::ros::geometry_msgs::Twist;
use flotilla_protocol::ros::nav_msgs::Odometry;
use flotilla_protocol::ros::sensor_msgs::LaserScan;
use flotilla_protocol::Keys;

const T: Duration = Duration::from_secs(30);
const ROBOTS: [&str; 4] = ["robot1", "robot2", "robot3", "robot4"];

fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().expect("iproute2 (ip) is installed");
    assert!(out.status.success(), "ip {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr));
}

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
        let subnet = 10 + tag % 200;
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
        let program = common::bin(binary);
        let mut all = vec!["netns", "exec", host, program.to_str().unwrap()];
        all.extend_from_slice(args);
        common::spawn(std::path::Path::new("ip"), &all, log)
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
                    let _ = session.put(format!("{robot}/cmd_vel"), flotilla_protocol::ros::encode(&t)).await;
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
                flotilla_protocol::ros::decode::<LaserScan>(&bytes).unwrap();
                scanning.insert(robot);
            } else if (flotilla_protocol::ros::decode::<Odometry>(&bytes).unwrap().twist.twist.angular.z - 0.4).abs()
                < 1e-6
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
