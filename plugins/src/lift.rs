//! The `Lift` plugin: a lift serving several maps (floors) of the world, as
//! Open-RMF asks (`rmf_lift_msgs`), run by `flotilla-building`.
//!
//! The cabin is the region of the lift's body's footprints, the same on
//! every floor. Asked to a floor, the lift closes its door where it is,
//! travels `travel_time` per floor, moves the robots in the cabin to the
//! destination floor's map (a map change the world applies only if the
//! robot is still on the map it leaves, as the map-transition manager's
//! are), and opens the door there when asked to. Each floor's door is a
//! `Door` (by its `door_name`) on that floor's map, served by the same
//! `flotilla-building`.

use serde_yaml::Value;

use super::{check_rate, check_topic, PluginContext};
use crate::config::{describe, FromYaml, LoadError, Reader};
use crate::role::Role;
use crate::topic::TopicSpec;
use flotilla_messages::rmf_lift_msgs::{LiftRequest, LiftState};
use flotilla_wire::names::resolve_topic;

/// One floor a lift serves.
#[derive(Debug, Clone, PartialEq)]
pub struct Floor {
    /// Its name in requests and states (e.g. `L1`).
    pub name: String,
    /// The world's map it is.
    pub map: String,
    /// The `door_name` of the lift's door there ("" for none).
    pub door: String,
}

/// A validated `Lift` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct LiftConfig {
    /// Plugin name.
    pub name: String,
    /// The body whose footprints are the cabin.
    pub body: String,
    /// The lift's name in requests and states (the model's name unless
    /// told).
    pub lift_name: String,
    /// The floors, bottom to top.
    pub floors: Vec<Floor>,
    /// Where it stands at the start (index into `floors`).
    pub initial_floor: usize,
    /// From one floor to the next, sim s.
    pub travel_time_s: f64,
    /// Where requests arrive (`rmf_lift_msgs/LiftRequest`).
    pub requests_topic: String,
    /// Where the state goes (`rmf_lift_msgs/LiftState`).
    pub states_topic: String,
    /// How often the state is published besides its changes, Hz.
    pub state_rate_hz: f64,
}

impl super::PluginConfig for LiftConfig {
    const TYPE: &'static str = "Lift";
    const ROLES: &'static [Role] = &[LiftConfig::ROLE];
    const EXAMPLE: &'static str =
        "{type: Lift, name: lift, body: base, floors: [{name: L1, map: floor-1}, {name: L2, map: floor-2}]}";
    fn parse(entry: &Value, name: &str, ctx: &PluginContext) -> Result<LiftConfig, LoadError> {
        LiftConfig::parse(entry, name, ctx)
    }
    fn body(&self) -> &str {
        &self.body
    }
    fn topics(&self, namespace: &str) -> Vec<TopicSpec> {
        vec![
            TopicSpec::subscribe::<LiftRequest>(resolve_topic(namespace, &self.requests_topic)),
            TopicSpec::publish::<LiftState>(resolve_topic(namespace, &self.states_topic)),
        ]
    }
}

impl LiftConfig {
    /// `flotilla-building` runs every lift, with its doors.
    pub const ROLE: Role = Role::actuator("Lift", "flotilla-building", "building");

    /// Parses and validates a `Lift` entry. That each floor's map is one of
    /// the world's, and its door a `Door` on it, is checked when the world
    /// loads (`flotilla_world_file`), where the maps are known.
    pub fn parse(entry: &Value, name: &str, ctx: &PluginContext) -> Result<LiftConfig, LoadError> {
        let r = ctx.reader(entry, name)?;
        let floors = floors(&r)?;
        let initial: Option<String> = r.maybe("initial_floor")?;
        let initial_floor = match initial {
            None => 0,
            Some(initial) => floors
                .iter()
                .position(|f| f.name == initial)
                .ok_or_else(|| r.error(format!("\"initial_floor\" {initial:?} is not one of the lift's floors")))?,
        };
        let config = LiftConfig {
            name: name.to_string(),
            body: r.req("body")?,
            lift_name: r.opt("lift_name", ctx.model.to_string())?,
            floors,
            initial_floor,
            travel_time_s: r.opt("travel_time", 5.0)?,
            requests_topic: r.opt("requests_topic", "/lift_requests".to_string())?,
            states_topic: r.opt("states_topic", "/lift_states".to_string())?,
            state_rate_hz: r.opt("state_rate", 1.0)?,
        };
        r.finish()?;
        ctx.check_body(&r, &config.body)?;
        if !(config.travel_time_s.is_finite() && config.travel_time_s > 0.0) {
            return Err(
                r.error(format!("\"travel_time\" must be a positive number of s, got {}", config.travel_time_s))
            );
        }
        if config.lift_name.is_empty() {
            return Err(r.error("\"lift_name\" must not be empty"));
        }
        check_topic(&r, "requests_topic", &config.requests_topic)?;
        check_topic(&r, "states_topic", &config.states_topic)?;
        check_rate(&r, "state_rate", config.state_rate_hz)?;
        Ok(config)
    }

