//! What ARCOS does with motion commands, in sim time: velocity setpoints
//! (VEL, RVEL, LATVEL, VEL2), a distance to travel (MOVE) and a heading to
//! reach (HEAD, DHEAD), each limited by the maximum velocities (SETV,
//! SETRV) and reached through the accelerations (SETA, SETRA, LATACCEL).
//! The result is the `cmd_vel` the robot's drive gets, so the drive's own
//! limits and actuator dynamics apply after these.
//!
//! MOVE and HEAD slow down as the remaining distance or angle shrinks
//! (v = √(2·a·d), capped at the maximum), so they stop on target as a
//! Pioneer's position servo does instead of overshooting; within 5 mm or
//! 1° they are done and the setpoint is zero.

use crate::replies::{wrap_angle, Limits};

/// Within this distance a MOVE is done, mm.
const MOVE_DONE_MM: f64 = 5.0;
/// Within this angle a HEAD is done, degrees.
const HEAD_DONE_DEG: f64 = 1.0;

/// What the translation follows.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Translation {
    /// A velocity, mm/s.
    Velocity(f64),
    /// Travel `distance` mm along the heading from `from` (x, y in mm).
    Move { from: [f64; 2], heading: f64, distance: f64 },
}

/// What the rotation follows.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Rotation {
    /// A velocity, deg/s.
    Velocity(f64),
    /// An odometric heading, degrees.
    Heading(f64),
}

/// One robot's motion state.
#[derive(Debug, Clone)]
pub struct Motion {
    /// The limits in force (SETV, SETA, …).
    pub limits: Limits,
    /// Top accelerations, for ESTOP: mm/s², deg/s², mm/s².
    tops: [f64; 3],
    translation: Translation,
    rotation: Rotation,
    lateral: f64,
    /// The velocities commanded so far, mm/s, deg/s, mm/s.
    commanded: [f64; 3],
    enabled: bool,
    emergency: bool,
}

/// The pose motion is measured against: odometric x, y (mm) and heading
/// (degrees), as the client sees it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct OdometricPose {
    /// mm.
    pub x: f64,
    /// mm.
    pub y: f64,
    /// Degrees.
    pub th: f64,
}

impl Motion {
    /// At rest with `limits`; `tops` are the top accelerations (mm/s²,
    /// deg/s², mm/s²) an emergency stop decelerates at.
    pub fn new(limits: Limits, tops: [f64; 3]) -> Motion {
        Motion {
            limits,
            tops,
            translation: Translation::Velocity(0.0),
            rotation: Rotation::Velocity(0.0),
            lateral: 0.0,
            commanded: [0.0; 3],
            enabled: false,
            emergency: false,
        }
    }

    /// Whether the motors are enabled.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// ENABLE: disabled motors stop the robot at once and forget setpoints.
    pub fn enable(&mut self, on: bool) {
        self.enabled = on;
        if !on {
            self.stop_now();
        }
    }

    fn stop_now(&mut self) {
        self.translation = Translation::Velocity(0.0);
        self.rotation = Rotation::Velocity(0.0);
        self.lateral = 0.0;
        self.commanded = [0.0; 3];
    }

    /// VEL, mm/s.
    pub fn velocity(&mut self, mm_s: f64) {
        self.emergency = false;
        self.translation = Translation::Velocity(mm_s);
    }

    /// RVEL / ROTATE, deg/s.
    pub fn rotational_velocity(&mut self, deg_s: f64) {
        self.emergency = false;
        self.rotation = Rotation::Velocity(deg_s);
    }

    /// LATVEL, mm/s.
    pub fn lateral_velocity(&mut self, mm_s: f64) {
        self.emergency = false;
        self.lateral = mm_s;
    }

    /// MOVE `distance` mm from `pose`.
    pub fn move_by(&mut self, distance: f64, pose: OdometricPose) {
        self.emergency = false;
        self.translation = Translation::Move { from: [pose.x, pose.y], heading: pose.th, distance };
    }

    /// HEAD: turn to an absolute odometric heading, degrees.
    pub fn head(&mut self, heading: f64) {
        self.emergency = false;
        self.rotation = Rotation::Heading(heading);
    }

    /// DHEAD: turn by `delta` degrees from `pose`'s heading.
    pub fn delta_head(&mut self, delta: f64, pose: OdometricPose) {
        self.head(pose.th + delta);
    }

    /// STOP: every setpoint to zero, decelerating as configured.
    pub fn stop(&mut self) {
        self.translation = Translation::Velocity(0.0);
        self.rotation = Rotation::Velocity(0.0);
        self.lateral = 0.0;
    }

    /// ESTOP: stop with the top decelerations; later motion commands
    /// clear it.
    pub fn emergency_stop(&mut self) {
        self.stop();
        self.emergency = true;
    }

