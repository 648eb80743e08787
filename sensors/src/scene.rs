//! What a laser (or a sonar) can see: the static walls of every layer that
//! kind of sensor sees and the footprints of every body, placed at the poses
//! of the latest world state.

use std::collections::HashMap;

use flotilla_wire::description::{FootprintShape, LayerBits, LayerDescription, ObjectWall, WorldDescription};
use flotilla_wire::geometry::Pose2;
use flotilla_wire::world_to_nodes::{BodyId, WorldState};

use crate::body_grid::BodyGrid;
use crate::raycast::{bounding_box, scan_shapes, ConvexPolygon, Fan, Hit, ScanBuffers, SegmentGrid, Shape, Vec2, Wall};

/// Grid cell size for wall segments, m: one pixel of a typical 5 cm map, so
/// a wall cell holds a few segments. Finer cells make walks shorter at the
/// walls (8 % faster than 0.1 m on the conestogo office), at four times the
/// memory of 0.1 m cells.
pub const GRID_CELL_M: f64 = 0.05;

/// Cell size for maps too large for [`GRID_CELL_M`], m.
pub const COARSE_GRID_CELL_M: f64 = 0.1;

/// Largest grid, in cells, built at [`GRID_CELL_M`]: about 36 MB of grid
/// per laser process (9 bytes a cell): maps up to about 95 m square.
/// Larger maps use [`COARSE_GRID_CELL_M`].
pub const MAX_FINE_GRID_CELLS: f64 = 4.0e6;

/// The cell size for walls spanning `extent_m` (width, height).
fn grid_cell_m(extent_m: [f64; 2]) -> f64 {
    let fine_cells = (extent_m[0] / GRID_CELL_M + 3.0) * (extent_m[1] / GRID_CELL_M + 3.0);
    if fine_cells <= MAX_FINE_GRID_CELLS {
        GRID_CELL_M
    } else {
        COARSE_GRID_CELL_M
    }
}

/// The kind of sensor a scene is built for: an ArMap's simulator objects
/// may hide from one kind (`ObjectWall::laser`, `ObjectWall::sonar`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sensing {
    /// A laser: sees the walls lasers see; reflectors read bright.
    #[default]
    Laser,
    /// A sonar: sees the walls sonar sees.
    Sonar,
}

#[derive(Debug, Clone)]
enum LocalShape {
    Circle {
        center: Vec2,
        radius: f64,
    },
    /// The hull of the footprint's points, in the body frame (taken once;
    /// a scan only moves it).
    Polygon(ConvexPolygon),
}

#[derive(Debug, Clone)]
struct SceneBody {
    pose: Pose2,
    /// cos and sin of the pose's heading, worked out once per state rather
    /// than at every scan that sees the body.
    cos_sin: [f64; 2],
    /// Largest distance from the body origin to any footprint point, m.
    reach_m: f64,
    footprints: Vec<(LocalShape, LayerBits)>,
}

/// cos and sin of a pose's heading: the values `Pose2::transform_point`
/// works out at each call, so footprints are placed exactly as it would.
fn cos_sin(pose: Pose2) -> [f64; 2] {
    let (s, c) = pose.theta_rad.sin_cos();
    [c, s]
}

/// Static walls plus movable bodies.
#[derive(Debug, Clone)]
pub struct Scene {
    walls: SegmentGrid,
    /// The walls lasers read as reflectors (`None`: there are none).
    bright: Option<SegmentGrid>,
    /// The kind of sensor it is built for.
    sensing: Sensing,
    /// The world's layers the walls were built from: a new world (LoadWorld)
    /// may keep the names and change the maps.
    layers: Vec<LayerDescription>,
    /// The walls' cell size asked for (`None`: sized for fans).
    cell_m: Option<f64>,
    bodies: Vec<SceneBody>,
    index: HashMap<BodyId, usize>,
    /// The bodies by position, rebuilt whenever they move.
    near: BodyGrid,
    /// The largest reach of any body, m.
    max_reach_m: f64,
    /// Each body's position for the grid (`None`: nothing to see), kept
    /// between rebuilds.
    positions: Vec<Option<Vec2>>,
}

