//! What the code `#[derive(Row)]`, `#[derive(Enum)]` and `#[derive(Variant)]`
//! generate names (`::chnative::__private::…`): public so that it resolves in
//! the user's crate, hidden from the docs and not part of the API (it changes
//! with the derive, in any release). The per-block readers
//! ([`FromColumn::Reader`]) and insert buffers ([`ToColumn::Buffer`]) of the
//! supported field types, the helpers a derived impl calls, and the traits they
//! implement (so that generated code needs this one path).

pub use crate::row::derived::{
    bind_by_name, nested_writes, out_of_bounds, refusal, tuple_accepts, tuple_columns, variant_accepts, NestedBuffer,
    VariantReader, VariantSlots,
};
pub use crate::row::enums::{enum_accepts, enum_writes, EnumBuffer, EnumReader};
pub use crate::row::from_column::{
    ArrayReader, BytesOrArray, DecimalReader, FixedStrings, MapReader, NullableReader, SliceReader, Strings, Values,
};
#[cfg(any(feature = "chrono", feature = "time", feature = "jiff"))]
pub use crate::row::from_column::{DateReader, DateTimeReader, DurationReader};
pub use crate::row::numbers::{F32Reader, NarrowSink, NumberBuffer, Numbers};
pub use crate::row::to_column::{
    buffer_for, buffer_of, push_error, ArrayBuffer, DecimalBuffer, FixedBuffer, FixedStringBuffer, MapBuffer,
    NullableBuffer, QBitBuffer, StringBuffer, TupleBuffer, VecBuffer,
};
#[cfg(feature = "chrono")]
pub use crate::row::to_temporal::NaiveDateTimeBuffer;
#[cfg(any(feature = "chrono", feature = "time", feature = "jiff"))]
pub use crate::row::to_temporal::{DateBuffer, DateTimeBuffer, DurationBuffer};
pub use crate::row::{
    accepts, writes, ColumnBuffer, EnumLabels, Field, FromColumn, ReadContext, Reader, Row, RowWrite, ToColumn,
};
pub use crate::value_insert::ValueBuffer;
