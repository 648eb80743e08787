//! Keeping a run: `flotilla record` writes the room world's topics to MCAP,
//! which the `mcap` Python package and its ROS 2 decoder read back
//! (`tests/mcap/check_recording.py`: topics, types, rates in sim time,
//! decoded fields); `flotilla replay` then publishes the recording again,
//! and a subscriber receives the very bytes it received live. `flotilla run
//! --record` records with the chunk compression asked for. A node's batch
//! waits for more moments when only another subscriber wants a message on
//! its key, and the recorder still writes each scan once; a robot spawned
//! while recording has its scans recorded from its first. Commands, which
//! come from outside the simulation, are recorded from the drive that
//! forwards them, each once and in order, and on their key once that
//! drive is killed.

mod common;

use std::process::Command;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::Sim;
use flotilla_messages::geometry_msgs::{Twist, Vector3};
use flotilla_wire::recording::read_batch;

const T: Duration = Duration::from_secs(30);

/// Collects the payloads of `key` into a shared list.
async fn collect(session: &zenoh::Session, key: String) -> (Arc<Mutex<Vec<Vec<u8>>>>, zenoh::pubsub::Subscriber<()>) {
    let got: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
    let into = got.clone();
    let subscriber = session
        .declare_subscriber(key)
        .callback(move |sample| into.lock().unwrap().push(sample.payload().to_bytes().into_owned()))
        .await
        .unwrap();
    (got, subscriber)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recording_reads_in_python_and_replays_byte_for_byte() {
    let world = common::config("tests/room/world.yaml");
    let sim = Sim::start("record", &world, &["flotilla-drive", "flotilla-odom", "flotilla-laser"], &[]).await;
    let mcap = sim.logs().join("run.mcap");

    // What a subscriber gets live, while the recorder records.
    let (live_scans, live_sub) = collect(&sim.session, sim.keys.ros("/robot/scan")).await;
    let recorder = common::spawn(
        &common::bin("flotilla"),
        &["record", mcap.to_str().unwrap(), "--for", "4", "--sim", &sim.sim, "--connect", &sim.endpoint],
        &sim.logs().join("record.log"),
    );
    wait_for_a_recorder(&sim).await;
    let commands = publish_commands(&sim, 0..20).await;
    let status = wait_for_exit(recorder, T).await;
    assert!(
        status.success(),
        "flotilla record failed: {}",
        std::fs::read_to_string(sim.logs().join("record.log")).unwrap()
    );
    // A node sends the recorder's batch before the same scan on its own
    // key: the live copy of the last scan recorded may still be on its way.
    tokio::time::sleep(Duration::from_millis(500)).await;
    drop(live_sub);
    // The odometry topics, which only the recorder wanted, came in the
    // nodes' batches (the scan, wanted live too, may have as well).
    let log = std::fs::read_to_string(sim.logs().join("record.log")).unwrap();
    let batched: usize = log
        .split_once(" topics (")
        .and_then(|(_, rest)| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no summary in the recorder's log: {log}"));
    assert!(batched >= 2, "{batched} topics came in batches: {log}");
    // The commands, sent once the recorder listened: each once, in order.
    assert_eq!(recorded_payloads(&mcap, "/robot/cmd_vel"), commands, "the commands recorded");

    // Read back in Python with the ROS 2 decoder.
    let checked =
        Command::new("python3").arg(common::root().join("tests/mcap/check_recording.py")).arg(&mcap).output().unwrap();
    assert!(
        checked.status.success(),
        "the recording does not read back: {}{}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );

    // The scans recorded, in order, are those a subscriber got live (the
    // live subscriber started first, so it holds them all).
    let recorded = recorded_payloads(&mcap, "/robot/scan");
    let live = live_scans.lock().unwrap().clone();
    assert!(recorded.len() >= 30, "{} scans in 4 s at 10 Hz", recorded.len());
    let start = live.iter().position(|p| *p == recorded[0]).expect("the first recorded scan was seen live");
    assert!(
        live.len() - start >= recorded.len(),
        "{} scans recorded, only {} seen live from the first of them on",
        recorded.len(),
        live.len() - start
    );
    // Stamps (sec, nanosec) name the scans in a failure's message.
    let stamps = |scans: &[Vec<u8>]| -> Vec<(u32, u32)> { scans.iter().map(|p| scan_stamp(p)).collect() };
    let live = &live[start..start + recorded.len()];
    assert!(
        live == &recorded[..],
        "recorded scans differ from the live ones: stamps live {:?}, recorded {:?}",
        stamps(live),
        stamps(&recorded)
    );
    drop(sim);

    // Replay on a network of its own: a subscriber gets the same bytes.
    let port = common::free_port();
    let listen = format!("tcp/127.0.0.1:{port}");
    let session = peer_listening_on(&listen).await;
    let (replayed, _sub) = collect(&session, "robot/scan".to_string()).await;
    let player = common::spawn(
        &common::bin("flotilla"),
        &[
            "replay",
            mcap.to_str().unwrap(),
            "--rate",
            "4",
            "--connect",
            &listen,
            "--listen",
            &format!("tcp/127.0.0.1:{}", common::free_port()),
        ],
        &common::log_dir("replay").join("replay.log"),
    );
    let status = wait_for_exit(player, T).await;
    assert!(status.success(), "flotilla replay failed");
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(*replayed.lock().unwrap(), recorded, "the replayed scans are not the recorded bytes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flotilla_run_records_with_the_compression_asked_for() {
    let world = common::config("tests/room/world.yaml");
    let mcap = std::env::temp_dir().join(format!("flotilla-run-record-{}.mcap", std::process::id()));
    let path = mcap.to_str().unwrap();
    // With Zenoh's shared memory, which the test suite otherwise turns
    // off (scripts/test.sh): the nodes' batches come to the recorder in it.
    let shared_memory = [("FLOTILLA_NO_SHARED_MEMORY", "0")];
    let extra = ["--record", path, "--record-compression", "zstd"];
    let sim = common::Launched::start_with_env("run-record", &world, &extra, &shared_memory).await;
    tokio::time::sleep(Duration::from_secs(4)).await;
    if flotilla_node_kit::shared_memory::memory_lockable() {
        let recorder = common::pids_of(&format!("flotilla record {path}"));
        let maps = std::fs::read_to_string(format!("/proc/{}/maps", recorder[0])).unwrap();
        assert!(maps.contains(".zenoh"), "the recorder maps no shared-memory pool:\n{maps}");
    }
    let log = sim.log.clone();
    assert!(sim.stop().await.success(), "{}", std::fs::read_to_string(&log).unwrap_or_default());

    // Stopped like Ctrl-C, the recorder finished the file: it reads back
    // in Python, chunks zstd-compressed, with the room robot's scans and
    // the clock in it.
    let out = Command::new("python3")
        .arg("-c")
        .arg(
            "import sys, collections\nfrom mcap.reader import make_reader\n\
             r = make_reader(open(sys.argv[1], 'rb'))\n\
             print(sorted({c.compression for c in r.get_summary().chunk_indexes}))\n\
             n = collections.Counter(c.topic for _, c, _ in r.iter_messages())\n\
             print(n['/robot/scan'], n['/clock'])\n",
        )
        .arg(&mcap)
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&mcap);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("['zstd']"), "{text}");
    let counts: Vec<u64> = lines.next().unwrap().split(' ').map(|n| n.parse().unwrap()).collect();
    assert!(counts[0] >= 10 && counts[1] >= 100, "scans and clock messages recorded: {counts:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scans_another_subscriber_wants_wait_in_their_batch_and_are_recorded_once() {
    // Fast: many scans a wall second, so that a batch can hold several.
    let world = common::config("tests/room/world.yaml");
    let sim = Sim::start("record-wait", &world, &["flotilla-laser"], &["--clock", "fast"]).await;
    let mcap = sim.logs().join("run.mcap");
    let (live_scans, live_sub) = collect(&sim.session, sim.keys.ros("/robot/scan")).await;
    // The batches the recorder gets, seen beside it.
    let (batches, batches_sub) = collect_keyed(&sim.session, sim.keys.recording_all()).await;
    let recorder = common::spawn(
        &common::bin("flotilla"),
        &["record", mcap.to_str().unwrap(), "--for", "3", "--sim", &sim.sim, "--connect", &sim.endpoint],
        &sim.logs().join("record.log"),
    );
    let status = wait_for_exit(recorder, T).await;
    assert!(status.success(), "flotilla record failed: {}", sim.log("record"));
    tokio::time::sleep(Duration::from_millis(500)).await;
    drop((live_sub, batches_sub));

    // Once the recorder took the scans from the laser's batches (its token
    // for the key gone), a scan went to this subscriber at once and its
    // batch waited for more. Before, a batch went ahead of every scan that
    // another subscriber wanted: one scan a batch.
    let most = batches
        .lock()
        .unwrap()
        .iter()
        .filter(|(key, _)| key.rsplit('/').next().is_some_and(|node| node.starts_with("laser")))
        .map(|(_, bytes)| read_batch(bytes).expect("a batch").index().len())
        .max();
    assert!(most >= Some(2), "at most {most:?} scans in one of the laser's batches");

    // And each scan is recorded once: those a subscriber got live from the
    // first recorded on. (In log-time order, which is not quite the order
    // they went live: the recorder logs a scan that came on its key, before
    // it switched to the batches, at the latest sim time it knew then.)
    let mut recorded: Vec<(u32, u32)> = recorded_payloads(&mcap, "/robot/scan").iter().map(|p| scan_stamp(p)).collect();
    recorded.sort();
    let live: Vec<(u32, u32)> = live_scans.lock().unwrap().iter().map(|p| scan_stamp(p)).collect();
    assert!(recorded.len() >= 10, "{} scans recorded", recorded.len());
    let twice: Vec<&(u32, u32)> = recorded.windows(2).filter(|w| w[0] == w[1]).map(|w| &w[0]).collect();
    assert!(twice.is_empty(), "scans recorded twice, by stamp: {twice:?}");
    let start = live.iter().position(|s| *s == recorded[0]).expect("the first recorded scan was seen live");
    let missing: Vec<&(u32, u32)> = live[start..]
        .iter()
        .filter(|s| **s <= recorded[recorded.len() - 1] && recorded.binary_search(s).is_err())
        .collect();
    assert!(missing.is_empty(), "scans seen live but not recorded, by stamp: {missing:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_robot_spawned_while_recording_has_its_scans_recorded_from_its_first() {
    let world = common::config("tests/room/world.yaml");
    let sim = Sim::start("record-spawn", &world, &["flotilla-laser"], &[]).await;
    let mcap = sim.logs().join("run.mcap");
    let recorder = common::spawn(
        &common::bin("flotilla"),
        &["record", mcap.to_str().unwrap(), "--for", "4", "--sim", &sim.sim, "--connect", &sim.endpoint],
        &sim.logs().join("record.log"),
    );
    wait_for_a_recorder(&sim).await;
    let (live_scans, live_sub) = collect(&sim.session, sim.keys.ros("/robot2/scan")).await;
    let robot = common::config("tests/room/robot.model.yaml");
    let (ok, out) = sim.cli(&["spawn", &robot, "--name", "robot2", "--ns", "robot2", "--pose", "3", "3", "0"]);
    assert!(ok, "spawn failed: {out}");
    let status = wait_for_exit(recorder, T).await;
    assert!(status.success(), "flotilla record failed: {}", sim.log("record"));
    drop(live_sub);

    // The recorder follows the world's description: the new robot's scans
    // come in the laser's batches from the start, numbered by the world,
    // while the recorder's subscription to their key still waits for its
    // token to settle. None is missed, none written twice.
    let recorded: Vec<(u32, u32)> = recorded_payloads(&mcap, "/robot2/scan").iter().map(|p| scan_stamp(p)).collect();
    let live: Vec<(u32, u32)> = live_scans.lock().unwrap().iter().map(|p| scan_stamp(p)).collect();
    assert!(recorded.len() >= 10, "{} of robot2's scans recorded in about 3 s at 10 Hz", recorded.len());
    assert!(
        live.starts_with(&recorded) || live.get(1..).is_some_and(|rest| rest.starts_with(&recorded)),
        "robot2's scans by stamp, recorded {recorded:?}, live {live:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_are_recorded_once_each_in_order_through_the_recorder_s_start_and_a_drive_s_restart() {
    let world = common::config("tests/room/world.yaml");
    let mut sim = Sim::start("record-forward", &world, &["flotilla-drive"], &[]).await;
    let mcap = sim.logs().join("run.mcap");
    // The drive takes the room robot's `cmd_vel`, which nothing in the
    // simulation publishes: it forwards the commands to recorders.
    let drive = wait_for_forwarder(&sim, "/robot/cmd_vel").await;

    // Commands every 20 ms from before the recorder starts to after it
    // stops, each told apart by its `linear.z`.
    let sent = Arc::new(std::sync::atomic::AtomicU32::new(0));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let commander = {
        let (session, key) = (sim.session.clone(), sim.keys.ros("/robot/cmd_vel"));
        let (sent, stop) = (sent.clone(), stop.clone());
        tokio::spawn(async move {
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                session.put(&key, command(n)).congestion_control(common::LOSSLESS).await.unwrap();
                n += 1;
                sent.store(n, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
    };
    let recorder = common::spawn(
        &common::bin("flotilla"),
        &["record", mcap.to_str().unwrap(), "--for", "5", "--sim", &sim.sim, "--connect", &sim.endpoint],
        &sim.logs().join("record.log"),
    );
    wait_for_a_recorder(&sim).await;
    let ready = sent.load(Ordering::Relaxed);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    // What the drive received in its last 500 ms may still wait in its
    // batch when it is killed: the recording may miss those.
    let before_kill = sent.load(Ordering::Relaxed);
    tokio::time::sleep(Duration::from_millis(500)).await;
    sim.kill("flotilla-drive");
    // The recorder takes the commands on their key once it knows.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let after_gap = sent.load(Ordering::Relaxed);
    sim.spawn_node("flotilla-drive-again", "flotilla-drive", &[]);
    let status = wait_for_exit(recorder, T).await;
    stop.store(true, Ordering::Relaxed);
    commander.await.unwrap();
    assert!(status.success(), "flotilla record failed: {}", sim.log("record"));
    let log = sim.log("record");
    assert!(log.contains(&format!("{drive} went; taking /robot/cmd_vel on its key")), "{log}");

    let recorded: Vec<u32> = recorded_payloads(&mcap, "/robot/cmd_vel").iter().map(|p| command_number(p)).collect();
    assert!(recorded.windows(2).all(|w| w[0] < w[1]), "each command once, in order: {recorded:?}");
    let missing =
        |range: std::ops::Range<u32>| -> Vec<u32> { range.filter(|n| recorded.binary_search(n).is_err()).collect() };
    assert_eq!(missing(ready..before_kill), [0u32; 0], "forwarded by the drive, recorded: {recorded:?}");
    let last = *recorded.last().unwrap();
    assert!(last > after_gap + 50, "commands recorded on their key after the drive went: {recorded:?}");
    assert_eq!(missing(after_gap..last), [0u32; 0], "taken on the key after the drive went: {recorded:?}");
}

/// Command `n`: a `cmd_vel` told apart by its `linear.z` (which a diff
/// drive ignores).
fn command(n: u32) -> Vec<u8> {
    let twist = Twist { linear: Vector3 { x: 0.2, y: 0.0, z: f64::from(n) }, angular: Vector3::default() };
    flotilla_messages::encode(&twist)
}

/// The number of a [`command`].
fn command_number(payload: &[u8]) -> u32 {
    let twist: Twist = flotilla_messages::decode(payload).expect("a twist");
    twist.linear.z as u32
}

/// A scan's stamp (sec, nanosec): each of the room laser's scans has its own.
fn scan_stamp(payload: &[u8]) -> (u32, u32) {
    (u32::from_le_bytes(payload[4..8].try_into().unwrap()), u32::from_le_bytes(payload[8..12].try_into().unwrap()))
}

/// Samples collected: each one's key and payload.
type Keyed = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

/// Collects the key and payload of every sample on `keys` into a shared list.
async fn collect_keyed(session: &zenoh::Session, keys: String) -> (Keyed, zenoh::pubsub::Subscriber<()>) {
    let got: Keyed = Arc::default();
    let into = got.clone();
    let subscriber = session
        .declare_subscriber(keys)
        .callback(move |sample| {
            let key = sample.key_expr().as_str().to_string();
            into.lock().unwrap().push((key, sample.payload().to_bytes().into_owned()));
        })
        .await
        .unwrap();
    (got, subscriber)
}

/// Waits until a recorder subscribes to the nodes' batches, which it does
/// once it has subscribed to every topic, and until every node that
/// forwards what it takes in (a drive's `cmd_vel`) knows: from then on the
/// recording misses nothing.
async fn wait_for_a_recorder(sim: &Sim) {
    let probe = sim.session.declare_publisher(sim.keys.recording("probe")).await.unwrap();
    let deadline = tokio::time::Instant::now() + T;
    while !probe.matching_status().await.unwrap().matching() {
        assert!(tokio::time::Instant::now() < deadline, "no recorder after {T:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let forwarders: Vec<String> = tokens(sim, sim.keys.forwarders())
        .await
        .iter()
        .filter_map(|token| sim.keys.parse_forwarder(token).map(|(node, _)| node.to_string()))
        .collect();
    for node in forwarders {
        while tokens(sim, sim.keys.forwarding(&node)).await.is_empty() {
            assert!(tokio::time::Instant::now() < deadline, "{node} did not see the recorder within {T:?}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// The liveliness tokens alive on `keys`.
async fn tokens(sim: &Sim, keys: String) -> Vec<String> {
    flotilla_node_kit::claims::live_tokens(&sim.session, keys, Duration::from_secs(5)).await.unwrap()
}

/// Waits for the node that forwards `ros_name`'s messages to recorders;
/// its name.
async fn wait_for_forwarder(sim: &Sim, ros_name: &str) -> String {
    let key = sim.keys.ros(ros_name);
    let deadline = tokio::time::Instant::now() + T;
    loop {
        let found = tokens(sim, sim.keys.forwarders()).await.iter().find_map(|token| {
            sim.keys.parse_forwarder(token).filter(|(_, forwarded)| *forwarded == key).map(|(node, _)| node.to_string())
        });
        if let Some(node) = found {
            return node;
        }
        assert!(tokio::time::Instant::now() < deadline, "no node forwards {ros_name} after {T:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Publishes a `cmd_vel` for each of `numbers`, 100 ms apart, each told
/// apart by its `linear.z` (which a diff drive ignores); returns their
/// payloads.
async fn publish_commands(sim: &Sim, numbers: std::ops::Range<u32>) -> Vec<Vec<u8>> {
    let mut sent = Vec::new();
    for n in numbers {
        let command =
            Twist { linear: Vector3 { x: 0.5, y: 0.0, z: f64::from(n) }, angular: Vector3 { x: 0.0, y: 0.0, z: 0.25 } };
        sim.publish("/robot/cmd_vel", &command).await;
        sent.push(flotilla_messages::encode(&command));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    sent
}

/// Every payload of `topic` in an MCAP file, in log-time order (the
/// reader's, as a player's).
fn recorded_payloads(path: &std::path::Path, topic: &str) -> Vec<Vec<u8>> {
    // Read through the recorder's own reader's format: the mcap crate.
    let out = Command::new("python3")
        .arg("-c")
        .arg(
            "import sys\nfrom mcap.reader import make_reader\n\
             r = make_reader(open(sys.argv[1], 'rb'))\n\
             for _, c, m in r.iter_messages(topics=[sys.argv[2]]):\n    print(m.data.hex())\n",
        )
        .arg(path)
        .arg(topic)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| (0..line.len()).step_by(2).map(|i| u8::from_str_radix(&line[i..i + 2], 16).unwrap()).collect())
        .collect()
}

/// A peer session listening on `endpoint`, multicast off.
async fn peer_listening_on(endpoint: &str) -> zenoh::Session {
    let mut config = zenoh::Config::default();
    config.insert_json5("mode", "\"peer\"").unwrap();
    config.insert_json5("listen/endpoints", &format!("[\"{endpoint}\"]")).unwrap();
    config.insert_json5("scouting/multicast/enabled", "false").unwrap();
    zenoh::open(config).await.unwrap()
}

async fn wait_for_exit(mut child: std::process::Child, timeout: Duration) -> std::process::ExitStatus {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(tokio::time::Instant::now() < deadline, "still running after {timeout:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
