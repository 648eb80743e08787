//! Whole fans against the walls at once, nearest blocks first.
//!
//! The walls are bucketed into square blocks. A scan visits the blocks
//! around its origin in order of distance and, for each wall segment of a
//! block, tests only the beams whose angles the segment subtends, found from
//! the angles of its end points (computed once per end point a block's
//! segments share) instead of by walking beam by beam. The beams' nearest
//! hits so far act as a depth buffer: a block all of whose beams already hit
//! something nearer than the block is skipped whole. In a building the walls
//! around the laser close nearly every beam within a few metres, so most
//! blocks farther out cost a few operations each.
//!
//! Walls seen from behind (from their solid side) are skipped where the
//! origin is in free space; a block keeps its walls grouped by the side
//! their obstacle is on, so that from beyond the block a whole group is
//! skipped at once.
//!
//! Every beam is tested with the arithmetic of a lone ray
//! ([`super::ray_edge_fraction`]) against every segment that can be nearer
//! than its hit, so the ranges are those of a test of every segment.

use std::collections::HashMap;
use std::f64::consts::PI;

use super::beam_arcs::BeamArcs;
use super::segments::{bucket_into_cells, Segment};
use super::{bounding_box, end_slack, Fan, Vec2};

/// Segments bucketed into square blocks, for sweeping fans (see the module
/// docs).
#[derive(Debug, Clone)]
pub struct FanSweep {
    /// Corner of block (0, 0), m.
    origin: Vec2,
    block_m: f64,
    blocks_per_m: f64,
    cols: usize,
    rows: usize,
    /// The segments of block `i` are `segments[segment_start[i]..segment_start[i + 1]]`.
    segment_start: Vec<u32>,
    /// Copies of the segments in block order (a segment crossing k blocks
    /// is stored k times).
    segments: Vec<BlockSegment>,
    /// The end points of block `i`'s segments, each once, are
    /// `ends[end_start[i]..end_start[i + 1]]`.
    end_start: Vec<u32>,
    ends: Vec<Vec2>,
    /// Each block's segments are in the order of [`Facing`]; these are
    /// where its groups after the first start (the first starts with the
    /// block, the last ends with it).
    group_start: Vec<[u32; 4]>,
    /// For each block and each of its axis-aligned groups, the layers in
    /// which every segment of the group is solid on the group's side.
    group_solid: Vec<[u16; 4]>,
}

/// Which way a segment's solid side faces, for whole groups of a block to
/// be skipped at once when the origin is beyond the block on that side.
/// The walls of map images are all axis-aligned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Facing {
    /// Along y, solid towards +x only.
    PlusX,
    /// Along y, solid towards −x only.
    MinusX,
    /// Along x, solid towards +y only.
    PlusY,
    /// Along x, solid towards −y only.
    MinusY,
    /// Any other segment, checked one by one.
    Other,
}

impl Facing {
    /// The segment's facing, and the layers in which it is solid on that
    /// side.
    fn of(segment: &Segment) -> (Facing, u16) {
        let (left, right) = (segment.solid_left, segment.solid_right);
        let [dx, dy] = segment.edge;
        // Walking along +y the left is −x; along +x the left is +y.
        let (facing, solid) = match (dx == 0.0, dy == 0.0) {
            (true, false) if dy > 0.0 => ((Facing::MinusX, left), (Facing::PlusX, right)),
            (true, false) => ((Facing::PlusX, left), (Facing::MinusX, right)),
            (false, true) if dx > 0.0 => ((Facing::PlusY, left), (Facing::MinusY, right)),
            (false, true) => ((Facing::MinusY, left), (Facing::PlusY, right)),
            _ => return (Facing::Other, 0),
        };
        match (facing.1 != 0, solid.1 != 0) {
            (true, false) => facing,
            (false, true) => solid,
            _ => (Facing::Other, 0),
        }
    }
}

/// A segment in a block, with its end points' places in the block's list
/// of end points (u32: a block of a finely drawn map can hold more than
/// 65 536 end points, and the record is 48 bytes with u16 places too).
#[derive(Debug, Clone, Copy)]
struct BlockSegment {
    segment: Segment,
    ends: [u32; 2],
}

