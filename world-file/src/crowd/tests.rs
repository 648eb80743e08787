use std::path::{Path, PathBuf};

use flotilla_plugins::pedestrian::{Behaviour, PedestrianConfig};
use flotilla_plugins::{configured, PluginConfig};
use flotilla_wire::description::{BodyKind, FootprintShape, WorldDescription};

use crate::load_world;

fn configs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/tests/crowd")
}

fn description(world: &str) -> WorldDescription {
    load_world(&configs().join(world)).unwrap().initial_description().unwrap()
}

fn agents(description: &WorldDescription) -> Vec<(String, PedestrianConfig)> {
    configured::<PedestrianConfig>(description, &|_, _| true)
        .into_iter()
        .map(|c| (c.model.name.clone(), c.config))
        .collect()
}

#[test]
fn a_crowd_section_makes_one_model_per_agent_after_the_world_s_own() {
    let description = description("room.world.yaml");
    let names: Vec<&str> = description.models.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["robot", "alice", "bob", "couple_1", "couple_2", "trolley"]);
    let alice = description.model("alice").unwrap();
    assert_eq!((alice.bodies.len(), alice.bodies[0].kind), (1, BodyKind::Kinematic));
    assert_eq!(alice.bodies[0].footprints[0].shape, FootprintShape::Circle { center: [0.0, 0.0], radius: 0.25 });
    assert_eq!(alice.plugins[0].plugin_type, PedestrianConfig::TYPE);

    let agents = agents(&description);
    let (_, walker) = &agents[0];
    assert_eq!((walker.behaviour, walker.waypoints.len(), walker.waypoints[1].pause_s), (Behaviour::Social, 2, 1.0));
    // a group's members stand side by side across its heading, and share its name
    let couple: Vec<_> = description.models[3..5].iter().map(|m| (m.pose.x_m, m.pose.y_m)).collect();
    assert_eq!(couple, [(1.0, 7.65), (1.0, 8.35)]);
    assert_eq!((agents[2].1.group.as_str(), agents[3].1.group.as_str()), ("couple", "couple"));
    assert!(!agents[1].1.sees_robots);
    // a scripted agent is a box that ignores forces
    let trolley = description.model("trolley").unwrap();
    assert!(matches!(trolley.bodies[0].footprints[0].shape, FootprintShape::Polygon { .. }));
    assert_eq!((agents[4].1.behaviour, agents[4].1.desired_speed_mps), (Behaviour::Scripted, 0.5));
}

#[test]
fn a_pedsim_scenario_gives_its_clusters_people_and_skips_its_robot() {
    let description = description("pedsim.world.yaml");
    let agents = agents(&description);
    let names: Vec<&str> = agents.iter().map(|(n, _)| n.as_str()).collect();
    // cluster 1 is pedsim's robot (type 2): skipped
    assert_eq!(names, ["scenario_2_1", "scenario_2_2", "scenario_2_3", "scenario_2_4", "scenario_3_1", "scenario_3_2"]);
    for model in &description.models[..4] {
        assert!((model.pose.x_m - 3.0).abs() <= 1.0 && (model.pose.y_m - 3.0).abs() <= 0.5, "{:?}", model.pose);
    }
    let (_, adult) = &agents[0];
    let way: Vec<[f64; 3]> = adult.waypoints.iter().map(|w| [w.x_m, w.y_m, w.pause_s]).collect();
    assert_eq!(way, [[8.0, 5.0, 0.0], [5.0, 8.0, crate::QUEUE_PAUSE_S], [2.0, 5.0, 0.0]]);
    assert_eq!(adult.waypoint_radius_m, 0.8);
    assert!((1.34 - 2.0 * 0.26..=1.34 + 2.0 * 0.26).contains(&adult.desired_speed_mps));
    assert_eq!(agents[4].1.desired_speed_mps, 0.9);
}

#[test]
fn desired_speeds_drawn_from_a_distribution_follow_the_seed() {
    let speeds = |seed: u64| {
        let dir = scratch();
        let world = dir.join("world.yaml");
        std::fs::write(
            &world,
            format!(
                "properties: {{seed: {seed}}}\nlayers: [{{name: floor}}]\ncrowd:\n  defaults: {{desired_speed: {{mean: 1.34, sd: 0.26}}}}\n  groups: [{{name: g, members: 20, pose: [0, 0], waypoints: [[5, 0]]}}]\n"
            ),
        )
        .unwrap();
        let description = load_world(&world).unwrap().initial_description().unwrap();
        agents(&description).into_iter().map(|(_, c)| c.desired_speed_mps).collect::<Vec<f64>>()
    };
    let (a, b, c) = (speeds(1), speeds(1), speeds(2));
    assert_eq!(a, b);
    assert_ne!(a, c);
    let mean = a.iter().sum::<f64>() / a.len() as f64;
    assert!((mean - 1.34).abs() < 0.15, "mean {mean} m/s");
    assert!(a.windows(2).any(|w| w[0] != w[1]));
}

