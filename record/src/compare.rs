//! A re-run's messages against a recording's, topic by topic and message
//! by message: the count of identical ones and, at the first that differs,
//! where (message, sim time, step), in which field, and both values.

use flotilla_messages::by_name::{visit_message, MessageVisitor};
use flotilla_messages::RosMessage;
use serde::Serialize;

/// The first message of a topic that differs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Divergence {
    /// Its place among the topic's messages, from 0.
    pub index: usize,
    /// The recorded message's sim time, ns.
    pub time_ns: u64,
    /// The step of that time.
    pub step: u64,
    /// The first field that differs (`ranges[412]`, `pose.pose.position.x`),
    /// `byte N` for a payload that does not decode, or `message` when the
    /// re-run has no such message.
    pub field: String,
    /// The recorded value.
    pub recorded: String,
    /// The re-run's value.
    pub rerun: String,
}

/// How one topic compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TopicOutcome {
    /// Its ROS name.
    pub topic: String,
    /// Its ROS type.
    pub type_name: String,
    /// Recorded messages compared.
    pub compared: usize,
    /// Of them, those the re-run gave byte for byte.
    pub identical: usize,
    /// The first that differs, if one does.
    pub divergence: Option<Divergence>,
}

/// Compares the messages `recorded` (sim time ns, payload) of `topic`, of
/// type `type_name`, with the re-run's `rerun` in order; a step is
/// `step_ns` long. Messages the re-run gave beyond the recorded ones are
/// not compared (it may have run a little further).
pub fn compare_topic(
    topic: &str,
    type_name: &str,
    step_ns: u64,
    recorded: &[(u64, Vec<u8>)],
    rerun: &[Vec<u8>],
) -> TopicOutcome {
    let mut identical = 0;
    let mut divergence = None;
    for (index, (time_ns, payload)) in recorded.iter().enumerate() {
        let step = time_ns / step_ns.max(1);
        match rerun.get(index) {
            Some(again) if again == payload => identical += 1,
            Some(again) => {
                if divergence.is_none() {
                    let (field, recorded, rerun) = first_difference(type_name, payload, again);
                    divergence = Some(Divergence { index, time_ns: *time_ns, step, field, recorded, rerun });
                }
            }
            None => {
                if divergence.is_none() {
                    divergence = Some(Divergence {
                        index,
                        time_ns: *time_ns,
                        step,
                        field: "message".into(),
                        recorded: format!("message {} of {}", index + 1, recorded.len()),
                        rerun: format!("only {} message(s)", rerun.len()),
                    });
                }
                break;
            }
        }
    }
    TopicOutcome { topic: topic.into(), type_name: type_name.into(), compared: recorded.len(), identical, divergence }
}

/// Where two payloads of `type_name` first differ: a field path and both
/// values, through the message's fields when the type is known and both
/// decode, else the first differing byte.
pub fn first_difference(type_name: &str, a: &[u8], b: &[u8]) -> (String, String, String) {
    let fields = |bytes: &[u8]| visit_message(type_name, AsJson(bytes)).and_then(Result::ok);
    if let (Some(a), Some(b)) = (fields(a), fields(b)) {
        if let Some((path, a, b)) = first_field_difference("", &a, &b) {
            return (if path.is_empty() { "message".into() } else { path }, a, b);
        }
    }
    let at = a.iter().zip(b).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
    let byte =
        |bytes: &[u8]| bytes.get(at).map_or_else(|| format!("end ({} bytes)", bytes.len()), |v| format!("{v:#04x}"));
    (format!("byte {at}"), byte(a), byte(b))
}

/// Decodes a payload into JSON through the message type named.
struct AsJson<'a>(&'a [u8]);

impl MessageVisitor for AsJson<'_> {
    type Output = Result<serde_json::Value, String>;

    fn visit<T: RosMessage + Default>(self) -> Self::Output {
        let message = T::from_cdr(self.0).map_err(|e| e.to_string())?;
        serde_json::to_value(&message).map_err(|e| e.to_string())
    }
}

/// The first leaf where `a` and `b` differ, depth first in field order.
fn first_field_difference(
    path: &str,
    a: &serde_json::Value,
    b: &serde_json::Value,
) -> Option<(String, String, String)> {
    use serde_json::Value;
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => x.iter().find_map(|(key, value)| {
            let inner = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
            match y.get(key) {
                Some(other) => first_field_difference(&inner, value, other),
                None => Some((inner, value.to_string(), "absent".into())),
            }
        }),
        (Value::Array(x), Value::Array(y)) => {
            let mut items = x.iter().zip(y).enumerate();
            items.find_map(|(i, (p, q))| first_field_difference(&format!("{path}[{i}]"), p, q)).or_else(|| {
                (x.len() != y.len()).then(|| (format!("{path}.len()"), x.len().to_string(), y.len().to_string()))
            })
        }
        _ => (a != b).then(|| (path.to_string(), a.to_string(), b.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_messages::sensor_msgs::LaserScan;

    fn scan(ranges: Vec<f32>) -> Vec<u8> {
        flotilla_messages::encode(&LaserScan { ranges, ..Default::default() })
    }

    #[test]
    fn identical_streams_have_no_divergence() {
        let recorded = vec![(0, scan(vec![1.0, 2.0])), (5_000_000, scan(vec![1.0, 2.5]))];
        let rerun: Vec<Vec<u8>> = recorded.iter().map(|(_, p)| p.clone()).collect();
        let outcome = compare_topic("/scan", "sensor_msgs/msg/LaserScan", 5_000_000, &recorded, &rerun);
        assert_eq!((outcome.compared, outcome.identical, outcome.divergence), (2, 2, None));
    }

    #[test]
    fn the_first_differing_scan_is_named_with_its_step_beam_and_both_ranges() {
        let recorded =
            vec![(0, scan(vec![1.0, 2.0])), (100_000_000, scan(vec![1.0, 2.5])), (200_000_000, scan(vec![3.0]))];
        let rerun = vec![scan(vec![1.0, 2.0]), scan(vec![1.0, 2.25]), scan(vec![3.5])];
        let outcome = compare_topic("/scan", "sensor_msgs/msg/LaserScan", 5_000_000, &recorded, &rerun);
        assert_eq!(outcome.identical, 1);
        let divergence = outcome.divergence.unwrap();
        assert_eq!((divergence.index, divergence.time_ns, divergence.step), (1, 100_000_000, 20));
        assert_eq!(
            (divergence.field.as_str(), divergence.recorded.as_str(), divergence.rerun.as_str()),
            ("ranges[1]", "2.5", "2.25")
        );
    }

    #[test]
    fn a_missing_message_and_an_undecodable_one_are_told_apart() {
        let recorded = vec![(0, scan(vec![1.0])), (5_000_000, scan(vec![1.0]))];
        let missing = compare_topic("/scan", "sensor_msgs/msg/LaserScan", 5_000_000, &recorded, &[scan(vec![1.0])]);
        assert_eq!(missing.divergence.unwrap().field, "message");
        let (field, a, b) = first_difference("no_msgs/msg/Unknown", &[1, 2, 3], &[1, 9, 3]);
        assert_eq!((field.as_str(), a.as_str(), b.as_str()), ("byte 1", "0x02", "0x09"));
    }
}
