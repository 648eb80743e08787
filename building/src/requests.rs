//! Door and lift requests waiting for their step, as a model free of
//! Zenoh.
//!
//! A request takes effect at the first state after its `request_time`, as
//! a drive's `TwistStamped` does at the first state after its stamp. A
//! program in lockstep stamps a request with the time of the state it
//! answers, so the request lands at the same step every run, however far
//! behind the building's node is when the message arrives: a node whose
//! doors rest promises its answers, the world steps on without waiting for
//! it, and a request applied on arrival would start a door at whatever
//! state the node had reached. An unstamped request (`request_time` zero)
//! takes effect at the first state after the latest one the node had.

use std::collections::VecDeque;

use flotilla_messages::builtin_interfaces::Time;

/// How far, ns of sim time, a request's stamp may be ahead of the latest
/// state for it to be read as sim time. A stamp further ahead is another
/// clock's (a ROS node without `use_sim_time` stamps wall time, some
/// 1.7e9 s), and such a request is taken as unstamped rather than held
/// for decades.
pub const FURTHEST_AHEAD_NS: u64 = 60 * 1_000_000_000;

/// At most this many requests wait; beyond, the first in line is dropped
/// (a program flooding requests stamped ahead cannot grow the node).
pub const MAX_WAITING: usize = 1024;

/// How a request's stamp was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stamp {
    /// Sim time: the request waits for the first state after it.
    SimTime,
    /// Zero: the request waits for the first state after the latest.
    None,
    /// Too far ahead (or before 1970): another clock's, taken as unstamped.
    OtherClock,
}

/// Requests in the order they take effect (by stamp, then arrival).
#[derive(Debug)]
pub struct Waiting<R> {
    queued: VecDeque<(u64, R)>,
    /// The sim time of the latest state, ns.
    latest_ns: u64,
}

impl<R> Default for Waiting<R> {
    fn default() -> Self {
        Waiting { queued: VecDeque::new(), latest_ns: 0 }
    }
}

impl<R> Waiting<R> {
    /// Queues `request`, asked at `request_time`; says how the stamp was
    /// read and whether an older request was dropped to make room.
    pub fn push(&mut self, request: R, request_time: &Time) -> (Stamp, bool) {
        let stamp_ns = (request_time.sec >= 0).then(|| request_time.nanos());
        let (after_ns, stamp) = match stamp_ns {
            Some(0) => (self.latest_ns, Stamp::None),
            Some(ns) if ns <= self.latest_ns.saturating_add(FURTHEST_AHEAD_NS) => (ns, Stamp::SimTime),
            _ => (self.latest_ns, Stamp::OtherClock),
        };
        let dropped = self.queued.len() >= MAX_WAITING;
        if dropped {
            self.queued.pop_front();
        }
        let at = self.queued.partition_point(|(queued_after, _)| *queued_after <= after_ns);
        self.queued.insert(at, (after_ns, request));
        (stamp, dropped)
    }

    /// The requests that take effect at the state at `now_ns`, in order.
    pub fn take_due(&mut self, now_ns: u64) -> Vec<R> {
        self.latest_ns = self.latest_ns.max(now_ns);
        let due = self.queued.partition_point(|(after, _)| *after < now_ns);
        self.queued.drain(..due).map(|(_, request)| request).collect()
    }

    /// Whether no request waits.
    pub fn is_empty(&self) -> bool {
        self.queued.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STEP_NS: u64 = 5_000_000;

    fn at(ns: u64) -> Time {
        Time { sec: (ns / 1_000_000_000) as i32, nanosec: (ns % 1_000_000_000) as u32 }
    }

    #[test]
    fn a_stamped_request_takes_effect_at_the_state_after_its_stamp_however_late_the_node_is() {
        let mut waiting = Waiting::default();
        assert!(waiting.take_due(10 * STEP_NS).is_empty());
        // Asked in answer to state 14, while this node has had state 10.
        assert_eq!(waiting.push("open", &at(14 * STEP_NS)), (Stamp::SimTime, false));
        for step in 11..=14 {
            assert!(waiting.take_due(step * STEP_NS).is_empty(), "not yet at state {step}");
        }
        assert_eq!(waiting.take_due(15 * STEP_NS), ["open"]);
        assert!(waiting.is_empty());
    }

    #[test]
    fn an_unstamped_request_takes_effect_at_the_state_after_the_latest() {
        let mut waiting = Waiting::default();
        waiting.take_due(10 * STEP_NS);
        assert_eq!(waiting.push("open", &Time::default()), (Stamp::None, false));
        assert_eq!(waiting.take_due(11 * STEP_NS), ["open"]);
    }

    #[test]
    fn a_wall_clock_stamp_is_taken_as_no_stamp() {
        let mut waiting = Waiting::default();
        waiting.take_due(10 * STEP_NS);
        let wall = Time { sec: 1_780_000_000, nanosec: 0 };
        assert_eq!(waiting.push("open", &wall), (Stamp::OtherClock, false));
        assert_eq!(waiting.push("close", &Time { sec: -1, nanosec: 0 }), (Stamp::OtherClock, false));
        assert_eq!(waiting.take_due(11 * STEP_NS), ["open", "close"]);
    }

    #[test]
    fn requests_take_effect_in_the_order_they_were_asked() {
        let mut waiting = Waiting::default();
        waiting.take_due(10 * STEP_NS);
        waiting.push("close, asked later", &at(13 * STEP_NS));
        waiting.push("open, asked first", &at(12 * STEP_NS));
        waiting.push("open again, asked with it", &at(12 * STEP_NS));
        assert_eq!(
            waiting.take_due(14 * STEP_NS),
            ["open, asked first", "open again, asked with it", "close, asked later"]
        );
    }

    #[test]
    fn a_flood_of_requests_keeps_the_newest() {
        let mut waiting = Waiting::default();
        for i in 0..MAX_WAITING {
            assert!(!waiting.push(i, &at(1_000 * STEP_NS)).1);
        }
        assert!(waiting.push(MAX_WAITING, &at(1_000 * STEP_NS)).1, "the oldest dropped");
        let due = waiting.take_due(1_001 * STEP_NS);
        assert_eq!((due.len(), due[0], due[MAX_WAITING - 1]), (MAX_WAITING, 1, MAX_WAITING));
    }
}
