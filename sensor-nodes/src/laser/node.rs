//! The laser node's logic: every selected `Laser` instance, scanned when due.

use flotilla_protocol::description::WorldDescription;
use flotilla_protocol::names::resolve_topic;
use flotilla_protocol::plugins::laser::LaserConfig;
use flotilla_protocol::plugins::{configured, Configured};
use flotilla_protocol::ros::{self, geometry_msgs::TransformStamped};
use flotilla_protocol::seed::plugin_seed;
use flotilla_protocol::time::SimTime;
use flotilla_protocol::world_to_nodes::{BodyId, WorldState};
use flotilla_protocol::Keys;

use super::Laser;
use crate::scene::Scene;
use crate::serve::{Outbox, PluginServer};

struct Instance {
    key: String,
    body: BodyId,
    namespace: String,
    scan_key: String,
    laser: Laser,
}

/// Serves `Laser` plugin instances.
#[derive(Default)]
pub struct LaserServer {
    scene: Option<Scene>,
    instances: Vec<Instance>,
    layers_revision: Option<Vec<String>>,
}

impl PluginServer for LaserServer {
    fn plugin_type(&self) -> &'static str {
        "Laser"
    }

    fn rebuild(&mut self, description: &WorldDescription, keys: &Keys, serves: &dyn Fn(&str, &str) -> bool) {
        // Walls only change with the world file; rebuild them only then.
        if self.layers_revision.as_ref() != Some(&description.layer_names) || self.scene.is_none() {
            self.scene = Some(Scene::new(description));
            self.layers_revision = Some(description.layer_names.clone());
        } else if let Some(scene) = &mut self.scene {
            scene.set_bodies(description);
        }
        let reflectance = description.layer_bits(&["reflectance".to_string()]).unwrap_or(0);
        let mut old: Vec<Instance> = std::mem::take(&mut self.instances);
        for Configured { model, plugin, key, body, config } in configured::<LaserConfig>(description, serves) {
            // Keep a running instance (its timer and noise stream) when it is unchanged.
            if let Some(pos) = old.iter().position(|i| i.key == key && i.body == body && *i.laser.config() == config) {
                self.instances.push(old.swap_remove(pos));
                continue;
            }
            let scan_key = keys.ros(&resolve_topic(&model.namespace, &config.topic));
            tracing::info!("serving Laser {key}: {} beams on {scan_key}", config.beam_count());
            let seed = plugin_seed(description.seed, &model.name, &plugin.name);
            self.instances.push(Instance {
                key,
                body,
                namespace: model.namespace.clone(),
                scan_key,
                laser: Laser::new(config, seed, reflectance),
            });
        }
    }

    fn reset(&mut self) {
        *self = LaserServer::default();
    }

    fn steps_without_output(&self, state: &WorldState) -> u64 {
        let until_due = self.instances.iter().map(|i| i.laser.steps_until_due(state.time.nanos, state.step_ns));
        until_due.min().unwrap_or(u64::MAX) - 1
    }

    fn on_state(&mut self, state: &WorldState, out: &mut Outbox) {
        let Some(scene) = &mut self.scene else { return };
        scene.update(state);
        for instance in &mut self.instances {
            if !instance.laser.due(state.time.nanos, state.step_ns) {
                continue;
            }
            let Some(pose) = scene.body_pose(instance.body) else { continue };
            instance.laser.scan(scene, pose);
            out.put(instance.scan_key.clone(), ros::encode(&instance.laser.message(state.time, &instance.namespace)));
        }
    }

    /// The mounts (body → laser frame) of lasers with `broadcast_tf`. They
    /// never move, so they go on `tf_static`, latched, as
    /// robot_state_publisher does for fixed joints, rather than on `tf` with
    /// every scan as Flatland did.
    fn static_transforms(&self) -> Vec<TransformStamped> {
        self.instances
            .iter()
            .filter(|instance| instance.laser.config().broadcast_tf)
            .map(|instance| instance.laser.mount_transform(SimTime::default(), &instance.namespace))
            .collect()
    }
}
