//! The scan-level laser kernel gives the same ranges as a per-beam BVH ray
//! cast (parry2d over the same merged segments) and as the naive test of every
//! segment, within 1e-4 m — on random poses of the office map, on beams aimed
//! exactly at segment end points (grazing corners), and on scans that see
//! other robots.

use std::f64::consts::TAU;
use std::path::Path;

use flotilla_sensors::raycast::{Fan, ScanBuffers};
use flotilla_sensors::scene::Scene;
use flotilla_wire::description::FootprintShape;
use flotilla_world_file::load_world;
use parry2d_f64::math::Vector;
use parry2d_f64::query::{Ray, RayCast};
use parry2d_f64::shape::{Ball, Polyline};

const BEAMS: usize = 1081;
const RANGE_M: f64 = 20.0;
const FOV_RAD: f64 = 270.0 * std::f64::consts::PI / 180.0;

fn lcg(state: &mut u64) -> f64 {
    *state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (*state >> 11) as f64 / (1u64 << 53) as f64
}

struct Baseline {
    walls: Polyline,
    robots: Vec<([f64; 2], f64)>,
}

impl Baseline {
    fn cast(&self, o: [f64; 2], d: [f64; 2]) -> Option<f64> {
        let ray = Ray::new(Vector::new(o[0], o[1]), Vector::new(d[0], d[1]));
        let mut best = self.walls.cast_local_ray(&ray, RANGE_M, true);
        for (c, r) in &self.robots {
            if (o[0] - c[0]).hypot(o[1] - c[1]) <= *r {
                continue; // from inside a footprint nothing is seen (Box2D)
            }
            let local = Ray::new(Vector::new(o[0] - c[0], o[1] - c[1]), Vector::new(d[0], d[1]));
            if let Some(t) = Ball::new(*r).cast_local_ray(&local, RANGE_M, true) {
                best = Some(best.map_or(t, |b: f64| b.min(t)));
            }
        }
        best
    }
}

fn office() -> (Scene, Baseline, Vec<[f64; 2]>) {
    let world = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/office/world.yaml");
    let description = load_world(&world).unwrap().initial_description().unwrap();
    let scene = Scene::new(&description);
    let mut vertices = Vec::new();
    let mut indices = Vec::new();
    let mut ends = Vec::new();
    for s in description.layers.iter().flat_map(|l| &l.segments) {
        let i = vertices.len() as u32;
        vertices.push(Vector::new(s.a[0], s.a[1]));
        vertices.push(Vector::new(s.b[0], s.b[1]));
        indices.push([i, i + 1]);
        ends.push(s.a);
    }
    let robots = description
        .models
        .iter()
        .flat_map(|m| &m.bodies)
        .flat_map(|b| {
            b.footprints.iter().filter_map(move |f| match f.shape {
                FootprintShape::Circle { center, radius } => Some((b.pose.transform_point(center), radius)),
                _ => None,
            })
        })
        .collect();
    (scene, Baseline { walls: Polyline::new(vertices, Some(indices)), robots }, ends)
}

/// Scans from `o` with the kernel, then checks every beam against both references.
fn check(scene: &Scene, baseline: &Baseline, o: [f64; 2], start: f64, buffers: &mut ScanBuffers) -> usize {
    let inc = FOV_RAD / (BEAMS - 1) as f64;
    let dirs: Vec<[f64; 2]> = (0..BEAMS).map(|i| (start + i as f64 * inc).sin_cos()).map(|(s, c)| [c, s]).collect();
    let fan = Fan { origin: o, start_rad: start, increment_rad: inc, dirs: &dirs, range_m: RANGE_M, layers: u16::MAX };
    scene.prepare(o, RANGE_M, u16::MAX, buffers);
    scene.scan(&fan, buffers);
    let mut hits = 0;
    for (i, d) in dirs.iter().enumerate() {
        let kernel = Some(buffers.best[i]).filter(|t| *t <= RANGE_M);
        let bvh = baseline.cast(o, *d);
        let naive = scene.cast_brute_force(buffers, o, *d, RANGE_M, u16::MAX).map(|h| h.distance_m);
        for (name, reference) in [("parry2d BVH", bvh), ("naive", naive)] {
            match (kernel, reference) {
                (Some(k), Some(r)) => assert!((k - r).abs() < 1e-4, "{o:?} beam {i}: kernel {k}, {name} {r}"),
                (k, r) => assert_eq!(k, r, "{o:?} beam {i}: kernel vs {name}"),
            }
        }
        hits += usize::from(kernel.is_some());
    }
    hits
}

