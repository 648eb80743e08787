//! Flatland's bool sensor: `true` at a publication if the body touched
//! anything new since the previous one or touches something now.

use flotilla_messages::std_msgs::Bool;
use flotilla_plugins::bool_sensor::BoolSensorConfig;
use flotilla_wire::time::SimTime;
use flotilla_wire::update_timer::UpdateTimer;
use flotilla_wire::world_to_nodes::{BodyId, Contact, ContactPeer};

/// One `BoolSensor` instance.
pub struct BoolSensor {
    config: BoolSensorConfig,
    body: BodyId,
    timer: UpdateTimer,
    /// What the body touches after the last step seen.
    touching: Vec<ContactPeer>,
    /// The same one step earlier (its buffer, swapped each step).
    touched: Vec<ContactPeer>,
    /// Whether a contact began since the last publication (Flatland's
    /// latch: a bump shorter than the period still shows once).
    began: bool,
}

impl BoolSensor {
    /// The sensor `config`, on body `body`.
    pub fn new(config: BoolSensorConfig, body: BodyId) -> BoolSensor {
        let timer = UpdateTimer::new(config.update_rate_hz);
        BoolSensor { config, body, timer, touching: Vec::new(), touched: Vec::new(), began: false }
    }

    /// Its parameters.
    pub fn config(&self) -> &BoolSensorConfig {
        &self.config
    }

    /// The body it watches.
    pub fn body(&self) -> BodyId {
        self.body
    }

    /// Takes in one step's contacts (every step's, published or not).
    pub fn observe(&mut self, contacts: &[Contact]) {
        std::mem::swap(&mut self.touching, &mut self.touched);
        self.touching.clear();
        self.touching.extend(contacts.iter().filter(|c| c.body == self.body).map(|c| c.peer));
        self.began |= self.touching.iter().any(|peer| !self.touched.contains(peer));
    }

    /// The reading at the step at `time`, if one is due.
    pub fn reading(&mut self, time: SimTime, step_ns: u64) -> Option<Bool> {
        if !self.timer.check(time.nanos, step_ns) {
            return None;
        }
        let data = self.began || !self.touching.is_empty();
        self.began = false;
        Some(Bool { data })
    }

    /// Steps after the one at `now_ns` until it is due.
    pub fn steps_until_due(&self, now_ns: u64, step_ns: u64) -> u64 {
        self.timer.steps_until_due(now_ns, step_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::tests::{pressing, touching_sensor};

    const STEP_NS: u64 = 5_000_000;

    fn sensor(rate_hz: f64) -> BoolSensor {
        let config = BoolSensorConfig {
            name: "near".into(),
            topic: "near".into(),
            update_rate_hz: rate_hz,
            body: "halo".into(),
        };
        BoolSensor::new(config, 2)
    }

    /// Feeds steps 0..n with `contacts_at(k)`, returning the readings.
    fn run(sensor: &mut BoolSensor, n: u64, contacts_at: impl Fn(u64) -> Vec<Contact>) -> Vec<(u64, bool)> {
        (0..n)
            .filter_map(|k| {
                sensor.observe(&contacts_at(k));
                sensor.reading(SimTime::at_step(k, STEP_NS), STEP_NS).map(|r| (k, r.data))
            })
            .collect()
    }

    #[test]
    fn true_while_its_body_touches_anything() {
        let mut s = sensor(f64::INFINITY);
        let readings = run(&mut s, 4, |k| {
            if k == 1 || k == 2 {
                vec![touching_sensor(2, ContactPeer::Layer(0))]
            } else {
                vec![pressing(1, ContactPeer::Layer(0))] // another body's
            }
        });
        assert_eq!(readings, vec![(0, false), (1, true), (2, true), (3, false)]);
    }

    #[test]
    fn a_bump_between_readings_shows_once() {
        let mut s = sensor(10.0); // every 20 steps
        let bump = |k: u64| if k == 7 { vec![touching_sensor(2, ContactPeer::Body(3))] } else { vec![] };
        assert_eq!(run(&mut s, 41, bump), vec![(0, false), (20, true), (40, false)]);
    }

    #[test]
    fn a_contact_that_began_before_the_last_reading_and_ended_since_does_not_show_again() {
        let mut s = sensor(10.0);
        let long = |k: u64| if (15..25).contains(&k) { vec![touching_sensor(2, ContactPeer::Body(3))] } else { vec![] };
        assert_eq!(run(&mut s, 41, long), vec![(0, false), (20, true), (40, false)]);
        let mut s = sensor(10.0);
        let always = |_| vec![touching_sensor(2, ContactPeer::Body(3))];
        assert_eq!(run(&mut s, 41, always), vec![(0, true), (20, true), (40, true)]);
    }
}
