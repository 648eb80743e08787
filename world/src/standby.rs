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
//! saw (outside lockstep, stepped on to the last state the drives answered
//! when this standby missed some: see `standby/reached.rs`), and go on.
//! What is lost is what the active world did after the
//! last state this standby received. In lockstep nothing is lost: the
//! standby re-runs the steps since the checkpoint with the drives' answers
//! it kept, and the new world waits, as the killed one did, for the
//! answers to the state it takes over at (see `standby/lockstep.rs`). A
//! world of another world file, seed or step size is not stood by for: its
//! first checkpoint is refused with the reason.
//!
//! A token gone is not enough to take over: this standby's own link to the
//! world may be the one cut. It listens to the nodes
//! ([`flotilla_node_kit::witness`]) and takes over only when more than half
//! of the nodes it knew answer and none of them still sees the world; until
//! then it reads their answers again every [`ASK_AGAIN`], and goes on
//! standing by if the world's token comes back.
//!
//! When the link comes back, the token should too, within milliseconds. Zenoh
//! 1.10 can lose the declarations of two routers that reconnect while one
//! is busy (eclipse-zenoh/zenoh#1886): connected again, one does not see
//! some of the other's tokens, subscribers or queryables. A standby whose
//! link came back (no router connected after the token went, then one) but
//! that does not see the world's token for [`RELINK_AFTER`] while the
//! nodes still see the world, or whose world's token came back but that
//! has not had a checkpoint and a state of it [`RELINK_AFTER`] later, says
//! so and returns [`Standby::Relink`]: the world process opens its session
//! afresh and goes on standing by for the same world, with the checkpoint
//! and state it had. (While a link is cut, Zenoh may keep the
//! other's token and transport for its lease, 10 s, or longer: silence
//! alone says nothing.) Once it has had a checkpoint and a state after
//! following began or the token came back, it says so in the log ("…
//! received: following it").

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use flotilla_node_kit::client::fetch_checkpoint;
use flotilla_node_kit::subscribe::watch_tokens;
use flotilla_node_kit::witness::{majority, Answer, Known, Witnesses};
use flotilla_wire::checkpoint_file;
use flotilla_wire::codec::decode;
use flotilla_wire::control::ClockMode;
use flotilla_wire::world_to_nodes::WorldStatus;
use flotilla_wire::Keys;
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};
use zenoh::bytes::ZBytes;

use crate::checkpoint::NodeMemory;
use crate::node::Handover;
use crate::physics::Physics;
use lockstep::LockstepRecords;
use reached::NodesReached;

mod lockstep;
mod reached;
mod take_over;

use take_over::{checkpoint_on_disk, saved_from, take_over};

/// How often a standby fetches the active world's checkpoint (and after
/// each world event). Between two, only what states carry (poses and
/// velocities) moves on; a checkpoint of warehouse-1000 is 2.3 MB.
pub const PULL_EVERY: Duration = Duration::from_secs(1);

/// How long a checkpoint fetch may take before it is tried again.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);

/// How long after the world's token went a standby that does not take
/// over says why.
const SAY_AFTER: Duration = Duration::from_secs(1);

/// How long after its link came back a standby may go without the
/// world's token (while the nodes see the world), or after the token came
/// back without a checkpoint and a state, before it takes Zenoh's routes
/// to the world for lost: the token comes back within milliseconds of a
/// reconnection, states come every step or few, and a checkpoint is
/// fetched every [`PULL_EVERY`] (each fetch may take 5 s).
pub const RELINK_AFTER: Duration = Duration::from_secs(10);

/// How long a standby that has the world's token goes without its status
/// (sent twice a second) before it opens its session again: twice Zenoh's
/// lease (10 s), since a link cut for good closes within one lease and the
/// token goes with it, which the nodes' answers settle; only a token
/// brought through a node outlasts it.
pub const SILENT_RELINK_AFTER: Duration = Duration::from_secs(20);

/// How soon the nodes' answers are read again while the world's token is
/// gone and they do not agree that the world is: a node may hear of its
/// going a moment after this standby did.
pub const ASK_AGAIN: Duration = Duration::from_millis(200);

