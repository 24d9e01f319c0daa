//! The rules a column's data must follow to be a value of its type, for data
//! that did not come from a decoder: the shape (widths, nesting, lengths,
//! offsets, keys) and the values a fixed-width type cannot hold.
//!
//! Decoders enforce the same rules as they read; these checks guard the
//! constructors, so that data the server would refuse (or store and then fail
//! to read) never reaches the encoder.

use super::codec::ColumnCodec;
use super::{check_offsets, ColumnData};
use crate::types::DataType;

/// Why data does not fit a type: the text of [`crate::ProtoError::InvalidColumn`]'s `reason`.
pub(crate) type Reason = String;

/// End offsets that are non-decreasing and end exactly at `len` items.
pub(crate) fn check_end_offsets(offsets: &[u64], len: usize, what: &str) -> Result<(), Reason> {
    let last = check_offsets(offsets).map_err(|_| format!("{what} offsets are not monotonic"))?;
    if last != len {
        return Err(format!("{what} offsets end at {last}, but there are {len} {what} items"));
    }
    Ok(())
}

/// Rejects values of the right width that `ty` cannot hold: Enum8 and Enum16
/// values outside the enum, Bool bytes other than 0 and 1. Rows that are NULL
/// (`nulls[i] != 0`) are skipped, since they hold placeholders. The server
/// stores such values unchecked, and then cannot read the column back
/// ("Unexpected value 5 in enum", code 691) or compares wrongly (a Bool 2
/// renders as true but is not `= true`).
pub(crate) fn check_fixed_values(
    ty: &DataType,
    bytes: &[u8],
    width: usize,
    nulls: Option<&[u8]>,
) -> Result<(), Reason> {
    let ty = match ty {
        DataType::SimpleAggregateFunction(_, t) | DataType::LowCardinality(t) => t.as_ref(),
        t => t,
    };
    let null = |i: usize| nulls.is_some_and(|n| n.get(i).is_some_and(|&b| b != 0));
    let bad = |i: usize, v: i64| format!("value #{i} is {v}, not a value of {ty}");
    match (ty, width) {
        (DataType::Enum8(items), 1) => {
            let mut ok = [false; 256];
            for (_, v) in items {
                ok[usize::from(*v as u8)] = true;
            }
            if let Some(i) = (0..bytes.len()).find(|&i| !ok[usize::from(bytes[i])] && !null(i)) {
                return Err(bad(i, i64::from(bytes[i] as i8)));
            }
        }
        (DataType::Enum16(items), 2) => {
            let mut ok: Vec<i16> = items.iter().map(|(_, v)| *v).collect();
            ok.sort_unstable();
            for (i, c) in bytes.chunks_exact(2).enumerate() {
                let v = i16::from_le_bytes([c[0], c[1]]);
                if ok.binary_search(&v).is_err() && !null(i) {
                    return Err(bad(i, i64::from(v)));
                }
            }
        }
        (DataType::Bool, 1) => {
            if let Some(i) = (0..bytes.len()).find(|&i| bytes[i] > 1 && !null(i)) {
                return Err(bad(i, i64::from(bytes[i])));
            }
        }
        _ => {}
    }
    Ok(())
}

/// The reason for data of another family than the type's: "string data cannot hold UInt64".
pub(crate) fn cannot_hold(data: &impl ColumnCodec, ty: &DataType) -> Reason {
    format!("{} cannot hold {ty}", data.shape_name())
}

impl ColumnData {
    /// Checks that this data is a valid column of type `ty`: its shape follows
    /// the type, every length agrees, offsets are monotonic and end at their
    /// data, LowCardinality keys are inside their dictionary, and fixed-width
    /// values are values of the type. Each family checks its own rules.
    pub(crate) fn check_fits(&self, ty: &DataType) -> Result<(), Reason> {
        self.check_at(ty, None)
    }

