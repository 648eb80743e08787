//! The `Door` plugin: a door leaf that opens and closes when asked, as
//! Open-RMF's door adapters ask (`rmf_door_msgs`), moved by
//! `flotilla-building`.
//!
//! The leaf is one body of the model, placed (see
//! [`PluginConfig::PLACES_BODY`](crate::PluginConfig::PLACES_BODY)): the
//! world moves it exactly as commanded and robots cannot push it, so a
//! closed door stops them and lasers see it. A sliding leaf moves `travel`
//! along its own x axis; a swinging leaf turns `swing` about its body's
//! origin, the hinge. Either takes `open_time` from closed to open, at an
//! even pace, and back. Requests arrive on `requests_topic`
//! (`rmf_door_msgs/DoorRequest`, for the door named `door_name`), the
//! state goes out on `states_topic` (`rmf_door_msgs/DoorState`: closed,
//! moving or open) at `state_rate` and whenever it changes, as Open-RMF's
//! simulated doors do. With `auto_open` the door also opens while a robot
//! is that close to the closed leaf's centre, and closes `hold_open` after
//! the last one has gone, unless it was asked to stay open.

use serde_yaml::Value;

use super::{check_rate, check_topic, PluginContext};
use crate::config::LoadError;
use crate::role::Role;
use crate::topic::TopicSpec;
use flotilla_messages::rmf_door_msgs::{DoorRequest, DoorState};
use flotilla_wire::names::resolve_topic;

/// How the leaf moves from closed to open.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DoorMotion {
    /// Along the leaf's own x axis by this much, m (negative: towards −x).
    Sliding {
        /// How far, m.
        travel_m: f64,
    },
    /// About the body's origin (the hinge) by this much, rad
    /// (counter-clockwise when positive).
    Swinging {
        /// How far, rad.
        swing_rad: f64,
    },
}

/// A validated `Door` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct DoorConfig {
    /// Plugin name.
    pub name: String,
    /// The leaf.
    pub body: String,
    /// The door's name in requests and states (the model's name unless
    /// told).
    pub door_name: String,
    /// How the leaf opens.
    pub motion: DoorMotion,
    /// From closed to open (and back), sim s.
    pub open_time_s: f64,
    /// Whether the door is open at the start.
    pub start_open: bool,
    /// Opens while a robot is this close to the closed leaf's centre, m
    /// (0: never by itself).
    pub auto_open_m: f64,
    /// How long an automatic opening lasts after the last robot left, s.
    pub hold_open_s: f64,
    /// Where requests arrive (`rmf_door_msgs/DoorRequest`).
    pub requests_topic: String,
    /// Where the state goes (`rmf_door_msgs/DoorState`).
    pub states_topic: String,
    /// How often the state is published besides its changes, Hz.
    pub state_rate_hz: f64,
}

impl super::PluginConfig for DoorConfig {
    const TYPE: &'static str = "Door";
    const ROLES: &'static [Role] = &[DoorConfig::ROLE];
    const PLACES_BODY: bool = true;
    const EXAMPLE: &'static str = "{type: Door, name: door, body: base, motion: sliding, travel: 0.9}";
    fn parse(entry: &Value, name: &str, ctx: &PluginContext) -> Result<DoorConfig, LoadError> {
        DoorConfig::parse(entry, name, ctx)
    }
    fn body(&self) -> &str {
        &self.body
    }
    fn topics(&self, namespace: &str) -> Vec<TopicSpec> {
        vec![
            TopicSpec::subscribe::<DoorRequest>(resolve_topic(namespace, &self.requests_topic)),
            TopicSpec::publish::<DoorState>(resolve_topic(namespace, &self.states_topic)),
        ]
    }
}

impl DoorConfig {
    /// `flotilla-building` moves every door's leaf.
    pub const ROLE: Role = Role::actuator("Door", "flotilla-building", "building");

