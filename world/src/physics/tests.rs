use std::path::Path;

use flotilla_wire::drive_to_world::BodyCommand;
use flotilla_wire::geometry::Pose2;
use flotilla_wire::world_to_nodes::WorldState;

use super::Physics;
use flotilla_world_file::load_world;

fn fixture(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures/flatland").join(rel)
}

fn state(p: &Physics) -> WorldState {
    let mut s = WorldState { revision: 0, step: 0, time: Default::default(), step_ns: 0, bodies: vec![] };
    p.state_into(&mut s);
    s
}

#[test]
fn a_commanded_body_moves_at_the_commanded_velocity() {
    let spec = load_world(&fixture("laser_tests/range_test/world.yaml")).unwrap();
    let mut p = Physics::new(&spec).unwrap();
    let id = p.model_body_ids("robot1")[0];
    assert!(p.command(BodyCommand { body: id, local_vx_mps: 0.5, local_vy_mps: 0.0, omega_radps: 0.0 }));
    for _ in 0..200 {
        p.step();
    }
    let s = state(&p);
    assert_eq!(s.step, 200);
    assert_eq!(s.time.nanos, 1_000_000_000);
    let body = s.bodies.iter().find(|b| b.id == id).unwrap();
    assert!((body.pose.x_m - 5.5).abs() < 1e-6, "{:?}", body.pose);
    assert!((body.twist.vx_mps - 0.5).abs() < 1e-9);
}

#[test]
fn turning_while_driving_follows_an_arc() {
    let spec = load_world(&fixture("laser_tests/range_test/world.yaml")).unwrap();
    let mut p = Physics::new(&spec).unwrap();
    let id = p.model_body_ids("robot1")[0];
    p.command(BodyCommand { body: id, local_vx_mps: 0.5, local_vy_mps: 0.0, omega_radps: 0.5 });
    for _ in 0..200 {
        p.step();
    }
    let body = state(&p).bodies.into_iter().find(|b| b.id == id).unwrap();
    // radius 1 m arc for 0.5 rad, starting at (5, 5) heading +x
    assert!((body.pose.theta_rad - 0.5).abs() < 1e-6, "{:?}", body.pose);
    assert!((body.pose.x_m - (5.0 + 0.5f64.sin())).abs() < 2e-3, "{:?}", body.pose);
    assert!((body.pose.y_m - (5.0 + 1.0 - 0.5f64.cos())).abs() < 2e-3, "{:?}", body.pose);
}

#[test]
fn spawn_move_delete_change_the_registry_and_revision() {
    let spec = load_world(&fixture("laser_tests/range_test/world.yaml")).unwrap();
    let mut p = Physics::new(&spec).unwrap();
    let r0 = p.revision();
    let mut robot = spec.models[0].clone();
    robot.name = "robot2".into();
    p.add_model(robot.clone()).unwrap();
    assert_eq!(p.add_model(robot).unwrap_err(), super::PhysicsError::ModelExists("robot2".into()));
    p.move_model("robot2", Pose2::new(2.0, 3.0, 1.0)).unwrap();
    let d = p.description();
    let moved = d.model("robot2").unwrap();
    assert!((moved.bodies[0].pose.x_m - 2.0).abs() < 1e-9 && (moved.bodies[0].pose.theta_rad - 1.0).abs() < 1e-9);
    p.remove_model("robot2").unwrap();
    assert!(p.remove_model("robot2").is_err());
    assert_eq!(p.revision(), r0 + 3);
    assert!(p.description().model("robot2").is_none());
}

#[test]
fn bad_commands_are_refused() {
    let spec = load_world(&fixture("laser_tests/range_test/world.yaml")).unwrap();
    let mut p = Physics::new(&spec).unwrap();
    let id = p.model_body_ids("robot1")[0];
    assert!(!p.command(BodyCommand { body: id, local_vx_mps: f64::NAN, local_vy_mps: 0.0, omega_radps: 0.0 }));
    assert!(!p.command(BodyCommand { body: 9999, local_vx_mps: 1.0, local_vy_mps: 0.0, omega_radps: 0.0 }));
}

#[test]
fn simple_test_a_builds_and_steps() {
    let spec = load_world(&fixture("load_world_tests/simple_test_A/world.yaml")).unwrap();
    let mut p = Physics::new(&spec).unwrap();
    for _ in 0..10 {
        p.step();
    }
    assert_eq!(p.description().models.len(), 4);
}

