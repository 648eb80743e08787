//! AMRISim's ranger model (its sonar) as a model: a ring of transducers on
//! a body, each with its own pose, range limits and cone.
//!
//! In the default mode a transducer casts one ray along its axis; in
//! "closest ray" mode it casts rays across its cone every
//! `closest_ray_resolution` and keeps the nearest hit. A hit reads its
//! distance plus a uniform error within ±`noise`, kept within
//! [min_range, max_range] (an object nearer than min_range reads
//! min_range); nothing within max_range reads max_range, which is what
//! Nav2's range layer takes as a clear cone. The sonar sees walls and the
//! footprints of other bodies on its layers, never its own body's.

pub mod node;

use flotilla_protocol::geometry::Pose2;
use flotilla_protocol::names::resolve_frame;
use flotilla_protocol::plugins::sonar::{SonarConfig, SonarMode};
use flotilla_protocol::ros::geometry_msgs::{Quaternion, Transform, TransformStamped, Vector3};
use flotilla_protocol::ros::sensor_msgs::{PointCloud2, Range};
use flotilla_protocol::ros::std_msgs::Header;
use flotilla_protocol::time::SimTime;
use flotilla_protocol::update_timer::UpdateTimer;
use flotilla_protocol::world_to_nodes::BodyId;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::raycast::ScanBuffers;
use crate::scene::Scene;

/// Cell size of the walls a sonar casts at, m. A ring casts short single
/// rays from many origins, not fans: in warehouse-1000-pioneer the sonar
/// process used 0.44 CPU s per 5 sim s with the laser's 0.1 m cells, 0.35
/// with 0.2 m, 0.27 with 0.8 m and 1.6 m, 0.29 with 3.2 m; on the office
/// map's pixel outlines 0.05–0.8 m made no difference (BENCHMARKS.md).
pub const WALL_CELL_M: f64 = 0.8;

/// One sonar ring.
#[derive(Debug)]
pub struct Sonar {
    config: SonarConfig,
    timer: UpdateTimer,
    rng: Xoshiro256PlusPlus,
    /// Per transducer, the unit directions of its rays in the body frame.
    rays: Vec<Vec<[f64; 2]>>,
    /// Per transducer, its axis (cos, sin of its heading) in the body
    /// frame, for placing its hit in the cloud without a sin/cos a hit.
    axes: Vec<[f64; 2]>,
    /// How far from the body's origin anything seen can be, m.
    reach_m: f64,
    buffers: ScanBuffers,
    /// The latest readings, one message per transducer.
    readings: Vec<Range>,
    /// The latest hits in the body frame.
    cloud: PointCloud2,
}

/// Ray angles across a cone of `fov_rad` every at most `resolution_rad`,
/// both edges included; one ray on the axis for a cone of zero width.
fn cone_rays(fov_rad: f64, resolution_rad: f64) -> Vec<f64> {
    if fov_rad <= 0.0 {
        return vec![0.0];
    }
    // Less a hair, so that a cone of exactly k resolutions (30° at 6°) gets
    // k gaps however the division rounds.
    let gaps = (fov_rad / resolution_rad - 1e-9).ceil().max(1.0) as usize;
    (0..=gaps).map(|k| -fov_rad / 2.0 + fov_rad * k as f64 / gaps as f64).collect()
}

impl Sonar {
    /// A ring of a model in `namespace`, its noise drawn from `seed`.
    pub fn new(config: SonarConfig, namespace: &str, seed: u64) -> Sonar {
        let rays = config
            .transducers
            .iter()
            .map(|t| {
                let offsets = match config.mode {
                    SonarMode::Single => vec![0.0],
                    SonarMode::ClosestRay { resolution_rad } => cone_rays(t.field_of_view_rad, resolution_rad),
                };
                offsets.iter().map(|offset| (t.pose.theta_rad + offset).sin_cos()).map(|(s, c)| [c, s]).collect()
            })
            .collect();
        let reach_m =
            config.transducers.iter().map(|t| t.pose.x_m.hypot(t.pose.y_m) + t.max_range_m).fold(0.0, f64::max);
        // Uniform within ±noise: a variance of noise² / 3 (0: unknown, for none).
        let variance = (config.noise_m * config.noise_m / 3.0) as f32;
        let readings = config
            .transducers
            .iter()
            .enumerate()
            .map(|(i, t)| Range {
                header: Header {
                    stamp: Default::default(),
                    frame_id: resolve_frame(namespace, &config.transducer_frame(i)),
                },
                radiation_type: Range::ULTRASOUND,
                field_of_view: t.field_of_view_rad as f32,
                min_range: t.min_range_m as f32,
                max_range: t.max_range_m as f32,
                range: t.max_range_m as f32,
                variance,
            })
            .collect();
        let cloud_header = Header { stamp: Default::default(), frame_id: resolve_frame(namespace, &config.body) };
        let axes = config
            .transducers
            .iter()
            .map(|t| {
                let (sin, cos) = t.pose.theta_rad.sin_cos();
                [cos, sin]
            })
            .collect();
        Sonar {
            timer: UpdateTimer::new(config.update_rate_hz),
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            rays,
            axes,
            reach_m,
            buffers: ScanBuffers::default(),
            readings,
            cloud: PointCloud2::xyz(cloud_header, []),
            config,
        }
    }

