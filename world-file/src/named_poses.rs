//! Named poses: places a world file names for spawning, parking or goals
//! (simulation_interfaces' `GetNamedPoses` and `GetNamedPoseBounds`).
//!
//! A Flotilla addition to the world file, read from an optional top-level
//! `named_poses:` list that Flatland itself never reads:
//!
//! ```yaml
//! named_poses:
//!   - name: dock                       # unique
//!     pose: [1.0, 2.0, 1.5708]         # x m, y m, yaw rad, in the world frame
//!     description: "the charging dock" # optional
//!     tags: [spawn, dock]              # optional
//!     bounds: {type: box, min: [-0.4, -0.3], max: [0.4, 0.3]}  # optional, in the pose's frame
//! ```
//!
//! Bounds are `{type: box, min: [x, y], max: [x, y]}`, `{type: circle,
//! radius: r, center: [x, y]}` (center optional, default the pose) or
//! `{type: polygon, points: [[x, y], ...]}` (at least 3, convex), all in
//! metres in the frame of the pose, as an entity's bounds are in its own.

use flotilla_plugins::config::{LoadError, Reader};
use flotilla_wire::geometry::Pose2;
use serde_yaml::Value;

/// A place the world file names.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedPose {
    /// Unique name.
    pub name: String,
    /// The pose, in the world frame.
    pub pose: Pose2,
    /// For people.
    pub description: String,
    /// What the place is for ("spawn", "parking", a robot type...).
    pub tags: Vec<String>,
    /// The room there, in the pose's frame (`None`: unbounded).
    pub bounds: Option<PoseBounds>,
}

/// The room at a named pose, in the pose's frame, m.
#[derive(Debug, Clone, PartialEq)]
pub enum PoseBounds {
    /// An axis-aligned box from `min` to `max`.
    Box {
        /// Lower left corner.
        min: [f64; 2],
        /// Upper right corner.
        max: [f64; 2],
    },
    /// A disc.
    Circle {
        /// Its centre.
        center: [f64; 2],
        /// Its radius.
        radius: f64,
    },
    /// A convex polygon.
    Polygon(Vec<[f64; 2]>),
}

/// Reads the world file's `named_poses` entries (`entries` from its
/// top-level list).
pub(crate) fn read_named_poses(entries: &[Value], file: &std::path::Path) -> Result<Vec<NamedPose>, LoadError> {
    let mut poses: Vec<NamedPose> = Vec::with_capacity(entries.len());
    for (i, entry) in entries.iter().enumerate() {
        let reader = Reader::new(entry, file, format!("named_poses index {i}"))?;
        let name: String = reader.req("name")?;
        let [x, y, theta] = reader.array::<3>("pose", None)?;
        let description: String = reader.opt("description", String::new())?;
        let tags: Vec<String> = reader.opt_list("tags", Vec::new(), None, None)?;
        let bounds = match reader.sub("bounds", format!("named_poses index {i} bounds"))? {
            Some(bounds) => Some(read_bounds(&bounds)?),
            None => None,
        };
        reader.finish()?;
        if name.is_empty() {
            return Err(reader.error("\"name\" must not be empty"));
        }
        if poses.iter().any(|p| p.name == name) {
            return Err(reader.error(format!("named pose \"{name}\" already exists")));
        }
        let pose = Pose2::new(x, y, theta);
        if !pose.is_finite() {
            return Err(reader.error(format!("\"pose\" must be finite, got [{x}, {y}, {theta}]")));
        }
        poses.push(NamedPose { name, pose, description, tags, bounds });
    }
    Ok(poses)
}

fn read_bounds(reader: &Reader) -> Result<PoseBounds, LoadError> {
    let kind: String = reader.req("type")?;
    let bounds = match kind.as_str() {
        "box" => {
            let min = reader.array::<2>("min", None)?;
            let max = reader.array::<2>("max", None)?;
            if !(min[0] < max[0] && min[1] < max[1]) {
                return Err(reader.error(format!("\"min\" {min:?} must be below and left of \"max\" {max:?}")));
            }
            PoseBounds::Box { min, max }
        }
        "circle" => {
            let radius: f64 = reader.req("radius")?;
            let center = reader.array::<2>("center", Some([0.0, 0.0]))?;
            if !(radius > 0.0 && radius.is_finite()) {
                return Err(reader.error(format!("\"radius\" must be positive, got {radius}")));
            }
            PoseBounds::Circle { center, radius }
        }
        "polygon" => {
            let points = reader.points("points", 3, 1024)?;
            if !is_convex(&points) {
                return Err(reader.error("\"points\" must outline a convex polygon with an area"));
            }
            PoseBounds::Polygon(points)
        }
        other => {
            return Err(reader.error(format!("unknown bounds \"type\" {other:?}; expected box, circle or polygon")))
        }
    };
    reader.finish()?;
    let finite = match &bounds {
        PoseBounds::Box { min, max } => min.iter().chain(max).all(|v| v.is_finite()),
        PoseBounds::Circle { center, .. } => center.iter().all(|v| v.is_finite()),
        PoseBounds::Polygon(points) => points.iter().flatten().all(|v| v.is_finite()),
    };
    if !finite {
        return Err(reader.error("bounds must be finite"));
    }
    Ok(bounds)
}

