//! Whole scans at once: instead of walking the grid once per beam, walk it
//! once per scan in rings around the laser, nearest first, and drop every
//! segment into the angular bins (beams) it spans. Each beam still gets the
//! exact ray–segment intersection, so ranges equal the per-beam cast's; the
//! saving is that a segment is visited once per scan instead of once per beam
//! near it, and the walk stops as soon as every beam has hit something closer
//! than the next ring.
//!
//! Status: exact (tests compare it with parry2d's BVH cast and the naive cast
//! beam by beam) but not yet used by the laser: on maps where many beams see
//! nothing within range — the conestogo office's 40 m hall — no ring can be
//! closed early, every segment within range gets rasterised, and it is slower
//! than the per-beam grid walk (figures in BENCHMARKS.md). Culling occluded
//! and out-of-view cells per angular sector is the next step.

use std::f64::consts::{PI, TAU};

use super::{ray_segment, SegmentGrid, Shape, Vec2};

/// `atan2` to within 2e-5 rad (polynomial), a few times faster than libm's.
/// Only used to find which beams a segment can touch, with a one-beam margin.
#[inline]
pub fn fast_atan2(y: f64, x: f64) -> f64 {
    let (ax, ay) = (x.abs(), y.abs());
    if ax == 0.0 && ay == 0.0 {
        return 0.0;
    }
    let (num, den, swap) = if ay > ax { (ax, ay, true) } else { (ay, ax, false) };
    let t = num / den;
    let t2 = t * t;
    // minimax polynomial for atan on [0, 1]
    let mut r = t * (0.999_866_0 + t2 * (-0.330_299_5 + t2 * (0.180_141_0 + t2 * (-0.085_133_0 + t2 * 0.020_835_1))));
    if swap {
        r = PI / 2.0 - r;
    }
    if x < 0.0 {
        r = PI - r;
    }
    if y < 0.0 {
        -r
    } else {
        r
    }
}

/// A fan of beams in the world frame: beam `i` points at
/// `start_rad + i · increment_rad`, with its unit direction in `dirs[i]`.
#[derive(Debug, Clone, Copy)]
pub struct Fan<'a> {
    /// Ray origin, m.
    pub origin: Vec2,
    /// World angle of beam 0, rad.
    pub start_rad: f64,
    /// Signed angle between beams, rad (non-zero).
    pub increment_rad: f64,
    /// Unit direction of every beam.
    pub dirs: &'a [Vec2],
    /// Maximum range, m.
    pub range_m: f64,
    /// Layers seen.
    pub layers: u16,
}

impl Fan<'_> {
    /// Calls `visit(i)` for every beam whose angle may lie in the arc from
    /// world angle `from` counter-clockwise by `width` (≤ π), with one beam of
    /// margin on each side.
    #[inline]
    fn beams_in_arc(&self, from: f64, width: f64, mut visit: impl FnMut(usize)) {
        let n = self.dirs.len();
        let step = self.increment_rad.abs();
        // Offsets from beam 0 in the direction the beams advance.
        let (lo, hi) = if self.increment_rad > 0.0 {
            let lo = (from - self.start_rad).rem_euclid(TAU);
            (lo, lo + width)
        } else {
            let hi = (self.start_rad - from).rem_euclid(TAU);
            (hi - width, hi)
        };
        // A fan may span more than a turn (or start past it): try each turn.
        let turns = ((n as f64 * step) / TAU).ceil() as i64 + 1;
        for k in -1..turns {
            let shift = k as f64 * TAU;
            let first = ((lo + shift) / step).ceil() as i64 - 1;
            let last = ((hi + shift) / step).floor() as i64 + 1;
            let first = first.max(0);
            let last = last.min(n as i64 - 1);
            for i in first..=last {
                visit(i as usize);
            }
        }
    }
}

/// Per-scan working memory, kept between scans so that a scan allocates nothing.
#[derive(Debug, Default, Clone)]
pub struct ScanBuffers {
    /// Distance of each beam's nearest hit (∞ when none), m.
    pub best: Vec<f64>,
    /// Layer bits of each beam's nearest hit.
    pub bits: Vec<u16>,
    visited: Vec<u32>,
    stamp: u32,
}

impl ScanBuffers {
    /// Every beam of a fan of `beams` back to "no hit yet", for callers that
    /// fill the wall hits themselves before [`scan_shapes`].
    pub fn clear_beams(&mut self, beams: usize) {
        self.best.clear();
        self.best.resize(beams, f64::INFINITY);
        self.bits.clear();
        self.bits.resize(beams, 0);
    }

    fn reset(&mut self, beams: usize, segments: usize) {
        self.best.clear();
        self.best.resize(beams, f64::INFINITY);
        self.bits.clear();
        self.bits.resize(beams, 0);
        if self.visited.len() != segments {
            self.visited = vec![0; segments];
            self.stamp = 0;
        }
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.visited.iter_mut().for_each(|v| *v = 0);
            self.stamp = 1;
        }
    }
}

