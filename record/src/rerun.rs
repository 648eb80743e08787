//! What a lockstep recording carries so that `flotilla resim` can run it
//! again: the world's files (the world file and every file its load read),
//! the seed, the step size, the Flotilla version and the lockstep
//! participants at the start, in an MCAP metadata record
//! ([`METADATA`]) and attachments named `world/<path>`. The inputs from
//! outside (`cmd_vel`s) are in the recording already, forwarded by the
//! nodes that took them, each at the sim time of the state they had
//! answered last.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use flotilla_wire::description::WorldDescription;

use crate::bag::Bag;
use crate::direct_file::DirectFile;

/// The metadata record's name.
pub const METADATA: &str = "flotilla.resim";

/// Where the world's files are among the attachments.
const FILES: &str = "world/";

/// This Flotilla's version, which a re-run must match: lockstep runs are
/// bit-identical within one version only.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// What a re-run needs besides the recorded messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rerun {
    /// The Flotilla version that recorded.
    pub version: String,
    /// The world's seed.
    pub seed: u64,
    /// The world's step, ns.
    pub step_ns: u64,
    /// The world file, relative to the files' root.
    pub world_file: String,
    /// The lockstep participants when the recording started (for the
    /// report: lockstep outputs do not depend on the process layout).
    pub participants: Vec<String>,
    /// The world's files, by path relative to their root, with content.
    pub files: BTreeMap<String, Vec<u8>>,
}

impl Rerun {
    /// What running the world of `description` again needs: its files are
    /// loaded again here to learn which they are, so the recorder must see
    /// the world file where the world does (the same machine, or the same
    /// path).
    pub fn of_world(description: &WorldDescription, participants: Vec<String>) -> Result<Rerun, String> {
        let world = Path::new(&description.world_path);
        let (_, read) = flotilla_world_file::load_world_with_sources(world)
            .map_err(|e| format!("cannot load the world file {} here: {e}", world.display()))?;
        let read: Vec<PathBuf> = (read.iter())
            .map(|p| p.canonicalize().map_err(|e| format!("{}: {e}", p.display())))
            .collect::<Result<_, _>>()?;
        let world = world.canonicalize().map_err(|e| format!("{}: {e}", world.display()))?;
        let root = common_dir(&read);
        let relative = |p: &Path| p.strip_prefix(&root).unwrap_or(p).to_string_lossy().into_owned();
        let mut files = BTreeMap::new();
        for path in &read {
            let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            files.insert(relative(path), bytes);
        }
        Ok(Rerun {
            version: VERSION.to_string(),
            seed: description.seed,
            step_ns: description.step_ns,
            world_file: relative(&world),
            participants,
            files,
        })
    }

    /// Puts it into `bag`.
    pub fn write_into(&self, bag: &mut Bag<DirectFile>) {
        let entries = vec![
            ("version".to_string(), self.version.clone()),
            ("seed".to_string(), self.seed.to_string()),
            ("step_ns".to_string(), self.step_ns.to_string()),
            ("world_file".to_string(), self.world_file.clone()),
            ("clock".to_string(), "lockstep".to_string()),
            ("participants".to_string(), self.participants.join(",")),
        ];
        bag.add_metadata(METADATA, entries);
        for (path, bytes) in &self.files {
            bag.attach(&format!("{FILES}{path}"), "application/octet-stream", 0, bytes.clone());
        }
    }

    /// What the MCAP file `bytes` (read from `path`) carries for a re-run;
    /// an error that says why it cannot be re-run.
    pub fn read(bytes: &[u8], path: &Path) -> Result<Rerun, String> {
        let file = path.display();
        let summary = mcap::read::Summary::read(bytes)
            .map_err(|e| format!("{file}: not a complete MCAP file ({e}); a recording cut short cannot be re-run"))?
            .ok_or_else(|| format!("{file}: the MCAP file has no summary; a recording cut short cannot be re-run"))?;
        let index = (summary.metadata_indexes.iter()).find(|index| index.name == METADATA).ok_or_else(|| {
            format!(
                "{file}: not a re-runnable recording (no {METADATA} metadata): only recordings of a lockstep run \
                 (`--clock lockstep`) by this Flotilla can be re-run"
            )
        })?;
        let metadata = mcap::read::metadata(bytes, index).map_err(|e| format!("{file}: {METADATA}: {e}"))?.metadata;
        let field =
            |name: &str| metadata.get(name).cloned().ok_or_else(|| format!("{file}: {METADATA} has no field {name:?}"));
        let number =
            |name: &str| field(name)?.parse::<u64>().map_err(|e| format!("{file}: {METADATA} field {name:?}: {e}"));
        let version = field("version")?;
        if version != VERSION {
            return Err(format!(
                "{file}: recorded by Flotilla {version}; this is Flotilla {VERSION}, which re-runs only its own \
                 recordings (lockstep runs are bit-identical within one version)"
            ));
        }
        let mut files = BTreeMap::new();
        for index in &summary.attachment_indexes {
            let Some(name) = index.name.strip_prefix(FILES) else { continue };
            let attachment =
                mcap::read::attachment(bytes, index).map_err(|e| format!("{file}: {}: {e}", index.name))?;
            files.insert(name.to_string(), attachment.data.into_owned());
        }
        let world_file = field("world_file")?;
        if !files.contains_key(&world_file) {
            return Err(format!("{file}: the world file {world_file} is not among the recording's files"));
        }
        Ok(Rerun {
            version,
            seed: number("seed")?,
            step_ns: number("step_ns")?,
            world_file,
            participants: field("participants")?.split(',').filter(|s| !s.is_empty()).map(String::from).collect(),
            files,
        })
    }

