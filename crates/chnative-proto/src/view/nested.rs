//! The wrappers that nest columns: Nullable, Array (and Map, Nested and the geo arrays),
//! Tuple and LowCardinality. A part's view borrows its type from the parent's.

#[cfg(test)]
use std::borrow::Cow;
use std::ops::Range;

use super::{picker, strip_simple_agg, ColumnView, StrView, D};
use crate::column::{ArrayColumn, ColumnData, LowCardinalityColumn, NullableColumn, TupleColumn};
use crate::error::{ProtoError, Result};
#[cfg(test)]
use crate::types::DataType;

impl<'a> ColumnView<'a> {
    /// A Nullable(T) column.
    pub fn as_nullable(&self) -> Result<NullableView<'a>> {
        let ColumnData::Nullable(NullableColumn { nulls, inner }) = self.data else {
            return Err(self.mismatch("Nullable"));
        };
        let pick = picker(|t| match strip_simple_agg(t) {
            D::Nullable(t) => Some(t.as_ref()),
            _ => None,
        });
        match self.child(pick, inner) {
            Some(inner) => Ok(NullableView { nulls: nulls.as_bytes(), inner }),
            None => Err(self.mismatch("Nullable")),
        }
    }

    /// An Array(T) column (also Map, Nested and the geo arrays).
    pub fn as_array(&self) -> Result<ArrayView<'a>> {
        let ColumnData::Array(ArrayColumn { offsets, inner }) = self.data else {
            return Err(self.mismatch("Array"));
        };
        let pick = picker(|t| match strip_simple_agg(t) {
            D::Array(t) => Some(t.as_ref()),
            _ => None,
        });
        let mut inner = self.child(pick, inner).ok_or_else(|| self.mismatch("Array"))?;
        if let D::Map(..) = strip_simple_agg(&self.ty) {
            inner.map = Some(self.ty.clone());
        }
        Ok(ArrayView { offsets: offsets.typed::<u64>()?, inner })
    }

    /// A Tuple column's element `i`.
    pub fn tuple_element(&self, i: usize) -> Result<ColumnView<'a>> {
        let (D::Tuple(_), ColumnData::Tuple(TupleColumn { elems: cols })) = (self.shape.as_ref(), self.data) else {
            return Err(self.mismatch("Tuple"));
        };
        let pick = picker(|t| match strip_simple_agg(t) {
            D::Tuple(elems) => elems.get(i).map(|(_, t)| t),
            _ => None,
        });
        let mut elem = cols
            .get(i)
            .and_then(|c| self.child(pick, c))
            .ok_or_else(|| ProtoError::violation(format!("column `{}` has no tuple element {i}", self.name)))?;
        // A Map's key and value: their declared types (the shape spells a Map
        // inside them as the array of tuples it is on the wire).
        if let Some(map) = &self.map {
            let decl = picker(|t| match strip_simple_agg(t) {
                D::Map(k, _) if i == 0 => Some(k.as_ref()),
                D::Map(_, v) if i == 1 => Some(v.as_ref()),
                _ => None,
            });
            if let Some(t) = super::project(map.clone(), &decl) {
                elem.ty = t;
            }
        }
        Ok(elem)
    }

    /// A LowCardinality(T) column.
    pub fn as_low_cardinality(&self) -> Result<LowCardinalityView<'a>> {
        let ColumnData::LowCardinality(LowCardinalityColumn { dict, key_width, keys, nullable }) = self.data else {
            return Err(self.mismatch("LowCardinality"));
        };
        let pick = picker(|t| match strip_simple_agg(t) {
            D::LowCardinality(t) => Some(match t.as_ref() {
                D::Nullable(t) => t.as_ref(),
                t => t,
            }),
            _ => None,
        });
        let Some(dict) = self.child(pick, dict) else {
            return Err(self.mismatch("LowCardinality"));
        };
        let keys = match key_width {
            1 => Keys::U8(keys.as_bytes()),
            2 => Keys::U16(keys.typed()?),
            4 => Keys::U32(keys.typed()?),
            _ => Keys::U64(keys.typed()?),
        };
        Ok(LowCardinalityView { dict, keys, nullable: *nullable })
    }
}

/// A Nullable column: null map plus inner values.
#[derive(Debug, Clone)]
pub struct NullableView<'a> {
    nulls: &'a [u8],
    inner: ColumnView<'a>,
}

impl<'a> NullableView<'a> {
    /// One byte per row, 1 = NULL.
    pub fn nulls(&self) -> &'a [u8] {
        self.nulls
    }
    /// Whether row `i` is NULL.
    pub fn is_null(&self, i: usize) -> bool {
        self.nulls[i] != 0
    }
    /// The values (placeholders at NULL rows).
    pub fn inner(&self) -> &ColumnView<'a> {
        &self.inner
    }
}

