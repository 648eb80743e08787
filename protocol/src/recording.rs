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
//! cost. Its framing is as plain, integers little-endian:
//!
//! - its layout's version ([`BATCH_VERSION`], u16) and the batch's number
//!   (u64: a sender numbers its batches 0, 1, 2, … so that a recorder can
//!   tell when some never arrived);
//! - its messages, each an MCAP Message record: opcode 0x05, the record's
//!   length (u64), the index of its key in the batch's keys (u16, where
//!   the file has its channel id), a sequence number (u32, 0: the recorder
//!   numbers the messages of each channel), its log time and publish time
//!   (u64 each, ns: the sim time of its moment, the state the node
//!   answered or the latest it knew of), then the payload;
//! - its keys, in the order of their first message, each its length (u32)
//!   and the key in UTF-8;
//! - the number of keys (u32) and where the first starts (u32).
//!
//! Each key is written once a batch, not once a message: the recorder
//! finds a batch's topics once, where finding each message's was a tenth
//! of its CPU at office-50 (its lookups missed the cache the payloads'
//! copies had just filled), and the message's record is already laid out
//! as the file holds it. A reader borrows keys and payloads from the
//! received bytes.

use rustc_hash::FxHashMap;

use crate::codec::DecodeError;

const KIND: &str = "OutputBatch";

/// The version of the layout above: 4 since messages are MCAP records
/// whose keys are written once a batch (3 had moments of keys and
/// payloads, 2 had one moment, 1 had no time).
pub const BATCH_VERSION: u16 = 4;

/// Bytes before a batch's first message: its version and number.
pub const BATCH_START_LEN: usize = 2 + 8;

/// The MCAP opcode of a Message record.
const MESSAGE_OPCODE: u8 = 0x05;

/// Bytes of a message's record before its payload: opcode, record length,
/// key index, sequence, log time, publish time.
pub const RECORD_HEAD_LEN: usize = 1 + 8 + 2 + 4 + 8 + 8;

/// Bytes of a record's content before its payload (what its length counts
/// besides the payload).
const RECORD_FIELDS_LEN: usize = RECORD_HEAD_LEN - 1 - 8;

/// Bytes at a batch's end, after its keys: their number and where the
/// first starts.
pub const BATCH_END_LEN: usize = 4 + 4;

/// The most keys a batch holds: a record's key index is a u16, as an MCAP
/// file's channel ids are (a file holds no more channels either).
pub const MAX_BATCH_KEYS: usize = u16::MAX as usize + 1;

/// A moment's messages: key and payload each.
pub type Messages = [(String, Vec<u8>)];

/// The keys of a batch being written, numbered in the order of their first
/// message.
#[derive(Debug)]
pub struct BatchKeys {
    numbers: FxHashMap<String, u16>,
    keys: Vec<String>,
    /// The bytes they take at the batch's end, with [`BATCH_END_LEN`].
    len: usize,
    /// Which batch's keys these are, unique in this process: a
    /// [`KeyNumberCache`] holds a number of this batch only.
    batch: u64,
}

impl Default for BatchKeys {
    fn default() -> BatchKeys {
        BatchKeys { numbers: FxHashMap::default(), keys: Vec::new(), len: 0, batch: next_batch_serial() }
    }
}

