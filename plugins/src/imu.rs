//! Flatland's `Imu` plugin parameters, served by `flotilla-imu`.

use serde_yaml::Value;

use super::{check_rate, check_topic, PluginContext};
use crate::config::{LoadError, Reader};
use crate::role::Role;
use crate::topic::TopicSpec;
use flotilla_messages::sensor_msgs::Imu;
use flotilla_wire::names::resolve_topic;

/// A validated `Imu` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct ImuConfig {
    /// Plugin name.
    pub name: String,
    /// Body the IMU is fixed to (at its origin, axes aligned, as Flatland).
    pub body: String,
    /// The IMU's TF frame, before namespacing (default `imu`).
    pub imu_frame_id: String,
    /// Topic of the noisy samples, before namespacing (default `imu/filtered`).
    pub imu_pub: String,
    /// Topic of the true samples, before namespacing (default `imu/ground_truth`).
    pub ground_truth_pub: String,
    /// Publish the samples (default true).
    pub enable_imu_pub: bool,
    /// Include gravity in the linear acceleration (default true).
    pub enable_imu_gravity: bool,
    /// Broadcast the body → IMU transform (latched on `tf_static`).
    pub broadcast_tf: bool,
    /// Samples per sim second (default ∞: every step).
    pub pub_rate_hz: f64,
    /// Variances of the orientation noise (roll, pitch, yaw), rad².
    pub orientation_noise: [f64; 3],
    /// Variances of the angular velocity noise (x, y, z), (rad/s)².
    pub angular_velocity_noise: [f64; 3],
    /// Variances of the linear acceleration noise (x, y, z), (m/s²)².
    pub linear_acceleration_noise: [f64; 3],
    /// Published orientation covariance (default: the noise on the diagonal).
    pub orientation_covariance: [f64; 9],
    /// Published angular velocity covariance (default: the noise on the diagonal).
    pub angular_velocity_covariance: [f64; 9],
    /// Published linear acceleration covariance (default: the noise on the diagonal).
    pub linear_acceleration_covariance: [f64; 9],
}

impl super::PluginConfig for ImuConfig {
    const TYPE: &'static str = "Imu";
    const ROLES: &'static [Role] = &[ImuConfig::ROLE];
    const EXAMPLE: &'static str = "{type: Imu, name: imu, body: base, pub_rate: 100}";
    fn parse(entry: &Value, name: &str, ctx: &PluginContext) -> Result<ImuConfig, LoadError> {
        ImuConfig::parse(entry, name, ctx)
    }
    fn body(&self) -> &str {
        &self.body
    }
    fn topics(&self, namespace: &str) -> Vec<TopicSpec> {
        let mut topics = Vec::new();
        if self.enable_imu_pub {
            topics.push(TopicSpec::publish::<Imu>(resolve_topic(namespace, &self.imu_pub)));
            topics.push(TopicSpec::publish::<Imu>(resolve_topic(namespace, &self.ground_truth_pub)));
        }
        if self.broadcast_tf {
            topics.push(TopicSpec::tf_static());
        }
        topics
    }
}

/// A 3 × 3 matrix with `diagonal` on its diagonal, row-major.
fn diagonal(d: [f64; 3]) -> [f64; 9] {
    [d[0], 0.0, 0.0, 0.0, d[1], 0.0, 0.0, 0.0, d[2]]
}

/// Three variances: finite and ≥ 0.
fn read_variances(r: &Reader, key: &str) -> Result<[f64; 3], LoadError> {
    let v = r.array::<3>(key, Some([0.0; 3]))?;
    if v.iter().any(|x| !x.is_finite() || *x < 0.0) {
        return Err(r.error(format!("\"{key}\" must be three variances ≥ 0, got {v:?}")));
    }
    Ok(v)
}

