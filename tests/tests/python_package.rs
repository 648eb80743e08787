//! The `flotilla` Python package (python/, installed by scripts/test.sh)
//! against a real simulation: `tests/python/package_tour.py` connects,
//! reads the description, decodes every message type, joins lockstep and
//! drives, reads scans as NumPy arrays, pauses, steps, moves, spawns,
//! deletes, calls services and resets, and checks each error names what
//! was wrong.

mod common;

use std::process::{Command, Stdio};

use common::Sim;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_package_drives_controls_and_reads_a_simulation() {
    let world = common::config("tests/room/world.yaml");
    let nodes = ["flotilla-drive", "flotilla-odom", "flotilla-laser"];
    let sim = Sim::start("python-package", &world, &nodes, &["--clock", "lockstep", "--start-paused"]).await;
    common::wait_for_participants(&sim.session, &sim.keys, 3, sim.logs()).await;
    let script = common::root().join("tests/python/package_tour.py");
    let boxed = common::config("tests/room/box.model.yaml");
    let tour = Command::new("python3")
        .arg(&script)
        .args(["--connect", &sim.endpoint, "--sim", &sim.sim, "--box", &boxed])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3");
    let output = tokio::task::spawn_blocking(move || tour.wait_with_output()).await.unwrap().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("tour passed"),
        "{stdout}\n{}\nlogs in {}",
        String::from_utf8_lossy(&output.stderr),
        sim.logs().display()
    );
}
