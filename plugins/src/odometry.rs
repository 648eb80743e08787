//! What an odometry publisher needs, whichever drive plugin it belongs to
//! (DiffDrive, TricycleDrive): frames, topics, noise, covariances, rate and
//! which messages go out. `flotilla-odom` serves it.

use super::{check_rate, check_topic};
use crate::config::{LoadError, Reader};
use crate::topic::TopicSpec;
use flotilla_messages::geometry_msgs::TwistWithCovarianceStamped;
use flotilla_messages::nav_msgs::Odometry;
use flotilla_messages::Covariance;
use flotilla_wire::names::resolve_topic;

/// The odometry side of a drive plugin.
#[derive(Debug, Clone, PartialEq)]
pub struct OdometryConfig {
    /// The plugin type it comes from, for logs.
    pub plugin_type: &'static str,
    /// The body whose motion is reported.
    pub body: String,
    /// Frame of the noisy odometry.
    pub odom_frame_id: String,
    /// Frame of the ground truth.
    pub ground_truth_frame_id: String,
    /// Noisy odometry topic.
    pub odom_pub: String,
    /// Ground truth topic.
    pub ground_truth_pub: String,
    /// Encoder-like twist topic.
    pub twist_pub: String,
    /// Publish odometry and ground truth.
    pub enable_odom_pub: bool,
    /// Broadcast odom → body on `tf`.
    pub enable_odom_tf_pub: bool,
    /// Publish the twist topic.
    pub enable_twist_pub: bool,
    /// Publish ground truth frame → odom frame latched on `tf_static`.
    pub enable_map_tf_pub: bool,
    /// Report the twist in the body frame (else in the world frame).
    pub twist_in_local_frame: bool,
    /// Variances of Gaussian noise on (x, y, yaw), m², m², rad².
    pub odom_pose_noise: [f64; 3],
    /// Variances of Gaussian noise on (vx, vy, ω), (m/s)², (m/s)², (rad/s)².
    pub odom_twist_noise: [f64; 3],
    /// Reported pose covariance.
    pub odom_pose_covariance: Covariance,
    /// Reported twist covariance.
    pub odom_twist_covariance: Covariance,
    /// Messages per sim second (∞ = every step).
    pub pub_rate_hz: f64,
    /// AMRISim's odometry error (a Flotilla addition; none by default, as
    /// in Flatland).
    pub odom_error: OdomErrorConfig,
    /// vehicle_dynamics_sim's localization noise (a Flotilla addition; none
    /// by default).
    pub localization: Option<LocalizationConfig>,
}

/// vehicle_dynamics_sim's localization noise, with its parameter names:
/// odometry drifting as a random walk with the distance travelled, and a
/// localizer's map → base estimate sampled around the truth; map → odom
/// then moves as a real localizer's does. All variances.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LocalizationConfig {
    /// Drift of x and y per metre travelled, m²/m.
    pub odom_walk_velocity_translation: f64,
    /// Drift of the heading per metre travelled, rad²/m.
    pub odom_walk_velocity_rotation: f64,
    /// Noise density of the map → base estimate's x and y, m²/s.
    pub map_sample_noise_translation: f64,
    /// Noise density of its heading, rad²/s.
    pub map_sample_noise_rotation: f64,
}

/// How AMRISim picks its odometry error factors (`--odom-error-mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OdomErrorMode {
    /// No error: odometry follows the ground truth (plus Flatland's noise).
    #[default]
    None,
    /// The same factors always: `odom_error`, or the middle of the ranges.
    Constant,
    /// Factors drawn once per robot, within the ranges.
    RandomInit,
    /// Factors drawn at every update, within the ranges.
    RandomEachUpdate,
}

/// AMRISim's odometry error: the pose estimate is integrated from the
/// robot's motion, each update's motion along x, along y and in heading
/// scaled by `1 + error` (AMRISim's position model).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct OdomErrorConfig {
    /// How the factors are picked.
    pub mode: OdomErrorMode,
    /// The constant mode's factors (x, y per metre; heading per radian).
    pub constant: [f64; 3],
    /// The random modes' ranges, [min, max] per axis.
    pub ranges: [[f64; 2]; 3],
}

