//! A world and its standby on two machines, the nodes on a third, emulated
//! with network namespaces (docs/checkpoints.md, "Network partitions"):
//!
//! 1. The link between the two worlds is cut: the standby loses the world's
//!    token, but the nodes still see the world, so it does not take over;
//!    when the link is back, it follows the world again. (Zenoh may instead
//!    go on relaying the world's token to the standby through a peer
//!    connected to both worlds, a node or this test's session: then the
//!    standby, hearing nothing else of the world for 10 s, opens its
//!    session again and loses the token then. Either way, nobody takes
//!    over or pauses.)
//! 2. The world's machine is cut off from everything: it pauses (it lost
//!    its nodes), and the standby, the nodes agreeing the world is gone,
//!    takes over; the nodes carry on with it.
//! 3. The cut-off machine comes back: its world sees the states of a world
//!    of a higher term, steps down and stands by for it (the same process).
//!
//! Needs root and iproute2 (CI runs as root; the set-up script installs it).

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use flotilla_wire::world_to_nodes::{WorldState, WorldStatus};

use common::netns::{self, ip};

const T: Duration = Duration::from_secs(30);

/// Longer than Zenoh's lease (10 s): a cut link is noticed within it.
const LEASE_AND_MORE: Duration = Duration::from_secs(25);

/// Zenoh's reconnection, then the standby's checkpoint; or, when Zenoh
/// lost the routes between the two worlds, the standby's wait for them
/// (`standby::RELINK_AFTER`, 10 s) and a new session.
const FOLLOWING_AGAIN: Duration = Duration::from_secs(45);

/// Three machines: `a` (the world), `b` (its standby), `n` (the nodes),
/// each pair joined by a veth pair, and `a` and `b` reachable from this
/// (root) namespace, where the test watches. Removed on drop.
struct Machines {
    a: String,
    b: String,
    n: String,
    /// Each link: (namespace, interface) at both ends.
    links: Vec<[(String, String); 2]>,
    /// Addresses: of a as b sees it, of b as a sees it, of a and b as the
    /// nodes see them, of a and b as the test sees them.
    a_for_b: String,
    b_for_a: String,
    a_for_nodes: String,
    b_for_nodes: String,
    a_for_test: String,
    b_for_test: String,
}

impl Machines {
    fn new(tag: u32) -> Machines {
        let (a, b, n) = (format!("fpa{tag}"), format!("fpb{tag}"), format!("fpn{tag}"));
        for ns in [&a, &b, &n] {
            let _ = Command::new("ip").args(["netns", "del", ns]).output();
            ip(&["netns", "add", ns]);
            ip(&["-n", ns, "link", "set", "lo", "up"]);
        }
        let subnet = common::netns::free_subnet(tag, &[210, 211, 212, 213, 214]);
        let mut links = Vec::new();
        let mut link = |i: u32, one: &str, other: &str| -> (String, String) {
            let (x, y) = (format!("p{tag}{i}x"), format!("p{tag}{i}y"));
            let _ = Command::new("ip").args(["link", "del", &x]).output();
            ip(&["link", "add", &x, "type", "veth", "peer", "name", &y]);
            let net = format!("10.{}.{}", 210 + i, subnet);
            for (end, ns, host) in [(&x, one, 1), (&y, other, 2)] {
                if ns.is_empty() {
                    ip(&["addr", "add", &format!("{net}.{host}/24"), "dev", end]);
                    ip(&["link", "set", end, "up"]);
                } else {
                    ip(&["link", "set", end, "netns", ns]);
                    ip(&["-n", ns, "addr", "add", &format!("{net}.{host}/24"), "dev", end]);
                    ip(&["-n", ns, "link", "set", end, "up"]);
                }
            }
            links.push([(one.to_string(), x), (other.to_string(), y)]);
            (format!("{net}.1"), format!("{net}.2"))
        };
        let (a_for_b, b_for_a) = link(0, &a, &b);
        let (a_for_nodes, _) = link(1, &a, &n);
        let (b_for_nodes, _) = link(2, &b, &n);
        let (_, a_for_test) = link(3, "", &a);
        let (_, b_for_test) = link(4, "", &b);
        Machines { a, b, n, links, a_for_b, b_for_a, a_for_nodes, b_for_nodes, a_for_test, b_for_test }
    }

