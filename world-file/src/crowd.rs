//! The world file's `crowd:` section (a Flotilla addition): people, groups
//! and scripted agents, each made a model of one placed body with a
//! `Pedestrian` plugin, after the world file's own models.
//!
//! ```yaml
//! crowd:
//!   layers: [all]                  # the layers the agents' bodies are on
//!   defaults: {desired_speed: {mean: 1.34, sd: 0.26}}   # any Pedestrian parameter
//!   people:
//!     - {name: alice, pose: [2, 3], waypoints: [[10, 3], [2, 3, 5.0]]}
//!   groups:
//!     - {name: family, members: 3, pose: [4, 8], waypoints: [[20, 8], [4, 8]]}
//!   sources:                       # one person every 2 s, up to 10 at once
//!     - {name: door, pose: [1, 1], rate: 0.5, count: 10, waypoints: [[20, 1], [20, 9]]}
//!   scripted:
//!     - {name: forklift, pose: [0, 12, 0], size: [2.0, 1.0], desired_speed: 1.0, waypoints: [[30, 12], [0, 12]]}
//!   pedsim: scenario.xml           # pedsim_ros scenarios, read as people
//! ```
//!
//! Every agent is a model like any other: the description lists it, lasers,
//! sonar and bumpers meet its body, the view draws it and recordings keep it.

use flotilla_plugins::config::{LoadError, Reader};
use flotilla_plugins::pedestrian::{PedestrianConfig, OFFSTAGE_M};
use flotilla_plugins::{PluginConfig, PluginContext};
use flotilla_wire::description::{
    every_layer, layer_bits, BodyDescription, BodyKind, Footprint, FootprintShape, LayerBits, MapDescription,
    ModelDescription, PluginDescription,
};
use flotilla_wire::geometry::Pose2;
use flotilla_wire::seed::plugin_seed;
use serde_yaml::{Mapping, Value};

use super::crowd_pedsim;
use super::resolve_path;

/// The name of every agent's one body.
pub const AGENT_BODY: &str = "base";
/// The name of every agent's `Pedestrian` plugin.
pub const AGENT_PLUGIN: &str = "walk";

/// The body radius of a person unless told, m (the `Pedestrian` default).
const PERSON_RADIUS_M: f64 = 0.25;
/// People are drawn orange, scripted agents yellow.
const PERSON_COLOR: [f64; 4] = [0.95, 0.5, 0.15, 1.0];
const SCRIPTED_COLOR: [f64; 4] = [0.95, 0.8, 0.1, 1.0];
/// A person's density, kg/m² (70 kg over a 0.25 m disc).
const PERSON_DENSITY: f64 = 350.0;

/// What the section's agents share.
struct Shared<'a> {
    seed: u64,
    layer_names: &'a [String],
    layers: LayerBits,
    map: String,
    maps: &'a [MapDescription],
    defaults: Mapping,
}

/// One agent before it is a model.
struct AgentEntry {
    name: String,
    pose: Pose2,
    /// Where it was written (a world file, or a pedsim scenario).
    file: std::path::PathBuf,
    entity: String,
    shape: FootprintShape,
    color: [f64; 4],
    /// The `Pedestrian` parameters.
    params: Mapping,
}