impl FanSweep {
    /// Buckets `segments` into blocks of `block_m` metres (larger when the
    /// map would need more than 2^12 blocks along a side).
    pub(super) fn new(segments: &[Segment], block_m: f64) -> FanSweep {
        let (lo, hi) = bounding_box(segments.iter().flat_map(|s| [s.a, s.b()])).unwrap_or(([0.0; 2], [0.0; 2]));
        const MAX_BLOCKS_PER_SIDE: f64 = (1 << 12) as f64;
        let block_m = block_m.max(1e-3).max((hi[0] - lo[0]).max(hi[1] - lo[1]) / (MAX_BLOCKS_PER_SIDE - 4.0));
        let origin = [lo[0] - 0.5 * block_m, lo[1] - 0.5 * block_m];
        let cols = ((hi[0] - origin[0]) / block_m).ceil() as usize + 1;
        let rows = ((hi[1] - origin[1]) / block_m).ceil() as usize + 1;
        let (segment_start, members) = bucket_into_cells(segments, origin, block_m, cols, rows);
        let mut sweep = FanSweep {
            origin,
            block_m,
            blocks_per_m: 1.0 / block_m,
            cols,
            rows,
            segment_start,
            segments: Vec::with_capacity(members.len()),
            end_start: Vec::with_capacity(cols * rows + 1),
            ends: Vec::new(),
            group_start: Vec::with_capacity(cols * rows),
            group_solid: Vec::with_capacity(cols * rows),
        };
        let mut place: HashMap<[u64; 2], u32> = HashMap::new();
        for block in 0..cols * rows {
            sweep.end_start.push(sweep.ends.len() as u32);
            place.clear();
            let (s, e) = (sweep.segment_start[block] as usize, sweep.segment_start[block + 1] as usize);
            let mut in_block: Vec<(Facing, u16, Segment)> = members[s..e]
                .iter()
                .map(|&i| {
                    let (facing, solid) = Facing::of(&segments[i as usize]);
                    (facing, solid, segments[i as usize])
                })
                .collect();
            in_block.sort_by_key(|&(facing, _, _)| facing);
            let start_of = |g: usize| (s + in_block.partition_point(|&(f, _, _)| (f as usize) < g)) as u32;
            let starts = [start_of(1), start_of(2), start_of(3), start_of(4)];
            let mut solid = [u16::MAX; 4];
            for &(facing, layers, _) in &in_block {
                if facing != Facing::Other {
                    solid[facing as usize] &= layers;
                }
            }
            sweep.group_start.push(starts);
            sweep.group_solid.push(solid);
            for (_, _, segment) in in_block {
                let ends = [segment.a, segment.b()].map(|p| {
                    let key = p.map(|v| (v + 0.0).to_bits());
                    *place.entry(key).or_insert_with(|| {
                        sweep.ends.push(p);
                        (sweep.ends.len() - 1 - sweep.end_start[block] as usize) as u32
                    })
                });
                sweep.segments.push(BlockSegment { segment, ends });
            }
        }
        sweep.end_start.push(sweep.ends.len() as u32);
        sweep
    }

    /// Bytes held by the blocks.
    pub fn heap_bytes(&self) -> usize {
        (self.segment_start.len() + self.end_start.len()) * 4
            + self.segments.len() * std::mem::size_of::<BlockSegment>()
            + self.ends.len() * std::mem::size_of::<Vec2>()
            + self.group_start.len() * std::mem::size_of::<[u32; 4]>()
            + self.group_solid.len() * std::mem::size_of::<[u16; 4]>()
    }

