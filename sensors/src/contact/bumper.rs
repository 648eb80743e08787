//! Flatland's bumper: every contact of a model's bodies (but the excluded
//! ones) as `flatland_msgs/Collisions`, at every step while anything
//! touches (`publish_all_collisions`) or at `update_rate`.

use flotilla_messages::flatland_msgs::{Collision, Collisions, Vector2};
use flotilla_plugins::bumper::BumperConfig;
use flotilla_wire::description::ModelDescription;
use flotilla_wire::time::SimTime;
use flotilla_wire::update_timer::UpdateTimer;
use flotilla_wire::world_to_nodes::{BodyId, Contact};

use super::ContactNames;

/// One `Bumper` instance.
pub struct Bumper {
    config: BumperConfig,
    /// The model's bodies whose contacts are published, sorted by id.
    bodies: Vec<BodyId>,
    timer: UpdateTimer,
    message: Collisions,
    /// Collision entries of earlier messages, kept with their buffers so
    /// that a warm bumper allocates nothing.
    spare: Vec<Collision>,
}

impl Bumper {
    /// The bumper `config` of `model`.
    pub fn new(config: BumperConfig, model: &ModelDescription) -> Bumper {
        let mut bodies: Vec<BodyId> =
            model.bodies.iter().filter(|b| !config.exclude.contains(&b.name)).map(|b| b.id).collect();
        bodies.sort_unstable();
        let timer = UpdateTimer::new(config.update_rate_hz);
        let message = Collisions::default();
        Bumper { config, bodies, timer, message, spare: Vec::new() }
    }

    /// Its parameters.
    pub fn config(&self) -> &BumperConfig {
        &self.config
    }

    /// The bodies whose contacts it publishes.
    pub fn bodies(&self) -> &[BodyId] {
        &self.bodies
    }

    /// Whether it may publish at every step (anything may touch at any).
    pub fn publishes_every_touching_step(&self) -> bool {
        self.config.publish_all_collisions
    }

    /// Steps after the one at `now_ns` until its rate makes it due (see
    /// `UpdateTimer::steps_until_due`).
    pub fn steps_until_due(&self, now_ns: u64, step_ns: u64) -> u64 {
        self.timer.steps_until_due(now_ns, step_ns)
    }

    /// The message of the step at `time`, given the step's `contacts`
    /// (the world's list, sorted by body), if one is due: Flatland's rule
    /// is that a step with contacts publishes at once under
    /// `publish_all_collisions`, and everything else waits for the rate.
    pub fn update(
        &mut self,
        contacts: &[Contact],
        names: &ContactNames,
        time: SimTime,
        step_ns: u64,
    ) -> Option<&Collisions> {
        let bodies = &self.bodies;
        let watched = |c: &&Contact| bodies.binary_search(&c.body).is_ok();
        let touching = contacts.iter().any(|c| watched(&c));
        if (!self.config.publish_all_collisions || !touching) && !self.timer.check(time.nanos, step_ns) {
            return None;
        }
        self.message.header.stamp = time.to_ros();
        if self.message.header.frame_id != self.config.world_frame_id {
            self.message.header.frame_id.clone_from(&self.config.world_frame_id);
        }
        self.spare.append(&mut self.message.collisions);
        for contact in contacts.iter().filter(watched) {
            let (Some((entity_a, body_a)), Some((entity_b, body_b))) =
                (names.body(contact.body), names.of_peer(contact.peer))
            else {
                continue;
            };
            let mut entry = self.spare.pop().unwrap_or_default();
            set(&mut entry.entity_a, entity_a);
            set(&mut entry.body_a, body_a);
            set(&mut entry.entity_b, entity_b);
            set(&mut entry.body_b, body_b);
            entry.magnitude_forces.clear();
            entry.contact_positions.clear();
            entry.contact_normals.clear();
            let normal = Vector2 { x: contact.normal[0], y: contact.normal[1] };
            for point in contact.points() {
                entry.magnitude_forces.push(point.force_n);
                entry.contact_positions.push(Vector2 { x: point.position_m[0], y: point.position_m[1] });
                entry.contact_normals.push(normal);
            }
            self.message.collisions.push(entry);
        }
        Some(&self.message)
    }
}

/// Replaces a string's text, in its buffer.
fn set(to: &mut String, text: &str) {
    to.clear();
    to.push_str(text);
}

#[cfg(test)]
mod tests {
    use flotilla_wire::world_to_nodes::{ContactPeer, ContactPoint};