#[test]
fn random_poses_agree_with_the_bvh_and_naive_casts() {
    let (scene, baseline, _) = office();
    let mut buffers = ScanBuffers::default();
    let mut seed = 11;
    let mut hits = 0;
    for _ in 0..40 {
        let o = [-16.6 + lcg(&mut seed) * 65.5, -6.65 + lcg(&mut seed) * 25.25];
        hits += check(&scene, &baseline, o, lcg(&mut seed) * TAU, &mut buffers);
    }
    assert!(hits > 20 * BEAMS, "most beams hit something: {hits}");
}

#[test]
fn beams_aimed_at_segment_ends_graze_corners_alike() {
    let (scene, baseline, ends) = office();
    let mut buffers = ScanBuffers::default();
    let mut seed = 5;
    let inc = FOV_RAD / (BEAMS - 1) as f64;
    for _ in 0..60 {
        let p = ends[(lcg(&mut seed) * ends.len() as f64) as usize];
        let (r, a) = (0.5 + lcg(&mut seed) * 6.0, lcg(&mut seed) * TAU);
        let o = [p[0] + r * a.cos(), p[1] + r * a.sin()];
        let k = (lcg(&mut seed) * BEAMS as f64) as usize;
        // beam k points exactly at the end point
        let start = (p[1] - o[1]).atan2(p[0] - o[0]) - k as f64 * inc;
        check(&scene, &baseline, o, start, &mut buffers);
    }
}

#[test]
fn scans_that_see_other_robots_agree() {
    let (scene, baseline, _) = office();
    let mut buffers = ScanBuffers::default();
    let mut seed = 3;
    for &(c, _) in &baseline.robots {
        for _ in 0..5 {
            let (r, a) = (0.5 + lcg(&mut seed) * 3.0, lcg(&mut seed) * TAU);
            let o = [c[0] + r * a.cos(), c[1] + r * a.sin()];
            // face the robot, so it is in the middle of the scan
            let start = (c[1] - o[1]).atan2(c[0] - o[0]) - FOV_RAD / 2.0;
            check(&scene, &baseline, o, start, &mut buffers);
        }
    }
}

/// The laser as the node runs it (walls beam by beam, other robots arc by
/// arc), from every robot of the office, which see each other: equal to the
/// per-beam BVH baseline, counter-clockwise, clockwise and upside down.
#[test]
fn the_laser_plugin_matches_the_baseline_with_robots_in_view() {
    use flotilla_plugins::configured;
    use flotilla_plugins::laser::LaserConfig;
    use flotilla_sensors::laser::Laser;

    let (scene, baseline, _) = office();
    let world = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/office/world.yaml");
    let description = load_world(&world).unwrap().initial_description().unwrap();
    let lasers = configured::<LaserConfig>(&description, &|_, _| true);
    let mut checked = 0;
    for variant in ["counter-clockwise", "clockwise", "upside down"] {
        for instance in &lasers {
            let mut config = instance.config.clone();
            config.noise_std_dev_m = 0.0;
            if variant == "clockwise" {
                (config.angle_min_rad, config.angle_max_rad) = (config.angle_max_rad, config.angle_min_rad);
                config.angle_increment_rad = -config.angle_increment_rad;
            }
            config.upside_down = variant == "upside down";
            let body_pose = instance.model.body(&config.body).unwrap().pose;
            let mount = body_pose.compose(&config.origin);
            let mut laser = Laser::new(config.clone(), 0, 0);
            let ranges = laser.scan(&scene, body_pose).to_vec();
            for (i, range) in ranges.iter().enumerate() {
                let mut angle = config.angle_min_rad + i as f64 * config.angle_increment_rad;
                if config.upside_down {
                    angle = -angle;
                }
                let a = mount.theta_rad + angle;
                let expected = baseline.cast([mount.x_m, mount.y_m], [a.cos(), a.sin()]);
                match expected {
                    Some(t) => assert!(
                        (f64::from(*range) - t).abs() < 1e-4,
                        "{variant}, {} beam {i}: {range} vs {t}",
                        instance.model.name
                    ),
                    None => assert!(range.is_nan(), "{variant}, {} beam {i}: {range} vs nothing", instance.model.name),
                }
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 3 * lasers.len() * 1081);
}
