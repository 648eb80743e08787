//! When the world steps, free of Zenoh: the clock mode's pacing, the
//! lockstep barrier (with its stall policy), pausing and stepping by hand,
//! the external clock, and the actuation inbox applied at each step. The
//! world node's loop asks [`Stepper::next`] what to do, does it, and
//! publishes; tests ask the same with instants of their choosing.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use flotilla_wire::control::ClockMode;
use flotilla_wire::lockstep::FAST_MAX_LEAD_STEPS;
use flotilla_world_file::StallPolicy;

use super::barrier::Barrier;
use super::inbox::Inbox;
use super::pacing::Pacer;
use crate::control::RunState;
use crate::physics::Physics;
use crate::ros_services::simulate_steps::SimulateSteps;

/// How long the loop waits for news (a report, an actuation, a control
/// request) before it looks again, when nothing else is due.
const IDLE_WAIT: Duration = Duration::from_millis(20);

/// Every how many steps a fast or lockstep world lets shutdown and control
/// requests in.
const YIELD_EVERY_STEPS: u64 = 64;

/// How long a lockstep world waits on a participant before it publishes the
/// state again (and again after as long): a participant whose link came
/// back may have joined before its subscription did, and so missed the
/// very state the barrier waits on; it would never answer. Nodes ignore a
/// state they have handled.
pub const RESEND_STATE_AFTER: Duration = Duration::from_secs(1);

/// The simulation as the world node's callbacks and loop share it.
pub struct Sim {
    /// The bodies.
    pub physics: Physics,
    /// Paused, clock mode, steps pending.
    pub run: RunState,
    /// Drives' actuations, applied at the next step.
    pub inbox: Inbox,
    /// Live nodes, by id.
    pub nodes: BTreeSet<String>,
    /// Lockstep participants and their reports.
    pub barrier: Barrier,
    /// Step of the last published state.
    pub published_step: u64,
    /// Latest external clock, ns.
    pub external_ns: Option<u64>,
    /// Live claims: instance → nodes.
    pub claims: BTreeMap<String, BTreeSet<String>>,
    /// A participant joined while paused: publish the current state again so
    /// that it sees (and reports) the step the world waits at.
    pub republish: bool,
    /// The `simulate_steps` action's goals.
    pub actions: SimulateSteps,
    /// What nodes asked the world to keep for them, by key (see `memory`).
    pub memory: BTreeMap<String, Vec<u8>>,
}

impl Sim {
    /// A simulation of `physics`, run as `run` says.
    pub fn new(physics: Physics, run: RunState) -> Sim {
        // A world resumed or taken over starts at its step: participants
        // joining owe the states from there on, not from step 0 (those
        // before were answered to the world that ran them).
        let published_step = physics.step_count();
        Sim {
            physics,
            run,
            inbox: Inbox::at(published_step),
            nodes: BTreeSet::new(),
            actions: SimulateSteps::default(),
            barrier: Barrier::default(),
            published_step,
            external_ns: None,
            claims: BTreeMap::new(),
            republish: false,
            memory: BTreeMap::new(),
        }
    }

    /// The world publishes state `step` of description `revision`.
    pub fn published(&mut self, step: u64, revision: u64) {
        self.published_step = step;
        self.barrier.published(step, revision);
        self.inbox.published(step);
    }
}

/// What a world that took over a lockstep run goes on with (see
/// `crate::standby`): the barrier as its standby heard it (who takes part,
/// what each reported, each drive's promise) and the inbox after the
/// standby re-ran the steps since its checkpoint, holding the answers to
/// the state it took over at.
pub struct Handover {
    pub(crate) barrier: Barrier,
    pub(crate) inbox: Inbox,
    /// Brings in what reached the standby's subscriptions after the
    /// handover was made and before the world node's own were declared, and
    /// gives back those subscriptions, to be dropped (undeclared) once the
    /// simulation is unlocked: called once, before the first step.
    pub(crate) catch_up: CatchUp,
}

/// See [`Handover::catch_up`].
pub(crate) type CatchUp = Box<dyn FnOnce(&mut Barrier, &mut Inbox) -> Box<dyn std::any::Any + Send> + Send>;

impl std::fmt::Debug for Handover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handover").field("barrier", &self.barrier).finish_non_exhaustive()
    }
}

