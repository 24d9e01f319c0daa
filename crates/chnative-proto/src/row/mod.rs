//! The type system: which Rust type reads from and writes to which ClickHouse
//! column type. [`FromColumn`] reads a column's values as a Rust type (resolved
//! once per block, then indexed per row), [`ToColumn`] writes them into a column
//! buffer, [`Row`] and [`RowWrite`] do it for a struct of fields (what
//! `#[derive(chnative::Row)]` implements), [`EnumLabels`] maps a Rust enum to an
//! Enum column. Sans-IO: the client (`chnative`) re-exports all of it as
//! `chnative::row` and adds the streams and the inserter.
//!
//! **Lossless widening.** A number field reads its own column type and every
//! narrower one it holds without loss: an unsigned integer into a wider unsigned
//! or a strictly wider signed type (UInt8 into `u16` … `u128`, `i16` … `i128`,
//! [`U256`](crate::convert::U256)/[`I256`](crate::convert::I256); UInt32 into
//! `i64`), a signed one into a wider signed type (Int8 into `i16` … `i128`),
//! Float32 and BFloat16 into `f64`; Date (days) into `i32` like Date32, DateTime
//! (seconds) into `i64` like DateTime64(0). Everything else is refused before any
//! row is read, naming both types. The same rules hold inside `Option`, `Vec`,
//! maps and tuples.

/// Calls `$m!(n; A 0, B 1, …)` for each tuple arity that is a column type (1 to 8
/// elements), so that reading and writing cover the same tuples.
macro_rules! tuple_arities {
    ($m:ident) => {
        $m!(1; A 0);
        $m!(2; A 0, B 1);
        $m!(3; A 0, B 1, C 2);
        $m!(4; A 0, B 1, C 2, E 3);
        $m!(5; A 0, B 1, C 2, E 3, F 4);
        $m!(6; A 0, B 1, C 2, E 3, F 4, G 5);
        $m!(7; A 0, B 1, C 2, E 3, F 4, G 5, H 6);
        $m!(8; A 0, B 1, C 2, E 3, F 4, G 5, H 6, I 7);
    };
}

pub(crate) mod derived;
pub(crate) mod enums;
mod error;
pub(crate) mod from_column;
pub(crate) mod numbers;
mod positional;
#[cfg(test)]
mod tests;
pub(crate) mod to_column;
#[cfg(any(feature = "chrono", feature = "time", feature = "jiff"))]
pub(crate) mod to_temporal;
mod utf8;

use crate::view::{ColumnView, Keys};
use crate::DataType;

use error::{RowError as Error, RowResult as Result};

pub use enums::EnumLabels;
pub use error::{RowError, RowErrorKind, RowResult};
pub use to_column::{writes, ColumnBuffer, ToColumn};

pub(crate) use derived::{out_of_bounds, refusal};
#[doc(hidden)]
pub use positional::check_column as positional_check;

/// What the code `#[derive(Row)]`, `#[derive(Enum)]` and `#[derive(Variant)]`
/// generate names (through `::chnative::__private`): public so that it resolves
/// in the user's crate, hidden from the docs and not part of the API (it changes
/// with the derive, in any release).
#[doc(hidden)]
pub mod __private {
    pub use super::derived::{
        bind_by_name, nested_writes, out_of_bounds, refusal, tuple_accepts, tuple_columns, variant_accepts,
        NestedBuffer, VariantReader, VariantSlots,
    };
    pub use super::enums::{enum_accepts, enum_writes, EnumBuffer, EnumReader};
    pub use super::from_column::{
        ArrayReader, BytesOrArray, DecimalReader, FixedStrings, MapReader, NullableReader, SliceReader, Strings, Values,
    };
    #[cfg(any(feature = "chrono", feature = "time", feature = "jiff"))]
    pub use super::from_column::{DateReader, DateTimeReader, DurationReader};
    pub use super::numbers::{F32Reader, NarrowSink, NumberBuffer, Numbers};
    pub use super::to_column::{
        buffer_for, buffer_of, push_error, ArrayBuffer, DecimalBuffer, FixedBuffer, FixedStringBuffer, MapBuffer,
        NullableBuffer, QBitBuffer, StringBuffer, TupleBuffer, VecBuffer,
    };
    #[cfg(feature = "chrono")]
    pub use super::to_temporal::NaiveDateTimeBuffer;
    #[cfg(any(feature = "chrono", feature = "time", feature = "jiff"))]
    pub use super::to_temporal::{DateBuffer, DateTimeBuffer, DurationBuffer};
    pub use super::{
        accepts, writes, ColumnBuffer, EnumLabels, Field, FromColumn, ReadContext, Reader, Row, RowError, RowResult,
        RowWrite, ToColumn,
    };
    pub use crate::value::ValueBuffer;
}

