//! What nodes ask the world to keep for them (`Keys::world_memory`): a
//! lift's floor, say, that a restarted `flotilla-building` takes up again
//! instead of its `initial_floor`. The world holds the last value put on
//! each key, answers queries for them, forgets them at a reset or when
//! another world file is loaded (nodes then start as the file says), and
//! saves them in its checkpoints.

use std::sync::Arc;

use flotilla_node_kit::{Error, Result};
use zenoh::key_expr::KeyExpr;
use zenoh::pubsub::Subscriber;
use zenoh::query::Queryable;
use zenoh::Wait;

use super::inputs::{lock, Wiring};

/// The memory's subscriber and queryable, alive as long as this.
pub struct Memory {
    _puts: Subscriber<()>,
    _queries: Queryable<()>,
}

/// Keeps what nodes put and answers who asks.
pub async fn declare(wiring: &Wiring) -> Result<Memory> {
    let key = wiring.keys.world_memory_all();
    let shared = wiring.shared.clone();
    let puts = wiring
        .session
        .declare_subscriber(&key)
        .callback(move |sample| {
            let bytes = sample.payload().to_bytes().into_owned();
            lock(&shared).memory.insert(sample.key_expr().as_str().to_string(), bytes);
        })
        .await
        .map_err(Error::zenoh("subscribe to", key.clone()))?;
    let shared = Arc::clone(&wiring.shared);
    let queries = wiring
        .session
        .declare_queryable(&key)
        .callback(move |query| {
            let asked = query.key_expr().clone();
            let kept: Vec<(String, Vec<u8>)> = lock(&shared)
                .memory
                .iter()
                .filter(|(k, _)| KeyExpr::try_from(k.as_str()).is_ok_and(|k| asked.intersects(&k)))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            for (key, bytes) in kept {
                if let Err(e) = query.reply(&key, bytes).wait() {
                    tracing::warn!("cannot answer a memory query with {key}: {e}");
                }
            }
        })
        .await
        .map_err(Error::zenoh("answer on", key))?;
    Ok(Memory { _puts: puts, _queries: queries })
}
