//! The odometry node's logic: every selected `DiffDrive`, `TricycleDrive`
//! and `VehicleDynamics` instance's odometry, ground truth, twist and odom → body
//! transform (each as its plugin type publishes them).

use flotilla_messages::geometry_msgs::TransformStamped;
use flotilla_messages::std_msgs::Header;
use flotilla_messages::tf2_msgs::TFMessage;
use flotilla_plugins::diff_drive::DiffDriveConfig;
use flotilla_plugins::registry::Role;
use flotilla_plugins::tricycle_drive::TricycleDriveConfig;
use flotilla_plugins::vehicle::VehicleConfig;
use flotilla_wire::names::resolve_topic;
use flotilla_wire::seed::plugin_seed;
use flotilla_wire::world_to_nodes::{BodyId, WorldState};

use super::Odom;
use flotilla_node_kit::runtime::{steps_before_first_due, stride_of, Answering, Interest, NodePlugin, Outbox, Rebuild};

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
    tf: KeptTransforms,
}

/// A moment's `/tf` message, its transforms' strings kept from moment to
/// moment (as [`Odom`] keeps its messages').
#[derive(Default)]
struct KeptTransforms {
    message: TFMessage,
    /// Transforms beyond those of the latest moment, to be filled again.
    spare: Vec<TransformStamped>,
}

impl KeptTransforms {
    /// Starts a moment's message.
    fn clear(&mut self) {
        self.spare.append(&mut self.message.transforms);
    }

    /// Adds a copy of `transform` to the moment's message.
    fn push(&mut self, transform: &TransformStamped) {
        let Some(mut kept) = self.spare.pop() else {
            self.message.transforms.push(transform.clone());
            return;
        };
        kept.header.stamp = transform.header.stamp;
        kept.header.frame_id.clone_from(&transform.header.frame_id);
        kept.child_frame_id.clone_from(&transform.child_frame_id);
        kept.transform = transform.transform;
        self.message.transforms.push(kept);
    }
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

    /// An odometry update reads the state of its own step only (the error
    /// models and the localization noise advance from update to update),
    /// so states between updates are not needed: at a 50 Hz `pub_rate` and
    /// 200 Hz physics the node receives one state in four.
    fn state_stride(&self, step_ns: u64) -> u64 {
        stride_of(self.instances.iter().map(|i| i.odom.period_ns()), step_ns)
    }

