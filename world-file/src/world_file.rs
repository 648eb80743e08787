//! The world file: `properties`, `layers`, `models` (and world `plugins`).

use std::path::{Path, PathBuf};

use flotilla_plugins::channels::numbered_channels;
use flotilla_plugins::config::{FromYaml, LoadError, Reader};
use flotilla_plugins::robots::assign_map;
use flotilla_wire::description::{
    every_layer, layer_bits, LayerDescription, MapDescription, MapTransition, ModelDescription, WorldDescription,
    MAX_LAYERS,
};
use flotilla_wire::geometry::Pose2;
use flotilla_wire::world_to_nodes::BodyId;
use serde_yaml::Value;

use super::crowd;
use super::named_poses::{read_named_poses, NamedPose};
use super::settings::WorldSettings;
use super::{flat_world, map_armap, map_image, map_lines, read_yaml, resolve_path};

/// A fully loaded and validated world.
#[derive(Debug, Clone)]
pub struct WorldSpec {
    /// The world file.
    pub path: PathBuf,
    /// Flotilla settings from `properties:`.
    pub settings: WorldSettings,
    /// Every layer name, in order; bit `i` = `layer_names[i]`.
    pub layer_names: Vec<String>,
    /// Layer entries with their static geometry.
    pub layers: Vec<LayerDescription>,
    /// Models with bodies, joints and plugin entries (body ids unassigned).
    pub models: Vec<ModelDescription>,
    /// Types of world-level plugins (Flatland world plugins), none implemented.
    pub world_plugin_types: Vec<String>,
    /// Places the world names (a Flotilla addition, see [`NamedPose`]).
    pub named_poses: Vec<NamedPose>,
    /// Where the world's origin is on Earth (latitude °, longitude °,
    /// altitude m), from an ArMap layer's `OriginLatLongAlt`.
    pub georeference: Option<[f64; 3]>,
    /// The maps robots live on (`properties: maps:`), the first being
    /// where robots that name none start.
    pub maps: Vec<MapDescription>,
    /// The Flat world file of `properties: transitions:` and what it says.
    pub transitions: Option<(PathBuf, Vec<MapTransition>)>,
}

/// The id the world gives the first body it loads; the others follow in
/// world-file order (models, then their bodies), one by one.
pub const FIRST_BODY_ID: BodyId = 1;

impl WorldSpec {
    /// A digest of the world's content as loaded (layers, models as in the
    /// file, places, maps, transitions, solver iterations), whichever
    /// directory it was loaded from: a checkpoint is resumed only over a
    /// world of the same digest (`flotilla_wire::checkpoint_file`).
    pub fn content_digest(&self) -> u64 {
        let models: Vec<ModelDescription> =
            self.models.iter().map(|m| ModelDescription { model_path: String::new(), ..m.clone() }).collect();
        let places: Vec<(&str, Pose2, &[String])> =
            self.named_poses.iter().map(|p| (p.name.as_str(), p.pose, p.tags.as_slice())).collect();
        let transitions: Vec<&MapTransition> = self.transitions.iter().flat_map(|(_, t)| t).collect();
        let content = (
            &self.layer_names,
            &self.layers,
            models,
            self.georeference,
            &self.maps,
            transitions,
            places,
            self.settings.velocity_iterations,
        );
        flotilla_wire::digest::fnv1a64(&bincode::serialize(&content).expect("a world's content encodes"))
    }

    /// The description a world serves of this spec when it starts
    /// (revision 1): body ids assigned as the world assigns them, bodies at
    /// their loaded poses. For tools and tests that need a description
    /// without running a world or linking the physics engine. Fails only
    /// for settings that `load_world` would have refused (a spec built by
    /// hand with a bad step size).
    pub fn initial_description(&self) -> Result<WorldDescription, LoadError> {
        let step_ns = flotilla_wire::time::step_size_ns(self.settings.step_size_s)
            .map_err(|e| LoadError::new(&self.path, "properties", format!("\"step_size\": {e}")))?;
        let mut next_id = FIRST_BODY_ID;
        let models = self
            .models
            .iter()
            .map(|model| {
                let mut model = model.clone();
                for body in &mut model.bodies {
                    body.id = next_id;
                    next_id += 1;
                }
                model
            })
            .collect();
        let mut description = WorldDescription {
            revision: 1,
            resets: 0,
            step_ns,
            seed: self.settings.seed,
            world_path: self.path.to_string_lossy().into_owned(),
            layer_names: self.layer_names.clone(),
            layers: self.layers.clone(),
            models,
            georeference: self.georeference,
            maps: self.maps.clone(),
            transitions: self.transitions.iter().flat_map(|(_, t)| t.clone()).collect(),
            channels: Vec::new(),
            places: self
                .named_poses
                .iter()
                .map(|p| flotilla_wire::description::Place { name: p.name.clone(), pose: p.pose, tags: p.tags.clone() })
                .collect(),
        };
        description.channels = numbered_channels(&description);
        Ok(description)
    }
}

