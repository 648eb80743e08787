//! A door as a model: where its leaf is between closed and open, where it
//! is going, and the velocity that takes the placed leaf there in one step.
//! Free of Zenoh; [`crate::server`] feeds it states and requests.

use flotilla_messages::rmf_door_msgs::DoorMode;
use flotilla_plugins::door::{DoorConfig, DoorMotion};
use flotilla_wire::drive_to_world::BodyCommand;
use flotilla_wire::geometry::{wrap_angle, Pose2};
use flotilla_wire::world_to_nodes::BodyId;

/// How much faster than its even pace a leaf may move to catch up. A
/// command lands the leaf on its next pose in one step; when the world
/// applies it for longer (a loaded host in realtime, the node a few states
/// behind) the leaf overshoots, and the next command, landing it back in
/// one step, would overshoot more: bounded, a late leaf arrives a little
/// late instead of being sent flying.
const CATCH_UP: f64 = 2.0;

/// How near its end pose a leaf at rest is, m and rad: rounding, not
/// motion.
const LANDED_M: f64 = 1e-9;
const LANDED_RAD: f64 = 1e-9;

/// One door.
#[derive(Debug, Clone)]
pub struct Door {
    config: DoorConfig,
    /// The leaf's pose when closed (its pose in the world file).
    closed: Pose2,
    /// How far open, 0 (closed) to 1 (open); `None` until the first state,
    /// which it is read from (a leaf not at its closed pose is part open).
    progress: Option<f64>,
    /// Whether it was last asked to be open (`start_open` before any ask).
    asked_open: bool,
    /// Until when, sim ns, an automatic opening lasts.
    auto_until_ns: u64,
    /// The step of the last state answered.
    last_step: Option<u64>,
    /// Whether the last answer left the leaf where it was, at an end: it
    /// was a zero command, and stays one until the door is asked, a robot
    /// comes near or an automatic opening ends.
    resting: bool,
}

impl Door {
    /// A door whose leaf is at `closed` when closed.
    pub fn new(config: DoorConfig, closed: Pose2) -> Door {
        let asked_open = config.start_open;
        Door { config, closed, progress: None, asked_open, auto_until_ns: 0, last_step: None, resting: false }
    }

    /// Its configuration.
    pub fn config(&self) -> &DoorConfig {
        &self.config
    }

    /// The leaf's pose when closed.
    pub fn closed(&self) -> Pose2 {
        self.closed
    }

    /// A request: open (true) or close.
    pub fn ask(&mut self, open: bool) {
        self.asked_open = open;
    }

    /// A robot is within `auto_open` of the leaf at sim time `now_ns`: an
    /// automatic door stays open until `hold_open` after the last such time.
    pub fn robot_near(&mut self, now_ns: u64) {
        if self.config.auto_open_m > 0.0 {
            self.auto_until_ns = now_ns + (self.config.hold_open_s * 1e9).round() as u64;
        }
    }

    /// Its first state finds the leaf open or part open (the building's
    /// node restarted, or the door's model was moved while open): a robot
    /// may be passing, so it opens fully and stays open until asked to
    /// close (an automatic door: for its hold time, as for a robot near).
    fn found_open(&mut self, now_ns: u64) {
        if self.config.auto_open_m > 0.0 {
            self.robot_near(now_ns);
        } else {
            self.asked_open = true;
        }
    }

    /// Whether it is going to (or staying) open at `now_ns`.
    pub fn wants_open(&self, now_ns: u64) -> bool {
        self.asked_open || now_ns < self.auto_until_ns
    }

    /// Closed, moving or open (`rmf_door_msgs/DoorMode`); unknown before
    /// the first state.
    pub fn mode(&self) -> u32 {
        match self.progress {
            None => DoorMode::MODE_UNKNOWN,
            Some(p) if p <= 0.0 => DoorMode::MODE_CLOSED,
            Some(p) if p >= 1.0 => DoorMode::MODE_OPEN,
            Some(_) => DoorMode::MODE_MOVING,
        }
    }

