//! What nodes send recorders: their messages, several moments in one
//! payload, laid out as the recording file holds them.
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
//! recorder a wake-up. The
//! world sends its `clock`, one message a step, in batches of several
//! steps.
//!
//! A recorder takes a topic on its key until the first batch that holds
//! it, and from the batches only after that. While it does, its liveliness
//! token on [`crate::Keys::recorder_on_key`] names the key, and a node sends
//! its batch before any message on that key, so that the recorder gets
//! each message once. A message on a key only other subscribers want goes
//! there at once, and its batch keeps filling.
//!
//! A topic the simulation's nodes take in and none of it publishes
//! (`flotilla_plugins::channels::forwarded_topics`: commands from controllers
//! outside, office-50's 50 `cmd_vel`s) comes from a program that sends no
//! batches. A node that receives it anyway forwards each message into its
//! batches, at the sim time of the state it last answered, and says so
//! with a token on [`crate::Keys::forwarder`]. A recorder that finds such
//! a token when it starts recording the topic takes it from that node's
//! batches only, and never subscribes to the key: nothing can come twice.
//! The node forwards once it sees the recorder, and declares its token on
//! [`crate::Keys::forwarding`] when it does. If the forwarder goes (its
//! token with it), the recorder subscribes to the key from then on; what
//! the forwarder received and had not sent is missing, and another node's
//! copies are left out. A topic without a forwarder when the recorder
//! starts is taken on its key for good.
//!
//! A batch is the one internal payload not encoded by [`crate::codec`]:
//! bincode writes and reads a byte vector one byte at a time. Its layout
//! (5), integers little-endian:
//!
//! - bytes a reader skips, as many as the sender needs (see below);
//! - its messages, each an MCAP Message record:
//!   opcode 0x05, the record's length (u64), the topic's channel id (u16,
//!   the number the world gives it, see `flotilla_plugins::channels`), the
//!   sender's sequence number of the message on that channel (u32), its
//!   log time and publish time (u64 each, ns: the sim time of its moment,
//!   the state the node answered or the latest it knew of), then the
//!   payload;
//! - its index: per message, where its record starts (u32, from the
//!   first record's start), its channel id (u16) and its log time (u64);
//! - where the first record starts (u32, from the batch's first byte),
//!   the number of messages (u32), the batch's number (u64: a sender
//!   numbers its batches 0, 1, 2, … so that a recorder can tell when some
//!   never arrived) and the layout's version ([`BATCH_VERSION`], u16),
//!   last.
//!
//! The records are what an MCAP chunk holds, channel ids and sequences
//! included, and the index is what its message indexes and statistics are
//! made of: a recorder writes a batch's records into its file without
//! reading them. Reading the payloads it copied — memory another core had
//! just written — was most of the recorder's cost in a fast run.
//! A sender
//! that can starts the records on a boundary of 4096 bytes, where direct
//! I/O can take them: in shared memory, a buffer lies at the same place
//! within a page in every process that maps it, so the bytes skipped
//! before the records bring them to that boundary.

use crate::codec::DecodeError;

const KIND: &str = "OutputBatch";

/// The version of the layout above: 5 since records carry the world's
/// channel ids and an index follows them (4 had each key once a batch, 3
/// moments of keys and payloads, 2 one moment, 1 no time).
pub const BATCH_VERSION: u16 = 5;

/// The MCAP opcode of a Message record.
pub const MESSAGE_OPCODE: u8 = 0x05;

/// Bytes of a message's record before its payload: opcode, record length,
/// channel id, sequence, log time, publish time.
pub const RECORD_HEAD_LEN: usize = 1 + 8 + 2 + 4 + 8 + 8;

/// Bytes of a record's content before its payload (what its length counts
/// besides the payload).
const RECORD_FIELDS_LEN: usize = RECORD_HEAD_LEN - 1 - 8;

/// Bytes of a message's entry in the index: offset, channel id, log time.
pub const INDEX_ENTRY_LEN: usize = 4 + 2 + 8;

/// Bytes at a batch's end: where the records start, the number of
/// messages, the batch's number and the layout's version.
pub const BATCH_END_LEN: usize = 4 + 4 + 8 + 2;

/// The bytes a message of `payload_len` bytes takes in a batch, with its
/// index entry.
pub fn message_len(payload_len: usize) -> usize {
    RECORD_HEAD_LEN + payload_len + INDEX_ENTRY_LEN
}

/// The bytes of a message's record.
pub fn record_len(payload_len: usize) -> usize {
    RECORD_HEAD_LEN + payload_len
}