    /// Casts every beam of `fan` at the walls on its layers into `best`
    /// (distance of the nearest hit, m, ∞ when none within range) and
    /// `bits` (layers of that hit, 0 when none). A wall whose solid side
    /// faces the origin in one of the layers `back_faces` is not tested:
    /// pass only layers where the origin is in free space (see
    /// [`super::SegmentGrid::free_layers`]), where a nearer wall always
    /// stops the beam first. `work` is working memory kept between scans.
    pub fn cast_fan(&self, fan: &Fan, back_faces: u16, work: &mut SweepWork, best: &mut [f64], bits: &mut [u16]) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, checked just above.
            #[allow(unsafe_code, reason = "a call to code compiled for AVX2, on a CPU checked to have it")]
            unsafe {
                return self.cast_fan_avx2(fan, back_faces, work, best, bits);
            }
        }
        self.cast_fan_portable(fan, back_faces, work, best, bits);
    }

    /// [`FanSweep::cast_fan`] compiled for AVX2 (twice as many numbers per
    /// vector instruction; 15–25 % more beams per second on the office
    /// map). The results are bit for bit those of the portable code:
    /// vectors of any width round each operation alike, and no `mul_add`
    /// is written, so none is fused.
    ///
    /// # Safety
    /// Only for CPUs with AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    #[allow(unsafe_code, reason = "target features need an unsafe fn before Rust 1.86")]
    unsafe fn cast_fan_avx2(
        &self,
        fan: &Fan,
        back_faces: u16,
        work: &mut SweepWork,
        best: &mut [f64],
        bits: &mut [u16],
    ) {
        self.cast_fan_portable(fan, back_faces, work, best, bits);
    }

    /// [`FanSweep::cast_fan`] for any CPU: inlined, with all it calls in
    /// the hot loops, into the AVX2 copy too.
    #[inline(always)]
    fn cast_fan_portable(&self, fan: &Fan, back_faces: u16, work: &mut SweepWork, best: &mut [f64], bits: &mut [u16]) {
        let n = fan.dirs.len();
        let (best, bits) = (&mut best[..n], &mut bits[..n]);
        bits.fill(0);
        if n == 0 {
            return;
        }
        let arcs = BeamArcs::new(fan);
        let o = fan.origin;
        let here =
            [(o[0] - self.origin[0]) * self.blocks_per_m, (o[1] - self.origin[1]) * self.blocks_per_m].map(f64::floor);
        // Blocks within range lie within this many blocks of the origin's
        // (and none lies beyond the grid's farthest corner).
        let far_corner = (here[0].max(self.cols as f64 - here[0])).hypot(here[1].max(self.rows as f64 - here[1]));
        let radius = ((fan.range_m * self.blocks_per_m).ceil() + 2.0).min(far_corner + 2.0);
        let SweepWork { order, end_beams, nearest } = work;
        nearest.clear();
        nearest.resize(n, [fan.range_m, 1.0]);
        let mut sweep = BlockSweep { fan, back_faces, arcs: &arcs, end_beams, nearest, bits };
        // The order only decides how soon blocks can be skipped, never the
        // ranges. Nearest first needs a disk of offsets around the origin
        // (8 bytes each, kept); when that disk would hold more offsets than
        // the grid has blocks, plus a few thousand (an origin far off the
        // map with a long range), every block is visited in grid order.
        let blocks = (self.cols * self.rows) as f64;
        if PI * radius * radius <= blocks + 4096.0 && here[0].abs() < 1e15 && here[1].abs() < 1e15 {
            let here = here.map(|v| v as i64);
            for &[dx, dy] in order.within(radius as i64) {
                let (x, y) = (here[0] + i64::from(dx), here[1] + i64::from(dy));
                if x >= 0 && y >= 0 && x < self.cols as i64 && y < self.rows as i64 {
                    self.sweep_block(x as usize, y as usize, &mut sweep);
                }
            }
        } else {
            for y in 0..self.rows {
                for x in 0..self.cols {
                    self.sweep_block(x, y, &mut sweep);
                }
            }
        }
        // One division per beam, for the nearest hit only. Every beam is
        // divided (one without a hit holds the range over 1) and the
        // misses chosen after, so that the loop runs on whole vectors.
        let BlockSweep { nearest, bits, .. } = sweep;
        for ((d, &[t_num, denom]), &b) in best.iter_mut().zip(nearest.iter()).zip(bits.iter()) {
            let distance = t_num / denom;
            *d = if b == 0 { f64::INFINITY } else { distance };
        }
    }

    /// Tests the segments of block (`x`, `y`) against the beams through it
    /// that are still open (see the module docs).
    #[inline(always)]
    fn sweep_block(&self, x: usize, y: usize, sweep: &mut BlockSweep) {
        let BlockSweep { fan, back_faces, arcs, end_beams, nearest, bits } = sweep;
        let (o, n) = (fan.origin, fan.dirs.len());
        let block = y * self.cols + x;
        let (s, e) = (self.segment_start[block] as usize, self.segment_start[block + 1] as usize);
        if s == e {
            return;
        }
        let lo = [self.origin[0] + x as f64 * self.block_m, self.origin[1] + y as f64 * self.block_m];
        let hi = [lo[0] + self.block_m, lo[1] + self.block_m];
        let near = [(lo[0] - o[0]).max(o[0] - hi[0]).max(0.0), (lo[1] - o[1]).max(o[1] - hi[1]).max(0.0)];
        let near_m = (near[0] * near[0] + near[1] * near[1]).sqrt();
        if near_m > fan.range_m {
            return;
        }
        // Skip the block when every beam through it already hit nearer
        // (with a hair of slack for rounding in `near_m`).
        let near_m = near_m * (1.0 - 1e-9) - 1e-9;
        // The beams through the block not yet closed nearer lie in `open`
        // (all of them when the origin is in the block).
        let mut open = (0, n - 1);
        let silhouette = box_silhouette(o, lo, hi);
        if let Some([p, q]) = silhouette {
            open = (usize::MAX, 0);
            arcs.for_each_run(arcs.beam_of(p), arcs.beam_of(q), |first, last| {
                if let Some((k, k_last)) = reaching_span(&nearest[first..=last], near_m) {
                    open = (open.0.min(first + k), open.1.max(first + k_last));
                }
            });
            if open.0 > open.1 {
                return;
            }
        }
        // Only a segment through the origin can hold it, and that segment
        // is in the origin's block too (blocks hold every segment touching
        // their closed square): elsewhere its end points' angles hold.
        let may_hold_origin = silhouette.is_none();
        let ends = &self.ends[self.end_start[block] as usize..self.end_start[block + 1] as usize];
        // A plain loop, not `extend`: that is a function of its own, which
        // would not be compiled for AVX2 with the rest.
        end_beams.resize(ends.len(), 0.0);
        for (beam, p) in end_beams.iter_mut().zip(ends) {
            *beam = arcs.beam_of([p[0] - o[0], p[1] - o[1]]);
        }
        // Half the walls of a block are seen from behind. When the origin
        // is beyond the block along an axis, a whole group of walls along
        // the other axis is: skipped at once when every wall of it is solid
        // on that side in a layer asked, and none needs checking when the
        // group is seen from the front.
        let [minus_x, plus_y, minus_y, other] = self.group_start[block].map(|v| v as usize);
        let solid = self.group_solid[block];
        let beyond = |v: f64, lo: f64, hi: f64| {
            let hair_m = 1e-6 * (1.0 + v.abs());
            if v > hi + hair_m {
                1
            } else if v < lo - hair_m {
                -1
            } else {
                0
            }
        };
        let (side_x, side_y) = (beyond(o[0], lo[0], hi[0]), beyond(o[1], lo[1], hi[1]));
        let groups = [
            (s, minus_x, side_x, 1),
            (minus_x, plus_y, side_x, -1),
            (plus_y, minus_y, side_y, 1),
            (minus_y, other, side_y, -1),
            (other, e, 0, 0),
        ];
        for (g, (from, to, origin_side, solid_side)) in groups.into_iter().enumerate() {
            // Whether each wall must be checked for being seen from behind.
            let check = match origin_side {
                _ if from == to => continue,
                0 => true,
                _ if origin_side != solid_side => false,
                _ if solid[g] & *back_faces != 0 => continue,
                _ => true,
            };
            for s in &self.segments[from..to] {
                let seen = s.segment.layers & fan.layers != 0
                    && !(check && *back_faces != 0 && s.segment.solid_towards(o) & *back_faces != 0);
                if seen {
                    let ends = s.ends.map(|k| end_beams[k as usize]);
                    rasterise(&s.segment, ends, open, may_hold_origin, fan, arcs, nearest, bits);
                }
            }
        }
    }
}

