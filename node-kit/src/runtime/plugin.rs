//! What a plugin node is, free of Zenoh: a [`NodePlugin`] builds its
//! instances from the world's description ([`Rebuild`]), names the inputs it
//! subscribes to, and answers world states and inputs by filling an
//! [`Outbox`]. The runtime ([`super::serve()`]) does the rest: claims,
//! resynchronising with a new world, rebuilding on spawn and delete, the
//! lockstep barrier, publishing.

use std::sync::Arc;

pub use super::outbox::{Interest, Outbox};
pub use super::rebuild::{Input, Rebuild};

use flotilla_messages::geometry_msgs::TransformStamped;
use flotilla_plugins::registry::Role;
use flotilla_wire::control::ClockMode;
use flotilla_wire::drive_to_world::BodyCommand;
use flotilla_wire::world_to_nodes::WorldState;

/// Where a node handles what arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answering {
    /// On the thread that received it, under the node's lock: one thread
    /// wake-up less on the critical path of each lockstep step. For
    /// plugins whose answers are cheap (a drive advancing its models).
    /// While the runtime reworks the instances, arrivals wait in order on
    /// its main loop instead.
    OnReceivingThread,
    /// On the node's main loop, one at a time: for plugins whose answers
    /// take long (a laser's scans), which must not hold up the thread that
    /// receives every message of the process.
    OnMainLoop,
}

/// A node's logic, free of Zenoh: the plugin instances it serves and what
/// it makes of world states and inputs.
pub trait NodePlugin: Send + 'static {
    /// The role this node serves, from the plugin registry: its plugin
    /// type, binary and claim aspect.
    fn role(&self) -> &'static Role;

    /// Further roles this node serves, of other plugin types, each under
    /// the same binary and claim aspect as [`NodePlugin::role`]
    /// (`flotilla-drive` drives DiffDrive and TricycleDrive instances).
    fn also_serves(&self) -> &'static [Role] {
        &[]
    }

    /// Where arrivals are handled; see [`Answering`].
    fn answering(&self) -> Answering {
        Answering::OnMainLoop
    }

    /// (Re)builds the instances to serve from `rebuild`'s description and
    /// subscribes their inputs. Instances that still exist unchanged
    /// should be kept, with their timers and noise streams.
    fn rebuild(&mut self, rebuild: &mut Rebuild<'_>);

    /// Forgets everything: a new world process came up.
    fn reset(&mut self);

    /// Handles one world state, queuing outputs (and an actuation, for a
    /// drive).
    fn on_state(&mut self, state: &WorldState, out: &mut Outbox);

    /// Handles one message on an input subscribed in [`NodePlugin::rebuild`],
    /// `tag` being what the plugin gave with it. A message the plugin cannot
    /// use is an error; the runtime counts and logs it.
    fn on_input(&mut self, _tag: &str, _payload: &[u8], _out: &mut Outbox) -> Result<(), BadInput> {
        Ok(())
    }

    /// The world's clock mode, from its status (unknown until the first:
    /// treat as lockstep).
    fn on_clock(&mut self, _clock: ClockMode) {}

    /// How many steps after `state` are sure to bring no output (0: the next
    /// one may). The node reports them done to the lockstep barrier at once,
    /// so that the world does not wait for a 10 Hz laser at the 19 steps of
    /// every 20 at which it has nothing to do.
    fn steps_without_output(&self, _state: &WorldState) -> u64 {
        0
    }

    /// For a drive that publishes nothing but its actuation, after
    /// actuating `state`: for how many of the next states its answers are
    /// sure to be known unless an input (a command) arrives (`Some(0)`: the
    /// next may be anything), with the commands that change in them pushed
    /// onto `changes` as (state answered, command), in the order of the
    /// states — a robot ramping toward its target, a queued command taking
    /// effect. In lockstep the world then need not wait for those answers
    /// while no other participant works: it applies the changes itself (see
    /// [`flotilla_wire::drive_to_world::Promise`]). `None` (the
    /// default) for a plugin that publishes anything else: someone might
    /// command a robot from it, so its work counts as anyone's.
    fn promise(&self, _state: &WorldState, _changes: &mut Vec<(u64, BodyCommand)>) -> Option<u64> {
        None
    }

    /// The fixed transforms of the served instances (e.g. sensor mounts),
    /// published latched on `tf_static`.
    fn static_transforms(&self) -> Vec<TransformStamped> {
        Vec::new()
    }

    /// The latched messages of the served instances, (key, payload): each
    /// published when it changes and kept for late subscribers (a robot's
    /// current map). Asked after every rebuild.
    fn latched(&self) -> Vec<(String, Arc<[u8]>)> {
        Vec::new()
    }

    /// How many threads may compute the outputs due at one step
    /// (`--threads`); plugins whose outputs are cheap ignore it.
    fn set_threads(&mut self, _threads: usize) {}

    /// `n` when every output of the served instances is due only at
    /// multiples of `n` steps of `step_ns` (see [`stride_of`]); the node
    /// then receives only those states (`world/state_every/<n>`). 1 (the
    /// default): every state, for plugins that need them all (a drive, an
    /// IMU differentiating velocities).
    fn state_stride(&self, _step_ns: u64) -> u64 {
        1
    }
}