/// One step of `physics` with the commands `inbox` holds for it, in the
/// order they came: the world's step, and a standby's re-run of it.
pub(crate) fn step_with(physics: &mut Physics, inbox: &mut Inbox) {
    for command in inbox.drain() {
        physics.command(command);
    }
    physics.step();
}

/// What the world does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Take a step ([`Stepper::step`]) and publish it; with `yield_first`,
    /// let shutdown and control requests in first.
    Step {
        /// Let other tasks run before stepping.
        yield_first: bool,
    },
    /// Publish the current state again (a participant joined while paused).
    Republish,
    /// Wait for news or until `until`.
    Wait {
        /// When to look again at the latest.
        until: Instant,
        /// Paused: realtime pacing starts afresh when stepping resumes.
        paused: bool,
        /// Waiting on the lockstep participants' answers to the last state,
        /// which usually come within a round trip.
        on_answers: bool,
    },
}

/// Decides when the world steps.
#[derive(Debug)]
pub struct Stepper {
    pacer: Pacer,
    step_ns: u64,
    lockstep_timeout: Duration,
    stall_policy: StallPolicy,
    /// Since when the world waits for which step.
    waiting: Option<(u64, Instant)>,
    /// When the state waited on was last published (first or again).
    sent_at: Option<Instant>,
}

impl Stepper {
    /// A stepper for steps of `step_ns`, paced at `real_time_factor` in
    /// realtime mode; a lockstep participant silent for `lockstep_timeout`
    /// is reported, and dropped under `stall_policy`.
    pub fn new(step_ns: u64, real_time_factor: f64, lockstep_timeout: Duration, stall_policy: StallPolicy) -> Self {
        Stepper {
            pacer: Pacer::new(step_ns, real_time_factor),
            step_ns,
            lockstep_timeout,
            stall_policy,
            waiting: None,
            sent_at: None,
        }
    }

    /// What to do at `now`, the last published state being `step` at sim
    /// time `time_ns`.
    pub fn next(&mut self, sim: &mut Sim, step: u64, time_ns: u64, now: Instant) -> Next {
        let run = &mut sim.run;
        if std::mem::take(&mut run.clock_changed) {
            self.pacer.set_real_time_factor(run.real_time_factor, now);
            tracing::info!("clock mode {} (real-time factor {})", run.clock, run.real_time_factor);
        }
        let (paused, mode) = (run.paused, run.clock);
        let may_step = !paused || run.steps_pending > 0;
        if !may_step {
            if std::mem::take(&mut sim.republish) {
                return Next::Republish;
            }
            return Next::Wait { until: now + IDLE_WAIT, paused: true, on_answers: false };
        }
        let barrier_clear = match mode {
            // Lockstep: every participant must be done with the last state.
            ClockMode::Lockstep => self.barrier_clear(&mut sim.barrier, step, self.stall_policy, now),
            // Fast: flow control only. Nodes that fall more than
            // FAST_MAX_LEAD_STEPS behind would otherwise queue states
            // without bound (memory) and spend their CPU on states long
            // gone; one that stops answering is dropped, never waited for.
            ClockMode::Fast => match step.checked_sub(FAST_MAX_LEAD_STEPS) {
                Some(behind) => self.barrier_clear(&mut sim.barrier, behind, StallPolicy::Drop, now),
                None => true,
            },
            ClockMode::Realtime | ClockMode::External => true,
        };
        // `step N` while paused steps at once in every mode.
        let due = paused
            || match mode {
                ClockMode::Realtime => now >= self.pacer.next_due(),
                ClockMode::Fast | ClockMode::Lockstep => true,
                ClockMode::External => sim.external_ns.is_some_and(|target| time_ns + self.step_ns <= target),
            };
        if barrier_clear && due {
            let yield_first = mode != ClockMode::Realtime && step.is_multiple_of(YIELD_EVERY_STEPS);
            return Next::Step { yield_first };
        }
        if mode == ClockMode::Lockstep && !barrier_clear && self.resend_due(now) {
            return Next::Republish;
        }
        let until = match mode {
            ClockMode::Realtime => self.pacer.next_due().max(now),
            _ => now + IDLE_WAIT,
        };
        Next::Wait { until, paused: false, on_answers: mode == ClockMode::Lockstep && !barrier_clear }
    }

