//! The odometry node's logic: every selected `DiffDrive`, `TricycleDrive`
//! and `VehicleDynamics` instance's odometry, ground truth, twist and odom → body
//! transform (each as its plugin type publishes them).

use flotilla_protocol::names::resolve_topic;
use flotilla_protocol::plugins::diff_drive::DiffDriveConfig;
use flotilla_protocol::plugins::registry::Role;
use flotilla_protocol::plugins::tricycle_drive::TricycleDriveConfig;
use flotilla_protocol::plugins::vehicle::VehicleConfig;
use flotilla_protocol::ros::geometry_msgs::TransformStamped;
use flotilla_protocol::ros::std_msgs::Header;
use flotilla_protocol::ros::{self, tf2_msgs::TFMessage};
use flotilla_protocol::seed::plugin_seed;
use flotilla_protocol::world_to_nodes::{BodyId, WorldState};

use super::Odom;
use flotilla_node_kit::runtime::{steps_before_first_due, Answering, Interest, NodePlugin, Outbox, Rebuild};

struct Instance {
    key: String,
    body: BodyId,
    odom_key: String,
    ground_truth_key: String,
    twist_key: String,
    /// Whether anyone listens, kept per key: odometry, ground truth, twist.
    interest: [Interest; 3],
    odom: Odom,
}

/// Serves the odometry of `DiffDrive` and `TricycleDrive` plugin instances.
#[derive(Default)]
pub struct OdomServer {
    instances: Vec<Instance>,
    tf_key: String,
    tf_interest: Interest,
}

impl NodePlugin for OdomServer {
    fn role(&self) -> &'static Role {
        &DiffDriveConfig::ODOM_ROLE
    }

    fn also_serves(&self) -> &'static [Role] {
        &[TricycleDriveConfig::ODOM_ROLE, VehicleConfig::ODOM_ROLE]
    }

    fn answering(&self) -> Answering {
        // A pose, its noise and at most two messages per robot: cheap, and
        // in lockstep the world waits on it at every odometry step.
        Answering::OnReceivingThread
    }

    fn rebuild(&mut self, rebuild: &mut Rebuild<'_>) {
        let (description, keys) = (rebuild.description, rebuild.keys);
        self.tf_key = keys.ros("/tf");
        let mut old = std::mem::take(&mut self.instances);
        let diff_drives = rebuild
            .configured::<DiffDriveConfig>()
            .into_iter()
            .map(|c| (c.model, c.plugin, c.key, c.body, c.config.odometry()));
        let tricycles = rebuild
            .configured::<TricycleDriveConfig>()
            .into_iter()
            .map(|c| (c.model, c.plugin, c.key, c.body, c.config.odometry()));
        let vehicles = rebuild
            .configured::<VehicleConfig>()
            .into_iter()
            .map(|c| (c.model, c.plugin, c.key, c.body, c.config.odometry()));
        for (model, plugin, key, body, config) in diff_drives.chain(tricycles).chain(vehicles) {
            if let Some(pos) = old.iter().position(|i| i.key == key && i.body == body && *i.odom.config() == config) {
                self.instances.push(old.swap_remove(pos));
                continue;
            }
            let topic = |name: &str| keys.ros(&resolve_topic(&model.namespace, name));
            tracing::info!("serving {} odometry {key} on {}", config.plugin_type, topic(&config.odom_pub));
            self.instances.push(Instance {
                key,
                body,
                odom_key: topic(&config.odom_pub),
                ground_truth_key: topic(&config.ground_truth_pub),
                twist_key: topic(&config.twist_pub),
                interest: Default::default(),
                odom: Odom::new(config, &model.namespace, plugin_seed(description.seed, &model.name, &plugin.name)),
            });
        }
    }

    fn reset(&mut self) {
        *self = OdomServer::default();
    }

    fn steps_without_output(&self, state: &WorldState) -> u64 {
        steps_before_first_due(self.instances.iter().map(|i| i.odom.steps_until_due(state.time.nanos, state.step_ns)))
    }

    fn on_state(&mut self, state: &WorldState, out: &mut Outbox) {
        // Messages are built only for the topics someone listens to; the
        // noise streams go on regardless, so that a subscriber that comes
        // later sees what it would have seen from the start.
        let wants_tf = out.wants_cached(&self.tf_key, &mut self.tf_interest);
        let mut transforms = Vec::new();
        for instance in &mut self.instances {
            if !instance.odom.due(state.time.nanos, state.step_ns) {
                continue;
            }
            // bodies are sorted by id in the state
            let Ok(i) = state.bodies.binary_search_by_key(&instance.body, |b| b.id) else { continue };
            let body = state.bodies[i];
            let reading = instance.odom.update(state.time, body.pose, body.twist);
            let (odom, config) = (&instance.odom, instance.odom.config());
            let [odom_interest, truth_interest, twist_interest] = &mut instance.interest;
            if config.enable_odom_pub && out.wants_cached(&instance.ground_truth_key, truth_interest) {
                out.put(instance.ground_truth_key.clone(), ros::encode(&odom.ground_truth(&reading)));
            }
            if config.enable_odom_pub && out.wants_cached(&instance.odom_key, odom_interest) {
                out.put(instance.odom_key.clone(), ros::encode(&odom.odometry(&reading)));
            }
            if config.enable_twist_pub && out.wants_cached(&instance.twist_key, twist_interest) {
                out.put(instance.twist_key.clone(), ros::encode(&odom.twist(&reading)));
            }
            if wants_tf {
                if config.enable_odom_tf_pub {
                    transforms.push(odom.transform(&reading));
                }
                transforms.extend(odom.map_to_odom(&reading));
            }
        }
        if !transforms.is_empty() {
            out.put(self.tf_key.clone(), ros::encode(&TFMessage { transforms }));
        }
    }

    /// map → odom (identity) for the instances that ask for it
    /// (`enable_map_tf_pub`), once per distinct pair of frames.
    fn static_transforms(&self) -> Vec<TransformStamped> {
        let mut transforms: Vec<TransformStamped> = Vec::new();
        for instance in &self.instances {
            let c = instance.odom.config();
            if !c.enable_map_tf_pub {
                continue;
            }
            let (parent, child) = (&c.ground_truth_frame_id, &c.odom_frame_id);
            if transforms.iter().any(|t| &t.header.frame_id == parent && &t.child_frame_id == child) {
                continue;
            }
            transforms.push(TransformStamped {
                header: Header { stamp: Default::default(), frame_id: parent.clone() },
                child_frame_id: child.clone(),
                transform: Default::default(),
            });
        }
        transforms
    }
}