    /// Writes the world's files under `dir`; returns the world file's path.
    pub fn extract(&self, dir: &Path) -> Result<PathBuf, String> {
        for (name, bytes) in &self.files {
            let relative = Path::new(name);
            // A name that climbs out of `dir` is not one this recorder writes.
            if relative.components().any(|c| !matches!(c, Component::Normal(_))) {
                return Err(format!("the recording's file {name:?} is not a relative path"));
            }
            let path = dir.join(relative);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
            }
            std::fs::write(&path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
        Ok(dir.join(&self.world_file))
    }
}

/// The deepest directory holding every one of `paths`.
fn common_dir(paths: &[PathBuf]) -> PathBuf {
    let mut common: Option<PathBuf> = None;
    for path in paths {
        let dir = path.parent().unwrap_or(Path::new("/")).to_path_buf();
        common = Some(match common {
            None => dir,
            Some(so_far) => {
                so_far.components().zip(dir.components()).take_while(|(a, b)| a == b).map(|(a, _)| a).collect()
            }
        });
    }
    common.unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_files_root_is_the_deepest_directory_holding_them_all() {
        let paths = [PathBuf::from("/w/office/world.yaml"), PathBuf::from("/w/models/robot.yaml")];
        assert_eq!(common_dir(&paths), PathBuf::from("/w"));
        assert_eq!(common_dir(&paths[..1]), PathBuf::from("/w/office"));
    }

    #[test]
    fn a_recording_carries_the_office_s_files_and_they_come_back_as_they_were() {
        let office = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/office/world.yaml");
        let world = flotilla_world_file::load_world(&office).unwrap();
        let description = world.initial_description().unwrap();
        let rerun = Rerun::of_world(&description, vec!["drive-1".into()]).unwrap();
        assert_eq!(rerun.world_file, "world.yaml");
        assert!(rerun.files.contains_key("map.png") && rerun.files.contains_key("robot.model.yaml"));

        let dir = std::env::temp_dir().join(format!("flotilla-rerun-{}", std::process::id()));
        let path = dir.join("run.mcap");
        std::fs::create_dir_all(&dir).unwrap();
        let mut bag = Bag::create(&path, crate::bag::ChunkCompression::None).unwrap();
        rerun.write_into(&mut bag);
        bag.finish().unwrap();
        let back = Rerun::read(&std::fs::read(&path).unwrap(), &path).unwrap();
        assert_eq!(back, rerun);
        let world_file = back.extract(&dir.join("files")).unwrap();
        let again = flotilla_world_file::load_world(&world_file).unwrap();
        assert_eq!(again.initial_description().unwrap().models.len(), description.models.len());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Writes `rerun` into a fresh MCAP file in `dir` and reads it back.
    fn written_and_read(rerun: &Rerun, dir: &Path) -> Result<Rerun, String> {
        std::fs::create_dir_all(dir).unwrap();
        let path = dir.join("run.mcap");
        let mut bag = Bag::create(&path, crate::bag::ChunkCompression::None).unwrap();
        rerun.write_into(&mut bag);
        bag.finish().unwrap();
        let back = Rerun::read(&std::fs::read(&path).unwrap(), &path);
        std::fs::remove_dir_all(dir).unwrap();
        back
    }

    fn small_rerun() -> Rerun {
        Rerun {
            version: VERSION.to_string(),
            seed: 7,
            step_ns: 5_000_000,
            world_file: "world.yaml".into(),
            participants: vec!["drive-1".into()],
            files: [("world.yaml".to_string(), b"properties: {}".to_vec())].into(),
        }
    }

    #[test]
    fn a_recording_by_another_version_or_without_its_world_file_is_refused_saying_why() {
        let dir = std::env::temp_dir().join(format!("flotilla-rerun-refused-{}", std::process::id()));
        assert_eq!(written_and_read(&small_rerun(), &dir).unwrap(), small_rerun());

        let older = Rerun { version: "0.0.1".into(), ..small_rerun() };
        let err = written_and_read(&older, &dir).unwrap_err();
        assert!(err.contains("recorded by Flotilla 0.0.1") && err.contains(VERSION), "{err}");

        let without_world = Rerun { files: BTreeMap::new(), ..small_rerun() };
        let err = written_and_read(&without_world, &dir).unwrap_err();
        assert!(err.contains("the world file world.yaml is not among the recording's files"), "{err}");
    }

    #[test]
    fn a_recording_without_the_record_is_refused_saying_why() {
        let dir = std::env::temp_dir().join(format!("flotilla-rerun-none-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("plain.mcap");
        Bag::create(&path, crate::bag::ChunkCompression::None).unwrap().finish().unwrap();
        let err = Rerun::read(&std::fs::read(&path).unwrap(), &path).unwrap_err();
        assert!(err.contains("only recordings of a lockstep run"), "{err}");
        let err = Rerun::read(b"not mcap", &path).unwrap_err();
        assert!(err.contains("cut short"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
