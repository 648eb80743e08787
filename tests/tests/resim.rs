//! Re-simulation: a lockstep run of two noisy robots (odometry noise,
//! laser, sonar, GPS, IMU) on two floors with map transitions
//! (`configs/tests/resim`), a controller driving them through the barrier
//! and one robot through a transition, recorded with `flotilla run
//! --record`; then
//! `flotilla resim` runs it again from the recording's own world files and
//! inputs and finds every output identical, and so does the re-run it
//! kept (`--keep`). The same recording against a copy of the world with
//! one wall moved 0.3 m exits 1 and names the first scan that differs: its
//! step and the beam; against one whose laser draws other noise, only the
//! scans differ, from the first. With the laser node replaced by the Python laser
//! (whose noise the built-in one does not have), the scans differ from
//! the first. A recording of a real-time run, or one cut short, is
//! refused, saying why.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use flotilla_wire::world_to_nodes::WorldState;

/// Records `steps` controlled lockstep steps of `world` (or a real-time
/// run) into `out`.
fn record(world: &str, out: &Path, clock: &str, steps: u64, logs: &Path) {
    record_while(world, out, clock, steps, logs, |_, _| {});
}

/// [`record`], calling `meanwhile` with the run's endpoint and simulation
/// name once it started.
fn record_while(world: &str, out: &Path, clock: &str, steps: u64, logs: &Path, meanwhile: impl FnOnce(&str, &str)) {
    let world = common::config(world);
    let controller = format!("{} --steps {steps}", common::bin("flotilla-lockstep-controller").display());
    let listen = format!("tcp/127.0.0.1:{}", common::free_port());
    let sim = common::unique_sim("resim");
    let mut args = vec!["run", &world, "--clock", clock, "--record", out.to_str().unwrap()];
    args.extend(["--listen", &listen, "--sim", &sim]);
    if clock == "lockstep" {
        // Until the controller has answered all its states, however long
        // a loaded host takes.
        args.extend(["--participants", "1", "--exec", &controller, "--until-exec", "--for", "300"]);
    } else {
        args.extend(["--for", "8"]);
    }
    let run = Command::new(common::bin("flotilla"))
        .args(&args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    meanwhile(&listen, &sim);
    let output = run.wait_with_output().unwrap();
    std::fs::write(logs.join(format!("record-{clock}.log")), [&output.stdout[..], &output.stderr[..]].concat())
        .unwrap();
    assert!(output.status.success(), "flotilla run --record: {}", text(&output));
}

fn resim(recording: &Path, extra: &[&str]) -> Output {
    Command::new(common::bin("flotilla")).arg("resim").arg(recording).args(extra).output().unwrap()
}

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

fn scratch(name: &str) -> PathBuf {
    let dir = common::log_dir(&common::unique_sim(name));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

// Each input is fed at the state its drive had answered when the input
// came, as the drive logged it in its batches: under load, an input logged
// by the recorder on its key instead (at the latest time it knew, a step or
// more from that) went out late in the re-run, one recording in three.
#[test]
fn a_lockstep_recording_runs_again_identically() {
    let dir = scratch("resim");
    let recording = dir.join("run.mcap");
    record("tests/resim/world.yaml", &recording, "lockstep", 600, &dir);

    let kept = dir.join("kept.mcap");
    let same =
        resim(&recording, &["--report", dir.join("same.json").to_str().unwrap(), "--keep", kept.to_str().unwrap()]);
    assert_eq!(same.status.code(), Some(0), "{}", text(&same));
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("same.json")).unwrap()).unwrap();
    let topics = report["topics"].as_array().unwrap();
    let compared = |name: &str| topics.iter().find(|t| t["topic"] == name).map(|t| t["compared"].as_u64().unwrap());
    // Odometry at 50 Hz, scans at 10 Hz, over however many steps the 8 s
    // gave (a few hundred on a busy host).
    for robot in ["a", "b"] {
        assert!(compared(&format!("/{robot}/odometry/filtered")).unwrap() >= 20, "{report}");
        assert!(compared(&format!("/{robot}/scan")).unwrap() >= 5, "{report}");
        let sonar = format!("/{robot}/sonar");
        let sonars = topics.iter().filter(|t| t["topic"].as_str().unwrap().starts_with(&sonar));
        assert!(sonars.map(|t| t["compared"].as_u64().unwrap()).sum::<u64>() > 0, "{report}");
    }
    let names: Vec<&str> = topics.iter().map(|t| t["topic"].as_str().unwrap()).collect();
    assert!(names.iter().any(|n| n.contains("map")), "the map manager's topics: {names:?}");
    // A command per robot per state.
    assert!(report["inputs"].as_u64().unwrap() >= 100, "both robots' commands were fed: {report}");
    assert!(topics.iter().all(|t| t["identical"] == t["compared"]), "{report}");

    // The re-run kept with --keep is a recording that runs again
    // identically too, with the inputs the re-run fed.
    let again = resim(&kept, &["--report", dir.join("kept.json").to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("kept.json")).unwrap()).unwrap();
    assert!(report["inputs"].as_u64().unwrap() >= 100, "{report}");
    let compared: u64 = report["topics"].as_array().unwrap().iter().map(|t| t["compared"].as_u64().unwrap()).sum();
    assert!(compared >= 500, "{report}");
}

