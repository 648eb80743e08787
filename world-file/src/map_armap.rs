//! ArMap layers: a world layer's `map:` may be an ArMap file (`.map`, as
//! Mapper3 and ARIA write them, in millimetres), read as AMRISim reads it.
//!
//! - `LINES` are walls.
//! - `DATA` points are the laser scan points Mapper3 drew the lines from.
//!   They are obstacles (squares of the map's `Resolution`, 20 mm when it
//!   gives none) only in a map without lines; with lines they would repeat
//!   every wall as thousands of specks for the laser and the physics to test
//!   (AMROffice.map: 23,181 points beside 243 lines).
//! - `Cairn` goals and docks (`Goal`, `GoalWithHeading`, `Dock`, `RobotHome`,
//!   `Home`, and the types a map declares as `GoalType` or `DockType`) become
//!   named poses, tagged `goal` or `dock` (an unnamed one is named after its
//!   type and line, `Goal@27`).
//! - A `Cairn` of a `SectorType` with `Sim.Obstacle` (or, as in
//!   AMROffice.map, with none and a name ending in `BoxObstacle`, MobileSim's
//!   convention) is a box from its `from` to its `to` corner, turned by its
//!   heading as AMRISim turns it, drawn as four walls of the layer with
//!   AMRISim's rules: `Sim.Obstacle=no` lets robots pass through,
//!   `Sim.LaserReflect=0` hides it from lasers (above 1: a reflector),
//!   `Sim.SonarReflect=no` hides it from sonar (`box-nolaser`,
//!   `Sim_InvisibleBox`, `Sim_ReflectiveBoxObstacle`). One that nothing
//!   meets (`Sim_MarkerBox`) is a marker for people, left out. A plain box
//!   (every sensor sees it, robots hit it) is a movable box, as in AMRISim
//!   ([`ArMapBox`], a model of its own); the others are fixed walls with
//!   their rules.
//! - `Reflector` lines (the built-in `BoundaryType`, or a `BoundaryType`
//!   with `Sim.LaserReflect` above 1) are walls that lasers read as
//!   reflectors (intensity 255), from both sides.
//! - Forbidden lines and areas and other sectors are planning metadata, as
//!   for AMRISim: not obstacles.
//! - The georeference, `OriginLatLongAlt` as ARIA writes it (or
//!   `OriginLatLonAlt`), is read and checked.
//!
//! Header entries ARIA defines but the simulation has no use for
//! (`Display`, `RouteInfo`, `SchedTaskInfo`, ...) are skipped, as ARIA's own
//! reader skips entries it does not know. A malformed line is an error
//! naming its line number.

use std::collections::HashMap;
use std::path::Path;

use flotilla_plugins::config::LoadError;
use flotilla_wire::description::{ObjectWall, Segment};
use flotilla_wire::geometry::Pose2;

use crate::named_poses::NamedPose;

/// Side of the square a `DATA` point becomes when the map gives no
/// `Resolution`, m.
const DEFAULT_POINT_SIZE_M: f64 = 0.02;

/// Millimetres per metre.
const MM_PER_M: f64 = 1000.0;

/// A movable box of an ArMap: what AMRISim makes of a `Sim.Obstacle` sector
/// every sensor sees.
#[derive(Debug, Clone, PartialEq)]
pub struct ArMapBox {
    /// Its type, e.g. `Sim.BoxObstacle`.
    pub kind: String,
    /// The line of its `Cairn:` entry.
    pub line: usize,
    /// Pose of its centre, m and rad.
    pub center: Pose2,
    /// Width along its x and height along its y, m.
    pub size_m: [f64; 2],
}

/// What an ArMap layer gives the world.
#[derive(Debug, Clone, PartialEq)]
pub struct ArMapLayer {
    /// Walls: lines and plain boxes (and points, in a map without lines).
    pub segments: Vec<Segment>,
    /// Walls with their own rules: reflectors, boxes hidden from a sensor
    /// or that robots pass through.
    pub objects: Vec<ObjectWall>,
    /// Boxes every sensor sees and robots push (`Sim_BoxObstacle`).
    pub boxes: Vec<ArMapBox>,
    /// Goals and docks.
    pub named_poses: Vec<NamedPose>,
    /// The map's georeference (latitude °, longitude °, altitude m), if any.
    pub origin_lat_lon_alt: Option<[f64; 3]>,
}

