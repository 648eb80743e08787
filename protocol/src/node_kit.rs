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
