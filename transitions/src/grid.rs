//! A map's walls as a `nav_msgs/OccupancyGrid`, for rviz2 and AMCL to
//! follow a robot's floor.
//!
//! The grid covers the walls of the map's layers that bodies collide with (its own and those no map
//! lists) with a margin of [`MARGIN_CELLS`]; a cell a wall crosses is
//! occupied (100), every other cell free (0). Walls are what Flotilla
//! knows of a map: the inside of an image layer's obstacle is free in the
//! grid too, which AMCL's likelihood field (built from occupied cells'
//! distances) does not mind.

use flotilla_messages::geometry_msgs::{Point, Pose, Quaternion};
use flotilla_messages::nav_msgs::{MapMetaData, OccupancyGrid};
use flotilla_messages::std_msgs::Header;
use flotilla_wire::description::WorldDescription;

/// Cell size when the map is small enough, m.
pub const RESOLUTION_M: f64 = 0.05;
/// The most cells a grid may have; coarser cells beyond.
pub const MAX_CELLS: usize = 16_000_000;
/// Free cells around the walls' bounding box.
pub const MARGIN_CELLS: usize = 10;

/// Occupied, in `OccupancyGrid::data`.
const OCCUPIED: i8 = 100;

/// The grid of map `map` of `description`, in frame `frame_id`.
pub fn occupancy_grid(description: &WorldDescription, map: &str, frame_id: &str) -> OccupancyGrid {
    let mask = description.map_mask(map);
    let segments: Vec<([f64; 2], [f64; 2])> = description
        .layers
        .iter()
        .filter(|layer| layer.bits & mask != 0)
        .flat_map(|layer| layer.obstacles().map(|s| (s.a, s.b)))
        .collect();
    rasterize(&segments, frame_id)
}

/// The grid of line segments (m).
pub fn rasterize(segments: &[([f64; 2], [f64; 2])], frame_id: &str) -> OccupancyGrid {
    let (mut min, mut max) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
    for (a, b) in segments {
        for p in [a, b] {
            for k in 0..2 {
                min[k] = min[k].min(p[k]);
                max[k] = max[k].max(p[k]);
            }
        }
    }
    if segments.is_empty() {
        (min, max) = ([0.0; 2], [0.0; 2]);
    }
    let cells_for = |resolution: f64| {
        let span = |k: usize| ((max[k] - min[k]) / resolution).ceil() as usize + 1 + 2 * MARGIN_CELLS;
        (span(0), span(1))
    };
    let mut resolution = RESOLUTION_M;
    while {
        let (w, h) = cells_for(resolution);
        w.saturating_mul(h) > MAX_CELLS
    } {
        resolution *= 2.0;
    }
    let (width, height) = cells_for(resolution);
    let origin = [min[0] - MARGIN_CELLS as f64 * resolution, min[1] - MARGIN_CELLS as f64 * resolution];
    let mut data = vec![0i8; width * height];
    for (a, b) in segments {
        // Points half a cell apart along the wall mark every cell it crosses.
        let length = (b[0] - a[0]).hypot(b[1] - a[1]);
        let samples = (length / (resolution * 0.5)).ceil() as usize + 1;
        for i in 0..=samples {
            let t = i as f64 / samples as f64;
            let (x, y) = (a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1]));
            let (col, row) = (((x - origin[0]) / resolution) as usize, ((y - origin[1]) / resolution) as usize);
            if col < width && row < height {
                data[row * width + col] = OCCUPIED;
            }
        }
    }
    OccupancyGrid {
        header: Header { frame_id: frame_id.to_string(), ..Header::default() },
        info: MapMetaData {
            map_load_time: Default::default(),
            resolution: resolution as f32,
            width: width as u32,
            height: height as u32,
            origin: Pose {
                position: Point { x: origin[0], y: origin[1], z: 0.0 },
                orientation: Quaternion { x: 0.0, y: 0.0, z: 0.0, w: 1.0 },
            },
        },
        data,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(grid: &OccupancyGrid, x: f64, y: f64) -> i8 {
        let r = f64::from(grid.info.resolution);
        let col = ((x - grid.info.origin.position.x) / r) as usize;
        let row = ((y - grid.info.origin.position.y) / r) as usize;
        grid.data[row * grid.info.width as usize + col]
    }

    #[test]
    fn walls_are_occupied_cells_and_the_rest_is_free() {
        // a 2 m square
        let square =
            [([0.0, 0.0], [2.0, 0.0]), ([2.0, 0.0], [2.0, 2.0]), ([2.0, 2.0], [0.0, 2.0]), ([0.0, 2.0], [0.0, 0.0])];
        let grid = rasterize(&square, "map");
        assert_eq!(grid.info.resolution, 0.05);
        assert_eq!((grid.info.width, grid.info.height), (41 + 20, 41 + 20));
        assert_eq!((grid.info.origin.position.x, grid.info.origin.position.y), (-0.5, -0.5));
        assert_eq!(grid.header.frame_id, "map");
        for (x, y) in [(0.01, 1.0), (2.01, 1.0), (1.0, 0.01), (1.0, 2.01), (0.3, 0.01)] {
            assert_eq!(cell(&grid, x, y), 100, "({x}, {y}) is on a wall");
        }
        for (x, y) in [(1.0, 1.0), (0.5, 1.5), (-0.3, 1.0), (2.3, 2.3)] {
            assert_eq!(cell(&grid, x, y), 0, "({x}, {y}) is free");
        }
        let occupied = grid.data.iter().filter(|&&c| c == 100).count();
        assert!((160..=168).contains(&occupied), "four walls of 40 cells: {occupied}");
    }

    #[test]
    fn a_large_map_gets_coarser_cells() {
        let grid = rasterize(&[([0.0, 0.0], [1000.0, 1000.0])], "map");
        assert!(grid.info.resolution > 0.05);
        assert!((grid.info.width as usize) * (grid.info.height as usize) <= MAX_CELLS);
    }

    #[test]
    fn each_floor_of_the_building_has_its_own_walls() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/building/building.world.yaml");
        let description = flotilla_world_file::load_world(&path).unwrap().initial_description().unwrap();
        let floor1 = occupancy_grid(&description, "taylor-1", "map");
        let floor2 = occupancy_grid(&description, "taylor-2", "map");
        let elevator = occupancy_grid(&description, "taylor-elevator", "map");
        // taylor-1 has a wall along x = 10 m, taylor-2 one along y = 7 m
        assert_eq!((cell(&floor1, 10.01, 3.0), cell(&floor2, 10.01, 3.0)), (100, 0));
        assert_eq!((cell(&floor1, 4.0, 7.01), cell(&floor2, 4.0, 7.01)), (0, 100));
        // the elevator is a 2 m cabin: a small grid
        assert!(elevator.info.width < 80 && elevator.info.height < 80, "{:?}", elevator.info);
    }
}
