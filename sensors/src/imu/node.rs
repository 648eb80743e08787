//! The IMU node's plugin: every selected `Imu` instance's samples.

use flotilla_messages::geometry_msgs::TransformStamped;
use flotilla_node_kit::runtime::{steps_before_first_due, NodePlugin, Outbox, Rebuild};
use flotilla_plugins::imu::ImuConfig;
use flotilla_plugins::registry::Role;
use flotilla_plugins::Configured;
use flotilla_wire::names::resolve_topic;
use flotilla_wire::seed::plugin_seed;
use flotilla_wire::world_to_nodes::{BodyId, WorldState};

use super::Imu;

struct Instance {
    key: String,
    body: BodyId,
    namespace: String,
    imu_key: String,
    ground_truth_key: String,
    imu: Imu,
}

/// Serves `Imu` plugin instances.
#[derive(Default)]
pub struct ImuServer {
    instances: Vec<Instance>,
}

impl NodePlugin for ImuServer {
    fn role(&self) -> &'static Role {
        &ImuConfig::ROLE
    }

    fn rebuild(&mut self, rebuild: &mut Rebuild<'_>) {
        let (description, keys) = (rebuild.description, rebuild.keys);
        let mut old = std::mem::take(&mut self.instances);
        for Configured { model, plugin, key, body, config } in rebuild.configured::<ImuConfig>() {
            // Keep a running IMU (its timer, last velocity and noise stream) when it is unchanged.
            if let Some(pos) = old.iter().position(|i| i.key == key && i.body == body && *i.imu.config() == config) {
                // Its last velocity is kept too: a rebuild happens when claims
                // change, at moments that depend on the process layout, and
                // must not change what the IMU reads.
                self.instances.push(old.swap_remove(pos));
                continue;
            }
            let topic = |name: &str| keys.ros(&resolve_topic(&model.namespace, name));
            tracing::info!("serving Imu {key} on {}", topic(&config.imu_pub));
            let seed = plugin_seed(description.seed, &model.name, &plugin.name);
            self.instances.push(Instance {
                key,
                body,
                namespace: model.namespace.clone(),
                imu_key: topic(&config.imu_pub),
                ground_truth_key: topic(&config.ground_truth_pub),
                imu: Imu::new(config, &model.namespace, seed),
            });
        }
    }

    fn reset(&mut self) {
        *self = ImuServer::default();
    }

    fn steps_without_output(&self, state: &WorldState) -> u64 {
        steps_before_first_due(self.instances.iter().map(|i| i.imu.steps_until_due(state.time.nanos, state.step_ns)))
    }

    fn on_state(&mut self, state: &WorldState, out: &mut Outbox) {
        for instance in &mut self.instances {
            if !instance.imu.due(state.time.nanos, state.step_ns) {
                continue;
            }
            // bodies are sorted by id in the state
            let Ok(i) = state.bodies.binary_search_by_key(&instance.body, |b| b.id) else { continue };
            let body = state.bodies[i];
            // Computed whether or not anyone listens (the noise stream and
            // the last velocity go on), encoded only for those who do.
            let publish = instance.imu.config().enable_imu_pub;
            let (truth, measured) = instance.imu.sample(state.time, body.pose.theta_rad, body.twist);
            if !publish {
                continue;
            }
            if out.wants(&instance.ground_truth_key) {
                out.put(instance.ground_truth_key.clone(), flotilla_messages::encode(truth));
            }
            if out.wants(&instance.imu_key) {
                out.put(instance.imu_key.clone(), flotilla_messages::encode(measured));
            }
        }
    }

    /// The IMUs' mounts, for those with `broadcast_tf`: fixed (identity), so
    /// on `tf_static` (Flatland sends them on `tf` with every sample).
    fn static_transforms(&self) -> Vec<TransformStamped> {
        self.instances
            .iter()
            .filter(|instance| instance.imu.config().broadcast_tf)
            .map(|instance| instance.imu.mount_transform(&instance.namespace))
            .collect()
    }
}
