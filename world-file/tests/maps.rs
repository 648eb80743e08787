//! Worlds of several maps (`properties: maps:`) and their Flat world file
//! of transitions (`properties: transitions:`): what a building loads as,
//! and the errors of a wrong one.

use std::path::{Path, PathBuf};

use flotilla_world_file::load_world;

fn building() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/building/building.world.yaml")
}

#[test]
fn the_building_has_three_maps_and_the_transitions_of_its_flat_file() {
    let spec = load_world(&building()).unwrap();
    let names: Vec<&str> = spec.maps.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["taylor-1", "taylor-2", "taylor-elevator"]);
    assert_eq!(spec.maps.iter().map(|m| m.layers).collect::<Vec<_>>(), [0b001, 0b010, 0b100]);

    // the rider names no map: a robot starts on the first; the resident names its own
    let description = spec.initial_description().unwrap();
    let rider = description.model("rider").unwrap();
    let resident = description.model("resident").unwrap();
    assert_eq!((rider.map.as_str(), rider.layer_mask), ("taylor-1", 0b001));
    assert_eq!((resident.map.as_str(), resident.layer_mask), ("taylor-2", 0b010));

    let (file, transitions) = spec.transitions.as_ref().unwrap();
    assert!(file.ends_with("taylor.world"));
    let summary: Vec<(&str, Option<&str>, &str)> =
        transitions.iter().map(|t| (t.from_map.as_str(), t.command.as_deref(), t.to_map.as_str())).collect();
    assert_eq!(
        summary,
        [
            ("taylor-2", Some("CLOSE-DOOR"), "taylor-elevator"),
            ("taylor-1", Some("CLOSE-DOOR"), "taylor-elevator"),
            ("taylor-elevator", Some("GOTO-1"), "taylor-1"),
            ("taylor-elevator", Some("GOTO-2"), "taylor-2"),
        ]
    );
    assert_eq!((transitions[0].center_m, transitions[0].radius_m), ([29.8, 9.7], 0.5));
    assert_eq!(description.transitions, *transitions);
}

/// Loads the building with `edit` applied to its world file's text, from a
/// copy of its directory; the error's text.
fn error_of(edit: impl Fn(&str) -> String, extra: &[(&str, &str)]) -> String {
    let source = building().parent().unwrap().to_path_buf();
    let dir = std::env::temp_dir().join(format!("flotilla-maps-{}-{}", std::process::id(), rand_suffix()));
    std::fs::create_dir_all(&dir).unwrap();
    for entry in std::fs::read_dir(&source).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
    }
    let world = dir.join("building.world.yaml");
    let text = std::fs::read_to_string(&world).unwrap();
    std::fs::write(&world, edit(&text)).unwrap();
    for (name, text) in extra {
        std::fs::write(dir.join(name), text).unwrap();
    }
    let result = load_world(&world);
    let _ = std::fs::remove_dir_all(&dir);
    result.unwrap_err().to_string()
}

fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

#[test]
fn a_wrong_map_or_transition_is_refused_naming_file_entry_and_line() {
    let e = error_of(|t| t.replace("taylor-2: taylor-2", "taylor-2: taylor-3"), &[]);
    assert!(e.contains("building.world.yaml") && e.contains("\"maps\" entry \"taylor-2\""), "{e}");
    assert!(e.contains("layers {taylor-3} do not exist"), "{e}");

    let e = error_of(|t| t.replace("map: taylor-2}", "map: attic}"), &[]);
    assert!(e.contains("models index 1") && e.contains("\"map\" \"attic\" is not one of the world's maps"), "{e}");

    let e = error_of(
        |t| t.replace("transitions: taylor.world", "transitions: broken.world"),
        &[("broken.world", "MAP taylor-1\nTRANSITION (29800 9700 500 CLOSE-DOOR) taylor-9\n")],
    );
    assert!(e.contains("broken.world") && e.contains("line 2"), "{e}");
    assert!(e.contains("\"taylor-9\" is not one of the world's maps"), "{e}");

    let e = error_of(|t| t.replace("transitions: taylor.world", "transitions: missing.world"), &[]);
    assert!(e.contains("missing.world") && e.contains("file does not exist"), "{e}");

    let e = error_of(|t| t.replace("    taylor-1: taylor-1 ", "    taylor-1: all "), &[]);
    assert!(e.contains("\"all\" is not a map"), "{e}");

    let e = error_of(|t| t.replace("  transitions: taylor.world", "  transition: taylor.world"), &[]);
    assert!(e.contains("transition"), "a misspelt key is refused, not ignored: {e}");
}
