//! pedsim_ros scenario files (`<scenario>` XML), read as the crowd's people.
//!
//! pedsim_ros is the crowd most ROS navigation stacks have been tested in
//! (Flatland's arena-rosnav among them), and its scenarios are plain files
//! people keep next to their maps; HuNavSim's `agents.yaml` is tied to its
//! behaviour trees, which Flotilla does not run. What is read:
//!
//! * `<waypoint id x y r>`: a place, reached within `r` m;
//! * `<queue id x y direction>`: a waiting queue, read as a waypoint where
//!   the agent stands for [`QUEUE_PAUSE_S`] (Flotilla forms no queue);
//! * `<agent x y n dx dy type>` with `<addwaypoint id>` / `<addqueue id>`:
//!   `n` people spread uniformly over `dx` × `dy` m around (x, y), as
//!   pedsim's agent clusters are, walking the waypoints in a cycle; type 0
//!   (adult) and 1 (child) walk at Helbing and Molnár's 1.34 ± 0.26 m/s,
//!   3 (elderly) at pedsim's 0.9 m/s; type 2 is pedsim's own robot, which
//!   a Flotilla world has as a model, and is skipped;
//! * `<obstacle>` and `<attraction>`: skipped, the world's layers are the
//!   walls (pedsim draws its obstacles into the map for the same reason),
//!   and attractions steer pedsim's shopping planner, which Flotilla lacks.
//!
//! Anything else, a missing or non-numeric attribute, or an unknown
//! waypoint id is refused with the file and line.

use std::path::{Path, PathBuf};

use flotilla_plugins::config::LoadError;
use flotilla_wire::seed::plugin_seed;
use serde_yaml::{Mapping, Value};

/// How long an agent stands at a pedsim queue, s.
pub const QUEUE_PAUSE_S: f64 = 5.0;

/// One person of a scenario.
pub struct PedsimPerson {
    /// `<file stem>_<cluster>_<k>`.
    pub name: String,
    /// Start, m.
    pub x_m: f64,
    /// Start, m.
    pub y_m: f64,
    /// The scenario.
    pub file: PathBuf,
    /// "agent at line N".
    pub entity: String,
    /// `Pedestrian` parameters (waypoints, speed).
    pub params: Mapping,
}

/// The people of the pedsim scenario at `path`.
pub fn read(path: &Path) -> Result<Vec<PedsimPerson>, LoadError> {
    crate::sources::note(path);
    let text = std::fs::read_to_string(path)
        .map_err(|e| LoadError::new(path, "pedsim scenario", format!("cannot read {}: {e}", path.display())))?;
    let doc = roxmltree::Document::parse(&text)
        .map_err(|e| LoadError::new(path, "pedsim scenario", format!("invalid XML: {e}")))?;
    let root = doc.root_element();
    let line = |node: roxmltree::Node| doc.text_pos_at(node.range().start).row;
    let at = |node: roxmltree::Node| format!("<{}> at line {}", node.tag_name().name(), line(node));
    if root.tag_name().name() != "scenario" {
        return Err(LoadError::new(path, at(root), "a pedsim scenario's root element is <scenario>"));
    }
    let number =
        |node: roxmltree::Node, key: &str| -> Result<f64, LoadError> {
            let raw = node
                .attribute(key)
                .ok_or_else(|| LoadError::new(path, at(node), format!("attribute \"{key}\" is missing")))?;
            raw.trim().parse::<f64>().ok().filter(|v| v.is_finite()).ok_or_else(|| {
                LoadError::new(path, at(node), format!("attribute \"{key}\" must be a number, got {raw:?}"))
            })
        };
    // Waypoints first: pedsim resolves ids as it reads, so an agent may
    // only name waypoints above it; Flotilla takes any order.
    let mut places: Vec<(String, [f64; 3], f64)> = Vec::new();
    for node in root.children().filter(roxmltree::Node::is_element) {
        let (radius, pause) = match node.tag_name().name() {
            "waypoint" => (number(node, "r")?, 0.0),
            "queue" => (0.5, QUEUE_PAUSE_S),
            _ => continue,
        };
        let id = node
            .attribute("id")
            .ok_or_else(|| LoadError::new(path, at(node), "attribute \"id\" is missing"))?
            .to_string();
        places.push((id, [number(node, "x")?, number(node, "y")?, pause], radius.max(0.1)));
    }
    let stem = path.file_stem().map_or("pedsim".into(), |s| s.to_string_lossy().replace(['.', '/', ' '], "_"));
    let mut people = Vec::new();
    let mut cluster = 0;
    for node in root.children().filter(roxmltree::Node::is_element) {
        match node.tag_name().name() {
            "waypoint" | "queue" | "obstacle" | "attraction" => continue,
            "agent" => {}
            other => return Err(LoadError::new(path, at(node), format!("<{other}> is not a pedsim scenario element"))),
        }
        cluster += 1;
        let (x, y, dx, dy) = (number(node, "x")?, number(node, "y")?, number(node, "dx")?, number(node, "dy")?);
        let n = number(node, "n")?;
        let kind = number(node, "type")?;
        if n < 0.0 || n.fract() != 0.0 || dx < 0.0 || dy < 0.0 {
            return Err(LoadError::new(path, at(node), "\"n\" must be a whole number and \"dx\", \"dy\" at least 0"));
        }
        let speed = match kind as i64 {
            0 | 1 => {
                let mut m = Mapping::new();
                m.insert("mean".into(), 1.34.into());
                m.insert("sd".into(), 0.26.into());
                Value::Mapping(m)
            }
            2 => continue,
            3 => 0.9.into(),
            _ => return Err(LoadError::new(path, at(node), format!("\"type\" {kind} is not 0, 1, 2 or 3"))),
        };
        let mut waypoints = Vec::new();
        let mut radius: f64 = 0.0;
        for child in node.children().filter(roxmltree::Node::is_element) {
            if !matches!(child.tag_name().name(), "addwaypoint" | "addqueue") {
                return Err(LoadError::new(path, at(child), "an <agent> holds <addwaypoint> and <addqueue> only"));
            }
            let id = child.attribute("id").unwrap_or_default();
            let Some((_, [wx, wy, pause], r)) = places.iter().find(|(known, _, _)| known == id) else {
                return Err(LoadError::new(path, at(child), format!("no waypoint or queue has id {id:?}")));
            };
            radius = radius.max(*r);
            waypoints.push(Value::Sequence(vec![(*wx).into(), (*wy).into(), (*pause).into()]));
        }
        if waypoints.is_empty() {
            return Err(LoadError::new(path, at(node), "an <agent> needs at least one <addwaypoint>"));
        }
        for k in 0..n as u64 {
            let name = format!("{stem}_{cluster}_{}", k + 1);
            // uniform over the cluster's box, from the name's own stream
            let seed = plugin_seed(0, &name, "pedsim_start");
            let u = |shift: u32| ((seed >> shift) & 0xffff) as f64 / 65535.0 - 0.5;
            let mut params = Mapping::new();
            params.insert("waypoints".into(), Value::Sequence(waypoints.clone()));
            params.insert("waypoint_radius".into(), radius.into());
            params.insert("desired_speed".into(), speed.clone());
            if kind as i64 == 3 {
                params.insert("max_speed".into(), 0.9.into());
            }
            people.push(PedsimPerson {
                name,
                x_m: x + dx * u(0),
                y_m: y + dy * u(16),
                file: path.to_path_buf(),
                entity: format!("<agent> at line {}", line(node)),
                params,
            });
        }
    }
    Ok(people)
}
