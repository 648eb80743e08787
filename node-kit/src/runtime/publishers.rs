//! A node's publishers (see [`Publishers`]): its outputs, declared as
//! their keys first come and told whether anyone subscribes, and its
//! actuation; each moment's messages pass the recorders' tap first.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
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
    outputs: HashMap<(String, CongestionControl), Output>,
    /// Output publishers declared less than [`MATCHING_SETTLES_IN`] ago,
    /// whose subscribed flag is still the provisional "yes".
    unconfirmed: Vec<Unconfirmed>,
    /// Whether the subscribed flags only rose when last published (see
    /// [`Following::SubscribersEverSeen`](super::outbox::Following)): when
    /// the rule changes, each flag is set again from what Zenoh said.
    flags_rose_only: bool,
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

/// An output's publisher and what Zenoh has said of its subscribers.
struct Output {
    publisher: zenoh::pubsub::Publisher<'static>,
    matching: Arc<Matching>,
}

/// An output publisher whose "nobody subscribes" is not yet believed.
struct Unconfirmed {
    slot: (String, CongestionControl),
    matching: Arc<Matching>,
    declared_at: Instant,
}

/// What Zenoh has said of the subscribers of one output publisher, and
/// the subscribed flag [`Outbox::wants`] reads, set from it by the rule of
/// the clock mode: "yes" until [`MATCHING_SETTLES_IN`] has passed; then
/// whether a subscriber matches now, or in lockstep, where the flag only
/// rises, whether one ever has.
struct Matching {
    flag: Flag,
    only_rise: Arc<AtomicBool>,
    now: AtomicBool,
    ever: AtomicBool,
    settled: AtomicBool,
}

impl Matching {
    fn new(flag: Flag, only_rise: Arc<AtomicBool>) -> Matching {
        flag.set(true);
        let (now, ever, settled) = (AtomicBool::new(false), AtomicBool::new(false), AtomicBool::new(false));
        Matching { flag, only_rise, now, ever, settled }
    }

    /// Zenoh says whether a subscriber matches.
    fn heard(&self, matching: bool) {
        self.now.store(matching, Ordering::Relaxed);
        if matching {
            self.ever.store(true, Ordering::Relaxed);
        }
        self.apply();
    }

    /// [`MATCHING_SETTLES_IN`] has passed: Zenoh's word is believed.
    fn settle(&self, matching: bool) {
        self.settled.store(true, Ordering::Relaxed);
        self.heard(matching);
    }

    /// Sets the flag from what Zenoh said, by the rule in force.
    fn apply(&self) {
        let load = |b: &AtomicBool| b.load(Ordering::Relaxed);
        let wanted = !load(&self.settled) || load(&self.now) || (load(&self.only_rise) && load(&self.ever));
        self.flag.set(wanted);
    }
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
        self.follow_rule(outbox);
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
                    Ok(output) => {
                        let matching = output.matching.clone();
                        self.outputs.insert(slot.clone(), output);
                        self.unconfirmed.push(Unconfirmed {
                            slot: slot.clone(),
                            matching,
                            declared_at: Instant::now(),
                        });
                    }
                    Err(e) => {
                        tracing::warn!("{e}");
                        continue;
                    }
                }
            }
            if let Some(output) = self.outputs.get(&slot) {
                if let Err(e) = output.publisher.put(payload).wait() {
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
            if let Some(output) = outputs.get(&pending.slot) {
                let matching = output.publisher.matching_status().wait().map_or(true, |status| status.matching());
                pending.matching.settle(matching);
            }
            false
        });
    }

    /// When the rule changes (lockstep began or ended), sets each flag
    /// again from what Zenoh said: out of lockstep a subscriber gone
    /// stops the output, into it one seen earlier keeps it going.
    fn follow_rule(&mut self, outbox: &Outbox) {
        let only_rise = outbox.flags_rise_only_now();
        if only_rise != self.flags_rose_only {
            self.outputs.values().for_each(|output| output.matching.apply());
        }
        self.flags_rose_only = only_rise;
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
/// keeps [`Outbox::wants`] true while a subscriber matches it (in lockstep:
/// once one has); its flag starts true, as Zenoh may not know the
/// subscribers of a new key yet (see [`MATCHING_SETTLES_IN`]).
fn declare_output(
    session: &zenoh::Session,
    key: &str,
    congestion: CongestionControl,
    outbox: &mut Outbox,
) -> Result<Output> {
    let publisher = session
        .declare_publisher(key.to_string())
        .congestion_control(congestion)
        .wait()
        .map_err(Error::zenoh("publish on", key))?;
    let matching = Arc::new(Matching::new(outbox.subscribed_flag(key), outbox.flags_only_rise()));
    // Called at once (in `wait`) when a subscriber is known to match, then
    // on every change.
    let listening = matching.clone();
    let listener =
        publisher.matching_listener().callback(move |status| listening.heard(status.matching())).background().wait();
    if let Err(e) = listener {
        // Unknown matching: keep publishing.
        tracing::warn!("cannot watch subscribers of {key}: {e}");
        matching.ever.store(true, Ordering::Relaxed);
        matching.now.store(true, Ordering::Relaxed);
    }
    Ok(Output { publisher, matching })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::flags::Flags;

    fn matching(only_rise: bool) -> Matching {
        Matching::new(Flags::default().make(false), Arc::new(AtomicBool::new(only_rise)))
    }

    #[test]
    fn a_new_output_counts_as_subscribed_until_zenoh_has_had_time_to_learn() {
        let m = matching(false);
        assert!(m.flag.get(), "provisional yes");
        m.heard(false);
        assert!(m.flag.get(), "a no before the matching settles is not believed");
        m.settle(false);
        assert!(!m.flag.get(), "believed once settled");
        m.heard(true);
        assert!(m.flag.get());
        m.heard(false);
        assert!(!m.flag.get(), "outside lockstep the flag follows every change");
    }

    #[test]
    fn in_lockstep_a_subscriber_once_seen_keeps_the_output_going() {
        let m = matching(true);
        m.heard(true);
        m.heard(false);
        m.settle(false);
        assert!(m.flag.get(), "Zenoh said yes once: a later no may be a moment's mistake");
        m.only_rise.store(false, Ordering::Relaxed);
        m.apply();
        assert!(!m.flag.get(), "out of lockstep, what Zenoh says now");
    }

    #[test]
    fn in_lockstep_an_output_nobody_ever_subscribed_to_stops_once_settled() {
        let m = matching(true);
        m.settle(false);
        assert!(!m.flag.get(), "never seen a subscriber");
        m.heard(true);
        assert!(m.flag.get(), "one came");
        m.heard(false);
        assert!(m.flag.get(), "and is taken to stay");
    }
}
