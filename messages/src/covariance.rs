//! A 6×6 row-major covariance matrix (`float64[36]`), which serde's derive
//! cannot handle because it only knows arrays up to 32 elements.

use serde::de::{Error as _, SeqAccess, Visitor};
use serde::ser::SerializeTuple;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// `float64[36]`: a fixed array, encoded without a length prefix.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Covariance(pub [f64; 36]);

impl Default for Covariance {
    fn default() -> Self {
        Covariance([0.0; 36])
    }
}

impl Serialize for Covariance {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut tuple = serializer.serialize_tuple(36)?;
        for value in &self.0 {
            tuple.serialize_element(value)?;
        }
        tuple.end()
    }
}

impl<'de> Deserialize<'de> for Covariance {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ArrayVisitor;
        impl<'de> Visitor<'de> for ArrayVisitor {
            type Value = Covariance;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("36 float64 values")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Covariance, A::Error> {
                let mut out = [0.0; 36];
                for (i, slot) in out.iter_mut().enumerate() {
                    *slot = seq.next_element()?.ok_or_else(|| A::Error::invalid_length(i, &self))?;
                }
                Ok(Covariance(out))
            }
        }
        deserializer.deserialize_tuple(36, ArrayVisitor)
    }
}
