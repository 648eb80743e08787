//! The sonar node's plugin: every selected `Sonar` instance, read when due.

use flotilla_messages::geometry_msgs::TransformStamped;
use flotilla_node_kit::runtime::{steps_before_first_due, stride_of, Interest, NodePlugin, Outbox, Rebuild};
use flotilla_plugins::registry::Role;
use flotilla_plugins::sonar::SonarConfig;
use flotilla_plugins::Configured;
use flotilla_wire::names::resolve_topic;
use flotilla_wire::seed::plugin_seed;
use flotilla_wire::world_to_nodes::{BodyId, WorldState};

use super::Sonar;
use crate::raycast::ScanBuffers;
use crate::scene::{Scene, Sensing};

struct Instance {
    key: String,
    body: BodyId,
    namespace: String,
    /// One key per transducer.
    range_keys: Vec<String>,
    /// The folder of the range keys (`robot1/sonar`).
    range_folder: String,
    /// Whether every range key has had its first message.
    ranges_sent: bool,
    /// Whether anyone listens under the range folder, and to the cloud:
    /// flags kept between readings (no hashing per reading).
    ranges_interest: Interest,
    cloud_key: String,
    cloud_interest: Interest,
    sonar: Sonar,
}

/// Serves `Sonar` plugin instances.
#[derive(Default)]
pub struct SonarServer {
    scene: Option<Scene>,
    /// The footprints near the ring being read: one set of buffers for
    /// every ring, warm in the cache from one ring to the next.
    buffers: ScanBuffers,
    instances: Vec<Instance>,
}

impl NodePlugin for SonarServer {
    fn role(&self) -> &'static Role {
        &SonarConfig::ROLE
    }

    fn rebuild(&mut self, rebuild: &mut Rebuild<'_>) {
        let (description, keys) = (rebuild.description, rebuild.keys);
        Scene::follow(&mut self.scene, description, Some(super::WALL_CELL_M), Sensing::Sonar);
        let mut old = std::mem::take(&mut self.instances);
        let configured = rebuild.configured::<SonarConfig>();
        for Configured { model, plugin, key, body, config } in configured {
            let topic = |name: &str| keys.ros(&resolve_topic(&model.namespace, name));
            let range_keys: Vec<String> =
                (0..config.transducers.len()).map(|i| topic(&config.range_topic(i))).collect();
            let cloud_key = topic(&config.pointcloud_topic);
            // Sixteen keys a robot: the runtime watches them by folder.
            for output in range_keys.iter().chain([&cloud_key]) {
                rebuild.output(output.clone());
            }
            // Keep a running ring (its timer and noise stream) when it is unchanged.
            if let Some(pos) = old.iter().position(|i| i.key == key && i.body == body && *i.sonar.config() == config) {
                self.instances.push(old.swap_remove(pos));
                continue;
            }
            tracing::info!("serving Sonar {key}: {} transducers on {}/*", range_keys.len(), topic(&config.topic));
            let seed = plugin_seed(description.seed, &model.name, &plugin.name);
            self.instances.push(Instance {
                key,
                body,
                namespace: model.namespace.clone(),
                cloud_key,
                range_folder: topic(&config.topic),
                ranges_sent: false,
                ranges_interest: Interest::default(),
                cloud_interest: Interest::default(),
                range_keys,
                sonar: Sonar::new(config, &model.namespace, seed),
            });
        }
    }

    fn reset(&mut self) {
        *self = SonarServer::default();
    }

    fn steps_without_output(&self, state: &WorldState) -> u64 {
        steps_before_first_due(self.instances.iter().map(|i| i.sonar.steps_until_due(state.time.nanos, state.step_ns)))
    }

    /// Its outputs are due only at multiples of their periods.
    fn state_stride(&self, step_ns: u64) -> u64 {
        stride_of(self.instances.iter().map(|i| i.sonar.period_ns()), step_ns)
    }

    fn on_state(&mut self, state: &WorldState, out: &mut Outbox) {
        let Some(scene) = &mut self.scene else { return };
        let mut updated = false;
        for instance in &mut self.instances {
            if !instance.sonar.due(state.time.nanos, state.step_ns) {
                continue;
            }
            if !updated {
                scene.update(state);
                updated = true;
            }
            let Some(pose) = scene.body_pose(instance.body) else { continue };
            // Read whether or not anyone listens (the noise stream goes
            // on), encoded only for those who do.
            instance.sonar.sense(scene, &mut self.buffers, instance.body, pose, state.time);
            // One look for the whole ring while nobody listens under it.
            if !(instance.ranges_sent && out.nobody_under_cached(&instance.range_folder, &mut instance.ranges_interest))
            {
                for (key, reading) in instance.range_keys.iter().zip(instance.sonar.readings()) {
                    if out.wants(key) {
                        out.put(key.clone(), flotilla_messages::encode(reading));
                    }
                }
                instance.ranges_sent = true;
            }
            if out.wants_cached(&instance.cloud_key, &mut instance.cloud_interest) {
                out.put(instance.cloud_key.clone(), flotilla_messages::encode(instance.sonar.cloud()));
            }
        }
    }

    /// The transducers' mounts, for rings with `broadcast_tf`: fixed, so
    /// latched on `tf_static`.
    fn static_transforms(&self) -> Vec<TransformStamped> {
        self.instances
            .iter()
            .filter(|instance| instance.sonar.config().broadcast_tf)
            .flat_map(|instance| instance.sonar.mount_transforms(&instance.namespace))
            .collect()
    }
}
