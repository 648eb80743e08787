//! map_server images to wall segments, as Flatland does it: threshold the
//! image, then put a segment on every boundary between an obstacle pixel and
//! a free pixel (or the image border), merging each run of collinear boundary
//! edges into one segment.

use std::path::Path;

use flotilla_protocol::description::Segment;
use flotilla_protocol::geometry::Pose2;

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

    // Horizontal boundaries: between row r-1 and row r, for r in 0..=height.
    for r in 0..=height {
        let mut start: Option<usize> = None;
        for c in 0..=width {
            let edge = c < width && cell(r as isize - 1, c as isize) != cell(r as isize, c as isize);
            match (edge, start) {
                (true, None) => start = Some(c),
                (false, Some(s)) => {
                    segments.push(Segment { a: to_world(s, r), b: to_world(c, r) });
                    start = None;
                }
                _ => {}
            }
        }
    }
    // Vertical boundaries: between column c-1 and column c, for c in 0..=width.
    for c in 0..=width {
        let mut start: Option<usize> = None;
        for r in 0..=height {
            let edge = r < height && cell(r as isize, c as isize - 1) != cell(r as isize, c as isize);
            match (edge, start) {
                (true, None) => start = Some(r),
                (false, Some(s)) => {
                    segments.push(Segment { a: to_world(c, s), b: to_world(c, r) });
                    start = None;
                }
                _ => {}
            }
        }
    }
    segments
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
        // a 1×3 wall: top and bottom are single segments of length 3 px
        let segs = vectorize_occupancy(&[true, true, true], 3, 1, 1.0);
        assert_eq!(segs.len(), 4);
        assert!(segs.contains(&Segment { a: [0.0, 1.0], b: [3.0, 1.0] }));
        assert!(segs.contains(&Segment { a: [0.0, 0.0], b: [3.0, 0.0] }));
    }

    #[test]
    fn free_space_makes_no_walls() {
        assert!(vectorize_occupancy(&[false; 12], 4, 3, 0.05).is_empty());
    }

    #[test]
    fn y_axis_points_up_from_the_bottom_row() {
        // obstacle in the bottom-left pixel of a 2×2 image
        let segs = vectorize_occupancy(&[false, false, true, false], 2, 2, 1.0);
        assert!(segs.contains(&Segment { a: [0.0, 1.0], b: [1.0, 1.0] }), "{segs:?}");
        assert!(segs.contains(&Segment { a: [0.0, 0.0], b: [1.0, 0.0] }), "{segs:?}");
    }
}
