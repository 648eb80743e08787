//! Flatland's Tween as a model: a body moved from its start pose by `delta`
//! along an easing curve, in `duration` sim seconds one way, repeating as
//! its mode says. Flatland sets the body's pose at every step; here the
//! drive commands the velocity that takes the body from where it is to the
//! next pose in one step, and the world, which makes a tweened body
//! kinematic and position-based (`PluginConfig::PLACES_BODY`), moves it by
//! exactly that: it lands on each pose of the curve, through walls, and
//! pushes the robots it meets on the way.

use flotilla_plugins::tween::{TweenConfig, TweenMode};
use flotilla_wire::drive_to_world::BodyCommand;
use flotilla_wire::geometry::{wrap_angle, Pose2};
use flotilla_wire::world_to_nodes::BodyId;

/// Below this progress a yoyo turns forward again (Flatland's 0.001).
const YOYO_START: f64 = 0.001;

/// The share of a tween body's distance from its curve corrected at each
/// answer. With answers landing `d` steps late, the distance shrinks for
/// `d` up to 5 (25 ms at Flatland's 5 ms step) and only creeps beyond; with
/// answers on time it shrinks by a quarter a step.
const CORRECTION: f64 = 0.25;

/// One tweened body.
#[derive(Debug, Clone)]
pub struct Tween {
    config: TweenConfig,
    start: Pose2,
    /// Time along the way, 0 (start) to 1 (end).
    progress: f64,
    forward: bool,
    triggered: bool,
    /// The curve's pose at the last state answered (the start before any).
    curve: Pose2,
    /// The world state answered last, and the pose it aimed at.
    answered: Option<(u64, Pose2)>,
}

impl Tween {
    /// A tween of a body starting at `start`.
    pub fn new(config: TweenConfig, start: Pose2) -> Tween {
        Tween { config, start, progress: 0.0, forward: true, triggered: false, curve: start, answered: None }
    }

    /// The trigger topic said `on`.
    pub fn trigger(&mut self, on: bool) {
        self.triggered = on;
    }

    /// The pose at `progress`.
    pub fn pose_at(&self, progress: f64) -> Pose2 {
        let k = ease(&self.config.easing, progress);
        let d = self.config.delta;
        Pose2::new(self.start.x_m + k * d.x_m, self.start.y_m + k * d.y_m, self.start.theta_rad + k * d.theta_rad)
    }

    /// Time along the way now, 0 to 1.
    pub fn progress(&self) -> f64 {
        self.progress
    }

    /// Answers world state `state` (its step number) with the body at
    /// `now`: the velocity for the next step of `dt_s` that follows the
    /// curve's own motion and corrects `CORRECTION` (a quarter) of the body's
    /// distance from it. A body on its curve (a tween served from the
    /// first step, in lockstep) lands on every pose of it.
    ///
    /// Outside lockstep an answer may land a few steps late, and the world
    /// holds it until the next one lands: an answer that corrected all of
    /// the distance would be taken several times over (a tween served late
    /// leapt a metre past its curve).
    ///
    /// The tween's progress is always that of one that advanced at every
    /// step from t = 0, as Flatland's does: steps it did not see (it was
    /// served only from a later step on, or its node restarted) are counted
    /// first, and the body joins the curve over the next steps; a state
    /// answered already is answered the same again; a step before the last
    /// answered (the world went back to an earlier time) starts the tween
    /// over.
    pub fn step(&mut self, body: BodyId, now: Pose2, state: u64, dt_s: f64) -> BodyCommand {
        let aim = match self.answered {
            Some((answered, aim)) if answered == state => aim,
            answered => {
                let missed = match answered {
                    Some((answered, _)) if answered < state => state - answered - 1,
                    Some(_) => {
                        *self = Tween::new(self.config.clone(), self.start);
                        state
                    }
                    None => state,
                };
                for _ in 0..missed {
                    self.curve = self.advance(dt_s);
                }
                let (here, next) = (self.curve, self.advance(dt_s));
                self.curve = next;
                // where the body goes following the curve from where it
                // is, moved the share CORRECTION back towards it
                let keep = 1.0 - CORRECTION;
                Pose2::new(
                    next.x_m + keep * (now.x_m - here.x_m),
                    next.y_m + keep * (now.y_m - here.y_m),
                    next.theta_rad + keep * wrap_angle(now.theta_rad - here.theta_rad),
                )
            }
        };
        self.answered = Some((state, aim));
        BodyCommand::towards(body, now, aim, dt_s)
    }

