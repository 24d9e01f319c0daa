//! The support code of `#[derive(Row)]`, `#[derive(Enum)]` and `#[derive(Variant)]`:
//! what their generated code calls (through [`crate::__private`]), not public API.

use crate::view::ColumnView;
use crate::DataType;

use super::{field_mismatch, plain, ColumnBuffer, Field, FromColumn, Row, RowWrite};
use crate::row::{RowError as Error, RowResult as Result};

/// Why `T` cannot read a column of type `ty` ([`FromColumn::refusal`]), with
/// LowCardinality and SimpleAggregateFunction wrappers stripped like [`accepts`](super::accepts).
pub fn refusal<'r, T: FromColumn<'r>>(ty: &DataType) -> Option<&'static str> {
    match plain(ty) {
        DataType::LowCardinality(t) => T::refusal(t),
        t => T::refusal(t),
    }
}

/// The error for a row index past the end of column `column` (a corrupt or
/// inconsistent block; used by derived readers).
#[cold]
#[inline(never)]
pub fn out_of_bounds(column: &str, i: usize) -> Error {
    Error::from(crate::ProtoError::violation(format!("column `{column}`: index {i} is out of bounds")))
}

/// Binds a row type's fields to a result's columns by name and checks their types
/// ([`Row::bind`] of derived rows). Returns the column index of each field (`None`
/// for an absent default field).
pub fn bind_by_name<T: Row + ?Sized>(columns: &[crate::Column]) -> Result<Vec<Option<usize>>> {
    let mut out = Vec::with_capacity(T::FIELDS.len());
    for f in T::FIELDS {
        match columns.iter().position(|c| c.name() == f.column) {
            Some(idx) => {
                let c = &columns[idx];
                if !(f.accepts)(c.data_type()) {
                    return Err(field_mismatch::<T>(f, c.type_name(), (f.refusal)(c.data_type())));
                }
                out.push(Some(idx));
            }
            None if f.default => out.push(None),
            None => {
                return Err(Error::invalid_input(format!(
                    "the result has no column `{}` for field `{}` of {} (mark the field #[row(default)] if it may be absent)",
                    f.column,
                    f.field,
                    T::NAME
                )))
            }
        }
    }
    if !T::IGNORE_EXTRA_COLUMNS {
        let extra: Vec<&str> =
            columns.iter().map(|c| c.name()).filter(|n| !T::FIELDS.iter().any(|f| f.column == *n)).collect();
        if !extra.is_empty() {
            return Err(Error::invalid_input(format!(
                "the result has column(s) {} that no field of {} reads (add #[row(ignore_extra_columns)] to allow this)",
                extra.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", "),
                T::NAME
            )));
        }
    }
    Ok(out)
}

/// Whether a Tuple type can be read as the row struct `T` (a field of another
/// row): with named elements, by name like a result's columns; with unnamed
/// ones, by position.
pub fn tuple_accepts<T: Row + ?Sized>(ty: &DataType) -> bool {
    let DataType::Tuple(elems) = ty else { return false };
    if elems.iter().all(|(n, _)| n.is_some()) {
        let named = |f: &Field| elems.iter().find(|(n, _)| n.as_deref() == Some(f.column));
        T::FIELDS.iter().all(|f| match named(f) {
            Some((_, t)) => (f.accepts)(t),
            None => f.default,
        }) && (T::IGNORE_EXTRA_COLUMNS
            || elems.iter().all(|(n, _)| T::FIELDS.iter().any(|f| n.as_deref() == Some(f.column))))
    } else {
        elems.len() == T::FIELDS.len() && T::FIELDS.iter().zip(elems).all(|(f, (_, t))| (f.accepts)(t))
    }
}

/// The element views of a Tuple column in `T`'s field order (see [`tuple_accepts`]).
pub fn tuple_columns<'r, T: Row + ?Sized>(view: &ColumnView<'r>) -> Result<Vec<Option<ColumnView<'r>>>> {
    let shape = view.data_type().wire_shape().into_owned();
    let DataType::Tuple(elems) = shape else {
        return Err(Error::from(crate::ProtoError::TypeMismatch {
            column: view.name().into(),
            requested: T::NAME.into(),
            actual: view.type_name().into(),
        }));
    };
    let by_name = elems.iter().all(|(n, _)| n.is_some());
    T::FIELDS
        .iter()
        .enumerate()
        .map(|(k, f)| {
            let idx = if by_name { elems.iter().position(|(n, _)| n.as_deref() == Some(f.column)) } else { Some(k) };
            idx.map(|i| view.tuple_element(i)).transpose().map_err(Error::from)
        })
        .collect()
}

/// The reader of a Variant column for a `#[derive(chnative::Variant)]` enum: which
/// Rust variant reads each alternative of the column's type, bound once per block.
pub struct VariantReader<'r> {
    view: crate::view::VariantView<'r>,
    /// For alternative `k` of the column type, the Rust variant that reads it.
    bind: Vec<usize>,
    column: &'r str,
}

