//! RowBinary values appended to a column: how Dynamic's shared variant and JSON's shared
//! data hold values (a binary type encoding, then the value as `serializeBinary` writes it).

use crate::buffer::AlignedBuf;
use crate::column::{ArrayColumn, FixedColumn, LowCardinalityColumn, NullableColumn, StringColumn, TupleColumn};
use crate::error::{ProtoError, Result};
use crate::types::DataType;
use crate::wire::Reader;

use super::{ColumnData, NULL_DISCRIMINATOR};

/// Why values of `ty` cannot be decoded from RowBinary here, or `None` when they can.
pub fn row_binary_unsupported(ty: &DataType) -> Option<String> {
    match ty {
        DataType::Unsupported(name) => Some(format!("type `{name}` has no codec")),
        DataType::Nothing => Some("Nothing has no values".into()),
        DataType::AggregateFunction(..) => Some(format!("{ty} values inside a shared variant are not decoded")),
        DataType::Dynamic { .. } | DataType::Json(_) | DataType::QBit(..) | DataType::QBitStrided(..) => {
            Some(format!("{ty} values inside a shared variant are not decoded"))
        }
        DataType::Nullable(t) | DataType::Array(t) | DataType::LowCardinality(t) => row_binary_unsupported(t),
        DataType::SimpleAggregateFunction(_, t) => row_binary_unsupported(t),
        DataType::Map(k, v) => row_binary_unsupported(k).or_else(|| row_binary_unsupported(v)),
        // Tuple() is a 1-byte placeholder in columns but has no bytes in RowBinary.
        DataType::Tuple(e) if e.is_empty() => Some("Tuple() values inside a shared variant are not decoded".into()),
        DataType::Tuple(e) => e.iter().find_map(|(_, t)| row_binary_unsupported(t)),
        DataType::Nested(e) => e.iter().find_map(|(_, t)| row_binary_unsupported(t)),
        DataType::Variant(alts) => alts.iter().find_map(row_binary_unsupported),
        _ => None,
    }
}

impl ColumnData {
    /// Appends one value in RowBinary (`serializeBinary`) form. The column must have
    /// been built for `ty`, and `ty` must pass [`row_binary_unsupported`].
    pub fn push_row_binary(&mut self, ty: &DataType, r: &mut Reader<'_>) -> Result<()> {
        let shape = ty.wire_shape();
        let ty = shape.as_ref();
        match (self, ty) {
            (ColumnData::Fixed(FixedColumn { width, data }), _) => data.extend_from(r.bytes(*width)?),
            (ColumnData::String(StringColumn { offsets, data }), _) => {
                let n = r.varuint()?;
                let n = usize::try_from(n).map_err(|_| ProtoError::violation("string length overflows"))?;
                data.extend_from(r.bytes(n)?);
                offsets.push(data.len() as u64);
            }
            (ColumnData::Nullable(NullableColumn { nulls, inner }), DataType::Nullable(t)) => {
                if r.u8()? != 0 {
                    nulls.push(1u8);
                    inner.push_default(t)?;
                } else {
                    inner.push_row_binary(t, r)?;
                    nulls.push(0u8);
                }
            }
            (ColumnData::Array(ArrayColumn { offsets, inner }), DataType::Array(t)) => {
                let n = r.varuint()?;
                // Every element takes at least one byte.
                let n = usize::try_from(n)
                    .ok()
                    .filter(|&n| n <= r.remaining())
                    .ok_or_else(|| ProtoError::violation("array length beyond the value"))?;
                for _ in 0..n {
                    inner.push_row_binary(t, r)?;
                }
                offsets.push(inner.rows() as u64);
            }
            (ColumnData::Array(ArrayColumn { offsets, inner }), DataType::Map(k, v)) => {
                let n = r.varuint()?;
                let n = usize::try_from(n)
                    .ok()
                    .filter(|&n| n <= r.remaining())
                    .ok_or_else(|| ProtoError::violation("map size beyond the value"))?;
                let ColumnData::Tuple(TupleColumn { elems: kv }) = inner.as_mut() else {
                    return Err(ProtoError::violation("column shape differs from its type"));
                };
                if kv.len() != 2 {
                    return Err(ProtoError::violation("column shape differs from its type"));
                }
                for _ in 0..n {
                    kv[0].push_row_binary(k, r)?;
                    kv[1].push_row_binary(v, r)?;
                }
                offsets.push(kv[0].rows() as u64);
            }
            (ColumnData::Tuple(TupleColumn { elems: cols }), DataType::Tuple(elems)) if cols.len() == elems.len() => {
                for (c, (_, t)) in cols.iter_mut().zip(elems) {
                    c.push_row_binary(t, r)?;
                }
            }
            (
                ColumnData::LowCardinality(LowCardinalityColumn { dict, key_width, keys, nullable }),
                DataType::LowCardinality(t),
            ) => {
                let inner = match t.as_ref() {
                    DataType::Nullable(t) => t.as_ref(),
                    t => t,
                };
                start_row_keys(dict, key_width, keys, *nullable, inner)?;
                if *nullable && r.u8()? != 0 {
                    keys.push(0u64);
                } else {
                    dict.push_row_binary(inner, r)?;
                    keys.push(dict.rows() as u64 - 1);
                }
            }
            (ColumnData::Variant(v), DataType::Variant(alts)) => {
                let d = r.u8()?;
                if d == NULL_DISCRIMINATOR {
                    v.push_null();
                } else {
                    let k = usize::from(d);
                    let (Some(col), Some(t)) = (v.variants.get_mut(k), alts.get(k)) else {
                        return Err(ProtoError::violation(format!("Variant discriminator {d} out of range")));
                    };
                    let at = col.rows() as u64;
                    col.push_row_binary(t, r)?;
                    v.discriminators.push(d);
                    v.offsets.push(at);
                }
            }
            (_, t) => {
                return Err(ProtoError::ty(t.to_string(), "no RowBinary decoding for this type"));
            }
        }
        Ok(())
    }

