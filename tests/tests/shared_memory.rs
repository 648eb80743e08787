//! Zenoh's shared memory between the processes of one machine, and a
//! process that may not use it.
//!
//! Zenoh passes a message of 3 kB and up to a process on the same machine
//! in shared memory, which the receiver must lock (`mlock`); a receiver
//! that cannot drops the message. So a Flotilla process without
//! `CAP_IPC_LOCK` and with a limited `ulimit -l` turns shared memory off
//! and takes such messages through the socket
//! (`node-kit/src/shared_memory.rs`).

mod common;

use std::process::Command;
use std::time::Duration;

use common::Sim;
use flotilla_messages::sensor_msgs::LaserScan;
use nix::sys::signal::Signal;

/// Large scans, each well over Zenoh's 3 kB shared-memory threshold.
const SCANS: usize = 30;
const BEAMS_PER_SCAN: usize = 4000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorder_that_may_not_lock_memory_still_gets_every_large_message() {
    let world = common::config("tests/room/world.yaml");
    let mut sim = Sim::start("shm-unlockable", &world, &[], &[]).await;
    let mcap = std::env::temp_dir().join(format!("flotilla-shm-unlockable-{}.mcap", std::process::id()));
    // The recorder without CAP_IPC_LOCK (dropped from every set, as in a
    // container) and allowed to lock 1 MiB, less than one pool.
    let setpriv = ["--bounding-set", "-ipc_lock", "--inh-caps", "-ipc_lock", "--", "prlimit", "--memlock=1048576"];
    let flotilla = common::bin("flotilla");
    let mut args: Vec<&str> = setpriv.to_vec();
    args.extend_from_slice(&[flotilla.to_str().unwrap(), "record", mcap.to_str().unwrap()]);
    sim.spawn_node_program("record", std::path::Path::new("setpriv"), &args);

    // This test process may lock memory: it sends in shared memory where
    // the other side takes it.
    let publisher = sim
        .session
        .declare_publisher(sim.keys.ros("/robot/scan"))
        .congestion_control(zenoh::qos::CongestionControl::Block)
        .await
        .unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while !publisher.matching_status().await.unwrap().matching() {
        assert!(tokio::time::Instant::now() < deadline, "the recorder never subscribed: {}", sim.log("record"));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for i in 0..SCANS {
        let scan = LaserScan { ranges: vec![i as f32; BEAMS_PER_SCAN], ..Default::default() };
        publisher.put(flotilla_messages::encode(&scan)).await.unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    common::signal(sim.pid("record"), Signal::SIGINT);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while sim.alive("record") {
        assert!(tokio::time::Instant::now() < deadline, "the recorder did not stop: {}", sim.log("record"));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let out = Command::new("python3")
        .arg("-c")
        .arg(
            "import sys\nfrom mcap.reader import make_reader\n\
             r = make_reader(open(sys.argv[1], 'rb'))\n\
             print(sum(1 for _ in r.iter_messages(topics=['/robot/scan'])))\n",
        )
        .arg(&mcap)
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&mcap);
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stderr), sim.log("record"));
    let recorded: usize = String::from_utf8(out.stdout).unwrap().trim().parse().unwrap();
    assert_eq!(recorded, SCANS, "scans recorded of those sent: {}", sim.log("record"));
}
