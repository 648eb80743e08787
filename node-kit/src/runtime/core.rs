//! How a node answers what arrives — world states, inputs, the world's
//! comings and goings, its clock mode, description changes — free of
//! Zenoh, so that it can run on whichever thread a message arrives on and
//! be tested directly.
//!
//! The core follows the world ([`WorldTracker`]), holds arrivals while the
//! main loop reworks the instances ([`Core::admits_here`]), and decides the
//! lockstep report of each state: the step after which the plugin has
//! nothing due, sent once (the world keeps reports across link cuts), and
//! not at all when the plugin's actuation of the step already reports it.

use std::sync::Arc;

use flotilla_wire::control::ClockMode;
use flotilla_wire::delivery::urgent;
use flotilla_wire::world_to_nodes::WorldState;
use flotilla_wire::world_tracker::{StateVerdict, WorldPresence, WorldTracker};

use super::outbox::Following;
use super::plugin::{NodePlugin, Outbox};
use crate::health::BadMessages;

/// At most this many steps are reported done ahead: a node that serves
/// nothing yet, or a 0.1 Hz sensor, still answers the barrier now and then,
/// and an instance spawned meanwhile is waited for soon.
pub const MAX_QUIET_STEPS_REPORTED: u64 = 100;

/// Something a node reacts to.
#[derive(Debug)]
pub enum Arrival {
    /// A world state.
    State(WorldState),
    /// A message on one of the plugin's inputs.
    Input {
        /// The plugin's tag for the input.
        tag: Arc<str>,
        /// The message.
        payload: Vec<u8>,
        /// Where a message the plugin cannot use is counted.
        bad: Arc<BadMessages>,
        /// The input's key, if the node forwards its messages to recorders
        /// (the runtime does, before the core sees it: see
        /// `crate::recording::forwarding`).
        forwarded: Option<Arc<str>>,
    },
    /// The world's liveliness token came or went.
    World(WorldPresence),
    /// The world's clock mode, from its status.
    Clock(ClockMode),
    /// The world description changed to this revision.
    Revision(u64),
}

/// Work only the main loop can do: fetch the world's description, claim,
/// rebuild the instances and their inputs. Arrivals are held meanwhile.
#[derive(Debug, PartialEq)]
pub struct Rework {
    /// A new world: forget everything ([`NodePlugin::reset`]) first.
    pub afresh: bool,
    /// The state that revealed the change, to answer once rebuilt.
    pub then: Option<WorldState>,
}

/// What the runtime must send after an arrival, beyond what the plugin put
/// in the outbox (its messages and actuation, always sent first).
#[derive(Debug, Default, PartialEq)]
pub struct Reply {
    /// A bare lockstep report of this step.
    pub report: Option<u64>,
    /// States up to this step may be skipped (see `StateGate`).
    pub quiet_until: Option<u64>,
    /// Work for the main loop.
    pub rework: Option<Rework>,
}

/// The last lockstep report, and whether it went as a bare report (one to
/// resend when the world's link comes back) or as an actuation.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Reported {
    step: u64,
    bare: bool,
}

/// A node's plugin and how it answers what arrives.
pub struct Core<P> {
    /// The plugin.
    pub plugin: P,
    /// What the plugin produced and the runtime has not sent yet.
    pub outbox: Outbox,
    /// The revision of the description the instances were built from.
    pub revision: u64,
    tracker: WorldTracker,
    /// Unknown until the world's first status: treated as lockstep.
    clock: Option<ClockMode>,
    last_report: Option<Reported>,
    /// The main loop is reworking the instances (or has not built them yet).
    held: bool,
}

impl<P: NodePlugin> Core<P> {
    /// A node that serves nothing yet: arrivals are held until the main
    /// loop calls [`Core::release`].
    pub fn new(plugin: P) -> Core<P> {
        Core {
            plugin,
            outbox: Outbox::default(),
            revision: 0,
            tracker: WorldTracker::default(),
            clock: None,
            last_report: None,
            held: true,
        }
    }

    /// Whether messages of this arrival should leave at once rather than
    /// batched (see [`urgent`]).
    pub fn urgent(&self) -> bool {
        urgent(self.clock)
    }

    /// The world's clock mode, once known.
    pub fn clock(&self) -> Option<ClockMode> {
        self.clock
    }

