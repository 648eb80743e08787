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
mod tests {
    use super::*;

    #[test]
    fn a_step_completes_when_every_member_reported_it() {
        let mut b = Barrier::default();
        b.join("drive", 0);
        b.join("laser", 0);
        assert_eq!(b.pending(0), ["drive", "laser"]);
        b.done("drive", 0);
        assert_eq!(b.pending(0), ["laser"]);
        b.done("laser", 0);
        assert!(b.pending(0).is_empty());
        assert_eq!(b.pending(1), ["drive", "laser"]);
    }

    #[test]
    fn owes_agrees_with_pending() {
        let mut b = Barrier::default();
        b.join("laser", 5);
        assert!(!b.owes("laser", 4) && b.owes("laser", 5) && !b.owes("drive", 5));
        assert!(!b.awaits_anyone(4) && b.awaits_anyone(5));
        b.done("laser", 19);
        assert!(!b.owes("laser", 19) && b.owes("laser", 20));
        assert!(!b.awaits_anyone(19) && b.awaits_anyone(20));
        assert_eq!(b.pending(20), ["laser"]);
    }

    #[test]
    fn late_joiners_start_at_the_next_step_and_leavers_are_not_awaited() {
        let mut b = Barrier::default();
        b.join("drive", 0);
        b.join("late", 6);
        assert_eq!(b.pending(5), ["drive"]);
        assert_eq!(b.pending(6), ["drive", "late"]);
        b.leave("drive");
        assert_eq!(b.pending(6), ["late"]);
        b.done("stranger", 6); // reports without a token are not awaited
        assert_eq!(b.size(), 1);
    }

    #[test]
    fn a_participant_whose_link_was_cut_keeps_what_it_reported() {
        let mut b = Barrier::default();
        b.join("laser", 0);
        b.done("laser", 19); // nothing due until step 19
        b.leave("laser"); // the link is cut at step 4 ...
        b.join("laser", 5); // ... and restored
        assert!(b.pending(19).is_empty(), "step 19 was reported before the cut, and is not repeated");
        assert_eq!(b.pending(20), ["laser"]);
        // A report that crossed while the token was gone counts too.
        b.leave("laser");
        b.done("laser", 39);
        b.join("laser", 21);
        assert!(b.pending(39).is_empty());
        assert_eq!(b.pending(40), ["laser"]);
    }

    #[test]
    fn reports_under_ever_new_names_are_not_kept_without_bound() {
        let mut b = Barrier::default();
        b.join("laser", 0);
        b.done("laser", 19);
        for k in 0..2 * MAX_REMEMBERED_REPORTERS {
            b.done(&format!("stranger-{k}"), 5);
        }
        assert!(b.reported.len() <= MAX_REMEMBERED_REPORTERS + 1);
        assert!(b.pending(19).is_empty(), "a member's report is kept");
    }

    #[test]
    fn dropped_members_rejoin_when_they_report_again() {
        let mut b = Barrier::default();
        b.join("slow", 0);
        b.drop_members(&["slow".to_string()]);
        assert!(b.pending(3).is_empty());
        assert_eq!(b.size(), 0);
        b.done("slow", 3);
        assert!(b.pending(3).is_empty());
        assert_eq!(b.pending(4), ["slow"]);
    }

    /// A drive, odometry that works every 4th step (reporting 3 ahead) and
    /// a controller that works every 10th, all joined at step 0.
    fn fleet() -> Barrier {
        let mut b = Barrier::default();
        for node in ["drive", "odom", "controller"] {
            b.join(node, 0);
        }
        b
    }

    /// Publishes `step` and has the sensors and the controller answer it
    /// as they would; returns who the world waits on.
    fn publish(b: &mut Barrier, step: u64) -> Vec<String> {
        b.published(step, 0);
        let waits = b.pending(step);
        assert_eq!(b.awaits_anyone(step), !waits.is_empty(), "at state {step}");
        if step.is_multiple_of(4) {
            b.done("odom", step + 3);
        }
        if step.is_multiple_of(10) {
            b.done("controller", step + 9);
        }
        waits
    }

    /// Publishes each of `steps`, and `drive` answers each promising its
    /// answers steady for 100 steps.
    fn answered_steadily(b: &mut Barrier, drive: &str, steps: std::ops::Range<u64>) {
        for step in steps {
            b.published(step, 0);
            b.actuated(drive, step, Some(step + 100));
        }
    }

