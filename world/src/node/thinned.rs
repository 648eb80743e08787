//! States every `n` steps, for nodes that want no more (see
//! [`Keys::world_state_every`]): a node whose outputs are all due at
//! multiples of `n` steps declares a liveliness token
//! `state_interest/<n>/<node>`, and while any such token lives the world
//! puts every `n`-th state on `world/state_every/<n>` as well — the same
//! bytes, encoded once. A 10 Hz sonar at 200 Hz then receives one state in
//! twenty instead of every one (in warehouse-1000, 52 KB each).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use flotilla_node_kit::step_publisher::StepPublisher;
use flotilla_protocol::Keys;
use zenoh::sample::SampleKind;

/// The strides nodes want, with a publisher and a count of tokens each.
type Strides = BTreeMap<u64, (Arc<StepPublisher>, usize)>;

/// Watches the interest tokens and holds a publisher per wanted stride.
pub struct ThinnedStates {
    strides: Arc<Mutex<Strides>>,
    _tokens: zenoh::pubsub::Subscriber<()>,
}

impl ThinnedStates {
    /// Follows the tokens, those already declared included.
    pub async fn declare(session: &zenoh::Session, keys: &Keys) -> anyhow::Result<ThinnedStates> {
        let strides: Arc<Mutex<Strides>> = Arc::default();
        let tokens = {
            let (strides, keys_here, session_here) = (strides.clone(), keys.clone(), session.clone());
            session
                .liveliness()
                .declare_subscriber(keys.state_interests())
                .history(true)
                .callback(move |sample| {
                    let (keys, session) = (&keys_here, &session_here);
                    let Some(n) = keys.stride_of_interest(sample.key_expr().as_str()) else { return };
                    let mut strides = strides.lock().unwrap_or_else(|e| e.into_inner());
                    match sample.kind() {
                        SampleKind::Put => {
                            if let Some((_, holders)) = strides.get_mut(&n) {
                                *holders += 1;
                                return;
                            }
                            match StepPublisher::declare_now(session, keys.world_state_every(n)) {
                                Ok(publisher) => {
                                    tracing::info!("publishing every {n}th state on {}", keys.world_state_every(n));
                                    strides.insert(n, (Arc::new(publisher), 1));
                                }
                                Err(e) => tracing::warn!("cannot publish every {n}th state: {e}"),
                            }
                        }
                        SampleKind::Delete => {
                            if let Some((_, holders)) = strides.get_mut(&n) {
                                *holders -= 1;
                                if *holders == 0 {
                                    strides.remove(&n);
                                }
                            }
                        }
                    }
                })
                .await
                .map_err(|e| anyhow::anyhow!("watching {}: {e}", keys.state_interests()))?
        };
        Ok(ThinnedStates { strides, _tokens: tokens })
    }

    /// The publishers whose stride divides `step`.
    pub fn due(&self, step: u64) -> Vec<Arc<StepPublisher>> {
        let strides = self.strides.lock().unwrap_or_else(|e| e.into_inner());
        strides.iter().filter(|(n, _)| step.is_multiple_of(**n)).map(|(_, (p, _))| p.clone()).collect()
    }
}
