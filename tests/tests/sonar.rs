//! `flotilla-sonar` serves the Sonar plugin: in a walled room, one
//! transducer reads the box ahead, the other the wall beyond a box on a
//! layer the sonar does not scan; the cloud holds both hits in the robot's
//! frame (for a subscriber that came late, too), and the transducer mounts
//! go latched on tf_static.

mod common;

use std::time::Duration;

use common::Sim;
use flotilla_messages::sensor_msgs::{PointCloud2, Range};
use flotilla_messages::tf2_msgs::TFMessage;

const T: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sonar_reads_what_its_layers_show() {
    let world = common::config("tests/sonar/world.yaml");
    let mut sim = Sim::start("sonar", &world, &[], &[]).await;
    let mut latched = sim.subscribe::<TFMessage>("/tf_static").await;
    let mut ahead = sim.subscribe::<Range>("/robot/sonar/0").await;
    let mut left = sim.subscribe::<Range>("/robot/sonar/1").await;
    sim.spawn_node("flotilla-sonar", "flotilla-sonar", &[]);

    // From (5.2, 5) to the box's face at x = 6.75.
    let reading = ahead.next(T).await;
    assert!((f64::from(reading.range) - 1.55).abs() < 1e-5, "ahead: {}", reading.range);
    assert_eq!(reading.radiation_type, Range::ULTRASOUND);
    assert_eq!((reading.min_range, reading.max_range), (0.1, 6.0));
    assert!((f64::from(reading.field_of_view) - 30f64.to_radians()).abs() < 1e-6);
    assert_eq!(reading.header.frame_id, "robot_sonar_0");
    // From (5, 5.2) past the hidden box at (5, 7) to the wall at y = 10.
    let reading = left.next(T).await;
    assert!((f64::from(reading.range) - 4.8).abs() < 1e-5, "left: {}", reading.range);

    // A subscriber that comes once the sonar runs gets the cloud too,
    // though nobody listened under robot/ when its outputs were announced.
    let mut cloud = sim.subscribe::<PointCloud2>("/robot/sonar_pointcloud2").await;
    let points = cloud.next(T).await;
    assert_eq!(points.header.frame_id, "robot_base");
    let xyz = points.xyz_points();
    assert_eq!(xyz.len(), 2, "{xyz:?}");
    assert!((xyz[0][0] - 1.75).abs() < 1e-5 && xyz[0][1].abs() < 1e-5, "{xyz:?}");
    assert!(xyz[1][0].abs() < 1e-5 && (xyz[1][1] - 5.0).abs() < 1e-5, "{xyz:?}");

    let mounts = latched.next(T).await;
    let frames: Vec<(&str, &str)> =
        mounts.transforms.iter().map(|t| (t.header.frame_id.as_str(), t.child_frame_id.as_str())).collect();
    assert_eq!(frames, [("robot_base", "robot_sonar_0"), ("robot_base", "robot_sonar_1")]);
}
