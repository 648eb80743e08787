//! The `cmd_vel` commands of one drive: when each takes effect, and when the
//! last one goes stale. Shared by every drive model, whatever its two
//! numbers mean (speed and yaw rate, or speed and steering angle).

use std::collections::VecDeque;

/// A command's numbers: `linear.x` and `angular.z` of the Twist, or
/// `linear.x`, `linear.y` and `angular.z` for a drive that moves sideways.
pub trait Command: Copy + Default {
    /// Whether every number is finite (a NaN command is refused).
    fn is_finite(&self) -> bool;
}

impl Command for (f64, f64) {
    fn is_finite(&self) -> bool {
        self.0.is_finite() && self.1.is_finite()
    }
}

impl Command for [f64; 3] {
    fn is_finite(&self) -> bool {
        self.iter().all(|v| v.is_finite())
    }
}

/// Commands waiting to take effect, and the one in force.
#[derive(Debug, Clone)]
pub struct Commands<C = (f64, f64)> {
    timeout_ns: Option<u64>,
    /// The command in force.
    target: C,
    commanded_at_ns: Option<u64>,
    /// Commands not yet in force: (apply after this sim time, command).
    queued: VecDeque<(u64, C)>,
}

impl<C: Command> Commands<C> {
    /// Most commands waiting to take effect; older ones are dropped first.
    pub const MAX_QUEUED: usize = 64;

    /// No command yet (the target is zero); a command goes stale
    /// `timeout_s` sim seconds after it took effect (0: never).
    pub fn new(timeout_s: f64) -> Commands<C> {
        Commands {
            timeout_ns: (timeout_s > 0.0).then(|| (timeout_s * 1e9).round() as u64),
            target: C::default(),
            commanded_at_ns: None,
            queued: VecDeque::new(),
        }
    }

    /// Queues a command that takes effect at the first step whose sim time
    /// is after `apply_after_ns`. Non-finite commands are refused (false).
    pub fn push(&mut self, command: C, apply_after_ns: u64) -> bool {
        if !command.is_finite() {
            return false;
        }
        if self.queued.len() >= Self::MAX_QUEUED {
            self.queued.pop_front();
        }
        self.queued.push_back((apply_after_ns, command));
        true
    }

    /// Puts in force the commands due at the step at `now_ns`.
    pub fn take_due(&mut self, now_ns: u64) {
        while let Some(&(after, command)) = self.queued.front() {
            if after >= now_ns {
                break;
            }
            self.queued.pop_front();
            self.set(command, now_ns);
        }
    }

    /// Puts `command` in force from `now_ns`.
    pub fn set(&mut self, command: C, now_ns: u64) {
        self.target = command;
        self.commanded_at_ns = Some(now_ns);
    }

    /// Whether the command in force is older than the timeout at `now_ns`.
    pub fn is_stale(&self, now_ns: u64) -> bool {
        match (self.timeout_ns, self.commanded_at_ns) {
            (Some(timeout), Some(at)) => now_ns.saturating_sub(at) > timeout,
            _ => false,
        }
    }

    /// For how many of the steps after the one at `now_ns` (each `step_ns`
    /// later) the command in force stays as it is if no command arrives:
    /// until a queued one takes effect, or it goes stale. `u64::MAX` when
    /// neither will happen.
    pub fn steps_unchanged(&self, now_ns: u64, step_ns: u64) -> u64 {
        // The steps after now whose sim time is at most `last_ns`.
        let steps_until = |last_ns: u64| last_ns.saturating_sub(now_ns) / step_ns.max(1);
        let mut steps = u64::MAX;
        // A queued command takes effect at the first step after its time
        // (and those behind it only after it, see `take_due`).
        if let Some(&(after, _)) = self.queued.front() {
            steps = steps.min(steps_until(after));
        }
        if let (Some(timeout), Some(at)) = (self.timeout_ns, self.commanded_at_ns) {
            if !self.is_stale(now_ns) {
                steps = steps.min(steps_until(at.saturating_add(timeout)));
            }
        }
        steps
    }

    /// The command in force at `now_ns`, `None` once stale.
    pub fn target(&self, now_ns: u64) -> Option<C> {
        (!self.is_stale(now_ns)).then_some(self.target)
    }
}
