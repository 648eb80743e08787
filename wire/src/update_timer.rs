//! Rates counted in simulation time, as Flatland's `UpdateTimer` does.

/// Decides at which steps a plugin with a given rate runs.
///
/// An infinite rate runs at every step; a rate of `r` Hz is due at the
/// multiples of `1/r` s of sim time and runs at the first step at or after
/// each (with half a step of tolerance, so that 10 Hz at a 5 ms step gives
/// exactly 10 updates per simulated second). Due times advance by whole
/// periods, so a rate never drifts; and they are multiples of the period
/// whenever the timer starts, so that a sensor started, rebuilt or moved
/// to another process mid-run keeps the phase it would have had (outputs
/// do not depend on the process layout), and a node whose rates are all
/// multiples of the step needs only the states at their multiples (see
/// `Keys::world_state_every`).
#[derive(Debug, Clone)]
pub struct UpdateTimer {
    period_ns: Option<u64>,
    next_due_ns: Option<u64>,
}

impl UpdateTimer {
    /// A timer for `rate_hz` (`f64::INFINITY` = every step). Rates that are
    /// not positive never fire.
    pub fn new(rate_hz: f64) -> UpdateTimer {
        let period_ns = if rate_hz.is_infinite() && rate_hz > 0.0 {
            None
        } else if rate_hz > 0.0 {
            Some(((1e9 / rate_hz).round() as u64).max(1))
        } else {
            Some(u64::MAX)
        };
        UpdateTimer { period_ns, next_due_ns: None }
    }

    /// Whether an update is due at `now_ns`, given the step size. Marks it done.
    pub fn check(&mut self, now_ns: u64, step_ns: u64) -> bool {
        let Some(period) = self.period_ns else { return true };
        if period == u64::MAX {
            return false;
        }
        // The first multiple of the period that no earlier step reached
        // (a step reaches the multiples up to half a step ahead of it).
        let due = *self.next_due_ns.get_or_insert_with(|| match now_ns.checked_sub(step_ns / 2) {
            Some(reached_before) => (reached_before / period).saturating_add(1).saturating_mul(period),
            None => 0,
        });
        if now_ns + step_ns / 2 < due {
            return false;
        }
        let mut next = due.saturating_add(period);
        // After a pause or a jump, skip the missed updates instead of bursting.
        while next + step_ns / 2 <= now_ns {
            next = next.saturating_add(period);
        }
        self.next_due_ns = Some(next);
        true
    }

    /// How many steps after the one at `now_ns` until the next update is due
    /// (1: the next step may be), so that a lockstep node can report the
    /// steps in between done at once. `u64::MAX` for a rate that never fires.
    pub fn steps_until_due(&self, now_ns: u64, step_ns: u64) -> u64 {
        match (self.period_ns, self.next_due_ns) {
            (Some(u64::MAX), _) => u64::MAX,
            (None, _) | (_, None) => 1,
            // The smallest d ≥ 1 with now + d·step + step/2 ≥ due (see check).
            (Some(_), Some(due)) => due.saturating_sub(now_ns + step_ns / 2).div_ceil(step_ns.max(1)).max(1),
        }
    }

    /// The period, ns: `None` for every step, `u64::MAX` for never.
    pub fn period_ns(&self) -> Option<u64> {
        self.period_ns
    }

    /// Forget the schedule (world reset or time jump backwards).
    pub fn reset(&mut self) {
        self.next_due_ns = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(rate: f64, step_ns: u64, steps: u64) -> usize {
        let mut timer = UpdateTimer::new(rate);
        (0..steps).filter(|k| timer.check(k * step_ns, step_ns)).count()
    }

    #[test]
    fn ten_hz_gives_ten_updates_per_sim_second() {
        assert_eq!(count(10.0, 5_000_000, 200), 10);
        assert_eq!(count(10.0, 5_000_000, 2000), 100);
        // A step size that does not divide the period still gives the right count.
        assert_eq!(count(10.0, 3_000_000, 3334), 101);
    }

    /// Flatland's `update_timer_test`: a rate that does not divide the step
    /// counted over `sim_s` seconds of steps of `step_s`, as updates per
    /// simulated second, within 1 Hz of the rate asked for.
    #[test]
    fn flatland_s_rate_tests_count_within_one_hertz() {
        for (rate, step_s, sim_s) in [(141.56, 1.0 / 333.0, 2.0), (564.56, 1.0 / 1234.0, 1.0), (47.4, 0.01, 2.0)] {
            let step_ns = (step_s * 1e9_f64).round() as u64;
            let steps = (sim_s / step_s).ceil() as u64;
            let actual = count(rate, step_ns, steps) as f64 / (steps * step_ns) as f64 * 1e9;
            assert!((actual - rate).abs() < 1.0, "{rate} Hz at {step_s} s steps: {actual} updates per sim second");
        }
    }

    #[test]
    fn a_timer_started_mid_run_fires_at_the_multiples_of_its_period() {
        // 10 Hz at 5 ms steps, first checked at step 37 (t = 185 ms): due at
        // 200 ms (step 40), then every 20 steps, as if started at t = 0.
        let mut timer = UpdateTimer::new(10.0);
        let fired: Vec<u64> = (37..100u64).filter(|k| timer.check(k * 5_000_000, 5_000_000)).collect();
        assert_eq!(fired, [40, 60, 80]);
        // Started exactly at a multiple, it fires there.
        let mut timer = UpdateTimer::new(10.0);
        assert!(timer.check(400_000_000, 5_000_000));
    }

    #[test]
    fn infinite_rate_runs_every_step_and_zero_never() {
        assert_eq!(count(f64::INFINITY, 5_000_000, 37), 37);
        assert_eq!(count(0.0, 5_000_000, 37), 0);
    }

    #[test]
    fn rate_faster_than_the_step_runs_every_step() {
        assert_eq!(count(5000.0, 5_000_000, 50), 50);
    }

    #[test]
    fn steps_until_due_predicts_the_next_update() {
        for (rate, step_ns) in
            [(10.0, 5_000_000), (50.0, 5_000_000), (10.0, 3_000_000), (7.3, 1_000_000), (5000.0, 5_000_000)]
        {
            let mut timer = UpdateTimer::new(rate);
            let mut predicted = Some(0);
            for k in 0..5000u64 {
                let fired = timer.check(k * step_ns, step_ns);
                assert_eq!(fired, predicted == Some(k), "{rate} Hz, step {step_ns} ns, at step {k}");
                // Predicted after every step, whether it fired or not.
                predicted = Some(k + timer.steps_until_due(k * step_ns, step_ns));
            }
        }
        assert_eq!(UpdateTimer::new(10.0).steps_until_due(0, 5_000_000), 1, "not started: due at once");
        assert_eq!(UpdateTimer::new(0.0).steps_until_due(0, 5_000_000), u64::MAX);
        assert_eq!(UpdateTimer::new(f64::INFINITY).steps_until_due(0, 5_000_000), 1);
    }
}
