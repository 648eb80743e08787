//! Fuzz targets: every reader of input from outside the simulation, as a
//! function of arbitrary bytes that must return (an error is fine) and never
//! panic, hang or allocate without bound.
//!
//! The same functions run under libFuzzer (`fuzz/`, `cargo +nightly fuzz
//! run <target>`, see FUZZING.md) and, in the test suite, over the committed
//! corpora (`tests/corpora.rs`), on the stable toolchain.

use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

use flotilla_messages::services::Service;
use flotilla_wire::codec::decode;

/// A fuzz target: bytes in, nothing out, no panic.
pub type Target = fn(&[u8]);

/// Every target, by name (the name of its corpus directory and of its
/// libFuzzer binary).
pub const TARGETS: &[(&str, Target)] = &[
    ("world_file", world_file),
    ("armap", armap),
    ("line_segments", line_segments),
    ("map_image", map_image),
    ("flat_world", flat_world),
    ("ros_messages", ros_messages),
    ("wire_codec", wire_codec),
    ("services", services),
    ("pioneer_packets", pioneer_packets),
];

/// A directory of this process's own, for targets that read files.
fn scratch() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("flotilla-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        dir
    })
}

/// Loads a world file of `data` (YAML, the preprocessor with `$eval` Lua,
/// layers, models) beside a model file and a map of each kind it may name.
pub fn world_file(data: &[u8]) {
    let robot = b"bodies:\n  - name: base\n    footprints:\n      - {type: circle, radius: 0.2}\n";
    load_world_with(data, &[("robot.model.yaml", robot)]);
}

/// Writes `files` (name, content) into the scratch directory, then loads
/// the world file `world` (its bytes) written beside them.
fn load_world_with(world: &[u8], files: &[(&str, &[u8])]) {
    let dir = scratch();
    for (name, content) in files {
        if std::fs::write(dir.join(name), content).is_err() {
            return;
        }
    }
    let path = dir.join("fuzz.world.yaml");
    if std::fs::write(&path, world).is_ok() {
        let _ = flotilla_world_file::load_world(&path);
    }
}

/// A world of one layer whose map is `map`.
fn one_layer(map: &str) -> String {
    format!("properties: {{}}\nlayers:\n  - {{name: walls, map: {map}}}\n")
}

/// An ArMap (`.map`) layer.
pub fn armap(data: &[u8]) {
    load_world_with(one_layer("fuzz.map").as_bytes(), &[("fuzz.map", data)]);
}

/// A Flatland line-segment layer's data file.
pub fn line_segments(data: &[u8]) {
    let map = b"type: line_segments\ndata: lines.dat\nscale: 1.0\norigin: [0, 0, 0]\n";
    load_world_with(one_layer("lines.yaml").as_bytes(), &[("lines.yaml", map), ("lines.dat", data)]);
}

/// A map_server image layer (the bytes as the PNG file).
pub fn map_image(data: &[u8]) {
    let map =
        b"image: image.png\nresolution: 0.05\norigin: [0, 0, 0]\noccupied_thresh: 0.65\nfree_thresh: 0.2\nnegate: 0\n";
    load_world_with(one_layer("image.yaml").as_bytes(), &[("image.yaml", map), ("image.png", data)]);
}

/// A Flat world file of transitions between two maps.
pub fn flat_world(data: &[u8]) {
    let world = "properties:\n  maps: {floor-1: a, floor-2: b}\n  transitions: fuzz.world\n\
                 layers:\n  - {name: a, map: floor.yaml}\n  - {name: b, map: floor.yaml}\n";
    let floor = b"type: line_segments\ndata: floor.dat\nscale: 1.0\norigin: [0, 0, 0]\n";
    load_world_with(world.as_bytes(), &[("floor.dat", b"0 0 10 0\n"), ("floor.yaml", floor), ("fuzz.world", data)]);
}

/// Every ROS message Flotilla takes in (its first byte picks the type):
/// what the drives, the transition manager and the tween take on topics.
pub fn ros_messages(data: &[u8]) {
    use flotilla_messages::{geometry_msgs, std_msgs};
    let Some((&kind, bytes)) = data.split_first() else { return };
    match kind % 5 {
        0 => drop(flotilla_messages::geometry_msgs::decode_cmd_vel(bytes)),
        1 => drop(flotilla_messages::decode::<geometry_msgs::Twist>(bytes)),
        2 => drop(flotilla_messages::decode::<geometry_msgs::TwistStamped>(bytes)),
        3 => drop(flotilla_messages::decode::<std_msgs::Bool>(bytes)),
        _ => drop(flotilla_messages::decode::<std_msgs::StdString>(bytes)),
    }
}

/// Every internal message a process decodes (its first byte picks the type).
pub fn wire_codec(data: &[u8]) {
    use flotilla_wire::{control, description, drive_to_world, lockstep, world_to_nodes};
    let Some((&kind, bytes)) = data.split_first() else { return };
    match kind % 10 {
        0 => drop(decode::<world_to_nodes::WorldState>(bytes)),
        1 => drop(decode::<world_to_nodes::WorldStateHead>(bytes)),
        2 => drop(decode::<world_to_nodes::WorldContacts>(bytes)),
        3 => drop(decode::<world_to_nodes::WorldEvent>(bytes)),
        4 => drop(decode::<world_to_nodes::WorldStatus>(bytes)),
        5 => drop(decode::<description::WorldDescription>(bytes)),
        6 => drop(drive_to_world::decode_actuation(bytes)),
        7 => drop(decode::<control::ControlRequest>(bytes)),
        8 => drop(lockstep::decode_step_done(bytes)),
        _ => {
            if let Ok(batch) = flotilla_wire::recording::read_batch(bytes) {
                batch.index().for_each(drop);
                batch.messages().for_each(drop);
            }
        }
    }
}

/// The world's ROS services (the first byte picks one) answering a request,
/// on one world that lives across calls: the room with a robot and a crate.
pub fn services(data: &[u8]) {
    use flotilla_world::control::{ModelDirs, RunState};
    use flotilla_world::physics::Physics;
    use flotilla_world::ros_services::{answer, World};
    static WORLD: OnceLock<Mutex<(Physics, RunState)>> = OnceLock::new();
    let Some((&kind, request)) = data.split_first() else { return };
    let world = WORLD.get_or_init(|| {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../configs/tests/room/annex.world.yaml");
        let spec = flotilla_world_file::load_world(&path).expect("the annex room loads");
        let physics = Physics::new(&spec).expect("the annex room builds");
        let dirs = ModelDirs::new(&path, &[]).expect("the room's directory");
        let run = RunState::new(flotilla_wire::control::ClockMode::Fast, 1.0, true, dirs);
        Mutex::new((physics, run))
    });
    let service = Service::ALL[usize::from(kind) % Service::ALL.len()];
    // Loading another world from fuzzed bytes would only test the loader again.
    if matches!(service, Service::LoadWorld | Service::UnloadWorld) {
        return;
    }
    let mut guard = world.lock().unwrap_or_else(|e| e.into_inner());
    let (physics, run) = &mut *guard;
    let _ = answer(service, request, World { physics, run });
}

/// A Pioneer client's byte stream: framing, then each command decoded.
pub fn pioneer_packets(data: &[u8]) {
    use flotilla_pioneer::command::Command;
    use flotilla_pioneer::packet::PacketReader;
    let mut reader = PacketReader::default();
    for chunk in data.chunks(17) {
        reader.push(chunk);
        while let Some(next) = reader.next_packet() {
            if let Ok(packet) = next {
                let _ = Command::decode(&packet);
            }
        }
    }
}