/// The models of the world file's `crowd:` section (none without one).
pub fn read_crowd(
    world: &Reader,
    seed: u64,
    layer_names: &[String],
    maps: &[MapDescription],
) -> Result<Vec<ModelDescription>, LoadError> {
    let Some(crowd) = world.sub("crowd", "crowd")? else { return Ok(Vec::new()) };
    let layer_list: Vec<String> = crowd.opt_list("layers", vec!["all".to_string()], None, None)?;
    let layers = layer_bits(layer_names, &layer_list)
        .map_err(|unknown| crowd.error(format!("\"layers\": no layer named {}", unknown.join(", "))))?;
    let map: String = crowd.opt("map", String::new())?;
    if !map.is_empty() && !maps.iter().any(|m| m.name == map) {
        return Err(crowd.error(format!("\"map\" {map:?} is not one of the world's maps")));
    }
    let defaults = match crowd.raw("defaults") {
        None => Mapping::new(),
        Some(Value::Mapping(m)) => m.clone(),
        Some(_) => return Err(crowd.error("\"defaults\" must be a map of Pedestrian parameters")),
    };
    let shared = Shared { seed, layer_names, layers, map, maps, defaults };
    let mut entries = Vec::new();
    for (i, entry) in crowd.seq("people")?.unwrap_or_default().iter().enumerate() {
        entries.push(person(&Reader::new(entry, crowd.file(), format!("crowd people index {i}"))?, entry)?);
    }
    for (i, entry) in crowd.seq("groups")?.unwrap_or_default().iter().enumerate() {
        entries.extend(group(&Reader::new(entry, crowd.file(), format!("crowd groups index {i}"))?, entry)?);
    }
    for (i, entry) in crowd.seq("sources")?.unwrap_or_default().iter().enumerate() {
        entries.extend(source(&Reader::new(entry, crowd.file(), format!("crowd sources index {i}"))?, entry)?);
    }
    for (i, entry) in crowd.seq("scripted")?.unwrap_or_default().iter().enumerate() {
        entries.push(scripted(&Reader::new(entry, crowd.file(), format!("crowd scripted index {i}"))?, entry)?);
    }
    let scenarios: Vec<String> = match crowd.raw("pedsim") {
        None => Vec::new(),
        Some(Value::String(one)) => vec![one.clone()],
        Some(_) => crowd.list("pedsim", Some(1), None)?,
    };
    for scenario in scenarios {
        entries.extend(crowd_pedsim::read(&resolve_path(crowd.file(), &scenario))?.into_iter().map(|p| AgentEntry {
            shape: FootprintShape::Circle { center: [0.0, 0.0], radius: PERSON_RADIUS_M },
            color: PERSON_COLOR,
            name: p.name,
            pose: Pose2::new(p.x_m, p.y_m, 0.0),
            entity: p.entity,
            file: p.file,
            params: p.params,
        }));
    }
    crowd.finish()?;
    let mut models: Vec<ModelDescription> = Vec::with_capacity(entries.len());
    for entry in entries {
        if models.iter().any(|m| m.name == entry.name) {
            return Err(LoadError::new(&entry.file, &entry.entity, format!("agent \"{}\" is named twice", entry.name)));
        }
        models.push(shared.model(entry)?);
    }
    Ok(models)
}

/// Keys of an agent entry that are not `Pedestrian` parameters.
const PLACEMENT_KEYS: [&str; 10] =
    ["name", "pose", "members", "spacing", "size", "color", "type", "rate", "count", "start"];

/// The `Pedestrian` parameters of an entry: everything but its placement.
fn params_of(entry: &Value) -> Mapping {
    let mut params = entry.as_mapping().cloned().unwrap_or_default();
    for key in PLACEMENT_KEYS {
        params.remove(key);
    }
    params
}

fn pose_of(r: &Reader) -> Result<Pose2, LoadError> {
    let pose: Vec<f64> = r.list("pose", Some(2), Some(3))?;
    let pose = Pose2::new(pose[0], pose[1], pose.get(2).copied().unwrap_or(0.0));
    if !pose.is_finite() {
        return Err(r.error("\"pose\" must be finite"));
    }
    Ok(pose)
}

fn person(r: &Reader, entry: &Value) -> Result<AgentEntry, LoadError> {
    let name: String = r.req("name")?;
    let radius_m = radius_of(r, entry)?;
    Ok(AgentEntry {
        pose: pose_of(r)?,
        file: r.file().to_path_buf(),
        entity: format!("{} (\"{name}\")", r.entity()),
        shape: FootprintShape::Circle { center: [0.0, 0.0], radius: radius_m },
        color: r.array::<4>("color", Some(PERSON_COLOR))?,
        params: params_of(entry),
        name,
    })
}