impl SegmentGrid {
    /// Casts a whole fan against the walls into `buffers`.
    pub fn scan(&self, fan: &Fan, buffers: &mut ScanBuffers) {
        buffers.reset(fan.dirs.len(), self.segments.len());
        if self.segments.is_empty() || fan.dirs.is_empty() {
            return;
        }
        let o = fan.origin;
        let cx = ((o[0] - self.origin[0]) / self.cell_m).floor() as i64;
        let cy = ((o[1] - self.origin[1]) / self.cell_m).floor() as i64;
        let (cols, rows) = (self.cols as i64, self.rows as i64);
        // Beyond this ring no cell of the grid is left.
        let last_ring = [cx, cols - 1 - cx, cy, rows - 1 - cy].into_iter().map(i64::abs).max().unwrap_or(0)
            + (cx.min(cy).min(0)).abs()
            + (cx - cols + 1).max(0)
            + (cy - rows + 1).max(0);
        let max_ring = ((fan.range_m / self.cell_m).ceil() as i64 + 1).min(last_ring.max(0));
        let stamp = buffers.stamp;
        for r in 0..=max_ring {
            let mut cell = |x: i64, y: i64| {
                if x < 0 || y < 0 || x >= cols || y >= rows {
                    return;
                }
                let c = (y * cols + x) as usize;
                let (s, e) = (self.cell_start[c] as usize, self.cell_start[c + 1] as usize);
                for &item in &self.cell_items[s..e] {
                    let item = item as usize;
                    if buffers.visited[item] == stamp {
                        continue;
                    }
                    buffers.visited[item] = stamp;
                    let (a, b, bits) = self.segments[item];
                    if bits & fan.layers != 0 {
                        self.rasterise(fan, a, b, bits, &mut buffers.best, &mut buffers.bits);
                    }
                }
            };
            if r == 0 {
                cell(cx, cy);
            } else {
                for x in cx - r..=cx + r {
                    cell(x, cy - r);
                    cell(x, cy + r);
                }
                for y in cy - r + 1..=cy + r - 1 {
                    cell(cx - r, y);
                    cell(cx + r, y);
                }
            }
            // Everything in later rings is at least r cells away.
            let reach = r as f64 * self.cell_m;
            if reach >= fan.range_m || buffers.best.iter().all(|&d| d <= reach) {
                break;
            }
        }
    }

    #[inline]
    fn rasterise(&self, fan: &Fan, a: Vec2, b: Vec2, bits: u16, best: &mut [f64], hit_bits: &mut [u16]) {
        let o = fan.origin;
        let (ang_a, ang_b) = (fast_atan2(a[1] - o[1], a[0] - o[0]), fast_atan2(b[1] - o[1], b[0] - o[0]));
        // The segment subtends less than half a turn: take the short arc.
        let mut width = (ang_b - ang_a).rem_euclid(TAU);
        let mut from = ang_a;
        if width > PI {
            width = TAU - width;
            from = ang_b;
        }
        fan.beams_in_arc(from, width, |i| {
            let limit = best[i].min(fan.range_m);
            if let Some(t) = ray_segment(o, fan.dirs[i], a, b, limit) {
                if t < best[i] {
                    best[i] = t;
                    hit_bits[i] = bits;
                }
            }
        });
    }
}

/// Casts a fan against body footprints (after the walls), beam by beam only
/// where each shape can be.
pub fn scan_shapes(fan: &Fan, shapes: &[(Shape, u16)], buffers: &mut ScanBuffers) {
    let o = fan.origin;
    for (shape, bits) in shapes {
        if bits & fan.layers == 0 {
            continue;
        }
        let (from, width) = match shape {
            Shape::Circle { center, radius } => {
                let d = (center[0] - o[0]).hypot(center[1] - o[1]);
                if d <= *radius || d - radius > fan.range_m {
                    continue; // inside (never seen, as Box2D) or out of range
                }
                let half = (radius / d).asin();
                (fast_atan2(center[1] - o[1], center[0] - o[0]) - half, 2.0 * half)
            }
            Shape::Polygon(polygon) => {
                let v = polygon.vertices();
                let centre = v.iter().fold([0.0, 0.0], |acc, p| [acc[0] + p[0], acc[1] + p[1]]);
                let centre = [centre[0] / v.len() as f64, centre[1] / v.len() as f64];
                let towards = fast_atan2(centre[1] - o[1], centre[0] - o[0]);
                let (mut lo, mut hi) = (0.0f64, 0.0f64);
                for p in v {
                    let d = (fast_atan2(p[1] - o[1], p[0] - o[0]) - towards + PI).rem_euclid(TAU) - PI;
                    lo = lo.min(d);
                    hi = hi.max(d);
                }
                if hi - lo >= PI {
                    continue; // the laser is inside: never seen, as Box2D
                }
                (towards + lo, hi - lo)
            }
        };
        fan.beams_in_arc(from, width, |i| {
            let limit = buffers.best[i].min(fan.range_m);
            if let Some(t) = shape.ray(o, fan.dirs[i], limit) {
                if t < buffers.best[i] {
                    buffers.best[i] = t;
                    buffers.bits[i] = *bits;
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_atan2_is_within_2e5_everywhere() {
        for k in 0..100_000 {
            let a = k as f64 / 100_000.0 * TAU - PI;
            for r in [1e-3, 1.0, 37.0] {
                let (y, x) = (r * a.sin(), r * a.cos());
                let err = (fast_atan2(y, x) - y.atan2(x) + PI).rem_euclid(TAU) - PI;
                assert!(err.abs() < 2e-5, "{a}: {err}");
            }
        }
    }

    #[test]
    fn arcs_map_to_the_right_beams_both_ways_round() {
        let dirs = vec![[1.0, 0.0]; 9]; // directions unused here
        let fan = Fan { origin: [0.0, 0.0], start_rad: 0.0, increment_rad: 0.25, dirs: &dirs, range_m: 1.0, layers: 1 };
        let mut seen = vec![];
        fan.beams_in_arc(0.6, 0.3, |i| seen.push(i));
        assert_eq!(seen, [2, 3, 4], "beams at 0.5, 0.75, 1.0 with a margin");
        let cw = Fan { start_rad: 2.0, increment_rad: -0.25, ..fan };
        let mut seen = vec![];
        cw.beams_in_arc(1.45, 0.1, |i| seen.push(i));
        assert_eq!(seen, [1, 2, 3], "clockwise beams at 1.75, 1.5, 1.25");
    }
}
