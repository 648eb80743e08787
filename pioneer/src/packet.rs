//! ARCOS packet framing, as ARIA's `ArRobotPacket` writes and reads it:
//!
//! ```text
//! 0xFA 0xFB  count  id  data…  checksum(hi, lo)
//! ```
//!
//! `count` is the number of bytes after it (id, data and the two checksum
//! bytes), so at most 252 bytes of data. The checksum adds the id and data
//! as big-endian 16-bit words (an odd last byte is XORed in) modulo 2¹⁶ and
//! is sent high byte first; every integer of the data is little-endian.

/// The two bytes every packet starts with.
pub const HEADER: [u8; 2] = [0xFA, 0xFB];
/// The most data bytes a packet can carry (count ≤ 255).
pub const MAX_DATA: usize = 252;

/// A packet's id and data, checksum verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet {
    /// Command number (client → robot) or packet type (robot → client).
    pub id: u8,
    /// The bytes between id and checksum.
    pub data: Vec<u8>,
}

/// The checksum of a packet's id and data.
pub fn checksum(id_and_data: &[u8]) -> u16 {
    let mut sum: u16 = 0;
    let mut pairs = id_and_data.chunks_exact(2);
    for pair in &mut pairs {
        sum = sum.wrapping_add(u16::from_be_bytes([pair[0], pair[1]]));
    }
    if let [last] = pairs.remainder() {
        sum ^= u16::from(*last);
    }
    sum
}

/// Builds one packet's bytes, integers little-endian as ARCOS sends them.
#[derive(Debug, Clone)]
pub struct PacketWriter {
    bytes: Vec<u8>,
}

impl PacketWriter {
    /// A packet of type `id`.
    pub fn new(id: u8) -> PacketWriter {
        let mut bytes = Vec::with_capacity(64);
        bytes.extend_from_slice(&HEADER);
        bytes.push(0); // count, set by `finish`
        bytes.push(id);
        PacketWriter { bytes }
    }

    /// Appends an unsigned byte.
    pub fn u8(&mut self, v: u8) -> &mut Self {
        self.bytes.push(v);
        self
    }

    /// Appends a signed byte.
    pub fn i8(&mut self, v: i8) -> &mut Self {
        self.bytes.push(v as u8);
        self
    }

    /// Appends a 16-bit unsigned integer.
    pub fn u16(&mut self, v: u16) -> &mut Self {
        self.bytes.extend_from_slice(&v.to_le_bytes());
        self
    }

    /// Appends a 16-bit signed integer.
    pub fn i16(&mut self, v: i16) -> &mut Self {
        self.bytes.extend_from_slice(&v.to_le_bytes());
        self
    }

    /// Appends a 32-bit unsigned integer.
    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.bytes.extend_from_slice(&v.to_le_bytes());
        self
    }

    /// Appends a 32-bit signed integer.
    pub fn i32(&mut self, v: i32) -> &mut Self {
        self.bytes.extend_from_slice(&v.to_le_bytes());
        self
    }

    /// Appends a NUL-terminated string (ARIA's `strToBuf`).
    pub fn str(&mut self, s: &str) -> &mut Self {
        self.bytes.extend_from_slice(s.as_bytes());
        self.bytes.push(0);
        self
    }

    /// Data bytes written so far.
    pub fn data_len(&self) -> usize {
        self.bytes.len() - 4
    }

    /// The finished packet: count and checksum filled in. Data beyond
    /// [`MAX_DATA`] is a bug of the caller.
    pub fn finish(&mut self) -> Vec<u8> {
        assert!(self.data_len() <= MAX_DATA, "a packet of {} data bytes cannot be framed", self.data_len());
        self.bytes[2] = (self.bytes.len() - 3 + 2) as u8;
        let sum = checksum(&self.bytes[3..]);
        self.bytes.extend_from_slice(&sum.to_be_bytes());
        std::mem::take(&mut self.bytes)
    }
}

/// What was wrong with bytes that did not make a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Malformed {
    /// Bytes before a header, dropped (`n` of them).
    Garbage(usize),
    /// A count below 3 (no room for id and checksum).
    BadLength(u8),
    /// The checksum did not match; the packet is dropped.
    BadChecksum {
        /// Its id.
        id: u8,
    },
}

impl std::fmt::Display for Malformed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Malformed::Garbage(n) => write!(f, "{n} byte(s) outside any packet"),
            Malformed::BadLength(n) => write!(f, "a packet's byte count is {n} (at least 3)"),
            Malformed::BadChecksum { id } => write!(f, "packet {id} has a bad checksum"),
        }
    }
}

/// Splits a byte stream into packets, resynchronising on the next header
/// after anything malformed.
#[derive(Debug, Default)]
pub struct PacketReader {
    buffer: Vec<u8>,
}

