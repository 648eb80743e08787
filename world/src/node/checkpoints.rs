//! `--checkpoint FILE --checkpoint-every S`: the world saves itself to a
//! file every S wall seconds, beside the stepping loop, so that a world
//! restarted after a crash resumes from there instead of from its world
//! file. Wall seconds, not sim seconds: what a crash costs is the wall time
//! spent since, and a fast run would otherwise write many times a second.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::inputs::lock;
use super::stepper::Sim;

/// Where and how often.
#[derive(Debug, Clone)]
pub struct CheckpointEvery {
    /// The file, replaced whole each time.
    pub path: PathBuf,
    /// Wall time between two checkpoints.
    pub every: Duration,
}

/// Saves the world every `every.every` until dropped (the task is aborted
/// with the world node).
pub fn spawn(shared: Arc<Mutex<Sim>>, every: CheckpointEvery) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(every.every);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        ticks.tick().await; // the first tick is now: the world has just been loaded or resumed
        let mut last_step = None;
        loop {
            ticks.tick().await;
            let shared = shared.clone();
            let path = every.path.clone();
            // Encoded off the runtime's threads: rapier's world of a
            // thousand robots takes milliseconds to write out.
            let written = tokio::task::spawn_blocking(move || {
                let (bytes, step) = {
                    let s = lock(&shared);
                    let step = s.physics.step_count();
                    if last_step == Some(step) {
                        return Ok(None); // paused: nothing new to keep
                    }
                    (crate::checkpoint::save(&s.physics, s.run.paused, &s.memory), step)
                };
                flotilla_wire::checkpoint_file::write_whole(&path, &bytes).map(|()| Some(step))
            })
            .await;
            match written {
                Ok(Ok(Some(step))) => last_step = Some(step),
                Ok(Ok(None)) => {}
                Ok(Err(e)) => tracing::warn!("cannot write the checkpoint {}: {e}", every.path.display()),
                Err(e) => tracing::warn!("checkpoint writer: {e}"),
            }
        }
    })
}
