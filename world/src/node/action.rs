//! Serves the `simulate_steps` action (see
//! [`crate::ros_services::simulate_steps`]) on the keys zenoh-plugin-ros2dds
//! routes an action on: `<name>/_action/send_goal`, `cancel_goal` and
//! `get_result` as queryables (CDR request in, one CDR reply out), and
//! `<name>/_action/feedback` and `status` as publications. A `get_result`
//! asked while the goal steps is answered when it ends (the plugin waits up
//! to 300 s for it).

use std::sync::Arc;

use flotilla_messages::action_msgs::Uuid;
use flotilla_messages::services::SIMULATE_STEPS;
use flotilla_messages::RosMessage;
use flotilla_node_kit::{Error, Result};
use flotilla_wire::Keys;
use tokio::sync::{watch, Notify};
use zenoh::qos::CongestionControl;
use zenoh::query::{Query, Queryable};
use zenoh::Wait;

use super::inputs::{lock, Wiring};
use crate::ros_services::simulate_steps::ResultReply;
use crate::ros_services::World;

/// The queryables, and the task that follows the steps published.
pub struct Action {
    _queryables: Vec<Queryable<()>>,
    _progress: tokio::task::JoinHandle<()>,
}

/// The key of the action's `part` (`send_goal`, `feedback`...).
fn key(keys: &Keys, part: &str) -> String {
    keys.ros(&format!("{}/_action/{part}", SIMULATE_STEPS.ros_name))
}

fn reply(query: &Query, bytes: Vec<u8>) {
    if let Err(e) = query.reply(query.key_expr().clone(), bytes).wait() {
        tracing::warn!("cannot answer {}: {e}", query.key_expr());
    }
}

/// Publishes `message` on `key`, dropped on a congested link or not as
/// `congestion` says.
fn put(session: &zenoh::Session, key: &str, message: &impl RosMessage, congestion: CongestionControl) {
    let put = session.put(key, flotilla_messages::encode(message)).congestion_control(congestion);
    if let Err(e) = put.wait() {
        tracing::warn!("cannot publish {key}: {e}");
    }
}

/// Declares the action. `published` carries the step of each state published.
pub async fn declare(wiring: &Wiring, published: watch::Receiver<u64>) -> Result<Action> {
    // Bumped whenever a goal ends: pending get_result queries look again.
    let (ended_tx, ended_rx) = watch::channel(0u64);
    let ended_tx = Arc::new(ended_tx);
    let status_key = key(&wiring.keys, "status");
    let publish_status = {
        let (session, shared, status_key) = (wiring.session.clone(), wiring.shared.clone(), status_key.clone());
        move |congestion| put(&session, &status_key, &lock(&shared).actions.statuses(), congestion)
    };

    // The progress task follows the steps only while a goal steps: waking
    // it at every step of every run would cost the world's loop for nothing.
    let stepping = Arc::new(Notify::new());
    let mut queryables = Vec::new();
    let send_goal = {
        let (shared, wake, publish_status) = (wiring.shared.clone(), wiring.wake.clone(), publish_status.clone());
        let stepping = stepping.clone();
        move |query: Query| {
            let bytes = query.payload().map(|p| p.to_bytes().into_owned()).unwrap_or_default();
            let answer = {
                let mut s = lock(&shared);
                let s = &mut *s;
                s.actions.send_goal(&bytes, World { physics: &mut s.physics, run: &mut s.run })
            };
            match answer {
                Ok(response) => {
                    reply(&query, flotilla_messages::encode(&response));
                    // On a receiving thread, which must not wait for room.
                    publish_status(CongestionControl::Drop);
                    stepping.notify_one();
                    wake.notify_one();
                }
                Err(message) => drop(query.reply_err(message).wait()),
            }
        }
    };
    queryables.push(queryable(wiring, "send_goal", send_goal).await?);

    let cancel_goal = {
        let (shared, ended_tx, publish_status) = (wiring.shared.clone(), ended_tx.clone(), publish_status.clone());
        move |query: Query| {
            let bytes = query.payload().map(|p| p.to_bytes().into_owned()).unwrap_or_default();
            let answer = {
                let mut s = lock(&shared);
                let s = &mut *s;
                s.actions.cancel(&bytes, World { physics: &mut s.physics, run: &mut s.run })
            };
            match answer {
                Ok(response) => {
                    reply(&query, flotilla_messages::encode(&response));
                    // On a receiving thread, which must not wait for room.
                    publish_status(CongestionControl::Drop);
                    ended_tx.send_modify(|n| *n += 1);
                }
                Err(message) => drop(query.reply_err(message).wait()),
            }
        }
    };
    queryables.push(queryable(wiring, "cancel_goal", cancel_goal).await?);

    let get_result = {
        let shared = wiring.shared.clone();
        let runtime = tokio::runtime::Handle::current();
        move |query: Query| {
            let bytes = query.payload().map(|p| p.to_bytes().into_owned()).unwrap_or_default();
            let answer = lock(&shared).actions.result(&bytes);
            match answer {
                Ok(ResultReply::Now(bytes)) => reply(&query, bytes),
                Ok(ResultReply::WhenEnded(id)) => {
                    let (shared, ended) = (shared.clone(), ended_rx.clone());
                    runtime.spawn(answer_when_ended(query, id, shared, ended));
                }
                Err(message) => drop(query.reply_err(message).wait()),
            }
        }
    };
    queryables.push(queryable(wiring, "get_result", get_result).await?);

    let feedback_key = key(&wiring.keys, "feedback");
    let progress =
        tokio::spawn(report_progress(wiring.clone(), feedback_key, published, stepping, publish_status, ended_tx));
    Ok(Action { _queryables: queryables, _progress: progress })
}

