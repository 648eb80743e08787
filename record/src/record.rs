//! Recording a running simulation: every ROS-facing topic — what its plugin
//! instances publish and take in (the plugin registry's topics of the
//! world's description), the map manager's, `clock`, `tf`, `tf_static` —
//! into a [`Bag`], each message at its sim time: a node's at the time of
//! the state it answered, a `clock` at its own, anything else at the
//! latest of those. Topics of models spawned later are added as they come.
//!
//! Each topic is subscribed on its key until a batch of a node's messages
//! (see [`flotilla_wire::recording`]) brings it: from then on the
//! topic is taken from the batches only, and its subscription dropped, so
//! that nodes stop publishing what only the recorder wanted. Until then a
//! token of the recorder's names the topic's key
//! ([`Keys::recorder_on_key`]), and a node sends its batch before the same
//! messages on their keys, so nothing is written twice and nothing is
//! missed at the switch; once the token goes, a message that another
//! subscriber wants on its key goes there at once, its batch later. (A
//! topic published both by Flotilla nodes and by another program, say
//! `/tf`, is then recorded from the nodes only.)
//!
//! A topic that only comes in from outside the simulation (a `cmd_vel`)
//! is taken from the batches of the node that forwards it, when one
//! does, and never on its key; see `Source` and
//! [`flotilla_wire::recording`].

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use flotilla_node_kit::follow_world::DescriptionFollower;
use flotilla_node_kit::recording::BATCH_AGE;
use flotilla_plugins::channels::{control_log_topic, recorded_topics};
use flotilla_plugins::registry::TopicSpec;
use flotilla_wire::description::WorldDescription;
use flotilla_wire::Keys;

use crate::bag::{Bag, ChunkCompression};
use crate::forwarders::{forwarder_tokens, watch_forwarders, watch_forwarding, RECHECK_AFTER};

mod gaps;
mod source;
mod subscriptions;
mod writer;
use source::Source;
use subscriptions::Subscriptions;
use writer::{lock, Shared, Writer};

pub use flotilla_plugins::channels::CLOCK_TOPIC;

/// Every ROS-facing topic of a description: both directions, each name
/// once, those whose name matches `keep` (all with `None`).
pub fn topics_of(description: &WorldDescription, keep: Option<&regex::Regex>) -> Vec<TopicSpec> {
    let topics = recorded_topics(description).into_iter().chain([control_log_topic()]);
    topics.filter(|t| keep.is_none_or(|re| re.is_match(&t.name))).collect()
}

/// What a recording wrote.
#[derive(Debug, Default)]
pub struct Summary {
    /// Messages per topic.
    pub counts: std::collections::BTreeMap<String, u64>,
    /// The latest sim time known when it stopped, ns.
    pub end_ns: u64,
    /// The topics taken from nodes' batches.
    pub batched: BTreeSet<String>,
    /// Per node whose batches were numbered with gaps, how many never
    /// arrived: the recording misses their messages.
    pub lost_batches: BTreeMap<String, u64>,
}

