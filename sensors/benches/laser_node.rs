#![allow(missing_docs, reason = "criterion's macros generate undocumented items")]

//! The laser node's whole scanning step, as `flotilla-laser` runs it on one
//! thread: 100 robots in the conestogo office, each with the benchmark
//! robot's noisy 1081-beam, 270°, 20 m laser at 10 Hz, seeing the walls and
//! each other's footprints. One iteration is one scanning step (every
//! laser scans, adds its noise and encodes its `LaserScan`), so its time
//! divided by 100 is the cost of one scan in the node.

use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use flotilla_node_kit::runtime::{NodePlugin, Outbox, Rebuild};
use flotilla_sensors::laser::node::LaserServer;
use flotilla_sensors::raycast::ScanBuffers;
use flotilla_sensors::scene::Scene;
use flotilla_wire::description::WorldDescription;
use flotilla_wire::world_to_nodes::WorldState;
use flotilla_wire::Keys;
use flotilla_world_file::load_world;

const ROBOTS: usize = 100;
const BEAMS: u64 = 1081;
/// Physics steps of 5 ms between two scans at 10 Hz.
const STEPS_PER_SCAN: u64 = 20;

const ROBOT: &str = "\
bodies:
  - name: base_link
    type: dynamic
    footprints:
      - {type: circle, radius: 0.2, density: 10}
plugins:
  - type: Laser
    name: laser
    body: base_link
    origin: [0.1, 0, 0]
    range: 20
    noise_std_dev: 0.01
    update_rate: 10
    angle: {min: -2.356194490192345, max: 2.356194490192345, increment: 0.004363323129985824}
";

fn lcg(state: &mut u64) -> f64 {
    *state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (*state >> 11) as f64 / (1u64 << 53) as f64
}

/// The office with [`ROBOTS`] robots at poses inside the building (every
/// one of 16 probe rays meets a wall within 20 m, none nearer than 0.5 m).
fn office_with_robots(dir: &Path) -> WorldDescription {
    let map =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures/flatland/conestogo_office_test/map.yaml");
    let world = format!("properties: {{}}\nlayers:\n  - name: walls\n    map: {:?}\nmodels: []\n", map.display());
    std::fs::write(dir.join("map_only.yaml"), world.as_str()).unwrap();
    let walls = Scene::new(&load_world(&dir.join("map_only.yaml")).unwrap().initial_description().unwrap());
    let mut seed = 11;
    let mut models = String::new();
    let mut placed = 0;
    while placed < ROBOTS {
        let (x, y) = (-16.6 + lcg(&mut seed) * 65.5, -6.65 + lcg(&mut seed) * 25.25);
        let enclosed = (0..16).all(|k| {
            let a = k as f64 * std::f64::consts::TAU / 16.0;
            walls
                .cast(&ScanBuffers::default(), [x, y], [a.cos(), a.sin()], 20.0, u16::MAX)
                .is_some_and(|h| h.distance_m > 0.5)
        });
        if enclosed {
            let theta = lcg(&mut seed) * std::f64::consts::TAU;
            models += &format!("  - {{name: robot{placed}, model: robot.model.yaml, pose: [{x}, {y}, {theta}]}}\n");
            placed += 1;
        }
    }
    std::fs::write(dir.join("robot.model.yaml"), ROBOT).unwrap();
    let world = world.replace("models: []\n", &format!("models:\n{models}"));
    std::fs::write(dir.join("world.yaml"), world).unwrap();
    load_world(&dir.join("world.yaml")).unwrap().initial_description().unwrap()
}

fn bench(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("flotilla-bench-laser-node-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let description = office_with_robots(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    let mut server = LaserServer::with_threads(1);
    server.rebuild(&mut Rebuild::new(&description, &Keys::new("bench"), &|_, _| true));
    let mut out = Outbox::default();
    let mut step = 0;
    let mut group = c.benchmark_group("laser_node_office");
    group.throughput(Throughput::Elements(ROBOTS as u64 * BEAMS));
    group.bench_function("100_robots_1081_beams_noisy", |b| {
        b.iter(|| {
            let state = WorldState::at_rest(&description, step);
            server.on_state(&state, &mut out);
            let published = out.drain().count();
            assert_eq!(published, ROBOTS, "every laser scans at step {step}");
            step += STEPS_PER_SCAN;
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
