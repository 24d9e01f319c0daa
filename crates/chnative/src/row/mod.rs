//! Typed rows: `#[derive(Row)]` structs read from a SELECT and written by an INSERT.
//!
//! ```no_run
//! # async fn demo(client: &mut chnative::Client) -> chnative::Result<()> {
//! #[derive(chnative::Row, Debug)]
//! struct Event<'a> {
//!     id: u64,
//!     #[row(rename = "name")]
//!     label: &'a str,         // borrowed from the block: no allocation per row
//!     tags: Vec<String>,      // Array(String)
//!     score: Option<f64>,     // Nullable(Float64)
//! }
//! let mut rows = client.fetch::<Event<'_>>("SELECT id, name, tags, score FROM events").await?;
//! while let Some(e) = rows.next().await? {
//!     println!("{} {} {:?} {:?}", e.id, e.label, e.tags, e.score);
//! }
//! # Ok(()) }
//! ```
//!
//! **How it works.** When the result's header arrives, every field is bound to
//! its column by name once, and the field's Rust type is checked against the
//! column's ClickHouse type ([`FromColumn::accepts`]) before any row is produced.
//! For each block, each field then resolves its typed view once
//! ([`FromColumn::reader`]: a `&[u64]`, a string view, offsets plus an inner
//! reader, …), and rows are built by plain indexing into those views
//! ([`FromColumn::read`]), without dynamic dispatch, boxing or lookups per value.
//!
//! **Lossless widening.** A number field reads its own column type and every
//! narrower one it holds without loss: an unsigned integer into a wider unsigned
//! or a strictly wider signed type (UInt8 into `u16` … `u128`, `i16` … `i128`,
//! [`U256`](crate::U256)/[`I256`](crate::I256); UInt32 into `i64`), a signed one
//! into a wider signed type (Int8 into `i16` … `i128`), Float32 and BFloat16 into
//! `f64`; Date (days) into `i32` like Date32, DateTime (seconds) into `i64` like
//! DateTime64(0). Everything else is refused when the result's header arrives,
//! naming both types: ``column `x` is UInt64, not u8 (narrowing; field `x` of
//! Event)``. The widening is decided once per column per block (a narrower column
//! is widened into a buffer then); a column of the field's own type is read in
//! place, as before. The same rules hold inside `Option`, `Vec`, maps and tuples,
//! and for [`crate::Client::fetch_scalar`].
//!
//! **Single values and tuples.** A one-column result reads as a single value
//! (`client.fetch_one::<u64>("SELECT count() FROM t")`, any [`FromColumn`] type),
//! and several columns as a tuple of up to 12 of them, by position
//! (`client.fetch_all::<(u64, String)>("SELECT id, name FROM t")`). The number of
//! columns must match. Their elements are owned (`String`, not `&str`): rows
//! that borrow need a derived struct.
//!
//! **Attributes.** On a field: `#[row(rename = "column")]`, `#[row(skip)]` (not
//! read or written; filled with `Default`), `#[row(default)]` (the column may be
//! missing from a result; the field is then `Default`). On the struct:
//! `#[row(ignore_extra_columns)]` lets a result carry columns no field reads
//! (without it they are an error, so a typo in a rename is caught).
//!
//! **Nested rows and enums.** A derived struct can be a field: it reads a Tuple
//! column (named elements by name, unnamed ones by position) and, in a `Vec`, a
//! Nested column. `#[derive(chnative::Enum)]` maps a Rust enum of unit variants
//! to an Enum8/Enum16 column by label ([`EnumLabels`]).
//!
//! **Borrowed rows** (`&str`, `&[u8]`, `&[T]` fields) borrow the stream like
//! blocks do, so a row must be dropped before the next call to `next()`:
//!
//! ```compile_fail
//! # async fn f(client: &mut chnative::Client) -> chnative::Result<()> {
//! #[derive(chnative::Row)]
//! struct Name<'a> { name: &'a str }
//! let mut rows = client.fetch::<Name<'_>>("SELECT toString(number) AS name FROM numbers(2)").await?;
//! let first = rows.next().await?;
//! let second = rows.next().await?; // error: `rows` is still borrowed by `first`
//! println!("{:?}", first.map(|r| r.name));
//! # Ok(()) }
//! ```
//!
//! The traits and the conversions of each Rust type (everything but the streams
//! and the inserter, which need a connection) live in the sans-IO crate as
//! `chnative_proto::row` and are re-exported here: they can be tested without a
//! server, and their error is [`RowError`], which converts into [`crate::Error`]
//! with the same kind and text.

mod insert;
pub(crate) mod kept;
mod stream;

pub use chnative_proto::row::{
    accepts, writes, ColumnBuffer, EnumLabels, Field, FromColumn, OwnedRow, ReadContext, Reader, Row, RowError,
    RowErrorKind, RowResult, RowWrite, ToColumn,
};
pub(crate) use chnative_proto::row::{field_mismatch, positional_check};
pub(crate) use insert::{send_rows, TypedChunks, ValueChunks};
pub use insert::{Inserter, DEFAULT_MAX_BYTES, DEFAULT_MAX_ROWS};
pub use stream::{BlockRows, RowStream};
