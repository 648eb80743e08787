//! Flatland's Laser as a model: beams from a mount on a body, cast into a
//! [`Scene`], with Gaussian range noise from a seeded generator.

pub mod node;

use flotilla_messages::geometry_msgs::{Quaternion, Transform, TransformStamped, Vector3};
use flotilla_messages::sensor_msgs::{LaserScan, LaserScanView};
use flotilla_messages::std_msgs::Header;
use flotilla_plugins::laser::LaserConfig;
use flotilla_wire::geometry::Pose2;
use flotilla_wire::names::resolve_frame;
use flotilla_wire::time::SimTime;
use flotilla_wire::update_timer::UpdateTimer;
use std::sync::Arc;

use rand::SeedableRng;
use rand_distr::{Distribution, Normal};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::raycast::{Fan, ScanBuffers};
use crate::scene::Scene;

/// One laser plugin instance.
pub struct Laser {
    config: LaserConfig,
    /// Beam directions in the laser frame (unit vectors), computed once,
    /// and shared by lasers whose beams are the same (see
    /// [`Laser::share_beams`]).
    beams: Arc<[[f64; 2]]>,
    timer: UpdateTimer,
    rng: Xoshiro256PlusPlus,
    noise: Option<Normal<f64>>,
    reflectance_bits: u16,
    ranges: Vec<f32>,
    intensities: Vec<f32>,
}

/// Working memory of scans, reused from one scan to the next, so that a
/// scan allocates nothing. One per thread, shared by every laser scanned
/// there rather than one per laser: a thread scanning a thousand lasers in
/// turn then finds it in its cache (a thousand copies of it, 60 kB each
/// for a 1081-beam laser, were not).
#[derive(Debug, Default)]
pub struct ScanScratch {
    /// The beams' directions in the world.
    world_dirs: Vec<[f64; 2]>,
    buffers: ScanBuffers,
}

impl Laser {
    /// A laser with its noise seeded from `seed` (see
    /// `flotilla_wire::seed::plugin_seed`). `reflectance_bits` are the
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
            beams,
            config,
        }
    }

    /// Takes the beam directions of the first of `others` whose beams are
    /// the same as this laser's, so that a fleet of like lasers reads one
    /// table at each scan, which stays in the cache, instead of one each.
    pub fn share_beams<'a>(&mut self, others: impl IntoIterator<Item = &'a Laser>) {
        if let Some(other) = others.into_iter().find(|other| other.beams == self.beams) {
            self.beams = other.beams.clone();
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
    /// (see [`Scene::scan`]), with working memory made for this scan: for
    /// a single scan. A node scanning many lasers keeps one
    /// [`ScanScratch`] per thread and calls [`Laser::scan_with`].
    pub fn scan(&mut self, scene: &Scene, body_pose: Pose2) -> &[f32] {
        self.scan_with(scene, body_pose, &mut ScanScratch::default())
    }

    /// [`Laser::scan`] with working memory kept by the caller (one per
    /// thread; see [`ScanScratch`]).
    pub fn scan_with(&mut self, scene: &Scene, body_pose: Pose2, scratch: &mut ScanScratch) -> &[f32] {
        let ScanScratch { world_dirs, buffers } = scratch;
        let mount = body_pose.compose(&self.config.origin);
        let origin = [mount.x_m, mount.y_m];
        let (s, c) = mount.theta_rad.sin_cos();
        let range = self.config.range_m;
        let layers = self.config.layers;
        scene.prepare(origin, range, layers, buffers);
        world_dirs.clear();
        world_dirs.extend(self.beams.iter().map(|l| [c * l[0] - s * l[1], s * l[0] + c * l[1]]));
        // Beam i points at mount angle + (angle_min + i·increment), mirrored
        // when upside down.
        let (start, increment) = if self.config.upside_down {
            (mount.theta_rad - self.config.angle_min_rad, -self.config.angle_increment_rad)
        } else {
            (mount.theta_rad + self.config.angle_min_rad, self.config.angle_increment_rad)
        };
        let fan = Fan { origin, start_rad: start, increment_rad: increment, dirs: world_dirs, range_m: range, layers };
        scene.scan(&fan, buffers);
        if scene.has_reflectors() && self.intensities.is_empty() {
            self.intensities = vec![0.0; self.beams.len()];
        }
        // A noise sample for each beam that hit, in beam order. The loops
        // are apart so that the one without noise (or intensities) runs
        // on whole vectors.
        let best = &buffers.best[..self.ranges.len()];
        match self.noise {
            Some(noise) => {
                for (r, &distance) in self.ranges.iter_mut().zip(best) {
                    *r = if distance <= range { (distance + noise.sample(&mut self.rng)) as f32 } else { f32::NAN };
                }
            }
            None => {
                for (r, &distance) in self.ranges.iter_mut().zip(best) {
                    *r = if distance <= range { distance as f32 } else { f32::NAN };
                }
            }
        }
        for (i, v) in self.intensities.iter_mut().enumerate() {
            let distance = best[i];
            let bright = distance <= range
                && (buffers.bits[i] & self.reflectance_bits != 0
                    || scene.hit_reflector(origin, world_dirs[i], distance, layers));
            *v = if bright { 255.0 } else { 0.0 };
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

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_plugins::PluginContext;

    fn laser(angles: &str) -> Laser {
        let layers = ["walls".to_string()];
        let ctx = PluginContext::single_body(std::path::Path::new("robot.model.yaml"), "robot", "base", &layers);
        let entry =
            serde_yaml::from_str(&format!("{{type: Laser, name: laser, body: base, range: 5, angle: {angles}}}"));
        Laser::new(LaserConfig::parse(&entry.unwrap(), "laser", &ctx).unwrap(), 1, 0)
    }

    #[test]
    fn like_lasers_share_one_table_of_beams_and_others_keep_their_own() {
        let angles = "{min: -1.5, max: 1.5, increment: 0.01}";
        let (first, other) = (laser(angles), laser("{min: -1.5, max: 1.5, increment: 0.02}"));
        let mut like = laser(angles);
        like.share_beams([&other, &first]);
        assert!(Arc::ptr_eq(&like.beams, &first.beams));
        let mut unlike = laser("{min: -1.0, max: 1.0, increment: 0.01}");
        unlike.share_beams([&other, &first]);
        assert!(!Arc::ptr_eq(&unlike.beams, &first.beams) && !Arc::ptr_eq(&unlike.beams, &other.beams));
        assert_eq!(unlike.beams.len(), 201);
    }
}
