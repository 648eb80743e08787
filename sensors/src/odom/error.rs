//! AMRISim's odometry error as a model: the odometric pose is integrated
//! from the robot's motion, each update's motion scaled by `1 + error` per
//! axis (AMRISim's position model):
//!
//! ```text
//! mx  = Δx · (1 + error.x)      (along the robot's x since the last update)
//! my  = Δy · (1 + error.y)
//! mth = Δθ · (1 + error.th)
//! pose.x += mx·cos th − my·sin th,  pose.y += mx·sin th + my·cos th,  pose.th += mth
//! ```
//!
//! with `th` the estimate's heading. The motion is taken from successive
//! ground-truth poses, so the estimate does not depend on the update rate
//! beyond the error draws. It starts at the robot's first ground-truth pose
//! (Flatland's odometry is in world coordinates), and so drifts from it.

use flotilla_plugins::odometry::{OdomErrorConfig, OdomErrorMode};
use flotilla_wire::geometry::{wrap_angle, Pose2};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Mixed into the odometry's seed for the error draws, so that turning the
/// error on leaves Flatland's noise stream as it was.
const ERROR_STREAM: u64 = 0x6f64_6f6d_6572_7221;

/// One robot's odometric pose estimate.
#[derive(Debug, Clone)]
pub struct OdomError {
    config: OdomErrorConfig,
    rng: Xoshiro256PlusPlus,
    /// The factors in use (x, y per metre; heading per radian).
    factors: [f64; 3],
    /// The estimate and the ground truth it was last moved with.
    state: Option<(Pose2, Pose2)>,
}