#[test]
fn a_source_s_people_wait_offstage_and_come_on_one_every_period() {
    let dir = scratch();
    let world = dir.join("world.yaml");
    std::fs::write(
        &world,
        "properties: {}\nlayers: [{name: floor}]\ncrowd:\n  sources: [{name: door, pose: [1, 2], rate: 0.5, count: 3, start: 1, waypoints: [[9, 2]]}]\n",
    )
    .unwrap();
    let description = load_world(&world).unwrap().initial_description().unwrap();
    let agents = agents(&description);
    let names: Vec<&str> = agents.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["door_1", "door_2", "door_3"]);
    let firsts: Vec<f64> = agents.iter().map(|(_, c)| c.release.unwrap().first_s).collect();
    assert_eq!(firsts, [1.0, 3.0, 5.0]);
    for (_, config) in &agents {
        let release = config.release.unwrap();
        assert_eq!((release.at, release.every_s, config.cyclic), ([1.0, 2.0, 0.0], Some(6.0), false));
    }
    let door_1 = description.model("door_1").unwrap();
    assert_eq!((door_1.pose.x_m, door_1.pose.y_m), (1.0, 2.0 - flotilla_plugins::pedestrian::OFFSTAGE_M));
}

#[test]
fn bad_crowds_are_refused_with_file_entity_and_field() {
    let refused = |crowd: &str| {
        let dir = scratch();
        let world = dir.join("world.yaml");
        std::fs::write(&world, format!("properties: {{}}\nlayers: [{{name: floor}}]\ncrowd:\n{crowd}")).unwrap();
        std::fs::write(dir.join("bad.xml"), "<scenario>\n  <waypoint id=\"a\" x=\"1\" y=\"2\" r=\"1\"/>\n  <agent x=\"1\" y=\"1\" n=\"2\" dx=\"0\" dy=\"0\" type=\"0\">\n    <addwaypoint id=\"nowhere\"/>\n  </agent>\n</scenario>\n").unwrap();
        std::fs::write(
            dir.join("odd.xml"),
            "<scenario>\n  <waypoint id=\"a\" x=\"one\" y=\"2\" r=\"1\"/>\n</scenario>\n",
        )
        .unwrap();
        load_world(&world).unwrap_err().to_string()
    };
    let e = refused("  people: [{name: bob, pose: [1, 1], waypoints: [[2, 2]], desired_speed: -1}]\n");
    assert!(e.contains("world.yaml") && e.contains("bob") && e.contains("desired_speed"), "{e}");
    let e = refused("  people: [{name: bob, pose: [1, 1]}]\n");
    assert!(e.contains("bob") && e.contains("waypoints"), "{e}");
    let e = refused("  people: [{name: bob, pose: [1, 1], waypoints: [[2, 2]], speeed: 1}]\n");
    assert!(e.contains("speeed"), "{e}");
    let e = refused("  layers: [roof]\n  people: []\n");
    assert!(e.contains("roof"), "{e}");
    let e = refused("  groups: [{name: g, members: 0, pose: [0, 0], waypoints: [[1, 1]]}]\n");
    assert!(e.contains("members"), "{e}");
    let e = refused(
        "  people: [{name: a, pose: [0, 0], waypoints: [[1, 1]]}, {name: a, pose: [2, 0], waypoints: [[1, 1]]}]\n",
    );
    assert!(e.contains("named twice"), "{e}");
    let e = refused("  sources: [{name: s, pose: [0, 0], rate: 0, count: 2, waypoints: [[1, 1]]}]\n");
    assert!(e.contains("rate"), "{e}");
    let e = refused("  pedsim: bad.xml\n");
    assert!(e.contains("bad.xml") && e.contains("line 4") && e.contains("nowhere"), "{e}");
    let e = refused("  pedsim: odd.xml\n");
    assert!(e.contains("odd.xml") && e.contains("line 2") && e.contains("\"x\""), "{e}");
    let e = refused("  pedsim: missing.xml\n");
    assert!(e.contains("missing.xml"), "{e}");
}

fn scratch() -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "flotilla-crowd-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
