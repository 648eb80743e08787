//! Latched outputs: one message per key that late subscribers still get
//! (ROS's transient-local durability, e.g. a robot's `map`), from
//! publishers with a one-sample cache, republished only when the message
//! changes. zenoh-plugin-ros2dds queries that cache for a transient-local
//! reader such as rviz2's or AMCL's.

use std::collections::BTreeMap;
use std::sync::Arc;

use zenoh_ext::{AdvancedPublisher, AdvancedPublisherBuilderExt, CacheConfig, MissDetectionConfig};

/// A node's latched keys and what each last carried.
#[derive(Default)]
pub struct Latched {
    keys: BTreeMap<String, (AdvancedPublisher<'static>, Arc<[u8]>)>,
}

impl Latched {
    /// Makes `messages` (key, payload) the latched messages: publishes the
    /// new and changed ones, undeclares keys no longer given. (Payloads are
    /// shared: many keys may carry one map.)
    pub async fn update(&mut self, session: &zenoh::Session, messages: Vec<(String, Arc<[u8]>)>) {
        let mut kept = BTreeMap::new();
        for (key, payload) in messages {
            let (publisher, last) = match self.keys.remove(&key) {
                Some(existing) => existing,
                None => {
                    let declared = session
                        .declare_publisher(key.clone())
                        .cache(CacheConfig::default().max_samples(1))
                        .sample_miss_detection(MissDetectionConfig::default())
                        .publisher_detection()
                        .await;
                    match declared {
                        Ok(publisher) => (publisher, Arc::from(&[][..])),
                        Err(e) => {
                            tracing::warn!("cannot publish on {key}: {e}");
                            continue;
                        }
                    }
                }
            };
            let unchanged = !last.is_empty() && (Arc::ptr_eq(&last, &payload) || last == payload);
            let sent = if unchanged {
                last
            } else {
                match publisher.put(payload.to_vec()).await {
                    Ok(()) => payload,
                    Err(e) => {
                        tracing::warn!("cannot publish on {key}: {e}");
                        last
                    }
                }
            };
            kept.insert(key, (publisher, sent));
        }
        self.keys = kept;
    }
}
