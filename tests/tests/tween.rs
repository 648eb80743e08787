//! Flatland's Tween: a walker paced by `flotilla-drive` along its path,
//! checked in the world's own states.

mod common;

use std::time::Duration;

use common::Sim;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_yoyo_walker_reaches_its_end_and_comes_back_on_time() {
    let world = common::config("tests/tween/world.yaml");
    let sim = Sim::start("tween", &world, &["flotilla-drive"], &[]).await;
    let mut states = sim.subscribe_states().await;
    // (sim time s, x m) of the walker, which starts at x = 3, over 2.5 s
    let mut track = Vec::new();
    loop {
        let state = states.next(Duration::from_secs(20)).await;
        let Some(body) = state.bodies.first() else { continue };
        let t = state.time.as_secs_f64();
        track.push((t, body.pose.x_m));
        if t > 2.5 {
            break;
        }
    }
    // Linear, 2 m in 1 s: where it should be at each time, from the first
    // moving state on (the drive joins after the world's first steps). In
    // real time the drive answers each state a little late, and the walker
    // holds its last velocity until the answer lands: 2 steps late (10 ms)
    // is 2 cm off the curve. Allowed: 25 ms of lateness, 5 cm at 2 m/s.
    // Lockstep, where the walker lands on every pose exactly, is checked
    // against Flatland's own test below.
    const LATE_M: f64 = 2.0 * 0.025;
    let x_at = |t: f64| track.iter().min_by(|a, b| (a.0 - t).abs().total_cmp(&(b.0 - t).abs())).unwrap().1;
    let far = track.iter().map(|p| p.1).fold(f64::MIN, f64::max);
    assert!((far - 5.0).abs() < LATE_M, "the far end, 2 m along: {far}; track {track:?}");
    let (t_far, _) = *track.iter().find(|p| (p.1 - far).abs() < 1e-9).unwrap();
    let back = x_at(t_far + 1.0);
    assert!((back - 3.0).abs() < LATE_M, "1 s after the far end it is back at the start: {back} at {}", t_far + 1.0);
    let halfway = x_at(t_far + 0.5);
    assert!((halfway - 4.0).abs() < LATE_M, "and halfway half a second after: {halfway}; track {track:?}");
}

/// The body's pose at each half second of Flatland's tween test `name`
/// (`configs/tests/tween/flatland/`), run in lockstep from t = 0 so that
/// every state is seen: (t s, x m, y m, θ rad) from 0.5 s to `until_s`.
async fn flatland_track(name: &str, until_s: f64) -> Vec<(f64, f64, f64, f64)> {
    let world = common::config(&format!("tests/tween/flatland/{name}.world.yaml"));
    let sim =
        Sim::start(&format!("tween-{name}"), &world, &["flotilla-drive"], &["--clock", "lockstep", "--start-paused"])
            .await;
    let mut states = sim.subscribe_states().await;
    common::wait_for_participants(&sim.session, &sim.keys, 1, sim.logs()).await;
    let (resumed, output) = sim.cli(&["resume"]);
    assert!(resumed, "{output}");
    let mut track = Vec::new();
    loop {
        let state = states.next(Duration::from_secs(20)).await;
        let t = state.time.as_secs_f64();
        if t == 0.0 {
            continue;
        }
        let pose = state.bodies[0].pose;
        track.push((t, pose.x_m, pose.y_m, pose.theta_rad));
        if t >= until_s {
            return track;
        }
    }
}

/// Asserts `track` against Flatland's expected poses, as its test does
/// (within 1e-5 m and rad, float precision).
fn assert_flatland(track: &[(f64, f64, f64, f64)], expected: &[(f64, [f64; 3])]) {
    for &(t, [x, y, theta]) in expected {
        let &(_, tx, ty, ttheta) =
            track.iter().find(|p| (p.0 - t).abs() < 1e-9).unwrap_or_else(|| panic!("no state at {t} s: {track:?}"));
        let close = (tx - x).abs() < 1e-5 && (ty - y).abs() < 1e-5 && (ttheta - theta).abs() < 1e-5;
        assert!(close, "at {t} s: ({tx}, {ty}, {ttheta}), Flatland's ({x}, {y}, {theta}); track {track:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flatland_s_once_tween_lands_on_each_pose_and_stays() {
    let track = flatland_track("once", 1.5).await;
    assert_flatland(&track, &[(0.5, [2.5, 2.5, 1.0]), (1.0, [3.0, 4.0, 2.0]), (1.5, [3.0, 4.0, 2.0])]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flatland_s_yoyo_tween_goes_through_the_walls_it_starts_in_and_back() {
    let track = flatland_track("yoyo", 2.5).await;
    let expected = [
        (0.5, [5.0, 5.0, 0.5]),
        (1.0, [10.0, 10.0, 1.0]),
        (1.5, [5.0, 5.0, 0.5]),
        (2.0, [0.0, 0.0, 0.0]),
        (2.5, [5.0, 5.0, 0.5]),
    ];
    assert_flatland(&track, &expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flatland_s_loop_tween_jumps_back_to_its_start_after_the_end() {
    let track = flatland_track("loop", 3.0).await;
    let expected = [
        (0.5, [2.5, 2.5, 0.25]),
        (1.5, [7.5, 7.5, 0.75]),
        (2.0, [10.0, 10.0, 1.0]),
        (2.5, [2.5, 2.5, 0.25]),
        (3.0, [5.0, 5.0, 0.5]),
    ];
    assert_flatland(&track, &expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_realtime_flotilla_run_starts_the_clock_once_the_tween_is_served() {
    // The walker paces 2 m in 1 s from x = 3, at 5 ms steps, in real time.
    // Had the clock started before flotilla-drive served the tween, the
    // walker would stand at x = 3 for the steps before it joined. (This
    // test's own subscription may come after the first states: it checks
    // those it sees.)
    let world = common::config("tests/tween/world.yaml");
    let run = common::Launched::start("tween-realtime", &world, &["--clock", "realtime"]).await;
    let mut states = run.subscribe_states().await;
    let mut seen = 0;
    loop {
        let state = states.next(Duration::from_secs(30)).await;
        let t = state.time.as_secs_f64();
        if t > 0.5 {
            break;
        }
        let x = state.bodies[0].pose.x_m;
        // Linear at 2 m/s up to the far end at 1 s; at constant speed a
        // command that comes a step late changes nothing.
        assert!((x - (3.0 + 2.0 * t)).abs() < 1e-6, "at {t} s the walker is at x = {x}\n{}", run.output());
        seen += 1;
    }
    assert!(seen > 0, "no state up to 0.5 s");
    assert!(run.output().contains("1 nodes joined; stepping (realtime)"), "{}", run.output());
    run.stop().await;
}
