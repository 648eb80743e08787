//! What nodes send recorders: their messages, several moments in one
//! payload.
//!
//! A recorder subscribed to every ROS-facing topic receives each message on
//! its own — at office-50's 35× real time, about 220,000 a second into one
//! process, which cost the simulation 40 % of its speed. Instead, a node
//! that sees a recorder (a subscriber on [`crate::Keys::recording`]) sends
//! it the messages of its moments (an answered state, an input) in
//! batches, and publishes on the topics themselves only what other
//! subscribers want. A batch holds several moments: one a moment was
//! still 3,500 batches a wall second at office-50's 50× real time, and
//! each cost the node a hand-over to its main loop and a send, and the
//! recorder a wake-up (BENCHMARKS.md, "several moments to a batch"). The
//! world sends its `clock`, one message a step, in batches of several
//! steps.
//!
//! A batch is the one internal payload not encoded by [`crate::codec`]:
//! bincode writes and reads a byte vector one byte at a time, which made
//! copying the payloads in and out the recorder's and the nodes' main
//! cost. Its framing is as plain, integers little-endian: its layout's
//! version ([`BATCH_VERSION`], u16), the batch's number (u64: a sender
//! numbers its batches 0, 1, 2, … so that a recorder can tell when some
//! never arrived), then per moment its sim time (u64, ns: the state the
//! node answered, or the latest it knew of) and its number of messages
//! (u32), and per message the key's length (u32), the key in UTF-8, the
//! payload's length (u32) and the payload. A reader borrows keys and
//! payloads from the received bytes.

use crate::codec::DecodeError;

const KIND: &str = "OutputBatch";

/// The version of the layout above: 3 since a batch holds several moments
/// (2 had one, with its time; 1 had no time).
pub const BATCH_VERSION: u16 = 3;

/// Bytes before a batch's first moment: its version and number.
pub const BATCH_START_LEN: usize = 2 + 8;

/// A moment's messages: key and payload each.
pub type Messages = [(String, Vec<u8>)];

/// A batch of moments, each its sim time (ns) and its messages, numbered
/// `number`.
pub fn encode_batch(number: u64, moments: &[(u64, &Messages)]) -> Vec<u8> {
    let len = BATCH_START_LEN + moments.iter().map(|(_, messages)| moment_len(messages)).sum::<usize>();
    let mut out = Vec::with_capacity(len);
    write_batch_start(number, |piece| out.extend_from_slice(piece));
    for (time_ns, messages) in moments {
        write_moment(*time_ns, messages, |piece| out.extend_from_slice(piece));
    }
    out
}

/// Writes a batch's version and number, in pieces, to `write`.
pub fn write_batch_start(number: u64, mut write: impl FnMut(&[u8])) {
    write(&BATCH_VERSION.to_le_bytes());
    write(&number.to_le_bytes());
}

/// Numbers a batch whose start [`write_batch_start`] wrote before its
/// number was known (a batch is numbered when it is sent).
pub fn set_batch_number(batch: &mut [u8], number: u64) {
    batch[2..BATCH_START_LEN].copy_from_slice(&number.to_le_bytes());
}

/// Bytes before a moment's messages: its time and its number of messages.
pub const MOMENT_START_LEN: usize = 8 + 4;

/// Where a moment's number of messages lies, from the moment's start.
const MOMENT_COUNT_AT: usize = 8;

/// The bytes [`write_moment`] writes for `messages`.
pub fn moment_len(messages: &Messages) -> usize {
    MOMENT_START_LEN + messages_len(messages)
}

/// The bytes [`write_message`] writes for `messages`.
pub fn messages_len(messages: &Messages) -> usize {
    messages.iter().map(|(key, payload)| message_len(key, payload.len())).sum()
}

/// The bytes a message of `payload_len` bytes on `key` takes in a moment.
pub fn message_len(key: &str, payload_len: usize) -> usize {
    4 + key.len() + 4 + payload_len
}

/// Writes a moment of sim time `time_ns` and its messages, in pieces, to
/// `write`.
pub fn write_moment(time_ns: u64, messages: &Messages, mut write: impl FnMut(&[u8])) {
    let count = u32::try_from(messages.len()).expect("under 4 billion messages a moment");
    write_moment_start(time_ns, count, &mut write);
    for (key, payload) in messages {
        write_message(key, payload, &mut write);
    }
}

