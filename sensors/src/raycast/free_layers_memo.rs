//! A value per grid cell, worked out the first time it is asked for and
//! shared by every thread scanning with the grid.
//!
//! The laser asks at every scan which layers its origin is in free space
//! in (two probe rays per layer); a robot stays in a cell for many scans
//! and many robots pass through the same cells, so each cell's answer is
//! kept. The answer does not depend on which thread works it out first,
//! so relaxed atomics are enough: two threads may both work it out and
//! store the same bits.

use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};

/// Set in a cell's word once its layers are known (they are the low 16
/// bits).
const KNOWN: u32 = 1 << 16;

/// Per-cell layer bits, each worked out on first use.
pub(super) struct FreeLayersMemo {
    cells: Vec<AtomicU32>,
}

impl FreeLayersMemo {
    /// A memo of `cells` cells, none known yet.
    pub(super) fn new(cells: usize) -> FreeLayersMemo {
        FreeLayersMemo { cells: std::iter::repeat_with(|| AtomicU32::new(0)).take(cells).collect() }
    }

    /// Cell `cell`'s layers: kept ones, or `work_out()` kept from now on.
    #[inline]
    pub(super) fn get_or_work_out(&self, cell: usize, work_out: impl FnOnce() -> u16) -> u16 {
        let word = self.cells[cell].load(Ordering::Relaxed);
        if word & KNOWN != 0 {
            return word as u16;
        }
        let layers = work_out();
        self.cells[cell].store(KNOWN | u32::from(layers), Ordering::Relaxed);
        layers
    }

    /// Bytes held.
    pub(super) fn heap_bytes(&self) -> usize {
        self.cells.len() * std::mem::size_of::<AtomicU32>()
    }
}

/// A copy knows what the original knew.
impl Clone for FreeLayersMemo {
    fn clone(&self) -> FreeLayersMemo {
        FreeLayersMemo { cells: self.cells.iter().map(|c| AtomicU32::new(c.load(Ordering::Relaxed))).collect() }
    }
}

impl fmt::Debug for FreeLayersMemo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let known = self.cells.iter().filter(|c| c.load(Ordering::Relaxed) & KNOWN != 0).count();
        write!(f, "FreeLayersMemo {{ {known} of {} cells known }}", self.cells.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_is_worked_out_once_and_kept_even_when_no_layer_is_free() {
        let memo = FreeLayersMemo::new(4);
        let mut calls = 0;
        for _ in 0..3 {
            assert_eq!(
                memo.get_or_work_out(2, || {
                    calls += 1;
                    0
                }),
                0
            );
        }
        assert_eq!(calls, 1, "an answer of no layers is kept too");
        assert_eq!(memo.get_or_work_out(1, || 0b1010), 0b1010);
        assert_eq!(memo.clone().get_or_work_out(1, || unreachable!("a copy keeps what is known")), 0b1010);
    }
}
