//! Messages and bytes per second on the main keys, counted by a Zenoh
//! subscriber per key class (payloads are not decoded).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use flotilla_wire::Keys;
use zenoh::pubsub::Subscriber;

/// Counters of one key class.
#[derive(Debug, Default)]
pub struct Counter {
    messages: AtomicU64,
    bytes: AtomicU64,
}

/// (messages, bytes) so far.
pub type Counts = (u64, u64);

/// The key classes counted, with their Zenoh key expressions.
pub struct Traffic {
    classes: Vec<(String, Arc<Counter>)>,
    _subscribers: Vec<Subscriber<()>>,
}

impl Traffic {
    /// Starts counting on the main keys of the simulation.
    pub async fn start(session: &zenoh::Session, keys: &Keys) -> anyhow::Result<Traffic> {
        let classes = [
            ("world/state", keys.world_state()),
            ("actuation", keys.actuation("*")),
            ("lockstep", keys.lockstep_all()),
            ("scan", keys.ros("/**/scan")),
            ("odometry", keys.ros("/**/odometry/**")),
            ("tf", keys.ros("/tf")),
            ("clock", keys.ros("/clock")),
        ];
        let mut out = Traffic { classes: Vec::new(), _subscribers: Vec::new() };
        for (name, key) in classes {
            let counter = Arc::new(Counter::default());
            let c = counter.clone();
            let subscriber = session
                .declare_subscriber(key)
                .callback(move |sample| {
                    c.messages.fetch_add(1, Ordering::Relaxed);
                    c.bytes.fetch_add(sample.payload().len() as u64, Ordering::Relaxed);
                })
                .await
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            out.classes.push((name.to_string(), counter));
            out._subscribers.push(subscriber);
        }
        Ok(out)
    }

    /// Counts so far, per class.
    pub fn snapshot(&self) -> Vec<(String, Counts)> {
        self.classes
            .iter()
            .map(|(name, c)| (name.clone(), (c.messages.load(Ordering::Relaxed), c.bytes.load(Ordering::Relaxed))))
            .collect()
    }
}
