//! Two worlds of one simulation must never both step. A standby takes over
//! only with the nodes' agreement (see [`crate::standby`]); this is the
//! running world's side (docs/checkpoints.md, "Network partitions"):
//!
//! * **Fencing.** Once a standby has been seen, the world reads which
//!   worlds the nodes see (what they tell, see [`witness`]) every
//!   [`ASK_EVERY`]. When no more than half of
//!   the nodes it knew answer, twice in a row, it may be
//!   the one cut off, and a standby that reaches them may take over: it
//!   pauses (through its own control service, as a user would) and resumes
//!   when more than half answer again. Its standby's token says nothing
//!   here: the link to the standby may outlive the nodes' links or go
//!   before them.
//! * **Terms.** Each running world holds a token of its term: 0 for a
//!   world started afresh, one more than the world it took over for a
//!   standby. A world that receives states from another process (its id
//!   is the same after a take-over) looks at the terms alive: when one is
//!   higher than its own, a standby took over while it was cut off, and it
//!   steps down; so it does when the nodes' answers tell of a higher term
//!   (its link to the new world may come back without the other's
//!   declarations) ([`guard`] returns why; the process ends, and `flotilla
//!   run` starts it again, when it stands by for the world now running).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use flotilla_node_kit::claims::live_tokens;
use flotilla_node_kit::client::call_control;
use flotilla_node_kit::subscribe::watch_tokens;
use flotilla_node_kit::witness::{self, majority, Known, Witnesses};
use flotilla_wire::codec::decode;
use flotilla_wire::control::ControlRequest;
use flotilla_wire::world_to_nodes::WorldStatus;
use flotilla_wire::Keys;
use zenoh::sample::Locality;

/// How often a world with a standby reads which worlds the nodes see.
pub const ASK_EVERY: Duration = Duration::from_secs(1);

/// Askings in a row without a majority before the world pauses: one
/// could be nodes too busy to answer in time.
const SHORT_ASKINGS: u32 = 2;

/// How long the world's own control service has to answer a pause.
const CONTROL_TIMEOUT: Duration = Duration::from_secs(5);

/// Holds world `world`'s term token and, once a standby has been seen,
/// sends its beacon (see [`witness::beacon`]) and fences it while it may
/// be cut off; returns when it must step down: a world of a higher term
/// runs.
pub async fn guard(session: zenoh::Session, keys: Keys, world: String, term: u64) -> anyhow::Result<String> {
    let term_key = keys.term_token(term);
    let _term = session
        .liveliness()
        .declare_token(&term_key)
        .await
        .map_err(|e| anyhow::anyhow!("declaring the world's term token {term_key}: {e}"))?;
    // Whether a standby has been seen: only then is there anyone to step
    // beside.
    let standby_seen = Arc::new(AtomicBool::new(false));
    let _standbys = {
        let seen = standby_seen.clone();
        watch_tokens(&session, keys.standby_tokens(), move |_, alive| {
            if alive {
                seen.store(true, Ordering::Relaxed);
            }
        })
        .await?
    };
    // States published by another process: a world of this simulation
    // besides this one.
    let foreign = Arc::new(AtomicBool::new(false));
    let _foreign_states = {
        let foreign = foreign.clone();
        session
            .declare_subscriber(keys.world_state())
            .allowed_origin(Locality::Remote)
            .callback(move |_| foreign.store(true, Ordering::Relaxed))
            .await
            .map_err(|e| anyhow::anyhow!("watching for another world's states: {e}"))?
    };
    let paused = Arc::new(AtomicBool::new(false));
    let _status = {
        let paused = paused.clone();
        session
            .declare_subscriber(keys.status())
            .allowed_origin(Locality::SessionLocal)
            .callback(move |sample| {
                if let Ok(status) = decode::<WorldStatus>(&sample.payload().to_bytes()) {
                    paused.store(status.paused, Ordering::Relaxed);
                }
            })
            .await
            .map_err(|e| anyhow::anyhow!("watching the world's own status: {e}"))?
    };

    let witnesses = Witnesses::listen(&session, &keys, &keys.witnesses()).await?;
    // Sent once a standby has been seen: only then do the nodes tell.
    let mut beacon = None;
    let mut known = Known::default();
    let mut fenced = false;
    // Askings in a row that no more than half of the nodes known answered.
    let mut short = 0;
    let mut told_of_lower = false;
    let mut every = tokio::time::interval(ASK_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        every.tick().await;
        if foreign.swap(false, Ordering::Relaxed) {
            let higher = highest_term(&session, &keys).await.filter(|&t| t > term);
            if let Some(higher) = higher {
                return Ok(stepping_down(higher, term, "publishing states"));
            }
            if !told_of_lower {
                told_of_lower = true;
                tracing::error!(
                    "another world publishes states in this simulation, of no higher term than this one ({term}): \
                     it should step down"
                );
            }
        }
        if !standby_seen.load(Ordering::Relaxed) {
            continue;
        }
        if beacon.is_none() {
            beacon = Some(witness::beacon(&session, &keys, &world).await?);
        }
        let answers = witnesses.answers();
        // The nodes reach both worlds on links of their own: they tell of
        // a higher term even when this world's link to the new one came
        // back without its declarations (eclipse-zenoh/zenoh#1886).
        if let Some(higher) = answers.iter().flat_map(|a| a.terms.iter().copied()).filter(|&t| t > term).max() {
            return Ok(stepping_down(higher, term, "as the nodes tell"));
        }
        if majority(answers.len(), known.count()) {
            known.answered(answers.len());
            short = 0;
        } else {
            short += 1;
        }
        let cut_off = short >= SHORT_ASKINGS;
        match (cut_off, fenced) {
            (true, false) if !paused.load(Ordering::Relaxed) => {
                tracing::warn!(
                    "only {} of the {} node(s) known answer: this world may be the one cut off, and must not step \
                     beside a standby that takes over; pausing",
                    answers.len(),
                    known.count()
                );
                fenced = control(&session, &keys, "pause", &ControlRequest::Pause).await;
            }
            (false, true) => {
                tracing::info!("{} node(s) answer again: resuming", answers.len());
                fenced = !control(&session, &keys, "resume", &ControlRequest::Resume).await;
            }
            _ => {}
        }
    }
}

/// Why a world of term `term` steps down: one of term `higher` runs,
/// `how` it was seen.
fn stepping_down(higher: u64, term: u64, how: &str) -> String {
    format!(
        "a world of term {higher} runs this simulation ({how}; this one is of term {term}): a standby took over \
         while this world was cut off from it and from most nodes"
    )
}

/// Asks the world's own control service for `request`; whether it did.
async fn control(session: &zenoh::Session, keys: &Keys, verb: &str, request: &ControlRequest) -> bool {
    match call_control(session, keys, verb, request, CONTROL_TIMEOUT).await {
        Ok(_) => true,
        Err(e) => {
            tracing::error!("cannot {verb} this world: {e}");
            false
        }
    }
}

/// The highest term of a running world, if any token says.
pub async fn highest_term(session: &zenoh::Session, keys: &Keys) -> Option<u64> {
    let tokens = live_tokens(session, keys.term_tokens(), Duration::from_secs(1)).await.ok()?;
    tokens.iter().filter_map(|key| keys.parse_term(key)).max()
}
