//! What nodes send recorders: every message of one moment in one payload.
//!
//! A recorder subscribed to every ROS-facing topic receives each message on
//! its own — at office-50's 35× real time, about 220,000 a second into one
//! process, which cost the simulation 40 % of its speed. Instead, a node
//! that sees a recorder (a subscriber on [`crate::Keys::recording`]) sends
//! it the messages of each of its moments (an answered state, an input) in
//! one batch, a few thousand a second in all, and publishes on the topics
//! themselves only what other subscribers want.
//!
//! A batch is the one internal payload not encoded by [`crate::codec`]:
//! bincode writes and reads a byte vector one byte at a time, which made
//! copying the payloads in and out the recorder's and the nodes' main
//! cost. Its framing is as plain: the schema version (two bytes,
//! little-endian), the batch's number (u64 LE: a node numbers its batches
//! 0, 1, 2, … so that a recorder can tell when some never arrived), then
//! per message the key's length (u32 LE), the key in UTF-8, the payload's
//! length (u32 LE) and the payload. A reader borrows keys and payloads from
//! the received bytes.

use crate::codec::{DecodeError, SCHEMA_VERSION};

const KIND: &str = "OutputBatch";

/// Encodes batch number `number` of a node: the messages it published at
/// one moment — each topic's Zenoh key and its CDR payload, as they went
/// (or would have gone) out on that key — in the order it made them.
pub fn encode_batch(number: u64, messages: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(batch_len(messages));
    write_batch(number, messages, |piece| out.extend_from_slice(piece));
    out
}

/// The bytes of a batch of `messages`.
pub fn batch_len(messages: &[(String, Vec<u8>)]) -> usize {
    2 + 8 + messages.iter().map(|(key, payload)| 8 + key.len() + payload.len()).sum::<usize>()
}

/// [`encode_batch`] piece by piece into `write`, for a sender that keeps
/// its buffer from batch to batch.
pub fn write_batch(number: u64, messages: &[(String, Vec<u8>)], mut write: impl FnMut(&[u8])) {
    write(&SCHEMA_VERSION.to_le_bytes());
    write(&number.to_le_bytes());
    for (key, payload) in messages {
        for chunk in [key.as_bytes(), payload.as_slice()] {
            // A key or a message of 4 GiB cannot be published anyway.
            let len = u32::try_from(chunk.len()).expect("a message under 4 GiB");
            write(&len.to_le_bytes());
            write(chunk);
        }
    }
}

/// The messages of a batch, borrowed from its bytes, in order.
pub fn read_batch(bytes: &[u8]) -> Result<BatchReader<'_>, DecodeError> {
    let Some((version, rest)) = bytes.split_first_chunk::<2>() else {
        return Err(DecodeError::TooShort { kind: KIND, len: bytes.len() });
    };
    let got = u16::from_le_bytes(*version);
    if got != SCHEMA_VERSION {
        return Err(DecodeError::VersionMismatch { kind: KIND, got, expected: SCHEMA_VERSION });
    }
    let Some((number, rest)) = rest.split_first_chunk::<8>() else {
        return Err(DecodeError::TooShort { kind: KIND, len: bytes.len() });
    };
    Ok(BatchReader { number: u64::from_le_bytes(*number), rest })
}

/// Iterator over a batch's (key, payload) pairs; a malformed message ends
/// it with an error.
pub struct BatchReader<'a> {
    number: u64,
    rest: &'a [u8],
}

impl<'a> BatchReader<'a> {
    /// The batch's number among its node's batches.
    pub fn number(&self) -> u64 {
        self.number
    }

    fn chunk(&mut self, what: &str) -> Result<&'a [u8], DecodeError> {
        let malformed = |reason: String| DecodeError::Malformed { kind: KIND, reason };
        let (len, rest) =
            self.rest.split_first_chunk::<4>().ok_or_else(|| malformed(format!("the {what}'s length is cut off")))?;
        let len = u32::from_le_bytes(*len) as usize;
        if rest.len() < len {
            return Err(malformed(format!("a {what} of {len} bytes, {} left", rest.len())));
        }
        let (chunk, rest) = rest.split_at(len);
        self.rest = rest;
        Ok(chunk)
    }
}

impl<'a> Iterator for BatchReader<'a> {
    type Item = Result<(&'a str, &'a [u8]), DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let message = (|| {
            let key = std::str::from_utf8(self.chunk("key")?)
                .map_err(|e| DecodeError::Malformed { kind: KIND, reason: format!("a key not in UTF-8: {e}") })?;
            Ok((key, self.chunk("payload")?))
        })();
        if message.is_err() {
            self.rest = &[]; // nothing after a bad length can be trusted
        }
        Some(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_reads_back_as_the_messages_it_was_made_of() {
        let messages = vec![("robot1/odom".to_string(), vec![0, 1, 0, 0, 7]), ("tf".to_string(), vec![])];
        let bytes = encode_batch(41, &messages);
        assert_eq!(read_batch(&bytes).unwrap().number(), 41);
        let back: Vec<(&str, &[u8])> = read_batch(&bytes).unwrap().collect::<Result<_, _>>().unwrap();
        assert_eq!(back, vec![("robot1/odom", &[0u8, 1, 0, 0, 7][..]), ("tf", &[][..])]);
        assert_eq!(read_batch(&encode_batch(0, &[])).unwrap().count(), 0, "an empty batch");
        assert_eq!(bytes.len(), batch_len(&messages), "its length told before it is written");
    }

    #[test]
    fn a_cut_or_foreign_batch_is_refused_not_misread() {
        let bytes = encode_batch(7, &[("robot1/odom".to_string(), vec![9; 40])]);
        let cut: Vec<_> = read_batch(&bytes[..bytes.len() - 1]).unwrap().collect();
        assert!(matches!(cut[..], [Err(DecodeError::Malformed { .. })]), "{cut:?}");
        let mut other = bytes.clone();
        other[0] ^= 0xff;
        assert!(matches!(read_batch(&other), Err(DecodeError::VersionMismatch { .. })));
        assert!(matches!(read_batch(&[1]), Err(DecodeError::TooShort { .. })));
        assert!(matches!(read_batch(&bytes[..9]), Err(DecodeError::TooShort { .. })), "its number cut off");
        let mut huge = SCHEMA_VERSION.to_le_bytes().to_vec();
        huge.extend_from_slice(&3u64.to_le_bytes());
        huge.extend_from_slice(&u32::MAX.to_le_bytes());
        assert!(read_batch(&huge).unwrap().next().unwrap().is_err(), "a length beyond the bytes left");
    }
}