impl OdometryConfig {
    /// The topics `flotilla-odom` publishes for a model in `namespace`:
    /// odometry and ground truth, the twist, tf (odom → base, and map →
    /// odom with localization noise on) and tf_static (map → odom fixed).
    pub fn topics(&self, namespace: &str) -> Vec<TopicSpec> {
        let name = |topic: &str| resolve_topic(namespace, topic);
        let mut topics = Vec::new();
        if self.enable_odom_pub {
            topics.push(TopicSpec::publish::<Odometry>(name(&self.odom_pub)));
            topics.push(TopicSpec::publish::<Odometry>(name(&self.ground_truth_pub)));
        }
        if self.enable_twist_pub {
            topics.push(TopicSpec::publish::<TwistWithCovarianceStamped>(name(&self.twist_pub)));
        }
        if self.enable_odom_tf_pub || self.localization.is_some() {
            topics.push(TopicSpec::tf());
        }
        if self.enable_map_tf_pub {
            topics.push(TopicSpec::tf_static());
        }
        topics
    }

    /// Reads the odometry entries of a `plugin_type` entry for `body`: those
    /// every Flatland drive has (frames, topics, noise, covariances,
    /// `pub_rate`), and with `diff_drive_entries` DiffDrive's own
    /// (`twist_pub`, the `enable_*` switches, `twist_in_local_frame`). A
    /// drive without them publishes as Flatland's tricycle does: odometry and
    /// ground truth, the twist in the world frame, no twist topic, no tf.
    pub(super) fn read(
        r: &Reader,
        plugin_type: &'static str,
        body: &str,
        diff_drive_entries: bool,
    ) -> Result<OdometryConfig, LoadError> {
        let text = |key: &str, default: &str| r.opt(key, default.to_string());
        let switch = |key: &str, default: bool| if diff_drive_entries { r.opt(key, default) } else { Ok(false) };
        let odom_pose_noise = r.array::<3>("odom_pose_noise", Some([0.0; 3]))?;
        let odom_twist_noise = r.array::<3>("odom_twist_noise", Some([0.0; 3]))?;
        let config = OdometryConfig {
            plugin_type,
            body: body.to_string(),
            odom_frame_id: text("odom_frame_id", "odom")?,
            ground_truth_frame_id: text("ground_truth_frame_id", "map")?,
            odom_pub: text("odom_pub", "odometry/filtered")?,
            ground_truth_pub: text("ground_truth_pub", "odometry/ground_truth")?,
            twist_pub: if diff_drive_entries { text("twist_pub", "twist")? } else { "twist".into() },
            enable_odom_pub: if diff_drive_entries { r.opt("enable_odom_pub", true)? } else { true },
            enable_odom_tf_pub: switch("enable_odom_tf_pub", true)?,
            enable_twist_pub: switch("enable_twist_pub", true)?,
            enable_map_tf_pub: switch("enable_map_tf_pub", false)?,
            twist_in_local_frame: switch("twist_in_local_frame", true)?,
            odom_pose_covariance: covariance(r, "odom_pose_covariance", odom_pose_noise)?,
            odom_twist_covariance: covariance(r, "odom_twist_covariance", odom_twist_noise)?,
            odom_pose_noise,
            odom_twist_noise,
            pub_rate_hz: r.opt("pub_rate", f64::INFINITY)?,
            odom_error: read_odom_error(r)?,
            localization: read_localization(r)?,
        };
        if config.localization.is_some() && config.odom_error.mode != OdomErrorMode::None {
            return Err(
                r.error("\"localization\" and \"odom_error_mode\" both make the odometry drift: choose one of them")
            );
        }
        if config.localization.is_some() && config.enable_map_tf_pub {
            return Err(r.error(
                "\"localization\" publishes map → odom itself (on tf, as a localizer does): leave \
                 \"enable_map_tf_pub\" off",
            ));
        }
        Ok(config)
    }

    /// Checks the values read (after the reader's unknown-entry check, so
    /// that a typo is named before a bad value).
    pub(super) fn check(&self, r: &Reader) -> Result<(), LoadError> {
        for (key, topic) in
            [("odom_pub", &self.odom_pub), ("ground_truth_pub", &self.ground_truth_pub), ("twist_pub", &self.twist_pub)]
        {
            check_topic(r, key, topic)?;
        }
        check_rate(r, "pub_rate", self.pub_rate_hz)?;
        for (key, noise) in [("odom_pose_noise", self.odom_pose_noise), ("odom_twist_noise", self.odom_twist_noise)] {
            if noise.iter().any(|v| !v.is_finite() || *v < 0.0) {
                return Err(r.error(format!("\"{key}\" holds variances, which must be finite and ≥ 0, got {noise:?}")));
            }
        }
        Ok(())
    }
}

