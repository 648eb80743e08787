//! Every world shipped in `configs/` loads, with every plugin entry valid:
//! the README's commands must not meet a broken example.

use std::path::Path;

use flotilla_world_file::load_world;

fn configs() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs")
}

#[test]
fn every_example_world_loads() {
    for world in [
        "office/world.yaml",
        "nav2/world.yaml",
        "tests/room/world.yaml",
        "tests/room/ramp.world.yaml",
        "tests/room/annex.world.yaml",
        "tests/resim/world.yaml",
        "tests/tricycle/world.yaml",
        "tests/localization/world.yaml",
        "pioneer/world.yaml",
        "tests/vehicle/world.yaml",
        "tests/tween/world.yaml",
        "tests/determinism/world.yaml",
        "tests/gps/world.yaml",
        "tests/imu/world.yaml",
        "tests/sonar/world.yaml",
        "tests/pioneer/world.yaml",
        "building/building.world.yaml",
        "building/lift.world.yaml",
        "tests/doors/world.yaml",
        "tests/lift/world.yaml",
        "tests/battery/world.yaml",
        "tests/pioneer/battery.world.yaml",
    ] {
        let spec = load_world(&configs().join(world)).unwrap_or_else(|e| panic!("{world}: {e}"));
        assert!(!spec.models.is_empty(), "{world} has robots");
    }
}

#[test]
fn the_nav2_robot_uses_nav2s_default_names() {
    let spec = load_world(&configs().join("nav2/world.yaml")).unwrap();
    let robot = &spec.models[0];
    assert_eq!(robot.namespace, "", "no namespace: /cmd_vel, /odom, /scan");
    assert_eq!(robot.bodies[0].name, "base_link");
}

#[test]
fn a_pioneer_entry_naming_a_missing_sibling_is_refused_with_file_model_and_plugin() {
    let err = load_world(&configs().join("tests/pioneer/broken/missing_laser.world.yaml")).unwrap_err().to_string();
    assert!(err.contains("missing_laser.model.yaml"), "{err}");
    assert!(err.contains("model \"r1\" plugin \"pioneer\""), "{err}");
    assert!(err.contains("\"laser\": plugin \"lidar\" does not exist in model \"r1\""), "{err}");
}
