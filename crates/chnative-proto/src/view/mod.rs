//! Borrowed, typed views of column data.
//!
//! Fixed-width columns are `&[T]` straight over the column buffer; strings are
//! one blob plus end offsets. Asking for a type the column does not have is a
//! [`ProtoError::TypeMismatch`] naming the column and both types.
//!
//! One module per family: fixed-width values, strings, the wrappers that nest a
//! column (Nullable, Array, Tuple, LowCardinality), Variant, Dynamic, JSON and
//! aggregate-function states.
//! A view only borrows: a nested view borrows its type from its parent's (a
//! Map's key/value tuple and the geo aliases, whose wire shape is not spelled in
//! the type, are the exceptions), and its type name is rendered only when asked.

use std::borrow::Cow;

use crate::column::ColumnData;
use crate::error::ProtoError;
use crate::types::DataType;

mod aggregate;
mod dynamic;
mod fixed;
mod json;
mod nested;
mod strings;
mod variant;

pub use aggregate::AggregateStatesView;
pub use dynamic::DynamicView;
pub use fixed::{FixedValue, WireUuid};
pub use json::{JsonValue, JsonView, OwnedValue};
pub use nested::{ArrayView, Keys, LowCardinalityView, NullableView};
pub use strings::StrView;
pub use variant::VariantView;

use DataType as D;

/// A view of one column (or of a nested part of one).
#[derive(Debug, Clone)]
pub struct ColumnView<'a> {
    name: &'a str,
    ty: Cow<'a, DataType>,
    /// The server's spelling for a top-level column; `None` for a nested part, whose
    /// name is rendered from `ty` only when asked for.
    type_name: Option<&'a str>,
    data: &'a ColumnData,
}

impl<'a> ColumnView<'a> {
    pub(crate) fn new(name: &'a str, ty: &'a DataType, type_name: &'a str, data: &'a ColumnData) -> Self {
        ColumnView { name, ty: Cow::Borrowed(ty), type_name: Some(type_name), data }
    }

    /// A view of a part of this column, named after it.
    fn child(&self, ty: Cow<'a, DataType>, data: &'a ColumnData) -> ColumnView<'a> {
        ColumnView { name: self.name, ty, type_name: None, data }
    }

    /// The column's type as it is on the wire (geo aliases, Nested and
    /// SimpleAggregateFunction resolved), borrowed for `'a` when this view borrows its type.
    fn shape(&self) -> Cow<'a, DataType> {
        match &self.ty {
            Cow::Borrowed(t) => t.wire_shape(),
            Cow::Owned(t) => Cow::Owned(t.wire_shape().into_owned()),
        }
    }

    /// The column's name.
    pub fn name(&self) -> &'a str {
        self.name
    }

    /// The type name: as the server spelled it for top-level columns, rendered from
    /// the type for nested parts.
    pub fn type_name(&self) -> Cow<'_, str> {
        match self.type_name {
            Some(n) => Cow::Borrowed(n),
            None => Cow::Owned(self.ty.to_string()),
        }
    }

    fn mismatch(&self, requested: &str) -> ProtoError {
        ProtoError::TypeMismatch {
            column: self.name.to_string(),
            requested: requested.to_string(),
            actual: self.type_name().into_owned(),
        }
    }

    /// The column's type.
    pub fn data_type(&self) -> &DataType {
        &self.ty
    }

    /// The underlying storage.
    pub fn data(&self) -> &'a ColumnData {
        self.data
    }

    /// Rows in this view.
    pub fn len(&self) -> usize {
        self.data.rows()
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A part of `ty` picked by `pick`, borrowed when `ty` is.
fn project<'a>(ty: Cow<'a, DataType>, pick: impl Fn(&DataType) -> Option<&DataType>) -> Option<Cow<'a, DataType>> {
    match ty {
        Cow::Borrowed(t) => pick(t).map(Cow::Borrowed),
        Cow::Owned(t) => pick(&t).cloned().map(Cow::Owned),
    }
}

fn strip_simple_agg(t: &DataType) -> &DataType {
    match t {
        D::SimpleAggregateFunction(_, t) => t,
        t => t,
    }
}

#[cfg(test)]
mod test_util {
    use crate::buffer::BufferPool;
    use crate::column::ColumnData;
    use crate::types::DataType;

    /// A column of `ty` holding the given rows of Native data (no prefix), at the current layout.
    pub(crate) fn column(ty: &DataType, rows: usize, bytes: &[u8]) -> ColumnData {
        let mut pool = BufferPool::new();
        let mut c = ColumnData::for_type(ty, &mut pool).unwrap();
        let mut r = crate::wire::Reader::new(bytes);
        c.read_prefix(&mut r).unwrap();
        c.read_data(&mut r, rows, None, crate::column::Layout::for_revision(54492), &mut pool).unwrap();
        assert_eq!(r.remaining(), 0);
        c
    }
}