    /// Sets every link of `ns` with one of `others` up or down.
    fn links(&self, ns: &str, others: &[&str], up: bool) {
        for [one, other] in &self.links {
            for ((here, end), (there, _)) in [(one, other), (other, one)] {
                if here == ns && others.contains(&there.as_str()) {
                    ip(&["-n", here, "link", "set", end, if up { "up" } else { "down" }]);
                }
            }
        }
    }
}

impl Drop for Machines {
    fn drop(&mut self) {
        for ns in [&self.a, &self.b, &self.n] {
            let _ = Command::new("ip").args(["netns", "del", ns]).output();
        }
    }
}

/// Waits until `log` says `what`, for at most `within`.
fn wait_for_log(log: &std::path::Path, what: &str, within: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < within {
        if std::fs::read_to_string(log).unwrap_or_default().contains(what) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

/// How many times `log` has said `what` so far.
fn said_times(log: &std::path::Path, what: &str) -> usize {
    std::fs::read_to_string(log).unwrap_or_default().matches(what).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_standby_takes_over_only_when_the_nodes_lose_the_world_and_the_cut_off_world_steps_down() {
    let tag = std::process::id() % 10_000;
    let m = Machines::new(tag);
    let sim = common::unique_sim("partition");
    let logs = common::log_dir(&sim);
    let (a_log, b_log) = (logs.join("world-a.log"), logs.join("world-b.log"));
    let world = common::config("tests/room/world.yaml");
    let (a_port, b_port) = ("7460", "7461");
    let at = |host: &str, port: &str| format!("tcp/{host}:{port}");
    let (a_listen, b_listen) = (at("0.0.0.0", a_port), at("0.0.0.0", b_port));

    let b_for_a = at(&m.b_for_a, b_port);
    let a_for_b = at(&m.a_for_b, a_port);
    let a_args = [world.as_str(), "--sim", &sim, "--listen", &a_listen, "--connect", &b_for_a];
    let mut children = common::Processes(vec![netns::run(&m.a, "flotilla-world", &a_args, &a_log)]);
    let b_args = [world.as_str(), "--sim", &sim, "--listen", &b_listen, "--connect", &a_for_b, "--standby"];
    children.0.push(netns::run(&m.b, "flotilla-world", &b_args, &b_log));
    // The nodes connect to both worlds, as `flotilla run --standby-world`
    // starts them.
    let both = format!("{},{}", at(&m.a_for_nodes, a_port), at(&m.b_for_nodes, b_port));
    for binary in ["flotilla-drive", "flotilla-odom"] {
        let args = ["--sim", &sim, "--connect", &both, "--mode", "peer", "--listen", "tcp/127.0.0.1:0"];
        children.0.push(netns::run(&m.n, binary, &args, &logs.join(format!("{binary}.log"))));
    }
    let session = common::connect_all(&[&at(&m.a_for_test, a_port), &at(&m.b_for_test, b_port)]).await;
    let keys = flotilla_wire::Keys::new(&sim);
    flotilla_node_kit::client::wait_for_description(&session, &keys, T).await.unwrap();
    let mut states = common::subscribe_internal::<WorldState>(&session, keys.world_state()).await;
    let mut status = common::subscribe_internal::<WorldStatus>(&session, keys.status()).await;
    assert!(wait_for_log(&b_log, "standing by for the running world", T), "{}", logs.display());
    // Both nodes serve: the standby has asked them at least once by now.
    let serving = Instant::now();
    while status.next(T).await.nodes < 3 {
        assert!(serving.elapsed() < T, "the world never saw both nodes; logs in {}", logs.display());
    }
    tokio::time::sleep(Duration::from_secs(2)).await;

    // 1. The worlds' link cut: the nodes still see the world.
    m.links(&m.a, &[&m.b], false);
    let _ = wait_for_log(&b_log, "node(s) still see it: this standby's link to it is cut", LEASE_AND_MORE);
    states.clear();
    let before = states.next(T).await.step;
    tokio::time::sleep(Duration::from_secs(2)).await;
    states.clear();
    assert!(states.next(T).await.step > before + 100, "the world steps on");
    let b_said = std::fs::read_to_string(&b_log).unwrap();
    assert!(!b_said.contains("gone: taking over"), "the standby must not take over: {b_said}");
    let a_said = std::fs::read_to_string(&a_log).unwrap();
    assert!(!a_said.contains("pausing"), "the world reaches its nodes: it must not pause: {a_said}");
    // The link back, the standby follows again: it has the world's token
    // and a fresh checkpoint (after opening its session again if Zenoh
    // lost the routes between the two worlds, see world/src/standby.rs).
    // A standby that neither lost the token nor opened its session again
    // heard the world's status all along: it still follows.
    let following = "received: following it";
    let followed_before = said_times(&b_log, following);
    let b_said = std::fs::read_to_string(&b_log).unwrap();
    let lost = ["token is gone from here", "opening this standby's session again"].iter().any(|l| b_said.contains(l));
    m.links(&m.a, &[&m.b], true);
    let back = Instant::now();
    while lost && said_times(&b_log, following) <= followed_before {
        assert!(back.elapsed() < FOLLOWING_AGAIN, "the standby does not follow again; logs in {}", logs.display());
        std::thread::sleep(Duration::from_millis(100));
    }

    // 2. The world's machine cut off from everything.
    let last_before_cut = {
        states.clear();
        states.next(T).await.step
    };
    m.links(&m.a, &[&m.b, &m.n, ""], false);
    assert!(
        wait_for_log(&b_log, "gone: taking over", LEASE_AND_MORE),
        "the standby took over; logs in {}",
        logs.display()
    );
    // It reads the nodes' answers every second and pauses at the second
    // reading in a row that too few answered: by then, or soon after, a
    // standby that reached them takes over.
    assert!(
        wait_for_log(&a_log, "this world may be the one cut off", Duration::from_secs(5)),
        "the cut-off world paused; logs in {}",
        logs.display()
    );
    // A session of this test's own, connected to the world that took over
    // as a program starting now would be: the first one, a peer of both
    // worlds, may have routed through the cut-off one.
    let watcher = common::connect_all(&[&at(&m.b_for_test, b_port)]).await;
    let mut states = common::subscribe_internal::<WorldState>(&watcher, keys.world_state()).await;
    let mut status = common::subscribe_internal::<WorldStatus>(&watcher, keys.status()).await;
    let first = states.next(T).await.step;
    assert!(first >= last_before_cut, "sim time goes on: {first} after {last_before_cut}");
    tokio::time::sleep(Duration::from_secs(2)).await;
    states.clear();
    assert!(states.next(T).await.step > first + 100, "the world that took over steps");
    status.clear();
    let nodes_seen = Instant::now();
    while status.next(T).await.nodes < 3 {
        assert!(nodes_seen.elapsed() < T, "the nodes did not follow the new world; logs in {}", logs.display());
    }

    // 3. The machine back: its world steps down.
    m.links(&m.a, &[&m.b, &m.n, ""], true);
    let stepped_down = "stepping down: a world of term 1 runs this simulation";
    assert!(
        wait_for_log(&a_log, stepped_down, LEASE_AND_MORE),
        "the old world did not step down; logs in {}",
        logs.display()
    );
    // And stands by for the world that took over, in the same process.
    let standing_by = |log: &str| {
        log.split(stepped_down).nth(1).is_some_and(|after| after.contains("standing by for the running world"))
    };
    let deadline = Instant::now() + T;
    while !standing_by(&std::fs::read_to_string(&a_log).unwrap()) {
        assert!(Instant::now() < deadline, "the old world does not stand by; logs in {}", logs.display());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    states.clear();
    let now = states.next(T).await.step;
    tokio::time::sleep(Duration::from_secs(1)).await;
    states.clear();
    assert!(states.next(T).await.step > now, "the world of term 1 goes on");
    for (i, child) in children.0.iter_mut().enumerate() {
        assert!(child.try_wait().unwrap().is_none(), "process {i} still runs; logs in {}", logs.display());
    }
}
