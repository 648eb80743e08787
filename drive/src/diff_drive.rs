//! Flatland's DiffDrive as a model: a commanded forward speed and yaw rate,
//! shaped by dynamics limits and zeroed when the command goes stale.

use flotilla_plugins::diff_drive::DiffDriveConfig;

use crate::commands::Commands;
use crate::limits::DynamicsLimits;

/// One differential-drive robot's command state.
#[derive(Debug, Clone)]
pub struct DiffDrive {
    linear: DynamicsLimits,
    angular: DynamicsLimits,
    /// (forward speed m/s, yaw rate rad/s) commands.
    commands: Commands,
    velocity_mps: f64,
    yaw_rate_radps: f64,
    /// The last step, with the velocity before it, so that a command arriving
    /// before the world takes that step can be folded into it.
    last_step: Option<LastStep>,
}

#[derive(Debug, Clone, Copy)]
struct LastStep {
    now_ns: u64,
    dt_s: f64,
    velocity_before_mps: f64,
    yaw_rate_before_radps: f64,
}

/// The velocity a drive asks the world to hold its body at.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DriveOutput {
    /// Forward speed of the body origin, m/s.
    pub forward_mps: f64,
    /// Yaw rate, rad/s.
    pub yaw_rate_radps: f64,
}

impl DiffDrive {
    /// A drive at rest.
    pub fn new(config: &DiffDriveConfig) -> DiffDrive {
        DiffDrive {
            linear: DynamicsLimits::new(config.linear_dynamics),
            angular: DynamicsLimits::new(config.angular_dynamics),
            commands: Commands::new(config.cmd_vel_timeout_s),
            velocity_mps: 0.0,
            yaw_rate_radps: 0.0,
            last_step: None,
        }
    }

    /// A `cmd_vel` arrived. It takes effect at the first step whose sim time
    /// is after `apply_after_ns`: the time of the latest state for a plain
    /// Twist, or the header stamp of a TwistStamped — which is what makes
    /// lockstep runs independent of message timing. Non-finite commands are
    /// refused (returns false) and change nothing.
    pub fn command(&mut self, forward_mps: f64, yaw_rate_radps: f64, apply_after_ns: u64) -> bool {
        self.commands.push((forward_mps, yaw_rate_radps), apply_after_ns)
    }

    /// Whether a command asks for more than the velocity limits allow (it is
    /// then clamped to them).
    pub fn beyond_limits(&self, forward_mps: f64, yaw_rate_radps: f64) -> bool {
        self.linear.exceeds(forward_mps) || self.angular.exceeds(yaw_rate_radps)
    }

    /// Whether the last command is older than the timeout at `now_ns`.
    pub fn is_stale(&self, now_ns: u64) -> bool {
        self.commands.is_stale(now_ns)
    }

    /// Advances by one step of `dt_s` at sim time `now_ns`: the velocity to
    /// hold during the next step.
    pub fn step(&mut self, now_ns: u64, dt_s: f64) -> DriveOutput {
        self.commands.take_due(now_ns);
        self.last_step = Some(LastStep {
            now_ns,
            dt_s,
            velocity_before_mps: self.velocity_mps,
            yaw_rate_before_radps: self.yaw_rate_radps,
        });
        self.apply_limits(now_ns, dt_s)
    }

    /// After the step at `now_ns`: for how many of the next steps (of
    /// `step_ns`) the output stays the same if no command arrives. None
    /// while the velocity still moves toward the target under the dynamics
    /// limits; once there, until a queued command takes effect or the one
    /// in force goes stale. The same output from the same velocity and
    /// target is what `apply_limits` computes, bit for bit.
    pub fn steady_steps(&self, now_ns: u64, step_ns: u64) -> u64 {
        let dt_s = step_ns as f64 * 1e-9;
        let (target_v, target_w) = self.commands.target(now_ns).unwrap_or((0.0, 0.0));
        let at_target = self.linear.step(self.velocity_mps, target_v, dt_s) == self.velocity_mps
            && self.angular.step(self.yaw_rate_radps, target_w, dt_s) == self.yaw_rate_radps;
        if at_target {
            self.commands.steps_unchanged(now_ns, step_ns)
        } else {
            0
        }
    }

