//! The world's status summary, about twice per wall second: sim time, the
//! real-time factor since the last one, clock mode, participants, and the
//! plugin instances no node serves (logged when that list changes).

use std::time::{Duration, Instant};

use flotilla_wire::time::SimTime;
use flotilla_wire::world_to_nodes::WorldStatus;

use super::stepper::Sim;

/// How often the status is published, wall time.
const STATUS_INTERVAL: Duration = Duration::from_millis(500);

/// Nodes need a moment to start; instances unclaimed for longer are logged.
const CLAIM_GRACE: Duration = Duration::from_secs(2);

/// At most this many unclaimed instances are named in a status (all are
/// counted).
const MAX_UNCLAIMED_NAMED: usize = 20;

/// Builds the status when it is due.
#[derive(Debug)]
pub struct StatusBoard {
    endpoint: String,
    started: Instant,
    /// The wall instant and sim time of the last status.
    last: (Instant, SimTime),
    /// The unclaimed instances last logged.
    reported_unclaimed: Vec<String>,
}

impl StatusBoard {
    /// A board for a world reached at `endpoint`, started at `now`.
    pub fn new(endpoint: String, now: Instant) -> StatusBoard {
        StatusBoard { endpoint, started: now, last: (now, SimTime::default()), reported_unclaimed: Vec::new() }
    }

    /// The status at `now` with the world at `step` and `time`, if one is due.
    pub fn due(&mut self, sim: &Sim, step: u64, time: SimTime, now: Instant) -> Option<WorldStatus> {
        let wall = now.duration_since(self.last.0);
        if wall < STATUS_INTERVAL {
            return None;
        }
        let unclaimed: Vec<String> = sim
            .physics
            .servable_instances()
            .into_iter()
            .filter(|i| sim.claims.get(i).is_none_or(|nodes| nodes.is_empty()))
            .collect();
        if unclaimed != self.reported_unclaimed && now.duration_since(self.started) > CLAIM_GRACE {
            if !unclaimed.is_empty() {
                tracing::warn!("{} plugin instance(s) served by no node: {}", unclaimed.len(), some_of(&unclaimed));
            }
            self.reported_unclaimed = unclaimed.clone();
        }
        let sim_s = time.nanos.saturating_sub(self.last.1.nanos) as f64 * 1e-9;
        self.last = (now, time);
        Some(WorldStatus {
            time,
            step,
            real_time_factor: sim_s / wall.as_secs_f64(),
            paused: sim.run.paused,
            clock: sim.run.clock,
            lockstep_participants: sim.barrier.size() as u32,
            models: sim.physics.model_count() as u32,
            robots: sim.physics.robot_count() as u32,
            nodes: sim.nodes.len() as u32,
            endpoint: self.endpoint.clone(),
            unclaimed_count: unclaimed.len() as u32,
            unclaimed: unclaimed.into_iter().take(MAX_UNCLAIMED_NAMED).collect(),
        })
    }
}

/// How many names a log line lists before it only counts the rest.
const NAMES_LISTED: usize = 10;

/// The first [`NAMES_LISTED`] of `names`, and how many more there are: a
/// world of thousands of robots would otherwise log lines of megabytes.
fn some_of(names: &[String]) -> String {
    let shown = names[..names.len().min(NAMES_LISTED)].join(", ");
    match names.len().saturating_sub(NAMES_LISTED) {
        0 => shown,
        more => format!("{shown} and {more} more"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::{ModelDirs, RunState};
    use crate::physics::Physics;
    use flotilla_wire::control::ClockMode;
    use std::path::Path;

    #[test]
    fn a_status_every_half_second_with_the_real_time_factor_and_unclaimed_instances() {
        let world = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/fixtures/flatland/laser_tests/range_test/world.yaml");
        let physics = Physics::new(&flotilla_world_file::load_world(&world).unwrap()).unwrap();
        let mut sim = Sim::new(physics, RunState::new(ClockMode::Fast, 1.0, false, ModelDirs::default()));
        let start = Instant::now();
        let mut board = StatusBoard::new("tcp/127.0.0.1:7450".into(), start);
        assert!(board.due(&sim, 10, SimTime { nanos: 50_000_000 }, start + STATUS_INTERVAL / 2).is_none());
        let one_s = SimTime { nanos: 1_000_000_000 };
        let status = board.due(&sim, 200, one_s, start + STATUS_INTERVAL).unwrap();
        assert!((status.real_time_factor - 2.0).abs() < 1e-9, "1 sim s in 0.5 wall s: {}", status.real_time_factor);
        let servable = sim.physics.servable_instances();
        assert!(!servable.is_empty(), "the robot's laser");
        assert_eq!(status.unclaimed, servable, "nobody serves anything yet");
        for instance in &servable {
            sim.claims.entry(instance.clone()).or_default().insert("laser-1".into());
        }
        let later = board.due(&sim, 400, SimTime { nanos: 2_000_000_000 }, start + STATUS_INTERVAL * 2).unwrap();
        assert_eq!((later.unclaimed_count, later.endpoint.as_str()), (0, "tcp/127.0.0.1:7450"));
    }

    #[test]
    fn a_long_list_of_names_is_cut_and_counted() {
        let names: Vec<String> = (1..=12).map(|i| format!("robot{i}/laser/laser")).collect();
        let line = some_of(&names);
        assert!(line.starts_with("robot1/laser/laser, robot2/laser/laser"), "{line}");
        assert!(line.ends_with("robot10/laser/laser and 2 more"), "{line}");
        assert_eq!(some_of(&names[..2]), "robot1/laser/laser, robot2/laser/laser");
    }
}
