//! People for a scenario: each walks back and forth between its start and a
//! place it can see from there, pausing at both ends.

use std::fmt::Write as _;

/// The least length of a walk, m.
const MIN_WALK_M: f64 = 6.0;
/// Half the width a walk keeps clear of walls, m.
const CLEARANCE_M: f64 = 0.35;
/// Pixels at least this bright are floor.
const FLOOR: u8 = 250;
/// How long people stand at either end of their walk, s.
const PAUSE_S: f64 = 2.0;

/// A walk: from its start to its end and back.
pub type Walk = ([f64; 2], [f64; 2]);

/// One walk per start: to the first of the other starts after it that is
/// at least [`MIN_WALK_M`] away and in plain sight along a clear lane
/// ([`CLEARANCE_M`] each side); a start that sees none stays where it is.
pub fn walks(image: &image::GrayImage, resolution_m: f64, origin_m: [f64; 2], starts: &[[f64; 3]]) -> Vec<Walk> {
    let (w, h) = image.dimensions();
    let floor = |x: f64, y: f64| {
        let col = ((x - origin_m[0]) / resolution_m).floor();
        let row = h as f64 - 1.0 - ((y - origin_m[1]) / resolution_m).floor();
        col >= 0.0
            && row >= 0.0
            && col < w as f64
            && row < h as f64
            && image.get_pixel(col as u32, row as u32)[0] >= FLOOR
    };
    let clear = |a: [f64; 2], b: [f64; 2]| {
        let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
        let length = dx.hypot(dy);
        let (nx, ny) = (-dy / length * CLEARANCE_M, dx / length * CLEARANCE_M);
        let samples = (length / resolution_m).ceil() as usize;
        (0..=samples).all(|i| {
            let t = i as f64 / samples as f64;
            let (x, y) = (a[0] + t * dx, a[1] + t * dy);
            floor(x, y) && floor(x + nx, y + ny) && floor(x - nx, y - ny)
        })
    };
    (0..starts.len())
        .map(|k| {
            let start = [starts[k][0], starts[k][1]];
            let end = (1..starts.len())
                .map(|d| starts[(k + d) % starts.len()])
                .map(|p| [p[0], p[1]])
                .find(|&p| (p[0] - start[0]).hypot(p[1] - start[1]) >= MIN_WALK_M && clear(start, p))
                .unwrap_or(start);
            (start, end)
        })
        .collect()
}

/// The world file's `crowd:` section for `walks` (nothing for none).
pub fn section(walks: &[Walk]) -> String {
    if walks.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "crowd:\n  # Helbing and Molnár's walking speeds, drawn per person from the seed\n  defaults: {desired_speed: {mean: 1.34, sd: 0.26}}   # m/s\n  people:\n",
    );
    for (k, (start, end)) in walks.iter().enumerate() {
        let _ = writeln!(
            out,
            "    - {{name: person{}, pose: [{:.2}, {:.2}], waypoints: [[{:.2}, {:.2}, {PAUSE_S}], [{:.2}, {:.2}, {PAUSE_S}]]}}",
            k + 1,
            start[0],
            start[1],
            end[0],
            end[1],
            start[0],
            start[1]
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn people_walk_to_a_place_they_see_and_not_through_walls() {
        // a 20 m × 10 m floor at 0.1 m, split by a wall at x = 10 with no door
        let mut image = image::GrayImage::from_pixel(200, 100, image::Luma([254]));
        for row in 0..100 {
            image.put_pixel(100, row, image::Luma([0]));
        }
        let starts = [[2.0, 5.0, 0.0], [15.0, 5.0, 0.0], [9.0, 2.0, 0.0], [18.0, 8.0, 0.0]];
        let walks = walks(&image, 0.1, [0.0, 0.0], &starts);
        // the first sees only the third, which is 7.6 m away; the second
        // sees the fourth only, and it is too near (4.2 m): it stays
        assert_eq!(walks[0], ([2.0, 5.0], [9.0, 2.0]));
        assert_eq!(walks[1], ([15.0, 5.0], [15.0, 5.0]));
        assert!(section(&walks)
            .contains("{name: person1, pose: [2.00, 5.00], waypoints: [[9.00, 2.00, 2], [2.00, 5.00, 2]]}"));
    }
}