/// Records the simulation `keys` names from `session` into `path`, its
/// chunks compressed with `compression`, until `shutdown` completes; with
/// `rerun`, what running it again needs goes into the file too.
pub async fn record(
    session: &zenoh::Session,
    keys: &Keys,
    path: &Path,
    keep: Option<regex::Regex>,
    compression: ChunkCompression,
    rerun: Option<crate::rerun::Rerun>,
    shutdown: impl std::future::Future<Output = ()>,
) -> anyhow::Result<Summary> {
    let writer: Shared = Arc::new(Mutex::new(Writer::new(Bag::create(path, compression)?, compression)));

    let (mut world, description) = DescriptionFollower::start(session, keys).await?;
    let (forwarders, mut forwarder_changes, _forwarders_watch) = watch_forwarders(session, keys).await?;
    let (mut forwarding_changes, _forwarding_watch) = watch_forwarding(session, keys).await?;
    let mut subscriptions = Subscriptions::new(forwarders);
    subscriptions.follow(session, keys, &description, keep.as_ref(), &writer).await?;
    // Only now that every topic's key is known: the nodes start batching
    // as soon as this subscriber appears.
    let (batched_tx, mut batched) = tokio::sync::mpsc::unbounded_channel();
    let (senders_tx, mut senders) = tokio::sync::mpsc::unbounded_channel();
    let into = writer.clone();
    let batches = session
        .declare_subscriber(keys.recording_all())
        .callback(move |sample| {
            let key = sample.key_expr().as_str();
            let mut writer = lock(&into);
            if !writer.gaps.knows(key) {
                let _ = senders_tx.send(key.to_string());
            }
            match writer.write_batch(key, sample.payload()) {
                Ok(first) => first.into_iter().for_each(|topic| {
                    let _ = batched_tx.send(topic);
                }),
                Err(e) => tracing::warn!("a bad batch on {key}: {e}"),
            }
        })
        .await
        .map_err(|e| anyhow::anyhow!("cannot subscribe to the nodes' batches: {e}"))?;

    // Each sender's batch key, declared here: Zenoh keeps the route of a
    // declared key and works out that of any other afresh for every sample
    // (against the wildcard subscription), a sixth of the recorder's CPU at
    // office-50's 3,500 batches a wall second.
    let mut sender_keys = Vec::new();
    let recheck = tokio::time::sleep(RECHECK_AFTER);
    let mut rechecked = false;
    tokio::pin!(shutdown, recheck);
    loop {
        tokio::select! {
            _ = &mut shutdown => break,
            _ = &mut recheck, if !rechecked => {
                rechecked = true;
                match forwarder_tokens(session, keys).await {
                    Ok(alive) => {
                        for gone in subscriptions.forwarders.recheck(&alive) {
                            subscriptions.forwarder(session, keys, &gone, &writer).await?;
                        }
                    }
                    Err(e) => tracing::warn!("cannot look at the forwarders' tokens again: {e}"),
                }
            }
            Some(topic) = batched.recv() => subscriptions.drop_live(&topic, &writer),
            Some(token) = forwarder_changes.recv() => subscriptions.forwarder(session, keys, &token, &writer).await?,
            Some((node, alive)) = forwarding_changes.recv() => {
                let mut taken = Vec::new();
                lock(&writer).node_forwards(&keys.recording(&node), alive, &mut taken);
                taken.iter().for_each(|topic| subscriptions.drop_live(topic, &writer));
            }
            Some(key) = senders.recv() => match session.declare_keyexpr(key).await {
                Ok(key) => sender_keys.push(key),
                Err(e) => tracing::debug!("cannot declare a sender's batch key: {e}"),
            },
            description = world.changed() => {
                subscriptions.follow(session, keys, &description, keep.as_ref(), &writer).await?;
            }
        }
    }
    // The nodes' batches still filling go within their age at most; then
    // the world's clocks, which reach past every moment of them.
    tokio::time::sleep(2 * BATCH_AGE).await;
    ask_for_the_clocks_batched(session, keys).await;
    drop(subscriptions);
    drop(batches);
    let Writer { bag, now_ns, failed, recorded, gaps, .. } = match sole_owner(writer).await {
        Ok(writer) => writer.into_inner().unwrap_or_else(|e| e.into_inner()),
        Err(_) => anyhow::bail!("a subscriber still holds the recording {SUBSCRIBERS_LET_GO:?} after it was dropped"),
    };
    if let Some(e) = failed {
        return Err(e.into());
    }
    let counts = bag.counts();
    let mut bag = bag;
    if let Some(rerun) = &rerun {
        rerun.write_into(&mut bag);
    }
    bag.finish()?;
    Ok(Summary {
        counts,
        end_ns: now_ns,
        batched: recorded
            .into_iter()
            .filter(|t| matches!(t.source, Source::Batches | Source::Forwarded(_)))
            .map(|t| t.name)
            .collect(),
        lost_batches: gaps.lost,
    })
}

/// How long a recorder about to stop waits for the world's answer.
const CLOCK_FLUSH_WAIT: Duration = Duration::from_secs(2);

/// Asks the world for the clocks it has batched for recorders and not
/// sent yet (it sends several steps' at once), and waits for its answer:
/// the batch comes before it, on the same link.
async fn ask_for_the_clocks_batched(session: &zenoh::Session, keys: &Keys) {
    let replies = match session.get(keys.clock_flush()).timeout(CLOCK_FLUSH_WAIT).await {
        Ok(replies) => replies,
        Err(e) => {
            tracing::warn!("cannot ask the world for its last clocks: {e}");
            return;
        }
    };
    while let Ok(reply) = replies.recv_async().await {
        if let Err(e) = reply.result() {
            tracing::warn!("the world could not send its last clocks: {:?}", e.payload().try_to_string());
        }
    }
}

/// How long the subscribers' callbacks may take to let go of the
/// recording once their subscribers are dropped: a callback already
/// running on one of Zenoh's threads (a batch being written) keeps its
/// share until it returns.
const SUBSCRIBERS_LET_GO: Duration = Duration::from_secs(5);

/// The recording, once the callbacks running when their subscribers were
/// dropped have returned; itself back if they have not within
/// [`SUBSCRIBERS_LET_GO`].
async fn sole_owner(mut writer: Shared) -> Result<Mutex<Writer>, Shared> {
    let deadline = tokio::time::Instant::now() + SUBSCRIBERS_LET_GO;
    loop {
        match Arc::try_unwrap(writer) {
            Ok(writer) => return Ok(writer),
            Err(shared) if tokio::time::Instant::now() >= deadline => return Err(shared),
            Err(shared) => writer = shared,
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