/// Tools and tests that cannot link the physics engine build descriptions
/// with `WorldSpec::initial_description`; it must be the one the world
/// serves at start, or their body ids would name other bodies.
#[test]
fn the_loader_s_initial_description_is_the_one_the_world_serves() {
    for world in ["laser_tests/range_test/world.yaml", "conestogo_office_test/world.yaml"] {
        let spec = load_world(&fixture(world)).unwrap();
        let served = Physics::new(&spec).unwrap().description();
        let mut loaded = spec.initial_description().unwrap();
        assert_eq!(loaded.models.len(), served.models.len());
        for (l, s) in loaded.models.iter_mut().zip(&served.models) {
            for (lb, sb) in l.bodies.iter_mut().zip(&s.bodies) {
                // rapier stores the heading as a rotation: the same within rounding.
                assert!((lb.pose.x_m - sb.pose.x_m).abs() < 1e-12 && (lb.pose.y_m - sb.pose.y_m).abs() < 1e-12);
                let turn = (lb.pose.theta_rad - sb.pose.theta_rad + std::f64::consts::PI)
                    .rem_euclid(std::f64::consts::TAU)
                    - std::f64::consts::PI;
                assert!(turn.abs() < 1e-12, "{world}: {}", lb.name);
                lb.pose = sb.pose;
            }
        }
        assert_eq!(loaded, served, "{world}");
    }
}

fn configs(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/tests").join(rel)
}

fn contacts(p: &Physics) -> Vec<flotilla_wire::world_to_nodes::Contact> {
    let mut out = flotilla_wire::world_to_nodes::WorldContacts::default();
    p.contacts_into(&mut out);
    assert_eq!((out.step, out.revision), (p.step_count(), p.revision()));
    out.contacts
}

#[test]
fn watched_bodies_report_what_they_touch_from_their_side() {
    use flotilla_wire::world_to_nodes::ContactPeer;
    let spec = load_world(&configs("bumper/world.yaml")).unwrap();
    let mut p = Physics::new(&spec).unwrap();
    assert!(p.watches_contacts(), "the robot has bumpers");
    let [base, halo] = p.model_body_ids("robot")[..] else { panic!("two bodies") };
    let crate_box = p.model_body_ids("crate")[0];
    p.command(BodyCommand { body: base, local_vx_mps: 0.5, local_vy_mps: 0.0, omega_radps: 0.0 });
    assert!(contacts(&p).is_empty(), "nothing touches at the start");

    // 3.7 s at 0.5 m/s: the halo (0.5 m) overlaps the crate's face at 6.75 m, the base (0.2 m) does not yet.
    for _ in 0..740 {
        p.step();
    }
    let now = contacts(&p);
    assert_eq!(now.len(), 1, "{now:?}");
    assert_eq!((now[0].body, now[0].peer, now[0].point_count), (halo, ContactPeer::Body(crate_box), 0));

    // 5 s: the base presses on the crate, straight ahead.
    for _ in 740..1000 {
        p.step();
    }
    let now = contacts(&p);
    assert_eq!(now.len(), 2, "{now:?}");
    let pressing = &now[0];
    assert_eq!((pressing.body, pressing.peer, pressing.point_count), (base, ContactPeer::Body(crate_box), 1));
    assert!((pressing.normal[0] - 1.0).abs() < 1e-6 && pressing.normal[1].abs() < 1e-6, "{pressing:?}");
    let point = pressing.points()[0];
    assert!((point.position_m[0] - 6.75).abs() < 0.01 && (point.position_m[1] - 5.0).abs() < 1e-3, "{point:?}");
    assert!(point.force_n > 0.0, "the drive pushes: {point:?}");
    assert_eq!((now[1].body, now[1].point_count), (halo, 0));

    // Against the room's wall at x = 0, driving backwards: the layer is named by its index.
    p.place_model("robot", flotilla_wire::geometry::Pose2::new(0.5, 5.0, 0.0)).unwrap();
    p.command(BodyCommand { body: base, local_vx_mps: -0.5, local_vy_mps: 0.0, omega_radps: 0.0 });
    for _ in 0..200 {
        p.step();
    }
    let now = contacts(&p);
    let wall = now.iter().find(|c| c.body == base).expect("the base touches the wall");
    assert_eq!(wall.peer, ContactPeer::Layer(0));
    assert!((wall.normal[0] + 1.0).abs() < 1e-6, "towards the wall, behind: {wall:?}");
    assert!(now.iter().any(|c| c.body == halo && c.peer == ContactPeer::Layer(0)));

    p.remove_model("robot").unwrap();
    assert!(!p.watches_contacts(), "no contact plugin left");
}

