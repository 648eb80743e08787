//! Every plugin node reads its messages on the thread that sees them arrive:
//! Zenoh's `rx` and `acc` pools are handed over to its `net` pool
//! (`flotilla_node_kit::zenoh_threads`), so none of their threads exists.
//! The world keeps them, so that a slow client cannot stall it.

mod common;

use std::time::Duration;

use common::Sim;
use flotilla_messages::nav_msgs::Odometry;

/// The names of a process's threads, from /proc.
fn thread_names(pid: u32) -> Vec<String> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).expect("the process is running");
    tasks
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .map(|name| name.trim().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nodes_read_links_on_the_network_threads() {
    let world = common::config("tests/room/world.yaml");
    let sim = Sim::start("threads", &world, &["flotilla-drive", "flotilla-odom"], &["--rate", "2"]).await;
    // Odometry out means every link is up and carrying messages.
    let mut truth = sim.subscribe::<Odometry>("/robot/odometry/ground_truth").await;
    truth.next(Duration::from_secs(20)).await;
    for process in ["flotilla-drive", "flotilla-odom"] {
        let names = thread_names(sim.pid(process));
        assert!(names.iter().any(|n| n.starts_with("net-")), "{process}: no Zenoh network thread in {names:?}");
        let handed_over: Vec<&String> =
            names.iter().filter(|n| n.starts_with("rx-") || n.starts_with("acc-")).collect();
        assert!(handed_over.is_empty(), "{process}: Zenoh threads {handed_over:?} should have been handed over to net");
    }
    let world = thread_names(sim.pid("world"));
    assert!(world.iter().any(|n| n.starts_with("rx-")), "the world reads on Zenoh's own rx threads: {world:?}");
}

/// The world routes for the clients connected to it (a program started by
/// hand, `flotilla bench`), and a push to a client that reads slowly waits
/// for room on its link. The world keeps Zenoh's own pools for that: with
/// `rx` and `acc` handed over to `net`, the waiting thread would be the one
/// to tell the link it has room again, and Zenoh would give up after 5 s
/// and close the link (9 of 40 warehouse-200 bench runs did, when the
/// bench began counting every scan).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_client_slows_its_own_messages_but_never_stalls_the_world() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::Instant;

    let world = common::config("tests/room/world.yaml");
    let sim = Sim::start("slowclient", &world, &[], &[]).await;
    let key = format!("flotilla/{}/test/flood", sim.sim);

    // A client that takes 20 ms over every message it receives.
    let reader = common::connect(&sim.endpoint).await;
    let received = Arc::new(AtomicUsize::new(0));
    let slow_subscriber = {
        let received = received.clone();
        reader
            .declare_subscriber(&key)
            .callback(move |_| {
                std::thread::sleep(Duration::from_millis(20));
                received.fetch_add(1, Ordering::Relaxed);
            })
            .await
            .unwrap()
    };
    // A client that sends it 60 kB messages as fast as its link takes them,
    // through the world, none of them to be dropped.
    let writer = common::connect(&sim.endpoint).await;
    let publisher =
        writer.declare_publisher(key.clone()).congestion_control(zenoh::qos::CongestionControl::Block).await.unwrap();
    let flooding = Arc::new(AtomicBool::new(true));
    // (On a thread of its own: a put that waits for room blocks its thread.)
    let flood = {
        let flooding = flooding.clone();
        std::thread::spawn(move || {
            use zenoh::Wait;
            while flooding.load(Ordering::Relaxed) {
                publisher.put(vec![7u8; 60_000]).wait().unwrap();
            }
        })
    };

    // Meanwhile the world goes on: its status (about 2 Hz) never pauses,
    // and the slow client keeps receiving.
    let mut status = sim.subscribe_status().await;
    status.clear();
    let start = Instant::now();
    let mut last = Instant::now();
    let mut received_by_half_time = None;
    while start.elapsed() < Duration::from_secs(9) {
        status.next(Duration::from_secs(10)).await;
        let gap = last.elapsed();
        assert!(gap < Duration::from_secs(2), "no world status for {gap:?} (logs in {})", sim.logs().display());
        last = Instant::now();
        if received_by_half_time.is_none() && start.elapsed() > Duration::from_millis(4500) {
            received_by_half_time = Some(received.load(Ordering::Relaxed));
        }
    }
    flooding.store(false, Ordering::Relaxed);
    let (half, end) = (received_by_half_time.unwrap_or(0), received.load(Ordering::Relaxed));
    assert!(end > half && half > 0, "the slow client received {half} messages in 4.5 s and {end} in 9 s");
    let log = sim.log("world");
    assert!(!log.contains("Closing transport"), "the world closed a link:\n{log}");
    drop(slow_subscriber);
    flood.join().unwrap();
}
