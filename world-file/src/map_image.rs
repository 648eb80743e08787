//! map_server images to wall segments, as Flatland does it: threshold the
//! image, then put a segment on every boundary between an obstacle pixel and
//! a free pixel (or the image border), merging each run of collinear boundary
//! edges into one segment. Unlike Flatland, a run is cut where the obstacle
//! changes sides, so that every segment knows which side is solid.

use std::path::Path;

use flotilla_wire::description::Segment;
use flotilla_wire::geometry::Pose2;

/// Loads an image and returns its wall segments in the world frame.
///
/// A pixel is an obstacle when its brightness (0..1) is below
/// `occupied_thresh`, Flatland's rule; `negate` inverts brightness first, as
/// map_server does. The image's bottom-left corner sits at `origin`.
pub fn load(
    path: &Path,
    resolution_m: f64,
    occupied_thresh: f64,
    negate: bool,
    origin: Pose2,
) -> Result<Vec<Segment>, String> {
    crate::sources::note(path);
    let image = image::open(path).map_err(|e| e.to_string())?.to_luma8();
    let (width, height) = (image.width() as usize, image.height() as usize);
    let occupied: Vec<bool> = image
        .as_raw()
        .iter()
        .map(|&v| {
            let brightness = f64::from(if negate { 255 - v } else { v }) / 255.0;
            brightness < occupied_thresh
        })
        .collect();
    let mut segments = vectorize_occupancy(&occupied, width, height, resolution_m);
    for s in &mut segments {
        s.a = origin.transform_point(s.a);
        s.b = origin.transform_point(s.b);
    }
    Ok(segments)
}

/// Boundary segments of an occupancy grid (row-major, row 0 at the top), in
/// metres in the map frame (origin at the bottom-left corner, y up).
///
/// Every segment has the obstacle on its left, walking from `a` to `b`, and
/// free space on its right: a run of collinear boundary edges is merged into
/// one segment only while the obstacle stays on the same side. So the
/// segments are the closed outlines of the obstacles (the image border
/// counts as free), counter-clockwise round each obstacle, which tells a
/// laser which face of a wall it can see (see `LayerDescription::solid_on_left`).
pub fn vectorize_occupancy(occupied: &[bool], width: usize, height: usize, resolution_m: f64) -> Vec<Segment> {
    let cell = |row: isize, col: isize| -> bool {
        row >= 0
            && col >= 0
            && (row as usize) < height
            && (col as usize) < width
            && occupied[row as usize * width + col as usize]
    };
    let to_world = |col: usize, row: usize| [col as f64 * resolution_m, (height as f64 - row as f64) * resolution_m];
    let mut segments = Vec::new();
    // A segment from `start` to `end`, turned round unless its obstacle
    // lies on the side that is left when walking that way (`forward`).
    let mut push = |start: [f64; 2], end: [f64; 2], forward: bool| {
        let (a, b) = if forward { (start, end) } else { (end, start) };
        segments.push(Segment { a, b });
    };

    // Horizontal boundaries: between row r-1 (above) and row r (below), for
    // r in 0..=height. A run walks towards +x; with the obstacle above (+y)
    // it is on the run's left, so the segment keeps that direction.
    for r in 0..=height {
        let above_solid = |c: usize| {
            let (above, below) = (cell(r as isize - 1, c as isize), cell(r as isize, c as isize));
            (above != below).then_some(above)
        };
        for_each_run(width, above_solid, |start, end, forward| push(to_world(start, r), to_world(end, r), forward));
    }
    // Vertical boundaries: between column c-1 (left) and column c (right),
    // for c in 0..=width. A run walks down the image, towards −y; with the
    // obstacle to the right (+x) it is on the run's left.
    for c in 0..=width {
        let right_solid = |r: usize| {
            let (left, right) = (cell(r as isize, c as isize - 1), cell(r as isize, c as isize));
            (left != right).then_some(right)
        };
        for_each_run(height, right_solid, |start, end, forward| push(to_world(c, start), to_world(c, end), forward));
    }
    segments
}

