//! Publishing on the step's critical path: at once where someone waits on
//! the message, batched where only throughput counts (the policy is
//! [`flotilla_wire::delivery`]).

use flotilla_wire::delivery::OutputDelivery;
use zenoh::qos::CongestionControl;

use crate::error::{Error, Result};

/// Zenoh's congestion control for a node's outputs.
pub fn congestion_control(delivery: OutputDelivery) -> CongestionControl {
    match delivery {
        OutputDelivery::Lossless => CongestionControl::Block,
        OutputDelivery::BestEffort => CongestionControl::Drop,
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
    pub async fn declare(session: &zenoh::Session, key: String) -> Result<StepPublisher> {
        StepPublisher::declare_now(session, key)
    }

    /// [`StepPublisher::declare`] from a thread outside any async context
    /// (declaring is local and completes at once).
    pub fn declare_now(session: &zenoh::Session, key: String) -> Result<StepPublisher> {
        StepPublisher::declare_with(session, key, CongestionControl::Block)
    }

    /// Declares both publishers on `key`, dropping messages when the link
    /// is congested: for copies a reader can afford to lose but must not
    /// be held up by (a standby world's states).
    pub fn declare_droppable(session: &zenoh::Session, key: String) -> Result<StepPublisher> {
        StepPublisher::declare_with(session, key, CongestionControl::Drop)
    }

    fn declare_with(session: &zenoh::Session, key: String, congestion: CongestionControl) -> Result<StepPublisher> {
        use zenoh::Wait;
        let declare = |express: bool| {
            session
                .declare_publisher(key.clone())
                .congestion_control(congestion)
                .express(express)
                .wait()
                .map_err(Error::zenoh("publish on", key.clone()))
        };
        Ok(StepPublisher { express: declare(true)?, batched: declare(false)? })
    }

    /// Publishes `payload`, at once when `urgent` (see [`flotilla_wire::delivery::urgent`]).
    pub async fn put(&self, payload: impl Into<zenoh::bytes::ZBytes>, urgent: bool) -> zenoh::Result<()> {
        self.pick(urgent).put(payload).await
    }

    /// [`StepPublisher::put`] from a thread outside any async context, e.g.
    /// in a subscriber's callback.
    pub fn put_now(&self, payload: impl Into<zenoh::bytes::ZBytes>, urgent: bool) -> zenoh::Result<()> {
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
