//! A standby world (`flotilla-world --standby`, and any world that finds
//! its simulation's world already running): it follows the active world
//! and, when that world's liveliness token goes, takes over as it, so that
//! every node carries on without a restart.
//!
//! While it stands by it holds
//! * the active world's last checkpoint (everything the world owns, see
//!   [`crate::checkpoint`]), fetched every [`PULL_EVERY`] and after each
//!   world event, so that models, maps and labels are never older than the
//!   last event;
//! * the last state published (every body's pose and velocity), kept as
//!   the received bytes and decoded only at a take-over;
//! * the last status (paused or not, the clock mode).
//!
//! At the take-over it restores the checkpoint, takes up the last state
//! ([`Physics::take_up`]) and hands the world node the world under the
//! same id: nodes see the world they know come back, at the step they last
//! saw, and go on. What is lost is what the active world did after the
//! last state this standby received. A world of another world file, seed
//! or step size is not stood by for: its first checkpoint is refused with
//! the reason.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;
use flotilla_node_kit::client::fetch_checkpoint;
use flotilla_node_kit::subscribe::watch_tokens;
use flotilla_wire::checkpoint_file;
use flotilla_wire::codec::decode;
use flotilla_wire::control::ClockMode;
use flotilla_wire::world_to_nodes::{WorldState, WorldStatus};
use flotilla_wire::Keys;
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};
use zenoh::bytes::ZBytes;

use crate::checkpoint::{self, NodeMemory};
use crate::physics::Physics;

/// How often a standby fetches the active world's checkpoint (and after
/// each world event). Between two, only what states carry (poses and
/// velocities) moves on; a checkpoint of warehouse-1000 is 2.3 MB.
pub const PULL_EVERY: Duration = Duration::from_secs(1);

/// How long a checkpoint fetch may take before it is tried again.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);

/// The world a standby took over, for the world node to run.
pub struct TakeOver {
    /// The world as the active one left it.
    pub physics: Physics,
    /// What nodes asked it to keep.
    pub memory: NodeMemory,
    /// The id of the world taken over, which the new one goes on under.
    pub world_id: String,
    /// Whether it was paused.
    pub paused: bool,
    /// Its clock mode, when a status said.
    pub clock: Option<ClockMode>,
}

/// What the standby hears.
enum Heard {
    /// A world's token came (true) or went.
    World(String, bool),
    /// A world event: something beyond poses changed.
    Event,
    /// A checkpoint fetched, or why not.
    Checkpoint(anyhow::Result<Vec<u8>>),
}

