//! The GPS node's plugin: every selected `Gps` instance's fixes.

use flotilla_messages::geometry_msgs::TransformStamped;
use flotilla_node_kit::runtime::{steps_before_first_due, stride_of, NodePlugin, Outbox, Rebuild};
use flotilla_plugins::gps::GpsConfig;
use flotilla_plugins::registry::Role;
use flotilla_plugins::Configured;
use flotilla_wire::names::resolve_topic;
use flotilla_wire::seed::plugin_seed;
use flotilla_wire::world_to_nodes::{BodyId, WorldState};

use super::Gps;

struct Instance {
    key: String,
    body: BodyId,
    namespace: String,
    fix_key: String,
    gps: Gps,
}

/// Serves `Gps` plugin instances.
#[derive(Default)]
pub struct GpsServer {
    instances: Vec<Instance>,
}

impl NodePlugin for GpsServer {
    fn role(&self) -> &'static Role {
        &GpsConfig::ROLE
    }

    fn rebuild(&mut self, rebuild: &mut Rebuild<'_>) {
        let (description, keys) = (rebuild.description, rebuild.keys);
        let mut old = std::mem::take(&mut self.instances);
        for Configured { model, plugin, key, body, config } in rebuild.configured::<GpsConfig>() {
            // Keep a running receiver (its timer and noise stream) when it is unchanged.
            if let Some(pos) = old.iter().position(|i| i.key == key && i.body == body && *i.gps.config() == config) {
                self.instances.push(old.swap_remove(pos));
                continue;
            }
            let fix_key = keys.ros(&resolve_topic(&model.namespace, &config.topic));
            tracing::info!("serving Gps {key}: fixes on {fix_key}");
            let seed = plugin_seed(description.seed, &model.name, &plugin.name);
            self.instances.push(Instance {
                key,
                body,
                namespace: model.namespace.clone(),
                fix_key,
                gps: Gps::new(config, &model.namespace, seed, description.georeference),
            });
        }
    }

    fn reset(&mut self) {
        *self = GpsServer::default();
    }

    fn steps_without_output(&self, state: &WorldState) -> u64 {
        steps_before_first_due(self.instances.iter().map(|i| i.gps.steps_until_due(state.time.nanos, state.step_ns)))
    }

    /// Its outputs are due only at multiples of their periods.
    fn state_stride(&self, step_ns: u64) -> u64 {
        stride_of(self.instances.iter().map(|i| i.gps.period_ns()), step_ns)
    }

    fn on_state(&mut self, state: &WorldState, out: &mut Outbox) {
        for instance in &mut self.instances {
            if !instance.gps.due(state.time.nanos, state.step_ns) {
                continue;
            }
            // bodies are sorted by id in the state
            let Ok(i) = state.bodies.binary_search_by_key(&instance.body, |b| b.id) else { continue };
            // Computed whether or not anyone listens (the noise stream goes
            // on), encoded only for those who do.
            let fix = instance.gps.fix(state.time, state.bodies[i].pose);
            if out.wants(&instance.fix_key) {
                out.put(instance.fix_key.clone(), flotilla_messages::encode(fix));
            }
        }
    }

    /// The antennas' mounts, for those with `broadcast_tf`: fixed, so on
    /// `tf_static` (Flatland sends them on `tf` with every fix).
    fn static_transforms(&self) -> Vec<TransformStamped> {
        self.instances
            .iter()
            .filter(|instance| instance.gps.config().broadcast_tf)
            .map(|instance| instance.gps.mount_transform(&instance.namespace))
            .collect()
    }
}