/// Writes the head of a message's record: channel `channel`, the sender's
/// `sequence` on it, sim time `time_ns`, a payload of `payload_len` bytes
/// to follow.
pub fn write_record_head(channel: u16, sequence: u32, time_ns: u64, payload_len: usize, mut write: impl FnMut(&[u8])) {
    let mut head = [0u8; RECORD_HEAD_LEN];
    head[0] = MESSAGE_OPCODE;
    head[1..9].copy_from_slice(&((RECORD_FIELDS_LEN + payload_len) as u64).to_le_bytes());
    head[9..11].copy_from_slice(&channel.to_le_bytes());
    head[11..15].copy_from_slice(&sequence.to_le_bytes());
    head[15..23].copy_from_slice(&time_ns.to_le_bytes());
    head[23..31].copy_from_slice(&time_ns.to_le_bytes());
    write(&head);
}

/// A message's entry in a batch's index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexEntry {
    /// Where its record starts, bytes from the first record's start.
    pub offset: u32,
    /// Its channel id.
    pub channel: u16,
    /// Its log time, ns.
    pub time_ns: u64,
}

impl IndexEntry {
    fn write(&self, mut write: impl FnMut(&[u8])) {
        let mut bytes = [0u8; INDEX_ENTRY_LEN];
        bytes[..4].copy_from_slice(&self.offset.to_le_bytes());
        bytes[4..6].copy_from_slice(&self.channel.to_le_bytes());
        bytes[6..].copy_from_slice(&self.time_ns.to_le_bytes());
        write(&bytes);
    }

    fn read(bytes: &[u8; INDEX_ENTRY_LEN]) -> IndexEntry {
        IndexEntry {
            offset: u32::from_le_bytes(bytes[..4].try_into().expect("4 bytes")),
            channel: u16::from_le_bytes(bytes[4..6].try_into().expect("2 bytes")),
            time_ns: u64::from_le_bytes(bytes[6..].try_into().expect("8 bytes")),
        }
    }
}

/// Writes a batch's index and end after its records, which start
/// `records_at` bytes from the batch's first: `index` in order, then the
/// batch's `number`.
pub fn write_batch_end(index: &[IndexEntry], records_at: usize, number: u64, mut write: impl FnMut(&[u8])) {
    for entry in index {
        entry.write(&mut write);
    }
    let count = u32::try_from(index.len()).expect("a batch under 4 GiB");
    let records_at = u32::try_from(records_at).expect("a batch under 4 GiB");
    write(&records_at.to_le_bytes());
    write(&count.to_le_bytes());
    write(&number.to_le_bytes());
    write(&BATCH_VERSION.to_le_bytes());
}

/// The bytes [`write_batch_end`] writes for `messages` messages.
pub fn batch_end_len(messages: usize) -> usize {
    messages * INDEX_ENTRY_LEN + BATCH_END_LEN
}

/// Numbers a batch whose end [`write_batch_end`] wrote before its number
/// was known (a batch is numbered when it is sent).
pub fn set_batch_number(batch: &mut [u8], number: u64) {
    let at = batch.len() - 2 - 8;
    batch[at..at + 8].copy_from_slice(&number.to_le_bytes());
}

/// A message for [`encode_batch`]: its channel, the sender's sequence on
/// it, its payload.
pub type ChannelMessage = (u16, u32, Vec<u8>);

/// A batch of moments, each its sim time (ns) and its messages, numbered
/// `number`.
pub fn encode_batch(number: u64, moments: &[(u64, &[ChannelMessage])]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut index = Vec::new();
    for (time_ns, messages) in moments {
        for (channel, sequence, payload) in messages.iter() {
            let offset = u32::try_from(out.len()).expect("a batch under 4 GiB");
            index.push(IndexEntry { offset, channel: *channel, time_ns: *time_ns });
            write_record_head(*channel, *sequence, *time_ns, payload.len(), |piece| out.extend_from_slice(piece));
            out.extend_from_slice(payload);
        }
    }
    write_batch_end(&index, 0, number, |piece| out.extend_from_slice(piece));
    out
}

