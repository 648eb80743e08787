//! A recorder's subscriptions: each recorded topic's key (while it is
//! taken there) with the token that tells its publishers so, and the
//! topics taken from their forwarders' batches (see `Source`).

use std::collections::{BTreeSet, HashMap};
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
    names: BTreeSet<String>,
    /// Per topic not (yet) taken from batches, its subscriber.
    live: HashMap<String, zenoh::pubsub::Subscriber<()>>,
    latched: Vec<zenoh_ext::AdvancedSubscriber<()>>,
    /// Per topic not (yet) taken from batches, the token that tells its
    /// publishers to send their batch before a message on its key
    /// ([`Keys::recorder_on_key`]): a node then sends its batch at
    /// every moment with a message for another subscriber of the key.
    on_keys: HashMap<String, zenoh::liveliness::LivelinessToken>,
    /// The nodes forwarding the topics they take in.
    pub(super) forwarders: Forwarders,
    /// Per key of a topic taken from its forwarder's batches, the topic
    /// and its place among those recorded.
    forwarded: HashMap<String, (TopicSpec, usize)>,
    /// The same for a topic still taken on its key until its forwarder's
    /// batches come ([`Source::KeyUntilForwarded`]).
    awaiting_forwarder: HashMap<String, (TopicSpec, usize)>,
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
            if !self.names.insert(topic.name.clone()) {
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
            match source {
                Source::Forwarded(_) => {
                    tracing::debug!("{} comes in its forwarder's batches", topic.name);
                    self.forwarded.insert(key, (topic, at));
                    continue;
                }
                // No node publishes it, so its token tells no node
                // anything; it tells a launcher that this recorder does not
                // take the input from its forwarder yet (see
                // `flotilla run`'s start gate), and goes when it does.
                Source::KeyUntilForwarded { .. } => {
                    self.awaiting_forwarder.insert(key.clone(), (topic.clone(), at));
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

    /// A forwarder's token came or went: a topic taken from a forwarder
    /// that went is subscribed to on its key from now on.
    pub(super) async fn forwarder(
        &mut self,
        session: &zenoh::Session,
        keys: &Keys,
        token: &ForwarderToken,
        writer: &Shared,
    ) -> anyhow::Result<()> {
        self.forwarders.token(token);
        if let Some((spec, at)) = self.awaiting_forwarder.get(&token.key) {
            let forwarder = self.forwarders.of(&token.key).map(|node| keys.recording(node));
            if lock(writer).await_forwarder(*at, forwarder) {
                let name = spec.name.clone();
                self.drop_live(&name);
            }
            return Ok(());
        }
        if token.alive {
            lock(writer).forwarder_back(&token.key, &keys.recording(&token.node));
            return Ok(());
        }
        let Some(&(_, at)) = self.forwarded.get(&token.key) else { return Ok(()) };
        if lock(writer).recorded[at].source != Source::Forwarded(keys.recording(&token.node)) {
            // Another node's token for the key.
            return Ok(());
        }
        let Some((topic, at)) = self.forwarded.remove(&token.key) else { return Ok(()) };
        // What it received and had not sent yet is lost with it.
        tracing::warn!("{} went; taking {} on its key", token.node, topic.name);
        lock(writer).forwarder_gone(at);
        self.subscribe(session, &topic, &token.key, at, writer).await
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
    /// Drops the subscription of a topic now taken from batches (a latched
    /// topic keeps its own), then its token: its nodes may hold its
    /// messages in their batches from now on.
    pub(super) fn drop_live(&mut self, topic: &str) {
        if self.live.remove(topic).is_some() {
            tracing::debug!("{topic} now comes in the nodes' batches");
        }
        self.on_keys.remove(topic);
        // A topic that awaited its forwarder: what the forwarder's going
        // means for it from now on.
        let found =
            self.awaiting_forwarder.iter().find(|(_, (spec, _))| spec.name == topic).map(|(key, _)| key.clone());
        if let Some(key) = found {
            if let Some(entry) = self.awaiting_forwarder.remove(&key) {
                self.forwarded.insert(key, entry);
            }
        }
    }
}
