//! Actuation from drive nodes, waiting for the next step, and the drives'
//! promised answers, which stand in for answers the world did not wait for.
//!
//! Commands stay in force until replaced. When a drive node disappears (its
//! liveliness token goes), every body it drove gets a zero command: the world
//! never depends on a node to stay consistent.
//!
//! In lockstep a drive whose answers are known ahead (its
//! [`Promise`]) need not be waited for at some states (see the
//! barrier). The world then applies the promised changes for such a state
//! itself, and the drive's own answer to it, arriving later, brings nothing
//! new: its commands are not applied again, where they would be a step or
//! more late.

use std::collections::{BTreeMap, BTreeSet};

use flotilla_wire::drive_to_world::{Actuation, BodyCommand, Promise};
use flotilla_wire::world_to_nodes::BodyId;

/// Commands received since the last step, who drives which body, and each
/// drive's latest promise.
#[derive(Default)]
pub struct Inbox {
    pending: Vec<BodyCommand>,
    driven_by: BTreeMap<String, BTreeSet<BodyId>>,
    /// Each drive's latest promise, with the state it answered.
    promises: BTreeMap<String, (u64, Promise)>,
    /// The last state whose answer the world took from each drive's
    /// promise.
    followed: BTreeMap<String, u64>,
    /// Drives whose planned changes were applied, told once in the log.
    told: BTreeSet<String>,
    /// The state the world had published when it was last reset: answers
    /// to it and to states before it were worked out from the world before
    /// the reset.
    reset_at: Option<u64>,
    /// The last state published.
    published: u64,
    /// Answers to the state after the last published, held until it is
    /// published (see [`Inbox::push`]).
    early: Vec<(Actuation, Option<Promise>)>,
    /// The last state each node's answer was taken for, and that answer's
    /// [`fingerprint`].
    answered: BTreeMap<String, (u64, u64)>,
}

impl Inbox {
    /// An inbox of a world whose last state published is `published`.
    pub fn at(published: u64) -> Inbox {
        Inbox { published, ..Inbox::default() }
    }

    /// The world published state `step`: answers to it held until now
    /// join the commands for the next step.
    pub fn published(&mut self, step: u64) {
        self.published = step;
        if self.early.is_empty() {
            return;
        }
        let (due, later): (Vec<_>, Vec<_>) =
            std::mem::take(&mut self.early).into_iter().partition(|(a, _)| a.step <= step);
        self.early = later;
        for (actuation, promise) in due {
            self.push(actuation, promise);
        }
    }

    /// Takes one actuation message and its promise. Commands answering a
    /// state whose answer was already taken from a promise, or a state from
    /// before the last reset (nor is its promise kept), are not applied.
    ///
    /// An answer to a state not published yet comes only after a world
    /// took over from one that died (see `crate::standby`): the dead world
    /// may have published one more state than the standby received, and
    /// the nodes answered it. An answer to the state after the last
    /// published is held until that state is published again, so that it
    /// moves its robots at the step it answers; one further ahead cannot
    /// answer any state of this world and is dropped.
    pub fn push(&mut self, actuation: Actuation, promise: Option<Promise>) {
        if actuation.step > self.published {
            if actuation.step == self.published + 1 {
                self.early.push((actuation, promise));
            } else {
                tracing::debug!(
                    "{}'s answer to state {} dropped: this world has published state {} only",
                    actuation.node,
                    actuation.step,
                    self.published
                );
            }
            return;
        }
        // Zenoh brings a node's messages twice when the node is linked to
        // this world both directly and through another router (a
        // standby's), the second copy a step or more late: applied then,
        // it would undo what came in between. A drive answers states in
        // order, and the same state again only with a new command (in real
        // time, a `cmd_vel` taken at once).
        let print = fingerprint(&actuation.commands);
        let again = self.answered.get(&actuation.node).is_some_and(|&(last, last_print)| {
            actuation.step < last || (actuation.step == last && print == last_print)
        });
        if again {
            tracing::debug!("{}'s answer to state {} again: dropped", actuation.node, actuation.step);
            return;
        }
        self.answered.insert(actuation.node.clone(), (actuation.step, print));
        let Actuation { node, step, commands } = actuation;
        let stale = self.before_reset(step);
        let followed = stale || self.followed.get(&node).is_some_and(|&f| step <= f);
        match promise {
            _ if stale => {}
            Some(promise) => {
                let newer = self.promises.get(&node).is_none_or(|(answered, _)| *answered <= step);
                if newer {
                    self.promises.insert(node.clone(), (step, promise));
                }
            }
            None => {
                self.promises.remove(&node);
            }
        }
        let bodies = self.driven_by.entry(node).or_default();
        for command in commands {
            bodies.insert(command.body);
            if !followed {
                self.pending.push(command);
            }
        }
    }