/// Reads a batch's end and index; its records are [`Batch::records`], its
/// messages come from [`Batch::messages`].
pub fn read_batch(bytes: &[u8]) -> Result<Batch<'_>, DecodeError> {
    let too_short = || DecodeError::TooShort { kind: KIND, len: bytes.len() };
    let (body, version) = bytes.split_last_chunk::<2>().ok_or_else(too_short)?;
    let got = u16::from_le_bytes(*version);
    if got != BATCH_VERSION {
        return Err(DecodeError::VersionMismatch { kind: KIND, got, expected: BATCH_VERSION });
    }
    let (body, number) = body.split_last_chunk::<8>().ok_or_else(too_short)?;
    let (body, count) = body.split_last_chunk::<4>().ok_or_else(too_short)?;
    let (body, records_at) = body.split_last_chunk::<4>().ok_or_else(too_short)?;
    let (count, records_at) = (u32::from_le_bytes(*count) as usize, u32::from_le_bytes(*records_at) as usize);
    let index_len = count
        .checked_mul(INDEX_ENTRY_LEN)
        .filter(|&len| len <= body.len())
        .ok_or_else(|| malformed(format!("an index of {count} messages in a batch of {} bytes", bytes.len())))?;
    let (records, index) = body.split_at(body.len() - index_len);
    let records = records.get(records_at..).ok_or_else(|| {
        malformed(format!("records said to start at byte {records_at} of a batch of {} bytes", bytes.len()))
    })?;
    let batch = Batch { number: u64::from_le_bytes(*number), records, index };
    batch.check_index()?;
    Ok(batch)
}

fn malformed(reason: String) -> DecodeError {
    DecodeError::Malformed { kind: KIND, reason }
}

/// A batch, borrowed from the bytes it came in.
#[derive(Debug, Clone, Copy)]
pub struct Batch<'a> {
    number: u64,
    records: &'a [u8],
    index: &'a [u8],
}

impl<'a> Batch<'a> {
    /// The batch's number.
    pub fn number(&self) -> u64 {
        self.number
    }

    /// Its records, as an MCAP chunk holds them.
    pub fn records(&self) -> &'a [u8] {
        self.records
    }

    /// Its messages' index entries, in order: each record's offset in
    /// [`Batch::records`], channel and log time.
    pub fn index(&self) -> impl ExactSizeIterator<Item = IndexEntry> + 'a {
        self.index.chunks_exact(INDEX_ENTRY_LEN).map(|entry| IndexEntry::read(entry.try_into().expect("an entry")))
    }

    /// The number of messages.
    pub fn len(&self) -> usize {
        self.index.len() / INDEX_ENTRY_LEN
    }

    /// Whether it holds no message.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Checks what a recorder that writes the records without reading
    /// them relies on: the first record at the start, each after the one
    /// before, none past the records' end. (That each record is where the
    /// index says, of the channel it says, is checked by
    /// [`Batch::messages`], which reads them.)
    fn check_index(&self) -> Result<(), DecodeError> {
        let mut next_at_least = 0u64;
        for (i, entry) in self.index().enumerate() {
            let offset = u64::from(entry.offset);
            let fits = if i == 0 { offset == 0 } else { offset >= next_at_least };
            if !fits || offset + RECORD_HEAD_LEN as u64 > self.records.len() as u64 {
                return Err(malformed(format!(
                    "message {i}'s record at byte {offset} of {} bytes of records",
                    self.records.len()
                )));
            }
            next_at_least = offset + RECORD_HEAD_LEN as u64;
        }
        if self.index.is_empty() != self.records.is_empty() {
            return Err(malformed(format!("{} bytes of records for {} messages", self.records.len(), self.len())));
        }
        Ok(())
    }

    /// The messages, read from their records, in order. After an error it
    /// ends: nothing after a bad record can be trusted.
    pub fn messages(&self) -> BatchMessages<'a> {
        BatchMessages { records: self.records, index: self.index, at: 0 }
    }
}

/// A message of a batch, borrowed from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchMessage<'a> {
    /// The sim time of its moment, ns.
    pub time_ns: u64,
    /// Its channel id.
    pub channel: u16,
    /// The sender's sequence number of it on its channel.
    pub sequence: u32,
    /// Its payload.
    pub payload: &'a [u8],
    /// Its whole record.
    pub record: &'a [u8],
}

/// The messages of a batch (see [`Batch::messages`]).
#[derive(Debug)]
pub struct BatchMessages<'a> {
    records: &'a [u8],
    index: &'a [u8],
    /// The next message's place in the index.
    at: usize,
}