    /// After the step at `now_ns`: the outputs of the next `steps` steps
    /// (of `step_ns`) if no command arrives, each handed to `changed` with
    /// how many steps ahead it is (1: the next) when it differs from the
    /// output before it. They come from [`DiffDrive::step`] run on a copy,
    /// so they are bit for bit what those steps will give: a ramp under
    /// the dynamics limits, a queued command taking effect, the command in
    /// force going stale. (For a drive steady beyond `steps`, which
    /// [`DiffDrive::steady_steps`] tells without a copy, it gives nothing.)
    pub fn plan(&self, now_ns: u64, step_ns: u64, steps: u64, mut changed: impl FnMut(u64, DriveOutput)) {
        let dt_s = step_ns as f64 * 1e-9;
        let mut ahead = self.clone();
        let mut before = self.output();
        for k in 1..=steps {
            let out = ahead.step(now_ns + k * step_ns, dt_s);
            if out != before {
                changed(k, out);
                before = out;
            }
        }
    }

    /// The velocity the last step asked for.
    pub fn output(&self) -> DriveOutput {
        DriveOutput { forward_mps: self.velocity_mps, yaw_rate_radps: self.yaw_rate_radps }
    }

    /// A plain command that takes effect at once, outside lockstep: it
    /// replaces the target of the last step, which is computed again from the
    /// velocity before it — as if the command had arrived just before that
    /// step. Returns the new output of that step for the world to apply at its
    /// next step, or `None` (the command is queued as by [`DiffDrive::command`])
    /// before the first step or for a non-finite command.
    pub fn command_now(&mut self, forward_mps: f64, yaw_rate_radps: f64) -> Option<DriveOutput> {
        if !(forward_mps.is_finite() && yaw_rate_radps.is_finite()) {
            return None;
        }
        let Some(last) = self.last_step else {
            self.command(forward_mps, yaw_rate_radps, 0);
            return None;
        };
        self.commands.set((forward_mps, yaw_rate_radps), last.now_ns);
        self.velocity_mps = last.velocity_before_mps;
        self.yaw_rate_radps = last.yaw_rate_before_radps;
        Some(self.apply_limits(last.now_ns, last.dt_s))
    }