    /// For how many states after the one at `now_ns` its answer is sure
    /// to be the zero command of a door at rest, unless it is asked or a
    /// robot comes near: 0 while it moves, else until an automatic opening
    /// ends (`u64::MAX`: none).
    pub fn resting_steps(&self, now_ns: u64, step_ns: u64) -> u64 {
        if !self.resting {
            0
        } else if self.auto_until_ns > now_ns {
            // The state at which it no longer wants open is the first at or
            // after `auto_until_ns`.
            (self.auto_until_ns - now_ns).div_ceil(step_ns.max(1)) - 1
        } else {
            u64::MAX
        }
    }

    /// The leaf's pose at `progress` (0 closed, 1 open).
    pub fn pose_at(&self, progress: f64) -> Pose2 {
        let c = self.closed;
        match self.config.motion {
            DoorMotion::Sliding { travel_m } => {
                let (sin, cos) = c.theta_rad.sin_cos();
                let along_m = travel_m * progress;
                Pose2::new(c.x_m + cos * along_m, c.y_m + sin * along_m, c.theta_rad)
            }
            DoorMotion::Swinging { swing_rad } => Pose2::new(c.x_m, c.y_m, c.theta_rad + swing_rad * progress),
        }
    }

    /// How far open a leaf at `pose` is, 0 to 1.
    fn progress_of(&self, pose: Pose2) -> f64 {
        let c = self.closed;
        let progress = match self.config.motion {
            DoorMotion::Sliding { travel_m } => {
                let (sin, cos) = c.theta_rad.sin_cos();
                (cos * (pose.x_m - c.x_m) + sin * (pose.y_m - c.y_m)) / travel_m
            }
            DoorMotion::Swinging { swing_rad } => wrap_angle(pose.theta_rad - c.theta_rad) / swing_rad,
        };
        snapped(progress)
    }

    /// Answers world state `step` at sim time `now_ns`, the leaf at `now`:
    /// moves on by the steps of `dt_s` since the last state answered,
    /// towards open or closed, and commands the velocity that lands the
    /// leaf there at the next step.
    pub fn step(&mut self, body: BodyId, now: Pose2, step: u64, now_ns: u64, dt_s: f64) -> BodyCommand {
        let progress = match self.progress {
            Some(progress) => progress,
            None => {
                let found = self.progress_of(now);
                if found > 0.0 {
                    self.found_open(now_ns);
                }
                found
            }
        };
        // A door open from the start is open at the first step.
        let start_open = self.progress.is_none() && self.config.start_open && step == 0;
        let steps = match self.last_step {
            Some(last) if step > last => (step - last) as f64,
            _ => 1.0,
        };
        self.last_step = Some(step);
        let pace = steps * dt_s / self.config.open_time_s;
        let next = if start_open {
            1.0
        } else if self.wants_open(now_ns) {
            snapped(progress + pace)
        } else {
            snapped(progress - pace)
        };
        self.progress = Some(next);
        let target = self.pose_at(next);
        // At rest, exactly nothing: no correction of the leaf's rounding,
        // so that the answers a resting door promises are what it sends. A
        // leaf off its end by more (a command applied late, in realtime) is
        // brought back first.
        let landed = (target.x_m - now.x_m).hypot(target.y_m - now.y_m) < LANDED_M
            && wrap_angle(target.theta_rad - now.theta_rad).abs() < LANDED_RAD;
        self.resting = next == progress && (next == 0.0 || next == 1.0) && landed;
        if self.resting {
            return BodyCommand { body, local_vx_mps: 0.0, local_vy_mps: 0.0, omega_radps: 0.0 };
        }
        let command = BodyCommand::towards(body, now, target, dt_s);
        if start_open {
            command // open at once, as the world file says
        } else {
            self.within_pace(command)
        }
    }

