//! The `Pedestrian` plugin: a person (or a scripted vehicle) walking a list
//! of waypoints, moved by `flotilla-crowd`.
//!
//! A social pedestrian follows Helbing and Molnár's social force model
//! ("Social force model for pedestrian dynamics", Phys. Rev. E 51, 1995):
//! it accelerates towards its desired velocity with a relaxation time, is
//! pushed away from other people (an elliptical potential that looks one
//! step of 2 s ahead along their walk), from walls and from robots, and
//! weighs what is behind it less than what it sees. A scripted agent (a
//! forklift, a trolley) follows its waypoints at a fixed speed and ignores
//! every force. The body is placed (see
//! [`PluginConfig::PLACES_BODY`](crate::PluginConfig::PLACES_BODY)): the world
//! moves it exactly as commanded, so lasers, sonar and bumpers meet it where
//! the crowd put it.

use serde_yaml::Value;

use super::PluginContext;
use crate::config::{describe, FromYaml, LoadError, Reader};
use crate::role::Role;
use crate::topic::TopicSpec;
use flotilla_messages::people_msgs::People;
use flotilla_messages::visualization_msgs::MarkerArray;
use flotilla_wire::description::ModelDescription;

/// How an agent moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behaviour {
    /// Social forces towards the next waypoint.
    Social,
    /// Along the waypoints at `desired_speed`, ignoring everyone.
    Scripted,
}

/// One place on an agent's way.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Waypoint {
    /// World x, m.
    pub x_m: f64,
    /// World y, m.
    pub y_m: f64,
    /// How long the agent stands there once it arrives, s.
    pub pause_s: f64,
}

/// When and where an agent that waits offstage comes on (a spawn
/// source's): it waits at `offstage`, out of every sensor's reach, until
/// `first_s`, appears at `at`, walks its waypoints, and when a walk that is
/// not cyclic ends goes offstage again, to come back at the next of
/// `first_s + k·every_s` (never, without `every_s`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Release {
    /// Where it appears (x m, y m, heading rad).
    pub at: [f64; 3],
    /// Where it waits (x m, y m): [`OFFSTAGE_M`] south of `at` unless told.
    pub offstage: [f64; 2],
    /// Its first appearance, sim s.
    pub first_s: f64,
    /// The period of its appearances, s.
    pub every_s: Option<f64>,
}

/// A validated `Pedestrian` entry. Strengths are accelerations (the
/// model's forces per unit mass), as in Helbing and Molnár.
#[derive(Debug, Clone, PartialEq)]
pub struct PedestrianConfig {
    /// Plugin name.
    pub name: String,
    /// The body moved.
    pub body: String,
    /// Social or scripted.
    pub behaviour: Behaviour,
    /// The way, in the world frame.
    pub waypoints: Vec<Waypoint>,
    /// After the last waypoint, on to the first again (else stand there).
    pub cyclic: bool,
    /// A waypoint is reached within this distance of its centre, m.
    pub waypoint_radius_m: f64,
    /// The speed the agent wants to walk at, m/s (Helbing and Molnár's
    /// mean: 1.34).
    pub desired_speed_mps: f64,
    /// It never walks faster, m/s (1.3 × the desired speed).
    pub max_speed_mps: f64,
    /// How fast it returns to its desired velocity, s (0.5).
    pub relaxation_time_s: f64,
    /// The radius of the person for the forces, m (0.25).
    pub radius_m: f64,
    /// Strength of another person's repulsion, m²/s² (V⁰ = 2.1).
    pub agent_strength: f64,
    /// Range of another person's repulsion, m (σ = 0.3).
    pub agent_range_m: f64,
    /// Strength of a wall's repulsion, m²/s² (U⁰ = 10).
    pub wall_strength: f64,
    /// Range of a wall's repulsion, m (R = 0.2).
    pub wall_range_m: f64,
    /// Half of the field of view, rad (100°: 2φ = 200°).
    pub view_half_angle_rad: f64,
    /// Weight of forces from outside the field of view (c = 0.5).
    pub out_of_view_weight: f64,
    /// Whether robots push the agent away (pedsim's and HuNavSim's
    /// `robot_mode` off when false: robots pass unnoticed; other models'
    /// bodies still push).
    pub sees_robots: bool,
    /// Robots and other models' bodies farther than this are not seen, m (3).
    pub robot_sight_m: f64,
    /// Strength of a robot's (or another body's) repulsion, m²/s² (as
    /// another person's).
    pub robot_strength: f64,
    /// Range of a robot's (or another body's) repulsion, m (as another
    /// person's).
    pub robot_range_m: f64,
    /// The group the agent walks with ("" for none): members keep
    /// together and move on from a waypoint when the group has reached it.
    pub group: String,
    /// Strength of the pull back to the group's centre, m/s² (1).
    pub group_strength: f64,
    /// Standard deviation of a random push drawn at every update, m/s²
    /// (0: none), from a stream seeded by the world's seed and the agent.
    pub noise: f64,
    /// Updates per sim second, Hz (50).
    pub update_rate_hz: f64,
    /// When it comes on stage, for an agent that waits offstage (none:
    /// on stage from the start).
    pub release: Option<Release>,
}

