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
        }
    }
}

impl Barrier {
    /// Whether drives' promises spare the world their answers.
    pub fn honour_promises(&mut self, on: bool) {
        self.honour_promises = on;
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

    /// Participants that still owe a report for `step`.
    pub fn pending(&self, step: u64) -> Vec<String> {
        self.members
            .iter()
            .filter(|(n, m)| self.owes_unexcused(n, m, step) && !self.excused_from(n, step))
            .map(|(n, _)| n.clone())
            .collect()
    }

    /// Whether `node` still owes a report for `step` (one of
    /// [`Barrier::pending`], without building the list).
    pub fn owes(&self, node: &str, step: u64) -> bool {
        self.members.get(node).is_some_and(|m| self.owes_unexcused(node, m, step) && !self.excused_from(node, step))
    }

    /// Whether any participant owes a report for `step`: whether the world
    /// will wait for anyone before it publishes the state after.
    pub fn awaits_anyone(&self, step: u64) -> bool {
        self.members.iter().any(|(n, m)| self.owes_unexcused(n, m, step) && !self.excused_from(n, step))
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
}
