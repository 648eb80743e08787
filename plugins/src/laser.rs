//! Flatland's `Laser` plugin parameters.

use serde_yaml::Value;

use super::{check_rate, check_topic, read_pose, PluginContext};
use crate::config::LoadError;
use crate::role::Role;
use crate::topic::TopicSpec;
use flotilla_messages::sensor_msgs::LaserScan;
use flotilla_wire::description::{layer_bits, LayerBits};
use flotilla_wire::geometry::Pose2;
use flotilla_wire::names::resolve_topic;

/// Beams per scan above which a configuration is rejected as absurd.
pub const MAX_BEAMS: usize = 100_000;

/// A validated `Laser` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct LaserConfig {
    /// Plugin name.
    pub name: String,
    /// Body the laser is mounted on.
    pub body: String,
    /// Topic, before namespacing (default `scan`).
    pub topic: String,
    /// TF frame, before namespacing (default: the plugin name).
    pub frame: String,
    /// Whether to broadcast the body → laser transform.
    pub broadcast_tf: bool,
    /// Publish even with no subscriber (Flotilla always publishes; accepted
    /// for compatibility).
    pub always_publish: bool,
    /// Scans per sim second (∞ = every step).
    pub update_rate_hz: f64,
    /// Mount pose in the body frame.
    pub origin: Pose2,
    /// Maximum range, m.
    pub range_m: f64,
    /// Standard deviation of Gaussian range noise, m.
    pub noise_std_dev_m: f64,
    /// Mounted upside down: beams mirrored, TF rolled by π.
    pub upside_down: bool,
    /// Layers the laser sees.
    pub layers: LayerBits,
    /// Angle of the first beam, rad.
    pub angle_min_rad: f64,
    /// Angle of the last beam, rad.
    pub angle_max_rad: f64,
    /// Angle between beams, rad (negative for clockwise).
    pub angle_increment_rad: f64,
}

impl super::PluginConfig for LaserConfig {
    const TYPE: &'static str = "Laser";
    const ROLES: &'static [Role] = &[LaserConfig::ROLE];
    const EXAMPLE: &'static str =
        "{type: Laser, name: laser, body: base, range: 10, angle: {min: -1, max: 1, increment: 0.1}}";
    fn parse(entry: &Value, name: &str, ctx: &PluginContext) -> Result<LaserConfig, LoadError> {
        LaserConfig::parse(entry, name, ctx)
    }
    fn body(&self) -> &str {
        &self.body
    }
    fn restrict_layers(&mut self, mask: LayerBits) {
        self.layers &= mask;
    }
    fn topics(&self, namespace: &str) -> Vec<TopicSpec> {
        let mut topics = vec![TopicSpec::publish::<LaserScan>(resolve_topic(namespace, &self.topic))];
        if self.broadcast_tf {
            topics.push(TopicSpec::tf_static());
        }
        topics
    }
}

impl LaserConfig {
    /// `flotilla-laser` scans.
    pub const ROLE: Role = Role::sensor("Laser", "flotilla-laser", "laser");

    /// Number of beams: `round((max - min) / increment) + 1`, as Flatland.
    pub fn beam_count(&self) -> usize {
        ((self.angle_max_rad - self.angle_min_rad) / self.angle_increment_rad).round() as usize + 1
    }

