//! Batteries (`Battery`, kept by `flotilla-drive`): the charge falls by
//! what the configured figures say for the distance the robot actually
//! drove and the time it took, rises on the dock, and a robot whose battery
//! runs empty stops however it is commanded. Checked in the world's own
//! states and the published `sensor_msgs/BatteryState`.

mod common;

use std::time::Duration;

use common::Sim;
use flotilla_messages::geometry_msgs::Twist;
use flotilla_messages::sensor_msgs::BatteryState;
use flotilla_wire::geometry::Pose2;
use flotilla_wire::world_to_nodes::WorldState;

const T: Duration = Duration::from_secs(30);

// configs/tests/battery/robot.model.yaml
const PER_METRE_AH: f64 = 0.001;
const PER_RADIAN_AH: f64 = 0.0005;
const IDLE_A: f64 = 0.36;
const CHARGE_A: f64 = 3.6;

fn forward(v_mps: f64) -> Twist {
    let mut twist = Twist::default();
    twist.linear.x = v_mps;
    twist
}

fn secs(stamp: &flotilla_messages::builtin_interfaces::Time) -> f64 {
    f64::from(stamp.sec) + f64::from(stamp.nanosec) * 1e-9
}

/// A battery's figures: Ah per metre, Ah per radian, idle A.
type Figures = (f64, f64, f64);
const R1: Figures = (PER_METRE_AH, PER_RADIAN_AH, IDLE_A);
// configs/tests/battery/weak.model.yaml
const WEAK: Figures = (0.0001, 0.00028, 0.36);

