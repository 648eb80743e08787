//! Counting and logging bad messages without flooding the log.
//!
//! ARCHITECTURE.md: a bad message (garbage, truncated, wrong schema version, NaN)
//! is dropped and counted, with a rate-limited log line; the node keeps going.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A counter of dropped messages that logs at most once per interval.
#[derive(Debug)]
pub struct BadMessages {
    what: String,
    count: AtomicU64,
    last_log: Mutex<Option<Instant>>,
    interval: Duration,
}

impl BadMessages {
    /// A counter for messages on `what` (a key or a topic).
    pub fn new(what: impl Into<String>) -> BadMessages {
        BadMessages {
            what: what.into(),
            count: AtomicU64::new(0),
            last_log: Mutex::new(None),
            interval: Duration::from_secs(1),
        }
    }

    /// Records one dropped message and logs if the last log line is old enough.
    pub fn record(&self, error: &dyn std::fmt::Display) {
        let n = self.count.fetch_add(1, Ordering::Relaxed) + 1;
        // Wall time only paces the log; it never touches simulation logic.
        let mut last = self.last_log.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        if last.is_none_or(|t| now.duration_since(t) >= self.interval) {
            *last = Some(now);
            tracing::warn!("dropped a bad message on {} ({n} so far): {error}", self.what);
        }
    }

    /// How many messages were dropped.
    pub fn count(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }
}