/// A 3 × 3 covariance (default: `noise` on the diagonal): finite.
fn read_covariance(r: &Reader, key: &str, noise: [f64; 3]) -> Result<[f64; 9], LoadError> {
    let c = r.array::<9>(key, Some(diagonal(noise)))?;
    if c.iter().any(|x| !x.is_finite()) {
        return Err(r.error(format!("\"{key}\" must be finite, got {c:?}")));
    }
    Ok(c)
}

impl ImuConfig {
    /// `flotilla-imu` samples.
    pub const ROLE: Role = Role::sensor("Imu", "flotilla-imu", "imu");

    /// Parses and validates an `Imu` entry.
    pub fn parse(entry: &Value, name: &str, ctx: &PluginContext) -> Result<ImuConfig, LoadError> {
        let r = ctx.reader(entry, name)?;
        let orientation_noise = read_variances(&r, "orientation_noise")?;
        let angular_velocity_noise = read_variances(&r, "angular_velocity_noise")?;
        let linear_acceleration_noise = read_variances(&r, "linear_acceleration_noise")?;
        let config = ImuConfig {
            name: name.to_string(),
            body: r.req("body")?,
            imu_frame_id: r.opt("imu_frame_id", "imu".to_string())?,
            imu_pub: r.opt("imu_pub", "imu/filtered".to_string())?,
            ground_truth_pub: r.opt("ground_truth_pub", "imu/ground_truth".to_string())?,
            enable_imu_pub: r.opt("enable_imu_pub", true)?,
            enable_imu_gravity: r.opt("enable_imu_gravity", true)?,
            broadcast_tf: r.opt("broadcast_tf", true)?,
            pub_rate_hz: r.opt("pub_rate", f64::INFINITY)?,
            orientation_covariance: read_covariance(&r, "orientation_covariance", orientation_noise)?,
            angular_velocity_covariance: read_covariance(&r, "angular_velocity_covariance", angular_velocity_noise)?,
            linear_acceleration_covariance: read_covariance(
                &r,
                "linear_acceleration_covariance",
                linear_acceleration_noise,
            )?,
            orientation_noise,
            angular_velocity_noise,
            linear_acceleration_noise,
        };
        r.finish()?;
        ctx.check_body(&r, &config.body)?;
        check_topic(&r, "imu_pub", &config.imu_pub)?;
        check_topic(&r, "ground_truth_pub", &config.ground_truth_pub)?;
        check_rate(&r, "pub_rate", config.pub_rate_hz)?;
        if config.imu_frame_id.is_empty() {
            return Err(r.error("\"imu_frame_id\" must not be empty"));
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(yaml: &str) -> Result<ImuConfig, LoadError> {
        super::super::parse_in_test_model(yaml, "imu", &[])
    }

    #[test]
    fn flatland_s_defaults_and_covariances_from_the_noise() {
        let c = parse("{body: base, linear_acceleration_noise: [0.1, 0.2, 0.3]}").unwrap();
        assert_eq!(
            (c.imu_frame_id.as_str(), c.imu_pub.as_str(), c.ground_truth_pub.as_str()),
            ("imu", "imu/filtered", "imu/ground_truth")
        );
        assert!(c.enable_imu_pub && c.enable_imu_gravity && c.broadcast_tf);
        assert_eq!(c.pub_rate_hz, f64::INFINITY);
        assert_eq!(c.linear_acceleration_covariance, [0.1, 0.0, 0.0, 0.0, 0.2, 0.0, 0.0, 0.0, 0.3]);
        assert_eq!(c.orientation_covariance, [0.0; 9]);
    }

    #[test]
    fn bad_entries_are_refused_by_name() {
        for (yaml, says) in [
            ("{body: base, orientation_noise: [0, 0, -1]}", "orientation_noise"),
            ("{body: base, angular_velocity_noise: [0, 0]}", "angular_velocity_noise"),
            ("{body: base, pub_rate: -5}", "pub_rate"),
            ("{body: base, imu_topic: x}", "imu_topic"),
            ("{body: wheel}", "wheel"),
        ] {
            let error = parse(yaml).unwrap_err().to_string();
            assert!(error.contains(says), "{yaml}: {error}");
        }
    }
}