    use super::*;
    use crate::contact::tests::{contact_world, pressing, touching_sensor};

    fn bumper(yaml: &str) -> (Bumper, ContactNames) {
        let description = contact_world();
        let model = &description.models[0];
        let ctx = flotilla_plugins::PluginContext::of(model, &description.layer_names);
        let config = BumperConfig::parse(&serde_yaml::from_str(yaml).unwrap(), "bumper", &ctx).unwrap();
        (Bumper::new(config, model), ContactNames::of(&description))
    }

    const STEP_NS: u64 = 5_000_000;

    fn at(step: u64) -> SimTime {
        SimTime::at_step(step, STEP_NS)
    }

    #[test]
    fn a_contact_is_named_from_the_model_s_side_with_its_points() {
        let (mut bumper, names) = bumper("{}");
        let contacts = [touching_sensor(2, ContactPeer::Layer(0)), pressing(1, ContactPeer::Body(3))];
        let message = bumper.update(&contacts, &names, at(7), STEP_NS).expect("due at every step");
        assert_eq!(message.header.frame_id, "map");
        assert_eq!(message.header.stamp, at(7).to_ros());
        let [sensor, solid] = &message.collisions[..] else { panic!("two: {message:?}") };
        assert_eq!(
            (sensor.entity_a.as_str(), sensor.body_a.as_str(), sensor.entity_b.as_str(), sensor.body_b.as_str()),
            ("robot", "halo", "walls", "walls")
        );
        assert!(sensor.magnitude_forces.is_empty() && sensor.contact_positions.is_empty());
        assert_eq!((solid.entity_b.as_str(), solid.body_b.as_str()), ("crate", "box"));
        assert_eq!(solid.contact_positions, vec![Vector2 { x: 6.75, y: 5.0 }]);
        assert_eq!(solid.contact_normals, vec![Vector2 { x: 1.0, y: 0.0 }]);
        assert_eq!(solid.magnitude_forces, vec![12.5]);
    }

    #[test]
    fn excluded_bodies_and_other_models_are_left_out() {
        let (mut bumper, names) = bumper("{exclude: [halo]}");
        let contacts = [
            pressing(1, ContactPeer::Body(3)),
            touching_sensor(2, ContactPeer::Layer(0)),
            // the crate's side of the same pair: another model's
            Contact { body: 3, ..pressing(1, ContactPeer::Body(1)) },
        ];
        let message = bumper.update(&contacts, &names, at(0), STEP_NS).unwrap();
        assert_eq!(message.collisions.len(), 1);
        assert_eq!(message.collisions[0].body_a, "base");
    }

    #[test]
    fn with_publish_all_collisions_only_empty_messages_wait_for_the_rate() {
        let (mut bumper, names) = bumper("{update_rate: 10}");
        let touching = [pressing(1, ContactPeer::Body(3))];
        // 10 Hz at 5 ms steps: due at steps 0, 20, 40, …
        let published: Vec<u64> = (0..45)
            .filter(|&k| {
                let contacts: &[Contact] = if (5..8).contains(&k) { &touching } else { &[] };
                bumper.update(contacts, &names, at(k), STEP_NS).is_some()
            })
            .collect();
        assert_eq!(published, vec![0, 5, 6, 7, 20, 40]);
    }

    #[test]
    fn without_it_everything_waits_for_the_rate() {
        let (mut bumper, names) = bumper("{update_rate: 10, publish_all_collisions: false}");
        let touching = [pressing(1, ContactPeer::Body(3))];
        let published: Vec<(u64, usize)> = (0..45)
            .filter_map(|k| {
                let contacts: &[Contact] = if (5..25).contains(&k) { &touching } else { &[] };
                bumper.update(contacts, &names, at(k), STEP_NS).map(|m| (k, m.collisions.len()))
            })
            .collect();
        assert_eq!(published, vec![(0, 0), (20, 1), (40, 0)]);
    }

    #[test]
    fn points_beyond_the_count_are_not_read() {
        let (mut bumper, names) = bumper("{}");
        let mut two = pressing(1, ContactPeer::Body(3));
        two.point_count = 2;
        two.points[1] = ContactPoint { position_m: [6.75, 5.1], force_n: 1.0 };
        let message = bumper.update(&[two], &names, at(0), STEP_NS).unwrap();
        assert_eq!(message.collisions[0].contact_positions.len(), 2);
    }
}
