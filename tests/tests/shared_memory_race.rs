//! A shared-memory pool removed while its owner still uses it, as Zenoh
//! 1.10's cleanup of orphaned pools can do to a pool being made at the
//! moment another process starts or exits (`node-kit/src/shared_memory.rs`).
//! A test binary of its own: it removes the pools this process maps, which
//! must be none but its own sessions'.

mod common;

use std::time::Duration;

/// The removed pool is found in the owner's memory map, where the owner's
/// watch looks for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pool_removed_while_in_use_is_found() {
    use flotilla_node_kit::args::{Role, ZenohArgs};
    use flotilla_node_kit::shared_memory::{memory_lockable, removed_pools};
    use zenoh::Wait;

    let maps = || std::fs::read_to_string("/proc/self/maps").unwrap();
    if !memory_lockable() {
        // Shared memory is off where memory may not be locked: no pool to lose.
        let config = ZenohArgs::default().zenoh_config(Role::Node).unwrap();
        assert_eq!(config.get_json("transport/shared_memory/enabled").unwrap(), "false");
        return;
    }
    let endpoint = format!("tcp/127.0.0.1:{}", common::free_port());
    let listener = ZenohArgs { listen: vec![endpoint.clone()], ..Default::default() };
    let sender = zenoh::open(listener.zenoh_config(Role::World).unwrap()).await.unwrap();
    let connector = ZenohArgs { connect: vec![endpoint], ..Default::default() };
    let receiver = zenoh::open(connector.zenoh_config(Role::Node).unwrap()).await.unwrap();
    let subscriber = receiver.declare_subscriber("flotilla/test/shm-pool").await.unwrap();
    // Messages well over the 3 kB threshold, until one arrives: the first
    // makes the sender's pool.
    let publisher = sender.declare_publisher("flotilla/test/shm-pool").await.unwrap();
    let mut received = false;
    for _ in 0..100 {
        publisher.put(vec![7u8; 64_000]).wait().unwrap();
        if let Ok(Ok(_)) = tokio::time::timeout(Duration::from_millis(100), subscriber.recv_async()).await {
            received = true;
            break;
        }
    }
    assert!(received, "the receiver got none of the large messages");
    let pools: std::collections::BTreeSet<String> = maps()
        .lines()
        .filter_map(|l| l.split_whitespace().last())
        .filter(|p| p.starts_with("/dev/shm/") && p.ends_with(".zenoh"))
        .map(String::from)
        .collect();
    assert!(!pools.is_empty(), "no pool of Zenoh's mapped after a 64 kB message:\n{}", maps());
    assert!(removed_pools(&maps()).is_empty(), "nothing removed yet");
    // What the race does: the files go while the pools are in use.
    for pool in &pools {
        std::fs::remove_file(pool).unwrap();
    }
    let removed = removed_pools(&maps());
    for pool in &pools {
        assert!(removed.contains(pool), "{pool} removed but not found in {removed:?}");
    }
    let _ = receiver.close().await;
    let _ = sender.close().await;
}