/// A custom object type declared with `MapInfo:`.
#[derive(Debug, Clone, Default)]
struct ObjectClass {
    /// `SectorType`, `BoundaryType`, `GoalType`, `DockType`...
    kind: String,
    obstacle: Option<bool>,
    laser_reflect: Option<i64>,
    sonar_reflect: Option<bool>,
}

/// One `Cairn:` object.
#[derive(Debug, Clone)]
struct MapObject {
    kind: String,
    /// Pose, m and rad.
    pose: Pose2,
    name: String,
    /// The `from` and `to` points, m.
    from_to: Option<[[f64; 2]; 2]>,
    line: usize,
}

/// Loads the ArMap file at `path` as layer `layer`.
pub fn load(path: &Path, layer: &str) -> Result<ArMapLayer, LoadError> {
    crate::sources::note(path);
    let text = std::fs::read_to_string(path).map_err(|e| {
        LoadError::new(path, format!("layer \"{layer}\""), format!("cannot read {}: {e}", path.display()))
    })?;
    parse(&text, path, layer)
}

/// Splits a line into words, a quoted run being one word (quotes removed).
fn words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let (mut quoted, mut started) = (false, false);
    for c in text.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                started = true;
            }
            c if c.is_whitespace() && !quoted => {
                if started {
                    words.push(std::mem::take(&mut current));
                    started = false;
                }
            }
            c => {
                current.push(c);
                started = true;
            }
        }
    }
    if started {
        words.push(current);
    }
    words
}

/// Reads an ArMap's text.
pub fn parse(text: &str, path: &Path, layer: &str) -> Result<ArMapLayer, LoadError> {
    // Line 0: the file as a whole.
    let error = |line: usize, message: String| match line {
        0 => LoadError::new(path, format!("layer \"{layer}\""), message),
        _ => LoadError::new(path, format!("layer \"{layer}\" line {line}"), message),
    };
    let number = |line: usize, what: &str, word: &str| -> Result<f64, LoadError> {
        word.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| error(line, format!("{what}: expected a number, got {word:?}")))
    };
    let mut lines_in = text.lines().enumerate().map(|(i, l)| (i + 1, l.trim()));
    match lines_in.next() {
        Some((_, first)) if first.starts_with("2D-Map") => {}
        Some((_, first)) => {
            return Err(error(1, format!("an ArMap file starts with \"2D-Map\", this one with {first:?}")))
        }
        None => return Err(error(1, "the file is empty; an ArMap file starts with \"2D-Map\"".into())),
    }

    let mut text = ArMapText::default();
    let mut section = Section::Header;
    for (n, line) in lines_in {
        match line {
            "" => {}
            "LINES" => section = Section::Lines,
            "DATA" => section = Section::Data,
            _ => match section {
                Section::Lines => text.read_line_entry(line, n, &number, &error)?,
                Section::Data => text.read_data_entry(line, n, &number, &error)?,
                Section::Header => text.read_header_entry(line, n, &number, &error)?,
            },
        }
    }
    text.check_counts(&error)?;

    let mut placed = Placed { segments: walls(&text.lines, &text.points, text.resolution_m), ..Placed::default() };
    for object in &text.objects {
        place_object(object, text.classes.get(&object.kind), &error, &mut placed)?;
    }
    let Placed { segments, objects, boxes, named_poses } = placed;
    Ok(ArMapLayer { segments, objects, boxes, named_poses, origin_lat_lon_alt: text.origin_lat_lon_alt })
}

/// Where in an ArMap a line is: the header's `Keyword: values` entries,
/// then the `LINES` (x1 y1 x2 y2 in mm) and the `DATA` points (x y in mm).
#[derive(PartialEq)]
enum Section {
    Header,
    Lines,
    Data,
}

/// A line's number (1-based) and a message, as a [`LoadError`].
type ErrorAt<'a> = &'a dyn Fn(usize, String) -> LoadError;
/// A finite number read from a word, or an error naming line and entry.
type NumberAt<'a> = &'a dyn Fn(usize, &str, &str) -> Result<f64, LoadError>;

