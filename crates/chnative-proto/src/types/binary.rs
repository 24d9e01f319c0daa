//! The binary type encoding (`DataTypesBinaryEncoding.cpp`) that Dynamic's shared variant and
//! JSON's shared data put in front of each value.

use super::{DataType, IntervalKind, JsonType};
use crate::error::{ProtoError, Result};

/// `Dynamic`'s default `max_types`, and JSON's default `max_dynamic_types` / `max_dynamic_paths`:
/// the binary encoding always carries them, the type names only when they differ.
const DEFAULT_MAX_DYNAMIC_TYPES: u64 = 32;
const DEFAULT_MAX_DYNAMIC_PATHS: u64 = 1024;
/// Bound on element counts inside a binary type encoding (the server's own limit).
const MAX_BINARY_TYPE_ELEMENTS: u64 = 1_000_000;
/// Bound on the nesting of a binary type encoding.
const MAX_BINARY_TYPE_DEPTH: usize = 64;

impl DataType {
    /// Decodes a binary type encoding (`DataTypesBinaryEncoding.cpp`): the form the
    /// shared variant of `Dynamic` and the shared data of `JSON` prefix each value with.
    ///
    /// Types whose encoding carries aggregate-function parameters (AggregateFunction,
    /// SimpleAggregateFunction), and Set/Function, are a [`ProtoError::Type`]: their
    /// length cannot be known without the server's field codec.
    pub fn decode_binary(r: &mut crate::wire::Reader<'_>) -> Result<DataType> {
        decode_binary_at(r, 0)
    }
}

fn decode_binary_at(r: &mut crate::wire::Reader<'_>, depth: usize) -> Result<DataType> {
    use DataType as T;
    if depth > MAX_BINARY_TYPE_DEPTH {
        return Err(ProtoError::violation("binary type encoding nests too deeply"));
    }
    let count = |r: &mut crate::wire::Reader<'_>| r.varuint_bounded("binary type elements", MAX_BINARY_TYPE_ELEMENTS);
    let string = |r: &mut crate::wire::Reader<'_>| r.string_owned(1 << 20);
    let sub = |r: &mut crate::wire::Reader<'_>| decode_binary_at(r, depth + 1);
    let code = r.u8()?;
    Ok(match code {
        0x00 => T::Nothing,
        0x01 => T::UInt8,
        0x02 => T::UInt16,
        0x03 => T::UInt32,
        0x04 => T::UInt64,
        0x05 => T::UInt128,
        0x06 => T::UInt256,
        0x07 => T::Int8,
        0x08 => T::Int16,
        0x09 => T::Int32,
        0x0A => T::Int64,
        0x0B => T::Int128,
        0x0C => T::Int256,
        0x0D => T::Float32,
        0x0E => T::Float64,
        0x0F => T::Date,
        0x10 => T::Date32,
        0x11 => T::DateTime(None),
        0x12 => T::DateTime(Some(string(r)?)),
        0x13 => T::DateTime64(r.u8()?.min(9), None),
        0x14 => {
            let p = r.u8()?.min(9);
            T::DateTime64(p, Some(string(r)?))
        }
        0x15 => T::String,
        0x16 => {
            let n = r.varuint_bounded("FixedString width", 1 << 20)?;
            if n == 0 {
                return Err(ProtoError::violation("FixedString(0) in a binary type encoding"));
            }
            T::FixedString(n)
        }
        0x17 => {
            let n = count(r)?;
            let mut items = Vec::with_capacity(n.min(256));
            for _ in 0..n {
                let name = string(r)?;
                items.push((name, r.u8()? as i8));
            }
            T::Enum8(items)
        }
        0x18 => {
            let n = count(r)?;
            let mut items = Vec::with_capacity(n.min(256));
            for _ in 0..n {
                let name = string(r)?;
                let v = i16::from_le_bytes(r.array()?);
                items.push((name, v));
            }
            T::Enum16(items)
        }
        0x19..=0x1C => {
            let precision = r.u8()?;
            let scale = r.u8()?;
            if !(1..=76).contains(&precision) || scale > precision {
                return Err(ProtoError::violation("bad Decimal in a binary type encoding"));
            }
            T::Decimal { precision, scale }
        }
        0x1D => T::Uuid,
        0x1E => T::Array(Box::new(sub(r)?)),
        0x1F => {
            let n = count(r)?;
            let mut elems = Vec::with_capacity(n.min(256));
            for _ in 0..n {
                elems.push((None, sub(r)?));
            }
            T::Tuple(elems)
        }
        0x20 => {
            let n = count(r)?;
            let mut elems = Vec::with_capacity(n.min(256));
            for _ in 0..n {
                let name = string(r)?;
                elems.push((Some(name), sub(r)?));
            }
            T::Tuple(elems)
        }
        0x22 => {
            use IntervalKind as K;
            let kinds = [
                K::Nanosecond,
                K::Microsecond,
                K::Millisecond,
                K::Second,
                K::Minute,
                K::Hour,
                K::Day,
                K::Week,
                K::Month,
                K::Quarter,
                K::Year,
            ];
            let k = r.u8()?;
            T::Interval(*kinds.get(usize::from(k)).ok_or_else(|| ProtoError::violation(format!("interval kind {k}")))?)
        }
        0x23 => T::Nullable(Box::new(sub(r)?)),
        0x26 => T::LowCardinality(Box::new(sub(r)?)),
        0x27 => {
            let k = sub(r)?;
            let v = sub(r)?;
            T::Map(Box::new(k), Box::new(v))
        }
        0x28 => T::Ipv4,
        0x29 => T::Ipv6,
        0x2A => {
            let n = count(r)?;
            // The same bound as the text form, so a decoded type always has a name.
            if n == 0 || n > 255 {
                return Err(ProtoError::violation(format!("binary Variant type with {n} alternatives (1 to 255)")));
            }
            let mut alts = Vec::with_capacity(n.min(256));
            for _ in 0..n {
                alts.push(sub(r)?);
            }
            T::Variant(alts)
        }
        0x2B => {
            let n = u64::from(r.u8()?);
            T::Dynamic { max_types: (n != DEFAULT_MAX_DYNAMIC_TYPES).then_some(n) }
        }
        0x2C => {
            let name = string(r)?;
            DataType::parse(&name)?
        }
        0x2D => T::Bool,
        0x2F => {
            let n = count(r)?;
            let mut fields = Vec::with_capacity(n.min(256));
            for _ in 0..n {
                let name = string(r)?;
                fields.push((name, sub(r)?));
            }
            T::Nested(fields)
        }
        0x30 => {
            let version = r.u8()?;
            if version != 0 {
                return Err(ProtoError::violation(format!("JSON binary type encoding version {version}")));
            }
            let paths = r.varuint()?;
            let types = u64::from(r.u8()?);
            let mut j = JsonType {
                max_dynamic_paths: (paths != DEFAULT_MAX_DYNAMIC_PATHS).then_some(paths),
                max_dynamic_types: (types != DEFAULT_MAX_DYNAMIC_TYPES).then_some(types),
                ..JsonType::default()
            };
            for _ in 0..count(r)? {
                let path = string(r)?;
                j.typed_paths.push((path, sub(r)?));
            }
            for _ in 0..count(r)? {
                j.skip.push(string(r)?);
            }
            for _ in 0..count(r)? {
                j.skip_regexp.push(string(r)?);
            }
            j.typed_paths.sort_by(|a, b| a.0.cmp(&b.0));
            T::Json(Box::new(j))
        }
        0x31 => T::BFloat16,
        0x32 => T::Time,
        0x33 => T::Time64(r.u8()?.min(9)),
        0x21 | 0x24 | 0x25 | 0x2E => {
            return Err(ProtoError::ty(
                format!("binary type code 0x{code:02x}"),
                "Set, Function and aggregate-function types cannot be decoded from a binary type encoding",
            ))
        }
        other => return Err(ProtoError::violation(format!("unknown binary type code 0x{other:02x}"))),
    })
}

