//! How urgently and how reliably a node's messages must travel in each clock
//! mode: policy only; the node kit maps it onto Zenoh's publisher options.
//!
//! Zenoh batches small messages: a put joins the current batch and the
//! transmit task sends it once no more bytes arrive (backing off up to
//! `batching/time_limit`, 1 ms by default). In lockstep the world waits on
//! every drive's actuation and every participant's report, and in realtime a
//! command waits on its actuation, so those go out as express messages, sent
//! at once with whatever is batched before them (order is kept). In fast
//! mode nobody waits on a single message, and batching them saves a system
//! call and a wake-up each (office-50 ran 10–20 % faster batched, and 20 %
//! slower in lockstep). The world refines this for its states in lockstep:
//! one it waits on no answer to is batched too, since the world steps on at
//! once and its next express state takes the batch along.

use crate::control::ClockMode;

/// Whether messages that gate a step should skip batching in `clock` mode
/// (unknown before the world's first status: treated as urgent).
pub fn urgent(clock: Option<ClockMode>) -> bool {
    !matches!(clock, Some(ClockMode::Fast))
}

/// What a congested link does to a node's outputs (scans, odometry, tf).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OutputDelivery {
    /// The publisher waits for room: a congested link slows the run
    /// instead of losing a message.
    Lossless,
    /// The message is dropped, as ROS sensor data is.
    BestEffort,
}

/// Outputs are lossless where runs are repeatable (lockstep) or paced by the
/// slowest node (fast); best effort where the wall clock sets the pace
/// (realtime, external). Unknown before the world's first status: treated
/// as lockstep.
pub fn output_delivery(clock: Option<ClockMode>) -> OutputDelivery {
    match clock {
        Some(ClockMode::Realtime | ClockMode::External) => OutputDelivery::BestEffort,
        Some(ClockMode::Fast | ClockMode::Lockstep) | None => OutputDelivery::Lossless,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_are_lossless_unless_the_wall_clock_sets_the_pace() {
        use OutputDelivery::{BestEffort, Lossless};
        assert_eq!(output_delivery(Some(ClockMode::Lockstep)), Lossless);
        assert_eq!(output_delivery(Some(ClockMode::Fast)), Lossless);
        assert_eq!(output_delivery(None), Lossless);
        assert_eq!(output_delivery(Some(ClockMode::Realtime)), BestEffort);
        assert_eq!(output_delivery(Some(ClockMode::External)), BestEffort);
    }

    #[test]
    fn only_fast_mode_batches_step_messages() {
        assert!(!urgent(Some(ClockMode::Fast)));
        for clock in [None, Some(ClockMode::Realtime), Some(ClockMode::Lockstep), Some(ClockMode::External)] {
            assert!(urgent(clock), "{clock:?}");
        }
    }
}
