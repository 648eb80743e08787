//! Flatland's GPS receiver as a model: the antenna's true position in the
//! world, read as East-North-Up metres from a reference point, converted to
//! latitude and longitude on the WGS 84 ellipsoid as Flatland does (ENU to
//! ECEF about the reference, then ECEF to geodetic), with optional Gaussian
//! noise on east and north.

pub mod node;

use flotilla_messages::geometry_msgs::{Quaternion, Transform, TransformStamped, Vector3};
use flotilla_messages::sensor_msgs::{NavSatFix, NavSatStatus};
use flotilla_messages::std_msgs::Header;
use flotilla_plugins::gps::GpsConfig;
use flotilla_wire::geodesy::Reference;
use flotilla_wire::geometry::Pose2;
use flotilla_wire::names::resolve_frame;
use flotilla_wire::time::SimTime;
use flotilla_wire::update_timer::UpdateTimer;
use rand::SeedableRng;
use rand_distr::{Distribution, Normal};
use rand_xoshiro::Xoshiro256PlusPlus;

/// One GPS receiver.
#[derive(Debug, Clone)]
pub struct Gps {
    config: GpsConfig,
    reference: Reference,
    /// Altitude of the reference point, m (reported as each fix's: the
    /// world is flat).
    altitude_m: f64,
    timer: UpdateTimer,
    rng: Xoshiro256PlusPlus,
    noise: Option<Normal<f64>>,
    /// The fix published, its header and covariance set once.
    fix: NavSatFix,
}

impl Gps {
    /// A receiver of a model in `namespace`, its noise drawn from `seed`,
    /// in a world whose origin is at `georeference` (latitude °, longitude
    /// °, altitude m) if known: the reference when the entry gives none.
    pub fn new(config: GpsConfig, namespace: &str, seed: u64, georeference: Option<[f64; 3]>) -> Gps {
        let noise = (config.noise_std_dev_m > 0.0)
            .then(|| Normal::new(0.0, config.noise_std_dev_m).expect("validated finite and ≥ 0"));
        let fix = NavSatFix {
            header: Header { stamp: Default::default(), frame_id: resolve_frame(namespace, &config.frame) },
            status: NavSatStatus { status: NavSatStatus::STATUS_FIX, service: NavSatStatus::SERVICE_GPS },
            position_covariance: config.position_covariance,
            position_covariance_type: NavSatFix::COVARIANCE_TYPE_DIAGONAL_KNOWN,
            ..Default::default()
        };
        let [lat_deg, lon_deg, altitude_m] = match georeference {
            Some(world) if !config.ref_given => world,
            _ => [config.ref_lat_deg, config.ref_lon_deg, 0.0],
        };
        Gps {
            reference: Reference::new(lat_deg, lon_deg),
            altitude_m,
            timer: UpdateTimer::new(config.update_rate_hz),
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            noise,
            fix,
            config,
        }
    }

    /// Its parameters.
    pub fn config(&self) -> &GpsConfig {
        &self.config
    }

    /// Its update period, ns (`UpdateTimer::period_ns`).
    pub fn period_ns(&self) -> Option<u64> {
        self.timer.period_ns()
    }

    /// Whether a fix is due at `now_ns` (and if so, the timer moves on).
    pub fn due(&mut self, now_ns: u64, step_ns: u64) -> bool {
        self.timer.check(now_ns, step_ns)
    }

    /// Steps after `now_ns` until the next fix is due (1: the next step).
    pub fn steps_until_due(&self, now_ns: u64, step_ns: u64) -> u64 {
        self.timer.steps_until_due(now_ns, step_ns)
    }

    /// The antenna's East-North position, m, with its body at `body` in the
    /// world, before noise.
    pub fn east_north(&self, body: Pose2) -> [f64; 2] {
        let antenna = body.compose(&self.config.origin);
        let to_enu = Pose2::new(0.0, 0.0, self.config.ref_yaw_rad);
        let [e, n] = to_enu.transform_point([antenna.x_m, antenna.y_m]);
        [e + self.config.ref_easting_m, n + self.config.ref_northing_m]
    }

