//! The lockstep barrier as a model: who must report each step, who has.

use std::collections::BTreeMap;

#[derive(Debug, Clone)]
struct Member {
    /// The first step this participant must report.
    required_from: u64,
    /// Dropped for stalling; it rejoins when it reports again.
    dropped: bool,
}

/// How many nodes' last reports the barrier remembers beyond its members'.
const MAX_REMEMBERED_REPORTERS: usize = 4096;

/// Lockstep participants and their reports.
#[derive(Debug, Default)]
pub struct Barrier {
    members: BTreeMap<String, Member>,
    /// The last step each node reported, kept when its token goes (and for
    /// reports that arrive without one): a participant whose link was cut
    /// and restored is done with what it reported before, and it does not
    /// repeat a report (sensor nodes send a report only when it changes).
    reported: BTreeMap<String, u64>,
}

impl Barrier {
    /// A participant's token appeared; it must report every state from
    /// `next_step` on (it may have missed the current one).
    pub fn join(&mut self, node: &str, next_step: u64) {
        self.members.entry(node.to_string()).or_insert(Member { required_from: next_step, dropped: false });
    }

    /// A participant's token disappeared: it leaves the barrier.
    pub fn leave(&mut self, node: &str) {
        self.members.remove(node);
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
            }
        }
        if let Some(m) = self.members.get_mut(node) {
            if m.dropped {
                m.dropped = false;
                m.required_from = step + 1;
            }
        }
    }

    /// Participants that still owe a report for `step`.
    pub fn pending(&self, step: u64) -> Vec<String> {
        self.members
            .iter()
            .filter(|(n, m)| !m.dropped && m.required_from <= step && self.reported.get(*n).is_none_or(|&d| d < step))
            .map(|(n, _)| n.clone())
            .collect()
    }

    /// Whether `node` still owes a report for `step` (one of
    /// [`Barrier::pending`], without building the list).
    pub fn owes(&self, node: &str, step: u64) -> bool {
        self.members
            .get(node)
            .is_some_and(|m| !m.dropped && m.required_from <= step && self.reported.get(node).is_none_or(|&d| d < step))
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
        b.done("laser", 19);
        assert!(!b.owes("laser", 19) && b.owes("laser", 20));
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
}
