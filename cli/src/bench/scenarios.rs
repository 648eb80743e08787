//! The standard benchmark scenarios, generated into a directory as ordinary
//! Flatland world files (so that any of them can also be run with
//! `flotilla run` and inspected).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

mod crowd;

/// The conestogo office map (Flatland's test data, BSD-3-Clause), embedded
/// so that the benchmark needs no checkout.
const OFFICE_PNG: &[u8] = include_bytes!("../../../configs/office/map.png");
const OFFICE_RESOLUTION_M: f64 = 0.05;
const OFFICE_ORIGIN_M: [f64; 2] = [-16.6, -6.65];

/// Warehouse geometry, metres.
const WAREHOUSE_RESOLUTION_M: f64 = 0.1;
const SHELF_DEPTH_M: f64 = 1.0;
const AISLE_WIDTH_M: f64 = 3.0;
const SHELF_LENGTH_M: f64 = 12.0;
const CROSS_AISLE_M: f64 = 3.0;
const ROBOT_SPACING_M: f64 = 2.5;

/// What the robots of a wandering scenario carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fleet {
    /// Diff drive, odometry and a 1081-beam laser.
    Wander,
    /// The same plus a Pioneer P3-DX's 16-transducer sonar ring at 10 Hz
    /// and a bumper (`-pioneer`).
    Pioneer,
}

/// What a wandering scenario has besides its robots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Extras {
    /// People walking among the robots (`-crowd-M`).
    pub people: usize,
    /// Closed doors nobody asks to open (`-doors-K`), standing in a row
    /// [`IDLE_DOORS_AWAY_M`] beyond the map, out of every robot's sight and
    /// way: they measure what idle doors cost, with the robots doing exactly
    /// what they do without them.
    pub doors: usize,
}

/// A benchmark scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scenario {
    /// `office-N[-pioneer][-crowd-M][-doors-K]`: N wandering robots on the
    /// conestogo office map, M people walking among them, K idle doors.
    Office(usize, Fleet, Extras),
    /// `warehouse-N[-pioneer][-crowd-M][-doors-K]`: N wandering robots in an
    /// open warehouse with shelves, M people, K idle doors.
    Warehouse(usize, Fleet, Extras),
    /// `latency`: one robot, odometry every step, for cmd_vel → odometry latency.
    Latency,
}

impl std::str::FromStr for Scenario {
    type Err = String;
    fn from_str(s: &str) -> Result<Scenario, String> {
        let count = |n: &str| {
            n.parse::<usize>()
                .ok()
                .filter(|n| (1..=5000).contains(n))
                .ok_or_else(|| format!("{s}: the robot count must be 1..=5000"))
        };
        let (rest, doors) = match s.split_once("-doors-") {
            Some((rest, k)) => {
                let k = k.parse::<usize>().ok().filter(|k| (1..=10_000).contains(k));
                (rest, k.ok_or_else(|| format!("{s}: the number of doors must be 1..=10000"))?)
            }
            None => (s, 0),
        };
        let (rest, people) = match rest.split_once("-crowd-") {
            Some((rest, m)) => {
                let m = m.parse::<usize>().ok().filter(|m| (1..=20_000).contains(m));
                (rest, m.ok_or_else(|| format!("{s}: the number of people must be 1..=20000"))?)
            }
            None => (rest, 0),
        };
        let extras = Extras { people, doors };
        let (base, fleet) = match rest.strip_suffix("-pioneer") {
            Some(base) => (base, Fleet::Pioneer),
            None => (rest, Fleet::Wander),
        };
        match base.split_once('-') {
            _ if s == "latency" => Ok(Scenario::Latency),
            Some(("office", n)) => count(n).map(|n| Scenario::Office(n, fleet, extras)),
            Some(("warehouse", n)) => count(n).map(|n| Scenario::Warehouse(n, fleet, extras)),
            _ => Err(format!(
                "unknown scenario {s:?}; expected office-50, warehouse-200, warehouse-1000 (or office-N, warehouse-N, \
                 each with -pioneer for a sonar ring on every robot, -crowd-M for M people walking and -doors-K for \
                 K idle doors) or latency"
            )),
        }
    }
}