/// What an ArMap's text holds, read line by line and not yet placed.
#[derive(Default)]
struct ArMapText {
    classes: HashMap<String, ObjectClass>,
    objects: Vec<MapObject>,
    declared_lines: Option<usize>,
    declared_points: Option<usize>,
    resolution_m: Option<f64>,
    origin_lat_lon_alt: Option<[f64; 3]>,
    /// Walls, m.
    lines: Vec<[f64; 4]>,
    /// Obstacle points, m.
    points: Vec<[f64; 2]>,
}

impl ArMapText {
    fn read_line_entry(&mut self, line: &str, n: usize, number: NumberAt, error: ErrorAt) -> Result<(), LoadError> {
        let w: Vec<&str> = line.split_whitespace().collect();
        if w.len() != 4 {
            return Err(error(n, format!("a LINES entry is x1 y1 x2 y2 in mm, got {line:?}")));
        }
        let v = w.iter().map(|w| number(n, "LINES", w)).collect::<Result<Vec<f64>, _>>()?;
        self.lines.push([v[0] / MM_PER_M, v[1] / MM_PER_M, v[2] / MM_PER_M, v[3] / MM_PER_M]);
        Ok(())
    }

    fn read_data_entry(&mut self, line: &str, n: usize, number: NumberAt, error: ErrorAt) -> Result<(), LoadError> {
        let w: Vec<&str> = line.split_whitespace().collect();
        if w.len() != 2 {
            return Err(error(n, format!("a DATA entry is x y in mm, got {line:?}")));
        }
        self.points.push([number(n, "DATA", w[0])? / MM_PER_M, number(n, "DATA", w[1])? / MM_PER_M]);
        Ok(())
    }

    fn read_header_entry(&mut self, line: &str, n: usize, number: NumberAt, error: ErrorAt) -> Result<(), LoadError> {
        let Some((keyword, rest)) = line.split_once(':') else {
            return Err(error(n, format!("expected \"Keyword: values\", LINES or DATA, got {line:?}")));
        };
        let args = words(rest);
        let count = |what: &str| -> Result<usize, LoadError> {
            let word = args.first().ok_or_else(|| error(n, format!("{what}: expected a count")))?;
            word.parse::<usize>().map_err(|_| error(n, format!("{what}: expected a count, got {word:?}")))
        };
        match keyword {
            "NumLines" => self.declared_lines = Some(count("NumLines")?),
            "NumPoints" => self.declared_points = Some(count("NumPoints")?),
            "Resolution" => {
                let word = args.first().map_or("", String::as_str);
                let mm = number(n, "Resolution", word)?;
                if mm <= 0.0 {
                    return Err(error(n, format!("Resolution must be a positive number of mm, got {mm}")));
                }
                self.resolution_m = Some(mm / MM_PER_M);
            }
            // ARIA reads and writes `OriginLatLongAlt`; one of its doc
            // comments (and AMRISim's README) spell it `OriginLatLonAlt`.
            key @ ("OriginLatLongAlt" | "OriginLatLonAlt") => {
                if args.len() != 3 {
                    return Err(error(n, format!("{key} is latitude longitude altitude, got {rest:?}")));
                }
                let [lat, lon, alt] = [0, 1, 2].map(|i| number(n, key, &args[i]));
                let (lat, lon, alt) = (lat?, lon?, alt?);
                if lat.abs() > 90.0 || lon.abs() > 180.0 {
                    return Err(error(n, format!("{key}: latitude {lat}° or longitude {lon}° out of range")));
                }
                self.origin_lat_lon_alt = Some([lat, lon, alt]);
            }
            "MapInfo" => {
                if let Some((name, class)) = read_class(&args) {
                    self.classes.insert(name, class);
                }
            }
            "Cairn" => self.objects.push(read_object(&args, n, number, error)?),
            // Bounds, sorting flags and ARIA's other entries (Display,
            // RouteInfo, SchedTaskInfo, CustomInfo...): nothing to simulate.
            _ => {}
        }
        Ok(())
    }

    /// The counts the header declares agree with the entries: a file cut
    /// short is refused, not loaded in part.
    fn check_counts(&self, error: ErrorAt) -> Result<(), LoadError> {
        if let Some(declared) = self.declared_lines.filter(|&d| d != self.lines.len()) {
            return Err(error(
                0,
                format!("NumLines says {declared} but LINES holds {}: is the file cut short?", self.lines.len()),
            ));
        }
        if let Some(declared) = self.declared_points.filter(|&d| d != self.points.len()) {
            return Err(error(
                0,
                format!("NumPoints says {declared} but DATA holds {}: is the file cut short?", self.points.len()),
            ));
        }
        Ok(())
    }
}

