//! A node's publishers (see [`Publishers`]): its outputs, declared as
//! their keys first come and told whether anyone subscribes, its
//! actuation, and its batches for recorders.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use flotilla_wire::delivery::OutputDelivery;
use flotilla_wire::Keys;
use zenoh::qos::CongestionControl;
use zenoh::Wait;

use super::flags::Flag;
use super::plugin::Outbox;
use super::recorder_batch::PendingBatch;
use crate::error::{Error, Result};
use crate::recorders::RecordersOnKeys;
use crate::step_publisher::{congestion_control, StepPublisher};

/// A node's publishers: one per output key and congestion control (the
/// clock mode can change while the node runs), the actuation's and the
/// recorders' batches'.
#[derive(Default)]
pub(crate) struct Publishers {
    outputs: HashMap<(String, CongestionControl), zenoh::pubsub::Publisher<'static>>,
    /// Output publishers declared less than [`MATCHING_SETTLES_IN`] ago,
    /// whose subscribed flag is still the provisional "yes".
    unconfirmed: Vec<Unconfirmed>,
    actuation: Option<StepPublisher>,
    pub(crate) recording: Option<zenoh::pubsub::Publisher<'static>>,
    /// The keys a recorder still takes on the keys themselves, and the
    /// watch of its tokens that keeps them.
    pub(crate) recorders_on_keys: Arc<RecordersOnKeys>,
    pub(crate) recorders_on_keys_watch: Option<zenoh::pubsub::Subscriber<()>>,
    /// While a recorder listens, per message being published, whether a
    /// subscriber of its key wants it too (kept for its memory).
    on_keys: Vec<bool>,
}

/// How long after a publisher is declared Zenoh may still be learning
/// which subscribers match it. A client or peer asks the router for the
/// subscribers of a new publisher's key and hears back a moment later;
/// until then Zenoh says "no match" even where a subscriber has been
/// waiting all along (its matching listener then reports the match as a
/// change). A no before this is not believed.
pub const MATCHING_SETTLES_IN: Duration = Duration::from_secs(1);

/// An output publisher whose "nobody subscribes" is not yet believed.
struct Unconfirmed {
    slot: (String, CongestionControl),
    flag: Flag,
    declared_at: Instant,
}

impl Publishers {
    /// Publishes every message queued in `outbox`, declaring publishers for
    /// new keys. Synchronous: it runs on receiving threads as well as on
    /// the main loop, and a Zenoh put completes at once either way.
    /// While a recorder listens, the messages are added to the batch for
    /// recorders as a moment (see `super::recorder_batch`), which goes
    /// first if any of them also goes on its key to a recorder that still
    /// takes that key there (see [`RecordersOnKeys`]); each then goes on
    /// its key only if a subscriber there wants it: the recorder takes a
    /// topic from the batches once one has it, and ignores what reaches it
    /// on the key after (see `flotilla_record`). Returns when the batch
    /// must go for its age, if this moment started it.
    pub(crate) fn publish(
        &mut self,
        session: &zenoh::Session,
        outbox: &mut Outbox,
        delivery: OutputDelivery,
    ) -> Option<Instant> {
        self.confirm_matching();
        let congestion = congestion_control(delivery);
        // A moment with messages written straight into the batch (see
        // `Outbox::put_encoded`) is closed here, with the rest.
        let recording = self.recording.is_some() && outbox.makes_batch_moment();
        let mut items = outbox.take_items();
        let mut started = None;
        if recording {
            self.offer_shared_memory(session, &mut outbox.batch);
            // Whether each message also goes on its key: one lookup each.
            self.on_keys.clear();
            self.on_keys.extend(items.iter().map(|(key, _)| outbox.subscribed(key)));
            outbox.batch.add(outbox.moment_ns(), &items);
            if outbox.batch.take_started() {
                started = outbox.batch.due_at();
            }
            if outbox.batch.is_full() || batch_goes_first(&items, &self.on_keys, &self.recorders_on_keys) {
                self.send_batch(&mut outbox.batch);
            }
        }
        for (index, (key, payload)) in items.drain(..).enumerate() {
            if recording && !self.on_keys[index] {
                outbox.recycle_message(key, payload);
                continue;
            }
            let slot = (key, congestion);
            if !self.outputs.contains_key(&slot) && outbox.unwatched(&slot.0) {
                // The first message of a key whose folder shows no
                // subscriber yet: out without declaring a publisher.
                if let Err(e) = session.put(&slot.0, payload).congestion_control(congestion).wait() {
                    tracing::warn!("cannot publish on {}: {e}", slot.0);
                }
                continue;
            }
            if !self.outputs.contains_key(&slot) {
                match declare_output(session, &slot.0, congestion, outbox) {
                    Ok((publisher, flag)) => {
                        self.outputs.insert(slot.clone(), publisher);
                        self.unconfirmed.push(Unconfirmed { slot: slot.clone(), flag, declared_at: Instant::now() });
                    }
                    Err(e) => {
                        tracing::warn!("{e}");
                        continue;
                    }
                }
            }
            if let Some(publisher) = self.outputs.get(&slot) {
                if let Err(e) = publisher.put(payload).wait() {
                    tracing::warn!("cannot publish on {}: {e}", slot.0);
                }
            }
        }
        outbox.restore(items);
        started
    }

    /// Whether what `outbox` holds only goes into the batch for recorders,
    /// without filling it: nothing is sent, so a receiving thread may
    /// publish it (see `super::handover`).
    pub(crate) fn only_batches(&self, outbox: &Outbox) -> bool {
        let items = outbox.items();
        self.recording.is_some()
            && outbox.makes_batch_moment()
            && outbox.batch.takes_without_sending(outbox.moment_ns(), items)
            && items.iter().all(|(key, _)| !outbox.subscribed(key))
    }

