//! The `flotilla` Python package (python/, installed by scripts/test.sh)
//! against a real simulation: `tests/python/package_tour.py` connects,
//! reads the description, decodes every message type, joins lockstep and
//! drives, reads scans as NumPy arrays, pauses, steps, moves, spawns,
//! deletes, calls services and resets, and checks each error names what
//! was wrong.

mod common;

use std::process::{Command, Stdio};

use flotilla_wire::Keys;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_package_drives_controls_and_reads_a_simulation() {
    let sim = common::unique_sim("python-package");
    let endpoint = format!("tcp/127.0.0.1:{}", common::free_port());
    let logs = common::log_dir(&sim);
    let world = common::config("tests/room/world.yaml");
    let mut children = common::Processes(vec![common::spawn(
        &common::bin("flotilla-world"),
        &[&world, "--sim", &sim, "--listen", &endpoint, "--clock", "lockstep", "--start-paused"],
        &logs.join("world.log"),
    )]);
    for node in ["flotilla-drive", "flotilla-odom", "flotilla-laser"] {
        children.0.push(common::spawn(
            &common::bin(node),
            &["--sim", &sim, "--connect", &endpoint],
            &logs.join(format!("{node}.log")),
        ));
    }
    let session = common::connect(&endpoint).await;
    common::wait_for_participants(&session, &Keys::new(&sim), 3, &logs).await;
    let script = common::root().join("tests/python/package_tour.py");
    let boxed = common::config("tests/room/box.model.yaml");
    let tour = Command::new("python3")
        .arg(&script)
        .args(["--connect", &endpoint, "--sim", &sim, "--box", &boxed])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3");
    let output = tokio::task::spawn_blocking(move || tour.wait_with_output()).await.unwrap().unwrap();
    drop(children);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("tour passed"),
        "{stdout}\n{}\nlogs in {}",
        String::from_utf8_lossy(&output.stderr),
        logs.display()
    );
}
