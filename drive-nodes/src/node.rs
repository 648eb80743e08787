//! The drive node: serves every `DiffDrive` plugin instance it selects.
//!
//! On each world state (step k) it advances every drive model by one step and
//! publishes one batched [`Actuation`] with the velocity of each driven body
//! for step k+1. `cmd_vel` arrives as CDR `geometry_msgs/Twist` or
//! `TwistStamped` on the model-namespaced ROS key.
//!
//! In realtime and external clock modes, a plain `Twist` is not held until
//! the next state: the drive redoes its last step with it and publishes that
//! body's actuation at once, so the world applies it at its very next step
//! (one step of latency instead of two). In lockstep, commands only take
//! effect at states, which keeps runs independent of message timing; in fast
//! mode too, as there is no wall-clock latency to save.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use flotilla_protocol::client::{fetch_description, wait_for_world};
use flotilla_protocol::codec::encode;
use flotilla_protocol::control::ClockMode;
use flotilla_protocol::description::WorldDescription;
use flotilla_protocol::drive_to_world::{Actuation, BodyCommand};
use flotilla_protocol::health::BadMessages;
use flotilla_protocol::names::resolve_topic;
use flotilla_protocol::node_kit::{
    forward, watch_claims, watch_world, ClaimEvent, Claims, StateVerdict, WorldPresence, WorldTracker,
};
use flotilla_protocol::plugins::diff_drive::DiffDriveConfig;
use flotilla_protocol::plugins::{configured, Configured};
use flotilla_protocol::ros::geometry_msgs::{Twist, TwistStamped};
use flotilla_protocol::ros::{self, CdrError};
use flotilla_protocol::step_publisher::{urgent, StepPublisher};
use flotilla_protocol::world_to_nodes::{BodyId, WorldEvent, WorldState, WorldStatus};
use flotilla_protocol::Keys;
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};

use crate::diff_drive::{DiffDrive, DriveOutput};

/// How to run a drive node.
pub struct DriveNodeConfig {
    /// Keys of the simulation.
    pub keys: Keys,
    /// This node's id.
    pub node_id: String,
    /// Which models to serve.
    pub selection: flotilla_protocol::node_kit::Selection,
}

enum Input {
    State(WorldState),
    Event(WorldEvent),
    World(WorldPresence),
    Status(WorldStatus),
    Command { instance: String, forward_mps: f64, yaw_rate_radps: f64, stamp_ns: Option<u64> },
    Claim(ClaimEvent),
}

struct Instance {
    body: BodyId,
    drive: DiffDrive,
    _cmd_vel: zenoh::pubsub::Subscriber<()>,
}

impl Instance {
    /// The world's command for this instance's body from a drive output.
    fn body_command(&self, out: DriveOutput) -> BodyCommand {
        BodyCommand {
            body: self.body,
            local_vx_mps: out.forward_mps,
            local_vy_mps: 0.0,
            omega_radps: out.yaw_rate_radps,
        }
    }
}

/// Decodes a `cmd_vel` payload: `Twist` (exactly 52 bytes) or `TwistStamped`
/// (with its stamp in ns, `None` when the stamp is zero or negative).
pub fn decode_cmd_vel(bytes: &[u8]) -> Result<(Twist, Option<u64>), CdrError> {
    if bytes.len() == 52 {
        ros::decode::<Twist>(bytes).map(|t| (t, None))
    } else {
        ros::decode::<TwistStamped>(bytes).map(|stamped| {
            let t = stamped.header.stamp;
            let ns = (t.sec > 0 || t.nanosec > 0).then(|| t.sec.max(0) as u64 * 1_000_000_000 + u64::from(t.nanosec));
            (stamped.twist, ns)
        })
    }
}