/// A serial number no other batch's keys in this process have had.
fn next_batch_serial() -> u64 {
    static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// A key's number in one batch, kept by whoever writes that key again and
/// again (a robot's odometry, each step): it is found without hashing
/// and comparing the key's string while the same batch is filled. Those
/// lookups (two a message) were about 7 % of the odometry node's samples
/// while recording office-50 (BENCHMARKS.md, "key numbers kept").
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct KeyNumberCache(Option<(u64, u16)>);

impl BatchKeys {
    /// The number `cache` holds for a key, if it holds one of this batch.
    pub fn cached(&self, cache: KeyNumberCache) -> Option<u16> {
        cache.0.filter(|(batch, _)| *batch == self.batch).map(|(_, number)| number)
    }

    /// [`BatchKeys::number`], kept in `cache` for the rest of this batch.
    pub fn number_cached(&mut self, key: &str, cache: &mut KeyNumberCache) -> Option<u16> {
        if let Some(number) = self.cached(*cache) {
            return Some(number);
        }
        let number = self.number(key)?;
        *cache = KeyNumberCache(Some((self.batch, number)));
        Some(number)
    }

    /// The number of `key`, given it now if it has none; `None` when the
    /// batch holds [`MAX_BATCH_KEYS`] keys already.
    pub fn number(&mut self, key: &str) -> Option<u16> {
        if let Some(&number) = self.numbers.get(key) {
            return Some(number);
        }
        let number = u16::try_from(self.keys.len()).ok()?;
        self.numbers.insert(key.to_string(), number);
        self.keys.push(key.to_string());
        self.len += key_len(key);
        Some(number)
    }

    /// Whether `key` has a number, or can be given one.
    pub fn takes(&self, key: &str) -> bool {
        self.keys.len() < MAX_BATCH_KEYS || self.numbers.contains_key(key)
    }

    /// The bytes [`BatchKeys::write_end`] writes.
    pub fn end_len(&self) -> usize {
        self.len + BATCH_END_LEN
    }

    /// The bytes a key not numbered yet would add to the end.
    pub fn len_if_new(&self, key: &str) -> usize {
        if self.numbers.contains_key(key) {
            0
        } else {
            key_len(key)
        }
    }

    /// Writes the keys and the batch's end, the first key at `keys_at`
    /// bytes from the batch's start, in pieces, to `write`; then forgets
    /// them for the next batch.
    pub fn write_end(&mut self, keys_at: usize, mut write: impl FnMut(&[u8])) {
        for key in &self.keys {
            // Under 4 GiB each: keys are names of topics.
            write(&(key.len() as u32).to_le_bytes());
            write(key.as_bytes());
        }
        let count = self.keys.len() as u32; // at most MAX_BATCH_KEYS
        let keys_at = u32::try_from(keys_at).expect("a batch under 4 GiB");
        write(&count.to_le_bytes());
        write(&keys_at.to_le_bytes());
        self.numbers.clear();
        self.keys.clear();
        self.len = 0;
        self.batch = next_batch_serial();
    }
}

/// The bytes a key takes among a batch's keys.
fn key_len(key: &str) -> usize {
    4 + key.len()
}

/// A batch of moments, each its sim time (ns) and its messages, numbered
/// `number`.
pub fn encode_batch(number: u64, moments: &[(u64, &Messages)]) -> Vec<u8> {
    let mut keys = BatchKeys::default();
    let mut out = Vec::new();
    write_batch_start(number, |piece| out.extend_from_slice(piece));
    for (time_ns, messages) in moments {
        for (key, payload) in messages.iter() {
            let Some(index) = keys.number(key) else { continue };
            write_record_head(index, *time_ns, payload.len(), |piece| out.extend_from_slice(piece));
            out.extend_from_slice(payload);
        }
    }
    let keys_at = out.len();
    keys.write_end(keys_at, |piece| out.extend_from_slice(piece));
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

/// The bytes a message of `payload_len` bytes takes in a batch, besides
/// its key.
pub fn record_len(payload_len: usize) -> usize {
    RECORD_HEAD_LEN + payload_len
}

/// Writes the head of a message's record: key number `key`, sim time
/// `time_ns`, a payload of `payload_len` bytes to follow.
pub fn write_record_head(key: u16, time_ns: u64, payload_len: usize, mut write: impl FnMut(&[u8])) {
    let mut head = [0u8; RECORD_HEAD_LEN];
    head[0] = MESSAGE_OPCODE;
    head[1..9].copy_from_slice(&((RECORD_FIELDS_LEN + payload_len) as u64).to_le_bytes());
    head[9..11].copy_from_slice(&key.to_le_bytes());
    // head[11..15]: the sequence, 0.
    head[15..23].copy_from_slice(&time_ns.to_le_bytes());
    head[23..31].copy_from_slice(&time_ns.to_le_bytes());
    write(&head);
}

/// Reads a batch's version, number and keys; its messages come from the
/// returned iterator, each with its moment's time.
pub fn read_batch(bytes: &[u8]) -> Result<BatchReader<'_>, DecodeError> {
    let too_short = || DecodeError::TooShort { kind: KIND, len: bytes.len() };
    let (version, rest) = bytes.split_first_chunk::<2>().ok_or_else(too_short)?;
    let got = u16::from_le_bytes(*version);
    if got != BATCH_VERSION {
        return Err(DecodeError::VersionMismatch { kind: KIND, got, expected: BATCH_VERSION });
    }
    let (number, _) = rest.split_first_chunk::<8>().ok_or_else(too_short)?;
    let (body, end) = bytes.split_last_chunk::<BATCH_END_LEN>().ok_or_else(too_short)?;
    let count = u32::from_le_bytes(end[..4].try_into().expect("4 bytes")) as usize;
    let keys_at = u32::from_le_bytes(end[4..].try_into().expect("4 bytes")) as usize;
    if !(BATCH_START_LEN..=body.len()).contains(&keys_at) {
        return Err(malformed(format!("keys at byte {keys_at} of a batch of {} bytes", bytes.len())));
    }
    if count > MAX_BATCH_KEYS {
        return Err(malformed(format!("{count} keys, more than a batch holds")));
    }
    let mut keys = Vec::with_capacity(count);
    let mut rest = &body[keys_at..];
    for _ in 0..count {
        let key = take_chunk(&mut rest, "key")?;
        keys.push(std::str::from_utf8(key).map_err(|e| malformed(format!("a key not in UTF-8: {e}")))?);
    }
    if !rest.is_empty() {
        return Err(malformed(format!("{} bytes after the batch's {count} keys", rest.len())));
    }
    Ok(BatchReader { number: u64::from_le_bytes(*number), keys, rest: &bytes[BATCH_START_LEN..keys_at] })
}

fn malformed(reason: String) -> DecodeError {
    DecodeError::Malformed { kind: KIND, reason }
}

/// A length-prefixed (u32) piece of `rest`, taken off its front.
fn take_chunk<'a>(rest: &mut &'a [u8], what: &str) -> Result<&'a [u8], DecodeError> {
    // Worded only when it fails.
    let Some((len, after)) = rest.split_first_chunk::<4>() else {
        return Err(malformed(format!("the {what}'s length is cut off")));
    };
    let len = u32::from_le_bytes(*len) as usize;
    if after.len() < len {
        return Err(malformed(format!("a {what} of {len} bytes, {} left", after.len())));
    }
    let (chunk, after) = after.split_at(len);
    *rest = after;
    Ok(chunk)
}