/// Loads a Flatland world file and everything it names, and says which
/// files that read (the world file among them), in path order: what a
/// recording carries so that the world can be loaded again elsewhere.
pub fn load_world_with_sources(path: &Path) -> Result<(WorldSpec, Vec<std::path::PathBuf>), LoadError> {
    let (world, read) = crate::sources::collect(|| load_world(path));
    Ok((world?, read))
}

/// Loads a Flatland world file and everything it names.
pub fn load_world(path: &Path) -> Result<WorldSpec, LoadError> {
    let root = read_yaml(path, "world")?;
    let world = Reader::new(&root, path, "world")?;

    let properties =
        world.sub("properties", "properties")?.ok_or_else(|| world.error("entry \"properties\" does not exist"))?;
    // Read before the settings, which refuse keys they do not know.
    let maps_entry = properties.raw("maps");
    let transitions_entry: Option<String> = properties.maybe("transitions")?;
    let settings = WorldSettings::parse(&properties)?;

    let layer_entries = world.seq("layers")?.ok_or_else(|| world.error("entry \"layers\" does not exist"))?;
    let (layer_names, pending) = read_layer_entries(layer_entries, path)?;
    // Maps are read after every name is known, so errors come in file order
    // for names first (cheap) and geometry second (slow).
    let geometry = load_layer_maps(pending, path)?;

    let maps = match maps_entry {
        Some(entry) => read_maps(entry, &properties, &layer_names)?,
        None => Vec::new(),
    };
    let transitions = match transitions_entry {
        None => None,
        Some(_) if maps.is_empty() => {
            return Err(properties.error("entry \"transitions\" needs \"maps\": the maps robots go between"))
        }
        Some(file) => {
            let flat_path = resolve_path(path, &file);
            let names = || maps.iter().map(|m| m.name.as_str());
            Some((flat_path.clone(), flat_world::load(&flat_path, &|w| flat_world::map_named(names(), w))?))
        }
    };

    let mut models = match world.seq("models")? {
        Some(entries) => read_models(entries, path, &maps, &layer_names)?,
        None => Vec::new(),
    };
    add_armap_boxes(&world, &mut models, geometry.boxes, &maps, layer_names.len())?;
    add_crowd(&world, &mut models, crowd::read_crowd(&world, settings.seed, &layer_names, &maps)?)?;
    super::building::check_building(&models, &maps, &layer_names)?;
    let world_plugin_types = read_world_plugin_types(&world, path)?;
    let mut named_poses = match world.seq("named_poses")? {
        Some(entries) => read_named_poses(entries, path)?,
        None => Vec::new(),
    };
    add_armap_places(&world, &mut named_poses, geometry.named_poses)?;
    world.finish()?;

    Ok(WorldSpec {
        path: path.to_path_buf(),
        settings,
        layer_names,
        layers: geometry.layers,
        models,
        world_plugin_types,
        named_poses,
        georeference: geometry.georeference,
        maps,
        transitions,
    })
}

/// Adds an ArMap's movable boxes after the world file's models (whose body
/// ids stay what they would be without them), each on every layer.
fn add_armap_boxes(
    world: &Reader,
    models: &mut Vec<ModelDescription>,
    boxes: Vec<ModelDescription>,
    maps: &[MapDescription],
    layer_count: usize,
) -> Result<(), LoadError> {
    for mut model in boxes {
        if models.iter().any(|m| m.name == model.name) {
            return Err(world.error(format!(
                "model \"{}\" is both a world-file model and an ArMap box's name; rename the model",
                model.name
            )));
        }
        assign_map(&mut model, maps, every_layer(layer_count));
        models.push(model);
    }
    Ok(())
}

/// Adds the crowd's agents after every other model.
fn add_crowd(
    world: &Reader,
    models: &mut Vec<ModelDescription>,
    agents: Vec<ModelDescription>,
) -> Result<(), LoadError> {
    for agent in agents {
        if models.iter().any(|m| m.name == agent.name) {
            return Err(
                world.error(format!("crowd agent \"{}\" has the name of a model of the world; rename one", agent.name))
            );
        }
        models.push(agent);
    }
    Ok(())
}

