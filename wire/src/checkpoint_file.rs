//! The envelope of a checkpoint file (`flotilla checkpoint save`,
//! `flotilla-world --checkpoint`): what it says about itself, and the
//! checks that a file is whole, sound and of this Flotilla, without
//! reading the world's state inside (that is the world's to read, see
//! `flotilla_world::checkpoint`).
//!
//! The layout: [`MAGIC`], the schema version (u32), the header's length
//! (u32) and the header, the state's length (u64) and the state, then an
//! FNV-1a 64 checksum of everything before it; little-endian, bincode
//! inside.

use serde::{Deserialize, Serialize};

use crate::digest::fnv1a64;

/// The first bytes of every checkpoint file.
pub const MAGIC: &[u8; 20] = b"FLOTILLA CHECKPOINT\n";

/// The layout this Flotilla reads and writes.
pub const SCHEMA: u32 = 1;

/// The Flotilla that writes checkpoints: the state inside is rapier's own
/// serialisation, which only the same version reads back for certain.
pub const FLOTILLA_VERSION: &str = env!("CARGO_PKG_VERSION");

/// What a checkpoint says about itself, readable without its state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckpointHeader {
    /// The Flotilla version that wrote it.
    pub flotilla_version: String,
    /// The world file the saving world had loaded, as it named it.
    pub world_file: String,
    /// A digest of that file's content as loaded (layers, models as in the
    /// file, places, maps, transitions), not of where it lay.
    pub world_digest: u64,
    /// The world seed.
    pub seed: u64,
    /// The step size, ns.
    pub step_ns: u64,
    /// The step it was saved at (sim time is `step × step_ns`).
    pub step: u64,
    /// Whether the run was paused.
    pub paused: bool,
}

impl CheckpointHeader {
    /// A header of this Flotilla.
    pub fn new(world_file: String, world_digest: u64, seed: u64, step_ns: u64, step: u64, paused: bool) -> Self {
        CheckpointHeader {
            flotilla_version: FLOTILLA_VERSION.to_string(),
            world_file,
            world_digest,
            seed,
            step_ns,
            step,
            paused,
        }
    }

    /// Sim time at the checkpoint, s.
    pub fn time_s(&self) -> f64 {
        self.step as f64 * self.step_ns as f64 * 1e-9
    }
}

/// Why a checkpoint cannot be resumed over the world loaded.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Mismatch {
    /// Saved from a world whose content differs from the one loaded.
    #[error("saved from world file {saved_file}, whose content differs from {world_file}'s (layers, models, places, maps or transitions)")]
    OtherWorld {
        /// The world file it was saved from.
        saved_file: String,
        /// The world file loaded now.
        world_file: String,
    },
    /// Saved with another seed.
    #[error("saved with seed {saved}; the world now has seed {now} (give --seed {saved})")]
    Seed {
        /// The checkpoint's.
        saved: u64,
        /// The world's.
        now: u64,
    },
    /// Saved with another step size.
    #[error("saved with steps of {saved_s} s; the world now steps {now_s} s")]
    StepSize {
        /// The checkpoint's, s.
        saved_s: f64,
        /// The world's, s.
        now_s: f64,
    },
}

impl CheckpointHeader {
    /// Whether this checkpoint resumes over the world `world_file` of
    /// content digest `digest`, run with `seed` and steps of `step_ns`.
    pub fn matches(&self, world_file: &str, digest: u64, seed: u64, step_ns: u64) -> Result<(), Mismatch> {
        if self.world_digest != digest {
            return Err(Mismatch::OtherWorld {
                saved_file: self.world_file.clone(),
                world_file: world_file.to_string(),
            });
        }
        if self.step_ns != step_ns {
            return Err(Mismatch::StepSize { saved_s: self.step_ns as f64 * 1e-9, now_s: step_ns as f64 * 1e-9 });
        }
        if self.seed != seed {
            return Err(Mismatch::Seed { saved: self.seed, now: seed });
        }
        Ok(())
    }
}

/// Why a file is not a checkpoint this Flotilla can read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EnvelopeError {
    /// It does not start with [`MAGIC`].
    #[error("not a Flotilla checkpoint (it does not start with \"FLOTILLA CHECKPOINT\")")]
    NotACheckpoint,
    /// Another layout.
    #[error("checkpoint schema {found}; this Flotilla reads schema {SCHEMA} only")]
    Schema {
        /// The file's.
        found: u32,
    },
    /// Cut short.
    #[error("truncated: {have} bytes, the file says it has {need}")]
    Truncated {
        /// Bytes in the file.
        have: u64,
        /// Bytes it should have.
        need: u64,
    },
    /// The checksum does not match, or bytes follow it.
    #[error("corrupt: its checksum does not match its content")]
    Corrupt,
    /// Its header does not decode.
    #[error("its header does not decode: {0}")]
    Header(String),
    /// Another Flotilla wrote it.
    #[error("written by Flotilla {saved}; this is Flotilla {FLOTILLA_VERSION}, which resumes only its own")]
    Version {
        /// The writer's version.
        saved: String,
    },
}

