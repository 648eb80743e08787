//! Scaffolding every drive and sensor node shares: its id and liveliness
//! token, and the world's state and events delivered in order to one loop.

use tokio::sync::mpsc::UnboundedSender;

use crate::codec::{decode, WireMessage};
use crate::health::BadMessages;

/// A fresh node id: `<kind>-<8 hex digits>`.
pub fn node_id(kind: &str) -> String {
    format!("{kind}-{}", &uuid::Uuid::new_v4().simple().to_string()[..8])
}

/// Subscribes to an internal key, decoding each sample and forwarding it
/// through `wrap` to a node's input channel; bad samples are counted.
pub async fn forward<T, I>(
    session: &zenoh::Session,
    key: String,
    tx: UnboundedSender<I>,
    wrap: fn(T) -> I,
) -> Result<zenoh::pubsub::Subscriber<()>, String>
where
    T: WireMessage + Send + 'static,
    I: Send + 'static,
{
    let bad = BadMessages::new(key.clone());
    session
        .declare_subscriber(&key)
        .callback(move |sample| match decode::<T>(&sample.payload().to_bytes()) {
            Ok(message) => {
                let _ = tx.send(wrap(message));
            }
            Err(e) => bad.record(&e),
        })
        .await
        .map_err(|e| format!("cannot subscribe to {key}: {e}"))
}

/// The world appearing or disappearing, as a node sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorldPresence {
    /// A world process (with this node id) is up.
    Up(String),
    /// That world process is gone.
    Down(String),
}

/// Watches the world's liveliness token, forwarding presence changes.
pub async fn watch_world<I: Send + 'static>(
    session: &zenoh::Session,
    keys: &crate::Keys,
    tx: UnboundedSender<I>,
    wrap: fn(WorldPresence) -> I,
) -> Result<zenoh::pubsub::Subscriber<()>, String> {
    let prefix = keys.node_token("");
    session
        .liveliness()
        .declare_subscriber(keys.world_tokens())
        .history(true)
        .callback(move |sample| {
            let id = sample.key_expr().as_str().strip_prefix(&prefix).unwrap_or_default().to_string();
            let presence = match sample.kind() {
                zenoh::sample::SampleKind::Put => WorldPresence::Up(id),
                zenoh::sample::SampleKind::Delete => WorldPresence::Down(id),
            };
            let _ = tx.send(wrap(presence));
        })
        .await
        .map_err(|e| format!("cannot watch the world's token: {e}"))
}

/// Which models a node serves: `--models GLOB` and `--shard i/n`.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    models: Option<globset::GlobMatcher>,
    shard: Option<(u64, u64)>,
}

impl Selection {
    /// From the command-line values (`--models`, `--shard i/n`).
    pub fn new(models: Option<&str>, shard: Option<&str>) -> Result<Selection, String> {
        let models = models
            .map(|g| globset::Glob::new(g).map(|g| g.compile_matcher()).map_err(|e| format!("--models {g:?}: {e}")))
            .transpose()?;
        let shard = shard
            .map(|text| {
                let (i, n) =
                    text.split_once('/').ok_or_else(|| format!("--shard must be i/n, e.g. 0/2 (got {text:?})"))?;
                let (i, n): (u64, u64) = (
                    i.trim().parse().map_err(|_| format!("--shard {text:?}: {i:?} is not a number"))?,
                    n.trim().parse().map_err(|_| format!("--shard {text:?}: {n:?} is not a number"))?,
                );
                if n == 0 || i >= n {
                    return Err(format!("--shard {text:?}: need 0 ≤ i < n"));
                }
                Ok((i, n))
            })
            .transpose()?;
        Ok(Selection { models, shard })
    }

    /// Whether this node serves the model. Shards split models by a stable
    /// hash of their name, so every node agrees without talking.
    pub fn serves(&self, model: &str) -> bool {
        let by_name = self.models.as_ref().is_none_or(|glob| glob.is_match(model));
        let by_shard = self.shard.is_none_or(|(i, n)| crate::seed::plugin_seed(0, model, "") % n == i);
        by_name && by_shard
    }
}

#[cfg(test)]
mod tests {
    use super::Selection;

    #[test]
    fn shards_partition_the_models() {
        let names: Vec<String> = (0..50).map(|i| format!("robot{i}")).collect();
        let shards: Vec<Selection> = (0..3).map(|i| Selection::new(None, Some(&format!("{i}/3"))).unwrap()).collect();
        for name in &names {
            assert_eq!(shards.iter().filter(|s| s.serves(name)).count(), 1, "{name} is served exactly once");
        }
        assert!(shards.iter().all(|s| names.iter().any(|n| s.serves(n))), "no shard is empty");
    }

    #[test]
    fn globs_and_bad_shards() {
        let s = Selection::new(Some("robot[12]"), None).unwrap();
        assert!(s.serves("robot1") && !s.serves("robot3"));
        for bad in ["2/2", "1", "a/b", "0/0"] {
            assert!(Selection::new(None, Some(bad)).is_err(), "{bad}");
        }
    }
}