/// An Array column: end offsets into the flattened elements.
#[derive(Debug, Clone)]
pub struct ArrayView<'a> {
    offsets: &'a [u64],
    inner: ColumnView<'a>,
}

impl<'a> ArrayView<'a> {
    /// Number of arrays.
    pub fn len(&self) -> usize {
        self.offsets.len()
    }
    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.offsets.is_empty()
    }
    /// End offset of each row.
    pub fn offsets(&self) -> &'a [u64] {
        self.offsets
    }
    /// Element range of row `i` in [`Self::inner`]. Panics if `i >= len()`.
    pub fn range(&self, i: usize) -> Range<usize> {
        let start = if i == 0 { 0 } else { self.offsets[i - 1] as usize };
        start..self.offsets[i] as usize
    }
    /// The flattened elements.
    pub fn inner(&self) -> &ColumnView<'a> {
        &self.inner
    }
}

/// Keys of a LowCardinality column at their wire width.
#[derive(Debug, Clone, Copy)]
#[allow(missing_docs)]
#[non_exhaustive]
pub enum Keys<'a> {
    U8(&'a [u8]),
    U16(&'a [u16]),
    U32(&'a [u32]),
    U64(&'a [u64]),
}

impl Keys<'_> {
    /// Key of row `i` as an index into the dictionary. Panics if out of range.
    #[inline]
    pub fn get(&self, i: usize) -> usize {
        match self {
            Keys::U8(k) => k[i] as usize,
            Keys::U16(k) => k[i] as usize,
            Keys::U32(k) => k[i] as usize,
            Keys::U64(k) => k[i] as usize,
        }
    }
    /// Number of keys.
    pub fn len(&self) -> usize {
        match self {
            Keys::U8(k) => k.len(),
            Keys::U16(k) => k.len(),
            Keys::U32(k) => k.len(),
            Keys::U64(k) => k.len(),
        }
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A LowCardinality column: dictionary (decoded once per block) plus keys.
#[derive(Debug, Clone)]
pub struct LowCardinalityView<'a> {
    dict: ColumnView<'a>,
    keys: Keys<'a>,
    nullable: bool,
}

impl<'a> LowCardinalityView<'a> {
    /// The dictionary.
    pub fn dictionary(&self) -> &ColumnView<'a> {
        &self.dict
    }
    /// The keys.
    pub fn keys(&self) -> Keys<'a> {
        self.keys
    }
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.keys.len()
    }
    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
    /// Whether row `i` is NULL (LowCardinality(Nullable(T)): key 0).
    pub fn is_null(&self, i: usize) -> bool {
        self.nullable && self.keys.get(i) == 0
    }
    /// For LowCardinality(String): the dictionary strings, looked up with [`Self::key`].
    pub fn strings(&self) -> Result<StrView<'a>> {
        self.dict.as_strings()
    }
    /// Dictionary index of row `i`.
    pub fn key(&self, i: usize) -> usize {
        self.keys.get(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::AlignedBuf;
    use crate::column::LowCardinalityColumn;

    fn borrowed(v: &ColumnView<'_>) -> bool {
        matches!((&v.ty, &v.shape), (Cow::Borrowed(_), Cow::Borrowed(_))) && v.type_name.is_none()
    }

    #[test]
    fn nullable_inner_borrows_its_type() {
        let data = ColumnData::nullable(&[0, 1, 0], ColumnData::from_strings(&["a", "", "c"]));
        let ty = DataType::parse("Nullable(String)").unwrap();
        let v = ColumnView::new("n", &ty, "Nullable(String)", &data);
        let n = v.as_nullable().unwrap();
        assert_eq!(n.nulls(), [0, 1, 0]);
        assert!(n.is_null(1) && !n.is_null(0));
        assert!(borrowed(n.inner()), "the inner view copied its type");
        assert_eq!(n.inner().data_type(), &DataType::String);
        assert_eq!(n.inner().type_name(), "String");
        assert_eq!(n.inner().name(), "n");
        assert_eq!(n.inner().as_strings().unwrap().str(2).unwrap(), "c");
        assert!(v.as_array().is_err());
        assert!(n.inner().as_nullable().is_err());
    }

    #[test]
    fn arrays_of_arrays_and_ranges() {
        let inner = ColumnData::array(&[2, 2, 3], ColumnData::from_values(&[1u16, 2, 3]));
        let data = ColumnData::array(&[1, 3], inner);
        let ty = DataType::parse("Array(Array(UInt16))").unwrap();
        let v = ColumnView::new("a", &ty, "Array(Array(UInt16))", &data);
        let a = v.as_array().unwrap();
        assert_eq!((a.len(), a.offsets(), a.range(1)), (2, &[1u64, 3][..], 1..3));
        assert!(borrowed(a.inner()));
        let b = a.inner().as_array().unwrap();
        assert!(borrowed(b.inner()));
        assert_eq!(b.inner().type_name(), "UInt16");
        assert_eq!(a.inner().type_name(), "Array(UInt16)");
        assert_eq!(b.inner().values::<u16>().unwrap(), [1, 2, 3]);
        assert_eq!(b.range(1), 2..2);
    }

    #[test]
    fn maps_are_arrays_of_key_value_tuples() {
        let data = ColumnData::map(
            &[2, 3],
            ColumnData::from_strings(&["a", "b", "c"]),
            ColumnData::from_values(&[1u64, 2, 3]),
        );
        let ty = DataType::parse("Map(String, UInt64)").unwrap();
        // Resolved once, as a column does; the views below borrow it and build no type.
        let shape = ty.view_shape().into_owned();
        assert_eq!(shape.to_string(), "Array(Tuple(String, UInt64))");
        let v = ColumnView::with_shape("m", &ty, &shape, "Map(String, UInt64)", &data);
        assert_eq!(v.data_type(), &ty);
        let a = v.as_array().unwrap();
        assert!(borrowed(a.inner()), "the key/value view built its type");
        assert_eq!(a.inner().type_name(), "Tuple(String, UInt64)");
        let keys = a.inner().tuple_element(0).unwrap();
        let values = a.inner().tuple_element(1).unwrap();
        assert!(borrowed(&keys) && borrowed(&values));
        assert_eq!(keys.as_strings().unwrap().str(2).unwrap(), "c");
        assert_eq!(values.values::<u64>().unwrap(), [1, 2, 3]);
        assert!(a.inner().tuple_element(2).is_err());
    }

    #[test]
    fn tuple_elements_and_geo_shapes() {
        let data = ColumnData::tuple(vec![ColumnData::from_values(&[7u8]), ColumnData::from_strings(&["x"])]);
        let ty = DataType::parse("Tuple(a UInt8, b String)").unwrap();
        let v = ColumnView::new("t", &ty, "Tuple(a UInt8, b String)", &data);
        let b = v.tuple_element(1).unwrap();
        assert!(borrowed(&b));
        assert_eq!(b.as_strings().unwrap().str(0).unwrap(), "x");
        assert!(matches!(v.tuple_element(2), Err(ProtoError::Violation(_))));
        assert!(matches!(v.as_nullable(), Err(ProtoError::TypeMismatch { .. })));

        // Point is Tuple(Float64, Float64) on the wire, though its name says neither.
        let data = ColumnData::tuple(vec![ColumnData::from_values(&[1.5f64]), ColumnData::from_values(&[2.5f64])]);
        let ty = DataType::Point;
        let v = ColumnView::new("p", &ty, "Point", &data);
        assert_eq!(v.tuple_element(1).unwrap().values::<f64>().unwrap(), [2.5]);
        assert_eq!(v.tuple_element(0).unwrap().type_name(), "Float64");
    }

    #[test]
    fn low_cardinality_keys_at_their_width() {
        for (width, nullable) in [(1u8, false), (2, true), (4, false), (8, true)] {
            let mut keys = AlignedBuf::new();
            for k in [1u64, 2, 1, 0] {
                keys.extend_from(&k.to_le_bytes()[..usize::from(width)]);
            }
            let data = ColumnData::LowCardinality(LowCardinalityColumn {
                dict: Box::new(ColumnData::from_strings(&["", "x", "y"])),
                key_width: width,
                keys,
                nullable,
            });
            let name = if nullable { "LowCardinality(Nullable(String))" } else { "LowCardinality(String)" };
            let ty = DataType::parse(name).unwrap();
            let v = ColumnView::new("l", &ty, name, &data);
            let lc = v.as_low_cardinality().unwrap();
            assert!(borrowed(lc.dictionary()), "{name}");
            assert_eq!(lc.dictionary().data_type(), &DataType::String, "{name}");
            assert_eq!((lc.len(), lc.keys().len()), (4, 4));
            let dict = lc.strings().unwrap();
            let rows: Vec<&[u8]> = (0..lc.len()).map(|i| dict.bytes(lc.key(i))).collect();
            assert_eq!(rows, [&b"x"[..], b"y", b"x", b""], "width {width}");
            assert_eq!(lc.is_null(3), nullable, "{name}");
            assert!(!lc.is_null(0));
        }
    }
}