impl PacketReader {
    /// Appends received bytes.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buffer.extend_from_slice(bytes);
    }

    /// The next packet or malformed run, `None` until more bytes arrive.
    pub fn next_packet(&mut self) -> Option<Result<Packet, Malformed>> {
        let start = self.buffer.windows(2).position(|w| w == HEADER);
        match start {
            Some(0) => {}
            Some(n) => {
                self.buffer.drain(..n);
                return Some(Err(Malformed::Garbage(n)));
            }
            None => {
                // Keep a last 0xFA: it may start a header.
                let keep = usize::from(self.buffer.last() == Some(&HEADER[0]));
                let n = self.buffer.len() - keep;
                if n == 0 {
                    return None;
                }
                self.buffer.drain(..n);
                return Some(Err(Malformed::Garbage(n)));
            }
        }
        let count = *self.buffer.get(2)?;
        if count < 3 {
            self.buffer.drain(..3);
            return Some(Err(Malformed::BadLength(count)));
        }
        let total = 3 + usize::from(count);
        if self.buffer.len() < total {
            return None;
        }
        let body = &self.buffer[3..total - 2];
        let sent = u16::from_be_bytes([self.buffer[total - 2], self.buffer[total - 1]]);
        let result = if checksum(body) == sent {
            Ok(Packet { id: body[0], data: body[1..].to_vec() })
        } else {
            Err(Malformed::BadChecksum { id: body[0] })
        };
        self.buffer.drain(..total);
        Some(result)
    }
}

/// Reads a packet's data as ARIA's `bufTo…` calls do: little-endian, and
/// zero past the end (ARIA reads zeros from a short packet too).
#[derive(Debug, Clone)]
pub struct DataReader<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> DataReader<'a> {
    /// Reads `data` from its start.
    pub fn new(data: &'a [u8]) -> DataReader<'a> {
        DataReader { data, at: 0 }
    }

    fn take<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0; N];
        for byte in &mut out {
            *byte = self.data.get(self.at).copied().unwrap_or(0);
            self.at += 1;
        }
        out
    }

    /// Bytes not yet read.
    pub fn remaining(&self) -> usize {
        self.data.len().saturating_sub(self.at)
    }

    /// An unsigned byte.
    pub fn u8(&mut self) -> u8 {
        self.take::<1>()[0]
    }

    /// A signed byte.
    pub fn i8(&mut self) -> i8 {
        self.u8() as i8
    }

    /// A 16-bit unsigned integer.
    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.take())
    }

    /// A 16-bit signed integer.
    pub fn i16(&mut self) -> i16 {
        i16::from_le_bytes(self.take())
    }

    /// A 32-bit unsigned integer.
    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }

    /// A 32-bit signed integer.
    pub fn i32(&mut self) -> i32 {
        i32::from_le_bytes(self.take())
    }

    /// A NUL-terminated string (to the end if there is no NUL).
    pub fn str(&mut self) -> String {
        let rest = &self.data[self.at.min(self.data.len())..];
        let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
        self.at += end + 1;
        String::from_utf8_lossy(&rest[..end]).into_owned()
    }

    /// A string of `len` bytes (a length-prefixed string's body).
    pub fn bytes_str(&mut self, len: usize) -> String {
        let rest = &self.data[self.at.min(self.data.len())..];
        let body = &rest[..len.min(rest.len())];
        self.at += len;
        String::from_utf8_lossy(body).trim_end_matches('\0').to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sync0_is_framed_as_aria_sends_it() {
        // ARIA's SYNC0: FA FB 03 00 00 00.
        assert_eq!(PacketWriter::new(0).finish(), [0xFA, 0xFB, 3, 0, 0, 0]);
        // OPEN: FA FB 03 01 00 01.
        assert_eq!(PacketWriter::new(1).finish(), [0xFA, 0xFB, 3, 1, 0, 1]);
    }

    #[test]
    fn the_checksum_adds_big_endian_words_and_xors_an_odd_byte() {
        // VEL 300: id 11, POSINT 0x3B, 300 = 0x012C little-endian.
        let bytes = PacketWriter::new(11).u8(0x3B).u16(300).finish();
        assert_eq!(bytes[..7], [0xFA, 0xFB, 6, 11, 0x3B, 0x2C, 0x01]);
        // 0x0B3B + 0x2C01 = 0x373C, high byte first.
        assert_eq!(bytes[7..], [0x37, 0x3C]);
        // An odd count: OPEN's lone id byte is XORed into 0.
    }

    #[test]
    fn the_reader_splits_packets_across_reads_and_refuses_bad_ones() {
        let good = PacketWriter::new(11).u8(0x3B).u16(300).finish();
        let mut bad = PacketWriter::new(21).u8(0x3B).u16(10).finish();
        *bad.last_mut().unwrap() ^= 0xFF;
        let mut stream = vec![0x00, 0x42];
        stream.extend(&good);
        stream.extend(&bad);
        stream.extend([0xFA, 0xFB, 0x01]);
        stream.extend(&good);
        let mut reader = PacketReader::default();
        let mut seen = Vec::new();
        // One byte at a time: a TCP read may end anywhere.
        for byte in stream {
            reader.push(&[byte]);
            while let Some(item) = reader.next_packet() {
                seen.push(item);
            }
        }
        let vel = Ok(Packet { id: 11, data: vec![0x3B, 0x2C, 0x01] });
        assert_eq!(
            seen,
            [
                Err(Malformed::Garbage(1)),
                Err(Malformed::Garbage(1)),
                vel.clone(),
                Err(Malformed::BadChecksum { id: 21 }),
                Err(Malformed::BadLength(1)),
                vel
            ]
        );
    }

    #[test]
    fn data_reads_little_endian_and_zero_past_the_end() {
        let mut r = DataReader::new(&[0x2C, 0x01, 0xFF, b'h', b'i', 0, 7]);
        assert_eq!((r.u16(), r.i8(), r.str(), r.u8(), r.u16()), (300, -1, "hi".to_string(), 7, 0));
    }
}
