//! Model files: bodies, footprints, joints and plugin entries.

use std::path::Path;

use flotilla_plugins::config::{LoadError, Reader};
use flotilla_plugins::PluginContext;
use flotilla_wire::description::{
    layer_bits, BodyDescription, BodyKind, Footprint, FootprintShape, JointDescription, JointKind, ModelDescription,
    PluginDescription,
};
use flotilla_wire::geometry::Pose2;
use serde_yaml::Value;

use super::read_yaml;

/// Largest number of bodies one model may have (absurd beyond).
pub const MAX_BODIES_PER_MODEL: usize = 1024;

/// Loads a model file as model `name`, placed at `pose`. Body ids are left at
/// 0; the physics world assigns them.
pub fn load_model(
    path: &Path,
    name: &str,
    namespace: &str,
    pose: Pose2,
    layer_names: &[String],
) -> Result<ModelDescription, LoadError> {
    let model_entity = format!("model \"{name}\"");
    let root = read_yaml(path, &model_entity)?;
    let model = Reader::new(&root, path, model_entity.clone())?;

    let bodies = read_bodies(&model, name, pose, layer_names)?;
    let joints = match model.seq("joints")? {
        Some(entries) => read_joints(&model, name, entries, &bodies)?,
        None => Vec::new(),
    };
    let plugins = match model.seq("plugins")? {
        Some(entries) => read_plugin_entries(&model, entries, path, &model_entity, name)?,
        None => Vec::new(),
    };
    model.finish()?;

    let description = ModelDescription {
        name: name.to_string(),
        namespace: namespace.to_string(),
        pose,
        model_path: path.to_string_lossy().into_owned(),
        bodies,
        joints,
        plugins: Vec::new(),
        // On no map until the world puts it on one (`assign_map`).
        map: String::new(),
        layer_mask: flotilla_wire::description::LayerBits::MAX,
    };
    // Plugins of the types Flotilla implements are validated here, so a world
    // or a spawn with a broken plugin entry is refused before anything starts.
    let ctx = PluginContext::of(&description, layer_names);
    flotilla_plugins::validate_model_plugins(&plugins, &ctx)?;
    Ok(ModelDescription { plugins: plugins.into_iter().map(|(p, _)| p).collect(), ..description })
}

/// The model's enabled `bodies` (at least one, at most
/// [`MAX_BODIES_PER_MODEL`], names unique), placed at the model's `pose`.
fn read_bodies(
    model: &Reader,
    name: &str,
    pose: Pose2,
    layer_names: &[String],
) -> Result<Vec<BodyDescription>, LoadError> {
    let body_entries = match model.raw("bodies") {
        None => return Err(model.error("entry \"bodies\" does not exist")),
        Some(Value::Sequence(items)) => items,
        Some(_) => return Err(model.error("\"bodies\" must be a list")),
    };
    if body_entries.is_empty() {
        return Err(model.error("\"bodies\" must have at least one body"));
    }
    if body_entries.len() > MAX_BODIES_PER_MODEL {
        return Err(
            model.error(format!("{} bodies is more than the maximum of {MAX_BODIES_PER_MODEL}", body_entries.len()))
        );
    }
    read_named(
        model,
        name,
        body_entries,
        ("bodies", "body"),
        |b: &BodyDescription| &b.name,
        |body, body_name| read_body(body, body_name, pose, layer_names),
    )
}

/// The model's enabled `joints` (names unique), between its `bodies`.
fn read_joints(
    model: &Reader,
    name: &str,
    entries: &[Value],
    bodies: &[BodyDescription],
) -> Result<Vec<JointDescription>, LoadError> {
    read_named(
        model,
        name,
        entries,
        ("joints", "joint"),
        |j: &JointDescription| &j.name,
        |joint, joint_name| read_joint(joint, joint_name, bodies),
    )
}

/// Reads a list of named items of model `name` (`bodies`, `joints`) in
/// order: each enabled entry with `read`, under a reader named after the
/// item; a name used twice in the list is refused.
fn read_named<T>(
    model: &Reader,
    name: &str,
    entries: &[Value],
    (list, item): (&str, &str),
    name_of: fn(&T) -> &str,
    read: impl Fn(&Reader, String) -> Result<T, LoadError>,
) -> Result<Vec<T>, LoadError> {
    let mut items: Vec<T> = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let reader = Reader::new(entry, model.file(), format!("{} {list} index {i}", model.entity()))?;
        if !reader.opt("enabled", true)? {
            continue;
        }
        let item_name: String = reader.req("name")?;
        let reader = Reader::new(entry, model.file(), format!("{} {item} \"{item_name}\"", model.entity()))?;
        reader.raw("name");
        reader.raw("enabled");
        if items.iter().any(|t| name_of(t) == item_name) {
            return Err(model.error(format!("{item} named \"{item_name}\" already exists in model \"{name}\"")));
        }
        items.push(read(&reader, item_name)?);
    }
    Ok(items)
}

