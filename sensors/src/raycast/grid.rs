//! A uniform grid over wall segments with a clearance map, walked along a
//! single ray by leaps over empty space. (Whole fans go through the coarser
//! blocks of [`super::sweep`], which the grid also holds.)
//!
//! Every cell knows its clearance: the Chebyshev distance, in cells, to the
//! nearest cell holding a segment. From a cell of clearance `c` the square of
//! `2c − 1` cells centred on it is empty, so a beam can jump straight to where
//! it leaves that square instead of stepping cell by cell (the empty-space
//! skipping of voxel ray marching). Only cells that hold segments are tested,
//! exactly, so ranges equal a test of every segment. In an office a beam
//! takes a few leaps through a room and a few cell steps at the wall.
//!
//! A square is as narrow as the nearest wall, which along a corridor makes
//! for many short leaps. So every cell also knows how far its square's band
//! (the rows, or columns, the square spans) stays empty in each of the four
//! axis directions, and a beam leaps to where it leaves the longer of the two
//! bands ahead of it: a beam down a corridor crosses it in one leap.

use super::free_layers_memo::FreeLayersMemo;
use super::free_space::{band_reach, chebyshev_clearance};
use super::segments::{bucket_into_cells, merge_coincident, Segment, Wall};
use super::sweep::{FanSweep, SweepWork};
use super::{bounding_box, ray_edge, ray_edge_fraction, Fan, Hit, Vec2};

/// Side of the blocks fans are swept through on maps of short walls, m. On
/// the conestogo office (1081-beam 20 m scans, walls 0.14 m long on average:
/// the steps of a pixel map), with walls seen from behind skipped by groups:
/// smaller blocks visit more blocks for the same walls, larger ones test
/// more walls a beam cannot reach. On hosts with wide vectors 2.3–3.0 m
/// were fastest, 8–12 % ahead of 1.6 m; on older hosts 1.6–2.0 m were, by
/// 5 %; 4 m and 5 m blocks cost the office's lasers more.
const SWEEP_BLOCK_M: f64 = 2.6;

/// How many blocks an average wall should span, at most: a long wall is
/// filed (and its end points mapped to beams) in every block it crosses,
/// so maps of long straight walls sweep faster through larger blocks.
/// Shelves of 12 × 1 m (walls of 7.1 m on average) swept fastest through
/// blocks of about 5 m, 1.4 blocks per wall: cheaper than 2.6 m blocks by a
/// quarter, and larger ones gain nothing more.
const BLOCKS_PER_WALL: f64 = 1.4;

/// The largest blocks chosen for maps of long walls, m.
const MAX_SWEEP_BLOCK_M: f64 = 6.0;

/// The side of the sweep's blocks for `segments`, m: [`SWEEP_BLOCK_M`],
/// or larger for walls of several blocks' length on average (see
/// [`BLOCKS_PER_WALL`]). The blocks decide how much work a scan takes,
/// never its ranges.
fn sweep_block_m(segments: &[Segment]) -> f64 {
    if segments.is_empty() {
        return SWEEP_BLOCK_M;
    }
    let mean_m = segments.iter().map(|s| s.edge[0].hypot(s.edge[1])).sum::<f64>() / segments.len() as f64;
    (mean_m / BLOCKS_PER_WALL).clamp(SWEEP_BLOCK_M, MAX_SWEEP_BLOCK_M)
}

/// Segments bucketed into square cells (compressed rows: no per-cell Vec),
/// with each cell's clearance to the nearest non-empty cell.
#[derive(Debug, Clone)]
pub struct SegmentGrid {
    segments: Vec<Segment>,
    origin: Vec2,
    cell_m: f64,
    cells_per_m: f64,
    cols: usize,
    rows: usize,
    cell_start: Vec<u32>,
    /// The segments of each cell, copied in cell order: a walk reads one
    /// cell's segments from consecutive memory instead of chasing indices
    /// across the whole list (a segment crossing k cells is stored k times).
    cell_segments: Vec<Segment>,
    /// The empty space around each cell.
    free: Vec<Free>,
    /// The same segments in coarser blocks, for whole fans.
    sweep: FanSweep,
    /// The layers some segment outlines obstacles in (see [`Wall`]).
    outlined: u16,
    /// [`SegmentGrid::free_layers`] of each cell clear of walls, worked
    /// out once, at its centre, when a laser is first there.
    free_memo: FreeLayersMemo,
}