/// A group's members, side by side across its first waypoint's direction.
fn group(r: &Reader, entry: &Value) -> Result<Vec<AgentEntry>, LoadError> {
    let name: String = r.req("name")?;
    let members: u64 = r.req("members")?;
    let spacing_m: f64 = r.opt("spacing", 0.7)?;
    if members == 0 || !(spacing_m.is_finite() && spacing_m > 0.0) {
        return Err(r.error(format!(
            "a group needs \"members\" ≥ 1 and a positive \"spacing\" in m, got {members} and {spacing_m}"
        )));
    }
    let pose = pose_of(r)?;
    let radius_m = radius_of(r, entry)?;
    let color = r.array::<4>("color", Some(PERSON_COLOR))?;
    let mut params = params_of(entry);
    params.insert("group".into(), name.clone().into());
    let (s, c) = pose.theta_rad.sin_cos();
    Ok((0..members)
        .map(|k| {
            let offset = (k as f64 - (members - 1) as f64 / 2.0) * spacing_m;
            AgentEntry {
                name: format!("{name}_{}", k + 1),
                pose: Pose2::new(pose.x_m - s * offset, pose.y_m + c * offset, pose.theta_rad),
                file: r.file().to_path_buf(),
                entity: format!("{} (\"{name}\")", r.entity()),
                shape: FootprintShape::Circle { center: [0.0, 0.0], radius: radius_m },
                color,
                params: params.clone(),
            }
        })
        .collect())
}

/// A spawn source's agents: `count` of them waiting offstage, the k-th
/// coming on at `pose` at `start + k / rate` s and every `count / rate` s
/// after its walk (not cyclic, unless told) has ended: one person every
/// `1 / rate` s, as long as walks take less than `count / rate` s.
fn source(r: &Reader, entry: &Value) -> Result<Vec<AgentEntry>, LoadError> {
    let name: String = r.req("name")?;
    let rate: f64 = r.req("rate")?;
    let count: u64 = r.req("count")?;
    let start: f64 = r.opt("start", 0.0)?;
    if !(rate.is_finite() && rate > 0.0) || count == 0 || !(start.is_finite() && start >= 0.0) {
        return Err(r.error(format!(
            "a source needs a positive \"rate\" (people/s), \"count\" ≥ 1 and \"start\" ≥ 0 s, got {rate}, {count} and {start}"
        )));
    }
    let pose = pose_of(r)?;
    let radius_m = radius_of(r, entry)?;
    let color = r.array::<4>("color", Some(PERSON_COLOR))?;
    let offstage = Pose2::new(pose.x_m, pose.y_m - OFFSTAGE_M, pose.theta_rad);
    Ok((0..count)
        .map(|k| {
            let mut params = params_of(entry);
            params.entry("cyclic".into()).or_insert(false.into());
            let mut release = Mapping::new();
            release.insert("at".into(), vec![pose.x_m, pose.y_m, pose.theta_rad].into());
            release.insert("first".into(), (start + k as f64 / rate).into());
            release.insert("every".into(), (count as f64 / rate).into());
            params.insert("release".into(), Value::Mapping(release));
            AgentEntry {
                name: format!("{name}_{}", k + 1),
                pose: offstage,
                file: r.file().to_path_buf(),
                entity: format!("{} (\"{name}\")", r.entity()),
                shape: FootprintShape::Circle { center: [0.0, 0.0], radius: radius_m },
                color,
                params,
            }
        })
        .collect())
}

/// A scripted agent: a box `size: [length, width]` (m) or a disc `radius`.
fn scripted(r: &Reader, entry: &Value) -> Result<AgentEntry, LoadError> {
    let name: String = r.req("name")?;
    let shape = match r.raw("size") {
        Some(_) => {
            let [length, width] = r.array::<2>("size", None)?;
            if !(length > 0.0 && width > 0.0 && length.is_finite() && width.is_finite()) {
                return Err(
                    r.error(format!("\"size\" must be a positive [length, width] in m, got [{length}, {width}]"))
                );
            }
            let (l, w) = (length / 2.0, width / 2.0);
            FootprintShape::Polygon { points: vec![[l, w], [-l, w], [-l, -w], [l, -w]] }
        }
        None => FootprintShape::Circle { center: [0.0, 0.0], radius: radius_of(r, entry)? },
    };
    let mut params = params_of(entry);
    params.insert("behaviour".into(), "scripted".into());
    Ok(AgentEntry {
        pose: pose_of(r)?,
        file: r.file().to_path_buf(),
        entity: format!("{} (\"{name}\")", r.entity()),
        shape,
        color: r.array::<4>("color", Some(SCRIPTED_COLOR))?,
        params,
        name,
    })
}

fn radius_of(r: &Reader, entry: &Value) -> Result<f64, LoadError> {
    match entry.get("radius") {
        None => Ok(PERSON_RADIUS_M),
        Some(_) => {
            let radius: f64 = r.req("radius")?;
            if radius.is_finite() && radius > 0.0 {
                Ok(radius)
            } else {
                Err(r.error(format!("\"radius\" must be a positive number of m, got {radius}")))
            }
        }
    }
}

