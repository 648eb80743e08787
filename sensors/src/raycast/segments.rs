//! Wall segments as the ray casters store them, and their bucketing into
//! the square cells of a uniform grid.

use std::collections::HashMap;

use super::Vec2;

/// A wall segment as the ray casters are given it: from `a` to `b`, on
/// `layers`. In the layers of `solid_on_left` it outlines an obstacle that
/// lies on its left, walking from `a` to `b` (a map image's walls), so a
/// beam from free space meets it only after some nearer wall; in its other
/// layers it is a bare line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Wall {
    /// Start point, m.
    pub a: Vec2,
    /// End point, m.
    pub b: Vec2,
    /// Layers it is on.
    pub layers: u16,
    /// Those of `layers` in which the obstacle is on its left.
    pub solid_on_left: u16,
}

impl From<(Vec2, Vec2, u16)> for Wall {
    /// A bare line on `layers`, no side solid.
    fn from((a, b, layers): (Vec2, Vec2, u16)) -> Wall {
        Wall { a, b, layers, solid_on_left: 0 }
    }
}

/// A two-sided wall segment from `a` to `a + edge`, the layers it belongs
/// to, and the layers in which each of its sides is solid (see [`Wall`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Segment {
    pub a: Vec2,
    pub edge: Vec2,
    pub layers: u16,
    /// Layers in which the obstacle is on its left, from `a` along `edge`.
    pub solid_left: u16,
    /// Layers in which the obstacle is on its right.
    pub solid_right: u16,
}

impl Segment {
    pub fn b(&self) -> Vec2 {
        [self.a[0] + self.edge[0], self.a[1] + self.edge[1]]
    }

    /// Distance from `p` to the nearest point of the segment, m.
    pub fn distance_m(&self, p: Vec2) -> f64 {
        let ap = [p[0] - self.a[0], p[1] - self.a[1]];
        let length2 = self.edge[0] * self.edge[0] + self.edge[1] * self.edge[1];
        let along =
            if length2 > 0.0 { ((ap[0] * self.edge[0] + ap[1] * self.edge[1]) / length2).clamp(0.0, 1.0) } else { 0.0 };
        (ap[0] - along * self.edge[0]).hypot(ap[1] - along * self.edge[1])
    }

    /// Which side of the segment's line `origin` is on: Some(true) on the
    /// left, Some(false) on the right, None on the line (within rounding).
    #[inline(always)]
    pub fn side_of(&self, origin: Vec2) -> Option<bool> {
        // Twice the area of the triangle (origin, a, b): positive when the
        // origin is on the left, its magnitude the distance times |edge|.
        let ao = [self.a[0] - origin[0], self.a[1] - origin[1]];
        let side = ao[0] * self.edge[1] - ao[1] * self.edge[0];
        let slack = 1e-9 * (self.edge[0].abs() + self.edge[1].abs()) * (1.0 + ao[0].abs() + ao[1].abs());
        (side.abs() > slack).then_some(side > 0.0)
    }

    /// The layers in which a beam from `origin` meets this segment from its
    /// solid side, where a wall of the same layer must have stopped it
    /// first if `origin` is in free space there (none from on its line).
    #[inline(always)]
    pub fn solid_towards(&self, origin: Vec2) -> u16 {
        match self.side_of(origin) {
            Some(true) => self.solid_left,
            Some(false) => self.solid_right,
            None => 0,
        }
    }
}

/// The segments, with those on the same two end points (the same wall in
/// several layers, as when two layers share a map) made one, on all their
/// layers: a beam tests it once, and a hit on it reports every layer it is
/// on.
pub(super) fn merge_coincident(walls: impl IntoIterator<Item = Wall>) -> Vec<Segment> {
    let walls = walls.into_iter();
    let mut merged: Vec<Segment> = Vec::with_capacity(walls.size_hint().0);
    let mut first_of: HashMap<[u64; 4], usize> = HashMap::with_capacity(walls.size_hint().0);
    for Wall { a, b, layers, solid_on_left } in walls {
        let solid_on_left = solid_on_left & layers;
        let (p, q) = if (a[0], a[1]) <= (b[0], b[1]) { (a, b) } else { (b, a) };
        // -0.0 and 0.0 are the same point.
        let key = [p[0], p[1], q[0], q[1]].map(|v| (v + 0.0).to_bits());
        match first_of.get(&key) {
            Some(&i) => {
                let kept = &mut merged[i];
                kept.layers |= layers;
                // The same wall drawn the other way round has its sides swapped.
                if kept.a == a {
                    kept.solid_left |= solid_on_left;
                } else {
                    kept.solid_right |= solid_on_left;
                }
            }
            None => {
                first_of.insert(key, merged.len());
                merged.push(Segment {
                    a,
                    edge: [b[0] - a[0], b[1] - a[1]],
                    layers,
                    solid_left: solid_on_left,
                    solid_right: 0,
                });
            }
        }
    }
    merged
}

/// Files every segment in every cell of a `cols` × `rows` grid of `cell_m`
/// squares (cell (0, 0) with its corner at `origin`) that its closed square,
/// widened by a hair, touches: so a segment on a cell border is in the cells
/// on both sides. Returns compressed rows: the indices of cell `i`'s
/// segments are `members[start[i]..start[i + 1]]`.
pub(super) fn bucket_into_cells(
    segments: &[Segment],
    origin: Vec2,
    cell_m: f64,
    cols: usize,
    rows: usize,
) -> (Vec<u32>, Vec<u32>) {
    let slack = 1e-9;
    let to_cells = |p: Vec2| [(p[0] - origin[0]) / cell_m, (p[1] - origin[1]) / cell_m];
    let mut counts = vec![0u32; cols * rows + 1];
    let mut pairs: Vec<(u32, u32)> = Vec::new();
    for (i, s) in segments.iter().enumerate() {
        let a = to_cells(s.a);
        let b = to_cells(s.b());
        let (x0, x1) = ((a[0].min(b[0]) - slack).floor(), (a[0].max(b[0]) + slack).floor());
        let (y0, y1) = ((a[1].min(b[1]) - slack).floor(), (a[1].max(b[1]) + slack).floor());
        let normal = [a[1] - b[1], b[0] - a[0]];
        let length = normal[0].hypot(normal[1]);
        for y in (y0.max(0.0) as usize)..=(y1 as usize).min(rows - 1) {
            for x in (x0.max(0.0) as usize)..=(x1 as usize).min(cols - 1) {
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
                    let cell = y * cols + x;
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
    let mut members = vec![0u32; total as usize];
    for (cell, i) in pairs {
        members[fill[cell as usize] as usize] = i;
        fill[cell as usize] += 1;
    }
    (start, members)
}
