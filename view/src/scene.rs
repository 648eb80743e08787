//! What the page draws that changes only with the description: walls by
//! layer, every body's footprints and colour, the models, the lasers and
//! sonar rings (where they are mounted and how they sweep), and the model
//! files a user can spawn. Sent to the page as JSON once per revision; the
//! poses and readings that change every step go in binary frames
//! ([`crate::frame`]).

use std::path::Path;

use flotilla_plugins::battery::BatteryConfig;
use flotilla_plugins::configured;
use flotilla_plugins::laser::LaserConfig;
use flotilla_plugins::robots::RobotModel;
use flotilla_plugins::sonar::SonarConfig;
use flotilla_wire::description::{FootprintShape, WorldDescription};
use serde_json::{json, Value};

/// A laser the page draws scans of: which one, where its readings go.
#[derive(Debug, Clone, PartialEq)]
pub struct LaserView {
    /// The ROS name of its scan topic.
    pub topic: String,
}

/// A sonar ring the page draws cones of.
#[derive(Debug, Clone, PartialEq)]
pub struct SonarView {
    /// The ROS name of the folder of its range topics: transducer `i`
    /// publishes on `<folder>/<i>`.
    pub folder: String,
    /// How many transducers it has.
    pub transducers: usize,
}

/// A battery whose charge frames carry: its state topic.
#[derive(Debug, Clone)]
pub struct BatteryView {
    /// Its `BatteryState` topic, resolved.
    pub topic: String,
}

/// The scene of a description: its JSON, and the sensors whose readings
/// frames carry (indices as in the JSON's `lasers`, `sonars` and
/// `batteries`).
#[derive(Debug, Clone)]
pub struct Scene {
    /// The page's scene message.
    pub json: String,
    /// The description's revision.
    pub revision: u64,
    /// Lasers, in the JSON's order.
    pub lasers: Vec<LaserView>,
    /// Sonar rings, in the JSON's order.
    pub sonars: Vec<SonarView>,
    /// Batteries, in the JSON's order.
    pub batteries: Vec<BatteryView>,
}

/// Rounds to 0.1 mm: the page needs no more, and the JSON of a large map
/// halves.
fn mm(v: f64) -> Value {
    json!((v * 1e4).round() / 1e4)
}