impl super::PluginConfig for PedestrianConfig {
    const TYPE: &'static str = "Pedestrian";
    const ROLES: &'static [Role] = &[PedestrianConfig::ROLE];
    const PLACES_BODY: bool = true;
    const EXAMPLE: &'static str = "{type: Pedestrian, name: walk, body: base, waypoints: [[1, 0], [4, 0, 2.0]]}";
    fn parse(entry: &Value, name: &str, ctx: &PluginContext) -> Result<PedestrianConfig, LoadError> {
        PedestrianConfig::parse(entry, name, ctx)
    }
    fn body(&self) -> &str {
        &self.body
    }
    /// Every agent is drawn on the crowd's one marker topic and listed on
    /// its one people topic.
    fn topics(&self, _namespace: &str) -> Vec<TopicSpec> {
        vec![TopicSpec::publish::<MarkerArray>(MARKERS_TOPIC), TopicSpec::publish::<People>(PEOPLE_TOPIC)]
    }
}

/// Where `flotilla-crowd` publishes its agents for rviz2.
pub const MARKERS_TOPIC: &str = "/crowd/markers";

/// Where it lists every agent's id, pose and velocity, as people trackers
/// do for Nav2's social costmap layers and people-aware planners.
pub const PEOPLE_TOPIC: &str = "/people";

/// How often it publishes both, per sim second, Hz.
pub const TOPICS_RATE_HZ: f64 = 10.0;

impl PedestrianConfig {
    /// `flotilla-crowd` walks every agent.
    pub const ROLE: Role = Role::actuator("Pedestrian", "flotilla-crowd", "crowd");

    /// Parses and validates a `Pedestrian` entry.
    pub fn parse(entry: &Value, name: &str, ctx: &PluginContext) -> Result<PedestrianConfig, LoadError> {
        let r = ctx.reader(entry, name)?;
        let behaviour: String = r.opt("behaviour", "social".to_string())?;
        let desired_speed_mps = r.opt("desired_speed", 1.34)?;
        let agent_strength = r.opt("agent_strength", 2.1)?;
        let agent_range_m = r.opt("agent_range", 0.3)?;
        let config = PedestrianConfig {
            name: name.to_string(),
            body: r.req("body")?,
            behaviour: match behaviour.as_str() {
                "social" => Behaviour::Social,
                "scripted" => Behaviour::Scripted,
                other => return Err(r.error(format!("\"behaviour\" must be social or scripted, got \"{other}\""))),
            },
            waypoints: waypoints(&r)?,
            cyclic: r.opt("cyclic", true)?,
            waypoint_radius_m: r.opt("waypoint_radius", 0.5)?,
            desired_speed_mps,
            max_speed_mps: r.opt("max_speed", 1.3 * desired_speed_mps)?,
            relaxation_time_s: r.opt("relaxation_time", 0.5)?,
            radius_m: r.opt("radius", 0.25)?,
            agent_strength,
            agent_range_m,
            wall_strength: r.opt("wall_strength", 10.0)?,
            wall_range_m: r.opt("wall_range", 0.2)?,
            view_half_angle_rad: r.opt("view_angle", 200.0)?.to_radians() / 2.0,
            out_of_view_weight: r.opt("out_of_view_weight", 0.5)?,
            sees_robots: r.opt("sees_robots", true)?,
            robot_sight_m: r.opt("robot_sight", 3.0)?,
            robot_strength: r.opt("robot_strength", agent_strength)?,
            robot_range_m: r.opt("robot_range", agent_range_m)?,
            group: r.opt("group", String::new())?,
            group_strength: r.opt("group_strength", 1.0)?,
            noise: r.opt("noise", 0.0)?,
            update_rate_hz: r.opt("update_rate", 50.0)?,
            release: release(&r)?,
        };
        r.finish()?;
        ctx.check_body(&r, &config.body)?;
        config.check(&r)?;
        Ok(config)
    }

