//! The lockstep barrier as a model: who must report each step, who has,
//! and which drives need not answer the state just published.
//!
//! A drive's actuation for step k is its report of k. It may add a promise
//! through step n (see [`flotilla_wire::drive_to_world::Promise`]):
//! its answers to states k+1..=n are known unless a command arrives — the
//! same actuation, or with the changes the promise lists. A command that a
//! lockstep participant stamps at step j (published before its report of
//! j) takes effect at state j+1, so a drive's promise is honoured at a
//! state only when no participant other than the promising drives (which
//! publish nothing but their actuation) and the sensor nodes whose outputs
//! are no plugin's input (which say so with their reports) owed a report
//! for the state before it, and only a promise made with or after the drive's last
//! answer the world waited for: that answer saw every command then known.
//! The world then takes the drive's answer from its promise (the inbox)
//! and does not apply the drive's own answer to that state when it comes,
//! which is the same unless a command from outside the barrier came in
//! between; so a run with promises gives the same bits as one without.
//!
//! A node whose work commands nothing (a sensor none of whose outputs is
//! any plugin's input) may also run behind the world, by up to
//! [`Barrier::lag_sensors`] states, as long as no member of the barrier
//! that may command a robot (a controller, the Python environments: any
//! but the promising drives and such nodes) works on the next state:
//! nobody then decides from its outputs before they are out, and the state
//! stream, every command and so every output are the same bits as when
//! the world waits for it at every state. Its work on a scan step then
//! overlaps the world's next steps, as in fast mode. Before a state that
//! such a participant works on, the world waits until every node has
//! reported every state before it, as the lockstep contract says (a
//! controller that works every 20th state lets the sensors run behind in
//! between).

use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone)]
struct Member {
    /// The first step this participant must report.
    required_from: u64,
    /// Dropped for stalling; it rejoins when it reports again.
    dropped: bool,
}

/// How many nodes' last reports the barrier remembers beyond its members'.
const MAX_REMEMBERED_REPORTERS: usize = 4096;

/// A drive's promise, made with its answer to state `answered`: its answers
/// to the states after it, up to `through`, are known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Promise {
    answered: u64,
    through: u64,
}

/// The state last published.
#[derive(Debug, Clone, Copy)]
struct Published {
    step: u64,
    revision: u64,
    /// A participant other than the drives and the nodes that command
    /// nothing owed a report for it.
    busy: bool,
}

/// Lockstep participants and their reports.
#[derive(Debug, Clone)]
pub struct Barrier {
    members: BTreeMap<String, Member>,
    /// The last step each node reported, kept when its token goes (and for
    /// reports that arrive without one): a participant whose link was cut
    /// and restored is done with what it reported before, and it does not
    /// repeat a report (sensor nodes send a report only when it changes).
    reported: BTreeMap<String, u64>,
    /// Each promising drive's latest promise. A drive promises only while
    /// it publishes nothing but its actuation, so its work commands no one
    /// else. (A drive that also publishes, a vehicle's velocity reached,
    /// promises nothing and counts like any participant: someone might
    /// command a robot from what it publishes.)
    promises: BTreeMap<String, Promise>,
    /// The last state each promising drive had to answer.
    waited_on: BTreeMap<String, u64>,
    /// Nodes whose last report said their work commands no robot (sensor
    /// nodes none of whose outputs is any plugin's input): like a
    /// promising drive, their work does not make a drive answer the next
    /// state.
    commanding_nothing: BTreeSet<String>,
    last: Option<Published>,
    /// Drives that need not answer the last published state.
    excused: BTreeSet<String>,
    /// Drives that were told so once in the log.
    told: BTreeSet<String>,
    /// Whether promises are honoured (`flotilla-world --wait-on-drives`
    /// turns them off).
    honour_promises: bool,
    /// How many states a node whose work commands nothing may run behind
    /// the world while nobody in the barrier may command (0: none).
    sensor_lag: u64,
    /// The standby worlds following this one, by token.
    standbys: BTreeSet<String>,
    /// Nodes that were told once in the log that they may run behind.
    told_lag: BTreeSet<String>,
}

impl Default for Barrier {
    fn default() -> Self {
        Barrier {
            members: BTreeMap::new(),
            reported: BTreeMap::new(),
            promises: BTreeMap::new(),
            waited_on: BTreeMap::new(),
            commanding_nothing: BTreeSet::new(),
            last: None,
            excused: BTreeSet::new(),
            told: BTreeSet::new(),
            honour_promises: true,
            sensor_lag: 0,
            standbys: BTreeSet::new(),
            told_lag: BTreeSet::new(),
        }
    }
}

impl Barrier {
    /// Whether drives' promises spare the world their answers.
    pub fn honour_promises(&mut self, on: bool) {
        self.honour_promises = on;
    }

    /// Lets a node whose work commands nothing run up to `steps` states
    /// behind the world while no member of the barrier may command a
    /// robot (`flotilla-world --lockstep-sensor-lag`).
    pub fn lag_sensors(&mut self, steps: u64) {
        self.sensor_lag = steps;
    }

