//! Following the world process a node depends on: its comings and goings,
//! re-published states, and a new world (to resynchronise with).

/// The world appearing or disappearing, as a node sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorldPresence {
    /// A world process (with this node id) is up.
    Up(String),
    /// That world process is gone.
    Down(String),
}

/// What a node should do with a world state it received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateVerdict {
    /// Already handled (the world re-published it): ignore.
    Duplicate,
    /// Handle it; with `resync`, first rebuild everything from a fresh
    /// description, because a new world process is up.
    Handle {
        /// A new world: refetch the description and start over.
        resync: bool,
    },
}

/// Follows the world process a node depends on: notices when it goes, when a
/// new one comes (a different id, or time going backwards) and re-published
/// states.
#[derive(Debug, Default)]
pub struct WorldTracker {
    world_id: Option<String>,
    last_step: Option<u64>,
    resync: bool,
}

impl WorldTracker {
    /// The world's liveliness token appeared or disappeared. True when the
    /// world that came up is the one already known: its link to this node
    /// was cut and is back, and what was sent while it was down (a lockstep
    /// report, say) may be lost.
    pub fn presence(&mut self, presence: &WorldPresence) -> bool {
        match presence {
            WorldPresence::Down(id) => {
                tracing::warn!("lost the world ({id}); keeping on, waiting for it to come back");
                false
            }
            WorldPresence::Up(id) => {
                let known = self.world_id.as_ref();
                let back = known == Some(id);
                if known.is_some_and(|known| known != id) {
                    tracing::info!("a new world is up ({id}); resynchronising");
                    self.resync = true;
                }
                self.world_id = Some(id.clone());
                back
            }
        }
    }

    /// A state of step `step` arrived.
    pub fn state(&mut self, step: u64) -> StateVerdict {
        if self.last_step == Some(step) {
            return StateVerdict::Duplicate;
        }
        // Time going backwards also means a new world.
        self.resync |= self.last_step.is_some_and(|last| step < last);
        self.last_step = Some(step);
        StateVerdict::Handle { resync: std::mem::take(&mut self.resync) }
    }

    /// Resynchronising failed (no description yet): try again next state.
    pub fn resync_failed(&mut self) {
        self.resync = true;
    }
}

#[cfg(test)]
mod tracker_tests {
    use super::*;

    #[test]
    fn duplicates_new_worlds_and_time_going_backwards() {
        let mut t = WorldTracker::default();
        assert!(!t.presence(&WorldPresence::Up("world-a".into())), "the first world");
        assert_eq!(t.state(0), StateVerdict::Handle { resync: false });
        assert_eq!(t.state(0), StateVerdict::Duplicate);
        assert_eq!(t.state(1), StateVerdict::Handle { resync: false });
        assert!(!t.presence(&WorldPresence::Down("world-a".into())));
        assert!(t.presence(&WorldPresence::Up("world-a".into())), "the same world, back after a cut link");
        assert_eq!(t.state(2), StateVerdict::Handle { resync: false });
        t.presence(&WorldPresence::Down("world-a".into()));
        assert!(!t.presence(&WorldPresence::Up("world-b".into())), "another world");
        assert_eq!(t.state(3), StateVerdict::Handle { resync: true }, "a new world id");
        assert_eq!(t.state(4), StateVerdict::Handle { resync: false });
        assert_eq!(t.state(0), StateVerdict::Handle { resync: true }, "time went backwards");
        t.resync_failed();
        assert_eq!(t.state(1), StateVerdict::Handle { resync: true }, "retried");
    }
}