    /// Takes one step: the actuations received (and, in lockstep, the
    /// answers of drives not waited for, from their promises), then
    /// physics.
    pub fn step(&mut self, sim: &mut Sim) {
        if sim.run.clock == ClockMode::Lockstep {
            let state = sim.published_step;
            for node in sim.barrier.answered_by_promise(state) {
                if !sim.inbox.follow_promise(node, state) {
                    tracing::warn!("lockstep: {node}'s promise does not reach state {state}");
                }
            }
        }
        step_with(&mut sim.physics, &mut sim.inbox);
        sim.run.steps_pending = sim.run.steps_pending.saturating_sub(1);
    }

    /// The step taken is published at `now`.
    pub fn stepped(&mut self, now: Instant) {
        self.pacer.stepped(now);
        self.sent_at = Some(now);
    }

    /// Whether the state the barrier waits on went out
    /// [`RESEND_STATE_AFTER`] ago or more without every answer: then it is
    /// published again, counted from `now`.
    fn resend_due(&mut self, now: Instant) -> bool {
        let sent = *self.sent_at.get_or_insert(now);
        let due = now.duration_since(sent) >= RESEND_STATE_AFTER;
        if due {
            self.sent_at = Some(now);
            tracing::debug!("lockstep: publishing the state waited on again");
        }
        due
    }

    /// The world waited at `now` while paused: realtime pacing starts
    /// afresh from there.
    pub fn paused(&mut self, now: Instant) {
        self.pacer.restart(now);
    }