/// One field of a row struct, as the derive describes it.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    /// The column it binds to (the field name unless renamed).
    pub column: &'static str,
    /// The field's name.
    pub field: &'static str,
    /// The field's Rust type as written, for error messages.
    pub rust_type: &'static str,
    /// Whether the column may be absent from a result (`#[row(default)]`).
    pub default: bool,
    /// Whether the field can be read from a column of this type.
    pub accepts: fn(&DataType) -> bool,
    /// Whether the field can be written to a column of this type.
    pub writes: fn(&DataType) -> bool,
    /// Why the field cannot be read from a column of this type, when there is more
    /// to say than the two types (see [`FromColumn::refusal`]).
    pub refusal: fn(&DataType) -> Option<&'static str>,
}

/// A type that can be read from a result, row by row: a `#[derive(Row)]` struct
/// (columns bound by name; see the [module docs](self)), a single value (`u64`,
/// `String`, `Option<T>`, `Vec<T>`, … : a result of one column) or a tuple of them
/// (`(u64, String)`: columns by position).
///
/// A type that is none of these fails to compile with this message:
///
/// ```text
/// error[E0277]: `Event` is not a row type chnative can read
///   = help: derive it for a struct whose fields are named like the columns: `#[derive(chnative::Row)]`
///   = note: a single value (`u64`, `String`, `Option<T>`, …) reads a one-column result and a tuple
///           `(u64, String)` reads the columns by position; `fetch_scalar::<T>()` reads the first value
///           of the first row
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a row type chnative can read",
    label = "not a row type",
    note = "derive it for a struct whose fields are named like the columns: `#[derive(chnative::Row)]`",
    note = "a single value (`u64`, `String`, `Option<T>`, …) reads a one-column result and a tuple `(u64, String)` reads the columns by position; `fetch_scalar::<T>()` reads the first value of the first row"
)]
pub trait Row {
    /// The struct's name, for error messages.
    const NAME: &'static str;
    /// The fields that bind to columns (skipped fields excluded), in order.
    const FIELDS: &'static [Field];
    /// Whether columns no field reads are allowed.
    const IGNORE_EXTRA_COLUMNS: bool;
    /// The row at the lifetime of the block it borrows from (`Self` for owned rows).
    type Value<'r>;
    /// Per-block state: one resolved reader per field.
    type Readers<'r>;
    /// Resolves each field's reader from its column (`None` for a missing
    /// `#[row(default)]` column), once per block.
    fn readers<'r>(cols: &[Option<ColumnView<'r>>], ctx: &ReadContext) -> Result<Self::Readers<'r>>;
    /// Builds row `i` of the block the readers were resolved from.
    fn read<'r>(readers: &Self::Readers<'r>, i: usize) -> Result<Self::Value<'r>>;
    /// Binds the fields to a result's columns and checks their types, once per
    /// result: the column index of each field, in field order (`None` for an absent
    /// `#[row(default)]` column). Derived rows bind [`FIELDS`](Row::FIELDS) by name;
    /// single values and tuples bind by position.
    fn bind(columns: &[crate::Column]) -> Result<Vec<Option<usize>>> {
        derived::bind_by_name::<Self>(columns)
    }
}

/// A [`Row`] that borrows nothing: what the client's `fetch_all` and friends return.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an owned row type",
    label = "not an owned row type",
    note = "a row type is a `#[derive(chnative::Row)]` struct, a single value (`u64`, `String`, `Option<T>`, …) or a tuple of them `(u64, String)` (columns by position); `fetch_scalar::<T>()` reads the first value of the first row",
    note = "rows that borrow from the block (`&str`, `&[u8]` fields) are read with `fetch::<T<'_>>()` and `next()`: `fetch_*` return owned rows"
)]
pub trait OwnedRow: for<'r> Row<Value<'r> = Self> + 'static {}
impl<T: for<'r> Row<Value<'r> = T> + 'static> OwnedRow for T {}

