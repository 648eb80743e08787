//! The sonar in a 10 m × 10 m walled room (`configs/tests/room`), against
//! distances worked out by hand.

use std::path::Path;

use flotilla_plugins::sonar::SonarConfig;
use flotilla_plugins::PluginContext;
use flotilla_wire::description::WorldDescription;
use flotilla_wire::geometry::Pose2;
use flotilla_wire::time::SimTime;
use flotilla_wire::world_to_nodes::{BodyId, WorldState};
use flotilla_world_file::load_world;

use super::Sonar;
use crate::raycast::ScanBuffers;
use crate::scene::Scene;

/// The room's walls on layer `walls`, a layer `boxes` without walls, the
/// robot `robot` (a 0.3 m circle) at (5, 5) facing +x, and a 0.5 m box at
/// `box_at` on `box_layer`, if any.
fn room(box_at: Option<[f64; 2]>, box_layer: &str) -> (WorldDescription, BodyId) {
    static WORLDS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = WORLDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("flotilla-sonar-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let map = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/tests/room/room.yaml");
    let robot = "bodies: [{name: base, type: dynamic, footprints: [{type: circle, radius: 0.3, density: 1}]}]\n";
    let square = format!(
        "bodies: [{{name: box, type: static, footprints: [{{type: polygon, layers: [{box_layer}], density: 1, \
         points: [[-0.25, -0.25], [0.25, -0.25], [0.25, 0.25], [-0.25, 0.25]]}}]}}]\n"
    );
    std::fs::write(dir.join("robot.model.yaml"), robot).unwrap();
    std::fs::write(dir.join("box.model.yaml"), square).unwrap();
    let mut world = format!(
        "properties: {{}}\nlayers:\n  - {{name: walls, map: {:?}}}\n  - {{name: boxes}}\nmodels:\n  \
         - {{name: robot, model: robot.model.yaml, pose: [5, 5, 0]}}\n",
        map.display()
    );
    if let Some([x, y]) = box_at {
        world += &format!("  - {{name: box, model: box.model.yaml, pose: [{x}, {y}, 0]}}\n");
    }
    std::fs::write(dir.join("world.yaml"), world).unwrap();
    let description = load_world(&dir.join("world.yaml")).unwrap().initial_description().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let robot_body = description.models[0].bodies[0].id;
    (description, robot_body)
}

fn sonar(description: &WorldDescription, yaml: &str) -> Sonar {
    let ctx = PluginContext::single_body(Path::new("robot.model.yaml"), "robot", "base", &description.layer_names);
    Sonar::new(SonarConfig::parse(&serde_yaml::from_str(yaml).unwrap(), "sonar", &ctx).unwrap(), "robot", 1)
}

/// The scene with the robot at `pose`.
fn scene_with(description: &WorldDescription, robot: BodyId, pose: Pose2) -> Scene {
    let mut state = WorldState::at_rest(description, 0);
    state.bodies.iter_mut().find(|b| b.id == robot).unwrap().pose = pose;
    let mut scene = Scene::sensed_by(description, Some(super::WALL_CELL_M), crate::scene::Sensing::Sonar);
    scene.update(&state);
    scene
}

/// Readings (m) in `scene` with the robot at `pose`.
fn read(scene: &Scene, robot: BodyId, sonar: &mut Sonar, pose: Pose2) -> Vec<f64> {
    sonar.sense(scene, &mut ScanBuffers::default(), robot, pose, SimTime::default());
    sonar.readings().iter().map(|r| f64::from(r.range)).collect()
}

/// Readings (m) with the robot at `pose`.
fn ranges(description: &WorldDescription, robot: BodyId, sonar: &mut Sonar, pose: Pose2) -> Vec<f64> {
    read(&scene_with(description, robot, pose), robot, sonar, pose)
}

