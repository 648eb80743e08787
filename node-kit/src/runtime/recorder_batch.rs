//! The batch for recorders a node fills moment by moment (see
//! [`flotilla_protocol::recording`]).
//!
//! A batch a moment was 3,500 batches a wall second at office-50's 50×
//! real time, and each cost the node a hand-over from the receiving thread
//! to its main loop (a lossless send must not wait on the thread that
//! drives the sockets, see `super::handover`), a put and a wake-up of
//! Zenoh's sending thread, and the recorder a wake-up and a route lookup.
//! Now a moment whose messages only the recorder wants is added to the
//! batch being filled, on the thread that answered it, and nothing is
//! sent; the batch goes out, from the main loop, when it holds
//! [`BATCH_MOMENTS`] moments or [`BATCH_BYTES`] bytes, when a moment also
//! has a message for a subscriber of its key (the batch must reach the
//! recorder before the same message on its key, which the recorder may
//! still take there), at most [`BATCH_AGE`] after its first moment (a
//! paused or slow simulation), and when the node stops. Zenoh is done with
//! a batch once its put returns (it copies it into shared memory or the
//! link's buffer), so the next batch reuses the same memory.

use std::time::{Duration, Instant};

use flotilla_protocol::recording::{moment_len, set_batch_number, write_batch_start, write_moment, BATCH_START_LEN};

/// Moments in a batch at most.
pub(crate) const BATCH_MOMENTS: usize = 20;

/// Bytes in a batch before it goes: well within Zenoh's shared-memory
/// pool of 4 MiB, so that a batch or two in flight never pushes one
/// through the socket (office-50's odometry node makes about 100 kB a
/// moment, its laser about 220 kB).
pub(crate) const BATCH_BYTES: usize = 1 << 20;

/// How long a batch waits for more moments at most, wall time: what a
/// recorder about to stop waits for before it asks the world for its last
/// clocks.
pub const BATCH_AGE: Duration = Duration::from_millis(50);

/// The batch being filled, and the numbering of those sent.
#[derive(Default)]
pub(crate) struct PendingBatch {
    buffer: bytes::BytesMut,
    moments: usize,
    /// When its first moment was added.
    since: Option<Instant>,
    /// The length of the last batch sent: the next reserves as much.
    last_len: usize,
    /// Batches sent so far: the next one's number.
    sent: u64,
}

impl PendingBatch {
    /// Whether a moment of `messages` would be added without filling the
    /// batch, so that nothing is sent.
    pub(crate) fn takes_without_sending(&self, messages: &[(String, Vec<u8>)]) -> bool {
        let len = self.buffer.len().max(BATCH_START_LEN) + moment_len(messages);
        self.moments + 1 < BATCH_MOMENTS && len < BATCH_BYTES
    }

    /// Adds a moment of sim time `time_ns`; returns whether it is the
    /// batch's first (whose age the main loop then watches).
    pub(crate) fn add(&mut self, time_ns: u64, messages: &[(String, Vec<u8>)]) -> bool {
        let (buffer, len) = (&mut self.buffer, moment_len(messages));
        let first = self.moments == 0;
        if first {
            buffer.clear();
            // Reclaims the whole buffer when the last batch's payload is gone.
            buffer.reserve(self.last_len.max(BATCH_START_LEN + len));
            write_batch_start(0, |piece| buffer.extend_from_slice(piece));
            self.since = Some(Instant::now());
        }
        buffer.reserve(len);
        write_moment(time_ns, messages, |piece| buffer.extend_from_slice(piece));
        self.moments += 1;
        first
    }

    /// Whether it must go now for its size.
    pub(crate) fn is_full(&self) -> bool {
        self.moments >= BATCH_MOMENTS || self.buffer.len() >= BATCH_BYTES
    }

    /// When it must go for its age; `None` while it is empty.
    pub(crate) fn due_at(&self) -> Option<Instant> {
        self.since.map(|since| since + BATCH_AGE)
    }

    /// The batch, numbered, as Zenoh's payload, if it has a moment; it is
    /// then empty.
    pub(crate) fn take(&mut self) -> Option<zenoh::bytes::ZBytes> {
        if self.moments == 0 {
            return None;
        }
        set_batch_number(&mut self.buffer, self.sent);
        self.sent += 1;
        (self.moments, self.since, self.last_len) = (0, None, self.buffer.len());
        Some(zenoh::bytes::ZBytes::from(self.buffer.split().freeze()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_protocol::recording::{encode_batch, read_batch};

    fn odometry() -> Vec<(String, Vec<u8>)> {
        vec![("robot1/odom".to_string(), vec![1; 700]), ("tf".to_string(), vec![2; 90])]
    }

    #[test]
    fn moments_added_go_as_one_numbered_batch_of_what_encode_batch_writes() {
        let (items, mut batch) = (odometry(), PendingBatch::default());
        assert!(batch.take().is_none() && batch.due_at().is_none(), "nothing to send");
        assert!(batch.add(20_000_000, &items), "the first moment starts the batch");
        assert!(!batch.add(40_000_000, &items[..1]));
        let due = batch.due_at().expect("a batch with moments is due");
        assert!(due > Instant::now() && due <= Instant::now() + BATCH_AGE);
        let first = batch.take().unwrap().to_bytes().into_owned();
        assert_eq!(first, encode_batch(0, &[(20_000_000, &items), (40_000_000, &items[..1])]));
        assert!(batch.due_at().is_none(), "sent: nothing waits");
        batch.add(60_000_000, &items);
        assert_eq!(read_batch(&batch.take().unwrap().to_bytes()).unwrap().number(), 1, "numbered as sent");
    }

    #[test]
    fn a_batch_is_full_at_its_moments_or_its_bytes() {
        let (items, mut batch) = (odometry(), PendingBatch::default());
        for moment in 1..BATCH_MOMENTS {
            assert!(batch.takes_without_sending(&items), "moment {moment}");
            batch.add(moment as u64, &items);
            assert!(!batch.is_full());
        }
        assert!(!batch.takes_without_sending(&items), "the last moment fills it");
        batch.add(0, &items);
        assert!(batch.is_full());
        batch.take();
        let scans = vec![("robot1/scan".to_string(), vec![0; BATCH_BYTES / 2])];
        assert!(batch.takes_without_sending(&scans));
        batch.add(1, &scans);
        assert!(!batch.takes_without_sending(&scans), "a second half would fill it");
        batch.add(2, &scans);
        assert!(batch.is_full());
    }

    #[test]
    fn the_next_batch_reuses_the_memory_once_zenoh_let_the_last_go() {
        let (items, mut batch) = (odometry(), PendingBatch::default());
        batch.add(1, &items);
        let first = batch.take().unwrap();
        let memory = first.to_bytes().as_ptr();
        drop(first);
        batch.add(2, &items);
        let second = batch.take().unwrap();
        assert_eq!(second.to_bytes().as_ptr(), memory, "the first batch's memory");
        // While a batch is still held, the next gets memory of its own.
        batch.add(3, &items);
        let third = batch.take().unwrap();
        assert_ne!(third.to_bytes().as_ptr(), second.to_bytes().as_ptr());
        assert_eq!(third.to_bytes().into_owned(), encode_batch(2, &[(3, &items)]));
    }
}