/// A struct that can be written by an INSERT: transposed into one column buffer
/// per field. Implemented by `#[derive(Row)]`.
pub trait RowWrite: Row {
    /// One buffer per field (owned: a client may keep them for its next INSERT).
    type Buffers: Send + 'static;
    /// Empty buffers for columns of these types (one per field, in field order).
    fn buffers(types: &[DataType]) -> Result<Self::Buffers>;
    /// Appends one row.
    fn push(row: &Self, buffers: &mut Self::Buffers) -> Result<()>;
    /// The buffers as INSERT columns, named.
    fn columns(buffers: &Self::Buffers) -> Vec<(&'static str, crate::insert::InsertData<'_>)>;
    /// Keeps the first `rows` rows (0 clears, keeping the allocations).
    fn truncate(buffers: &mut Self::Buffers, rows: usize);
    /// Bytes the buffered rows hold (about their size on the wire).
    fn bytes(buffers: &Self::Buffers) -> usize;
    /// Appends a placeholder row (under a NULL, when the row is a nested Tuple).
    fn push_default(buffers: &mut Self::Buffers);
}

/// What readers may need beyond the column: the server's time zone (the zone of
/// DateTime columns that name none).
#[derive(Debug, Clone, Default)]
pub struct ReadContext {
    /// The server's time zone.
    pub server_timezone: String,
}

/// A Rust type that can be read from a column.
///
/// `accepts` is the bind-time type check; `reader` runs once per block and
/// resolves the typed view; `read` builds the value of one row by indexing it.
/// LowCardinality and SimpleAggregateFunction wrappers are handled by the caller,
/// so implementations see the plain type.
pub trait FromColumn<'r>: Sized {
    /// The per-block view.
    type Reader;
    /// Whether a column of type `ty` (LowCardinality stripped) can be read as `Self`.
    fn accepts(ty: &DataType) -> bool;
    /// Resolves the view for one block.
    fn reader(view: &ColumnView<'r>, ctx: &ReadContext) -> Result<Self::Reader>;
    /// The value of row `i`.
    fn read(reader: &Self::Reader, i: usize) -> Result<Self>;
    /// The value for a NULL of a LowCardinality(Nullable(T)) column (`Some(None)`
    /// for `Option<T>`; other types cannot hold one).
    fn null() -> Option<Self> {
        None
    }
    /// Whether `Vec<Self>` / `&[Self]` may also read String columns (true for `u8`).
    const BYTE: bool = false;
    /// String bytes as `Vec<Self>` (only when [`Self::BYTE`]).
    fn bytes_to_vec(_bytes: &[u8]) -> Option<Vec<Self>> {
        None
    }
    /// String bytes as `&[Self]` (only when [`Self::BYTE`]).
    fn bytes_as_slice(_bytes: &'r [u8]) -> Option<&'r [Self]> {
        None
    }
    /// Whether `Vec<Self>` may read the vectors of a QBit column of this element
    /// type (`f32`: Float32 and BFloat16, `f64`: Float64).
    fn reads_qbit(_element: crate::qbit::Element) -> bool {
        false
    }
    /// Whether row `i` is a NULL that `Self` cannot hold (a Variant's), so that
    /// `Option<Self>` reads it as `None`.
    fn is_null(_reader: &Self::Reader, _i: usize) -> bool {
        false
    }
    /// Vector `i` of a QBit column (only when [`Self::reads_qbit`]).
    fn qbit_row(_view: &crate::qbit::QBitView<'r>, _i: usize) -> Option<Result<Vec<Self>>> {
        None
    }
    /// Why a column of type `ty` that [`accepts`](Self::accepts) refuses cannot be
    /// read as `Self`, when there is more to say than the two types: `"narrowing"`
    /// for a number column wider than a number type. Shown in the type-mismatch
    /// error.
    fn refusal(_ty: &DataType) -> Option<&'static str> {
        None
    }
}

/// The type a column's values have, under SimpleAggregateFunction wrappers.
pub(crate) fn plain(ty: &DataType) -> &DataType {
    match ty {
        DataType::SimpleAggregateFunction(_, t) => plain(t),
        t => t,
    }
}

