//! A recorder's subscriptions: each recorded topic's key (while it is
//! taken there) with the token that tells its publishers so. Where each
//! topic is taken from is the writer's to say (see `Source`): these
//! subscriptions follow it.

use std::collections::HashMap;
use std::time::Duration;

use flotilla_plugins::channels::{channel_ids, forwarded_topics};
use flotilla_plugins::registry::{Durability, TopicSpec};
use flotilla_wire::description::WorldDescription;
use flotilla_wire::Keys;
use zenoh_ext::{AdvancedSubscriberBuilderExt, HistoryConfig};

use super::{lock, topics_of, Shared, Source};
use crate::forwarders::{ForwarderToken, Forwarders};

/// How long a recorder waits between declaring its tokens for new topics
/// ([`Keys::recorder_on_key`]) and subscribing to their keys. A node must
/// know of the token before the subscription reaches it, or it may send a
/// message on the key ahead of the batch that holds it, which the recorder
/// would then write twice. Declared one after the other, the two can
/// reach a node in either order (they may travel through the world's
/// router or straight from peer to peer): recording the room world in fast
/// mode while another subscriber took the scans, a scan was written twice
/// in 3 runs of 16 without this wait, and in none of 30 with it
/// (`tests/tests/record_replay.rs`).
const TOKENS_SETTLE: Duration = Duration::from_millis(300);

/// The subscriptions of the topics recorded so far.
#[derive(Default)]
pub(super) struct Subscriptions {
    /// Per topic recorded, its place among the writer's.
    recorded: HashMap<String, usize>,
    /// Per topic subscribed on its key (not taken from batches, or not
    /// yet), its subscriber.
    live: HashMap<String, zenoh::pubsub::Subscriber<()>>,
    latched: Vec<zenoh_ext::AdvancedSubscriber<()>>,
    /// Per topic not (yet) taken from batches, the token that tells its
    /// publishers to send their batch before a message on its key
    /// ([`Keys::recorder_on_key`]): a node then sends its batch at
    /// every moment with a message for another subscriber of the key.
    on_keys: HashMap<String, zenoh::liveliness::LivelinessToken>,
    /// The nodes forwarding the topics they take in.
    pub(super) forwarders: Forwarders,
    /// Per key of a topic that nodes forward (a `cmd_vel`), the topic and
    /// its place among those recorded: whether it comes from a forwarder
    /// now is the writer's [`Source`].
    forwarded: HashMap<String, (TopicSpec, usize)>,
}

/// What a forwarder's token coming or going changed for its topic.
enum Turn {
    Nothing,
    /// The topic is taken from its forwarder's batches from now on.
    ToBatches,
    /// Its forwarder went: the topic is taken on its key again.
    ToKey,
}

impl Subscriptions {
    /// No topic yet, the forwarders known at the recorder's start.
    pub(super) fn new(forwarders: Forwarders) -> Subscriptions {
        Subscriptions { forwarders, ..Subscriptions::default() }
    }

    /// Subscribes to the topics of `description` not yet recorded.
    pub(super) async fn follow(
        &mut self,
        session: &zenoh::Session,
        keys: &Keys,
        description: &WorldDescription,
        keep: Option<&regex::Regex>,
        writer: &Shared,
    ) -> anyhow::Result<()> {
        let channels: HashMap<&str, u16> = channel_ids(&description.channels).collect();
        let forwarded = forwarded_topics(description);
        // Each new topic's token first, for all of them (see
        // [`TOKENS_SETTLE`]), then the subscriptions.
        let recorder = session.zid().to_string();
        let (mut new, mut on_keys) = (Vec::new(), Vec::new());
        for topic in topics_of(description, keep) {
            if self.recorded.contains_key(&topic.name) {
                continue;
            }
            let key = keys.ros(&topic.name);
            let channel = channels.get(topic.name.as_str()).copied().unwrap_or(0);
            let source = match self.forwarders.of(&key) {
                _ if !forwarded.contains(&topic.name) => Source::KeyUntilBatched,
                Some(node) => Source::Forwarded(keys.recording(node)),
                // On its key until a forwarder's batches come, if nothing
                // came on the key before (see the source).
                None => Source::KeyUntilForwarded { forwarder: None },
            };
            let Some(at) = lock(writer).add_topic(key.clone(), &topic, channel, source.clone()) else {
                // The recording failed: the writer says why at the end.
                break;
            };
            self.recorded.insert(topic.name.clone(), at);
            if forwarded.contains(&topic.name) {
                self.forwarded.insert(key.clone(), (topic.clone(), at));
            }
            match source {
                Source::Forwarded(_) => {
                    tracing::debug!("{} comes in its forwarder's batches", topic.name);
                    continue;
                }
                // No node publishes it, so its token tells no node
                // anything; it tells a launcher that this recorder does not
                // take the input from its forwarder yet (see
                // `flotilla run`'s start gate), and goes when it does.
                Source::KeyUntilForwarded { .. } => {
                    let token = on_key_token(session, keys, &recorder, &key).await?;
                    self.on_keys.insert(topic.name.clone(), token);
                    new.push((topic, key, at));
                    continue;
                }
                _ => {}
            }
            let token = on_key_token(session, keys, &recorder, &key).await?;
            self.on_keys.insert(topic.name.clone(), token);
            on_keys.push((topic, key, at));
        }
        // The new topics' records in the nodes' batches are written from
        // now on, while the subscriptions wait.
        lock(writer).follow_channels(&description.channels, keys);
        if !on_keys.is_empty() {
            tokio::time::sleep(TOKENS_SETTLE).await;
        }
        for (topic, key, at) in on_keys.into_iter().chain(new) {
            self.subscribe(session, &topic, &key, at, writer).await?;
        }
        Ok(())
    }