/// The empty space around one cell, in cells.
#[derive(Debug, Clone, Copy, Default)]
struct Free {
    /// Chebyshev distance to the nearest cell with a segment (0 for such
    /// cells), capped at [`super::free_space::MAX_CLEARANCE_CELLS`]: the square of half-width
    /// `clearance − 1` around the cell is empty.
    clearance: u8,
    /// How far that square's band stays empty beyond the cell towards +x,
    /// −x, +y and −y (at least the square's half-width; capped at 255).
    band_reach: [u8; 4],
}

impl SegmentGrid {
    /// Buckets the `walls` (coincident ones merged, see `merge_coincident`)
    /// into cells of about `cell_m` metres (larger when the map would need
    /// more than 2^14 cells along a side).
    pub fn new(walls: impl IntoIterator<Item = impl Into<Wall>>, cell_m: f64) -> SegmentGrid {
        let segments = merge_coincident(walls.into_iter().map(Into::into));
        let outlined = segments.iter().fold(0, |bits, s| bits | s.solid_left | s.solid_right);
        let (lo, hi) = bounding_box(segments.iter().flat_map(|s| [s.a, s.b()])).unwrap_or(([0.0; 2], [0.0; 2]));
        const MAX_CELLS_PER_SIDE: f64 = (1 << 14) as f64;
        let cell_m = cell_m.max(1e-3).max((hi[0] - lo[0]).max(hi[1] - lo[1]) / (MAX_CELLS_PER_SIDE - 4.0));
        // A cell of margin on every side keeps end points off the border. The
        // extra odd fraction of a cell keeps the edges of map pixels (whose
        // size often divides the cell size) off cell borders, where a
        // segment would be filed in the cells on both sides.
        let origin = [lo[0] - 1.37 * cell_m, lo[1] - 1.37 * cell_m];
        let cols = ((hi[0] - origin[0]) / cell_m).ceil() as usize + 2;
        let rows = ((hi[1] - origin[1]) / cell_m).ceil() as usize + 2;

        let mut grid = SegmentGrid {
            segments,
            origin,
            cell_m,
            cells_per_m: 1.0 / cell_m,
            cols,
            rows,
            cell_start: Vec::new(),
            cell_segments: Vec::new(),
            free: Vec::new(),
            sweep: FanSweep::new(&[], SWEEP_BLOCK_M),
            outlined,
            free_memo: FreeLayersMemo::new(cols * rows),
        };
        let block_m = sweep_block_m(&grid.segments);
        tracing::debug!("{} wall segments, swept through blocks of {block_m:.2} m", grid.segments.len());
        grid.sweep = FanSweep::new(&grid.segments, block_m);
        grid.bucket();
        let occupied: Vec<bool> = grid.cell_start.windows(2).map(|w| w[1] > w[0]).collect();
        let clearance = chebyshev_clearance(&occupied, cols, rows);
        let reach: Vec<Vec<u8>> = [(0, true), (0, false), (1, true), (1, false)]
            .into_iter()
            .map(|(axis, forward)| band_reach(&occupied, &clearance, cols, rows, axis, forward))
            .collect();
        grid.free = (0..cols * rows)
            .map(|i| Free { clearance: clearance[i], band_reach: [reach[0][i], reach[1][i], reach[2][i], reach[3][i]] })
            .collect();
        grid
    }

    /// Files every segment in the cells it touches (see
    /// [`bucket_into_cells`]), copied in cell order.
    fn bucket(&mut self) {
        let (start, members) = bucket_into_cells(&self.segments, self.origin, self.cell_m, self.cols, self.rows);
        self.cell_start = start;
        self.cell_segments = members.iter().map(|&i| self.segments[i as usize]).collect();
    }

    /// A world point in cell units from the grid origin.
    #[inline]
    fn to_cells(&self, p: Vec2) -> Vec2 {
        [(p[0] - self.origin[0]) * self.cells_per_m, (p[1] - self.origin[1]) * self.cells_per_m]
    }

    /// Number of segments.
    pub fn len(&self) -> usize {
        self.segments.len()
    }

    /// Whether the grid holds no segment.
    pub fn is_empty(&self) -> bool {
        self.segments.is_empty()
    }

    /// Bytes held by the grid (segments, cells and clearance).
    pub fn heap_bytes(&self) -> usize {
        self.segments.len() * std::mem::size_of::<Segment>()
            + self.cell_start.len() * 4
            + self.cell_segments.len() * std::mem::size_of::<Segment>()
            + self.free.len() * std::mem::size_of::<Free>()
            + self.free_memo.heap_bytes()
            + self.sweep.heap_bytes()
    }