    /// Advances the progress by one step of `dt_s`, turning or starting
    /// over as the mode says; the pose at the new progress.
    fn advance(&mut self, dt_s: f64) -> Pose2 {
        if self.config.mode == TweenMode::Trigger {
            self.forward = self.triggered;
        }
        let advance = dt_s / self.config.duration_s;
        self.progress = (self.progress + if self.forward { advance } else { -advance }).clamp(0.0, 1.0);
        let target = self.pose_at(self.progress);
        match self.config.mode {
            TweenMode::Yoyo if self.progress >= 1.0 => self.forward = false,
            TweenMode::Yoyo if self.progress <= YOYO_START => self.forward = true,
            TweenMode::Loop if self.progress >= 1.0 => self.progress = 0.0,
            _ => {}
        }
        target
    }
}

/// The eased fraction of the way at time fraction `t` (Robert Penner's
/// equations, as tweeny and easings.net give them).
pub fn ease(easing: &str, t: f64) -> f64 {
    use std::f64::consts::PI;
    let t = t.clamp(0.0, 1.0);
    let in_out = |ease_in: &dyn Fn(f64) -> f64| {
        if t < 0.5 {
            ease_in(2.0 * t) / 2.0
        } else {
            1.0 - ease_in(2.0 - 2.0 * t) / 2.0
        }
    };
    let power = |n: i32| move |t: f64| t.powi(n);
    let exponential = |t: f64| if t == 0.0 { 0.0 } else { 2f64.powf(10.0 * (t - 1.0)) };
    let circular = |t: f64| 1.0 - (1.0 - t * t).max(0.0).sqrt();
    let back = |t: f64| {
        let s = 1.70158;
        t * t * ((s + 1.0) * t - s)
    };
    let elastic = |t: f64| {
        if t == 0.0 || t == 1.0 {
            t
        } else {
            -(2f64.powf(10.0 * (t - 1.0))) * ((t - 1.075) * (2.0 * PI) / 0.3).sin()
        }
    };
    let bounce_out = |t: f64| {
        let (n, d) = (7.5625, 2.75);
        if t < 1.0 / d {
            n * t * t
        } else if t < 2.0 / d {
            let t = t - 1.5 / d;
            n * t * t + 0.75
        } else if t < 2.5 / d {
            let t = t - 2.25 / d;
            n * t * t + 0.9375
        } else {
            let t = t - 2.625 / d;
            n * t * t + 0.984375
        }
    };
    let bounce = |t: f64| 1.0 - bounce_out(1.0 - t);
    let curve: &dyn Fn(f64) -> f64 =
        match easing.trim_end_matches("InOut").trim_end_matches("In").trim_end_matches("Out") {
            "quadratic" => &power(2),
            "cubic" => &power(3),
            "quartic" => &power(4),
            "quintic" => &power(5),
            "exponential" => &exponential,
            "circular" => &circular,
            "back" => &back,
            "elastic" => &elastic,
            "bounce" => &bounce,
            _ => return t, // linear
        };
    if easing.ends_with("InOut") {
        in_out(curve)
    } else if easing.ends_with("Out") {
        1.0 - curve(1.0 - t)
    } else {
        curve(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_plugins::tween::EASINGS;
    use flotilla_plugins::PluginContext;
    use std::path::Path;

    fn tween(yaml: &str) -> Tween {
        let ctx = PluginContext::single_body(Path::new("walker.model.yaml"), "walker", "base", &[]);
        let entry = serde_yaml::from_str(&format!("{{body: base, {yaml}}}")).unwrap();
        Tween::new(TweenConfig::parse(&entry, "tween", &ctx).unwrap(), Pose2::new(1.0, 1.0, 0.0))
    }

    /// Steps `n` times following the commands exactly; the poses.
    fn follow(t: &mut Tween, n: usize, dt: f64) -> Vec<Pose2> {
        let mut pose = Pose2::new(1.0, 1.0, 0.0);
        (0..n)
            .map(|k| {
                let c = t.step(1, pose, k as u64, dt);
                let (s, co) = pose.theta_rad.sin_cos();
                pose = Pose2::new(
                    pose.x_m + (co * c.local_vx_mps - s * c.local_vy_mps) * dt,
                    pose.y_m + (s * c.local_vx_mps + co * c.local_vy_mps) * dt,
                    pose.theta_rad + c.omega_radps * dt,
                );
                pose
            })
            .collect()
    }

    #[test]
    fn every_easing_starts_at_0_and_ends_at_1() {
        for easing in EASINGS {
            assert!(ease(easing, 0.0).abs() < 1e-9, "{easing} at 0: {}", ease(easing, 0.0));
            assert!((ease(easing, 1.0) - 1.0).abs() < 1e-9, "{easing} at 1: {}", ease(easing, 1.0));
        }
        assert!((ease("quadraticInOut", 0.25) - 0.125).abs() < 1e-12);
        assert!((ease("cubicOut", 0.5) - 0.875).abs() < 1e-12);
        assert!(ease("backIn", 0.2) < 0.0, "back overshoots backwards first");
    }

    #[test]
    fn yoyo_goes_to_the_end_and_back_in_its_duration() {
        let mut t = tween("delta: [2, 0, 1], duration: 1.0");
        let poses = follow(&mut t, 400, 0.005);
        let end = poses[199];
        assert!((end.x_m - 3.0).abs() < 1e-9 && (end.theta_rad - 1.0).abs() < 1e-9, "at 1 s: {end:?}");
        let back = poses[399];
        assert!((back.x_m - 1.0).abs() < 1e-9, "back at 2 s: {back:?}");
    }

    #[test]
    fn once_stops_at_the_end_and_loop_starts_again() {
        let mut once = tween("delta: [1, 0, 0], mode: once, duration: 0.5");
        let poses = follow(&mut once, 300, 0.005);
        assert!((poses[299].x_m - 2.0).abs() < 1e-9);
        let mut looping = tween("delta: [1, 0, 0], mode: loop, duration: 0.5");
        let poses = follow(&mut looping, 101, 0.005);
        assert!((poses[99].x_m - 2.0).abs() < 1e-9 && (poses[100].x_m - 1.0).abs() < 0.02, "{:?}", &poses[99..]);
    }

    /// The poses Flatland's `tween_test.cpp` expects, 0.5 s steps: each
    /// command taken exactly (the world integrates it over the step).
    fn flatland_steps(yaml: &str, start: Pose2, steps: usize) -> Vec<[f64; 3]> {
        let ctx = PluginContext::single_body(Path::new("tween.model.yaml"), "tween", "base", &[]);
        let entry = serde_yaml::from_str(&format!("{{body: base, easing: linear, {yaml}}}")).unwrap();
        let mut t = Tween::new(TweenConfig::parse(&entry, "tween", &ctx).unwrap(), start);
        let mut pose = start;
        (0..steps)
            .map(|k| {
                let c = t.step(1, pose, k as u64, 0.5);
                let (s, co) = pose.theta_rad.sin_cos();
                pose = Pose2::new(
                    pose.x_m + (co * c.local_vx_mps - s * c.local_vy_mps) * 0.5,
                    pose.y_m + (s * c.local_vx_mps + co * c.local_vy_mps) * 0.5,
                    pose.theta_rad + c.omega_radps * 0.5,
                );
                [pose.x_m, pose.y_m, pose.theta_rad]
            })
            .collect()
    }

    fn assert_poses(got: &[[f64; 3]], want: &[[f64; 3]]) {
        for (g, w) in got.iter().zip(want) {
            assert!(g.iter().zip(w).all(|(a, b)| (a - b).abs() < 1e-5), "{got:?}\n  expected {want:?}");
        }
    }

    #[test]
    fn the_sequences_of_flatland_s_own_tween_tests() {
        // once: from (2, 1, 0) by [1, 3, 2] in 1 s
        let once = flatland_steps("mode: once, delta: [1, 3, 2], duration: 1", Pose2::new(2.0, 1.0, 0.0), 3);
        assert_poses(&once, &[[2.5, 2.5, 1.0], [3.0, 4.0, 2.0], [3.0, 4.0, 2.0]]);
        // yoyo: by [10, 10, 1] in 1 s
        let yoyo = flatland_steps("mode: yoyo, delta: [10, 10, 1], duration: 1", Pose2::default(), 5);
        assert_poses(&yoyo, &[[5.0, 5.0, 0.5], [10.0, 10.0, 1.0], [5.0, 5.0, 0.5], [0.0, 0.0, 0.0], [5.0, 5.0, 0.5]]);
        // loop: by [10, 10, 1] in 2 s, starting over after the end
        let looping = flatland_steps("mode: loop, delta: [10, 10, 1], duration: 2", Pose2::default(), 6);
        assert_poses(
            &looping,
            &[
                [2.5, 2.5, 0.25],
                [5.0, 5.0, 0.5],
                [7.5, 7.5, 0.75],
                [10.0, 10.0, 1.0],
                [2.5, 2.5, 0.25],
                [5.0, 5.0, 0.5],
            ],
        );
    }

    #[test]
    fn trigger_moves_towards_the_end_only_while_triggered() {
        let mut t = tween("delta: [1, 0, 0], mode: trigger, trigger_topic: go, duration: 1.0");
        assert!((follow(&mut t, 50, 0.005)[49].x_m - 1.0).abs() < 1e-9, "not triggered: stays");
        t.trigger(true);
        t.step(1, Pose2::new(1.0, 1.0, 0.0), 50, 0.005);
        assert!(t.progress() > 0.0);
    }

    /// Follows the commands of `t` exactly from `start`, served from state
    /// `from` on (the body held still before): the poses.
    fn follow_from(t: &mut Tween, start: Pose2, from: u64, steps: u64, dt: f64) -> Vec<[f64; 3]> {
        let mut pose = start;
        (0..steps)
            .map(|k| {
                if k >= from {
                    let c = t.step(1, pose, k, dt);
                    let (s, co) = pose.theta_rad.sin_cos();
                    pose = Pose2::new(
                        pose.x_m + (co * c.local_vx_mps - s * c.local_vy_mps) * dt,
                        pose.y_m + (s * c.local_vx_mps + co * c.local_vy_mps) * dt,
                        pose.theta_rad + c.omega_radps * dt,
                    );
                }
                [pose.x_m, pose.y_m, pose.theta_rad]
            })
            .collect()
    }

    #[test]
    fn a_tween_served_late_joins_the_curve_of_one_served_from_the_start() {
        let yaml = "mode: yoyo, delta: [2, 0, 1], duration: 1";
        let from_start = follow_from(&mut tween(yaml), Pose2::new(1.0, 1.0, 0.0), 0, 400, 0.005);
        // Served from 0.5 s on: the body still at its start, 1 m behind.
        let mut late = tween(yaml);
        let joined = follow_from(&mut late, Pose2::new(1.0, 1.0, 0.0), 100, 400, 0.005);
        let off = |k: usize| joined[k].iter().zip(&from_start[k]).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        assert!(off(101) < 0.76, "a quarter of the way at the first answer: {}", off(101));
        assert!(off(200) < 1e-9, "on the curve half a second later: {}", off(200));
        assert!(off(399) < 1e-9, "and on it after: {}", off(399));
        // The same state again (a world waiting on the barrier resends it): the same aim.
        let body = Pose2::new(joined[399][0], joined[399][1], joined[399][2]);
        let again = late.step(1, body, 399, 0.005);
        assert_eq!(late.step(1, body, 399, 0.005), again);
        // A world gone back to t = 0 (reset): the tween starts over, from its start.
        let over = late.step(1, Pose2::new(1.0, 1.0, 0.0), 0, 0.005);
        assert!((over.local_vx_mps - 2.0).abs() < 1e-9 && (over.omega_radps - 1.0).abs() < 1e-9, "{over:?}");
    }

    /// A world that holds each answer until the next lands, with answers
    /// landing `late` steps after the next step: the walker's x at each
    /// step, served from step `from` on.
    fn held_answers(late: usize, from: u64, steps: u64) -> Vec<f64> {
        let mut t = tween("delta: [2, 0, 0], duration: 1.0");
        let dt = 0.005;
        let mut pose = Pose2::new(1.0, 1.0, 0.0);
        let mut in_flight = std::collections::VecDeque::new();
        let mut held = 0.0;
        let mut track = Vec::new();
        for k in 0..steps {
            if k >= from {
                in_flight.push_back(t.step(1, pose, k, dt).local_vx_mps);
            }
            if in_flight.len() > late {
                held = in_flight.pop_front().unwrap();
            }
            pose.x_m += held * dt;
            track.push(pose.x_m);
        }
        track
    }

    #[test]
    fn with_answers_landing_late_a_tween_served_late_joins_its_curve_without_leaping_past_it() {
        // Served from 0.5 s on (the body still at x = 1, the curve at 2),
        // answers landing two steps late, over the way out and back. (Answers
        // correcting all of the distance leapt over half a metre past it.)
        let track = held_answers(2, 100, 400);
        let far = track.iter().cloned().fold(f64::MIN, f64::max);
        assert!(far < 3.0 + 0.03, "the far end, 2 m along: {far}");
        // and by the way back it is on the curve (x = 1 at 2 s), within the
        // two steps' motion of the late answers
        assert!((track[399] - 1.0).abs() < 0.02 + 1e-9, "back at the start: {}", track[399]);
        // Answers on time land on the curve.
        let on_time = held_answers(0, 0, 200);
        assert!((on_time[199] - 3.0).abs() < 1e-9, "{}", on_time[199]);
    }
}