#[test]
fn a_world_without_contact_plugins_watches_nothing() {
    let spec = load_world(&fixture("laser_tests/range_test/world.yaml")).unwrap();
    assert!(!Physics::new(&spec).unwrap().watches_contacts());
}

/// The yaw rate ground truth shows over `steps` steps (from successive
/// states, unwrapped), in rad per sim second.
fn yaw_rate(p: &mut Physics, body: flotilla_wire::world_to_nodes::BodyId, steps: u64) -> f64 {
    let yaw = |p: &Physics| state(p).bodies.iter().find(|b| b.id == body).unwrap().pose.theta_rad;
    let (start, mut last, mut turned) = (p.time().as_secs_f64(), yaw(p), 0.0);
    for _ in 0..steps {
        p.step();
        let now = yaw(p);
        turned += (now - last + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU) - std::f64::consts::PI;
        last = now;
    }
    turned / (p.time().as_secs_f64() - start)
}

#[test]
fn the_commanded_yaw_rate_is_the_yaw_rate_of_ground_truth_in_place_and_on_an_arc() {
    let spec = load_world(&configs("room/world.yaml")).unwrap();
    let mut p = Physics::new(&spec).unwrap();
    let id = p.model_body_ids("robot")[0];
    for (vx, omega) in [(0.0, 0.5), (0.3, 0.5), (0.0, -2.0), (0.2, 1.0)] {
        p.place_model("robot", flotilla_wire::geometry::Pose2::new(5.0, 5.0, 0.0)).unwrap();
        p.command(BodyCommand { body: id, local_vx_mps: vx, local_vy_mps: 0.0, omega_radps: omega });
        let rate = yaw_rate(&mut p, id, 1000);
        assert!(((rate - omega) / omega).abs() < 1e-6, "commanded ({vx} m/s, {omega} rad/s): yaw at {rate} rad/s");
    }
}

fn building() -> Physics {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/building/building.world.yaml");
    Physics::new(&load_world(&path).unwrap()).unwrap()
}

fn model_xy(p: &Physics, name: &str) -> [f64; 2] {
    let (pose, _) = p.model_state(name).unwrap();
    [pose.x_m, pose.y_m]
}

#[test]
fn robots_on_two_floors_share_x_y_without_touching() {
    // rider on taylor-1 and resident on taylor-2 start at the same spot
    let mut p = building();
    assert_eq!(model_xy(&p, "rider"), model_xy(&p, "resident"));
    for _ in 0..100 {
        p.step();
    }
    assert_eq!(model_xy(&p, "rider"), [26.5, 9.7], "no push between floors");
    assert_eq!(model_xy(&p, "resident"), [26.5, 9.7]);

    // on one floor, the overlapping robots push each other apart
    let revision = p.revision();
    assert_eq!(p.set_map("rider", "taylor-2", None), Ok(true));
    assert!(p.revision() > revision, "a map change is a new description");
    for _ in 0..100 {
        p.step();
    }
    let [a, b] = [model_xy(&p, "rider"), model_xy(&p, "resident")];
    assert!((a[0] - b[0]).hypot(a[1] - b[1]) > 0.4, "{a:?} {b:?}");
}

#[test]
fn a_robot_collides_only_with_the_walls_of_its_map() {
    // the elevator's door is open on taylor-1 and closed on taylor-elevator
    let mut p = building();
    p.move_model("rider", Pose2::new(29.8, 9.7, std::f64::consts::PI)).unwrap();
    assert_eq!(p.set_map("rider", "taylor-elevator", Some("taylor-1")), Ok(true));
    let id = p.model_body_ids("rider")[0];
    p.command(BodyCommand { body: id, local_vx_mps: 1.0, local_vy_mps: 0.0, omega_radps: 0.0 });
    for _ in 0..400 {
        p.step();
    }
    assert!(model_xy(&p, "rider")[0] > 28.8, "the closed door holds it: {:?}", model_xy(&p, "rider"));

    p.set_map("rider", "taylor-1", None).unwrap();
    for _ in 0..400 {
        p.step();
    }
    assert!(model_xy(&p, "rider")[0] < 28.0, "out through the open door: {:?}", model_xy(&p, "rider"));
}

