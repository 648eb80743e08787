//! Reading CDR (XCDR1, as ROS 2 writes it) through serde, with every length
//! checked against the bytes that are left before anything is allocated.
//!
//! The `cdr` crate's reader allocates a string's bytes as its length field
//! says before it checks that many are there: a `cmd_vel` whose frame id
//! claims 4 GB made a node allocate 4 GB (found by fuzzing, FUZZING.md).
//! Writing stays with the `cdr` crate.
//!
//! The rules: a 4-byte encapsulation header (`00 00` big-endian, `00 01`
//! little-endian, then two option bytes); each primitive aligned to its size
//! from the end of the header; strings and sequences a `u32` length (a
//! string's counting its terminating NUL) after 4-byte alignment; fixed
//! arrays and structs their elements in order.

use serde::de::{self, DeserializeOwned, DeserializeSeed, IntoDeserializer, SeqAccess, Visitor};

/// What went wrong reading a payload.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodeError(pub String);

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DecodeError {}

impl de::Error for DecodeError {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        DecodeError(msg.to_string())
    }
}

/// Decodes the fields of `T` from the start of a payload (header included);
/// returns them and how many bytes of the payload they took.
pub fn decode_prefix<T: DeserializeOwned>(payload: &[u8]) -> Result<(T, usize), DecodeError> {
    let [_, representation, _, _] = payload
        .get(..4)
        .and_then(|h| <[u8; 4]>::try_from(h).ok())
        .ok_or_else(|| DecodeError("shorter than the 4-byte encapsulation header".into()))?;
    let little = match (payload[0], representation) {
        (0, 0) => false,
        (0, 1) => true,
        (a, b) => return Err(DecodeError(format!("encapsulation {a:#04x} {b:#04x} is not plain CDR"))),
    };
    let mut reader = Reader { body: &payload[4..], pos: 0, little };
    let value = T::deserialize(&mut reader)?;
    Ok((value, 4 + reader.pos))
}

struct Reader<'a> {
    body: &'a [u8],
    pos: usize,
    little: bool,
}

impl<'a> Reader<'a> {
    fn align(&mut self, to: usize) -> Result<(), DecodeError> {
        let padding = (to - self.pos % to) % to;
        self.take(padding).map(|_| ())
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self.pos.checked_add(n).filter(|&end| end <= self.body.len()).ok_or_else(|| {
            DecodeError(format!("wants {n} bytes at offset {}, {} are left", self.pos, self.body.len() - self.pos))
        })?;
        let bytes = &self.body[self.pos..end];
        self.pos = end;
        Ok(bytes)
    }

    fn fixed<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        self.align(N)?;
        let mut bytes: [u8; N] = self.take(N)?.try_into().expect("took N bytes");
        if self.little != cfg!(target_endian = "little") {
            bytes.reverse();
        }
        Ok(bytes)
    }

    /// A sequence's or string's length, checked against what is left (each
    /// element takes at least `min_element_bytes`).
    fn length(&mut self, min_element_bytes: usize) -> Result<usize, DecodeError> {
        let n = u32::from_ne_bytes(self.fixed::<4>()?) as usize;
        let left = self.body.len() - self.pos;
        if n.saturating_mul(min_element_bytes) > left {
            return Err(DecodeError(format!("a length of {n} at offset {}, with {left} bytes left", self.pos - 4)));
        }
        Ok(n)
    }

    fn string(&mut self) -> Result<&'a str, DecodeError> {
        let n = self.length(1)?;
        let bytes = self.take(n)?;
        let text = bytes.strip_suffix(&[0]).unwrap_or(bytes);
        std::str::from_utf8(text).map_err(|e| DecodeError(format!("a string that is not UTF-8: {e}")))
    }
}

macro_rules! primitive {
    ($method:ident, $visit:ident, $ty:ty, $n:literal) => {
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DecodeError> {
            visitor.$visit(<$ty>::from_ne_bytes(self.fixed::<$n>()?))
        }
    };
}

