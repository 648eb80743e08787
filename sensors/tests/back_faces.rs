//! The laser skips the walls of map images that it sees from behind (from
//! their solid side), which a beam from free space can only reach after a
//! nearer wall. These tests check that skipping them changes no range and no
//! layer: on random images, from points in free space, inside obstacles, on
//! pixel corners and edges, with beams aimed exactly at wall corners, and
//! with layers that share walls and layers of bare line segments.

use flotilla_sensors::raycast::{Fan, SegmentGrid, SweepWork, Wall};
use flotilla_world_file::vectorize_occupancy;

const RESOLUTION_M: f64 = 0.05;

/// A deterministic pseudo-random sequence (no RNG crate needed in tests).
fn lcg(state: &mut u64) -> f64 {
    *state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (*state >> 11) as f64 / (1u64 << 53) as f64
}

/// A map image: rooms' worth of random rectangles, one-pixel posts and
/// diagonal chains of pixels touching only at their corners.
struct Image {
    width: usize,
    height: usize,
    occupied: Vec<bool>,
}

impl Image {
    fn random(seed: &mut u64) -> Image {
        let (width, height) = (160, 120);
        let mut occupied = vec![false; width * height];
        let mut fill = |c: usize, r: usize| {
            if c < width && r < height {
                occupied[r * width + c] = true;
            }
        };
        for _ in 0..25 {
            let (c, r) = ((lcg(seed) * width as f64) as usize, (lcg(seed) * height as f64) as usize);
            let (w, h) = (1 + (lcg(seed) * 20.0) as usize, 1 + (lcg(seed) * 20.0) as usize);
            for dr in 0..h {
                for dc in 0..w {
                    fill(c + dc, r + dr);
                }
            }
        }
        for _ in 0..8 {
            let (c, r) = ((lcg(seed) * width as f64) as usize, (lcg(seed) * height as f64) as usize);
            for k in 0..15 {
                fill(c + k, r + k);
            }
        }
        for _ in 0..60 {
            fill((lcg(seed) * width as f64) as usize, (lcg(seed) * height as f64) as usize);
        }
        Image { width, height, occupied }
    }

    /// Whether the point (map frame, m) is in an obstacle pixel.
    fn occupied_at(&self, p: [f64; 2]) -> bool {
        let (col, row) = ((p[0] / RESOLUTION_M).floor(), (self.height as f64 - p[1] / RESOLUTION_M).floor());
        (0.0..self.width as f64).contains(&col)
            && (0.0..self.height as f64).contains(&row)
            && self.occupied[row as usize * self.width + col as usize]
    }

    /// The image's outlines on `layers`, as a map image layer gives them.
    fn walls(&self, layers: u16) -> Vec<Wall> {
        vectorize_occupancy(&self.occupied, self.width, self.height, RESOLUTION_M)
            .into_iter()
            .map(|s| Wall { a: s.a, b: s.b, layers, solid_on_left: layers })
            .collect()
    }
}

/// Sweeps a fan of `beams` from `origin`, beam 0 at `start_rad`, and checks
/// every beam against the test of every wall (which skips nothing).
fn assert_fan_same(grid: &SegmentGrid, origin: [f64; 2], start_rad: f64, beams: usize, layers: u16) {
    let increment = 1.5 * std::f64::consts::PI / (beams - 1) as f64;
    let dirs: Vec<[f64; 2]> =
        (0..beams).map(|i| start_rad + increment * i as f64).map(|a| [a.cos(), a.sin()]).collect();
    let fan = Fan { origin, start_rad, increment_rad: increment, dirs: &dirs, range_m: 20.0, layers };
    let (mut best, mut bits) = (vec![0.0; beams], vec![0; beams]);
    grid.sweep_fan(&fan, &mut SweepWork::default(), &mut best, &mut bits);
    for (i, &dir) in dirs.iter().enumerate() {
        let every_wall = grid.cast_brute_force(origin, dir, 20.0, layers);
        let every_wall_m = every_wall.map_or(f64::INFINITY, |h| h.distance_m);
        assert!(
            best[i] == every_wall_m || (best[i] - every_wall_m).abs() < 1e-9,
            "from {origin:?} on layers {layers}, beam {i}: {} but every wall gives {every_wall_m}",
            best[i]
        );
        assert_eq!(bits[i], every_wall.map_or(0, |h| h.layers), "from {origin:?} on layers {layers}, beam {i}");
    }
}