/// [`NodePlugin::state_stride`] for instances due every `period` ns
/// (`UpdateTimer::period_ns`: `None` for every step, `u64::MAX` for
/// never): the greatest common divisor of their periods in steps, when
/// each is a whole number of steps; else 1. With no instance that fires,
/// 1 (a node that serves nothing keeps the full stream, ready for the
/// next rebuild).
pub fn stride_of(periods_ns: impl IntoIterator<Item = Option<u64>>, step_ns: u64) -> u64 {
    let gcd = |mut a: u64, mut b: u64| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    let mut stride = 0;
    for period in periods_ns {
        match period {
            Some(u64::MAX) => continue,
            Some(p) if step_ns > 0 && p % step_ns == 0 => stride = gcd(stride, p / step_ns),
            _ => return 1,
        }
    }
    stride.max(1)
}

/// [`NodePlugin::steps_without_output`] for instances due in the given
/// numbers of steps (1: the next step; see `UpdateTimer::steps_until_due`):
/// the steps before the first of them is due. With no instance, as many as
/// there can be (the runtime reports at most
/// [`MAX_QUIET_STEPS_REPORTED`](super::core::MAX_QUIET_STEPS_REPORTED)).
pub fn steps_before_first_due(steps_until_due: impl IntoIterator<Item = u64>) -> u64 {
    steps_until_due.into_iter().min().unwrap_or(u64::MAX) - 1
}

/// A message on an input that the plugin cannot use.
#[derive(Debug, Clone, PartialEq)]
pub struct BadInput(pub String);

impl std::fmt::Display for BadInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadInput {}

impl From<flotilla_messages::CdrError> for BadInput {
    fn from(e: flotilla_messages::CdrError) -> BadInput {
        BadInput(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stride_is_the_common_divisor_of_the_periods_in_steps() {
        let ms = 1_000_000;
        // 10 Hz and 25 Hz at 5 ms steps: every 20 and 8 steps, so every 4th.
        assert_eq!(stride_of([Some(100 * ms), Some(40 * ms)], 5 * ms), 4);
        assert_eq!(stride_of([Some(100 * ms), Some(u64::MAX)], 5 * ms), 20, "a rate of 0 never fires");
        assert_eq!(stride_of([Some(100 * ms), None], 5 * ms), 1, "one instance due every step");
        assert_eq!(stride_of([Some(142_857_143)], ms), 1, "7 Hz is no whole number of 1 ms steps");
        assert_eq!(stride_of([], 5 * ms), 1, "nothing served: every state");
    }
}