    /// The world steps from `state` without `node`'s answer to it: queues
    /// the commands its promise changes at that state. Returns whether the
    /// promise covered it (it always should: the barrier excuses a drive
    /// only at a state its promise reaches).
    pub fn follow_promise(&mut self, node: &str, state: u64) -> bool {
        if self.before_reset(state) {
            // Promised of the world before the reset: nothing to apply.
            self.followed.insert(node.to_string(), state);
            return true;
        }
        let Some((answered, promise)) = self.promises.get(node) else { return false };
        if state <= *answered || state > promise.through {
            return false;
        }
        let first = promise.changes.partition_point(|(step, _)| *step < state);
        let changes = promise.changes[first..].iter().take_while(|(step, _)| *step == state);
        let before = self.pending.len();
        self.pending.extend(changes.map(|(_, command)| *command));
        if self.pending.len() > before && !self.told.contains(node) {
            tracing::info!(
                "lockstep: {node}'s answer to state {state} taken from its promise, with the changes it planned"
            );
            self.told.insert(node.to_string());
        }
        self.followed.insert(node.to_string(), state);
        true
    }

    /// The drives whose latest answer came with a promise.
    pub fn promising(&self) -> Vec<String> {
        self.promises.keys().cloned().collect()
    }

    /// A node's token disappeared: queue zero commands for its bodies.
    pub fn node_lost(&mut self, node: &str) -> usize {
        self.promises.remove(node);
        self.answered.remove(node);
        let Some(bodies) = self.driven_by.remove(node) else { return 0 };
        let n = bodies.len();
        self.pending.retain(|c| !bodies.contains(&c.body));
        for body in bodies {
            self.pending.push(BodyCommand { body, local_vx_mps: 0.0, local_vy_mps: 0.0, omega_radps: 0.0 });
        }
        n
    }

    /// The world was reset while state `published` was out: the commands
    /// received for the next step, and the promises, were worked out from
    /// the world before it and would move a robot the reset just put at
    /// rest. So would answers to `published` still on their way, however
    /// late they come (how late is a matter of timing, and a lockstep run
    /// must not depend on it): they are dropped too, and the step after
    /// the reset takes no drive's command. The drives start afresh at the
    /// reset (see `WorldDescription::resets`) and command from the next
    /// state.
    pub fn world_reset(&mut self, published: u64) {
        self.pending.clear();
        self.promises.clear();
        self.reset_at = Some(published);
    }

    fn before_reset(&self, step: u64) -> bool {
        self.reset_at.is_some_and(|r| step <= r)
    }

    /// Hands the pending commands to the step, in arrival order.
    pub fn drain(&mut self) -> std::vec::Drain<'_, BodyCommand> {
        self.pending.drain(..)
    }
}