impl<'a> BatchMessages<'a> {
    fn next_message(&mut self) -> Result<Option<BatchMessage<'a>>, DecodeError> {
        let Some(entry) = self.index.get(self.at * INDEX_ENTRY_LEN..(self.at + 1) * INDEX_ENTRY_LEN) else {
            return Ok(None);
        };
        let entry = IndexEntry::read(entry.try_into().expect("an entry"));
        let next_offset = match self.index.get((self.at + 1) * INDEX_ENTRY_LEN..(self.at + 1) * INDEX_ENTRY_LEN + 4) {
            Some(offset) => u32::from_le_bytes(offset.try_into().expect("4 bytes")) as usize,
            None => self.records.len(),
        };
        let at = self.at;
        self.at += 1;
        let record = self
            .records
            .get(entry.offset as usize..next_offset)
            .filter(|record| record.len() >= RECORD_HEAD_LEN)
            .ok_or_else(|| malformed(format!("message {at}'s record cut off")))?;
        let (head, payload) = record.split_at(RECORD_HEAD_LEN);
        if head[0] != MESSAGE_OPCODE {
            return Err(malformed(format!("a record of opcode {:#04x}, not a message", head[0])));
        }
        let record_len = u64::from_le_bytes(head[1..9].try_into().expect("8 bytes"));
        if record_len != (RECORD_FIELDS_LEN + payload.len()) as u64 {
            return Err(malformed(format!(
                "message {at}'s record says {record_len} bytes where the index leaves {}",
                RECORD_FIELDS_LEN + payload.len()
            )));
        }
        let channel = u16::from_le_bytes(head[9..11].try_into().expect("2 bytes"));
        let time_ns = u64::from_le_bytes(head[15..23].try_into().expect("8 bytes"));
        if channel != entry.channel || time_ns != entry.time_ns {
            return Err(malformed(format!("message {at}'s record is not what the index says")));
        }
        let sequence = u32::from_le_bytes(head[11..15].try_into().expect("4 bytes"));
        Ok(Some(BatchMessage { time_ns, channel, sequence, payload, record }))
    }
}

