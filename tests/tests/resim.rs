//! Re-simulation: a lockstep run of the room, a controller driving the
//! robot through the barrier, recorded with `flotilla run --record`; then
//! `flotilla resim` runs it again from the recording's own world files and
//! inputs and finds every output identical. The same recording against a
//! copy of the world with one wall moved 0.3 m exits 1 and names the
//! first scan that differs: its step and the beam. A recording of a
//! real-time run is refused, saying why.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Records `steps` controlled lockstep steps of the room (or a real-time
/// run) into `out`.
fn record(out: &Path, clock: &str, steps: u64, logs: &Path) {
    let world = common::config("tests/room/world.yaml");
    let controller = format!("{} --steps {steps}", common::bin("flotilla-lockstep-controller").display());
    let listen = format!("tcp/127.0.0.1:{}", common::free_port());
    let sim = common::unique_sim("resim");
    let mut args = vec!["run", &world, "--clock", clock, "--record", out.to_str().unwrap(), "--for", "8"];
    args.extend(["--listen", &listen, "--sim", &sim]);
    if clock == "lockstep" {
        args.extend(["--participants", "1", "--exec", &controller]);
    }
    let output = Command::new(common::bin("flotilla")).args(&args).output().unwrap();
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

#[test]
fn a_lockstep_recording_runs_again_identically_and_a_moved_wall_is_found() {
    let dir = scratch("resim");
    let recording = dir.join("run.mcap");
    record(&recording, "lockstep", 600, &dir);

    let same = resim(&recording, &["--report", dir.join("same.json").to_str().unwrap()]);
    assert_eq!(same.status.code(), Some(0), "{}", text(&same));
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("same.json")).unwrap()).unwrap();
    let topics = report["topics"].as_array().unwrap();
    let compared = |name: &str| topics.iter().find(|t| t["topic"] == name).map(|t| t["compared"].as_u64().unwrap());
    // Odometry at 50 Hz over the controlled steps, scans at 10 Hz.
    assert!(compared("/robot/odometry/filtered").unwrap() >= 100, "{report}");
    assert!(compared("/robot/scan").unwrap() >= 20, "{report}");
    assert!(report["inputs"].as_u64().unwrap() >= 500, "the controller's commands were fed: {report}");
    assert!(topics.iter().all(|t| t["identical"] == t["compared"]), "{report}");

    // The first wall of the room 0.3 m further in.
    let moved = dir.join("moved");
    std::fs::create_dir_all(&moved).unwrap();
    for entry in std::fs::read_dir(common::root().join("configs/tests/room")).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            std::fs::copy(&path, moved.join(path.file_name().unwrap())).unwrap();
        }
    }
    let walls = std::fs::read_to_string(moved.join("room.dat")).unwrap();
    let first = walls.lines().next().unwrap();
    assert_eq!(first, "0 0 10 0", "the room's first wall");
    std::fs::write(moved.join("room.dat"), walls.replacen(first, "0 0.3 10 0.3", 1)).unwrap();
    let changed = resim(&recording, &["--world", moved.to_str().unwrap(), "--topics", "scan"]);
    assert_eq!(changed.status.code(), Some(1), "{}", text(&changed));
    let said = text(&changed);
    let line = said.lines().find(|l| l.contains("/robot/scan: first difference")).unwrap_or_else(|| panic!("{said}"));
    // The first scan, at 10 Hz of 200 Hz steps, and one of its beams.
    assert!(line.contains("step 20") && line.contains("ranges["), "{line}");
}

#[test]
fn a_recording_that_cannot_be_run_again_is_refused_with_the_reason() {
    let dir = scratch("resim-refused");
    let realtime = dir.join("realtime.mcap");
    record(&realtime, "realtime", 0, &dir);
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
