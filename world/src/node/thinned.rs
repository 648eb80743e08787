//! States every `n` steps, for nodes that want no more (see
//! [`Keys::world_state_every`]): a node whose outputs are all due at
//! multiples of `n` steps declares a liveliness token
//! `state_interest/<n>/<node>`, and while any such token lives the world
//! puts every `n`-th state on `world/state_every/<n>` as well — the same
//! bytes, encoded once. A 10 Hz sonar at 200 Hz then receives one state in
//! twenty instead of every one (in warehouse-1000, 52 KB each).
//!
//! One exception: in lockstep, a node that has just (re)joined the barrier
//! owes a report for the next step, whatever it is; until it reports once,
//! every state goes on its stride's key too, or the barrier would wait for
//! a report of a state the node never receives.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use flotilla_node_kit::step_publisher::StepPublisher;
use flotilla_wire::Keys;
use zenoh::sample::SampleKind;

/// The strides nodes want, with a publisher and the nodes that want each.
type Strides = BTreeMap<u64, (Arc<StepPublisher>, BTreeSet<String>)>;

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
                    let key = sample.key_expr().as_str();
                    let Some(n) = keys.stride_of_interest(key) else { return };
                    let node = key.rsplit('/').next().unwrap_or_default().to_string();
                    let mut strides = strides.lock().unwrap_or_else(|e| e.into_inner());
                    match sample.kind() {
                        SampleKind::Put => {
                            if let Some((_, holders)) = strides.get_mut(&n) {
                                holders.insert(node);
                                return;
                            }
                            match StepPublisher::declare_now(session, keys.world_state_every(n)) {
                                Ok(publisher) => {
                                    tracing::info!("publishing every {n}th state on {}", keys.world_state_every(n));
                                    strides.insert(n, (Arc::new(publisher), BTreeSet::from([node])));
                                }
                                Err(e) => tracing::warn!("cannot publish every {n}th state: {e}"),
                            }
                        }
                        SampleKind::Delete => {
                            if let Some((_, holders)) = strides.get_mut(&n) {
                                holders.remove(&node);
                                if holders.is_empty() {
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

    /// The publishers that carry the state of `step`: those whose stride
    /// divides it, and those with a node that `owes` a report for it.
    pub fn due(&self, step: u64, owes: impl Fn(&str) -> bool) -> Vec<Arc<StepPublisher>> {
        let strides = self.strides.lock().unwrap_or_else(|e| e.into_inner());
        strides
            .iter()
            .filter(|(n, (_, holders))| step.is_multiple_of(**n) || holders.iter().any(|node| owes(node)))
            .map(|(_, (p, _))| p.clone())
            .collect()
    }
}
