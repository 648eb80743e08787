//! How a standby becomes the world that went: from the best checkpoint
//! it has (the one it fetched, else the periodic checkpoint file, else the
//! world file), with the last state taken up or, in lockstep, the steps
//! since re-run.

use std::path::Path;
use std::sync::{Arc, Mutex};

use anyhow::Context;
use flotilla_wire::checkpoint_file::{self, CheckpointHeader, Mismatch};
use flotilla_wire::codec::decode;
use flotilla_wire::control::ClockMode;
use flotilla_wire::world_to_nodes::{WorldState, WorldStatus};

use super::lockstep::LockstepRecords;
use super::{lock, TakeOver};
use crate::checkpoint::{self, NodeMemory};
use crate::physics::Physics;

/// Makes `fresh` into the world `gone` left: its `checkpoint` (the bytes
/// and where they came from), then, in lockstep, the steps since re-run
/// with the answers kept, else its `last` state taken up; and in lockstep
/// the barrier and answers the new world goes on with, `listening` kept
/// until it has its own subscriptions.
pub(super) fn take_over(
    gone: &str,
    mut fresh: Physics,
    checkpoint: Option<(Vec<u8>, String)>,
    last: Option<Vec<u8>>,
    status: Option<&WorldStatus>,
    records: &Arc<Mutex<LockstepRecords>>,
    listening: Vec<Box<dyn std::any::Any + Send>>,
) -> anyhow::Result<TakeOver> {
    let lockstep = status.is_some_and(|s| s.clock == ClockMode::Lockstep);
    let mut paused = status.is_some_and(|s| s.paused);
    let mut memory = NodeMemory::new();
    let mut rerun = None;
    let mut from = "the world file".to_string();
    match checkpoint {
        Some((bytes, source)) => {
            let restore = |fresh: &mut Physics| {
                checkpoint::read(&bytes)
                    .and_then(|c| c.restore_into(fresh))
                    .with_context(|| format!("restoring {source}"))
            };
            let (header, kept) = restore(&mut fresh)?;
            memory = kept;
            paused = status.map_or(header.paused, |s| s.paused);
            from = format!("{source} of step {}", header.step);
            if let Some(last) = last.as_deref().filter(|_| lockstep) {
                // On a copy: the subscriptions' callbacks go on meanwhile.
                let kept = lock(records).clone();
                match kept.rerun(&mut fresh, last) {
                    Ok(inbox) => {
                        tracing::info!(
                            "{gone} gone: taking over at step {} ({from}, then the steps since re-run with the \
                             drives' answers, giving its last state bit for bit)",
                            fresh.step_count(),
                        );
                        rerun = Some(inbox);
                    }
                    Err(why) => {
                        tracing::warn!(
                            "{gone} gone: cannot re-run its steps since {from} ({why}): taking up its last state \
                             instead"
                        );
                        restore(&mut fresh)?;
                    }
                }
            }
        }
        None => tracing::warn!(
            "{gone} gone before this standby had a checkpoint of it: models spawned or deleted, maps, labels and \
             what nodes kept are as the world file has them"
        ),
    }
    if rerun.is_none() {
        take_up_last(gone, &mut fresh, last, &from);
    }
    // In lockstep the new world starts with the participants and reports
    // the killed one had: without them it would step on before their
    // tokens reached it, and wait for reports they sent the killed world.
    let at = fresh.step_count();
    let handover = lockstep.then(|| Box::new(LockstepRecords::handover(records, rerun, at, listening)));
    Ok(TakeOver {
        physics: fresh,
        memory,
        world_id: String::new(),
        paused,
        clock: status.map(|s| s.clock),
        term: 0,
        handover,
    })
}

/// Takes up the `last` state `gone` published (every body's pose and
/// velocity, the sim time) onto `fresh`, made `from` a checkpoint or the
/// world file; says in the log where the new world starts. A state of
/// another revision (models spawned or deleted since `from`) is not taken
/// up: its bodies are not those of `fresh`.
fn take_up_last(gone: &str, fresh: &mut Physics, last: Option<Vec<u8>>, from: &str) {
    let state = last.and_then(|bytes| decode::<WorldState>(&bytes).ok());
    match state.map(|state| (state.step, fresh.take_up(&state))) {
        Some((step, Ok(()))) => tracing::info!("{gone} gone: taking over at step {step} ({from}, then its last state)"),
        Some((_, Err(e))) => tracing::warn!("{gone} gone: taking over from {from} ({e})"),
        None => tracing::warn!("{gone} gone: taking over from {from} (no state since)"),
    }
}