/// Adds an ArMap's goals and docks to the world file's places, whose own
/// keep their names.
fn add_armap_places(world: &Reader, places: &mut Vec<NamedPose>, armap: Vec<NamedPose>) -> Result<(), LoadError> {
    for pose in armap {
        if places.iter().any(|p| p.name == pose.name) {
            return Err(world.error(format!(
                "named pose \"{}\" is both in \"named_poses\" and an ArMap goal or dock; rename one",
                pose.name
            )));
        }
        places.push(pose);
    }
    Ok(())
}

/// The types of the world's own `plugins:` entries.
fn read_world_plugin_types(world: &Reader, path: &Path) -> Result<Vec<String>, LoadError> {
    let Some(entries) = world.seq("plugins")? else { return Ok(Vec::new()) };
    entries
        .iter()
        .enumerate()
        .map(|(i, entry)| Reader::new(entry, path, format!("plugins index {i}"))?.req::<String>("type"))
        .collect()
}

/// A layer entry read, its map not yet loaded: its names, map file, colour
/// and collision bits.
struct PendingLayer {
    names: Vec<String>,
    map: Option<String>,
    color: [f64; 4],
    bits: u16,
}

/// Reads the `layers` entries: every layer's names (unique, at most
/// [`MAX_LAYERS`] in all, each given the next collision bit), without
/// loading their maps.
fn read_layer_entries(entries: &[Value], path: &Path) -> Result<(Vec<String>, Vec<PendingLayer>), LoadError> {
    let mut layer_names: Vec<String> = Vec::new();
    let mut pending = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let layer = Reader::new(entry, path, format!("layers index {i}"))?;
        let names = read_layer_names(&layer)?;
        let map: Option<String> = layer.maybe("map")?;
        let color = layer.array::<4>("color", Some([1.0, 1.0, 1.0, 1.0]))?;
        layer.raw("properties");
        layer.finish()?;
        for name in &names {
            if layer_names.contains(name) {
                return Err(layer.error(format!("layer named \"{name}\" already exists")));
            }
        }
        if layer_names.len() + names.len() > MAX_LAYERS {
            return Err(layer.error(format!(
                "cannot add {} more layers ({}): {} exist, the maximum is {MAX_LAYERS}",
                names.len(),
                names.join(", "),
                layer_names.len()
            )));
        }
        let first_bit = layer_names.len();
        layer_names.extend(names.iter().cloned());
        let bits = (first_bit..layer_names.len()).fold(0u16, |b, i| b | (1 << i));
        pending.push(PendingLayer { names, map, color, bits });
    }
    Ok((layer_names, pending))
}

/// What the layers' maps hold: the layers' walls, and from ArMap files their
/// movable boxes, goals and docks, and georeference.
struct LayerGeometry {
    layers: Vec<LayerDescription>,
    boxes: Vec<ModelDescription>,
    named_poses: Vec<NamedPose>,
    georeference: Option<[f64; 3]>,
}

/// Loads every layer's map (image, line segments or ArMap).
fn load_layer_maps(pending: Vec<PendingLayer>, path: &Path) -> Result<LayerGeometry, LoadError> {
    let mut geometry = LayerGeometry {
        layers: Vec::with_capacity(pending.len()),
        boxes: Vec::new(),
        named_poses: Vec::new(),
        georeference: None,
    };
    for PendingLayer { names, map, color, bits } in pending {
        let (segments, solid_on_left, objects) = match map {
            None => (Vec::new(), false, Vec::new()),
            Some(map) => {
                let map_path = resolve_path(path, &map);
                if map_path.extension().is_some_and(|e| e.eq_ignore_ascii_case("map")) {
                    let armap = map_armap::load(&map_path, &names[0])?;
                    geometry.named_poses.extend(armap.named_poses);
                    match (geometry.georeference, armap.origin_lat_lon_alt) {
                        (Some(first), Some(other)) if first != other => {
                            return Err(LoadError::new(
                                &map_path,
                                format!("layer \"{}\"", names[0]),
                                format!(
                                    "OriginLatLongAlt {other:?} differs from {first:?}, another layer's: a world has \
                                     one georeference"
                                ),
                            ))
                        }
                        (None, origin) => geometry.georeference = origin,
                        _ => {}
                    }
                    geometry.boxes.extend(armap.boxes.iter().map(|b| box_model(b, &names[0], bits, color, &map_path)));
                    (armap.segments, false, armap.objects)
                } else {
                    let (segments, solid_on_left) = load_layer_map(&map_path, &names[0])?;
                    (segments, solid_on_left, Vec::new())
                }
            }
        };
        geometry.layers.push(LayerDescription { names, bits, segments, solid_on_left, color, objects });
    }
    Ok(geometry)
}

