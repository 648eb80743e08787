//! Everything a node does for recorders, behind one interface: the
//! `RecorderTap`.
//!
//! A recorder does not subscribe to every topic of a simulation: each node
//! sends it what it publishes in batches on its own key
//! (`flotilla/<sim>/recording/<node>`, the format in
//! [`flotilla_wire::recording`]), and the inputs it receives from outside
//! (a controller's `cmd_vel`) with them. The node runtime feeds the tap
//! once per moment, the messages an answer made at one sim time
//! (`RecorderTap::moment`), and once per input received
//! (`RecorderTap::forward`); the tap says which of the moment's messages
//! must still go out on their own keys (those a subscriber there wants).
//! Plugins write their outputs once and never learn whether a recorder
//! listens: while one does, every output counts as wanted
//! (`RecorderTap::listening`, which the outbox reads).
//!
//! Inside, and nowhere else:
//!
//! * `batch`: the batch being filled, in Zenoh's shared memory where the
//!   process has it, and when it must go;
//! * `channels`: the world's channel number of each key, and the node's
//!   sequence on each;
//! * `recorders`: the batch publisher and whether a recorder listens,
//!   and which keys a recorder still takes on the keys themselves (a batch
//!   must reach it before such a key's message);
//! * `forwarding`: the tokens that tell recorders which inputs a node
//!   forwards, so that they do not subscribe to those keys themselves;
//! * two small tasks: one sends a batch that waited [`BATCH_AGE`] (a
//!   paused or slow simulation), one holds the node's forwarding token
//!   while a recorder listens.

mod batch;
mod channels;
pub(crate) mod forwarding;
mod recorders;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use flotilla_wire::Keys;
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use zenoh::Wait;

use batch::PendingBatch;
pub use batch::{Messages, BATCH_AGE, BATCH_ALIGN};
pub use recorders::{declare_batch_publisher, watch_recorders_on_keys, RecordersOnKeys};

/// A node's tap for recorders: fed the node's messages moment by moment,
/// it fills the batches recorders take them from and sends each when it
/// must.
pub(crate) struct RecorderTap {
    session: zenoh::Session,
    /// Whether a recorder listens to the node's batches.
    listening: Arc<AtomicBool>,
    state: Arc<Mutex<TapState>>,
    /// Told when a batch starts, for the task that sends it at its age.
    started: Arc<Notify>,
    /// Keeps [`RecordersOnKeys`] to the recorders' tokens.
    _on_keys_watch: zenoh::pubsub::Subscriber<()>,
    /// The batch-age task and the forwarding-token task.
    tasks: [JoinHandle<()>; 2],
}

/// What the tap changes under its lock: the batch being filled and where
/// it goes.
struct TapState {
    batch: PendingBatch,
    /// `None` only in tests, which read the batch instead.
    publisher: Option<zenoh::pubsub::Publisher<'static>>,
    on_keys: Arc<RecordersOnKeys>,
}

impl RecorderTap {
    /// Opens the tap of node `node`: learns which keys recorders still take
    /// on the keys themselves (before anything is published, so that no
    /// message goes ahead of its batch), declares the batch publisher and
    /// starts watching for recorders. Needs a Tokio runtime.
    pub(crate) async fn open(session: &zenoh::Session, keys: &Keys, node: &str) -> crate::Result<RecorderTap> {
        let on_keys = Arc::new(RecordersOnKeys::default());
        let on_keys_watch = watch_recorders_on_keys(session, keys, on_keys.clone()).await?;
        let listening = Arc::new(AtomicBool::new(false));
        let (changes, changed) = tokio::sync::mpsc::unbounded_channel();
        let publisher = declare_batch_publisher(session, keys.recording(node), listening.clone(), move |listens| {
            let _ = changes.send(listens);
        })
        .await?;
        let state =
            Arc::new(Mutex::new(TapState { batch: PendingBatch::default(), publisher: Some(publisher), on_keys }));
        let started = Arc::new(Notify::new());
        let tasks = [
            tokio::spawn(send_at_age(state.clone(), started.clone())),
            tokio::spawn(forwarding::hold_node_token(session.clone(), keys.forwarding(node), changed)),
        ];
        Ok(RecorderTap { session: session.clone(), listening, state, started, _on_keys_watch: on_keys_watch, tasks })
    }