/// Whether `points` turn the same way at every corner (either way round),
/// with some area.
fn is_convex(points: &[[f64; 2]]) -> bool {
    let n = points.len();
    let turns: Vec<f64> = (0..n)
        .map(|i| {
            let (a, b, c) = (points[i], points[(i + 1) % n], points[(i + 2) % n]);
            (b[0] - a[0]) * (c[1] - b[1]) - (b[1] - a[1]) * (c[0] - b[0])
        })
        .collect();
    let all_left = turns.iter().all(|&t| t >= 0.0);
    let all_right = turns.iter().all(|&t| t <= 0.0);
    (all_left || all_right) && turns.iter().any(|&t| t != 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn read(yaml: &str) -> Result<Vec<NamedPose>, LoadError> {
        let value: Value = serde_yaml::from_str(yaml).unwrap();
        let Value::Sequence(entries) = value else { panic!("a list") };
        read_named_poses(&entries, Path::new("world.yaml"))
    }

    #[test]
    fn every_field_and_each_kind_of_bounds_is_read() {
        let poses = read(concat!(
            "- {name: dock, pose: [1, 2, 0.5], description: the dock, tags: [spawn, dock],",
            " bounds: {type: box, min: [-0.4, -0.3], max: [0.4, 0.3]}}\n",
            "- {name: spot, pose: [3, 4, 0], bounds: {type: circle, radius: 0.5}}\n",
            "- {name: bay, pose: [5, 6, 0], bounds: {type: polygon, points: [[0, 0], [1, 0], [0, 1]]}}\n",
            "- {name: goal, pose: [7, 8, 0]}\n",
        ))
        .unwrap();
        assert_eq!(poses.len(), 4);
        assert_eq!(poses[0].pose, Pose2::new(1.0, 2.0, 0.5));
        assert_eq!(poses[0].description, "the dock");
        assert_eq!(poses[0].tags, ["spawn", "dock"]);
        assert_eq!(poses[0].bounds, Some(PoseBounds::Box { min: [-0.4, -0.3], max: [0.4, 0.3] }));
        assert_eq!(poses[1].bounds, Some(PoseBounds::Circle { center: [0.0, 0.0], radius: 0.5 }));
        assert_eq!(poses[2].bounds, Some(PoseBounds::Polygon(vec![[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])));
        assert_eq!((poses[3].bounds.clone(), poses[3].description.as_str()), (None, ""));
    }

    #[test]
    fn bad_entries_are_refused_naming_the_entry() {
        let error = |yaml: &str| read(yaml).unwrap_err().to_string();
        assert!(error("- {name: a, pose: [0, 0, 0], colour: red}").contains("named_poses index 0"));
        assert!(error("- {name: a, pose: [0, 0, 0], colour: red}").contains("colour"));
        assert!(error("- {name: a, pose: [0, 0]}").contains("\"pose\" must have exactly 3 elements"));
        assert!(error("- {name: a, pose: [0, 0, 0]}\n- {name: a, pose: [1, 0, 0]}").contains("already exists"));
        assert!(error("- {pose: [0, 0, 0]}").contains("\"name\" does not exist"));
        let bounds = |b: &str| error(&format!("- {{name: a, pose: [0, 0, 0], bounds: {b}}}"));
        assert!(bounds("{type: box, min: [1, 0], max: [0, 1]}").contains("below and left"));
        assert!(bounds("{type: circle, radius: -1}").contains("positive"));
        assert!(bounds("{type: polygon, points: [[0, 0], [1, 0], [1, 1], [2, -1]]}").contains("convex"));
        assert!(bounds("{type: polygon, points: [[0, 0], [1, 0], [2, 0]]}").contains("convex"));
        assert!(bounds("{type: sphere, radius: 1}").contains("expected box, circle or polygon"));
        assert!(bounds("{type: box, min: [0, 0], max: [1, 1], z: 2}").contains("named_poses index 0 bounds"));
    }
}