    /// A standby world's token (`key`) came or went. While one follows,
    /// no node runs behind: a lockstep take-over re-runs the steps since
    /// its checkpoint with the drives' answers it kept, and with sensors
    /// behind, and commands from outside the barrier, that re-run did not
    /// give the killed world's last state (both take-overs of
    /// `tests/tests/standby.rs`, in two runs; with none behind, every
    /// one did).
    pub fn standby_follows(&mut self, key: &str, alive: bool) {
        if alive {
            self.standbys.insert(key.to_string());
        } else {
            self.standbys.remove(key);
        }
    }

    /// How many states behind the world `node` may be at `step`, the
    /// state last published: none unless its work commands nothing, no
    /// standby follows, and no member that may command a robot works on
    /// the next state (one that does decides from the outputs of every
    /// state before it, so they must all be out before the world sends
    /// it). A member that has not reported yet may command, as far as the
    /// barrier knows.
    fn lag_of(&self, node: &str, step: u64) -> u64 {
        if self.sensor_lag == 0 || !self.standbys.is_empty() || !self.commanding_nothing.contains(node) {
            return 0;
        }
        let next = step + 1;
        let decides_next = self.members.iter().any(|(n, m)| {
            !m.dropped
                && !self.promises.contains_key(n)
                && !self.commanding_nothing.contains(n)
                && m.required_from <= next
                && self.reported.get(n).is_none_or(|&r| r < next)
        });
        if decides_next {
            0
        } else {
            self.sensor_lag
        }
    }

    /// Whether the world must have `node`'s report before it publishes the
    /// state after `step`: it owes `step`, or with a lag the state that
    /// many before.
    fn holds_up(&self, node: &str, m: &Member, step: u64) -> bool {
        match step.checked_sub(self.lag_of(node, step)) {
            Some(behind) => self.owes_unexcused(node, m, behind) && !self.excused_from(node, behind),
            None => false,
        }
    }

    /// A participant's token appeared; it must report every state from
    /// `next_step` on (it may have missed the current one).
    pub fn join(&mut self, node: &str, next_step: u64) {
        self.members.entry(node.to_string()).or_insert(Member { required_from: next_step, dropped: false });
        // One that must answer the state already published works on it
        // (a controller joining while paused): a drive must answer the
        // state after, as if the joiner had owed it from the start.
        if let Some(last) = &mut self.last {
            if next_step <= last.step && !self.promises.contains_key(node) {
                last.busy = true;
            }
        }
    }

    /// A participant's token disappeared: it leaves the barrier. One that
    /// owed a report for the state last published may have worked on it
    /// before it went (a controller's last command, sent before its token
    /// went and without a report): a drive then answers the state after,
    /// as it would have had the participant reported.
    pub fn leave(&mut self, node: &str) {
        let Some(member) = self.members.remove(node) else { return };
        if let Some(last) = &mut self.last {
            let owed = !member.dropped
                && member.required_from <= last.step
                && self.reported.get(node).is_none_or(|&r| r < last.step);
            if owed && !self.commanding_nothing.contains(node) && !self.promises.contains_key(node) {
                last.busy = true;
            }
        }
    }

    /// A node reports `step` done. A dropped participant that reports again
    /// rejoins from the step after.
    pub fn done(&mut self, node: &str, step: u64) {
        // A known node's report (a drive's, every step) allocates nothing.
        if let Some(reported) = self.reported.get_mut(node) {
            *reported = (*reported).max(step);
        } else {
            self.reported.insert(node.to_string(), step);
            // Reports under ever new names (a program gone wrong) must not
            // grow the map without bound: past the limit, only members' are
            // kept.
            if self.reported.len() > MAX_REMEMBERED_REPORTERS {
                let members = &self.members;
                self.reported.retain(|name, _| members.contains_key(name));
                self.commanding_nothing.retain(|name| members.contains_key(name));
            }
        }
        if let Some(m) = self.members.get_mut(node) {
            if m.dropped {
                m.dropped = false;
                m.required_from = step + 1;
            }
        }
    }

    /// A node reports `step` done ([`Barrier::done`]), saying whether its
    /// work commands no robot.
    pub fn reported(&mut self, node: &str, step: u64, commands_nothing: bool) {
        // Its report of the state last published says what its work on it
        // was: one that may command makes a drive answer the next state.
        if let Some(last) = &mut self.last {
            let owed = self.reported.get(node).is_none_or(|&r| r < last.step) && step >= last.step;
            if owed && !commands_nothing && self.members.contains_key(node) && !self.promises.contains_key(node) {
                last.busy = true;
            }
        }
        self.done(node, step);
        if commands_nothing == self.commanding_nothing.contains(node) {
            return;
        }
        if commands_nothing {
            if self.reported.contains_key(node) {
                self.commanding_nothing.insert(node.to_string());
            }
        } else {
            self.commanding_nothing.remove(node);
        }
    }

