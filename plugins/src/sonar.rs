//! The `Sonar` plugin: AMRISim's ranger model (a ring of transducers, each
//! with its own pose), served by `flotilla-sonar`.

use serde_yaml::Value;

use super::sonar_rings::RINGS;
use super::{check_rate, check_topic, PluginContext};
use crate::config::{LoadError, Reader};
use crate::role::Role;
use crate::topic::TopicSpec;
use flotilla_messages::sensor_msgs::{PointCloud2, Range};
use flotilla_wire::description::{layer_bits, LayerBits};
use flotilla_wire::geometry::Pose2;
use flotilla_wire::names::resolve_topic;

/// Most transducers on one sonar.
pub const MAX_TRANSDUCERS: usize = 256;

/// AMRISim's ranger defaults (`pioneerSonar`): 0.1 to 5 m, a 30° cone,
/// ±0.5 mm of range error, 10 readings per second (its client cycle).
pub const DEFAULT_MIN_RANGE_M: f64 = 0.1;
/// See [`DEFAULT_MIN_RANGE_M`].
pub const DEFAULT_MAX_RANGE_M: f64 = 5.0;
/// See [`DEFAULT_MIN_RANGE_M`].
pub const DEFAULT_FIELD_OF_VIEW_RAD: f64 = std::f64::consts::PI / 6.0;
/// See [`DEFAULT_MIN_RANGE_M`].
pub const DEFAULT_NOISE_M: f64 = 0.0005;
/// See [`DEFAULT_MIN_RANGE_M`].
pub const DEFAULT_UPDATE_RATE_HZ: f64 = 10.0;
/// AMRISim's `projection_res` for its "closest" mode: a ray every 6°.
pub const DEFAULT_CLOSEST_RAY_RESOLUTION_RAD: f64 = std::f64::consts::PI / 30.0;

/// One transducer of a ready-made ring, as AMRISim's model file gives it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SonarTransducer {
    /// Pose on the body: x (m), y (m), heading (degrees).
    pub pose: [f64; 3],
    /// Its view: min range (m), max range (m), field of view (degrees).
    pub view: [f64; 3],
}

/// A ready-made ring: the sonar of one of AMRISim's Pioneer models.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SonarRing {
    /// The model's name in AMRISim (`p3dx`, `p3at`, `peoplebot`, ...).
    pub model: &'static str,
    /// Range error, ± m.
    pub noise_m: f64,
    /// Its transducers, in AMRISim's order.
    pub transducers: &'static [SonarTransducer],
}

/// The ready-made ring of an AMRISim model, by name.
pub fn ring(model: &str) -> Option<&'static SonarRing> {
    RINGS.iter().find(|r| r.model == model)
}

/// How a transducer finds its range.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SonarMode {
    /// One ray along the transducer's axis (AMRISim's default, "single").
    Single,
    /// Rays across the field of view every `resolution_rad`, the nearest
    /// hit kept (AMRISim's "closest").
    ClosestRay {
        /// Angle between rays, rad.
        resolution_rad: f64,
    },
}

/// One transducer: where it is and what it can see.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Transducer {
    /// Pose on the body.
    pub pose: Pose2,
    /// Nearest range reported, m (a nearer object reads this).
    pub min_range_m: f64,
    /// Farthest range, m (reported when nothing is nearer).
    pub max_range_m: f64,
    /// Width of the cone, rad.
    pub field_of_view_rad: f64,
}

/// A validated `Sonar` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct SonarConfig {
    /// Plugin name.
    pub name: String,
    /// Body the ring is mounted on.
    pub body: String,
    /// The ready-made ring used, if any.
    pub ring: Option<String>,
    /// The transducers.
    pub transducers: Vec<Transducer>,
    /// How ranges are found.
    pub mode: SonarMode,
    /// Range error, uniform within ± this, m.
    pub noise_m: f64,
    /// Readings per sim second.
    pub update_rate_hz: f64,
    /// Layers the sonar sees.
    pub layers: LayerBits,
    /// Range topics, before namespacing: transducer i publishes on `<topic>/<i>`.
    pub topic: String,
    /// Point cloud topic, before namespacing (every hit in the body frame).
    pub pointcloud_topic: String,
    /// Frame prefix: transducer i's frame is `<frame>_<i>`.
    pub frame: String,
    /// Broadcast the body → transducer transforms (latched on `tf_static`).
    pub broadcast_tf: bool,
}