    /// Casts every beam of `fan` (see [`FanSweep::cast_fan`]), skipping
    /// the walls seen from their solid side in the layers where the fan's
    /// origin is in free space.
    pub fn sweep_fan(&self, fan: &Fan, work: &mut SweepWork, best: &mut [f64], bits: &mut [u16]) {
        let back_faces = self.free_layers(fan.origin, fan.layers);
        self.sweep.cast_fan(fan, back_faces, work, best, bits);
    }

    /// The nearest segment on `layers` hit by the unit ray within `max_m`.
    pub fn cast(&self, origin: Vec2, dir: Vec2, max_m: f64, layers: u16) -> Option<Hit> {
        self.nearest(origin, dir, max_m, layers).map(|(distance_m, s)| Hit { distance_m, layers: s.layers })
    }

    /// The nearest segment on `layers` hit by the unit ray within `max_m`,
    /// and its distance, m.
    fn nearest(&self, origin: Vec2, dir: Vec2, max_m: f64, layers: u16) -> Option<(f64, &Segment)> {
        let mut walk = Walk::new(self, origin, dir, max_m)?;
        while self.step(&mut walk, layers) {}
        let distance_m = walk.nearest.0 / walk.nearest.1;
        let segment = self.cell_segments.get(walk.segment)?;
        (distance_m <= max_m).then_some((distance_m, segment))
    }

    /// The layers among `layers` whose outlines (see [`Wall`]) `origin` is
    /// surely outside of: from a point in free space the first outline a
    /// ray meets is met from its free side, from inside an obstacle from
    /// its solid side, and a ray that meets none is outside them all.
    /// When a probe ray meets a corner, where the side is in doubt, another
    /// direction is tried; a layer in doubt after all of them, or with an
    /// outline through the origin, counts as not free.
    ///
    /// In a cell whose neighbours hold no wall either, every point is on
    /// the same side of every outline, more than a cell away from it: the
    /// answer at the cell's centre, worked out once, holds there. (A layer
    /// in doubt at the centre stays so for the whole cell, which only
    /// costs the culling of walls seen from behind, never a range.)
    pub fn free_layers(&self, origin: Vec2, layers: u16) -> u16 {
        let layers = layers & self.outlined;
        if layers == 0 {
            return 0;
        }
        let [x, y] = self.to_cells(origin).map(f64::floor);
        if x >= 0.0 && y >= 0.0 && x < self.cols as f64 && y < self.rows as f64 {
            let cell = y as usize * self.cols + x as usize;
            if self.free[cell].clearance >= 2 {
                let centre = [self.origin[0] + (x + 0.5) * self.cell_m, self.origin[1] + (y + 0.5) * self.cell_m];
                return self.free_memo.get_or_work_out(cell, || self.probe_free_layers(centre, self.outlined)) & layers;
            }
        }
        self.probe_free_layers(origin, layers)
    }

    /// [`SegmentGrid::free_layers`] found by probe rays from `origin`.
    fn probe_free_layers(&self, origin: Vec2, layers: u16) -> u16 {
        // Directions no map's walls line up with.
        const PROBES_RAD: [f64; 3] = [0.3371, 2.4142, 4.1231];
        let mut free = 0;
        let mut pending = layers & self.outlined;
        while pending != 0 {
            let layer = pending & pending.wrapping_neg();
            pending &= !layer;
            if self.on_outline(origin, layer) {
                continue;
            }
            for angle in PROBES_RAD {
                let dir = [angle.cos(), angle.sin()];
                let Some((t, s)) = self.nearest(origin, dir, f64::INFINITY, layer) else {
                    free |= layer;
                    break;
                };
                let hit = [origin[0] + dir[0] * t, origin[1] + dir[1] * t];
                let near = |p: Vec2| (p[0] - hit[0]).hypot(p[1] - hit[1]) <= 1e-7;
                if near(s.a) || near(s.b()) {
                    continue;
                }
                match s.side_of(origin) {
                    Some(true) if s.solid_right & layer != 0 => free |= layer,
                    Some(false) if s.solid_left & layer != 0 => free |= layer,
                    Some(_) => {}
                    None => continue,
                }
                break;
            }
        }
        free
    }

