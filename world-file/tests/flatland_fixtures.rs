//! Flatland's own load-world fixtures: every valid world loads, every invalid
//! one is rejected with an error naming the same file, entity and facts as
//! Flatland's (table in ../shared/fixtures/README.md).

use std::path::{Path, PathBuf};

use flotilla_world_file::{load_world, LoadError};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures/flatland").join(rel)
}

fn load_err(dir: &str) -> LoadError {
    match load_world(&fixture(&format!("load_world_tests/{dir}/world.yaml"))) {
        Ok(_) => panic!("{dir} must be rejected"),
        Err(e) => e,
    }
}

/// Asserts the error names `file` (its file name), `entity` and every fact.
fn assert_names(err: &LoadError, file: &str, entity: &str, facts: &[&str]) {
    assert_eq!(err.file.file_name().unwrap().to_str().unwrap(), file, "file of: {err}");
    assert_eq!(err.entity, entity, "entity of: {err}");
    for fact in facts {
        assert!(err.to_string().contains(fact), "{err}\n  does not say {fact:?}");
    }
}

#[test]
fn simple_test_a_loads_everything() {
    let world = load_world(&fixture("load_world_tests/simple_test_A/world.yaml")).unwrap();
    assert_eq!(world.layer_names, ["2d", "3d", "4d", "5d", "lines", "robot"]);
    assert_eq!(world.layers.len(), 4);
    // one entry names three layers sharing one map
    assert_eq!(world.layers[1].names, ["3d", "4d", "5d"]);
    assert_eq!(world.layers[1].bits, 0b1110);
    assert!(!world.layers[0].segments.is_empty(), "map_server image layer has walls");
    assert_eq!(world.layers[2].segments.len(), 3, "three lines in map_lines.dat");
    assert!(world.layers[3].segments.is_empty(), "layer without a map");
    assert_eq!((world.settings.velocity_iterations, world.settings.position_iterations), (11, 12));

    let names: Vec<&str> = world.models.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["turtlebot1", "turtlebot2", "chair1", "person1"]);
    let turtlebot = &world.models[1];
    assert_eq!(turtlebot.namespace, "robot2");
    assert_eq!(turtlebot.bodies.len(), 5);
    assert_eq!(turtlebot.joints.len(), 4);
    let weld = &turtlebot.joints[0];
    assert_eq!(weld.name, "left_wheel_weld");
    assert!(weld.collide_connected);
    assert!(matches!(weld.kind, flotilla_wire::description::JointKind::Weld { frequency, .. } if frequency == 10.0));
    let antenna = &turtlebot.joints[3];
    assert!(
        matches!(antenna.kind, flotilla_wire::description::JointKind::Revolute { limits: Some([lo, hi]) } if lo == -0.002 && hi == 3.735)
    );
    // body poses are placed relative to the model pose
    let left = turtlebot.body("left_wheel").unwrap();
    assert!((left.pose.x_m - (3.0 + 1.0)).abs() < 1e-4, "{:?}", left.pose);
}

#[test]
fn line_segments_are_scaled_and_placed_at_the_origin() {
    let world = load_world(&fixture("load_world_tests/simple_test_A/world.yaml")).unwrap();
    let first = world.layers[2].segments[0];
    // "1 2 3 4" × 0.1 at origin [-1.20, -5, 1.23]
    let (s, c) = 1.23f64.sin_cos();
    let expect = [-1.2 + c * 0.1 - s * 0.2, -5.0 + s * 0.1 + c * 0.2];
    assert!((first.a[0] - expect[0]).abs() < 1e-9 && (first.a[1] - expect[1]).abs() < 1e-9, "{first:?}");
}

#[test]
fn missing_world_file_names_the_path() {
    let err = load_world(Path::new("/no/such/world.yaml")).unwrap_err();
    assert!(err.to_string().contains("/no/such/world.yaml") && err.to_string().contains("does not exist"), "{err}");
}

#[test]
fn world_invalid_a_has_no_properties() {
    assert_names(&load_err("world_invalid_A"), "world.yaml", "world", &["\"properties\" does not exist"]);
}

