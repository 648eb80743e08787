//! The world's `clock` for recorders, several steps to a batch.
//!
//! The world publishes a `clock` at every step: 200 a sim second at
//! office-50's 5 ms steps, 10,000 a wall second at 50× real time. A
//! recorder that took each on its key paid a wake-up for each, about a
//! quarter of its CPU. So while a
//! recorder listens (see [`flotilla_wire::recording`]), the world also
//! sends it its clock messages in batches of [`CLOCK_BATCH_STEPS`] steps,
//! each message logged at its own time. The first after a recorder appears
//! goes at once, before the same clock on its key, so that the recorder
//! switches from the key to the batches without a gap or a double (as a
//! node's batches do); after it, every clock on the key is in a later
//! batch. (A recorder that comes while another records gets the next
//! batch of the twenty, which may hold clocks it took on the key: it
//! keeps only those after the last it has.) A batch still filling goes when the world pauses, when it waits
//! [`FLUSH_BEFORE_WAITING`] or longer for the next realtime step (a slow
//! rate), when it stops, and when a recorder about to stop asks for it
//! ([`Keys::clock_flush`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use flotilla_node_kit::recording::declare_batch_publisher;
use flotilla_plugins::channels::CLOCK_CHANNEL;
use flotilla_wire::recording::{encode_batch, ChannelMessage};
use flotilla_wire::Keys;

/// Steps whose clocks go in one batch.
pub const CLOCK_BATCH_STEPS: usize = 20;

/// A realtime wait at least this long sends the clocks batched so far
/// first.
pub const FLUSH_BEFORE_WAITING: Duration = Duration::from_millis(20);

/// The publisher of the world's batches and the clocks waiting to go.
pub struct ClockBatches {
    publisher: zenoh::pubsub::Publisher<'static>,
    /// Whether a recorder listens, as the publisher's matching listener says.
    listening: Arc<AtomicBool>,
    /// Held while a batch is sent, so that batches go in their numbers'
    /// order whichever task sends them.
    pending: tokio::sync::Mutex<Pending>,
}

#[derive(Default)]
struct Pending {
    /// Each clock's sim time (ns; a clock is a moment of its own), its
    /// channel (`/clock`'s), sequence and payload.
    clocks: Vec<(u64, ChannelMessage)>,
    /// The next clock's sequence number.
    sequence: u32,
    /// The next batch's number.
    number: u64,
    /// Whether the recorders listening have had a batch since they came.
    started: bool,
}

impl ClockBatches {
    /// Declares the world's batch publisher, `recording/<node>`, and the
    /// queryable a recorder about to stop asks for the clocks batched so
    /// far (which must be kept as long as the batches are sent).
    pub async fn declare(
        session: &zenoh::Session,
        keys: &Keys,
        node: &str,
    ) -> anyhow::Result<(Arc<ClockBatches>, zenoh::query::Queryable<()>)> {
        let listening = Arc::new(AtomicBool::new(false));
        let publisher = declare_batch_publisher(session, keys.recording(node), listening.clone(), |_| ()).await?;
        let batches = Arc::new(ClockBatches { publisher, listening, pending: tokio::sync::Mutex::default() });
        let (asked, reply_key, runtime) = (batches.clone(), keys.clock_flush(), tokio::runtime::Handle::current());
        let flush = session
            .declare_queryable(keys.clock_flush())
            .callback(move |query| {
                // Off the Zenoh thread that runs this callback, which must
                // keep reading the links while a batch waits for room.
                let (batches, key) = (asked.clone(), reply_key.clone());
                runtime.spawn(async move {
                    let flushed = batches.flush().await;
                    let reply = match flushed {
                        Ok(()) => query.reply(&key, Vec::<u8>::new()).await,
                        Err(e) => query.reply_err(e.to_string()).await,
                    };
                    if let Err(e) = reply {
                        tracing::warn!("cannot answer a recorder's clock flush: {e}");
                    }
                });
            })
            .await
            .map_err(flotilla_node_kit::Error::zenoh("answer on", keys.clock_flush()))?;
        Ok((batches, flush))
    }

    /// Takes the clock of a step at `time_ns`, before it goes out on its
    /// key: sends the batch if it is the first a recorder gets or is full.
    pub async fn clock(&self, payload: &[u8], time_ns: u64) -> anyhow::Result<()> {
        let mut pending = self.pending.lock().await;
        if !self.listening.load(Ordering::Relaxed) {
            pending.clocks.clear();
            pending.started = false;
            return Ok(());
        }
        let sequence = pending.sequence;
        pending.sequence = sequence.wrapping_add(1);
        pending.clocks.push((time_ns, (CLOCK_CHANNEL, sequence, payload.to_vec())));
        let due = !pending.started || pending.clocks.len() >= CLOCK_BATCH_STEPS;
        pending.started = true;
        if due {
            self.send(pending.take()).await?;
        }
        Ok(())
    }

    /// Sends the clocks batched so far, if any.
    pub async fn flush(&self) -> anyhow::Result<()> {
        let mut pending = self.pending.lock().await;
        if !pending.clocks.is_empty() {
            self.send(pending.take()).await?;
        }
        Ok(())
    }

    async fn send(&self, batch: Vec<u8>) -> anyhow::Result<()> {
        self.publisher.put(batch).await.map_err(|e| anyhow::anyhow!("sending a recorder the clock: {e}"))
    }
}

impl Pending {
    /// The batch of the clocks pending, which are then gone.
    fn take(&mut self) -> Vec<u8> {
        let moments: Vec<(u64, &[ChannelMessage])> =
            self.clocks.iter().map(|(time_ns, clock)| (*time_ns, std::slice::from_ref(clock))).collect();
        let bytes = encode_batch(self.number, &moments);
        self.number += 1;
        self.clocks.clear();
        bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_wire::recording::read_batch;

    #[test]
    fn batches_are_numbered_and_each_clock_is_a_moment_at_its_own_time() {
        let mut pending = Pending::default();
        for (step, time_ns) in [(1u8, 5_000_000u64), (2, 10_000_000)] {
            pending.clocks.push((time_ns, (CLOCK_CHANNEL, u32::from(step), vec![step])));
        }
        let first = pending.take();
        assert!(pending.clocks.is_empty());
        let batch = read_batch(&first).unwrap();
        assert_eq!(batch.number(), 0);
        let clocks: Vec<_> =
            batch.messages().map(|m| m.unwrap()).map(|m| (m.time_ns, m.channel, m.payload.to_vec())).collect();
        assert_eq!(
            clocks,
            [(5_000_000, CLOCK_CHANNEL, vec![1]), (10_000_000, CLOCK_CHANNEL, vec![2])],
            "every step's clock, in order"
        );
        pending.clocks.push((15_000_000, (CLOCK_CHANNEL, 3, vec![3])));
        assert_eq!(read_batch(&pending.take()).unwrap().number(), 1);
    }
}