#[test]
fn a_moved_wall_is_found_at_the_first_scan() {
    let dir = scratch("resim-wall");
    let recording = dir.join("run.mcap");
    record("tests/resim/world.yaml", &recording, "lockstep", 600, &dir);
    // The first wall of the room 0.3 m further in, in a copy of the
    // world's directories.
    let moved = copy_of_the_resim_world(&dir.join("moved"));
    let walls = std::fs::read_to_string(moved.join("room/room.dat")).unwrap();
    let first = walls.lines().next().unwrap();
    assert_eq!(first, "0 0 10 0", "the room's first wall");
    std::fs::write(moved.join("room/room.dat"), walls.replacen(first, "0 0.3 10 0.3", 1)).unwrap();
    let changed = resim(&recording, &["--world", moved.to_str().unwrap(), "--topics", "scan"]);
    assert_eq!(changed.status.code(), Some(1), "{}", text(&changed));
    let said = text(&changed);
    let line = said.lines().find(|l| l.contains("/scan: first difference")).unwrap_or_else(|| panic!("{said}"));
    // The first scan, at t = 0, and one of its beams.
    assert!(line.contains("message 0 (t = 0.000 s, step 0)") && line.contains("ranges["), "{line}");
}

// A user's `flotilla move` during the recorded run is in the world's
// control log (`/flotilla/control_log`), with the step it was applied at;
// the re-run asks it again there, and every output is identical.
#[test]
fn a_model_moved_by_hand_during_the_run_is_moved_again_at_the_same_step() {
    let dir = scratch("resim-move");
    let recording = dir.join("run.mcap");
    // Once the run is 150 steps in, the controller driving.
    let move_b = |listen: &str, sim: &str| {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.block_on(async {
            let address = listen.trim_start_matches("tcp/");
            while std::net::TcpStream::connect(address).is_err() {
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            let session = common::connect(listen).await;
            let key = flotilla_wire::Keys::new(sim).world_state();
            let mut states = common::subscribe_internal::<WorldState>(&session, key).await;
            states.until(std::time::Duration::from_secs(60), |s| s.step >= 150).await;
        });
        let args = ["move", "b", "4", "6", "1.5", "--connect", listen, "--sim", sim];
        let moved = Command::new(common::bin("flotilla")).args(args).output().unwrap();
        assert!(moved.status.success(), "flotilla move: {}", text(&moved));
    };
    record_while("tests/resim/world.yaml", &recording, "lockstep", 600, &dir, move_b);

    let report = dir.join("moved.json");
    let again = resim(&recording, &["--report", report.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(report).unwrap()).unwrap();
    // 600 commands for each robot, and the move, logged past step 150.
    assert_eq!(report["inputs"], 1201, "{report}");
    let log =
        String::from_utf8(Command::new("python3").arg("-c").arg(CONTROL_LOG).arg(&recording).output().unwrap().stdout)
            .unwrap();
    let step: u64 = log.trim().parse().unwrap_or_else(|_| panic!("the control log: {log:?}"));
    assert!(step >= 150, "moved at step {step}");
}

/// Prints the step of each entry of the control log in the recording
/// named by its first argument (Python's `mcap` reader, as a user's tool
/// would read it).
const CONTROL_LOG: &str = concat!(
    "import json, sys\n",
    "from mcap.reader import make_reader\n",
    "for _, _, m in make_reader(open(sys.argv[1], 'rb')).iter_messages(topics=['/flotilla/control_log']):\n",
    "    print(json.loads(m.data[8:].decode().rstrip(chr(0)))['step'])\n",
);

/// A copy of `configs/tests/resim` and the directories its world reads,
/// in `to`.
fn copy_of_the_resim_world(to: &Path) -> PathBuf {
    for sub in ["resim", "room", "determinism", "transitions"] {
        std::fs::create_dir_all(to.join(sub)).unwrap();
        for entry in std::fs::read_dir(common::root().join("configs/tests").join(sub)).unwrap() {
            let path = entry.unwrap().path();
            if path.is_file() {
                std::fs::copy(&path, to.join(sub).join(path.file_name().unwrap())).unwrap();
            }
        }
    }
    to.to_path_buf()
}

// A plugin's noise is seeded from the world's seed, its model's name and
// its own (docs/plugins.md): the laser renamed in a copy of the model
// draws other noise, and nothing else changes.
#[test]
fn another_laser_noise_seed_moves_the_scans_from_the_first_and_nothing_else() {
    let dir = scratch("resim-seed");
    let recording = dir.join("run.mcap");
    record("tests/resim/world.yaml", &recording, "lockstep", 600, &dir);
    let reseeded = copy_of_the_resim_world(&dir.join("reseeded"));
    let model = reseeded.join("determinism/robot.model.yaml");
    let yaml = std::fs::read_to_string(&model).unwrap();
    assert!(yaml.contains("    name: laser\n"), "the laser plugin's name");
    std::fs::write(&model, yaml.replacen("    name: laser\n", "    name: laser_reseeded\n", 1)).unwrap();

    let report = dir.join("reseeded.json");
    let args = ["--world", reseeded.to_str().unwrap(), "--report", report.to_str().unwrap()];
    let changed = resim(&recording, &args);
    assert_eq!(changed.status.code(), Some(1), "{}", text(&changed));
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(report).unwrap()).unwrap();
    for topic in report["topics"].as_array().unwrap() {
        let name = topic["topic"].as_str().unwrap();
        if name.ends_with("/scan") {
            // The first scan (t = 0, step 0), at a beam's range.
            let divergence = &topic["divergence"];
            assert_eq!((&divergence["index"], &divergence["step"]), (&0.into(), &0.into()), "{topic}");
            assert!(divergence["field"].as_str().unwrap().starts_with("ranges["), "{topic}");
        } else {
            assert!(topic["divergence"].is_null(), "only the scans move: {topic}");
        }
    }
}

#[test]
fn a_replaced_laser_is_run_in_the_built_in_one_s_place_and_its_scans_differ() {
    let dir = scratch("resim-replace");
    let recording = dir.join("run.mcap");
    record("tests/room/world.yaml", &recording, "lockstep", 400, &dir);
    let python = common::root().join("examples/python/laser_takeover.py");
    let laser = format!("laser=python3 {} --model robot", python.display());
    let report = dir.join("replaced.json");
    let replaced = resim(&recording, &["--replace", &laser, "--report", report.to_str().unwrap()]);
    assert_eq!(replaced.status.code(), Some(1), "{}", text(&replaced));
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(report).unwrap()).unwrap();
    let topics = report["topics"].as_array().unwrap();
    let scan = topics.iter().find(|t| t["topic"] == "/robot/scan").unwrap();
    // The Python laser's noise moves every scan from the first on.
    assert_eq!(scan["divergence"]["index"], 0, "{scan}");
    assert!(scan["divergence"]["field"].as_str().unwrap().starts_with("ranges["), "{scan}");
    // And nothing else but the laser's static transform, which it does
    // not send: the controller drives blind.
    for topic in topics.iter().filter(|t| !["/robot/scan", "/tf_static"].contains(&t["topic"].as_str().unwrap())) {
        assert!(topic["divergence"].is_null(), "only the scans move: {topic}");
    }
}

#[test]
fn a_recording_that_cannot_be_run_again_is_refused_with_the_reason() {
    let dir = scratch("resim-refused");
    let realtime = dir.join("realtime.mcap");
    record("tests/room/world.yaml", &realtime, "realtime", 0, &dir);
    let log = std::fs::read_to_string(dir.join("record-realtime.log")).unwrap();
    assert!(log.contains("will not be re-runnable"), "the recorder says so: {log}");
    let refused = resim(&realtime, &[]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(text(&refused).contains("only recordings of a lockstep run"), "{}", text(&refused));

    let cut = dir.join("cut.mcap");
    let bytes = std::fs::read(&realtime).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let refused = resim(&cut, &[]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(text(&refused).contains("cut short"), "{}", text(&refused));
}
