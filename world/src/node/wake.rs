//! How the inputs wake the stepping loop: a count of news and a tokio
//! [`Notify`], so that the loop can look for news for a moment before it
//! parks.
//!
//! Why spin at all: in lockstep, every step waits on a round trip through
//! other processes (the drive's answer, the sensors' reports), and a parked
//! loop costs one more thread wake-up on that critical path: tens of
//! microseconds on a virtual machine whose idle cores halt, against a step
//! of about a hundred. Looking for the news for a few tens of microseconds
//! first (yielding the core to whoever is runnable meanwhile) takes that
//! wake-up off the path whenever the answer comes quickly.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

/// News for the stepping loop.
#[derive(Debug, Default)]
pub struct Wake {
    news: AtomicU64,
    notify: Notify,
}

impl Wake {
    /// Something changed that may let the loop step.
    pub fn notify_one(&self) {
        self.news.fetch_add(1, Ordering::Release);
        self.notify.notify_one();
    }

    /// How much news there has been so far (compare with a later count).
    pub fn news(&self) -> u64 {
        self.news.load(Ordering::Acquire)
    }

    /// Waits until news after `seen` arrives (the count has moved), looking
    /// for at most `spin`; true if it came in that time.
    pub fn spin_for_news(&self, seen: u64, spin: Duration) -> bool {
        let start = Instant::now();
        loop {
            if self.news() != seen {
                return true;
            }
            if start.elapsed() >= spin {
                return false;
            }
            // Let the threads that bring the news run on this core.
            std::thread::yield_now();
        }
    }

    /// Parks until the next notification (or one given since the last wait).
    pub async fn notified(&self) {
        self.notify.notified().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn news_given_on_another_thread_ends_the_spin() {
        let wake = Arc::new(Wake::default());
        let seen = wake.news();
        let giver = {
            let wake = wake.clone();
            std::thread::spawn(move || wake.notify_one())
        };
        assert!(wake.spin_for_news(seen, Duration::from_secs(10)));
        giver.join().unwrap();
    }

    #[test]
    fn without_news_the_spin_gives_up_after_its_time() {
        let wake = Wake::default();
        let start = Instant::now();
        assert!(!wake.spin_for_news(wake.news(), Duration::from_millis(2)));
        assert!(start.elapsed() >= Duration::from_millis(2));
    }
}
