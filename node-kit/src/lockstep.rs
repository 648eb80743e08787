//! Taking part in the lockstep barrier (the handshake is described in
//! [`flotilla_protocol::lockstep`]).

use flotilla_protocol::codec::encode;
use flotilla_protocol::lockstep::StepDone;
use flotilla_protocol::Keys;

use crate::error::{Error, Result};
use crate::step_publisher::StepPublisher;

/// Declares a participant's token and reports its steps.
pub struct LockstepReporter {
    _token: zenoh::liveliness::LivelinessToken,
    publisher: StepPublisher,
}

impl LockstepReporter {
    /// Joins the barrier of the simulation as `node`.
    pub async fn join(session: &zenoh::Session, keys: &Keys, node: &str) -> Result<LockstepReporter> {
        let key = keys.lockstep(node);
        let token =
            session.liveliness().declare_token(&key).await.map_err(Error::zenoh("declare the token", key.clone()))?;
        let publisher = StepPublisher::declare(session, key).await?;
        Ok(LockstepReporter { _token: token, publisher })
    }

    /// Reports that step `step` is done, at once when `urgent` (see
    /// [`flotilla_protocol::delivery::urgent`]).
    pub async fn done(&self, step: u64, urgent: bool) {
        if let Err(e) = self.publisher.put(encode(&StepDone { step }), urgent).await {
            tracing::warn!("cannot report lockstep step {step}: {e}");
        }
    }

    /// [`LockstepReporter::done`] from a thread outside any async context.
    pub fn done_now(&self, step: u64, urgent: bool) {
        if let Err(e) = self.publisher.put_now(encode(&StepDone { step }), urgent) {
            tracing::warn!("cannot report lockstep step {step}: {e}");
        }
    }
}