/// How standing by ended.
pub enum Standby {
    /// The active world is gone and this one took over.
    TookOver(TakeOver),
    /// Connected again, this standby's session lost the world's
    /// declarations (see the module's documentation): open a new session
    /// and stand by again with the world given back and what this standby
    /// had of the world it followed.
    Relink(Physics, Followed),
}

/// What a standby had of the world it followed, carried over to a new
/// session: it goes on following that world (its token not seen yet, so
/// it asks the nodes), and takes over from the same checkpoint and state
/// should the world be gone meanwhile.
pub struct Followed {
    id: String,
    checkpoint: Option<Vec<u8>>,
    last_state: Option<ZBytes>,
    last_status: Option<WorldStatus>,
    known: Known,
    highest_term: u64,
    reached: NodesReached,
}

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
    /// In lockstep, the barrier and the answers the new world goes on
    /// with, when the steps since the checkpoint could be re-run.
    pub handover: Option<Box<Handover>>,
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
    /// Whether the last answers said some nodes still see the world.
    still_seen: bool,
    /// Whether no router was connected at some moment since the token
    /// went: the link was cut.
    cut: bool,
    /// Since when this standby has been connected to a router again while
    /// the world's token stayed away and the nodes saw the world.
    connected_unseen: Option<Instant>,
    known: Known,
}

impl Witnessed {
    /// The token of world `id` came (`alive`) or went.
    fn token(&mut self, id: &str, alive: bool) {
        tracing::debug!("{id}'s token {}", if alive { "came" } else { "went" });
        if alive && self.lost.take().is_some() {
            tracing::info!("{id} is back: standing by for it");
            self.said = None;
            self.connected_unseen = None;
            self.cut = false;
        } else if !alive {
            self.lost = Some(Instant::now());
            self.still_seen = false;
        }
    }