    /// Whether an arrival may be handled on the thread it came on. If not,
    /// it must be handed to the main loop: the instances are being
    /// reworked. (Arrivals handed earlier and not yet handled go first,
    /// and what an answer made may have to be sent by the main loop: the
    /// runtime decides both, see `handover`.)
    pub fn admits_here(&self) -> bool {
        !self.held
    }

    /// Holds arrivals for the main loop while it reworks the instances.
    pub fn hold(&mut self) {
        self.held = true;
    }

    /// The instances are ready again: arrivals are handled where they come
    /// once those already handed to the main loop are.
    pub fn release(&mut self) {
        self.held = false;
    }

    /// Handles one arrival.
    pub fn arrive(&mut self, arrival: Arrival) -> Reply {
        match arrival {
            Arrival::State(state) => match self.tracker.state(state.step) {
                StateVerdict::Duplicate => Reply::default(), // the world re-published a state we handled
                StateVerdict::Handle { resync: true } => self.rework(true, Some(state)),
                // A change not heard of yet (its event is late or lost).
                StateVerdict::Handle { resync: false } if state.revision > self.revision => {
                    self.rework(false, Some(state))
                }
                StateVerdict::Handle { resync: false } => self.answer(&state),
            },
            Arrival::Input { tag, payload, bad, .. } => {
                if let Err(e) = self.plugin.on_input(&tag, &payload, &mut self.outbox) {
                    bad.record(&e);
                }
                Reply::default()
            }
            Arrival::World(presence) => {
                // Reports are sent once; one lost with a cut link would
                // leave the world waiting for it. An actuation lost so is
                // not resent: the world's stall policy deals with it.
                let back = self.tracker.presence(&presence);
                let resend = self.last_report.filter(|r| back && r.bare).map(|r| r.step);
                Reply { report: resend, ..Reply::default() }
            }
            Arrival::Clock(clock) => {
                self.clock = Some(clock);
                self.outbox.follow(match clock {
                    ClockMode::Lockstep => Following::SubscribersEverSeen,
                    _ => Following::Subscribers,
                });
                self.plugin.on_clock(clock);
                Reply::default()
            }
            // States after the change must see the rebuilt instances.
            Arrival::Revision(revision) if revision > self.revision => self.rework(false, None),
            Arrival::Revision(_) => Reply::default(),
        }
    }

    fn rework(&mut self, afresh: bool, then: Option<WorldState>) -> Reply {
        self.held = true;
        Reply { rework: Some(Rework { afresh, then }), ..Reply::default() }
    }

    /// Resynchronising failed (no description yet): try again at the next
    /// state.
    pub fn resync_failed(&mut self) {
        self.tracker.resync_failed();
    }

    /// A new world: the plugin forgets everything, and the steps of the
    /// new world are counted afresh.
    pub fn reset(&mut self) {
        self.plugin.reset();
        self.last_report = None;
    }