/// The first and last of `nearest`'s beams whose hit so far is at
/// `near_m` or beyond (they may meet something in a block that near), if
/// any. Most blocks a sweep visits are hidden, every beam of their arc
/// already closed nearer, so the search usually runs to the end: it tests
/// four beams at a time without a branch between them (a branch per beam
/// was an eighth of the sweep).
#[inline(always)]
fn reaching_span(nearest: &[[f64; 2]], near_m: f64) -> Option<(usize, usize)> {
    let reaches = |&[t_num, denom]: &[f64; 2]| t_num >= near_m * denom;
    // The first four holding a reaching beam, else the odd ones at the end.
    let mut quads = nearest.chunks_exact(4);
    let tail = nearest.len() - quads.remainder().len();
    let start =
        quads.position(|q| reaches(&q[0]) | reaches(&q[1]) | reaches(&q[2]) | reaches(&q[3])).map_or(tail, |q| 4 * q);
    let first = start + nearest[start..].iter().position(reaches)?;
    let last = nearest.iter().rposition(reaches).unwrap_or(first);
    Some((first, last))
}

/// One fan being swept: what every block it visits reads and writes.
struct BlockSweep<'a> {
    fan: &'a Fan<'a>,
    /// Layers whose walls are skipped when seen from their solid side.
    back_faces: u16,
    arcs: &'a BeamArcs,
    end_beams: &'a mut Vec<f64>,
    /// Each beam's nearest hit so far as the fraction (t_num, denom) of
    /// metres (see [`super::ray_edge_fraction`]), the range when none.
    nearest: &'a mut [[f64; 2]],
    bits: &'a mut [u16],
}