#[cfg(test)]
mod dynamic_type_tests {
    use super::*;
    use crate::wire::Reader;
    use DataType as T;

    #[test]
    fn variant_dynamic_json_names() {
        assert_eq!(
            DataType::parse("Variant(Array(UInt8), String, UInt64)").unwrap(),
            T::Variant(vec![T::Array(Box::new(T::UInt8)), T::String, T::UInt64])
        );
        assert_eq!(DataType::parse("Dynamic").unwrap(), T::Dynamic { max_types: None });
        assert_eq!(DataType::parse("Dynamic(max_types=5)").unwrap(), T::Dynamic { max_types: Some(5) });
        assert_eq!(DataType::parse("Dynamic(max_types = 5)").unwrap(), T::Dynamic { max_types: Some(5) });
        assert_eq!(DataType::parse("JSON").unwrap(), T::Json(Box::default()));
        // As the server prints it (system.columns of a table declared with every kind of argument).
        let s = "JSON(max_dynamic_types=3, max_dynamic_paths=10, `a.b` UInt32, `c.d` String, `we ird` Array(String), \
                 z Dynamic(max_types=3), SKIP `we ird.z`, SKIP `x.y`, SKIP REGEXP 'r.*')";
        let T::Json(j) = DataType::parse(s).unwrap() else { panic!() };
        assert_eq!(j.max_dynamic_types, Some(3));
        assert_eq!(j.max_dynamic_paths, Some(10));
        assert_eq!(
            j.typed_paths,
            vec![
                ("a.b".to_string(), T::UInt32),
                ("c.d".to_string(), T::String),
                ("we ird".to_string(), T::Array(Box::new(T::String))),
                ("z".to_string(), T::Dynamic { max_types: Some(3) }),
            ]
        );
        assert_eq!(j.skip, ["we ird.z", "x.y"]);
        assert_eq!(j.skip_regexp, ["r.*"]);
        assert_eq!(DataType::parse(s).unwrap().to_string(), s.split_whitespace().collect::<Vec<_>>().join(" "));
        // Unquoted dotted paths (the form users write), typed paths sorted, nested JSON.
        let t = DataType::parse("JSON(max_dynamic_paths = 2, a.b.c Nullable(UInt8), a.b JSON(x UInt8))").unwrap();
        let T::Json(j) = &t else { panic!() };
        assert_eq!(j.typed_paths[0].0, "a.b");
        assert!(matches!(j.typed_paths[0].1, T::Json(_)));
        assert_eq!(j.typed_paths[1], ("a.b.c".to_string(), T::Nullable(Box::new(T::UInt8))));
        assert_eq!(t.to_string(), "JSON(max_dynamic_paths=2, `a.b` JSON(x UInt8), `a.b.c` Nullable(UInt8))");
        assert_eq!(DataType::parse(&t.to_string()).unwrap(), t);
        assert_eq!(
            DataType::parse("Array(JSON(a UInt32))").unwrap(),
            T::Array(Box::new(T::Json(Box::new(JsonType {
                typed_paths: vec![("a".into(), T::UInt32)],
                ..JsonType::default()
            }))))
        );
        for bad in
            ["Variant()", "Dynamic(5)", "Dynamic(max_types=x)", "JSON(a)", "JSON(a UInt32", "JSON(SKIP REGEXP x)"]
        {
            assert!(DataType::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn display_round_trips() {
        for s in ["Variant(String, UInt64)", "Dynamic", "Dynamic(max_types=7)", "JSON", "JSON(a UInt32, SKIP b)"] {
            let t = DataType::parse(s).unwrap();
            assert_eq!(t.to_string(), s);
            assert_eq!(DataType::parse(&t.to_string()).unwrap(), t);
        }
    }

    #[test]
    fn binary_type_encodings() {
        let cases: &[(&[u8], &str)] = &[
            (&[0x1e, 0x01], "Array(UInt8)"),
            (&[0x0f], "Date"),
            (&[0x1f, 0x02, 0x01, 0x15], "Tuple(UInt8, String)"),
            (&[0x20, 0x01, 0x01, b'a', 0x09], "Tuple(a Int32)"),
            (&[0x27, 0x15, 0x0e], "Map(String, Float64)"),
            (&[0x23, 0x0a], "Nullable(Int64)"),
            (&[0x26, 0x23, 0x15], "LowCardinality(Nullable(String))"),
            (&[0x2a, 0x02, 0x15, 0x02], "Variant(String, UInt16)"),
            (&[0x12, 0x03, b'U', b'T', b'C'], "DateTime('UTC')"),
            (&[0x14, 0x03, 0x03, b'U', b'T', b'C'], "DateTime64(3, 'UTC')"),
            (&[0x1a, 0x12, 0x04], "Decimal(18, 4)"),
            (&[0x16, 0x05], "FixedString(5)"),
            (&[0x17, 0x02, 0x01, b'a', 0x01, 0x01, b'b', 0xff], "Enum8('a' = 1, 'b' = -1)"),
            (&[0x22, 0x03], "IntervalSecond"),
            (&[0x2b, 0x20], "Dynamic"),
            (&[0x2b, 0x05], "Dynamic(max_types=5)"),
            (&[0x2d], "Bool"),
            (&[0x2c, 0x05, b'P', b'o', b'i', b'n', b't'], "Point"),
            // JSON: version 0, max_dynamic_paths 0x400 (default), max_dynamic_types 16, one typed path.
            (
                &[0x30, 0x00, 0x80, 0x08, 0x10, 0x01, 0x01, b'a', 0x03, 0x00, 0x00],
                "JSON(max_dynamic_types=16, a UInt32)",
            ),
        ];
        for (bytes, name) in cases {
            let mut r = Reader::new(bytes);
            assert_eq!(DataType::decode_binary(&mut r).unwrap(), DataType::parse(name).unwrap(), "{name}");
            assert_eq!(r.remaining(), 0, "{name}");
        }
        assert!(matches!(DataType::decode_binary(&mut Reader::new(&[0x25])), Err(ProtoError::Type { .. })));
        assert!(matches!(DataType::decode_binary(&mut Reader::new(&[0x7f])), Err(ProtoError::Violation(_))));
        assert!(matches!(DataType::decode_binary(&mut Reader::new(&[0x1e])), Err(ProtoError::Incomplete { .. })));
        // Deep nesting is bounded.
        let deep = vec![0x1e; 1000];
        assert!(DataType::decode_binary(&mut Reader::new(&deep)).is_err());
    }
}