    /// Whether an outline of `layer` passes within a hair of `origin`: a
    /// beam from there along that wall may meet the walls beyond it only
    /// from their solid side.
    fn on_outline(&self, origin: Vec2, layer: u16) -> bool {
        let hair_m = 1e-9 * (1.0 + origin[0].abs() + origin[1].abs());
        let [x, y] = self.to_cells(origin).map(f64::floor);
        // The origin's cell and its neighbours: a segment within a hair of
        // a point near a cell border may be filed only across it.
        for y in [y - 1.0, y, y + 1.0] {
            for x in [x - 1.0, x, x + 1.0] {
                if !(x >= 0.0 && y >= 0.0 && x < self.cols as f64 && y < self.rows as f64) {
                    continue;
                }
                let index = y as usize * self.cols + x as usize;
                let (s, e) = (self.cell_start[index] as usize, self.cell_start[index + 1] as usize);
                for segment in &self.cell_segments[s..e] {
                    if (segment.solid_left | segment.solid_right) & layer != 0 && segment.distance_m(origin) <= hair_m {
                        return true;
                    }
                }
            }
        }
        false
    }

    /// One cell (or one leap over empty cells) of a walk; false once its
    /// nearest hit is known.
    #[inline]
    fn step(&self, walk: &mut Walk, layers: u16) -> bool {
        let index = walk.ray.index(self.cols);
        let free = self.free[index];
        if free.clearance == 0 {
            let (s, e) = (self.cell_start[index] as usize, self.cell_start[index + 1] as usize);
            for (k, segment) in self.cell_segments[s..e].iter().enumerate() {
                if segment.layers & layers == 0 {
                    continue;
                }
                // Only hits no farther than the nearest so far get through.
                let (num, den) = walk.nearest;
                if let Some(nearest) = ray_edge_fraction(walk.origin, walk.dir, segment.a, segment.edge, num, den) {
                    walk.nearest = nearest;
                    walk.segment = s + k;
                }
            }
        }
        // The empty cells around this one that the ray may cross in one
        // leap (this cell alone when it holds segments).
        let (rect, axis, t) = walk.ray.farthest_band(free);
        // A hit before the ray leaves them cannot be beaten later.
        walk.nearest.0 > t * walk.nearest.1 && walk.ray.leap(axis, t, rect)
    }

    /// The naive reference: every segment tested (for tests and benchmarks).
    pub fn cast_brute_force(&self, origin: Vec2, dir: Vec2, max_m: f64, layers: u16) -> Option<Hit> {
        let mut best: Option<Hit> = None;
        for s in self.segments.iter().filter(|s| s.layers & layers != 0) {
            let limit = best.map_or(max_m, |h| h.distance_m);
            if let Some(t) = ray_edge(origin, dir, s.a, s.edge, limit) {
                if best.is_none_or(|h| t < h.distance_m) {
                    best = Some(Hit { distance_m: t, layers: s.layers });
                }
            }
        }
        best
    }
}

/// One beam's walk: its ray on the grid and its nearest hit so far.
struct Walk {
    ray: GridRay,
    origin: Vec2,
    dir: Vec2,
    /// The nearest hit so far (the range while there is none), m, as a
    /// fraction: dividing once at the end spares a division per hit.
    nearest: (f64, f64),
    /// Where the nearest hit's segment is in `cell_segments`; past its end
    /// while there is none.
    segment: usize,
}

impl Walk {
    fn new(grid: &SegmentGrid, origin: Vec2, dir: Vec2, max_m: f64) -> Option<Walk> {
        let ray = GridRay::new(grid, origin, dir, max_m)?;
        Some(Walk { ray, origin, dir, nearest: (max_m, 1.0), segment: usize::MAX })
    }
}

/// A ray walking a grid: its line in cell units and its current cell.
struct GridRay {
    /// Origin in cell units.
    p: Vec2,
    /// Direction in cells per metre.
    d: Vec2,
    /// 1/d; +∞ along an axis the ray does not move on (which then counts
    /// as forward, so that the face ahead is never reached).
    inv: Vec2,
    /// Whether the ray moves towards + along each axis.
    forward: [bool; 2],
    cell: [i64; 2],
    last: [i64; 2],
    /// Where the ray leaves the grid or its range, m.
    t_leave: f64,
}

