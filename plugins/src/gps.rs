//! Flatland's `Gps` plugin parameters, served by `flotilla-gps`.

use serde_yaml::Value;

use super::{check_rate, check_topic, read_pose, PluginContext};
use crate::config::LoadError;
use crate::role::Role;
use crate::topic::TopicSpec;
use flotilla_messages::sensor_msgs::NavSatFix;
use flotilla_wire::geometry::Pose2;
use flotilla_wire::names::resolve_topic;

/// Flatland's default position covariance: 0.01 m² on the diagonal.
pub const DEFAULT_POSITION_COVARIANCE: [f64; 9] = [1e-2, 0.0, 0.0, 0.0, 1e-2, 0.0, 0.0, 0.0, 1e-2];

/// A validated `Gps` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct GpsConfig {
    /// Plugin name.
    pub name: String,
    /// Body the antenna is mounted on.
    pub body: String,
    /// Topic, before namespacing (default `gps/fix`).
    pub topic: String,
    /// The antenna's TF frame, before namespacing (default: the plugin name).
    pub frame: String,
    /// Whether to broadcast the body → antenna transform (latched on `tf_static`).
    pub broadcast_tf: bool,
    /// Fixes per sim second (default 10; ∞ = every step).
    pub update_rate_hz: f64,
    /// Whether the entry gives `ref_lat` or `ref_lon`; if not, a world
    /// with a georeference (an ArMap's `OriginLatLongAlt`) supplies them.
    pub ref_given: bool,
    /// Latitude of the world's origin, degrees.
    pub ref_lat_deg: f64,
    /// Longitude of the world's origin, degrees.
    pub ref_lon_deg: f64,
    /// Rotation from the world frame to East-North-Up, rad: a world point
    /// is rotated by it before it is read as (east, north).
    pub ref_yaw_rad: f64,
    /// East offset of the world's origin from the reference point, m
    /// (Flotilla's; not in Flatland, which puts the origin on it).
    pub ref_easting_m: f64,
    /// North offset of the world's origin from the reference point, m
    /// (Flotilla's).
    pub ref_northing_m: f64,
    /// The antenna's pose on the body.
    pub origin: Pose2,
    /// Covariance published with each fix, m², row-major ENU.
    pub position_covariance: [f64; 9],
    /// Standard deviation of Gaussian noise on east and north, m (Flotilla's;
    /// Flatland's receiver is perfect). Default 0.
    pub noise_std_dev_m: f64,
}

impl super::PluginConfig for GpsConfig {
    const TYPE: &'static str = "Gps";
    const ROLES: &'static [Role] = &[GpsConfig::ROLE];
    const EXAMPLE: &'static str = "{type: Gps, name: gps, body: base, ref_lat: 45.0, ref_lon: -75.0}";
    fn parse(entry: &Value, name: &str, ctx: &PluginContext) -> Result<GpsConfig, LoadError> {
        GpsConfig::parse(entry, name, ctx)
    }
    fn body(&self) -> &str {
        &self.body
    }
    fn topics(&self, namespace: &str) -> Vec<TopicSpec> {
        let mut topics = vec![TopicSpec::publish::<NavSatFix>(resolve_topic(namespace, &self.topic))];
        if self.broadcast_tf {
            topics.push(TopicSpec::tf_static());
        }
        topics
    }
}

impl GpsConfig {
    /// `flotilla-gps` computes fixes.
    pub const ROLE: Role = Role::sensor("Gps", "flotilla-gps", "gps");

