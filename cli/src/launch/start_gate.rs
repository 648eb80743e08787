//! When `flotilla run` starts the nodes and lets the world step: the
//! participants and the recorder waited for first, then the nodes joined.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use flotilla_wire::control::ClockMode;
use flotilla_wire::Keys;

use crate::status_line::Console;

/// When `flotilla run` lets the world step: it starts the world paused in
/// every clock mode and resumes it once every node it launched has joined
/// the lockstep barrier (each joins once it has claimed its instances and
/// subscribed their inputs), so that every plugin — a drive, a Tween, a
/// sensor — sees the world from t = 0, as Flatland's plugins do. A node
/// that does not join within `wait_at_most` is not waited for any longer,
/// and the console says so.
#[derive(Debug, Clone, Copy)]
pub(super) struct StartGate {
    /// Plugin nodes launched, and the other participants asked for.
    pub(super) nodes: usize,
    /// With a recorder launched, how many nodes send it batches: the
    /// `--exec` programs start once it listens and they all have seen it,
    /// so that a recording starts at t = 0 (which `flotilla resim` needs).
    pub(super) recorder: Option<usize>,
    /// With `--participants-first`, how many participants the nodes wait
    /// for.
    pub(super) participants_first: Option<usize>,
    pub(super) wait_at_most: Duration,
    pub(super) clock: ClockMode,
}

/// How long [`StartGate`] waits for the nodes: long in lockstep, whose run
/// is deterministic only with every node from the first step (a cold start
/// of many nodes on a busy machine takes a while); short in the other
/// modes, where a user is watching a world that does not move.
pub(super) fn start_wait(clock: ClockMode) -> Duration {
    match clock {
        ClockMode::Lockstep => Duration::from_secs(120),
        _ => Duration::from_secs(20),
    }
}

impl StartGate {
    /// Resumes the (paused) world once the nodes hold lockstep tokens, or
    /// at `wait_at_most`.
    pub(super) async fn open_when_joined(self, session: &zenoh::Session, sim: &str, console: &Arc<Mutex<Console>>) {
        use flotilla_wire::control::ControlRequest;
        let log = |line: String| console.lock().unwrap_or_else(|e| e.into_inner()).log(&line);
        let keys = Keys::new(sim);
        let give_up = Instant::now() + self.wait_at_most;
        let joined = match participants_joined(session, &keys, self.nodes, give_up).await {
            Ok(joined) | Err(joined) => joined,
        };
        if joined < self.nodes {
            log(format!(
                "flotilla: only {joined} of {} nodes joined within {} s; starting the clock anyway",
                self.nodes,
                self.wait_at_most.as_secs()
            ));
        }
        if !world_counts(session, &keys, joined, Instant::now() + WORLD_COUNTS_WITHIN).await {
            log(format!("flotilla: the world does not count the {joined} participants yet; starting the clock anyway"));
        }
        let resume = ControlRequest::Resume;
        match flotilla_node_kit::client::call_control(session, &keys, "resume", &resume, Duration::from_secs(10)).await
        {
            Ok(_) => log(format!("flotilla: {joined} nodes joined; stepping ({})", self.clock)),
            Err(e) => log(format!("flotilla: cannot start stepping: {e}")),
        }
    }
}

/// How long `flotilla run --record` waits for its recorder to listen
/// before it starts the nodes.
pub(crate) const RECORDER_LISTENS_WITHIN: Duration = Duration::from_secs(30);

