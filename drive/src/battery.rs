//! A battery as a model: charge drained by the body's actual motion (metres
//! travelled and radians turned between consecutive world states) and by
//! time, refilled on a charger, its voltage read off the configured curve.
//! Free of Zenoh; [`crate::server`] feeds it states and publishes it.

use flotilla_messages::sensor_msgs::BatteryState;
use flotilla_messages::std_msgs::Header;
use flotilla_plugins::battery::BatteryConfig;
use flotilla_wire::description::Place;
use flotilla_wire::geometry::{wrap_angle, Pose2};
use flotilla_wire::update_timer::UpdateTimer;

/// Seconds per hour: charges are in Ah.
const S_PER_H: f64 = 3600.0;

/// A charge this small is none, Ah (a sum of small drains lands within
/// rounding of 0, not on it).
const EMPTY_AH: f64 = 1e-9;

/// One robot's battery.
#[derive(Debug, Clone)]
pub struct Battery {
    config: BatteryConfig,
    /// Where it charges (world x, y, m).
    chargers: Vec<[f64; 2]>,
    charge_ah: f64,
    /// The body's pose at the last state, and its step.
    last: Option<(u64, Pose2)>,
    /// Whether the body was on a charger at the last state.
    on_charger: bool,
    /// Whether the robot has been stopped for want of charge (decided at
    /// updates only).
    empty: bool,
    /// The charge at the last update, and its sim time (ns): the current
    /// published is the mean since.
    last_update: Option<(f64, u64)>,
    timer: UpdateTimer,
}

impl Battery {
    /// A battery charging at the world's places whose name or tag the
    /// config lists.
    pub fn new(config: BatteryConfig, places: &[Place]) -> Battery {
        let chargers = places
            .iter()
            .filter(|p| config.chargers.iter().any(|c| *c == p.name || p.tags.contains(c)))
            .map(|p| [p.pose.x_m, p.pose.y_m])
            .collect();
        let charge_ah = config.capacity_ah * config.initial_charge;
        let timer = UpdateTimer::new(config.update_rate_hz);
        Battery { config, chargers, charge_ah, last: None, on_charger: false, empty: false, last_update: None, timer }
    }

    /// The same battery holding `charge_ah` instead (what a restarted node
    /// takes up, see `Rebuild::recall`), within its capacity; empty if that
    /// is none.
    pub fn holding(mut self, charge_ah: f64) -> Battery {
        if charge_ah.is_finite() {
            self.charge_ah = charge_ah.clamp(0.0, self.config.capacity_ah);
            self.empty = self.charge_ah <= EMPTY_AH;
        }
        self
    }

    /// Its configuration.
    pub fn config(&self) -> &BatteryConfig {
        &self.config
    }

    /// How many chargers it found.
    pub fn charger_count(&self) -> usize {
        self.chargers.len()
    }

    /// Charge left, Ah.
    pub fn charge_ah(&self) -> f64 {
        self.charge_ah
    }

    /// Charge left as a fraction of the capacity.
    pub fn soc(&self) -> f64 {
        self.charge_ah / self.config.capacity_ah
    }

    /// Whether the robot stands stopped for want of charge.
    pub fn empty(&self) -> bool {
        self.empty
    }

