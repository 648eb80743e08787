//! `flotilla snapshot` draws a running world into a PNG: in the 10 m room,
//! the walls, the robot where it stands, and its laser's hits on the walls.

mod common;

use common::Sim;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_snapshot_of_the_room_shows_its_walls_its_robot_and_its_scan() {
    let world = common::config("tests/room/world.yaml");
    let sim = Sim::start("snapshot", &world, &["flotilla-laser"], &[]).await;
    let out = sim.logs().join("room.png");
    let out_text = out.to_string_lossy().into_owned();
    // 12 m in 240 px: 20 px per metre, the room's corner (0, 0) at pixel (20, 220).
    let (ok, text) = sim.cli(&["snapshot", &out_text, "--size", "240x240", "--area", "-1", "-1", "11", "11"]);
    assert!(ok, "{text}");
    assert!(text.contains("laser hits"), "{text}");
    let image = image::open(&out).expect("a PNG").to_rgb8();
    assert_eq!(image.dimensions(), (240, 240));
    let pixel = |x: f64, y: f64| *image.get_pixel((20.0 + x * 20.0) as u32, (220.0 - y * 20.0) as u32);
    let white = image::Rgb([255u8, 255, 255]);
    let hit = image::Rgb([220u8, 30, 30]);
    // Flatland's white walls and body, darkened to show on white.
    assert_ne!(pixel(0.0, 3.0), white, "the west wall, away from any beam's hit");
    assert_ne!(pixel(5.0, 5.0), white, "the robot at (5, 5)");
    assert_eq!(pixel(2.5, 2.5), white, "the floor");
    // The robot's laser (range 20 m from (5.1, 5)) hits every wall: some hit
    // pixels lie on the walls' lines.
    let on_walls = (0..240u32)
        .flat_map(|i| [(20, i), (220, i), (i, 20), (i, 220)])
        .filter(|&(c, r)| *image.get_pixel(c, r) == hit)
        .count();
    assert!(on_walls > 10, "{on_walls} hit pixels on the walls");
}
