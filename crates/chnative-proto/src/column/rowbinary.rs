//! RowBinary values appended to a column: how Dynamic's shared variant and JSON's shared
//! data hold values (a binary type encoding, then the value as `serializeBinary` writes it).
//!
//! Each family decodes its own values ([`ColumnCodec::push_row_binary`] and
//! [`ColumnCodec::push_default`]); this module says which types can be decoded.

use super::codec::ColumnCodec;
use super::ColumnData;
use crate::error::Result;
use crate::types::DataType;
use crate::wire::Reader;

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
        dispatch!(self, c => c.push_row_binary(ty, r))
    }

    /// Appends the type's default value (0, empty, NULL).
    pub fn push_default(&mut self, ty: &DataType) -> Result<()> {
        let shape = ty.wire_shape();
        let ty = shape.as_ref();
        dispatch!(self, c => c.push_default(ty))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::BufferPool;
    use crate::column::test_util::*;
    use crate::error::ProtoError;

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