    /// Appends the type's default value (0, empty, NULL).
    pub fn push_default(&mut self, ty: &DataType) -> Result<()> {
        let shape = ty.wire_shape();
        let ty = shape.as_ref();
        match (self, ty) {
            (ColumnData::Fixed(FixedColumn { width, data }), _) => data.resize_zeroed(data.len() + *width),
            (ColumnData::String(StringColumn { offsets, data }), _) => offsets.push(data.len() as u64),
            (ColumnData::Nullable(NullableColumn { nulls, inner }), DataType::Nullable(t)) => {
                nulls.push(1u8);
                inner.push_default(t)?;
            }
            (ColumnData::Array(ArrayColumn { offsets, inner }), _) => offsets.push(inner.rows() as u64),
            (ColumnData::Tuple(TupleColumn { elems: cols }), DataType::Tuple(elems)) if cols.len() == elems.len() => {
                for (c, (_, t)) in cols.iter_mut().zip(elems) {
                    c.push_default(t)?;
                }
            }
            (
                ColumnData::LowCardinality(LowCardinalityColumn { dict, key_width, keys, nullable }),
                DataType::LowCardinality(t),
            ) => {
                let inner = match t.as_ref() {
                    DataType::Nullable(t) => t.as_ref(),
                    t => t,
                };
                start_row_keys(dict, key_width, keys, *nullable, inner)?;
                if *nullable {
                    keys.push(0u64);
                } else {
                    dict.push_default(inner)?;
                    keys.push(dict.rows() as u64 - 1);
                }
            }
            (ColumnData::Variant(v), _) => v.push_null(),
            (_, t) => return Err(ProtoError::ty(t.to_string(), "no default value for this column shape")),
        }
        Ok(())
    }
}

/// Before the first row appended to a LowCardinality column: u64 keys, and for
/// LowCardinality(Nullable(T)) the NULL slot at key 0.
fn start_row_keys(
    dict: &mut ColumnData,
    key_width: &mut u8,
    keys: &mut AlignedBuf,
    nullable: bool,
    inner: &DataType,
) -> Result<()> {
    if keys.is_empty() {
        if *key_width != 8 || dict.rows() > 0 {
            dict.clear();
        }
        *key_width = 8;
        if nullable && dict.rows() == 0 {
            dict.push_default(inner)?;
        }
    } else if *key_width != 8 {
        return Err(ProtoError::violation("LowCardinality keys are not 64-bit"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::BufferPool;
    use crate::column::test_util::*;

    #[test]
    fn row_binary_shapes() {
        let mut pool = BufferPool::new();
        let cases: &[(&str, &[u8], usize)] = &[
            ("Nullable(String)", &[1, 0, 2, b'h', b'i'], 2),
            ("Array(Nullable(UInt8))", &[3, 0, 1, 1, 0, 2], 1),
            ("Map(String, Array(UInt8))", &[2, 1, b'a', 1, 9, 1, b'b', 0], 1),
            ("Tuple(a UInt16, b String)", &[1, 0, 1, b'x'], 1),
            ("LowCardinality(Nullable(String))", &[1, 0, 1, b'q', 0, 1, b'r'], 3),
            ("Variant(String, UInt8)", &[1, 5, 255, 0, 1, b'z'], 3),
        ];
        for (ty, bytes, rows) in cases {
            let t = DataType::parse(ty).unwrap();
            assert_eq!(row_binary_unsupported(&t), None, "{ty}");
            let mut c = ColumnData::for_type(&t, &mut pool).unwrap();
            let mut r = Reader::new(bytes);
            for _ in 0..*rows {
                c.push_row_binary(&t, &mut r).unwrap();
            }
            assert_eq!(r.remaining(), 0, "{ty}");
            assert_eq!(c.rows(), *rows, "{ty}");
            // The rows re-encode as a regular column.
            let mut out = Vec::new();
            c.write_prefix(&mut out);
            c.write_data(&mut out, NEW).unwrap();
            let mut d = ColumnData::for_type(&t, &mut pool).unwrap();
            let mut r = Reader::new(&out);
            d.read_prefix(&mut r).unwrap();
            d.read_data(&mut r, *rows, None, NEW, &mut pool).unwrap();
            assert_eq!(r.remaining(), 0, "{ty}");
        }
        let lc = DataType::parse("LowCardinality(Nullable(String))").unwrap();
        let mut c = ColumnData::for_type(&lc, &mut pool).unwrap();
        let mut r = Reader::new(&[1, 0, 1, b'q']);
        c.push_row_binary(&lc, &mut r).unwrap();
        c.push_row_binary(&lc, &mut r).unwrap();
        let name = lc.to_string();
        let v = view(&lc, &name, &c);
        let l = v.as_low_cardinality().unwrap();
        assert!(l.is_null(0));
        assert_eq!(l.strings().unwrap().str(l.key(1)).unwrap(), "q");
        for ty in ["JSON", "Dynamic", "Array(Dynamic)", "Nothing", "Array(Tuple())"] {
            assert!(row_binary_unsupported(&DataType::parse(ty).unwrap()).is_some(), "{ty}");
        }
        // An array longer than the bytes left is rejected before looping.
        let t = DataType::parse("Array(UInt8)").unwrap();
        let mut c = ColumnData::for_type(&t, &mut pool).unwrap();
        let mut r = Reader::new(&[0xff, 0xff, 0xff, 0xff, 0x0f]);
        assert!(matches!(c.push_row_binary(&t, &mut r), Err(ProtoError::Violation(_))));
    }
}