    /// Takes world state `step` of `step_ns`, the body at `pose`: drains
    /// what the body did since the last state (distance, turn and time;
    /// after a gap in the steps the time of every step missed), and charges
    /// for the time on a charger. `true` when an update is due at this state
    /// (the node then publishes [`Battery::state`]); an update decides
    /// whether the robot is empty.
    pub fn advance(&mut self, step: u64, now_ns: u64, step_ns: u64, pose: Pose2) -> bool {
        let c = &self.config;
        if let Some((last_step, last)) = self.last.filter(|(s, _)| *s < step) {
            let dt_h = (step - last_step) as f64 * step_ns as f64 * 1e-9 / S_PER_H;
            let metres = (pose.x_m - last.x_m).hypot(pose.y_m - last.y_m);
            let radians = wrap_angle(pose.theta_rad - last.theta_rad).abs();
            let drained = c.per_metre_ah * metres + c.per_radian_ah * radians + c.idle_current_a * dt_h;
            let charged = if self.on_charger { c.charge_current_a * dt_h } else { 0.0 };
            self.charge_ah = (self.charge_ah - drained + charged).clamp(0.0, c.capacity_ah);
        }
        self.last = Some((step, pose));
        self.on_charger =
            self.chargers.iter().any(|[x, y]| (pose.x_m - x).hypot(pose.y_m - y) <= c.charger_tolerance_m);
        let due = self.timer.check(now_ns, step_ns);
        if due {
            self.empty = self.charge_ah <= EMPTY_AH;
        }
        due
    }

    /// States after the one at `now_ns` before the next update (1: the
    /// next state may be one).
    pub fn steps_until_update(&self, now_ns: u64, step_ns: u64) -> u64 {
        self.timer.steps_until_due(now_ns, step_ns)
    }

