//! The one codec for internal (`flotilla/<sim>/...`) payloads.
//!
//! A payload is a two-byte little-endian schema version followed by the
//! bincode encoding of the message. [`decode`] checks the version first so that
//! a node meeting another Flotilla release fails with a message naming both
//! versions instead of misreading bytes.

use serde::{de::DeserializeOwned, Serialize};

/// Version of the internal wire format. Bump it whenever any type in the
/// internal messages changes its encoding.
pub const SCHEMA_VERSION: u16 = 5;

/// Why an internal payload could not be decoded.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DecodeError {
    /// The payload is shorter than the version header.
    #[error("{kind}: payload of {len} bytes is too short for the schema-version header")]
    TooShort {
        /// The message type being decoded.
        kind: &'static str,
        /// The payload length in bytes.
        len: usize,
    },
    /// The sender speaks another schema version.
    #[error("{kind}: schema version mismatch: the sender speaks version {got}, this node speaks version {expected}")]
    VersionMismatch {
        /// The message type being decoded.
        kind: &'static str,
        /// The version found in the payload.
        got: u16,
        /// The version this build speaks.
        expected: u16,
    },
    /// The body is not a valid encoding of the message.
    #[error("{kind}: malformed payload: {reason}")]
    Malformed {
        /// The message type being decoded.
        kind: &'static str,
        /// What the decoder reported.
        reason: String,
    },
}

/// A message that travels on an internal key.
pub trait WireMessage: Serialize + DeserializeOwned {
    /// Short name used in error messages, e.g. `"WorldState"`.
    const KIND: &'static str;
}

/// Encodes a message with the schema-version header.
pub fn encode<T: WireMessage>(message: &T) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(&SCHEMA_VERSION.to_le_bytes());
    // Serializing plain data structs into a Vec cannot fail: bincode only
    // errors on writer failures and on sequences of unknown length.
    bincode::serialize_into(&mut out, message)
        .unwrap_or_else(|e| panic!("{}: bincode cannot fail on a Vec writer: {e}", T::KIND));
    out
}

/// Decodes a message, checking the schema version.
pub fn decode<T: WireMessage>(bytes: &[u8]) -> Result<T, DecodeError> {
    check_version::<T>(bytes)?;
    use bincode::Options;
    // From a slice (not a reader): byte vectors and strings are read at once.
    decoding().deserialize(&bytes[2..]).map_err(|e| DecodeError::Malformed { kind: T::KIND, reason: e.to_string() })
}

/// The decoder's options: `encode`'s layout, and a size limit that keeps a
/// garbage length prefix from allocating gigabytes.
fn decoding() -> impl bincode::Options {
    use bincode::Options;
    bincode::DefaultOptions::new().with_fixint_encoding().allow_trailing_bytes().with_limit(256 * 1024 * 1024)
}

/// The schema-version header of a `T`: present and this build's.
fn check_version<T: WireMessage>(bytes: &[u8]) -> Result<(), DecodeError> {
    if bytes.len() < 2 {
        return Err(DecodeError::TooShort { kind: T::KIND, len: bytes.len() });
    }
    let got = u16::from_le_bytes([bytes[0], bytes[1]]);
    if got != SCHEMA_VERSION {
        return Err(DecodeError::VersionMismatch { kind: T::KIND, got, expected: SCHEMA_VERSION });
    }
    Ok(())
}

/// [`decode`], also giving the bytes after the message: a message may be
/// followed by an extension that readers of the message alone ignore (see
/// [`crate::drive_to_world::decode_actuation`]).
pub fn decode_with_rest<T: WireMessage>(bytes: &[u8]) -> Result<(T, &[u8]), DecodeError> {
    check_version::<T>(bytes)?;
    use bincode::Options;
    let mut rest = &bytes[2..];
    let message = decoding()
        .deserialize_from(&mut rest)
        .map_err(|e| DecodeError::Malformed { kind: T::KIND, reason: e.to_string() })?;
    Ok((message, rest))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Ping {
        step: u64,
        names: Vec<String>,
    }
    impl WireMessage for Ping {
        const KIND: &'static str = "Ping";
    }

    #[test]
    fn round_trip_keeps_every_field() {
        let ping = Ping { step: 42, names: vec!["a".into(), "bc".into()] };
        assert_eq!(decode::<Ping>(&encode(&ping)).unwrap(), ping);
    }

    #[test]
    fn version_mismatch_names_both_versions() {
        let mut bytes = encode(&Ping { step: 1, names: vec![] });
        bytes[0] = 99;
        let err = decode::<Ping>(&bytes).unwrap_err();
        assert_eq!(err, DecodeError::VersionMismatch { kind: "Ping", got: 99, expected: SCHEMA_VERSION });
        let text = err.to_string();
        assert!(text.contains("version 99") && text.contains(&format!("version {SCHEMA_VERSION}")), "{text}");
    }

    #[test]
    fn the_bytes_after_a_message_are_handed_back() {
        let mut bytes = encode(&Ping { step: 3, names: vec!["x".into()] });
        bytes.extend_from_slice(b"tail");
        let (ping, rest) = decode_with_rest::<Ping>(&bytes).unwrap();
        assert_eq!((ping.step, rest), (3, &b"tail"[..]));
        assert_eq!(decode::<Ping>(&bytes).unwrap().step, 3, "plain readers ignore them");
    }

    #[test]
    fn garbage_and_truncation_are_errors_not_panics() {
        assert!(matches!(decode::<Ping>(&[1]), Err(DecodeError::TooShort { .. })));
        let bytes = encode(&Ping { step: 7, names: vec!["hello".into()] });
        for cut in 2..bytes.len() {
            assert!(decode::<Ping>(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut huge = SCHEMA_VERSION.to_le_bytes().to_vec();
        huge.extend_from_slice(&[0; 8]);
        huge.extend_from_slice(&u64::MAX.to_le_bytes());
        assert!(decode::<Ping>(&huge).is_err());
    }
}