impl std::fmt::Display for Scenario {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Scenario::Office(n, fleet, _) => write!(f, "office-{n}{}", fleet.suffix())?,
            Scenario::Warehouse(n, fleet, _) => write!(f, "warehouse-{n}{}", fleet.suffix())?,
            Scenario::Latency => f.write_str("latency")?,
        }
        let (Scenario::Office(_, _, extras) | Scenario::Warehouse(_, _, extras)) = self else { return Ok(()) };
        if extras.people > 0 {
            write!(f, "-crowd-{}", extras.people)?;
        }
        if extras.doors > 0 {
            write!(f, "-doors-{}", extras.doors)?;
        }
        Ok(())
    }
}

impl Fleet {
    fn suffix(self) -> &'static str {
        match self {
            Fleet::Wander => "",
            Fleet::Pioneer => "-pioneer",
        }
    }

    /// The robot model file of this fleet.
    fn robot(self) -> String {
        match self {
            Fleet::Wander => WANDER_ROBOT.to_string(),
            Fleet::Pioneer => format!("{WANDER_ROBOT}{PIONEER_SENSORS}"),
        }
    }
}

/// Every scenario's physics step, s.
pub const STEP_S: f64 = 0.005;

/// A generated scenario.
#[derive(Debug, Clone)]
pub struct Generated {
    /// The world file.
    pub world: PathBuf,
    /// Robots in it.
    pub robots: usize,
    /// Laser beams per scan (0: no laser).
    pub beams_per_scan: usize,
    /// Scans per sim second of each robot's laser, Hz.
    pub scan_rate_hz: f64,
    /// Every robot has a sonar ring and a bumper (a `flotilla-sonar` and a
    /// `flotilla-bumper` process serve them).
    pub pioneer: bool,
    /// People walking (a `flotilla-crowd` process walks them).
    pub people: usize,
    /// Idle doors (a `flotilla-building` process serves them).
    pub doors: usize,
}

/// The robot every wandering scenario uses: 1081-beam 270° 20 m laser at
/// 10 Hz, odometry at 50 Hz (physics runs at 200 Hz).
const WANDER_ROBOT: &str = "\
# Benchmark robot: diff drive, odometry at 50 Hz, 1081-beam 270° 20 m laser at 10 Hz.
bodies:
  - name: base_link
    type: dynamic
    footprints:
      - {type: circle, radius: 0.2, density: 10}   # m, kg/m²
plugins:
  - type: DiffDrive
    name: drive
    body: base_link
    pub_rate: 50                                   # Hz
    odom_pose_noise: [0.0001, 0.0001, 0.0001]      # m², m², rad²
    odom_twist_noise: [0.0001, 0.0001, 0.0001]
    linear_dynamics: {acceleration_limit: 1.0, velocity_limit: 1.0}    # m/s², m/s
    angular_dynamics: {acceleration_limit: 4.0, velocity_limit: 2.0}   # rad/s², rad/s
  - type: Laser
    name: laser
    body: base_link
    frame: laser
    topic: scan
    origin: [0.1, 0, 0]
    range: 20                                      # m
    noise_std_dev: 0.01                            # m
    update_rate: 10                                # Hz (WANDER_SCAN_RATE_HZ)
    angle: {min: -2.356194490192345, max: 2.356194490192345, increment: 0.004363323129985824}
";

/// What a Pioneer fleet adds to [`WANDER_ROBOT`]'s plugins: AMRISim's P3-DX
/// sonar ring, 16 transducers, 10 readings per sim second; and a bumper,
/// at every step while it touches anything and at 10 Hz otherwise.
const PIONEER_SENSORS: &str = "  - type: Sonar
    name: sonar
    body: base_link
    ring: p3dx
    update_rate: 10                                # Hz
  - type: Bumper
    name: bumper
    update_rate: 10                                # Hz, when nothing touches