    #[test]
    fn a_steady_drive_is_not_waited_on_while_nobody_else_works() {
        let mut b = fleet();
        b.done("odom", 3);
        b.done("controller", 9);
        b.published(0, 0);
        b.actuated("drive", 0, Some(100));
        // Steps 1-3: nothing due anywhere.
        assert_eq!(publish(&mut b, 1), ["drive"], "the answer to the first state was waited on, not its promise");
        b.actuated("drive", 1, Some(101));
        assert!(publish(&mut b, 2).is_empty(), "promised, and nobody worked at 1");
        assert!(publish(&mut b, 3).is_empty());
        assert!(!b.owes("drive", 3));
        // Odometry works at 4: the drive answers 5 (a command stamped at 4
        // would take effect there).
        assert_eq!(publish(&mut b, 4), ["odom"]);
        assert_eq!(publish(&mut b, 5), ["drive"]);
        b.actuated("drive", 5, Some(105));
        assert!(publish(&mut b, 6).is_empty());
    }

    #[test]
    fn a_controller_that_leaves_after_its_last_command_makes_the_drive_answer_the_next_state() {
        let mut b = fleet();
        b.done("odom", 3);
        b.published(0, 0);
        b.actuated("drive", 0, Some(100));
        b.done("controller", 0);
        assert_eq!(publish(&mut b, 1), ["controller", "drive"]);
        b.actuated("drive", 1, Some(101));
        // Its last command goes out with state 1, and it leaves without
        // reporting 1: the command takes effect at 2, so the drive's answer
        // to 2 is waited for, not its promise.
        b.leave("controller");
        assert_eq!(publish(&mut b, 2), ["drive"]);
        b.actuated("drive", 2, Some(102));
        assert!(publish(&mut b, 3).is_empty(), "nobody worked at 2");
    }

    #[test]
    fn a_sensor_whose_work_commands_nothing_does_not_make_the_drive_answer() {
        let mut b = fleet();
        b.reported("odom", 3, true); // and its later reports keep saying so
        b.done("controller", 9);
        b.published(0, 0);
        b.actuated("drive", 0, Some(100));
        assert_eq!(publish(&mut b, 1), ["drive"]);
        b.actuated("drive", 1, Some(101));
        for step in 2..10 {
            let waits = publish(&mut b, step);
            if step.is_multiple_of(4) {
                assert_eq!(waits, ["odom"], "odometry works at {step}");
            } else {
                assert!(waits.is_empty(), "the drive is not waited for at {step}: only a sensor worked before");
            }
        }
        // The controller works at 10: the drive answers 11.
        assert_eq!(publish(&mut b, 10), ["controller"]);
        assert_eq!(publish(&mut b, 11), ["drive"]);
        b.actuated("drive", 11, Some(111));
        // A report without the flag counts as one whose work may command.
        b.published(12, 0);
        assert_eq!(b.pending(12), ["odom"]);
        b.reported("odom", 15, false);
        assert_eq!(publish(&mut b, 13), ["drive"], "odometry did not say so at 12");
    }

    #[test]
    fn a_promise_made_before_the_last_answer_waited_on_counts_for_nothing() {
        let mut b = fleet();
        b.done("odom", 3);
        b.done("controller", 3);
        b.published(0, 0);
        b.actuated("drive", 0, Some(100));
        b.published(1, 0);
        b.actuated("drive", 1, Some(50));
        b.published(2, 0); // excused, and it answers 2 anyway
        b.actuated("drive", 2, Some(50));
        b.published(3, 0);
        // The controller works at 4: say it sends a command stamped for
        // step 6, which takes effect at state 7.
        b.published(4, 0);
        assert_eq!(b.pending(4), ["controller", "odom"], "nobody worked at 3");
        b.actuated("drive", 4, Some(50));
        b.done("odom", 7);
        b.done("controller", 9);
        assert!(b.pending(4).is_empty());
        b.published(5, 0);
        assert_eq!(b.pending(5), ["drive"], "someone worked at 4");
        // Its answer to 5 has not come yet: the promise of its answer to 4,
        // made before the world waited on it at 5, does not excuse 6.
        b.published(6, 0);
        assert_eq!(b.pending(6), ["drive"]);
        // The answer to 5 knows of the command due at 7: steady only to 6.
        b.actuated("drive", 5, Some(6));
        b.actuated("drive", 6, Some(6));
        b.published(7, 0);
        assert_eq!(b.pending(7), ["drive"], "the promise ended at 6");
        b.actuated("drive", 7, Some(60));
        b.published(8, 0);
        assert!(b.pending(8).contains(&"odom".to_string()));
        assert!(!b.owes("drive", 8), "promised, nobody worked at 7");
    }

