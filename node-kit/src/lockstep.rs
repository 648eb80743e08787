//! Taking part in the lockstep barrier (the handshake is described in
//! [`flotilla_wire::lockstep`]).

use flotilla_wire::lockstep::encode_step_done;
use flotilla_wire::Keys;

use crate::error::{Error, Result};
use crate::step_publisher::StepPublisher;

/// Declares a participant's token and reports its steps. A participant
/// that leaves reports the last state it worked on first: Zenoh sends a
/// token's going ahead of the messages sent before it, so without that
/// report the world could step on before those messages (its last
/// commands) reached their nodes.
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
    /// [`flotilla_wire::delivery::urgent`]).
    pub async fn done(&self, step: u64, urgent: bool) {
        if let Err(e) = self.publisher.put(encode_step_done(step, false), urgent).await {
            tracing::warn!("cannot report lockstep step {step}: {e}");
        }
    }

    /// [`LockstepReporter::done`] from a thread outside any async context.
    pub fn done_now(&self, step: u64, urgent: bool) {
        self.report_now(step, urgent, false);
    }

    /// [`LockstepReporter::done_now`], saying whether the reporter's work
    /// commands no robot (see [`flotilla_wire::lockstep`]).
    pub fn report_now(&self, step: u64, urgent: bool, commands_nothing: bool) {
        if let Err(e) = self.publisher.put_now(encode_step_done(step, commands_nothing), urgent) {
            tracing::warn!("cannot report lockstep step {step}: {e}");
        }
    }
}
