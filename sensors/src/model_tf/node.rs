//! The TF node's logic: every selected `ModelTfPublisher` instance.

use flotilla_messages::geometry_msgs::TransformStamped;
use flotilla_messages::tf2_msgs::TFMessage;
use flotilla_plugins::model_tf_publisher::ModelTfPublisherConfig;
use flotilla_plugins::registry::Role;
use flotilla_plugins::Configured;
use flotilla_wire::world_to_nodes::WorldState;

use super::ModelTf;
use flotilla_node_kit::runtime::{NodePlugin, Outbox, Rebuild};

/// Serves `ModelTfPublisher` plugin instances.
#[derive(Default)]
pub struct ModelTfServer {
    instances: Vec<ModelTf>,
    tf_key: String,
    /// Reused between states: no allocation per body per update.
    transforms: Vec<TransformStamped>,
}

impl NodePlugin for ModelTfServer {
    fn role(&self) -> &'static Role {
        &ModelTfPublisherConfig::ROLE
    }

    fn rebuild(&mut self, rebuild: &mut Rebuild<'_>) {
        self.tf_key = rebuild.keys.ros("/tf");
        self.instances = rebuild
            .configured::<ModelTfPublisherConfig>()
            .into_iter()
            .filter_map(|Configured { model, config, key, .. }| {
                tracing::info!("serving ModelTfPublisher {key}");
                ModelTf::new(config, model)
            })
            .collect();
    }

    fn reset(&mut self) {
        *self = ModelTfServer::default();
    }

    fn on_state(&mut self, state: &WorldState, out: &mut Outbox) {
        self.transforms.clear();
        for instance in &mut self.instances {
            if instance.due(state.time.nanos, state.step_ns) {
                instance.update(state.time, &state.bodies, &mut self.transforms);
            }
        }
        if !self.transforms.is_empty() && out.wants(&self.tf_key) {
            let message = TFMessage { transforms: std::mem::take(&mut self.transforms) };
            out.put(self.tf_key.clone(), flotilla_messages::encode(&message));
            self.transforms = message.transforms;
        }
    }

    fn static_transforms(&self) -> Vec<TransformStamped> {
        self.instances.iter().flat_map(|i| i.static_transforms().iter().cloned()).collect()
    }
}