#[test]
fn skipping_walls_seen_from_behind_changes_no_range() {
    let mut seed = 11;
    for _ in 0..2 {
        let image = Image::random(&mut seed);
        // Layer 1 and layer 2 share the image (one wall on both), layer 4
        // is bare line segments across it (no side solid).
        let mut walls = image.walls(1);
        walls.extend(image.walls(2));
        for _ in 0..40 {
            let a = [lcg(&mut seed) * 8.0, lcg(&mut seed) * 6.0];
            let b = [a[0] + lcg(&mut seed) - 0.5, a[1] + lcg(&mut seed) - 0.5];
            walls.push(Wall { a, b, layers: 4, solid_on_left: 0 });
        }
        let corners: Vec<[f64; 2]> = walls.iter().map(|w| w.a).collect();
        let grid = SegmentGrid::new(walls, 0.05);
        for k in 0..100 {
            let origin = match k % 4 {
                // anywhere, in free space or not
                0 | 1 => [lcg(&mut seed) * 8.4 - 0.2, lcg(&mut seed) * 6.4 - 0.2],
                // on a pixel corner
                2 => [(lcg(&mut seed) * 160.0).floor() * RESOLUTION_M, (lcg(&mut seed) * 120.0).floor() * RESOLUTION_M],
                // on a pixel edge
                _ => [(lcg(&mut seed) * 160.0).floor() * RESOLUTION_M, lcg(&mut seed) * 6.0],
            };
            let layers = [1, 2, 3, 5, 7][k % 5];
            assert_fan_same(&grid, origin, lcg(&mut seed) * 6.3, 1081, layers);
            // beam 0 aimed at a wall's corner
            let corner = corners[(lcg(&mut seed) * corners.len() as f64) as usize];
            let towards = (corner[1] - origin[1]).atan2(corner[0] - origin[0]);
            if towards.is_finite() {
                assert_fan_same(&grid, origin, towards, 541, layers);
            }
        }
    }
}

#[test]
fn free_layers_are_those_whose_obstacles_hold_no_origin() {
    let mut seed = 23;
    let image = Image::random(&mut seed);
    let mut walls = image.walls(1);
    // a layer of bare lines is never counted free: nothing says its sides
    walls.push(Wall { a: [1.0, 1.0], b: [2.0, 1.0], layers: 2, solid_on_left: 0 });
    let grid = SegmentGrid::new(walls, 0.05);
    let (mut inside, mut outside) = (0, 0);
    for _ in 0..4000 {
        // pixel centres, in and around the image
        let p = [
            ((lcg(&mut seed) * 170.0).floor() - 5.0 + 0.5) * RESOLUTION_M,
            ((lcg(&mut seed) * 130.0).floor() - 5.0 + 0.5) * RESOLUTION_M,
        ];
        let free = grid.free_layers(p, 3);
        assert_eq!(free & 2, 0, "{p:?}");
        if image.occupied_at(p) {
            assert_eq!(free, 0, "{p:?} is in an obstacle");
            inside += 1;
        } else {
            assert_eq!(free, 1, "{p:?} is in free space");
            outside += 1;
        }
    }
    assert!(inside > 100 && outside > 100, "{inside} inside, {outside} outside");
}

#[test]
fn a_laser_on_a_wall_sees_along_it_to_the_corner() {
    // A bar of three 1 m pixels with free space above, and the laser a
    // hair above its top face looking left along it: the first wall the
    // beam meets is the bar's left end, which it passes by less than the
    // slack of a corner, from behind (the bar's side). Nothing nearer stops
    // the beam, so that wall must not be skipped.
    let bar = Image { width: 3, height: 2, occupied: vec![false, false, false, true, true, true] };
    let walls: Vec<Wall> = vectorize_occupancy(&bar.occupied, bar.width, bar.height, 1.0)
        .into_iter()
        .map(|s| Wall { a: s.a, b: s.b, layers: 1, solid_on_left: 1 })
        .collect();
    let grid = SegmentGrid::new(walls, 0.5);
    let origin = [2.0, 1.0 + 1e-12];
    assert_eq!(grid.free_layers(origin, 1), 0, "on an outline, free space is in doubt");
    assert_eq!(grid.free_layers([2.0, 1.1], 1), 1);
    let dirs = [[-1.0, 0.0]];
    let fan =
        Fan { origin, start_rad: std::f64::consts::PI, increment_rad: 0.01, dirs: &dirs, range_m: 20.0, layers: 1 };
    let (mut best, mut bits) = ([0.0], [0]);
    grid.sweep_fan(&fan, &mut SweepWork::default(), &mut best, &mut bits);
    assert_eq!(grid.cast_brute_force(origin, dirs[0], 20.0, 1).map(|h| h.distance_m), Some(2.0));
    assert_eq!((best[0], bits[0]), (2.0, 1));
}