impl GridRay {
    /// The ray from `origin` along `dir`, clipped to the grid and to
    /// [0, to_m]; None when nothing of it is on the grid.
    fn new(grid: &SegmentGrid, origin: Vec2, dir: Vec2, to_m: f64) -> Option<GridRay> {
        let p = grid.to_cells(origin);
        let d = [dir[0] * grid.cells_per_m, dir[1] * grid.cells_per_m];
        let mut inv = [f64::INFINITY; 2];
        let size = [grid.cols as f64, grid.rows as f64];
        let (mut t_enter, mut t_leave) = (0.0f64, to_m);
        for axis in 0..2 {
            if d[axis] == 0.0 {
                if p[axis] < 0.0 || p[axis] >= size[axis] {
                    return None;
                }
            } else {
                inv[axis] = 1.0 / d[axis];
                let (t0, t1) = (-p[axis] * inv[axis], (size[axis] - p[axis]) * inv[axis]);
                t_enter = t_enter.max(t0.min(t1));
                t_leave = t_leave.min(t0.max(t1));
            }
        }
        if t_enter > t_leave {
            return None;
        }
        let last = [grid.cols as i64 - 1, grid.rows as i64 - 1];
        // `as` truncates: the same as floor for the non-negative coordinates
        // inside the grid, and far cheaper than libm's floor.
        let cell_x = ((p[0] + d[0] * t_enter) as i64).clamp(0, last[0]);
        let cell_y = ((p[1] + d[1] * t_enter) as i64).clamp(0, last[1]);
        let forward = [d[0] >= 0.0, d[1] >= 0.0];
        Some(GridRay { p, d, inv, forward, cell: [cell_x, cell_y], last, t_leave })
    }

    #[inline]
    fn index(&self, cols: usize) -> usize {
        self.cell[1] as usize * cols + self.cell[0] as usize
    }

    /// Where the ray crosses the face ahead of it of the cells `lo..=hi`
    /// along `axis` (which hold its cell), m.
    #[inline(always)]
    fn face_m(&self, axis: usize, lo: i64, hi: i64) -> f64 {
        let face = if self.forward[axis] { hi + 1 } else { lo };
        (face as f64 - self.p[axis]) * self.inv[axis]
    }

    /// Of the two empty bands ahead of the ray around its cell (see
    /// [`Free`]), the one the ray leaves farther along: the band, the axis through which the ray
    /// leaves it, and the distance at which it does, m. A cell holding
    /// segments is a band of itself.
    #[inline(always)]
    fn farthest_band(&self, free: Free) -> (Rect, usize, f64) {
        let half = i64::from(free.clearance.saturating_sub(1));
        let [x, y] = self.cell;
        // The square's extent, and each band's along its own axis.
        let square = Rect { lo: [x - half, y - half], hi: [x + half, y + half] };
        let along = |axis: usize| {
            let reach = i64::from(free.band_reach[2 * axis + usize::from(!self.forward[axis])]).max(half);
            let c = self.cell[axis];
            if self.forward[axis] {
                (c - half, c + reach)
            } else {
                (c - reach, c + half)
            }
        };
        let (x_lo, x_hi) = along(0);
        let (y_lo, y_hi) = along(1);
        let square_x = self.face_m(0, square.lo[0], square.hi[0]);
        let square_y = self.face_m(1, square.lo[1], square.hi[1]);
        let band_x = self.face_m(0, x_lo, x_hi);
        let band_y = self.face_m(1, y_lo, y_hi);
        // The band along x is left through its far end or its sides.
        let (leave_x, leave_y) = (band_x.min(square_y), square_x.min(band_y));
        if leave_x >= leave_y {
            let rect = Rect { lo: [x_lo, square.lo[1]], hi: [x_hi, square.hi[1]] };
            (rect, usize::from(square_y < band_x), leave_x)
        } else {
            let rect = Rect { lo: [square.lo[0], y_lo], hi: [square.hi[0], y_hi] };
            (rect, usize::from(band_y <= square_x), leave_y)
        }
    }

    /// Moves to the cell just past where the ray leaves `rect` through
    /// `axis` at `t` m; false when that is beyond the ray's range or off
    /// the grid.
    #[inline(always)]
    fn leap(&mut self, axis: usize, t: f64, rect: Rect) -> bool {
        if t >= self.t_leave {
            return false;
        }
        self.cell[axis] = if self.forward[axis] { rect.hi[axis] + 1 } else { rect.lo[axis] - 1 };
        if self.cell[axis] < 0 || self.cell[axis] > self.last[axis] {
            return false;
        }
        let other = 1 - axis;
        self.cell[other] = ((self.p[other] + self.d[other] * t) as i64)
            .clamp(rect.lo[other], rect.hi[other])
            .clamp(0, self.last[other]);
        true
    }
}

/// A rectangle of cells, bounds included.
#[derive(Debug, Clone, Copy)]
struct Rect {
    lo: [i64; 2],
    hi: [i64; 2],
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_of_long_walls_are_swept_through_larger_blocks() {
        let wall =
            |length_m: f64| Segment { a: [0.0, 0.0], edge: [length_m, 0.0], layers: 1, solid_left: 1, solid_right: 0 };
        assert_eq!(sweep_block_m(&[]), SWEEP_BLOCK_M);
        assert_eq!(sweep_block_m(&[wall(0.05), wall(0.2), wall(3.0)]), SWEEP_BLOCK_M, "a pixel map's steps");
        assert!((sweep_block_m(&[wall(12.0), wall(1.0)]) - 6.5 / BLOCKS_PER_WALL).abs() < 1e-12, "shelves");
        assert_eq!(sweep_block_m(&[wall(100.0)]), MAX_SWEEP_BLOCK_M);
    }

