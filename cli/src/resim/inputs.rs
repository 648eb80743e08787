//! The recorded inputs a re-run feeds ([`Input`]): messages from outside
//! (a `cmd_vel`, as its node took it) and the world's control log, each
//! at the state it went out at, and how each is fed again.

use anyhow::{bail, Context};
use flotilla_messages::geometry_msgs::{decode_cmd_vel, TwistStamped};
use flotilla_messages::std_msgs::{Header, StdString};
use flotilla_plugins::channels::{ControlLogEntry, LoggedRequest, CONTROL_LOG_TOPIC};
use flotilla_wire::time::SimTime;
use flotilla_wire::Keys;

use super::run::STATE_TIMEOUT;
use super::Message;

/// An input to feed: when, and what.
pub(super) struct Input {
    /// The state at whose time it goes out, ns.
    pub(super) due_ns: u64,
    pub(super) fed: Fed,
}

/// How an input is fed.
pub(super) enum Fed {
    /// A message published on its topic (a `cmd_vel`).
    Message { topic: String, payload: Vec<u8> },
    /// A request the world's control log holds, asked again.
    Asked(LoggedRequest),
}

impl Input {
    /// The recorded inputs in the order they go out: each message at the
    /// state its node had answered last when it came (which is when the
    /// controller's command reached it, whatever its stamp says), an
    /// unstamped command stamped with that state (see [`as_taken`]); each
    /// entry of the world's control log at the state it was applied at.
    pub(super) fn in_order(recorded: Vec<Message>, step_ns: u64) -> Result<Vec<Input>, String> {
        let mut inputs = Vec::with_capacity(recorded.len());
        for m in recorded {
            if m.topic == CONTROL_LOG_TOPIC {
                let text = flotilla_messages::decode::<StdString>(&m.payload).map_err(|e| e.to_string())?.data;
                let entry = ControlLogEntry::from_json(&text)?;
                inputs.push(Input { due_ns: entry.step * step_ns, fed: Fed::Asked(entry.request) });
            } else {
                let payload = as_taken(&m.payload, m.time_ns, step_ns);
                inputs.push(Input { due_ns: m.time_ns, fed: Fed::Message { topic: m.topic, payload } });
            }
        }
        inputs.sort_by_key(|input| input.due_ns);
        Ok(inputs)
    }

    /// The topic it is published on, if it is a message.
    pub(super) fn topic(&self) -> Option<&String> {
        match &self.fed {
            Fed::Message { topic, .. } => Some(topic),
            Fed::Asked(_) => None,
        }
    }
}

/// Asks the world again what its control log says was asked: a control
/// request or a ROS service call, answered before the state is reported,
/// so that the world applies it where it did. A refusal is told (the
/// recorded request succeeded); the outputs then show what it changed.
pub(super) async fn ask_again(
    session: &zenoh::Session,
    keys: &Keys,
    request: &LoggedRequest,
    step: u64,
) -> anyhow::Result<()> {
    match request {
        LoggedRequest::Control(request) => {
            let verb = request.verb();
            let reply = flotilla_node_kit::client::call_control(session, keys, verb, request, STATE_TIMEOUT)
                .await
                .with_context(|| format!("control/{verb} at step {step}"))?;
            if !reply.success {
                eprintln!("flotilla resim: at step {step}, the world refused {request:?} again: {}", reply.message);
            }
        }
        LoggedRequest::Service { name, request_cdr } => {
            let replies = session
                .get(keys.ros(name))
                .payload(request_cdr.clone())
                .timeout(STATE_TIMEOUT)
                .await
                .map_err(|e| anyhow::anyhow!("{name} at step {step}: {e}"))?;
            match replies.recv_async().await {
                Ok(reply) if reply.result().is_ok() => {}
                Ok(reply) => {
                    let why =
                        reply.result().err().map(|e| e.payload().try_to_string().unwrap_or_default().into_owned());
                    eprintln!("flotilla resim: at step {step}, {name} failed again: {}", why.unwrap_or_default());
                }
                Err(_) => bail!("{name} at step {step}: no answer within {} s", STATE_TIMEOUT.as_secs()),
            }
        }
    }
    Ok(())
}

/// An input as its node took it, stamped so that it takes effect where it
/// did however it travels: an unstamped command (a plain `Twist`, or a
/// `TwistStamped` stamped zero, which a drive takes the same way),
/// received by the drive after answering the state at `time_ns`, goes out
/// stamped with that time; so does a stamped command that reached its
/// drive only after a later state than its stamp's (a controller's last
/// command, whose token's going overtook it), which the drive then applied
/// from the step after that state. Anything else goes out as it was.
fn as_taken(payload: &[u8], time_ns: u64, step_ns: u64) -> Vec<u8> {
    let stamp = SimTime::at_step(time_ns / step_ns.max(1), step_ns).to_ros();
    match decode_cmd_vel(payload) {
        Ok((twist, None)) => {
            flotilla_messages::encode(&TwistStamped { header: Header { stamp, frame_id: String::new() }, twist })
        }
        Ok((_, Some(stamp_ns))) if stamp_ns < time_ns => match flotilla_messages::decode::<TwistStamped>(payload) {
            Ok(mut late) => {
                late.header.stamp = stamp;
                flotilla_messages::encode(&late)
            }
            Err(_) => payload.to_vec(),
        },
        _ => payload.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_goes_out_stamped_with_the_state_it_came_after_unless_it_came_in_time_and_anything_else_as_it_was() {
        let mut twist = flotilla_messages::geometry_msgs::Twist::default();
        twist.linear.x = 0.4;
        let stamped = as_taken(&flotilla_messages::encode(&twist), 35_000_000, 5_000_000);
        let (again, stamp_ns) = decode_cmd_vel(&stamped).unwrap();
        assert_eq!((again.linear.x, stamp_ns), (0.4, Some(35_000_000)));
        // Stamped: it says itself when it takes effect.
        let mut stamped = TwistStamped::default();
        stamped.header.stamp = SimTime::at_step(9, 5_000_000).to_ros();
        let already = flotilla_messages::encode(&stamped);
        assert_eq!(as_taken(&already, 35_000_000, 5_000_000), already);
        // Stamped zero means unstamped to a drive: stamped as a Twist is.
        let zero = as_taken(&flotilla_messages::encode(&TwistStamped::default()), 35_000_000, 5_000_000);
        assert_eq!(decode_cmd_vel(&zero).unwrap().1, Some(35_000_000));
        // Stamped, but taken after a later state: it took effect after that.
        let mut late = TwistStamped::default();
        late.header.stamp = SimTime::at_step(5, 5_000_000).to_ros();
        late.header.frame_id = "base_link".into();
        let retaken = as_taken(&flotilla_messages::encode(&late), 35_000_000, 5_000_000);
        assert_eq!(decode_cmd_vel(&retaken).unwrap().1, Some(35_000_000));
        assert_eq!(flotilla_messages::decode::<TwistStamped>(&retaken).unwrap().header.frame_id, "base_link");
        let other = flotilla_messages::encode(&flotilla_messages::std_msgs::Bool { data: true });
        assert_eq!(as_taken(&other, 0, 5_000_000), other);
    }
}