/// The sign bit of an f64.
const SIGN_BIT: u64 = 1 << 63;

/// Tests the beams `segment` can meet (its end points at beam coordinates
/// `ends`, see [`BeamArcs::beam_of`]) among the beams `open.0..=open.1`,
/// keeping nearer hits. Unless `may_hold_origin`, the segment is known
/// not to pass through the origin.
#[inline(always)]
#[allow(clippy::too_many_arguments, reason = "the inner loop's inputs, kept apart to stay in registers")]
fn rasterise(
    segment: &Segment,
    ends: [f64; 2],
    open: (usize, usize),
    may_hold_origin: bool,
    fan: &Fan,
    arcs: &BeamArcs,
    nearest: &mut [[f64; 2]],
    bits: &mut [u16],
) {
    let wall = WallTest::new(segment, fan.origin);
    let (ao, edge) = (wall.ao, wall.edge);
    // The origin on the segment (collinear, between the ends): any beam may
    // meet it, and its ends' angles say nothing.
    let holds_origin = may_hold_origin && {
        let bo = [ao[0] + edge[0], ao[1] + edge[1]];
        let cross = ao[0] * bo[1] - ao[1] * bo[0];
        let dot = ao[0] * bo[0] + ao[1] * bo[1];
        let scale = (ao[0] * ao[0] + ao[1] * ao[1]) + (bo[0] * bo[0] + bo[1] * bo[1]);
        cross.abs() <= 1e-12 * scale && dot <= 1e-12 * scale
    };
    if holds_origin {
        wall.test_run(open.0, open.1, fan.dirs, nearest, bits);
    } else {
        arcs.for_each_run(ends[0], ends[1], |first, last| {
            wall.test_run(first.max(open.0), last.min(open.1), fan.dirs, nearest, bits)
        });
    }
}

/// What the test of one wall against a beam needs that does not depend
/// on the beam: the arithmetic of [`super::ray_edge_fraction`] with the
/// wall's part taken out of the loop.
struct WallTest {
    /// The wall's start from the origin, m.
    ao: Vec2,
    edge: Vec2,
    /// The numerator of the distance along any beam, m·m.
    t_num: f64,
    slack_a: f64,
    slack_b: f64,
    layers: u16,
}

impl WallTest {
    /// The test of `segment` against beams from `origin`.
    #[inline(always)]
    fn new(segment: &Segment, origin: Vec2) -> WallTest {
        let ao = [segment.a[0] - origin[0], segment.a[1] - origin[1]];
        let edge = segment.edge;
        let [slack_a, slack_b] = end_slack(origin, ao, edge);
        WallTest { ao, edge, t_num: ao[0] * edge[1] - ao[1] * edge[0], slack_a, slack_b, layers: segment.layers }
    }

