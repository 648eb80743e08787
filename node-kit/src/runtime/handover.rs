//! Which thread answers an arrival, for a plugin that answers on the
//! receiving thread: that thread also drives the process's sockets
//! (`crate::zenoh_threads`), so it must never wait — not for a send, and
//! not for the node's lock while the main loop holds it to send. A send
//! there may wait for room on a slow link; with the socket thread waiting
//! on the lock, no room ever comes, and after 5 s Zenoh closes the link
//! (a recorder's link, in a busy simulation with `--record`, lost
//! odometry this way). So an arrival the receiving thread cannot
//! answer at once goes to the main loop, as do the lossless messages an
//! answer made (a slow subscriber's or a recorder's link may have no room
//! for them), and
//! later arrivals follow there until the main loop has caught up, so that
//! arrivals are answered, and their messages sent, in the order they came.

use std::sync::atomic::{AtomicUsize, Ordering};

use flotilla_wire::delivery::OutputDelivery;

/// Whether a receiving thread may send what an answer made: not when it
/// made messages that go out lossless (outputs in fast and lockstep mode,
/// and a recorder's batch in every mode), whose send may wait for room on
/// a slow subscriber's link. (An actuation and a lockstep report go to the
/// world, which reads its links on threads of its own; a moment only added
/// to the batch for recorders being filled sends nothing, see
/// `crate::recording`.)
pub(crate) fn may_send_here(delivery: OutputDelivery, made_messages: bool, recording: bool) -> bool {
    !made_messages || (delivery == OutputDelivery::BestEffort && !recording)
}

/// Arrivals handed to the main loop and not yet answered there, counted
/// outside the node's lock so that a receiving thread can read it without
/// waiting for the lock.
#[derive(Debug, Default)]
pub(crate) struct Handover {
    on_main_loop: AtomicUsize,
}

impl Handover {
    /// Whether arrivals handed earlier still wait on the main loop: a new
    /// one must follow them there.
    pub(crate) fn queued(&self) -> bool {
        self.on_main_loop.load(Ordering::Acquire) > 0
    }

    /// An arrival is handed to the main loop (count it before sending it).
    pub(crate) fn hand(&self) {
        self.on_main_loop.fetch_add(1, Ordering::AcqRel);
    }

    /// The main loop answered an arrival handed to it.
    pub(crate) fn answered(&self) {
        // Never below zero, even if a caller answered one it was not handed.
        let _ = self.on_main_loop.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lossless_messages_are_sent_by_the_main_loop_and_the_rest_where_they_were_made() {
        assert!(!may_send_here(OutputDelivery::Lossless, true, false), "fast and lockstep outputs");
        assert!(
            may_send_here(OutputDelivery::BestEffort, true, false),
            "realtime outputs are dropped, never waited on"
        );
        assert!(
            !may_send_here(OutputDelivery::BestEffort, true, true),
            "a recorder's batch waits for room on its link"
        );
        assert!(may_send_here(OutputDelivery::Lossless, false, true), "an actuation or a report alone");
    }

    #[test]
    fn arrivals_follow_those_handed_before_them_until_the_main_loop_catches_up() {
        let handover = Handover::default();
        assert!(!handover.queued(), "nothing handed: the receiving thread may answer");
        handover.hand();
        handover.hand();
        assert!(handover.queued(), "two wait on the main loop: the next one follows them");
        handover.answered();
        assert!(handover.queued());
        handover.answered();
        assert!(!handover.queued(), "all answered: the receiving thread may answer again");
        handover.answered();
        assert!(!handover.queued(), "the count does not go below zero");
        handover.hand();
        assert!(handover.queued());
    }
}
