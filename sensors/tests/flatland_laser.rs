//! Flatland's own laser test (`laser_test.cpp` on `laser_tests/range_test`):
//! the same worlds must give the same ranges, frames and topics.

use std::path::Path;

use flotilla_plugins::laser::LaserConfig;
use flotilla_plugins::{entry_of, PluginConfig, PluginContext};
use flotilla_sensors::laser::Laser;
use flotilla_sensors::scene::Scene;
use flotilla_wire::names::resolve_topic;
use flotilla_wire::time::SimTime;
use flotilla_world_file::load_world;

struct Scan {
    topic: String,
    frame: String,
    angles: [f32; 3],
    range_max: f32,
    ranges: Vec<f32>,
}

fn scans(world: &str) -> Vec<Scan> {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures/flatland/laser_tests/range_test").join(world);
    let description = load_world(&path).unwrap().initial_description().unwrap();
    let scene = Scene::new(&description);
    let model = &description.models[0];
    let ctx = PluginContext::of(model, &description.layer_names);
    model
        .plugins
        .iter()
        .filter(|p| p.plugin_type == <LaserConfig as PluginConfig>::TYPE)
        .map(|p| {
            let config = LaserConfig::parse(&entry_of(p, ctx.model_file).unwrap(), &p.name, &ctx).unwrap();
            let pose = model.body(&config.body).unwrap().pose;
            let topic = resolve_topic(&model.namespace, &config.topic);
            let mut laser = Laser::new(config, 0, 0);
            laser.scan(&scene, pose);
            let msg = laser.message(SimTime::ZERO, &model.namespace);
            Scan {
                topic,
                frame: msg.header.frame_id,
                angles: [msg.angle_min, msg.angle_max, msg.angle_increment],
                range_max: msg.range_max,
                ranges: msg.ranges,
            }
        })
        .collect()
}

/// Expected ranges in metres as Flatland's test states them (f64 literals).
fn assert_ranges(scan: &Scan, expected: &[f64]) {
    assert_eq!(scan.ranges.len(), expected.len(), "{}: {:?}", scan.topic, scan.ranges);
    for (got, want) in scan.ranges.iter().zip(expected) {
        if want.is_nan() {
            assert!(got.is_nan(), "{}: {:?} != {expected:?}", scan.topic, scan.ranges);
        } else {
            assert!((f64::from(*got) - want).abs() < 1e-5, "{}: {:?} != {expected:?}", scan.topic, scan.ranges);
        }
    }
}

use std::f32::consts::{FRAC_PI_2, PI};

#[test]
fn range_test_world() {
    let s = scans("world.yaml");
    assert_eq!(s.len(), 3);
    assert_eq!((s[0].topic.as_str(), s[0].frame.as_str()), ("/r/scan", "r_laser_front"));
    assert_eq!(s[0].angles, [-FRAC_PI_2, FRAC_PI_2, FRAC_PI_2]);
    assert_eq!(s[0].range_max, 5.0);
    assert_ranges(&s[0], &[4.5, 4.4, 4.3]);

    assert_eq!((s[1].topic.as_str(), s[1].frame.as_str()), ("/scan_center", "r_center_laser"));
    assert_eq!(s[1].angles, [0.0, 2.0 * PI, FRAC_PI_2]);
    assert_ranges(&s[1], &[4.8, 4.7, 4.6, 4.9, 4.8]);

    assert_eq!((s[2].topic.as_str(), s[2].frame.as_str()), ("/r/scan_back", "r_laser_back"));
    assert_eq!(s[2].range_max, 4.0);
    assert_ranges(&s[2], &[f64::NAN, 3.2, 3.5, f64::NAN, f64::NAN]);
}

#[test]
fn clockwise_world() {
    let s = scans("world.cw.yaml");
    assert_eq!(s[0].topic, "/r/scan");
    assert_ranges(&s[0], &[4.3, 4.4, 4.5]);
}

#[test]
fn clockwise_asymmetrical_world() {
    let s = scans("world.cw.asymmetrical.yaml");
    assert_eq!((s[0].topic.as_str(), s[0].frame.as_str()), ("/r/scan1", "r_laser_flipped_custom"));
    assert_ranges(&s[0], &[4.489490, 4.422091, 4.400000]);
    assert_eq!((s[1].topic.as_str(), s[1].frame.as_str()), ("/r/scan2", "r_laser_normal"));
    assert_ranges(&s[1], &[4.489490, 4.605707, 4.777099]);
}