/// The periodic checkpoint file (`--checkpoint`) at `path`, for a standby
/// that had no checkpoint of the world `gone` when it went: the file the
/// running world wrote, when both share it (one machine), is better than
/// the world file. One of another world is not used.
pub(super) fn checkpoint_on_disk(path: Option<&Path>, fresh: &Physics, gone: &str) -> Option<(Vec<u8>, String)> {
    let path = path.filter(|path| path.exists())?;
    let bytes = std::fs::read(path)
        .map_err(|e| tracing::warn!("{gone} gone: cannot read the checkpoint file {}: {e}", path.display()))
        .ok()?;
    let fits = checkpoint_file::open(&bytes)
        .map_err(|e| e.to_string())
        .and_then(|(header, _)| saved_from(&header, fresh).map_err(|e| e.to_string()));
    match fits {
        Ok(()) => Some((bytes, format!("the checkpoint file {}", path.display()))),
        Err(e) => {
            tracing::warn!("{gone} gone: not taking over from the checkpoint file {}: {e}", path.display());
            None
        }
    }
}

/// Whether a checkpoint with `header` was saved from `fresh`'s world file
/// content, seed and step size.
pub(super) fn saved_from(header: &CheckpointHeader, fresh: &Physics) -> Result<(), Mismatch> {
    let file = fresh.world_path().display().to_string();
    header.matches(&file, fresh.world_digest(), fresh.seed(), fresh.step_ns())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn room() -> Physics {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/tests/room/world.yaml");
        Physics::new(&flotilla_world_file::load_world(&path).expect("the test room loads")).unwrap()
    }

    fn state(physics: &Physics) -> WorldState {
        let mut state = WorldState { revision: 0, step: 0, time: Default::default(), step_ns: 0, bodies: Vec::new() };
        physics.state_into(&mut state);
        state
    }

    /// The room with its robot driven for `steps` steps.
    fn driven(steps: u64) -> Physics {
        let mut world = room();
        let robot = world.model_body_ids("robot")[0];
        for _ in 0..steps {
            world.command(flotilla_wire::drive_to_world::BodyCommand {
                body: robot,
                local_vx_mps: 0.5,
                local_vy_mps: 0.0,
                omega_radps: 0.2,
            });
            world.step();
        }
        world
    }

    #[test]
    fn a_standby_without_a_checkpoint_takes_up_the_last_state_on_the_world_file() {
        let running = driven(40);
        let last = flotilla_wire::codec::encode(&state(&running));
        let took = take_over("world-a", room(), None, Some(last), None, &Arc::default(), Vec::new()).unwrap();
        assert_eq!(took.physics.step_count(), 40, "the sim time goes on");
        let (before, after) = (state(&running), state(&took.physics));
        assert_eq!(after.bodies.len(), before.bodies.len());
        for (a, b) in after.bodies.iter().zip(&before.bodies) {
            assert_eq!((a.id, a.pose), (b.id, b.pose), "every body where the world left it");
            let (va, vb) = (
                [a.twist.vx_mps, a.twist.vy_mps, a.twist.omega_radps],
                [b.twist.vx_mps, b.twist.vy_mps, b.twist.omega_radps],
            );
            assert!(va.iter().zip(vb).all(|(x, y)| (x - y).abs() < 1e-6), "and as fast: {va:?} {vb:?}");
        }
        // Without a state either: the world file's start.
        let took = take_over("world-a", room(), None, None, None, &Arc::default(), Vec::new()).unwrap();
        assert_eq!(took.physics.step_count(), 0);
    }

    #[test]
    fn a_standby_without_a_checkpoint_takes_over_from_the_periodic_checkpoint_file_of_its_world_only() {
        let dir = std::env::temp_dir().join(format!("flotilla-standby-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (file, fresh) = (dir.join("room.checkpoint"), room());
        assert!(checkpoint_on_disk(None, &fresh, "world-a").is_none(), "none configured");
        assert!(checkpoint_on_disk(Some(&file), &fresh, "world-a").is_none(), "none written yet");
        std::fs::write(&file, checkpoint::save(&driven(25), false, &NodeMemory::new())).unwrap();
        let (bytes, source) = checkpoint_on_disk(Some(&file), &fresh, "world-a").expect("the room's checkpoint");
        assert!(source.contains("room.checkpoint"), "{source}");
        let took = take_over("world-a", fresh, Some((bytes, source)), None, None, &Arc::default(), Vec::new()).unwrap();
        assert_eq!(took.physics.step_count(), 25);
        // Cut short, or of another seed: not used.
        let bytes = std::fs::read(&file).unwrap();
        std::fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();
        assert!(checkpoint_on_disk(Some(&file), &room(), "world-a").is_none(), "truncated");
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/tests/room/world.yaml");
        let mut spec = flotilla_world_file::load_world(&path).unwrap();
        spec.settings.seed += 1;
        std::fs::write(&file, checkpoint::save(&Physics::new(&spec).unwrap(), false, &NodeMemory::new())).unwrap();
        assert!(checkpoint_on_disk(Some(&file), &room(), "world-a").is_none(), "another seed");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
