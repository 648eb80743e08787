//! CDR `sequence<float32>` copied whole, for the types whose payload is
//! mostly such sequences (a laser scan: a thousand ranges and as many
//! intensities). Through serde each float costs a call and an alignment
//! check: 6 µs to encode a 1081-beam scan and 8.6 µs to decode it, against
//! well under a microsecond for a copy. The bytes are the same either way;
//! the tests in `super::tests` hold the two paths to it.

use serde::de::DeserializeOwned;

use super::CdrError;

/// The size of the encapsulation header that starts every payload, bytes.
const ENCAPSULATION_BYTES: usize = 4;

/// Appends `values` to a payload as a CDR sequence: zero padding up to
/// 4-byte alignment (counted from after the encapsulation header), the
/// element count as a u32, then the floats, all little-endian. None when
/// the count does not fit in a u32.
pub(super) fn push(payload: &mut Vec<u8>, values: &[f32]) -> Option<()> {
    let count = u32::try_from(values.len()).ok()?;
    let misalignment = (payload.len() - ENCAPSULATION_BYTES) % 4;
    payload.resize(payload.len() + (4 - misalignment) % 4, 0);
    payload.extend_from_slice(&count.to_le_bytes());
    let start = payload.len();
    // Sized first and filled by chunks: a loop the compiler turns into a
    // plain copy on little-endian machines.
    payload.resize(start + 4 * values.len(), 0);
    for (bytes, value) in payload[start..].chunks_exact_mut(4).zip(values) {
        bytes.copy_from_slice(&value.to_le_bytes());
    }
    Some(())
}

/// Reads a payload that starts with fields serde decodes (`Head`) and goes
/// on with float sequences, read whole.
pub(super) struct SequenceReader<'a> {
    payload: &'a [u8],
    /// Where the next field starts, bytes from the start of the payload.
    at: usize,
    big_endian: bool,
    type_name: &'static str,
}

impl<'a> SequenceReader<'a> {
    /// Decodes the fields before the sequences and returns them with a
    /// reader placed after them.
    pub(super) fn after_head<Head: DeserializeOwned>(
        payload: &'a [u8],
        type_name: &'static str,
    ) -> Result<(Head, SequenceReader<'a>), CdrError> {
        let (head, at) = super::decode_leading_fields::<Head>(payload, type_name)?;
        // The second byte of the header says the endianness: even for
        // big-endian representations (CDR_BE, PL_CDR_BE), odd for
        // little-endian ones; serde has already rejected any other header.
        let big_endian = payload[1].is_multiple_of(2);
        Ok((head, SequenceReader { payload, at, big_endian, type_name }))
    }

    /// Reads the next field, a `sequence<float32>`.
    pub(super) fn f32_sequence(&mut self) -> Result<Vec<f32>, CdrError> {
        let fail = |reason: String| CdrError { type_name: self.type_name, len: self.payload.len(), reason };
        let misalignment = (self.at - ENCAPSULATION_BYTES) % 4;
        let start = self.at + (4 - misalignment) % 4;
        let count_bytes = self
            .payload
            .get(start..start + 4)
            .ok_or_else(|| fail(format!("sequence count at byte {start} past the end")))?;
        let count = self.u32([count_bytes[0], count_bytes[1], count_bytes[2], count_bytes[3]]) as usize;
        // Checked before allocating: a garbage count cannot claim more
        // floats than the payload holds.
        let floats = self
            .payload
            .get(start + 4..)
            .and_then(|rest| rest.get(..count.checked_mul(4)?))
            .ok_or_else(|| fail(format!("sequence of {count} floats at byte {start} past the end")))?;
        self.at = start + 4 + floats.len();
        // Zeroed first and filled in place: a loop the compiler turns into
        // a plain copy on little-endian machines.
        let mut values = vec![0.0; count];
        if self.big_endian {
            fill(&mut values, floats, f32::from_be_bytes);
        } else {
            fill(&mut values, floats, f32::from_le_bytes);
        }
        Ok(values)
    }

    fn u32(&self, bytes: [u8; 4]) -> u32 {
        if self.big_endian {
            u32::from_be_bytes(bytes)
        } else {
            u32::from_le_bytes(bytes)
        }
    }
}

/// Decodes `bytes` into `values`, four bytes to a float.
#[inline]
fn fill(values: &mut [f32], bytes: &[u8], from_bytes: impl Fn([u8; 4]) -> f32) {
    for (value, b) in values.iter_mut().zip(bytes.chunks_exact(4)) {
        *value = from_bytes([b[0], b[1], b[2], b[3]]);
    }
}
