//! Flatland's `Tween` plugin parameters: a body moved from its start pose by
//! `delta` and back, along an easing curve.

use serde_yaml::Value;

use super::{check_topic, PluginContext};
use crate::config::LoadError;
use crate::role::Role;
use crate::topic::TopicSpec;
use flotilla_messages::std_msgs::Bool;
use flotilla_wire::geometry::Pose2;
use flotilla_wire::names::resolve_topic;

/// How the tween repeats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TweenMode {
    /// Back and forth between the start and the end.
    Yoyo,
    /// To the end, then stop.
    Once,
    /// To the end, then back to the start at once, again and again.
    Loop,
    /// Towards the end while `trigger_topic` last said true, else the start.
    Trigger,
}

/// The easing curves of Flatland (tweeny's, easings.net's).
pub const EASINGS: [&str; 28] = [
    "linear",
    "quadraticIn",
    "quadraticOut",
    "quadraticInOut",
    "cubicIn",
    "cubicOut",
    "cubicInOut",
    "quarticIn",
    "quarticOut",
    "quarticInOut",
    "quinticIn",
    "quinticOut",
    "quinticInOut",
    "exponentialIn",
    "exponentialOut",
    "exponentialInOut",
    "circularIn",
    "circularOut",
    "circularInOut",
    "backIn",
    "backOut",
    "backInOut",
    "elasticIn",
    "elasticOut",
    "elasticInOut",
    "bounceIn",
    "bounceOut",
    "bounceInOut",
];

/// A validated `Tween` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct TweenConfig {
    /// Plugin name.
    pub name: String,
    /// The body moved.
    pub body: String,
    /// How it repeats.
    pub mode: TweenMode,
    /// The easing curve, one of [`EASINGS`].
    pub easing: String,
    /// One way, sim seconds.
    pub duration_s: f64,
    /// The end pose relative to the start (x m, y m, angle rad).
    pub delta: Pose2,
    /// The `std_msgs/Bool` topic of the trigger mode ("" for none, as
    /// Flatland: it then never triggers).
    pub trigger_topic: String,
}

impl super::PluginConfig for TweenConfig {
    const TYPE: &'static str = "Tween";
    const ROLES: &'static [Role] = &[TweenConfig::ROLE];
    const PLACES_BODY: bool = true;
    const EXAMPLE: &'static str =
        "{type: Tween, name: tween, body: base, delta: [2, 0, 0], trigger_topic: go, mode: trigger}";
    fn parse(entry: &Value, name: &str, ctx: &PluginContext) -> Result<TweenConfig, LoadError> {
        TweenConfig::parse(entry, name, ctx)
    }
    fn body(&self) -> &str {
        &self.body
    }
    fn topics(&self, namespace: &str) -> Vec<TopicSpec> {
        match self.trigger_topic.as_str() {
            "" => Vec::new(),
            topic => vec![TopicSpec::subscribe::<Bool>(resolve_topic(namespace, topic))],
        }
    }
}

impl TweenConfig {
    /// `flotilla-drive` moves the body, as it drives robots.
    pub const ROLE: Role = Role::actuator("Tween", "flotilla-drive", "drive");

    /// Parses and validates a `Tween` entry (Flatland's defaults: yoyo,
    /// linear, 1 s, no delta, no trigger topic).
    pub fn parse(entry: &Value, name: &str, ctx: &PluginContext) -> Result<TweenConfig, LoadError> {
        let r = ctx.reader(entry, name)?;
        let mode: String = r.opt("mode", "yoyo".to_string())?;
        let easing: String = r.opt("easing", "linear".to_string())?;
        let [x, y, theta] = r.array::<3>("delta", Some([0.0; 3]))?;
        let config = TweenConfig {
            name: name.to_string(),
            body: r.req("body")?,
            mode: match mode.as_str() {
                "yoyo" => TweenMode::Yoyo,
                "once" => TweenMode::Once,
                "loop" => TweenMode::Loop,
                "trigger" => TweenMode::Trigger,
                _ => return Err(r.error(format!("Mode {mode} does not exist (yoyo, once, loop or trigger)"))),
            },
            duration_s: r.opt("duration", 1.0)?,
            delta: Pose2::new(x, y, theta),
            trigger_topic: r.opt("trigger_topic", String::new())?,
            easing,
        };
        r.finish()?;
        ctx.check_body(&r, &config.body)?;
        if !EASINGS.contains(&config.easing.as_str()) {
            return Err(r.error(format!("Easing {} does not exist (linear, quadraticIn, ...)", config.easing)));
        }
        if !(config.duration_s.is_finite() && config.duration_s > 0.0) {
            return Err(
                r.error(format!("\"duration\" must be a positive number of seconds, got {}", config.duration_s))
            );
        }
        if !config.delta.is_finite() {
            return Err(r.error(format!("\"delta\" must be finite, got [{x}, {y}, {theta}]")));
        }
        if !config.trigger_topic.is_empty() {
            check_topic(&r, "trigger_topic", &config.trigger_topic)?;
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<TweenConfig, LoadError> {
        super::super::parse_in_test_model::<TweenConfig>(text, "tween", &["l".to_string()])
    }

    #[test]
    fn flatland_s_walker_and_its_defaults() {
        let walker =
            parse("{body: base, delta: [5, 3, 3.5], duration: 2.0, mode: yoyo, easing: quadraticInOut}").unwrap();
        assert_eq!((walker.mode, walker.easing.as_str(), walker.duration_s), (TweenMode::Yoyo, "quadraticInOut", 2.0));
        assert_eq!(walker.delta, Pose2::new(5.0, 3.0, 3.5));
        let plain = parse("{body: base}").unwrap();
        assert_eq!((plain.mode, plain.easing.as_str(), plain.duration_s), (TweenMode::Yoyo, "linear", 1.0));
        assert_eq!(plain.trigger_topic, "");
    }

    #[test]
    fn bad_entries_are_refused_with_flatland_s_words() {
        let error = |text: &str| parse(text).unwrap_err().to_string();
        assert!(error("{body: base, mode: pingpong}").contains("Mode pingpong does not exist"));
        assert!(error("{body: base, easing: wobbly}").contains("Easing wobbly does not exist"));
        assert!(error("{body: base, duration: 0}").contains("duration"));
        assert!(error("{body: nobody}").contains("nobody"));
        assert!(error("{body: base, speed: 2}").contains("speed"));
    }
}