/// Waits, until `give_up`, for a recorder to subscribe to the nodes'
/// batches; whether one did.
pub(super) async fn batches_wanted(session: &zenoh::Session, keys: &Keys, give_up: Instant) -> bool {
    let Ok(probe) = session.declare_publisher(keys.recording("launcher-probe")).await else { return false };
    while !probe.matching_status().await.is_ok_and(|status| status.matching()) {
        if Instant::now() >= give_up {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    true
}

/// Waits, until `give_up`, for a recorder to subscribe to the nodes'
/// batches, for `batching` nodes to have seen it (their
/// [`Keys::forwarding`] tokens: their first outputs go into batches), for
/// each input from outside (a `cmd_vel`) to be forwarded to it by the node
/// that takes it in (its [`Keys::forwarder`] token), and for no recorder
/// to take such an input on its key any more (its
/// [`Keys::recorder_on_key`] token gone: it takes it from the forwarder's
/// batches, which log each input at the state the node had answered when
/// it came, the step a re-run feeds it at). Whether it did.
pub(crate) async fn recorder_listens(session: &zenoh::Session, keys: &Keys, batching: usize, give_up: Instant) -> bool {
    if !batches_wanted(session, keys, give_up).await {
        return false;
    }
    let Ok(description) = flotilla_node_kit::client::fetch_description(session, keys, Duration::from_secs(5)).await
    else {
        return false;
    };
    let inputs: BTreeSet<String> =
        flotilla_plugins::channels::forwarded_topics(&description).iter().map(|name| keys.ros(name)).collect();
    let live = |key: String| async move {
        flotilla_node_kit::claims::live_tokens(session, key, Duration::from_secs(1)).await.unwrap_or_default()
    };
    loop {
        let tokens = live(keys.forwarders()).await;
        let forwarded: BTreeSet<(String, String)> = (tokens.iter())
            .filter_map(|token| keys.parse_forwarder(token).map(|(node, key)| (node.to_string(), key.to_string())))
            .collect();
        let seen: BTreeSet<String> = live(keys.forwarding("*")).await.into_iter().collect();
        let on_keys = live(keys.recorders_on_keys()).await;
        let mut ready = seen.len() >= batching;
        ready &= inputs.iter().all(|input| forwarded.iter().any(|(_, key)| key == input));
        ready &= forwarded.iter().all(|(node, _)| seen.contains(&keys.forwarding(node)));
        ready &= !on_keys.iter().filter_map(|token| keys.parse_recorder_on_key(token)).any(|key| inputs.contains(key));
        if ready {
            return true;
        }
        if Instant::now() >= give_up {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// How long the start gate waits for the world to count the participants
/// it saw: the world's status comes twice a wall second.
const WORLD_COUNTS_WITHIN: Duration = Duration::from_secs(5);

/// Waits, until `give_up`, for the world of `keys` to count `wanted`
/// lockstep participants in its status; whether it did. A participant's
/// token reaches this launcher's query and the world's own watch of the
/// tokens by different paths: resumed on the launcher's count alone, the
/// world stepped twice before it knew of a controller that had joined, and
/// the controller missed the run's first states.
async fn world_counts(session: &zenoh::Session, keys: &Keys, wanted: usize, give_up: Instant) -> bool {
    use flotilla_wire::world_to_nodes::WorldStatus;
    let Ok(statuses) = session.declare_subscriber(keys.status()).await else { return false };
    loop {
        let left = give_up.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, statuses.recv_async()).await {
            Ok(Ok(sample)) => {
                let status = flotilla_wire::codec::decode::<WorldStatus>(&sample.payload().to_bytes());
                if status.is_ok_and(|s| s.lockstep_participants as usize >= wanted) {
                    return true;
                }
            }
            Ok(Err(_)) | Err(_) => return false,
        }
    }
}

/// Waits, until `give_up`, for `wanted` lockstep participants (their
/// tokens) in the simulation of `keys`: how many joined, as an error if
/// fewer.
pub(super) async fn participants_joined(
    session: &zenoh::Session,
    keys: &Keys,
    wanted: usize,
    give_up: Instant,
) -> Result<usize, usize> {
    loop {
        let joined = flotilla_node_kit::claims::live_tokens(session, keys.lockstep_all(), Duration::from_secs(1))
            .await
            .map_or(0, |tokens| tokens.len());
        if joined >= wanted {
            return Ok(joined);
        }
        if Instant::now() >= give_up {
            return Err(joined);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
