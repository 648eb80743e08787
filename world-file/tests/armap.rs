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

    // 243 LINES, and 5 Sim.BoxObstacle boxes of 4 walls each; the 23,181
    // DATA points are the scans the lines were drawn from (not obstacles).
    let walls = &spec.layers[0].segments;
    assert_eq!(walls.len(), 243 + 5 * 4);
    // the first line, in metres
    let first = walls[0];
    assert_eq!((first.a, first.b), ([3.680, 25.836], [3.677, 24.307]));
    // the last box: from (−7.981, 15.786) to (−6.479, 16.118)
    let near = |p: [f64; 2], q: [f64; 2]| (p[0] - q[0]).abs() < 1e-9 && (p[1] - q[1]).abs() < 1e-9;
    assert!(walls.iter().any(|s| near(s.a, [-7.981, 15.786]) && near(s.b, [-6.479, 15.786])), "the last box's bottom");

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