/// The walls of the `LINES` (m), or, in a map without lines, a square of
/// the map's resolution around each `DATA` point.
fn walls(lines: &[[f64; 4]], points: &[[f64; 2]], resolution_m: Option<f64>) -> Vec<Segment> {
    let mut segments: Vec<Segment> = lines.iter().map(|l| Segment { a: [l[0], l[1]], b: [l[2], l[3]] }).collect();
    if lines.is_empty() {
        let half = resolution_m.unwrap_or(DEFAULT_POINT_SIZE_M) / 2.0;
        for &[x, y] in points {
            let corners = [[x - half, y - half], [x + half, y - half], [x + half, y + half], [x - half, y + half]];
            segments.extend((0..4).map(|i| Segment { a: corners[i], b: corners[(i + 1) % 4] }));
        }
    }
    segments
}

/// What the objects of a map became.
#[derive(Default)]
struct Placed {
    segments: Vec<Segment>,
    objects: Vec<ObjectWall>,
    boxes: Vec<ArMapBox>,
    named_poses: Vec<NamedPose>,
}

/// What a `Cairn` object of `class` becomes: a named pose (goal, dock),
/// walls (reflector line, box) or nothing (metadata).
fn place_object(
    object: &MapObject,
    class: Option<&ObjectClass>,
    error: ErrorAt,
    placed: &mut Placed,
) -> Result<(), LoadError> {
    let class_kind = class.map(|c| c.kind.as_str());
    if matches!(object.kind.as_str(), "Goal" | "GoalWithHeading") || class_kind == Some("GoalType") {
        placed.named_poses.push(named_pose(object, "goal", &placed.named_poses));
    } else if matches!(object.kind.as_str(), "Dock" | "RobotHome" | "Home") || class_kind == Some("DockType") {
        placed.named_poses.push(named_pose(object, "dock", &placed.named_poses));
    } else if object.kind == "Reflector"
        || class.is_some_and(|c| c.kind == "BoundaryType" && reflective(&object.kind, c))
    {
        let Some([a, b]) = object.from_to else {
            return Err(error(object.line, "a Reflector needs its from and to points".into()));
        };
        let segment = Segment { a, b };
        placed.objects.push(ObjectWall { segment, obstacle: true, laser: true, sonar: true, bright: true });
    } else if let Some(class) = class.filter(|c| c.kind == "SectorType") {
        let Some(rules) = box_rules(object, class) else { return Ok(()) };
        let (center, size_m) = box_of(object, error)?;
        if rules == PLAIN_BOX {
            placed.boxes.push(ArMapBox { kind: object.kind.clone(), line: object.line, center, size_m });
        } else {
            let walls = box_corners(center, size_m);
            placed.objects.extend(
                (0..4).map(|i| ObjectWall { segment: Segment { a: walls[i], b: walls[(i + 1) % 4] }, ..rules }),
            );
        }
    }
    Ok(())
}

/// The rules of a box everything meets as it meets a wall.
const PLAIN_BOX: ObjectWall = ObjectWall {
    segment: Segment { a: [0.0; 2], b: [0.0; 2] },
    obstacle: true,
    laser: true,
    sonar: true,
    bright: false,
};

/// Who meets the walls of a sector object, as AMRISim's attributes say;
/// `None` for sectors that are no simulator object (areas, markers that
/// nothing meets).
fn box_rules(object: &MapObject, class: &ObjectClass) -> Option<ObjectWall> {
    let is_object = class.obstacle.is_some() || object.kind.ends_with("BoxObstacle");
    let rules = ObjectWall {
        obstacle: class.obstacle.unwrap_or(true),
        laser: class.laser_reflect != Some(0),
        sonar: class.sonar_reflect != Some(false),
        bright: class.laser_reflect.is_some_and(|r| r > 1),
        ..PLAIN_BOX
    };
    let met = rules.obstacle || rules.laser || rules.sonar;
    (is_object && met).then_some(rules)
}

/// Whether objects of a class return a bright laser reading (AMRISim's rule).
fn reflective(name: &str, class: &ObjectClass) -> bool {
    name == "Reflector"
        || name == "Sim.Reflector"
        || name.ends_with(".Reflect")
        || class.laser_reflect.is_some_and(|r| r > 1)
}