/// Calls `run(start, end, side)` for each run of consecutive edges among
/// `0..count` that are boundaries with the obstacle on the same side:
/// `edge(i)` is None where edge `i` is no boundary, else which side.
fn for_each_run(count: usize, edge: impl Fn(usize) -> Option<bool>, mut run: impl FnMut(usize, usize, bool)) {
    let mut open: Option<(usize, bool)> = None;
    for i in 0..=count {
        let here = if i < count { edge(i) } else { None };
        if open.map(|(_, side)| side) != here {
            if let Some((start, side)) = open {
                run(start, i, side);
            }
            open = here.map(|side| (i, side));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_pixel_is_a_unit_square() {
        let segs = vectorize_occupancy(&[true], 1, 1, 0.5);
        assert_eq!(segs.len(), 4);
        let total: f64 = segs.iter().map(|s| (s.b[0] - s.a[0]).abs() + (s.b[1] - s.a[1]).abs()).sum();
        assert!((total - 2.0).abs() < 1e-12);
    }

    #[test]
    fn collinear_edges_merge_into_one_segment() {
        // a 1×3 wall: top and bottom are single segments of length 3 px,
        // running counter-clockwise round it (leftwards along the top)
        let segs = vectorize_occupancy(&[true, true, true], 3, 1, 1.0);
        assert_eq!(segs.len(), 4);
        assert!(segs.contains(&Segment { a: [3.0, 1.0], b: [0.0, 1.0] }), "{segs:?}");
        assert!(segs.contains(&Segment { a: [0.0, 0.0], b: [3.0, 0.0] }), "{segs:?}");
    }

    #[test]
    fn runs_are_cut_where_the_obstacle_changes_sides() {
        // Two pixels touching at a corner: the boundary between the rows is
        // one straight run of two pixel edges, with the obstacle above the
        // first and below the second, so it is two segments (Flatland's one
        // would have no solid side).
        let segs = vectorize_occupancy(&[true, false, false, true], 2, 2, 1.0);
        assert_eq!(segs.len(), 8, "{segs:?}");
        assert!(segs.contains(&Segment { a: [0.0, 1.0], b: [1.0, 1.0] }), "{segs:?}");
        assert!(segs.contains(&Segment { a: [2.0, 1.0], b: [1.0, 1.0] }), "{segs:?}");
    }

    #[test]
    fn every_segment_has_the_obstacle_on_its_left_all_along() {
        let (width, height, resolution_m) = (23, 17, 0.05);
        let mut seed = 5u64;
        let occupied: Vec<bool> = (0..width * height)
            .map(|_| {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (seed >> 33).is_multiple_of(3)
            })
            .collect();
        // The pixel holding a point in the map frame (free off the image).
        let occupied_at = |p: [f64; 2]| {
            let (col, row) = ((p[0] / resolution_m).floor(), (height as f64 - p[1] / resolution_m).floor());
            (0.0..width as f64).contains(&col)
                && (0.0..height as f64).contains(&row)
                && occupied[row as usize * width + col as usize]
        };
        let segs = vectorize_occupancy(&occupied, width, height, resolution_m);
        let mut edges = 0;
        for s in &segs {
            let edge = [s.b[0] - s.a[0], s.b[1] - s.a[1]];
            let pixels = (edge[0].abs() + edge[1].abs()) / resolution_m;
            let left = [-edge[1] / pixels, edge[0] / pixels]; // one pixel long
            for k in 0..pixels.round() as usize {
                // the middle of each pixel edge along the segment
                let f = (k as f64 + 0.5) / pixels;
                let m = [s.a[0] + edge[0] * f, s.a[1] + edge[1] * f];
                assert!(occupied_at([m[0] + 0.5 * left[0], m[1] + 0.5 * left[1]]), "{s:?} pixel edge {k}");
                assert!(!occupied_at([m[0] - 0.5 * left[0], m[1] - 0.5 * left[1]]), "{s:?} pixel edge {k}");
                edges += 1;
            }
        }
        // and every pixel edge between an obstacle and free space is on one
        let boundary_edges: usize = (0..height as isize)
            .flat_map(|r| (0..width as isize).map(move |c| (r, c)))
            .filter(|&(r, c)| occupied[r as usize * width + c as usize])
            .map(|(r, c)| {
                let free = |r: isize, c: isize| {
                    r < 0
                        || c < 0
                        || r >= height as isize
                        || c >= width as isize
                        || !occupied[r as usize * width + c as usize]
                };
                [free(r - 1, c), free(r + 1, c), free(r, c - 1), free(r, c + 1)].iter().filter(|&&f| f).count()
            })
            .sum();
        assert_eq!(edges, boundary_edges);
    }

    #[test]
    fn free_space_makes_no_walls() {
        assert!(vectorize_occupancy(&[false; 12], 4, 3, 0.05).is_empty());
    }

    #[test]
    fn y_axis_points_up_from_the_bottom_row() {
        // obstacle in the bottom-left pixel of a 2×2 image
        let segs = vectorize_occupancy(&[false, false, true, false], 2, 2, 1.0);
        assert!(segs.contains(&Segment { a: [1.0, 1.0], b: [0.0, 1.0] }), "{segs:?}");
        assert!(segs.contains(&Segment { a: [0.0, 0.0], b: [1.0, 0.0] }), "{segs:?}");
    }
}
