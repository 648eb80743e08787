//! Every node reads its messages on the thread that sees them arrive: Zenoh's
//! `rx` and `acc` pools are handed over to its `net` pool
//! (`flotilla_protocol::zenoh_threads`), so none of their threads exists.

mod common;

use std::time::Duration;

use common::Sim;
use flotilla_protocol::ros::nav_msgs::Odometry;

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
    for process in ["world", "flotilla-drive", "flotilla-odom"] {
        let names = thread_names(sim.pid(process));
        assert!(names.iter().any(|n| n.starts_with("net-")), "{process}: no Zenoh network thread in {names:?}");
        let handed_over: Vec<&String> =
            names.iter().filter(|n| n.starts_with("rx-") || n.starts_with("acc-")).collect();
        assert!(handed_over.is_empty(), "{process}: Zenoh threads {handed_over:?} should have been handed over to net");
    }
}