/// A `MapInfo:` type definition: its name and simulator attributes.
fn read_class(args: &[String]) -> Option<(String, ObjectClass)> {
    let kind = args.first()?.clone();
    let name = args.get(1)?.strip_prefix("Name=")?.to_string();
    let mut class = ObjectClass { kind, ..ObjectClass::default() };
    for attribute in &args[2..] {
        let Some((key, value)) = attribute.split_once('=') else { continue };
        let yes = |v: &str| v.eq_ignore_ascii_case("yes") || v.eq_ignore_ascii_case("true");
        match key {
            "Sim.Obstacle" => class.obstacle = Some(yes(value)),
            "Sim.SonarReflect" => class.sonar_reflect = Some(yes(value)),
            "Sim.LaserReflect" => {
                let no = value.eq_ignore_ascii_case("no") || value.eq_ignore_ascii_case("false");
                class.laser_reflect = Some(if no { 0 } else { value.parse().unwrap_or(1) });
            }
            _ => {}
        }
    }
    Some((name, class))
}

/// A `Cairn:` entry: `Type x y th "description" IconName "name" [x1 y1 x2 y2]`.
fn read_object(args: &[String], n: usize, number: NumberAt, error: ErrorAt) -> Result<MapObject, LoadError> {
    if args.len() < 7 {
        return Err(error(
            n,
            format!("a Cairn is Type x y th \"description\" icon \"name\" [x1 y1 x2 y2], got {} words", args.len()),
        ));
    }
    let [x, y, th] = [1, 2, 3].map(|i| number(n, "Cairn", &args[i]));
    let pose = Pose2::new(x? / MM_PER_M, y? / MM_PER_M, th?.to_radians());
    let from_to = match args.len() {
        7 => None,
        11 => {
            let v = (7..11).map(|i| number(n, "Cairn", &args[i])).collect::<Result<Vec<f64>, _>>()?;
            Some([[v[0] / MM_PER_M, v[1] / MM_PER_M], [v[2] / MM_PER_M, v[3] / MM_PER_M]])
        }
        other => return Err(error(n, format!("a Cairn has 7 words, or 11 with its from and to points; got {other}"))),
    };
    Ok(MapObject { kind: args[0].clone(), pose, name: args[6].clone(), from_to, line: n })
}

/// A goal or dock as a named pose, its name made unique among `taken`.
fn named_pose(object: &MapObject, tag: &str, taken: &[NamedPose]) -> NamedPose {
    let base = if object.name.is_empty() { format!("{}@{}", object.kind, object.line) } else { object.name.clone() };
    let mut name = base.clone();
    let mut k = 2;
    while taken.iter().any(|p| p.name == name) {
        name = format!("{base} ({k})");
        k += 1;
    }
    NamedPose {
        name,
        pose: object.pose,
        description: format!("ArMap {} (line {})", object.kind, object.line),
        tags: vec![tag.to_string()],
        bounds: None,
    }
}

/// A sector object's box as AMRISim places it: size `to − from`, centre
/// `from + size/2` turned by the heading about the map's origin, the box
/// turned by the heading. (Centre pose, size in m.)
fn box_of(object: &MapObject, error: &dyn Fn(usize, String) -> LoadError) -> Result<(Pose2, [f64; 2]), LoadError> {
    let Some([from, to]) = object.from_to else {
        return Err(error(object.line, format!("a {} box needs its from and to corners", object.kind)));
    };
    let size = [to[0] - from[0], to[1] - from[1]];
    if !(size[0] > 0.0 && size[1] > 0.0) {
        return Err(error(object.line, format!("a {} box needs a positive width and height", object.kind)));
    }
    let (sin, cos) = object.pose.theta_rad.sin_cos();
    let local = [from[0] + size[0] / 2.0, from[1] + size[1] / 2.0];
    let center = Pose2::new(cos * local[0] - sin * local[1], sin * local[0] + cos * local[1], object.pose.theta_rad);
    Ok((center, size))
}