";

/// The latency robot: no acceleration limits and odometry every step, so
/// that the first odometry sample after a command shows it exactly.
const LATENCY_ROBOT: &str = "\
# Latency probe robot: the commanded velocity shows in the next odometry sample.
bodies:
  - name: base_link
    type: dynamic
    footprints:
      - {type: circle, radius: 0.2, density: 10}
plugins:
  - type: DiffDrive
    name: drive
    body: base_link
    cmd_vel_timeout: 0
";

/// An idle door of `-doors-K`: a sliding leaf, opened only when asked.
const IDLE_DOOR: &str = "\
# Benchmark door: a 1.6 m sliding leaf that opens when Open-RMF asks (nobody does).
bodies:
  - name: leaf
    type: kinematic
    footprints:
      - {type: polygon, density: 1, points: [[-0.8, -0.05], [0.8, -0.05], [0.8, 0.05], [-0.8, 0.05]]}
plugins:
  - type: Door
    name: door
    body: leaf
    motion: sliding
    travel: 1.6            # m
";

/// How far beyond the map's free floor the idle doors stand, m: more than
/// a laser's 20 m range.
const IDLE_DOORS_AWAY_M: f64 = 100.0;
/// The spacing of the idle doors' row, m.
const IDLE_DOOR_SPACING_M: f64 = 2.0;

const LASER_BEAMS: usize = 1081;
/// The drive's odometry `pub_rate` in [`WANDER_ROBOT`], Hz.
pub const ODOMETRY_RATE_HZ: f64 = 50.0;
/// The laser's `update_rate` in [`WANDER_ROBOT`].
const WANDER_SCAN_RATE_HZ: f64 = 10.0;