/// A checkpoint file of `header` around `state`.
pub fn assemble(header: &CheckpointHeader, state: &[u8]) -> Vec<u8> {
    let header = bincode::serialize(header).expect("a header encodes");
    let mut bytes = Vec::with_capacity(MAGIC.len() + 24 + header.len() + state.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&SCHEMA.to_le_bytes());
    bytes.extend_from_slice(&(header.len() as u32).to_le_bytes());
    bytes.extend_from_slice(&header);
    bytes.extend_from_slice(&(state.len() as u64).to_le_bytes());
    bytes.extend_from_slice(state);
    let checksum = fnv1a64(&bytes);
    bytes.extend_from_slice(&checksum.to_le_bytes());
    bytes
}

/// The header and the state of a whole, sound checkpoint of this Flotilla.
pub fn open(bytes: &[u8]) -> Result<(CheckpointHeader, &[u8]), EnvelopeError> {
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        return Err(EnvelopeError::NotACheckpoint);
    }
    let mut file = Cursor { bytes, at: MAGIC.len() };
    let schema = u32::from_le_bytes(file.take_array()?);
    if schema != SCHEMA {
        return Err(EnvelopeError::Schema { found: schema });
    }
    let header_len = u32::from_le_bytes(file.take_array()?);
    let header = file.take(u64::from(header_len))?;
    let state_len = u64::from_le_bytes(file.take_array()?);
    let state = file.take(state_len)?;
    let body_end = file.at;
    let checksum = u64::from_le_bytes(file.take_array()?);
    if file.at != bytes.len() || checksum != fnv1a64(&bytes[..body_end]) {
        return Err(EnvelopeError::Corrupt);
    }
    let header: CheckpointHeader = bincode::deserialize(header).map_err(|e| EnvelopeError::Header(e.to_string()))?;
    if header.flotilla_version != FLOTILLA_VERSION {
        return Err(EnvelopeError::Version { saved: header.flotilla_version });
    }
    Ok((header, state))
}

/// Writes a checkpoint to `path` whole: beside it first, then renamed over
/// it, so that a crash while writing leaves the last whole checkpoint in
/// place, never half a file.
pub fn write_whole(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    let partial = std::path::PathBuf::from(partial);
    std::fs::write(&partial, bytes)?;
    std::fs::rename(&partial, path)
}

/// Reading a file's parts in turn, each checked to be there whole.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: u64) -> Result<&'a [u8], EnvelopeError> {
        let have = self.bytes.len() as u64;
        let need = (self.at as u64).saturating_add(n);
        if need > have {
            return Err(EnvelopeError::Truncated { have, need });
        }
        let taken = &self.bytes[self.at..need as usize];
        self.at = need as usize;
        Ok(taken)
    }

    fn take_array<const N: usize>(&mut self) -> Result<[u8; N], EnvelopeError> {
        Ok(self.take(N as u64)?.try_into().expect("N bytes"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> CheckpointHeader {
        CheckpointHeader::new("world.yaml".into(), 7, 3, 5_000_000, 400, false)
    }

    #[test]
    fn a_file_opens_to_its_header_and_state() {
        let bytes = assemble(&header(), b"state");
        let (read, state) = open(&bytes).unwrap();
        assert_eq!((read, state), (header(), &b"state"[..]));
        assert_eq!(header().time_s(), 2.0);
    }

    #[test]
    fn bad_files_are_refused_with_the_reason() {
        let bytes = assemble(&header(), &[0; 1000]);
        let refusal = |bytes: &[u8]| open(bytes).expect_err("refused").to_string();
        assert!(refusal(b"hello").starts_with("not a Flotilla checkpoint"));
        assert_eq!(refusal(&bytes[..600]), format!("truncated: 600 bytes, the file says it has {}", bytes.len() - 8));
        let mut flipped = bytes.clone();
        flipped[700] ^= 1;
        assert_eq!(refusal(&flipped), "corrupt: its checksum does not match its content");
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(refusal(&longer), "corrupt: its checksum does not match its content");
        let mut other_schema = bytes.clone();
        other_schema[MAGIC.len()] = 9;
        assert_eq!(refusal(&other_schema), "checkpoint schema 9; this Flotilla reads schema 1 only");
        let older = CheckpointHeader { flotilla_version: "0.0.1".into(), ..header() };
        let refusal = refusal(&assemble(&older, b"state"));
        assert!(refusal.starts_with("written by Flotilla 0.0.1; this is Flotilla"), "{refusal}");
    }
}