#[test]
fn world_invalid_b_color_needs_four_elements() {
    assert_names(
        &load_err("world_invalid_B"),
        "world.yaml",
        "layers index 0",
        &["\"color\" must have exactly 4 elements"],
    );
}

#[test]
fn world_invalid_c_names_every_unrecognized_entry() {
    assert_names(
        &load_err("world_invalid_C"),
        "world.yaml",
        "layers index 0",
        &["unrecognized entries", "random_param_1", "random_param_2", "random_param_3"],
    );
}

#[test]
fn world_invalid_d_duplicate_layer() {
    let err = load_err("world_invalid_D");
    assert_eq!(err.file.file_name().unwrap(), "world.yaml");
    assert!(err.message.contains("layer named \"layer\" already exists"), "{err}");
}

#[test]
fn world_invalid_e_duplicate_model() {
    let err = load_err("world_invalid_E");
    assert_eq!(err.file.file_name().unwrap(), "world.yaml");
    assert!(err.message.contains("model named \"turtlebot\" already exists"), "{err}");
}

#[test]
fn world_invalid_f_more_than_sixteen_layers() {
    let err = load_err("world_invalid_F");
    assert_names(
        &err,
        "world.yaml",
        "layers index 11",
        &["cannot add 3 more layers", "layer_15, layer_16, layer_17", "14 exist", "maximum is 16"],
    );
}

#[test]
fn map_invalid_a_origin_missing() {
    assert_names(&load_err("map_invalid_A"), "map.yaml", "layer \"2d\"", &["\"origin\" does not exist"]);
}

#[test]
fn map_invalid_b_image_cannot_be_loaded() {
    assert_names(&load_err("map_invalid_B"), "map.yaml", "layer \"2d\"", &["cannot load", "random_map.png"]);
}

#[test]
fn map_invalid_c_segment_file_cannot_be_loaded() {
    let err = load_err("map_invalid_C");
    assert!(err.to_string().contains("cannot load") && err.to_string().contains("random_file.dat"), "{err}");
    assert_eq!(err.entity, "layer \"lines\"");
}

#[test]
fn map_invalid_d_bad_segment_line() {
    assert_names(&load_err("map_invalid_D"), "map_lines.dat", "layer \"lines\"", &["line 6 of map_lines.dat"]);
}

#[test]
fn map_invalid_e_scale_missing() {
    assert_names(&load_err("map_invalid_E"), "map_lines.yaml", "layer \"lines\"", &["\"scale\" does not exist"]);
}

#[test]
fn model_invalid_a_bodies_not_a_list() {
    assert_names(
        &load_err("model_invalid_A"),
        "turtlebot.model.yaml",
        "model \"turtlebot\"",
        &["\"bodies\" must be a list"],
    );
}

#[test]
fn model_invalid_b_polygon_too_few_points() {
    assert_names(
        &load_err("model_invalid_B"),
        "turtlebot.model.yaml",
        "model \"turtlebot\" body \"base\" footprints index 1",
        &["\"points\" must have at least 3 elements"],
    );
}

#[test]
fn model_invalid_c_anchor_needs_two_elements() {
    assert_names(
        &load_err("model_invalid_C"),
        "turtlebot.model.yaml",
        "model \"turtlebot\" joint \"right_wheel_weld\" bodies index 1",
        &["\"anchor\" must have exactly 2 elements"],
    );
}

#[test]
fn model_invalid_d_joint_names_unknown_body() {
    assert_names(
        &load_err("model_invalid_D"),
        "turtlebot.model.yaml",
        "model \"turtlebot\" joint \"left_wheel_weld\" bodies index 1",
        &["no body named \"left_wheel_123\""],
    );
}

#[test]
fn model_invalid_e_footprint_layer_unknown() {
    assert_names(
        &load_err("model_invalid_E"),
        "turtlebot.model.yaml",
        "model \"turtlebot\" body \"left_wheel\" footprints index 0",
        &["layers {random_layer} do not exist"],
    );
}

#[test]
fn model_invalid_f_footprint_typo() {
    assert_names(
        &load_err("model_invalid_F"),
        "turtlebot.model.yaml",
        "model \"turtlebot\" body \"base\" footprints index 0",
        &["unrecognized entry random_paramter"],
    );
}

