//! Which world states a plugin node's loop needs to see.
//!
//! A 10 Hz laser at 200 Hz has nothing to do at 19 of every 20 states, and
//! it has told the barrier so (its lockstep report covers them). Handing
//! those states to the node's loop anyway costs a thread wake-up, a decode
//! and a scene update each, which in lockstep (one state at a time) was a
//! third of the laser process's CPU. The gate lets the Zenoh callback drop
//! them after reading the state's first fields: a state is skipped only
//! when it lies strictly after the last one let through and no later than
//! the step the node reported done, and belongs to the description revision
//! the node knows. Anything else goes through: a re-published state (a
//! duplicate the loop recognises), an earlier step (a new world), a new
//! revision (a model spawned or deleted). The loop opens the gate whenever
//! it must see the next state whatever its step (its instances changed, a
//! world came up).
//!
//! Skipping changes no output: rates are counted in sim time and fire at
//! the first state at or after their due time (`UpdateTimer`), and a state
//! carries every body's full pose, so a state skipped brings nothing that
//! the next one let through does not.

use std::sync::atomic::{AtomicU64, Ordering};

/// Shared between a node's state subscriber (which asks [`StateGate::admits`])
/// and its loop (which sets what it may skip).
#[derive(Debug)]
pub struct StateGate {
    /// The last step let through; `NONE` before the first.
    admitted: AtomicU64,
    /// Steps up to this one may be skipped (the node reported them done).
    quiet_until: AtomicU64,
    /// The description revision the node has built its instances from.
    revision: AtomicU64,
}

const NONE: u64 = u64::MAX;

impl Default for StateGate {
    fn default() -> StateGate {
        StateGate { admitted: AtomicU64::new(NONE), quiet_until: AtomicU64::new(0), revision: AtomicU64::new(0) }
    }
}

impl StateGate {
    /// Whether the loop must see the state of `step` at `revision`; when it
    /// must, the step is remembered as the last let through.
    pub fn admits(&self, revision: u64, step: u64) -> bool {
        let last = self.admitted.load(Ordering::Acquire);
        let skip = last != NONE
            && step > last
            && step <= self.quiet_until.load(Ordering::Acquire)
            && revision == self.revision.load(Ordering::Acquire);
        if !skip {
            self.admitted.store(step, Ordering::Release);
        }
        !skip
    }

    /// Nothing of the node is due up to step `step` (its lockstep report),
    /// with its instances built from description `revision`.
    pub fn quiet_until(&self, step: u64, revision: u64) {
        self.revision.store(revision, Ordering::Release);
        self.quiet_until.store(step, Ordering::Release);
    }

    /// Let every state through until the next [`StateGate::quiet_until`].
    pub fn open(&self) {
        self.quiet_until.store(0, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skips_only_the_steps_reported_quiet_of_the_known_revision() {
        let gate = StateGate::default();
        gate.quiet_until(19, 2);
        assert!(gate.admits(2, 0), "the first state always goes through");
        gate.quiet_until(19, 2); // handled step 0: nothing due until step 20
        assert!((1..=19).all(|step| !gate.admits(2, step)));
        assert!(gate.admits(2, 20), "due");
        assert!(gate.admits(2, 20), "re-published: the loop sees the duplicate");
        gate.quiet_until(39, 2);
        assert!(gate.admits(3, 21), "a model was spawned or deleted");
        assert!(gate.admits(2, 5), "time went backwards: a new world");
        gate.quiet_until(39, 2);
        gate.open();
        assert!(gate.admits(2, 6), "opened: instances changed");
    }
}
