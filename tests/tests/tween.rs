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
    // moving state on (the drive joins after the world's first steps).
    let x_at = |t: f64| track.iter().min_by(|a, b| (a.0 - t).abs().total_cmp(&(b.0 - t).abs())).unwrap().1;
    let far = track.iter().map(|p| p.1).fold(f64::MIN, f64::max);
    assert!((far - 5.0).abs() < 0.02, "the far end, 2 m along: {far}");
    let (t_far, _) = *track.iter().find(|p| (p.1 - far).abs() < 1e-9).unwrap();
    let back = x_at(t_far + 1.0);
    assert!((back - 3.0).abs() < 0.03, "1 s after the far end it is back at the start: {back} at {}", t_far + 1.0);
    let halfway = x_at(t_far + 0.5);
    assert!((halfway - 4.0).abs() < 0.03, "and halfway half a second after: {halfway}");
}