    /// A deterministic pseudo-random sequence (no RNG crate needed in tests).
    fn lcg(state: &mut u64) -> f64 {
        *state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (*state >> 11) as f64 / (1u64 << 53) as f64
    }

    fn assert_same(grid: &SegmentGrid, origin: Vec2, dir: Vec2, range: f64, layers: u16) {
        let fast = grid.cast(origin, dir, range, layers).map(|h| h.distance_m);
        let slow = grid.cast_brute_force(origin, dir, range, layers).map(|h| h.distance_m);
        match (fast, slow) {
            (Some(f), Some(s)) => assert!((f - s).abs() < 1e-9, "{origin:?} {dir:?}: {f} vs {s}"),
            (f, s) => assert_eq!(f, s, "{origin:?} {dir:?}"),
        }
    }

    #[test]
    fn leaping_cast_agrees_with_brute_force_on_random_rays() {
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
        for cell_m in [0.1, 0.7, 3.0] {
            let grid = SegmentGrid::new(segments.clone(), cell_m);
            for _ in 0..5000 {
                let origin = [lcg(&mut seed) * 60.0 - 30.0, lcg(&mut seed) * 60.0 - 30.0];
                let angle = lcg(&mut seed) * std::f64::consts::TAU;
                let layers = if lcg(&mut seed) < 0.3 { 1 } else { 3 };
                assert_same(&grid, origin, [angle.cos(), angle.sin()], 25.0, layers);
            }
        }
    }

    /// Sweeps the fan from `origin`, beam `i` at `start + i · increment`,
    /// and checks every beam against the brute-force test.
    fn assert_fan_same(grid: &SegmentGrid, origin: Vec2, start: f64, increment: f64, beams: usize, range: f64) {
        let dirs: Vec<Vec2> = (0..beams).map(|i| start + increment * i as f64).map(|a| [a.cos(), a.sin()]).collect();
        let fan = Fan { origin, start_rad: start, increment_rad: increment, dirs: &dirs, range_m: range, layers: 1 };
        let (mut best, mut bits) = (vec![0.0; beams], vec![0; beams]);
        grid.sweep_fan(&fan, &mut SweepWork::default(), &mut best, &mut bits);
        for (i, &dir) in dirs.iter().enumerate() {
            let slow = grid.cast_brute_force(origin, dir, range, 1);
            let slow_m = slow.map_or(f64::INFINITY, |h| h.distance_m);
            assert!(
                best[i] == slow_m || (best[i] - slow_m).abs() < 1e-9,
                "{origin:?} beam {i}: {} vs {slow_m}",
                best[i]
            );
            assert_eq!(bits[i], slow.map_or(0, |h| h.layers), "{origin:?} beam {i}");
        }
    }

