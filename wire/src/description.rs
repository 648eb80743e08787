//! The world description: everything a node needs to know about the world
//! that does not change every step. Served by the world on
//! `flotilla/<sim>/world/description`.

use serde::{Deserialize, Serialize};

use crate::codec::WireMessage;
use crate::geometry::Pose2;
use crate::world_to_nodes::BodyId;

/// Layers are collision and sensing groups: at most 16, one bit each.
pub const MAX_LAYERS: usize = 16;

/// A set of layers, one bit per layer name (bit `i` = `layer_names[i]`).
pub type LayerBits = u16;

/// The static description of a world, at one revision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorldDescription {
    /// Bumped by every spawn, delete, move and reset.
    pub revision: u64,
    /// How many times the world was reset (simulation_interfaces'
    /// ResetSimulation) since it started. A node that sees it change starts
    /// its plugins afresh, as from the world file (drives at rest, random
    /// generators re-seeded, batteries as configured), so that a run after
    /// a reset repeats the run after the start.
    pub resets: u64,
    /// Physics step size in nanoseconds.
    pub step_ns: u64,
    /// World seed all random generators derive from.
    pub seed: u64,
    /// Path of the world file, for relative model paths.
    pub world_path: String,
    /// Every layer name; bit `i` of a [`LayerBits`] is `layer_names[i]`.
    pub layer_names: Vec<String>,
    /// Static geometry, one entry per layer entry of the world file.
    pub layers: Vec<LayerDescription>,
    /// Every model, in world-file order then spawn order.
    pub models: Vec<ModelDescription>,
    /// Where the world's origin is on Earth (latitude °, longitude °,
    /// altitude m), from an ArMap layer's `OriginLatLongAlt`: the GPS
    /// plugin's reference when its entry names none.
    pub georeference: Option<[f64; 3]>,
    /// The maps (floors, buildings, rooms) robots live on, one at a time;
    /// empty for a world of one map. See [`MapDescription`].
    pub maps: Vec<MapDescription>,
    /// Where robots change maps (a Flat world file's transitions), for the
    /// map-transition manager; empty when the world names none.
    pub transitions: Vec<MapTransition>,
    /// Every topic recorders record, by MCAP channel id: `channels[i]` is
    /// channel `i + 1` in every recording of this world, never another
    /// topic's while it runs (numbered by `flotilla_plugins::channels`).
    pub channels: Vec<String>,
    /// The world's named places (the world file's `named_poses`, an ArMap
    /// layer's goals and docks): where a battery charges, for one.
    pub places: Vec<Place>,
}

/// A named place of the world.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Place {
    /// Unique name.
    pub name: String,
    /// Where, in the world frame.
    pub pose: Pose2,
    /// What it is for (`dock`, `goal`, `spawn`, …).
    pub tags: Vec<String>,
}

impl WireMessage for WorldDescription {
    const KIND: &'static str = "WorldDescription";
}

impl WorldDescription {
    /// A description of these models and nothing else (revision 1, 5 ms
    /// steps, no layers or maps): what tests of the crates above build
    /// their worlds from.
    pub fn of_models(models: Vec<ModelDescription>) -> WorldDescription {
        WorldDescription {
            revision: 1,
            resets: 0,
            step_ns: 5_000_000,
            seed: 0,
            world_path: "world.yaml".into(),
            layer_names: vec![],
            layers: vec![],
            georeference: None,
            maps: vec![],
            transitions: vec![],
            channels: vec![],
            places: vec![],
            models,
        }
    }

    /// The bits of the named layers; `"all"` means every layer. Unknown names
    /// are returned as the error.
    pub fn layer_bits(&self, names: &[String]) -> Result<LayerBits, Vec<String>> {
        layer_bits(&self.layer_names, names)
    }

    /// The model with this name.
    pub fn model(&self, name: &str) -> Option<&ModelDescription> {
        self.models.iter().find(|m| m.name == name)
    }

    /// The layers a model on map `name` lives in: the map's own and every
    /// layer no map lists; every layer for `""` (no map) or an unknown map.
    pub fn map_mask(&self, name: &str) -> LayerBits {
        map_mask(&self.maps, name, every_layer(self.layer_names.len()))
    }
}

/// A map: a named set of layers (a floor, a building, a detailed room).
///
/// A model on a map lives in the map's layers and in the layers that no
/// map lists (shared by every map): its footprints collide and are seen
/// only there, and its sensors see only there. Two robots on maps without
/// a common layer never meet, even at the same x, y.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MapDescription {
    /// The map's name, as world files and transitions name it.
    pub name: String,
    /// The map's own layers.
    pub layers: LayerBits,
}

