//! The publisher a process sends recorders its batches on
//! (`flotilla/<sim>/recording/<sender>`, see
//! [`flotilla_protocol::recording`]), and whether any recorder listens.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use zenoh::qos::CongestionControl;

use crate::{Error, Result};

/// Declares the batch publisher on `key`, lossless in every clock mode (a
/// recording has every message or says which batches it misses: the
/// senders slow down instead), and keeps `listening` set to whether a
/// recorder subscribes, from Zenoh's matching listener (called at once
/// when one already does).
pub async fn declare_batch_publisher(
    session: &zenoh::Session,
    key: String,
    listening: Arc<AtomicBool>,
) -> Result<zenoh::pubsub::Publisher<'static>> {
    let publisher = session
        .declare_publisher(key.clone())
        .congestion_control(CongestionControl::Block)
        .await
        .map_err(Error::zenoh("publish on", key.clone()))?;
    publisher
        .matching_listener()
        .callback(move |status| listening.store(status.matching(), Ordering::Relaxed))
        .background()
        .await
        .map_err(Error::zenoh("watch for recorders on", key))?;
    Ok(publisher)
}
