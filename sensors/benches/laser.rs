#![allow(missing_docs, reason = "criterion's macros generate undocumented items")]

//! Laser throughput on the conestogo office map (Flatland's demo map from the
//! shared fixtures): 1081-beam, 270°, 20 m scans from many free poses.
//!
//! Reports beams per second (criterion "elements"), on the same poses and
//! map: Flotilla's laser kernel ([`Scene::scan`], what the laser node runs),
//! a per-beam BVH ray cast over the same merged segments (parry2d's
//! polyline; the map's two layers share most walls, which both count once),
//! and the naive per-beam test against every wall segment.

use std::path::Path;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use flotilla_sensors::raycast::{Fan, ScanBuffers};
use flotilla_sensors::scene::Scene;
use flotilla_world_file::load_world;

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
            scene
                .cast(&ScanBuffers::default(), [x, y], [a.cos(), a.sin()], RANGE_M, u16::MAX)
                .is_some_and(|h| h.distance_m > 0.3)
        });
        if enclosed {
            poses.push([x, y, lcg(&mut seed) * std::f64::consts::TAU]);
        }
    }
    poses
}

/// Flotilla's laser: the whole scan at once.
fn flotilla_laser(scene: &Scene, pose: [f64; 3], local: &[[f64; 2]], dirs: &mut [[f64; 2]], buffers: &mut ScanBuffers) {
    let (s, c) = pose[2].sin_cos();
    for (w, l) in dirs.iter_mut().zip(local) {
        *w = [c * l[0] - s * l[1], s * l[0] + c * l[1]];
    }
    let fan = Fan {
        origin: [pose[0], pose[1]],
        start_rad: pose[2] - FOV_RAD / 2.0,
        increment_rad: FOV_RAD / (BEAMS - 1) as f64,
        dirs,
        range_m: RANGE_M,
        layers: u16::MAX,
    };
    scene.scan(&fan, buffers);
}

/// The per-beam BVH baseline: parry2d's polyline over the same segments.
fn scan_bvh(walls: &parry2d_f64::shape::Polyline, pose: [f64; 3], out: &mut [f32]) {
    use parry2d_f64::query::{Ray, RayCast};
    for (i, r) in out.iter_mut().enumerate() {
        let a = pose[2] - FOV_RAD / 2.0 + i as f64 * FOV_RAD / (BEAMS - 1) as f64;
        let ray = Ray::new(
            parry2d_f64::math::Vector::new(pose[0], pose[1]),
            parry2d_f64::math::Vector::new(a.cos(), a.sin()),
        );
        *r = walls.cast_local_ray(&ray, RANGE_M, true).map_or(f32::NAN, |t| t as f32);
    }
}

/// The naive reference: every beam against every segment.
fn scan_brute_force(scene: &Scene, pose: [f64; 3], out: &mut [f32]) {
    for (i, r) in out.iter_mut().enumerate() {
        let a = pose[2] - FOV_RAD / 2.0 + i as f64 * FOV_RAD / (BEAMS - 1) as f64;
        let hit =
            scene.cast_brute_force(&ScanBuffers::default(), [pose[0], pose[1]], [a.cos(), a.sin()], RANGE_M, u16::MAX);
        *r = hit.map_or(f32::NAN, |h| h.distance_m as f32);
    }
}

fn bench(c: &mut Criterion) {
    let world =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures/flatland/conestogo_office_test/world.yaml");
    let spec = load_world(&world).expect("conestogo office world");
    let mut description = spec.initial_description().unwrap();
    description.models.clear(); // the map alone
    let scene = Scene::new(&description);
    let poses = free_poses(&scene, 256);
    let mut out = vec![0f32; BEAMS];
    let local: Vec<[f64; 2]> = (0..BEAMS)
        .map(|i| (-FOV_RAD / 2.0 + i as f64 * FOV_RAD / (BEAMS - 1) as f64).sin_cos())
        .map(|(s, c)| [c, s])
        .collect();
    let mut dirs = local.clone();
    let mut buffers = ScanBuffers::default();
    let mut vertices = Vec::new();
    let mut indices = Vec::new();
    // The same segments as the grid's: a wall in several layers once.
    let mut seen = std::collections::HashSet::new();
    for seg in description.layers.iter().flat_map(|l| &l.segments) {
        let (p, q) = if (seg.a[0], seg.a[1]) <= (seg.b[0], seg.b[1]) { (seg.a, seg.b) } else { (seg.b, seg.a) };
        if !seen.insert([p[0], p[1], q[0], q[1]].map(|v| (v + 0.0).to_bits())) {
            continue;
        }
        let i = vertices.len() as u32;
        vertices.push(parry2d_f64::math::Vector::new(seg.a[0], seg.a[1]));
        vertices.push(parry2d_f64::math::Vector::new(seg.b[0], seg.b[1]));
        indices.push([i, i + 1]);
    }
    let walls = parry2d_f64::shape::Polyline::new(vertices, Some(indices));

    let mut group = c.benchmark_group(format!("laser_conestogo_{}_segments", scene.wall_count()));
    group.throughput(Throughput::Elements((BEAMS * poses.len()) as u64));
    group.bench_function(BenchmarkId::new("flotilla_laser", "1081x256"), |b| {
        b.iter(|| {
            for &p in &poses {
                flotilla_laser(&scene, p, &local, &mut dirs, &mut buffers);
            }
            buffers.best[0]
        })
    });
    group.bench_function(BenchmarkId::new("parry2d_bvh_per_beam", "1081x256"), |b| {
        b.iter(|| {
            for &p in &poses {
                scan_bvh(&walls, p, &mut out);
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
                scan_brute_force(&scene, p, &mut out);
            }
            out[0]
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
