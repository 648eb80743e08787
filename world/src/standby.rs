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
//!   the received bytes and decoded only at a take-over. States come on
//!   their own key for standbys, droppable (the checkpoints it fetches
//!   are also at a low priority): a standby that cannot keep up (a busy
//!   machine, a slow link) loses states instead of holding up the world's
//!   link to it until Zenoh closes it, and with it the world's step;
//!   what it missed, the drives' answers make up (`standby/reached.rs`,
//!   and in lockstep the re-run of `standby/lockstep.rs`);
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
//!
//! What it hears on every node's key of a family (the drives' actuations,
//! the lockstep reports and tokens, the witnesses) it subscribes to in
//! [`standby_form`], not in the active world's: see there why.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use flotilla_node_kit::client::{fetch_checkpoint_with, CheckpointFetch};
use flotilla_node_kit::subscribe::watch_tokens;
use flotilla_node_kit::witness::{Known, Witnesses};
use flotilla_wire::checkpoint_file;
use flotilla_wire::codec::decode;
use flotilla_wire::control::ClockMode;
use flotilla_wire::world_to_nodes::{WorldStateHead, WorldStatus};
use flotilla_wire::Keys;
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};
use zenoh::bytes::ZBytes;

use crate::checkpoint::NodeMemory;
use crate::node::Handover;
use crate::physics::Physics;
use lockstep::LockstepRecords;
use reached::NodesReached;

mod following;
mod lockstep;
mod reached;
mod take_over;

use following::Following;
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