    /// A drive answered state `step` (its report of it), promising its
    /// answers up to `through`, or nothing.
    pub fn actuated(&mut self, node: &str, step: u64, through: Option<u64>) {
        self.done(node, step);
        let Some(through) = through else {
            // It publishes more than its actuation now (a vehicle spawned).
            self.promises.remove(node);
            return;
        };
        let promise = Promise { answered: step, through: through.max(step) };
        if let Some(p) = self.promises.get_mut(node) {
            // The latest answer's promise replaces the one before, even
            // when it promises nothing.
            if p.answered <= step {
                *p = promise;
            }
        } else if self.promises.len() < MAX_REMEMBERED_REPORTERS {
            // (See `done`: no growth without bound.)
            self.promises.insert(node.to_string(), promise);
        }
    }

    /// The world published state `step` of description `revision`: decides
    /// which drives need not answer it.
    pub fn published(&mut self, step: u64, revision: u64) {
        // The same state again (to a newcomer, or to one that missed it).
        // Steps never go back: a reset bumps the revision, sim time goes on.
        if self.last.is_some_and(|l| l.step == step && l.revision == revision) {
            return;
        }
        let quiet_before = self.last.is_some_and(|l| l.step + 1 == step && l.revision == revision && !l.busy);
        self.excused.clear();
        let mut busy = false;
        for (node, member) in &self.members {
            if !self.owes_unexcused(node, member, step) {
                continue;
            }
            let Some(promise) = self.promises.get(node) else {
                // Not a promising drive: its work may command a robot,
                // unless it said it cannot.
                busy |= !self.commanding_nothing.contains(node);
                continue;
            };
            let kept = self.honour_promises
                && quiet_before
                && promise.answered < step
                && step <= promise.through
                && self.waited_on.get(node).is_none_or(|&w| promise.answered >= w)
                && self.reported.get(node).is_some_and(|&r| r >= promise.answered);
            if kept {
                if !self.told.contains(node) {
                    self.told.insert(node.clone());
                    tracing::info!(
                        "lockstep: {node} promises its next answers: it is not waited for at states after which \
                         no other participant worked"
                    );
                }
                self.excused.insert(node.clone());
            } else if let Some(w) = self.waited_on.get_mut(node) {
                *w = step;
            } else {
                self.waited_on.insert(node.clone(), step);
            }
        }
        self.last = Some(Published { step, revision, busy });
        if self.sensor_lag > 0 {
            let lagging: Vec<String> = (self.commanding_nothing.iter())
                .filter(|node| self.members.contains_key(*node) && !self.told_lag.contains(*node))
                .filter(|node| self.lag_of(node, step) > 0)
                .cloned()
                .collect();
            for node in lagging {
                tracing::info!(
                    "lockstep: {node} commands nothing: it may run up to {} states behind while no participant \
                     decides from its outputs",
                    self.sensor_lag
                );
                self.told_lag.insert(node);
            }
        }
    }

    /// Whether `node` has not reported `step`, which it must.
    fn owes_unexcused(&self, node: &str, m: &Member, step: u64) -> bool {
        !m.dropped && m.required_from <= step && self.reported.get(node).is_none_or(|&d| d < step)
    }

    fn excused_from(&self, node: &str, step: u64) -> bool {
        self.last.is_some_and(|l| l.step == step) && self.excused.contains(node)
    }

    /// The drives excused from answering state `step`, the last published,
    /// that have not answered it: the world steps on with the answers they
    /// promised.
    pub fn answered_by_promise(&self, step: u64) -> impl Iterator<Item = &str> {
        let current = self.last.is_some_and(|l| l.step == step);
        self.excused
            .iter()
            .filter(move |node| current && self.reported.get(node.as_str()).is_none_or(|&r| r < step))
            .map(String::as_str)
    }

    /// Participants whose reports the world must have before it publishes
    /// the state after `step` (a lagging node's of an earlier state).
    pub fn pending(&self, step: u64) -> Vec<String> {
        self.members.iter().filter(|(n, m)| self.holds_up(n, m, step)).map(|(n, _)| n.clone()).collect()
    }

    /// Whether `node` owes a report for `step`: it works on that state
    /// (whether or not the world waits for it, see [`Barrier::pending`]).
    pub fn owes(&self, node: &str, step: u64) -> bool {
        self.members.get(node).is_some_and(|m| self.owes_unexcused(node, m, step) && !self.excused_from(node, step))
    }

    /// Whether the world will wait for anyone's report before it
    /// publishes the state after `step` (whether [`Barrier::pending`] is
    /// not empty, without building the list).
    pub fn awaits_anyone(&self, step: u64) -> bool {
        self.members.iter().any(|(n, m)| self.holds_up(n, m, step))
    }

    /// Drops stalled participants from the barrier.
    pub fn drop_members(&mut self, nodes: &[String]) {
        for n in nodes {
            if let Some(m) = self.members.get_mut(n) {
                m.dropped = true;
            }
        }
    }

    /// Participants currently in the barrier.
    pub fn size(&self) -> usize {
        self.members.values().filter(|m| !m.dropped).count()
    }
}

#[cfg(test)]
mod tests;
