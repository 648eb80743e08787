//! A uniform grid over wall segments, walked cell by cell along each beam
//! (Amanatides–Woo), so a beam only tests the segments near its path.

use super::{ray_segment, Hit, Vec2};

/// Segments bucketed into square cells (compressed rows: no per-cell Vec).
#[derive(Debug, Clone)]
pub struct SegmentGrid {
    pub(super) segments: Vec<(Vec2, Vec2, u16)>,
    pub(super) origin: Vec2,
    pub(super) cell_m: f64,
    pub(super) cols: usize,
    pub(super) rows: usize,
    pub(super) cell_start: Vec<u32>,
    pub(super) cell_items: Vec<u32>,
}

impl SegmentGrid {
    /// Buckets `segments` (with their layer bits) into cells of about
    /// `cell_m` metres.
    pub fn new(segments: Vec<(Vec2, Vec2, u16)>, cell_m: f64) -> SegmentGrid {
        let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
        for (a, b, _) in &segments {
            for p in [a, b] {
                lo = [lo[0].min(p[0]), lo[1].min(p[1])];
                hi = [hi[0].max(p[0]), hi[1].max(p[1])];
            }
        }
        if segments.is_empty() {
            lo = [0.0, 0.0];
            hi = [0.0, 0.0];
        }
        let cell_m = cell_m.max(1e-3);
        // One cell of margin on every side keeps end points off the border.
        let origin = [lo[0] - cell_m, lo[1] - cell_m];
        let cols = (((hi[0] - origin[0]) / cell_m).ceil() as usize + 1).clamp(1, 1 << 14);
        let rows = (((hi[1] - origin[1]) / cell_m).ceil() as usize + 1).clamp(1, 1 << 14);
        let cell_m = cell_m
            .max((hi[0] - origin[0]) / (cols - 1).max(1) as f64)
            .max((hi[1] - origin[1]) / (rows - 1).max(1) as f64);

        let mut grid = SegmentGrid { segments, origin, cell_m, cols, rows, cell_start: vec![], cell_items: vec![] };
        let mut per_cell: Vec<Vec<u32>> = vec![Vec::new(); cols * rows];
        for (i, (a, b, _)) in grid.segments.iter().enumerate() {
            grid.walk(*a, [b[0] - a[0], b[1] - a[1]], 1.0, |cell, _| {
                if per_cell[cell].last() != Some(&(i as u32)) {
                    per_cell[cell].push(i as u32);
                }
                false
            });
        }
        grid.cell_start.reserve(per_cell.len() + 1);
        grid.cell_start.push(0);
        for cell in per_cell {
            grid.cell_items.extend_from_slice(&cell);
            grid.cell_start.push(grid.cell_items.len() as u32);
        }
        grid
    }

    /// Number of segments.
    pub fn len(&self) -> usize {
        self.segments.len()
    }

    /// Whether the grid holds no segment.
    pub fn is_empty(&self) -> bool {
        self.segments.is_empty()
    }

    /// Visits the cells along `origin + t·dir` for t in [0, t_max] in order,
    /// calling `visit(cell, t_exit)` (the parameter where the ray leaves the
    /// cell) until it returns true.
    fn walk(&self, origin: Vec2, dir: Vec2, t_max: f64, mut visit: impl FnMut(usize, f64) -> bool) {
        let local = [(origin[0] - self.origin[0]) / self.cell_m, (origin[1] - self.origin[1]) / self.cell_m];
        let (mut t_enter, mut t_leave) = (0.0f64, t_max);
        // Clip the ray to the grid's box so walks from far outside still work.
        for axis in 0..2 {
            let size = if axis == 0 { self.cols } else { self.rows } as f64;
            let d = dir[axis] / self.cell_m;
            if d.abs() < 1e-300 {
                if local[axis] < 0.0 || local[axis] >= size {
                    return;
                }
            } else {
                let (t0, t1) = ((0.0 - local[axis]) / d, (size - local[axis]) / d);
                t_enter = t_enter.max(t0.min(t1));
                t_leave = t_leave.min(t0.max(t1));
            }
        }
        if t_enter > t_leave {
            return;
        }
        let start = [local[0] + dir[0] / self.cell_m * t_enter, local[1] + dir[1] / self.cell_m * t_enter];
        let mut cell = [
            (start[0].floor() as isize).clamp(0, self.cols as isize - 1),
            (start[1].floor() as isize).clamp(0, self.rows as isize - 1),
        ];
        let mut step = [0isize; 2];
        let mut t_next = [f64::INFINITY; 2];
        let mut t_delta = [f64::INFINITY; 2];
        for axis in 0..2 {
            let d = dir[axis] / self.cell_m;
            if d > 0.0 {
                step[axis] = 1;
                t_delta[axis] = 1.0 / d;
                t_next[axis] = t_enter + ((cell[axis] + 1) as f64 - start[axis]) / d;
            } else if d < 0.0 {
                step[axis] = -1;
                t_delta[axis] = -1.0 / d;
                t_next[axis] = t_enter + (cell[axis] as f64 - start[axis]) / d;
            }
        }
        loop {
            let t_exit = t_next[0].min(t_next[1]).min(t_leave);
            if visit(cell[1] as usize * self.cols + cell[0] as usize, t_exit) || t_exit >= t_leave {
                return;
            }
            let axis = if t_next[0] < t_next[1] { 0 } else { 1 };
            cell[axis] += step[axis];
            t_next[axis] += t_delta[axis];
            let limit = if axis == 0 { self.cols } else { self.rows } as isize;
            if cell[axis] < 0 || cell[axis] >= limit {
                return;
            }
        }
    }