/// AMRISim's `odom_error_mode`, `odom_error` ([x, y, a]: symmetric ranges,
/// or the constant factors) and `odom_error_range_x|y|a` ([min, max]; the
/// constant mode takes their middle), with AMRISim's names and rules.
fn read_odom_error(r: &Reader) -> Result<OdomErrorConfig, LoadError> {
    let mode_name: Option<String> = r.maybe("odom_error_mode")?;
    let error: Option<Vec<f64>> = match r.raw("odom_error") {
        Some(_) => Some(r.list("odom_error", Some(3), Some(3))?),
        None => None,
    };
    let mut ranges: [Option<[f64; 2]>; 3] = [None; 3];
    for (axis, key) in ["odom_error_range_x", "odom_error_range_y", "odom_error_range_a"].into_iter().enumerate() {
        if r.raw(key).is_some() {
            let [min, max] = r.array::<2>(key, None)?;
            if !(min.is_finite() && max.is_finite() && min <= max) {
                return Err(r.error(format!("\"{key}\" must be [min, max] with min ≤ max, got [{min}, {max}]")));
            }
            ranges[axis] = Some([min, max]);
        }
    }
    let mode = match mode_name.as_deref() {
        None | Some("none") => OdomErrorMode::None,
        Some("constant") => OdomErrorMode::Constant,
        Some("random_init") => OdomErrorMode::RandomInit,
        Some("random_each_update") => OdomErrorMode::RandomEachUpdate,
        Some(other) => {
            return Err(r.error(format!(
                "\"odom_error_mode\" must be none, constant, random_init or random_each_update, got {other:?}"
            )))
        }
    };
    let given = error.is_some() || ranges.iter().any(Option::is_some);
    if mode == OdomErrorMode::None && given {
        return Err(r.error(
            "odom_error or odom_error_range_* is given but \"odom_error_mode\" is none (the default): name a mode",
        ));
    }
    if mode != OdomErrorMode::None && !given {
        return Err(r.error("\"odom_error_mode\" needs odom_error or odom_error_range_x|y|a"));
    }
    let error = error.unwrap_or_else(|| vec![0.0; 3]);
    if error.iter().any(|e| !e.is_finite()) {
        return Err(r.error(format!("\"odom_error\" must be finite, got {error:?}")));
    }
    let mut config = OdomErrorConfig { mode, ..OdomErrorConfig::default() };
    for axis in 0..3 {
        let e = error[axis];
        config.ranges[axis] = ranges[axis].unwrap_or([-e.abs(), e.abs()]);
        config.constant[axis] = ranges[axis].map_or(e, |[min, max]| (min + max) / 2.0);
    }
    Ok(config)
}

/// The optional `localization` map (vehicle_dynamics_sim's names; each
/// variance defaults to 0).
fn read_localization(r: &Reader) -> Result<Option<LocalizationConfig>, LoadError> {
    let entity = format!("{} \"localization\"", r.entity());
    let Some(l) = r.sub("localization", entity)? else { return Ok(None) };
    let config = LocalizationConfig {
        odom_walk_velocity_translation: l.opt("odom_walk_velocity_translation", 0.0)?,
        odom_walk_velocity_rotation: l.opt("odom_walk_velocity_rotation", 0.0)?,
        map_sample_noise_translation: l.opt("map_sample_noise_translation", 0.0)?,
        map_sample_noise_rotation: l.opt("map_sample_noise_rotation", 0.0)?,
    };
    l.finish()?;
    for (key, value) in [
        ("odom_walk_velocity_translation", config.odom_walk_velocity_translation),
        ("odom_walk_velocity_rotation", config.odom_walk_velocity_rotation),
        ("map_sample_noise_translation", config.map_sample_noise_translation),
        ("map_sample_noise_rotation", config.map_sample_noise_rotation),
    ] {
        if !value.is_finite() || value < 0.0 {
            return Err(l.error(format!("\"{key}\" is a variance: it must be finite and ≥ 0, got {value}")));
        }
    }
    Ok(Some(config))
}

/// A 6×6 covariance entry, defaulting to `noise` on the (x, y, yaw) diagonal.
fn covariance(r: &Reader, key: &str, noise: [f64; 3]) -> Result<Covariance, LoadError> {
    let mut default = [0.0; 36];
    default[0] = noise[0];
    default[7] = noise[1];
    default[35] = noise[2];
    let values = r.opt_list(key, default.to_vec(), Some(36), Some(36))?;
    let mut out = [0.0; 36];
    out.copy_from_slice(&values);
    Ok(Covariance(out))
}
