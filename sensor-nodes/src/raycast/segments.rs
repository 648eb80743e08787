//! Wall segments as the ray casters store them, and their bucketing into
//! the square cells of a uniform grid.

use std::collections::HashMap;

use super::Vec2;

/// A two-sided wall segment from `a` to `a + edge`, and the layers it
/// belongs to.
#[derive(Debug, Clone, Copy)]
pub(super) struct Segment {
    pub a: Vec2,
    pub edge: Vec2,
    pub layers: u16,
}

impl Segment {
    pub fn b(&self) -> Vec2 {
        [self.a[0] + self.edge[0], self.a[1] + self.edge[1]]
    }
}

/// The segments, with those on the same two end points (the same wall in
/// several layers, as when two layers share a map) made one, on all their
/// layers: a beam tests it once, and a hit on it reports every layer it is
/// on.
pub(super) fn merge_coincident(segments: Vec<(Vec2, Vec2, u16)>) -> Vec<Segment> {
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
