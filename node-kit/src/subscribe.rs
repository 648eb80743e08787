//! Subscriptions every node makes: internal keys decoded (bad samples
//! counted), handed to a loop or handled where they arrive, and liveliness
//! tokens watched.

use flotilla_wire::codec::{decode, WireMessage};
use flotilla_wire::world_tracker::WorldPresence;
use flotilla_wire::Keys;
use tokio::sync::mpsc::UnboundedSender;

use crate::error::{Error, Result};
use crate::health::BadMessages;

/// Subscribes to an internal key, decoding each sample and forwarding it
/// through `wrap` to a node's input channel; bad samples are counted.
pub async fn forward<T, I>(
    session: &zenoh::Session,
    key: String,
    tx: UnboundedSender<I>,
    wrap: fn(T) -> I,
) -> Result<zenoh::pubsub::Subscriber<()>>
where
    T: WireMessage + Send + 'static,
    I: Send + 'static,
{
    forward_if(session, key, tx, wrap, |_| true).await
}

/// [`forward`], for the samples whose payload `wanted` accepts (checked
/// before decoding, so that a node can drop what it does not need cheaply;
/// it should accept what it cannot read, which is then counted as bad).
pub async fn forward_if<T, I>(
    session: &zenoh::Session,
    key: String,
    tx: UnboundedSender<I>,
    wrap: fn(T) -> I,
    wanted: impl Fn(&[u8]) -> bool + Send + Sync + 'static,
) -> Result<zenoh::pubsub::Subscriber<()>>
where
    T: WireMessage + Send + 'static,
    I: Send + 'static,
{
    on_message(session, key, wanted, move |message| {
        let _ = tx.send(wrap(message));
    })
    .await
}

/// Subscribes to an internal key and calls `handle` with each decoded
/// message that `wanted` accepts (see [`forward_if`]), on the thread that
/// received it: for answers on a step's critical path, which a hand-over
/// to another thread would delay. Bad samples are counted.
pub async fn on_message<T>(
    session: &zenoh::Session,
    key: String,
    wanted: impl Fn(&[u8]) -> bool + Send + Sync + 'static,
    handle: impl Fn(T) + Send + Sync + 'static,
) -> Result<zenoh::pubsub::Subscriber<()>>
where
    T: WireMessage + Send + 'static,
{
    let bad = BadMessages::new(key.clone());
    session
        .declare_subscriber(&key)
        .callback(move |sample| {
            let bytes = sample.payload().to_bytes();
            if !wanted(&bytes) {
                return;
            }
            match decode::<T>(&bytes) {
                Ok(message) => handle(message),
                Err(e) => bad.record(&e),
            }
        })
        .await
        .map_err(Error::zenoh("subscribe to", key))
}

/// Subscribes to the liveliness tokens matching `key_expr` (those already
/// declared first), calling `on_change(key, alive)` for each change.
pub async fn watch_tokens(
    session: &zenoh::Session,
    key_expr: String,
    on_change: impl Fn(&str, bool) + Send + Sync + 'static,
) -> Result<zenoh::pubsub::Subscriber<()>> {
    session
        .liveliness()
        .declare_subscriber(&key_expr)
        .history(true)
        .callback(move |sample| on_change(sample.key_expr().as_str(), sample.kind() == zenoh::sample::SampleKind::Put))
        .await
        .map_err(Error::zenoh("watch the tokens on", key_expr))
}

/// Watches the world's liveliness token, forwarding presence changes.
pub async fn watch_world<I: Send + 'static>(
    session: &zenoh::Session,
    keys: &Keys,
    tx: UnboundedSender<I>,
    wrap: fn(WorldPresence) -> I,
) -> Result<zenoh::pubsub::Subscriber<()>> {
    on_world_presence(session, keys, move |presence| {
        let _ = tx.send(wrap(presence));
    })
    .await
}

/// Watches the world's liveliness token, calling `handle` with each
/// presence change on the thread that received it.
pub async fn on_world_presence(
    session: &zenoh::Session,
    keys: &Keys,
    handle: impl Fn(WorldPresence) + Send + Sync + 'static,
) -> Result<zenoh::pubsub::Subscriber<()>> {
    let own = keys.clone();
    watch_tokens(session, keys.world_tokens(), move |key, alive| {
        let Some(id) = own.parse_node_token(key).map(str::to_string) else { return };
        handle(if alive { WorldPresence::Up(id) } else { WorldPresence::Down(id) });
    })
    .await
}
