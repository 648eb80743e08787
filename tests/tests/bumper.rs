//! `flotilla-bumper` and `flotilla-bool-sensor` serve Flatland's Bumper and
//! BoolSensor from the world's contact list: a robot with a sensor halo is
//! driven into a crate. The halo trips the bool sensor and the bumper first
//! (no contact points: a sensor overlaps, it does not push); then the base
//! presses on the crate's face, and both bumpers name both bodies with the
//! contact point, a normal from the robot to the crate and a force.

mod common;

use std::time::Duration;

use common::Sim;
use flotilla_messages::flatland_msgs::{Collision, Collisions};
use flotilla_messages::geometry_msgs::Twist;
use flotilla_messages::std_msgs::Bool;

const T: Duration = Duration::from_secs(30);

/// Keeps sending 0.5 m/s ahead at 20 Hz (wall) until dropped.
fn keep_driving(sim: &Sim) -> tokio::task::JoinHandle<()> {
    let session = sim.session.clone();
    let key = sim.keys.ros("/robot/cmd_vel");
    let mut ahead = Twist::default();
    ahead.linear.x = 0.5;
    tokio::spawn(async move {
        loop {
            let _ = session.put(&key, flotilla_messages::encode(&ahead)).await;
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
}

fn names(c: &Collision) -> (&str, &str, &str, &str) {
    (&c.entity_a, &c.body_a, &c.entity_b, &c.body_b)
}

fn stamp_s(m: &Collisions) -> f64 {
    f64::from(m.header.stamp.sec) + f64::from(m.header.stamp.nanosec) * 1e-9
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_robot_driven_into_a_crate_bumps_it() {
    let world = common::config("tests/bumper/world.yaml");
    let sim = Sim::start("bumper", &world, &["flotilla-drive", "flotilla-bumper", "flotilla-bool-sensor"], &[]).await;
    let mut all = sim.subscribe::<Collisions>("/robot/collisions").await;
    let mut base_only = sim.subscribe::<Collisions>("/robot/collisions_base").await;
    let mut near = sim.subscribe::<Bool>("/robot/near").await;

    // Nothing touches yet: empty messages at every step, and false.
    let quiet = all.next(T).await;
    assert_eq!(quiet.header.frame_id, "map");
    assert!(quiet.collisions.is_empty(), "{quiet:?}");
    assert!(!near.next(T).await.data);
    let quiet = base_only.next(T).await;
    assert_eq!(quiet.header.frame_id, "world");
    assert!(quiet.collisions.is_empty(), "{quiet:?}");

    let driving = keep_driving(&sim);
    // The halo (0.5 m) reaches the crate's face at x = 6.75 m first.
    let first = all.until(T, |m| !m.collisions.is_empty()).await;
    assert_eq!(first.collisions.len(), 1, "{first:?}");
    assert_eq!(names(&first.collisions[0]), ("robot", "halo", "crate", "box"));
    assert!(first.collisions[0].contact_positions.is_empty(), "a sensor has no contact points");
    assert!(near.until(T, |b| b.data).await.data);

    // Then the base (0.2 m), 0.3 m further: pressing, with one point on the face.
    let pressed = all.until(T, |m| m.collisions.len() == 2).await;
    let [base, halo] = &pressed.collisions[..] else { unreachable!() };
    assert_eq!(names(base), ("robot", "base", "crate", "box"));
    assert_eq!(names(halo), ("robot", "halo", "crate", "box"));
    assert_eq!((base.contact_positions.len(), base.contact_normals.len(), base.magnitude_forces.len()), (1, 1, 1));
    let (point, normal) = (base.contact_positions[0], base.contact_normals[0]);
    assert!((point.x - 6.75).abs() < 0.01 && (point.y - 5.0).abs() < 1e-3, "{point:?}");
    assert!((normal.x - 1.0).abs() < 1e-6 && normal.y.abs() < 1e-6, "from the robot to the crate: {normal:?}");
    // The solver pushes back once the gap closes (a contact starts within
    // rapier's prediction distance, as Box2D's within its polygon skin).
    let pushed = all.until(T, |m| m.collisions.len() == 2 && m.collisions[0].magnitude_forces[0] > 0.0).await;
    assert!(pushed.collisions[0].magnitude_forces[0] < 1e4, "a ball-park force: {pushed:?}");

    // The 10 Hz bumper without the halo, in the world frame.
    let pressed_b = base_only.until(T, |m| !m.collisions.is_empty()).await;
    assert_eq!(pressed_b.header.frame_id, "world");
    assert_eq!(pressed_b.collisions.len(), 1);
    assert_eq!(names(&pressed_b.collisions[0]), ("robot", "base", "crate", "box"));
    let next_b = base_only.next(T).await;
    let period_s = stamp_s(&next_b) - stamp_s(&pressed_b);
    assert!((period_s - 0.1).abs() < 1e-6, "publish_all_collisions: false keeps to 10 Hz: {period_s} s");
    driving.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wall_is_named_by_its_layer_and_its_normal_flips_with_the_side_it_is_hit_from() {
    // Flatland's bumper collision test: the halo overlaps a wall of the
    // map first; the base presses on it with the normal from the robot to
    // the wall; from the other side, the normal is the other way.
    let world = common::config("tests/bumper/wall.world.yaml");
    let sim = Sim::start("bumper-wall", &world, &["flotilla-drive", "flotilla-bumper"], &[]).await;
    let mut all = sim.subscribe::<Collisions>("/robot/collisions").await;
    let mut base_only = sim.subscribe::<Collisions>("/robot/collisions_base").await;
    assert!(all.next(T).await.collisions.is_empty(), "2 m short of the wall");

    let driving = keep_driving(&sim);
    let halo = all.until(T, |m| !m.collisions.is_empty()).await;
    assert_eq!(names(&halo.collisions[0]), ("robot", "halo", "walls", "walls"), "{halo:?}");
    assert!(halo.collisions[0].contact_normals.is_empty(), "a sensor has no contact points");
    let pressed = all.until(T, |m| m.collisions.len() == 2).await;
    assert_eq!(names(&pressed.collisions[0]), ("robot", "base", "walls", "walls"));
    let normal = pressed.collisions[0].contact_normals[0];
    assert!((normal.x - 1.0).abs() < 1e-6 && normal.y.abs() < 1e-6, "from the west: {normal:?}");
    let b = base_only.until(T, |m| !m.collisions.is_empty()).await;
    assert_eq!(names(&b.collisions[0]), ("robot", "base", "walls", "walls"), "without the excluded halo");
    driving.abort();

    // Put on the east side facing west: driven ahead into the wall again.
    let (moved, output) = sim.cli(&["move", "robot", "7", "5", "3.141592653589793"]);
    assert!(moved, "{output}");
    all.until(T, |m| m.collisions.is_empty()).await;
    let driving = keep_driving(&sim);
    let pressed = all.until(T, |m| m.collisions.len() == 2).await;
    assert_eq!(names(&pressed.collisions[0]), ("robot", "base", "walls", "walls"));
    let normal = pressed.collisions[0].contact_normals[0];
    assert!((normal.x + 1.0).abs() < 1e-6 && normal.y.abs() < 1e-6, "from the east: {normal:?}");
    driving.abort();
}
