//! What a drive node does with what reaches it — world states, commands,
//! the world's comings and goings, its clock mode — free of Zenoh, so that
//! it can run on whichever thread a message arrives on.
//!
//! In lockstep the world waits on every drive's answer to every state, so
//! the node answers a state on the thread that received it instead of
//! handing it to its main loop first: one thread wake-up less on the
//! critical path of every step. Only the main loop can rework the served
//! instances (that needs the world's description, claims and
//! subscriptions), and while it does, or while it still holds arrivals
//! handed to it, every later arrival is handed to it too, in order; see
//! [`Driving::admits_here`]. Either way each arrival is handled by
//! [`Driving::arrive`], one at a time, in the order it came.

use std::collections::BTreeMap;

use flotilla_protocol::control::ClockMode;
use flotilla_protocol::delivery::urgent;
use flotilla_protocol::drive_to_world::{Actuation, BodyCommand};
use flotilla_protocol::world_to_nodes::{BodyId, WorldState};
use flotilla_protocol::world_tracker::{StateVerdict, WorldPresence, WorldTracker};

use crate::diff_drive::{DiffDrive, DriveOutput};

/// A `cmd_vel` for one served instance.
#[derive(Debug, Clone, PartialEq)]
pub struct Command {
    /// The plugin instance (`model/plugin`).
    pub instance: String,
    /// Commanded forward speed, m/s.
    pub forward_mps: f64,
    /// Commanded yaw rate, rad/s.
    pub yaw_rate_radps: f64,
    /// The stamp of a `TwistStamped`, ns; `None` for a plain `Twist`.
    pub stamp_ns: Option<u64>,
}

/// Something a drive node reacts to.
#[derive(Debug)]
pub enum Arrival {
    /// A world state.
    State(WorldState),
    /// A `cmd_vel`.
    Command(Command),
    /// The world's liveliness token came or went.
    World(WorldPresence),
    /// The world's clock mode, from its status.
    Clock(ClockMode),
    /// The world description changed to this revision.
    Revision(u64),
}

/// What to do about an arrival.
#[derive(Debug, PartialEq)]
pub enum Answer {
    /// Nothing to send.
    Nothing,
    /// Publish an actuation, which is also the lockstep report of its step.
    Actuate {
        /// The velocities for the next step.
        actuation: Actuation,
        /// Send at once rather than batched (see `step_publisher::urgent`).
        urgent: bool,
    },
    /// Report a step done without an actuation (nothing to drive).
    Report {
        /// The step answered.
        step: u64,
        /// Send at once rather than batched.
        urgent: bool,
    },
    /// The world is new: the main loop must fetch its description and
    /// rebuild, then answer this state with [`Driving::answer`].
    Resync(WorldState),
    /// The description changed: the main loop must fetch it and rebuild.
    Refresh,
}

/// One served `DiffDrive` instance.
#[derive(Debug)]
pub struct Served {
    /// The body it drives.
    pub body: BodyId,
    /// Its model.
    pub drive: DiffDrive,
}

impl Served {
    /// The world's command for this instance's body from a drive output.
    fn body_command(&self, out: DriveOutput) -> BodyCommand {
        BodyCommand {
            body: self.body,
            local_vx_mps: out.forward_mps,
            local_vy_mps: 0.0,
            omega_radps: out.yaw_rate_radps,
        }
    }
}

/// A drive node's served instances and how it answers what arrives.
#[derive(Debug)]
pub struct Driving {
    node: String,
    /// Served instances by key; taken out by the main loop while it
    /// rebuilds them.
    pub instances: BTreeMap<String, Served>,
    /// The revision of the description the instances were built from.
    pub revision: u64,
    tracker: WorldTracker,
    /// Unknown until the world's first status: treated as lockstep.
    clock: Option<ClockMode>,
    /// The step and sim time of the last state answered.
    last_step: Option<u64>,
    now_ns: u64,
    /// The main loop is reworking the instances (or has not built them yet).
    held: bool,
    /// Arrivals handed to the main loop and not yet handled there.
    handed: usize,
    /// Reused for every actuation.
    commands: Vec<BodyCommand>,
}

impl Driving {
    /// A node that serves nothing yet: everything is handed to the main
    /// loop until it calls [`Driving::release`].
    pub fn new(node: &str) -> Driving {
        Driving {
            node: node.to_string(),
            instances: BTreeMap::new(),
            revision: 0,
            tracker: WorldTracker::default(),
            clock: None,
            last_step: None,
            now_ns: 0,
            held: true,
            handed: 0,
            commands: Vec::new(),
        }
    }

