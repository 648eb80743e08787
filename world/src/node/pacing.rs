//! Realtime pacing: when the next step is due on the wall clock.
//!
//! Pacing is the one place the world reads the wall clock, and it only decides
//! *when* to step, never *what* a step does.

use std::time::{Duration, Instant};

/// Paces steps at `real_time_factor` × real time.
#[derive(Debug, Clone)]
pub struct Pacer {
    anchor: Instant,
    steps_since_anchor: u64,
    step_ns: u64,
    real_time_factor: f64,
}

impl Pacer {
    /// A pacer starting now.
    pub fn new(step_ns: u64, real_time_factor: f64) -> Pacer {
        Pacer { anchor: Instant::now(), steps_since_anchor: 0, step_ns, real_time_factor }
    }

    /// Wall instant at which the next step is due.
    pub fn next_due(&self) -> Instant {
        let wall_ns = (self.steps_since_anchor as f64 * self.step_ns as f64 / self.real_time_factor) as u64;
        self.anchor + Duration::from_nanos(wall_ns)
    }

    /// Records that a step was taken. If the world fell more than a quarter
    /// second behind, it re-anchors instead of bursting to catch up.
    pub fn stepped(&mut self, now: Instant) {
        self.steps_since_anchor += 1;
        if now.saturating_duration_since(self.next_due()) > Duration::from_millis(250) {
            self.restart(now);
        }
    }

    /// Starts counting afresh from `now` (after a pause or a rate change).
    pub fn restart(&mut self, now: Instant) {
        self.anchor = now;
        self.steps_since_anchor = 0;
    }

    /// Changes the real-time factor from now on.
    pub fn set_real_time_factor(&mut self, factor: f64, now: Instant) {
        self.real_time_factor = factor;
        self.restart(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn due_times_follow_the_factor() {
        let mut p = Pacer::new(5_000_000, 2.0);
        let t0 = p.next_due();
        let now = t0;
        for _ in 0..10 {
            p.stepped(now);
        }
        // 10 steps of 5 ms at twice real time: 25 ms of wall time
        assert_eq!(p.next_due() - t0, Duration::from_millis(25));
    }
}