/// Reads the world file's `models` entries and loads each model file.
fn read_models(
    entries: &[Value],
    path: &Path,
    maps: &[MapDescription],
    layer_names: &[String],
) -> Result<Vec<ModelDescription>, LoadError> {
    let mut models: Vec<ModelDescription> = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let m = Reader::new(entry, path, format!("models index {i}"))?;
        let name: String = m.req("name")?;
        let namespace: String = m.opt("namespace", String::new())?;
        let [x, y, t] = m.array::<3>("pose", Some([0.0; 3]))?;
        let model_file: String = m.req("model")?;
        let map: Option<String> = m.maybe("map")?;
        m.finish()?;
        if let Some(map) = &map {
            if !maps.iter().any(|known| &known.name == map) {
                let known: Vec<&str> = maps.iter().map(|m| m.name.as_str()).collect();
                return Err(m.error(format!(
                    "\"map\" {map:?} is not one of the world's maps ({})",
                    if known.is_empty() {
                        "it declares none in properties: maps".to_string()
                    } else {
                        known.join(", ")
                    }
                )));
            }
        }
        flotilla_wire::keys::check_key_chunk("model name", &name).map_err(|e| m.error(e))?;
        if models.iter().any(|other| other.name == name) {
            return Err(m.error(format!("model named \"{name}\" already exists")));
        }
        let pose = Pose2::new(x, y, t);
        if !pose.is_finite() {
            return Err(m.error(format!("\"pose\" must be finite, got [{x}, {y}, {t}]")));
        }
        let model_path = resolve_path(path, &model_file);
        let mut model = super::load_model(&model_path, &name, &namespace, pose, layer_names)?;
        model.map = map.unwrap_or_default();
        assign_map(&mut model, maps, every_layer(layer_names.len()));
        models.push(model);
    }
    Ok(models)
}

/// Mass per area of an ArMap box, kg/m² (a 0.5 m cardboard box of goods:
/// 10 kg), and how fast a pushed one stops, 1/s: there is no floor
/// friction in a top-down world, damping stands for it (as in Flatland).
const BOX_DENSITY_KG_M2: f64 = 40.0;
const BOX_DAMPING_PER_S: f64 = 5.0;

/// An ArMap's movable box as a model of one dynamic body in its layer,
/// named `<layer>_box_<line>`.
fn box_model(
    b: &map_armap::ArMapBox,
    layer: &str,
    bits: flotilla_wire::description::LayerBits,
    color: [f64; 4],
    map_path: &Path,
) -> ModelDescription {
    use flotilla_wire::description::{BodyDescription, BodyKind, Footprint, FootprintShape, LayerBits};
    let safe: String =
        layer.chars().map(|c| if c.is_ascii_alphanumeric() || "_-.".contains(c) { c } else { '_' }).collect();
    let (hx, hy) = (b.size_m[0] / 2.0, b.size_m[1] / 2.0);
    let footprint = Footprint {
        shape: FootprintShape::Polygon { points: vec![[-hx, -hy], [hx, -hy], [hx, hy], [-hx, hy]] },
        layers: bits,
        collision: true,
        density: BOX_DENSITY_KG_M2,
        friction: 0.0,
        restitution: 0.0,
        sensor: false,
    };
    ModelDescription {
        name: format!("{safe}_box_{}", b.line),
        namespace: String::new(),
        pose: b.center,
        model_path: map_path.to_string_lossy().into_owned(),
        bodies: vec![BodyDescription {
            id: 0,
            name: "box".to_string(),
            kind: BodyKind::Dynamic,
            pose: b.center,
            pose_in_model: Pose2::default(),
            color,
            linear_damping: BOX_DAMPING_PER_S,
            angular_damping: BOX_DAMPING_PER_S,
            footprints: vec![footprint],
        }],
        joints: Vec::new(),
        plugins: Vec::new(),
        map: String::new(),
        layer_mask: LayerBits::MAX,
    }
}