    /// Whether every lockstep participant is done with `step`; one that has
    /// not answered for the lockstep timeout is reported, and dropped under
    /// `policy`.
    fn barrier_clear(&mut self, barrier: &mut Barrier, step: u64, policy: StallPolicy, now: Instant) -> bool {
        let pending = barrier.pending(step);
        if pending.is_empty() {
            self.waiting = None;
            return true;
        }
        let since = match self.waiting {
            Some((k, t)) if k == step => t,
            _ => {
                self.waiting = Some((step, now));
                now
            }
        };
        if now.duration_since(since) >= self.lockstep_timeout {
            let (waited, who) = (self.lockstep_timeout, pending.join(", "));
            match policy {
                StallPolicy::Wait => tracing::warn!("lockstep: step {step}: still waiting for {who} after {waited:?}"),
                StallPolicy::Drop => {
                    tracing::warn!(
                        "lockstep: step {step}: dropping {who} from the barrier after {waited:?} without an answer"
                    );
                    barrier.drop_members(&pending);
                }
            }
            self.waiting = Some((step, now));
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::ModelDirs;
    use flotilla_wire::drive_to_world::{Actuation, BodyCommand, Promise};
    use flotilla_wire::world_to_nodes::WorldState;
    use std::path::Path;

    const TIMEOUT: Duration = Duration::from_millis(500);

    /// Flatland's laser range test world (one robot), in `clock` mode.
    fn sim(clock: ClockMode, paused: bool) -> (Sim, Stepper) {
        let world = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/fixtures/flatland/laser_tests/range_test/world.yaml");
        let spec = flotilla_world_file::load_world(&world).unwrap();
        let physics = Physics::new(&spec).unwrap();
        let stepper = Stepper::new(physics.step_ns(), 1.0, TIMEOUT, StallPolicy::Drop);
        (Sim::new(physics, RunState::new(clock, 1.0, paused, ModelDirs::default())), stepper)
    }

    /// Steps as [`Next`] says, at `now`, until it says wait; returns how many.
    fn run_until_wait(sim: &mut Sim, stepper: &mut Stepper, now: Instant) -> u64 {
        let mut steps = 0;
        loop {
            let published = sim.physics.step_count();
            let time_ns = published * sim.physics.step_ns();
            match stepper.next(sim, published, time_ns, now) {
                Next::Step { .. } => {
                    stepper.step(sim);
                    sim.published_step = sim.physics.step_count();
                    stepper.stepped(now);
                    steps += 1;
                }
                Next::Wait { .. } => return steps,
                Next::Republish => {}
            }
            assert!(steps < 10_000, "never waits");
        }
    }

    #[test]
    fn in_lockstep_each_step_waits_for_every_participant() {
        let (mut sim, mut stepper) = sim(ClockMode::Lockstep, false);
        let now = Instant::now();
        sim.barrier.join("laser", 1);
        assert_eq!(run_until_wait(&mut sim, &mut stepper, now), 1, "step 0 needs no report; step 1 does");
        sim.barrier.done("laser", 1);
        assert_eq!(run_until_wait(&mut sim, &mut stepper, now), 1);
        sim.barrier.done("laser", 20); // a 10 Hz laser: nothing due until step 21
        assert_eq!(run_until_wait(&mut sim, &mut stepper, now), 19, "steps 3 to 21");
        assert_eq!(sim.physics.step_count(), 21, "waits for the laser's report of step 21");
    }

    #[test]
    fn a_stalled_participant_is_dropped_after_the_timeout() {
        let (mut sim, mut stepper) = sim(ClockMode::Lockstep, false);
        let start = Instant::now();
        sim.barrier.join("drive", 1);
        run_until_wait(&mut sim, &mut stepper, start);
        assert!(matches!(stepper.next(&mut sim, 1, 0, start + TIMEOUT / 2), Next::Wait { .. }), "not yet");
        assert!(matches!(stepper.next(&mut sim, 1, 0, start + TIMEOUT), Next::Wait { .. }), "dropped now");
        assert_eq!(sim.barrier.size(), 0);
        assert!(matches!(stepper.next(&mut sim, 1, 0, start + TIMEOUT), Next::Step { .. }));
    }

    #[test]
    fn a_state_waited_on_for_long_is_published_again() {
        let (mut sim, _) = sim(ClockMode::Lockstep, false);
        // A participant that is waited for, not dropped.
        let mut stepper = Stepper::new(sim.physics.step_ns(), 1.0, RESEND_STATE_AFTER * 10, StallPolicy::Wait);
        let start = Instant::now();
        sim.barrier.join("laser", 1);
        run_until_wait(&mut sim, &mut stepper, start);
        let waiting = |stepper: &mut Stepper, sim: &mut Sim, at| stepper.next(sim, 1, 0, start + at);
        assert!(matches!(waiting(&mut stepper, &mut sim, RESEND_STATE_AFTER / 2), Next::Wait { .. }));
        assert_eq!(waiting(&mut stepper, &mut sim, RESEND_STATE_AFTER), Next::Republish, "a missed state comes again");
        assert!(matches!(waiting(&mut stepper, &mut sim, RESEND_STATE_AFTER * 3 / 2), Next::Wait { .. }));
        assert_eq!(waiting(&mut stepper, &mut sim, RESEND_STATE_AFTER * 2), Next::Republish, "and again");
        sim.barrier.done("laser", 1);
        assert!(matches!(waiting(&mut stepper, &mut sim, RESEND_STATE_AFTER * 2), Next::Step { .. }));
    }

    #[test]
    fn fast_mode_runs_ahead_of_a_slow_node_by_a_bounded_lead() {
        let (mut sim, mut stepper) = sim(ClockMode::Fast, false);
        sim.barrier.join("laser", 0);
        let steps = run_until_wait(&mut sim, &mut stepper, Instant::now());
        assert_eq!(steps, FAST_MAX_LEAD_STEPS, "steps 0..lead need nothing of the laser");
    }

    #[test]
    fn realtime_steps_when_the_wall_clock_says() {
        let (mut sim, mut stepper) = sim(ClockMode::Realtime, false);
        let start = Instant::now();
        stepper.paused(start);
        let step = Duration::from_nanos(sim.physics.step_ns());
        assert_eq!(run_until_wait(&mut sim, &mut stepper, start), 1, "the first step is due at once");
        match stepper.next(&mut sim, 1, 0, start) {
            Next::Wait { until, paused: false, on_answers: false } => assert_eq!(until, start + step),
            other => panic!("{other:?}"),
        }
        assert_eq!(run_until_wait(&mut sim, &mut stepper, start + step * 3), 3, "due at 1, 2 and 3 steps");
    }

    #[test]
    fn paused_it_steps_only_by_hand_and_republishes_for_a_newcomer() {
        let (mut sim, mut stepper) = sim(ClockMode::Lockstep, true);
        let now = Instant::now();
        assert_eq!(run_until_wait(&mut sim, &mut stepper, now), 0);
        sim.run.steps_pending = 3;
        assert_eq!(run_until_wait(&mut sim, &mut stepper, now), 3);
        sim.republish = true;
        assert_eq!(stepper.next(&mut sim, 3, 0, now), Next::Republish);
        assert!(matches!(stepper.next(&mut sim, 3, 0, now), Next::Wait { paused: true, .. }));
    }

    #[test]
    fn external_clock_steps_up_to_the_clock_followed() {
        let (mut sim, mut stepper) = sim(ClockMode::External, false);
        let now = Instant::now();
        assert_eq!(run_until_wait(&mut sim, &mut stepper, now), 0, "no clock yet");
        sim.external_ns = Some(sim.physics.step_ns() * 5 + 1);
        assert_eq!(run_until_wait(&mut sim, &mut stepper, now), 5);
    }

    #[test]
    fn in_lockstep_a_drive_not_waited_for_is_answered_by_its_promise() {
        let (mut sim, mut stepper) = sim(ClockMode::Lockstep, false);
        let now = Instant::now();
        let body = sim.physics.model_body_ids("robot1")[0];
        let cmd = |v| BodyCommand { body, local_vx_mps: v, ..BodyCommand::default() };
        let answer = |sim: &mut Sim, step, v, promise: Option<Promise>| {
            sim.barrier.actuated("drive", step, promise.as_ref().map(|p| p.through));
            sim.inbox.push(Actuation { node: "drive".into(), step, commands: vec![cmd(v)] }, promise);
        };
        // Steps once if the barrier lets it, publishing the next state as
        // the world does; returns the body's speed in that state.
        let step = |sim: &mut Sim, stepper: &mut Stepper| {
            let published = sim.published_step;
            let next = stepper.next(sim, published, published * sim.physics.step_ns(), now);
            assert!(matches!(next, Next::Step { .. }), "state {published}: {next:?}");
            stepper.step(sim);
            sim.published(sim.physics.step_count(), sim.physics.revision());
            let mut state = WorldState::at_rest(&sim.physics.description(), 0);
            sim.physics.state_into(&mut state);
            state.bodies.iter().find(|b| b.id == body).unwrap().twist.vx_mps
        };
        sim.barrier.join("drive", 0);
        sim.published(0, sim.physics.revision());
        answer(&mut sim, 0, 0.1, Some(Promise { through: 0, changes: vec![] }));
        assert!((step(&mut sim, &mut stepper) - 0.1).abs() < 1e-12);
        // Ramping: the answer to state 1 knows those to 2 and 3.
        let ramp = Promise { through: 3, changes: vec![(2, cmd(0.3)), (3, cmd(0.4))] };
        answer(&mut sim, 1, 0.2, Some(ramp));
        assert!((step(&mut sim, &mut stepper) - 0.2).abs() < 1e-12);
        // Nobody else works: states 2 and 3 go on without the drive.
        assert!(!sim.barrier.owes("drive", 2));
        assert!((step(&mut sim, &mut stepper) - 0.3).abs() < 1e-12, "state 2's answer, from the promise");
        assert!((step(&mut sim, &mut stepper) - 0.4).abs() < 1e-12, "state 3's");
        // The drive's own answers to 2 and 3 come late: not applied again.
        answer(&mut sim, 2, 0.3, None);
        answer(&mut sim, 3, 0.4, None);
        assert_eq!(sim.inbox.drain().count(), 0);
        assert!(sim.barrier.owes("drive", 4), "beyond the promise, the drive is waited for");
    }

    #[test]
    fn a_step_applies_the_actuations_received() {
        let (mut sim, mut stepper) = sim(ClockMode::Lockstep, false);
        let body = sim.physics.model_body_ids("robot1")[0];
        let command = BodyCommand { body, local_vx_mps: 1.0, local_vy_mps: 0.0, omega_radps: 0.0 };
        sim.inbox.push(Actuation { node: "drive-1".into(), step: 0, commands: vec![command] }, None);
        let before = sim.physics.description().models[0].pose;
        for _ in 0..10 {
            stepper.step(&mut sim);
        }
        let mut state = WorldState::at_rest(&sim.physics.description(), 0);
        sim.physics.state_into(&mut state);
        let moved_m = state.bodies.iter().find(|b| b.id == body).unwrap().pose.x_m - before.x_m;
        assert!(moved_m > 0.0, "the commanded body moved forward ({moved_m} m)");
    }
}
