//! Variant columns: one discriminator per row and a dense column per alternative.

use std::borrow::Cow;

use super::{ColumnView, D};
use crate::column::{ColumnData, VariantData, NULL_DISCRIMINATOR};
use crate::error::{ProtoError, Result};
use crate::types::DataType;

impl<'a> ColumnView<'a> {
    /// A Variant(T1, …) column.
    pub fn as_variant(&self) -> Result<VariantView<'a>> {
        let ColumnData::Variant(v) = self.data else {
            return Err(self.mismatch("Variant"));
        };
        fn alternatives<'a>(t: &Cow<'a, DataType>) -> Option<Cow<'a, [DataType]>> {
            match t {
                Cow::Borrowed(D::Variant(alts)) => Some(Cow::Borrowed(alts)),
                Cow::Owned(D::Variant(alts)) => Some(Cow::Owned(alts.clone())),
                _ => None,
            }
        }
        let (Some(alts), Some(shapes)) = (alternatives(&self.ty), alternatives(&self.shape)) else {
            return Err(self.mismatch("Variant"));
        };
        if alts.len() != v.variants.len() || shapes.len() != alts.len() {
            return Err(self.mismatch("Variant"));
        }
        Ok(VariantView { name: self.name, alts, shapes, data: v })
    }
}

/// A Variant(T1, …) column: one discriminator per row and a dense column per alternative.
#[derive(Debug, Clone)]
pub struct VariantView<'a> {
    name: &'a str,
    alts: Cow<'a, [DataType]>,
    /// The alternatives as the wire has them ([`DataType::view_shape`]).
    shapes: Cow<'a, [DataType]>,
    data: &'a VariantData,
}

impl<'a> VariantView<'a> {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.data.rows()
    }
    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// One byte per row: the alternative's index, 255 for NULL.
    pub fn discriminators(&self) -> &'a [u8] {
        self.data.discriminators.as_bytes()
    }
    /// The alternative of row `i`, `None` for NULL. Panics if `i >= len()`.
    pub fn discriminator(&self, i: usize) -> Option<usize> {
        let d = self.discriminators()[i];
        (d != NULL_DISCRIMINATOR).then_some(usize::from(d))
    }
    /// Whether row `i` is NULL. Panics if `i >= len()`.
    pub fn is_null(&self, i: usize) -> bool {
        self.discriminator(i).is_none()
    }
    /// Row `i` as (alternative, index inside that alternative's column); `None` for NULL.
    pub fn row(&self, i: usize) -> Option<(usize, usize)> {
        let d = self.discriminator(i)?;
        let offsets = self.data.offsets.typed::<u64>().ok()?;
        Some((d, offsets[i] as usize))
    }
    /// Per row, the index inside its alternative (0 for NULL rows).
    pub fn offsets(&self) -> Result<&'a [u64]> {
        self.data.offsets.typed::<u64>()
    }
    /// Number of alternatives.
    pub fn variant_count(&self) -> usize {
        self.alts.len()
    }
    /// The alternatives' types, in discriminator order.
    pub fn variant_types(&self) -> &[DataType] {
        &self.alts
    }
    /// The column of alternative `k` (only the rows that chose it).
    pub fn variant(&self, k: usize) -> Result<ColumnView<'a>> {
        fn nth<'a>(list: &Cow<'a, [DataType]>, k: usize) -> Option<Cow<'a, DataType>> {
            match list {
                Cow::Borrowed(list) => list.get(k).map(Cow::Borrowed),
                Cow::Owned(list) => list.get(k).cloned().map(Cow::Owned),
            }
        }
        match (nth(&self.alts, k), nth(&self.shapes, k), self.data.variants.get(k)) {
            (Some(ty), Some(shape), Some(data)) => {
                Ok(ColumnView { name: self.name, ty, shape, type_name: None, data, map: None })
            }
            _ => Err(ProtoError::violation(format!("column `{}` has no alternative {k}", self.name))),
        }
    }
    /// Row `i` as (view of its alternative's column, index in it); `None` for NULL.
    pub fn value(&self, i: usize) -> Result<Option<(ColumnView<'a>, usize)>> {
        match self.row(i) {
            None => Ok(None),
            Some((k, at)) => Ok(Some((self.variant(k)?, at))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::test_util::column;
    use crate::wire::WriteExt;

    #[test]
    fn rows_pick_their_alternative_and_views_borrow_its_type() {
        // Variant(String, UInt64) rows: 7, NULL, 'ab', 8.
        let mut b = Vec::new();
        b.put_u64_le(crate::column::VARIANT_MODE_BASIC);
        b.extend_from_slice(&[1, 255, 0, 1]);
        b.put_u64_le(2);
        b.extend_from_slice(b"ab");
        b.put_u64_le(7);
        b.put_u64_le(8);
        let name = "Variant(String, UInt64)";
        let ty = DataType::parse(name).unwrap();
        let data = column(&ty, 4, &b);
        let v = ColumnView::new("v", &ty, name, &data);
        let var = v.as_variant().unwrap();
        assert!(matches!(var.alts, Cow::Borrowed(_)), "the alternatives were copied");
        assert_eq!((var.len(), var.variant_count()), (4, 2));
        assert_eq!(var.variant_types(), [DataType::String, DataType::UInt64]);
        assert_eq!(var.discriminators(), [1, 255, 0, 1]);
        assert_eq!(var.offsets().unwrap(), [0, 0, 0, 1]);
        assert_eq!((var.discriminator(1), var.is_null(1)), (None, true));
        assert_eq!(var.row(3), Some((1, 1)));
        let (col, at) = var.value(3).unwrap().unwrap();
        assert!(matches!(col.ty, Cow::Borrowed(_)) && col.type_name.is_none());
        assert_eq!((col.type_name().as_ref(), col.values::<u64>().unwrap()[at]), ("UInt64", 8));
        let (col, at) = var.value(2).unwrap().unwrap();
        assert_eq!(col.as_strings().unwrap().str(at).unwrap(), "ab");
        assert!(var.value(1).unwrap().is_none());
        assert!(matches!(var.variant(2), Err(ProtoError::Violation(_))));
        assert!(v.as_dynamic().is_err() && v.as_json().is_err());
    }
}