impl<'de> de::Deserializer<'de> for &mut Reader<'de> {
    type Error = DecodeError;

    primitive!(deserialize_i8, visit_i8, i8, 1);
    primitive!(deserialize_u8, visit_u8, u8, 1);
    primitive!(deserialize_i16, visit_i16, i16, 2);
    primitive!(deserialize_u16, visit_u16, u16, 2);
    primitive!(deserialize_i32, visit_i32, i32, 4);
    primitive!(deserialize_u32, visit_u32, u32, 4);
    primitive!(deserialize_i64, visit_i64, i64, 8);
    primitive!(deserialize_u64, visit_u64, u64, 8);
    primitive!(deserialize_f32, visit_f32, f32, 4);
    primitive!(deserialize_f64, visit_f64, f64, 8);

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DecodeError> {
        match self.take(1)?[0] {
            0 => visitor.visit_bool(false),
            1 => visitor.visit_bool(true),
            other => Err(DecodeError(format!("a bool of {other}"))),
        }
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DecodeError> {
        visitor.visit_borrowed_str(self.string()?)
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DecodeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DecodeError> {
        let n = self.length(1)?;
        visitor.visit_borrowed_bytes(self.take(n)?)
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DecodeError> {
        self.deserialize_bytes(visitor)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DecodeError> {
        let n = self.length(1)?;
        visitor.visit_seq(Elements { reader: self, left: n })
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, DecodeError> {
        visitor.visit_seq(Elements { reader: self, left: len })
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, DecodeError> {
        self.deserialize_tuple(len, visitor)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DecodeError> {
        self.deserialize_tuple(fields.len(), visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DecodeError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DecodeError> {
        visitor.visit_unit()
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DecodeError> {
        visitor.visit_unit()
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DecodeError> {
        // As the `cdr` crate writes one: the variant's index as a u32.
        let index = u32::from_ne_bytes(self.fixed::<4>()?);
        visitor.visit_enum(index.into_deserializer())
    }

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, DecodeError> {
        Err(DecodeError("CDR is not self-describing".into()))
    }

    fn deserialize_char<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, DecodeError> {
        Err(DecodeError("no ROS message has a char".into()))
    }

    fn deserialize_option<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, DecodeError> {
        Err(DecodeError("no ROS message has an optional field".into()))
    }

    fn deserialize_map<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, DecodeError> {
        Err(DecodeError("no ROS message has a map".into()))
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, DecodeError> {
        Err(DecodeError("CDR has no field names".into()))
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, DecodeError> {
        Err(DecodeError("CDR cannot skip a value of unknown type".into()))
    }

    fn is_human_readable(&self) -> bool {
        false
    }
}

struct Elements<'r, 'de> {
    reader: &'r mut Reader<'de>,
    left: usize,
}

impl<'de> SeqAccess<'de> for Elements<'_, 'de> {
    type Error = DecodeError;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, DecodeError> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        seed.deserialize(&mut *self.reader).map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.left)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Sample {
        flag: bool,
        stamp: (i32, u32),
        name: String,
        x: f64,
        values: Vec<f32>,
        bytes: Vec<u8>,
        names: Vec<String>,
        fixed: [f64; 3],
    }

    fn sample() -> Sample {
        Sample {
            flag: true,
            stamp: (-3, 7),
            name: "base_link".into(),
            x: 1.5,
            values: vec![1.0, f32::NAN, -2.0],
            bytes: vec![1, 2, 3],
            names: vec!["a".into(), String::new()],
            fixed: [0.5, 1.0, 2.0],
        }
    }

    fn same(a: &Sample, b: &Sample) -> bool {
        format!("{a:?}") == format!("{b:?}")
    }

    #[test]
    fn reads_what_the_cdr_crate_writes_in_both_byte_orders() {
        let le = cdr::serialize::<_, _, cdr::CdrLe>(&sample(), cdr::Infinite).unwrap();
        let be = cdr::serialize::<_, _, cdr::CdrBe>(&sample(), cdr::Infinite).unwrap();
        let (from_le, took) = decode_prefix::<Sample>(&le).unwrap();
        assert!(same(&from_le, &sample()) && took == le.len(), "{from_le:?}");
        let (from_be, _) = decode_prefix::<Sample>(&be).unwrap();
        assert!(same(&from_be, &sample()), "{from_be:?}");
    }

    #[test]
    fn a_length_beyond_the_payload_is_refused_before_anything_is_allocated() {
        // A string claiming 0xFFFFFFFD bytes: the fuzzer's find.
        let mut payload = vec![0, 1, 0, 0];
        payload.extend(0xFFFF_FFFDu32.to_le_bytes());
        payload.extend(b"abc");
        let e = decode_prefix::<String>(&payload).unwrap_err();
        assert!(e.0.contains("a length of 4294967293"), "{e}");
        // A sequence of a billion f64
        let mut payload = vec![0, 1, 0, 0];
        payload.extend(1_000_000_000u32.to_le_bytes());
        assert!(decode_prefix::<Vec<f64>>(&payload).is_err());
    }

    #[test]
    fn short_bad_and_foreign_payloads_are_refused() {
        assert!(decode_prefix::<u32>(&[0, 1, 0]).is_err());
        assert!(decode_prefix::<u32>(&[0, 1, 0, 0, 1, 2]).is_err());
        assert!(decode_prefix::<bool>(&[0, 1, 0, 0, 7]).is_err());
        assert!(decode_prefix::<u32>(&[0, 2, 0, 0, 1, 0, 0, 0]).is_err(), "PL_CDR is not read");
        assert!(decode_prefix::<String>(&[0, 1, 0, 0, 2, 0, 0, 0, 0xff, 0]).is_err(), "not UTF-8");
    }
}
