//! A uniform grid over wall segments with a clearance map, walked along each
//! beam by leaps over empty space.
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

use std::collections::HashMap;

use super::free_space::{band_reach, chebyshev_clearance};
use super::{bounding_box, ray_edge, ray_edge_fraction, Hit, Vec2};

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

/// A two-sided wall segment from `a` to `a + edge`, and the layers it
/// belongs to.
#[derive(Debug, Clone, Copy)]
struct Segment {
    a: Vec2,
    edge: Vec2,
    layers: u16,
}

impl Segment {
    fn b(&self) -> Vec2 {
        [self.a[0] + self.edge[0], self.a[1] + self.edge[1]]
    }
}

/// The segments, with those on the same two end points (the same wall in
/// several layers, as when two layers share a map) made one, on all their
/// layers: a beam tests it once, and a hit on it reports every layer it is
/// on.
fn merge_coincident(segments: Vec<(Vec2, Vec2, u16)>) -> Vec<Segment> {
    let mut merged: Vec<Segment> = Vec::with_capacity(segments.len());
    let mut first_of: HashMap<[u64; 4], usize> = HashMap::with_capacity(segments.len());
    for (a, b, layers) in segments {
        let (p, q) = if (a[0], a[1]) <= (b[0], b[1]) { (a, b) } else { (b, a) };
        // -0.0 and 0.0 are the same point.
        let key = [p[0], p[1], q[0], q[1]].map(|v| (v + 0.0).to_bits());
        match first_of.get(&key) {
            Some(&i) => merged[i].layers |= layers,
            None => {
                first_of.insert(key, merged.len());
                merged.push(Segment { a, edge: [b[0] - a[0], b[1] - a[1]], layers });
            }
        }
    }
    merged
}

impl SegmentGrid {
    /// Buckets `segments` (with their layer bits; coincident ones merged,
    /// see `merge_coincident`) into cells of about `cell_m` metres (larger
    /// when the map would need more than 2^14 cells along a side).
    pub fn new(segments: Vec<(Vec2, Vec2, u16)>, cell_m: f64) -> SegmentGrid {
        let segments = merge_coincident(segments);
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
        };
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

    /// Fills the compressed rows with every segment, in every cell its
    /// closed square (widened by a hair, so that a segment on a cell border
    /// is in the cells on both sides) touches.
    fn bucket(&mut self) {
        let slack = 1e-9;
        let mut counts = vec![0u32; self.cols * self.rows + 1];
        let mut pairs: Vec<(u32, u32)> = Vec::new();
        for (i, s) in self.segments.iter().enumerate() {
            let a = self.to_cells(s.a);
            let b = self.to_cells(s.b());
            let (x0, x1) = ((a[0].min(b[0]) - slack).floor(), (a[0].max(b[0]) + slack).floor());
            let (y0, y1) = ((a[1].min(b[1]) - slack).floor(), (a[1].max(b[1]) + slack).floor());
            let normal = [a[1] - b[1], b[0] - a[0]];
            let length = normal[0].hypot(normal[1]);
            for y in (y0.max(0.0) as usize)..=(y1 as usize).min(self.rows - 1) {
                for x in (x0.max(0.0) as usize)..=(x1 as usize).min(self.cols - 1) {
                    // Separating axis: the segment's line must pass through
                    // the (widened) cell; its box already overlaps.
                    let side = |cx: f64, cy: f64| normal[0] * (cx - a[0]) + normal[1] * (cy - a[1]);
                    let corners = [
                        side(x as f64, y as f64),
                        side(x as f64 + 1.0, y as f64),
                        side(x as f64, y as f64 + 1.0),
                        side(x as f64 + 1.0, y as f64 + 1.0),
                    ];
                    let margin = slack * 2.0 * length;
                    let all_above = corners.iter().all(|&d| d > margin);
                    let all_below = corners.iter().all(|&d| d < -margin);
                    if !all_above && !all_below {
                        let cell = y * self.cols + x;
                        counts[cell] += 1;
                        pairs.push((cell as u32, i as u32));
                    }
                }
            }
        }
        // Prefix sums, then place each segment in its cells' rows.
        let mut start = Vec::with_capacity(counts.len());
        let mut total = 0u32;
        for c in &counts {
            start.push(total);
            total += c;
        }
        let mut fill = start.clone();
        let mut items = vec![0u32; total as usize];
        for (cell, i) in pairs {
            items[fill[cell as usize] as usize] = i;
            fill[cell as usize] += 1;
        }
        self.cell_start = start;
        self.cell_segments = items.iter().map(|&i| self.segments[i as usize]).collect();
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
    }