/// Where and when a robot on one map goes to another: a Flat world file's
/// `TRANSITION (x y radius [command]) new-map [(x y theta)]`, in metres and
/// radians.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MapTransition {
    /// The map it applies on (the `MAP` line above it).
    pub from_map: String,
    /// Centre of its circle, m.
    pub center_m: [f64; 2],
    /// Radius of its circle, m.
    pub radius_m: f64,
    /// The command that fires it while the robot is inside the circle;
    /// `None`: it fires by itself when the robot enters the circle.
    pub command: Option<String>,
    /// The map it goes to.
    pub to_map: String,
    /// Where the robot lands on the new map (model pose), if it moves.
    pub pose: Option<Pose2>,
    /// Where it was written: `<file>:<line>`, for logs.
    pub source: String,
}

impl MapTransition {
    /// Whether a point (m) lies within the circle (its rim included).
    pub fn contains(&self, point_m: [f64; 2]) -> bool {
        let (dx, dy) = (point_m[0] - self.center_m[0], point_m[1] - self.center_m[1]);
        dx * dx + dy * dy <= self.radius_m * self.radius_m
    }
}

/// See [`WorldDescription::map_mask`].
/// `layers` are the bits of every layer of the world.
pub fn map_mask(maps: &[MapDescription], name: &str, layers: LayerBits) -> LayerBits {
    let Some(map) = maps.iter().find(|m| m.name == name) else { return layers };
    let listed = maps.iter().fold(0, |bits, m| bits | m.layers);
    (map.layers | !listed) & layers
}

/// The bits of a world's `count` layers.
pub fn every_layer(count: usize) -> LayerBits {
    ((1u32 << count.min(MAX_LAYERS)) - 1) as LayerBits
}

/// Resolves layer names to bits against a list of known names.
pub fn layer_bits(known: &[String], names: &[String]) -> Result<LayerBits, Vec<String>> {
    let mut bits = 0;
    let mut unknown = Vec::new();
    for name in names {
        if name == "all" {
            bits |= every_layer(known.len());
        } else if let Some(i) = known.iter().position(|k| k == name) {
            bits |= 1 << i;
        } else {
            unknown.push(name.clone());
        }
    }
    if unknown.is_empty() {
        Ok(bits)
    } else {
        Err(unknown)
    }
}

/// One layer entry: its names and its static line segments in world frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LayerDescription {
    /// The names of this entry (the first identifies it).
    pub names: Vec<String>,
    /// Bits of all of this entry's names.
    pub bits: LayerBits,
    /// Boundary segments in the world frame, metres.
    pub segments: Vec<Segment>,
    /// Whether the segments outline the obstacles, each with the obstacle on
    /// its left walking from `a` to `b` and free space on its right (true
    /// for image layers, whose outlines are closed; false for line-segment
    /// layers, whose segments have no sides). Lasers use it to skip the
    /// faces of walls they see from behind.
    pub solid_on_left: bool,
    /// Display colour, RGBA in 0..1.
    pub color: [f64; 4],
    /// Walls that not everything meets (an ArMap's simulator objects: a box
    /// hidden from lasers, a reflector); empty for Flatland's layers.
    pub objects: Vec<ObjectWall>,
}

impl LayerDescription {
    /// Every wall of the layer, those with their own rules included (to
    /// draw them).
    pub fn all_walls(&self) -> impl Iterator<Item = &Segment> {
        self.segments.iter().chain(self.objects.iter().map(|o| &o.segment))
    }

    /// The walls bodies collide with.
    pub fn obstacles(&self) -> impl Iterator<Item = &Segment> {
        self.segments.iter().chain(self.objects.iter().filter(|o| o.obstacle).map(|o| &o.segment))
    }
}

/// A wall of a layer with its own rules (AMRISim's `Sim.Obstacle`,
/// `Sim.LaserReflect`, `Sim.SonarReflect`): whether bodies collide with it,
/// which sensors see it, and whether lasers read it as a reflector
/// (intensity 255, from either side).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ObjectWall {
    /// Where it is, m.
    pub segment: Segment,
    /// Bodies in the layer collide with it.
    pub obstacle: bool,
    /// Lasers see it.
    pub laser: bool,
    /// Sonar sees it.
    pub sonar: bool,
    /// Lasers read it as a reflector.
    pub bright: bool,
}

/// A line segment in metres.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Segment {
    /// Start point.
    pub a: [f64; 2],
    /// End point.
    pub b: [f64; 2],
}

/// A model: bodies, joints and plugin entries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelDescription {
    /// Unique model name.
    pub name: String,
    /// Namespace for topics and frames (`""` for none).
    pub namespace: String,
    /// Pose the model was placed at (spawn or last move).
    pub pose: Pose2,
    /// Path of the model file it was loaded from.
    pub model_path: String,
    /// Bodies, in file order.
    pub bodies: Vec<BodyDescription>,
    /// Joints, in file order.
    pub joints: Vec<JointDescription>,
    /// Enabled plugin entries, in file order.
    pub plugins: Vec<PluginDescription>,
    /// The map the model is on (`""`: none; see [`MapDescription`]).
    pub map: String,
    /// The layers the model lives in on its map (every layer on none):
    /// its footprints' layers and its sensors' are cut down to these.
    pub layer_mask: LayerBits,
}