/// What a battery's figures say it lost between two times: the metres and
/// radians of the body's path in the world's states between them, and the
/// time.
fn predicted_drain_ah((per_metre, per_radian, idle): Figures, states: &[(f64, Pose2)], from_s: f64, to_s: f64) -> f64 {
    let path: Vec<&(f64, Pose2)> = states.iter().filter(|(t, _)| *t >= from_s - 1e-9 && *t <= to_s + 1e-9).collect();
    let (mut metres, mut radians) = (0.0, 0.0);
    for w in path.windows(2) {
        let (a, b) = (w[0].1, w[1].1);
        metres += (b.x_m - a.x_m).hypot(b.y_m - a.y_m);
        radians += flotilla_wire::geometry::wrap_angle(b.theta_rad - a.theta_rad).abs();
    }
    per_metre * metres + per_radian * radians + idle * (to_s - from_s) / 3600.0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_charge_follows_the_distance_driven_refills_on_the_dock_and_an_empty_robot_stops() {
    let world = common::config("tests/battery/world.yaml");
    // In lockstep, this test a participant: at 4 times real time a loaded
    // host's test fell a sim second and more behind the world, and its
    // commands, sent as it read the states, took effect that much late.
    let lockstep = ["--clock", "lockstep", "--start-paused"];
    let sim = Sim::start("battery", &world, &["flotilla-drive"], &lockstep).await;
    let description = flotilla_node_kit::client::wait_for_description(&sim.session, &sim.keys, T).await.unwrap();
    let body_of = |model: &str| description.models.iter().find(|m| m.name == model).unwrap().bodies[0].id;
    let (r1, weak) = (body_of("r1"), body_of("weak"));
    let mut states = sim.subscribe_states().await;
    let mut r1_battery = sim.subscribe::<BatteryState>("/r1/battery_state").await;
    let mut weak_battery = sim.subscribe::<BatteryState>("/weak/battery_state").await;
    common::wait_for_participants(&sim.session, &sim.keys, 1, sim.logs()).await;
    let me =
        flotilla_node_kit::lockstep::LockstepReporter::join(&sim.session, &sim.keys, "battery-test").await.unwrap();
    common::wait_for_participants(&sim.session, &sim.keys, 2, sim.logs()).await;
    let (resumed, output) = sim.cli(&["resume"]);
    assert!(resumed, "{output}");

    // By sim time: r1 stands on the dock until 2 s, drives out at 0.5 m/s
    // until 6 s, back until 10 s, and stands again; weak drives all along.
    let plan = |t: f64| {
        if t < 2.0 {
            0.0
        } else if t < 6.0 {
            0.5
        } else if t < 10.0 {
            -0.5
        } else {
            0.0
        }
    };
    let mut track: Vec<(f64, Pose2)> = Vec::new();
    let mut weak_track: Vec<(f64, Pose2)> = Vec::new();
    let mut last_plan = None;
    let pose = |s: &WorldState, id| s.bodies.iter().find(|b| b.id == id).unwrap().pose;
    loop {
        let state = states.next(T).await;
        let t = state.time.as_secs_f64();
        track.push((t, pose(&state, r1)));
        weak_track.push((t, pose(&state, weak)));
        if last_plan != Some(plan(t)) || state.step.is_multiple_of(20) {
            last_plan = Some(plan(t));
            sim.publish("/r1/cmd_vel", &forward(plan(t))).await;
            sim.publish("/weak/cmd_vel", &forward(0.5)).await;
        }
        me.done(state.step, true).await;
        if t >= 13.0 {
            break;
        }
    }
    let mut readings = Vec::new();
    while let Some(b) = r1_battery.try_next() {
        readings.push(b);
    }
    assert!(readings.len() > 100, "10 Hz over 13 s: {}", readings.len());
    let at = |t: f64| {
        readings
            .iter()
            .min_by(|a, b| (secs(&a.header.stamp) - t).abs().total_cmp(&(secs(&b.header.stamp) - t).abs()))
            .unwrap()
    };

    // Out on the floor, from 3.5 s to 5.5 s: the drop is the figures' for
    // the path the world's states show (1 m at 0.5 m/s) and the 2 s it took.
    let (a, b) = (at(3.5), at(5.5));
    assert_eq!(a.power_supply_status, BatteryState::POWER_SUPPLY_STATUS_DISCHARGING);
    let (ta, tb) = (secs(&a.header.stamp), secs(&b.header.stamp));
    let predicted = predicted_drain_ah(R1, &track, ta, tb);
    let drained = f64::from(a.charge) - f64::from(b.charge);
    assert!((drained - predicted).abs() < 1e-6, "drained {drained} Ah, predicted {predicted} Ah");
    assert!((predicted - (0.001 + 2.0 * IDLE_A / 3600.0)).abs() < 5e-5, "about 1 m: {predicted} Ah");
    assert!((f64::from(b.percentage) - f64::from(b.charge) / 0.05).abs() < 1e-6);
    assert!(b.voltage < a.voltage, "the voltage falls with the charge: {} V then {} V", a.voltage, b.voltage);

    // Back on the dock from 11 s: charging at 3.6 A less the 0.36 A it draws.
    let dock = Pose2::new(2.0, 5.0, 0.0);
    let home = track.last().unwrap().1;
    assert!((home.x_m - dock.x_m).hypot(home.y_m - dock.y_m) < 0.3, "back on the dock: {home:?}");
    let (c, d) = (at(11.5), at(12.5));
    assert_eq!(d.power_supply_status, BatteryState::POWER_SUPPLY_STATUS_CHARGING);
    let gained = f64::from(d.charge) - f64::from(c.charge);
    let expected = (CHARGE_A - IDLE_A) * (secs(&d.header.stamp) - secs(&c.header.stamp)) / 3600.0;
    assert!((gained - expected).abs() < 1e-6, "gained {gained} Ah, expected {expected} Ah");
    assert!(d.current > 3.0, "charging current, A: {}", d.current);

    // weak: 0.5 mAh at 0.15 mAh/s driving runs empty in about 3.3 s; the
    // first update (10 Hz) after its path says so finds it empty, and it
    // stands from then on though still commanded.
    let mut weak_readings = Vec::new();
    while let Some(b) = weak_battery.try_next() {
        weak_readings.push(b);
    }
    let emptied = weak_readings.iter().find(|b| b.percentage == 0.0).expect("weak's battery ran empty");
    let t_empty = secs(&emptied.header.stamp);
    // From its first reading the test saw: that charge, less the drain of
    // the path after it.
    let first = weak_readings.iter().find(|b| secs(&b.header.stamp) >= weak_track[0].0).unwrap();
    let (t0, c0) = (secs(&first.header.stamp), f64::from(first.charge));
    let drained_by = |t: f64| predicted_drain_ah(WEAK, &weak_track, t0, t);
    let predicted = weak_track.iter().map(|(t, _)| *t).find(|&t| t >= t0 && drained_by(t) >= c0).unwrap();
    assert!(
        t_empty >= predicted - 1e-9 && t_empty < predicted + 0.1 + 1e-9,
        "empty at {t_empty} s, predicted {predicted} s"
    );
    let stopped_at = |t: f64| weak_track.iter().find(|(s, _)| *s >= t).unwrap().1;
    let (p, q) = (stopped_at(t_empty + 0.1), stopped_at(12.9));
    assert!(p.x_m > 3.0, "it drove before: {p:?}");
    assert!((q.x_m - p.x_m).abs() < 1e-6, "and stands since, though commanded: {p:?} then {q:?}");
}

/// A drive killed while `r1` charges on the dock, and started again, takes
/// up the battery where the world kept it (at most a second old), not at
/// its `initial_charge` (0.025 Ah).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_drive_takes_up_each_battery_where_it_was() {
    const INITIAL_AH: f64 = 0.05 * 0.5;
    let world = common::config("tests/battery/world.yaml");
    let mut sim = Sim::start("battery-restart", &world, &["flotilla-drive"], &["--rate", "4"]).await;
    let mut r1_battery = sim.subscribe::<BatteryState>("/r1/battery_state").await;
    let before = r1_battery.until(T, |b| secs(&b.header.stamp) >= 8.0).await;
    let charged = f64::from(before.charge) - INITIAL_AH;
    assert!(charged > 0.003, "charged on the dock: {charged} Ah");

    sim.kill("flotilla-drive");
    sim.spawn_node("flotilla-drive-again", "flotilla-drive", &[]);
    sim.wait_for_log("flotilla-drive-again", "serving", T).await;
    r1_battery.clear();
    let after = r1_battery.next(T).await;
    let kept = f64::from(after.charge);
    // At most a second of charging ((3.6 A − 0.36 A) / 3600 s/h) behind.
    assert!(kept > f64::from(before.charge) - 0.001, "{kept} Ah after a restart, {} Ah before", before.charge);
    assert!(kept > INITIAL_AH + 0.002, "not back at its initial charge: {kept} Ah");
}