/// Distance from (x, y) along `angle` to the walls of the [0, 10]² room.
fn to_walls(x: f64, y: f64, angle: f64) -> f64 {
    let (s, c) = angle.sin_cos();
    let mut best = f64::INFINITY;
    if c.abs() > 1e-12 {
        best = best.min(if c > 0.0 { (10.0 - x) / c } else { -x / c });
    }
    if s.abs() > 1e-12 {
        best = best.min(if s > 0.0 { (10.0 - y) / s } else { -y / s });
    }
    best
}

fn assert_close(got: f64, want: f64, what: &str) {
    // Readings are float32: 1e-6 relative is their resolution.
    assert!((got - want).abs() < 1e-5, "{what}: read {got} m, expected {want} m");
}

#[test]
fn each_transducer_reads_the_wall_along_its_axis() {
    let (world, robot) = room(None, "walls");
    let mut ring = sonar(&world, "{body: base, noise: 0, max_range: 8, transducers: [[0.2, 0, 0], [0, 0.2, 1.5707963267948966], [-0.2, 0, 3.141592653589793], [0.1, -0.1, -0.5]]}");
    let pose = Pose2::new(5.0, 3.0, 0.0);
    let got = ranges(&world, robot, &mut ring, pose);
    assert_close(got[0], 4.8, "forward");
    assert_close(got[1], 6.8, "left");
    assert_close(got[2], 4.8, "back");
    assert_close(got[3], to_walls(5.1, 2.9, -0.5), "right, 0.5 rad down");
    // The cloud: each hit on its transducer's axis, in the body frame.
    let points = ring.cloud().xyz_points();
    assert_eq!(points.len(), 4);
    assert!((f64::from(points[0][0]) - 5.0).abs() < 1e-5 && points[0][1].abs() < 1e-5, "{:?}", points[0]);
    assert!((f64::from(points[1][1]) - 7.0).abs() < 1e-5, "{:?}", points[1]);
}

#[test]
fn a_pioneer_ring_reads_the_room_from_every_transducer_pose() {
    let (world, robot) = room(None, "walls");
    let mut ring = sonar(&world, "{body: base, ring: p3dx, noise: 0}");
    let pose = Pose2::new(4.0, 6.5, 0.3);
    let got = ranges(&world, robot, &mut ring, pose);
    assert_eq!(got.len(), 16);
    for (i, t) in ring.config().transducers.clone().iter().enumerate() {
        let at = pose.compose(&t.pose);
        let want = to_walls(at.x_m, at.y_m, at.theta_rad).min(t.max_range_m);
        assert_close(got[i], want, &format!("transducer {i}"));
    }
    let clear = got.iter().filter(|&&r| r == 5.0).count();
    assert_eq!(ring.cloud().width as usize, 16 - clear, "a point per hit, none for a clear cone");
}

#[test]
fn nothing_within_range_reads_max_range_and_too_near_reads_min_range() {
    let (world, robot) = room(None, "walls");
    let mut ring = sonar(&world, "{body: base, noise: 0, min_range: 0.5, max_range: 2, transducers: [[0, 0, 0]]}");
    assert_close(ranges(&world, robot, &mut ring, Pose2::new(5.0, 5.0, 0.0))[0], 2.0, "clear");
    assert_eq!(ring.cloud().width, 0);
    assert_close(ranges(&world, robot, &mut ring, Pose2::new(9.7, 5.0, 0.0))[0], 0.5, "0.3 m from the wall");
}

#[test]
fn closest_ray_mode_finds_a_box_corner_the_axis_misses() {
    // The box spans x 6.25..6.75, y 5.15..5.65: beside the axis from (5.2, 5).
    let (world, robot) = room(Some([6.5, 5.4]), "walls");
    let axis = "{body: base, noise: 0, transducers: [[0.2, 0, 0]]}";
    let mut single = sonar(&world, axis);
    assert_close(ranges(&world, robot, &mut single, Pose2::new(5.0, 5.0, 0.0))[0], 4.8, "the axis ray misses the box");
    let mut closest = sonar(&world, "{body: base, noise: 0, transducers: [[0.2, 0, 0]], mode: closest_ray}");
    // Rays every 6° from −15° to 15°: the one at 9° meets the box's face x = 6.25.
    let want = 1.05 / 9f64.to_radians().cos();
    assert_close(ranges(&world, robot, &mut closest, Pose2::new(5.0, 5.0, 0.0))[0], want, "the 9° ray");
}