#[test]
fn a_map_change_from_a_map_the_robot_has_left_does_nothing() {
    let mut p = building();
    assert_eq!(p.set_map("rider", "taylor-2", Some("taylor-elevator")), Ok(false));
    assert_eq!(p.description().model("rider").unwrap().map, "taylor-1");
    assert_eq!(p.set_map("rider", "attic", None), Err(super::PhysicsError::NoMap("attic".into())));
    assert_eq!(p.set_map("nobody", "taylor-2", None), Err(super::PhysicsError::NoModel("nobody".into())));
}

#[test]
fn a_reset_puts_robots_back_on_their_first_map() {
    let mut p = building();
    p.set_map("rider", "taylor-2", None).unwrap();
    p.reset(super::ResetScope { state: true, spawned: false }).unwrap();
    let description = p.description();
    let rider = description.model("rider").unwrap();
    assert_eq!(rider.map, "taylor-1");
    assert_eq!(rider.layer_mask, description.map_mask("taylor-1"));
}

/// A robot driving at 1 m/s along +x from (2, y) in a 10 m ArMap room with
/// an invisible box (an obstacle no sensor sees) across y 7.75..8.75 m, a
/// pass-through box (seen, not an obstacle) across y 5.5..6.5 m and a
/// movable box across y 3.5..4.5 m, all at x 5..5.5 m: where the robot and
/// the movable box are after 5 s.
fn drive_through_armap_boxes(y: f64) -> (f64, f64) {
    let dir =
        std::env::temp_dir().join(format!("flotilla-armap-physics-{}-{}", std::process::id(), (y * 100.0) as u32));
    std::fs::create_dir_all(&dir).unwrap();
    let map = "2D-Map\n\
        MapInfo: SectorType Name=InvisibleBox Sim.Obstacle=yes Sim.LaserReflect=0 Sim.SonarReflect=no\n\
        MapInfo: SectorType Name=Ghost Sim.Obstacle=no Sim.LaserReflect=1 Sim.SonarReflect=yes\n\
        MapInfo: SectorType Name=Sim.BoxObstacle\n\
        Cairn: Sim.BoxObstacle 0 0 0 \"\" ICON \"\" 5000 3500 5500 4500\n\
        Cairn: InvisibleBox 0 0 0 \"\" ICON \"\" 5000 7750 5500 8750\n\
        Cairn: Ghost 0 0 0 \"\" ICON \"\" 5000 5500 5500 6500\n\
        LINES\n0 0 10000 0\n10000 0 10000 10000\n10000 10000 0 10000\n0 10000 0 0\n";
    std::fs::write(dir.join("room.map"), map).unwrap();
    let robot = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/tests/room/robot.model.yaml");
    let world = format!(
        "properties: {{}}\nlayers:\n  - {{name: room, map: room.map}}\nmodels:\n  - {{name: r, pose: [2, {y}, 0], model: {}}}\n",
        robot.display()
    );
    std::fs::write(dir.join("world.yaml"), world).unwrap();
    let spec = load_world(&dir.join("world.yaml"));
    let _ = std::fs::remove_dir_all(&dir);
    let mut p = Physics::new(&spec.unwrap()).unwrap();
    let id = p.model_body_ids("r")[0];
    p.command(BodyCommand { body: id, local_vx_mps: 1.0, local_vy_mps: 0.0, omega_radps: 0.0 });
    for _ in 0..1000 {
        p.step();
    }
    let movable = p.model_names().find(|n| n.starts_with("room_box_")).unwrap().to_string();
    (model_xy(&p, "r")[0], model_xy(&p, &movable)[0])
}

#[test]
fn an_armap_box_stops_robots_only_if_it_is_an_obstacle() {
    let (stopped, _) = drive_through_armap_boxes(8.25);
    assert!((stopped - 4.8).abs() < 0.02, "the invisible box stops the 0.2 m robot at x = 4.8 m: {stopped}");
    let (passed, _) = drive_through_armap_boxes(6.0);
    assert!(passed > 6.9, "the pass-through box lets it by: {passed}");
    let (pusher, pushed) = drive_through_armap_boxes(4.0);
    assert!(pushed > 5.5 && pusher > 5.0, "the movable box is pushed from x = 5.25 m: box {pushed}, robot {pusher}");
}