    /// Whether an arrival may be handled on the thread it came on. If not,
    /// it must be handed to the main loop (which calls
    /// [`Driving::arrive_handed`]): the instances are being reworked, or
    /// arrivals handed before it are not handled yet and must go first.
    pub fn admits_here(&mut self) -> bool {
        if self.held || self.handed > 0 {
            self.handed += 1;
            false
        } else {
            true
        }
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

    /// [`Driving::arrive`], for an arrival the main loop was handed.
    pub fn arrive_handed(&mut self, arrival: Arrival) -> Answer {
        self.handed = self.handed.saturating_sub(1);
        self.arrive(arrival)
    }

    /// Handles one arrival.
    pub fn arrive(&mut self, arrival: Arrival) -> Answer {
        match arrival {
            Arrival::State(state) => match self.tracker.state(state.step) {
                StateVerdict::Duplicate => Answer::Nothing, // the world re-published a state we handled
                StateVerdict::Handle { resync: true } => {
                    self.held = true;
                    Answer::Resync(state)
                }
                StateVerdict::Handle { resync: false } => self.answer(&state),
            },
            Arrival::Command(command) => self.command(command),
            Arrival::World(presence) => {
                // The drive answers every state; nothing of it needs resending.
                self.tracker.presence(&presence);
                Answer::Nothing
            }
            Arrival::Clock(clock) => {
                self.clock = Some(clock);
                Answer::Nothing
            }
            Arrival::Revision(revision) if revision > self.revision => {
                // States after the change must see the rebuilt instances.
                self.held = true;
                Answer::Refresh
            }
            Arrival::Revision(_) => Answer::Nothing,
        }
    }

    /// Resynchronising failed (no description yet): try again at the next
    /// state.
    pub fn resync_failed(&mut self) {
        self.tracker.resync_failed();
    }

    /// Advances every drive by the step of `state` and answers it: the
    /// velocities for the next step, or a bare report with nothing to drive.
    pub fn answer(&mut self, state: &WorldState) -> Answer {
        self.now_ns = state.time.nanos;
        self.last_step = Some(state.step);
        let dt_s = state.step_ns as f64 * 1e-9;
        self.commands.clear();
        for served in self.instances.values_mut() {
            let out = served.drive.step(self.now_ns, dt_s);
            self.commands.push(served.body_command(out));
        }
        let urgent = urgent(self.clock);
        if self.instances.is_empty() {
            return Answer::Report { step: state.step, urgent };
        }
        let commands = std::mem::take(&mut self.commands);
        Answer::Actuate { actuation: Actuation { node: self.node.clone(), step: state.step, commands }, urgent }
    }

    /// Gives back an actuation's command buffer once it is sent, so that
    /// the next step allocates none.
    pub fn recycle(&mut self, actuation: Actuation) {
        self.commands = actuation.commands;
    }

    fn command(&mut self, Command { instance, forward_mps, yaw_rate_radps, stamp_ns }: Command) -> Answer {
        let Some(served) = self.instances.get_mut(&instance) else { return Answer::Nothing };
        // Only where wall time matters: in fast mode the world is steps
        // ahead anyway, and one actuation per command (a thousand robots'
        // controllers) would only add traffic. In lockstep, commands only
        // take effect at states, which keeps runs independent of timing.
        let at_once =
            stamp_ns.is_none() && self.clock.is_some_and(|c| matches!(c, ClockMode::Realtime | ClockMode::External));
        match (at_once, self.last_step) {
            (true, Some(step)) => {
                let Some(out) = served.drive.command_now(forward_mps, yaw_rate_radps) else { return Answer::Nothing };
                let actuation = Actuation { node: self.node.clone(), step, commands: vec![served.body_command(out)] };
                Answer::Actuate { actuation, urgent: urgent(self.clock) }
            }
            _ => {
                served.drive.command(forward_mps, yaw_rate_radps, stamp_ns.unwrap_or(self.now_ns));
                Answer::Nothing
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_protocol::plugins::diff_drive::DiffDriveConfig;
    use flotilla_protocol::time::SimTime;

    const STEP_NS: u64 = 5_000_000;

    fn state(step: u64) -> WorldState {
        WorldState { revision: 0, step, time: SimTime { nanos: step * STEP_NS }, step_ns: STEP_NS, bodies: Vec::new() }
    }

    fn driving() -> Driving {
        let mut d = Driving::new("drive-1");
        let layers = vec![];
        let ctx = flotilla_protocol::plugins::PluginContext {
            model_file: std::path::Path::new("m.yaml"),
            model: "robot1",
            bodies: vec!["base"],
            layer_names: &layers,
        };
        let config = DiffDriveConfig::parse(&serde_yaml::from_str("{body: base}").unwrap(), "drive", &ctx).unwrap();
        d.instances.insert("robot1/drive".into(), Served { body: 3, drive: DiffDrive::new(&config) });
        d.release();
        d
    }

    fn forward(mps: f64) -> Arrival {
        Arrival::Command(Command {
            instance: "robot1/drive".into(),
            forward_mps: mps,
            yaw_rate_radps: 0.0,
            stamp_ns: None,
        })
    }

    fn speed(answer: Answer) -> f64 {
        match answer {
            Answer::Actuate { actuation, .. } => actuation.commands[0].local_vx_mps,
            other => panic!("expected an actuation, got {other:?}"),
        }
    }

    #[test]
    fn a_state_is_answered_with_the_velocity_for_the_next_step() {
        let mut d = driving();
        d.arrive(Arrival::Clock(ClockMode::Lockstep));
        match d.arrive(Arrival::State(state(7))) {
            Answer::Actuate { actuation, urgent } => {
                assert_eq!((actuation.node.as_str(), actuation.step), ("drive-1", 7));
                assert_eq!(actuation.commands.len(), 1);
                assert_eq!(actuation.commands[0].body, 3);
                assert!(urgent, "the world waits on it in lockstep");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(d.arrive(Arrival::State(state(7))), Answer::Nothing, "a re-published state is answered once");
    }

    #[test]
    fn in_lockstep_a_command_takes_effect_at_the_state_after_it() {
        let mut d = driving();
        d.arrive(Arrival::Clock(ClockMode::Lockstep));
        assert_eq!(speed(d.arrive(Arrival::State(state(0)))), 0.0);
        assert_eq!(d.arrive(forward(0.5)), Answer::Nothing, "held until the next state");
        assert_eq!(speed(d.arrive(Arrival::State(state(1)))), 0.5);
    }

    #[test]
    fn in_realtime_a_plain_command_is_actuated_at_once() {
        let mut d = driving();
        d.arrive(Arrival::Clock(ClockMode::Realtime));
        d.arrive(Arrival::State(state(0)));
        match d.arrive(forward(0.5)) {
            Answer::Actuate { actuation, urgent } => {
                assert_eq!(actuation.step, 0, "redoes the last step");
                assert_eq!(actuation.commands[0].local_vx_mps, 0.5);
                assert!(urgent);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn without_instances_a_state_gets_a_bare_report() {
        let mut d = Driving::new("drive-1");
        d.release();
        d.arrive(Arrival::Clock(ClockMode::Fast));
        assert_eq!(d.arrive(Arrival::State(state(4))), Answer::Report { step: 4, urgent: false });
    }

    #[test]
    fn while_held_and_until_handed_arrivals_are_handled_arrivals_go_to_the_main_loop() {
        let mut d = Driving::new("drive-1");
        assert!(!d.admits_here(), "nothing built yet");
        assert!(!d.admits_here());
        d.release();
        assert!(!d.admits_here(), "two arrivals handed earlier still come first");
        d.arrive_handed(Arrival::Clock(ClockMode::Lockstep));
        d.arrive_handed(Arrival::Clock(ClockMode::Lockstep));
        d.arrive_handed(Arrival::Clock(ClockMode::Lockstep));
        assert!(d.admits_here(), "all handled: the receiving thread answers");
        assert!(d.admits_here());
    }

    #[test]
    fn a_new_revision_or_a_new_world_holds_arrivals_until_the_rebuild() {
        let mut d = driving();
        assert_eq!(d.arrive(Arrival::Revision(0)), Answer::Nothing, "known revision");
        assert_eq!(d.arrive(Arrival::Revision(2)), Answer::Refresh);
        assert!(!d.admits_here());
        d.arrive_handed(Arrival::State(state(1)));
        d.release();
        assert!(d.admits_here());

        d.arrive(Arrival::State(state(9)));
        match d.arrive(Arrival::State(state(3))) {
            Answer::Resync(s) => assert_eq!(s.step, 3, "time went backwards: a new world"),
            other => panic!("{other:?}"),
        }
        assert!(!d.admits_here(), "held until the main loop has the new world's description");
    }
}