    /// Parses and validates a `Laser` entry.
    pub fn parse(entry: &Value, name: &str, ctx: &PluginContext) -> Result<LaserConfig, LoadError> {
        let r = ctx.reader(entry, name)?;
        let body: String = r.req("body")?;
        let topic = r.opt("topic", "scan".to_string())?;
        let frame = r.opt("frame", name.to_string())?;
        let broadcast_tf = r.opt("broadcast_tf", true)?;
        let always_publish = r.opt("always_publish", false)?;
        let update_rate_hz = r.opt("update_rate", f64::INFINITY)?;
        let origin = read_pose(&r, "origin")?;
        let range_m: f64 = r.req("range")?;
        let noise_std_dev_m = r.opt("noise_std_dev", 0.0)?;
        let upside_down = r.opt("upside_down", false)?;
        let layer_names = r.opt_list("layers", vec!["all".to_string()], None, None)?;
        let angle = r
            .sub("angle", format!("{} \"angle\"", r.entity()))?
            .ok_or_else(|| r.error("entry \"angle\" does not exist"))?;
        let angle_min_rad: f64 = angle.req("min")?;
        let angle_max_rad: f64 = angle.req("max")?;
        let angle_increment_rad: f64 = angle.req("increment")?;
        angle.finish()?;
        r.finish()?;

        ctx.check_body(&r, &body)?;
        check_topic(&r, "topic", &topic)?;
        check_rate(&r, "update_rate", update_rate_hz)?;
        if !range_m.is_finite() || range_m <= 0.0 {
            return Err(r.error(format!("\"range\" must be a finite number of metres > 0, got {range_m}")));
        }
        if !noise_std_dev_m.is_finite() || noise_std_dev_m < 0.0 {
            return Err(r.error(format!("\"noise_std_dev\" must be ≥ 0 m, got {noise_std_dev_m}")));
        }
        if frame.is_empty() {
            return Err(r.error("\"frame\" must not be empty"));
        }
        let layers = layer_bits(ctx.layer_names, &layer_names)
            .map_err(|unknown| r.error(format!("layers {{{}}} do not exist", unknown.join(","))))?;
        for (key, v) in [("min", angle_min_rad), ("max", angle_max_rad), ("increment", angle_increment_rad)] {
            if !v.is_finite() {
                return Err(angle.error(format!("\"{key}\" must be finite, got {v}")));
            }
        }
        if angle_increment_rad == 0.0 {
            return Err(angle.error("\"increment\" must not be zero"));
        }
        if angle_increment_rad > 0.0 && angle_max_rad < angle_min_rad {
            return Err(angle.error(format!(
                "must have max ≥ min when increment > 0 (min {angle_min_rad}, max {angle_max_rad}, increment {angle_increment_rad})"
            )));
        }
        if angle_increment_rad < 0.0 && angle_min_rad < angle_max_rad {
            return Err(angle.error(format!(
                "must have min ≥ max when increment < 0, i.e. a clockwise scan (min {angle_min_rad}, max {angle_max_rad}, increment {angle_increment_rad})"
            )));
        }
        let config = LaserConfig {
            name: name.to_string(),
            body,
            topic,
            frame,
            broadcast_tf,
            always_publish,
            update_rate_hz,
            origin,
            range_m,
            noise_std_dev_m,
            upside_down,
            layers,
            angle_min_rad,
            angle_max_rad,
            angle_increment_rad,
        };
        if config.beam_count() > MAX_BEAMS {
            return Err(
                r.error(format!("{} beams per scan is more than the maximum of {MAX_BEAMS}", config.beam_count()))
            );
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn ctx(layers: &[String]) -> PluginContext<'_> {
        PluginContext {
            model_file: Path::new("robot.model.yaml"),
            model: "robot1",
            bodies: vec!["base_link"],
            joints: &[],
            layer_names: layers,
        }
    }

    fn parse(text: &str) -> Result<LaserConfig, LoadError> {
        let layers = vec!["layer_1".to_string(), "layer_2".to_string()];
        let entry: Value = serde_yaml::from_str(text).unwrap();
        LaserConfig::parse(&entry, "laser", &ctx(&layers))
    }

    #[test]
    fn flatland_defaults() {
        let c = parse("{type: Laser, name: laser, body: base_link, range: 5, angle: {min: -1.5707963267948966, max: 1.5707963267948966, increment: 1.5707963267948966}}").unwrap();
        assert_eq!((c.topic.as_str(), c.frame.as_str()), ("scan", "laser"));
        assert_eq!(c.beam_count(), 3);
        assert_eq!(c.layers, 0b11);
        assert!(c.broadcast_tf && c.update_rate_hz.is_infinite());
    }

    #[test]
    fn missing_range_and_inverted_angles_are_rejected() {
        // Flatland's laser_tests/invalid_A and invalid_B
        let a = parse("{body: base_link, angle: {min: 0, max: 6.28, increment: 1.57}}").unwrap_err();
        assert!(a.message.contains("\"range\" does not exist"), "{a}");
        let b = parse("{body: base_link, range: 5, angle: {min: 0, max: -6.28, increment: 1.57}}").unwrap_err();
        assert!(b.message.contains("max ≥ min"), "{b}");
    }

    #[test]
    fn unknown_layer_body_and_entry_are_named() {
        let e =
            parse("{body: base_link, range: 5, layers: [nope], angle: {min: 0, max: 1, increment: 0.5}}").unwrap_err();
        assert!(e.message.contains("{nope}"), "{e}");
        let e = parse("{body: wheel, range: 5, angle: {min: 0, max: 1, increment: 0.5}}").unwrap_err();
        assert!(e.message.contains("body \"wheel\""), "{e}");
        let e = parse("{body: base_link, range: 5, rnage: 3, angle: {min: 0, max: 1, increment: 0.5}}").unwrap_err();
        assert!(e.message.contains("rnage"), "{e}");
        assert_eq!(e.entity, "model \"robot1\" plugin \"laser\"");
    }

    #[test]
    fn absurd_beam_counts_are_rejected() {
        let e = parse("{body: base_link, range: 5, angle: {min: 0, max: 6.28, increment: 0.000001}}").unwrap_err();
        assert!(e.message.contains("beams per scan"), "{e}");
    }
}