    #[test]
    fn an_answer_without_a_promise_withdraws_the_one_before() {
        let mut b = fleet();
        b.done("odom", 99);
        b.done("controller", 99);
        answered_steadily(&mut b, "drive", 0..2);
        b.published(2, 0);
        assert!(!b.owes("drive", 2));
        b.actuated("drive", 2, None); // a command came: ramping up
        b.published(3, 0);
        assert!(b.owes("drive", 3));
    }

    #[test]
    fn one_that_joins_owing_the_published_state_makes_the_drive_answer_the_next() {
        let mut b = Barrier::default();
        b.join("drive", 0);
        answered_steadily(&mut b, "drive", 0..2);
        b.published(2, 0);
        assert!(!b.owes("drive", 2));
        // Paused at 2, a controller joins: it answers 2, and may command.
        b.join("controller", 2);
        b.done("controller", 2);
        b.published(3, 0);
        assert_eq!(b.pending(3), ["controller", "drive"]);
    }

    #[test]
    fn a_drive_that_never_promises_counts_like_any_participant() {
        // A vehicle's drive publishes its velocity reached at every state:
        // a controller could command another robot from it.
        let mut b = Barrier::default();
        b.join("vehicles", 0);
        b.join("diff", 0);
        b.published(0, 0);
        b.actuated("diff", 0, Some(100));
        b.actuated("vehicles", 0, None);
        b.published(1, 0);
        b.actuated("diff", 1, Some(100));
        b.actuated("vehicles", 1, None);
        b.published(2, 0);
        assert_eq!(b.pending(2), ["diff", "vehicles"], "the vehicles' drive worked at 1");
        // The two change roles.
        b.actuated("diff", 2, Some(100));
        b.actuated("vehicles", 2, Some(2)); // its vehicle deleted: quiet from now on
        b.published(3, 0);
        assert_eq!(b.pending(3), ["diff", "vehicles"], "the vehicles' drive still worked at 2");
        b.actuated("vehicles", 3, Some(3));
        b.actuated("diff", 3, None); // a vehicle spawned on this one
        b.published(4, 0);
        assert_eq!(b.pending(4), ["diff", "vehicles"], "its promise is gone");
        b.actuated("diff", 4, None);
        b.actuated("vehicles", 4, Some(4));
        b.published(5, 0);
        assert_eq!(b.pending(5), ["diff", "vehicles"], "and its work counts as anyone's");
    }

    #[test]
    fn drives_do_not_make_each_other_answer() {
        let mut b = Barrier::default();
        b.join("drive-a", 0);
        b.join("drive-b", 0);
        b.published(0, 0);
        b.actuated("drive-a", 0, Some(100));
        b.actuated("drive-b", 0, Some(0)); // publishes nothing else, never steady (a tween)
        for step in 1..10 {
            b.published(step, 0);
            let waits = b.pending(step);
            if step >= 2 {
                assert_eq!(waits, ["drive-b"], "step {step}");
            }
            b.actuated("drive-a", step, Some(step + 100));
            b.actuated("drive-b", step, Some(step));
        }
    }