    /// The nearest segment on `layers` hit by the unit ray within `max_m`.
    pub fn cast(&self, origin: Vec2, dir: Vec2, max_m: f64, layers: u16) -> Option<Hit> {
        let mut walk = Walk::new(self, origin, dir, 0.0, max_m)?;
        while self.step(&mut walk, layers) {}
        walk.hit(max_m)
    }

    /// One cell (or one leap over empty cells) of a walk; false once its
    /// nearest hit is known.
    #[inline]
    fn step(&self, walk: &mut Walk, layers: u16) -> bool {
        let index = walk.ray.index(self.cols);
        let free = self.free[index];
        if free.clearance == 0 {
            let (s, e) = (self.cell_start[index] as usize, self.cell_start[index + 1] as usize);
            for segment in &self.cell_segments[s..e] {
                if segment.layers & layers == 0 {
                    continue;
                }
                // Only hits no farther than the nearest so far get through.
                let (num, den) = walk.nearest;
                if let Some(nearest) = ray_edge_fraction(walk.origin, walk.dir, segment.a, segment.edge, num, den) {
                    walk.nearest = nearest;
                    walk.layers = segment.layers;
                }
            }
        }
        // The empty cells around this one that the ray may cross in one
        // leap (this cell alone when it holds segments).
        let (rect, axis, t) = walk.ray.farthest_band(free, 0);
        // A hit before the ray leaves them cannot be beaten later.
        walk.nearest.0 > t * walk.nearest.1 && walk.ray.leap(axis, t, rect)
    }

    /// Casts a fan of unit rays from one origin (as a laser's beams, in
    /// order, each close to the next) into `best` (distance, ∞ for no hit)
    /// and `bits` (layers of the hit).
    ///
    /// Beams go in bundles of `BUNDLE_BEAMS`: the bundle's middle ray leaps
    /// through empty cells as long as the whole wedge around it stays inside
    /// empty bands, so open floor is crossed once per bundle. From where
    /// the wedge is stopped each beam walks on alone, a few beams at a time.
    /// (Splitting stopped wedges into narrower ones was tried: the extra
    /// wedge walks cost more than they saved.)
    pub fn cast_fan(&self, origin: Vec2, dirs: &[Vec2], max_m: f64, layers: u16, best: &mut [f64], bits: &mut [u16]) {
        let fan = FanCast { grid: self, origin, max_m, layers };
        for ((dirs, best), bits) in
            dirs.chunks(BUNDLE_BEAMS).zip(best.chunks_mut(BUNDLE_BEAMS)).zip(bits.chunks_mut(BUNDLE_BEAMS))
        {
            fan.bundle(dirs, best, bits);
        }
    }