impl Shared<'_> {
    /// The model of one agent: its parameters over the section's defaults,
    /// a desired speed drawn from a distribution where one is given, the
    /// entry checked as `Pedestrian` checks it.
    fn model(&self, entry: AgentEntry) -> Result<ModelDescription, LoadError> {
        let mut params = self.defaults.clone();
        for (k, v) in &entry.params {
            params.insert(k.clone(), v.clone());
        }
        if let FootprintShape::Circle { radius, .. } = &entry.shape {
            params.entry("radius".into()).or_insert((*radius).into());
        }
        if let Some(speed) = params.get("desired_speed").cloned() {
            params.insert("desired_speed".into(), self.desired_speed(&entry, &speed)?.into());
        }
        params.insert("type".into(), PedestrianConfig::TYPE.into());
        params.insert("name".into(), AGENT_PLUGIN.into());
        params.insert("body".into(), AGENT_BODY.into());
        let yaml = Value::Mapping(params);
        let ctx = PluginContext::single_body(&entry.file, &entry.name, AGENT_BODY, self.layer_names);
        PedestrianConfig::parse(&yaml, AGENT_PLUGIN, &ctx)
            .map_err(|e| LoadError::new(&entry.file, &entry.entity, e.to_string()))?;
        flotilla_wire::keys::check_key_chunk("agent name", &entry.name)
            .map_err(|e| LoadError::new(&entry.file, &entry.entity, e))?;
        let params_yaml =
            serde_yaml::to_string(&yaml).map_err(|e| LoadError::new(&entry.file, &entry.entity, e.to_string()))?;
        let mut model = ModelDescription {
            name: entry.name,
            namespace: String::new(),
            pose: entry.pose,
            model_path: entry.file.to_string_lossy().into_owned(),
            bodies: vec![BodyDescription {
                id: 0,
                name: AGENT_BODY.to_string(),
                kind: BodyKind::Kinematic,
                pose: entry.pose,
                pose_in_model: Pose2::default(),
                color: entry.color,
                linear_damping: 0.0,
                angular_damping: 0.0,
                footprints: vec![Footprint {
                    shape: entry.shape,
                    layers: self.layers,
                    collision: true,
                    density: PERSON_DENSITY,
                    friction: 0.0,
                    restitution: 0.0,
                    sensor: false,
                }],
            }],
            joints: Vec::new(),
            plugins: vec![PluginDescription {
                plugin_type: PedestrianConfig::TYPE.to_string(),
                name: AGENT_PLUGIN.to_string(),
                params_yaml,
            }],
            map: self.map.clone(),
            layer_mask: every_layer(self.layer_names.len()),
        };
        flotilla_plugins::robots::assign_map(&mut model, self.maps, every_layer(self.layer_names.len()));
        Ok(model)
    }

    /// A desired speed, m/s: a number, or `{mean, sd}` drawn for this agent
    /// from a normal distribution seeded by the world's seed and its name,
    /// kept within two standard deviations of the mean and above 0.1 m/s.
    fn desired_speed(&self, entry: &AgentEntry, speed: &Value) -> Result<f64, LoadError> {
        let error = |why: String| LoadError::new(&entry.file, &entry.entity, format!("\"desired_speed\": {why}"));
        if let Some(v) = speed.as_f64() {
            return Ok(v);
        }
        let (Some(mean), Some(sd)) =
            (speed.get("mean").and_then(Value::as_f64), speed.get("sd").and_then(Value::as_f64))
        else {
            return Err(error("must be a number of m/s or {mean: m/s, sd: m/s}".into()));
        };
        if !(mean > 0.0 && sd >= 0.0 && mean.is_finite() && sd.is_finite()) {
            return Err(error(format!("mean must be positive and sd at least 0, got {mean} and {sd}")));
        }
        // Box–Muller from two uniforms of the agent's own stream.
        let mut state = plugin_seed(self.seed, &entry.name, "desired_speed");
        let mut uniform = || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
        };
        let (u1, u2) = (uniform().max(f64::MIN_POSITIVE), uniform());
        let normal = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
        Ok((mean + sd * normal.clamp(-2.0, 2.0)).max(0.1))
    }
}

#[cfg(test)]
mod tests;