    /// Waits, at most `within`, until the node's batches reach the
    /// recorders already there, if any: until then its outputs go only on
    /// their keys, where a recorder the node does not know of yet gets
    /// nothing either, so that the answers to the paused world's first
    /// state, which the node gives as soon as it joins the barrier, would
    /// be missing from a recording (`flotilla run --record` starts the
    /// recorder before the nodes). With `expected` (its launcher says a
    /// recorder records the run), it waits for one; else for those whose
    /// [`Keys::recorder_on_key`] tokens it finds. That query can come back
    /// empty to a node that has only just connected, the recorder's tokens
    /// not having reached it yet: the odometry of a recorded run then
    /// answered the first state unrecorded.
    pub(crate) async fn reach_present_recorders(&self, keys: &Keys, within: Duration, expected: bool) {
        if self.listens() {
            return;
        }
        if !expected {
            let present = crate::claims::live_tokens(&self.session, keys.recorders_on_keys(), within).await;
            if present.is_ok_and(|tokens| tokens.is_empty()) {
                return;
            }
        }
        let give_up = tokio::time::Instant::now() + within;
        while !self.listens() {
            if tokio::time::Instant::now() >= give_up {
                tracing::warn!(
                    "a recorder is there, but Zenoh has not routed this node's batches to it within {within:?}"
                );
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Whether a recorder listens to the node's batches.
    pub(crate) fn listens(&self) -> bool {
        self.listening.load(Ordering::Relaxed)
    }

    /// The flag [`RecorderTap::listens`] reads, for the outbox: while it is
    /// set, every output is wanted.
    pub(crate) fn listening(&self) -> Arc<AtomicBool> {
        self.listening.clone()
    }

    /// Numbers the node's keys as the world's description `channels` does
    /// (after every rebuild).
    pub(crate) fn follow(&self, channels: &[String], keys: &Keys) {
        self.state().batch.channels.follow(channels, keys);
    }

    /// Takes the moment of sim time `time_ns` that made `items`, if a
    /// recorder listens (or forwarded messages of it wait): sets
    /// `also_on_key` to which of them must go on their keys too (those
    /// `subscribed` says someone wants there), sending the batch first if
    /// it is full or a recorder takes one of those keys there. Returns
    /// whether the tap took the moment; if not, every message goes on its
    /// key as it would without recorders.
    pub(crate) fn moment(
        &self,
        time_ns: u64,
        items: &Messages,
        subscribed: impl Fn(&str) -> bool,
        also_on_key: &mut Vec<bool>,
    ) -> bool {
        let mut state = self.state();
        if !state.takes(self.listens(), items) {
            return false;
        }
        state.offer_shared_memory(&self.session);
        if state.add(time_ns, items, subscribed, also_on_key) {
            self.started.notify_one();
        }
        true
    }

    /// Writes `payload`, received on the forwarded input `key`, into the
    /// batch at sim time `time_ns` (the state answered last), while a
    /// recorder listens.
    pub(crate) fn forward(&self, time_ns: u64, key: &str, payload: &[u8]) {
        if self.listens() && self.state().forward(time_ns, key, payload) {
            self.started.notify_one();
        }
    }

    /// Whether the moment of `items` at `time_ns` would only join the
    /// batch, sending nothing (none of them subscribed on its key, the
    /// batch not full): a receiving thread may then take it (see
    /// `crate::runtime::handover`).
    pub(crate) fn only_joins_batch(&self, time_ns: u64, items: &Messages, subscribed: impl Fn(&str) -> bool) -> bool {
        let state = self.state();
        state.takes(self.listens(), items)
            && state.batch.takes_without_sending(time_ns, items)
            && items.iter().all(|(key, _)| !subscribed(key))
    }

    /// Whether forwarded messages wait in a moment not yet closed: the
    /// node's next publishing closes it.
    pub(crate) fn has_open_moment(&self) -> bool {
        self.state().batch.has_open_moment()
    }

    /// Sends the batch being filled, if it has a moment (the node stops).
    pub(crate) fn flush(&self) {
        self.state().send();
    }

    fn state(&self) -> MutexGuard<'_, TapState> {
        lock(&self.state)
    }
}

impl Drop for RecorderTap {
    fn drop(&mut self) {
        self.tasks.iter().for_each(JoinHandle::abort);
    }
}

impl TapState {
    /// Whether a moment of `items` goes to recorders: while one listens, or
    /// while forwarded messages wait in a moment it closes.
    fn takes(&self, listens: bool, items: &Messages) -> bool {
        (listens && !items.is_empty()) || self.batch.has_open_moment()
    }

    /// Adds the moment (see [`RecorderTap::moment`]); returns whether it
    /// started a batch.
    fn add(
        &mut self,
        time_ns: u64,
        items: &Messages,
        subscribed: impl Fn(&str) -> bool,
        also_on_key: &mut Vec<bool>,
    ) -> bool {
        also_on_key.clear();
        also_on_key.extend(items.iter().map(|(key, _)| subscribed(key)));
        self.batch.add(time_ns, items);
        let started = self.batch.take_started();
        if self.batch.is_full() || batch_goes_first(items, also_on_key, &self.on_keys) {
            self.send();
        }
        started
    }

    /// Forwards a received message (see [`RecorderTap::forward`]); returns
    /// whether it started a batch.
    fn forward(&mut self, time_ns: u64, key: &str, payload: &[u8]) -> bool {
        self.batch.forward(time_ns, key, payload);
        self.batch.take_started()
    }

    /// Gives the batches the session's shared memory once it is ready,
    /// asked for only once a recorder listens: made at every node's start,
    /// the pools were 4 MiB of locked memory each even without a recorder,
    /// and more pools made while processes start make Zenoh 1.10's removal
    /// of pools it takes for orphans likelier (see `crate::shared_memory`).
    /// The first ask starts making it; until it is ready, batches are
    /// written in process memory.
    fn offer_shared_memory(&mut self, session: &zenoh::Session) {
        if self.batch.wants_shared_memory() {
            if let zenoh::shm::ShmProviderState::Ready(shared) = session.get_shm_provider() {
                self.batch.use_shared_memory(shared);
            }
        }
    }

    /// Sends the batch, if it has a moment.
    fn send(&mut self) {
        let Some(batch) = self.batch.take() else { return };
        let Some(publisher) = &self.publisher else { return };
        // Numbered even if it fails to go: the recorder sees the gap.
        if let Err(e) = publisher.put(batch).wait() {
            tracing::warn!("cannot send the recorders their batch: {e}");
        }
    }
}

fn lock(state: &Mutex<TapState>) -> MutexGuard<'_, TapState> {
    // A panic while holding the lock would be a bug; keep recording regardless.
    state.lock().unwrap_or_else(|e| e.into_inner())
}

/// Sends each batch at most [`BATCH_AGE`] after its first moment, told of
/// each start by `started`.
async fn send_at_age(state: Arc<Mutex<TapState>>, started: Arc<Notify>) {
    loop {
        started.notified().await;
        // The batch started may have gone (full) and another started since:
        // each due time is read again after the wait.
        loop {
            let due = lock(&state).batch.due_at();
            let Some(due) = due else { break };
            tokio::time::sleep_until(due.into()).await;
            let mut state = lock(&state);
            if state.batch.due_at().is_some_and(|due| due <= Instant::now()) {
                state.send();
            }
        }
    }
}

/// Whether the batch for recorders must go before a moment's `items`, of
/// which those marked in `on_keys` also go on their keys: it must when a
/// recorder takes one of those keys there, not when only other
/// subscribers want them.
fn batch_goes_first(items: &Messages, on_keys: &[bool], recorders: &RecordersOnKeys) -> bool {
    on_keys.contains(&true)
        && recorders
            .takes_any(items.iter().zip(on_keys).filter(|(_, &on_key)| on_key).map(|((key, _), _)| key.as_str()))
}

#[cfg(test)]
mod tests {
    use super::batch::tests::{numbered, Expected};
    use super::*;