    /// The fix at `stamp` with the body at `body` (noise drawn whether or
    /// not the fix is published, so that the stream does not depend on
    /// subscribers).
    pub fn fix(&mut self, stamp: SimTime, body: Pose2) -> &NavSatFix {
        let [mut east_m, mut north_m] = self.east_north(body);
        if let Some(noise) = &self.noise {
            east_m += noise.sample(&mut self.rng);
            north_m += noise.sample(&mut self.rng);
        }
        let (latitude, longitude) = self.reference.geodetic(east_m, north_m);
        self.fix.header.stamp = stamp.to_ros();
        self.fix.latitude = latitude;
        self.fix.longitude = longitude;
        self.fix.altitude = self.altitude_m;
        &self.fix
    }

    /// The antenna's mount on its body (body → antenna frame), for `tf_static`.
    pub fn mount_transform(&self, namespace: &str) -> TransformStamped {
        let o = self.config.origin;
        TransformStamped {
            header: Header { stamp: Default::default(), frame_id: resolve_frame(namespace, &self.config.body) },
            child_frame_id: resolve_frame(namespace, &self.config.frame),
            transform: Transform {
                translation: Vector3 { x: o.x_m, y: o.y_m, z: 0.0 },
                rotation: Quaternion::from_yaw(o.theta_rad),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_plugins::PluginContext;
    use flotilla_wire::geodesy::{WGS84_A_M, WGS84_E2};
    use std::path::Path;

    /// Degrees of arc per metre along the equator and along the meridian at
    /// the equator: 1 / a and 1 / (a (1 - e²)) in radians.
    fn equator_deg_per_m() -> (f64, f64) {
        ((1.0 / WGS84_A_M).to_degrees(), (1.0 / (WGS84_A_M * (1.0 - WGS84_E2))).to_degrees())
    }

    #[test]
    fn the_reference_point_is_the_reference() {
        for (lat, lon) in [(0.0, 0.0), (45.5, -73.6), (-33.9, 151.2), (78.2, 15.6)] {
            let (fix_lat, fix_lon) = Reference::new(lat, lon).geodetic(0.0, 0.0);
            assert!(
                (fix_lat - lat).abs() < 1e-12 && (fix_lon - lon).abs() < 1e-12,
                "{lat}, {lon}: {fix_lat}, {fix_lon}"
            );
        }
    }

    #[test]
    fn a_kilometre_east_or_north_on_the_equator() {
        let equator = Reference::new(0.0, 0.0);
        let (lat, lon) = equator.geodetic(1000.0, 0.0);
        // ECEF (a, 1000, 0): longitude atan(1000 / a).
        assert_eq!(lat, 0.0);
        assert!((lon - (1000.0 / WGS84_A_M).atan().to_degrees()).abs() < 1e-12, "{lon}");
        let (lat, lon) = equator.geodetic(0.0, 1000.0);
        // The meridian's radius of curvature at the equator is a (1 - e²):
        // 1000 m north is 1000 / (a (1 - e²)) rad, to within the tangent
        // plane's height there (0.08 m), about 1e-8 of it.
        let (_, deg_per_m_north) = equator_deg_per_m();
        assert!((lat / (1000.0 * deg_per_m_north) - 1.0).abs() < 1e-6, "{lat}");
        assert_eq!(lon, 0.0);
    }

    #[test]
    fn east_and_north_follow_the_meridian_and_the_parallel_at_45_degrees() {
        // At 45°, 1 m north is 1 / M rad of latitude and 1 m east 1 / (N cos φ)
        // rad of longitude, M and N the meridian and prime-vertical radii.
        let lat0 = 45.0f64;
        let s2 = lat0.to_radians().sin().powi(2);
        let n = WGS84_A_M / (1.0 - WGS84_E2 * s2).sqrt();
        let m = WGS84_A_M * (1.0 - WGS84_E2) / (1.0 - WGS84_E2 * s2).powf(1.5);
        let reference = Reference::new(lat0, 10.0);
        let (lat, lon) = reference.geodetic(0.0, 10.0);
        assert!((lat - lat0 - (10.0 / m).to_degrees()).abs() < 1e-10, "{lat}");
        assert!((lon - 10.0).abs() < 1e-12);
        let (lat, lon) = reference.geodetic(10.0, 0.0);
        assert!((lon - 10.0 - (10.0 / (n * lat0.to_radians().cos())).to_degrees()).abs() < 1e-10, "{lon}");
        assert!((lat - lat0).abs() < 1e-9, "10 m east on the tangent plane stays on the parallel: {lat}");
    }

    fn config(yaml: &str) -> GpsConfig {
        let ctx = PluginContext::single_body(Path::new("m.yaml"), "robot1", "base", &[]);
        GpsConfig::parse(&serde_yaml::from_str(yaml).unwrap(), "gps", &ctx).unwrap()
    }

    #[test]
    fn the_antenna_sits_at_its_origin_on_the_body_and_the_world_turns_by_ref_yaw() {
        let gps = Gps::new(config("{body: base, origin: [1, 0, 0]}"), "robot1", 7, None);
        let [e, n] = gps.east_north(Pose2::new(2.0, 3.0, std::f64::consts::FRAC_PI_2));
        assert!((e - 2.0).abs() < 1e-12 && (n - 4.0).abs() < 1e-12, "{e}, {n}");
        let turned =
            Gps::new(config("{body: base, ref_yaw_radians: 1.5707963267948966, ref_easting: 100}"), "", 7, None);
        let [e, n] = turned.east_north(Pose2::new(1.0, 0.0, 0.0));
        assert!((e - 100.0).abs() < 1e-12 && (n - 1.0).abs() < 1e-12, "{e}, {n}");
    }

    #[test]
    fn a_fix_says_where_and_how_sure() {
        let mut gps = Gps::new(config("{body: base, ref_lat: 45, ref_lon: 10}"), "robot1", 7, None);
        let fix = gps.fix(SimTime { nanos: 1_500_000_000 }, Pose2::new(0.0, 0.0, 0.0)).clone();
        assert!((fix.latitude - 45.0).abs() < 1e-12 && (fix.longitude - 10.0).abs() < 1e-12);
        assert_eq!((fix.header.stamp.sec, fix.header.stamp.nanosec), (1, 500_000_000));
        assert_eq!(fix.header.frame_id, "robot1_gps");
        assert_eq!((fix.status.status, fix.status.service), (NavSatStatus::STATUS_FIX, NavSatStatus::SERVICE_GPS));
        assert_eq!(fix.position_covariance_type, NavSatFix::COVARIANCE_TYPE_DIAGONAL_KNOWN);
        assert_eq!(fix.position_covariance[0], 0.01);
    }

    #[test]
    fn a_world_georeference_is_the_reference_unless_the_entry_names_one() {
        let map_origin = Some([42.8, -71.5, 30.0]);
        let mut from_map = Gps::new(config("{body: base}"), "", 7, map_origin);
        let fix = from_map.fix(SimTime::ZERO, Pose2::new(0.0, 0.0, 0.0)).clone();
        assert!((fix.latitude - 42.8).abs() < 1e-12 && (fix.longitude + 71.5).abs() < 1e-12, "{fix:?}");
        assert_eq!(fix.altitude, 30.0);
        let mut own = Gps::new(config("{body: base, ref_lat: 45}"), "", 7, map_origin);
        let fix = own.fix(SimTime::ZERO, Pose2::new(0.0, 0.0, 0.0)).clone();
        assert!((fix.latitude - 45.0).abs() < 1e-12 && fix.longitude.abs() < 1e-12, "the entry's own: {fix:?}");
        assert_eq!(fix.altitude, 0.0);
    }

    #[test]
    fn noise_is_seeded_and_as_wide_as_configured() {
        let noisy = || Gps::new(config("{body: base, noise_std_dev: 2.0}"), "", 42, None);
        let (mut a, mut b) = (noisy(), noisy());
        let metres_per_deg = 1.0 / equator_deg_per_m().0;
        let mut sum_sq = 0.0;
        for k in 0..2000 {
            let fa = a.fix(SimTime { nanos: k }, Pose2::new(0.0, 0.0, 0.0)).clone();
            let fb = b.fix(SimTime { nanos: k }, Pose2::new(0.0, 0.0, 0.0)).clone();
            assert_eq!((fa.latitude, fa.longitude), (fb.latitude, fb.longitude), "same seed, same stream");
            sum_sq += (fa.longitude * metres_per_deg).powi(2);
        }
        let std_dev_m = (sum_sq / 2000.0).sqrt();
        assert!((std_dev_m - 2.0).abs() < 0.15, "east noise {std_dev_m} m");
    }
}