/// Whether an enum whose variants are picked by `pick` can read a column of type `ty`:
/// a Variant whose every alternative some Rust variant reads.
pub fn variant_accepts(ty: &DataType, pick: fn(&DataType) -> Option<usize>) -> bool {
    matches!(ty, DataType::Variant(alts) if alts.iter().all(|a| pick(a).is_some()))
}

impl<'r> VariantReader<'r> {
    /// Binds the alternatives of a Variant column to Rust variants with `pick`.
    pub fn new(view: &ColumnView<'r>, pick: fn(&DataType) -> Option<usize>) -> Result<Self> {
        let v = view.as_variant()?;
        let bind = v
            .variant_types()
            .iter()
            .map(|t| {
                pick(t).ok_or_else(|| {
                    Error::from(crate::ProtoError::TypeMismatch {
                        column: view.name().into(),
                        requested: "a Rust variant for each alternative".into(),
                        actual: view.type_name().into(),
                    })
                })
            })
            .collect::<Result<_>>()?;
        Ok(VariantReader { view: v, bind, column: view.name() })
    }

    /// Number of alternatives in the column's type.
    pub fn alternatives(&self) -> usize {
        self.bind.len()
    }

    /// The Rust variant that reads alternative `k`.
    pub fn bound(&self, k: usize) -> usize {
        self.bind[k]
    }

    /// The column of alternative `k`.
    pub fn alternative(&self, k: usize) -> Result<ColumnView<'r>> {
        Ok(self.view.variant(k)?)
    }

    /// For row `i`: the Rust variant, the alternative and the row within it; `None` for NULL.
    #[inline]
    pub fn row(&self, i: usize) -> Result<Option<(usize, usize, usize)>> {
        if i >= self.view.len() {
            return Err(out_of_bounds(self.column, i));
        }
        Ok(self.view.row(i).map(|(k, at)| (self.bind[k], k, at)))
    }

    /// The error for a NULL read into an enum that cannot hold one.
    pub fn null_error(&self, i: usize) -> Error {
        Error::invalid_input(format!("column `{}` row {i} is NULL; read the Variant as Option<…>", self.column))
    }

    /// Whether row `i` is NULL.
    pub fn is_null(&self, i: usize) -> bool {
        self.view.is_null(i)
    }
}

/// The write side of a `#[derive(Variant)]` enum: which of the column's
/// alternatives each Rust alternative goes to (bound once, when the INSERT's header
/// arrives) and one discriminator per row. The derive keeps one buffer per Rust
/// alternative beside it.
#[derive(Debug)]
pub struct VariantSlots {
    /// Per Rust alternative, its column alternative's type.
    types: Vec<DataType>,
    /// Per row, the Rust alternative, or `VARIANT_NULL`.
    discriminators: Vec<u8>,
}

impl VariantSlots {
    /// Binds each Rust alternative (`names[j]`, written when `writes[j]` accepts the
    /// type) to a distinct alternative of the Variant column `ty`; the first that
    /// accepts it wins. Every Rust alternative must find one.
    pub fn new(enum_name: &str, names: &[&str], writes: &[fn(&DataType) -> bool], ty: &DataType) -> Result<Self> {
        let DataType::Variant(alts) = ty else {
            return Err(Error::invalid_input(format!(
                "the Variant enum {enum_name} cannot be written to a {ty} column"
            )));
        };
        let mut taken = vec![false; alts.len()];
        let mut types = Vec::with_capacity(writes.len());
        for (j, w) in writes.iter().enumerate() {
            let Some(k) = (0..alts.len()).find(|&k| !taken[k] && w(&alts[k])) else {
                return Err(Error::invalid_input(format!(
                    "the alternative {}::{} fits none of the (remaining) alternatives of {ty}",
                    enum_name,
                    names.get(j).copied().unwrap_or("?")
                )));
            };
            taken[k] = true;
            types.push(alts[k].clone());
        }
        Ok(VariantSlots { types, discriminators: Vec::new() })
    }

    /// Whether every Rust alternative binds to an alternative of `ty`.
    pub fn fits(writes: &[fn(&DataType) -> bool], ty: &DataType) -> bool {
        VariantSlots::new("", &[], writes, ty).is_ok()
    }

    /// The column alternative Rust alternative `j` writes to.
    pub fn alternative(&self, j: usize) -> &DataType {
        &self.types[j]
    }

    /// Records a row of Rust alternative `j` (its value went into buffer `j`).
    #[inline]
    pub fn push(&mut self, j: u8) {
        self.discriminators.push(j);
    }

    /// Records a NULL row.
    pub fn push_null(&mut self) {
        self.discriminators.push(crate::insert::VARIANT_NULL);
    }

    /// Rows held.
    pub fn len(&self) -> usize {
        self.discriminators.len()
    }

    /// True when no rows are held.
    pub fn is_empty(&self) -> bool {
        self.discriminators.is_empty()
    }