    fn on_state(&mut self, state: &WorldState, out: &mut Outbox) {
        // Messages are built only for the topics someone listens to; the
        // noise streams go on regardless, so that a subscriber that comes
        // later sees what it would have seen from the start.
        let wants_tf = out.wants_cached(&self.tf_key, &mut self.tf_interest);
        let tf = &mut self.tf;
        tf.clear();
        for instance in &mut self.instances {
            if !instance.odom.due(state.time.nanos, state.step_ns) {
                continue;
            }
            // bodies are sorted by id in the state
            let Ok(i) = state.bodies.binary_search_by_key(&instance.body, |b| b.id) else { continue };
            let body = state.bodies[i];
            let odom = &mut instance.odom;
            let reading = odom.update(state.time, body.pose, body.twist);
            let config = odom.config();
            let (publishes_odom, publishes_twist, publishes_tf) =
                (config.enable_odom_pub, config.enable_twist_pub, config.enable_odom_tf_pub);
            let [odom_interest, truth_interest, twist_interest] = &mut instance.interest;
            if publishes_odom && out.wants_cached(&instance.ground_truth_key, truth_interest) {
                out.put_encoded(&instance.ground_truth_key, odom.ground_truth(&reading));
            }
            if publishes_odom && out.wants_cached(&instance.odom_key, odom_interest) {
                out.put_encoded(&instance.odom_key, odom.odometry(&reading));
            }
            if publishes_twist && out.wants_cached(&instance.twist_key, twist_interest) {
                out.put_encoded(&instance.twist_key, odom.twist(&reading));
            }
            if wants_tf {
                if publishes_tf {
                    tf.push(odom.transform(&reading));
                }
                if let Some(map_to_odom) = odom.map_to_odom(&reading) {
                    tf.push(map_to_odom);
                }
            }
        }
        if !tf.message.transforms.is_empty() {
            out.put_encoded(&self.tf_key, &tf.message);
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

#[cfg(test)]
mod tests {
    use std::path::Path;

    use flotilla_wire::description::WorldDescription;
    use flotilla_wire::geometry::{Pose2, Twist2};
    use flotilla_wire::Keys;
    use flotilla_world_file::load_world;

    use super::*;

    /// The room with two robots whose drives publish odometry at 50 and
    /// 100 Hz, with AMRISim's odometry error and Gaussian noise.
    fn two_robots() -> WorldDescription {
        let dir = std::env::temp_dir().join(format!("flotilla-odom-stride-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let map = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/tests/room/room.yaml");
        let robot = |rate: u32| {
            format!(
                "bodies: [{{name: base, type: dynamic, footprints: [{{type: circle, radius: 0.3, density: 1}}]}}]\n\
                 plugins:\n  - {{type: DiffDrive, name: drive, body: base, pub_rate: {rate}, \
                 odom_pose_noise: [0.01, 0.01, 0.001], odom_twist_noise: [0.01, 0.01, 0.001], \
                 odom_error_mode: random_each_update, odom_error: [0.01, 0.01, 0.01]}}\n"
            )
        };
        std::fs::write(dir.join("fifty.model.yaml"), robot(50)).unwrap();
        std::fs::write(dir.join("hundred.model.yaml"), robot(100)).unwrap();
        let world = format!(
            "properties: {{step_size: 0.005}}\nlayers:\n  - {{name: walls, map: {:?}}}\nmodels:\n  \
             - {{name: r1, namespace: r1, model: fifty.model.yaml, pose: [2, 2, 0]}}\n  \
             - {{name: r2, namespace: r2, model: hundred.model.yaml, pose: [6, 6, 1]}}\n",
            map.display()
        );
        std::fs::write(dir.join("world.yaml"), world).unwrap();
        let description = load_world(&dir.join("world.yaml")).unwrap().initial_description().unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        description
    }

    fn server(description: &WorldDescription, keys: &Keys) -> OdomServer {
        let mut server = OdomServer::default();
        server.rebuild(&mut Rebuild::new(description, keys, &|_, _| true));
        server
    }

    /// Every message the server publishes over `steps` steps of both robots
    /// driving arcs, fed the states at multiples of `stride` only.
    fn outputs(
        description: &WorldDescription,
        server: &mut OdomServer,
        steps: u64,
        stride: u64,
    ) -> Vec<(String, Vec<u8>)> {
        let mut out = Outbox::default();
        let mut published = Vec::new();
        for step in (0..steps).filter(|s| s % stride == 0) {
            let mut state = WorldState::at_rest(description, step);
            let t = step as f64 * 0.005;
            for (i, body) in state.bodies.iter_mut().enumerate() {
                let r = 1.0 + i as f64;
                body.pose = Pose2::new(4.0 + r * (0.3 * t).cos(), 4.0 + r * (0.3 * t).sin(), 0.3 * t + 1.6);
                body.twist =
                    Twist2 { vx_mps: -0.3 * r * (0.3 * t).sin(), vy_mps: 0.3 * r * (0.3 * t).cos(), omega_radps: 0.3 };
            }
            server.on_state(&state, &mut out);
            published.extend(out.drain());
        }
        published
    }

    #[test]
    fn odometry_needs_only_the_states_of_its_updates_and_gives_the_same_bytes_from_them() {
        let description = two_robots();
        let keys = Keys::new("stride");
        let (mut every, mut thinned) = (server(&description, &keys), server(&description, &keys));
        // 50 Hz is every 4th 5 ms step, 100 Hz every 2nd: both are due at
        // multiples of 2 steps.
        assert_eq!(thinned.state_stride(description.step_ns), 2);
        let from_every = outputs(&description, &mut every, 400, 1);
        let from_thinned = outputs(&description, &mut thinned, 400, 2);
        // 2 s: 100 + 200 updates, each with odometry, ground truth and
        // twist; one tf message per step where either robot is due.
        let count = |topic: &str| from_every.iter().filter(|(key, _)| key == topic).count();
        assert_eq!(count("r1/odometry/filtered"), 100);
        assert_eq!(count("r2/odometry/filtered"), 200);
        assert_eq!(count("r2/twist"), 200);
        assert_eq!(count("tf"), 200);
        assert!(from_every == from_thinned, "the same messages, byte for byte");
    }

    #[test]
    fn a_rate_that_is_no_whole_number_of_steps_or_every_step_keeps_every_state() {
        let description = two_robots();
        let mut server = server(&description, &Keys::new("stride"));
        assert_eq!(server.state_stride(3_000_000), 1, "20 ms is no whole number of 3 ms steps");
        server.instances.clear();
        assert_eq!(server.state_stride(description.step_ns), 1, "nothing served: every state");
    }

    #[test]
    fn a_moment_s_tf_message_holds_its_own_transforms_only_whatever_came_before() {
        let transform = |stamp: i32, parent: &str, child: &str| TransformStamped {
            header: Header {
                stamp: flotilla_messages::builtin_interfaces::Time { sec: stamp, nanosec: 0 },
                frame_id: parent.into(),
            },
            child_frame_id: child.into(),
            transform: Default::default(),
        };
        let (odom_base, map_odom) = (transform(1, "odom", "r1_base"), transform(1, "map", "odom"));
        let long = transform(2, "a_much_longer_parent_frame", "and_child_frame");
        let mut tf = KeptTransforms::default();
        for moment in [vec![&odom_base, &map_odom], vec![&long], vec![], vec![&map_odom, &long, &odom_base]] {
            tf.clear();
            moment.iter().for_each(|t| tf.push(t));
            assert_eq!(tf.message.transforms, moment.into_iter().cloned().collect::<Vec<_>>());
        }
    }
}