/// How long a standby that took over keeps its following token (see
/// `Keys::following_token`): past the new world's own token's declaring,
/// however long restoring and re-running the killed world's steps take.
const FOLLOWING_KEPT_FOR: Duration = Duration::from_secs(10);

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
    let witnesses = Witnesses::listen(session, keys, &standby_form(&keys.witnesses())).await?;
    let highest_term = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let resumed = followed.map(|had| {
        tracing::info!("going on standing by for {} with a new session", had.id);
        *lock(&last_state) = had.last_state.map(|bytes| (bytes, Instant::now()));
        *lock(&last_status) = had.last_status.map(|status| (status, Instant::now()));
        highest_term.store(had.highest_term, std::sync::atomic::Ordering::Relaxed);
        *lock(&reached) = had.reached;
        (had.id, had.checkpoint, had.known)
    });
    let mut following = Following::new(resumed);
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

    let mut pull = tokio::time::interval(PULL_EVERY);
    pull.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut again = tokio::time::interval(ASK_AGAIN);
    again.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut lonely = tokio::time::interval(Duration::from_secs(10));
    lonely.tick().await;
    // Declared once a world is followed, kept until this returns.
    let mut following_token = None;
    let gone = loop {
        tokio::select! {
            Some(news) = heard.recv() => following.heard(news, &fresh, &records)?,
            _ = pull.tick() => {
                let state_at = lock(&last_state).as_ref().map(|(_, at)| *at);
                let status_at = lock(&last_status).as_ref().map(|(_, at)| *at);
                following.pulled(state_at, status_at);
            }
            _ = again.tick(), if following.token_lost() => following.ask_again(session).await,
            _ = lonely.tick(), if following.follows_none() => {
                tracing::info!("standing by: no world of this simulation yet");
            }
        }
        if let Some((why, id)) = following.relinking() {
            tracing::warn!(
                "{why}: Zenoh lost the routes between this standby and the world (eclipse-zenoh/zenoh#1886); \
                 opening this standby's session again"
            );
            let followed = Followed {
                id,
                known: following.take_known(),
                checkpoint: following.checkpoint,
                last_state: lock(&last_state).take().map(|(bytes, _)| bytes),
                last_status: lock(&last_status).take().map(|(status, _)| status),
                highest_term: highest_term.load(std::sync::atomic::Ordering::Relaxed),
                reached: lock(&reached).clone(),
            };
            return Ok(Standby::Relink(fresh, followed));
        }
        if following_token.is_none() && !following.follows_none() {
            following_token = Some(declare_following(session, keys, me).await?);
        }
        // The nodes' last words, as they told them (see `Witnesses`).
        if let Some(id) = following.gone(|| witnesses.answers()) {
            break id;
        }
        if following.fetch() {
            spawn_fetch(session, keys, &tx);
        }
    };

    // Kept a while after the take-over: a world restarted meanwhile finds
    // it, or the new world's token, never neither.
    if let Some(token) = following_token {
        tokio::spawn(async move {
            tokio::time::sleep(FOLLOWING_KEPT_FOR).await;
            drop(token);
        });
    }
    let status = lock(&last_status).take().map(|(status, _)| status);
    let last = lock(&last_state).take().map(|(bytes, _)| bytes.to_bytes().into_owned());
    let term = highest_term.load(std::sync::atomic::Ordering::Relaxed) + 1;
    let checkpoint = match following.checkpoint {
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

/// Declares that standby `me` follows a world, for worlds starting while
/// it takes over (see `Keys::following_token`).
async fn declare_following(
    session: &zenoh::Session,
    keys: &Keys,
    me: &str,
) -> anyhow::Result<zenoh::liveliness::LivelinessToken> {
    let key = keys.following_token(me);
    session
        .liveliness()
        .declare_token(&key)
        .await
        .map_err(|e| anyhow::anyhow!("declaring the standby's following token {key}: {e}"))
}

/// Fetches the active world's checkpoint; it comes as heard.
fn spawn_fetch(session: &zenoh::Session, keys: &Keys, tx: &UnboundedSender<Heard>) {
    let (session, keys, tx) = (session.clone(), keys.clone(), tx.clone());
    tokio::spawn(async move {
        let fetched = fetch_checkpoint_with(&session, &keys, FETCH_TIMEOUT, CheckpointFetch::Background).await;
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
        .declare_subscriber(keys.world_standby_state())
        .callback(move |sample| {
            // The records first: a take-over reads the last state, then them.
            if let Ok(head) = decode::<WorldStateHead>(&sample.payload().to_bytes()) {
                lock(&state_records).state(head.step);
                lock(&state_reached).state(head.step);
            }
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
        .declare_subscriber(standby_form(&keys.actuation_all()))
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
    let tokens = watch_tokens(session, standby_form(&keys.lockstep_all()), move |key, alive| {
        if let Some(node) = own.parse_lockstep(key) {
            lock(&participants).participant(node, alive);
        }
    })
    .await?;
    let (reports, own) = (records.clone(), keys.clone());
    let reported = session
        .declare_subscriber(standby_form(&keys.lockstep_all()))
        .callback(move |sample| {
            if let Some(node) = own.parse_lockstep(sample.key_expr().as_str()) {
                lock(&reports).report(node, &sample.payload().to_bytes());
            }
        })
        .await
        .map_err(|e| anyhow::anyhow!("subscribing to the lockstep reports: {e}"))?;
    Ok(vec![Box::new(actuations), Box::new(tokens), Box::new(reported)])
}

/// `world_form`, a wildcard ending in `/*` as the active world subscribes
/// to every node's key of a family, written as a standby subscribes to the
/// same keys: ending in `/**` (no key of Flotilla's has more chunks there).
///
/// Why: a Zenoh 1.10 peer (every node) that publishes through a declared
/// publisher on a key keeps a dead router's face, and everything it built
/// for it, when another router holds the same wildcard subscription
/// matching that key; written in two forms, it is given back.
/// `cargo run -p flotilla-node-kit --example zenoh_churn -- --case
/// publishers` (one form) and `--case roles` (these two) show it with
/// Zenoh alone. The nodes still grow at take-overs in the warehouse-1000
/// soak (docs/checkpoints.md): this is not the only cause.
pub fn standby_form(world_form: &str) -> String {
    match world_form.strip_suffix("/*") {
        Some(family) => format!("{family}/**"),
        None => world_form.to_string(),
    }
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
    use super::standby_form;

    #[test]
    fn a_standby_writes_a_family_wildcard_with_two_stars() {
        assert_eq!(standby_form("flotilla/sim/actuation/*"), "flotilla/sim/actuation/**");
        assert_eq!(standby_form("flotilla/sim/witnesses/*"), "flotilla/sim/witnesses/**");
    }

    #[test]
    fn a_key_that_is_not_a_family_wildcard_is_left_as_it_is() {
        assert_eq!(standby_form("flotilla/sim/world/state"), "flotilla/sim/world/state");
        assert_eq!(standby_form("flotilla/sim/nodes/world-$*"), "flotilla/sim/nodes/world-$*");
    }

    #[test]
    fn both_forms_match_the_same_node_keys() {
        use zenoh::key_expr::KeyExpr;
        let world = KeyExpr::try_from("flotilla/sim/actuation/*").unwrap();
        let standby_key = standby_form("flotilla/sim/actuation/*");
        let standby = KeyExpr::try_from(standby_key.as_str()).unwrap();
        for node in ["flotilla/sim/actuation/drive-1", "flotilla/sim/actuation/diff_drive"] {
            let node = KeyExpr::try_from(node).unwrap();
            assert!(world.intersects(&node) && standby.intersects(&node), "{node}");
        }
    }
}