/// The corners of a box (centre pose, size in m), counter-clockwise.
pub fn box_corners(center: Pose2, size_m: [f64; 2]) -> [[f64; 2]; 4] {
    let (hx, hy) = (size_m[0] / 2.0, size_m[1] / 2.0);
    [[-hx, -hy], [hx, -hy], [hx, hy], [-hx, hy]].map(|p| center.transform_point(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small map with one of each record type, in mm.
    const SMALL: &str = r#"2D-Map
MinPos: 0 0
MaxPos: 10000 10000
NumPoints: 2
NumLines: 2
Resolution: 100
OriginLatLonAlt: 42.8 -71.5 30
Display: "something ARIA shows"
MapInfo: GoalType Name=Goal "Label=Goal"
MapInfo: DockType Name=DockPioneer "Label=Pioneer dock"
MapInfo: SectorType Name=Sim.BoxObstacle "Label=Box"
MapInfo: SectorType Name=ReflectiveBox Sim.Obstacle=yes Sim.LaserReflect=32
MapInfo: SectorType Name=MarkerBox Sim.Obstacle=no Sim.LaserReflect=0 Sim.SonarReflect=no
MapInfo: SectorType Name=InvisibleBox Label=Sim_InvisibleBox Shape=Plain Sim.Obstacle=yes Sim.LaserReflect=0 Sim.SonarReflect=no
MapInfo: SectorType Name=box-nolaser Sim.Obstacle=yes Sim.LaserReflect=0 Sim.SonarReflect=yes
MapInfo: SectorType Name=BadGPSSector "Desc=GPS is bad here"
MapInfo: BoundaryType Name=Reflector Label=Reflector
Cairn: Goal 1000 2000 90 "" ICON "kitchen"
Cairn: Goal 3000 2000 0 "" ICON ""
Cairn: DockPioneer 500 500 -90 "" ICON "charger"
Cairn: Sim.BoxObstacle 0 0 0 "" ICON "" 4000 4000 4500 5000
Cairn: ReflectiveBox 0 0 90 "" ICON "" 1000 0 2000 1000
Cairn: MarkerBox 0 0 0 "" ICON "" 6000 6000 7000 7000
Cairn: InvisibleBox 0 0 0 "" ICON "" 7000 7000 7500 7500
Cairn: box-nolaser 0 0 0 "" ICON "" 8000 8000 8500 8500
Cairn: BadGPSSector 0 0 0 "" ICON "" 0 0 9000 9000
Cairn: Reflector 0 0 0 "" ICON "" 8000 1000 8000 3000
Cairn: ForbiddenLine 0 0 0 "" ICON "" 100 100 200 200
LINES
0 0 10000 0
0 0 0 10000
DATA
5000 5000
5020 5000
"#;

    fn parse_text(text: &str) -> Result<ArMapLayer, LoadError> {
        parse(text, Path::new("small.map"), "walls")
    }

    fn has_segment(segments: &[Segment], a: [f64; 2], b: [f64; 2]) -> bool {
        let near = |p: [f64; 2], q: [f64; 2]| (p[0] - q[0]).abs() < 1e-9 && (p[1] - q[1]).abs() < 1e-9;
        segments.iter().any(|s| (near(s.a, a) && near(s.b, b)) || (near(s.a, b) && near(s.b, a)))
    }

    #[test]
    fn every_record_type_is_read_in_metres() {
        let map = parse_text(SMALL).unwrap();
        // 2 lines; points, marker, sector and forbidden line give none
        assert_eq!(map.segments.len(), 2, "{:?}", map.segments);
        assert!(has_segment(&map.segments, [0.0, 0.0], [10.0, 0.0]));
        // the plain box, from (4, 4) to (4.5, 5): a movable box
        let plain = &map.boxes[..];
        assert_eq!(plain.len(), 1, "{plain:?}");
        assert_eq!((plain[0].kind.as_str(), plain[0].line, plain[0].size_m), ("Sim.BoxObstacle", 21, [0.5, 1.0]));
        assert_eq!((plain[0].center.x_m, plain[0].center.y_m, plain[0].center.theta_rad), (4.25, 4.5, 0.0));
        // the reflective box, turned 90°: its centre (1.5, 0.5) turned to
        // (−0.5, 1.5), 1 m square, bright; the reflector line, bright; the
        // invisible box, hit but unseen; box-nolaser, seen by sonar only
        let rules = |a: [f64; 2], b: [f64; 2]| {
            let found = map.objects.iter().find(|o| has_segment(&[o.segment], a, b));
            found.map(|o| (o.obstacle, o.laser, o.sonar, o.bright))
        };
        assert_eq!(map.objects.len(), 4 + 1 + 4 + 4, "{:?}", map.objects);
        assert_eq!(rules([0.0, 1.0], [0.0, 2.0]), Some((true, true, true, true)), "the reflective box");
        assert_eq!(rules([8.0, 1.0], [8.0, 3.0]), Some((true, true, true, true)), "the reflector");
        assert_eq!(rules([7.0, 7.0], [7.5, 7.0]), Some((true, false, false, false)), "the invisible box");
        assert_eq!(rules([8.0, 8.0], [8.5, 8.0]), Some((true, false, true, false)), "box-nolaser");
        assert_eq!(rules([6.0, 6.0], [7.0, 6.0]), None, "the marker box: nothing meets it");
        assert_eq!(map.origin_lat_lon_alt, Some([42.8, -71.5, 30.0]));

        let names: Vec<&str> = map.named_poses.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["kitchen", "Goal@19", "charger"]);
        let kitchen = &map.named_poses[0];
        assert_eq!((kitchen.pose.x_m, kitchen.pose.y_m), (1.0, 2.0));
        assert!((kitchen.pose.theta_rad - std::f64::consts::FRAC_PI_2).abs() < 1e-12);
        assert_eq!(kitchen.tags, ["goal"]);
        assert_eq!(map.named_poses[2].tags, ["dock"]);
    }

    #[test]
    fn points_are_obstacles_only_in_a_map_without_lines() {
        let points_only = "2D-Map\nResolution: 100\nDATA\n1000 1000\n";
        let map = parse_text(points_only).unwrap();
        assert_eq!(map.segments.len(), 4, "a 0.1 m square");
        assert!(has_segment(&map.segments, [0.95, 0.95], [1.05, 0.95]));
    }

    #[test]
    fn malformed_files_are_refused_naming_the_line() {
        let error = |text: &str| parse_text(text).unwrap_err().to_string();
        assert!(error("not a map\n").contains("starts with \"2D-Map\""));
        let bad_number = error("2D-Map\nLINES\n0 0 1000 0\n0 0 x 1\n");
        assert!(bad_number.contains("line 4") && bad_number.contains("\"x\""), "{bad_number}");
        assert!(error("2D-Map\nLINES\n0 0 1000\n").contains("x1 y1 x2 y2"));
        assert!(error("2D-Map\nNumLines: 3\nLINES\n0 0 1 1\n").contains("NumLines says 3 but LINES holds 1"));
        assert!(error("2D-Map\nCairn: Goal 1 2 \"\" ICON \"a\"\n").contains("line 2"));
        assert!(error("2D-Map\nthis is no entry\n").contains("Keyword: values"));
        assert!(error("2D-Map\nOriginLatLonAlt: 95 0 0\n").contains("out of range"));
        let no_corners = "2D-Map\nMapInfo: SectorType Name=NoLaser Sim.Obstacle=yes Sim.LaserReflect=0\n\
                          Cairn: NoLaser 0 0 0 \"\" ICON \"\"\n";
        let message = error(no_corners);
        assert!(message.contains("line 3") && message.contains("needs its from and to corners"), "{message}");
    }

    /// ARIA writes the georeference as `OriginLatLongAlt`; this line is
    /// AMRISim's `columbia.map`'s. Only the other spelling was read, so the
    /// map loaded without a georeference and its GPS reported 0°, 0°.
    #[test]
    fn the_georeference_as_aria_writes_it_is_read() {
        let map = parse_text("2D-Map\nOriginLatLongAlt: 42.807191 -71.578661 72.000000\nLINES\n0 0 1000 0\n").unwrap();
        assert_eq!(map.origin_lat_lon_alt, Some([42.807191, -71.578661, 72.0]));
        let error = parse_text("2D-Map\nOriginLatLongAlt: 42.8 -71.5\n").unwrap_err().to_string();
        assert!(error.contains("OriginLatLongAlt is latitude longitude altitude"), "{error}");
    }

    #[test]
    fn words_keep_quoted_runs_together() {
        assert_eq!(words(r#"Goal 1 2 0 "" ICON "Far Away""#), ["Goal", "1", "2", "0", "", "ICON", "Far Away"]);
        assert_eq!(
            words(r#"SectorType Name=X "Desc=a b" Shape=Plain"#),
            ["SectorType", "Name=X", "Desc=a b", "Shape=Plain"]
        );
    }
}