    /// `nulls` is the null map over this data when it is a Nullable's values.
    pub(super) fn check_at(&self, ty: &DataType, nulls: Option<&[u8]>) -> Result<(), Reason> {
        let shape = ty.wire_shape();
        let ty = shape.as_ref();
        if let DataType::Unsupported(_) = ty {
            return Err("no Native codec for this type yet".into());
        }
        dispatch!(self, c => c.check_fits(ty, nulls))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::AlignedBuf;
    use crate::column::{
        ArrayColumn, FixedColumn, IntoData, LowCardinalityColumn, NullableColumn, StringColumn, TupleColumn,
        VariantData, NULL_DISCRIMINATOR,
    };

    fn buf(b: &[u8]) -> AlignedBuf {
        let mut a = AlignedBuf::new();
        a.set_from(b);
        a
    }

    fn u64s(v: &[u64]) -> AlignedBuf {
        buf(bytemuck::cast_slice(v))
    }

    fn fixed(width: usize, b: &[u8]) -> ColumnData {
        FixedColumn::new(width, buf(b)).into_data()
    }

    fn strings(offsets: &[u64], data: &[u8]) -> ColumnData {
        StringColumn::new(u64s(offsets), buf(data)).into_data()
    }

    fn check(ty: &str, data: &ColumnData) -> Result<(), Reason> {
        data.check_fits(&DataType::parse(ty).unwrap())
    }

    fn refused(ty: &str, data: &ColumnData, words: &str) {
        let err = check(ty, data).expect_err(ty);
        assert!(err.contains(words), "{ty}: {err}");
    }

    #[test]
    fn fixed_width_must_match_the_type() {
        // Two u32 values are not one UInt64 (the server refused this with code 432).
        refused("UInt64", &fixed(4, &[1, 0, 0, 0, 2, 0, 0, 0]), "4 bytes wide, UInt64 needs 8");
        refused("UInt64", &fixed(8, &[1, 2, 3]), "not a whole number");
        refused("UInt64", &strings(&[], &[]), "string data cannot hold UInt64");
        check("UInt64", &fixed(8, &[0; 16])).unwrap();
        check("FixedString(3)", &fixed(3, b"abcdef")).unwrap();
        check("Decimal(20, 2)", &fixed(16, &[0; 16])).unwrap();
        check("SimpleAggregateFunction(sum, UInt32)", &fixed(4, &[0; 4])).unwrap();
        check("Tuple()", &fixed(1, &[0; 2])).unwrap();
    }

    #[test]
    fn enum_and_bool_values_are_checked() {
        refused("Enum8('a' = 1, 'b' = 2)", &fixed(1, &[1, 3]), "value #1 is 3");
        refused("Enum16('a' = -300)", &fixed(2, &(-299i16).to_le_bytes()), "value #0 is -299");
        refused("Bool", &fixed(1, &[0, 1, 2]), "value #2 is 2");
        check("Enum8('a' = -1)", &fixed(1, &[0xff])).unwrap();
        // A placeholder under a NULL is not a value.
        let n = NullableColumn::new(buf(&[0, 1]), fixed(1, &[1, 9])).into_data();
        check("Nullable(Enum8('a' = 1))", &n).unwrap();
        let n = NullableColumn::new(buf(&[1, 0]), fixed(1, &[1, 9])).into_data();
        refused("Nullable(Enum8('a' = 1))", &n, "value #1 is 9");
    }

    #[test]
    fn string_offsets_are_checked() {
        check("String", &strings(&[1, 1, 3], b"abc")).unwrap();
        refused("String", &strings(&[2, 1, 3], b"abc"), "not monotonic");
        refused("String", &strings(&[1, 4], b"abc"), "end at 4");
        refused("String", &strings(&[1, 2], b"abc"), "end at 2");
    }

    #[test]
    fn nullable_null_map_is_checked() {
        let n = |nulls: &[u8], rows: usize| NullableColumn::new(buf(nulls), fixed(4, &vec![0; rows * 4])).into_data();
        check("Nullable(UInt32)", &n(&[0, 1], 2)).unwrap();
        refused("Nullable(UInt32)", &n(&[0, 1, 0], 2), "null map has 3 rows, values have 2");
        refused("Nullable(UInt32)", &n(&[0, 2], 2), "byte #1 is 2");
        refused("UInt32", &n(&[0], 1), "nullable data cannot hold UInt32");
    }

    #[test]
    fn array_and_map_offsets_are_checked() {
        let a = |offsets: &[u64], rows: usize| ArrayColumn::new(u64s(offsets), fixed(1, &vec![0; rows])).into_data();
        check("Array(UInt8)", &a(&[0, 2, 3], 3)).unwrap();
        refused("Array(UInt8)", &a(&[2, 0, 3], 3), "not monotonic");
        refused("Array(UInt8)", &a(&[2, 3], 4), "end at 3, but there are 4");
        refused("Array(UInt16)", &a(&[1], 1), "1 bytes wide, UInt16 needs 2");
        let m = |keys: usize, values: usize| {
            let kv = TupleColumn::new(vec![fixed(1, &vec![0; keys]), fixed(1, &vec![0; values])]);
            ArrayColumn::new(u64s(&[keys as u64]), kv.into_data()).into_data()
        };
        check("Map(UInt8, UInt8)", &m(2, 2)).unwrap();
        refused("Map(UInt8, UInt8)", &m(2, 1), "2 keys and 1 values");
    }

    #[test]
    fn tuple_elements_are_checked() {
        let t = ColumnData::tuple(vec![fixed(1, &[1, 2]), strings(&[1, 2], b"ab")]);
        check("Tuple(UInt8, String)", &t).unwrap();
        refused("Tuple(UInt8, String, UInt8)", &t, "2 tuple elements, the type has 3");
        refused("Tuple(String, UInt8)", &t, "tuple element 1");
        let t = ColumnData::tuple(vec![fixed(1, &[1, 2]), strings(&[1], b"a")]);
        refused("Tuple(UInt8, String)", &t, "element 2 has 1 rows");
    }

    #[test]
    fn low_cardinality_keys_are_checked() {
        let lc = |keys: &[u8], kw: u8, nullable: bool| {
            LowCardinalityColumn::new(strings(&[0, 1, 2], b"ab"), kw, buf(keys), nullable).into_data()
        };
        check("LowCardinality(String)", &lc(&[0, 2, 1], 1, false)).unwrap();
        check("LowCardinality(Nullable(String))", &lc(&[0, 2, 1], 1, true)).unwrap();
        check("LowCardinality(String)", &lc(&[], 1, false)).unwrap();
        refused("LowCardinality(String)", &lc(&[0, 3, 1], 1, false), "key #1 is 3, beyond the dictionary of 3");
        refused("LowCardinality(String)", &lc(&[0, 0, 1], 2, false), "not a whole number of 2-byte keys");
        refused("LowCardinality(String)", &lc(&[0, 0, 0], 3, false), "3 bytes wide");
        refused("LowCardinality(String)", &lc(&[0], 1, true), "cannot hold");
        refused("LowCardinality(UInt8)", &lc(&[0], 1, false), "string data cannot hold UInt8");
    }

    #[test]
    fn variant_counts_are_checked() {
        let v = |disc: &[u8], rows: [usize; 2]| {
            ColumnData::Variant(Box::new(VariantData {
                mode: 0,
                discriminators: buf(disc),
                offsets: u64s(&vec![0; disc.len()]),
                variants: vec![fixed(1, &vec![0; rows[0]]), fixed(4, &vec![0; rows[1] * 4])],
            }))
        };
        check("Variant(UInt8, UInt32)", &v(&[0, NULL_DISCRIMINATOR, 1, 0], [2, 1])).unwrap();
        refused("Variant(UInt8, UInt32)", &v(&[0, 2], [1, 0]), "discriminator #1 is 2");
        refused("Variant(UInt8, UInt32)", &v(&[0, 0], [1, 0]), "has 1 rows, 2 rows choose it");
        refused("Variant(UInt8, UInt32, String)", &v(&[0], [1, 0]), "2 alternatives, the type has 3");
    }

    #[test]
    fn offsets_helper_names_the_problem() {
        check_end_offsets(&[], 0, "x").unwrap();
        assert!(check_end_offsets(&[], 1, "x").unwrap_err().contains("end at 0"));
        assert!(check_end_offsets(&[3, 2], 3, "x").unwrap_err().contains("not monotonic"));
    }
}
