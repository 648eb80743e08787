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

use flotilla_messages::geometry_msgs::{Quaternion, Transform, TransformStamped, Vector3};
use flotilla_messages::sensor_msgs::{PointCloud2, Range};
use flotilla_messages::std_msgs::Header;
use flotilla_plugins::sonar::{SonarConfig, SonarMode};
use flotilla_wire::geometry::Pose2;
use flotilla_wire::names::resolve_frame;
use flotilla_wire::time::SimTime;
use flotilla_wire::update_timer::UpdateTimer;
use flotilla_wire::world_to_nodes::BodyId;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::raycast::ScanBuffers;
use crate::raycast::{circle_rays, Shape};
use crate::scene::Scene;

/// Cell size of the walls a sonar casts at, m. A ring casts short single
/// rays from many origins, not fans: in warehouse-1000-pioneer the sonar
/// process used 0.44 CPU s per 5 sim s with the laser's 0.1 m cells, 0.35
/// with 0.2 m, 0.27 with 0.8 m and 1.6 m, 0.29 with 3.2 m; on the office
/// map's pixel outlines 0.05–0.8 m made no difference.
pub const WALL_CELL_M: f64 = 0.8;

/// One sonar ring.
///
/// A thousand rings are read in turn at each of their updates, so what a
/// reading touches is kept together: one table of mounts and one of ray
/// directions per ring, results as plain numbers. The ROS messages are
/// filled from them only when someone listens ([`Sonar::readings`],
/// [`Sonar::cloud`]), and the footprints gathered near the ring go into
/// buffers the caller shares between rings.
#[derive(Debug)]
pub struct Sonar {
    config: SonarConfig,
    timer: UpdateTimer,
    rng: Xoshiro256PlusPlus,
    /// The transducers as a reading needs them.
    mounts: Vec<Mount>,
    /// The unit directions of every transducer's rays in the body frame,
    /// transducer by transducer (see [`Mount::rays`]).
    ray_dirs: Vec<[f64; 2]>,
    /// How far from the body's origin anything seen can be, m.
    reach_m: f64,
    /// The rays of the reading under way in the world frame, as arrays
    /// (origins, directions, ranges) and each ray's nearest hit so far
    /// (∞: none): the footprints are tested ray array by ray array.
    rays: RayArrays,
    /// The latest reading of each transducer.
    latest: Vec<Reading>,
    /// When the latest readings were taken.
    stamp: SimTime,
    /// The ROS messages, one per transducer (filled from `latest` when asked for).
    readings: Vec<Range>,
    /// The latest hits in the body frame (filled from `latest` when asked for).
    cloud: PointCloud2,
}

/// A transducer as a reading needs it.
#[derive(Debug, Clone)]
struct Mount {
    /// Position on the body, m.
    offset: [f64; 2],
    /// Its axis (cos, sin of its heading) in the body frame, for placing
    /// its hit in the cloud without a sin/cos a hit.
    axis: [f64; 2],
    min_range_m: f64,
    max_range_m: f64,
    /// Its rays in [`Sonar::ray_dirs`].
    rays: std::ops::Range<usize>,
}

/// A reading's rays, component by component.
#[derive(Debug, Default)]
struct RayArrays {
    ox: Vec<f64>,
    oy: Vec<f64>,
    dx: Vec<f64>,
    dy: Vec<f64>,
    range: Vec<f64>,
    nearest: Vec<f64>,
}

impl RayArrays {
    fn with_len(n: usize) -> RayArrays {
        let v = || vec![0.0; n];
        RayArrays { ox: v(), oy: v(), dx: v(), dy: v(), range: v(), nearest: v() }
    }
}