impl Scene {
    /// Builds the scene of a description (bodies at their description
    /// poses), its walls in cells sized for a laser's fans (see
    /// [`GRID_CELL_M`]).
    pub fn new(description: &WorldDescription) -> Scene {
        Scene::with_cells(description, None)
    }

    /// [`Scene::new`] with walls in cells of `cell_m` (`None`: sized for
    /// fans). Short single rays, as a sonar casts, walk fewer and larger
    /// cells faster than the fine ones a fan's sweep wants.
    pub fn with_cells(description: &WorldDescription, cell_m: Option<f64>) -> Scene {
        Scene::sensed_by(description, cell_m, Sensing::Laser)
    }

    /// [`Scene::with_cells`] for a kind of sensor: the walls it sees.
    pub fn sensed_by(description: &WorldDescription, cell_m: Option<f64>, sensing: Sensing) -> Scene {
        let sees = |o: &&ObjectWall| match sensing {
            Sensing::Laser => o.laser,
            Sensing::Sonar => o.sonar,
        };
        let walls: Vec<Wall> = description
            .layers
            .iter()
            .flat_map(|layer| {
                let solid_on_left = if layer.solid_on_left { layer.bits } else { 0 };
                let objects = layer.objects.iter().filter(sees).map(|o| &o.segment);
                layer.segments.iter().chain(objects).map(move |s| Wall {
                    a: s.a,
                    b: s.b,
                    layers: layer.bits,
                    solid_on_left,
                })
            })
            .collect();
        let bright: Vec<Wall> = description
            .layers
            .iter()
            .flat_map(|layer| {
                let bright = layer.objects.iter().filter(move |o| sensing == Sensing::Laser && o.laser && o.bright);
                bright.map(|o| Wall { a: o.segment.a, b: o.segment.b, layers: layer.bits, solid_on_left: 0 })
            })
            .collect();
        let extent_m = bounding_box(walls.iter().flat_map(|w| [w.a, w.b]))
            .map_or([0.0, 0.0], |(lo, hi)| [hi[0] - lo[0], hi[1] - lo[1]]);
        let cell = cell_m.unwrap_or_else(|| grid_cell_m(extent_m));
        let mut scene = Scene {
            bright: (!bright.is_empty()).then(|| SegmentGrid::new(bright, cell.max(COARSE_GRID_CELL_M))),
            sensing,
            walls: SegmentGrid::new(walls, cell),
            layers: description.layers.clone(),
            cell_m,
            bodies: Vec::new(),
            index: HashMap::new(),
            near: BodyGrid::default(),
            max_reach_m: 0.0,
            positions: Vec::new(),
        };
        scene.set_bodies(description);
        scene
    }

    /// Keeps the scene in `slot` that of `description`, its walls in cells
    /// of `cell_m` (see [`Scene::with_cells`]): walls only change with the
    /// world file, so they are rebuilt only when its layers do (another
    /// world loaded); otherwise
    /// only the bodies are (after a spawn, delete or move).
    pub fn follow(slot: &mut Option<Scene>, description: &WorldDescription, cell_m: Option<f64>, sensing: Sensing) {
        match slot {
            Some(scene) if scene.layers == description.layers && scene.cell_m == cell_m && scene.sensing == sensing => {
                scene.set_bodies(description)
            }
            _ => *slot = Some(Scene::sensed_by(description, cell_m, sensing)),
        }
    }

    /// Whether any wall reads bright to a laser (an ArMap's reflectors).
    pub fn has_reflectors(&self) -> bool {
        self.bright.is_some()
    }