/// The model's enabled `plugins` (names unique and usable in keys), each
/// with its entry, which the caller validates once the model is known.
fn read_plugin_entries<'a>(
    model: &Reader,
    entries: &'a [Value],
    path: &Path,
    model_entity: &str,
    name: &str,
) -> Result<Vec<(PluginDescription, &'a Value)>, LoadError> {
    let mut plugins: Vec<(PluginDescription, &Value)> = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let plugin = Reader::new(entry, path, format!("{model_entity} plugins index {i}"))?;
        if !plugin.opt("enabled", true)? {
            continue;
        }
        let plugin_type: String = plugin.req("type")?;
        let plugin_name: String = plugin.req("name")?;
        flotilla_wire::keys::check_key_chunk("plugin name", &plugin_name).map_err(|e| plugin.error(e))?;
        if plugins.iter().any(|(p, _)| p.name == plugin_name) {
            return Err(model.error(format!("plugin named \"{plugin_name}\" already exists in model \"{name}\"")));
        }
        let params_yaml = serde_yaml::to_string(entry).map_err(|e| plugin.error(e.to_string()))?;
        plugins.push((PluginDescription { plugin_type, name: plugin_name, params_yaml }, entry));
    }
    Ok(plugins)
}

fn read_body(
    body: &Reader,
    name: String,
    model_pose: Pose2,
    layer_names: &[String],
) -> Result<BodyDescription, LoadError> {
    let [x, y, t] = body.array::<3>("pose", Some([0.0; 3]))?;
    let kind = match body.opt("type", "dynamic".to_string())?.as_str() {
        "dynamic" => BodyKind::Dynamic,
        "static" => BodyKind::Static,
        "kinematic" => BodyKind::Kinematic,
        other => return Err(body.error(format!("\"type\" must be dynamic, static or kinematic, got {other:?}"))),
    };
    let color = body.array::<4>("color", Some([1.0, 1.0, 1.0, 0.5]))?;
    let linear_damping: f64 = body.opt("linear_damping", 0.0)?;
    let angular_damping: f64 = body.opt("angular_damping", 0.0)?;
    let entries = match body.raw("footprints") {
        None => return Err(body.error("entry \"footprints\" does not exist")),
        Some(Value::Sequence(items)) => items,
        Some(_) => return Err(body.error("\"footprints\" must be a list")),
    };
    let mut footprints = Vec::with_capacity(entries.len());
    for (i, entry) in entries.iter().enumerate() {
        let fp = Reader::new(entry, body.file(), format!("{} footprints index {i}", body.entity()))?;
        footprints.push(read_footprint(&fp, layer_names)?);
    }
    body.finish()?;
    let local = Pose2::new(x, y, t);
    if !local.is_finite() {
        return Err(body.error(format!("\"pose\" must be finite, got [{x}, {y}, {t}]")));
    }
    for (key, v) in [("linear_damping", linear_damping), ("angular_damping", angular_damping)] {
        if !v.is_finite() || v < 0.0 {
            return Err(body.error(format!("\"{key}\" must be a finite number ≥ 0, got {v}")));
        }
    }
    Ok(BodyDescription {
        id: 0,
        name,
        kind,
        pose: model_pose.compose(&local),
        pose_in_model: local,
        color,
        linear_damping,
        angular_damping,
        footprints,
    })
}

