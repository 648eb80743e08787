//! Checkpoints against the room world of the tests: a world resumed from
//! one steps on bit for bit as the saved world does, and every kind of bad
//! file is refused before anything changes.

use super::*;
use flotilla_wire::drive_to_world::BodyCommand;
use flotilla_wire::world_to_nodes::WorldState;
use flotilla_world_file::{load_world, WorldSpec};

fn room() -> WorldSpec {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/tests/room/world.yaml");
    load_world(&path).expect("the test room loads")
}

fn state(physics: &Physics) -> WorldState {
    let mut state = WorldState { revision: 0, step: 0, time: Default::default(), step_ns: 0, bodies: Vec::new() };
    physics.state_into(&mut state);
    state
}

/// The room's robot driven in an arc, so that the saved world holds a
/// moving body, a held command and contacts with the walls to come.
fn driven(spec: &WorldSpec, steps: u64) -> Physics {
    let mut physics = Physics::new(spec).unwrap();
    let robot = physics.model_body_ids("robot")[0];
    physics.command(BodyCommand { body: robot, local_vx_mps: 1.0, local_vy_mps: 0.0, omega_radps: 0.05 });
    for _ in 0..steps {
        physics.step();
    }
    physics
}

#[test]
fn a_resumed_world_steps_on_bit_for_bit_as_the_saved_one() {
    let spec = room();
    let mut saved = driven(&spec, 400);
    let bytes = save(&saved, false, &NodeMemory::new());
    let mut resumed = Physics::new(&spec).unwrap();
    let (header, _) = read(&bytes).unwrap().restore_into(&mut resumed).unwrap();
    assert_eq!((header.step, header.paused, header.time_s()), (400, false, 2.0));
    assert_eq!(state(&resumed), state(&saved), "the same state at once");
    assert_eq!(resumed.description(), saved.description());
    for _ in 0..2000 {
        saved.step();
        resumed.step();
    }
    let (a, b) = (state(&saved), state(&resumed));
    assert_eq!(a, b, "the same state 10 s on (the robot meets a wall meanwhile)");
    let robot = a.bodies.iter().find(|body| body.id == saved.model_body_ids("robot")[0]).unwrap();
    assert!(robot.pose.x_m < 10.0, "held by the wall at x = 10 m, not 6 m beyond it: {robot:?}");
}

#[test]
fn a_spawned_model_a_deleted_one_the_step_and_the_nodes_memory_survive() {
    let spec = room();
    let mut saved = driven(&spec, 10);
    let mut spawned = saved.models().find(|m| m.name == "robot").unwrap().clone();
    spawned.name = "r2".into();
    saved.add_model(spawned).unwrap();
    saved.remove_model("robot").unwrap();
    let mut resumed = Physics::new(&spec).unwrap();
    let kept = NodeMemory::from([("flotilla/s/world/memory/lift/lift/floor".to_string(), b"L2".to_vec())]);
    let (header, memory) = read(&save(&saved, true, &kept)).unwrap().restore_into(&mut resumed).unwrap();
    assert!(header.paused);
    assert_eq!(memory, kept, "what nodes asked the world to keep");
    let names: Vec<&str> = resumed.model_names().collect();
    assert_eq!(names, ["r2"]);
    assert_eq!((resumed.step_count(), resumed.revision()), (saved.step_count(), saved.revision()));
    assert_eq!(resumed.model_body_ids("r2"), saved.model_body_ids("r2"), "its body ids");
}

#[test]
fn a_damaged_file_is_refused_with_the_reason() {
    let bytes = save(&driven(&room(), 10), false, &NodeMemory::new());
    let refusal = |bytes: &[u8]| read(bytes).err().expect("refused").to_string();
    assert!(refusal(&bytes[..bytes.len() / 2]).starts_with("truncated:"));
    let mut flipped = bytes.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 1;
    assert_eq!(refusal(&flipped), "corrupt: its checksum does not match its content");
}

#[test]
fn another_world_seed_or_step_size_is_refused_and_nothing_changes() {
    let spec = room();
    let bytes = save(&driven(&spec, 10), false, &NodeMemory::new());

    let mut other = spec.clone();
    other.layers[0].segments.pop();
    let mut world = Physics::new(&other).unwrap();
    let before = world.description();
    let refusal = read(&bytes).unwrap().restore_into(&mut world).err().unwrap().to_string();
    assert!(refusal.contains("whose content differs from"), "{refusal}");
    assert_eq!(world.description(), before, "nothing changed");

    let mut seeded = spec.clone();
    seeded.settings.seed += 1;
    let refusal = read(&bytes).unwrap().restore_into(&mut Physics::new(&seeded).unwrap()).err().unwrap();
    assert!(matches!(refusal, CheckpointError::Mismatch(Mismatch::Seed { saved: 0, now: 1 })), "{refusal}");

    let mut finer = spec.clone();
    finer.settings.step_size_s /= 2.0;
    let refusal = read(&bytes).unwrap().restore_into(&mut Physics::new(&finer).unwrap()).err().unwrap();
    assert_eq!(refusal.to_string(), "saved with steps of 0.005 s; the world now steps 0.0025 s");
}

#[test]
fn saving_a_checkpoint_changes_nothing_in_the_world_saved() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/tests/determinism/world.yaml");
    let spec = load_world(&path).unwrap();
    let run = |save_at: &[u64]| {
        let mut physics = Physics::new(&spec).unwrap();
        for (i, robot) in ["robot1", "robot2", "robot3", "robot4"].iter().enumerate() {
            let body = physics.model_body_ids(robot)[0];
            let command = BodyCommand { body, local_vx_mps: 0.3 + 0.1 * i as f64, local_vy_mps: 0.0, omega_radps: 0.2 };
            physics.command(command);
        }
        let mut states = Vec::new();
        for k in 0..2000 {
            if save_at.contains(&k) {
                save(&physics, false, &NodeMemory::new());
            }
            physics.step();
            states.push(state(&physics));
        }
        states
    };
    let (never, saved) = (run(&[]), run(&[300, 700, 1100]));
    let first = never.iter().zip(&saved).position(|(a, b)| a != b);
    assert_eq!(first, None, "the first state that differs");
}
