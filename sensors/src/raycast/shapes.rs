//! Body footprints in the world frame, with Box2D's ray-cast semantics.

use super::Vec2;

/// A convex polygon with counter-clockwise vertices and outward normals.
/// (The default is empty: storage to be filled by [`ConvexPolygon::place_into`].)
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ConvexPolygon {
    vertices: Vec<Vec2>,
    normals: Vec<Vec2>,
}

impl ConvexPolygon {
    /// The convex hull of `points` (Box2D also takes the hull); `None` when
    /// the points enclose no area.
    pub fn hull(points: &[Vec2]) -> Option<ConvexPolygon> {
        let mut pts: Vec<Vec2> = points.to_vec();
        pts.sort_by(|a, b| a[0].total_cmp(&b[0]).then(a[1].total_cmp(&b[1])));
        pts.dedup();
        if pts.len() < 3 {
            return None;
        }
        let turn = |o: Vec2, a: Vec2, b: Vec2| (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
        let mut hull: Vec<Vec2> = Vec::with_capacity(pts.len() * 2);
        for pass in 0..2 {
            let start = hull.len();
            let iter: Box<dyn Iterator<Item = &Vec2>> =
                if pass == 0 { Box::new(pts.iter()) } else { Box::new(pts.iter().rev()) };
            for &p in iter {
                while hull.len() >= start + 2 && turn(hull[hull.len() - 2], hull[hull.len() - 1], p) <= 0.0 {
                    hull.pop();
                }
                hull.push(p);
            }
            hull.pop();
        }
        if hull.len() < 3 {
            return None;
        }
        let n = hull.len();
        let normals = (0..n)
            .map(|i| {
                let (a, b) = (hull[i], hull[(i + 1) % n]);
                let e = [b[0] - a[0], b[1] - a[1]];
                let len = (e[0] * e[0] + e[1] * e[1]).sqrt();
                [e[1] / len, -e[0] / len]
            })
            .collect();
        Some(ConvexPolygon { vertices: hull, normals })
    }

    /// This polygon turned by the angle whose cosine and sine are
    /// `cos_sin`, then moved by `offset` (a body's pose), written into
    /// `out`, whose storage is reused: a laser places every footprint in
    /// range at every scan, without allocating once warmed up. A rigid
    /// motion keeps the vertices counter-clockwise and turns the normals
    /// with them.
    pub fn place_into(&self, cos_sin: [f64; 2], offset: Vec2, out: &mut ConvexPolygon) {
        let [c, s] = cos_sin;
        let turn = |p: &Vec2| [c * p[0] - s * p[1], s * p[0] + c * p[1]];
        out.vertices.clear();
        out.vertices.extend(self.vertices.iter().map(turn).map(|p| [p[0] + offset[0], p[1] + offset[1]]));
        out.normals.clear();
        out.normals.extend(self.normals.iter().map(turn));
    }

    /// The vertices, counter-clockwise.
    pub fn vertices(&self) -> &[Vec2] {
        &self.vertices
    }

    /// Distance along a unit ray to where it enters the polygon (Box2D's
    /// clipping algorithm: a ray starting inside never enters, so no hit).
    pub fn ray(&self, origin: Vec2, dir: Vec2, max_m: f64) -> Option<f64> {
        let (mut lower, mut upper) = (0.0f64, max_m);
        let mut entered = false;
        for (v, n) in self.vertices.iter().zip(&self.normals) {
            let numerator = n[0] * (v[0] - origin[0]) + n[1] * (v[1] - origin[1]);
            let denominator = n[0] * dir[0] + n[1] * dir[1];
            if denominator == 0.0 {
                if numerator < 0.0 {
                    return None;
                }
            } else if denominator < 0.0 && numerator < lower * denominator {
                lower = numerator / denominator;
                entered = true;
            } else if denominator > 0.0 && numerator < upper * denominator {
                upper = numerator / denominator;
            }
            if upper < lower {
                return None;
            }
        }
        entered.then_some(lower)
    }
}

/// A footprint placed in the world.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// A circle.
    Circle {
        /// Centre, m.
        center: Vec2,
        /// Radius, m.
        radius: f64,
    },
    /// A convex polygon.
    Polygon(ConvexPolygon),
}