    /// Keeps the first `rows` rows; returns how many of them each Rust alternative
    /// holds (what its buffer must be cut to).
    pub fn truncate(&mut self, rows: usize) -> Vec<usize> {
        self.discriminators.truncate(rows);
        crate::insert::variant_counts(&self.discriminators, self.types.len())
    }

    /// The rows as INSERT data, given each Rust alternative's buffer data in order.
    pub fn data<'s>(&'s self, parts: Vec<crate::insert::InsertData<'s>>) -> crate::insert::InsertData<'s> {
        crate::insert::InsertData::variant(&self.discriminators, self.types.iter().cloned().zip(parts).collect())
    }
}

/// A nested row struct written to a Tuple column: one buffer per field, sent in
/// the tuple's element order (by name when the tuple names its elements).
///
/// Generic over the row's buffers `B` (`T::Buffers`), not the row type: a
/// buffer owns what it holds, so it has no lifetime even when the row borrows
/// (`&'a str` fields), and a client can keep it for its next INSERT. The row
/// type's functions over its buffers are kept as plain function pointers.
pub struct NestedBuffer<B: 'static> {
    buffers: B,
    /// Element `j` of the tuple is field `order[j]`.
    order: Vec<usize>,
    rows: usize,
    row: &'static str,
    columns: for<'b> fn(&'b B) -> Vec<(&'static str, crate::insert::InsertData<'b>)>,
    truncate: fn(&mut B, usize),
    push_default: fn(&mut B),
    bytes: fn(&B) -> usize,
}

impl<B> std::fmt::Debug for NestedBuffer<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NestedBuffer").field("row", &self.row).field("rows", &self.rows).finish()
    }
}

/// Which field fills each element of the Tuple type `ty`, and each field's element
/// type; `None` when some element has no field, a field has no element, or a
/// field cannot be written to its element's type.
fn nested_binding<T: Row + ?Sized>(ty: &DataType) -> Option<(Vec<usize>, Vec<DataType>)> {
    let DataType::Tuple(elems) = ty else { return None };
    if elems.len() != T::FIELDS.len() {
        return None;
    }
    let by_name = elems.iter().all(|(n, _)| n.is_some());
    let mut types: Vec<Option<DataType>> = vec![None; elems.len()];
    let mut order = Vec::with_capacity(elems.len());
    for (j, (name, t)) in elems.iter().enumerate() {
        let k = if by_name { T::FIELDS.iter().position(|f| name.as_deref() == Some(f.column))? } else { j };
        if types[k].is_some() || !(T::FIELDS[k].writes)(t) {
            return None;
        }
        types[k] = Some(t.clone());
        order.push(k);
    }
    Some((order, types.into_iter().collect::<Option<Vec<_>>>()?))
}

/// Whether the nested row `T` can be written to a column of type `ty` (a Tuple).
pub fn nested_writes<T: RowWrite + ?Sized>(ty: &DataType) -> bool {
    nested_binding::<T>(ty).is_some()
}

impl<B: Send + 'static> NestedBuffer<B> {
    /// Empty buffers of the nested row `T` for a Tuple column of type `ty`.
    pub fn new<T: RowWrite<Buffers = B>>(ty: &DataType) -> Result<Self> {
        let (order, types) = nested_binding::<T>(ty).ok_or_else(|| {
            Error::invalid_input(format!(
                "the nested row {} (fields {}) cannot be written to a {ty} column",
                T::NAME,
                T::FIELDS.iter().map(|f| f.column).collect::<Vec<_>>().join(", ")
            ))
        })?;
        Ok(NestedBuffer {
            buffers: T::buffers(&types)?,
            order,
            rows: 0,
            row: T::NAME,
            columns: T::columns,
            truncate: T::truncate,
            push_default: T::push_default,
            bytes: T::bytes,
        })
    }

    /// Appends one row.
    #[inline]
    pub fn push<T: RowWrite<Buffers = B>>(&mut self, row: &T) -> Result<()> {
        T::push(row, &mut self.buffers)?;
        self.rows += 1;
        Ok(())
    }
}

impl<B: Send + 'static> ColumnBuffer for NestedBuffer<B> {
    fn data(&self) -> crate::insert::InsertData<'_> {
        let mut fields: Vec<Option<crate::insert::InsertData<'_>>> =
            (self.columns)(&self.buffers).into_iter().map(|(_, d)| Some(d)).collect();
        let elements = self.order.iter().map(|&k| fields[k].take().unwrap_or(crate::insert::InsertData::Strs(&[])));
        crate::insert::InsertData::tuple(elements.collect())
    }
    fn len(&self) -> usize {
        self.rows
    }
    fn truncate(&mut self, rows: usize) {
        (self.truncate)(&mut self.buffers, rows);
        self.rows = self.rows.min(rows);
    }
    fn push_default(&mut self) {
        (self.push_default)(&mut self.buffers);
        self.rows += 1;
    }
    fn bytes(&self) -> usize {
        (self.bytes)(&self.buffers)
    }
}