/// Runs the drive node until `shutdown` completes.
pub async fn run(
    session: zenoh::Session,
    config: DriveNodeConfig,
    shutdown: impl Future<Output = ()>,
) -> anyhow::Result<()> {
    let keys = &config.keys;
    let _token = session
        .liveliness()
        .declare_token(keys.node_token(&config.node_id))
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let (tx, mut rx) = unbounded_channel();
    let _state = forward(&session, keys.world_state(), tx.clone(), Input::State).await.map_err(anyhow::Error::msg)?;
    let _events = forward(&session, keys.world_events(), tx.clone(), Input::Event).await.map_err(anyhow::Error::msg)?;
    let _world = watch_world(&session, keys, tx.clone(), Input::World).await.map_err(anyhow::Error::msg)?;
    let _status = forward(&session, keys.status(), tx.clone(), Input::Status).await.map_err(anyhow::Error::msg)?;
    let (_claims, mut claim_rx) = watch_claims(&session, keys).await.map_err(anyhow::Error::msg)?;
    let mut claims = Claims::new(&config.node_id, "drive");
    let actuation_key = keys.actuation(&config.node_id);
    let publisher = StepPublisher::declare(&session, actuation_key).await.map_err(anyhow::Error::msg)?;

    tokio::pin!(shutdown);
    let mut description = tokio::select! {
        _ = &mut shutdown => return Ok(()),
        d = wait_for_world(&session, keys) => d,
    };
    let mut instances = BTreeMap::new();
    claims.load(&session, keys, &mut claim_rx).await;
    rebuild(&session, &config, &description, &tx, &mut instances, &mut claims).await;
    // Join the barrier only now, with every cmd_vel subscribed: a command sent
    // at the first step a participant sees is never lost.
    let lockstep = flotilla_protocol::lockstep::LockstepReporter::join(&session, keys, &config.node_id)
        .await
        .map_err(anyhow::Error::msg)?;
    let mut revision = description.revision;
    let mut now_ns = 0u64;
    let mut tracker = WorldTracker::default();
    let mut commands = Vec::new();
    // Unknown until the world's first status: treated as lockstep.
    let mut clock = None;
    let mut last_step = None;

    loop {
        let input = tokio::select! {
            biased;
            _ = &mut shutdown => break,
            Some(claim) = claim_rx.recv() => Input::Claim(claim),
            input = rx.recv() => match input { Some(i) => i, None => break },
        };
        match input {
            Input::Command { instance, forward_mps, yaw_rate_radps, stamp_ns } => {
                let Some(i) = instances.get_mut(&instance) else { continue };
                // Only where wall time matters: in fast mode the world is
                // steps ahead anyway, and one actuation per command (a
                // thousand robots' controllers) would only add traffic.
                let at_once =
                    stamp_ns.is_none() && clock.is_some_and(|c| matches!(c, ClockMode::Realtime | ClockMode::External));
                match (at_once, last_step) {
                    (true, Some(step)) => {
                        let Some(out) = i.drive.command_now(forward_mps, yaw_rate_radps) else { continue };
                        let actuation =
                            Actuation { node: config.node_id.clone(), step, commands: vec![i.body_command(out)] };
                        if let Err(e) = publisher.put(encode(&actuation), urgent(clock)).await {
                            tracing::warn!("cannot publish actuation: {e}");
                        }
                    }
                    _ => {
                        i.drive.command(forward_mps, yaw_rate_radps, stamp_ns.unwrap_or(now_ns));
                    }
                }
            }
            Input::Status(status) => clock = Some(status.clock),
            Input::Event(event) => {
                if event.revision > revision {
                    if let Ok(d) = fetch_description(&session, keys, Duration::from_secs(5)).await {
                        revision = d.revision;
                        description = d;
                        rebuild(&session, &config, &description, &tx, &mut instances, &mut claims).await;
                    }
                }
            }
            Input::Claim(ClaimEvent { instance, node, alive }) => {
                if !claims.seen(&instance, &node, alive) {
                    continue;
                }
                rebuild(&session, &config, &description, &tx, &mut instances, &mut claims).await;
            }
            Input::World(presence) => {
                // The drive answers every state; nothing of it needs resending.
                tracker.presence(&presence);
            }
            Input::State(state) => {
                let resync = match tracker.state(state.step) {
                    StateVerdict::Duplicate => continue, // the world re-published a state we handled
                    StateVerdict::Handle { resync } => resync,
                };
                if resync {
                    match fetch_description(&session, keys, Duration::from_secs(5)).await {
                        Ok(d) => {
                            revision = d.revision;
                            instances.clear();
                            description = d;
                            rebuild(&session, &config, &description, &tx, &mut instances, &mut claims).await;
                        }
                        Err(e) => {
                            tracing::warn!("cannot resynchronise yet: {e}");
                            tracker.resync_failed();
                            continue;
                        }
                    }
                }
                now_ns = state.time.nanos;
                last_step = Some(state.step);
                let dt_s = state.step_ns as f64 * 1e-9;
                commands.clear();
                for instance in instances.values_mut() {
                    let out = instance.drive.step(now_ns, dt_s);
                    commands.push(instance.body_command(out));
                }
                // The actuation doubles as the lockstep report (the world
                // counts it as one); without bodies to drive, report alone.
                let mut reported = false;
                if !instances.is_empty() {
                    let actuation = Actuation {
                        node: config.node_id.clone(),
                        step: state.step,
                        commands: std::mem::take(&mut commands),
                    };
                    match publisher.put(encode(&actuation), urgent(clock)).await {
                        Ok(()) => reported = true,
                        Err(e) => tracing::warn!("cannot publish actuation: {e}"),
                    }
                    commands = actuation.commands;
                }
                if !reported {
                    lockstep.done(state.step, urgent(clock)).await;
                }
            }
        }
    }
    Ok(())
}

