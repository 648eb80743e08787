//! A laser's scan, a sonar reading and a GPS fix allocate nothing once warm: a scan places
//! the footprints of the robots in range (circles and polygons) and sweeps
//! the walls in the memory of earlier scans; a sonar reading, in a closest-ray
//! ring among them, does the same; a fix reuses its message; and a bumper
//! refills its collisions in the buffers of earlier ones.
//! Counted with a global allocator that counts only on the thread that asks
//! it to.

#![allow(
    unsafe_code,
    reason = "a global allocator is the one way to count allocations; it only forwards to the system's"
)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::Path;

use flotilla_sensors::raycast::{Fan, ScanBuffers};
use flotilla_sensors::scene::Scene;
use flotilla_world_file::load_world;

struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: every call is passed to the system allocator unchanged; the
// counters are thread-local cells, touched without allocating.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

fn count() {
    // `try_with`: the thread's locals may be gone while it exits.
    let _ = COUNTING.try_with(|on| {
        if on.get() {
            let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        }
    });
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Allocations made by `f` on this thread.
fn allocations_in(f: impl FnOnce()) -> usize {
    ALLOCATIONS.with(|n| n.set(0));
    COUNTING.with(|on| on.set(true));
    f();
    COUNTING.with(|on| on.set(false));
    ALLOCATIONS.with(Cell::get)
}

/// Twelve robots close together in the conestogo office, half of them round
/// and half of them boxes (polygon footprints), at assorted headings.
fn office_with_robots(dir: &Path) -> (Scene, flotilla_wire::description::WorldDescription) {
    let map =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures/flatland/conestogo_office_test/map.yaml");
    let round = "bodies:\n  - name: base\n    type: dynamic\n    footprints:\n      - {type: circle, radius: 0.2, density: 10}\n";
    let boxy = "bodies:\n  - name: base\n    type: dynamic\n    footprints:\n      - {type: polygon, density: 10, points: [[0.3, -0.2], [0.3, 0.2], [-0.3, 0.25], [-0.3, -0.25]]}\n";
    std::fs::write(dir.join("round.model.yaml"), round).unwrap();
    std::fs::write(dir.join("boxy.model.yaml"), boxy).unwrap();
    let mut world = format!("properties: {{}}\nlayers:\n  - name: walls\n    map: {:?}\nmodels:\n", map.display());
    for k in 0..12 {
        let (x, y) = (2.0 + 0.9 * (k % 4) as f64, 2.0 + 0.9 * (k / 4) as f64);
        let model = if k % 2 == 0 { "round" } else { "boxy" };
        world += &format!("  - {{name: r{k}, model: {model}.model.yaml, pose: [{x}, {y}, {}]}}\n", 0.7 * k as f64);
    }
    std::fs::write(dir.join("world.yaml"), world).unwrap();
    let description = load_world(&dir.join("world.yaml")).unwrap().initial_description().unwrap();
    (Scene::new(&description), description)
}

#[test]
fn a_warm_scan_allocates_nothing() {
    let dir = std::env::temp_dir().join(format!("flotilla-scan-allocations-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (scene, _) = office_with_robots(&dir);
    let _ = std::fs::remove_dir_all(&dir);

    let beams = 1081;
    let fov = 270f64.to_radians();
    let mut dirs = vec![[0.0; 2]; beams];
    let mut buffers = ScanBuffers::default();
    // Scans from between the robots, so that every footprint is in range.
    let mut scan_all = |buffers: &mut ScanBuffers| {
        let mut robots_seen = 0;
        for k in 0..8 {
            let (origin, heading) = ([2.45 + 0.9 * (k % 3) as f64, 2.45 + 0.9 * (k / 3) as f64], 0.9 * k as f64);
            for (i, d) in dirs.iter_mut().enumerate() {
                let (s, c) = (heading - fov / 2.0 + i as f64 * fov / (beams - 1) as f64).sin_cos();
                *d = [c, s];
            }
            let fan = Fan {
                origin,
                start_rad: heading - fov / 2.0,
                increment_rad: fov / (beams - 1) as f64,
                dirs: &dirs,
                range_m: 20.0,
                layers: u16::MAX,
            };
            scene.prepare(origin, 20.0, u16::MAX, buffers);
            scene.scan(&fan, buffers);
            robots_seen += buffers.footprints.len();
        }
        robots_seen
    };
    let seen = scan_all(&mut buffers); // warm up: the buffers grow here
    assert_eq!(seen, 8 * 12, "every robot is in range of every scan");
    let allocations = allocations_in(|| {
        scan_all(&mut buffers);
    });
    assert_eq!(allocations, 0, "8 warm scans of 1081 beams past 12 robots");
}

#[test]
fn a_gps_fix_allocates_nothing() {
    use flotilla_plugins::gps::GpsConfig;
    use flotilla_plugins::PluginContext;
    use flotilla_sensors::gps::Gps;
    use flotilla_wire::geometry::Pose2;
    use flotilla_wire::time::SimTime;

    let layers = vec![];
    let ctx = PluginContext::single_body(Path::new("m.yaml"), "robot1", "base", &layers);
    let entry = serde_yaml::from_str("{body: base, ref_lat: 45, ref_lon: 10, noise_std_dev: 0.5}").unwrap();
    let mut gps = Gps::new(GpsConfig::parse(&entry, "gps", &ctx).unwrap(), "robot1", 3, None);
    let allocations = allocations_in(|| {
        for k in 0..100 {
            let fix = gps.fix(SimTime { nanos: k * 50_000_000 }, Pose2::new(k as f64 * 0.1, 2.0, 0.3));
            assert!(fix.latitude > 45.0);
        }
    });
    assert_eq!(allocations, 0, "100 noisy fixes");
}

#[test]
fn a_warm_sonar_reading_allocates_nothing() {
    use flotilla_plugins::sonar::SonarConfig;
    use flotilla_plugins::PluginContext;
    use flotilla_sensors::sonar::Sonar;
    use flotilla_wire::geometry::Pose2;
    use flotilla_wire::time::SimTime;

    let dir = std::env::temp_dir().join(format!("flotilla-sonar-allocations-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (scene, description) = office_with_robots(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    let ctx = PluginContext::single_body(Path::new("m.yaml"), "r0", "base", &description.layer_names);
    let entry = serde_yaml::from_str("{body: base, ring: p3at, mode: closest_ray}").unwrap();
    let mut sonar = Sonar::new(SonarConfig::parse(&entry, "sonar", &ctx).unwrap(), "r0", 3);
    let own = description.models[0].bodies[0].id;
    // Between the robots, so that footprints are in range.
    let at = |k: u64| Pose2::new(2.45 + 0.1 * k as f64, 2.45, 0.3 * k as f64);
    let mut buffers = flotilla_sensors::raycast::ScanBuffers::default();
    for k in 0..8 {
        sonar.sense(&scene, &mut buffers, own, at(k), SimTime::default()); // warm: as many footprints and hits
        sonar.readings();
        sonar.cloud();
    }
    let allocations = allocations_in(|| {
        for k in 0..8 {
            sonar.sense(&scene, &mut buffers, own, at(k), SimTime { nanos: k * 100_000_000 });
            // and the messages filled for a listener
            sonar.readings();
            sonar.cloud();
        }
    });
    assert!(sonar.cloud().width > 0, "it saw something");
    assert_eq!(allocations, 0, "8 warm readings of 16 transducers");
}

#[test]
fn a_warm_bumper_and_bool_sensor_allocate_nothing() {
    use flotilla_plugins::bool_sensor::BoolSensorConfig;
    use flotilla_plugins::bumper::BumperConfig;
    use flotilla_plugins::PluginContext;
    use flotilla_sensors::contact::bool_sensor::BoolSensor;
    use flotilla_sensors::contact::bumper::Bumper;
    use flotilla_sensors::contact::ContactNames;
    use flotilla_wire::time::SimTime;
    use flotilla_wire::world_to_nodes::{Contact, ContactPeer, ContactPoint};

    let world = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/tests/bumper/world.yaml");
    let description = load_world(&world).unwrap().initial_description().unwrap();
    let robot = &description.models[0];
    let ctx = PluginContext::of(robot, &description.layer_names);
    let mut bumper = Bumper::new(BumperConfig::parse(&serde_yaml::from_str("{}").unwrap(), "b", &ctx).unwrap(), robot);
    let config = BoolSensorConfig::parse(&serde_yaml::from_str("{body: halo, update_rate: 20}").unwrap(), "s", &ctx);
    let mut sensor = BoolSensor::new(config.unwrap(), robot.bodies[1].id);
    let names = ContactNames::of(&description);
    let (base, halo, crate_box) = (robot.bodies[0].id, robot.bodies[1].id, description.models[1].bodies[0].id);
    let point = ContactPoint { position_m: [6.75, 5.0], force_n: 3.0 };
    let contacts = [
        Contact {
            body: base,
            peer: ContactPeer::Body(crate_box),
            normal: [1.0, 0.0],
            point_count: 2,
            points: [point; 2],
        },
        Contact { body: halo, peer: ContactPeer::Layer(0), normal: [0.0; 2], point_count: 0, points: [point; 2] },
    ];
    let mut step = |k: u64| {
        let n = (k % 3) as usize; // 0, 1 or 2 contacts: entries come and go
        sensor.observe(&contacts[..n]);
        let _ = sensor.reading(SimTime::at_step(k, 5_000_000), 5_000_000);
        bumper.update(&contacts[..n], &names, SimTime::at_step(k, 5_000_000), 5_000_000).map(|m| m.collisions.len())
    };
    for k in 0..6 {
        step(k); // warm: every entry and point buffer used once
    }
    let allocations = allocations_in(|| {
        for k in 6..600 {
            assert_eq!(step(k), Some((k % 3) as usize));
        }
    });
    assert_eq!(allocations, 0, "594 warm steps of a bumper and a bool sensor");
}
