//! The ROS-facing surface (`flotilla_plugins::surface`) of real worlds: what
//! the bridge announces and the Python package looks topic types up in.

use flotilla_plugins::registry::{self, Direction, TopicSpec};
use flotilla_plugins::surface::{surface, Durability, ServiceEndpoint};
use flotilla_wire::description::WorldDescription;
use flotilla_wire::Keys;
use flotilla_world_file::load_world;

/// The room's description, as the world serves it.
fn room() -> WorldDescription {
    let world = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/tests/room/world.yaml");
    load_world(&world).unwrap().initial_description().unwrap()
}

#[test]
fn the_room_shows_clock_tf_scan_odometry_and_the_services() {
    let surface = surface(&room(), &Keys::new("s"), &[("/spawn_model", "flatland_msgs/srv/SpawnModel")]);
    let topics: Vec<(&str, &str)> = surface.topics.iter().map(|t| (t.key.as_str(), t.ros_type)).collect();
    assert_eq!(
        topics,
        vec![
            ("clock", "rosgraph_msgs/msg/Clock"),
            ("robot/odometry/filtered", "nav_msgs/msg/Odometry"),
            ("robot/odometry/ground_truth", "nav_msgs/msg/Odometry"),
            ("robot/scan", "sensor_msgs/msg/LaserScan"),
            ("robot/twist", "geometry_msgs/msg/TwistWithCovarianceStamped"),
            ("tf", "tf2_msgs/msg/TFMessage"),
            ("tf_static", "tf2_msgs/msg/TFMessage"),
        ]
    );
    let tf_static = surface.topics.iter().find(|t| t.key == "tf_static").unwrap();
    assert_eq!(tf_static.durability, Durability::TransientLocal, "latched");
    assert_eq!(
        surface.services,
        vec![ServiceEndpoint { key: "spawn_model".into(), ros_type: "flatland_msgs/srv/SpawnModel" }]
    );
    assert_eq!(
        surface.actions,
        vec![ServiceEndpoint { key: "simulate_steps".into(), ros_type: "simulation_interfaces/action/SimulateSteps" }]
    );
}

#[test]
fn robots_on_maps_show_their_map_name_and_grid_latched() {
    let world = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/building/building.world.yaml");
    let description = load_world(&world).unwrap().initial_description().unwrap();
    let surface = surface(&description, &Keys::new("s"), &[]);
    for (key, ros_type) in [
        ("rider/map_name", "std_msgs/msg/String"),
        ("rider/map", "nav_msgs/msg/OccupancyGrid"),
        ("resident/map_name", "std_msgs/msg/String"),
    ] {
        let topic = surface.topics.iter().find(|t| t.key == key).unwrap_or_else(|| panic!("{key} missing"));
        assert_eq!((topic.ros_type, topic.durability, topic.depth), (ros_type, Durability::TransientLocal, 1));
    }
    assert!(!surface.topics.iter().any(|t| t.key.ends_with("map_command")), "taken in, not published");
    assert!(!room_has_map_topics(), "a world of one map shows none");
}

fn room_has_map_topics() -> bool {
    surface(&room(), &Keys::new("s"), &[]).topics.iter().any(|t| t.key.ends_with("map_name"))
}

#[test]
fn the_ros_prefix_goes_in_front_of_every_key() {
    let surface = surface(&room(), &Keys::new("s").with_ros_prefix("env3"), &[("/pause", "std_srvs/srv/Empty")]);
    assert!(surface.topics.iter().all(|t| t.key.starts_with("env3/")), "{:?}", surface.topics);
    assert_eq!(surface.services[0].key, "env3/pause");
}

/// Every registered plugin type shows ROS 2 what it publishes: a model
/// with one instance of each (its registry example) has each type's
/// published topics in the surface.
#[test]
fn every_registered_plugin_type_shows_its_topics() {
    let dir = std::env::temp_dir().join(format!("flotilla-surface-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plugins: String = registry::REGISTRY.iter().map(|t| format!("  - {}\n", t.example)).collect();
    let model = format!("{}plugins:\n{plugins}", registry::EXAMPLE_MODEL);
    std::fs::write(dir.join("all.model.yaml"), model).unwrap();
    // Two maps: the Lift's example serves floor-1 and floor-2.
    let world = "properties: {maps: {floor-1: l1, floor-2: l2}}\nlayers: [{name: l1}, {name: l2}]\n\
                 models:\n  - {name: bot, model: all.model.yaml, namespace: bot}\n";
    std::fs::write(dir.join("world.yaml"), world).unwrap();
    let description = load_world(&dir.join("world.yaml")).unwrap().initial_description().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let keys = Keys::new("s");
    let shown = surface(&description, &keys, &[]);
    for t in registry::REGISTRY {
        let model = &description.models[0];
        let plugin = model.plugins.iter().find(|p| p.plugin_type == t.name).unwrap();
        let ctx = flotilla_plugins::PluginContext::of(model, &description.layer_names);
        let entry = flotilla_plugins::entry_of(plugin, ctx.model_file).unwrap();
        let published: Vec<TopicSpec> = t
            .topics(&entry, &plugin.name, &ctx, &model.namespace)
            .unwrap()
            .into_iter()
            .filter(|spec| spec.direction == Direction::Publish)
            .collect();
        // Every type but a pure actuator (Tween) and the Pioneer
        // interface (a TCP port; its siblings list the topics it uses)
        // publishes something.
        assert!(!published.is_empty() || ["Tween", "Pioneer"].contains(&t.name), "{} publishes nothing", t.name);
        for spec in published {
            let key = keys.ros(&spec.name);
            assert!(
                shown.topics.iter().any(|topic| topic.key == key && topic.ros_type == spec.ros_type),
                "{}: {key} ({}) is not in the surface",
                t.name,
                spec.ros_type
            );
        }
    }
}