impl Shape {
    /// Distance along a unit ray to the shape, if hit within `max_m` from
    /// outside.
    pub fn ray(&self, origin: Vec2, dir: Vec2, max_m: f64) -> Option<f64> {
        match self {
            Shape::Circle { center, radius } => circle_ray(*center, *radius, origin, dir, max_m),
            Shape::Polygon(polygon) => polygon.ray(origin, dir, max_m),
        }
    }
}

/// Distance along a unit ray to where it enters a circle, if within
/// `max_m` from outside.
#[inline]
pub fn circle_ray(center: Vec2, radius: f64, origin: Vec2, dir: Vec2, max_m: f64) -> Option<f64> {
    let s = [origin[0] - center[0], origin[1] - center[1]];
    let c = s[0] * s[0] + s[1] * s[1] - radius * radius;
    if c < 0.0 {
        return None; // starts inside
    }
    let b = s[0] * dir[0] + s[1] * dir[1];
    if b > 0.0 || -b - radius > max_m {
        // Outside and heading away, or passing no nearer than max_m: no
        // root within reach (saves the root).
        return None;
    }
    let disc = b * b - c;
    if disc < 0.0 {
        return None;
    }
    let t = -b - disc.sqrt();
    (t >= 0.0 && t <= max_m).then_some(t)
}

