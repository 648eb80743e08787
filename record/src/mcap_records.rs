//! MCAP's records as bytes: the pieces [`crate::mcap_file`] writes a file
//! of.
//!
//! The format is MCAP's, version 0 (<https://mcap.dev/spec>): every record
//! is an opcode (u8), its content's length (u64) and its content, integers
//! little-endian, strings and byte arrays prefixed by their length (u32),
//! maps by their length in bytes (u32).

use std::io;

/// The magic bytes at both ends of a file.
pub(crate) const MAGIC: &[u8; 8] = b"\x89MCAP0\r\n";

/// The record opcodes this writer uses.
pub(crate) mod opcode {
    pub const HEADER: u8 = 0x01;
    pub const FOOTER: u8 = 0x02;
    pub const SCHEMA: u8 = 0x03;
    pub const CHANNEL: u8 = 0x04;
    pub const MESSAGE: u8 = 0x05;
    pub const CHUNK: u8 = 0x06;
    pub const MESSAGE_INDEX: u8 = 0x07;
    pub const CHUNK_INDEX: u8 = 0x08;
    pub const ATTACHMENT: u8 = 0x09;
    pub const ATTACHMENT_INDEX: u8 = 0x0A;
    pub const STATISTICS: u8 = 0x0B;
    pub const METADATA: u8 = 0x0C;
    pub const METADATA_INDEX: u8 = 0x0D;
    pub const SUMMARY_OFFSET: u8 = 0x0E;
    pub const DATA_END: u8 = 0x0F;
    /// A private record (MCAP gives opcodes 0x80 and up to private
    /// records, which readers skip) of nothing but zeros: Flotilla's
    /// padding before a chunk whose records must start on a block
    /// boundary.
    pub const PADDING: u8 = 0x80;
}

/// A message record's fields before its data: channel (u16), sequence
/// (u32), log and publish time (u64 each), bytes.
pub(crate) const MESSAGE_FIELDS: usize = 2 + 4 + 8 + 8;

/// A message record up to its data: opcode, length, channel, sequence,
/// log and publish time, for data of `data_len` bytes.
pub(crate) fn message_head(
    channel_id: u16,
    sequence: u32,
    log_time: u64,
    publish_time: u64,
    data_len: usize,
) -> [u8; 1 + 8 + MESSAGE_FIELDS] {
    let mut head = [0; 1 + 8 + MESSAGE_FIELDS];
    head[0] = opcode::MESSAGE;
    head[1..9].copy_from_slice(&((MESSAGE_FIELDS + data_len) as u64).to_le_bytes());
    head[9..11].copy_from_slice(&channel_id.to_le_bytes());
    head[11..15].copy_from_slice(&sequence.to_le_bytes());
    head[15..23].copy_from_slice(&log_time.to_le_bytes());
    head[23..31].copy_from_slice(&publish_time.to_le_bytes());
    head
}

/// Records appended to a byte vector, each one's length filled in when it
/// is finished.
pub(crate) struct Records(pub(crate) Vec<u8>);

impl Records {
    /// Starts a record; returns where its length goes.
    pub(crate) fn open(&mut self, opcode: u8) -> usize {
        self.0.push(opcode);
        self.0.extend_from_slice(&[0; 8]);
        self.0.len() - 8
    }

    /// Writes the length of the record opened at `length_at`.
    pub(crate) fn close(&mut self, length_at: usize) {
        let length = (self.0.len() - length_at - 8) as u64;
        self.0[length_at..length_at + 8].copy_from_slice(&length.to_le_bytes());
    }

    pub(crate) fn u16(&mut self, value: u16) {
        self.0.extend_from_slice(&value.to_le_bytes());
    }

    pub(crate) fn u32(&mut self, value: u32) {
        self.0.extend_from_slice(&value.to_le_bytes());
    }

    pub(crate) fn u64(&mut self, value: u64) {
        self.0.extend_from_slice(&value.to_le_bytes());
    }

    /// A string or byte array: its length (u32), then its bytes.
    pub(crate) fn bytes(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.u32(u32::try_from(bytes.len()).map_err(|_| too_large("a string or byte array", bytes.len()))?);
        self.0.extend_from_slice(bytes);
        Ok(())
    }

    /// A map or an array: its length in bytes (u32), then what `entries`
    /// appends.
    pub(crate) fn sized(&mut self, entries: impl FnOnce(&mut Self) -> io::Result<()>) -> io::Result<()> {
        let at = self.0.len();
        self.u32(0);
        entries(self)?;
        let length = self.0.len() - at - 4;
        let length = u32::try_from(length).map_err(|_| too_large("a map or array", length))?;
        self.0[at..at + 4].copy_from_slice(&length.to_le_bytes());
        Ok(())
    }
}

/// A chunk record up to its body: of messages at `times`, its records
/// `uncompressed_len` bytes with CRC-32 `crc`, compressed with
/// `compression` to `body_len` bytes.
pub(crate) fn chunk_head(
    (start_time, end_time): (u64, u64),
    uncompressed_len: usize,
    crc: u32,
    compression: &str,
    body_len: usize,
) -> io::Result<Records> {
    let mut head = Records(Vec::with_capacity(64));
    head.0.push(opcode::CHUNK);
    let content = 8 + 8 + 8 + 4 + 4 + compression.len() + 8 + body_len;
    head.u64(content as u64);
    head.u64(start_time);
    head.u64(end_time);
    head.u64(uncompressed_len as u64);
    head.u32(crc);
    head.bytes(compression.as_bytes())?;
    head.u64(body_len as u64);
    Ok(head)
}

pub(crate) fn too_large(what: &str, bytes: usize) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, format!("{what} of {bytes} bytes is too large for MCAP"))
}

/// Bytes of the shortest padding record: its opcode and length.
pub(crate) const PADDING_HEAD_LEN: usize = 1 + 8;

/// A stored chunk's header: opcode, length, start and end time,
/// uncompressed size, CRC, compression (the empty string) and compressed
/// size, bytes.
pub(crate) const STORED_HEAD_LEN: usize = 1 + 8 + 8 + 8 + 8 + 4 + 4 + 8;