    fn moment(keys: &[&str]) -> Vec<(String, Vec<u8>)> {
        keys.iter().map(|key| (key.to_string(), vec![1, 2, 3])).collect()
    }

    /// A tap's state without Zenoh: batches are read, not sent.
    fn unsent() -> TapState {
        let mut state = TapState { batch: PendingBatch::default(), publisher: None, on_keys: Default::default() };
        numbered(&mut state.batch);
        state
    }

    #[test]
    fn a_batch_goes_first_only_for_a_key_a_recorder_still_takes_there() {
        let recorders = RecordersOnKeys::default();
        let items = moment(&["robot1/scan", "robot2/scan"]);
        // The wander subscribes the scans; no recorder takes them on their keys.
        assert!(!batch_goes_first(&items, &[true, true], &recorders));
        // A recorder that has not switched robot2's scans to batches yet.
        let token = "flotilla/s/recorders_on_keys/1f2e/robot2/scan";
        recorders.token(token, "robot2/scan", true);
        assert!(batch_goes_first(&items, &[true, true], &recorders));
        assert!(!batch_goes_first(&items, &[true, false], &recorders), "robot2's scan stays in the batch only");
        recorders.token(token, "robot2/scan", false);
        assert!(!batch_goes_first(&items, &[true, true], &recorders), "switched: the batch keeps filling");
    }