    /// How far every ray of `bundle` is sure to meet no segment, m: the
    /// distance the wedge around the bundle's middle ray advances through
    /// empty bands shrunk by the wedge's half-width.
    fn free_wedge(&self, origin: Vec2, bundle: &[Vec2], max_m: f64) -> f64 {
        let (first, last) = (bundle[0], bundle[bundle.len() - 1]);
        let middle = [first[0] + last[0], first[1] + last[1]];
        let norm = (middle[0] * middle[0] + middle[1] * middle[1]).sqrt();
        if norm < 1e-6 {
            return 0.0; // a bundle spanning half a turn: no wedge
        }
        let middle = [middle[0] / norm, middle[1] / norm];
        // A beam's point at distance s is within s·spread of the middle ray's.
        let spread =
            bundle.iter().map(|d| (d[0] - middle[0]).powi(2) + (d[1] - middle[1]).powi(2)).fold(0.0, f64::max).sqrt();
        // From outside the grid the beams enter it at different distances,
        // none of them covered by the middle ray's bands: no wedge.
        let local = self.to_cells(origin);
        if local[0] < 0.0 || local[1] < 0.0 || local[0] >= self.cols as f64 || local[1] >= self.rows as f64 {
            return 0.0;
        }
        let Some(mut ray) = GridRay::new(self, origin, middle, 0.0, max_m) else {
            return 0.0;
        };
        let mut free_m = 0.0;
        loop {
            let free = self.free[ray.index(self.cols)];
            if free.clearance == 0 {
                return free_m;
            }
            // The middle ray leaves this cell's empty bands at most this far
            // along; within that distance every beam stays within `margin`
            // cells of it, so the bands shrunk by the margin are safe.
            let (_, _, farthest_m) = ray.farthest_band(free, 0);
            let margin = (spread * farthest_m.min(max_m) / self.cell_m).ceil() as i64;
            if margin >= i64::from(free.clearance) {
                return free_m;
            }
            let (rect, axis, t) = ray.farthest_band(free, margin);
            if !ray.leap(axis, t, rect) {
                return free_m;
            }
            free_m = t;
        }
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

/// One fan being cast: what every bundle of it shares.
struct FanCast<'a> {
    grid: &'a SegmentGrid,
    origin: Vec2,
    max_m: f64,
    layers: u16,
}

impl FanCast<'_> {
    /// Casts the beams of one bundle: advance its wedge, then walk each
    /// beam on from where the wedge stopped.
    fn bundle(&self, dirs: &[Vec2], best: &mut [f64], bits: &mut [u16]) {
        let free_m = if dirs.len() > 1 { self.grid.free_wedge(self.origin, dirs, self.max_m) } else { 0.0 };
        // Walk several beams at once, a step of each in turn: their steps do
        // not depend on each other, so the processor overlaps their memory
        // loads and arithmetic instead of waiting on one beam's chain.
        let mut lanes: [Option<(usize, Walk)>; WALK_LANES] = [const { None }; WALK_LANES];
        let mut next = 0;
        let mut start = |best: &mut [f64], bits: &mut [u16]| -> Option<(usize, Walk)> {
            while next < dirs.len() {
                let i = next;
                next += 1;
                match Walk::new(self.grid, self.origin, dirs[i], free_m, self.max_m) {
                    Some(walk) => return Some((i, walk)),
                    None => (best[i], bits[i]) = (f64::INFINITY, 0),
                }
            }
            None
        };
        for lane in &mut lanes {
            *lane = start(best, bits);
        }
        loop {
            let mut busy = false;
            for lane in &mut lanes {
                if let Some((i, walk)) = lane {
                    busy = true;
                    if !self.grid.step(walk, self.layers) {
                        let hit = walk.hit(self.max_m);
                        best[*i] = hit.map_or(f64::INFINITY, |h| h.distance_m);
                        bits[*i] = hit.map_or(0, |h| h.layers);
                        *lane = start(best, bits);
                    }
                }
            }
            if !busy {
                return;
            }
        }
    }
}

/// Beams walked at once in [`FanCast::bundle`].
const WALK_LANES: usize = 4;

/// One beam's walk: its ray on the grid and its nearest hit so far.
struct Walk {
    ray: GridRay,
    origin: Vec2,
    dir: Vec2,
    /// The nearest hit so far (the range while there is none), m, as a
    /// fraction: dividing once at the end spares a division per hit.
    nearest: (f64, f64),
    /// Layers of the nearest hit; 0 while there is none.
    layers: u16,
}

impl Walk {
    fn new(grid: &SegmentGrid, origin: Vec2, dir: Vec2, from_m: f64, max_m: f64) -> Option<Walk> {
        let ray = GridRay::new(grid, origin, dir, from_m, max_m)?;
        Some(Walk { ray, origin, dir, nearest: (max_m, 1.0), layers: 0 })
    }

    fn hit(&self, max_m: f64) -> Option<Hit> {
        let distance_m = self.nearest.0 / self.nearest.1;
        (self.layers != 0 && distance_m <= max_m).then_some(Hit { distance_m, layers: self.layers })
    }
}

