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
//!
//! A token gone is not enough to take over: this standby's own link to the
//! world may be the one cut. It asks the nodes ([`flotilla_node_kit::witness`])
//! and takes over only when more than half of the nodes it knew answer and
//! none of them still sees the world; until then it asks again every
//! [`ASK_AGAIN`], and goes on standing by if the world's token comes back.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use flotilla_node_kit::client::fetch_checkpoint;
use flotilla_node_kit::subscribe::watch_tokens;
use flotilla_node_kit::witness::{self, majority, Answer, Known};
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

/// How long after the world's token went a standby that does not take
/// over says why.
const SAY_AFTER: Duration = Duration::from_secs(1);

/// How long the nodes have to answer which worlds they see.
const ASK_TIMEOUT: Duration = Duration::from_millis(500);

/// How soon the nodes are asked again while the world's token is gone and
/// they do not agree that the world is: a node may hear of its going a
/// moment after this standby did.
pub const ASK_AGAIN: Duration = Duration::from_millis(200);

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
    /// The new world's term: one more than the highest seen (see
    /// [`crate::fence`]).
    pub term: u64,
}

/// What the standby hears.
enum Heard {
    /// A world's token came (true) or went.
    World(String, bool),
    /// A world event: something beyond poses changed.
    Event,
    /// A checkpoint fetched, or why not.
    Checkpoint(anyhow::Result<Vec<u8>>),
    /// The nodes' answers: the worlds each sees.
    Witnesses(Vec<Answer>),
}

/// What the nodes' answers say of the world whose token this standby lost.
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    /// More than half of the nodes known answered, none sees it: gone.
    Gone,
    /// Some nodes still see it: this standby's link to it was cut.
    StillSeen { by: usize },
    /// Too few nodes answered to tell: this standby may be the one cut off.
    TooFew { answered: usize, known: usize },
}

/// The verdict on world `id` from `answers`, `known` nodes having answered
/// while it was seen.
fn verdict(id: &str, answers: &[Answer], known: usize) -> Verdict {
    let by = answers.iter().filter(|a| a.sees(id)).count();
    if by > 0 {
        Verdict::StillSeen { by }
    } else if majority(answers.len(), known) {
        Verdict::Gone
    } else {
        Verdict::TooFew { answered: answers.len(), known }
    }
}

/// Whether the followed world is gone, as the nodes tell it.
#[derive(Default)]
struct Witnessed {
    /// The world's token went at this instant (and is not back).
    lost: Option<Instant>,
    /// The last verdict said in the log, so that it is said once.
    said: Option<Verdict>,
    known: Known,
}

impl Witnessed {
    /// The token of world `id` came (`alive`) or went.
    fn token(&mut self, id: &str, alive: bool) {
        tracing::debug!("{id}'s token {}", if alive { "came" } else { "went" });
        if alive && self.lost.take().is_some() {
            tracing::info!("{id} is back: standing by for it");
            self.said = None;
        } else if !alive {
            self.lost = Some(Instant::now());
        }
    }

    /// The nodes' answers: whether world `id`, its token gone, is gone.
    fn answered(&mut self, id: &str, answers: &[Answer]) -> bool {
        tracing::trace!("the nodes answered: {answers:?}");
        let Some(since) = self.lost else {
            self.known.answered(answers.len());
            return false;
        };
        let known = self.known.count();
        let v = verdict(id, answers, known);
        if v == Verdict::Gone {
            tracing::info!(
                "{id} gone: {} of the {known} node(s) known answered, none sees it ({} ms after its token went)",
                answers.len(),
                since.elapsed().as_millis()
            );
            return true;
        }
        // After a crash the nodes hear of it a moment after this standby:
        // only a verdict that lasts is worth a warning.
        if since.elapsed() >= SAY_AFTER && self.said.as_ref() != Some(&v) {
            match &v {
                Verdict::StillSeen { by } => tracing::warn!(
                    "{id}'s token is gone from here but {by} node(s) still see it: this standby's link to it is cut; \
                     not taking over"
                ),
                Verdict::TooFew { answered, known } => tracing::warn!(
                    "{id}'s token is gone from here and only {answered} of the {known} node(s) known answer: this \
                     standby may be the one cut off; not taking over until more than half answer"
                ),
                Verdict::Gone => {}
            }
            self.said = Some(v);
        }
        false
    }
}

