//! A node's publishers (see [`Publishers`]): its outputs, declared as
//! their keys first come and told whether anyone subscribes, and its
//! actuation; each moment's messages pass the recorders' tap first.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use flotilla_wire::delivery::OutputDelivery;
use flotilla_wire::Keys;
use zenoh::qos::CongestionControl;
use zenoh::Wait;

use super::flags::Flag;
use super::plugin::Outbox;
use crate::error::{Error, Result};
use crate::recording::RecorderTap;
use crate::step_publisher::{congestion_control, StepPublisher};

/// A node's publishers: one per output key and congestion control (the
/// clock mode can change while the node runs), and the actuation's.
#[derive(Default)]
pub(crate) struct Publishers {
    outputs: HashMap<(String, CongestionControl), zenoh::pubsub::Publisher<'static>>,
    /// Output publishers declared less than [`MATCHING_SETTLES_IN`] ago,
    /// whose subscribed flag is still the provisional "yes".
    unconfirmed: Vec<Unconfirmed>,
    actuation: Option<StepPublisher>,
    /// While the recorders' tap takes a moment, per message, whether it
    /// goes on its key too (kept for its memory).
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
    /// The moment's messages pass the recorders' `tap` first: while it
    /// takes them, each then goes on its key only if a subscriber there
    /// wants it (the recorder has it from the tap).
    pub(crate) fn publish(
        &mut self,
        session: &zenoh::Session,
        outbox: &mut Outbox,
        delivery: OutputDelivery,
        tap: Option<&RecorderTap>,
    ) {
        self.confirm_matching();
        let congestion = congestion_control(delivery);
        let mut items = outbox.take_items();
        let tapped = tap
            .is_some_and(|tap| tap.moment(outbox.moment_ns(), &items, |key| outbox.subscribed(key), &mut self.on_keys));
        for (index, (key, payload)) in items.drain(..).enumerate() {
            if tapped && !self.on_keys[index] {
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