    /// Tests the beams `first..=last` (none when `first > last`) along
    /// `dirs`, keeping in `nearest` and `bits` the hits nearer than theirs.
    #[inline(always)]
    fn test_run(&self, first: usize, last: usize, dirs: &[Vec2], nearest: &mut [[f64; 2]], bits: &mut [u16]) {
        if first > last {
            return;
        }
        // Half-open ranges: an inclusive one peels its last beam off into a
        // second copy of the loop.
        let (dirs, nearest, bits) = (&dirs[first..last + 1], &mut nearest[first..last + 1], &mut bits[first..last + 1]);
        let (ao, edge) = (self.ao, self.edge);
        for ((dir, nearest), bits) in dirs.iter().zip(nearest).zip(bits) {
            let denom = dir[0] * edge[1] - dir[1] * edge[0];
            let u_num = ao[0] * dir[1] - ao[1] * dir[0];
            // Both fractions over a positive denominator: flip the
            // numerators' signs with the denominator's (a bit operation,
            // not a branch).
            let sign = denom.to_bits() & SIGN_BIT;
            let t_num = f64::from_bits(self.t_num.to_bits() ^ sign);
            let u_num = f64::from_bits(u_num.to_bits() ^ sign);
            let denom = denom.abs();
            let hit = u64::from(denom >= 1e-15)
                & u64::from(t_num >= 0.0)
                & u64::from(u_num >= -self.slack_a)
                & u64::from(u_num <= denom + self.slack_b)
                & u64::from(t_num * nearest[1] <= nearest[0] * denom);
            // Kept as a fraction: a division here would sit between this
            // test and the next one of the same beam. Chosen by masks, not
            // branches: whether a beam hits is anyone's guess.
            let keep = hit.wrapping_sub(1);
            let pick = |new: f64, old: f64| f64::from_bits((new.to_bits() & !keep) | (old.to_bits() & keep));
            *nearest = [pick(t_num, nearest[0]), pick(denom, nearest[1])];
            *bits = (self.layers & !(keep as u16)) | (*bits & keep as u16);
        }
    }
}

/// The two corners of the box `lo..hi` whose directions from `o` bound the
/// box's arc; None when `o` is inside it (or on its border).
#[inline(always)]
fn box_silhouette(o: Vec2, lo: Vec2, hi: Vec2) -> Option<[Vec2; 2]> {
    // Which side of the box the origin is on along each axis: 0 below, 1
    // within, 2 above. The two corners seen farthest apart follow from it.
    let side = |axis: usize| usize::from(o[axis] >= lo[axis]) + usize::from(o[axis] > hi[axis]);
    let corner = |x: f64, y: f64| [x - o[0], y - o[1]];
    Some(match (side(0), side(1)) {
        (1, 1) => return None,
        (0, 0) | (2, 2) => [corner(lo[0], hi[1]), corner(hi[0], lo[1])],
        (0, 2) | (2, 0) => [corner(lo[0], lo[1]), corner(hi[0], hi[1])],
        (0, 1) => [corner(lo[0], lo[1]), corner(lo[0], hi[1])],
        (2, 1) => [corner(hi[0], lo[1]), corner(hi[0], hi[1])],
        (1, 0) => [corner(lo[0], lo[1]), corner(hi[0], lo[1])],
        _ => [corner(lo[0], hi[1]), corner(hi[0], hi[1])],
    })
}

/// Working memory of [`FanSweep::cast_fan`], kept between scans so that a
/// scan allocates nothing.
#[derive(Debug, Clone, Default)]
pub struct SweepWork {
    order: BlockOrder,
    /// Beam coordinates of the current block's end points.
    end_beams: Vec<f64>,
    /// Each beam's nearest hit so far (see [`BlockSweep::nearest`]).
    nearest: Vec<[f64; 2]>,
}

/// The blocks around a scan's origin in order of distance: offsets in
/// blocks, nearest first, out to the largest radius asked for so far.
#[derive(Debug, Clone, Default)]
struct BlockOrder {
    radius: i64,
    offsets: Vec<[i32; 2]>,
}

impl BlockOrder {
    /// Every block offset within `radius` blocks, nearest first.
    fn within(&mut self, radius: i64) -> &[[i32; 2]] {
        if radius > self.radius {
            self.radius = radius;
            self.offsets.clear();
            for dy in -radius..=radius {
                for dx in -radius..=radius {
                    if dx * dx + dy * dy <= radius * radius {
                        self.offsets.push([dx as i32, dy as i32]);
                    }
                }
            }
            self.offsets.sort_by_key(|&[dx, dy]| (i64::from(dx).pow(2) + i64::from(dy).pow(2), dy, dx));
        }
        let r2 = radius * radius;
        let count = self.offsets.partition_point(|&[dx, dy]| i64::from(dx).pow(2) + i64::from(dy).pow(2) <= r2);
        &self.offsets[..count]
    }
}

#[cfg(test)]
mod tests {
    use std::f64::consts::TAU;

    use super::super::segments::{merge_coincident, Wall};
    use super::*;

