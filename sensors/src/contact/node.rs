//! The contact nodes' plugins: every selected `Bumper` (`flotilla-bumper`)
//! or `BoolSensor` (`flotilla-bool-sensor`) instance, fed the world's
//! contact list (`world/contacts`), which the world publishes just before
//! each step's state: a step's contacts are in hand when its state is
//! answered.

use flotilla_node_kit::runtime::{steps_before_first_due, Answering, BadInput, NodePlugin, Outbox, Rebuild};
use flotilla_plugins::bool_sensor::BoolSensorConfig;
use flotilla_plugins::bumper::BumperConfig;
use flotilla_plugins::registry::Role;
use flotilla_plugins::Configured;
use flotilla_wire::codec::decode;
use flotilla_wire::names::resolve_topic;
use flotilla_wire::world_to_nodes::{WorldContacts, WorldState};

use super::bool_sensor::BoolSensor;
use super::bumper::Bumper;
use super::ContactNames;

/// The tag of the contact list's input.
const CONTACTS: &str = "contacts";

/// Decodes a contact list into `into` (its buffer kept).
fn take_contacts(tag: &str, payload: &[u8], into: &mut WorldContacts) -> Result<(), BadInput> {
    if tag != CONTACTS {
        return Err(BadInput(format!("no input is tagged {tag:?}")));
    }
    *into = decode::<WorldContacts>(payload).map_err(|e| BadInput(e.to_string()))?;
    Ok(())
}

struct BumperInstance {
    key: String,
    topic_key: String,
    bumper: Bumper,
}

/// Serves `Bumper` plugin instances.
#[derive(Default)]
pub struct BumperServer {
    instances: Vec<BumperInstance>,
    names: ContactNames,
    /// The latest step's contacts.
    contacts: WorldContacts,
}

impl NodePlugin for BumperServer {
    fn role(&self) -> &'static Role {
        &BumperConfig::ROLE
    }

    fn answering(&self) -> Answering {
        // A few contacts per step: cheap.
        Answering::OnReceivingThread
    }

    fn rebuild(&mut self, rebuild: &mut Rebuild<'_>) {
        let keys = rebuild.keys;
        self.names = ContactNames::of(rebuild.description);
        let mut old = std::mem::take(&mut self.instances);
        for Configured { model, key, config, .. } in rebuild.configured::<BumperConfig>() {
            let bumper = Bumper::new(config, model);
            // Keep a running bumper (its timer) when it is unchanged.
            if let Some(pos) = old.iter().position(|i| {
                i.key == key && i.bumper.config() == bumper.config() && i.bumper.bodies() == bumper.bodies()
            }) {
                self.instances.push(old.swap_remove(pos));
                continue;
            }
            let topic_key = keys.ros(&resolve_topic(&model.namespace, &bumper.config().topic));
            tracing::info!("serving Bumper {key}: collisions on {topic_key}");
            self.instances.push(BumperInstance { key, topic_key, bumper });
        }
        if !self.instances.is_empty() {
            rebuild.subscribe(keys.world_contacts(), CONTACTS.to_string());
        }
    }

    fn reset(&mut self) {
        *self = BumperServer::default();
    }

    fn on_input(&mut self, tag: &str, payload: &[u8], _out: &mut Outbox) -> Result<(), BadInput> {
        take_contacts(tag, payload, &mut self.contacts)
    }

    fn steps_without_output(&self, state: &WorldState) -> u64 {
        if self.instances.iter().any(|i| i.bumper.publishes_every_touching_step()) {
            // Something may touch at the next step.
            return 0;
        }
        steps_before_first_due(self.instances.iter().map(|i| i.bumper.steps_until_due(state.time.nanos, state.step_ns)))
    }

    fn on_state(&mut self, state: &WorldState, out: &mut Outbox) {
        // The step's list, or (had it not come) the latest: contacts last.
        let contacts = &self.contacts.contacts;
        for instance in &mut self.instances {
            let Some(message) = instance.bumper.update(contacts, &self.names, state.time, state.step_ns) else {
                continue;
            };
            if out.wants(&instance.topic_key) {
                out.put(instance.topic_key.clone(), flotilla_messages::encode(message));
            }
        }
    }
}

struct BoolSensorInstance {
    key: String,
    topic_key: String,
    sensor: BoolSensor,
}

/// Serves `BoolSensor` plugin instances.
#[derive(Default)]
pub struct BoolSensorServer {
    instances: Vec<BoolSensorInstance>,
    contacts: WorldContacts,
}

impl NodePlugin for BoolSensorServer {
    fn role(&self) -> &'static Role {
        &BoolSensorConfig::ROLE
    }

    fn answering(&self) -> Answering {
        Answering::OnReceivingThread
    }

    fn rebuild(&mut self, rebuild: &mut Rebuild<'_>) {
        let keys = rebuild.keys;
        let mut old = std::mem::take(&mut self.instances);
        for Configured { model, key, body, config, .. } in rebuild.configured::<BoolSensorConfig>() {
            if let Some(pos) =
                old.iter().position(|i| i.key == key && i.sensor.body() == body && *i.sensor.config() == config)
            {
                self.instances.push(old.swap_remove(pos));
                continue;
            }
            let topic_key = keys.ros(&resolve_topic(&model.namespace, &config.topic));
            tracing::info!("serving BoolSensor {key}: readings on {topic_key}");
            self.instances.push(BoolSensorInstance { key, topic_key, sensor: BoolSensor::new(config, body) });
        }
        if !self.instances.is_empty() {
            rebuild.subscribe(keys.world_contacts(), CONTACTS.to_string());
        }
    }

    fn reset(&mut self) {
        *self = BoolSensorServer::default();
    }

    /// Every step's contacts count, published or not (the latch).
    fn on_input(&mut self, tag: &str, payload: &[u8], _out: &mut Outbox) -> Result<(), BadInput> {
        take_contacts(tag, payload, &mut self.contacts)?;
        for instance in &mut self.instances {
            instance.sensor.observe(&self.contacts.contacts);
        }
        Ok(())
    }

    fn steps_without_output(&self, state: &WorldState) -> u64 {
        steps_before_first_due(self.instances.iter().map(|i| i.sensor.steps_until_due(state.time.nanos, state.step_ns)))
    }

    fn on_state(&mut self, state: &WorldState, out: &mut Outbox) {
        for instance in &mut self.instances {
            let Some(reading) = instance.sensor.reading(state.time, state.step_ns) else { continue };
            if out.wants(&instance.topic_key) {
                out.put(instance.topic_key.clone(), flotilla_messages::encode(&reading));
            }
        }
    }
}
