//! The laser node's logic: every selected `Laser` instance, scanned when due.

use flotilla_messages::{geometry_msgs::TransformStamped, std_msgs::Header};
use flotilla_plugins::laser::LaserConfig;
use flotilla_plugins::registry::Role;
use flotilla_plugins::Configured;
use flotilla_wire::names::resolve_topic;
use flotilla_wire::seed::plugin_seed;
use flotilla_wire::time::SimTime;
use flotilla_wire::world_to_nodes::{BodyId, WorldState};

use super::{Laser, ScanScratch};
use crate::crew::Crew;
use crate::scene::{Scene, Sensing};
use flotilla_node_kit::runtime::{steps_before_first_due, stride_of, NodePlugin, Outbox, Rebuild};

struct Instance {
    key: String,
    body: BodyId,
    namespace: String,
    scan_key: String,
    /// The scans' header: the frame resolved once, the stamp set per scan.
    header: Header,
    laser: Laser,
    /// This step's scan message, once computed; None when no scan is due.
    message: Option<Vec<u8>>,
}

impl Instance {
    /// Scans from the body's pose in `scene` if a scan is marked due.
    fn scan_if_due(&mut self, scene: &Scene, stamp: SimTime, scratch: &mut ScanScratch) {
        let Some(message) = &mut self.message else { return };
        let Some(pose) = scene.body_pose(self.body) else {
            self.message = None;
            return;
        };
        self.laser.scan_with(scene, pose, scratch);
        self.header.stamp = stamp.to_ros();
        *message = self.laser.view(&self.header).to_cdr();
    }
}

/// Serves `Laser` plugin instances.
pub struct LaserServer {
    scene: Option<Scene>,
    instances: Vec<Instance>,
    /// The scanning threads beside the node's own, if any.
    crew: Option<Crew<ScanContext, Instance, ScanScratch>>,
    /// The working memory of scans on the node's own thread.
    scratch: ScanScratch,
}

/// What every scanning thread reads at a step.
type ScanContext = (Scene, SimTime);

fn scan_if_due(context: &ScanContext, instance: &mut Instance, scratch: &mut ScanScratch) {
    instance.scan_if_due(&context.0, context.1, scratch);
}

impl Default for LaserServer {
    /// One scanning thread per core.
    fn default() -> LaserServer {
        LaserServer::with_threads(std::thread::available_parallelism().map_or(1, |n| n.get()))
    }
}

impl LaserServer {
    /// A server whose scans due at one step are split over `threads`
    /// threads (at least one).
    pub fn with_threads(threads: usize) -> LaserServer {
        LaserServer {
            scene: None,
            instances: Vec::new(),
            crew: scanning_crew(threads.max(1) - 1),
            scratch: ScanScratch::default(),
        }
    }
}

/// `helpers` scanning threads, none for 0. Without them (the OS refused
/// the threads) the node's own thread scans alone.
fn scanning_crew(helpers: usize) -> Option<Crew<ScanContext, Instance, ScanScratch>> {
    if helpers == 0 {
        return None;
    }
    Crew::new(helpers, "scan", scan_if_due)
        .inspect_err(|e| tracing::warn!("no scanning threads ({e}): scanning on one thread"))
        .ok()
}

impl NodePlugin for LaserServer {
    fn role(&self) -> &'static Role {
        &LaserConfig::ROLE
    }

    fn rebuild(&mut self, rebuild: &mut Rebuild<'_>) {
        let (description, keys) = (rebuild.description, rebuild.keys);
        Scene::follow(&mut self.scene, description, None, Sensing::Laser);
        let reflectance = description.layer_bits(&["reflectance".to_string()]).unwrap_or(0);
        let mut old: Vec<Instance> = std::mem::take(&mut self.instances);
        for Configured { model, plugin, key, body, config } in rebuild.configured::<LaserConfig>() {
            // Keep a running instance (its timer and noise stream) when it is unchanged.
            if let Some(pos) = old.iter().position(|i| i.key == key && i.body == body && *i.laser.config() == config) {
                self.instances.push(old.swap_remove(pos));
                continue;
            }
            let scan_key = keys.ros(&resolve_topic(&model.namespace, &config.topic));
            tracing::info!("serving Laser {key}: {} beams on {scan_key}", config.beam_count());
            let seed = plugin_seed(description.seed, &model.name, &plugin.name);
            let mut laser = Laser::new(config, seed, reflectance);
            laser.share_beams(self.instances.iter().chain(&old).map(|i| &i.laser));
            self.instances.push(Instance {
                key,
                body,
                header: laser.header(SimTime::default(), &model.namespace),
                namespace: model.namespace.clone(),
                scan_key,
                laser,
                message: None,
            });
        }
    }

    fn reset(&mut self) {
        self.scene = None;
        self.instances.clear();
    }

    fn set_threads(&mut self, threads: usize) {
        self.crew = scanning_crew(threads.max(1) - 1);
    }

    fn steps_without_output(&self, state: &WorldState) -> u64 {
        steps_before_first_due(self.instances.iter().map(|i| i.laser.steps_until_due(state.time.nanos, state.step_ns)))
    }

    /// Its outputs are due only at multiples of their periods.
    fn state_stride(&self, step_ns: u64) -> u64 {
        stride_of(self.instances.iter().map(|i| i.laser.period_ns()), step_ns)
    }

    /// Scans every laser due at this step. Scans only read the scene, so
    /// when several are due they are shared out over the server's threads
    /// (see [`Crew`]). Each laser keeps its own noise stream and the
    /// messages go out in instance order, so the output does not depend on
    /// the number of threads.
    fn on_state(&mut self, state: &WorldState, out: &mut Outbox) {
        let Some(mut scene) = self.scene.take() else { return };
        scene.update(state);
        let mut due = 0;
        for instance in &mut self.instances {
            let is_due = instance.laser.due(state.time.nanos, state.step_ns);
            instance.message = is_due.then(Vec::new);
            due += usize::from(is_due);
        }
        let scene = match &self.crew {
            Some(crew) if due > 1 => {
                // The scene and the instances go to the crew for the step
                // and come back (moved, not copied).
                let instances = std::mem::take(&mut self.instances);
                let ((scene, _), instances) = crew.run((scene, state.time), instances, &mut self.scratch);
                self.instances = instances;
                scene
            }
            _ => {
                self.instances.iter_mut().for_each(|i| i.scan_if_due(&scene, state.time, &mut self.scratch));
                scene
            }
        };
        self.scene = Some(scene);
        for instance in &mut self.instances {
            if let Some(message) = instance.message.take() {
                out.put(instance.scan_key.clone(), message);
            }
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