    /// The velocity for the next step toward the target (zero once stale),
    /// within the dynamics limits.
    fn apply_limits(&mut self, now_ns: u64, dt_s: f64) -> DriveOutput {
        let (target_v, target_w) = self.commands.target(now_ns).unwrap_or((0.0, 0.0));
        self.velocity_mps = self.linear.step(self.velocity_mps, target_v, dt_s);
        self.yaw_rate_radps = self.angular.step(self.yaw_rate_radps, target_w, dt_s);
        DriveOutput { forward_mps: self.velocity_mps, yaw_rate_radps: self.yaw_rate_radps }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_plugins::dynamics_limits::DynamicsLimitsConfig;
    use flotilla_plugins::PluginContext;
    use std::path::Path;

    fn config(accel: f64, timeout_s: f64) -> DiffDriveConfig {
        parse(&format!(
            "{{body: base, cmd_vel_timeout: {timeout_s}, linear_dynamics: {{acceleration_limit: {accel}}}}}"
        ))
    }

    /// A DiffDrive entry of a model whose one body is `base`.
    fn parse(yaml: &str) -> DiffDriveConfig {
        let ctx = PluginContext::single_body(Path::new("m.yaml"), "m", "base", &[]);
        DiffDriveConfig::parse(&serde_yaml::from_str(yaml).unwrap(), "d", &ctx).unwrap()
    }

    const STEP_NS: u64 = 5_000_000;

    /// 1 m/s² to 0.2 m/s (40 steps), stale after 0.5 s, and a command
    /// stamped for step 300 queued from the start.
    fn ramping_drive() -> DiffDrive {
        let mut drive = DiffDrive::new(&config(1.0, 0.5));
        drive.command(0.2, 0.1, 0);
        drive.command(-0.1, 0.0, 300 * STEP_NS);
        drive
    }

    #[test]
    fn a_drive_keeps_its_output_for_exactly_the_steps_it_promises() {
        let mut drive = ramping_drive();
        let dt_s = STEP_NS as f64 * 1e-9;
        let (mut outputs, mut promises) = (Vec::new(), Vec::new());
        for k in 0..400 {
            outputs.push(drive.step(k * STEP_NS, dt_s));
            promises.push(drive.steady_steps(k * STEP_NS, STEP_NS));
        }
        for (k, &promised) in promises.iter().enumerate() {
            let last = (k as u64).saturating_add(promised).min(399) as usize;
            assert!(outputs[k..=last].iter().all(|o| *o == outputs[k]), "step {k} promised {promised}");
            if last < 399 {
                assert_ne!(outputs[last + 1], outputs[k], "step {k}: the promise ends where the output changes");
            }
        }
        assert_eq!(promises[10], 0, "still accelerating");
        // The command in force since step 1 (5 ms) goes stale after 505 ms:
        // at step 102.
        assert_eq!(promises[60], 101 - 60);
        // Stopped, stale: until the queued command takes effect at 301.
        assert_eq!(promises[150], 300 - 150);
        assert_eq!(promises[200], 100);
        // Then it ramps to -0.1 m/s, which goes stale 0.5 s after step
        // 301: at step 402.
        assert_eq!(promises[305], 0);
        assert_eq!(promises[399], 2);
        // Without a timeout, a drive at its target stays there for good.
        let mut forever = DiffDrive::new(&config(0.0, 0.0));
        forever.command(0.3, 0.0, 0);
        forever.step(STEP_NS, dt_s);
        assert_eq!(forever.steady_steps(STEP_NS, STEP_NS), u64::MAX);
    }

    #[test]
    fn a_plan_is_what_the_next_steps_give_bit_for_bit() {
        // The same ramp, staleness and queued command, planned 10 steps
        // ahead from every step.
        let mut drive = ramping_drive();
        let dt_s = STEP_NS as f64 * 1e-9;
        let outputs: Vec<DriveOutput> = {
            let mut copy = drive.clone();
            (0..420).map(|k| copy.step(k * STEP_NS, dt_s)).collect()
        };
        let mut planned_changes = 0;
        for k in 0..400 {
            assert_eq!(drive.step(k * STEP_NS, dt_s), outputs[k as usize]);
            // The plan replays the outputs that follow, by its changes.
            let mut replayed = vec![drive.output(); 10];
            drive.plan(k * STEP_NS, STEP_NS, 10, |ahead, out| {
                planned_changes += 1;
                replayed[ahead as usize - 1..].fill(out);
            });
            let next = &outputs[k as usize + 1..=k as usize + 10];
            assert_eq!(replayed, next, "the plan made after step {k}");
        }
        assert!(planned_changes > 40 * 2, "the ramps and the stops were planned: {planned_changes}");
    }

    #[test]
    fn acceleration_limit_ramps_the_speed() {
        let mut drive = DiffDrive::new(&config(1.0, 0.0));
        drive.command(1.0, 0.0, 0);
        let speeds: Vec<f64> = (1..=200).map(|k| drive.step(k * STEP_NS, 0.005).forward_mps).collect();
        assert!((speeds[0] - 0.005).abs() < 1e-12);
        assert!((speeds[99] - 0.5).abs() < 1e-9, "half a second at 1 m/s²");
        assert!((speeds[199] - 1.0).abs() < 1e-9);
        assert_eq!(DynamicsLimitsConfig::default().velocity_limit, 0.0);
    }

    #[test]
    fn a_stale_command_stops_the_robot() {
        let mut drive = DiffDrive::new(&config(0.0, 0.5));
        drive.command(0.8, 0.3, 0);
        // in force from the step at 5 ms
        assert_eq!(drive.step(STEP_NS, 0.005), DriveOutput { forward_mps: 0.8, yaw_rate_radps: 0.3 });
        assert_eq!(drive.step(101 * STEP_NS, 0.005), DriveOutput { forward_mps: 0.8, yaw_rate_radps: 0.3 });
        assert_eq!(drive.step(102 * STEP_NS, 0.005), DriveOutput::default(), "0.505 s after the command");
        drive.command(0.2, 0.0, 102 * STEP_NS);
        assert_eq!(drive.step(103 * STEP_NS, 0.005).forward_mps, 0.2);
    }

    #[test]
    fn a_stamped_command_waits_for_its_step() {
        let mut drive = DiffDrive::new(&config(0.0, 0.0));
        // stamped at t = 10 ms: not in force at 10 ms, in force at 15 ms
        drive.command(0.5, 0.0, 2 * STEP_NS);
        assert_eq!(drive.step(STEP_NS, 0.005).forward_mps, 0.0);
        assert_eq!(drive.step(2 * STEP_NS, 0.005).forward_mps, 0.0);
        assert_eq!(drive.step(3 * STEP_NS, 0.005).forward_mps, 0.5);
    }

    #[test]
    fn commands_beyond_the_limits_are_told_apart_and_clamped() {
        let mut drive = DiffDrive::new(&parse(
            "{body: base, linear_dynamics: {velocity_limit: 1.0}, angular_dynamics: {velocity_limit: 2.0}}",
        ));
        assert!(!drive.beyond_limits(1.0, -2.0));
        assert!(drive.beyond_limits(1.5, 0.0) && drive.beyond_limits(0.0, -2.5));
        drive.command(3.0, -9.0, 0);
        assert_eq!(
            drive.step(STEP_NS, 0.005),
            DriveOutput { forward_mps: 1.0, yaw_rate_radps: -2.0 },
            "clamped, no NaN"
        );
    }

    #[test]
    fn nan_commands_are_refused() {
        let mut drive = DiffDrive::new(&config(0.0, 0.0));
        assert!(!drive.command(f64::NAN, 0.0, 0));
        assert_eq!(drive.step(STEP_NS, 0.005), DriveOutput::default());
    }

    #[test]
    fn a_command_now_redoes_the_last_step_from_the_velocity_before_it() {
        let mut drive = DiffDrive::new(&config(1.0, 0.0));
        assert_eq!(drive.command_now(0.5, 0.0), None, "no step yet: queued");
        assert!((drive.step(STEP_NS, 0.005).forward_mps - 0.005).abs() < 1e-12);
        let before = drive.step(2 * STEP_NS, 0.005).forward_mps;
        assert!((before - 0.010).abs() < 1e-12);
        // Stop: the step at 10 ms is redone from the 5 mm/s before it, which
        // any deceleration limit of at least 1 m/s² brings to rest in 5 ms.
        let redone = drive.command_now(0.0, 0.0).unwrap();
        assert!(redone.forward_mps.abs() < 1e-12, "{redone:?}");
        assert!(drive.step(3 * STEP_NS, 0.005).forward_mps.abs() < 1e-12);
        assert_eq!(drive.command_now(f64::INFINITY, 0.0), None);
    }

    #[test]
    fn a_command_now_without_limits_is_in_force_at_once() {
        let mut drive = DiffDrive::new(&config(0.0, 0.0));
        drive.step(STEP_NS, 0.005);
        assert_eq!(drive.command_now(0.8, -0.1), Some(DriveOutput { forward_mps: 0.8, yaw_rate_radps: -0.1 }));
        assert_eq!(drive.step(2 * STEP_NS, 0.005), DriveOutput { forward_mps: 0.8, yaw_rate_radps: -0.1 });
    }
}