    #[test]
    fn swept_fans_agree_with_brute_force_beam_by_beam() {
        let mut seed = 9;
        let mut segments = Vec::new();
        for _ in 0..300 {
            let a = [lcg(&mut seed) * 40.0 - 20.0, lcg(&mut seed) * 40.0 - 20.0];
            let b = [a[0] + lcg(&mut seed) * 2.0 - 1.0, a[1] + lcg(&mut seed) * 2.0 - 1.0];
            segments.push((a, b, 1));
        }
        segments.push(([-20.0, -20.0], [20.0, -20.0], 1));
        segments.push(([-20.0, 20.0], [20.0, 20.0], 1));
        let grid = SegmentGrid::new(segments.clone(), 0.1);
        for _ in 0..200 {
            // inside the walls, and outside the grid looking in
            let spread = if lcg(&mut seed) < 0.8 { 40.0 } else { 90.0 };
            let origin = [lcg(&mut seed) * spread - spread / 2.0, lcg(&mut seed) * spread - spread / 2.0];
            // fans of up to more than a turn, either way round
            let (start, fov) = (lcg(&mut seed) * 20.0 - 10.0, lcg(&mut seed) * 7.0);
            let increment = if lcg(&mut seed) < 0.5 { fov / 540.0 } else { -fov / 540.0 };
            assert_fan_same(&grid, origin, start, increment, 541, 30.0);
        }
        // from far off the map with a range that reaches it (the blocks are
        // then visited in grid order), and with one that does not
        for (origin, range) in [([1.0e6f64, -3.0e5], 2.0e6), ([-4.0e7, 2.0e7], 1.0e8), ([1.0e6, 0.0], 50.0)] {
            let towards = (-origin[1]).atan2(-origin[0]);
            assert_fan_same(&grid, origin, towards - 1e-4, 2e-4 / 540.0, 541, range);
        }
        // from a segment's end point, from the middle of one, and from a
        // hair to either side of it (where the segment spans almost half a
        // turn and its ends' angles hardly tell which half)
        for &(a, b, _) in &segments[..20] {
            let middle = [(a[0] + b[0]) / 2.0, (a[1] + b[1]) / 2.0];
            let normal = [a[1] - b[1], b[0] - a[0]];
            let beside = |along: f64, k: f64| {
                [a[0] + (b[0] - a[0]) * along + k * normal[0], a[1] + (b[1] - a[1]) * along + k * normal[1]]
            };
            let mut origins = vec![a, b, middle];
            for along in [0.1, 0.3, 0.77] {
                origins.extend([1e-9, -1e-8, 1e-7, -1e-6].map(|k| beside(along, k)));
            }
            for origin in origins {
                assert_fan_same(&grid, origin, 0.3, std::f64::consts::TAU / 720.0, 720, 30.0);
            }
        }
    }

    #[test]
    fn sparse_maps_are_crossed_in_leaps_and_still_hit_exactly() {
        // Two far walls and a lone post: most of the map is open floor.
        let segments =
            vec![([0.0, 0.0], [0.0, 50.0], 1), ([50.0, 0.0], [50.0, 50.0], 1), ([25.0, 25.0], [25.05, 25.05], 1)];
        let grid = SegmentGrid::new(segments, 0.05);
        let mut seed = 3;
        for _ in 0..5000 {
            let origin = [lcg(&mut seed) * 50.0, lcg(&mut seed) * 50.0];
            let angle = lcg(&mut seed) * std::f64::consts::TAU;
            assert_same(&grid, origin, [angle.cos(), angle.sin()], 60.0, 1);
        }
        // aimed exactly at the post's end points
        for target in [[25.0, 25.0], [25.05, 25.05]] {
            for origin in [[3.0f64, 7.0], [40.0, 49.0], [25.0, 1.0]] {
                let (dx, dy) = (target[0] - origin[0], target[1] - origin[1]);
                let n = dx.hypot(dy);
                assert_same(&grid, origin, [dx / n, dy / n], 60.0, 1);
            }
        }
    }

    #[test]
    fn a_wall_in_two_layers_is_tested_once_and_hits_on_both() {
        let wall = ([1.0, -1.0], [1.0, 1.0]);
        let reversed = (wall.1, wall.0);
        let grid =
            SegmentGrid::new(vec![(wall.0, wall.1, 1), (reversed.0, reversed.1, 2), ([3.0, -1.0], [3.0, 1.0], 2)], 0.1);
        assert_eq!(grid.len(), 2);
        let hit = grid.cast([0.0, 0.0], [1.0, 0.0], 10.0, 1).unwrap();
        assert_eq!((hit.distance_m, hit.layers), (1.0, 3));
        // either layer alone still sees it
        assert_eq!(grid.cast([0.0, 0.0], [1.0, 0.0], 10.0, 2).unwrap().distance_m, 1.0);
        assert_eq!(grid.cast([2.0, 0.0], [1.0, 0.0], 10.0, 2).unwrap().distance_m, 1.0);
    }

    #[test]
    fn corridors_crossed_in_band_leaps_hit_exactly() {
        // Corridors 1.5 m wide between long walls along x, cut by doorways,
        // and a few cross walls: long empty bands, the case band leaps are for.
        let mut seed = 17;
        let mut segments = Vec::new();
        for k in 0..8 {
            let y = k as f64 * 1.5;
            let mut x = 0.0;
            while x < 40.0 {
                let length = 2.0 + lcg(&mut seed) * 8.0;
                segments.push(([x, y], [(x + length).min(40.0), y], 1));
                x += length + 0.6 + lcg(&mut seed) * 0.6; // a doorway
            }
        }
        for _ in 0..12 {
            let (x, k) = (lcg(&mut seed) * 40.0, (lcg(&mut seed) * 7.0).floor());
            segments.push(([x, k * 1.5], [x, k * 1.5 + 1.5], 1));
        }
        let grid = SegmentGrid::new(segments, 0.1);
        let beams = 1081;
        for _ in 0..60 {
            let origin = [lcg(&mut seed) * 40.0, lcg(&mut seed) * 10.5];
            // single beams, many of them nearly along the corridors
            for _ in 0..50 {
                let angle = if lcg(&mut seed) < 0.5 { lcg(&mut seed) * 0.2 - 0.1 } else { lcg(&mut seed) * 6.3 };
                let angle = if lcg(&mut seed) < 0.5 { angle } else { angle + std::f64::consts::PI };
                assert_same(&grid, origin, [angle.cos(), angle.sin()], 25.0, 1);
            }
            // a whole laser scan
            let start = lcg(&mut seed) * std::f64::consts::TAU;
            assert_fan_same(&grid, origin, start, 1.5 * std::f64::consts::PI / (beams - 1) as f64, beams, 25.0);
        }
    }