/// One transducer's latest reading.
#[derive(Debug, Clone, Copy, Default)]
struct Reading {
    /// Range reported (noise added, within the transducer's limits), m.
    range_m: f64,
    /// Whether something was within range (else `range_m` is the maximum).
    hit: bool,
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
        let mut ray_dirs = Vec::new();
        let mounts = config
            .transducers
            .iter()
            .map(|t| {
                let offsets = match config.mode {
                    SonarMode::Single => vec![0.0],
                    SonarMode::ClosestRay { resolution_rad } => cone_rays(t.field_of_view_rad, resolution_rad),
                };
                let first = ray_dirs.len();
                ray_dirs
                    .extend(offsets.iter().map(|offset| (t.pose.theta_rad + offset).sin_cos()).map(|(s, c)| [c, s]));
                let (sin, cos) = t.pose.theta_rad.sin_cos();
                Mount {
                    offset: [t.pose.x_m, t.pose.y_m],
                    axis: [cos, sin],
                    min_range_m: t.min_range_m,
                    max_range_m: t.max_range_m,
                    rays: first..ray_dirs.len(),
                }
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
        let latest = config.transducers.iter().map(|t| Reading { range_m: t.max_range_m, hit: false }).collect();
        let cloud_header = Header { stamp: Default::default(), frame_id: resolve_frame(namespace, &config.body) };
        let rays = RayArrays::with_len(ray_dirs.len());
        Sonar {
            timer: UpdateTimer::new(config.update_rate_hz),
            rays,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            mounts,
            ray_dirs,
            reach_m,
            latest,
            stamp: SimTime::default(),
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

    /// Its update period, ns (`UpdateTimer::period_ns`).
    pub fn period_ns(&self) -> Option<u64> {
        self.timer.period_ns()
    }

    /// Steps after `now_ns` until readings are next due (1: the next step).
    pub fn steps_until_due(&self, now_ns: u64, step_ns: u64) -> u64 {
        self.timer.steps_until_due(now_ns, step_ns)
    }

    /// Reads every transducer with its body `own` at `body` in `scene`,
    /// at `stamp`, gathering the footprints near the ring into `buffers`
    /// (any, shared between rings); then see [`Sonar::readings`] and
    /// [`Sonar::cloud`].
    pub fn sense(&mut self, scene: &Scene, buffers: &mut ScanBuffers, own: BodyId, body: Pose2, stamp: SimTime) {
        let layers = self.config.layers;
        scene.prepare_without([body.x_m, body.y_m], self.reach_m, layers, Some(own), buffers);
        self.stamp = stamp;
        // One rotation for the whole ring: the rays' directions were turned
        // into the body frame once, at start.
        let (sin, cos) = body.theta_rad.sin_cos();
        let to_world = |[x, y]: [f64; 2]| [cos * x - sin * y, sin * x + cos * y];
        // Each ray's origin, direction and nearest wall.
        let rays = &mut self.rays;
        for mount in &self.mounts {
            let [dx, dy] = to_world(mount.offset);
            let origin = [body.x_m + dx, body.y_m + dy];
            for i in mount.rays.clone() {
                let dir = to_world(self.ray_dirs[i]);
                (rays.ox[i], rays.oy[i], rays.dx[i], rays.dy[i]) = (origin[0], origin[1], dir[0], dir[1]);
                rays.range[i] = mount.max_range_m;
                rays.nearest[i] =
                    scene.cast_walls(origin, dir, mount.max_range_m, layers).map_or(f64::INFINITY, |h| h.distance_m);
            }
        }
        // Then each footprint gathered near the ring against every ray:
        // the same nearest hits as casting ray by ray (`Scene::cast`), in
        // tight loops over the ring's rays.
        for (shape, _) in &buffers.footprints {
            match shape {
                Shape::Circle { center, radius } => circle_rays(
                    *center,
                    *radius,
                    &rays.ox,
                    &rays.oy,
                    &rays.dx,
                    &rays.dy,
                    &rays.range,
                    &mut rays.nearest,
                ),
                Shape::Polygon(polygon) => {
                    for i in 0..rays.nearest.len() {
                        let (origin, dir) = ([rays.ox[i], rays.oy[i]], [rays.dx[i], rays.dy[i]]);
                        if let Some(t) = polygon.ray(origin, dir, rays.range[i]) {
                            rays.nearest[i] = rays.nearest[i].min(t);
                        }
                    }
                }
            }
        }
        let noise_m = self.config.noise_m;
        for (mount, latest) in self.mounts.iter().zip(&mut self.latest) {
            let nearest_m = rays.nearest[mount.rays.clone()].iter().copied().fold(f64::INFINITY, f64::min);
            // Drawn for every transducer at every reading, hit or not, so
            // that the stream does not depend on what is seen.
            let error_m = if noise_m > 0.0 { self.rng.gen_range(-noise_m..=noise_m) } else { 0.0 };
            let (min, max) = (mount.min_range_m, mount.max_range_m);
            let hit = nearest_m <= max;
            let range_m = if hit { (nearest_m + error_m).clamp(min, max) } else { max };
            *latest = Reading { range_m, hit };
        }
    }

    /// The latest reading of each transducer.
    pub fn readings(&mut self) -> &[Range] {
        let stamp = self.stamp.to_ros();
        for (message, latest) in self.readings.iter_mut().zip(&self.latest) {
            message.header.stamp = stamp;
            message.range = latest.range_m as f32;
        }
        &self.readings
    }

    /// The latest hits as points in the body frame.
    pub fn cloud(&mut self) -> &PointCloud2 {
        self.cloud.header.stamp = self.stamp.to_ros();
        self.cloud.data.clear();
        for (mount, latest) in self.mounts.iter().zip(&self.latest).filter(|(_, latest)| latest.hit) {
            // On the transducer's axis: a sonar knows the distance, not the angle.
            // (`Pose2::transform_point` of (range, 0), to the same bits.)
            let [ax, ay] = mount.axis;
            let (x, y) = (mount.offset[0] + ax * latest.range_m, mount.offset[1] + ay * latest.range_m);
            for v in [x as f32, y as f32, 0.0f32] {
                self.cloud.data.extend_from_slice(&v.to_le_bytes());
            }
        }
        self.cloud.fit_row_to_data();
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