/// A message of a batch, borrowed from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchMessage<'a> {
    /// The sim time of its moment, ns.
    pub time_ns: u64,
    /// Its key's number among the batch's keys ([`BatchReader::keys`]).
    pub key_number: u16,
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
    keys: Vec<&'a str>,
    /// The records not read yet.
    rest: &'a [u8],
}

impl<'a> BatchReader<'a> {
    /// The batch's number.
    pub fn number(&self) -> u64 {
        self.number
    }

    /// The batch's keys, by number.
    pub fn keys(&self) -> &[&'a str] {
        &self.keys
    }

    fn next_message(&mut self) -> Result<Option<BatchMessage<'a>>, DecodeError> {
        if self.rest.is_empty() {
            return Ok(None);
        }
        let Some((head, after)) = self.rest.split_first_chunk::<RECORD_HEAD_LEN>() else {
            return Err(malformed(format!("a record's head cut off at {} bytes", self.rest.len())));
        };
        if head[0] != MESSAGE_OPCODE {
            return Err(malformed(format!("a record of opcode {:#04x}, not a message", head[0])));
        }
        let record_len = u64::from_le_bytes(head[1..9].try_into().expect("8 bytes"));
        let key_number = u16::from_le_bytes(head[9..11].try_into().expect("2 bytes"));
        let time_ns = u64::from_le_bytes(head[15..23].try_into().expect("8 bytes"));
        let payload_len = record_len
            .checked_sub(RECORD_FIELDS_LEN as u64)
            .and_then(|len| usize::try_from(len).ok())
            .filter(|&len| len <= after.len())
            .ok_or_else(|| malformed(format!("a record of {record_len} bytes, {} left", after.len())))?;
        let key = *self
            .keys
            .get(usize::from(key_number))
            .ok_or_else(|| malformed(format!("a message of key {key_number}, of {} keys", self.keys.len())))?;
        let (payload, rest) = after.split_at(payload_len);
        self.rest = rest;
        Ok(Some(BatchMessage { time_ns, key_number, key, payload }))
    }
}

