//! Spatial grids, so that a walker looks only at what is near it: people
//! and robots in square cells, walls by the cells they come near.

use rustc_hash::FxHashMap;

use crate::social_force::nearest_on_segment;
use crate::vec2::Vec2;

type Cell = (i64, i64);

fn cell_of(p: Vec2, size_m: f64) -> Cell {
    ((p.x / size_m).floor() as i64, (p.y / size_m).floor() as i64)
}

/// Points (people, robots) by square cells of a side at least the reach of
/// any query: a query looks at the 3 × 3 cells around its point.
#[derive(Debug, Default)]
pub struct PointGrid {
    size_m: f64,
    /// Point indices sorted by cell, then index.
    order: Vec<u32>,
    /// Each cell's run in `order`.
    runs: FxHashMap<Cell, (u32, u32)>,
}

impl PointGrid {
    /// The grid of `points` with cells `size_m` wide (clamped to at least
    /// 1 mm: a zero reach still finds points in the same place).
    pub fn new(points: &[Vec2], size_m: f64) -> PointGrid {
        let size_m = size_m.max(1e-3);
        let mut keyed: Vec<(Cell, u32)> =
            points.iter().enumerate().map(|(i, &p)| (cell_of(p, size_m), i as u32)).collect();
        keyed.sort_unstable();
        let mut runs = FxHashMap::default();
        let mut start = 0;
        for i in 1..=keyed.len() {
            if i == keyed.len() || keyed[i].0 != keyed[start].0 {
                runs.insert(keyed[start].0, (start as u32, i as u32));
                start = i;
            }
        }
        PointGrid { size_m, order: keyed.into_iter().map(|(_, i)| i).collect(), runs }
    }

    /// Every point in the 3 × 3 cells around `p` (all within one cell's
    /// side of `p`, and some farther), in a fixed order: cells row by row,
    /// then by index.
    pub fn near(&self, p: Vec2) -> impl Iterator<Item = usize> + '_ {
        let (cx, cy) = cell_of(p, self.size_m);
        (-1..=1)
            .flat_map(move |dy| (-1..=1).map(move |dx| (cx + dx, cy + dy)))
            .filter_map(|cell| self.runs.get(&cell))
            .flat_map(|&(start, end)| self.order[start as usize..end as usize].iter().map(|&i| i as usize))
    }
}

/// Wall segments by the 1 m cells they come within `reach_m` of.
#[derive(Debug, Default)]
pub struct WallGrid {
    segments: Vec<(Vec2, Vec2)>,
    reach_m: f64,
    cells: FxHashMap<Cell, Vec<u32>>,
}

/// The side of a wall grid's cells, m.
const WALL_CELL_M: f64 = 1.0;

impl WallGrid {
    /// The grid of `segments` for queries that care about walls up to
    /// `reach_m` away.
    pub fn new(segments: Vec<(Vec2, Vec2)>, reach_m: f64) -> WallGrid {
        let mut cells: FxHashMap<Cell, Vec<u32>> = FxHashMap::default();
        for (i, &(a, b)) in segments.iter().enumerate() {
            let low = cell_of(Vec2::new(a.x.min(b.x) - reach_m, a.y.min(b.y) - reach_m), WALL_CELL_M);
            let high = cell_of(Vec2::new(a.x.max(b.x) + reach_m, a.y.max(b.y) + reach_m), WALL_CELL_M);
            for x in low.0..=high.0 {
                for y in low.1..=high.1 {
                    // Only the cells the segment really comes near.
                    let centre = Vec2::new((x as f64 + 0.5) * WALL_CELL_M, (y as f64 + 0.5) * WALL_CELL_M);
                    let half_diagonal = WALL_CELL_M * std::f64::consts::FRAC_1_SQRT_2;
                    if (nearest_on_segment(centre, a, b) - centre).norm() <= reach_m + half_diagonal {
                        cells.entry((x, y)).or_default().push(i as u32);
                    }
                }
            }
        }
        WallGrid { segments, reach_m, cells }
    }

    /// The nearest wall point to `p` within the grid's reach, if any.
    pub fn nearest(&self, p: Vec2) -> Option<Vec2> {
        let candidates = self.cells.get(&cell_of(p, WALL_CELL_M))?;
        let mut best: Option<(f64, Vec2)> = None;
        for &i in candidates {
            let (a, b) = self.segments[i as usize];
            let q = nearest_on_segment(p, a, b);
            let d = (q - p).norm_squared();
            if best.is_none_or(|(bd, _)| d < bd) {
                best = Some((d, q));
            }
        }
        best.filter(|&(d, _)| d <= self.reach_m * self.reach_m).map(|(_, q)| q)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_points_are_found_and_far_ones_not() {
        let points = [Vec2::new(0.0, 0.0), Vec2::new(0.9, 0.0), Vec2::new(5.0, 5.0), Vec2::new(-0.5, -0.5)];
        let grid = PointGrid::new(&points, 1.0);
        let mut near: Vec<usize> = grid.near(Vec2::new(0.1, 0.1)).collect();
        near.sort();
        assert_eq!(near, [0, 1, 3]);
        assert_eq!(grid.near(Vec2::new(5.2, 5.2)).collect::<Vec<_>>(), [2]);
    }

    #[test]
    fn the_nearest_wall_within_reach() {
        let walls = WallGrid::new(
            vec![(Vec2::new(0.0, 0.0), Vec2::new(10.0, 0.0)), (Vec2::new(0.0, 1.0), Vec2::new(10.0, 1.0))],
            2.0,
        );
        assert_eq!(walls.nearest(Vec2::new(3.0, 0.3)), Some(Vec2::new(3.0, 0.0)));
        assert_eq!(walls.nearest(Vec2::new(3.0, 0.7)), Some(Vec2::new(3.0, 1.0)));
        assert_eq!(walls.nearest(Vec2::new(3.0, 4.5)), None);
    }
}
