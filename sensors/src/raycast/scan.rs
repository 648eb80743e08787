//! Whole scans: a fan of beams from one origin, and the footprints of other
//! bodies cast arc by arc into it (each shape tested only against the beams
//! of the arc it covers).

use std::f64::consts::{PI, TAU};

use super::{ConvexPolygon, Shape, SweepWork, Vec2};

/// `atan2` to within 2e-5 rad (polynomial), a few times faster than libm's.
/// Only used to find which beams a segment can touch, with a one-beam margin.
#[inline(always)]
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
    /// The runs of beams `first..=last` whose angles may lie in the arc
    /// from world angle `from` counter-clockwise by `width` (≤ π), with
    /// one beam of margin on each side: one run, or one for each turn of a
    /// fan spanning more than one. An iterator rather than a callback, so
    /// that the caller's loop body stays in the caller (a closure is a
    /// function of its own, which would not be compiled for AVX2 with it).
    #[inline(always)]
    fn beam_runs_in_arc(&self, from: f64, width: f64) -> BeamRuns {
        let n = self.dirs.len();
        let step = self.increment_rad.abs();
        // Offsets from beam 0 in the direction the beams advance.
        let (lo, hi) = if self.increment_rad > 0.0 {
            let lo = wrap_turn(from - self.start_rad);
            (lo, lo + width)
        } else {
            let hi = wrap_turn(self.start_rad - from);
            (hi - width, hi)
        };
        // A fan may span more than a turn (or start past it): the arc
        // shifted by whole turns may meet it more than once. Only the
        // turns that can reach a beam are tried (with a beam and more of
        // slack beyond the margin): those where hi + turn·2π ≥ −2·step and
        // lo + turn·2π ≤ span + step. For a laser's fan, mostly one.
        let span = n as f64 * step;
        // (Bounded by the turns the fan spans, so that no input, however
        // far off, makes the loop long.)
        let first_turn = (((-2.0 * step - hi) * (1.0 / TAU)).ceil() as i64).max(-1);
        let last_turn = (((span + step - lo) * (1.0 / TAU)).floor() as i64).min((span / TAU).ceil() as i64);
        BeamRuns { turn: first_turn, last_turn, lo, hi, step, beams: n }
    }
}

/// `angle` brought into [0, 2π] (give or take a rounding), rad: what
/// `rem_euclid(TAU)` gives, without its call to `fmod`. Exact enough for
/// finding beams with a beam of margin, and every turn is tried anyway.
#[inline(always)]
fn wrap_turn(angle: f64) -> f64 {
    angle - TAU * (angle * (1.0 / TAU)).floor()
}

/// The runs of [`Fan::beam_runs_in_arc`], one turn of the fan at a time.
struct BeamRuns {
    /// The next turn to try, and the last.
    turn: i64,
    last_turn: i64,
    /// The arc's ends as offsets from beam 0, rad.
    lo: f64,
    hi: f64,
    /// Angle between beams, rad (> 0).
    step: f64,
    /// The fan's beams.
    beams: usize,
}

impl Iterator for BeamRuns {
    type Item = (usize, usize);

    #[inline(always)]
    fn next(&mut self) -> Option<(usize, usize)> {
        while self.turn <= self.last_turn {
            let shift = self.turn as f64 * TAU;
            self.turn += 1;
            let (lo, hi, step) = (self.lo + shift, self.hi + shift, self.step);
            let first = ((lo / step).ceil() as i64 - 1).max(0);
            let last = ((hi / step).floor() as i64 + 1).min(self.beams as i64 - 1);
            if first <= last {
                return Some((first as usize, last as usize));
            }
        }
        None
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
    /// Polygons of earlier scans, whose storage the next placements reuse.
    spare_polygons: Vec<ConvexPolygon>,
}

impl ScanBuffers {
    /// Empties the footprints, keeping the polygons' storage for
    /// [`ScanBuffers::spare_polygon`].
    pub fn clear_footprints(&mut self) {
        for (shape, _) in self.footprints.drain(..) {
            if let Shape::Polygon(polygon) = shape {
                self.spare_polygons.push(polygon);
            }
        }
    }

    /// A polygon to place a footprint into: one of an earlier scan when
    /// there is one, so that a scan allocates nothing once warmed up.
    pub fn spare_polygon(&mut self) -> ConvexPolygon {
        self.spare_polygons.pop().unwrap_or_default()
    }

