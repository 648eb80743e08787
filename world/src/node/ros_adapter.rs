//! Serves the ROS services of [`crate::ros_services`] as Zenoh queryables on
//! their ROS names, one reply per query.

use std::sync::Arc;

use tokio::sync::watch;
use zenoh::query::Queryable;
use zenoh::Wait;

use crate::ros_services::{Answer, Service};
use flotilla_wire::Keys;

/// Carries out one call (under the world's lock).
pub type AnswerFn = Arc<dyn Fn(Service, &[u8]) -> Answer + Send + Sync>;

/// Declares one queryable per service. `answer` carries a call out (under
/// the world's lock); replies that must wait for a step (StepSimulation)
/// are sent once `published` reaches it.
pub async fn declare(
    session: &zenoh::Session,
    keys: &Keys,
    answer: AnswerFn,
    published: watch::Receiver<u64>,
) -> Result<Vec<Queryable<()>>, zenoh::Error> {
    let runtime = tokio::runtime::Handle::current();
    let mut queryables = Vec::with_capacity(Service::ALL.len());
    for service in Service::ALL {
        let (answer, published, runtime) = (answer.clone(), published.clone(), runtime.clone());
        let name = keys.ros(service.ros_name());
        let queryable = session
            .declare_queryable(&name)
            .callback(move |query| {
                let request = query.payload().map(|p| p.to_bytes().into_owned()).unwrap_or_default();
                let Answer { reply, after_step, .. } = answer(service, &request);
                let send = move |query: zenoh::query::Query| {
                    let sent = match reply {
                        Ok(bytes) => query.reply(query.key_expr().clone(), bytes).wait(),
                        Err(message) => query.reply_err(message).wait(),
                    };
                    if let Err(e) = sent {
                        tracing::warn!("cannot answer {}: {e}", service.ros_name());
                    }
                };
                match after_step {
                    // Sent off Zenoh's network thread, which runs this
                    // callback: a long reply (every entity of a large
                    // world) may wait for room to send, and that thread
                    // must keep serving the sockets meanwhile.
                    None => drop(runtime.spawn_blocking(move || send(query))),
                    Some(step) => {
                        let mut published = published.clone();
                        runtime.spawn(async move {
                            // Err: the world stopped; the reply still goes out.
                            let _ = published.wait_for(|&p| p >= step).await;
                            send(query);
                        });
                    }
                }
            })
            .await?;
        queryables.push(queryable);
    }
    Ok(queryables)
}