/// A cheap digest of `commands` (FNV-1a over their bits), to tell a copy
/// of an answer from a new answer to the same state.
fn fingerprint(commands: &[BodyCommand]) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325_u64;
    for c in commands {
        for word in [u64::from(c.body), c.local_vx_mps.to_bits(), c.local_vy_mps.to_bits(), c.omega_radps.to_bits()] {
            hash = (hash ^ word).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(body: BodyId, v: f64) -> BodyCommand {
        BodyCommand { body, local_vx_mps: v, local_vy_mps: 0.0, omega_radps: 0.0 }
    }

    fn actuation(node: &str, step: u64, commands: Vec<BodyCommand>) -> Actuation {
        Actuation { node: node.into(), step, commands }
    }

    #[test]
    fn a_lost_drive_leaves_its_bodies_stopped() {
        let mut inbox = Inbox::at(3);
        inbox.push(actuation("drive-a", 3, vec![cmd(1, 0.5), cmd(2, 0.7)]), None);
        inbox.push(actuation("drive-b", 3, vec![cmd(3, 0.1)]), None);
        assert_eq!(inbox.drain().count(), 3);
        assert_eq!(inbox.node_lost("drive-a"), 2);
        let zeros: Vec<BodyCommand> = inbox.drain().collect();
        assert_eq!(zeros, vec![cmd(1, 0.0), cmd(2, 0.0)]);
        assert_eq!(inbox.node_lost("drive-a"), 0);
    }

    #[test]
    fn a_reset_drops_the_commands_worked_out_before_it() {
        let mut inbox = Inbox::at(7);
        inbox.push(actuation("drive", 7, vec![cmd(1, 0.6)]), None);
        inbox.world_reset(7);
        assert_eq!(inbox.drain().count(), 0, "the robot stays where the reset put it");
        let promise = Promise { through: 9, changes: vec![(8, cmd(1, 0.7))] };
        inbox.push(actuation("drive", 7, vec![cmd(1, 0.6)]), Some(promise));
        assert_eq!(inbox.drain().count(), 0, "nor does an answer to state 7 that comes after the reset");
        assert!(inbox.follow_promise("drive", 7), "a promise for state 7 is kept by applying nothing");
        assert!(!inbox.follow_promise("drive", 8), "and what it promised beyond is forgotten");
        assert_eq!(inbox.drain().count(), 0);
        inbox.published(8);
        inbox.push(actuation("drive", 8, vec![cmd(1, 0.0)]), None);
        assert_eq!(inbox.drain().collect::<Vec<_>>(), [cmd(1, 0.0)], "commands after the reset apply");
    }

    #[test]
    fn a_followed_promise_stands_in_for_the_answers_it_covers() {
        let mut inbox = Inbox::at(10);
        // Body 1 ramps 0.1 m/s a state, body 2 holds still.
        let promise = Promise { through: 13, changes: vec![(11, cmd(1, 0.2)), (12, cmd(1, 0.3))] };
        inbox.push(actuation("drive", 10, vec![cmd(1, 0.1), cmd(2, 0.0)]), Some(promise));
        assert_eq!(inbox.drain().count(), 2, "the answer to state 10 itself");
        inbox.published(11);
        assert!(inbox.follow_promise("drive", 11));
        assert_eq!(inbox.drain().collect::<Vec<_>>(), [cmd(1, 0.2)]);
        inbox.published(12);
        assert!(inbox.follow_promise("drive", 12));
        assert_eq!(inbox.drain().collect::<Vec<_>>(), [cmd(1, 0.3)]);
        inbox.published(13);
        assert!(inbox.follow_promise("drive", 13));
        assert_eq!(inbox.drain().count(), 0, "nothing changes at 13");
        assert!(!inbox.follow_promise("drive", 14), "beyond the promise");
        // The drive's own answers to 11..=13 arrive late: not applied again.
        for step in 11..=13 {
            inbox.push(actuation("drive", step, vec![cmd(1, 0.3), cmd(2, 0.0)]), None);
        }
        assert_eq!(inbox.drain().count(), 0);
        // Its answer to 14, waited for, is.
        inbox.published(14);
        inbox.push(actuation("drive", 14, vec![cmd(1, 0.4), cmd(2, 0.0)]), None);
        assert_eq!(inbox.drain().count(), 2);
        assert!(!inbox.follow_promise("drive", 15), "an answer without a promise withdraws it");
    }

    #[test]
    fn the_latest_answer_s_promise_is_followed() {
        let mut inbox = Inbox::at(11);
        let old = Promise { through: 20, changes: vec![(12, cmd(1, 0.5))] };
        let new = Promise { through: 20, changes: vec![(12, cmd(1, 0.9))] };
        inbox.push(actuation("drive", 11, vec![cmd(1, 0.0)]), Some(new));
        inbox.push(actuation("drive", 10, vec![cmd(1, 0.0)]), Some(old));
        inbox.drain().for_each(drop);
        assert!(inbox.follow_promise("drive", 12));
        assert_eq!(inbox.drain().collect::<Vec<_>>(), [cmd(1, 0.9)], "the answer to 11's, not to 10's");
        assert!(!inbox.follow_promise("drive", 11), "a state the promise was made after");
        assert!(!inbox.follow_promise("stranger", 12));
    }

    #[test]
    fn an_answer_brought_again_is_not_applied_again() {
        let mut inbox = Inbox::at(5);
        inbox.push(actuation("drive", 5, vec![cmd(1, 0.2)]), None);
        inbox.push(actuation("drive", 5, vec![cmd(1, 0.2)]), None);
        assert_eq!(inbox.drain().count(), 1, "twice at once: once");
        inbox.published(6);
        inbox.push(actuation("drive", 6, vec![cmd(1, 0.4)]), None);
        inbox.push(actuation("drive", 5, vec![cmd(1, 0.2)]), None);
        assert_eq!(inbox.drain().collect::<Vec<_>>(), [cmd(1, 0.4)], "5's again, after 6's, would undo it");
        // In real time, a command taken at once answers the same state anew.
        inbox.push(actuation("drive", 6, vec![cmd(1, 0.5)]), None);
        assert_eq!(inbox.drain().collect::<Vec<_>>(), [cmd(1, 0.5)]);
        // Another drive's answers are its own.
        inbox.push(actuation("other", 5, vec![cmd(2, 0.1)]), None);
        assert_eq!(inbox.drain().count(), 1);
    }

    #[test]
    fn an_answer_to_the_state_after_the_last_published_waits_for_it() {
        // A world that took over at state 20 from one that had published
        // state 21 before it died: the drive answered 21 already.
        let mut inbox = Inbox::at(20);
        inbox.push(actuation("drive", 20, vec![cmd(1, 0.2)]), None);
        inbox.push(actuation("drive", 21, vec![cmd(1, 0.3)]), None);
        inbox.push(actuation("drive", 40, vec![cmd(1, 9.0)]), None);
        assert_eq!(inbox.drain().collect::<Vec<_>>(), [cmd(1, 0.2)], "state 20's answer moves the robot from 20");
        inbox.published(21);
        assert_eq!(inbox.drain().collect::<Vec<_>>(), [cmd(1, 0.3)], "21's from 21");
        inbox.published(40);
        assert_eq!(inbox.drain().count(), 0, "no state of this world was answered with 9 m/s");
    }
}