/// A robot that drove lands where it is placed, not as far past it as it
/// drove: `move` (and a map transition's new location, `set-map --pose`)
/// used to set the model's frame, each body keeping its offset from it *as
/// it was after driving*, so a transition to (1, 1) put a robot that had
/// driven 2.62 m east at (3.62, 1). They now place the first body, as
/// Flatland's MoveModel does.
#[test]
fn a_robot_that_drove_lands_exactly_where_it_is_placed() {
    let spec = load_world(&fixture("laser_tests/range_test/world.yaml")).unwrap();
    let mut p = Physics::new(&spec).unwrap();
    let id = p.model_body_ids("robot1")[0];
    let drive = |p: &mut Physics| {
        assert!(p.command(BodyCommand { body: id, local_vx_mps: 0.5, local_vy_mps: 0.0, omega_radps: 0.2 }));
        for _ in 0..200 {
            p.step();
        }
        p.command(BodyCommand { body: id, local_vx_mps: 0.0, local_vy_mps: 0.0, omega_radps: 0.0 });
    };
    let at = |p: &Physics| state(p).bodies.iter().find(|b| b.id == id).unwrap().pose;
    let close =
        |a: Pose2, b: Pose2| (a.x_m - b.x_m).hypot(a.y_m - b.y_m) < 1e-9 && (a.theta_rad - b.theta_rad).abs() < 1e-9;
    for target in [Pose2::new(1.0, 1.0, 0.0), Pose2::new(2.0, 3.0, 1.0), Pose2::new(4.0, 2.0, -0.5)] {
        drive(&mut p);
        p.place_model("robot1", target).unwrap();
        assert!(close(at(&p), target), "placed at {target:?}, landed at {:?}", at(&p));
    }
}

#[test]
fn a_tweened_body_goes_exactly_where_it_is_commanded_through_walls_and_pushes_a_robot_away() {
    // The walker (a Tween's body, radius 0.3 m) at (3, 5) and a robot
    // (radius 0.2 m) just ahead of it at (3.8, 5), in the 10 m room.
    let mut p = Physics::new(&load_world(&configs("tween/world.yaml")).unwrap()).unwrap();
    let mut robot = load_world(&configs("room/world.yaml")).unwrap().models.remove(0);
    robot.pose = Pose2::new(3.8, 5.0, 0.0);
    robot.bodies[0].pose = robot.pose;
    p.add_model(robot).unwrap();
    let walker = p.model_body_ids("walker")[0];
    // 1 m/s along +x for 1 s: a tween that commands "to the next pose in one step".
    assert!(p.command(BodyCommand { body: walker, local_vx_mps: 1.0, local_vy_mps: 0.0, omega_radps: 0.0 }));
    for _ in 0..200 {
        p.step();
    }
    let [x, y] = model_xy(&p, "walker");
    assert!((x - 4.0).abs() < 1e-9 && (y - 5.0).abs() < 1e-9, "the walker goes where it is sent: ({x}, {y})");
    let [robot_x, _] = model_xy(&p, "robot");
    assert!(robot_x >= 4.0 + 0.3 + 0.2 - 0.01, "the robot it met is pushed ahead of it: {robot_x}");

    // Back through the room's wall at x = 0, turning as it goes.
    p.command(BodyCommand { body: walker, local_vx_mps: -5.0, local_vy_mps: 0.0, omega_radps: 0.5 });
    for _ in 0..200 {
        p.step();
    }
    let (pose, _) = p.model_state("walker").unwrap();
    assert!((pose.theta_rad - 0.5).abs() < 1e-9, "{pose:?}");
    assert!(pose.x_m < -0.5, "no wall stops it: {pose:?}");
}

#[test]
fn a_placed_body_held_at_rest_stays_exactly_where_it_stopped() {
    let mut p = Physics::new(&load_world(&configs("tween/world.yaml")).unwrap()).unwrap();
    let walker = p.model_body_ids("walker")[0];
    let go = BodyCommand { body: walker, local_vx_mps: 1.0, local_vy_mps: 0.0, omega_radps: 0.3 };
    assert!(p.command(go));
    for _ in 0..100 {
        p.step();
    }
    let (stopped, _) = p.model_state("walker").unwrap();
    // A zero command is taken (the door plugin's last word when it comes to
    // rest) and the body is left alone from then on.
    assert!(p.command(BodyCommand { local_vx_mps: 0.0, omega_radps: 0.0, ..go }));
    assert!(p.commands.is_empty(), "nothing held");
    for _ in 0..100 {
        p.step();
    }
    let (pose, twist) = p.model_state("walker").unwrap();
    assert_eq!(pose, stopped, "not a bit further");
    assert!(twist.vx_mps.hypot(twist.vy_mps) < 1e-9 && twist.omega_radps == 0.0, "{twist:?}");
}