impl super::PluginConfig for SonarConfig {
    const TYPE: &'static str = "Sonar";
    const ROLES: &'static [Role] = &[SonarConfig::ROLE];
    const EXAMPLE: &'static str = "{type: Sonar, name: sonar, body: base, ring: p3dx}";
    fn parse(entry: &Value, name: &str, ctx: &PluginContext) -> Result<SonarConfig, LoadError> {
        SonarConfig::parse(entry, name, ctx)
    }
    fn body(&self) -> &str {
        &self.body
    }
    fn restrict_layers(&mut self, mask: LayerBits) {
        self.layers &= mask;
    }
    fn topics(&self, namespace: &str) -> Vec<TopicSpec> {
        let mut topics: Vec<TopicSpec> = (0..self.transducers.len())
            .map(|i| TopicSpec::publish::<Range>(resolve_topic(namespace, &self.range_topic(i))))
            .collect();
        topics.push(TopicSpec::publish::<PointCloud2>(resolve_topic(namespace, &self.pointcloud_topic)));
        if self.broadcast_tf {
            topics.push(TopicSpec::tf_static());
        }
        topics
    }
}

impl SonarConfig {
    /// `flotilla-sonar` ranges.
    pub const ROLE: Role = Role::sensor("Sonar", "flotilla-sonar", "sonar");

    /// The range topic of transducer `i`, before namespacing.
    pub fn range_topic(&self, i: usize) -> String {
        format!("{}/{i}", self.topic)
    }

    /// The frame of transducer `i`, before namespacing.
    pub fn transducer_frame(&self, i: usize) -> String {
        format!("{}_{i}", self.frame)
    }

    /// Parses and validates a `Sonar` entry.
    pub fn parse(entry: &Value, name: &str, ctx: &PluginContext) -> Result<SonarConfig, LoadError> {
        let r = ctx.reader(entry, name)?;
        let ring_name: Option<String> = r.maybe("ring")?;
        let ring = match &ring_name {
            Some(model) => Some(ring(model).ok_or_else(|| {
                let known: Vec<&str> = RINGS.iter().map(|r| r.model).collect();
                r.error(format!("no ready-made ring \"{model}\"; AMRISim's models with sonar are {}", known.join(", ")))
            })?),
            None => None,
        };
        let min_range_m: Option<f64> = r.maybe("min_range")?;
        let max_range_m: Option<f64> = r.maybe("max_range")?;
        let field_of_view_rad: Option<f64> = r.maybe("field_of_view")?;
        let poses = match r.seq("transducers")? {
            None => None,
            Some(items) => Some(read_poses(&r, items)?),
        };
        let mode_name = r.opt("mode", "single".to_string())?;
        let resolution_rad = r.opt("closest_ray_resolution", DEFAULT_CLOSEST_RAY_RESOLUTION_RAD)?;
        let noise_m = r.opt("noise", ring.map_or(DEFAULT_NOISE_M, |ring| ring.noise_m))?;
        let layer_names = r.opt_list("layers", vec!["all".to_string()], None, None)?;
        let config = SonarConfig {
            name: name.to_string(),
            body: r.req("body")?,
            ring: ring_name.clone(),
            transducers: Vec::new(),
            mode: SonarMode::Single,
            noise_m,
            update_rate_hz: r.opt("update_rate", DEFAULT_UPDATE_RATE_HZ)?,
            layers: 0,
            topic: r.opt("topic", "sonar".to_string())?,
            pointcloud_topic: r.opt("pointcloud_topic", "sonar_pointcloud2".to_string())?,
            frame: r.opt("frame", name.to_string())?,
            broadcast_tf: r.opt("broadcast_tf", true)?,
        };
        r.finish()?;
        let views = Views { min_range_m, max_range_m, field_of_view_rad };
        let transducers = transducers(&r, poses, ring, views)?;
        let mode = match mode_name.as_str() {
            "single" => SonarMode::Single,
            "closest_ray" => {
                if !(resolution_rad.is_finite() && resolution_rad > 0.0) {
                    return Err(r.error(format!("\"closest_ray_resolution\" must be > 0 rad, got {resolution_rad}")));
                }
                SonarMode::ClosestRay { resolution_rad }
            }
            other => return Err(r.error(format!("\"mode\" must be single or closest_ray, got \"{other}\""))),
        };
        if !noise_m.is_finite() || noise_m < 0.0 {
            return Err(r.error(format!("\"noise\" must be ≥ 0 m, got {noise_m}")));
        }
        ctx.check_body(&r, &config.body)?;
        check_topic(&r, "topic", &config.topic)?;
        check_topic(&r, "pointcloud_topic", &config.pointcloud_topic)?;
        check_rate(&r, "update_rate", config.update_rate_hz)?;
        if config.frame.is_empty() {
            return Err(r.error("\"frame\" must not be empty"));
        }
        let layers = layer_bits(ctx.layer_names, &layer_names)
            .map_err(|unknown| r.error(format!("layers {{{}}} do not exist", unknown.join(","))))?;
        Ok(SonarConfig { transducers, mode, layers, ..config })
    }
}

