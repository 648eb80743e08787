#![allow(missing_docs, reason = "criterion's macros generate undocumented items")]

//! Laser throughput on the conestogo office map (Flatland's demo map from the
//! shared fixtures): 1081-beam, 270°, 20 m scans from many free poses.
//!
//! Reports beams per second (criterion "elements") for Flotilla's grid ray
//! caster and for the naive per-beam test against every wall segment.

use std::path::Path;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use flotilla_sensors::scene::Scene;
use flotilla_world::loader::load_world;
use flotilla_world::physics::Physics;

const BEAMS: usize = 1081;
const RANGE_M: f64 = 20.0;
const FOV_RAD: f64 = 270.0 * std::f64::consts::PI / 180.0;

fn lcg(state: &mut u64) -> f64 {
    *state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (*state >> 11) as f64 / (1u64 << 53) as f64
}

/// Poses inside the mapped building: every one of 16 probe rays hits a wall
/// within range, and none closer than 0.3 m.
fn free_poses(scene: &Scene, n: usize) -> Vec<[f64; 3]> {
    let mut seed = 7;
    let mut poses = Vec::with_capacity(n);
    while poses.len() < n {
        let (x, y) = (-16.6 + lcg(&mut seed) * 65.5, -6.65 + lcg(&mut seed) * 25.25);
        let enclosed = (0..16).all(|k| {
            let a = k as f64 * std::f64::consts::TAU / 16.0;
            scene.cast([x, y], [a.cos(), a.sin()], RANGE_M, u16::MAX).is_some_and(|h| h.distance_m > 0.3)
        });
        if enclosed {
            poses.push([x, y, lcg(&mut seed) * std::f64::consts::TAU]);
        }
    }
    poses
}

fn scan(scene: &Scene, pose: [f64; 3], out: &mut [f32], brute_force: bool) {
    for (i, r) in out.iter_mut().enumerate() {
        let a = pose[2] - FOV_RAD / 2.0 + i as f64 * FOV_RAD / (BEAMS - 1) as f64;
        let dir = [a.cos(), a.sin()];
        let hit = if brute_force {
            scene.cast_brute_force([pose[0], pose[1]], dir, RANGE_M, u16::MAX)
        } else {
            scene.cast([pose[0], pose[1]], dir, RANGE_M, u16::MAX)
        };
        *r = hit.map_or(f32::NAN, |h| h.distance_m as f32);
    }
}

fn bench(c: &mut Criterion) {
    let world =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures/flatland/conestogo_office_test/world.yaml");
    let spec = load_world(&world).expect("conestogo office world");
    let mut description = Physics::new(&spec).expect("physics").description();
    description.models.clear(); // the map alone
    let scene = Scene::new(&description);
    let poses = free_poses(&scene, 256);
    let mut out = vec![0f32; BEAMS];

    let mut group = c.benchmark_group(format!("laser_conestogo_{}_segments", scene.wall_count()));
    group.throughput(Throughput::Elements((BEAMS * poses.len()) as u64));
    group.bench_function(BenchmarkId::new("grid", "1081x256"), |b| {
        b.iter(|| {
            for &p in &poses {
                scan(&scene, p, &mut out, false);
            }
            out[0]
        })
    });
    group.sample_size(10);
    let few = &poses[..8];
    group.throughput(Throughput::Elements((BEAMS * few.len()) as u64));
    group.bench_function(BenchmarkId::new("brute_force", "1081x8"), |b| {
        b.iter(|| {
            for &p in few {
                scan(&scene, p, &mut out, true);
            }
            out[0]
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
