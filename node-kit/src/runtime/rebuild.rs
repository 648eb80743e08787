//! What a plugin rebuilds its instances from ([`Rebuild`]): the world's
//! description, the instances the node serves, what the world keeps for
//! them, and the inputs and outputs the plugin names as it goes.

use std::collections::BTreeMap;

use flotilla_plugins::{configured, Configured, PluginConfig};
use flotilla_wire::description::WorldDescription;
use flotilla_wire::Keys;

#[cfg(doc)]
use super::plugin::{NodePlugin, Outbox};

/// What a plugin rebuilds from, and the inputs it subscribes to.
pub struct Rebuild<'a> {
    /// The world's description.
    pub description: &'a WorldDescription,
    /// The simulation's keys.
    pub keys: &'a Keys,
    serves: &'a dyn Fn(&str, &str) -> bool,
    memory: Option<&'a BTreeMap<String, Vec<u8>>>,
    inputs: Vec<Input>,
    outputs: Vec<String>,
}

/// An input a plugin subscribes to: a key, and the tag its messages are
/// handed to the plugin with.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Input {
    /// The key (a ROS-facing one, e.g. a model's `cmd_vel`).
    pub key: String,
    /// What the plugin calls it (e.g. the instance it commands).
    pub tag: String,
}

impl<'a> Rebuild<'a> {
    /// A rebuild from `description` serving the instances for which
    /// `serves(model, plugin)` holds.
    pub fn new(description: &'a WorldDescription, keys: &'a Keys, serves: &'a dyn Fn(&str, &str) -> bool) -> Self {
        Rebuild { description, keys, serves, memory: None, inputs: Vec::new(), outputs: Vec::new() }
    }

    /// The same, with what the world keeps for nodes (by key, see
    /// [`Keys::world_memory`](flotilla_wire::Keys::world_memory)).
    pub fn with_memory(mut self, memory: &'a BTreeMap<String, Vec<u8>>) -> Self {
        self.memory = Some(memory);
        self
    }

    /// What the world keeps under `key` (a full key, from
    /// [`Keys::world_memory`](flotilla_wire::Keys::world_memory)): what an
    /// instance put there before this node served it (before a restart,
    /// or by the node that served it until now). Nothing after a reset or
    /// a newly loaded world.
    pub fn recall(&self, key: &str) -> Option<&'a [u8]> {
        self.memory.and_then(|m| m.get(key)).map(Vec::as_slice)
    }

    /// Whether the node serves (holds the claim on) a model's plugin.
    pub fn serves(&self, model: &str, plugin: &str) -> bool {
        (self.serves)(model, plugin)
    }

    /// Every served plugin of type `C`, parsed.
    pub fn configured<C: PluginConfig>(&self) -> Vec<Configured<'a, C>> {
        configured::<C>(self.description, self.serves)
    }

    /// Subscribes to `key`, handing its messages to
    /// [`NodePlugin::on_input`] with `tag`.
    pub fn subscribe(&mut self, key: String, tag: String) {
        self.inputs.push(Input { key, tag });
    }

    /// The inputs subscribed so far.
    pub fn inputs(&self) -> &[Input] {
        &self.inputs
    }

    /// Announces a key the plugin publishes on. Optional, and worth it for
    /// plugins with many keys per instance (a sonar's one per transducer):
    /// the runtime then learns which of them anyone listens to from one
    /// wildcard publisher per folder of keys (`robot1/sonar/*`) instead of
    /// declaring a publisher on each key to find out (see [`Outbox::wants`]).
    pub fn output(&mut self, key: String) {
        self.outputs.push(key);
    }

    pub(crate) fn into_wiring(self) -> (Vec<Input>, Vec<String>) {
        (self.inputs, self.outputs)
    }
}
