//! What a standby keeps of a lockstep run, so that a world taken over goes
//! on bit for bit as the killed one would have.
//!
//! In lockstep the world's steps are a function of its checkpoint and of
//! the drives' answers to each state (the barrier only decides when a step
//! is taken, never what it computes). A standby that follows a lockstep
//! run therefore keeps, beside the checkpoint it fetches, every drive's
//! answer (its actuation and promise) by the state it answers, and the
//! world's barrier as it hears it: who takes part, what each reported,
//! each drive's promise. Taking over, it restores the checkpoint of step
//! `c` and re-runs the steps from `c` to the last state `k` it received,
//! each with the answers to its state, and checks that this gives state
//! `k` bit for bit as the killed world published it. The new world then
//! waits, as the killed one did, for the answers to state `k` (those
//! already here are in its inbox) and steps on.
//!
//! When that cannot be done (a world event after the checkpoint, answers
//! missing, a re-run that does not give state `k`), the standby says why
//! and takes up the last state instead, as in the other clock modes.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use flotilla_wire::codec::{decode, encode};
use flotilla_wire::drive_to_world::{decode_actuation, Actuation, Promise};
use flotilla_wire::lockstep::decode_step_done;
use flotilla_wire::world_to_nodes::{WorldState, WorldStateHead};

use crate::node::inbox::Inbox;
use crate::node::stepper::step_with;
use crate::node::{Barrier, Handover};
use crate::physics::Physics;

/// The most states whose answers a standby keeps: 100 sim s at the
/// default 200 Hz, far more than the states between two checkpoints (one
/// is fetched every `PULL_EVERY`). Beyond it the oldest go, and a re-run
/// from a checkpoint older than what is kept is refused.
const MAX_KEPT_STATES: usize = 20_000;

/// Something heard after the handover was made, for the new world.
#[derive(Clone)]
enum Late {
    Answer(Actuation, Option<Promise>),
    Report { node: String, step: u64, commands_nothing: bool },
}

/// A lockstep run as a standby hears it.
#[derive(Default, Clone)]
pub struct LockstepRecords {
    /// Whether the run is in lockstep (its status says): only then are
    /// answers and reports kept.
    on: bool,
    /// The first state heard since keeping began: every answer to the
    /// states after it is here.
    since: Option<u64>,
    /// The last state heard.
    last_state: Option<u64>,
    /// Drives' answers by the state answered, in the order they came.
    answers: BTreeMap<u64, Vec<(Actuation, Option<Promise>)>>,
    /// The world's barrier as heard here.
    barrier: Barrier,
    /// A handover was made: what comes now is for the new world.
    late: Option<Vec<Late>>,
}

impl LockstepRecords {
    /// The run's clock mode is (`true`) or is not lockstep. Answers are
    /// kept from the next state heard on.
    pub fn lockstep(&mut self, on: bool) {
        if on != self.on {
            self.on = on;
            self.since = None;
            self.answers.clear();
        }
    }

    /// Whether answers and reports are kept (the run is in lockstep).
    pub fn keeping(&self) -> bool {
        self.on
    }

    /// A state of step `step` was heard.
    pub fn state(&mut self, step: u64) {
        self.last_state = Some(step);
        if self.on && self.since.is_none() {
            self.since = Some(step);
        }
    }

    /// A lockstep participant's token came (`alive`) or went.
    pub fn participant(&mut self, node: &str, alive: bool) {
        if alive {
            // As the world joins it: from the state after the one out.
            self.barrier.join(node, self.last_state.map_or(0, |s| s + 1));
        } else {
            self.barrier.leave(node);
        }
    }

    /// A drive's answer (an actuation's encoding).
    pub fn answer(&mut self, bytes: &[u8]) {
        if !self.on {
            return;
        }
        let Ok((actuation, promise)) = decode_actuation(bytes) else { return };
        self.barrier.actuated(&actuation.node, actuation.step, promise.as_ref().map(|p| p.through));
        if let Some(late) = &mut self.late {
            late.push(Late::Answer(actuation, promise));
            return;
        }
        self.answers.entry(actuation.step).or_default().push((actuation, promise));
        if self.answers.len() > MAX_KEPT_STATES {
            if let Some((oldest, _)) = self.answers.pop_first() {
                self.since = self.since.map(|s| s.max(oldest));
            }
        }
    }