/// `properties: maps:`, a map from each map's name to its layers (one name
/// or a list): `{floor-1: [floor-1, stairs], elevator: elevator}`.
fn read_maps(entry: &Value, properties: &Reader, layer_names: &[String]) -> Result<Vec<MapDescription>, LoadError> {
    let Value::Mapping(entries) = entry else {
        return Err(properties.error("\"maps\" must map each map's name to its layers, e.g. {floor-1: [walls-1]}"));
    };
    let mut maps: Vec<MapDescription> = Vec::new();
    for (name, layers) in entries {
        let name = String::from_yaml(name).map_err(|e| properties.error(format!("\"maps\": a map's name: {e}")))?;
        let entity = |message: String| properties.error(format!("\"maps\" entry {name:?}: {message}"));
        flotilla_wire::keys::check_key_chunk("map name", &name).map_err(entity)?;
        let names = match layers {
            Value::Sequence(items) => items.iter().map(String::from_yaml).collect::<Result<Vec<_>, _>>(),
            other => String::from_yaml(other).map(|n| vec![n]),
        }
        .map_err(|e| entity(e.to_string()))?;
        if names.is_empty() || names.iter().any(|n| n == "all") {
            return Err(entity("list the map's own layers (at least one; \"all\" is not a map)".into()));
        }
        let bits = layer_bits(layer_names, &names)
            .map_err(|unknown| entity(format!("layers {{{}}} do not exist", unknown.join(","))))?;
        maps.push(MapDescription { name, layers: bits });
    }
    if maps.is_empty() {
        return Err(properties.error("\"maps\" is empty; leave it out for a world of one map"));
    }
    Ok(maps)
}

fn read_layer_names(layer: &Reader) -> Result<Vec<String>, LoadError> {
    let raw = layer.raw("name").ok_or_else(|| layer.error("entry \"name\" does not exist"))?;
    let names = match raw {
        Value::Sequence(items) => items
            .iter()
            .map(|v| String::from_yaml(v).map_err(|e| layer.error(format!("\"name\": {e}"))))
            .collect::<Result<Vec<_>, _>>()?,
        other => vec![String::from_yaml(other).map_err(|e| layer.error(format!("\"name\": {e}")))?],
    };
    if names.is_empty() {
        return Err(layer.error("\"name\" must name at least one layer"));
    }
    for name in &names {
        if name.is_empty() || name == "all" {
            return Err(layer.error(format!("{name:?} cannot be a layer name")));
        }
    }
    Ok(names)
}

/// Loads a layer's map YAML: a map_server image or a line-segment file.
/// Returns its segments and whether they outline obstacles lying on their
/// left (see [`LayerDescription::solid_on_left`]).
fn load_layer_map(map_path: &Path, layer: &str) -> Result<(Vec<flotilla_wire::description::Segment>, bool), LoadError> {
    let entity = format!("layer \"{layer}\"");
    let root = read_yaml(map_path, &entity)?;
    let map = Reader::new(&root, map_path, entity)?;
    let kind: String = map.opt("type", String::new())?;
    if kind == "line_segments" {
        let data: String = map.req("data")?;
        let scale: f64 = map.req("scale")?;
        let origin = map.array::<3>("origin", None)?;
        map.finish()?;
        if !(scale.is_finite() && scale > 0.0) {
            return Err(map.error(format!("\"scale\" must be a positive number, got {scale}")));
        }
        let data_path = resolve_path(map_path, &data);
        map_lines::load(&data_path, scale, Pose2::new(origin[0], origin[1], origin[2]))
            .map(|segments| (segments, false))
            .map_err(|e| LoadError { entity: format!("layer \"{layer}\""), ..e })
    } else if kind.is_empty() {
        let resolution: f64 = map.req("resolution")?;
        let occupied_thresh: f64 = map.req("occupied_thresh")?;
        let origin = map.array::<3>("origin", None)?;
        let image: String = map.req("image")?;
        let negate = match map.raw("negate") {
            None => false,
            Some(Value::Bool(b)) => *b,
            Some(v) => f64::from_yaml(v).map_err(|e| map.error(format!("entry \"negate\": {e}")))? != 0.0,
        };
        // Read by map_server, not used to build walls (as in Flatland).
        map.raw("free_thresh");
        map.raw("mode");
        map.finish()?;
        if !(resolution.is_finite() && resolution > 0.0) {
            return Err(
                map.error(format!("\"resolution\" must be a positive number of metres per pixel, got {resolution}"))
            );
        }
        if !(0.0..=1.0).contains(&occupied_thresh) {
            return Err(map.error(format!("\"occupied_thresh\" must be within 0..1, got {occupied_thresh}")));
        }
        let image_path = resolve_path(map_path, &image);
        let origin = Pose2::new(origin[0], origin[1], origin[2]);
        map_image::load(&image_path, resolution, occupied_thresh, negate, origin)
            .map(|segments| (segments, true))
            .map_err(|message| {
                map.error(format!("cannot load {} in layer \"{layer}\": {message}", image_path.display()))
            })
    } else {
        Err(map.error(format!("unknown map \"type\" {kind:?}; expected line_segments or a map_server image map")))
    }
}
