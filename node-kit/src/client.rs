//! Requests every Flotilla program makes of the world over Zenoh.

use std::time::Duration;

use flotilla_wire::codec::{decode, encode};
use flotilla_wire::control::{ControlReply, ControlRequest};
use flotilla_wire::description::WorldDescription;
use flotilla_wire::keys::Keys;

use crate::error::{Error, Result};

/// Asks the world for its description; `None` if no world answered in time.
pub async fn fetch_description(session: &zenoh::Session, keys: &Keys, timeout: Duration) -> Result<WorldDescription> {
    let key = keys.world_description();
    let replies = session.get(&key).timeout(timeout).await.map_err(Error::zenoh("query", key.clone()))?;
    if let Ok(reply) = replies.recv_async().await {
        return match reply.result() {
            Ok(sample) => decode(&sample.payload().to_bytes()).map_err(|cause| Error::Decode { key, cause }),
            Err(err) => {
                Err(Error::Refused { reason: String::from_utf8_lossy(&err.payload().to_bytes()).into_owned(), key })
            }
        };
    }
    Err(Error::NoWorld { key, timeout })
}

/// Asks the world for a checkpoint of itself (the bytes of a checkpoint
/// file; see `flotilla_world::checkpoint`).
pub async fn fetch_checkpoint(session: &zenoh::Session, keys: &Keys, timeout: Duration) -> Result<Vec<u8>> {
    fetch_checkpoint_with(session, keys, timeout, CheckpointFetch::Waited).await
}

/// How the world sends a checkpoint asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckpointFetch {
    /// Someone waits on it (`flotilla checkpoint save`): the world's link
    /// to the asker blocks until it has gone.
    Waited,
    /// In the background (a standby's, every second): at a low priority,
    /// and dropped when the asker's link stays congested (about a second
    /// for a checkpoint's fragments), so that a slow asker never holds the
    /// world's link to it up until Zenoh closes it. The fetch then times
    /// out and is made again.
    Background,
}

/// [`fetch_checkpoint`], sent as `how` says.
pub async fn fetch_checkpoint_with(
    session: &zenoh::Session,
    keys: &Keys,
    timeout: Duration,
    how: CheckpointFetch,
) -> Result<Vec<u8>> {
    use zenoh::qos::{CongestionControl, Priority};
    let key = keys.world_checkpoint();
    // The reply goes with the query's congestion control and priority.
    let get = session.get(&key).timeout(timeout);
    let get = match how {
        CheckpointFetch::Waited => get,
        CheckpointFetch::Background => get.congestion_control(CongestionControl::Drop).priority(Priority::DataLow),
    };
    let replies = get.await.map_err(Error::zenoh("query", key.clone()))?;
    if let Ok(reply) = replies.recv_async().await {
        return match reply.result() {
            Ok(sample) => Ok(sample.payload().to_bytes().into_owned()),
            Err(err) => {
                Err(Error::Refused { reason: String::from_utf8_lossy(&err.payload().to_bytes()).into_owned(), key })
            }
        };
    }
    Err(Error::NoWorld { key, timeout })
}

/// Everything the world keeps for nodes (see [`Keys::world_memory`]), by
/// key.
pub async fn fetch_memory(
    session: &zenoh::Session,
    keys: &Keys,
    timeout: Duration,
) -> Result<std::collections::BTreeMap<String, Vec<u8>>> {
    let key = keys.world_memory_all();
    let replies = session.get(&key).timeout(timeout).await.map_err(Error::zenoh("query", key.clone()))?;
    let mut memory = std::collections::BTreeMap::new();
    while let Ok(reply) = replies.recv_async().await {
        if let Ok(sample) = reply.result() {
            memory.insert(sample.key_expr().as_str().to_string(), sample.payload().to_bytes().into_owned());
        }
    }
    Ok(memory)
}

/// Waits until a world answers, retrying every 200 ms, for at most `timeout`.
pub async fn wait_for_description(
    session: &zenoh::Session,
    keys: &Keys,
    timeout: Duration,
) -> Result<WorldDescription> {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        match fetch_description(session, keys, left.min(Duration::from_secs(2))).await {
            Ok(d) => return Ok(d),
            Err(e) if tokio::time::Instant::now() >= deadline => return Err(e),
            Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
}

/// Waits as long as it takes for a world to answer (nodes started before the
/// world, or while it restarts), logging once that it is waiting.
pub async fn wait_for_world(session: &zenoh::Session, keys: &Keys) -> WorldDescription {
    let mut warned = false;
    loop {
        match fetch_description(session, keys, Duration::from_secs(2)).await {
            Ok(d) => return d,
            Err(e) => {
                if !warned {
                    tracing::info!("waiting for the world: {e}");
                    warned = true;
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
}

/// Calls a control service and returns the world's reply. A query that finds
/// no service (the world not up yet, or still declaring it) is retried until
/// `timeout`.
pub async fn call_control(
    session: &zenoh::Session,
    keys: &Keys,
    verb: &str,
    request: &ControlRequest,
    timeout: Duration,
) -> Result<ControlReply> {
    let key = keys.control(verb);
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let replies = session
            .get(&key)
            .payload(encode(request))
            .timeout(left.max(Duration::from_millis(100)))
            .await
            .map_err(Error::zenoh("query", key.clone()))?;
        if let Ok(reply) = replies.recv_async().await {
            return match reply.result() {
                Ok(sample) => decode(&sample.payload().to_bytes()).map_err(|cause| Error::Decode { key, cause }),
                Err(err) => {
                    Err(Error::Refused { reason: String::from_utf8_lossy(&err.payload().to_bytes()).into_owned(), key })
                }
            };
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(Error::NoWorld { key, timeout });
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