impl<'a> Iterator for BatchReader<'a> {
    type Item = Result<BatchMessage<'a>, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.next_message() {
            Ok(message) => message.map(Ok),
            Err(e) => {
                self.rest = &[];
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message<'a>(time_ns: u64, key_number: u16, key: &'a str, payload: &'a [u8]) -> BatchMessage<'a> {
        BatchMessage { time_ns, key_number, key, payload }
    }

    #[test]
    fn a_batch_reads_back_as_the_moments_it_was_made_of() {
        let first = vec![("robot1/odom".to_string(), vec![0, 1, 0, 0, 7]), ("tf".to_string(), vec![])];
        let second = vec![("robot1/odom".to_string(), vec![9; 3])];
        let bytes = encode_batch(41, &[(12_345_000_000, &first), (12_350_000_000, &[]), (12_355_000_000, &second)]);
        let batch = read_batch(&bytes).unwrap();
        assert_eq!(batch.number(), 41);
        assert_eq!(batch.keys(), ["robot1/odom", "tf"], "each key once, in the order of its first message");
        let back: Vec<BatchMessage> = batch.collect::<Result<_, _>>().unwrap();
        assert_eq!(
            back,
            [
                message(12_345_000_000, 0, "robot1/odom", &[0, 1, 0, 0, 7]),
                message(12_345_000_000, 1, "tf", &[]),
                message(12_355_000_000, 0, "robot1/odom", &[9; 3]),
            ],
            "each message with its moment's time; a moment without messages adds none"
        );
        assert_eq!(read_batch(&encode_batch(0, &[])).unwrap().count(), 0, "a batch of no moment");
        let len = BATCH_START_LEN + record_len(5) + record_len(0) + record_len(3) + (4 + 11) + (4 + 2) + BATCH_END_LEN;
        assert_eq!(bytes.len(), len);
    }

    #[test]
    fn each_message_is_an_mcap_message_record_its_key_number_where_the_channel_goes() {
        let bytes = encode_batch(0, &[(7_000_000_005, &[("a".to_string(), vec![1, 2, 3])])]);
        let record = &bytes[BATCH_START_LEN..BATCH_START_LEN + record_len(3)];
        assert_eq!(record[0], 0x05, "opcode of a Message");
        assert_eq!(u64::from_le_bytes(record[1..9].try_into().unwrap()), 2 + 4 + 8 + 8 + 3, "content length");
        assert_eq!(&record[9..11], &0u16.to_le_bytes(), "channel: the key's number");
        assert_eq!(&record[11..15], &[0; 4], "sequence: the recorder's to number");
        assert_eq!(&record[15..23], &7_000_000_005u64.to_le_bytes(), "log time");
        assert_eq!(&record[23..31], &7_000_000_005u64.to_le_bytes(), "publish time");
        assert_eq!(&record[31..], &[1, 2, 3]);
    }

    #[test]
    fn a_batch_numbered_when_sent_reads_its_number() {
        let mut bytes = encode_batch(0, &[(5, &[("scan".to_string(), vec![1, 2])])]);
        set_batch_number(&mut bytes, 9_000_000_001);
        assert_eq!(read_batch(&bytes).unwrap().number(), 9_000_000_001);
        assert_eq!(read_batch(&bytes).unwrap().next().unwrap().unwrap(), message(5, 0, "scan", &[1, 2]));
    }

    #[test]
    fn a_cut_or_foreign_batch_is_refused_not_misread() {
        let bytes = encode_batch(7, &[(5, &[("robot1/odom".to_string(), vec![9; 40])])]);
        // Cut anywhere, the end no longer says where the keys are.
        for cut in [bytes.len() - 1, bytes.len() - 9, BATCH_START_LEN + 3, BATCH_START_LEN + 40] {
            assert!(matches!(read_batch(&bytes[..cut]), Err(DecodeError::Malformed { .. })), "cut at {cut}");
        }
        let mut other = bytes.clone();
        other[0] ^= 0xff;
        assert!(matches!(read_batch(&other), Err(DecodeError::VersionMismatch { .. })));
        assert!(matches!(read_batch(&[1]), Err(DecodeError::TooShort { .. })));
        assert!(matches!(read_batch(&bytes[..9]), Err(DecodeError::TooShort { .. })), "its number cut off");
        let mut version_3 = bytes.clone();
        version_3[..2].copy_from_slice(&3u16.to_le_bytes());
        assert!(
            matches!(read_batch(&version_3), Err(DecodeError::VersionMismatch { got: 3, expected: 4, .. })),
            "a batch of the layout of moments"
        );

        // A record longer than the records left, or of a key the batch has not.
        let mut long = bytes.clone();
        long[BATCH_START_LEN + 1..BATCH_START_LEN + 9].copy_from_slice(&u64::MAX.to_le_bytes());
        let read: Vec<_> = read_batch(&long).unwrap().collect();
        assert!(matches!(read[..], [Err(DecodeError::Malformed { .. })]), "{read:?}");
        let mut keyless = bytes.clone();
        keyless[BATCH_START_LEN + 9..BATCH_START_LEN + 11].copy_from_slice(&1u16.to_le_bytes());
        let read: Vec<_> = read_batch(&keyless).unwrap().collect();
        assert!(matches!(read[..], [Err(DecodeError::Malformed { .. })]), "{read:?}");
        let mut not_a_message = bytes.clone();
        not_a_message[BATCH_START_LEN] = 0x06;
        let read: Vec<_> = read_batch(&not_a_message).unwrap().collect();
        assert!(matches!(read[..], [Err(DecodeError::Malformed { .. })]), "{read:?}");

        // Keys said to start past the end, or more of them than there are.
        let mut far = bytes.clone();
        let at = far.len() - 4;
        far[at..].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(read_batch(&far), Err(DecodeError::Malformed { .. })));
        let mut more = bytes.clone();
        let at = more.len() - 8;
        more[at..at + 4].copy_from_slice(&2u32.to_le_bytes());
        assert!(matches!(read_batch(&more), Err(DecodeError::Malformed { .. })));
    }

    #[test]
    fn a_batch_s_keys_are_numbered_up_to_what_a_u16_holds() {
        let mut keys = BatchKeys::default();
        for i in 0..MAX_BATCH_KEYS {
            assert_eq!(keys.number(&format!("k{i}")), Some(i as u16));
        }
        assert_eq!(keys.number("k7"), Some(7), "a key numbered keeps its number");
        assert!(keys.takes("k7") && !keys.takes("one more"));
        assert_eq!(keys.number("one more"), None);
        let mut end = Vec::new();
        keys.write_end(10, |piece| end.extend_from_slice(piece));
        assert_eq!(keys.number("one more"), Some(0), "the next batch numbers its keys afresh");
    }
}
