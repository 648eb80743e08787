//! Ray casting for lasers: static wall segments, swept a whole fan at a time
//! through square blocks (`sweep`, what a laser's scan runs) or walked one
//! ray at a time through a fine grid (`grid`), plus the footprints of bodies
//! (circles and convex polygons).
//!
//! Box2D's rules, which Flatland's laser inherits: wall segments are
//! two-sided; a ray that starts inside a circle or polygon does not hit it
//! (so a laser inside its own robot's footprint sees out); sensor footprints
//! are invisible. A hit closer than the range returns its distance.

mod beam_arcs;
mod free_layers_memo;
mod free_space;
mod grid;
mod scan;
mod segments;
mod shapes;
mod sweep;

pub use grid::SegmentGrid;
pub use scan::{fast_atan2, scan_shapes, Fan, ScanBuffers};
pub use segments::Wall;
pub use shapes::{circle_rays, ConvexPolygon, Shape};
pub use sweep::{FanSweep, SweepWork};

/// A point or vector in metres.
pub type Vec2 = [f64; 2];

/// The nearest hit of a beam: distance in metres and the layers it belongs to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// Distance from the ray origin, m.
    pub distance_m: f64,
    /// Layer bits of what was hit.
    pub layers: u16,
}

/// The least and greatest corners of the box around `points`; None when
/// there are none.
pub fn bounding_box(points: impl IntoIterator<Item = Vec2>) -> Option<(Vec2, Vec2)> {
    points.into_iter().fold(None, |bounds, p| {
        let (lo, hi) = bounds.unwrap_or((p, p));
        Some(([lo[0].min(p[0]), lo[1].min(p[1])], [hi[0].max(p[0]), hi[1].max(p[1])]))
    })
}

#[inline]
fn cross(a: Vec2, b: Vec2) -> f64 {
    a[0] * b[1] - a[1] * b[0]
}

/// Distance along a unit ray to a two-sided segment, if it is hit within
/// `max_m`. Parallel rays do not hit (as Box2D's edge ray cast).
#[inline]
pub fn ray_segment(origin: Vec2, dir: Vec2, a: Vec2, b: Vec2, max_m: f64) -> Option<f64> {
    ray_edge(origin, dir, a, [b[0] - a[0], b[1] - a[1]], max_m)
}

/// [`ray_segment`] for the segment from `a` along `edge` (to `a + edge`).
#[inline]
pub fn ray_edge(origin: Vec2, dir: Vec2, a: Vec2, edge: Vec2, max_m: f64) -> Option<f64> {
    let (t_num, denom) = ray_edge_fraction(origin, dir, a, edge, max_m, 1.0)?;
    let t = t_num / denom;
    (t <= max_m).then_some(t)
}

/// Whether a unit ray meets the edge from `a` along `edge` no farther than
/// `limit_num / limit_den` m (`limit_den` > 0), and if so where, as the
/// fraction `(t_num, denom)` of metres with `denom` > 0. Misses are rejected
/// by sign tests alone, and the division is left to the caller, who needs
/// it once per beam rather than once per hit.
#[inline]
pub fn ray_edge_fraction(
    origin: Vec2,
    dir: Vec2,
    a: Vec2,
    edge: Vec2,
    limit_num: f64,
    limit_den: f64,
) -> Option<(f64, f64)> {
    let denom = cross(dir, edge);
    let ao = [a[0] - origin[0], a[1] - origin[1]];
    // t = t_num / denom along the ray, u = u_num / denom along the edge.
    let (t_num, u_num) = (cross(ao, edge), cross(ao, dir));
    let (t_num, u_num, denom) = if denom < 0.0 { (-t_num, -u_num, -denom) } else { (t_num, u_num, denom) };
    let [slack_a, slack_b] = end_slack(origin, ao, edge);
    // One combined test (`|` rather than `||`): most segments tested miss,
    // for varied reasons, and a single branch is predicted far better.
    let miss = (denom < 1e-15)
        | (t_num < 0.0)
        | (u_num < -slack_a)
        | (u_num > denom + slack_b)
        | (t_num * limit_den > limit_num * denom);
    (!miss).then_some((t_num, denom))
}

/// How far a ray may pass beside the ends `a` (at `ao` from the origin) and
/// `a + edge` of a segment and still hit it, as slack on the numerator of
/// the fraction along the segment (which is the ray's distance from that
/// end, m). A ray aimed at a corner where two walls meet passes it by a few
/// units of rounding on one side or the other; with the slack it hits both
/// walls there, as the exact ray does, instead of maybe neither, so the
/// nearest wall is never lost between two (see `segments::Wall` for why a
/// laser relies on it). 1e-12 of the coordinates' size is far above their
/// rounding and far below any distance a map draws.
#[inline(always)]
pub(crate) fn end_slack(origin: Vec2, ao: Vec2, edge: Vec2) -> [f64; 2] {
    let size = 1.0 + origin[0].abs() + origin[1].abs();
    let bo = [ao[0] + edge[0], ao[1] + edge[1]];
    [1e-12 * (size + ao[0].abs() + ao[1].abs()), 1e-12 * (size + bo[0].abs() + bo[1].abs())]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segment_hits_are_two_sided_and_bounded() {
        let (a, b) = ([1.0, -1.0], [1.0, 1.0]);
        assert_eq!(ray_segment([0.0, 0.0], [1.0, 0.0], a, b, 5.0), Some(1.0));
        assert_eq!(ray_segment([2.0, 0.0], [-1.0, 0.0], a, b, 5.0), Some(1.0));
        assert_eq!(ray_segment([0.0, 0.0], [1.0, 0.0], a, b, 0.5), None);
        assert_eq!(ray_segment([0.0, 0.0], [0.0, 1.0], a, b, 5.0), None);
        // grazing the end point counts as a hit
        assert_eq!(ray_segment([0.0, 1.0], [1.0, 0.0], a, b, 5.0), Some(1.0));
    }
}
