//! Dynamic columns: per row, a type of the block's type list and a value in that type's column.

use std::borrow::Cow;

use super::{ColumnView, D};
use crate::column::{ColumnData, DynamicData};
use crate::error::{ProtoError, Result};
use crate::types::DataType;

impl<'a> ColumnView<'a> {
    /// A Dynamic column.
    pub fn as_dynamic(&self) -> Result<DynamicView<'a>> {
        match (self.ty.as_ref(), self.data) {
            (D::Dynamic { .. }, ColumnData::Dynamic(d)) => Ok(DynamicView { name: self.name, data: d }),
            _ => Err(self.mismatch("Dynamic")),
        }
    }
}

/// A Dynamic column: the types of this block's values and, per row, its type and value.
///
/// [`Self::types`] lists the types the block declares (in the order of its
/// structure prefix), then the types found among the values the server moved to the
/// shared variant (beyond `max_types`), which are decoded here into columns of
/// their own. Rows of a type with no RowBinary decoder here (e.g. a JSON value
/// inside Dynamic's shared variant) report [`ProtoError::Type`] from [`Self::value`];
/// their raw bytes stay available through [`Self::shared_bytes`].
#[derive(Debug, Clone, Copy)]
pub struct DynamicView<'a> {
    pub(super) name: &'a str,
    pub(super) data: &'a DynamicData,
}

impl<'a> DynamicView<'a> {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.data.rows()
    }
    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The structure version the server used (1 = V1, 2 = V2, 3 = FLATTENED).
    pub fn version(&self) -> u64 {
        self.data.version
    }
    /// The type names this block's structure prefix declares (without SharedVariant).
    pub fn declared_types(&self) -> &'a [String] {
        &self.data.type_names
    }
    /// Number of types with values in this block's type list (declared + shared).
    pub fn type_count(&self) -> usize {
        self.data.types.len()
    }
    /// Type `t` of [`Self::types`].
    pub fn type_at(&self, t: usize) -> Option<&'a DataType> {
        self.data.types.get(t).map(|x| &x.ty)
    }
    /// Name of type `t` (the server's spelling for declared types).
    pub fn type_name_at(&self, t: usize) -> Option<&'a str> {
        self.data.types.get(t).map(|x| x.name.as_str())
    }
    /// All types: declared first, then those found in the shared variant.
    pub fn types(&self) -> impl Iterator<Item = &'a DataType> + 'a {
        self.data.types.iter().map(|x| &x.ty)
    }
    /// The column holding the values of type `t`.
    pub fn column(&self, t: usize) -> Result<ColumnView<'a>> {
        let entry = self
            .data
            .types
            .get(t)
            .ok_or_else(|| ProtoError::violation(format!("column `{}` has no Dynamic type {t}", self.name)))?;
        if let Some(why) = &entry.undecodable {
            return Err(ProtoError::ty(entry.name.clone(), format!("column `{}`: {why}", self.name)));
        }
        let data = self
            .data
            .type_column(t)
            .ok_or_else(|| ProtoError::violation(format!("column `{}`: Dynamic type {t} has no column", self.name)))?;
        Ok(ColumnView {
            name: self.name,
            type_name: Some(&entry.name),
            ty: Cow::Borrowed(&entry.ty),
            shape: entry.ty.view_shape(),
            data,
            map: None,
        })
    }
    /// Index into [`Self::types`] of row `i`'s type; `None` for NULL. Panics if `i >= len()`.
    pub fn type_index(&self, i: usize) -> Option<usize> {
        self.data.row_type(i)
    }
    /// Row `i`'s type; `None` for NULL. Panics if `i >= len()`.
    pub fn row_type(&self, i: usize) -> Option<&'a DataType> {
        self.type_index(i).and_then(|t| self.type_at(t))
    }
    /// Row `i`'s type name, as `dynamicType()` prints it; `None` for NULL.
    pub fn row_type_name(&self, i: usize) -> Option<&'a str> {
        self.type_index(i).and_then(|t| self.type_name_at(t))
    }
    /// Whether row `i` is NULL. Panics if `i >= len()`.
    pub fn is_null(&self, i: usize) -> bool {
        self.type_index(i).is_none()
    }
    /// Row `i` as (view of its type's column, index in it); `None` for NULL.
    pub fn value(&self, i: usize) -> Result<Option<(ColumnView<'a>, usize)>> {
        match self.type_index(i) {
            None => Ok(None),
            Some(t) => Ok(Some((self.column(t)?, self.data.row_index(i)))),
        }
    }
    /// For a row the server stored in the shared variant (V1/V2): its bytes, a binary
    /// type encoding followed by the value in RowBinary.
    pub fn shared_bytes(&self, i: usize) -> Option<&'a [u8]> {
        self.data.shared_bytes(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::test_util::column;
    use crate::wire::WriteExt;

    #[test]
    fn declared_and_shared_types_and_their_rows() {
        // Dynamic V2 declaring String; rows 'ab', NULL, 5::Int64 (from the shared variant).
        let mut b = Vec::new();
        b.put_u64_le(crate::column::DYNAMIC_V2);
        b.put_varuint(1);
        b.put_string("String");
        b.put_u64_le(crate::column::VARIANT_MODE_BASIC);
        // Alternatives by name: SharedVariant, String.
        b.extend_from_slice(&[1, 255, 0]);
        let shared: &[u8] = &[0x0a, 5, 0, 0, 0, 0, 0, 0, 0];
        b.put_u64_le(shared.len() as u64);
        b.extend_from_slice(shared);
        b.put_u64_le(2);
        b.extend_from_slice(b"ab");
        let ty = DataType::Dynamic { max_types: None };
        let data = column(&ty, 3, &b);
        let v = ColumnView::new("d", &ty, "Dynamic", &data);
        let d = v.as_dynamic().unwrap();
        assert_eq!((d.len(), d.version(), d.declared_types()), (3, 2, &["String".to_string()][..]));
        assert_eq!(d.types().collect::<Vec<_>>(), [&DataType::String, &DataType::Int64]);
        assert_eq!((d.row_type_name(0), d.row_type_name(2)), (Some("String"), Some("Int64")));
        assert!(d.is_null(1) && d.row_type(1).is_none());
        let (col, at) = d.value(0).unwrap().unwrap();
        // The type and its name borrow the column's type list.
        assert!(matches!(col.ty, Cow::Borrowed(_)) && col.type_name.is_some());
        assert_eq!(col.as_strings().unwrap().str(at).unwrap(), "ab");
        let (col, at) = d.value(2).unwrap().unwrap();
        assert_eq!(col.values::<i64>().unwrap()[at], 5);
        assert_eq!(d.shared_bytes(2), Some(shared));
        assert_eq!(d.shared_bytes(0), None);
        assert!(matches!(d.column(9), Err(ProtoError::Violation(_))));
        assert!(v.as_variant().is_err());
    }
}