    fn check(&self, r: &Reader) -> Result<(), LoadError> {
        let positive = [
            ("waypoint_radius", self.waypoint_radius_m, "m"),
            ("desired_speed", self.desired_speed_mps, "m/s"),
            ("max_speed", self.max_speed_mps, "m/s"),
            ("relaxation_time", self.relaxation_time_s, "s"),
            ("radius", self.radius_m, "m"),
            ("agent_range", self.agent_range_m, "m"),
            ("wall_range", self.wall_range_m, "m"),
            ("robot_range", self.robot_range_m, "m"),
            ("update_rate", self.update_rate_hz, "Hz"),
        ];
        for (key, value, unit) in positive {
            if !(value.is_finite() && value > 0.0) {
                return Err(r.error(format!("\"{key}\" must be a positive number of {unit}, got {value}")));
            }
        }
        let not_negative = [
            ("agent_strength", self.agent_strength),
            ("wall_strength", self.wall_strength),
            ("robot_strength", self.robot_strength),
            ("robot_sight", self.robot_sight_m),
            ("group_strength", self.group_strength),
            ("noise", self.noise),
        ];
        for (key, value) in not_negative {
            if !(value.is_finite() && value >= 0.0) {
                return Err(r.error(format!("\"{key}\" must be a number at least 0, got {value}")));
            }
        }
        if !(self.view_half_angle_rad > 0.0 && self.view_half_angle_rad <= std::f64::consts::PI) {
            let degrees = 2.0 * self.view_half_angle_rad.to_degrees();
            return Err(r.error(format!("\"view_angle\" must be in (0, 360] degrees, got {degrees}")));
        }
        if !(0.0..=1.0).contains(&self.out_of_view_weight) {
            return Err(r.error(format!("\"out_of_view_weight\" must be in [0, 1], got {}", self.out_of_view_weight)));
        }
        if self.max_speed_mps < self.desired_speed_mps {
            return Err(r.error(format!(
                "\"max_speed\" ({} m/s) is below \"desired_speed\" ({} m/s)",
                self.max_speed_mps, self.desired_speed_mps
            )));
        }
        Ok(())
    }
}

/// Whether a model is a person: it has a social `Pedestrian` (a scripted
/// agent is a moving object). simulation_interfaces lists people as HUMAN.
pub fn is_person(model: &ModelDescription) -> bool {
    // A pedestrian's entry names no layer.
    let ctx = PluginContext::of(model, &[]);
    model.plugins.iter().filter(|p| p.plugin_type == <PedestrianConfig as super::PluginConfig>::TYPE).any(|p| {
        super::entry_of(p, ctx.model_file)
            .and_then(|entry| PedestrianConfig::parse(&entry, &p.name, &ctx))
            .is_ok_and(|c| c.behaviour == Behaviour::Social)
    })
}

/// How far from its place an agent waits offstage, m: beyond the reach of
/// any laser, sonar or bumper, and of every force.
pub const OFFSTAGE_M: f64 = 10_000.0;

/// `release: {at: [x, y(, heading)], first: s, every: s, offstage: [x, y]}`.
fn release(r: &Reader) -> Result<Option<Release>, LoadError> {
    let Some(sub) = r.sub("release", format!("{} release", r.entity()))? else { return Ok(None) };
    let at: Vec<f64> = sub.list("at", Some(2), Some(3))?;
    let release = Release {
        at: [at[0], at[1], at.get(2).copied().unwrap_or(0.0)],
        offstage: sub.array::<2>("offstage", Some([at[0], at[1] - OFFSTAGE_M]))?,
        first_s: sub.opt("first", 0.0)?,
        every_s: sub.maybe("every")?,
    };
    sub.finish()?;
    if !release.at.iter().chain(&release.offstage).all(|v| v.is_finite()) {
        return Err(sub.error(format!("\"at\" and \"offstage\" must be finite, got {at:?} and {:?}", release.offstage)));
    }
    if !(release.first_s.is_finite() && release.first_s >= 0.0) {
        return Err(sub.error(format!("\"first\" must be a time of at least 0 s, got {}", release.first_s)));
    }
    if let Some(every) = release.every_s.filter(|e| !(e.is_finite() && *e > 0.0)) {
        return Err(sub.error(format!("\"every\" must be a positive number of s, got {every}")));
    }
    Ok(Some(release))
}

