//! Bodies bucketed by position into square cells, so that a sensor finds
//! the bodies near it without looking at every body of the world: with
//! 1000 robots each ringing its sonar, a look at every body for every
//! robot was a sixth of the sonar process's time.

/// Side of a cell, m: a few robots' spacing, so that a 5 m sonar looks at
/// about 25 cells and a 20 m laser at about 100.
pub const BODY_CELL_M: f64 = 2.5;

/// The most cells per body: a world whose bodies are spread far apart gets
/// larger cells rather than a grid mostly empty.
const MAX_CELLS_PER_BODY: usize = 4;

/// Bodies (by index) in square cells, compressed rows; rebuilt in place.
#[derive(Debug, Clone, Default)]
pub struct BodyGrid {
    cell_m: f64,
    origin: [f64; 2],
    cols: usize,
    rows: usize,
    /// Where each cell's bodies start in `items` (one more entry than cells).
    starts: Vec<u32>,
    items: Vec<u32>,
    /// Each body's cell, kept between builds.
    cell_of: Vec<u32>,
}

impl BodyGrid {
    /// Rebuilds the grid for bodies at `positions` (body `i` at the `i`th;
    /// `None` for one that nothing can see), reusing its buffers.
    pub fn rebuild(&mut self, positions: &[Option<[f64; 2]>]) {
        let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
        for p in positions.iter().flatten() {
            for axis in 0..2 {
                lo[axis] = lo[axis].min(p[axis]);
                hi[axis] = hi[axis].max(p[axis]);
            }
        }
        self.starts.clear();
        self.items.clear();
        self.cell_of.clear();
        if !(lo[0].is_finite() && lo[1].is_finite() && hi[0].is_finite() && hi[1].is_finite()) {
            (self.cols, self.rows) = (0, 0);
            self.starts.push(0);
            return;
        }
        let extent = [hi[0] - lo[0], hi[1] - lo[1]];
        let max_cells = (positions.len() * MAX_CELLS_PER_BODY).max(16) as f64;
        let mut cell_m = BODY_CELL_M;
        while (extent[0] / cell_m + 1.0) * (extent[1] / cell_m + 1.0) > max_cells {
            cell_m *= 2.0;
        }
        self.cell_m = cell_m;
        self.origin = lo;
        self.cols = (extent[0] / cell_m) as usize + 1;
        self.rows = (extent[1] / cell_m) as usize + 1;
        // Counting sort: count per cell, prefix sums, then place.
        self.starts.resize(self.cols * self.rows + 1, 0);
        for p in positions {
            let cell = p.map_or(u32::MAX, |p| self.cell(p) as u32);
            self.cell_of.push(cell);
            if cell != u32::MAX {
                self.starts[cell as usize + 1] += 1;
            }
        }
        for i in 1..self.starts.len() {
            self.starts[i] += self.starts[i - 1];
        }
        let total = self.starts[self.starts.len() - 1] as usize;
        self.items.resize(total, 0);
        // `starts[c]` serves as cell c's cursor, then is put back.
        for (body, &cell) in self.cell_of.iter().enumerate() {
            if cell != u32::MAX {
                let at = &mut self.starts[cell as usize];
                self.items[*at as usize] = body as u32;
                *at += 1;
            }
        }
        for i in (1..self.starts.len()).rev() {
            self.starts[i] = self.starts[i - 1];
        }
        self.starts[0] = 0;
    }

    /// The cell of a point within the grid's bounds.
    fn cell(&self, p: [f64; 2]) -> usize {
        let col = (((p[0] - self.origin[0]) / self.cell_m) as usize).min(self.cols - 1);
        let row = (((p[1] - self.origin[1]) / self.cell_m) as usize).min(self.rows - 1);
        row * self.cols + col
    }

    /// Calls `f` with every body whose position may be within `radius_m`
    /// of `center` (the bodies of every cell the square around it
    /// touches), cell by cell, in ascending index order within a cell.
    pub fn for_each_near(&self, center: [f64; 2], radius_m: f64, mut f: impl FnMut(usize)) {
        if self.cols == 0 {
            return;
        }
        let span = |axis: usize, cells: usize| {
            let lo = ((center[axis] - radius_m - self.origin[axis]) / self.cell_m).floor();
            let hi = ((center[axis] + radius_m - self.origin[axis]) / self.cell_m).floor();
            if hi < 0.0 || lo >= cells as f64 || lo.is_nan() || hi.is_nan() {
                return None;
            }
            Some((lo.max(0.0) as usize, (hi as usize).min(cells - 1)))
        };
        let (Some((c0, c1)), Some((r0, r1))) = (span(0, self.cols), span(1, self.rows)) else { return };
        for row in r0..=r1 {
            let first = self.starts[row * self.cols + c0] as usize;
            let last = self.starts[row * self.cols + c1 + 1] as usize;
            for &body in &self.items[first..last] {
                f(body as usize);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn near(grid: &BodyGrid, center: [f64; 2], radius_m: f64) -> Vec<usize> {
        let mut out = Vec::new();
        grid.for_each_near(center, radius_m, |i| out.push(i));
        out.sort_unstable();
        out
    }

    #[test]
    fn every_body_within_the_radius_is_found_and_far_ones_are_not() {
        // A 40 × 40 lattice 1 m apart, one body left out.
        let mut positions: Vec<Option<[f64; 2]>> =
            (0..1600).map(|i| Some([(i % 40) as f64, (i / 40) as f64])).collect();
        positions[41] = None;
        let mut grid = BodyGrid::default();
        grid.rebuild(&positions);
        for (center, radius) in [([5.3, 7.1], 3.0), ([0.0, 0.0], 1.5), ([39.0, 39.0], 5.0), ([-10.0, 20.0], 10.5)] {
            let found = near(&grid, center, radius);
            let within: Vec<usize> = (0..1600)
                .filter(|&i| positions[i].is_some_and(|p| (p[0] - center[0]).hypot(p[1] - center[1]) <= radius))
                .collect();
            assert!(within.iter().all(|i| found.contains(i)), "{center:?} {radius}: missed some");
            assert!(!found.contains(&41), "a body nothing can see is not filed");
            // Only the cells the square touches: nothing beyond a cell's diagonal outside it.
            let slack = 2.0 * BODY_CELL_M * std::f64::consts::SQRT_2;
            for &i in &found {
                let p = positions[i].unwrap();
                assert!((p[0] - center[0]).hypot(p[1] - center[1]) <= radius + slack, "{center:?}: {p:?} is far");
            }
        }
        assert!(near(&grid, [100.0, 100.0], 5.0).is_empty(), "outside the grid");
    }

    #[test]
    fn spread_out_bodies_get_larger_cells_and_no_bodies_no_grid() {
        let mut grid = BodyGrid::default();
        grid.rebuild(&[Some([0.0, 0.0]), Some([10_000.0, 10_000.0])]);
        assert!(grid.cols * grid.rows <= 16, "{} × {}", grid.cols, grid.rows);
        assert_eq!(near(&grid, [10_000.0, 9_999.0], 2.0), vec![1]);
        grid.rebuild(&[None]);
        assert!(near(&grid, [0.0, 0.0], 1e9).is_empty());
    }
}
