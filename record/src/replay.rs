//! Replaying a recording: every message published again on its topic's key,
//! payload unchanged, at the pace of its log times — scaled by a rate, or as
//! fast as the network takes them. The recorded `clock` goes out with the
//! rest, so whatever follows it (a controller, rviz2, the view) runs on the
//! recording's time. Latched topics are latched again.

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use flotilla_wire::Keys;
use zenoh::qos::CongestionControl;
use zenoh_ext::{AdvancedPublisher, AdvancedPublisherBuilderExt, CacheConfig, MissDetectionConfig};

/// How fast to replay.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pace {
    /// Log time × 1/rate per wall second (1.0: as recorded).
    Rate(f64),
    /// As fast as the network takes it.
    Fast,
}

impl Pace {
    /// When (after the start) the message logged `since_first_ns` after the
    /// first is due.
    pub fn due_after(self, since_first_ns: u64) -> Duration {
        match self {
            Pace::Rate(rate) => Duration::from_secs_f64(since_first_ns as f64 * 1e-9 / rate),
            Pace::Fast => Duration::ZERO,
        }
    }
}

/// What a replay published.
#[derive(Debug, Default)]
pub struct Played {
    /// Messages published.
    pub messages: u64,
    /// Log time span, ns.
    pub span_ns: u64,
}

/// Whether a channel was recorded latched (its QoS says transient local).
pub fn latched(channel: &mcap::Channel) -> bool {
    channel.metadata.get("offered_qos_profiles").is_some_and(|qos| qos.contains("durability: 1"))
}

/// Publishes the messages of the MCAP file at `path` whose topic `keep`
/// matches, on `keys`' keys, at `pace`; stops early when `shutdown`
/// completes.
pub async fn replay(
    session: &zenoh::Session,
    keys: &Keys,
    path: &Path,
    pace: Pace,
    keep: Option<regex::Regex>,
    shutdown: impl std::future::Future<Output = ()>,
) -> anyhow::Result<Played> {
    let bytes = std::fs::read(path).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
    let mut messages = mcap::MessageStream::new(&bytes)
        .and_then(|stream| stream.collect::<Result<Vec<_>, _>>())
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    // In log-time order: a file's order may differ by a few steps (the
    // world's clock is recorded in batches of several steps). The sort is
    // stable, so a topic's messages of one time keep their order.
    messages.sort_by_key(|message| message.log_time);
    let mut live: HashMap<String, zenoh::pubsub::Publisher<'static>> = HashMap::new();
    let mut cached: HashMap<String, AdvancedPublisher<'static>> = HashMap::new();
    let mut played = Played::default();
    let mut first_ns: Option<u64> = None;
    let start = Instant::now();
    tokio::pin!(shutdown);
    for message in messages {
        let topic = message.channel.topic.clone();
        if keep.as_ref().is_some_and(|re| !re.is_match(&topic)) {
            continue;
        }
        let first = *first_ns.get_or_insert(message.log_time);
        let since = message.log_time.saturating_sub(first);
        played.span_ns = played.span_ns.max(since);
        let due = start + pace.due_after(since);
        if due > Instant::now() {
            tokio::select! {
                _ = &mut shutdown => break,
                _ = tokio::time::sleep_until(due.into()) => {}
            }
        }
        let key = keys.ros(&topic);
        let payload = message.data.into_owned();
        if latched(&message.channel) {
            if !cached.contains_key(&topic) {
                let publisher = session
                    .declare_publisher(key.clone())
                    .cache(CacheConfig::default().max_samples(1))
                    .sample_miss_detection(MissDetectionConfig::default())
                    .publisher_detection()
                    .await
                    .map_err(|e| anyhow::anyhow!("cannot publish on {key}: {e}"))?;
                cached.insert(topic.clone(), publisher);
            }
            cached[&topic].put(payload).await.map_err(|e| anyhow::anyhow!("cannot publish on {key}: {e}"))?;
        } else {
            if !live.contains_key(&topic) {
                let publisher = session
                    .declare_publisher(key.clone())
                    .congestion_control(CongestionControl::Block)
                    .await
                    .map_err(|e| anyhow::anyhow!("cannot publish on {key}: {e}"))?;
                live.insert(topic.clone(), publisher);
            }
            live[&topic].put(payload).await.map_err(|e| anyhow::anyhow!("cannot publish on {key}: {e}"))?;
        }
        played.messages += 1;
    }
    Ok(played)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_scales_the_recorded_time_and_fast_waits_for_nothing() {
        assert_eq!(Pace::Rate(1.0).due_after(1_500_000_000), Duration::from_millis(1500));
        assert_eq!(Pace::Rate(4.0).due_after(2_000_000_000), Duration::from_millis(500));
        assert_eq!(Pace::Fast.due_after(9_000_000_000), Duration::ZERO);
    }
}