#[test]
fn a_body_on_a_layer_the_sonar_does_not_scan_is_invisible_and_its_own_body_never_seen() {
    let (world, robot) = room(Some([6.5, 5.0]), "boxes");
    // Inside its own 0.3 m footprint, and on its rim.
    let transducers = "transducers: [[0.1, 0, 0], [0.3, 0, 0], [0, 0, 3.141592653589793]]";
    let mut all = sonar(&world, &format!("{{body: base, noise: 0, {transducers}}}"));
    let got = ranges(&world, robot, &mut all, Pose2::new(5.0, 5.0, 0.0));
    assert_close(got[0], 1.15, "the box, from 0.1 m ahead of the centre");
    assert_close(got[1], 0.95, "the box, from the rim");
    assert_close(got[2], 5.0, "back: the wall at 5 m (max range), not the robot itself");
    let mut walls_only = sonar(&world, &format!("{{body: base, noise: 0, layers: [walls], {transducers}}}"));
    assert_close(ranges(&world, robot, &mut walls_only, Pose2::new(5.0, 5.0, 0.0))[0], 4.9, "the box is on boxes");
}

#[test]
fn noise_stays_within_its_bound_and_is_seeded() {
    let (world, robot) = room(None, "walls");
    let yaml = "{body: base, noise: 0.01, max_range: 8, transducers: [[0, 0, 0]]}";
    let (mut a, mut b) = (sonar(&world, yaml), sonar(&world, yaml));
    let mut spread = (f64::INFINITY, f64::NEG_INFINITY);
    let pose = Pose2::new(5.0, 5.0, 0.0);
    let scene = scene_with(&world, robot, pose);
    for _ in 0..500 {
        let ra = read(&scene, robot, &mut a, pose)[0];
        let rb = read(&scene, robot, &mut b, pose)[0];
        assert_eq!(ra, rb, "same seed, same stream");
        spread = (spread.0.min(ra), spread.1.max(ra));
    }
    assert!(spread.0 >= 5.0 - 0.01 - 1e-6 && spread.1 <= 5.0 + 0.01 + 1e-6, "{spread:?}");
    assert!(spread.1 - spread.0 > 0.015, "uses the range ±0.01 m: {spread:?}");
    let reading = &a.readings()[0];
    assert!((f64::from(reading.variance) - 0.01f64.powi(2) / 3.0).abs() < 1e-9, "uniform ±n: variance n²/3");
    assert_eq!(reading.header.frame_id, "robot_sonar_0");
}

#[test]
fn a_world_with_the_same_layer_names_but_other_walls_is_seen_once_followed() {
    // LoadWorld may keep the layer names and change the maps.
    let (mut world, robot) = room(None, "walls");
    let mut ring = sonar(&world, "{body: base, noise: 0, max_range: 8, transducers: [[0, 0, 0]]}");
    let pose = Pose2::new(5.0, 5.0, 0.0);
    let mut slot = None;
    Scene::follow(&mut slot, &world, Some(super::WALL_CELL_M), crate::scene::Sensing::Sonar);
    assert_close(read(slot.as_ref().unwrap(), robot, &mut ring, pose)[0], 5.0, "the wall at x = 10");
    for segment in &mut world.layers[0].segments {
        segment.a[0] -= 2.0;
        segment.b[0] -= 2.0;
    }
    Scene::follow(&mut slot, &world, Some(super::WALL_CELL_M), crate::scene::Sensing::Sonar);
    assert_close(read(slot.as_ref().unwrap(), robot, &mut ring, pose)[0], 3.0, "the wall now at x = 8");
}