    /// Its `BatteryState` now (an update): the mean current since the
    /// last update, and the status the charger gives.
    pub fn state(&mut self, header: Header, now_ns: u64) -> BatteryState {
        let c = &self.config;
        let current_a = match self.last_update {
            Some((charge, at_ns)) if now_ns > at_ns => {
                (self.charge_ah - charge) / ((now_ns - at_ns) as f64 * 1e-9 / S_PER_H)
            }
            _ => 0.0,
        };
        self.last_update = Some((self.charge_ah, now_ns));
        let full = self.charge_ah >= c.capacity_ah;
        let status = match (self.on_charger, full) {
            (true, true) => BatteryState::POWER_SUPPLY_STATUS_FULL,
            (true, false) if c.charge_current_a > 0.0 => BatteryState::POWER_SUPPLY_STATUS_CHARGING,
            (true, false) => BatteryState::POWER_SUPPLY_STATUS_NOT_CHARGING,
            (false, _) => BatteryState::POWER_SUPPLY_STATUS_DISCHARGING,
        };
        BatteryState {
            header,
            voltage: c.voltage_at(self.soc()) as f32,
            temperature: f32::NAN,
            current: current_a as f32,
            charge: self.charge_ah as f32,
            capacity: c.capacity_ah as f32,
            design_capacity: c.capacity_ah as f32,
            percentage: self.soc() as f32,
            power_supply_status: status,
            power_supply_health: BatteryState::POWER_SUPPLY_HEALTH_GOOD,
            power_supply_technology: c.technology,
            present: true,
            ..BatteryState::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_yaml::Value;

    const STEP_NS: u64 = 10_000_000;

    fn config(yaml: &str) -> BatteryConfig {
        let entry: Value = serde_yaml::from_str(yaml).unwrap();
        let ctx = flotilla_plugins::PluginContext::single_body("r.model.yaml".as_ref(), "r", "base", &[]);
        BatteryConfig::parse(&entry, "battery", &ctx).unwrap()
    }

    fn dock() -> Vec<Place> {
        vec![Place { name: "home".into(), pose: Pose2::new(0.0, 0.0, 0.0), tags: vec!["dock".into()] }]
    }

    #[test]
    fn driving_a_measured_distance_drains_what_the_figures_say() {
        // 10 Ah; 0.01 Ah per metre, 0.02 Ah per radian, 0.36 A idle.
        let mut battery = Battery::new(
            config("{body: base, capacity: 10, per_metre: 0.01, per_radian: 0.02, idle_current: 0.36}"),
            &[],
        );
        // 100 s at 0.5 m/s along x, then a half turn over 10 s.
        for k in 0..=10_000u64 {
            battery.advance(k, k * STEP_NS, STEP_NS, Pose2::new(0.005 * k as f64, 0.0, 0.0));
        }
        for k in 1..=1000u64 {
            let theta = std::f64::consts::PI * k as f64 / 1000.0;
            battery.advance(10_000 + k, (10_000 + k) * STEP_NS, STEP_NS, Pose2::new(50.0, 0.0, theta));
        }
        // 50 m × 0.01 + π × 0.02 + 110 s × 0.36 A / 3600 s/h
        let drained = 0.5 + std::f64::consts::PI * 0.02 + 110.0 * 0.36 / 3600.0;
        assert!((battery.charge_ah() - (10.0 - drained)).abs() < 1e-9, "{} Ah", battery.charge_ah());
        assert!(!battery.empty());
    }

    #[test]
    fn a_battery_taken_up_holds_what_it_was_given_within_its_capacity() {
        let fresh = || Battery::new(config("{body: base, capacity: 2, initial_charge: 0.5}"), &[]);
        assert_eq!(fresh().charge_ah(), 1.0);
        assert_eq!(fresh().holding(1.5).charge_ah(), 1.5);
        assert_eq!(fresh().holding(7.0).charge_ah(), 2.0, "no more than full");
        assert!(fresh().holding(0.0).empty(), "an empty one stays stopped");
        assert_eq!(fresh().holding(f64::NAN).charge_ah(), 1.0, "nonsense is ignored");
    }

    #[test]
    fn it_refills_on_a_charger_and_says_so() {
        let mut battery = Battery::new(
            config("{body: base, capacity: 1, initial_charge: 0.5, idle_current: 0, charge_current: 36}"),
            &dock(),
        );
        assert_eq!(battery.charger_count(), 1, "the place tagged dock");
        let at = Pose2::new(0.1, 0.2, 0.0); // within 0.3 m
        for k in 0..=2000u64 {
            battery.advance(k, k * STEP_NS, STEP_NS, at);
        }
        // 36 A for 20 s is 0.2 Ah.
        assert!((battery.soc() - 0.7).abs() < 1e-9, "{}", battery.soc());
        let state = battery.state(Header::default(), 2000 * STEP_NS);
        assert_eq!(state.power_supply_status, BatteryState::POWER_SUPPLY_STATUS_CHARGING);
        for k in 2001..=6000u64 {
            battery.advance(k, k * STEP_NS, STEP_NS, at);
        }
        assert_eq!(battery.soc(), 1.0, "never above full");
        let state = battery.state(Header::default(), 6000 * STEP_NS);
        assert_eq!(state.power_supply_status, BatteryState::POWER_SUPPLY_STATUS_FULL);
        assert_eq!(state.voltage, 12.9);
    }

    #[test]
    fn an_empty_battery_is_found_at_the_next_update() {
        // 0.001 Ah at 3.6 A idle: empty after 1 s; updates at 10 Hz.
        let mut battery =
            Battery::new(config("{body: base, capacity: 0.001, idle_current: 3.6, charge_current: 0}"), &[]);
        let mut empty_at = None;
        for k in 0..200u64 {
            battery.advance(k, k * STEP_NS, STEP_NS, Pose2::default());
            if battery.empty() && empty_at.is_none() {
                empty_at = Some(k);
            }
        }
        assert_eq!(empty_at, Some(100), "drained at step 100 (1 s), an update");
        let state = battery.state(Header::default(), 200 * STEP_NS);
        assert_eq!((state.percentage, state.voltage), (0.0, 11.0));
        assert_eq!(state.power_supply_status, BatteryState::POWER_SUPPLY_STATUS_DISCHARGING);
    }

    #[test]
    fn the_current_is_the_mean_since_the_last_update() {
        let mut battery = Battery::new(config("{body: base, capacity: 10, idle_current: 2.0}"), &[]);
        battery.advance(0, 0, STEP_NS, Pose2::default());
        battery.state(Header::default(), 0);
        for k in 1..=100u64 {
            battery.advance(k, k * STEP_NS, STEP_NS, Pose2::default());
        }
        let state = battery.state(Header::default(), 100 * STEP_NS);
        assert!((state.current + 2.0).abs() < 1e-4, "discharging at 2 A: {}", state.current);
    }
}