/// Writes `scenario` into `dir` and returns where its world is.
pub fn generate(scenario: Scenario, dir: &Path) -> anyhow::Result<Generated> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let write = |name: &str, bytes: &[u8]| {
        std::fs::write(dir.join(name), bytes).with_context(|| format!("writing {}", dir.join(name).display()))
    };
    let mut walks = Vec::new();
    let doors = match scenario {
        Scenario::Office(_, _, extras) | Scenario::Warehouse(_, _, extras) => extras.doors,
        Scenario::Latency => 0,
    };
    let (layer, poses, robot, beams, scan_rate_hz) = match scenario {
        Scenario::Office(n, fleet, Extras { people, .. }) => {
            write("office.png", OFFICE_PNG)?;
            write("office.yaml", map_yaml("office.png", OFFICE_RESOLUTION_M, OFFICE_ORIGIN_M).as_bytes())?;
            let image = image::load_from_memory(OFFICE_PNG).context("decoding the office map")?.to_luma8();
            let mut poses = free_poses(&image, OFFICE_RESOLUTION_M, OFFICE_ORIGIN_M, n + people)?;
            walks = crowd::walks(&image, OFFICE_RESOLUTION_M, OFFICE_ORIGIN_M, &poses.split_off(n));
            ("office.yaml", poses, fleet.robot(), LASER_BEAMS, WANDER_SCAN_RATE_HZ)
        }
        Scenario::Warehouse(n, fleet, Extras { people, .. }) => {
            let (image, poses) = warehouse(n);
            if people > 0 {
                let starts = free_poses(&image, WAREHOUSE_RESOLUTION_M, [0.0, 0.0], people + n)?;
                // the robots' own aisle places are among them: keep clear of them
                let clear = |p: &[f64; 3]| poses.iter().all(|r| (r[0] - p[0]).hypot(r[1] - p[1]) > 1.0);
                let starts: Vec<[f64; 3]> = starts.into_iter().filter(clear).take(people).collect();
                walks = crowd::walks(&image, WAREHOUSE_RESOLUTION_M, [0.0, 0.0], &starts);
            }
            let mut png = Vec::new();
            image
                .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
                .context("encoding the warehouse map")?;
            write("warehouse.png", &png)?;
            write("warehouse.yaml", map_yaml("warehouse.png", WAREHOUSE_RESOLUTION_M, [0.0, 0.0]).as_bytes())?;
            ("warehouse.yaml", poses, fleet.robot(), LASER_BEAMS, WANDER_SCAN_RATE_HZ)
        }
        Scenario::Latency => ("", vec![[0.0, 0.0, 0.0]], LATENCY_ROBOT.to_string(), 0, 0.0),
    };
    write("robot.model.yaml", robot.as_bytes())?;
    let mut world = format!(
        "# Generated by `flotilla bench {scenario}`.\nproperties:\n  step_size: {STEP_S}   # s: physics at {} Hz\n  seed: 1\nlayers:\n",
        1.0 / STEP_S
    );
    if layer.is_empty() {
        world.push_str("  - name: \"2d\"\n");
    } else {
        let _ = writeln!(world, "  - {{name: \"2d\", map: \"{layer}\"}}");
    }
    world.push_str("models:\n");
    for (i, [x, y, theta]) in poses.iter().enumerate() {
        let name = format!("robot{}", i + 1);
        let _ = writeln!(
            world,
            "  - {{name: {name}, namespace: {name}, pose: [{x:.3}, {y:.3}, {theta:.3}], model: robot.model.yaml}}"
        );
    }
    if doors > 0 {
        write("door.model.yaml", IDLE_DOOR.as_bytes())?;
        // Below the lowest robot, far out of sight.
        let floor_y = poses.iter().map(|p| p[1]).fold(f64::INFINITY, f64::min);
        for i in 0..doors {
            let (x, y) = (i as f64 * IDLE_DOOR_SPACING_M, floor_y - IDLE_DOORS_AWAY_M);
            let _ = writeln!(world, "  - {{name: door{}, pose: [{x:.1}, {y:.1}, 0], model: door.model.yaml}}", i + 1);
        }
    }
    world.push_str(&crowd::section(&walks));
    write("world.yaml", world.as_bytes())?;
    let pioneer =
        matches!(scenario, Scenario::Office(_, Fleet::Pioneer, _) | Scenario::Warehouse(_, Fleet::Pioneer, _));
    Ok(Generated {
        world: dir.join("world.yaml"),
        robots: poses.len(),
        beams_per_scan: beams,
        scan_rate_hz,
        pioneer,
        people: walks.len(),
        doors,
    })
}

fn map_yaml(image: &str, resolution_m: f64, origin_m: [f64; 2]) -> String {
    format!(
        "image: {image}\nresolution: {resolution_m}\norigin: [{}, {}, 0.0]\nnegate: 0\noccupied_thresh: 0.65\nfree_thresh: 0.196\n",
        origin_m[0], origin_m[1]
    )
}

/// `count` poses on a 1.5 m grid where a 0.6 m disc is clear white floor,
/// spread over the map in a fixed pseudo-random order.
fn free_poses(
    image: &image::GrayImage,
    resolution_m: f64,
    origin_m: [f64; 2],
    count: usize,
) -> anyhow::Result<Vec<[f64; 3]>> {
    const GRID_M: f64 = 1.5;
    const CLEAR_RADIUS_M: f64 = 0.6;
    const WHITE: u8 = 250;
    let (w, h) = image.dimensions();
    let r_px = (CLEAR_RADIUS_M / resolution_m).ceil() as i64;
    let clear = |cx: i64, cy: i64| {
        (-r_px..=r_px).all(|dy| {
            (-r_px..=r_px).all(|dx| {
                let (x, y) = (cx + dx, cy + dy);
                dx * dx + dy * dy > r_px * r_px
                    || (x >= 0
                        && y >= 0
                        && x < w as i64
                        && y < h as i64
                        && image.get_pixel(x as u32, y as u32)[0] >= WHITE)
            })
        })
    };
    let step = (GRID_M / resolution_m).round() as i64;
    let mut candidates = Vec::new();
    for cy in (r_px..h as i64 - r_px).step_by(step as usize) {
        for cx in (r_px..w as i64 - r_px).step_by(step as usize) {
            if clear(cx, cy) {
                let x = origin_m[0] + (cx as f64 + 0.5) * resolution_m;
                let y = origin_m[1] + (h as f64 - cy as f64 - 0.5) * resolution_m;
                candidates.push([x, y]);
            }
        }
    }
    if candidates.len() < count {
        bail!("the office map has room for {} robots on a {GRID_M} m grid, not {count}", candidates.len());
    }
    // A fixed shuffle (FNV hash of the index) spreads robots over the floor.
    let hash = |i: usize| (i as u64 ^ 0xcbf2_9ce4_8422_2325).wrapping_mul(0x0000_0100_0000_01b3).rotate_left(29);
    let mut order: Vec<usize> = (0..candidates.len()).collect();
    order.sort_by_key(|&i| hash(i));
    Ok(order
        .into_iter()
        .take(count)
        .enumerate()
        .map(|(k, i)| [candidates[i][0], candidates[i][1], (k as f64 * 0.7) % std::f64::consts::TAU])
        .collect())
}