    /// The floor of that name.
    pub fn floor(&self, name: &str) -> Option<usize> {
        self.floors.iter().position(|f| f.name == name)
    }
}

/// `floors: [{name: L1, map: floor-1, door: lift_door_1}, …]`: at least
/// two, names and maps unique.
fn floors(r: &Reader) -> Result<Vec<Floor>, LoadError> {
    let raw: Vec<Value> = r.list("floors", Some(2), None)?;
    let mut floors: Vec<Floor> = Vec::with_capacity(raw.len());
    for (i, entry) in raw.iter().enumerate() {
        let bad = |why: String| r.error(format!("\"floors\" index {i}: {why}"));
        let Value::Mapping(fields) = entry else {
            return Err(bad(format!("must be {{name, map, door}}, got {}", describe(entry))));
        };
        let text = |key: &str, required: bool| -> Result<String, LoadError> {
            match fields.get(key) {
                Some(v) => String::from_yaml(v).map_err(|e| bad(format!("\"{key}\" {e}"))),
                None if required => Err(bad(format!("\"{key}\" is required"))),
                None => Ok(String::new()),
            }
        };
        if let Some(key) = fields.keys().filter_map(Value::as_str).find(|k| !["name", "map", "door"].contains(k)) {
            return Err(bad(format!("unknown entry \"{key}\" (name, map, door)")));
        }
        let floor = Floor { name: text("name", true)?, map: text("map", true)?, door: text("door", false)? };
        if floors.iter().any(|f| f.name == floor.name) {
            return Err(bad(format!("floor {:?} is named twice", floor.name)));
        }
        if floors.iter().any(|f| f.map == floor.map) {
            return Err(bad(format!("map {:?} is two floors", floor.map)));
        }
        floors.push(floor);
    }
    Ok(floors)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<LiftConfig, LoadError> {
        super::super::parse_in_test_model::<LiftConfig>(text, "lift", &["l".to_string()])
    }

    const TWO: &str = "floors: [{name: L1, map: f1, door: d1}, {name: L2, map: f2, door: d2}]";

    #[test]
    fn a_lift_of_two_floors_with_its_defaults() {
        let lift = parse(&format!("{{body: base, {TWO}}}")).unwrap();
        assert_eq!(lift.floors.len(), 2);
        assert_eq!(lift.floors[1], Floor { name: "L2".into(), map: "f2".into(), door: "d2".into() });
        assert_eq!((lift.lift_name.as_str(), lift.initial_floor, lift.travel_time_s), ("robot1", 0, 5.0));
        assert_eq!((lift.requests_topic.as_str(), lift.states_topic.as_str()), ("/lift_requests", "/lift_states"));
        let high = parse(&format!("{{body: base, initial_floor: L2, {TWO}}}")).unwrap();
        assert_eq!((high.initial_floor, high.floor("L1")), (1, Some(0)));
    }

    #[test]
    fn bad_entries_are_refused_naming_the_field() {
        let error = |text: &str| parse(text).unwrap_err().to_string();
        assert!(error("{body: base, floors: [{name: L1, map: f1}]}").contains("floors"));
        assert!(error("{body: base, floors: [{name: L1, map: f1}, {name: L1, map: f2}]}").contains("named twice"));
        assert!(error("{body: base, floors: [{name: L1, map: f1}, {name: L2, map: f1}]}").contains("two floors"));
        assert!(error("{body: base, floors: [{name: L1}, {name: L2, map: f2}]}").contains("\"map\" is required"));
        assert!(error("{body: base, floors: [{name: L1, map: f1, level: 1}, {name: L2, map: f2}]}").contains("level"));
        assert!(error(&format!("{{body: base, initial_floor: L9, {TWO}}}")).contains("initial_floor"));
        assert!(error(&format!("{{body: base, travel_time: 0, {TWO}}}")).contains("travel_time"));
        assert!(error(&format!("{{body: nobody, {TWO}}}")).contains("nobody"));
    }
}
