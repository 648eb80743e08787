//! vehicle_dynamics_sim's localization noise as a model.
//!
//! - **Odometry drift**: odom → base is the truth seen through a rigid
//!   transform `D` that random-walks with the distance travelled: at each
//!   update, `D`'s x and y each take a step of variance
//!   `odom_walk_velocity_translation · d` and its heading one of
//!   `odom_walk_velocity_rotation · d`, `d` the metres travelled since the
//!   last update. The odometry is smooth but drifts.
//! - **Map measurement noise**: a localizer's map → base estimate is the
//!   truth plus white noise of variance `map_sample_noise_* / Δt` per axis
//!   (a noise density, Δt the time since the last update).
//!
//! map → odom is what the localizer then publishes: its estimate composed
//! with the inverse of the odometry, noisy but bounded around `D⁻¹`.

use flotilla_plugins::odometry::LocalizationConfig;
use flotilla_wire::geometry::{wrap_angle, Pose2};
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Mixed into the odometry's seed for these draws, so that turning the
/// localization noise on leaves the other noise streams as they were.
const LOCALIZATION_STREAM: u64 = 0x6c6f_6361_6c69_7a65;

/// One robot's drifting odometry and noisy localization.
#[derive(Debug, Clone)]
pub struct Localization {
    config: LocalizationConfig,
    rng: Xoshiro256PlusPlus,
    /// The drift `D` (odom → base = D ∘ truth), and the truth and time
    /// (ns) of the last update.
    state: Option<(Pose2, Pose2, u64)>,
}

/// What one update reports.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimates {
    /// odom → base: the drifting odometry.
    pub odometry: Pose2,
    /// map → odom: the localizer's correction.
    pub map_to_odom: Pose2,
}

impl Localization {
    /// The model of a robot whose odometry is seeded with `seed`.
    pub fn new(config: LocalizationConfig, seed: u64) -> Localization {
        Localization { config, rng: Xoshiro256PlusPlus::seed_from_u64(seed ^ LOCALIZATION_STREAM), state: None }
    }

    /// A normal draw of variance `variance` (0: none).
    fn draw(&mut self, variance: f64) -> f64 {
        if variance > 0.0 {
            let unit: f64 = StandardNormal.sample(&mut self.rng);
            unit * variance.sqrt()
        } else {
            0.0
        }
    }

    /// The estimates with the robot at `truth` at sim time `now_ns`.
    pub fn update(&mut self, truth: Pose2, now_ns: u64) -> Estimates {
        let c = self.config;
        let (drift, dt_s) = match self.state {
            None => (Pose2::default(), 0.0),
            Some((drift, last, last_ns)) => {
                let metres = (truth.x_m - last.x_m).hypot(truth.y_m - last.y_m);
                let step = Pose2::new(
                    self.draw(c.odom_walk_velocity_translation * metres),
                    self.draw(c.odom_walk_velocity_translation * metres),
                    self.draw(c.odom_walk_velocity_rotation * metres),
                );
                let drift = Pose2::new(
                    drift.x_m + step.x_m,
                    drift.y_m + step.y_m,
                    wrap_angle(drift.theta_rad + step.theta_rad),
                );
                (drift, now_ns.saturating_sub(last_ns) as f64 * 1e-9)
            }
        };
        self.state = Some((drift, truth, now_ns));
        let odometry = drift.compose(&truth);
        // The localizer's estimate: white noise of the density's variance
        // over the sample interval (none at the first sample).
        let per_sample = |density: f64| if dt_s > 0.0 { density / dt_s } else { 0.0 };
        let estimate = Pose2::new(
            truth.x_m + self.draw(per_sample(c.map_sample_noise_translation)),
            truth.y_m + self.draw(per_sample(c.map_sample_noise_translation)),
            wrap_angle(truth.theta_rad + self.draw(per_sample(c.map_sample_noise_rotation))),
        );
        Estimates { odometry, map_to_odom: estimate.compose(&odometry.inverse()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(walk_t: f64, walk_r: f64, map_t: f64, map_r: f64) -> LocalizationConfig {
        LocalizationConfig {
            odom_walk_velocity_translation: walk_t,
            odom_walk_velocity_rotation: walk_r,
            map_sample_noise_translation: map_t,
            map_sample_noise_rotation: map_r,
        }
    }

    /// Drives `metres` along x in 0.1 m steps at 50 Hz; the last estimates.
    fn drive(l: &mut Localization, metres: f64) -> Estimates {
        let steps = (metres / 0.1).round() as u64;
        let mut out = l.update(Pose2::default(), 0);
        for k in 1..=steps {
            out = l.update(Pose2::new(k as f64 * 0.1, 0.0, 0.0), k * 20_000_000);
        }
        out
    }

    fn variance(values: &[f64]) -> f64 {
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / values.len() as f64
    }

    #[test]
    fn odometry_drift_variance_grows_linearly_with_distance() {
        // 0.0025 m²/m: σ = 0.05 m per metre (vehicle_dynamics_sim's example).
        let run = |metres: f64| -> Vec<f64> {
            (0..600)
                .map(|seed| {
                    let mut l = Localization::new(config(0.0025, 0.0, 0.0, 0.0), seed);
                    let o = drive(&mut l, metres).odometry;
                    o.y_m // sideways: only the drift moves it
                })
                .collect()
        };
        let (at_4, at_16) = (variance(&run(4.0)), variance(&run(16.0)));
        assert!((at_4 - 0.0025 * 4.0).abs() < 0.2 * 0.0025 * 4.0, "{at_4}");
        assert!((at_16 - 0.0025 * 16.0).abs() < 0.2 * 0.0025 * 16.0, "{at_16}");
        // standing still, nothing drifts
        let mut still = Localization::new(config(0.0025, 0.01, 0.0, 0.0), 3);
        still.update(Pose2::new(1.0, 1.0, 0.5), 0);
        let o = still.update(Pose2::new(1.0, 1.0, 0.5), 20_000_000).odometry;
        assert_eq!(o, Pose2::new(1.0, 1.0, 0.5));
    }

    #[test]
    fn map_noise_is_white_with_the_density_s_variance_and_map_to_odom_is_bounded() {
        // 0.0001 m²/s at 50 Hz: a variance of 0.005 m² per sample.
        let mut l = Localization::new(config(0.0, 0.0, 0.0001, 0.0), 11);
        drive(&mut l, 0.1);
        let xs: Vec<f64> = (2..4002u64)
            .map(|k| {
                let truth = Pose2::new(0.2, 0.0, 0.0);
                let e = l.update(truth, k * 20_000_000);
                // map → base = map → odom ∘ odom → base
                e.map_to_odom.compose(&e.odometry).x_m - truth.x_m
            })
            .collect();
        let v = variance(&xs);
        assert!((v - 0.005).abs() < 0.1 * 0.005, "{v}");
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        assert!(mean.abs() < 0.005, "around the truth: {mean}");
    }

    #[test]
    fn draws_are_seeded() {
        let run = |seed| drive(&mut Localization::new(config(0.001, 0.001, 0.001, 0.001), seed), 3.0);
        assert_eq!(run(5), run(5));
        assert_ne!(run(5), run(6));
    }
}