    /// Subscribes to recorded topic `at`'s key.
    async fn subscribe(
        &mut self,
        session: &zenoh::Session,
        topic: &TopicSpec,
        key: &str,
        at: usize,
        writer: &Shared,
    ) -> anyhow::Result<()> {
        // Each subscription knows its topic: a lookup of the key's string
        // for each message was 3 % of the recorder's samples.
        let into = writer.clone();
        let forward = move |sample: zenoh::sample::Sample| {
            let payload = sample.payload().to_bytes();
            lock(&into).write_arrived(at, &payload);
        };
        // A latched topic's last message is asked for as it was published.
        if topic.durability == Durability::TransientLocal {
            let subscriber = session
                .declare_subscriber(key)
                .history(HistoryConfig::default().detect_late_publishers())
                .callback(forward)
                .await
                .map_err(|e| anyhow::anyhow!("cannot subscribe to {key}: {e}"))?;
            self.latched.push(subscriber);
        } else {
            let subscriber = session
                .declare_subscriber(key)
                .callback(forward)
                .await
                .map_err(|e| anyhow::anyhow!("cannot subscribe to {key}: {e}"))?;
            self.live.insert(topic.name.clone(), subscriber);
        }
        tracing::debug!("recording {} ({}) on its key", topic.name, topic.ros_type);
        Ok(())
    }

    /// A forwarder's token came or went: a topic awaiting its forwarder
    /// may be taken from its batches now, and one taken from a forwarder
    /// that went is subscribed to on its key from now on.
    pub(super) async fn forwarder(
        &mut self,
        session: &zenoh::Session,
        keys: &Keys,
        token: &ForwarderToken,
        writer: &Shared,
    ) -> anyhow::Result<()> {
        self.forwarders.token(token);
        let Some((topic, at)) = self.forwarded.get(&token.key).cloned() else { return Ok(()) };
        let node = keys.recording(&token.node);
        let turn = {
            let mut writer = lock(writer);
            match writer.source(at) {
                Source::KeyUntilForwarded { .. } => {
                    let forwarder = self.forwarders.of(&token.key).map(|node| keys.recording(node));
                    if writer.await_forwarder(at, forwarder) {
                        Turn::ToBatches
                    } else {
                        Turn::Nothing
                    }
                }
                Source::Forwarded(from) if !token.alive && *from == node => {
                    writer.forwarder_gone(at);
                    Turn::ToKey
                }
                _ if token.alive => {
                    writer.forwarder_back(at, &node);
                    Turn::Nothing
                }
                // Another node's token for the key went.
                _ => Turn::Nothing,
            }
        };
        match turn {
            Turn::Nothing => Ok(()),
            Turn::ToBatches => {
                self.drop_live(&topic.name, writer);
                Ok(())
            }
            Turn::ToKey => {
                // What it received and had not sent yet is lost with it.
                tracing::warn!("{} went; taking {} on its key", token.node, topic.name);
                // No node publishes the key: no token is needed.
                self.on_keys.remove(&topic.name);
                self.subscribe(session, &topic, &token.key, at, writer).await
            }
        }
    }
}

/// This recorder's [`Keys::recorder_on_key`] token for `key`.
async fn on_key_token(
    session: &zenoh::Session,
    keys: &Keys,
    recorder: &str,
    key: &str,
) -> anyhow::Result<zenoh::liveliness::LivelinessToken> {
    let token = keys.recorder_on_key(recorder, key);
    session
        .liveliness()
        .declare_token(&token)
        .await
        .map_err(|e| anyhow::anyhow!("cannot declare the token {token}: {e}"))
}

impl Subscriptions {
    /// Drops the subscription of `topic` (a latched topic keeps its own),
    /// then its token, if the writer takes it from batches now: its nodes
    /// may hold its messages in their batches from now on. A topic the
    /// writer takes on its key again (its forwarder went meanwhile) keeps
    /// both.
    pub(super) fn drop_live(&mut self, topic: &str, writer: &Shared) {
        let Some(&at) = self.recorded.get(topic) else { return };
        if lock(writer).source(at).takes_key() {
            return;
        }
        if self.live.remove(topic).is_some() {
            tracing::debug!("{topic} now comes in the nodes' batches");
        }
        self.on_keys.remove(topic);
    }
}