    /// Its parameters.
    pub fn config(&self) -> &SonarConfig {
        &self.config
    }

    /// Whether readings are due at `now_ns` (and if so, the timer moves on).
    pub fn due(&mut self, now_ns: u64, step_ns: u64) -> bool {
        self.timer.check(now_ns, step_ns)
    }

    /// Steps after `now_ns` until readings are next due (1: the next step).
    pub fn steps_until_due(&self, now_ns: u64, step_ns: u64) -> u64 {
        self.timer.steps_until_due(now_ns, step_ns)
    }

    /// Reads every transducer with its body `own` at `body` in `scene`;
    /// the readings and the cloud are then in [`Sonar::readings`] and
    /// [`Sonar::cloud`], stamped `stamp`.
    pub fn sense(&mut self, scene: &Scene, own: BodyId, body: Pose2, stamp: SimTime) {
        let layers = self.config.layers;
        scene.prepare_without([body.x_m, body.y_m], self.reach_m, layers, Some(own), &mut self.buffers);
        self.cloud.data.clear();
        let stamp = stamp.to_ros();
        // One rotation for the whole ring: the rays' directions were turned
        // into the body frame once, at start.
        let (sin, cos) = body.theta_rad.sin_cos();
        let to_world = |[x, y]: [f64; 2]| [cos * x - sin * y, sin * x + cos * y];
        for (i, transducer) in self.config.transducers.iter().enumerate() {
            let [dx, dy] = to_world([transducer.pose.x_m, transducer.pose.y_m]);
            let origin = [body.x_m + dx, body.y_m + dy];
            let mut nearest_m = f64::INFINITY;
            for &dir in &self.rays[i] {
                if let Some(hit) = scene.cast(&self.buffers, origin, to_world(dir), transducer.max_range_m, layers) {
                    nearest_m = nearest_m.min(hit.distance_m);
                }
            }
            // Drawn for every transducer at every reading, hit or not, so
            // that the stream does not depend on what is seen.
            let error_m = if self.config.noise_m > 0.0 {
                self.rng.gen_range(-self.config.noise_m..=self.config.noise_m)
            } else {
                0.0
            };
            let (min, max) = (transducer.min_range_m, transducer.max_range_m);
            let range_m = if nearest_m <= max { (nearest_m + error_m).clamp(min, max) } else { max };
            let reading = &mut self.readings[i];
            reading.header.stamp = stamp;
            reading.range = range_m as f32;
            if nearest_m <= max {
                // On the transducer's axis: a sonar knows the distance, not the angle.
                // (`Pose2::transform_point` of (range, 0), to the same bits.)
                let [ax, ay] = self.axes[i];
                let (x, y) = (transducer.pose.x_m + ax * range_m, transducer.pose.y_m + ay * range_m);
                for v in [x as f32, y as f32, 0.0f32] {
                    self.cloud.data.extend_from_slice(&v.to_le_bytes());
                }
            }
        }
        self.cloud.header.stamp = stamp;
        self.cloud.fit_row_to_data();
    }

    /// The latest reading of each transducer.
    pub fn readings(&self) -> &[Range] {
        &self.readings
    }

    /// The latest hits as points in the body frame.
    pub fn cloud(&self) -> &PointCloud2 {
        &self.cloud
    }

    /// The transducers' mounts (body → transducer frame), for `tf_static`.
    pub fn mount_transforms(&self, namespace: &str) -> Vec<TransformStamped> {
        let parent = resolve_frame(namespace, &self.config.body);
        self.config
            .transducers
            .iter()
            .enumerate()
            .map(|(i, t)| TransformStamped {
                header: Header { stamp: Default::default(), frame_id: parent.clone() },
                child_frame_id: resolve_frame(namespace, &self.config.transducer_frame(i)),
                transform: Transform {
                    translation: Vector3 { x: t.pose.x_m, y: t.pose.y_m, z: 0.0 },
                    rotation: Quaternion::from_yaw(t.pose.theta_rad),
                },
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