    /// Gives the batches for recorders the session's shared memory once it
    /// is ready, asked for only once a recorder listens: made at every
    /// node's start, the pools were 4 MiB of locked memory each even
    /// without a recorder, and more pools made while processes start make
    /// Zenoh 1.10's removal of pools it takes for orphans (docs/several-machines.md, "Shared
    /// memory on one machine") likelier. The first ask starts making it;
    /// until it is ready, batches are written in process memory.
    fn offer_shared_memory(&mut self, session: &zenoh::Session, batch: &mut PendingBatch) {
        if batch.wants_shared_memory() {
            if let zenoh::shm::ShmProviderState::Ready(shared) = session.get_shm_provider() {
                batch.use_shared_memory(shared);
            }
        }
    }

    /// Sends `batch`, the batch for recorders, if it has a moment.
    pub(crate) fn send_batch(&mut self, batch: &mut PendingBatch) {
        let (Some(publisher), Some(batch)) = (&self.recording, batch.take()) else { return };
        // Numbered even if it fails to go: the recorder sees the gap.
        if let Err(e) = publisher.put(batch).wait() {
            tracing::warn!("cannot send the recorders their batch: {e}");
        }
    }

    /// Sets the subscribed flags of the publishers declared
    /// [`MATCHING_SETTLES_IN`] ago or more to what Zenoh now says.
    fn confirm_matching(&mut self) {
        if self.unconfirmed.is_empty() {
            return;
        }
        let outputs = &self.outputs;
        self.unconfirmed.retain(|pending| {
            if pending.declared_at.elapsed() < MATCHING_SETTLES_IN {
                return true;
            }
            if let Some(publisher) = outputs.get(&pending.slot) {
                let matching = publisher.matching_status().wait().map_or(true, |status| status.matching());
                pending.flag.set(matching);
            }
            false
        });
    }

    /// Publishes an actuation (which the world also takes as the lockstep
    /// report of its step), declaring the publisher at the first.
    pub(crate) fn actuate(
        &mut self,
        session: &zenoh::Session,
        keys: &Keys,
        node: &str,
        payload: Vec<u8>,
        urgent: bool,
    ) {
        if self.actuation.is_none() {
            match StepPublisher::declare_now(session, keys.actuation(node)) {
                Ok(publisher) => self.actuation = Some(publisher),
                Err(e) => {
                    tracing::warn!("{e}");
                    return;
                }
            }
        }
        if let Some(publisher) = &self.actuation {
            if let Err(e) = publisher.put_now(payload, urgent) {
                tracing::warn!("cannot publish actuation: {e}");
            }
        }
    }
}

/// Whether the batch for recorders must go before a moment's `items`, of
/// which those marked in `on_keys` also go on their keys: it must when a
/// recorder takes one of those keys there, not when only other
/// subscribers want them.
fn batch_goes_first(items: &[(String, Vec<u8>)], on_keys: &[bool], recorders: &RecordersOnKeys) -> bool {
    on_keys.contains(&true)
        && recorders
            .takes_any(items.iter().zip(on_keys).filter(|(_, &on_key)| on_key).map(|((key, _), _)| key.as_str()))
}

/// Declares the publisher of an output key, with a matching listener that
/// keeps [`Outbox::wants`] true exactly while a subscriber matches it; its
/// flag starts true, as Zenoh may not know the subscribers of a new key yet
/// (see [`MATCHING_SETTLES_IN`]).
fn declare_output(
    session: &zenoh::Session,
    key: &str,
    congestion: CongestionControl,
    outbox: &mut Outbox,
) -> Result<(zenoh::pubsub::Publisher<'static>, Flag)> {
    let publisher = session
        .declare_publisher(key.to_string())
        .congestion_control(congestion)
        .wait()
        .map_err(Error::zenoh("publish on", key))?;
    let flag = outbox.subscribed_flag(key);
    flag.set(true);
    // Called at once (in `wait`) when a subscriber is known to match, then
    // on every change.
    let listening = flag.clone();
    let listener =
        publisher.matching_listener().callback(move |status| listening.set(status.matching())).background().wait();
    if let Err(e) = listener {
        // Unknown matching: keep publishing.
        tracing::warn!("cannot watch subscribers of {key}: {e}");
    }
    Ok((publisher, flag))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moment(keys: &[&str]) -> Vec<(String, Vec<u8>)> {
        keys.iter().map(|key| (key.to_string(), vec![1, 2, 3])).collect()
    }

    #[test]
    fn a_batch_goes_first_only_for_a_key_a_recorder_still_takes_there() {
        let recorders = RecordersOnKeys::default();
        let items = moment(&["robot1/scan", "robot2/scan"]);
        // The wander subscribes the scans; no recorder takes them on their keys.
        assert!(!batch_goes_first(&items, &[true, true], &recorders));
        // A recorder that has not switched robot2's scans to batches yet.
        let token = "flotilla/s/recorders_on_keys/1f2e/robot2/scan";
        recorders.token(token, "robot2/scan", true);
        assert!(batch_goes_first(&items, &[true, true], &recorders));
        assert!(!batch_goes_first(&items, &[true, false], &recorders), "robot2's scan stays in the batch only");
        recorders.token(token, "robot2/scan", false);
        assert!(!batch_goes_first(&items, &[true, true], &recorders), "switched: the batch keeps filling");
    }
}