    /// `command` slowed to at most [`CATCH_UP`] times the door's even pace.
    fn within_pace(&self, mut command: BodyCommand) -> BodyCommand {
        match self.config.motion {
            DoorMotion::Sliding { travel_m } => {
                let top_mps = CATCH_UP * travel_m.abs() / self.config.open_time_s;
                let speed_mps = command.local_vx_mps.hypot(command.local_vy_mps);
                if speed_mps > top_mps {
                    command.local_vx_mps *= top_mps / speed_mps;
                    command.local_vy_mps *= top_mps / speed_mps;
                }
            }
            DoorMotion::Swinging { swing_rad } => {
                let top_radps = CATCH_UP * swing_rad.abs() / self.config.open_time_s;
                command.omega_radps = command.omega_radps.clamp(-top_radps, top_radps);
            }
        }
        command
    }
}

/// A progress within 0 and 1, the ends reached within rounding (of a sum
/// of paces, or of a leaf's pose).
fn snapped(progress: f64) -> f64 {
    if progress < 1e-9 {
        0.0
    } else if progress > 1.0 - 1e-9 {
        1.0
    } else {
        progress
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::FRAC_PI_2;

    const DT_S: f64 = 0.01;
    const STEP_NS: u64 = 10_000_000;

    fn config(motion: DoorMotion) -> DoorConfig {
        DoorConfig {
            name: "door".into(),
            body: "leaf".into(),
            door_name: "d".into(),
            motion,
            open_time_s: 1.0,
            start_open: false,
            auto_open_m: 0.0,
            hold_open_s: 2.0,
            requests_topic: "/door_requests".into(),
            states_topic: "/door_states".into(),
            state_rate_hz: 1.0,
        }
    }

    /// Runs the door for `steps` steps from `step`, the leaf moving exactly
    /// as commanded (as the world places it); the leaf's pose after.
    fn run(door: &mut Door, leaf: &mut Pose2, from: u64, steps: u64) -> Pose2 {
        for step in from..from + steps {
            let c = door.step(1, *leaf, step, step * STEP_NS, DT_S);
            let (sin, cos) = leaf.theta_rad.sin_cos();
            leaf.x_m += (cos * c.local_vx_mps - sin * c.local_vy_mps) * DT_S;
            leaf.y_m += (sin * c.local_vx_mps + cos * c.local_vy_mps) * DT_S;
            leaf.theta_rad += c.omega_radps * DT_S;
        }
        *leaf
    }

    #[test]
    fn a_sliding_door_opens_along_its_leaf_in_open_time_and_closes_again() {
        // A leaf turned 90°: it slides along world +y.
        let closed = Pose2::new(2.0, 1.0, FRAC_PI_2);
        let mut door = Door::new(config(DoorMotion::Sliding { travel_m: 0.8 }), closed);
        let mut leaf = closed;
        run(&mut door, &mut leaf, 0, 10);
        assert_eq!(door.mode(), DoorMode::MODE_CLOSED, "nobody asked");
        door.ask(true);
        let half = run(&mut door, &mut leaf, 10, 50);
        assert_eq!(door.mode(), DoorMode::MODE_MOVING);
        assert!((half.y_m - 1.4).abs() < 1e-9 && (half.x_m - 2.0).abs() < 1e-9, "{half:?}");
        let open = run(&mut door, &mut leaf, 60, 50);
        assert_eq!(door.mode(), DoorMode::MODE_OPEN);
        assert!((open.y_m - 1.8).abs() < 1e-9, "{open:?}");
        run(&mut door, &mut leaf, 110, 20);
        assert!((leaf.y_m - 1.8).abs() < 1e-9, "stays open");
        door.ask(false);
        let shut = run(&mut door, &mut leaf, 130, 100);
        assert_eq!(door.mode(), DoorMode::MODE_CLOSED);
        assert!((shut.y_m - 1.0).abs() < 1e-9, "{shut:?}");
    }

    #[test]
    fn a_swinging_door_turns_about_its_hinge() {
        let closed = Pose2::new(0.0, 0.0, 0.0);
        let mut door = Door::new(config(DoorMotion::Swinging { swing_rad: -FRAC_PI_2 }), closed);
        let mut leaf = closed;
        door.ask(true);
        let open = run(&mut door, &mut leaf, 0, 100);
        assert_eq!(door.mode(), DoorMode::MODE_OPEN);
        assert_eq!((open.x_m, open.y_m), (0.0, 0.0), "the hinge stays");
        assert!((open.theta_rad + FRAC_PI_2).abs() < 1e-9, "{open:?}");
    }

    #[test]
    fn a_request_halfway_turns_the_leaf_back_from_where_it_is() {
        let closed = Pose2::new(0.0, 0.0, 0.0);
        let mut door = Door::new(config(DoorMotion::Sliding { travel_m: 1.0 }), closed);
        let mut leaf = closed;
        door.ask(true);
        run(&mut door, &mut leaf, 0, 30);
        door.ask(false);
        let back = run(&mut door, &mut leaf, 30, 10);
        assert!((back.x_m - 0.2).abs() < 1e-9, "{back:?}");
    }

    #[test]
    fn a_door_reads_how_far_open_it_is_from_its_leaf() {
        let closed = Pose2::new(0.0, 0.0, 0.0);
        let mut door = Door::new(config(DoorMotion::Sliding { travel_m: 1.0 }), closed);
        let mut leaf = Pose2::new(1.0, 0.0, 0.0);
        door.ask(true);
        run(&mut door, &mut leaf, 500, 1);
        assert_eq!(door.mode(), DoorMode::MODE_OPEN, "open already, not from closed again");
    }

    #[test]
    fn a_door_found_part_open_opens_and_stays_open_until_asked_to_close() {
        // Its node restarted while the leaf was 40 % open.
        let closed = Pose2::new(0.0, 0.0, 0.0);
        let mut door = Door::new(config(DoorMotion::Sliding { travel_m: 1.0 }), closed);
        let mut leaf = Pose2::new(0.4, 0.0, 0.0);
        run(&mut door, &mut leaf, 700, 60);
        assert_eq!(door.mode(), DoorMode::MODE_OPEN, "0.6 s to open the rest");
        assert!((leaf.x_m - 1.0).abs() < 1e-9, "{leaf:?}");
        run(&mut door, &mut leaf, 760, 500);
        assert_eq!(door.mode(), DoorMode::MODE_OPEN, "held open, nobody asked to close");
        door.ask(false);
        run(&mut door, &mut leaf, 1260, 100);
        assert_eq!(door.mode(), DoorMode::MODE_CLOSED);
        assert!(leaf.x_m.abs() < 1e-9, "{leaf:?}");
        // An automatic door found open closes after its hold time.
        let mut auto =
            Door::new(DoorConfig { auto_open_m: 1.0, ..config(DoorMotion::Sliding { travel_m: 1.0 }) }, closed);
        let mut leaf = Pose2::new(1.0, 0.0, 0.0);
        run(&mut auto, &mut leaf, 700, 200);
        assert_eq!(auto.mode(), DoorMode::MODE_OPEN, "within 2 s of the restart");
        run(&mut auto, &mut leaf, 900, 100);
        assert_eq!(auto.mode(), DoorMode::MODE_CLOSED, "2 s hold, 1 s to close");
    }

    #[test]
    fn an_automatic_door_opens_for_a_robot_and_closes_hold_open_after_it_left() {
        let closed = Pose2::new(0.0, 0.0, 0.0);
        let mut door =
            Door::new(DoorConfig { auto_open_m: 1.0, ..config(DoorMotion::Sliding { travel_m: 1.0 }) }, closed);
        let mut leaf = closed;
        door.robot_near(0);
        assert!(door.wants_open(0) && door.wants_open(1_999_999_999) && !door.wants_open(2_000_000_000));
        run(&mut door, &mut leaf, 0, 100);
        assert_eq!(door.mode(), DoorMode::MODE_OPEN);
        run(&mut door, &mut leaf, 100, 200);
        assert_eq!(door.mode(), DoorMode::MODE_CLOSED, "2 s after the robot, and 1 s to close");
        // A door without auto_open ignores robots.
        let mut manual = Door::new(config(DoorMotion::Sliding { travel_m: 1.0 }), closed);
        manual.robot_near(0);
        assert!(!manual.wants_open(0));
    }

    #[test]
    fn a_door_at_rest_commands_exactly_nothing_and_says_for_how_long() {
        let closed = Pose2::new(0.3, 0.0, 0.1);
        let mut door =
            Door::new(DoorConfig { auto_open_m: 1.0, ..config(DoorMotion::Sliding { travel_m: 1.0 }) }, closed);
        // A leaf off its pose by rounding is left there: no correction.
        let c = door.step(1, Pose2::new(0.3 + 1e-16, 0.0, 0.1), 0, 0, DT_S);
        assert_eq!((c.local_vx_mps, c.local_vy_mps, c.omega_radps), (0.0, 0.0, 0.0));
        assert_eq!(door.resting_steps(0, STEP_NS), u64::MAX);
        // Opened by a robot: not at rest while it moves.
        door.robot_near(0);
        let mut leaf = closed;
        run(&mut door, &mut leaf, 1, 10);
        assert_eq!(door.resting_steps(10 * STEP_NS, STEP_NS), 0);
        // Open at step 100 (1 s), answered at rest from step 101 until the
        // opening ends at 2 s: states 102..=199 are known after state 101.
        run(&mut door, &mut leaf, 11, 91);
        assert_eq!(door.mode(), DoorMode::MODE_OPEN);
        assert_eq!(door.resting_steps(101 * STEP_NS, STEP_NS), 98);
    }

    #[test]
    fn a_leaf_left_off_its_end_by_a_late_command_is_brought_back() {
        let closed = Pose2::new(0.0, 0.0, 0.0);
        let mut door = Door::new(config(DoorMotion::Sliding { travel_m: 1.0 }), closed);
        door.ask(true);
        let mut leaf = closed;
        run(&mut door, &mut leaf, 0, 100);
        // The world applied the last landing velocity one step too long.
        let overshot = Pose2::new(1.003, 0.0, 0.0);
        let c = door.step(1, overshot, 100, 100 * STEP_NS, DT_S);
        assert!((c.local_vx_mps * DT_S + 0.003).abs() < 1e-12, "back 3 mm in one step: {c:?}");
        assert_eq!(door.resting_steps(100 * STEP_NS, STEP_NS), 0, "not at rest until landed");
        let c = door.step(1, Pose2::new(1.0, 0.0, 0.0), 101, 101 * STEP_NS, DT_S);
        assert_eq!(c.local_vx_mps, 0.0);
        assert_eq!(door.resting_steps(101 * STEP_NS, STEP_NS), u64::MAX);
    }

    #[test]
    fn a_leaf_whose_commands_are_applied_late_is_never_sent_flying() {
        // The world applies each command for 3 steps instead of 1 (the node
        // answers every third state): the leaf overshoots its track by at
        // most the catch-up pace's 3 steps, and ends open.
        let closed = Pose2::new(0.0, 0.0, 0.0);
        let mut door = Door::new(config(DoorMotion::Sliding { travel_m: 1.0 }), closed);
        door.ask(true);
        let mut leaf = closed;
        let mut farthest: f64 = 0.0;
        for step in (0..300).step_by(3) {
            let c = door.step(1, leaf, step, step * STEP_NS, DT_S);
            leaf.x_m += c.local_vx_mps * 3.0 * DT_S;
            farthest = farthest.max((leaf.x_m - 0.5).abs() - 0.5);
        }
        assert!(farthest <= CATCH_UP * 3.0 * DT_S + 1e-9, "off its track by {farthest} m");
        assert!((leaf.x_m - 1.0).abs() <= CATCH_UP * 3.0 * DT_S, "ends open: {leaf:?}");
    }

    #[test]
    fn a_door_that_starts_open_is_open_at_the_first_step() {
        let closed = Pose2::new(0.0, 0.0, 0.0);
        let mut door =
            Door::new(DoorConfig { start_open: true, ..config(DoorMotion::Sliding { travel_m: 1.0 }) }, closed);
        let mut leaf = closed;
        assert_eq!(door.mode(), DoorMode::MODE_UNKNOWN);
        let open = run(&mut door, &mut leaf, 0, 1);
        assert_eq!((door.mode(), open.x_m), (DoorMode::MODE_OPEN, 1.0));
    }
}