    /// Whether a beam from `origin` along `dir` that hit something at
    /// `distance_m` hit a reflector there (of `layers`).
    pub fn hit_reflector(&self, origin: Vec2, dir: Vec2, distance_m: f64, layers: LayerBits) -> bool {
        const SAME_HIT_M: f64 = 1e-6;
        let Some(bright) = &self.bright else { return false };
        bright
            .cast(origin, dir, distance_m + SAME_HIT_M, layers)
            .is_some_and(|hit| hit.distance_m >= distance_m - SAME_HIT_M)
    }

    /// Replaces the bodies (after a spawn, delete or move), keeping the walls.
    pub fn set_bodies(&mut self, description: &WorldDescription) {
        self.bodies.clear();
        self.index.clear();
        for model in &description.models {
            for body in &model.bodies {
                let mut reach: f64 = 0.0;
                let footprints = body
                    .footprints
                    .iter()
                    .filter(|f| !f.sensor) // sensors are invisible to lasers
                    .filter_map(|f| {
                        let shape = match &f.shape {
                            FootprintShape::Circle { center, radius } => {
                                reach = reach.max(center[0].hypot(center[1]) + radius);
                                LocalShape::Circle { center: *center, radius: *radius }
                            }
                            FootprintShape::Polygon { points } => {
                                for p in points {
                                    reach = reach.max(p[0].hypot(p[1]));
                                }
                                // No area, nothing to hit (the loader refuses such footprints).
                                LocalShape::Polygon(ConvexPolygon::hull(points)?)
                            }
                        };
                        Some((shape, model.footprint_layers(f)))
                    })
                    .collect();
                self.index.insert(body.id, self.bodies.len());
                self.bodies.push(SceneBody {
                    pose: body.pose,
                    cos_sin: cos_sin(body.pose),
                    reach_m: reach,
                    footprints,
                });
            }
        }
        self.file_bodies();
    }

    /// Rebuilds the grid of bodies by position (those with something to see).
    fn file_bodies(&mut self) {
        self.max_reach_m = self.bodies.iter().map(|b| b.reach_m).fold(0.0, f64::max);
        self.positions.clear();
        self.positions
            .extend(self.bodies.iter().map(|b| (!b.footprints.is_empty()).then_some([b.pose.x_m, b.pose.y_m])));
        self.near.rebuild(&self.positions);
    }

    /// Moves every body to its pose in `state`.
    pub fn update(&mut self, state: &WorldState) {
        for b in &state.bodies {
            if let Some(&i) = self.index.get(&b.id) {
                let body = &mut self.bodies[i];
                body.pose = b.pose;
                body.cos_sin = cos_sin(b.pose);
            }
        }
        self.file_bodies();
    }

    /// The current pose of a body.
    pub fn body_pose(&self, id: BodyId) -> Option<Pose2> {
        self.index.get(&id).map(|&i| self.bodies[i].pose)
    }

    /// Number of wall segments.
    pub fn wall_count(&self) -> usize {
        self.walls.len()
    }

    /// Collects into `scan` the footprints on `layers` that could be within
    /// `range_m` of `origin`, placed in the world. Call once per scan, then
    /// [`Scene::scan`] or [`Scene::cast`] with the same buffers.
    pub fn prepare(&self, origin: Vec2, range_m: f64, layers: LayerBits, scan: &mut ScanBuffers) {
        self.prepare_without(origin, range_m, layers, None, scan);
    }