/// `circle_ray` for many rays at once, each given by its origin and
/// direction components and its range, lowering `nearest` where the ray
/// enters the circle nearer. Without a branch per ray (the same arithmetic,
/// the outcome selected at the end), so that the compiler can run several
/// rays a time: a sonar ring tests its sixteen rays against every robot
/// near it. Hits are bit-identical to `circle_ray`'s.
#[allow(clippy::too_many_arguments)]
pub fn circle_rays(
    center: Vec2,
    radius: f64,
    ox: &[f64],
    oy: &[f64],
    dx: &[f64],
    dy: &[f64],
    max_m: &[f64],
    nearest: &mut [f64],
) {
    let n = nearest.len();
    let (ox, oy, dx, dy, max_m) = (&ox[..n], &oy[..n], &dx[..n], &dy[..n], &max_m[..n]);
    let r2 = radius * radius;
    for i in 0..n {
        let s = [ox[i] - center[0], oy[i] - center[1]];
        let c = s[0] * s[0] + s[1] * s[1] - r2;
        let b = s[0] * dx[i] + s[1] * dy[i];
        let disc = b * b - c;
        let t = -b - disc.max(0.0).sqrt();
        let hit = c >= 0.0 && b <= 0.0 && -b - radius <= max_m[i] && disc >= 0.0 && t >= 0.0 && t <= max_m[i];
        nearest[i] = if hit && t < nearest[i] { t } else { nearest[i] };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn square() -> ConvexPolygon {
        // deliberately clockwise and with a duplicate: the hull fixes both
        ConvexPolygon::hull(&[[-0.5, -0.5], [-0.5, 0.5], [0.5, 0.5], [0.5, -0.5], [0.5, 0.5]]).unwrap()
    }

    #[test]
    fn polygon_is_hit_from_outside_only() {
        let p = square();
        assert_eq!(p.vertices().len(), 4);
        assert_eq!(p.ray([-2.0, 0.0], [1.0, 0.0], 10.0), Some(1.5));
        assert_eq!(p.ray([0.0, 0.0], [1.0, 0.0], 10.0), None, "starts inside");
        assert_eq!(p.ray([-2.0, 2.0], [1.0, 0.0], 10.0), None);
        assert_eq!(p.ray([-2.0, 0.0], [1.0, 0.0], 1.0), None, "out of range");
    }

    #[test]
    fn circle_is_hit_from_outside_only() {
        let c = Shape::Circle { center: [3.0, 0.0], radius: 1.0 };
        assert_eq!(c.ray([0.0, 0.0], [1.0, 0.0], 10.0), Some(2.0));
        assert_eq!(c.ray([3.0, 0.0], [1.0, 0.0], 10.0), None);
        assert_eq!(c.ray([0.0, 2.0], [1.0, 0.0], 10.0), None);
        // the range ends just before the circle, or just in it
        assert_eq!(c.ray([0.0, 0.0], [1.0, 0.0], 1.99), None);
        assert_eq!(c.ray([0.0, 0.5], [1.0, 0.0], 2.2), Some(3.0 - 0.75f64.sqrt()));
        assert_eq!(c.ray([0.0, 0.5], [1.0, 0.0], 2.1), None);
    }

    #[test]
    fn a_placed_polygon_is_the_hull_of_the_placed_points() {
        let local = [[0.3, -0.2], [0.3, 0.2], [-0.3, 0.25], [-0.3, -0.25]];
        let (theta, offset) = (2.1f64, [4.0, -1.5]);
        let (s, c) = theta.sin_cos();
        let world: Vec<Vec2> =
            local.iter().map(|p| [offset[0] + c * p[0] - s * p[1], offset[1] + s * p[0] + c * p[1]]).collect();
        // Stale storage is overwritten.
        let mut placed = ConvexPolygon { vertices: vec![[9.0, 9.0]; 7], ..Default::default() };
        ConvexPolygon::hull(&local).unwrap().place_into([c, s], offset, &mut placed);
        let expected = ConvexPolygon::hull(&world).unwrap();
        let start = placed.vertices.iter().position(|v| (v[0] - expected.vertices[0][0]).abs() < 1e-12).unwrap();
        for k in 0..expected.vertices.len() {
            let (got, want) = (placed.vertices[(start + k) % 4], expected.vertices[k]);
            let (n_got, n_want) = (placed.normals[(start + k) % 4], expected.normals[k]);
            for axis in 0..2 {
                assert!((got[axis] - want[axis]).abs() < 1e-12, "vertex {k}: {got:?} vs {want:?}");
                assert!((n_got[axis] - n_want[axis]).abs() < 1e-12, "normal {k}: {n_got:?} vs {n_want:?}");
            }
        }
        for y in [-0.2, 0.0, 0.3] {
            let (a, b) = (placed.ray([0.0, y], [1.0, 0.0], 20.0), expected.ray([0.0, y], [1.0, 0.0], 20.0));
            assert_eq!(a.is_some(), b.is_some());
            assert!(a.zip(b).is_none_or(|(a, b)| (a - b).abs() < 1e-12));
        }
    }

    #[test]
    fn degenerate_polygons_have_no_hull() {
        assert!(ConvexPolygon::hull(&[[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]).is_none());
    }

    #[test]
    fn circle_rays_hits_exactly_where_circle_ray_does() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(11);
        let n = 16;
        let mut hits = 0;
        for _ in 0..2000 {
            let center = [rng.gen_range(-3.0..3.0), rng.gen_range(-3.0..3.0)];
            let radius = rng.gen_range(0.05..1.0);
            let ox: Vec<f64> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
            let oy: Vec<f64> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
            let headings: Vec<f64> = (0..n).map(|_| rng.gen_range(-3.2..3.2)).collect();
            let dx: Vec<f64> = headings.iter().map(|h: &f64| h.cos()).collect();
            let dy: Vec<f64> = headings.iter().map(|h: &f64| h.sin()).collect();
            let range: Vec<f64> = (0..n).map(|_| rng.gen_range(0.1..5.0)).collect();
            let before: Vec<f64> =
                (0..n).map(|_| if rng.gen_bool(0.5) { f64::INFINITY } else { rng.gen_range(0.0..5.0) }).collect();
            let mut nearest = before.clone();
            circle_rays(center, radius, &ox, &oy, &dx, &dy, &range, &mut nearest);
            for i in 0..n {
                let one = circle_ray(center, radius, [ox[i], oy[i]], [dx[i], dy[i]], range[i]);
                let expected = one.map_or(before[i], |t| before[i].min(t));
                assert_eq!(nearest[i].to_bits(), expected.to_bits(), "ray {i}");
                hits += usize::from(one.is_some());
            }
        }
        assert!(hits > 1000, "enough hits to tell: {hits}");
    }
}