    /// Hands `state` to the plugin and decides its lockstep report: the
    /// last step before anything is due again, sent unless the last report
    /// said the same or the plugin's actuation of this step says it.
    pub fn answer(&mut self, state: &WorldState) -> Reply {
        self.outbox.set_moment(state.time.nanos);
        self.plugin.on_state(state, &mut self.outbox);
        // Only lockstep's barrier uses a promise (the clock unknown yet
        // counts as lockstep).
        let lockstep = self.clock.is_none_or(|c| c == ClockMode::Lockstep);
        if lockstep && self.outbox.actuated() == Some(state.step) {
            let changes = self.outbox.promised_changes();
            if let Some(known) = self.plugin.promise(state, changes) {
                self.outbox.promise_through(state.step + known.min(MAX_QUIET_STEPS_REPORTED));
            }
        }
        let quiet = self.plugin.steps_without_output(state).min(MAX_QUIET_STEPS_REPORTED);
        let report = state.step + quiet;
        let by_actuation = report == state.step && self.outbox.actuated() == Some(state.step);
        let repeat = self.last_report.is_some_and(|r| r.step == report);
        self.last_report = Some(Reported { step: report, bare: !by_actuation });
        Reply { report: (!repeat && !by_actuation).then_some(report), quiet_until: Some(report), rework: None }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::plugin::Rebuild;
    use flotilla_plugins::registry::Role;
    use flotilla_wire::drive_to_world::BodyCommand;
    use flotilla_wire::time::SimTime;

    const STEP_NS: u64 = 5_000_000;

    fn state(step: u64, revision: u64) -> WorldState {
        WorldState { revision, step, time: SimTime { nanos: step * STEP_NS }, step_ns: STEP_NS, bodies: Vec::new() }
    }

    /// Publishes every `period` steps; with `actuates`, actuates every state.
    #[derive(Default)]
    struct Periodic {
        period: u64,
        actuates: bool,
        /// What `promise` answers: the steps known, with a change of body 1
        /// at each of them.
        steady: Option<u64>,
        inputs: Vec<String>,
        resets: usize,
    }

    static ROLE: Role = Role::sensor("Test", "flotilla-test", "test");

    impl NodePlugin for Periodic {
        fn role(&self) -> &'static Role {
            &ROLE
        }
        fn rebuild(&mut self, _: &mut Rebuild<'_>) {}
        fn reset(&mut self) {
            self.resets += 1;
        }
        fn on_state(&mut self, state: &WorldState, out: &mut Outbox) {
            if self.actuates {
                out.actuate(state.step);
            }
            if state.step.is_multiple_of(self.period.max(1)) {
                out.put("scan".into(), vec![state.step as u8]);
            }
        }
        fn on_input(&mut self, tag: &str, payload: &[u8], _: &mut Outbox) -> Result<(), super::super::BadInput> {
            if payload.is_empty() {
                return Err(super::super::BadInput("empty".into()));
            }
            self.inputs.push(tag.to_string());
            Ok(())
        }
        fn promise(&self, state: &WorldState, changes: &mut Vec<(u64, BodyCommand)>) -> Option<u64> {
            let known = self.steady?;
            for step in state.step + 1..=state.step + known.min(200) {
                changes.push((step, BodyCommand { body: 1, local_vx_mps: step as f64, ..BodyCommand::default() }));
            }
            Some(known)
        }
        fn steps_without_output(&self, state: &WorldState) -> u64 {
            let period = self.period.max(1);
            period - 1 - state.step % period
        }
    }

    fn released(plugin: Periodic) -> Core<Periodic> {
        let mut core = Core::new(plugin);
        core.release();
        core
    }

    #[test]
    fn a_sensor_reports_the_steps_it_has_nothing_due_once() {
        let mut core = released(Periodic { period: 20, ..Default::default() });
        let first = core.arrive(Arrival::State(state(0, 0)));
        assert_eq!(first, Reply { report: Some(19), quiet_until: Some(19), rework: None });
        assert_eq!(core.outbox.drain().count(), 1, "the scan of step 0");
        let again = core.arrive(Arrival::State(state(1, 0)));
        assert_eq!(again.report, None, "step 19 is reported already");
        assert_eq!(core.arrive(Arrival::State(state(20, 0))).report, Some(39));
        assert_eq!(core.arrive(Arrival::State(state(20, 0))), Reply::default(), "a re-published state");
    }

    #[test]
    fn a_drive_s_actuation_is_its_report() {
        let mut core = released(Periodic { period: 1, actuates: true, ..Default::default() });
        let reply = core.arrive(Arrival::State(state(4, 0)));
        assert_eq!(reply.report, None, "the actuation of step 4 reports it");
        assert_eq!(core.outbox.take_actuation().map(|(step, _)| step), Some(4));
        let world = core.arrive(Arrival::World(WorldPresence::Up("world-a".into())));
        assert_eq!(world.report, None);
        let back = core.arrive(Arrival::World(WorldPresence::Up("world-a".into())));
        assert_eq!(back.report, None, "an actuation is not resent as a bare report");
    }

    #[test]
    fn a_drive_promises_its_next_answers_in_lockstep_only_and_at_most_100_steps() {
        let mut core = released(Periodic { period: 1, actuates: true, steady: Some(1000), ..Default::default() });
        core.arrive(Arrival::State(state(4, 0)));
        assert_eq!(core.outbox.take_actuation().map(|(step, _)| step), Some(4));
        let promise = core.outbox.take_promise().cloned().expect("the clock unknown counts as lockstep");
        assert_eq!(promise.through, 104);
        let steps: Vec<u64> = promise.changes.iter().map(|(step, _)| *step).collect();
        assert_eq!(steps, (5..=104).collect::<Vec<_>>(), "the changes within what is promised");
        assert_eq!(core.outbox.take_promise(), None, "once");
        core.plugin.steady = Some(0);
        core.arrive(Arrival::State(state(5, 0)));
        let promise = core.outbox.take_promise().cloned();
        assert_eq!(
            promise.map(|p| (p.through, p.changes.len())),
            Some((5, 0)),
            "publishes nothing else, knows nothing"
        );
        core.plugin.steady = None;
        core.arrive(Arrival::State(state(6, 0)));
        assert_eq!(core.outbox.take_promise(), None, "publishes more than its actuation");
        core.plugin.steady = Some(3);
        core.arrive(Arrival::Clock(ClockMode::Fast));
        core.arrive(Arrival::State(state(7, 0)));
        assert_eq!(core.outbox.take_promise(), None, "fast mode has no use for it");
        core.arrive(Arrival::Clock(ClockMode::Lockstep));
        core.arrive(Arrival::State(state(8, 0)));
        assert_eq!(core.outbox.take_promise().map(|p| p.through), Some(11));
    }

    #[test]
    fn a_bare_report_is_resent_when_the_world_s_link_comes_back() {
        let mut core = released(Periodic { period: 10, ..Default::default() });
        core.arrive(Arrival::World(WorldPresence::Up("world-a".into())));
        core.arrive(Arrival::State(state(0, 0)));
        core.arrive(Arrival::World(WorldPresence::Down("world-a".into())));
        let back = core.arrive(Arrival::World(WorldPresence::Up("world-a".into())));
        assert_eq!(back.report, Some(9));
    }

    #[test]
    fn a_new_revision_or_a_new_world_asks_the_main_loop_for_a_rework() {
        let mut core = released(Periodic { period: 1, ..Default::default() });
        assert_eq!(core.arrive(Arrival::Revision(0)), Reply::default(), "known revision");
        let spawned = core.arrive(Arrival::Revision(2));
        assert_eq!(spawned.rework, Some(Rework { afresh: false, then: None }));
        assert!(!core.admits_here(), "held until rebuilt");
        core.arrive(Arrival::Clock(ClockMode::Lockstep));
        core.revision = 2;
        core.release();
        assert!(core.admits_here());

        let late = core.arrive(Arrival::State(state(3, 5)));
        assert_eq!(late.rework, Some(Rework { afresh: false, then: Some(state(3, 5)) }), "an event not heard of");
        core.revision = 5;
        core.release();
        core.arrive(Arrival::State(state(9, 5)));
        let back_in_time = core.arrive(Arrival::State(state(2, 5)));
        assert_eq!(back_in_time.rework, Some(Rework { afresh: true, then: Some(state(2, 5)) }), "a new world");
    }

    #[test]
    fn until_built_arrivals_go_to_the_main_loop() {
        let mut core = Core::new(Periodic::default());
        assert!(!core.admits_here(), "nothing built yet");
        core.release();
        assert!(core.admits_here(), "built: the receiving thread answers");
        core.hold();
        assert!(!core.admits_here(), "held while reworked");
    }

    #[test]
    fn inputs_reach_the_plugin_and_bad_ones_are_counted() {
        let mut core = released(Periodic::default());
        let bad = Arc::new(BadMessages::new("robot1/cmd_vel"));
        let input = |payload: Vec<u8>| Arrival::Input {
            tag: "robot1/drive".into(),
            payload,
            bad: bad.clone(),
            forwarded: None,
        };
        core.arrive(input(vec![1]));
        core.arrive(input(vec![]));
        assert_eq!(core.plugin.inputs, ["robot1/drive"]);
        assert_eq!(bad.count(), 1);
    }

    #[test]
    fn a_reset_counts_the_new_world_s_steps_afresh() {
        let mut core = released(Periodic { period: 10, ..Default::default() });
        assert_eq!(core.arrive(Arrival::State(state(0, 0))).report, Some(9));
        core.reset();
        assert_eq!(core.answer(&state(0, 0)).report, Some(9), "the new world's step 9 is reported again");
        assert_eq!(core.plugin.resets, 1);
    }
}