    /// Whether this standby, `connected` to a router at `now` again after
    /// none was, has been so for [`RELINK_AFTER`] while the world's token
    /// stayed away and the nodes saw the world: its routes to the world
    /// are lost.
    fn routes_lost(&mut self, connected: bool, now: Instant) -> bool {
        self.cut |= self.lost.is_some() && !connected;
        if !(self.cut && connected && self.lost.is_some() && self.still_seen) {
            self.connected_unseen = None;
            return false;
        }
        now.duration_since(*self.connected_unseen.get_or_insert(now)) >= RELINK_AFTER
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
        self.still_seen = matches!(v, Verdict::StillSeen { .. });
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

/// What a standby has had of the world it follows since following began
/// or the world's token came back: it follows the world once it has had a
/// checkpoint and a state since.
#[derive(Debug)]
struct Catching {
    /// Following began, or the token came back, at this instant.
    since: Instant,
    /// Whether the token came back (after a cut link).
    back: bool,
    /// The step of the first checkpoint since.
    checkpoint_step: Option<u64>,
    /// Whether "following it" was said in the log.
    said: bool,
}

impl Catching {
    fn new(now: Instant, back: bool) -> Catching {
        Catching { since: now, back, checkpoint_step: None, said: false }
    }

    /// Whether a checkpoint and a state (the last one received at
    /// `state_at`) came since.
    fn following(&self, state_at: Option<Instant>) -> bool {
        self.checkpoint_step.is_some() && state_at.is_some_and(|at| at > self.since)
    }

    /// Whether at `now` the world whose token came back has not sent a
    /// checkpoint and a state for too long: the routes to it are lost.
    fn routes_lost(&self, state_at: Option<Instant>, now: Instant) -> bool {
        self.back && !self.following(state_at) && now.duration_since(self.since) >= RELINK_AFTER
    }

    /// Says in the log, once, that this standby follows world `id`.
    fn say_following(&mut self, id: &str, state_at: Option<Instant>) {
        if let Some(step) = self.checkpoint_step.filter(|_| !self.said && self.following(state_at)) {
            self.said = true;
            tracing::info!("{id}'s checkpoint of step {step} and states received: following it");
        }
    }
}

/// Follows the active world of `keys`' simulation as standby `me` (its
/// token says so), or goes on following the one it `followed` before a new
/// session, and returns when that world has gone, with `fresh` (built from
/// the world file this process was given) made into the world it left, or
/// when the session lost its routes to the world (then with `fresh`
/// untouched). Without a checkpoint of that world when it goes, it takes
/// over from the periodic checkpoint file `on_disk` (`--checkpoint`) if
/// that holds one of this world, else from the world file; either way
/// with the last state taken up when its bodies are those of the world
/// file or checkpoint. Fails when the active world runs another world
/// file, seed or step size.
pub async fn stand_by(
    session: &zenoh::Session,
    keys: &Keys,
    me: &str,
    fresh: Physics,
    followed: Option<Followed>,
    on_disk: Option<&Path>,
) -> anyhow::Result<Standby> {
    let (tx, mut heard) = unbounded_channel();
    let last_state: Arc<Mutex<Option<(ZBytes, Instant)>>> = Arc::default();
    let last_status: Arc<Mutex<Option<(WorldStatus, Instant)>>> = Arc::default();
    let records: Arc<Mutex<LockstepRecords>> = Arc::default();
    let reached: Arc<Mutex<NodesReached>> = Arc::default();
    let subscribers = listen(session, keys, &tx, &last_state, &last_status, (&records, &reached)).await?;
    let witnesses = Witnesses::listen(session, keys).await?;
    let highest_term = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let mut following: Option<String> = None;
    let mut witnessed = Witnessed::default();
    let mut checkpoint: Option<Vec<u8>> = None;
    if let Some(had) = followed {
        tracing::info!("going on standing by for {} with a new session", had.id);
        *lock(&last_state) = had.last_state.map(|bytes| (bytes, Instant::now()));
        *lock(&last_status) = had.last_status.map(|status| (status, Instant::now()));
        highest_term.store(had.highest_term, std::sync::atomic::Ordering::Relaxed);
        checkpoint = had.checkpoint;
        *lock(&reached) = had.reached;
        witnessed.known = had.known;
        witnessed.lost = Some(Instant::now());
        following = Some(had.id);
    }
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

    let mut catching = Catching::new(Instant::now(), false);
    let mut fetching = false;
    let mut pull = tokio::time::interval(PULL_EVERY);
    pull.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut again = tokio::time::interval(ASK_AGAIN);
    again.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut lonely = tokio::time::interval(Duration::from_secs(10));
    lonely.tick().await;
    let (mut fetch_now, mut ask_now) = (false, false);
    // Why this standby opens its session again, when it must.
    let mut relinking: Option<String> = None;
    let gone = loop {
        tokio::select! {
            Some(news) = heard.recv() => match news {
                Heard::World(id, true) if following.is_none() => {
                    tracing::info!("standing by for the running world ({id})");
                    following = Some(id);
                    catching = Catching::new(Instant::now(), false);
                    fetch_now = true;
                    ask_now = true;
                }
                Heard::World(id, alive) if following.as_ref() == Some(&id) => {
                    witnessed.token(&id, alive);
                    if alive {
                        catching = Catching::new(Instant::now(), true);
                    }
                    ask_now |= !alive;
                }
                Heard::World(..) => {}
                Heard::Event => fetch_now = true,
                Heard::Checkpoint(fetched) => {
                    fetching = false;
                    match fetched {
                        Ok(bytes) => {
                            let id = following.as_deref().unwrap_or("?");
                            check_fits(&bytes, &fresh, id)?;
                            let step = checkpoint_file::open(&bytes).map(|(header, _)| header.step).unwrap_or_default();
                            catching.checkpoint_step.get_or_insert(step);
                            lock(&records).checkpointed(step);
                            checkpoint = Some(bytes);
                        }
                        Err(e) => tracing::debug!("no checkpoint from the active world this time: {e:#}"),
                    }
                }
            },
            _ = pull.tick() => {
                fetch_now = true;
                ask_now = true;
                let state_at = lock(&last_state).as_ref().map(|(_, at)| *at);
                let status_at = lock(&last_status).as_ref().map(|(_, at)| *at);
                if let Some(id) = following.as_ref().filter(|_| witnessed.lost.is_none()) {
                    catching.say_following(id, state_at);
                    if catching.routes_lost(state_at, Instant::now()) {
                        relinking = Some(format!(
                            "{id}'s token came back {} s ago but not a checkpoint and a state of it since",
                            catching.since.elapsed().as_secs()
                        ));
                    } else if let Some(silent) = silent_for(status_at, Instant::now()) {
                        relinking = Some(format!(
                            "{id}'s token is here but not its status (sent twice a second, paused or not) for {} s",
                            silent.as_secs()
                        ));
                    }
                }
            }
            _ = again.tick(), if witnessed.lost.is_some() => {
                ask_now = true;
                let connected = connected_to_a_router(session).await;
                if witnessed.routes_lost(connected, Instant::now()) {
                    let id = following.as_deref().unwrap_or("the world");
                    relinking = Some(format!(
                        "{id}'s token stayed away for {} s after this standby's link came back, while the nodes see it",
                        RELINK_AFTER.as_secs()
                    ));
                }
            }
            _ = lonely.tick(), if following.is_none() => {
                tracing::info!("standing by: no world of this simulation yet");
            }
        }
        if let Some((why, id)) = relinking.take().zip(following.clone()) {
            tracing::warn!(
                "{why}: Zenoh lost the routes between this standby and the world (eclipse-zenoh/zenoh#1886); \
                 opening this standby's session again"
            );
            let followed = Followed {
                id,
                checkpoint,
                last_state: lock(&last_state).take().map(|(bytes, _)| bytes),
                last_status: lock(&last_status).take().map(|(status, _)| status),
                known: std::mem::take(&mut witnessed.known),
                highest_term: highest_term.load(std::sync::atomic::Ordering::Relaxed),
                reached: lock(&reached).clone(),
            };
            return Ok(Standby::Relink(fresh, followed));
        }
        // The nodes' last words, as they told them (see `Witnesses`).
        if ask_now && following.is_some() {
            ask_now = false;
            if let Some(id) = following.clone().filter(|id| witnessed.answered(id, &witnesses.answers())) {
                break id;
            }
        }
        if fetch_now && following.is_some() && witnessed.lost.is_none() && !fetching {
            fetch_now = false;
            fetching = true;
            spawn_fetch(session, keys, &tx);
        }
    };

    let status = lock(&last_status).take().map(|(status, _)| status);
    let last = lock(&last_state).take().map(|(bytes, _)| bytes.to_bytes().into_owned());
    let term = highest_term.load(std::sync::atomic::Ordering::Relaxed) + 1;
    let checkpoint = match checkpoint {
        Some(bytes) => Some((bytes, "its checkpoint".to_string())),
        None => checkpoint_on_disk(on_disk, &fresh, &gone),
    };
    let mut took = take_over(&gone, fresh, checkpoint, last, status.as_ref(), &records, subscribers)?;
    if took.clock != Some(ClockMode::Lockstep) {
        lock(&reached).step_on(&mut took.physics, &gone);
    }
    took.world_id = gone;
    took.term = term;
    Ok(Standby::TookOver(took))
}

/// How long the followed world's status, last received at `status_at`,
/// has not come at `now`, when that is [`SILENT_RELINK_AFTER`] or more:
/// Zenoh can go on bringing a world's token through a peer connected to
/// both worlds (a node) after the worlds' own link was cut, while nothing
/// else of the world comes; without this the standby would follow it no
/// more, and take over, when it does, from a stale state.
fn silent_for(status_at: Option<Instant>, now: Instant) -> Option<Duration> {
    let silent = now.saturating_duration_since(status_at?);
    (silent >= SILENT_RELINK_AFTER).then_some(silent)
}

/// Whether `session` is connected to a router (a world, or a router of
/// the user's).
async fn connected_to_a_router(session: &zenoh::Session) -> bool {
    session.info().routers_zid().await.next().is_some()
}

/// Fetches the active world's checkpoint; it comes as heard.
fn spawn_fetch(session: &zenoh::Session, keys: &Keys, tx: &UnboundedSender<Heard>) {
    let (session, keys, tx) = (session.clone(), keys.clone(), tx.clone());
    tokio::spawn(async move {
        let fetched = fetch_checkpoint(&session, &keys, FETCH_TIMEOUT).await;
        let _ = tx.send(Heard::Checkpoint(fetched.map_err(anyhow::Error::from)));
    });
}

/// Subscribes to the world's tokens, events, states and status, and to
/// what a lockstep run's records and how far the nodes got need.
async fn listen(
    session: &zenoh::Session,
    keys: &Keys,
    tx: &UnboundedSender<Heard>,
    last_state: &Arc<Mutex<Option<(ZBytes, Instant)>>>,
    last_status: &Arc<Mutex<Option<(WorldStatus, Instant)>>>,
    (records, reached): (&Arc<Mutex<LockstepRecords>>, &Arc<Mutex<NodesReached>>),
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
    let (keep_state, state_records, state_reached) = (last_state.clone(), records.clone(), reached.clone());
    let states = session
        .declare_subscriber(keys.world_state())
        .callback(move |sample| {
            // The records first: a take-over reads the last state, then them.
            let bytes = sample.payload().to_bytes();
            lock(&state_records).state(&bytes);
            lock(&state_reached).state(&bytes);
            *lock(&keep_state) = Some((sample.payload().clone(), Instant::now()));
        })
        .await
        .map_err(|e| anyhow::anyhow!("subscribing to the world's states: {e}"))?;
    let (keep_status, status_records) = (last_status.clone(), records.clone());
    let status = session
        .declare_subscriber(keys.status())
        .callback(move |sample| {
            if let Ok(status) = decode::<WorldStatus>(&sample.payload().to_bytes()) {
                lock(&status_records).lockstep(status.clock == ClockMode::Lockstep);
                *lock(&keep_status) = Some((status, Instant::now()));
            }
        })
        .await
        .map_err(|e| anyhow::anyhow!("subscribing to the world's status: {e}"))?;
    let mut subscribers: Vec<Box<dyn std::any::Any + Send>> =
        vec![Box::new(tokens), Box::new(events), Box::new(states), Box::new(status)];
    subscribers.extend(listen_to_the_barrier(session, keys, records, reached).await?);
    Ok(subscribers)
}

/// Subscribes to the drives' answers and the lockstep participants' tokens
/// and reports, for `records`, and to how far the drives got, for
/// `reached`.
async fn listen_to_the_barrier(
    session: &zenoh::Session,
    keys: &Keys,
    records: &Arc<Mutex<LockstepRecords>>,
    reached: &Arc<Mutex<NodesReached>>,
) -> anyhow::Result<Vec<Box<dyn std::any::Any + Send>>> {
    let (answers, answered) = (records.clone(), reached.clone());
    let actuations = session
        .declare_subscriber(keys.actuation_all())
        .callback(move |sample| {
            let bytes = sample.payload().to_bytes();
            lock(&answered).answer(&bytes);
            // Outside lockstep nothing else is kept: no copy of every actuation.
            let mut records = lock(&answers);
            if records.keeping() {
                records.answer(&bytes);
            }
        })
        .await
        .map_err(|e| anyhow::anyhow!("subscribing to the drives' actuations: {e}"))?;
    let (participants, own) = (records.clone(), keys.clone());
    let tokens = watch_tokens(session, keys.lockstep_all(), move |key, alive| {
        if let Some(node) = own.parse_lockstep(key) {
            lock(&participants).participant(node, alive);
        }
    })
    .await?;
    let (reports, own) = (records.clone(), keys.clone());
    let reported = session
        .declare_subscriber(keys.lockstep_all())
        .callback(move |sample| {
            if let Some(node) = own.parse_lockstep(sample.key_expr().as_str()) {
                lock(&reports).report(node, &sample.payload().to_bytes());
            }
        })
        .await
        .map_err(|e| anyhow::anyhow!("subscribing to the lockstep reports: {e}"))?;
    Ok(vec![Box::new(actuations), Box::new(tokens), Box::new(reported)])
}

/// Refuses to stand by for a world that is not this one: another world
/// file's content, seed or step size.
fn check_fits(bytes: &[u8], fresh: &Physics, world: &str) -> anyhow::Result<()> {
    let (header, _) = checkpoint_file::open(bytes).map_err(|e| anyhow::anyhow!("the checkpoint of {world}: {e}"))?;
    saved_from(&header, fresh).map_err(|e| {
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
        Answer { node: node.into(), worlds: worlds.iter().map(|w| w.to_string()).collect(), terms: Vec::new() }
    }

    #[test]
    fn a_standby_that_has_the_worlds_token_but_not_its_status_for_long_opens_its_session_again() {
        let at = Instant::now();
        assert_eq!(silent_for(None, at + SILENT_RELINK_AFTER * 2), None, "no status yet: nothing to miss");
        assert_eq!(silent_for(Some(at), at + SILENT_RELINK_AFTER / 2), None);
        assert_eq!(silent_for(Some(at), at + SILENT_RELINK_AFTER), Some(SILENT_RELINK_AFTER));
    }

    #[test]
    fn a_standby_connected_again_that_does_not_see_the_world_for_long_opens_its_session_again() {
        let (start, id) = (Instant::now(), "world-a");
        let s = |secs: u64| start + Duration::from_secs(secs);
        let mut witnessed = Witnessed::default();
        witnessed.token(id, true);
        assert!(!witnessed.routes_lost(true, start), "the world's token is here");
        witnessed.token(id, false);
        witnessed.answered(id, &[answer("drive", &[id]), answer("odom", &[id])]);
        // The cut link's transport may outlive the token for a while:
        // connected all along says nothing.
        assert!(!witnessed.routes_lost(true, s(1)));
        assert!(!witnessed.routes_lost(true, s(1) + RELINK_AFTER * 2));
        // No router any more: the link is cut, and not back yet.
        assert!(!witnessed.routes_lost(false, s(30)));
        // Connected again: the token has a moment to come back.
        assert!(!witnessed.routes_lost(true, s(40)));
        assert!(!witnessed.routes_lost(true, s(40) + RELINK_AFTER - Duration::from_millis(1)));
        assert!(witnessed.routes_lost(true, s(40) + RELINK_AFTER));
        // The world came back after all, or the nodes no longer see it:
        // nothing lost.
        witnessed.token(id, true);
        assert!(!witnessed.routes_lost(true, s(90)));
        witnessed.token(id, false);
        assert!(!witnessed.routes_lost(false, s(100)));
        witnessed.answered(id, &[answer("drive", &[]), answer("odom", &[])]);
        assert!(!witnessed.routes_lost(true, s(101)));
        assert!(!witnessed.routes_lost(true, s(101) + RELINK_AFTER * 2));
    }

    #[test]
    fn a_standby_whose_world_came_back_without_a_checkpoint_and_a_state_opens_its_session_again() {
        let start = Instant::now();
        let s = |secs: u64| start + Duration::from_secs(secs);
        // Following from the start: silence says nothing (a cut link may
        // keep the token for Zenoh's lease, 10 s, or longer).
        let following = Catching::new(start, false);
        assert!(!following.routes_lost(None, s(60)));
        // The token came back: a checkpoint and a state are due within
        // RELINK_AFTER; a state from before it went does not count.
        let mut back = Catching::new(s(40), true);
        assert!(!back.routes_lost(Some(s(20)), s(40) + RELINK_AFTER - Duration::from_millis(1)));
        assert!(back.routes_lost(Some(s(41)), s(40) + RELINK_AFTER), "states but no checkpoint");
        back.checkpoint_step = Some(1400);
        assert!(back.routes_lost(Some(s(20)), s(40) + RELINK_AFTER), "a checkpoint but no state");
        assert!(back.following(Some(s(41))));
        assert!(!back.routes_lost(Some(s(41)), s(40) + RELINK_AFTER * 3));
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