    /// Room for the hits of a fan of `beams`, whatever they hold: for a
    /// caller that writes every beam before reading any (the sweep through
    /// the walls does), which need not clear them first. Beams added are
    /// "no hit yet", so on fresh buffers every beam is.
    pub fn size_beams(&mut self, beams: usize) {
        self.best.resize(beams, f64::INFINITY);
        self.bits.resize(beams, 0);
    }
}

/// Casts a fan against the footprints in `buffers` (after the walls), beam
/// by beam only where each shape can be.
pub fn scan_shapes(fan: &Fan, buffers: &mut ScanBuffers) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        #[allow(unsafe_code, reason = "a call to code compiled for AVX2, on a CPU checked to have it")]
        unsafe {
            return scan_shapes_avx2(fan, buffers);
        }
    }
    scan_shapes_portable(fan, buffers);
}

/// [`scan_shapes`] compiled for AVX2: four beams a vector instruction in a
/// robot's arc, and the roundings of the arc's ends (`floor`, `ceil`) as
/// instructions rather than calls. Bit for bit the portable results: no
/// `mul_add` is written, so none is fused.
///
/// # Safety
/// Only for CPUs with AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(unsafe_code, reason = "target features need an unsafe fn before Rust 1.86")]
unsafe fn scan_shapes_avx2(fan: &Fan, buffers: &mut ScanBuffers) {
    scan_shapes_portable(fan, buffers);
}

/// [`scan_shapes`] for any CPU: inlined, with all it calls in its loops,
/// into the AVX2 copy too.
#[inline(always)]
fn scan_shapes_portable(fan: &Fan, buffers: &mut ScanBuffers) {
    let o = fan.origin;
    let ScanBuffers { footprints, best, bits: hit_bits, .. } = buffers;
    for (shape, bits) in footprints.iter() {
        if bits & fan.layers == 0 {
            continue;
        }
        // The arc the shape covers, and how near the origin any of it is
        // (m, a lower bound).
        let (from, width, near_m) = match shape {
            Shape::Circle { center, radius } => {
                // sqrt rather than hypot (several times slower): no overflow
                // at map scale, and the arc has a beam of margin.
                let (dx, dy) = (center[0] - o[0], center[1] - o[1]);
                let d = (dx * dx + dy * dy).sqrt();
                if d <= *radius || d - radius > fan.range_m {
                    continue; // inside (never seen, as Box2D) or out of range
                }
                // Half the arc the circle subtends is asin(r/d); its upper
                // bound tan(asin(r/d)), capped at a quarter turn, needs no
                // call to libm, and a wider arc only tests a few more beams.
                let sin_half = radius / d;
                let half = (sin_half / (1.0 - sin_half * sin_half).sqrt()).min(PI / 2.0);
                (fast_atan2(dy, dx) - half, 2.0 * half, d - radius)
            }
            Shape::Polygon(polygon) => {
                let v = polygon.vertices();
                let centre = v.iter().fold([0.0, 0.0], |acc, p| [acc[0] + p[0], acc[1] + p[1]]);
                let centre = [centre[0] / v.len() as f64, centre[1] / v.len() as f64];
                // Within the circle around the centre through the farthest vertex.
                let reach_sq =
                    v.iter().map(|p| (p[0] - centre[0]).powi(2) + (p[1] - centre[1]).powi(2)).fold(0.0, f64::max);
                let near_m = (centre[0] - o[0]).hypot(centre[1] - o[1]) - reach_sq.sqrt();
                if near_m > fan.range_m {
                    continue;
                }
                let towards = fast_atan2(centre[1] - o[1], centre[0] - o[0]);
                let (mut lo, mut hi) = (0.0f64, 0.0f64);
                for p in v {
                    let d = wrap_turn(fast_atan2(p[1] - o[1], p[0] - o[0]) - towards + PI) - PI;
                    lo = lo.min(d);
                    hi = hi.max(d);
                }
                if hi - lo >= PI {
                    continue; // the laser is inside: never seen, as Box2D
                }
                (towards + lo, hi - lo, near_m)
            }
        };
        // Slack for rounding in `near_m`, far below any distance that
        // matters; a beam whose wall is nearer than the shape is not tested.
        let near_m = near_m - 1e-9 * (1.0 + near_m.abs());
        for (first, last) in fan.beam_runs_in_arc(from, width) {
            // A run every beam of which already hit nearer: nothing to test.
            if best[first..=last].iter().all(|&b| b <= near_m) {
                continue;
            }
            let (dirs, best, hit_bits) =
                (&fan.dirs[first..=last], &mut best[first..=last], &mut hit_bits[first..=last]);
            match shape {
                Shape::Circle { center, radius } => {
                    circle_run(*center, *radius, o, fan.range_m, *bits, dirs, best, hit_bits)
                }
                Shape::Polygon(polygon) => {
                    for ((dir, best), hit_bits) in dirs.iter().zip(best).zip(hit_bits) {
                        if *best <= near_m {
                            continue;
                        }
                        if let Some(t) = polygon.ray(o, *dir, best.min(fan.range_m)) {
                            if t < *best {
                                *best = t;
                                *hit_bits = *bits;
                            }
                        }
                    }
                }
            }
        }
    }
}