    /// Parses and validates a `Gps` entry.
    pub fn parse(entry: &Value, name: &str, ctx: &PluginContext) -> Result<GpsConfig, LoadError> {
        let r = ctx.reader(entry, name)?;
        // Flatland reads its covariance as "position_cavariance" (sic); both
        // spellings are accepted, not both at once.
        let (misspelled, spelled) = ("position_cavariance", "position_covariance");
        if r.has(misspelled) && r.has(spelled) {
            return Err(r.error(format!("give \"{spelled}\" or Flatland's \"{misspelled}\", not both")));
        }
        let covariance_key = if r.has(misspelled) { misspelled } else { spelled };
        let config = GpsConfig {
            name: name.to_string(),
            body: r.req("body")?,
            topic: r.opt("topic", "gps/fix".to_string())?,
            frame: r.opt("frame", name.to_string())?,
            broadcast_tf: r.opt("broadcast_tf", true)?,
            update_rate_hz: r.opt("update_rate", 10.0)?,
            ref_given: r.raw("ref_lat").is_some() || r.raw("ref_lon").is_some(),
            ref_lat_deg: r.opt("ref_lat", 0.0)?,
            ref_lon_deg: r.opt("ref_lon", 0.0)?,
            ref_yaw_rad: r.opt("ref_yaw_radians", 0.0)?,
            ref_easting_m: r.opt("ref_easting", 0.0)?,
            ref_northing_m: r.opt("ref_northing", 0.0)?,
            origin: read_pose(&r, "origin")?,
            position_covariance: r.array::<9>(covariance_key, Some(DEFAULT_POSITION_COVARIANCE))?,
            noise_std_dev_m: r.opt("noise_std_dev", 0.0)?,
        };
        r.finish()?;
        ctx.check_body(&r, &config.body)?;
        check_topic(&r, "topic", &config.topic)?;
        check_rate(&r, "update_rate", config.update_rate_hz)?;
        if config.frame.is_empty() {
            return Err(r.error("\"frame\" must not be empty"));
        }
        if !(config.ref_lat_deg.is_finite() && (-90.0..=90.0).contains(&config.ref_lat_deg)) {
            return Err(r.error(format!("\"ref_lat\" must be within [-90, 90] degrees, got {}", config.ref_lat_deg)));
        }
        if !(config.ref_lon_deg.is_finite() && (-180.0..=180.0).contains(&config.ref_lon_deg)) {
            return Err(r.error(format!("\"ref_lon\" must be within [-180, 180] degrees, got {}", config.ref_lon_deg)));
        }
        for (key, value) in [
            ("ref_yaw_radians", config.ref_yaw_rad),
            ("ref_easting", config.ref_easting_m),
            ("ref_northing", config.ref_northing_m),
        ] {
            if !value.is_finite() {
                return Err(r.error(format!("\"{key}\" must be finite, got {value}")));
            }
        }
        if config.position_covariance.iter().any(|c| !c.is_finite()) {
            return Err(r.error(format!("\"{covariance_key}\" must be finite, got {:?}", config.position_covariance)));
        }
        if !config.noise_std_dev_m.is_finite() || config.noise_std_dev_m < 0.0 {
            return Err(r.error(format!("\"noise_std_dev\" must be ≥ 0 m, got {}", config.noise_std_dev_m)));
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(yaml: &str) -> Result<GpsConfig, LoadError> {
        super::super::parse_in_test_model(yaml, "gps", &[])
    }

    #[test]
    fn flatland_s_defaults() {
        let c = parse("{body: base}").unwrap();
        assert_eq!(
            (c.topic.as_str(), c.frame.as_str(), c.broadcast_tf, c.update_rate_hz),
            ("gps/fix", "gps", true, 10.0)
        );
        assert_eq!((c.ref_lat_deg, c.ref_lon_deg, c.ref_yaw_rad, c.noise_std_dev_m), (0.0, 0.0, 0.0, 0.0));
        assert_eq!(c.position_covariance, DEFAULT_POSITION_COVARIANCE);
    }

    #[test]
    fn flatland_s_misspelled_covariance_is_read_and_both_spellings_are_refused() {
        let nine = "[1, 0, 0, 0, 2, 0, 0, 0, 3]";
        let c = parse(&format!("{{body: base, position_cavariance: {nine}}}")).unwrap();
        assert_eq!(c.position_covariance[4], 2.0);
        let c = parse(&format!("{{body: base, position_covariance: {nine}}}")).unwrap();
        assert_eq!(c.position_covariance[8], 3.0);
        let both = parse(&format!("{{body: base, position_covariance: {nine}, position_cavariance: {nine}}}"));
        assert!(both.unwrap_err().to_string().contains("not both"));
    }

    #[test]
    fn bad_entries_are_refused_by_name() {
        for (yaml, says) in [
            ("{body: base, ref_lat: 91}", "ref_lat"),
            ("{body: base, ref_lon: .nan}", "ref_lon"),
            ("{body: base, noise_std_dev: -1}", "noise_std_dev"),
            ("{body: base, update_rate: -1}", "update_rate"),
            ("{body: base, frmae: x}", "frmae"),
            ("{body: wheel}", "wheel"),
            ("{topic: fix}", "body"),
        ] {
            let error = parse(yaml).unwrap_err().to_string();
            assert!(error.contains(says), "{yaml}: {error}");
            assert!(error.contains("robot.model.yaml"), "{yaml}: {error}");
        }
    }
}
