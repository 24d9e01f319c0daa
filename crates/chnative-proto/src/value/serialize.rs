//! `serde::Serialize` for [`Value`] and [`ValueRow`] (feature `serde`), so a tool
//! can print rows as JSON.
//!
//! Numbers that fit a serde number are numbers (up to 128 bits; a JSON writer
//! may still print them exactly or not). Int256, UInt256 and Decimal are strings
//! with every digit, as are dates, times, UUIDs, IP addresses and enum labels
//! (their `toString` text). Strings are strings when UTF-8, else byte sequences.
//! Arrays and tuples are sequences, maps and named tuples are maps, a row is a
//! map by column name.

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

use crate::value::{Value, ValueRow};

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Null => s.serialize_none(),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Int8(v) => s.serialize_i8(*v),
            Value::Int16(v) => s.serialize_i16(*v),
            Value::Int32(v) => s.serialize_i32(*v),
            Value::Int64(v) => s.serialize_i64(*v),
            Value::Int128(v) => s.serialize_i128(*v),
            Value::UInt8(v) => s.serialize_u8(*v),
            Value::UInt16(v) => s.serialize_u16(*v),
            Value::UInt32(v) => s.serialize_u32(*v),
            Value::UInt64(v) => s.serialize_u64(*v),
            Value::UInt128(v) => s.serialize_u128(*v),
            Value::Float32(v) | Value::BFloat16(v) => s.serialize_f32(*v),
            Value::Float64(v) => s.serialize_f64(*v),
            // A number, as the server's JSON formats write it (never quoted).
            Value::Interval { value, .. } => s.serialize_i64(*value),
            Value::String(b) | Value::FixedString(b) => match std::str::from_utf8(b) {
                Ok(t) => s.serialize_str(t),
                Err(_) => s.serialize_bytes(b),
            },
            Value::Array(items) | Value::Tuple(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for v in items {
                    seq.serialize_element(v)?;
                }
                seq.end()
            }
            // As the server's JSON formats write a named tuple
            // (output_format_json_named_tuples_as_objects, on by default).
            Value::NamedTuple { names, values } => {
                let mut map = s.serialize_map(Some(values.len()))?;
                for (k, v) in names.iter().zip(values) {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
            Value::Map(pairs) => {
                let mut map = s.serialize_map(Some(pairs.len()))?;
                for (k, v) in pairs {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
            // Exact text: toString without quotes.
            other => s.serialize_str(&other.to_string()),
        }
    }
}

impl Serialize for ValueRow {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.len()))?;
        for (name, v) in self.iter() {
            map.serialize_entry(name, v)?;
        }
        map.end()
    }
}