/// Beams per bundle in [`SegmentGrid::cast_fan`]: 4° of a typical laser.
const BUNDLE_BEAMS: usize = 16;

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
    /// [from_m, to_m]; None when nothing of it is on the grid.
    fn new(grid: &SegmentGrid, origin: Vec2, dir: Vec2, from_m: f64, to_m: f64) -> Option<GridRay> {
        let p = grid.to_cells(origin);
        let d = [dir[0] * grid.cells_per_m, dir[1] * grid.cells_per_m];
        let mut inv = [f64::INFINITY; 2];
        let size = [grid.cols as f64, grid.rows as f64];
        let (mut t_enter, mut t_leave) = (from_m, to_m);
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
    /// [`Free`]), each shrunk by `margin` cells on every side, the one the
    /// ray leaves farther along: the band, the axis through which the ray
    /// leaves it, and the distance at which it does, m. A cell holding
    /// segments is a band of itself.
    #[inline(always)]
    fn farthest_band(&self, free: Free, margin: i64) -> (Rect, usize, f64) {
        let half = i64::from(free.clearance.saturating_sub(1)) - margin;
        let [x, y] = self.cell;
        // The square's extent, and each band's along its own axis.
        let square = Rect { lo: [x - half, y - half], hi: [x + half, y + half] };
        let along = |axis: usize| {
            let reach = (i64::from(free.band_reach[2 * axis + usize::from(!self.forward[axis])]) - margin).max(half);
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

    #[test]
    fn fans_cast_in_wedges_agree_with_brute_force_beam_by_beam() {
        let mut seed = 9;
        let mut segments = Vec::new();
        for _ in 0..300 {
            let a = [lcg(&mut seed) * 40.0 - 20.0, lcg(&mut seed) * 40.0 - 20.0];
            let b = [a[0] + lcg(&mut seed) * 2.0 - 1.0, a[1] + lcg(&mut seed) * 2.0 - 1.0];
            segments.push((a, b, 1));
        }
        segments.push(([-20.0, -20.0], [20.0, -20.0], 1));
        segments.push(([-20.0, 20.0], [20.0, 20.0], 1));
        let grid = SegmentGrid::new(segments, 0.1);
        let beams = 541;
        let (mut best, mut bits) = (vec![0.0; beams], vec![0; beams]);
        for _ in 0..200 {
            // inside the walls, and outside the grid looking in
            let spread = if lcg(&mut seed) < 0.8 { 40.0 } else { 90.0 };
            let origin = [lcg(&mut seed) * spread - spread / 2.0, lcg(&mut seed) * spread - spread / 2.0];
            let (start, fov) = (lcg(&mut seed) * std::f64::consts::TAU, lcg(&mut seed) * 6.0);
            let dirs: Vec<Vec2> =
                (0..beams).map(|i| start + fov * i as f64 / (beams - 1) as f64).map(|a| [a.cos(), a.sin()]).collect();
            grid.cast_fan(origin, &dirs, 30.0, 1, &mut best, &mut bits);
            for (i, &dir) in dirs.iter().enumerate() {
                let slow = grid.cast_brute_force(origin, dir, 30.0, 1).map_or(f64::INFINITY, |h| h.distance_m);
                assert!(best[i] == slow || (best[i] - slow).abs() < 1e-9, "{origin:?} beam {i}: {} vs {slow}", best[i]);
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
        let (mut best, mut bits) = (vec![0.0; beams], vec![0; beams]);
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
            let dirs: Vec<Vec2> = (0..beams)
                .map(|i| start + 1.5 * std::f64::consts::PI * i as f64 / (beams - 1) as f64)
                .map(|a| [a.cos(), a.sin()])
                .collect();
            grid.cast_fan(origin, &dirs, 25.0, 1, &mut best, &mut bits);
            for (i, &dir) in dirs.iter().enumerate() {
                let slow = grid.cast_brute_force(origin, dir, 25.0, 1).map_or(f64::INFINITY, |h| h.distance_m);
                assert!(best[i] == slow || (best[i] - slow).abs() < 1e-9, "{origin:?} beam {i}: {} vs {slow}", best[i]);
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
        // from outside the grid, towards it and away from it
        assert_eq!(grid.cast([-30.0, 1.0], [1.0, 0.0], 40.0, 1).unwrap().distance_m, 30.0);
        assert!(grid.cast([-30.0, 1.0], [-1.0, 0.0], 40.0, 1).is_none());
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