    /// [`Scene::prepare`], leaving out the footprints of body `except`
    /// (a sonar's own robot, whose rim its transducers sit on).
    pub fn prepare_without(
        &self,
        origin: Vec2,
        range_m: f64,
        layers: LayerBits,
        except: Option<BodyId>,
        scan: &mut ScanBuffers,
    ) {
        scan.clear_footprints();
        let skipped = except.and_then(|id| self.index.get(&id).copied());
        // Only the bodies filed near the origin: within range plus the
        // largest reach of any body.
        self.near.for_each_near(origin, range_m + self.max_reach_m, |i| {
            if Some(i) == skipped {
                return;
            }
            let body = &self.bodies[i];
            // Out of range when farther than range + reach; compared squared,
            // with a hair of slack so that rounding never leaves out a body
            // at the very edge.
            let (dx, dy) = (body.pose.x_m - origin[0], body.pose.y_m - origin[1]);
            let within = range_m + body.reach_m;
            if dx * dx + dy * dy > within * within * (1.0 + 1e-9) {
                return;
            }
            for (shape, bits) in &body.footprints {
                if bits & layers == 0 {
                    continue;
                }
                let offset = [body.pose.x_m, body.pose.y_m];
                let placed = match shape {
                    LocalShape::Circle { center, radius } => {
                        let [c, s] = body.cos_sin;
                        let center =
                            [offset[0] + c * center[0] - s * center[1], offset[1] + s * center[0] + c * center[1]];
                        Shape::Circle { center, radius: *radius }
                    }
                    LocalShape::Polygon(local) => {
                        let mut polygon = scan.spare_polygon();
                        local.place_into(body.cos_sin, offset, &mut polygon);
                        Shape::Polygon(polygon)
                    }
                };
                scan.footprints.push((placed, *bits));
            }
        });
    }

    /// The nearest wall, or footprint prepared in `prepared`, on `layers`
    /// along a unit ray.
    pub fn cast(
        &self,
        prepared: &ScanBuffers,
        origin: Vec2,
        dir: Vec2,
        range_m: f64,
        layers: LayerBits,
    ) -> Option<Hit> {
        nearer_footprint(prepared, origin, dir, range_m, self.walls.cast(origin, dir, range_m, layers))
    }

    /// The nearest wall on `layers` that a unit ray hits within `range_m`
    /// (the walls' half of [`Scene::cast`], for callers that test the
    /// footprints themselves).
    pub fn cast_walls(&self, origin: Vec2, dir: Vec2, range_m: f64, layers: LayerBits) -> Option<Hit> {
        self.walls.cast(origin, dir, range_m, layers)
    }

    /// Casts a whole fan into `buffers`: walls in one sweep (see
    /// [`SegmentGrid::sweep_fan`]), then the footprints prepared with
    /// [`Scene::prepare`] arc by arc.
    /// This is the laser's kernel.
    pub fn scan(&self, fan: &Fan, buffers: &mut ScanBuffers) {
        // The sweep writes every beam, hit or not.
        buffers.size_beams(fan.dirs.len());
        self.walls.sweep_fan(fan, &mut buffers.sweep, &mut buffers.best, &mut buffers.bits);
        scan_shapes(fan, buffers);
    }

    /// [`Scene::cast`] with every wall tested (reference for tests and benches).
    pub fn cast_brute_force(
        &self,
        prepared: &ScanBuffers,
        origin: Vec2,
        dir: Vec2,
        range_m: f64,
        layers: LayerBits,
    ) -> Option<Hit> {
        nearer_footprint(prepared, origin, dir, range_m, self.walls.cast_brute_force(origin, dir, range_m, layers))
    }
}

/// `best`, or a footprint prepared in `prepared` hit before it.
fn nearer_footprint(
    prepared: &ScanBuffers,
    origin: Vec2,
    dir: Vec2,
    range_m: f64,
    mut best: Option<Hit>,
) -> Option<Hit> {
    for (shape, bits) in &prepared.footprints {
        let limit = best.map_or(range_m, |h| h.distance_m);
        if let Some(t) = shape.ray(origin, dir, limit) {
            if best.is_none_or(|h| t < h.distance_m) {
                best = Some(Hit { distance_m: t, layers: *bits });
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn office_maps_get_fine_cells_and_large_maps_coarse_ones() {
        // the conestogo office spans about 66 × 26 m
        assert_eq!(grid_cell_m([66.0, 26.0]), GRID_CELL_M);
        assert_eq!(grid_cell_m([90.0, 90.0]), GRID_CELL_M);
        assert_eq!(grid_cell_m([300.0, 120.0]), COARSE_GRID_CELL_M);
        assert_eq!(grid_cell_m([0.0, 0.0]), GRID_CELL_M);
    }
}