    /// Participant `node`'s lockstep report (its encoding).
    pub fn report(&mut self, node: &str, bytes: &[u8]) {
        if !self.on {
            return;
        }
        let Ok((done, commands_nothing)) = decode_step_done(bytes) else { return };
        self.barrier.reported(node, done.step, commands_nothing);
        if let Some(late) = &mut self.late {
            late.push(Late::Report { node: node.to_string(), step: done.step, commands_nothing });
        }
    }

    /// A checkpoint of step `step` came: answers to the states before it
    /// are not needed any more.
    pub fn checkpointed(&mut self, step: u64) {
        self.answers = self.answers.split_off(&step);
    }

    /// Re-runs `physics`, restored from the killed world's checkpoint, up
    /// to `last`, the last state received (its encoding), and gives the
    /// inbox as the killed world's was then. Fails, saying why, when the
    /// re-run cannot be made or does not give `last`; `physics` may then
    /// have been stepped.
    pub fn rerun(&self, physics: &mut Physics, last: &[u8]) -> Result<Inbox, String> {
        let from = physics.step_count();
        let head = decode::<WorldStateHead>(last).map_err(|e| format!("its last state does not decode: {e}"))?;
        if !self.on {
            return Err("the run was not in lockstep".into());
        }
        match self.since {
            Some(since) if since < from => {}
            since => {
                let since = since.map_or("none".into(), |s| s.to_string());
                return Err(format!(
                    "its checkpoint of step {from} is older than the answers this standby kept (from the state after \
                     {since})"
                ));
            }
        }
        if head.revision != physics.revision() {
            return Err(format!(
                "the world changed after its checkpoint of step {from} (description revision {} there, {} at step {})",
                physics.revision(),
                head.revision,
                head.step
            ));
        }
        let mut inbox = Inbox::at(from);
        for state in from..head.step {
            self.step_from(physics, &mut inbox, state);
        }
        if head.step >= from {
            let mut state =
                WorldState { revision: 0, step: 0, time: Default::default(), step_ns: 0, bodies: Vec::new() };
            physics.state_into(&mut state);
            if encode(&state) != last {
                return Err(format!(
                    "re-running steps {from} to {} with the answers kept did not give the state it published",
                    head.step
                ));
            }
        }
        // States the drives answered after `last` were published, but this
        // standby's copies of them were dropped (they are droppable) or
        // still on their way. A lockstep world publishes a state only once
        // every answer to the one before is in, and those answers are here
        // (they are never dropped): the re-run goes on to the last state
        // answered, so that the new world does not publish again states
        // the nodes had.
        let mut at = physics.step_count();
        while self.answers.contains_key(&(at + 1)) {
            self.step_from(physics, &mut inbox, at);
            at += 1;
        }
        if at > head.step {
            tracing::info!(
                "re-ran on past this standby's last state ({}) to {at}, the last the drives answered",
                head.step
            );
        }
        Ok(inbox)
    }

    /// Steps `physics` from `state` as the killed world did: with the
    /// answers kept to it.
    fn step_from(&self, physics: &mut Physics, inbox: &mut Inbox, state: u64) {
        inbox.published(state);
        answer(inbox, self.answers.get(&state), state);
        step_with(physics, inbox);
    }

    /// What the new world goes on with at state `at`: the barrier as
    /// heard here, and `inbox` (the re-run's, or a new one) with the answers to `at` kept here, and those to the state
    /// after it held for it. What is heard from now on is kept for the new
    /// world's [`Handover::catch_up`], which then gives back `listening`,
    /// the subscriptions that heard it, to be dropped.
    pub fn handover(
        records: &Arc<Mutex<LockstepRecords>>,
        inbox: Option<Inbox>,
        at: u64,
        listening: Vec<Box<dyn std::any::Any + Send>>,
    ) -> Handover {
        let mut r = super::lock(records);
        let mut inbox = inbox.unwrap_or_else(|| Inbox::at(at));
        inbox.published(at);
        for (_, answers) in r.answers.range(at..) {
            for (actuation, promise) in answers {
                inbox.push(actuation.clone(), promise.clone());
            }
        }
        r.late = Some(Vec::new());
        let barrier = r.barrier.clone();
        drop(r);
        let records = records.clone();
        let catch_up = Box::new(move |barrier: &mut Barrier, inbox: &mut Inbox| {
            let late = super::lock(&records).late.take().unwrap_or_default();
            for heard in late {
                match heard {
                    Late::Answer(actuation, promise) => {
                        barrier.actuated(&actuation.node, actuation.step, promise.as_ref().map(|p| p.through));
                        inbox.push(actuation, promise);
                    }
                    Late::Report { node, step, commands_nothing } => barrier.reported(&node, step, commands_nothing),
                }
            }
            Box::new(listening) as Box<dyn std::any::Any + Send>
        });
        Handover { barrier, inbox, catch_up }
    }
}