/// Follows the active world of `keys`' simulation and returns when it has
/// gone, with `fresh` (built from the world file this process was given)
/// made into the world it left. Fails when the active world runs another
/// world file, seed or step size.
pub async fn stand_by(session: &zenoh::Session, keys: &Keys, mut fresh: Physics) -> anyhow::Result<TakeOver> {
    let (tx, mut heard) = unbounded_channel();
    let last_state: Arc<Mutex<Option<ZBytes>>> = Arc::default();
    let last_status: Arc<Mutex<Option<WorldStatus>>> = Arc::default();
    let _subscribers = listen(session, keys, &tx, &last_state, &last_status).await?;

    let mut following: Option<String> = None;
    let mut checkpoint: Option<Vec<u8>> = None;
    let mut fetching = false;
    let mut pull = tokio::time::interval(PULL_EVERY);
    pull.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut lonely = tokio::time::interval(Duration::from_secs(10));
    lonely.tick().await;
    let mut fetch_now = false;
    let gone = loop {
        tokio::select! {
            Some(news) = heard.recv() => match news {
                Heard::World(id, true) if following.is_none() => {
                    tracing::info!("standing by for the running world ({id})");
                    following = Some(id);
                    fetch_now = true;
                }
                Heard::World(id, false) if following.as_ref() == Some(&id) => break id,
                Heard::World(..) => {}
                Heard::Event => fetch_now = true,
                Heard::Checkpoint(fetched) => {
                    fetching = false;
                    match fetched {
                        Ok(bytes) => {
                            check_fits(&bytes, &fresh, following.as_deref().unwrap_or("?"))?;
                            checkpoint = Some(bytes);
                        }
                        Err(e) => tracing::debug!("no checkpoint from the active world this time: {e:#}"),
                    }
                }
            },
            _ = pull.tick() => fetch_now = true,
            _ = lonely.tick(), if following.is_none() => {
                tracing::info!("standing by: no world of this simulation yet");
            }
        }
        if fetch_now && following.is_some() && !fetching {
            fetch_now = false;
            fetching = true;
            let (session, keys, tx) = (session.clone(), keys.clone(), tx.clone());
            tokio::spawn(async move {
                let fetched = fetch_checkpoint(&session, &keys, FETCH_TIMEOUT).await;
                let _ = tx.send(Heard::Checkpoint(fetched.map_err(anyhow::Error::from)));
            });
        }
    };

    let status = lock(&last_status).take();
    let mut paused = status.as_ref().is_some_and(|s| s.paused);
    let mut memory = NodeMemory::new();
    match checkpoint {
        Some(bytes) => {
            let (header, kept) = checkpoint::read(&bytes)
                .and_then(|c| c.restore_into(&mut fresh))
                .context("restoring the active world's last checkpoint")?;
            memory = kept;
            paused = status.as_ref().map_or(header.paused, |s| s.paused);
            let state = lock(&last_state).take().and_then(|bytes| decode::<WorldState>(&bytes.to_bytes()).ok());
            match state.map(|state| (state.step, fresh.take_up(&state))) {
                Some((step, Ok(()))) => tracing::info!(
                    "{gone} gone: taking over at step {step} (its checkpoint of step {}, then its last state)",
                    header.step
                ),
                Some((_, Err(e))) => {
                    tracing::warn!("{gone} gone: taking over from its checkpoint of step {} ({e})", header.step)
                }
                None => tracing::warn!(
                    "{gone} gone: taking over from its checkpoint of step {} (no state since)",
                    header.step
                ),
            }
        }
        None => tracing::warn!("{gone} gone before this standby had a checkpoint of it: starting from the world file"),
    }
    Ok(TakeOver { physics: fresh, memory, world_id: gone, paused, clock: status.map(|s| s.clock) })
}

/// Subscribes to the world's tokens, events, states and status.
async fn listen(
    session: &zenoh::Session,
    keys: &Keys,
    tx: &UnboundedSender<Heard>,
    last_state: &Arc<Mutex<Option<ZBytes>>>,
    last_status: &Arc<Mutex<Option<WorldStatus>>>,
) -> anyhow::Result<Vec<Box<dyn std::any::Any + Send>>> {
    let own = keys.clone();
    let to_tokens = tx.clone();
    let tokens = watch_tokens(session, keys.world_tokens(), move |key, alive| {
        if let Some(id) = own.parse_node_token(key) {
            let _ = to_tokens.send(Heard::World(id.to_string(), alive));
        }
    })
    .await?;
    let to_events = tx.clone();
    let events = session
        .declare_subscriber(keys.world_events())
        .callback(move |_| {
            let _ = to_events.send(Heard::Event);
        })
        .await
        .map_err(|e| anyhow::anyhow!("subscribing to the world's events: {e}"))?;
    let keep_state = last_state.clone();
    let states = session
        .declare_subscriber(keys.world_state())
        .callback(move |sample| *lock(&keep_state) = Some(sample.payload().clone()))
        .await
        .map_err(|e| anyhow::anyhow!("subscribing to the world's states: {e}"))?;
    let keep_status = last_status.clone();
    let status = session
        .declare_subscriber(keys.status())
        .callback(move |sample| {
            if let Ok(status) = decode::<WorldStatus>(&sample.payload().to_bytes()) {
                *lock(&keep_status) = Some(status);
            }
        })
        .await
        .map_err(|e| anyhow::anyhow!("subscribing to the world's status: {e}"))?;
    Ok(vec![Box::new(tokens), Box::new(events), Box::new(states), Box::new(status)])
}

/// Refuses to stand by for a world that is not this one: another world
/// file's content, seed or step size.
fn check_fits(bytes: &[u8], fresh: &Physics, world: &str) -> anyhow::Result<()> {
    let (header, _) = checkpoint_file::open(bytes).map_err(|e| anyhow::anyhow!("the checkpoint of {world}: {e}"))?;
    let file = fresh.world_path().display().to_string();
    header.matches(&file, fresh.world_digest(), fresh.seed(), fresh.step_ns()).map_err(|e| {
        anyhow::anyhow!(
            "the world running in this simulation ({world}) is not this one, which cannot stand by for it: \
             {e}; stop it first, or give this one another --sim"
        )
    })
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
