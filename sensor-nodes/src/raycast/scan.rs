//! Whole scans: a fan of beams from one origin, and the footprints of other
//! bodies cast arc by arc into it (each shape tested only against the beams
//! of the arc it covers).

use std::f64::consts::{PI, TAU};

use super::{Shape, SweepWork, Vec2};

/// `atan2` to within 2e-5 rad (polynomial), a few times faster than libm's.
/// Only used to find which beams a segment can touch, with a one-beam margin.
#[inline]
pub fn fast_atan2(y: f64, x: f64) -> f64 {
    // Written as selects rather than branches: the quadrant of a wall end
    // seen from a laser is anyone's guess, so branches would be mispredicted.
    let (ax, ay) = (x.abs(), y.abs());
    let swap = ay > ax;
    let (num, den) = if swap { (ax, ay) } else { (ay, ax) };
    let t = if den == 0.0 { 0.0 } else { num / den };
    let t2 = t * t;
    // minimax polynomial for atan on [0, 1]
    let r = t * (0.999_866_0 + t2 * (-0.330_299_5 + t2 * (0.180_141_0 + t2 * (-0.085_133_0 + t2 * 0.020_835_1))));
    let r = if swap { PI / 2.0 - r } else { r };
    let r = if x < 0.0 { PI - r } else { r };
    let r = if y < 0.0 { -r } else { r };
    if den == 0.0 {
        0.0
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

/// Per-scan working memory, kept between scans so that a scan allocates
/// nothing; one per laser, so that lasers can scan one scene in parallel.
#[derive(Debug, Default, Clone)]
pub struct ScanBuffers {
    /// The body footprints that may be in range of the scan, placed in the
    /// world, with their layers (see `Scene::prepare`).
    pub footprints: Vec<(Shape, u16)>,
    /// Distance of each beam's nearest hit (∞ when none), m.
    pub best: Vec<f64>,
    /// Layer bits of each beam's nearest hit.
    pub bits: Vec<u16>,
    /// Working memory of the sweep through the walls.
    pub sweep: SweepWork,
}

impl ScanBuffers {
    /// Every beam of a fan of `beams` back to "no hit yet".
    pub fn clear_beams(&mut self, beams: usize) {
        self.best.clear();
        self.best.resize(beams, f64::INFINITY);
        self.bits.clear();
        self.bits.resize(beams, 0);
    }
}

/// Casts a fan against the footprints in `buffers` (after the walls), beam
/// by beam only where each shape can be.
pub fn scan_shapes(fan: &Fan, buffers: &mut ScanBuffers) {
    let o = fan.origin;
    let ScanBuffers { footprints, best, bits: hit_bits, .. } = buffers;
    for (shape, bits) in footprints.iter() {
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
            let limit = best[i].min(fan.range_m);
            if let Some(t) = shape.ray(o, fan.dirs[i], limit) {
                if t < best[i] {
                    best[i] = t;
                    hit_bits[i] = *bits;
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