/// Puts into `inbox` the world's answer to `state`: each drive's own
/// answer to it, in the order they came, and for each drive that has none
/// here the changes its promise made for it (the world did not wait for
/// it there; its own answer, late, would be the same).
fn answer(inbox: &mut Inbox, answers: Option<&Vec<(Actuation, Option<Promise>)>>, state: u64) {
    for (actuation, promise) in answers.into_iter().flatten() {
        inbox.push(actuation.clone(), promise.clone());
    }
    for node in inbox.promising() {
        inbox.follow_promise(&node, state);
    }
}

#[cfg(test)]
mod tests {
    use flotilla_wire::drive_to_world::{encode_actuation, BodyCommand};

    use super::*;
    use crate::checkpoint::{self, NodeMemory};

    fn room() -> Physics {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/tests/room/world.yaml");
        Physics::new(&flotilla_world_file::load_world(&path).expect("the test room loads")).unwrap()
    }

    fn state(physics: &Physics) -> Vec<u8> {
        let mut state = WorldState { revision: 0, step: 0, time: Default::default(), step_ns: 0, bodies: Vec::new() };
        physics.state_into(&mut state);
        encode(&state)
    }

    /// The drive's speed for the robot at `state`: up 0.1 m/s every 10
    /// states, so that its promises list changes.
    fn speed(state: u64) -> f64 {
        0.1 * (state / 10 + 1).min(8) as f64
    }

    /// A lockstep world driving the room's robot, as the killed world ran
    /// it, with a standby's records listening.
    struct Run {
        world: Physics,
        inbox: Inbox,
        records: Arc<Mutex<LockstepRecords>>,
        robot: u32,
    }

    impl Run {
        fn new() -> Run {
            let world = room();
            let robot = world.model_body_ids("robot")[0];
            let records = Arc::new(Mutex::new(LockstepRecords::default()));
            {
                let mut r = records.lock().unwrap();
                r.lockstep(true);
                r.participant("drive", true);
            }
            Run { world, inbox: Inbox::at(0), records, robot }
        }

        fn command(&self, state: u64) -> BodyCommand {
            BodyCommand { body: self.robot, local_vx_mps: speed(state), local_vy_mps: 0.0, omega_radps: 0.3 }
        }

        /// The drive's answer to `state`: every 20th promises the 5 after,
        /// with the changes of speed among them.
        fn answer(&self, state: u64) -> (Actuation, Option<Promise>) {
            let actuation = Actuation { node: "drive".into(), step: state, commands: vec![self.command(state)] };
            let promise = state.is_multiple_of(20).then(|| Promise {
                through: state + 5,
                changes: (state + 1..=state + 5)
                    .filter(|s| speed(*s) != speed(s - 1))
                    .map(|s| (s, self.command(s)))
                    .collect(),
            });
            (actuation, promise)
        }

        /// The world publishes its state; the standby hears it.
        fn publish(&mut self) -> Vec<u8> {
            let bytes = state(&self.world);
            self.inbox.published(self.world.step_count());
            self.records.lock().unwrap().state(self.world.step_count());
            bytes
        }

        /// The world steps from `state`, which the drive answered (heard
        /// by the standby unless `unheard`), or which its promise answered
        /// (the drive's own answer comes later).
        fn step(&mut self, unheard: bool) {
            let state = self.world.step_count();
            let (actuation, promise) = self.answer(state);
            let bytes = encode_actuation(&actuation, promise.as_ref());
            let promised = (1..=5).contains(&(state % 20));
            if promised {
                assert!(self.inbox.follow_promise("drive", state));
            } else {
                self.inbox.push(actuation, promise);
            }
            if !unheard {
                self.records.lock().unwrap().answer(&bytes);
            }
            step_with(&mut self.world, &mut self.inbox);
        }
    }