impl ModelDescription {
    /// The body with this name.
    pub fn body(&self, name: &str) -> Option<&BodyDescription> {
        self.bodies.iter().find(|b| b.name == name)
    }

    /// The layers a footprint of this model collides in and is seen on,
    /// on the model's current map.
    pub fn footprint_layers(&self, footprint: &Footprint) -> LayerBits {
        footprint.layers & self.layer_mask
    }
}

/// Box2D's body types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum BodyKind {
    /// Moved by forces and velocities, collides.
    Dynamic,
    /// Never moves (except by teleport).
    Static,
    /// Moved by velocities only, not by contacts.
    Kinematic,
}

/// A rigid body of a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BodyDescription {
    /// Id used in state and actuation messages.
    pub id: BodyId,
    /// Name, unique in the model.
    pub name: String,
    /// Body type.
    pub kind: BodyKind,
    /// Pose in the world frame when the description was made.
    pub pose: Pose2,
    /// Pose in its model's frame as its model file has it: where the body
    /// is when the model stands at its pose untouched (a door's closed
    /// leaf), whatever it did since.
    pub pose_in_model: Pose2,
    /// Display colour, RGBA in 0..1.
    pub color: [f64; 4],
    /// Linear damping, 1/s.
    pub linear_damping: f64,
    /// Angular damping, 1/s.
    pub angular_damping: f64,
    /// Footprints (fixtures).
    pub footprints: Vec<Footprint>,
}

/// A fixture: a shape with material and layers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Footprint {
    /// The geometry, in the body frame.
    pub shape: FootprintShape,
    /// Layers this footprint collides in and is seen on.
    pub layers: LayerBits,
    /// False disables collisions but not sensing.
    pub collision: bool,
    /// Density, kg/m².
    pub density: f64,
    /// Friction coefficient.
    pub friction: f64,
    /// Restitution coefficient.
    pub restitution: f64,
    /// Sensor fixtures detect contacts but have no response and are invisible
    /// to lasers.
    pub sensor: bool,
}

/// The box around the solid (non-sensor) footprints of a body, in its
/// frame: centre and size (along x, along y), m; `None` without any.
pub fn footprints_box(footprints: &[Footprint]) -> Option<([f64; 2], [f64; 2])> {
    let (mut low, mut high) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
    let mut take = |[x, y]: [f64; 2]| {
        low = [low[0].min(x), low[1].min(y)];
        high = [high[0].max(x), high[1].max(y)];
    };
    for footprint in footprints.iter().filter(|f| !f.sensor) {
        match &footprint.shape {
            FootprintShape::Circle { center: [x, y], radius } => {
                take([x - radius, y - radius]);
                take([x + radius, y + radius]);
            }
            FootprintShape::Polygon { points } => points.iter().copied().for_each(&mut take),
        }
    }
    (low[0] <= high[0])
        .then(|| ([(low[0] + high[0]) / 2.0, (low[1] + high[1]) / 2.0], [high[0] - low[0], high[1] - low[1]]))
}

/// Footprint geometry in the body frame, metres.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum FootprintShape {
    /// A circle.
    Circle {
        /// Centre.
        center: [f64; 2],
        /// Radius.
        radius: f64,
    },
    /// A convex polygon of 3 to 8 points.
    Polygon {
        /// Vertices.
        points: Vec<[f64; 2]>,
    },
}

/// A joint between two bodies of a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JointDescription {
    /// Name, unique in the model.
    pub name: String,
    /// Revolute or weld, with their parameters.
    pub kind: JointKind,
    /// Names of the two bodies.
    pub bodies: [String; 2],
    /// Anchor on each body, in that body's frame.
    pub anchors: [[f64; 2]; 2],
    /// Whether the two bodies collide with each other.
    pub collide_connected: bool,
}

/// Joint types and their parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum JointKind {
    /// A hinge, optionally limited to `[lower, upper]` radians.
    Revolute {
        /// Angle limits in radians.
        limits: Option<[f64; 2]>,
    },
    /// A rigid connection.
    Weld {
        /// Reference angle in radians.
        angle: f64,
        /// Softness frequency in Hz (0 = rigid).
        frequency: f64,
        /// Damping ratio.
        damping: f64,
    },
}

/// A plugin entry of a model, served by whichever node claims it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PluginDescription {
    /// Plugin type, e.g. `Laser`.
    pub plugin_type: String,
    /// Plugin name, unique in the model.
    pub name: String,
    /// The whole entry as YAML text (after preprocessing), for the plugin's
    /// own typed parser.
    pub params_yaml: String,
}
