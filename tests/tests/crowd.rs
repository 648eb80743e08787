//! The crowd: people and a trolley walking the test room
//! (`configs/tests/crowd/room.world.yaml`), moved by `flotilla-crowd`,
//! seen by a robot's laser and met by its bumper, checked in the world's
//! own states.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::Sim;
use flotilla_messages::flatland_msgs::Collisions;
use flotilla_messages::people_msgs::People;
use flotilla_messages::sensor_msgs::LaserScan;
use flotilla_messages::visualization_msgs::{Marker, MarkerArray};
use flotilla_wire::geometry::Pose2;
use flotilla_wire::world_to_nodes::WorldState;

/// The bodies of the room, in world-file order (one body per model).
const ROBOT: u32 = 1;
const ALICE: u32 = 2;
const BOB: u32 = 3;
const COUPLE: [u32; 2] = [4, 5];
const TROLLEY: u32 = 6;

/// Every body's pose at each state, by sim time in ns.
type Track = BTreeMap<u64, BTreeMap<u32, Pose2>>;

/// The poses of every state until `seconds` of sim time.
async fn track_until(states: &mut common::Topic<WorldState>, seconds: f64) -> Track {
    let mut track = Track::new();
    loop {
        let state = states.next(Duration::from_secs(20)).await;
        track.insert(state.time.nanos, state.bodies.iter().map(|b| (b.id, b.pose)).collect());
        if state.time.as_secs_f64() >= seconds {
            return track;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn people_walk_their_ways_and_the_robot_sees_and_meets_them() {
    let world = common::config("tests/crowd/room.world.yaml");
    let nodes = ["flotilla-crowd", "flotilla-drive", "flotilla-laser", "flotilla-bumper"];
    let sim = Sim::start("crowd", &world, &nodes, &["--clock", "lockstep", "--start-paused"]).await;
    let mut states = sim.subscribe_states().await;
    let mut scans = sim.subscribe::<LaserScan>("/robot/scan").await;
    let mut bumps = sim.subscribe::<Collisions>("/robot/bumper").await;
    let mut markers = sim.subscribe::<MarkerArray>("/crowd/markers").await;
    let mut people = sim.subscribe::<People>("/people").await;
    common::wait_for_participants(&sim.session, &sim.keys, nodes.len(), sim.logs()).await;
    let (resumed, output) = sim.cli(&["resume"]);
    assert!(resumed, "{output}");

    let track = track_until(&mut states, 8.0).await;
    let at = |t_s: f64, body: u32| track[&((t_s * 1e9).round() as u64)][&body];
    let all = |body: u32| track.values().map(move |poses| poses[&body]);

    // Alice crosses the room to x = 9 and turns back, keeping to her line.
    let far = all(ALICE).map(|p| p.x_m).fold(f64::MIN, f64::max);
    assert!((8.4..=9.0).contains(&far), "alice turned at x = {far}");
    assert!(at(8.0, ALICE).x_m < far - 1.0, "and walks back: {:?}", at(8.0, ALICE));
    assert!(all(ALICE).all(|p| (p.y_m - 2.0).abs() < 0.5));
    // The couple walk east together.
    assert!(at(4.0, COUPLE[0]).x_m > 4.0 && at(4.0, COUPLE[1]).x_m > 4.0);
    for poses in track.values() {
        let (a, b) = (poses[&COUPLE[0]], poses[&COUPLE[1]]);
        assert!((a.x_m - b.x_m).hypot(a.y_m - b.y_m) < 1.5, "the couple parted: {a:?} {b:?}");
    }
    // The trolley runs its line exactly, at its 0.5 m/s: 2.5 m at 1 s, at
    // the end (3.5 m) at 3 s, then turns on the spot for one 20 ms update
    // and is back by 0.49 m a second later.
    assert!(all(TROLLEY).all(|p| (p.y_m - 5.0).abs() < 1e-9 && (2.0 - 1e-9..=3.5 + 1e-9).contains(&p.x_m)));
    assert!((at(1.0, TROLLEY).x_m - 2.5).abs() < 1e-9, "{:?}", at(1.0, TROLLEY));
    assert!((at(3.0, TROLLEY).x_m - 3.5).abs() < 1e-9, "{:?}", at(3.0, TROLLEY));
    assert!((at(4.0, TROLLEY).x_m - 3.01).abs() < 1e-9, "{:?}", at(4.0, TROLLEY));
    assert!((at(4.0, TROLLEY).theta_rad.abs() - std::f64::consts::PI).abs() < 1e-9);
    // Nobody walks through the room's walls.
    for body in [ALICE, BOB, COUPLE[0], COUPLE[1]] {
        assert!(all(body).all(|p| (0.2..=9.8).contains(&p.x_m) && (0.2..=9.8).contains(&p.y_m)), "body {body}");
    }

    // The laser's beam straight back (−π) meets the trolley's front.
    let scan = scans.until(Duration::from_secs(20), |s| s.header.stamp.sec == 1).await;
    let t = f64::from(scan.header.stamp.sec) + f64::from(scan.header.stamp.nanosec) * 1e-9;
    let expected = at(t, ROBOT).x_m - (at(t, TROLLEY).x_m + 0.4);
    assert!(
        (f64::from(scan.ranges[0]) - expected).abs() < 0.01,
        "{} m, the trolley is {expected} m away",
        scan.ranges[0]
    );

    // rviz2's markers: each person a cylinder where they are, the trolley a
    // box of its size, each with its name.
    let drawn =
        markers.until(Duration::from_secs(20), |m| m.markers.first().is_some_and(|m| m.header.stamp.sec == 2)).await;
    let names: Vec<&str> = drawn.markers.iter().filter(|m| m.ns == "names").map(|m| m.text.as_str()).collect();
    assert_eq!(names, ["alice", "bob", "couple_1", "couple_2", "trolley"]);
    let shapes: Vec<(&str, i32)> = drawn
        .markers
        .iter()
        .filter(|m| m.ns == "people" || m.ns == "scripted")
        .map(|m| (m.ns.as_str(), m.marker_type))
        .collect();
    let person = ("people", Marker::CYLINDER);
    assert_eq!(shapes, [person, person, person, person, ("scripted", Marker::CUBE)]);
    let trolley = drawn.markers.iter().find(|m| m.ns == "scripted").unwrap();
    assert_eq!((trolley.scale.x, trolley.scale.y), (0.8, 0.5), "the trolley's size, m");
    let stamp = f64::from(trolley.header.stamp.sec) + f64::from(trolley.header.stamp.nanosec) * 1e-9;
    assert_eq!((trolley.pose.position.x, trolley.pose.position.y), (at(stamp, TROLLEY).x_m, at(stamp, TROLLEY).y_m));
    let alice = &drawn.markers[0];
    let stamp = f64::from(alice.header.stamp.sec) + f64::from(alice.header.stamp.nanosec) * 1e-9;
    assert_eq!((alice.pose.position.x, alice.pose.position.y), (at(stamp, ALICE).x_m, at(stamp, ALICE).y_m));
    assert_eq!((alice.header.frame_id.as_str(), alice.scale.x), ("map", 0.5));

    // People-aware navigation's list: everyone, by name, where the world
    // has them, with their velocity (the trolley's is its 0.5 m/s east,
    // 2.5 m into its 3.5 m run), index, heading and kind.
    let listed = people.until(Duration::from_secs(20), |p| p.header.stamp.sec == 2).await;
    let stamp = f64::from(listed.header.stamp.sec) + f64::from(listed.header.stamp.nanosec) * 1e-9;
    let names: Vec<&str> = listed.people.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["alice", "bob", "couple_1", "couple_2", "trolley"]);
    let kinds: Vec<Option<&str>> = listed.people.iter().map(|p| p.tag("kind")).collect();
    assert_eq!(kinds, [Some("person"), Some("person"), Some("person"), Some("person"), Some("scripted")]);
    for (k, (person, body)) in listed.people.iter().zip([ALICE, BOB, COUPLE[0], COUPLE[1], TROLLEY]).enumerate() {
        let pose = at(stamp, body);
        assert_eq!((person.position.x, person.position.y), (pose.x_m, pose.y_m), "{}", person.name);
        assert_eq!(person.tag("yaw").and_then(|y| y.parse().ok()), Some(pose.theta_rad), "{}", person.name);
        assert_eq!(person.tag("id"), Some(k.to_string().as_str()), "the markers' id");
    }
    let trolley = &listed.people[4].velocity;
    assert!((trolley.x - 0.5).abs() < 1e-9 && trolley.y.abs() < 1e-9, "{trolley:?}");
    assert_eq!(listed.header.frame_id, "map");

    // Bob, who does not see robots, walks into the robot: its bumper names him.
    let bumped = bumps.until(Duration::from_secs(20), |c| c.collisions.iter().any(|c| c.entity_b == "bob")).await;
    assert!(bumped.collisions.iter().any(|c| c.entity_b == "bob"));
    assert!(at(8.0, ROBOT).y_m < 4.95, "and pushes it: {:?}", at(8.0, ROBOT));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flotilla_run_starts_the_crowd_when_the_world_has_people() {
    let world = common::config("tests/crowd/room.world.yaml");
    let run = common::Launched::start("crowd-run", &world, &["--clock", "fast"]).await;
    let mut states = run.subscribe_states().await;
    let walked =
        states.until(Duration::from_secs(60), |s| s.bodies.iter().any(|b| b.id == ALICE && b.pose.x_m > 3.0)).await;
    assert!(walked.time.as_secs_f64() > 1.0);
    run.node_pid("flotilla-crowd");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_source_lets_people_on_at_its_rate_and_takes_them_off_after_their_walk() {
    let world = common::config("tests/crowd/source.world.yaml");
    let sim = Sim::start("crowd-source", &world, &["flotilla-crowd"], &["--clock", "lockstep", "--start-paused"]).await;
    let mut states = sim.subscribe_states().await;
    common::wait_for_participants(&sim.session, &sim.keys, 1, sim.logs()).await;
    let (resumed, output) = sim.cli(&["resume"]);
    assert!(resumed, "{output}");
    let track = track_until(&mut states, 6.5).await;
    // door_1 (body 1) comes on at 0 s, door_2 (body 2) at 2 s; each walks
    // 3 m at 1 m/s (2.5 m to within 0.5 m of its waypoint), goes off, and
    // comes back at its next slot: 4 s after its last (2 people, 1 per 2 s).
    let on = |t_s: f64, body: u32| track[&((t_s * 1e9).round() as u64)][&body].y_m > 0.0;
    let at = |t_s: f64, body: u32| track[&((t_s * 1e9).round() as u64)][&body];
    assert!(on(0.5, 1) && !on(0.5, 2), "door_1 on, door_2 waiting");
    assert!(on(2.5, 1) && on(2.5, 2), "both on");
    assert!(
        (at(0.02, 1).x_m - 2.0).abs() < 1e-9 && (at(0.02, 1).y_m - 5.0).abs() < 1e-9,
        "door_1 came on at the source"
    );
    // off after its walk (about 3 s), back at 4 s
    assert!(!on(3.9, 1), "door_1 went off: {:?}", at(3.9, 1));
    assert!(on(4.1, 1) && at(4.1, 1).x_m < 2.3, "and came back at 4 s: {:?}", at(4.1, 1));
    assert!(!on(5.9, 2) && on(6.1, 2), "door_2 off after its walk, back at 6 s");
    // never seen between its place offstage and the room
    for poses in track.values() {
        for body in [1, 2] {
            let p = poses[&body];
            assert!(p.y_m > 0.0 || p.y_m < -1000.0, "body {body} between stage and offstage: {p:?}");
        }
    }
}