impl<'a> Iterator for BatchMessages<'a> {
    type Item = Result<BatchMessage<'a>, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.next_message() {
            Ok(message) => message.map(Ok),
            Err(e) => {
                self.index = &[];
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(time_ns: u64, channel: u16, sequence: u32, payload: &[u8]) -> (u64, u16, u32, &[u8]) {
        (time_ns, channel, sequence, payload)
    }

    fn read_back(bytes: &[u8]) -> Vec<(u64, u16, u32, &[u8])> {
        let batch = read_batch(bytes).unwrap();
        batch.messages().map(|m| m.unwrap()).map(|m| (m.time_ns, m.channel, m.sequence, m.payload)).collect()
    }

    #[test]
    fn a_batch_reads_back_as_the_moments_it_was_made_of() {
        let first: Vec<ChannelMessage> = vec![(4, 10, vec![0, 1, 0, 0, 7]), (2, 3, vec![])];
        let second: Vec<ChannelMessage> = vec![(4, 11, vec![9; 3])];
        let bytes = encode_batch(41, &[(12_345_000_000, &first), (12_350_000_000, &[]), (12_355_000_000, &second)]);
        assert_eq!(read_batch(&bytes).unwrap().number(), 41);
        assert_eq!(
            read_back(&bytes),
            [
                message(12_345_000_000, 4, 10, &[0, 1, 0, 0, 7]),
                message(12_345_000_000, 2, 3, &[]),
                message(12_355_000_000, 4, 11, &[9; 3]),
            ],
            "each message with its moment's time; a moment without messages adds none"
        );
        let batch = read_batch(&bytes).unwrap();
        let index: Vec<IndexEntry> = batch.index().collect();
        let offsets: Vec<u32> = index.iter().map(|e| e.offset).collect();
        assert_eq!(offsets, [0, record_len(5) as u32, (record_len(5) + record_len(0)) as u32]);
        assert_eq!(batch.records().len(), record_len(5) + record_len(0) + record_len(3));
        assert_eq!(bytes.len(), message_len(5) + message_len(0) + message_len(3) + BATCH_END_LEN);
        assert!(read_batch(&encode_batch(0, &[])).unwrap().is_empty(), "a batch of no moment");
    }

    #[test]
    fn each_message_is_an_mcap_message_record_from_the_batch_s_first_byte() {
        let bytes = encode_batch(0, &[(7_000_000_005, &[(9, 77, vec![1, 2, 3])])]);
        let record = &bytes[..record_len(3)];
        assert_eq!(record[0], 0x05, "opcode of a Message");
        assert_eq!(u64::from_le_bytes(record[1..9].try_into().unwrap()), 2 + 4 + 8 + 8 + 3, "content length");
        assert_eq!(&record[9..11], &9u16.to_le_bytes(), "channel: the world's number of the topic");
        assert_eq!(&record[11..15], &77u32.to_le_bytes(), "sequence: the sender's");
        assert_eq!(&record[15..23], &7_000_000_005u64.to_le_bytes(), "log time");
        assert_eq!(&record[23..31], &7_000_000_005u64.to_le_bytes(), "publish time");
        assert_eq!(&record[31..], &[1, 2, 3]);
        assert_eq!(read_batch(&bytes).unwrap().records(), record);
    }

    #[test]
    fn bytes_before_the_records_are_skipped() {
        let mut bytes = vec![0xee; 100];
        let index = [IndexEntry { offset: 0, channel: 3, time_ns: 9 }];
        write_record_head(3, 1, 9, 2, |piece| bytes.extend_from_slice(piece));
        bytes.extend_from_slice(&[4, 5]);
        write_batch_end(&index, 100, 6, |piece| bytes.extend_from_slice(piece));
        let batch = read_batch(&bytes).unwrap();
        assert_eq!(batch.records(), &bytes[100..100 + record_len(2)]);
        assert_eq!(read_back(&bytes), [message(9, 3, 1, &[4, 5])]);
        let mut past = bytes.clone();
        let at = past.len() - BATCH_END_LEN;
        past[at..at + 4].copy_from_slice(&1000u32.to_le_bytes());
        assert!(matches!(read_batch(&past), Err(DecodeError::Malformed { .. })), "records past the index");
    }

    #[test]
    fn a_batch_numbered_when_sent_reads_its_number() {
        let mut bytes = encode_batch(0, &[(5, &[(1, 0, vec![1, 2])])]);
        set_batch_number(&mut bytes, 9_000_000_001);
        assert_eq!(read_batch(&bytes).unwrap().number(), 9_000_000_001);
        assert_eq!(read_back(&bytes), [message(5, 1, 0, &[1, 2])]);
    }

    #[test]
    fn a_cut_or_foreign_batch_is_refused_not_misread() {
        let two: Vec<ChannelMessage> = vec![(3, 0, vec![9; 40]), (4, 0, vec![8; 8])];
        let bytes = encode_batch(7, &[(5, &two)]);
        let end = bytes.len() - BATCH_END_LEN;
        // Cut at its end: the version is gone.
        for cut in [bytes.len() - 1, bytes.len() - 9] {
            assert!(read_batch(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut other = bytes.clone();
        let last = other.len() - 1;
        other[last] ^= 0xff;
        assert!(matches!(read_batch(&other), Err(DecodeError::VersionMismatch { .. })));
        assert!(matches!(read_batch(&[1]), Err(DecodeError::TooShort { .. })));
        let mut version_4 = bytes.clone();
        version_4[last - 1..].copy_from_slice(&4u16.to_le_bytes());
        assert!(
            matches!(read_batch(&version_4), Err(DecodeError::VersionMismatch { got: 4, expected: 5, .. })),
            "a batch of the layout with keys"
        );

        // More messages than the bytes hold.
        let mut more = bytes.clone();
        more[end + 4..end + 8].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(read_batch(&more), Err(DecodeError::Malformed { .. })));
        // An index whose first record is not at the start, or whose
        // records go back or past the end.
        let second_entry = end - INDEX_ENTRY_LEN;
        for offset in [1u32, 0, u32::MAX - 8] {
            let mut bad = bytes.clone();
            let at = if offset == 1 { second_entry - INDEX_ENTRY_LEN } else { second_entry };
            bad[at..at + 4].copy_from_slice(&offset.to_le_bytes());
            assert!(matches!(read_batch(&bad), Err(DecodeError::Malformed { .. })), "offset {offset}");
        }
        // Records that are not what the index says: read, not trusted.
        let mut long = bytes.clone();
        long[1..9].copy_from_slice(&u64::MAX.to_le_bytes());
        let read: Vec<_> = read_batch(&long).unwrap().messages().collect();
        assert!(matches!(read[..], [Err(DecodeError::Malformed { .. })]), "{read:?}");
        let mut other_channel = bytes.clone();
        other_channel[9..11].copy_from_slice(&9u16.to_le_bytes());
        let read: Vec<_> = read_batch(&other_channel).unwrap().messages().collect();
        assert!(matches!(read[..], [Err(DecodeError::Malformed { .. })]), "{read:?}");
        let mut not_a_message = bytes.clone();
        not_a_message[0] = 0x06;
        let read: Vec<_> = read_batch(&not_a_message).unwrap().messages().collect();
        assert!(matches!(read[..], [Err(DecodeError::Malformed { .. })]), "{read:?}");
    }
}