/// Writes the start of a moment of sim time `time_ns` that will hold
/// `messages` messages (0 for now, see [`set_moment_messages`]).
pub fn write_moment_start(time_ns: u64, messages: u32, mut write: impl FnMut(&[u8])) {
    write(&time_ns.to_le_bytes());
    write(&messages.to_le_bytes());
}

/// Sets the number of messages of the moment that `moment` starts with.
pub fn set_moment_messages(moment: &mut [u8], messages: u32) {
    moment[MOMENT_COUNT_AT..MOMENT_START_LEN].copy_from_slice(&messages.to_le_bytes());
}

/// Writes a message of a moment, in pieces, to `write`.
pub fn write_message(key: &str, payload: &[u8], mut write: impl FnMut(&[u8])) {
    write_message_start(key, payload.len(), &mut write);
    write(payload);
}

/// Writes what comes before a message's payload of `payload_len` bytes:
/// the key's length, the key, the payload's length.
pub fn write_message_start(key: &str, payload_len: usize, mut write: impl FnMut(&[u8])) {
    // A batch of one moment's messages: far below 4 GiB each.
    let key_len = u32::try_from(key.len()).expect("a key under 4 GiB");
    let payload_len = u32::try_from(payload_len).expect("a message under 4 GiB");
    write(&key_len.to_le_bytes());
    write(key.as_bytes());
    write(&payload_len.to_le_bytes());
}

/// Reads a batch's version and number; its messages come from the
/// returned iterator, each with its moment's time.
pub fn read_batch(bytes: &[u8]) -> Result<BatchReader<'_>, DecodeError> {
    let too_short = || DecodeError::TooShort { kind: KIND, len: bytes.len() };
    let (version, rest) = bytes.split_first_chunk::<2>().ok_or_else(too_short)?;
    let got = u16::from_le_bytes(*version);
    if got != BATCH_VERSION {
        return Err(DecodeError::VersionMismatch { kind: KIND, got, expected: BATCH_VERSION });
    }
    let (number, rest) = rest.split_first_chunk::<8>().ok_or_else(too_short)?;
    Ok(BatchReader { number: u64::from_le_bytes(*number), time_ns: 0, left_in_moment: 0, rest })
}

/// A message of a batch, borrowed from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchMessage<'a> {
    /// The sim time of its moment, ns.
    pub time_ns: u64,
    /// Its key.
    pub key: &'a str,
    /// Its payload.
    pub payload: &'a [u8],
}

/// The messages of a batch, in the order they were written. After an
/// error it ends: nothing after a bad length can be trusted.
#[derive(Debug)]
pub struct BatchReader<'a> {
    number: u64,
    /// The moment being read: its time and the messages of it not read yet.
    time_ns: u64,
    left_in_moment: u32,
    rest: &'a [u8],
}

impl<'a> BatchReader<'a> {
    /// The batch's number.
    pub fn number(&self) -> u64 {
        self.number
    }

    fn malformed(reason: String) -> DecodeError {
        DecodeError::Malformed { kind: KIND, reason }
    }

    fn take<const N: usize>(&mut self, what: &str) -> Result<[u8; N], DecodeError> {
        let (value, rest) =
            self.rest.split_first_chunk::<N>().ok_or_else(|| Self::malformed(format!("the {what} is cut off")))?;
        self.rest = rest;
        Ok(*value)
    }

    fn chunk(&mut self, what: &str) -> Result<&'a [u8], DecodeError> {
        // Worded only when it fails: this runs twice for every message.
        let Some((len, rest)) = self.rest.split_first_chunk::<4>() else {
            return Err(Self::malformed(format!("the {what}'s length is cut off")));
        };
        self.rest = rest;
        let len = u32::from_le_bytes(*len) as usize;
        if self.rest.len() < len {
            return Err(Self::malformed(format!("a {what} of {len} bytes, {} left", self.rest.len())));
        }
        let (chunk, rest) = self.rest.split_at(len);
        self.rest = rest;
        Ok(chunk)
    }

    fn next_message(&mut self) -> Result<Option<BatchMessage<'a>>, DecodeError> {
        while self.left_in_moment == 0 {
            if self.rest.is_empty() {
                return Ok(None);
            }
            self.time_ns = u64::from_le_bytes(self.take("moment's time")?);
            self.left_in_moment = u32::from_le_bytes(self.take("moment's number of messages")?);
        }
        let key =
            std::str::from_utf8(self.chunk("key")?).map_err(|e| Self::malformed(format!("a key not in UTF-8: {e}")))?;
        let payload = self.chunk("payload")?;
        self.left_in_moment -= 1;
        Ok(Some(BatchMessage { time_ns: self.time_ns, key, payload }))
    }
}

