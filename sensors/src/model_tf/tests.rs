//! Flatland's model_tf_publisher_test, on its own fixtures: a turtlebot-like
//! model (base welded to an antenna, two free wheels, two bumpers) stepped
//! 100 times, then transforms looked up through the published tree.

use std::collections::HashMap;
use std::path::Path;

use flotilla_messages::geometry_msgs::TransformStamped;
use flotilla_plugins::configured;
use flotilla_plugins::model_tf_publisher::ModelTfPublisherConfig;
use flotilla_wire::geometry::Pose2;
use flotilla_wire::world_to_nodes::WorldState;
use flotilla_world_file::load_world;

use super::ModelTf;

/// Every transform published after 100 steps, static and changing.
fn published(test: &str) -> (ModelTf, Vec<TransformStamped>) {
    let world = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/fixtures/flatland/model_tf_publisher_tests")
        .join(test)
        .join("world.yaml");
    let description = load_world(&world).unwrap().initial_description().unwrap();
    let instance = configured::<ModelTfPublisherConfig>(&description, &|_, _| true).remove(0);
    let mut tf = ModelTf::new(instance.config, instance.model).unwrap();
    let state = WorldState::at_rest(&description, 100);
    let mut transforms = tf.static_transforms().to_vec();
    assert!(tf.due(state.time.nanos, state.step_ns));
    tf.update(state.time, &state.bodies, &mut transforms);
    (tf, transforms)
}

/// tf2's lookupTransform(target, source) over a tree given as edges.
fn lookup(transforms: &[TransformStamped], target: &str, source: &str) -> Option<Pose2> {
    let parent: HashMap<&str, (&str, Pose2)> = transforms
        .iter()
        .map(|t| {
            let p = Pose2::new(t.transform.translation.x, t.transform.translation.y, t.transform.rotation.yaw());
            (t.child_frame_id.as_str(), (t.header.frame_id.as_str(), p))
        })
        .collect();
    // pose of `frame` in the root frame, and the root's name
    let to_root = |frame: &str| -> (String, Pose2) {
        let (mut name, mut pose) = (frame.to_string(), Pose2::default());
        while let Some((up, edge)) = parent.get(name.as_str()) {
            pose = edge.compose(&pose);
            name = up.to_string();
        }
        (name, pose)
    };
    let known = |f: &str| parent.contains_key(f) || parent.values().any(|(p, _)| *p == f);
    if !known(target) || !known(source) {
        return None;
    }
    let ((root_t, t), (root_s, s)) = (to_root(target), to_root(source));
    (root_t == root_s).then(|| t.inverse().compose(&s))
}

fn assert_tf(transforms: &[TransformStamped], target: &str, source: &str, expected: [f64; 3]) {
    let p = lookup(transforms, target, source).unwrap_or_else(|| panic!("no {target} → {source} in {transforms:#?}"));
    let angle_error = flotilla_wire::geometry::wrap_angle(p.theta_rad - expected[2]).abs();
    assert!(
        (p.x_m - expected[0]).abs() < 1e-5 && (p.y_m - expected[1]).abs() < 1e-5 && angle_error < 1e-5,
        "{target} → {source}: got {p:?}, expected {expected:?}"
    );
}

#[test]
fn tf_publish_test_a_world_frame_reference_antenna_and_excluded_bumpers() {
    let (tf, transforms) = published("tf_publish_test_A");
    assert_eq!(tf.config().update_rate_hz, 5000.0);
    assert_eq!(tf.config().reference, "antenna");
    assert_tf(&transforms, "world", "my_robot_base", [8.0, 6.0, -0.575958653]);
    assert_tf(&transforms, "world", "my_robot_antenna", [8.0, 6.0, -0.575958653]);
    assert_tf(&transforms, "my_robot_base", "my_robot_left_wheel", [-0.25, 1.0, 0.0]);
    assert_tf(&transforms, "my_robot_base", "my_robot_right_wheel", [-0.25, -1.0, 0.0]);
    assert!(lookup(&transforms, "my_robot_base", "my_robot_front_bumper").is_none(), "excluded");
    assert!(lookup(&transforms, "my_robot_base", "my_robot_rear_bumper").is_none(), "excluded");
    let rigid: Vec<&str> = tf.static_transforms().iter().map(|t| t.child_frame_id.as_str()).collect();
    assert_eq!(rigid, vec!["my_robot_base"], "only the welded base is static");
}

#[test]
fn tf_publish_test_b_defaults_reference_the_first_body_and_no_world_frame() {
    let (tf, transforms) = published("tf_publish_test_B");
    assert_eq!(tf.config().update_rate_hz, f64::INFINITY);
    assert_eq!(tf.config().reference, "base");
    assert_tf(&transforms, "base", "antenna", [0.0, 0.0, 0.0]);
    assert_tf(&transforms, "base", "left_wheel", [-0.25, 1.0, 0.0]);
    assert_tf(&transforms, "base", "right_wheel", [-0.25, -1.0, 0.0]);
    assert_tf(&transforms, "base", "front_bumper", [2.0, 0.0, 0.0]);
    assert_tf(&transforms, "base", "rear_bumper", [-2.0, 0.0, 0.0]);
    assert!(lookup(&transforms, "map", "base").is_none(), "publish_tf_world is off");
}
