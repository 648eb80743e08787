//! Whether anyone listens, per output key: flags that a Zenoh matching
//! listener sets and a node's loop reads before every message it might
//! send.
//!
//! The flags are kept side by side, 64 to a cache line, in the order they
//! are made. An odometry node of a thousand robots reads four flags per
//! robot at every update; as separate allocations each read missed the
//! cache (half of that node's time in warehouse-1000), while a thousand
//! robots' flags in blocks are about 60 lines that stay cached.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Flags per block: one cache line of bytes.
const PER_BLOCK: usize = 64;

#[derive(Debug)]
#[repr(align(64))]
struct Block([AtomicBool; PER_BLOCK]);

/// One flag, shared between whoever sets it and whoever reads it; clones
/// are the same flag.
#[derive(Debug, Clone)]
pub struct Flag {
    block: Arc<Block>,
    index: usize,
}

impl Flag {
    /// The flag's value.
    pub fn get(&self) -> bool {
        self.block.0[self.index].load(Ordering::Relaxed)
    }

    /// Sets the flag.
    pub fn set(&self, value: bool) {
        self.block.0[self.index].store(value, Ordering::Relaxed);
    }
}

/// Makes flags, each next to the one made before. A block lives as long
/// as any flag in it; a slot is not reused, so a node that makes flags
/// again and again (keys republished after a rebuild) leaves at most a
/// block's worth unused per block still alive.
#[derive(Debug, Default)]
pub struct Flags {
    current: Option<Arc<Block>>,
    used: usize,
}

impl Flags {
    /// A new flag, set to `value`.
    pub fn make(&mut self, value: bool) -> Flag {
        let block = match &self.current {
            Some(block) if self.used < PER_BLOCK => block.clone(),
            _ => {
                let block = Arc::new(Block(std::array::from_fn(|_| AtomicBool::new(false))));
                self.current = Some(block.clone());
                self.used = 0;
                block
            }
        };
        let flag = Flag { block, index: self.used };
        self.used += 1;
        flag.set(value);
        flag
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_flag_is_its_own_and_clones_share_it() {
        let mut flags = Flags::default();
        let made: Vec<Flag> = (0..200).map(|i| flags.make(i % 3 == 0)).collect();
        let reader = made[130].clone();
        made[130].set(true);
        made[129].set(false);
        assert!(reader.get(), "a clone sees what the setter set");
        let values: Vec<bool> = made.iter().map(Flag::get).collect();
        let expected: Vec<bool> = (0..200).map(|i| i == 130 || (i % 3 == 0 && i != 129)).collect();
        assert_eq!(values, expected, "setting one flag leaves its neighbours alone");
    }

    #[test]
    fn flags_made_in_turn_share_blocks() {
        let mut flags = Flags::default();
        let made: Vec<Flag> = (0..130).map(|_| flags.make(false)).collect();
        let blocks: std::collections::BTreeSet<*const Block> = made.iter().map(|f| Arc::as_ptr(&f.block)).collect();
        assert_eq!(blocks.len(), 3, "130 flags in blocks of {PER_BLOCK}");
        assert_eq!(std::mem::align_of::<Block>(), 64, "a block is one cache line");
    }
}