    /// Advances by `dt` s from `pose` and returns the velocities to command:
    /// mm/s, deg/s, lateral mm/s.
    pub fn step(&mut self, dt: f64, pose: OdometricPose) -> [f64; 3] {
        if !self.enabled {
            self.commanded = [0.0; 3];
            return self.commanded;
        }
        let l = self.limits;
        let v_target = match self.translation {
            Translation::Velocity(v) => v.clamp(-l.trans_vel_max, l.trans_vel_max),
            Translation::Move { from, heading, distance } => {
                let (s, c) = heading.to_radians().sin_cos();
                let travelled = (pose.x - from[0]) * c + (pose.y - from[1]) * s;
                let remaining = distance - travelled;
                if remaining.abs() < MOVE_DONE_MM {
                    self.translation = Translation::Velocity(0.0);
                    0.0
                } else {
                    remaining.signum() * (2.0 * l.trans_decel.max(1.0) * remaining.abs()).sqrt().min(l.trans_vel_max)
                }
            }
        };
        let w_target = match self.rotation {
            Rotation::Velocity(w) => w.clamp(-l.rot_vel_max, l.rot_vel_max),
            Rotation::Heading(target) => {
                let error = wrap_angle((target - pose.th).to_radians()).to_degrees();
                if error.abs() < HEAD_DONE_DEG {
                    0.0
                } else {
                    error.signum() * (2.0 * l.rot_decel.max(1.0) * error.abs()).sqrt().min(l.rot_vel_max)
                }
            }
        };
        let lat_target = self.lateral.clamp(-l.lat_vel_max, l.lat_vel_max);
        let [tops_trans, tops_rot, tops_lat] = self.tops;
        let decel = |configured: f64, top: f64| if self.emergency { top.max(configured) } else { configured };
        let rates = [
            (l.trans_accel, decel(l.trans_decel, tops_trans)),
            (l.rot_accel, decel(l.rot_decel, tops_rot)),
            (l.lat_accel, decel(l.lat_decel, tops_lat)),
        ];
        for ((current, target), (accel, decel)) in
            self.commanded.iter_mut().zip([v_target, w_target, lat_target]).zip(rates)
        {
            *current = ramp(*current, target, accel, decel, dt);
        }
        self.commanded
    }
}

/// `current` moved toward `target` by at most `accel`·dt when speeding up
/// and `decel`·dt when slowing down (a rate of 0: at once).
fn ramp(current: f64, target: f64, accel: f64, decel: f64, dt: f64) -> f64 {
    let speeding_up = target.abs() > current.abs() && (current == 0.0 || target.signum() == current.signum());
    let rate = if speeding_up { accel } else { decel };
    if rate <= 0.0 {
        return target;
    }
    let max_change = rate * dt;
    current + (target - current).clamp(-max_change, max_change)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits {
            trans_vel_max: 500.0,
            rot_vel_max: 100.0,
            trans_accel: 300.0,
            trans_decel: 600.0,
            rot_accel: 100.0,
            rot_decel: 100.0,
            lat_vel_max: 0.0,
            lat_accel: 0.0,
            lat_decel: 0.0,
        }
    }

    fn motion() -> Motion {
        let mut m = Motion::new(limits(), [2000.0, 720.0, 0.0]);
        m.enable(true);
        m
    }

    #[test]
    fn velocity_ramps_at_seta_and_is_capped_at_setv() {
        let mut m = motion();
        m.velocity(800.0);
        let v = m.step(0.5, OdometricPose::default())[0];
        assert!((v - 150.0).abs() < 1e-9, "300 mm/s² for 0.5 s: {v}");
        for _ in 0..10 {
            m.step(0.5, OdometricPose::default());
        }
        assert_eq!(m.step(0.5, OdometricPose::default())[0], 500.0, "SETV caps VEL");
        m.velocity(0.0);
        assert_eq!(m.step(0.5, OdometricPose::default())[0], 200.0, "600 mm/s² decel");
    }

    #[test]
    fn disabled_motors_do_not_move() {
        let mut m = Motion::new(limits(), [2000.0, 720.0, 0.0]);
        m.velocity(300.0);
        assert_eq!(m.step(1.0, OdometricPose::default()), [0.0; 3]);
    }

    #[test]
    fn move_drives_the_distance_and_stops_on_target() {
        let mut m = motion();
        let mut pose = OdometricPose { x: 100.0, y: 0.0, th: 90.0 };
        m.move_by(1000.0, pose);
        let dt = 0.01;
        let mut peak: f64 = 0.0;
        for _ in 0..2000 {
            let [v, _, _] = m.step(dt, pose);
            peak = peak.max(v);
            pose.y += v * dt; // heading 90°: along +y
        }
        assert!((pose.y - 1000.0).abs() < MOVE_DONE_MM + 1.0, "stopped at {} mm", pose.y);
        assert_eq!(pose.x, 100.0);
        assert_eq!(peak, 500.0, "at SETV in between");
        assert_eq!(m.step(dt, pose)[0], 0.0, "done");
    }

    #[test]
    fn head_turns_the_short_way_to_the_heading() {
        let mut m = motion();
        let mut pose = OdometricPose { x: 0.0, y: 0.0, th: 170.0 };
        m.head(-170.0); // 20° counter-clockwise through 180°
        let dt = 0.01;
        let first = m.step(dt, pose)[1];
        assert!(first > 0.0, "counter-clockwise, got {first}");
        for _ in 0..1000 {
            let [_, w, _] = m.step(dt, pose);
            pose.th += w * dt;
        }
        let error = wrap_angle((pose.th + 170.0).to_radians()).to_degrees();
        assert!(error.abs() < HEAD_DONE_DEG + 0.5, "ended {error}° off");
    }

    #[test]
    fn emergency_stop_decelerates_at_the_top_rate() {
        let mut m = motion();
        m.velocity(500.0);
        for _ in 0..100 {
            m.step(0.1, OdometricPose::default());
        }
        m.emergency_stop();
        assert_eq!(m.step(0.1, OdometricPose::default())[0], 300.0, "2000 mm/s² top, not 600");
    }
}