    #[test]
    fn a_standby_re_runs_the_steps_since_its_checkpoint_and_goes_on_bit_for_bit() {
        let mut run = Run::new();
        let mut checkpoint = None;
        for k in 0..500 {
            run.publish();
            if k == 200 {
                checkpoint = Some(checkpoint::save(&run.world, false, &NodeMemory::new()));
                run.records.lock().unwrap().checkpointed(k);
            }
            // The answer to 483, taken from a promise, was on its way to
            // the standby when the world died.
            run.step(k == 483);
        }
        let last = run.publish();
        // The drive answered state 500 before the world died.
        run.step(false);

        let mut standby = room();
        checkpoint::read(&checkpoint.unwrap()).unwrap().restore_into(&mut standby).unwrap();
        let inbox = run.records.lock().unwrap().rerun(&mut standby, &last).expect("re-run");
        assert_eq!(standby.step_count(), 500);
        assert_eq!(state(&standby), last, "state 500, bit for bit");
        let handover = LockstepRecords::handover(&run.records, Some(inbox), 500, Vec::new());
        let Handover { mut inbox, barrier, catch_up } = handover;
        assert!(barrier.pending(500).is_empty(), "the drive's answer to 500 is here");
        // After the handover, what the standby hears goes to the new world.
        let (actuation, promise) = run.answer(501);
        run.records.lock().unwrap().answer(&encode_actuation(&actuation, promise.as_ref()));
        let mut barrier = barrier;
        catch_up(&mut barrier, &mut inbox);
        step_with(&mut standby, &mut inbox);
        inbox.published(501);
        assert_eq!(state(&standby), state(&run.world), "state 501");
        for _ in 501..700 {
            run.publish();
            run.step(false);
            let state = standby.step_count();
            let (actuation, promise) = run.answer(state);
            if (1..=5).contains(&(state % 20)) {
                inbox.follow_promise("drive", state);
            } else {
                inbox.push(actuation, promise);
            }
            step_with(&mut standby, &mut inbox);
            inbox.published(standby.step_count());
        }
        assert_eq!(state(&standby), state(&run.world), "state 700");
        assert_ne!(state(&standby)[..], last[..], "the robot moved");
    }

    #[test]
    fn a_standby_that_missed_the_last_states_re_runs_on_to_the_last_one_the_drives_answered() {
        let mut run = Run::new();
        let mut checkpoint = None;
        let mut last_heard = Vec::new();
        for k in 0..300 {
            let published = run.publish();
            if k == 50 {
                checkpoint = Some(checkpoint::save(&run.world, false, &NodeMemory::new()));
                run.records.lock().unwrap().checkpointed(k);
            }
            // The standby's copies of states 297 to 300 were dropped.
            if k < 297 {
                last_heard = published;
            }
            run.step(false);
        }
        let last_published = run.publish();
        // The drive answered state 300 before the world died.
        run.step(false);

        let mut standby = room();
        checkpoint::read(&checkpoint.unwrap()).unwrap().restore_into(&mut standby).unwrap();
        run.records.lock().unwrap().rerun(&mut standby, &last_heard).expect("re-run");
        assert_eq!(standby.step_count(), 300, "on to the last state answered, not to the last one heard (296)");
        assert_eq!(state(&standby), last_published, "state 300, bit for bit");
    }

    #[test]
    fn a_re_run_that_cannot_give_the_world_s_state_says_why() {
        let mut run = Run::new();
        let mut checkpoint = None;
        for k in 0..300 {
            run.publish();
            if k == 30 {
                checkpoint = Some(checkpoint::save(&run.world, false, &NodeMemory::new()));
            }
            // An answer that changed the speed, lost on its way.
            run.step(k == 50);
        }
        let last = run.publish();
        let rerun = |records: &Arc<Mutex<LockstepRecords>>| {
            let mut standby = room();
            checkpoint::read(checkpoint.as_ref().unwrap()).unwrap().restore_into(&mut standby).unwrap();
            records.lock().unwrap().rerun(&mut standby, &last).err().expect("refused")
        };
        assert_eq!(
            rerun(&run.records),
            "re-running steps 30 to 300 with the answers kept did not give the state it published"
        );
        // Answers kept from a state after the checkpoint's.
        run.records.lock().unwrap().lockstep(false);
        run.records.lock().unwrap().lockstep(true);
        run.publish();
        let refused = rerun(&run.records);
        assert!(refused.starts_with("its checkpoint of step 30 is older than the answers"), "{refused}");
        // Not a lockstep run.
        run.records.lock().unwrap().lockstep(false);
        assert_eq!(rerun(&run.records), "the run was not in lockstep");
    }
}
