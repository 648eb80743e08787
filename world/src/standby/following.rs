//! What a standby makes of what it hears while it follows a world: which
//! world it follows and whether it has caught up with it (a checkpoint and
//! a state since), whether that world is gone (its token went and the
//! nodes agree), when to fetch a checkpoint and ask the nodes, and when
//! its own routes to the world are lost (see the module `standby`).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use flotilla_node_kit::witness::{majority, Answer, Known};
use flotilla_wire::checkpoint_file;

use super::lockstep::LockstepRecords;
use super::{check_fits, lock, Heard, RELINK_AFTER, SAY_AFTER, SILENT_RELINK_AFTER};
use crate::physics::Physics;

/// The world a standby follows, as far as it has heard.
pub(super) struct Following {
    /// The world followed, once its token came.
    id: Option<String>,
    /// Whether it is gone, as the nodes tell it.
    witnessed: Witnessed,
    /// Its last checkpoint fetched.
    pub checkpoint: Option<Vec<u8>>,
    catching: Catching,
    fetching: bool,
    fetch_now: bool,
    ask_now: bool,
    /// Why this standby opens its session again, when it must.
    relinking: Option<String>,
}

impl Following {
    /// Following no world yet (`None`), or going on following world `id`,
    /// whose token is not seen yet in a new session, with the `checkpoint`
    /// and the nodes `known` the last session had.
    pub fn new(resumed: Option<(String, Option<Vec<u8>>, Known)>) -> Following {
        let mut following = Following {
            id: None,
            witnessed: Witnessed::default(),
            checkpoint: None,
            catching: Catching::new(Instant::now(), false),
            fetching: false,
            fetch_now: false,
            ask_now: false,
            relinking: None,
        };
        if let Some((id, checkpoint, known)) = resumed {
            following.checkpoint = checkpoint;
            following.witnessed.known = known;
            following.witnessed.lost = Some(Instant::now());
            following.id = Some(id);
        }
        following
    }

    /// Takes in what was heard: a world's token, an event, a checkpoint
    /// (refused when it is of another world than `fresh`; `records` learn
    /// its step).
    pub fn heard(&mut self, news: Heard, fresh: &Physics, records: &Mutex<LockstepRecords>) -> anyhow::Result<()> {
        match news {
            Heard::World(id, true) if self.id.is_none() => {
                tracing::info!("standing by for the running world ({id})");
                self.id = Some(id);
                self.catching = Catching::new(Instant::now(), false);
                self.fetch_now = true;
                self.ask_now = true;
            }
            Heard::World(id, alive) if self.id.as_ref() == Some(&id) => {
                self.witnessed.token(&id, alive);
                if alive {
                    self.catching = Catching::new(Instant::now(), true);
                }
                self.ask_now |= !alive;
            }
            Heard::World(..) => {}
            Heard::Event => self.fetch_now = true,
            Heard::Checkpoint(fetched) => {
                self.fetching = false;
                match fetched {
                    Ok(bytes) => {
                        check_fits(&bytes, fresh, self.id.as_deref().unwrap_or("?"))?;
                        let step = checkpoint_file::open(&bytes).map(|(header, _)| header.step).unwrap_or_default();
                        self.catching.checkpoint_step.get_or_insert(step);
                        lock(records).checkpointed(step);
                        self.checkpoint = Some(bytes);
                    }
                    Err(e) => tracing::debug!("no checkpoint from the active world this time: {e:#}"),
                }
            }
        }
        Ok(())
    }

    /// Every [`super::PULL_EVERY`]: a checkpoint to fetch, the nodes to
    /// ask; with the world's last state received at `state_at` and its
    /// status at `status_at`, whether this standby follows it now, or has
    /// lost its routes to it.
    pub fn pulled(&mut self, state_at: Option<Instant>, status_at: Option<Instant>) {
        self.fetch_now = true;
        self.ask_now = true;
        let Some(id) = self.id.as_ref().filter(|_| self.witnessed.lost.is_none()) else { return };
        self.catching.say_following(id, state_at);
        if self.catching.routes_lost(state_at, Instant::now()) {
            self.relinking = Some(format!(
                "{id}'s token came back {} s ago but not a checkpoint and a state of it since",
                self.catching.since.elapsed().as_secs()
            ));
        } else if let Some(silent) = silent_for(status_at, Instant::now()) {
            self.relinking = Some(format!(
                "{id}'s token is here but not its status (sent twice a second, paused or not) for {} s",
                silent.as_secs()
            ));
        }
    }

    /// Whether the world's token is gone: then the nodes are asked again
    /// every [`super::ASK_AGAIN`].
    pub fn token_lost(&self) -> bool {
        self.witnessed.lost.is_some()
    }

    /// Every [`super::ASK_AGAIN`] while the token is gone: the nodes to
    /// ask again; whether `session`'s routes to the world are lost.
    pub async fn ask_again(&mut self, session: &zenoh::Session) {
        self.ask_now = true;
        let connected = connected_to_a_router(session).await;
        if self.witnessed.routes_lost(connected, Instant::now()) {
            let id = self.id.as_deref().unwrap_or("the world");
            self.relinking = Some(format!(
                "{id}'s token stayed away for {} s after this standby's link came back, while the nodes see it",
                RELINK_AFTER.as_secs()
            ));
        }
    }

    /// Whether a world is followed: else, every 10 s, the log says none is
    /// here yet.
    pub fn follows_none(&self) -> bool {
        self.id.is_none()
    }

    /// The nodes that answered while the world was seen, for a new session.
    pub fn take_known(&mut self) -> Known {
        std::mem::take(&mut self.witnessed.known)
    }

    /// Why this standby must open its session again, and the world it
    /// follows, when it must.
    pub fn relinking(&mut self) -> Option<(String, String)> {
        self.relinking.take().zip(self.id.clone())
    }

    /// The world followed, when the nodes' `answers` (read only when they
    /// are to be asked) say it is gone.
    pub fn gone(&mut self, answers: impl FnOnce() -> Vec<Answer>) -> Option<String> {
        if !(self.ask_now && self.id.is_some()) {
            return None;
        }
        self.ask_now = false;
        self.id.clone().filter(|id| self.witnessed.answered(id, &answers()))
    }

    /// Whether a checkpoint is to be fetched now (then it is counted as
    /// being fetched until [`Heard::Checkpoint`] comes).
    pub fn fetch(&mut self) -> bool {
        let now = self.fetch_now && self.id.is_some() && self.witnessed.lost.is_none() && !self.fetching;
        if now {
            self.fetch_now = false;
            self.fetching = true;
        }
        now
    }
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
