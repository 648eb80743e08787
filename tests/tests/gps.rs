//! `flotilla-gps` serves Flatland's Gps: fixes of the antenna at two poses
//! of its body against latitudes and longitudes worked out from the WGS 84
//! radii of curvature, and the antenna's mount latched on tf_static.

mod common;

use std::time::Duration;

use common::Sim;
use flotilla_messages::sensor_msgs::{NavSatFix, NavSatStatus};
use flotilla_messages::tf2_msgs::TFMessage;

const T: Duration = Duration::from_secs(30);

/// Latitude and longitude, degrees, of a point `east_m`, `north_m` from
/// `origin` (latitude, longitude in degrees), to first order: 1 m north is
/// 1 / M rad of latitude and 1 m east 1 / (N cos φ) rad of longitude (M, N
/// the meridian and prime-vertical radii of curvature). Within 10 m the
/// second-order terms are under 1e-11°.
fn expected_fix(origin: (f64, f64), east_m: f64, north_m: f64) -> (f64, f64) {
    let (a_m, e2, lat0) = (6_378_137.0, 0.006_694_379_990_14, origin.0.to_radians());
    let s2 = lat0.sin().powi(2);
    let n_m = a_m / (1.0 - e2 * s2).sqrt();
    let m_m = a_m * (1.0 - e2) / (1.0 - e2 * s2).powf(1.5);
    (origin.0 + (north_m / m_m).to_degrees(), origin.1 + (east_m / (n_m * lat0.cos())).to_degrees())
}

fn assert_fix(fix: &NavSatFix, east_m: f64, north_m: f64) {
    assert_fix_from(fix, (45.0, 10.0), east_m, north_m);
}

fn assert_fix_from(fix: &NavSatFix, origin: (f64, f64), east_m: f64, north_m: f64) {
    let (lat, lon) = expected_fix(origin, east_m, north_m);
    // 1e-9° is about 0.1 mm.
    assert!((fix.latitude - lat).abs() < 1e-9, "latitude {} against {lat}", fix.latitude);
    assert!((fix.longitude - lon).abs() < 1e-9, "longitude {} against {lon}", fix.longitude);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixes_follow_the_antenna_at_two_poses() {
    let world = common::config("tests/gps/world.yaml");
    let mut sim = Sim::start("gps", &world, &[], &[]).await;
    let mut latched = sim.subscribe::<TFMessage>("/tf_static").await;
    let mut fixes = sim.subscribe::<NavSatFix>("/surveyor/gps/fix").await;
    sim.spawn_node("flotilla-gps", "flotilla-gps", &[]);

    // Body at (3, 4) facing east, antenna 1 m ahead: (4, 4).
    let fix = fixes.next(T).await;
    assert_eq!(fix.header.frame_id, "surveyor_gps");
    assert_eq!((fix.status.status, fix.status.service), (NavSatStatus::STATUS_FIX, NavSatStatus::SERVICE_GPS));
    assert_eq!(fix.position_covariance_type, NavSatFix::COVARIANCE_TYPE_DIAGONAL_KNOWN);
    assert_eq!(fix.position_covariance, [0.01, 0.0, 0.0, 0.0, 0.01, 0.0, 0.0, 0.0, 0.01]);
    assert_fix(&fix, 4.0, 4.0);

    // Body at (-2, 6) facing north, antenna 1 m ahead: (-2, 7).
    let (ok, out) = sim.cli(&["move", "surveyor", "-2", "6", "1.5707963267948966"]);
    assert!(ok, "{out}");
    let moved = fixes.until(T, |f| f.longitude < 10.0).await;
    assert_fix(&moved, -2.0, 7.0);

    let mount = latched.next(T).await;
    let t = &mount.transforms[0];
    assert_eq!((t.header.frame_id.as_str(), t.child_frame_id.as_str()), ("surveyor_base", "surveyor_gps"));
    assert_eq!(t.transform.translation.x, 1.0);
}

/// A Gps that names no reference takes the world's georeference, from an
/// ArMap layer whose `OriginLatLongAlt` line is written as ARIA and AMRISim
/// write it (AMRISim's `columbia.map`'s line). Only `OriginLatLonAlt` was
/// read, so such a map loaded ungeoreferenced and the fix said 0°, 0°, 0 m.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gps_on_an_armap_takes_its_origin_lat_long_alt() {
    let world = common::config("tests/gps/georeferenced.world.yaml");
    let mut sim = Sim::start("gps-armap", &world, &[], &[]).await;
    let mut fixes = sim.subscribe::<NavSatFix>("/surveyor/gps/fix").await;
    sim.spawn_node("flotilla-gps", "flotilla-gps", &[]);

    // Body at (3, 4) facing east, antenna 1 m ahead: (4, 4).
    let fix = fixes.next(T).await;
    assert_fix_from(&fix, (42.807191, -71.578661), 4.0, 4.0);
    assert_eq!(fix.altitude, 72.0, "the map's altitude");
}
