//! Following the world's description from outside the lockstep loop: the
//! recorder, the view and the bridge each keep something (topics, a scene,
//! the announced ROS surface) in step with the world's models.
//!
//! [`DescriptionFollower::start`] subscribes to the world's events first
//! and only then waits for a world, so no change between the two is
//! missed; [`DescriptionFollower::changed`] then hands out the description
//! after each burst of events (and, if asked, after each periodic look,
//! which catches a world that restarted without an event reaching us).
//!
//! Plugin nodes do not use it: they apply events in step order with the
//! states around them (`runtime::serve`), and fetch with the same
//! [`FETCH_TIMEOUT`].

use std::time::Duration;

use flotilla_wire::codec::decode;
use flotilla_wire::description::WorldDescription;
use flotilla_wire::keys::Keys;
use flotilla_wire::world_to_nodes::WorldEvent;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver};
use tokio::time::Interval;

use crate::client::{fetch_description, wait_for_world};
use crate::error::{Error, Result};

/// How long a program waits for the world's answer when it fetches the
/// description after a change; a world that does not answer within it is
/// busy loading or gone, and the next event or look tries again.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(5);

/// Hands out the world's description each time it changes.
pub struct DescriptionFollower {
    session: zenoh::Session,
    keys: Keys,
    events: UnboundedReceiver<()>,
    _subscriber: zenoh::pubsub::Subscriber<()>,
    look: Option<Interval>,
    /// An event or look was seen and its description not yet handed out
    /// (kept across a cancelled [`DescriptionFollower::changed`]).
    pending: bool,
    /// Whether the last fetch failed, so that an outage is logged once.
    failing: bool,
}

impl DescriptionFollower {
    /// Subscribes to the world's events, then waits as long as it takes
    /// for a world to answer, and returns its description.
    pub async fn start(session: &zenoh::Session, keys: &Keys) -> Result<(DescriptionFollower, WorldDescription)> {
        let (tx, events) = unbounded_channel();
        let key = keys.world_events();
        let subscriber = session
            .declare_subscriber(&key)
            .callback(move |sample| {
                if decode::<WorldEvent>(&sample.payload().to_bytes()).is_ok() {
                    let _ = tx.send(());
                }
            })
            .await
            .map_err(Error::zenoh("subscribe to", key))?;
        let description = wait_for_world(session, keys).await;
        let follower = DescriptionFollower {
            session: session.clone(),
            keys: keys.clone(),
            events,
            _subscriber: subscriber,
            look: None,
            pending: false,
            failing: false,
        };
        Ok((follower, description))
    }

    /// Also fetches the description every `period`, event or not: for a
    /// program that must notice a world restarted under it.
    pub fn looking_every(mut self, period: Duration) -> DescriptionFollower {
        let mut look = tokio::time::interval(period);
        look.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        self.look = Some(look);
        self
    }

    /// Waits for the next world event (or look) and returns the
    /// description fetched after it; several events that arrived together
    /// are fetched once. A fetch that fails is logged and waits for the
    /// next event. Cancel-safe: an event seen by a cancelled call is
    /// fetched by the next.
    pub async fn changed(&mut self) -> WorldDescription {
        loop {
            if !self.pending {
                tokio::select! {
                    event = self.events.recv() => {
                        if event.is_none() {
                            // The subscriber lives as long as `self`.
                            std::future::pending::<()>().await;
                        }
                    }
                    () = tick(&mut self.look) => {}
                }
                while self.events.try_recv().is_ok() {}
                self.pending = true;
            }
            let fetched = fetch_description(&self.session, &self.keys, FETCH_TIMEOUT).await;
            self.pending = false;
            match fetched {
                Ok(description) => {
                    if self.failing {
                        tracing::info!("following the world's description again");
                    }
                    self.failing = false;
                    return description;
                }
                Err(e) if self.failing => tracing::debug!("still cannot follow the world's description: {e}"),
                Err(e) => {
                    tracing::warn!("cannot follow the world's description: {e}");
                    self.failing = true;
                }
            }
        }
    }
}

/// The next tick of `look`, or never without one.
async fn tick(look: &mut Option<Interval>) {
    match look {
        Some(interval) => {
            interval.tick().await;
        }
        None => std::future::pending().await,
    }
}
