//! Flatland's Laser as a model: beams from a mount on a body, cast into a
//! [`Scene`], with Gaussian range noise from a seeded generator.

pub mod node;

use flotilla_protocol::geometry::Pose2;
use flotilla_protocol::names::resolve_frame;
use flotilla_protocol::plugins::laser::LaserConfig;
use flotilla_protocol::ros::geometry_msgs::{Quaternion, Transform, TransformStamped, Vector3};
use flotilla_protocol::ros::sensor_msgs::{LaserScan, LaserScanView};
use flotilla_protocol::ros::std_msgs::Header;
use flotilla_protocol::time::SimTime;
use flotilla_protocol::update_timer::UpdateTimer;
use rand::SeedableRng;
use rand_distr::{Distribution, Normal};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::raycast::{Fan, ScanBuffers};
use crate::scene::Scene;

/// One laser plugin instance.
pub struct Laser {
    config: LaserConfig,
    /// Beam directions in the laser frame (unit vectors), computed once.
    beams: Vec<[f64; 2]>,
    timer: UpdateTimer,
    rng: Xoshiro256PlusPlus,
    noise: Option<Normal<f64>>,
    reflectance_bits: u16,
    ranges: Vec<f32>,
    intensities: Vec<f32>,
    /// Per-scan working memory, reused: a scan allocates nothing.
    world_dirs: Vec<[f64; 2]>,
    buffers: ScanBuffers,
}

impl Laser {
    /// A laser with its noise seeded from `seed` (see
    /// `flotilla_protocol::seed::plugin_seed`). `reflectance_bits` are the
    /// bits of a layer named `reflectance`, whose hits report intensity 255,
    /// as do an ArMap's reflectors (with neither, no intensities are
    /// reported).
    pub fn new(config: LaserConfig, seed: u64, reflectance_bits: u16) -> Laser {
        let n = config.beam_count();
        let beams = (0..n)
            .map(|i| {
                let mut angle = config.angle_min_rad + i as f64 * config.angle_increment_rad;
                if config.upside_down {
                    // mounted upside down: the sweep is mirrored about the mount's x axis
                    angle = -angle;
                }
                [angle.cos(), angle.sin()]
            })
            .collect();
        let noise =
            (config.noise_std_dev_m > 0.0).then(|| Normal::new(0.0, config.noise_std_dev_m).expect("validated ≥ 0"));
        Laser {
            timer: UpdateTimer::new(config.update_rate_hz),
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            noise,
            reflectance_bits,
            ranges: vec![f32::NAN; n],
            intensities: if reflectance_bits != 0 { vec![0.0; n] } else { Vec::new() },
            world_dirs: Vec::with_capacity(n),
            buffers: ScanBuffers::default(),
            beams,
            config,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &LaserConfig {
        &self.config
    }

    /// Its update period, ns (`UpdateTimer::period_ns`).
    pub fn period_ns(&self) -> Option<u64> {
        self.timer.period_ns()
    }

    /// Steps after the one at `now_ns` until the next update is due.
    pub fn steps_until_due(&self, now_ns: u64, step_ns: u64) -> u64 {
        self.timer.steps_until_due(now_ns, step_ns)
    }

    /// Whether a scan is due at this step (marks it taken).
    pub fn due(&mut self, now_ns: u64, step_ns: u64) -> bool {
        self.timer.check(now_ns, step_ns)
    }

    /// Casts every beam from the laser mounted on a body at `body_pose`
    /// (see [`Scene::scan`]).
    pub fn scan(&mut self, scene: &Scene, body_pose: Pose2) -> &[f32] {
        let mount = body_pose.compose(&self.config.origin);
        let origin = [mount.x_m, mount.y_m];
        let (s, c) = mount.theta_rad.sin_cos();
        let range = self.config.range_m;
        let layers = self.config.layers;
        scene.prepare(origin, range, layers, &mut self.buffers);
        self.world_dirs.clear();
        self.world_dirs.extend(self.beams.iter().map(|l| [c * l[0] - s * l[1], s * l[0] + c * l[1]]));
        // Beam i points at mount angle + (angle_min + i·increment), mirrored
        // when upside down.
        let (start, increment) = if self.config.upside_down {
            (mount.theta_rad - self.config.angle_min_rad, -self.config.angle_increment_rad)
        } else {
            (mount.theta_rad + self.config.angle_min_rad, self.config.angle_increment_rad)
        };
        let fan =
            Fan { origin, start_rad: start, increment_rad: increment, dirs: &self.world_dirs, range_m: range, layers };
        scene.scan(&fan, &mut self.buffers);
        if scene.has_reflectors() && self.intensities.is_empty() {
            self.intensities = vec![0.0; self.beams.len()];
        }
        for i in 0..self.beams.len() {
            let distance = self.buffers.best[i];
            if distance <= range {
                let noise = self.noise.map_or(0.0, |n| n.sample(&mut self.rng));
                self.ranges[i] = (distance + noise) as f32;
                if let Some(v) = self.intensities.get_mut(i) {
                    let bright = self.buffers.bits[i] & self.reflectance_bits != 0
                        || scene.hit_reflector(origin, self.world_dirs[i], distance, layers);
                    *v = if bright { 255.0 } else { 0.0 };
                }
            } else {
                self.ranges[i] = f32::NAN;
                if let Some(v) = self.intensities.get_mut(i) {
                    *v = 0.0;
                }
            }
        }
        &self.ranges
    }

    /// The header of a scan taken at `stamp` by this laser on a model in
    /// `namespace`.
    pub fn header(&self, stamp: SimTime, namespace: &str) -> Header {
        Header { stamp: stamp.to_ros(), frame_id: resolve_frame(namespace, &self.config.frame) }
    }

    /// The last scan as a ROS message under `header` (see [`Laser::header`]),
    /// borrowing the laser's buffers: encoded as it is, nothing is copied.
    pub fn view<'a>(&'a self, header: &'a Header) -> LaserScanView<'a> {
        LaserScanView {
            header,
            angle_min: self.config.angle_min_rad as f32,
            angle_max: self.config.angle_max_rad as f32,
            angle_increment: self.config.angle_increment_rad as f32,
            time_increment: 0.0,
            scan_time: 0.0,
            range_min: 0.0,
            range_max: self.config.range_m as f32,
            ranges: &self.ranges,
            intensities: &self.intensities,
        }
    }

    /// The last scan as a ROS message of its own.
    pub fn message(&self, stamp: SimTime, namespace: &str) -> LaserScan {
        self.view(&self.header(stamp, namespace)).to_message()
    }

    /// The body → laser transform (rolled by π when upside down).
    pub fn mount_transform(&self, stamp: SimTime, namespace: &str) -> TransformStamped {
        let o = self.config.origin;
        let rotation = if self.config.upside_down {
            Quaternion::from_rpy(std::f64::consts::PI, 0.0, o.theta_rad)
        } else {
            Quaternion::from_yaw(o.theta_rad)
        };
        TransformStamped {
            header: Header { stamp: stamp.to_ros(), frame_id: resolve_frame(namespace, &self.config.body) },
            child_frame_id: resolve_frame(namespace, &self.config.frame),
            transform: Transform { translation: Vector3 { x: o.x_m, y: o.y_m, z: 0.0 }, rotation },
        }
    }
}