    #[test]
    fn axis_aligned_rays_along_cell_borders() {
        let grid = SegmentGrid::new(vec![([0.0, -5.0], [0.0, 5.0], 1), ([10.0, -5.0], [10.0, 5.0], 1)], 1.0);
        assert_eq!(grid.cast([5.0, 0.0], [1.0, 0.0], 20.0, 1).unwrap().distance_m, 5.0);
        assert_eq!(grid.cast([5.0, 1.0], [-1.0, 0.0], 20.0, 1).unwrap().distance_m, 5.0);
        assert!(grid.cast([5.0, 0.0], [0.0, 1.0], 20.0, 1).is_none());
        assert!(grid.cast([5.0, 0.0], [1.0, 0.0], 4.0, 1).is_none());
        // from outside the grid, towards it and away from it
        assert_eq!(grid.cast([-30.0, 1.0], [1.0, 0.0], 40.0, 1).unwrap().distance_m, 30.0);
        assert!(grid.cast([-30.0, 1.0], [-1.0, 0.0], 40.0, 1).is_none());
    }

    #[test]
    fn free_layers_kept_per_cell_are_those_probed_at_each_point() {
        // Boxes outlined as a map image's obstacles are (solid on the
        // left, apart from one another as a map's outlines are), on layer
        // 1, on layer 2 or on both, one in each 4 m square; points
        // anywhere, inside boxes or out, many sharing cells.
        let mut seed = 11;
        let mut walls = Vec::new();
        for i in 0..36 {
            let (x, y) = ((i % 6) as f64 * 4.0 + lcg(&mut seed), (i / 6) as f64 * 4.0 + lcg(&mut seed));
            let (w, h) = (0.2 + lcg(&mut seed) * 2.5, 0.2 + lcg(&mut seed) * 2.5);
            let layers = [1, 2, 3][i % 3];
            let c = [[x, y], [x + w, y], [x + w, y + h], [x, y + h]];
            walls.extend((0..4).map(|k| Wall { a: c[k], b: c[(k + 1) % 4], layers, solid_on_left: layers }));
        }
        let grid = SegmentGrid::new(walls, 0.25);
        let (mut kept, mut free_somewhere) = (0, 0);
        for _ in 0..20_000 {
            let origin = [lcg(&mut seed) * 24.0 - 1.0, lcg(&mut seed) * 24.0 - 1.0];
            let probed = grid.probe_free_layers(origin, 3);
            assert_eq!(grid.free_layers(origin, 3), probed, "at {origin:?}");
            assert_eq!(grid.free_layers(origin, 2), probed & 2, "at {origin:?}, layer 2 asked alone");
            free_somewhere += usize::from(probed != 0);
        }
        for cell in 0..grid.cols * grid.rows {
            kept += usize::from(grid.free_memo.get_or_work_out(cell, || u16::MAX) != u16::MAX);
        }
        assert!(kept > 1000, "the points were answered from kept cells ({kept} cells kept)");
        assert!(free_somewhere > 5000 && free_somewhere < 20_000, "{free_somewhere} points free in some layer");
    }

    #[test]
    fn clearance_is_the_chebyshev_distance_to_the_nearest_wall_cell() {
        // Posts in cells (1, 1) and (6, 1), past the grid's margin.
        let grid = SegmentGrid::new(vec![([0.0, 0.0], [0.1, 0.1], 1), ([5.5, 0.5], [5.6, 0.6], 1)], 1.0);
        assert_eq!(grid.cols, 9);
        let row: Vec<u8> = (0..grid.cols).map(|x| grid.free[grid.cols + x].clearance).collect();
        assert_eq!(row, [1, 0, 1, 2, 2, 1, 0, 1, 2]);
    }
}