    /// Parses and validates a `Door` entry.
    pub fn parse(entry: &Value, name: &str, ctx: &PluginContext) -> Result<DoorConfig, LoadError> {
        let r = ctx.reader(entry, name)?;
        let motion: String = r.req("motion")?;
        let motion = match motion.as_str() {
            "sliding" => {
                r.raw("swing").map_or(Ok(()), |_| Err(r.error("\"swing\" is for a swinging door")))?;
                DoorMotion::Sliding { travel_m: r.req("travel")? }
            }
            "swinging" => {
                r.raw("travel").map_or(Ok(()), |_| Err(r.error("\"travel\" is for a sliding door")))?;
                DoorMotion::Swinging { swing_rad: r.req::<f64>("swing")?.to_radians() }
            }
            other => return Err(r.error(format!("\"motion\" must be sliding or swinging, got \"{other}\""))),
        };
        let config = DoorConfig {
            name: name.to_string(),
            body: r.req("body")?,
            door_name: r.opt("door_name", ctx.model.to_string())?,
            motion,
            open_time_s: r.opt("open_time", 2.0)?,
            start_open: r.opt("start_open", false)?,
            auto_open_m: r.opt("auto_open", 0.0)?,
            hold_open_s: r.opt("hold_open", 2.0)?,
            requests_topic: r.opt("requests_topic", "/door_requests".to_string())?,
            states_topic: r.opt("states_topic", "/door_states".to_string())?,
            state_rate_hz: r.opt("state_rate", 1.0)?,
        };
        r.finish()?;
        ctx.check_body(&r, &config.body)?;
        let (key, amount, unit) = match config.motion {
            DoorMotion::Sliding { travel_m } => ("travel", travel_m, "m"),
            DoorMotion::Swinging { swing_rad } => ("swing", swing_rad.to_degrees(), "degrees"),
        };
        if !(amount.is_finite() && amount != 0.0) {
            return Err(r.error(format!("\"{key}\" must be a non-zero number of {unit}, got {amount}")));
        }
        if let DoorMotion::Swinging { swing_rad } = config.motion {
            if swing_rad.abs() > std::f64::consts::PI {
                return Err(r.error(format!("\"swing\" must be within ±180 degrees, got {}", swing_rad.to_degrees())));
            }
        }
        if !(config.open_time_s.is_finite() && config.open_time_s > 0.0) {
            return Err(r.error(format!("\"open_time\" must be a positive number of s, got {}", config.open_time_s)));
        }
        for (key, value, unit) in [("auto_open", config.auto_open_m, "m"), ("hold_open", config.hold_open_s, "s")] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(r.error(format!("\"{key}\" must be a number of {unit} at least 0, got {value}")));
            }
        }
        if config.door_name.is_empty() {
            return Err(r.error("\"door_name\" must not be empty"));
        }
        check_topic(&r, "requests_topic", &config.requests_topic)?;
        check_topic(&r, "states_topic", &config.states_topic)?;
        check_rate(&r, "state_rate", config.state_rate_hz)?;
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<DoorConfig, LoadError> {
        super::super::parse_in_test_model::<DoorConfig>(text, "door", &["l".to_string()])
    }

    #[test]
    fn a_sliding_and_a_swinging_door_with_their_defaults() {
        let sliding = parse("{body: base, motion: sliding, travel: -0.9}").unwrap();
        assert_eq!(sliding.motion, DoorMotion::Sliding { travel_m: -0.9 });
        assert_eq!(sliding.door_name, "robot1", "the model's name");
        assert_eq!((sliding.open_time_s, sliding.start_open, sliding.auto_open_m), (2.0, false, 0.0));
        assert_eq!(
            (sliding.requests_topic.as_str(), sliding.states_topic.as_str()),
            ("/door_requests", "/door_states")
        );
        assert_eq!(sliding.state_rate_hz, 1.0);
        let swinging = parse("{body: base, motion: swinging, swing: 90, door_name: main, auto_open: 1.5}").unwrap();
        assert_eq!(swinging.motion, DoorMotion::Swinging { swing_rad: std::f64::consts::FRAC_PI_2 });
        assert_eq!((swinging.door_name.as_str(), swinging.auto_open_m), ("main", 1.5));
    }

    #[test]
    fn bad_entries_are_refused_naming_the_field() {
        let error = |text: &str| parse(text).unwrap_err().to_string();
        assert!(error("{body: base, travel: 1}").contains("motion"));
        assert!(error("{body: base, motion: rolling, travel: 1}").contains("sliding or swinging"));
        assert!(error("{body: base, motion: sliding}").contains("travel"));
        assert!(error("{body: base, motion: sliding, travel: 0}").contains("\"travel\" must be a non-zero"));
        assert!(error("{body: base, motion: sliding, travel: 1, swing: 90}").contains("\"swing\" is for a swinging"));
        assert!(error("{body: base, motion: swinging, swing: 200}").contains("±180"));
        assert!(error("{body: base, motion: sliding, travel: 1, open_time: 0}").contains("open_time"));
        assert!(error("{body: base, motion: sliding, travel: 1, auto_open: -1}").contains("auto_open"));
        assert!(error("{body: base, motion: sliding, travel: 1, requests_topic: 'a b'}").contains("requests_topic"));
        assert!(error("{body: nobody, motion: sliding, travel: 1}").contains("nobody"));
        assert!(error("{body: base, motion: sliding, travel: 1, speed: 2}").contains("speed"));
    }
}
