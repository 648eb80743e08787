//! Publishing on the step's critical path: at once where someone waits on
//! the message, batched where only throughput counts.
//!
//! Zenoh batches small messages: a put joins the current batch and the
//! transmit task sends it once no more bytes arrive (backing off up to
//! `batching/time_limit`, 1 ms by default). In lockstep the world waits on
//! every drive's actuation and every participant's report, and in realtime a
//! command waits on its actuation, so those go out as express messages, sent
//! at once with whatever is batched before them (order is kept). In fast
//! mode nobody waits on a single message, and batching them saves a system
//! call and a wake-up each (office-50 ran 10–20 % faster batched, and 20 %
//! slower in lockstep).

use crate::control::ClockMode;

/// Whether messages that gate a step should skip batching in `clock` mode
/// (unknown before the world's first status: treated as urgent).
pub fn urgent(clock: Option<ClockMode>) -> bool {
    !matches!(clock, Some(ClockMode::Fast))
}

/// How a node's outputs (scans, odometry, tf) are published in `clock`
/// mode: lossless (`Block`) where runs are repeatable (lockstep) or paced
/// by the slowest node (fast), so that a congested link slows the run
/// instead of losing a message; best effort (`Drop`), as ROS sensor data is,
/// where the wall clock sets the pace (realtime, external). Unknown before
/// the world's first status: treated as lockstep.
pub fn output_congestion_control(clock: Option<ClockMode>) -> zenoh::qos::CongestionControl {
    match clock {
        Some(ClockMode::Realtime | ClockMode::External) => zenoh::qos::CongestionControl::Drop,
        Some(ClockMode::Fast | ClockMode::Lockstep) | None => zenoh::qos::CongestionControl::Block,
    }
}

/// Two publishers on one key, express and batched; [`StepPublisher::put`]
/// picks one per message.
pub struct StepPublisher {
    express: zenoh::pubsub::Publisher<'static>,
    batched: zenoh::pubsub::Publisher<'static>,
}

impl StepPublisher {
    /// Declares both publishers on `key`, blocking rather than dropping
    /// when the link is congested (a lost step message would stall the
    /// barrier).
    pub async fn declare(session: &zenoh::Session, key: String) -> Result<StepPublisher, String> {
        let declare = |express: bool| {
            session
                .declare_publisher(key.clone())
                .congestion_control(zenoh::qos::CongestionControl::Block)
                .express(express)
        };
        let express = declare(true).await.map_err(|e| format!("cannot publish on {key}: {e}"))?;
        let batched = declare(false).await.map_err(|e| format!("cannot publish on {key}: {e}"))?;
        Ok(StepPublisher { express, batched })
    }

    /// Publishes `payload`, at once when `urgent` (see [`urgent`]).
    pub async fn put(&self, payload: Vec<u8>, urgent: bool) -> zenoh::Result<()> {
        self.pick(urgent).put(payload).await
    }

    /// [`StepPublisher::put`] from a thread outside any async context, e.g.
    /// in a subscriber's callback.
    pub fn put_now(&self, payload: Vec<u8>, urgent: bool) -> zenoh::Result<()> {
        use zenoh::Wait;
        self.pick(urgent).put(payload).wait()
    }

    fn pick(&self, urgent: bool) -> &zenoh::pubsub::Publisher<'static> {
        if urgent {
            &self.express
        } else {
            &self.batched
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_are_lossless_unless_the_wall_clock_sets_the_pace() {
        use zenoh::qos::CongestionControl::{Block, Drop};
        assert_eq!(output_congestion_control(Some(ClockMode::Lockstep)), Block);
        assert_eq!(output_congestion_control(Some(ClockMode::Fast)), Block);
        assert_eq!(output_congestion_control(None), Block);
        assert_eq!(output_congestion_control(Some(ClockMode::Realtime)), Drop);
        assert_eq!(output_congestion_control(Some(ClockMode::External)), Drop);
    }

    #[test]
    fn only_fast_mode_batches_step_messages() {
        assert!(!urgent(Some(ClockMode::Fast)));
        for clock in [None, Some(ClockMode::Realtime), Some(ClockMode::Lockstep), Some(ClockMode::External)] {
            assert!(urgent(clock), "{clock:?}");
        }
    }
}
