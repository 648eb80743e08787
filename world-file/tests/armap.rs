//! AMRISim's own office map (`../shared/fixtures/amrisim/AMROffice.map`) as
//! a world layer: its walls, boxes, goals and dock.

use std::path::Path;

use flotilla_world_file::load_world;

#[test]
fn amroffice_gives_its_walls_boxes_goals_and_dock() {
    let map = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures/amrisim/AMROffice.map");
    let dir = std::env::temp_dir().join(format!("flotilla-armap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let world = format!("properties: {{}}\nlayers:\n  - {{name: office, map: {:?}}}\n", map.canonicalize().unwrap());
    std::fs::write(dir.join("world.yaml"), world).unwrap();
    let spec = load_world(&dir.join("world.yaml"));
    let _ = std::fs::remove_dir_all(&dir);
    let spec = spec.unwrap();

    // 243 LINES; the 23,181 DATA points are the scans the lines were drawn
    // from (not obstacles); 5 Sim.BoxObstacle boxes, movable models
    let walls = &spec.layers[0].segments;
    assert_eq!(walls.len(), 243);
    // the first line, in metres
    let first = walls[0];
    assert_eq!((first.a, first.b), ([3.680, 25.836], [3.677, 24.307]));
    let boxes: Vec<_> = spec.models.iter().filter(|m| m.name.starts_with("office_box_")).collect();
    assert_eq!(boxes.len(), 5, "{:?}", spec.models.iter().map(|m| &m.name).collect::<Vec<_>>());
    // the last box: from (−7.981, 15.786) to (−6.479, 16.118)
    let last = boxes[4];
    let near = |a: f64, b: f64| (a - b).abs() < 1e-9;
    assert!(
        near(last.pose.x_m, (-7.981 - 6.479) / 2.0) && near(last.pose.y_m, (15.786 + 16.118) / 2.0),
        "{:?}",
        last.pose
    );
    assert_eq!(last.bodies[0].kind, flotilla_wire::description::BodyKind::Dynamic, "AMRISim's boxes can be pushed");
    assert_eq!(last.bodies[0].footprints[0].layers, spec.layers[0].bits);

    // The dock and five goals, as named poses.
    let names: Vec<&str> = spec.named_poses.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["Dock", "Outside", "room4", "Far Away", "room2", "room1"]);
    let dock = &spec.named_poses[0];
    assert_eq!((dock.pose.x_m, dock.pose.y_m, dock.tags.as_slice()), (-2.822, -2.937, &["dock".to_string()][..]));
    assert!((dock.pose.theta_rad - (-91.9f64).to_radians()).abs() < 1e-12);
}

#[test]
fn a_map_georeference_is_the_world_s_and_two_different_ones_are_refused() {
    let dir = std::env::temp_dir().join(format!("flotilla-armap-geo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let map = |name: &str, lat: f64| {
        std::fs::write(dir.join(name), format!("2D-Map\nOriginLatLonAlt: {lat} -71.5 30\nLINES\n0 0 1000 0\n"))
            .unwrap();
    };
    map("a.map", 42.8);
    map("b.map", 42.9);
    let world = |layers: &str| {
        std::fs::write(dir.join("world.yaml"), format!("properties: {{}}\nlayers:\n{layers}")).unwrap();
        load_world(&dir.join("world.yaml"))
    };
    let one = world("  - {name: floor, map: a.map}\n");
    let two = world("  - {name: floor, map: a.map}\n  - {name: annex, map: b.map}\n");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(one.unwrap().georeference, Some([42.8, -71.5, 30.0]));
    let error = two.unwrap_err().to_string();
    assert!(error.contains("b.map") && error.contains("one georeference"), "{error}");
}

#[test]
fn a_world_model_or_place_named_like_an_armap_box_or_goal_is_refused() {
    let map = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures/amrisim/AMROffice.map");
    let dir = std::env::temp_dir().join(format!("flotilla-armap-clash-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("crate.model.yaml"),
        "bodies:\n  - name: base\n    footprints:\n      - {type: circle, radius: 0.2, density: 1}\n",
    )
    .unwrap();
    let load = |rest: &str| {
        let layers =
            format!("properties: {{}}\nlayers:\n  - {{name: office, map: {:?}}}\n", map.canonicalize().unwrap());
        std::fs::write(dir.join("world.yaml"), layers + rest).unwrap();
        load_world(&dir.join("world.yaml")).map_err(|e| e.to_string())
    };
    let model = load("models:\n  - {name: office_box_30, model: crate.model.yaml}\n");
    let place = load("named_poses:\n  - {name: room4, pose: [0, 0, 0]}\n");
    let apart =
        load("models:\n  - {name: crate, model: crate.model.yaml}\nnamed_poses:\n  - {name: lobby, pose: [0, 0, 0]}\n");
    let _ = std::fs::remove_dir_all(&dir);
    let model = model.unwrap_err();
    assert!(model.contains("\"office_box_30\"") && model.contains("rename the model"), "{model}");
    let place = place.unwrap_err();
    assert!(place.contains("\"room4\"") && place.contains("ArMap goal or dock"), "{place}");
    let apart = apart.unwrap();
    assert_eq!(apart.models.first().map(|m| m.name.as_str()), Some("crate"), "the world's own models come first");
    assert_eq!(apart.named_poses.first().map(|p| p.name.as_str()), Some("lobby"));
    assert_eq!(apart.named_poses.len(), 7, "the lobby, the dock and five goals");
}
