//! What nodes send recorders: every message of one moment in one payload.
//!
//! A recorder subscribed to every ROS-facing topic receives each message on
//! its own — at office-50's 35× real time, about 220,000 a second into one
//! process, which cost the simulation 40 % of its speed. Instead, a node
//! that sees a recorder (a subscriber on [`crate::Keys::recording`]) sends
//! it the messages of each of its moments (an answered state, an input) in
//! one batch, a few thousand a second in all, and publishes on the topics
//! themselves only what other subscribers want. The world sends its
//! `clock`, one message a step, in batches of several steps.
//!
//! A batch is the one internal payload not encoded by [`crate::codec`]:
//! bincode writes and reads a byte vector one byte at a time, which made
//! copying the payloads in and out the recorder's and the nodes' main
//! cost. Its framing is as plain: its layout's version ([`BATCH_VERSION`],
//! two bytes, little-endian), the batch's number (u64 LE: a node numbers
//! its batches 0, 1, 2, … so that a recorder can tell when some never
//! arrived), the sim time of its moment (u64 LE, ns: the state the node
//! answered, or the latest it knew of), then per message the key's length
//! (u32 LE), the key in UTF-8, the payload's length (u32 LE) and the
//! payload. A reader borrows keys and payloads from the received bytes.

use crate::codec::DecodeError;

const KIND: &str = "OutputBatch";

/// The version of a batch's layout. Version 1 (Flotilla's schema version
/// then) had no sim time.
pub const BATCH_VERSION: u16 = 2;

/// What a batch says of itself before its messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchHeader {
    /// Its number among its sender's batches.
    pub number: u64,
    /// The sim time of the moment its messages are of, ns.
    pub time_ns: u64,
}

/// Encodes a batch of a node: the messages it published at one moment —
/// each topic's Zenoh key and its CDR payload, as they went (or would have
/// gone) out on that key — in the order it made them.
pub fn encode_batch(header: BatchHeader, messages: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(batch_len(messages));
    write_batch(header, messages, |piece| out.extend_from_slice(piece));
    out
}

/// The bytes of a batch of `messages`.
pub fn batch_len(messages: &[(String, Vec<u8>)]) -> usize {
    2 + 8 + 8 + messages.iter().map(|(key, payload)| 8 + key.len() + payload.len()).sum::<usize>()
}

/// [`encode_batch`] piece by piece into `write`, for a sender that keeps
/// its buffer from batch to batch.
pub fn write_batch(header: BatchHeader, messages: &[(String, Vec<u8>)], mut write: impl FnMut(&[u8])) {
    write(&BATCH_VERSION.to_le_bytes());
    write(&header.number.to_le_bytes());
    write(&header.time_ns.to_le_bytes());
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
    let too_short = || DecodeError::TooShort { kind: KIND, len: bytes.len() };
    let (version, rest) = bytes.split_first_chunk::<2>().ok_or_else(too_short)?;
    let got = u16::from_le_bytes(*version);
    if got != BATCH_VERSION {
        return Err(DecodeError::VersionMismatch { kind: KIND, got, expected: BATCH_VERSION });
    }
    let (number, rest) = rest.split_first_chunk::<8>().ok_or_else(too_short)?;
    let (time_ns, rest) = rest.split_first_chunk::<8>().ok_or_else(too_short)?;
    let header = BatchHeader { number: u64::from_le_bytes(*number), time_ns: u64::from_le_bytes(*time_ns) };
    Ok(BatchReader { header, rest })
}

/// Iterator over a batch's (key, payload) pairs; a malformed message ends
/// it with an error.
pub struct BatchReader<'a> {
    header: BatchHeader,
    rest: &'a [u8],
}

impl<'a> BatchReader<'a> {
    /// What the batch says of itself.
    pub fn header(&self) -> BatchHeader {
        self.header
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
        let header = BatchHeader { number: 41, time_ns: 12_345_000_000 };
        let bytes = encode_batch(header, &messages);
        assert_eq!(read_batch(&bytes).unwrap().header(), header);
        let back: Vec<(&str, &[u8])> = read_batch(&bytes).unwrap().collect::<Result<_, _>>().unwrap();
        assert_eq!(back, vec![("robot1/odom", &[0u8, 1, 0, 0, 7][..]), ("tf", &[][..])]);
        assert_eq!(
            read_batch(&encode_batch(BatchHeader { number: 0, time_ns: 0 }, &[])).unwrap().count(),
            0,
            "an empty batch"
        );
        assert_eq!(bytes.len(), batch_len(&messages), "its length told before it is written");
    }

    #[test]
    fn a_cut_or_foreign_batch_is_refused_not_misread() {
        let bytes = encode_batch(BatchHeader { number: 7, time_ns: 5 }, &[("robot1/odom".to_string(), vec![9; 40])]);
        let cut: Vec<_> = read_batch(&bytes[..bytes.len() - 1]).unwrap().collect();
        assert!(matches!(cut[..], [Err(DecodeError::Malformed { .. })]), "{cut:?}");
        let mut other = bytes.clone();
        other[0] ^= 0xff;
        assert!(matches!(read_batch(&other), Err(DecodeError::VersionMismatch { .. })));
        assert!(matches!(read_batch(&[1]), Err(DecodeError::TooShort { .. })));
        assert!(matches!(read_batch(&bytes[..9]), Err(DecodeError::TooShort { .. })), "its number cut off");
        assert!(matches!(read_batch(&bytes[..17]), Err(DecodeError::TooShort { .. })), "its time cut off");
        let mut version_1 = bytes.clone();
        version_1[..2].copy_from_slice(&1u16.to_le_bytes());
        assert!(
            matches!(read_batch(&version_1), Err(DecodeError::VersionMismatch { got: 1, expected: 2, .. })),
            "a batch of the layout without time"
        );
        let mut huge = BATCH_VERSION.to_le_bytes().to_vec();
        huge.extend_from_slice(&3u64.to_le_bytes());
        huge.extend_from_slice(&4u64.to_le_bytes());
        huge.extend_from_slice(&u32::MAX.to_le_bytes());
        assert!(read_batch(&huge).unwrap().next().unwrap().is_err(), "a length beyond the bytes left");
    }
}