/// A `transducers` list: each entry `[x, y, yaw]` (m, m, rad).
fn read_poses(r: &Reader, items: &[Value]) -> Result<Vec<[f64; 3]>, LoadError> {
    let pose = |(i, item): (usize, &Value)| {
        let numbers: Option<Vec<f64>> = item.as_sequence().and_then(|s| s.iter().map(Value::as_f64).collect());
        match numbers.as_deref() {
            Some(&[x, y, yaw]) => Ok([x, y, yaw]),
            _ => Err(r.error(format!(
                "\"transducers\" index {i} must be [x, y, yaw] (m, m, rad), got {}",
                crate::config::describe(item)
            ))),
        }
    };
    items.iter().enumerate().map(pose).collect()
}

/// What an entry says of every transducer's view, overriding the defaults
/// or a ready-made ring's own.
struct Views {
    min_range_m: Option<f64>,
    max_range_m: Option<f64>,
    field_of_view_rad: Option<f64>,
}

/// The transducers: at the poses listed (with the entry's views or the
/// defaults), or a ready-made ring's (with its own views, each overridden
/// by the entry's); each view checked.
fn transducers(
    r: &Reader,
    poses: Option<Vec<[f64; 3]>>,
    ring: Option<&SonarRing>,
    views: Views,
) -> Result<Vec<Transducer>, LoadError> {
    let Views { min_range_m, max_range_m, field_of_view_rad } = views;
    let transducers = match (poses, ring) {
        (Some(poses), _) => {
            if poses.is_empty() || poses.len() > MAX_TRANSDUCERS {
                return Err(
                    r.error(format!("\"transducers\" must list 1 to {MAX_TRANSDUCERS} poses, got {}", poses.len()))
                );
            }
            let mut out = Vec::with_capacity(poses.len());
            for (i, &[x, y, yaw]) in poses.iter().enumerate() {
                let pose = Pose2::new(x, y, yaw);
                if !pose.is_finite() {
                    return Err(r.error(format!("\"transducers\" index {i} must be finite, got [{x}, {y}, {yaw}]")));
                }
                out.push(Transducer {
                    pose,
                    min_range_m: min_range_m.unwrap_or(DEFAULT_MIN_RANGE_M),
                    max_range_m: max_range_m.unwrap_or(DEFAULT_MAX_RANGE_M),
                    field_of_view_rad: field_of_view_rad.unwrap_or(DEFAULT_FIELD_OF_VIEW_RAD),
                });
            }
            out
        }
        // The ring's own views, each overridden by what the entry gives.
        (None, Some(ring)) => ring
            .transducers
            .iter()
            .map(|t| Transducer {
                pose: Pose2::new(t.pose[0], t.pose[1], t.pose[2].to_radians()),
                min_range_m: min_range_m.unwrap_or(t.view[0]),
                max_range_m: max_range_m.unwrap_or(t.view[1]),
                field_of_view_rad: field_of_view_rad.unwrap_or(t.view[2].to_radians()),
            })
            .collect(),
        (None, None) => return Err(r.error("give \"transducers\" ([[x, y, yaw], ...]) or a ready-made \"ring\"")),
    };
    for (i, t) in transducers.iter().enumerate() {
        let (min, max, fov) = (t.min_range_m, t.max_range_m, t.field_of_view_rad);
        if !(min.is_finite() && max.is_finite() && 0.0 <= min && min <= max && max > 0.0) {
            return Err(r.error(format!(
                "transducer {i}: ranges must satisfy 0 ≤ min_range ≤ max_range, max_range > 0 (m), got {min} and {max}"
            )));
        }
        if !(fov.is_finite() && (0.0..std::f64::consts::PI).contains(&fov)) {
            return Err(r.error(format!("transducer {i}: \"field_of_view\" must be within [0, π) rad, got {fov}")));
        }
    }
    Ok(transducers)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(yaml: &str) -> Result<SonarConfig, LoadError> {
        super::super::parse_in_test_model(yaml, "sonar", &["walls".to_string(), "boxes".to_string()])
    }

    #[test]
    fn a_p3dx_ring_has_amrisim_s_sixteen_transducers() {
        let c = parse("{body: base, ring: p3dx}").unwrap();
        assert_eq!(c.transducers.len(), 16);
        let first = c.transducers[0];
        assert_eq!((first.pose.x_m, first.pose.y_m), (0.069, 0.136));
        assert!((first.pose.theta_rad - std::f64::consts::FRAC_PI_2).abs() < 1e-12);
        assert_eq!((first.min_range_m, first.max_range_m), (0.1, 5.0));
        assert!((first.field_of_view_rad - DEFAULT_FIELD_OF_VIEW_RAD).abs() < 1e-12);
        assert_eq!((c.noise_m, c.update_rate_hz, c.mode), (0.0005, 10.0, SonarMode::Single));
        assert_eq!((c.range_topic(3), c.transducer_frame(3)), ("sonar/3".to_string(), "sonar_3".to_string()));
        assert_eq!(c.layers, 0b11, "every layer");
    }

    #[test]
    fn explicit_transducers_and_views_override_the_ring() {
        let c = parse("{body: base, ring: p3dx, max_range: 3, transducers: [[0.2, 0, 0], [0, 0.2, 1.57]], mode: closest_ray, layers: [walls]}").unwrap();
        assert_eq!(c.transducers.len(), 2);
        assert_eq!(c.transducers[1].max_range_m, 3.0);
        assert_eq!(c.mode, SonarMode::ClosestRay { resolution_rad: DEFAULT_CLOSEST_RAY_RESOLUTION_RAD });
        assert_eq!(c.layers, 0b01);
    }

    #[test]
    fn bad_entries_are_refused_by_name() {
        for (yaml, says) in [
            ("{body: base}", "ring"),
            ("{body: base, ring: p4dx}", "p4dx"),
            ("{body: base, transducers: [[0, 0]]}", "index 0"),
            ("{body: base, transducers: []}", "1 to 256"),
            ("{body: base, ring: p3dx, min_range: 6}", "min_range"),
            ("{body: base, ring: p3dx, field_of_view: 4}", "field_of_view"),
            ("{body: base, ring: p3dx, mode: cone}", "mode"),
            ("{body: base, ring: p3dx, noise: -1}", "noise"),
            ("{body: base, ring: p3dx, layers: [glass]}", "glass"),
            ("{body: base, ring: p3dx, rign: x}", "rign"),
        ] {
            let error = parse(yaml).unwrap_err().to_string();
            assert!(error.contains(says), "{yaml}: {error}");
            assert!(error.contains("robot.model.yaml"), "{yaml}: {error}");
        }
    }

    #[test]
    fn the_pioneer_models_named_in_amrisim_have_rings() {
        for model in ["p3dx", "p3at", "peoplebot", "powerbot", "amigo", "p2at", "patrolbot", "mtx"] {
            assert!(ring(model).is_some(), "{model}");
        }
        assert!(ring("seekur").is_none(), "AMRISim's seekur has no sonar");
        // The powerbot's dummy transducers (sview [5 5 0]) always read 5 m.
        let powerbot = ring("powerbot").unwrap();
        assert_eq!(powerbot.transducers.len(), 32);
        assert_eq!(powerbot.transducers[7].view, [5.0, 5.0, 0.0]);
    }
}
