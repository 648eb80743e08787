//! An ArMap's simulator objects as sensors meet them (AMRISim's rules):
//! a reflector reads bright to a laser, `box-nolaser` is seen by sonar only,
//! `Sim_InvisibleBox` by neither.

use std::path::{Path, PathBuf};

use flotilla_plugins::laser::LaserConfig;
use flotilla_plugins::PluginContext;
use flotilla_sensors::laser::Laser;
use flotilla_sensors::scene::{Scene, Sensing};
use flotilla_wire::geometry::Pose2;
use flotilla_world_file::load_world;

/// A 10 m room (mm) with a reflector line across y 1..3 m at x = 8 m, a
/// box-nolaser from (5, 5.5) to (5.5, 6.5) m and an invisible box from
/// (5, 7.75) to (5.5, 8.75) m.
const ROOM: &str = r#"2D-Map
MapInfo: SectorType Name=box-nolaser Sim.Obstacle=yes Sim.LaserReflect=0 Sim.SonarReflect=yes
MapInfo: SectorType Name=InvisibleBox Label=Sim_InvisibleBox Sim.Obstacle=yes Sim.LaserReflect=0 Sim.SonarReflect=no
MapInfo: BoundaryType Name=Reflector Label=Reflector
Cairn: Reflector 0 0 0 "" ICON "" 8000 1000 8000 3000
Cairn: box-nolaser 0 0 0 "" ICON "" 5000 5500 5500 6500
Cairn: InvisibleBox 0 0 0 "" ICON "" 5000 7750 5500 8750
LINES
0 0 10000 0
10000 0 10000 10000
10000 10000 0 10000
0 10000 0 0
"#;

/// Writes the room for the test called `test`. Each test has a directory of
/// its own: the tests run in parallel, and one removes its room when loaded.
fn room_world(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("flotilla-armap-objects-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("room.map"), ROOM).unwrap();
    std::fs::write(dir.join("world.yaml"), "properties: {}\nlayers:\n  - {name: room, map: room.map}\n").unwrap();
    dir.join("world.yaml")
}

/// The range and intensity of a one-beam laser at (x, y) looking along +x.
fn laser_at(scene: &Scene, x: f64, y: f64) -> (f32, Option<f32>) {
    laser_towards(scene, x, y, 0.0)
}

/// [`laser_at`] looking along `theta` (rad).
fn laser_towards(scene: &Scene, x: f64, y: f64, theta: f64) -> (f32, Option<f32>) {
    let entry = serde_yaml::from_str("{body: base, range: 20, angle: {min: 0, max: 0, increment: 0.1}}").unwrap();
    let layers = ["room".to_string()];
    let ctx = PluginContext::single_body(Path::new("robot.model.yaml"), "robot", "base", &layers);
    let config = LaserConfig::parse(&entry, "laser", &ctx).unwrap();
    let mut laser = Laser::new(config, 0, 0);
    let ranges = laser.scan(scene, Pose2::new(x, y, theta)).to_vec();
    let message = laser.message(Default::default(), "");
    (ranges[0], message.intensities.first().copied())
}

#[test]
fn lasers_read_reflectors_bright_and_miss_what_hides_from_them() {
    let world = room_world("laser");
    let description = load_world(&world).unwrap().initial_description().unwrap();
    let _ = std::fs::remove_dir_all(world.parent().unwrap());
    let scene = Scene::sensed_by(&description, None, Sensing::Laser);

    let (range, intensity) = laser_at(&scene, 2.0, 2.0);
    assert!((range - 6.0).abs() < 1e-5 && intensity == Some(255.0), "the reflector: {range} m, {intensity:?}");
    let (range, intensity) = laser_at(&scene, 2.0, 4.0);
    assert!((range - 8.0).abs() < 1e-5 && intensity == Some(0.0), "a plain wall: {range} m, {intensity:?}");
    let (range, _) = laser_at(&scene, 2.0, 6.0);
    assert!((range - 8.0).abs() < 1e-5, "box-nolaser is not seen: {range} m");
    let (range, _) = laser_at(&scene, 2.0, 8.25);
    assert!((range - 8.0).abs() < 1e-5, "the invisible box is not seen: {range} m");

    // from the other side, the reflector is bright too
    let (range, intensity) = laser_towards(&scene, 9.0, 2.0, std::f64::consts::PI);
    assert!((range - 1.0).abs() < 1e-5 && intensity == Some(255.0), "behind the reflector: {range} m, {intensity:?}");
}

#[test]
fn sonar_sees_box_nolaser_but_not_the_invisible_box() {
    let world = room_world("sonar");
    let description = load_world(&world).unwrap().initial_description().unwrap();
    let _ = std::fs::remove_dir_all(world.parent().unwrap());
    let scene = Scene::sensed_by(&description, Some(0.25), Sensing::Sonar);
    let cast = |y: f64| scene.cast_walls([2.0, y], [1.0, 0.0], 20.0, u16::MAX).map(|hit| hit.distance_m);
    assert!((cast(6.0).unwrap() - 3.0).abs() < 1e-9, "box-nolaser's near face");
    assert!((cast(8.25).unwrap() - 8.0).abs() < 1e-9, "the wall behind the invisible box");
    assert!((cast(2.0).unwrap() - 6.0).abs() < 1e-9, "sonar sees the reflector as a wall");
}
