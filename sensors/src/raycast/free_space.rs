//! The empty space around each cell of a segment grid, found once when the
//! grid is built: how far the nearest wall cell is (clearance), and how far
//! the rows or columns of a cell's empty square stay empty (band reach).

/// Clearance is stored in a byte; farther than this counts as this far.
pub(super) const MAX_CLEARANCE_CELLS: u8 = u8::MAX;

/// Chebyshev distance transform of the occupied cells: two raster passes
/// over the 8-neighbourhood, exact for the Chebyshev metric.
pub(super) fn chebyshev_clearance(occupied: &[bool], cols: usize, rows: usize) -> Vec<u8> {
    let mut clearance: Vec<u8> = occupied.iter().map(|&o| if o { 0 } else { MAX_CLEARANCE_CELLS }).collect();
    let at = |x: usize, y: usize| y * cols + x;
    for y in 0..rows {
        for x in 0..cols {
            let mut v = clearance[at(x, y)];
            if x > 0 {
                v = v.min(clearance[at(x - 1, y)].saturating_add(1));
            }
            if y > 0 {
                v = v.min(clearance[at(x, y - 1)].saturating_add(1));
                if x > 0 {
                    v = v.min(clearance[at(x - 1, y - 1)].saturating_add(1));
                }
                if x + 1 < cols {
                    v = v.min(clearance[at(x + 1, y - 1)].saturating_add(1));
                }
            }
            clearance[at(x, y)] = v;
        }
    }
    for y in (0..rows).rev() {
        for x in (0..cols).rev() {
            let mut v = clearance[at(x, y)];
            if x + 1 < cols {
                v = v.min(clearance[at(x + 1, y)].saturating_add(1));
            }
            if y + 1 < rows {
                v = v.min(clearance[at(x, y + 1)].saturating_add(1));
                if x + 1 < cols {
                    v = v.min(clearance[at(x + 1, y + 1)].saturating_add(1));
                }
                if x > 0 {
                    v = v.min(clearance[at(x - 1, y + 1)].saturating_add(1));
                }
            }
            clearance[at(x, y)] = v;
        }
    }
    clearance
}

/// For every empty cell, how many cells beyond it towards `axis` (x = 0,
/// y = 1; `forward` for the + direction) the band of its empty square (the
/// `2·clearance − 1` rows or columns it spans) stays empty, capped at 255;
/// at least the square's half-width. Runs of empty cells along each line
/// first, then the least run over the band's lines from a sparse table of
/// minima, one line of cells across at a time.
pub(super) fn band_reach(
    occupied: &[bool],
    clearance: &[u8],
    cols: usize,
    rows: usize,
    axis: usize,
    forward: bool,
) -> Vec<u8> {
    const MAX_RUN: u16 = 256;
    let (along, across) = if axis == 0 { (cols, rows) } else { (rows, cols) };
    let index = |a: usize, b: usize| if axis == 0 { b * cols + a } else { a * cols + b };
    // Empty cells from each cell on (itself included) until an occupied
    // one or the grid's edge (nothing lies beyond it).
    let mut run = vec![0u16; cols * rows];
    for b in 0..across {
        let mut length = 0u16;
        for k in 0..along {
            let a = if forward { along - 1 - k } else { k };
            let i = index(a, b);
            length = if occupied[i] { 0 } else { (length + 1).min(MAX_RUN) };
            run[i] = length;
        }
    }
    let levels = (usize::BITS - across.leading_zeros()) as usize;
    let mut minima = vec![vec![0u16; across]; levels];
    let mut reach = vec![0u8; cols * rows];
    for a in 0..along {
        for b in 0..across {
            minima[0][b] = run[index(a, b)];
        }
        for level in 1..levels {
            let half = 1 << (level - 1);
            for b in 0..=across.saturating_sub(1 << level) {
                minima[level][b] = minima[level - 1][b].min(minima[level - 1][b + half]);
            }
        }
        for b in 0..across {
            let i = index(a, b);
            if occupied[i] {
                continue;
            }
            let half = usize::from(clearance[i] - 1);
            let (lo, hi) = (b.saturating_sub(half), (b + half).min(across - 1));
            let level = (usize::BITS - 1 - (hi - lo + 1).leading_zeros()) as usize;
            let least = minima[level][lo].min(minima[level][hi + 1 - (1 << level)]);
            reach[i] = (least - 1).min(255) as u8;
        }
    }
    reach
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic pseudo-random sequence (no RNG crate needed in tests).
    fn lcg(state: &mut u64) -> f64 {
        *state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (*state >> 11) as f64 / (1u64 << 53) as f64
    }

    #[test]
    fn band_reach_is_how_far_the_squares_rows_or_columns_stay_empty() {
        let (cols, rows) = (23, 17);
        let mut seed = 5;
        let occupied: Vec<bool> = (0..cols * rows).map(|_| lcg(&mut seed) < 0.08).collect();
        let clearance = chebyshev_clearance(&occupied, cols, rows);
        let empty = |x: i64, y: i64| {
            x < 0 || y < 0 || x >= cols as i64 || y >= rows as i64 || !occupied[y as usize * cols + x as usize]
        };
        for (axis, forward) in [(0, true), (0, false), (1, true), (1, false)] {
            let reach = band_reach(&occupied, &clearance, cols, rows, axis, forward);
            for y in 0..rows as i64 {
                for x in 0..cols as i64 {
                    let i = y as usize * cols + x as usize;
                    if occupied[i] {
                        continue;
                    }
                    // Walk the band line by line until a line across it
                    // holds an occupied cell or leaves the grid.
                    let half = i64::from(clearance[i]) - 1;
                    let step = if forward { 1 } else { -1 };
                    let mut expected = 0;
                    loop {
                        let k = (expected + 1) * step;
                        let (ax, ay) = if axis == 0 { (x + k, y) } else { (x, y + k) };
                        let off_grid =
                            if axis == 0 { ax < 0 || ax >= cols as i64 } else { ay < 0 || ay >= rows as i64 };
                        let line_empty =
                            (-half..=half).all(|j| if axis == 0 { empty(ax, ay + j) } else { empty(ax + j, ay) });
                        if off_grid || !line_empty || expected == 255 {
                            break;
                        }
                        expected += 1;
                    }
                    assert_eq!(i64::from(reach[i]), expected, "cell ({x}, {y}) axis {axis} forward {forward}");
                }
            }
        }
    }
}
