#![allow(missing_docs, reason = "criterion's macros generate undocumented items")]

//! The world's step with N commanded robots: what the world process does
//! for every step of a fleet, without Zenoh — each robot's commanded
//! velocity applied, rapier's step, and the state of every body written
//! and encoded as it goes on the wire.
//!
//! The robots are the benchmark scenarios' (a 0.2 m disc, density 10
//! kg/m²), 6 m apart on a square grid in a walled hall, each driving a
//! circle of 2.5 m radius (0.5 m/s, 0.2 rad/s): they never touch each
//! other or a wall, as in a fleet moving about a warehouse's aisles.
//! Reported per robot-step (criterion "elements").

use std::fmt::Write as _;
use std::path::Path;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use flotilla_wire::codec::encode;
use flotilla_wire::drive_to_world::BodyCommand;
use flotilla_wire::world_to_nodes::WorldState;
use flotilla_world::physics::Physics;
use flotilla_world_file::load_world;

/// Distance between neighbouring robots, m.
const SPACING_M: f64 = 6.0;

/// Writes a hall holding `robots` robots into `dir`; returns its world file.
fn write_hall(dir: &Path, robots: usize) -> std::path::PathBuf {
    let side = (robots as f64).sqrt().ceil() as usize;
    let extent_m = side as f64 * SPACING_M;
    let write = |name: &str, text: &str| std::fs::write(dir.join(name), text).expect("writing the bench world");
    write(
        "hall.dat",
        &format!("0 0 {extent_m} 0\n{extent_m} 0 {extent_m} {extent_m}\n{extent_m} {extent_m} 0 {extent_m}\n0 {extent_m} 0 0\n"),
    );
    write("hall.yaml", "type: line_segments\ndata: hall.dat\nscale: 1.0\norigin: [0, 0, 0]\n");
    write(
        "robot.model.yaml",
        "bodies:\n  - name: base_link\n    type: dynamic\n    footprints:\n      - {type: circle, radius: 0.2, density: 10}\n",
    );
    let mut world =
        String::from("properties: {step_size: 0.005}\nlayers:\n  - {name: walls, map: hall.yaml}\nmodels:\n");
    for i in 0..robots {
        // Each circle's centre is the grid point; the robot starts on its rim.
        let (x, y) = ((i % side) as f64 * SPACING_M + 3.0, (i / side) as f64 * SPACING_M + 0.5);
        writeln!(world, "  - {{name: robot{i}, pose: [{x}, {y}, 0], model: robot.model.yaml}}").expect("a String");
    }
    let path = dir.join("world.yaml");
    write("world.yaml", &world);
    path
}

fn world_step(c: &mut Criterion) {
    let mut group = c.benchmark_group("world_step");
    for robots in [50, 1000] {
        let dir = std::env::temp_dir().join(format!("flotilla-world-bench-{}-{robots}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let spec = load_world(&write_hall(&dir, robots)).expect("the bench world loads");
        let mut physics = Physics::new(&spec).expect("the bench world builds");
        for model in &spec.models {
            for body in physics.model_body_ids(&model.name) {
                let command = BodyCommand { body, local_vx_mps: 0.5, local_vy_mps: 0.0, omega_radps: 0.2 };
                assert!(physics.command(command), "{} takes commands", model.name);
            }
        }
        let mut state = WorldState { revision: 0, step: 0, time: Default::default(), step_ns: 0, bodies: Vec::new() };
        group.throughput(Throughput::Elements(robots as u64));
        group.bench_function(BenchmarkId::new("commanded_robots", robots), |b| {
            b.iter(|| {
                physics.step();
                physics.state_into(&mut state);
                encode(&state).len()
            });
        });
        // The robots kept driving their circles: none met anything.
        physics.state_into(&mut state);
        assert!(state.bodies.iter().all(|b| (b.twist.omega_radps - 0.2).abs() < 1e-9), "a robot was stopped");
        let _ = std::fs::remove_dir_all(&dir);
    }
    group.finish();
}

criterion_group!(benches, world_step);
criterion_main!(benches);
