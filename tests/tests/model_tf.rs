//! `flotilla-tf` serves Flatland's ModelTfPublisher: on the fixture of
//! Flatland's own test, the welded base goes once on tf_static and
//! world → antenna and antenna → wheels go on tf at the update rate.

mod common;

use std::time::Duration;

use common::Sim;
use flotilla_messages::tf2_msgs::TFMessage;

const T: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tf_node_publishes_static_and_moving_transforms() {
    let world = "../shared/fixtures/flatland/model_tf_publisher_tests/tf_publish_test_A/world.yaml";
    let world = common::root().join(world).to_string_lossy().into_owned();
    let mut sim = Sim::start("model-tf", &world, &[], &[]).await;
    let mut latched = sim.subscribe::<TFMessage>("/tf_static").await;
    let mut tf = sim.subscribe::<TFMessage>("/tf").await;
    sim.spawn_node("flotilla-tf", "flotilla-tf", &[]);

    let rigid = latched.next(T).await;
    let frames: Vec<(&str, &str)> =
        rigid.transforms.iter().map(|t| (t.header.frame_id.as_str(), t.child_frame_id.as_str())).collect();
    assert_eq!(frames, vec![("my_robot_antenna", "my_robot_base")]);

    let moving = tf.until(T, |m| m.transforms.len() == 3).await;
    let frames: Vec<(&str, &str)> =
        moving.transforms.iter().map(|t| (t.header.frame_id.as_str(), t.child_frame_id.as_str())).collect();
    assert_eq!(
        frames,
        vec![
            ("world", "my_robot_antenna"),
            ("my_robot_antenna", "my_robot_left_wheel"),
            ("my_robot_antenna", "my_robot_right_wheel")
        ]
    );
    let world_to_antenna = &moving.transforms[0].transform;
    assert!((world_to_antenna.translation.x - 8.0).abs() < 1e-6 && (world_to_antenna.translation.y - 6.0).abs() < 1e-6);
}