/// Follows the active world of `keys`' simulation as standby `me` (its
/// token says so) and returns when that world has gone, with `fresh`
/// (built from the world file this process was given) made into the world
/// it left. Fails when the active world runs another world file, seed or
/// step size.
pub async fn stand_by(session: &zenoh::Session, keys: &Keys, me: &str, mut fresh: Physics) -> anyhow::Result<TakeOver> {
    let (tx, mut heard) = unbounded_channel();
    let last_state: Arc<Mutex<Option<ZBytes>>> = Arc::default();
    let last_status: Arc<Mutex<Option<WorldStatus>>> = Arc::default();
    let _subscribers = listen(session, keys, &tx, &last_state, &last_status).await?;
    let highest_term = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let _terms = {
        let (highest_term, own) = (highest_term.clone(), keys.clone());
        watch_tokens(session, keys.term_tokens(), move |key, alive| {
            if let Some(term) = own.parse_term(key).filter(|_| alive) {
                highest_term.fetch_max(term, std::sync::atomic::Ordering::Relaxed);
            }
        })
        .await?
    };
    let token_key = keys.standby_token(me);
    let _token = session
        .liveliness()
        .declare_token(&token_key)
        .await
        .map_err(|e| anyhow::anyhow!("declaring the standby's token {token_key}: {e}"))?;

    let mut following: Option<String> = None;
    let mut witnessed = Witnessed::default();
    let mut checkpoint: Option<Vec<u8>> = None;
    let (mut fetching, mut asking) = (false, false);
    let mut pull = tokio::time::interval(PULL_EVERY);
    pull.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut again = tokio::time::interval(ASK_AGAIN);
    again.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut lonely = tokio::time::interval(Duration::from_secs(10));
    lonely.tick().await;
    let (mut fetch_now, mut ask_now) = (false, false);
    let gone = loop {
        tokio::select! {
            Some(news) = heard.recv() => match news {
                Heard::World(id, true) if following.is_none() => {
                    tracing::info!("standing by for the running world ({id})");
                    following = Some(id);
                    fetch_now = true;
                    ask_now = true;
                }
                Heard::World(id, alive) if following.as_ref() == Some(&id) => {
                    witnessed.token(&id, alive);
                    ask_now |= !alive;
                }
                Heard::World(..) => {}
                Heard::Witnesses(answers) => {
                    asking = false;
                    if let Some(id) = following.clone().filter(|id| witnessed.answered(id, &answers)) {
                        break id;
                    }
                }
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
            _ = pull.tick() => {
                fetch_now = true;
                ask_now = true;
            }
            _ = again.tick(), if witnessed.lost.is_some() => ask_now = true,
            _ = lonely.tick(), if following.is_none() => {
                tracing::info!("standing by: no world of this simulation yet");
            }
        }
        if ask_now && following.is_some() && !asking {
            ask_now = false;
            asking = true;
            spawn_ask(session, keys, &tx);
        }
        if fetch_now && following.is_some() && witnessed.lost.is_none() && !fetching {
            fetch_now = false;
            fetching = true;
            spawn_fetch(session, keys, &tx);
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
    let term = highest_term.load(std::sync::atomic::Ordering::Relaxed) + 1;
    Ok(TakeOver { physics: fresh, memory, world_id: gone, paused, clock: status.map(|s| s.clock), term })
}

/// Asks the nodes which worlds they see; the answers come as heard.
fn spawn_ask(session: &zenoh::Session, keys: &Keys, tx: &UnboundedSender<Heard>) {
    let (session, keys, tx) = (session.clone(), keys.clone(), tx.clone());
    tokio::spawn(async move {
        let answers = witness::ask(&session, &keys, ASK_TIMEOUT).await.unwrap_or_else(|e| {
            tracing::debug!("cannot ask the nodes: {e}");
            Vec::new()
        });
        let _ = tx.send(Heard::Witnesses(answers));
    });
}

/// Fetches the active world's checkpoint; it comes as heard.
fn spawn_fetch(session: &zenoh::Session, keys: &Keys, tx: &UnboundedSender<Heard>) {
    let (session, keys, tx) = (session.clone(), keys.clone(), tx.clone());
    tokio::spawn(async move {
        let fetched = fetch_checkpoint(&session, &keys, FETCH_TIMEOUT).await;
        let _ = tx.send(Heard::Checkpoint(fetched.map_err(anyhow::Error::from)));
    });
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

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(node: &str, worlds: &[&str]) -> Answer {
        Answer { node: node.into(), worlds: worlds.iter().map(|w| w.to_string()).collect() }
    }

    #[test]
    fn a_standby_takes_over_only_when_most_nodes_answer_and_none_sees_the_world() {
        let gone = [answer("drive", &[]), answer("laser", &[]), answer("odom", &[])];
        assert_eq!(verdict("world-a", &gone, 3), Verdict::Gone);
        assert_eq!(verdict("world-a", &gone[..2], 3), Verdict::Gone, "two of three");
        // Its own link to the world was cut: the nodes still see it.
        let seen = [answer("drive", &["world-a"]), answer("laser", &[]), answer("odom", &[])];
        assert_eq!(verdict("world-a", &seen, 3), Verdict::StillSeen { by: 1 });
        // Cut off from the world and most nodes: it may be the one cut off.
        assert_eq!(verdict("world-a", &gone[..1], 3), Verdict::TooFew { answered: 1, known: 3 });
        assert_eq!(verdict("world-a", &[], 2), Verdict::TooFew { answered: 0, known: 2 });
        // Another world seen is no reason to wait for this one.
        assert_eq!(verdict("world-a", &[answer("drive", &["world-b"])], 1), Verdict::Gone);
        // No node ever answered: nobody to split between two worlds.
        assert_eq!(verdict("world-a", &[], 0), Verdict::Gone);
    }
}