/// An open warehouse sized for `robots`: rows of 12 m × 1 m shelves, 3 m
/// aisles between rows, 3 m cross aisles, walls around; robots on the aisle
/// centre lines every 2.5 m. Origin at the bottom-left corner.
fn warehouse(robots: usize) -> (image::GrayImage, Vec<[f64; 3]>) {
    let aisles = ((robots as f64 / 3.0).sqrt().ceil() as usize).max(1);
    let per_aisle = robots.div_ceil(aisles);
    let period_x = SHELF_LENGTH_M + CROSS_AISLE_M;
    let width_m = ((per_aisle as f64 * ROBOT_SPACING_M + 2.0 * ROBOT_SPACING_M) / period_x).ceil() * period_x;
    let period_y = SHELF_DEPTH_M + AISLE_WIDTH_M;
    let height_m = aisles as f64 * period_y + AISLE_WIDTH_M;
    let px = |m: f64| (m / WAREHOUSE_RESOLUTION_M).round() as u32;
    let (w, h) = (px(width_m), px(height_m));
    let mut image = image::GrayImage::from_pixel(w, h, image::Luma([254]));
    let mut fill = |x0: f64, y0: f64, x1: f64, y1: f64| {
        // world y up, image rows down
        for row in px(height_m - y1).min(h)..px(height_m - y0).min(h) {
            for col in px(x0).min(w)..px(x1).min(w) {
                image.put_pixel(col, row, image::Luma([0]));
            }
        }
    };
    let wall = 0.2;
    fill(0.0, 0.0, width_m, wall);
    fill(0.0, height_m - wall, width_m, height_m);
    fill(0.0, 0.0, wall, height_m);
    fill(width_m - wall, 0.0, width_m, height_m);
    for k in 0..aisles {
        let y0 = AISLE_WIDTH_M + k as f64 * period_y;
        let mut x = CROSS_AISLE_M;
        while x + SHELF_LENGTH_M <= width_m - CROSS_AISLE_M + 1e-9 {
            fill(x, y0, x + SHELF_LENGTH_M, y0 + SHELF_DEPTH_M);
            x += period_x;
        }
    }
    let mut poses = Vec::with_capacity(robots);
    'outer: for k in 0..=aisles {
        let y = AISLE_WIDTH_M / 2.0 + k as f64 * period_y;
        let mut x = ROBOT_SPACING_M;
        while x < width_m - ROBOT_SPACING_M / 2.0 {
            if poses.len() == robots {
                break 'outer;
            }
            let heading = if (k + poses.len()) % 2 == 0 { 0.0 } else { std::f64::consts::PI };
            poses.push([x, y, heading]);
            x += ROBOT_SPACING_M;
        }
    }
    (image, poses)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenario_names_round_trip() {
        for name in [
            "office-50",
            "warehouse-200",
            "warehouse-1000",
            "office-50-pioneer",
            "warehouse-1000-pioneer",
            "latency",
            "office-50-crowd-200",
            "warehouse-200-pioneer-crowd-50",
            "office-50-doors-100",
            "warehouse-200-pioneer-crowd-50-doors-10",
        ] {
            assert_eq!(name.parse::<Scenario>().unwrap().to_string(), name);
        }
        assert!("warehouse-0".parse::<Scenario>().is_err());
        assert!("moon-5".parse::<Scenario>().is_err());
        assert!("latency-pioneer".parse::<Scenario>().is_err());
        assert!("office-50-crowd-0".parse::<Scenario>().is_err());
        assert!("office-50-crowd-many".parse::<Scenario>().is_err());
        assert!("office-50-doors-0".parse::<Scenario>().is_err());
    }

    #[test]
    fn generated_worlds_load_with_every_robot() {
        let none = Extras::default();
        let people = |people| Extras { people, doors: 0 };
        for scenario in [
            Scenario::Office(50, Fleet::Wander, none),
            Scenario::Warehouse(200, Fleet::Wander, none),
            Scenario::Office(5, Fleet::Pioneer, none),
            Scenario::Office(50, Fleet::Wander, people(200)),
            Scenario::Warehouse(200, Fleet::Wander, people(100)),
            Scenario::Office(50, Fleet::Wander, Extras { people: 0, doors: 100 }),
            Scenario::Latency,
        ] {
            let extras = match scenario {
                Scenario::Office(_, _, extras) | Scenario::Warehouse(_, _, extras) => extras,
                Scenario::Latency => none,
            };
            let (people, doors) = (extras.people, extras.doors);
            let dir = std::env::temp_dir().join(format!("flotilla-bench-test-{scenario}-{}", std::process::id()));
            let generated = generate(scenario, &dir).unwrap();
            let spec = flotilla_world_file::load_world(&generated.world).unwrap();
            assert_eq!(spec.models.len(), generated.robots + people + doors, "{scenario}");
            assert_eq!((generated.people, generated.doors), (people, doors), "{scenario}");
            let door_models = spec.models.iter().filter(|m| m.plugins.iter().any(|p| p.plugin_type == "Door"));
            assert_eq!(door_models.count(), doors, "{scenario}");
            let walking = spec.models.iter().filter(|m| m.plugins.iter().any(|p| p.plugin_type == "Pedestrian"));
            assert_eq!(walking.count(), people, "{scenario}");
            let types: Vec<&str> = spec.models[0].plugins.iter().map(|p| p.plugin_type.as_str()).collect();
            let pioneer = scenario == Scenario::Office(5, Fleet::Pioneer, none);
            assert_eq!(generated.pioneer, pioneer, "{scenario}");
            assert_eq!(types.contains(&"Sonar") && types.contains(&"Bumper"), pioneer, "{scenario}: {types:?}");
            let _ = std::fs::remove_dir_all(&dir);
        }
    }

    #[test]
    fn the_scan_rate_counted_is_the_one_the_robot_file_sets() {
        // The bench counts beams from it instead of subscribing to every scan.
        assert!(WANDER_ROBOT.contains(&format!("update_rate: {WANDER_SCAN_RATE_HZ} ")), "{WANDER_ROBOT}");
        assert_eq!(WANDER_ROBOT.matches("update_rate:").count(), 1, "only the laser sets a rate");
    }

    #[test]
    fn warehouse_robots_stand_in_aisles_inside_the_walls() {
        let (image, poses) = warehouse(1000);
        assert_eq!(poses.len(), 1000);
        for [x, y, _] in poses {
            let (col, row) =
                ((x / WAREHOUSE_RESOLUTION_M) as u32, image.height() - 1 - (y / WAREHOUSE_RESOLUTION_M) as u32);
            assert_eq!(image.get_pixel(col, row)[0], 254, "robot at ({x}, {y}) on free floor");
        }
    }
}
