//! Borrowed, typed views of column data.
//!
//! Fixed-width columns are `&[T]` straight over the column buffer; strings are
//! one blob plus end offsets. Asking for a type the column does not have is a
//! [`ProtoError::TypeMismatch`] naming the column and both types.
//!
//! One module per family: fixed-width values, strings, the wrappers that nest a
//! column (Nullable, Array, Tuple, LowCardinality), Variant, Dynamic, JSON and
//! aggregate-function states.
//! A view only borrows: a view walks the column's *shape* (its type with Map,
//! Nested, geo aliases and the like resolved to the structure on the wire, which
//! the column resolves once per type), so a nested view borrows both its type and
//! its shape from its parent and builds nothing; its type name is rendered only
//! when asked. (Views of Dynamic and JSON sub-columns resolve their shape when the
//! view is made, which allocates only for types that have aliases inside.)

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
    /// `ty` as the wire has it, at every level ([`DataType::view_shape`]).
    shape: Cow<'a, DataType>,
    /// The server's spelling for a top-level column; `None` for a nested part, whose
    /// name is rendered from `ty` only when asked for.
    type_name: Option<&'a str>,
    data: &'a ColumnData,
    /// For the entries of a Map (the tuples of its `Array(Tuple(K, V))` shape),
    /// the Map's declared type: the key and value elements take their declared
    /// types from it (a Map key or value is a Map, not an array of tuples).
    map: Option<Cow<'a, DataType>>,
}

impl<'a> ColumnView<'a> {
    /// A view that resolves its shape now (allocates only for types with aliases).
    pub(crate) fn new(name: &'a str, ty: &'a DataType, type_name: &'a str, data: &'a ColumnData) -> Self {
        ColumnView { name, ty: Cow::Borrowed(ty), shape: ty.view_shape(), type_name: Some(type_name), data, map: None }
    }

    /// A view of a type whose shape is resolved already.
    pub(crate) fn with_shape(
        name: &'a str,
        ty: &'a DataType,
        shape: &'a DataType,
        type_name: &'a str,
        data: &'a ColumnData,
    ) -> Self {
        ColumnView {
            name,
            ty: Cow::Borrowed(ty),
            shape: Cow::Borrowed(shape),
            type_name: Some(type_name),
            data,
            map: None,
        }
    }

    /// A view of a part of this column, named after it: `pick` chooses the part of
    /// the shape, and of the declared type when the declared type spells it (a Map's
    /// key/value tuple and a geo type's parts exist only in the shape).
    fn child(&self, pick: impl Fn(&DataType) -> Option<&DataType>, data: &'a ColumnData) -> Option<ColumnView<'a>> {
        let shape = project(self.shape.clone(), &pick)?;
        let ty = project(self.ty.clone(), &pick).unwrap_or_else(|| shape.clone());
        Some(ColumnView { name: self.name, ty, shape, type_name: None, data, map: None })
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
fn project<'a>(ty: Cow<'a, DataType>, pick: &impl Fn(&DataType) -> Option<&DataType>) -> Option<Cow<'a, DataType>> {
    match ty {
        Cow::Borrowed(t) => pick(t).map(Cow::Borrowed),
        Cow::Owned(t) => pick(&t).cloned().map(Cow::Owned),
    }
}

/// Gives a closure the signature `child` needs (inference alone ties the two lifetimes apart).
fn picker<F: for<'t> Fn(&'t DataType) -> Option<&'t DataType>>(f: F) -> F {
    f
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