/// The scene of `description`; `spawnable` are model files a user may
/// spawn (names relative to the world file's directory).
pub fn scene(description: &WorldDescription, spawnable: &[String]) -> Scene {
    let layers: Vec<Value> = description
        .layers
        .iter()
        .map(|layer| {
            let mut segments = Vec::new();
            for s in layer.all_walls() {
                segments.extend([mm(s.a[0]), mm(s.a[1]), mm(s.b[0]), mm(s.b[1])]);
            }
            json!({"name": layer.names[0], "color": layer.color, "segments": segments})
        })
        .collect();
    let mut bodies = Vec::new();
    let mut models = Vec::new();
    for model in &description.models {
        let robot = model.is_robot();
        models.push(json!({
            "name": model.name,
            "namespace": model.namespace,
            "robot": robot,
            "map": model.map,
            // Where it was last placed: a move places its bodies relative to it.
            "pose": [model.pose.x_m, model.pose.y_m, model.pose.theta_rad],
            "bodies": model.bodies.iter().map(|b| b.id).collect::<Vec<_>>(),
        }));
        for body in &model.bodies {
            let footprints: Vec<Value> = body
                .footprints
                .iter()
                .filter(|f| !f.sensor)
                .map(|f| match &f.shape {
                    FootprintShape::Circle { center, radius } => {
                        json!({"circle": [mm(center[0]), mm(center[1]), mm(*radius)]})
                    }
                    FootprintShape::Polygon { points } => {
                        json!({"polygon": points.iter().flat_map(|p| [mm(p[0]), mm(p[1])]).collect::<Vec<_>>()})
                    }
                })
                .collect();
            bodies.push(json!({
                "id": body.id,
                "model": model.name,
                "pose": [body.pose.x_m, body.pose.y_m, body.pose.theta_rad],
                "name": body.name,
                "color": body.color,
                "footprints": footprints,
            }));
        }
    }
    let all = |_: &str, _: &str| true;
    let mut lasers = Vec::new();
    let mut laser_json = Vec::new();
    for c in configured::<LaserConfig>(description, &all) {
        let o = c.config.origin;
        laser_json.push(json!({
            "model": c.model.name,
            "body": c.body,
            "origin": [o.x_m, o.y_m, o.theta_rad],
            "angle_min": c.config.angle_min_rad,
            "increment": c.config.angle_increment_rad,
            "upside_down": c.config.upside_down,
            "range": c.config.range_m,
        }));
        lasers.push(LaserView { topic: flotilla_wire::names::resolve_topic(&c.model.namespace, &c.config.topic) });
    }
    let mut sonars = Vec::new();
    let mut sonar_json = Vec::new();
    for c in configured::<SonarConfig>(description, &all) {
        let transducers: Vec<Value> = c
            .config
            .transducers
            .iter()
            .map(|t| json!([t.pose.x_m, t.pose.y_m, t.pose.theta_rad, t.field_of_view_rad, t.max_range_m]))
            .collect();
        sonar_json.push(json!({"model": c.model.name, "body": c.body, "transducers": transducers}));
        let folder = flotilla_wire::names::resolve_topic(&c.model.namespace, &c.config.topic);
        sonars.push(SonarView { folder, transducers: c.config.transducers.len() });
    }
    let mut batteries = Vec::new();
    let mut battery_json = Vec::new();
    for c in configured::<BatteryConfig>(description, &all) {
        battery_json.push(json!({"model": c.model.name}));
        batteries.push(BatteryView { topic: flotilla_wire::names::resolve_topic(&c.model.namespace, &c.config.topic) });
    }
    let json = json!({
        "type": "scene",
        "revision": description.revision,
        "world": description.world_path,
        "layers": layers,
        "bodies": bodies,
        "models": models,
        "lasers": laser_json,
        "sonars": sonar_json,
        "batteries": battery_json,
        "spawnable": spawnable,
        "maps": description.maps.iter().map(|m| m.name.clone()).collect::<Vec<_>>(),
    });
    Scene { json: json.to_string(), revision: description.revision, lasers, sonars, batteries }
}

/// The model files (`*.yaml` with `bodies:`) in the world file's directory,
/// by name: what the page offers to spawn. Empty when the directory cannot
/// be read (a view on another machine than the world file).
pub fn spawnable_models(world_path: &Path) -> Vec<String> {
    let Some(dir) = world_path.parent() else { return Vec::new() };
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "yaml"))
        .filter(|e| {
            std::fs::read_to_string(e.path())
                .is_ok_and(|text| text.lines().any(|l| l.starts_with("bodies:")) && !text.contains("\nlayers:"))
        })
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .collect();
    names.sort();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn room() -> WorldDescription {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/tests/room/annex.world.yaml");
        flotilla_world_file::load_world(&path).unwrap().initial_description().unwrap()
    }

    #[test]
    fn the_room_s_scene_has_its_walls_bodies_and_laser() {
        let description = room();
        let scene = scene(&description, &["box.model.yaml".into()]);
        let json: Value = serde_json::from_str(&scene.json).unwrap();
        assert_eq!(json["type"], "scene");
        assert_eq!(json["layers"][0]["segments"].as_array().unwrap().len(), 4 * 4, "four walls");
        let bodies = json["bodies"].as_array().unwrap();
        assert_eq!(bodies.len(), 2, "the robot's base and the crate");
        assert_eq!(bodies[0]["footprints"][0]["circle"], json!([0.0, 0.0, 0.2]));
        assert_eq!(json["models"][0]["robot"], true);
        assert_eq!(json["models"][1]["robot"], false);
        assert_eq!(json["lasers"][0]["range"], 20.0);
        assert_eq!(scene.lasers, [LaserView { topic: "/robot/scan".into() }]);
        assert_eq!(json["spawnable"], json!(["box.model.yaml"]));
    }

    #[test]
    fn the_models_beside_a_world_are_offered_for_spawning() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/tests/room/world.yaml");
        let models = spawnable_models(&path);
        assert!(models.contains(&"box.model.yaml".to_string()) && models.contains(&"robot.model.yaml".to_string()));
        assert!(!models.iter().any(|m| m.contains("world")), "world files are not models: {models:?}");
    }
}