    #[test]
    fn the_span_of_beams_reaching_a_block_is_that_of_a_beam_by_beam_search() {
        // Hits so far as fractions (t_num, denom); the block is 2 m away.
        let beam_by_beam = |nearest: &[[f64; 2]]| {
            let reaches = |&[t_num, denom]: &[f64; 2]| t_num >= 2.0 * denom;
            Some((nearest.iter().position(reaches)?, nearest.iter().rposition(reaches)?))
        };
        let mut state = 7_u64;
        for len in 0..40 {
            for _ in 0..50 {
                let nearest: Vec<[f64; 2]> = (0..len)
                    .map(|_| {
                        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        let distance_m = [0.5, 1.9, 2.0, 7.5][(state >> 62) as usize];
                        [distance_m * 3.0, 3.0]
                    })
                    .collect();
                assert_eq!(reaching_span(&nearest, 2.0), beam_by_beam(&nearest), "{nearest:?}");
            }
        }
    }

    #[test]
    fn walls_seen_from_their_solid_side_are_skipped_in_the_layers_asked() {
        // A 1 m square obstacle on layer 1, outlined counter-clockwise (the
        // obstacle on each wall's left).
        let corners = [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]];
        let walls = (0..4).map(|i| Wall { a: corners[i], b: corners[(i + 1) % 4], layers: 1, solid_on_left: 1 });
        let sweep = FanSweep::new(&merge_coincident(walls), 1.2);
        let dirs: Vec<Vec2> = (0..360).map(|i| f64::from(i).to_radians()).map(|a| [a.cos(), a.sin()]).collect();
        let ranges = |origin: Vec2, back_faces: u16| {
            let fan =
                Fan { origin, start_rad: 0.0, increment_rad: 1f64.to_radians(), dirs: &dirs, range_m: 10.0, layers: 1 };
            let (mut best, mut bits) = (vec![0.0; 360], vec![0; 360]);
            sweep.cast_fan(&fan, back_faces, &mut SweepWork::default(), &mut best, &mut bits);
            best
        };
        let hits = |ranges: Vec<f64>| ranges.iter().filter(|d| d.is_finite()).count();
        // From outside, the far walls are behind the near ones: the same
        // ranges either way.
        assert_eq!(ranges([3.0, 0.4], 1), ranges([3.0, 0.4], 0));
        assert_eq!(hits(ranges([3.0, 0.4], 1)), 28, "the beams from 164° to 191° meet the square");
        // From inside, every wall is seen from behind: skipped when asked
        // (which callers must only ask where the origin is in free space),
        // tested when not, and only in the layers asked.
        assert_eq!(hits(ranges([0.5, 0.5], 0)), 360);
        assert_eq!(hits(ranges([0.5, 0.5], 1)), 0);
        assert_eq!(hits(ranges([0.5, 0.5], 2)), 360);
    }

    #[test]
    fn walls_are_grouped_by_the_side_their_obstacle_is_on() {
        let facing = |a: Vec2, b: Vec2, solid_on_left: u16, layers: u16| {
            Facing::of(&merge_coincident([Wall { a, b, layers, solid_on_left }])[0])
        };
        // The outline of the unit square, counter-clockwise: each wall's
        // obstacle is inside the square.
        assert_eq!(facing([0.0, 0.0], [1.0, 0.0], 1, 1), (Facing::PlusY, 1), "bottom");
        assert_eq!(facing([1.0, 0.0], [1.0, 1.0], 1, 1), (Facing::MinusX, 1), "right");
        assert_eq!(facing([1.0, 1.0], [0.0, 1.0], 1, 1), (Facing::MinusY, 1), "top");
        assert_eq!(facing([0.0, 1.0], [0.0, 0.0], 1, 1), (Facing::PlusX, 1), "left");
        // Slanted walls, bare lines and walls solid on both sides (in two
        // layers) are checked one by one.
        assert_eq!(facing([0.0, 0.0], [1.0, 1.0], 1, 1).0, Facing::Other);
        assert_eq!(facing([0.0, 0.0], [1.0, 0.0], 0, 1).0, Facing::Other);
        let both = merge_coincident([
            Wall { a: [0.0, 0.0], b: [1.0, 0.0], layers: 1, solid_on_left: 1 },
            Wall { a: [1.0, 0.0], b: [0.0, 0.0], layers: 2, solid_on_left: 2 },
        ]);
        assert_eq!(Facing::of(&both[0]).0, Facing::Other);
    }

    #[test]
    fn the_avx2_copy_gives_the_portable_ranges_bit_for_bit() {
        // Boxes from 5 cm to 2 m, outlined as a map image's obstacles are
        // (each wall with the obstacle on its left), and slanted bare lines
        // on another layer; fans from random points, some on wall corners.
        // (Without AVX2, `cast_fan` runs the portable code itself.)
        let mut seed = 0x5eed_u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut walls = Vec::new();
        for _ in 0..60 {
            let (x, y, w, h) = (next() * 30.0, next() * 30.0, 0.05 + next() * 2.0, 0.05 + next() * 2.0);
            let corners = [[x, y], [x + w, y], [x + w, y + h], [x, y + h]];
            walls.extend((0..4).map(|i| Wall { a: corners[i], b: corners[(i + 1) % 4], layers: 1, solid_on_left: 1 }));
        }
        for _ in 0..40 {
            let a = [next() * 30.0, next() * 30.0];
            walls.push(Wall {
                a,
                b: [a[0] + next() * 3.0 - 1.5, a[1] + next() * 3.0 - 1.5],
                layers: 2,
                solid_on_left: 0,
            });
        }
        let sweep = FanSweep::new(&merge_coincident(walls.iter().copied()), 1.6);
        let beams = 1081;
        let (mut work, mut best, mut bits) = (SweepWork::default(), vec![0.0; beams], vec![0; beams]);
        let (mut portable, mut portable_bits) = (vec![0.0; beams], vec![0; beams]);
        for k in 0..300 {
            let origin =
                if k % 10 == 0 { walls[k % walls.len()].a } else { [next() * 32.0 - 1.0, next() * 32.0 - 1.0] };
            let (start_rad, increment_rad) = (next() * TAU - PI, 1.5 * PI / (beams - 1) as f64);
            let dirs: Vec<Vec2> =
                (0..beams).map(|i| start_rad + i as f64 * increment_rad).map(|a| [a.cos(), a.sin()]).collect();
            let fan = Fan { origin, start_rad, increment_rad, dirs: &dirs, range_m: 20.0, layers: 3 };
            // Walls seen from behind skipped even from inside a room's
            // outline, where the ranges are not a laser's: both copies must
            // agree on any input.
            let back_faces = if k % 3 == 0 { 0 } else { 1 };
            sweep.cast_fan(&fan, back_faces, &mut work, &mut best, &mut bits);
            sweep.cast_fan_portable(&fan, back_faces, &mut work, &mut portable, &mut portable_bits);
            assert_eq!(
                best.iter().map(|d| d.to_bits()).collect::<Vec<_>>(),
                portable.iter().map(|d| d.to_bits()).collect::<Vec<_>>(),
                "ranges from {origin:?}"
            );
            assert_eq!(bits, portable_bits, "layers from {origin:?}");
            assert!(best.iter().any(|d| d.is_finite()), "the fan from {origin:?} sees something");
        }
    }

    #[test]
    fn box_silhouettes_bound_every_corner_seen_from_outside() {
        let (lo, hi) = ([1.0, 1.0], [2.0, 2.0]);
        assert!(box_silhouette([1.5, 1.5], lo, hi).is_none());
        for o in [[0.0, 0.0], [1.5, 0.0], [3.0, 0.0], [3.0, 1.5], [3.0, 3.0], [1.5, 3.0], [0.0, 3.0], [0.0, 1.5]] {
            let [p, q] = box_silhouette(o, lo, hi).unwrap();
            let (from, to) = (p[1].atan2(p[0]), q[1].atan2(q[0]));
            let width = (to - from).rem_euclid(TAU).min((from - to).rem_euclid(TAU));
            for c in [[1.0, 1.0], [2.0, 1.0], [1.0, 2.0], [2.0, 2.0]] {
                let angle = (c[1] - o[1]).atan2(c[0] - o[0]);
                // the corner is no farther from both bounding corners than
                // they are from each other
                let gap = |a: f64, b: f64| (a - b).rem_euclid(TAU).min((b - a).rem_euclid(TAU));
                assert!(gap(angle, from) + gap(angle, to) <= width + 1e-9, "{o:?} corner {c:?}");
            }
        }
    }
}