impl OdomError {
    /// The estimate of a robot whose odometry is seeded with `seed`.
    pub fn new(config: OdomErrorConfig, seed: u64) -> OdomError {
        let mut error = OdomError {
            config,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed ^ ERROR_STREAM),
            factors: [0.0; 3],
            state: None,
        };
        error.factors = match config.mode {
            OdomErrorMode::None => [0.0; 3],
            OdomErrorMode::Constant => config.constant,
            OdomErrorMode::RandomInit | OdomErrorMode::RandomEachUpdate => error.draw(),
        };
        error
    }

    /// Whether there is any error to apply.
    pub fn is_on(&self) -> bool {
        self.config.mode != OdomErrorMode::None
    }

    /// The factors in use (what AMRISim's SIMSTAT reports).
    pub fn factors(&self) -> [f64; 3] {
        self.factors
    }

    fn draw(&mut self) -> [f64; 3] {
        self.config.ranges.map(|[min, max]| if min < max { self.rng.gen_range(min..=max) } else { min })
    }

    /// The estimate once the robot is at `truth`.
    pub fn update(&mut self, truth: Pose2) -> Pose2 {
        let Some((estimate, last)) = self.state else {
            self.state = Some((truth, truth));
            return truth;
        };
        if self.config.mode == OdomErrorMode::RandomEachUpdate {
            self.factors = self.draw();
        }
        // The motion since the last update, in the robot's frame then.
        let motion = last.inverse().compose(&truth);
        let mx = motion.x_m * (1.0 + self.factors[0]);
        let my = motion.y_m * (1.0 + self.factors[1]);
        let mth = wrap_angle(motion.theta_rad) * (1.0 + self.factors[2]);
        let (sin, cos) = estimate.theta_rad.sin_cos();
        let next = Pose2::new(
            estimate.x_m + mx * cos - my * sin,
            estimate.y_m + mx * sin + my * cos,
            wrap_angle(estimate.theta_rad + mth),
        );
        self.state = Some((next, truth));
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(mode: OdomErrorMode, constant: [f64; 3], ranges: [[f64; 2]; 3]) -> OdomErrorConfig {
        OdomErrorConfig { mode, constant, ranges }
    }

    /// Drives straight along x in `steps` steps of `step_m`, returns the estimate.
    fn drive(error: &mut OdomError, steps: usize, step_m: f64) -> Pose2 {
        let mut estimate = error.update(Pose2::new(1.0, 2.0, 0.0));
        for k in 1..=steps {
            estimate = error.update(Pose2::new(1.0 + k as f64 * step_m, 2.0, 0.0));
        }
        estimate
    }

    #[test]
    fn none_follows_the_truth_and_constant_scales_each_axis() {
        let mut none = OdomError::new(OdomErrorConfig::default(), 1);
        assert!(!none.is_on());
        assert_eq!(drive(&mut none, 100, 0.1), Pose2::new(11.0, 2.0, 0.0));

        let mut constant = OdomError::new(config(OdomErrorMode::Constant, [0.01, 0.0, 0.05], [[0.0; 2]; 3]), 1);
        let end = drive(&mut constant, 100, 0.1);
        assert!((end.x_m - (1.0 + 10.0 * 1.01)).abs() < 1e-9, "1 % long over 10 m: {end:?}");
        // a quarter turn on the spot reads 5 % more
        let mut turning = OdomError::new(config(OdomErrorMode::Constant, [0.0, 0.0, 0.05], [[0.0; 2]; 3]), 1);
        turning.update(Pose2::new(0.0, 0.0, 0.0));
        let mut heading = 0.0;
        for k in 1..=90 {
            heading = turning.update(Pose2::new(0.0, 0.0, (k as f64).to_radians())).theta_rad;
        }
        assert!((heading - std::f64::consts::FRAC_PI_2 * 1.05).abs() < 1e-9, "{heading}");
    }

    #[test]
    fn random_init_draws_one_factor_per_robot_within_its_range() {
        let ranges = [[0.0, 0.02], [-0.01, 0.01], [-0.004, 0.009]];
        let robots: Vec<f64> = (0..400)
            .map(|seed| {
                let mut error = OdomError::new(config(OdomErrorMode::RandomInit, [0.0; 3], ranges), seed);
                let f = error.factors();
                assert!((0..3).all(|a| (ranges[a][0]..=ranges[a][1]).contains(&f[a])), "{f:?}");
                // the same factor all the way: the error grows in proportion to the distance
                let at_5 = drive(&mut error.clone(), 50, 0.1).x_m - 6.0;
                let at_10 = drive(&mut error, 100, 0.1).x_m - 11.0;
                assert!((at_10 - 2.0 * at_5).abs() < 1e-9 && (at_10 - 10.0 * f[0]).abs() < 1e-9);
                f[0]
            })
            .collect();
        let mean = robots.iter().sum::<f64>() / robots.len() as f64;
        assert!((mean - 0.01).abs() < 0.001, "uniform on [0, 0.02]: mean {mean}");
        assert_eq!(
            OdomError::new(config(OdomErrorMode::RandomInit, [0.0; 3], ranges), 7).factors(),
            OdomError::new(config(OdomErrorMode::RandomInit, [0.0; 3], ranges), 7).factors(),
            "seeded"
        );
    }

    #[test]
    fn random_each_update_averages_out_over_a_run() {
        // Uniform on [0, 0.02] at each of 100 updates: over a run the
        // relative error is their mean, 0.01, with a standard deviation of
        // 0.02 / √12 / √100 ≈ 0.00058.
        let ranges = [[0.0, 0.02], [0.0, 0.0], [0.0, 0.0]];
        let runs: Vec<f64> = (0..400)
            .map(|seed| {
                let mut error = OdomError::new(config(OdomErrorMode::RandomEachUpdate, [0.0; 3], ranges), seed);
                (drive(&mut error, 100, 0.1).x_m - 11.0) / 10.0
            })
            .collect();
        let mean = runs.iter().sum::<f64>() / runs.len() as f64;
        let sd = (runs.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / runs.len() as f64).sqrt();
        assert!((mean - 0.01).abs() < 0.0002, "mean {mean}");
        let expected = 0.02 / 12f64.sqrt() / 10.0;
        assert!((sd - expected).abs() < 0.25 * expected, "sd {sd}, expected {expected}");
    }
}