/// [`circle_ray`](super::shapes::circle_ray) for a run of beams from `origin` (outside the circle),
/// keeping in `best` and `hit_bits` the hits nearer than theirs and within
/// `range_m`. The same arithmetic as a lone ray, the outcome chosen by
/// masks rather than branches, so that the compiler runs several beams at
/// a time: which beams of a robot's arc meet it is anyone's guess.
#[allow(clippy::too_many_arguments, reason = "the inner loop's inputs, kept apart to stay in registers")]
#[inline(always)]
fn circle_run(
    center: Vec2,
    radius: f64,
    origin: Vec2,
    range_m: f64,
    bits: u16,
    dirs: &[Vec2],
    best: &mut [f64],
    hit_bits: &mut [u16],
) {
    let s = [origin[0] - center[0], origin[1] - center[1]];
    let c = s[0] * s[0] + s[1] * s[1] - radius * radius;
    for ((dir, best), hit_bits) in dirs.iter().zip(best).zip(hit_bits) {
        let b = s[0] * dir[0] + s[1] * dir[1];
        let disc = b * b - c;
        let t = -b - disc.max(0.0).sqrt();
        let limit = best.min(range_m);
        let hit = (c >= 0.0) & (b <= 0.0) & (disc >= 0.0) & (t >= 0.0) & (t <= limit) & (t < *best);
        *best = if hit { t } else { *best };
        *hit_bits = if hit { bits } else { *hit_bits };
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

    /// The ranges of a 61-beam fan along +x (±30°) after walls at
    /// `wall_m` on every beam, with `footprints` in front of or behind them.
    fn ranges_with(wall_m: f64, footprints: Vec<(Shape, u16)>) -> Vec<f64> {
        let dirs: Vec<Vec2> = (0..61).map(|i| f64::from(i - 30).to_radians()).map(|a| [a.cos(), a.sin()]).collect();
        let fan = Fan {
            origin: [0.0, 0.0],
            start_rad: -30f64.to_radians(),
            increment_rad: 1f64.to_radians(),
            dirs: &dirs,
            range_m: 10.0,
            layers: 1,
        };
        let mut buffers = ScanBuffers { footprints, ..Default::default() };
        buffers.size_beams(61);
        buffers.best.fill(wall_m);
        scan_shapes(&fan, &mut buffers);
        buffers.best
    }

    #[test]
    fn footprints_just_before_a_wall_are_seen_and_those_behind_it_are_not() {
        // A robot whose near side is 0.25 m before the wall, its far side
        // 0.05 m before it: seen on the beam straight at it.
        let circle = Shape::Circle { center: [4.65, 0.0], radius: 0.1 };
        let square = [[4.55, -0.1], [4.75, -0.1], [4.75, 0.1], [4.55, 0.1]];
        let square = Shape::Polygon(super::super::ConvexPolygon::hull(&square).unwrap());
        for shape in [circle, square] {
            let ranges = ranges_with(4.8, vec![(shape.clone(), 1)]);
            assert!((ranges[30] - 4.55).abs() < 1e-12, "{shape:?}: {}", ranges[30]);
            assert_eq!(ranges[0], 4.8, "{shape:?}: beams that miss it keep the wall");
        }
        // Behind the wall: nothing changes.
        let behind = Shape::Circle { center: [5.5, 0.0], radius: 0.3 };
        assert!(ranges_with(4.8, vec![(behind, 1)]).iter().all(|&r| r == 4.8));
    }

    /// Robots' circles and boxes scattered around random origins, with
    /// walls at random ranges on the beams already: fans as a laser casts
    /// them, each with its directions.
    fn random_scans(mut visit: impl FnMut(&Fan, &ScanBuffers)) {
        let mut seed = 0xfee7_u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        let beams = 1081;
        for k in 0..200 {
            let origin = [next() * 10.0, next() * 10.0];
            let (start_rad, increment_rad) = (next() * TAU - PI, 1.5 * PI / (beams - 1) as f64);
            let dirs: Vec<Vec2> =
                (0..beams).map(|i| start_rad + i as f64 * increment_rad).map(|a| [a.cos(), a.sin()]).collect();
            let fan = Fan { origin, start_rad, increment_rad, dirs: &dirs, range_m: 8.0, layers: 3 };
            let mut buffers = ScanBuffers::default();
            buffers.size_beams(beams);
            for (best, bits) in buffers.best.iter_mut().zip(&mut buffers.bits) {
                if next() < 0.8 {
                    (*best, *bits) = (next() * 12.0, 4);
                }
            }
            for _ in 0..40 {
                let (center, size) = ([next() * 14.0 - 2.0, next() * 14.0 - 2.0], 0.05 + next() * 0.5);
                let shape = if k % 4 == 0 {
                    let corners = [[0.0, 0.0], [size, 0.0], [size, size], [0.0, size]]
                        .map(|[x, y]| [center[0] + x, center[1] + y]);
                    Shape::Polygon(super::super::ConvexPolygon::hull(&corners).unwrap())
                } else {
                    Shape::Circle { center, radius: size }
                };
                buffers.footprints.push((shape, 1 + (next() * 2.0) as u16));
            }
            visit(&fan, &buffers);
        }
    }

    #[test]
    fn footprints_give_the_ranges_of_lone_rays_at_every_beam() {
        random_scans(|fan, buffers| {
            let mut scanned = buffers.clone();
            scan_shapes(fan, &mut scanned);
            // The reference: each beam against each shape, nearer hits kept.
            let (mut best, mut bits) = (buffers.best.clone(), buffers.bits.clone());
            for (shape, layers) in &buffers.footprints {
                for (i, dir) in fan.dirs.iter().enumerate() {
                    if let Some(t) = shape.ray(fan.origin, *dir, best[i].min(fan.range_m)) {
                        if t < best[i] {
                            (best[i], bits[i]) = (t, *layers);
                        }
                    }
                }
            }
            let to_bits = |v: &[f64]| v.iter().map(|d| d.to_bits()).collect::<Vec<_>>();
            assert_eq!(to_bits(&scanned.best), to_bits(&best), "ranges from {:?}", fan.origin);
            assert_eq!(scanned.bits, bits, "layers from {:?}", fan.origin);
            assert!(bits.contains(&1) || bits.contains(&2), "a footprint is seen from {:?}", fan.origin);
        });
    }

    #[test]
    fn the_avx2_copy_gives_the_portable_ranges_bit_for_bit() {
        // (Without AVX2, `scan_shapes` runs the portable code itself.)
        random_scans(|fan, buffers| {
            let (mut dispatched, mut portable) = (buffers.clone(), buffers.clone());
            scan_shapes(fan, &mut dispatched);
            scan_shapes_portable(fan, &mut portable);
            let to_bits = |v: &[f64]| v.iter().map(|d| d.to_bits()).collect::<Vec<_>>();
            assert_eq!(to_bits(&dispatched.best), to_bits(&portable.best), "ranges from {:?}", fan.origin);
            assert_eq!(dispatched.bits, portable.bits, "layers from {:?}", fan.origin);
        });
    }

    #[test]
    fn arcs_map_to_the_right_beams_both_ways_round() {
        let dirs = vec![[1.0, 0.0]; 9]; // directions unused here
        let fan = Fan { origin: [0.0, 0.0], start_rad: 0.0, increment_rad: 0.25, dirs: &dirs, range_m: 1.0, layers: 1 };
        let mut seen = vec![];
        seen.extend(fan.beam_runs_in_arc(0.6, 0.3).flat_map(|(first, last)| first..=last));
        assert_eq!(seen, [2, 3, 4], "beams at 0.5, 0.75, 1.0 with a margin");
        let cw = Fan { start_rad: 2.0, increment_rad: -0.25, ..fan };
        let mut seen = vec![];
        seen.extend(cw.beam_runs_in_arc(1.45, 0.1).flat_map(|(first, last)| first..=last));
        assert_eq!(seen, [1, 2, 3], "clockwise beams at 1.75, 1.5, 1.25");
    }

    #[test]
    fn arcs_across_the_start_of_a_turn_and_fans_of_more_than_a_turn_find_every_run() {
        let dirs = vec![[1.0, 0.0]; 30]; // directions unused here
        let runs = |beams: usize, from: f64, width: f64| {
            let fan = Fan {
                origin: [0.0; 2],
                start_rad: 0.0,
                increment_rad: 0.25,
                dirs: &dirs[..beams],
                range_m: 1.0,
                layers: 1,
            };
            fan.beam_runs_in_arc(from, width).collect::<Vec<_>>()
        };
        // From −0.1 to 0.1 rad: the arc wraps to 6.18 rad, a turn behind beam 0.
        assert_eq!(runs(9, -0.1, 0.2), [(0, 1)]);
        // Beams every 0.25 rad over 7.5 rad: the arc at 0.05–0.15 rad is met
        // by beams 0 and 1, and a turn later by beams 25 and 26.
        assert_eq!(runs(30, 0.05, 0.1), [(0, 1), (25, 26)]);
        // Far outside a short fan: no run.
        assert_eq!(runs(9, 4.0, 0.1), []);
    }
}