/// Publishes the stepping goal's feedback after each step published, and
/// its status when it ends; idle while no goal steps.
async fn report_progress(
    wiring: Wiring,
    feedback_key: String,
    mut published: watch::Receiver<u64>,
    stepping: Arc<Notify>,
    publish_status: impl Fn(CongestionControl),
    ended_tx: Arc<watch::Sender<u64>>,
) {
    let Wiring { session, shared, .. } = wiring;
    loop {
        if !lock(&shared).actions.is_stepping() {
            stepping.notified().await;
            continue;
        }
        if published.changed().await.is_err() {
            return; // the world is stopping
        }
        let progress = {
            let mut s = lock(&shared);
            let s = &mut *s;
            s.actions.advance(s.physics.step_count(), &s.run)
        };
        for feedback in &progress.feedback {
            // Never dropped: rcl_action's feedback and status topics are
            // reliable, and a client waits for the last feedback and the
            // final status (a put's default drops a message when its link's
            // queue stays full: a loaded test run once missed a goal's last
            // feedback, which such a drop explains).
            put(&session, &feedback_key, feedback, CongestionControl::Block);
        }
        if progress.status_changed {
            publish_status(CongestionControl::Block);
            ended_tx.send_modify(|n| *n += 1);
        }
    }
}

async fn queryable(
    wiring: &Wiring,
    part: &str,
    callback: impl Fn(Query) + Send + Sync + 'static,
) -> Result<Queryable<()>> {
    let key = key(&wiring.keys, part);
    wiring.session.declare_queryable(&key).callback(callback).await.map_err(Error::zenoh("answer on", key))
}

/// Answers a `get_result` once goal `id` has ended.
async fn answer_when_ended(
    query: Query,
    id: Uuid,
    shared: Arc<std::sync::Mutex<super::stepper::Sim>>,
    mut ended: watch::Receiver<u64>,
) {
    loop {
        let now = lock(&shared).actions.result_of(&id);
        if let ResultReply::Now(bytes) = now {
            reply(&query, bytes);
            return;
        }
        if ended.changed().await.is_err() {
            return; // the world is stopping
        }
    }
}