    #[test]
    fn a_moment_is_taken_while_a_recorder_listens_and_only_subscribed_keys_go_on_their_own() {
        let mut state = unsent();
        let items = moment(&["robot1/odom", "robot1/watched"]);
        assert!(!state.takes(false, &items), "no recorder: every message goes on its key");
        assert!(!state.takes(true, &[]), "nothing to take");
        assert!(state.takes(true, &items));
        let mut also_on_key = Vec::new();
        let started = state.add(20_000_000, &items, |key| key == "robot1/watched", &mut also_on_key);
        assert!(started, "the first moment starts a batch");
        assert_eq!(also_on_key, [false, true], "only the subscribed key goes out on its own too");
        let batch = state.batch.take().unwrap().to_bytes().into_owned();
        assert_eq!(batch, Expected::default().batch(0, &[(20_000_000, &items)]), "both are recorded");
    }

    #[test]
    fn messages_received_join_the_moment_of_the_state_answered_last() {
        let mut state = unsent();
        let command = |byte: u8| ("robot1/cmd".to_string(), vec![byte; 48]);
        assert!(state.forward(20_000_000, "robot1/cmd", &[2; 48]), "starts a batch");
        assert!(state.takes(false, &[]), "an open moment is closed by the next publishing, recorder or not");
        state.add(20_000_000, &[], |_| false, &mut Vec::new());
        state.forward(20_000_000, "robot1/cmd", &[3; 48]);
        state.forward(40_000_000, "robot1/cmd", &[4; 48]);
        let batch = state.batch.take().unwrap().to_bytes().into_owned();
        let at_20 = [command(2), command(3)];
        let expected = Expected::default().batch(0, &[(20_000_000, &at_20[..]), (40_000_000, &[command(4)])]);
        assert_eq!(batch, expected, "each at the time of the state last answered, one moment a time");
    }
}
