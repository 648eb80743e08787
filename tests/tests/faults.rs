//! Faults: killed nodes, a killed world, garbage on every key. The
//! simulation keeps going, recovers, and no node panics.

mod common;

use std::time::{Duration, Instant};

use common::Sim;
use flotilla_messages::geometry_msgs::Twist;
use flotilla_messages::nav_msgs::Odometry;
use flotilla_messages::sensor_msgs::LaserScan;

const T: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_drive_stops_its_robot_and_comes_back() {
    let world = common::config("tests/room/world.yaml");
    let run = common::Launched::start("drive-crash", &world, &[]).await;
    let mut truth = run.subscribe::<Odometry>("/robot/odometry/ground_truth").await;
    let driver = {
        let (session, key) = (run.session.clone(), run.keys.ros("/robot/cmd_vel"));
        tokio::spawn(async move {
            let mut t = Twist::default();
            t.angular.z = 0.5;
            loop {
                let _ = session.put(&key, flotilla_messages::encode(&t)).await;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
    };
    let turning = |o: &Odometry| (o.twist.twist.angular.z - 0.5).abs() < 1e-6;
    truth.until(T, turning).await;

    let killed_at = Instant::now();
    run.kill_and_await_restart("flotilla-drive").await;
    // Meanwhile the world stopped the robot the dead drive was driving...
    truth.until(T, |o| o.twist.twist.angular.z.abs() < 1e-9).await;
    // ...and the restarted drive turns it again.
    truth.until(T, turning).await;
    let recovered = killed_at.elapsed();
    driver.abort();
    eprintln!("drive recovered {recovered:?} after the kill");
    assert!(recovered < Duration::from_secs(1), "output resumes within 1 s of wall time, took {recovered:?}");
    run.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nodes_survive_a_dead_world_and_resynchronise_with_a_new_one() {
    let world = common::config("tests/room/world.yaml");
    let mut sim = Sim::start("world-crash", &world, &["flotilla-laser"], &[]).await;
    let mut scans = sim.subscribe::<LaserScan>("/robot/scan").await;
    scans.until(T, |s| s.header.stamp.sec >= 3).await;

    sim.kill_world();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(sim.alive("flotilla-laser"), "the laser keeps running without a world");
    let log = std::fs::read_to_string(sim.logs().join("flotilla-laser.log")).unwrap();
    assert!(log.contains("lost the world"), "the laser reports the loss:\n{log}");

    sim.restart_world();
    scans.clear();
    // The new world starts at t = 0 (clients reconnect within about a
    // second): the laser follows its time and its schedule.
    let first = scans.until(T, |s| s.header.stamp.sec < 3).await;
    let next = scans.next(T).await;
    let ns = |s: &LaserScan| s.header.stamp.sec as u64 * 1_000_000_000 + u64::from(s.header.stamp.nanosec);
    assert_eq!(ns(&next) - ns(&first), 100_000_000, "10 Hz again in the new world");
    assert!(sim.alive("flotilla-laser"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_on_every_key_is_counted_and_dropped() {
    let world = common::config("tests/room/world.yaml");
    let mut sim = Sim::start("garbage", &world, &["flotilla-drive", "flotilla-odom", "flotilla-laser"], &[]).await;
    let mut scans = sim.subscribe::<LaserScan>("/robot/scan").await;
    scans.next(T).await;

    let valid_state = {
        let mut states = sim.subscribe_states().await;
        flotilla_wire::codec::encode(&states.next(T).await)
    };
    let mut wrong_version = valid_state.clone();
    wrong_version[0] ^= 0x55;
    let mut nan_twist = Twist::default();
    nan_twist.linear.x = f64::NAN;
    let payloads: Vec<Vec<u8>> = vec![
        vec![],
        vec![0xff; 3],
        (0..997u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect(),
        valid_state[..valid_state.len() / 2].to_vec(),
        wrong_version,
        vec![0, 1, 0, 0, 0xff, 0xff, 0xff, 0xff],
        flotilla_messages::encode(&nan_twist),
    ];
    let keys = &sim.keys;
    let targets = [
        keys.world_state(),
        keys.world_events(),
        keys.actuation("intruder"),
        keys.lockstep("intruder"),
        keys.ros("/robot/cmd_vel"),
        keys.ros("/clock"),
    ];
    for _ in 0..5 {
        for key in &targets {
            for p in &payloads {
                sim.session.put(key, p.clone()).await.unwrap();
            }
        }
    }
    for p in &payloads {
        let replies =
            sim.session.get(keys.control("spawn")).payload(p.clone()).timeout(Duration::from_secs(5)).await.unwrap();
        let reply = replies.recv_async().await.expect("one reply to a garbage request");
        assert!(reply.result().is_err(), "garbage control request is refused");
    }

    // Everyone is alive, outputs keep coming, and commands still work.
    tokio::time::sleep(Duration::from_millis(500)).await;
    for name in ["world", "flotilla-drive", "flotilla-odom", "flotilla-laser"] {
        assert!(sim.alive(name), "{name} survived; logs in {}", sim.logs().display());
    }
    scans.clear();
    scans.next(T).await;
    let mut truth = sim.subscribe::<Odometry>("/robot/odometry/ground_truth").await;
    let mut go = Twist::default();
    go.angular.z = 0.3;
    let deadline = Instant::now() + T;
    loop {
        sim.publish("/robot/cmd_vel", &go).await;
        let o = truth.next(T).await;
        if (o.twist.twist.angular.z - 0.3).abs() < 1e-6 {
            break;
        }
        assert!(Instant::now() < deadline, "commands still work after the garbage");
    }
    let world_log = std::fs::read_to_string(sim.logs().join("world.log")).unwrap();
    assert!(world_log.contains("dropped a bad message"), "bad messages are counted and logged:\n{world_log}");
    let laser_log = std::fs::read_to_string(sim.logs().join("flotilla-laser.log")).unwrap();
    assert!(laser_log.contains("dropped a bad message") && !laser_log.contains("panicked"), "{laser_log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lockstep_goes_on_without_a_killed_node_and_takes_it_back() {
    let world = common::config("tests/room/world.yaml");
    let run = common::Launched::start("lockstep-crash", &world, &["--clock", "lockstep"]).await;
    let mut scans = run.subscribe::<LaserScan>("/robot/scan").await;
    let mut odom = run.subscribe::<Odometry>("/robot/odometry/ground_truth").await;
    scans.next(T).await;

    run.kill_and_await_restart("flotilla-laser").await;
    // The world dropped the dead laser from the barrier and kept stepping:
    // odometry time moves on; the restarted laser joins again and scans.
    let first = odom.next(T).await.header.stamp.sec;
    odom.until(T, |o| o.header.stamp.sec > first + 1).await;
    scans.clear();
    scans.next(T).await;
    assert!(run.output().contains("laser exited"), "{}", run.output());
    run.stop().await;
}

/// A second world of the same simulation joining the network never steps
/// beside the first: one of the same world stands by for it (see
/// `standby.rs`), one of another world file is refused with the reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_world_of_another_world_file_is_refused() {
    let world = common::config("tests/room/world.yaml");
    let sim = Sim::start("two-worlds", &world, &[], &[]).await;
    let mut states = sim.subscribe_states().await;
    states.next(T).await;
    let other = common::config("tests/tween/world.yaml");
    let second = std::process::Command::new(common::bin("flotilla-world"))
        .args([other.as_str(), "--sim", &sim.sim, "--connect", &sim.endpoint])
        .args(["--listen", &format!("tcp/127.0.0.1:{}", common::free_port())])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(2), "{err}");
    assert!(err.contains("is not this one, which cannot stand by for it"), "{err}");
    assert!(err.contains("whose content differs"), "the reason: {err}");
    states.next(T).await; // the first world steps on
}
