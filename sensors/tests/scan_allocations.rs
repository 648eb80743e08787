//! A laser's scan allocates nothing once its buffers are warm: placing the
//! footprints of the robots in range (circles and polygons) and sweeping the
//! walls reuse the memory of earlier scans. Counted with a global allocator
//! that counts only on the thread that asks it to.

#![allow(
    unsafe_code,
    reason = "a global allocator is the one way to count allocations; it only forwards to the system's"
)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::Path;

use flotilla_sensors::raycast::{Fan, ScanBuffers};
use flotilla_sensors::scene::Scene;
use flotilla_world_file::load_world;

struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: every call is passed to the system allocator unchanged; the
// counters are thread-local cells, touched without allocating.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

fn count() {
    // `try_with`: the thread's locals may be gone while it exits.
    let _ = COUNTING.try_with(|on| {
        if on.get() {
            let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        }
    });
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Allocations made by `f` on this thread.
fn allocations_in(f: impl FnOnce()) -> usize {
    ALLOCATIONS.with(|n| n.set(0));
    COUNTING.with(|on| on.set(true));
    f();
    COUNTING.with(|on| on.set(false));
    ALLOCATIONS.with(Cell::get)
}

/// Twelve robots close together in the conestogo office, half of them round
/// and half of them boxes (polygon footprints), at assorted headings.
fn office_with_robots(dir: &Path) -> Scene {
    let map =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures/flatland/conestogo_office_test/map.yaml");
    let round = "bodies:\n  - name: base\n    type: dynamic\n    footprints:\n      - {type: circle, radius: 0.2, density: 10}\n";
    let boxy = "bodies:\n  - name: base\n    type: dynamic\n    footprints:\n      - {type: polygon, density: 10, points: [[0.3, -0.2], [0.3, 0.2], [-0.3, 0.25], [-0.3, -0.25]]}\n";
    std::fs::write(dir.join("round.model.yaml"), round).unwrap();
    std::fs::write(dir.join("boxy.model.yaml"), boxy).unwrap();
    let mut world = format!("properties: {{}}\nlayers:\n  - name: walls\n    map: {:?}\nmodels:\n", map.display());
    for k in 0..12 {
        let (x, y) = (2.0 + 0.9 * (k % 4) as f64, 2.0 + 0.9 * (k / 4) as f64);
        let model = if k % 2 == 0 { "round" } else { "boxy" };
        world += &format!("  - {{name: r{k}, model: {model}.model.yaml, pose: [{x}, {y}, {}]}}\n", 0.7 * k as f64);
    }
    std::fs::write(dir.join("world.yaml"), world).unwrap();
    Scene::new(&load_world(&dir.join("world.yaml")).unwrap().initial_description().unwrap())
}

#[test]
fn a_warm_scan_allocates_nothing() {
    let dir = std::env::temp_dir().join(format!("flotilla-scan-allocations-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let scene = office_with_robots(&dir);
    let _ = std::fs::remove_dir_all(&dir);

    let beams = 1081;
    let fov = 270f64.to_radians();
    let mut dirs = vec![[0.0; 2]; beams];
    let mut buffers = ScanBuffers::default();
    // Scans from between the robots, so that every footprint is in range.
    let mut scan_all = |buffers: &mut ScanBuffers| {
        let mut robots_seen = 0;
        for k in 0..8 {
            let (origin, heading) = ([2.45 + 0.9 * (k % 3) as f64, 2.45 + 0.9 * (k / 3) as f64], 0.9 * k as f64);
            for (i, d) in dirs.iter_mut().enumerate() {
                let (s, c) = (heading - fov / 2.0 + i as f64 * fov / (beams - 1) as f64).sin_cos();
                *d = [c, s];
            }
            let fan = Fan {
                origin,
                start_rad: heading - fov / 2.0,
                increment_rad: fov / (beams - 1) as f64,
                dirs: &dirs,
                range_m: 20.0,
                layers: u16::MAX,
            };
            scene.prepare(origin, 20.0, u16::MAX, buffers);
            scene.scan(&fan, buffers);
            robots_seen += buffers.footprints.len();
        }
        robots_seen
    };
    let seen = scan_all(&mut buffers); // warm up: the buffers grow here
    assert_eq!(seen, 8 * 12, "every robot is in range of every scan");
    let allocations = allocations_in(|| {
        scan_all(&mut buffers);
    });
    assert_eq!(allocations, 0, "8 warm scans of 1081 beams past 12 robots");
}