    /// The nearest segment on `layers` hit by the unit ray within `max_m`.
    pub fn cast(&self, origin: Vec2, dir: Vec2, max_m: f64, layers: u16) -> Option<Hit> {
        let mut best: Option<Hit> = None;
        self.walk(origin, dir, max_m, |cell, t_exit| {
            let (s, e) = (self.cell_start[cell] as usize, self.cell_start[cell + 1] as usize);
            for &i in &self.cell_items[s..e] {
                best = nearer(self.segments[i as usize], origin, dir, max_m, layers, best);
            }
            // A hit inside this cell cannot be beaten by any later cell.
            best.is_some_and(|h| h.distance_m <= t_exit)
        });
        best
    }

    /// The naive reference: every segment tested (for tests and benchmarks).
    pub fn cast_brute_force(&self, origin: Vec2, dir: Vec2, max_m: f64, layers: u16) -> Option<Hit> {
        self.segments.iter().fold(None, |best, &segment| nearer(segment, origin, dir, max_m, layers, best))
    }
}

/// `best`, or the segment if it is on `layers` and hit before it.
#[inline]
fn nearer(
    segment: (Vec2, Vec2, u16),
    origin: Vec2,
    dir: Vec2,
    max_m: f64,
    layers: u16,
    best: Option<Hit>,
) -> Option<Hit> {
    let (a, b, bits) = segment;
    if bits & layers == 0 {
        return best;
    }
    let limit = best.map_or(max_m, |h| h.distance_m);
    match ray_segment(origin, dir, a, b, limit) {
        Some(t) if best.is_none_or(|h| t < h.distance_m) => Some(Hit { distance_m: t, layers: bits }),
        _ => best,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic pseudo-random sequence (no RNG crate needed in tests).
    fn lcg(state: &mut u64) -> f64 {
        *state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (*state >> 11) as f64 / (1u64 << 53) as f64
    }

    #[test]
    fn grid_walk_agrees_with_brute_force_on_random_rays() {
        let mut seed = 42;
        let mut segments = Vec::new();
        for _ in 0..400 {
            let a = [lcg(&mut seed) * 40.0 - 20.0, lcg(&mut seed) * 40.0 - 20.0];
            let b = [a[0] + lcg(&mut seed) * 4.0 - 2.0, a[1] + lcg(&mut seed) * 4.0 - 2.0];
            segments.push((a, b, if lcg(&mut seed) < 0.5 { 1 } else { 2 }));
        }
        // axis-aligned walls too, like vectorised maps
        for k in 0..20 {
            let y = k as f64 - 10.0;
            segments.push(([-15.0, y], [15.0, y], 1));
        }
        let grid = SegmentGrid::new(segments, 0.7);
        for _ in 0..5000 {
            let origin = [lcg(&mut seed) * 60.0 - 30.0, lcg(&mut seed) * 60.0 - 30.0];
            let angle = lcg(&mut seed) * std::f64::consts::TAU;
            let dir = [angle.cos(), angle.sin()];
            let layers = if lcg(&mut seed) < 0.3 { 1 } else { 3 };
            let fast = grid.cast(origin, dir, 25.0, layers).map(|h| h.distance_m);
            let slow = grid.cast_brute_force(origin, dir, 25.0, layers).map(|h| h.distance_m);
            match (fast, slow) {
                (Some(f), Some(s)) => assert!((f - s).abs() < 1e-9, "{origin:?} {angle}: {f} vs {s}"),
                (f, s) => assert_eq!(f, s, "{origin:?} {angle}"),
            }
        }
    }

    #[test]
    fn axis_aligned_rays_along_cell_borders() {
        let grid = SegmentGrid::new(vec![([0.0, -5.0], [0.0, 5.0], 1), ([10.0, -5.0], [10.0, 5.0], 1)], 1.0);
        assert_eq!(grid.cast([5.0, 0.0], [1.0, 0.0], 20.0, 1).unwrap().distance_m, 5.0);
        assert_eq!(grid.cast([5.0, 1.0], [-1.0, 0.0], 20.0, 1).unwrap().distance_m, 5.0);
        assert!(grid.cast([5.0, 0.0], [0.0, 1.0], 20.0, 1).is_none());
        assert!(grid.cast([5.0, 0.0], [1.0, 0.0], 4.0, 1).is_none());
    }
}
