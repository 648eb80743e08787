//! A laser node scans the lasers due at one step on several threads; what it
//! publishes must not depend on how many: the same messages, byte for byte,
//! in the same order, noise included.

use std::path::Path;

use flotilla_node_kit::runtime::{NodePlugin, Outbox, Rebuild};
use flotilla_sensors::laser::node::LaserServer;
use flotilla_wire::description::WorldDescription;
use flotilla_wire::geometry::Pose2;
use flotilla_wire::world_to_nodes::WorldState;
use flotilla_wire::Keys;
use flotilla_world_file::load_world;

const ROBOTS: usize = 12;
const STEPS: u64 = 60;

/// Twelve robots in the conestogo office, each with a noisy 10 Hz laser,
/// near enough to see each other; the first few drive in circles.
fn office_with_robots(dir: &Path) -> WorldDescription {
    let map =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures/flatland/conestogo_office_test/map.yaml");
    let robot = "\
bodies:
  - name: base_link
    type: dynamic
    footprints:
      - {type: circle, radius: 0.2, density: 10}
plugins:
  - type: Laser
    name: laser
    body: base_link
    range: 20
    noise_std_dev: 0.05
    update_rate: 10
    angle: {min: -2.356194490192345, max: 2.356194490192345, increment: 0.02}
";
    std::fs::write(dir.join("robot.model.yaml"), robot).unwrap();
    let mut world = format!("properties: {{}}\nlayers:\n  - name: walls\n    map: {:?}\nmodels:\n", map.display());
    for k in 0..ROBOTS {
        let (x, y) = (2.0 + 0.8 * (k % 4) as f64, 2.0 + 0.8 * (k / 4) as f64);
        world += &format!("  - {{name: robot{k}, model: robot.model.yaml, pose: [{x}, {y}, {}]}}\n", 0.5 * k as f64);
    }
    std::fs::write(dir.join("world.yaml"), world).unwrap();
    load_world(&dir.join("world.yaml")).unwrap().initial_description().unwrap()
}

/// Every message a server with `threads` threads publishes over the run.
fn run(threads: usize) -> Vec<(String, Vec<u8>)> {
    let dir = std::env::temp_dir().join(format!("flotilla-laser-threads-{}-{threads}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let description = office_with_robots(&dir);
    let mut server = LaserServer::with_threads(threads);
    server.rebuild(&mut Rebuild::new(&description, &Keys::new("threads"), &|_, _| true));
    let moving: Vec<_> = description.models.iter().take(4).map(|m| m.bodies[0].id).collect();
    let mut published = Vec::new();
    for step in 0..STEPS {
        let mut state = WorldState::at_rest(&description, step);
        // The first four drive circles, 0.5 m/s at 1 rad/s, exactly.
        let t_s = state.time.nanos as f64 * 1e-9;
        for body in state.bodies.iter_mut().filter(|b| moving.contains(&b.id)) {
            let (v_mps, w_radps, start) = (0.5, 1.0, body.pose);
            let heading = start.theta_rad + w_radps * t_s;
            body.pose = Pose2::new(
                start.x_m + v_mps / w_radps * (heading.sin() - start.theta_rad.sin()),
                start.y_m - v_mps / w_radps * (heading.cos() - start.theta_rad.cos()),
                heading,
            );
        }
        let mut out = Outbox::default();
        server.on_state(&state, &mut out);
        published.extend(out.drain());
    }
    let _ = std::fs::remove_dir_all(&dir);
    published
}

#[test]
fn scans_are_the_same_on_one_two_or_five_threads() {
    let one = run(1);
    // Every robot scans at t = 0 and then every 0.1 s: all twelve at once.
    let scans_per_robot = STEPS.div_ceil(20) as usize;
    assert_eq!(one.len(), ROBOTS * scans_per_robot, "every laser publishes each time it is due");
    for threads in [2, 5] {
        let many = run(threads);
        assert_eq!(many.len(), one.len(), "{threads} threads");
        for (k, (a, b)) in one.iter().zip(&many).enumerate() {
            assert_eq!(a.0, b.0, "message {k} on {threads} threads goes to another key");
            assert!(a.1 == b.1, "message {k} ({}) differs on {threads} threads", a.0);
        }
    }
}