#[test]
fn model_invalid_g_body_typo() {
    assert_names(
        &load_err("model_invalid_G"),
        "turtlebot.model.yaml",
        "model \"turtlebot\" body \"base\"",
        &["unrecognized entry random_paramter"],
    );
}

#[test]
fn model_invalid_h_duplicate_body() {
    assert_names(
        &load_err("model_invalid_H"),
        "turtlebot.model.yaml",
        "model \"turtlebot\"",
        &["body named \"base\" already exists in model \"turtlebot\""],
    );
}

#[test]
fn model_invalid_i_duplicate_joint() {
    assert_names(
        &load_err("model_invalid_I"),
        "turtlebot.model.yaml",
        "model \"turtlebot\"",
        &["joint named \"wheel_weld\" already exists in model \"turtlebot\""],
    );
}

#[test]
fn model_invalid_j_polygon_too_many_points() {
    assert_names(
        &load_err("model_invalid_J"),
        "turtlebot.model.yaml",
        "model \"turtlebot\" body \"base\" footprints index 1",
        &["\"points\" must have at most 8 elements"],
    );
}

#[test]
fn laser_worlds_load_and_invalid_lasers_are_rejected() {
    for world in ["world.yaml", "world.cw.yaml", "world.cw.asymmetrical.yaml"] {
        load_world(&fixture(&format!("laser_tests/range_test/{world}"))).unwrap_or_else(|e| panic!("{world}: {e}"));
    }
    let a = load_world(&fixture("laser_tests/invalid_A/world.yaml")).unwrap_err();
    assert!(a.message.contains("\"range\" does not exist"), "{a}");
    assert_eq!(a.entity, "model \"robot1\" plugin \"laser_center\"");
    let b = load_world(&fixture("laser_tests/invalid_B/world.yaml")).unwrap_err();
    assert!(b.message.contains("max ≥ min"), "{b}");
}

#[test]
fn conestogo_office_loads_with_its_plugins() {
    let world = load_world(&fixture("conestogo_office_test/world.yaml")).unwrap();
    assert_eq!(world.layer_names, ["2d", "3d"]);
    assert!(world.layers[0].segments.len() > 1000, "{} segments", world.layers[0].segments.len());
    let types: Vec<&str> = world.models.iter().flat_map(|m| m.plugins.iter().map(|p| p.plugin_type.as_str())).collect();
    assert!(types.contains(&"Laser") && types.contains(&"TricycleDrive"), "{types:?}");
}

#[test]
fn model_tf_publisher_worlds_load_and_bad_bodies_are_rejected() {
    for ok in ["tf_publish_test_A", "tf_publish_test_B"] {
        load_world(&fixture(&format!("model_tf_publisher_tests/{ok}/world.yaml")))
            .unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
    let a = load_world(&fixture("model_tf_publisher_tests/invalid_A/world.yaml")).unwrap_err();
    assert!(a.message.contains("body \"random_body\" does not exist"), "{a}");
    let b = load_world(&fixture("model_tf_publisher_tests/invalid_B/world.yaml")).unwrap_err();
    assert!(b.message.contains("random_body_1"), "{b}");
    assert_eq!(b.entity, "model \"robot1\" plugin \"model_tf_publisher\"");
}

#[test]
fn bumper_worlds_load_and_excluding_a_missing_body_is_rejected_as_flatland_does() {
    let configs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/tests/bumper");
    let world = load_world(&configs.join("world.yaml")).unwrap();
    let types: Vec<&str> = world.models[0].plugins.iter().map(|p| p.plugin_type.as_str()).collect();
    assert_eq!(types, ["DiffDrive", "Bumper", "Bumper", "BoolSensor"]);
    let e = load_world(&configs.join("invalid_exclude/world.yaml")).unwrap_err();
    assert!(e.message.contains("Body with name \"random_body\" does not exist"), "{e}");
    assert_eq!(e.entity, "model \"robot1\" plugin \"Bumper_B\"");
    assert!(e.file.ends_with("invalid_exclude/robot.model.yaml"), "{e}");
}