/// Selects the DiffDrive instances to serve and (re)subscribes their cmd_vel,
/// keeping the state of instances that still exist.
async fn rebuild(
    session: &zenoh::Session,
    config: &DriveNodeConfig,
    description: &WorldDescription,
    tx: &UnboundedSender<Input>,
    instances: &mut BTreeMap<String, Instance>,
    claims: &mut Claims,
) {
    let wanted: Vec<String> = description
        .models
        .iter()
        .filter(|m| config.selection.serves(&m.name))
        .flat_map(|m| {
            m.plugins.iter().filter(|p| p.plugin_type == "DiffDrive").map(|p| claims.instance(&m.name, &p.name))
        })
        .collect();
    claims.sync(session, &config.keys, &wanted).await;
    let mut next = BTreeMap::new();
    let held = |model: &str, plugin: &str| claims.holds(&claims.instance(model, plugin));
    for Configured { model, key, body, config: drive_config, .. } in configured::<DiffDriveConfig>(description, &held) {
        if let Some(existing) = instances.remove(&key) {
            if existing.body == body {
                next.insert(key, existing);
                continue;
            }
        }
        let topic = config.keys.ros(&resolve_topic(&model.namespace, &drive_config.twist_sub));
        match subscribe_cmd_vel(session, &topic, key.clone(), tx.clone()).await {
            Ok(sub) => {
                tracing::info!("serving DiffDrive {key}: cmd_vel on {topic}");
                next.insert(key, Instance { body, drive: DiffDrive::new(&drive_config), _cmd_vel: sub });
            }
            Err(e) => tracing::error!("cannot serve {key}: {e}"),
        }
    }
    *instances = next;
}

async fn subscribe_cmd_vel(
    session: &zenoh::Session,
    topic: &str,
    instance: String,
    tx: UnboundedSender<Input>,
) -> Result<zenoh::pubsub::Subscriber<()>, String> {
    let bad = Arc::new(BadMessages::new(topic.to_string()));
    session
        .declare_subscriber(topic.to_string())
        .callback(move |sample| match decode_cmd_vel(&sample.payload().to_bytes()) {
            Ok((t, stamp_ns)) if t.linear.x.is_finite() && t.angular.z.is_finite() => {
                let _ = tx.send(Input::Command {
                    instance: instance.clone(),
                    forward_mps: t.linear.x,
                    yaw_rate_radps: t.angular.z,
                    stamp_ns,
                });
            }
            Ok((t, _)) => bad.record(&format!("non-finite command {t:?}")),
            Err(e) => bad.record(&e),
        })
        .await
        .map_err(|e| format!("cannot subscribe to {topic}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_protocol::ros::std_msgs::Header;

    #[test]
    fn cmd_vel_accepts_twist_and_twist_stamped() {
        let mut twist = Twist::default();
        twist.linear.x = 0.4;
        twist.angular.z = -0.2;
        assert_eq!(decode_cmd_vel(&ros::encode(&twist)).unwrap(), (twist, None));
        let mut stamped = TwistStamped { header: Header { frame_id: "base_link".into(), ..Default::default() }, twist };
        assert_eq!(decode_cmd_vel(&ros::encode(&stamped)).unwrap(), (twist, None), "zero stamp: unstamped");
        stamped.header.stamp.sec = 2;
        stamped.header.stamp.nanosec = 5;
        assert_eq!(decode_cmd_vel(&ros::encode(&stamped)).unwrap(), (twist, Some(2_000_000_005)));
        assert!(decode_cmd_vel(&[0, 1, 0, 0, 1, 2, 3]).is_err());
    }
}