impl<'a> Iterator for BatchReader<'a> {
    type Item = Result<BatchMessage<'a>, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.next_message() {
            Ok(message) => message.map(Ok),
            Err(e) => {
                (self.rest, self.left_in_moment) = (&[], 0);
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message<'a>(time_ns: u64, key: &'a str, payload: &'a [u8]) -> BatchMessage<'a> {
        BatchMessage { time_ns, key, payload }
    }

    #[test]
    fn a_batch_reads_back_as_the_moments_it_was_made_of() {
        let first = vec![("robot1/odom".to_string(), vec![0, 1, 0, 0, 7]), ("tf".to_string(), vec![])];
        let second = vec![("robot1/odom".to_string(), vec![9; 3])];
        let bytes = encode_batch(41, &[(12_345_000_000, &first), (12_350_000_000, &[]), (12_355_000_000, &second)]);
        let batch = read_batch(&bytes).unwrap();
        assert_eq!(batch.number(), 41);
        let back: Vec<BatchMessage> = batch.collect::<Result<_, _>>().unwrap();
        assert_eq!(
            back,
            [
                message(12_345_000_000, "robot1/odom", &[0, 1, 0, 0, 7]),
                message(12_345_000_000, "tf", &[]),
                message(12_355_000_000, "robot1/odom", &[9; 3]),
            ],
            "each message with its moment's time; a moment without messages adds none"
        );
        assert_eq!(read_batch(&encode_batch(0, &[])).unwrap().count(), 0, "a batch of no moment");
        let lens = BATCH_START_LEN + moment_len(&first) + moment_len(&[]) + moment_len(&second);
        assert_eq!(bytes.len(), lens, "its length told before it is written");
    }

    #[test]
    fn a_batch_numbered_when_sent_reads_its_number() {
        let mut bytes = encode_batch(0, &[(5, &[("scan".to_string(), vec![1, 2])])]);
        set_batch_number(&mut bytes, 9_000_000_001);
        assert_eq!(read_batch(&bytes).unwrap().number(), 9_000_000_001);
        assert_eq!(read_batch(&bytes).unwrap().next().unwrap().unwrap(), message(5, "scan", &[1, 2]));
    }

    #[test]
    fn a_cut_or_foreign_batch_is_refused_not_misread() {
        let bytes = encode_batch(7, &[(5, &[("robot1/odom".to_string(), vec![9; 40])])]);
        for cut in [bytes.len() - 1, BATCH_START_LEN + 3, BATCH_START_LEN + 10, BATCH_START_LEN + 14] {
            let read: Vec<_> = read_batch(&bytes[..cut]).unwrap().collect();
            assert!(matches!(read[..], [Err(DecodeError::Malformed { .. })]), "cut at {cut}: {read:?}");
        }
        let mut other = bytes.clone();
        other[0] ^= 0xff;
        assert!(matches!(read_batch(&other), Err(DecodeError::VersionMismatch { .. })));
        assert!(matches!(read_batch(&[1]), Err(DecodeError::TooShort { .. })));
        assert!(matches!(read_batch(&bytes[..9]), Err(DecodeError::TooShort { .. })), "its number cut off");
        let mut version_2 = bytes.clone();
        version_2[..2].copy_from_slice(&2u16.to_le_bytes());
        assert!(
            matches!(read_batch(&version_2), Err(DecodeError::VersionMismatch { got: 2, expected: 3, .. })),
            "a batch of the layout of one moment"
        );
        let mut huge = encode_batch(3, &[]);
        huge.extend_from_slice(&4u64.to_le_bytes());
        huge.extend_from_slice(&1u32.to_le_bytes());
        huge.extend_from_slice(&u32::MAX.to_le_bytes());
        assert!(read_batch(&huge).unwrap().next().unwrap().is_err(), "a length beyond the bytes left");
        let mut more = encode_batch(3, &[]);
        more.extend_from_slice(&4u64.to_le_bytes());
        more.extend_from_slice(&2u32.to_le_bytes());
        more.extend_from_slice(&0u32.to_le_bytes());
        more.extend_from_slice(&0u32.to_le_bytes());
        let read: Vec<_> = read_batch(&more).unwrap().collect();
        assert!(matches!(read[..], [Ok(_), Err(DecodeError::Malformed { .. })]), "a moment promising more: {read:?}");
    }
}