/// `waypoints: [[x, y], [x, y, pause_s], ...]`, at least one.
fn waypoints(r: &Reader) -> Result<Vec<Waypoint>, LoadError> {
    let raw: Vec<Value> = r.list("waypoints", Some(1), None)?;
    raw.iter()
        .enumerate()
        .map(|(i, point)| {
            let numbers = match point {
                Value::Sequence(items) if (2..=3).contains(&items.len()) => {
                    items.iter().map(f64::from_yaml).collect::<Result<Vec<f64>, String>>()
                }
                other => Err(format!("must be [x, y] or [x, y, pause], got {}", describe(other))),
            };
            match numbers {
                Ok(n) if n.iter().all(|v| v.is_finite()) && n.get(2).is_none_or(|&p| p >= 0.0) => {
                    Ok(Waypoint { x_m: n[0], y_m: n[1], pause_s: n.get(2).copied().unwrap_or(0.0) })
                }
                Ok(n) => Err(r.error(format!(
                    "\"waypoints\" index {i}: coordinates must be finite and the pause at least 0 s, got {n:?}"
                ))),
                Err(e) => Err(r.error(format!("\"waypoints\" index {i} {e}"))),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<PedestrianConfig, LoadError> {
        super::super::parse_in_test_model::<PedestrianConfig>(text, "walk", &["l".to_string()])
    }

    #[test]
    fn helbing_and_molnar_s_parameters_are_the_defaults() {
        let p = parse("{body: base, waypoints: [[1, 2], [3, 4, 1.5]]}").unwrap();
        assert_eq!(p.behaviour, Behaviour::Social);
        assert_eq!(p.waypoints[1], Waypoint { x_m: 3.0, y_m: 4.0, pause_s: 1.5 });
        assert_eq!((p.desired_speed_mps, p.relaxation_time_s), (1.34, 0.5));
        assert!((p.max_speed_mps - 1.742).abs() < 1e-12);
        assert_eq!((p.agent_strength, p.agent_range_m, p.wall_strength, p.wall_range_m), (2.1, 0.3, 10.0, 0.2));
        assert!((p.view_half_angle_rad - 100f64.to_radians()).abs() < 1e-12);
        assert_eq!((p.out_of_view_weight, p.update_rate_hz, p.cyclic, p.sees_robots), (0.5, 50.0, true, true));
        assert_eq!((p.robot_strength, p.robot_range_m), (2.1, 0.3));
        assert_eq!(p.release, None);
        let q = parse("{body: base, waypoints: [[1, 2]], release: {at: [3, 4], first: 2.5, every: 10}}").unwrap();
        assert_eq!(
            q.release,
            Some(Release { at: [3.0, 4.0, 0.0], offstage: [3.0, 4.0 - OFFSTAGE_M], first_s: 2.5, every_s: Some(10.0) })
        );
    }

    #[test]
    fn bad_entries_name_the_field() {
        let error = |text: &str| parse(text).unwrap_err().to_string();
        assert!(error("{body: base}").contains("waypoints"));
        assert!(error("{body: base, waypoints: []}").contains("waypoints"));
        assert!(error("{body: base, waypoints: [[1]]}").contains("index 0"));
        assert!(error("{body: base, waypoints: [[1, 2, -1]]}").contains("pause"));
        assert!(error("{body: base, waypoints: [[1, 2]], desired_speed: -1}").contains("desired_speed"));
        assert!(error("{body: base, waypoints: [[1, 2]], desired_speed: 2, max_speed: 1}").contains("max_speed"));
        assert!(error("{body: base, waypoints: [[1, 2]], behaviour: dancing}").contains("behaviour"));
        assert!(error("{body: base, waypoints: [[1, 2]], view_angle: 400}").contains("view_angle"));
        assert!(error("{body: nobody, waypoints: [[1, 2]]}").contains("nobody"));
        assert!(error("{body: base, waypoints: [[1, 2]], sped: 1}").contains("sped"));
        assert!(error("{body: base, waypoints: [[1, 2]], release: {at: [1]}}").contains("at"));
        assert!(error("{body: base, waypoints: [[1, 2]], release: {at: [1, 2], every: 0}}").contains("every"));
        assert!(error("{body: base, waypoints: [[1, 2]], release: {at: [1, 2], when: 3}}").contains("when"));
    }
}
