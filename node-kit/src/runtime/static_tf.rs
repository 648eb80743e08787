//! `tf_static`, latched: the node's static transforms (e.g. laser mounts)
//! as one TFMessage, republished only when they change, from a publisher
//! with a one-sample cache that late subscribers query. That is what ROS's
//! transient-local `tf_static` promises, and what zenoh-plugin-ros2dds
//! asks for when a transient-local reader such as rviz2's appears.

use flotilla_messages::{geometry_msgs::TransformStamped, tf2_msgs::TFMessage};
use zenoh_ext::{AdvancedPublisher, AdvancedPublisherBuilderExt, CacheConfig, MissDetectionConfig};

/// Publishes a node's static transforms on `tf_static`.
pub struct StaticTf {
    key: String,
    publisher: Option<AdvancedPublisher<'static>>,
    published: Option<Vec<TransformStamped>>,
}

impl StaticTf {
    /// Publishes on `key` (the ROS-facing `tf_static` key).
    pub fn new(key: String) -> StaticTf {
        StaticTf { key, publisher: None, published: None }
    }

    /// Publishes `transforms` unless they are what was last published.
    pub async fn update(&mut self, session: &zenoh::Session, transforms: Vec<TransformStamped>) {
        if self.published.as_ref() == Some(&transforms) || (self.published.is_none() && transforms.is_empty()) {
            return;
        }
        if self.publisher.is_none() {
            let declared = session
                .declare_publisher(self.key.clone())
                .cache(CacheConfig::default().max_samples(1))
                .sample_miss_detection(MissDetectionConfig::default())
                .publisher_detection()
                .await;
            match declared {
                Ok(publisher) => self.publisher = Some(publisher),
                Err(e) => {
                    tracing::warn!("cannot publish on {}: {e}", self.key);
                    return;
                }
            }
        }
        let payload = flotilla_messages::encode(&TFMessage { transforms: transforms.clone() });
        if let Some(publisher) = &self.publisher {
            match publisher.put(payload).await {
                Ok(()) => self.published = Some(transforms),
                Err(e) => tracing::warn!("cannot publish on {}: {e}", self.key),
            }
        }
    }
}