    #[test]
    fn a_new_description_or_the_switch_makes_every_drive_answer() {
        let steady_at_3 = |honour: bool| {
            let mut b = Barrier::default();
            b.honour_promises(honour);
            b.join("drive", 0);
            answered_steadily(&mut b, "drive", 0..3);
            b
        };
        let mut b = steady_at_3(true);
        b.published(3, 0);
        assert!(!b.owes("drive", 3));
        b.published(3, 0);
        assert!(!b.owes("drive", 3), "the same state again");
        b.published(3, 1);
        assert!(b.owes("drive", 3), "a model spawned or a reset: the drive answers with it");
        b.actuated("drive", 2, Some(200)); // late, from before the change
        b.published(4, 1);
        assert!(b.owes("drive", 4), "only a promise made with the answer waited on (3) or later counts");
        b.actuated("drive", 3, Some(200));
        b.actuated("drive", 4, Some(200));
        b.published(5, 1);
        assert!(!b.owes("drive", 5), "promised with the answer to 4, which was waited on");
        let mut b = steady_at_3(false);
        b.published(3, 0);
        assert!(b.owes("drive", 3), "--wait-on-drives");
    }

    /// A promising drive and a laser whose scans no plugin reads, the
    /// laser due every 20th state, with a lag of 10 states.
    fn lagging_laser() -> Barrier {
        let mut b = Barrier::default();
        b.lag_sensors(10);
        b.join("drive", 0);
        b.join("laser", 0);
        b.reported("laser", 19, true); // done with 0, nothing due before 20
        answered_steadily(&mut b, "drive", 0..20);
        b
    }

    #[test]
    fn a_sensor_that_commands_nothing_may_run_behind_while_nobody_may_command() {
        let mut b = lagging_laser();
        b.published(20, 0);
        assert!(b.owes("laser", 20), "it works on the state");
        assert!(b.pending(20).is_empty(), "the world steps on while it scans: {:?}", b.pending(20));
        assert!(!b.awaits_anyone(20), "so the state joins Zenoh's batch");
        for step in 21..30 {
            b.published(step, 0);
            assert!(b.pending(step).is_empty(), "{step} is within the lag of 20");
        }
        b.published(30, 0);
        assert_eq!(b.pending(30), ["laser"], "ten states on, the world waits for the scan of 20");
        assert!(b.awaits_anyone(30));
        b.reported("laser", 39, true);
        assert!(b.pending(30).is_empty());
    }

    #[test]
    fn a_participant_that_may_command_makes_every_sensor_report_each_state() {
        let mut b = lagging_laser();
        b.published(20, 0);
        assert!(b.pending(20).is_empty());
        // A controller joins: from the next state on it decides from the
        // scans, so the world waits for the scan of 20 before it sends 21.
        b.join("controller", 21);
        assert_eq!(b.pending(20), ["laser"]);
        b.reported("laser", 39, true);
        assert!(b.pending(20).is_empty());
        // It leaves: the laser may lag again.
        b.leave("controller");
        answered_steadily(&mut b, "drive", 20..40);
        b.published(40, 0);
        assert!(b.owes("laser", 40) && b.pending(40).is_empty());
        // A laser whose scans a plugin reads says so, and is waited for.
        b.reported("laser", 39, false);
        assert_eq!(b.pending(40), ["laser"]);
    }

    #[test]
    fn between_the_states_a_controller_works_on_sensors_may_run_behind() {
        let mut b = lagging_laser();
        b.lag_sensors(100);
        let laser_waited_for = |b: &Barrier, step| b.pending(step).contains(&"laser".to_string());
        b.join("controller", 0);
        b.reported("controller", 19, false); // works on 0, then next on 20
        b.published(20, 0);
        assert!(laser_waited_for(&b, 20), "the controller works on 21: the scan of 20 first");
        b.reported("controller", 39, false); // done with 20, next on 40
        assert!(!laser_waited_for(&b, 20), "nobody decides on 21 to 39: the laser scans meanwhile");
        b.published(38, 0);
        assert!(!laser_waited_for(&b, 38));
        b.published(39, 0);
        assert!(laser_waited_for(&b, 39), "before 40, every scan up to 39 is out");
    }

    #[test]
    fn while_a_standby_world_follows_no_sensor_runs_behind() {
        let mut b = lagging_laser();
        b.standby_follows("flotilla/sim/standby/world-b", true);
        b.published(20, 0);
        assert_eq!(b.pending(20), ["laser"]);
        b.standby_follows("flotilla/sim/standby/world-b", false);
        assert!(b.pending(20).is_empty());
    }

    #[test]
    fn without_a_lag_every_report_holds_the_world_up() {
        let mut b = lagging_laser();
        b.lag_sensors(0);
        b.published(20, 0);
        assert_eq!(b.pending(20), ["laser"]);
    }
}