fn read_footprint(fp: &Reader, layer_names: &[String]) -> Result<Footprint, LoadError> {
    let kind: String = fp.req("type")?;
    let shape = match kind.as_str() {
        "circle" => {
            let radius: f64 = fp.req("radius")?;
            let center = fp.array::<2>("center", Some([0.0, 0.0]))?;
            if !(radius.is_finite() && radius > 0.0) {
                return Err(fp.error(format!("\"radius\" must be a positive number of metres, got {radius}")));
            }
            if !center.iter().all(|v| v.is_finite()) {
                return Err(fp.error(format!("\"center\" must be finite, got {center:?}")));
            }
            FootprintShape::Circle { center, radius }
        }
        "polygon" => {
            let points = fp.points("points", 3, 8)?;
            if points.iter().flatten().any(|v| !v.is_finite()) {
                return Err(fp.error("\"points\" must be finite"));
            }
            if polygon_area(&points).abs() < 1e-12 {
                return Err(fp.error("\"points\" enclose no area (all on one line?)"));
            }
            FootprintShape::Polygon { points }
        }
        other => return Err(fp.error(format!("\"type\" must be circle or polygon, got {other:?}"))),
    };
    let names: Vec<String> = fp.opt_list("layers", vec!["all".to_string()], None, None)?;
    let layers = layer_bits(layer_names, &names)
        .map_err(|unknown| fp.error(format!("layers {{{}}} do not exist", unknown.join(","))))?;
    let footprint = Footprint {
        shape,
        layers,
        collision: fp.opt("collision", true)?,
        density: fp.req("density")?,
        friction: fp.opt("friction", 0.0)?,
        restitution: fp.opt("restitution", 0.0)?,
        sensor: fp.opt("sensor", false)?,
    };
    fp.finish()?;
    for (key, v) in
        [("density", footprint.density), ("friction", footprint.friction), ("restitution", footprint.restitution)]
    {
        if !v.is_finite() || v < 0.0 {
            return Err(fp.error(format!("\"{key}\" must be a finite number ≥ 0, got {v}")));
        }
    }
    Ok(footprint)
}

fn polygon_area(points: &[[f64; 2]]) -> f64 {
    let n = points.len();
    (0..n).map(|i| points[i][0] * points[(i + 1) % n][1] - points[(i + 1) % n][0] * points[i][1]).sum::<f64>() / 2.0
}

fn read_joint(joint: &Reader, name: String, bodies: &[BodyDescription]) -> Result<JointDescription, LoadError> {
    let kind_text: String = joint.req("type")?;
    let collide_connected = joint.opt("collide_connected", false)?;
    joint.array::<4>("color", Some([0.0; 4]))?;
    let entries = match joint.raw("bodies") {
        None => return Err(joint.error("entry \"bodies\" does not exist")),
        Some(Value::Sequence(items)) if items.len() == 2 => items,
        Some(Value::Sequence(items)) => {
            return Err(joint.error(format!("\"bodies\" must have exactly 2 elements, got {}", items.len())))
        }
        Some(_) => return Err(joint.error("\"bodies\" must be a list")),
    };
    let mut names: [String; 2] = Default::default();
    let mut anchors = [[0.0; 2]; 2];
    for (i, entry) in entries.iter().enumerate() {
        let b = Reader::new(entry, joint.file(), format!("{} bodies index {i}", joint.entity()))?;
        let body_name: String = b.req("name")?;
        anchors[i] = b.array::<2>("anchor", None)?;
        b.finish()?;
        if !bodies.iter().any(|body| body.name == body_name) {
            return Err(b.error(format!("no body named \"{body_name}\" exists in the model")));
        }
        if !anchors[i].iter().all(|v| v.is_finite()) {
            return Err(b.error("\"anchor\" must be finite"));
        }
        names[i] = body_name;
    }
    let kind = match kind_text.as_str() {
        "revolute" => {
            let limits = if joint.has("limits") { Some(joint.array::<2>("limits", None)?) } else { None };
            joint.raw("limits");
            if let Some([lo, hi]) = limits {
                if !(lo.is_finite() && hi.is_finite() && lo <= hi) {
                    return Err(
                        joint.error(format!("\"limits\" must be [lower, upper] with lower ≤ upper, got [{lo}, {hi}]"))
                    );
                }
            }
            JointKind::Revolute { limits }
        }
        "weld" => JointKind::Weld {
            angle: joint.opt("angle", 0.0)?,
            frequency: joint.opt("frequency", 0.0)?,
            damping: joint.opt("damping", 0.0)?,
        },
        other => return Err(joint.error(format!("\"type\" must be revolute or weld, got {other:?}"))),
    };
    joint.finish()?;
    if names[0] == names[1] {
        return Err(joint.error(format!("joins body \"{}\" to itself", names[0])));
    }
    Ok(JointDescription { name, kind, bodies: names, anchors, collide_connected })
}
