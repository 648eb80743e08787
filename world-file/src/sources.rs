//! The files a world load reads: the world file, its includes, layer maps
//! and images, model files, crowd and transition files, a parameter file.
//! A recording that is to be run again (`flotilla resim`) carries them,
//! so the list comes from the reads themselves rather than from a second
//! reading of the world file that could miss one.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

thread_local! {
    /// The files read so far by a [`collect`] running on this thread.
    static READ: RefCell<Option<BTreeSet<PathBuf>>> = const { RefCell::new(None) };
}

/// Notes that the load running on this thread reads `path`.
pub(crate) fn note(path: &Path) {
    READ.with(|read| {
        if let Some(read) = read.borrow_mut().as_mut() {
            read.insert(path.to_path_buf());
        }
    });
}

/// Runs `load` and returns what it gave with the files it read, in path
/// order. Loads are single-threaded, so the files are noted per thread.
pub(crate) fn collect<T>(load: impl FnOnce() -> T) -> (T, Vec<PathBuf>) {
    let outer = READ.with(|read| read.borrow_mut().replace(BTreeSet::new()));
    let value = load();
    let read = READ.with(|read| std::mem::replace(&mut *read.borrow_mut(), outer)).unwrap_or_default();
    (value, read.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    #[test]
    fn a_load_lists_the_world_file_its_map_and_its_models_once_each() {
        let office = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/office");
        let (world, read) = crate::load_world_with_sources(&office.join("world.yaml")).unwrap();
        assert!(!world.models.is_empty());
        let names: Vec<String> =
            read.iter().map(|p| p.strip_prefix(&office).unwrap_or(p).to_string_lossy().into_owned()).collect();
        for file in ["world.yaml", "map.yaml", "map.png", "robot.model.yaml"] {
            assert_eq!(names.iter().filter(|n| *n == file).count(), 1, "{file} in {names:?}");
        }
        // Not noted outside a collection.
        crate::load_world(&office.join("world.yaml")).unwrap();
        assert!(crate::sources::collect(|| ()).1.is_empty());
    }
}