/// Whether `T` can be read from a column of type `ty` (LowCardinality and
/// SimpleAggregateFunction wrappers included): the check a typed row, a single
/// value and the client's `fetch_scalar` make before reading. Every pair it
/// accepts, [`writes`] accepts too.
///
/// ```
/// use chnative_proto::DataType;
/// let int8 = DataType::parse("LowCardinality(Nullable(Int8))").unwrap();
/// assert!(chnative_proto::row::accepts::<Option<i64>>(&int8)); // widened losslessly
/// assert!(!chnative_proto::row::accepts::<Option<u8>>(&int8)); // -1 does not fit
/// ```
pub fn accepts<'r, T: FromColumn<'r>>(ty: &DataType) -> bool {
    match plain(ty) {
        DataType::LowCardinality(t) => T::accepts(t),
        // Geo types are tuples and arrays of them on the wire.
        t @ (DataType::Point
        | DataType::Ring
        | DataType::LineString
        | DataType::MultiLineString
        | DataType::Polygon
        | DataType::MultiPolygon) => T::accepts(&t.wire_shape()),
        t => T::accepts(t),
    }
}

struct LcKeys<'r> {
    keys: Keys<'r>,
    nullable: bool,
    dict_len: usize,
}

/// A column read as `T`, resolved once per block: the type's own reader, plus
/// the keys when the column is LowCardinality (values are then read from the
/// dictionary). What a derived row holds per field; also usable alone.
pub struct Reader<'r, T: FromColumn<'r>> {
    inner: T::Reader,
    lc: Option<LcKeys<'r>>,
    column: &'r str,
}

impl<'r, T: FromColumn<'r>> Reader<'r, T> {
    /// Resolves the reader of one column for one block.
    pub fn new(view: &ColumnView<'r>, ctx: &ReadContext) -> Result<Self> {
        if let DataType::LowCardinality(_) = view.data_type() {
            let lc = view.as_low_cardinality()?;
            let dict = lc.dictionary().clone();
            let nullable =
                matches!(view.data_type(), DataType::LowCardinality(t) if matches!(**t, DataType::Nullable(_)));
            return Ok(Reader {
                inner: T::reader(&dict, ctx)?,
                lc: Some(LcKeys { keys: lc.keys(), nullable, dict_len: dict.len() }),
                column: view.name(),
            });
        }
        Ok(Reader { inner: T::reader(view, ctx)?, lc: None, column: view.name() })
    }

    /// The reader of field `k` (whose column binding guarantees is present).
    pub fn required(cols: &[Option<ColumnView<'r>>], k: usize, ctx: &ReadContext) -> Result<Self> {
        match cols.get(k) {
            Some(Some(v)) => Self::new(v, ctx),
            _ => Err(Error::internal(format!("field {k} has no bound column"))),
        }
    }

    /// The reader of a `#[row(default)]` field, `None` when its column is absent.
    pub fn optional(cols: &[Option<ColumnView<'r>>], k: usize, ctx: &ReadContext) -> Result<Option<Self>> {
        match cols.get(k) {
            Some(Some(v)) => Self::new(v, ctx).map(Some),
            _ => Ok(None),
        }
    }

    /// The value at row `i`.
    #[inline(always)]
    pub fn get(&self, i: usize) -> Result<T> {
        match &self.lc {
            None => T::read(&self.inner, i),
            Some(lc) => self.get_keyed(lc, i),
        }
    }

    /// The value at row `i` of a LowCardinality column. Out of line: a derived row
    /// inlines `get` once per field, and keeping this arm out of it keeps a wide
    /// row's read small enough for the instruction cache (one copy per field type).
    #[inline(never)]
    fn get_keyed(&self, lc: &LcKeys<'r>, i: usize) -> Result<T> {
        if i >= lc.keys.len() {
            return Err(out_of_bounds(self.column, i));
        }
        let k = lc.keys.get(i);
        if lc.nullable && k == 0 {
            return T::null().ok_or_else(|| {
                Error::invalid_input(format!("column `{}` row {i} is NULL; read it into an Option", self.column))
            });
        }
        if k >= lc.dict_len {
            return Err(out_of_bounds(self.column, k));
        }
        T::read(&self.inner, k)
    }
}

/// A Map(K, V)'s entries as the wire has them: Tuple(K, V), read and written as pairs.
fn map_entry(k: &DataType, v: &DataType) -> DataType {
    DataType::Tuple(vec![(None, k.clone()), (None, v.clone())])
}

/// The error for field `f` of `T` and a column of type `type_name` it cannot read
/// or be written to, with the reason when there is one (`narrowing`).
#[doc(hidden)]
pub fn field_mismatch<T: Row + ?Sized>(f: &Field, type_name: &str, why: Option<&str>) -> Error {
    let why = why.map(|w| format!("{w}; ")).unwrap_or_default();
    Error::type_mismatch(f.column, format!("{} ({why}field `{}` of {})", f.rust_type, f.field, T::NAME), type_name)
}
