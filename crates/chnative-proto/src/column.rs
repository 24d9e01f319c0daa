//! Decoded columns: the shapes the Native format has, and their codecs.
//!
//! A [`ColumnData`] is built once from a column's type (its *skeleton*) and then
//! filled block after block, reusing its buffers. Every variant decodes from and
//! encodes to the exact Native bytes, so a column read from a SELECT can be sent
//! back in an INSERT unchanged. Sparse and replicated serializations are
//! materialised to the dense shapes on read.
//!
//! Variant, Dynamic and JSON (module `dynamic`, re-exported here) carry per-block
//! structure in their state prefixes, so [`ColumnData::read_prefix`] reshapes
//! them. What is decoded natively, and which setting to use for what is not:
//!
//! | Type | Native forms decoded | Not decoded → what to do |
//! |---|---|---|
//! | Variant | BASIC (what the server sends) and COMPACT discriminators | — |
//! | Dynamic | V1 (revision < 54473), V2 (≥ 54473), FLATTENED | V3 (not sent on Native by 26.9): error naming `output_format_native_use_flattened_dynamic_and_json_serialization = 1` |
//! | JSON | V1, V2, FLATTENED (typed paths, dynamic paths, shared data), STRING | V3 (not sent by 26.9): error naming both settings below. JSON *text* comes only with `output_format_native_write_json_as_string = 1`; without it, the text accessor fails naming that setting |
//!
//! Values the server moved to Dynamic's shared variant or JSON's shared data are
//! self-describing (binary type + RowBinary) and are decoded by type, except
//! Dynamic, JSON, `Tuple()`, Nothing and aggregate-function values: those rows
//! report [`ProtoError::Type`] (their bytes are length-delimited, so nothing else
//! is affected) and their raw bytes stay available. Sparse or replicated
//! Dynamic/JSON columns are a [`ProtoError::Type`] (never seen from 26.9).

use crate::buffer::BufferPool;
use crate::error::{ProtoError, Result};
use crate::types::DataType;
use crate::wire::{Budget, Reader};

/// Declares [`ColumnData`] from the registry below: one variant per family, the
/// conversions into it, and the `dispatch!` / `dispatch_pair!` macros that every
/// operation goes through (a static `match`, once per column, never per value).
/// `$d` is a literal `$`, so the generated macros can have metavariables.
macro_rules! families {
    ($d:tt $( $(#[$meta:meta])* $variant:ident($payload:ty) = $family:ty ),* $(,)?) => {
        /// The storage of one column, shaped by its type: one variant per family.
        ///
        /// This is the low level: outside this crate a `ColumnData` comes from the
        /// decoders, [`ColumnData::for_type`] and the builders ([`ColumnData::from_values`],
        /// [`ColumnData::from_strings`], [`ColumnData::nullable`], [`ColumnData::array`],
        /// …); the family structs can be read through their accessors but not built or
        /// written. Data becomes a [`crate::Column`] only through [`crate::Column::new`],
        /// which checks it against the type.
        #[derive(Debug, Clone)]
        #[non_exhaustive]
        pub enum ColumnData {
            $( $(#[$meta])* $variant($payload), )*
        }

        /// Wraps a family's storage in its variant. Crate-internal (not `From`), so
        /// data reaches users only from decoders and checked builders.
        pub(crate) trait IntoData {
            fn into_data(self) -> ColumnData;
        }

        $( impl IntoData for $family {
            fn into_data(self) -> ColumnData {
                ColumnData::$variant(self.into())
            }
        } )*

        /// Runs `$body` with `$c` bound to the family inside `$value` (a
        /// `ColumnData`, `&ColumnData` or `&mut ColumnData`).
        macro_rules! dispatch {
            ($d value:expr, $d c:ident => $d body:expr) => {
                match $d value {
                    $( ColumnData::$variant($d c) => $d body, )*
                }
            };
        }

        /// [`dispatch!`] over two columns of the same family; `$other` runs when
        /// the families differ.
        macro_rules! dispatch_pair {
            ($d a:expr, $d b:expr, ($d x:ident, $d y:ident) => $d body:expr, _ => $d other:expr) => {
                match ($d a, $d b) {
                    $( (ColumnData::$variant($d x), ColumnData::$variant($d y)) => $d body, )*
                    _ => $d other,
                }
            };
        }
    };
}

// The registry: one line per family. A family is a struct in its own module that
// owns its buffers and implements `ColumnCodec` (codec.rs), decoding and encoding
// side by side. Variants whose struct has a public constructor are
// `#[non_exhaustive]`, so no variant can be built outside this crate.
families! { $
    /// Any fixed-width type: numbers, dates, UUID, IPs, decimals, enums, FixedString(N), Nothing.
    Fixed(FixedColumn) = FixedColumn,
    /// String: cumulative end offsets (u64 per row) into one byte blob.
    String(StringColumn) = StringColumn,
    /// Nullable(T): one byte per row (1 = NULL) and the inner column (placeholders at NULLs).
    Nullable(NullableColumn) = NullableColumn,
    /// Array(T), Map(K, V) (as Array(Tuple(K, V))), Nested, geo rings and polygons.
    Array(ArrayColumn) = ArrayColumn,
    /// Tuple(T1, …) and Point: one column per element.
    Tuple(TupleColumn) = TupleColumn,
    /// LowCardinality(T): a dictionary and one key per row.
    LowCardinality(LowCardinalityColumn) = LowCardinalityColumn,
    /// Variant(T1, …): discriminators plus one dense column per alternative.
    #[non_exhaustive]
    Variant(Box<VariantData>) = VariantData,
    /// Dynamic: the per-block type list and the values (see [`DynamicData`]).
    #[non_exhaustive]
    Dynamic(Box<DynamicData>) = DynamicData,
    /// JSON: typed paths, dynamic paths and shared data, or text (see [`JsonData`]).
    #[non_exhaustive]
    Json(Box<JsonData>) = JsonData,
    /// Rows that delimit themselves, kept as they came (aggregate-function states).
    Delimited(DelimitedColumn) = DelimitedColumn,
}

// The families (one module each).
mod array;
mod fixed;
mod low_cardinality;
mod nullable;
mod string;
mod tuple;

mod dynamic;
mod json;
mod variant;

mod aggregate;
mod delimited;

// Jobs that cut across the families.
mod build;
mod check;
mod codec;
mod kinds;
mod rowbinary;
#[cfg(test)]
mod test_util;

pub use aggregate::{AggregateState, StateValue};
pub use array::ArrayColumn;
pub(crate) use check::{check_end_offsets, check_fixed_values};
use codec::ColumnCodec;
pub use delimited::{DelimitedColumn, RowFormat};
pub use dynamic::*;
pub use fixed::FixedColumn;
pub use json::*;
pub use kinds::{Kind, SerInfo};
pub use low_cardinality::LowCardinalityColumn;
pub use nullable::NullableColumn;
pub use rowbinary::*;
pub(crate) use string::put_var_strings;
pub(crate) use string::ScanMemo;
pub use string::{var_string_rows_stepped, write_strings, StringColumn};
pub use tuple::TupleColumn;
pub use variant::*;

/// How strings are laid out at the negotiated revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Revision ≥ 54492: String columns are u64 end offsets followed by the bytes.
    pub sized_strings: bool,
    /// The same layout inside LowCardinality dictionaries (which use the single-stream writer).
    pub sized_dict_strings: bool,
}

/// How a column's body lies on the wire beyond its type: the block's [`Layout`] and,
/// for a Tuple (or JSON's typed paths), the serialization info of its elements.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BodyForm<'a> {
    pub(crate) layout: Layout,
    pub(crate) elems: Option<&'a [SerInfo]>,
}

/// A body with no element info of its own.
impl From<Layout> for BodyForm<'_> {
    fn from(layout: Layout) -> Self {
        BodyForm { layout, elems: None }
    }
}

impl Layout {
    /// The layout used at `revision`.
    pub fn for_revision(revision: u64) -> Layout {
        // LowCardinality dictionaries go through the single-stream bulk writer, which
        // keeps the VarUInt-prefixed String layout even at 54492 (seen on 26.9:
        // `00 01 30 01 31 01 32`).
        let sized = revision >= crate::revision::STRING_WITH_SIZE_STREAM;
        Layout { sized_strings: sized, sized_dict_strings: false }
    }
}

pub(crate) fn checked_len(rows: usize, width: usize) -> Result<usize> {
    rows.checked_mul(width).ok_or_else(|| ProtoError::violation("column size overflows"))
}

/// Validates u64 end offsets: non-decreasing, and returns the last (0 when empty).
fn check_offsets(offsets: &[u64]) -> Result<usize> {
    let mut prev = 0u64;
    let mut ok = true;
    for &o in offsets {
        ok &= o >= prev;
        prev = o;
    }
    if !ok {
        return Err(ProtoError::violation("offsets are not monotonic"));
    }
    usize::try_from(prev).map_err(|_| ProtoError::violation("offset does not fit in memory"))
}

impl ColumnData {
    /// The empty storage for a column of type `ty`.
    pub fn for_type(ty: &DataType, pool: &mut BufferPool) -> Result<ColumnData> {
        let shape = ty.wire_shape();
        let ty = shape.as_ref();
        if let DataType::Unsupported(name) = ty {
            return Err(ProtoError::ty(name.clone(), "no Native codec for this type yet"));
        }
        if let Some(width) = ty.fixed_width() {
            return Ok(FixedColumn::new(width, pool.take()).into_data());
        }
        if let Some(format) = delimited::format_for(ty) {
            return Ok(DelimitedColumn::new(format, pool.take(), pool.take()).into_data());
        }
        Ok(match ty {
            DataType::String => StringColumn::take(pool).into_data(),
            DataType::Nullable(t) => {
                let nulls = pool.take();
                NullableColumn::new(nulls, ColumnData::for_type(t, pool)?).into_data()
            }
            DataType::Array(t) => {
                let offsets = pool.take();
                ArrayColumn::new(offsets, ColumnData::for_type(t, pool)?).into_data()
            }
            DataType::Map(k, v) => {
                let offsets = pool.take();
                let kv = TupleColumn::new(vec![ColumnData::for_type(k, pool)?, ColumnData::for_type(v, pool)?]);
                ArrayColumn::new(offsets, kv.into_data()).into_data()
            }
            DataType::Tuple(elems) if elems.is_empty() => FixedColumn::new(1, pool.take()).into_data(),
            DataType::Tuple(elems) => {
                TupleColumn::new(elems.iter().map(|(_, t)| ColumnData::for_type(t, pool)).collect::<Result<_>>()?)
                    .into_data()
            }
            DataType::LowCardinality(t) => {
                let (inner, nullable) = match t.as_ref() {
                    DataType::Nullable(t) => (t.as_ref(), true),
                    t => (t, false),
                };
                let dict = ColumnData::for_type(inner, pool)?;
                LowCardinalityColumn::new(dict, 1, pool.take(), nullable).into_data()
            }
            DataType::Variant(alts) => {
                let cols = alts.iter().map(|t| ColumnData::for_type(t, pool)).collect::<Result<Vec<_>>>()?;
                VariantData::new(cols, pool).into_data()
            }
            DataType::Dynamic { .. } => DynamicData::new(pool).into_data(),
            DataType::Json(j) => JsonData::new(j, pool)?.into_data(),
            other => return Err(ProtoError::ty(other.to_string(), "no Native codec for this type yet")),
        })
    }

    /// Empty storage of the same shape, with buffers from `pool`.
    pub fn empty_like(&self, pool: &mut BufferPool) -> ColumnData {
        dispatch!(self, c => c.empty_like(pool).into_data())
    }

    /// Gives every buffer back to `pool`.
    pub fn recycle(self, pool: &mut BufferPool) {
        dispatch!(self, c => c.recycle(pool))
    }

    /// A Tuple's element columns (`None` for other shapes).
    pub fn tuple_elements(&self) -> Option<&[ColumnData]> {
        match self {
            ColumnData::Tuple(t) => Some(t.elements()),
            _ => None,
        }
    }

    /// Number of rows held.
    pub fn rows(&self) -> usize {
        dispatch!(self, c => c.rows())
    }

    pub(crate) fn clear(&mut self) {
        dispatch!(self, c => c.clear())
    }

    // ----- decoding -------------------------------------------------------

    /// Reads the state prefixes of the whole type tree (written before any data).
    ///
    /// Dynamic and JSON prefixes carry the block's structure (its types and paths),
    /// so this reshapes those columns.
    pub fn read_prefix(&mut self, r: &mut Reader<'_>) -> Result<()> {
        dispatch!(self, c => c.read_prefix(r))
    }

    /// Reads `rows` rows of data (after the prefix), honouring the serialization info.
    pub fn read_data(
        &mut self,
        r: &mut Reader<'_>,
        rows: usize,
        info: Option<&SerInfo>,
        layout: Layout,
        pool: &mut BufferPool,
    ) -> Result<()> {
        match info {
            None => self.read_plain(r, rows, layout.into(), pool),
            Some(info) => self.read_kinds(r, rows, &info.stack, &info.elems, layout, pool),
        }
    }

    fn read_plain(&mut self, r: &mut Reader<'_>, rows: usize, form: BodyForm<'_>, pool: &mut BufferPool) -> Result<()> {
        dispatch!(self, c => c.read_body(r, rows, form, pool))
    }

    // ----- measuring (how many bytes a column takes, without decoding) ---

    /// Steps over the column's prefix without decoding or allocating; `Ok(false)`
    /// for a prefix it does not measure. [`ColumnData::measure_data`] goes on.
    pub(crate) fn measure_prefix(&self, r: &mut Reader<'_>) -> Result<bool> {
        dispatch!(self, c => c.measure_prefix(r))
    }

    /// Steps over `rows` rows of the column's data (after [`ColumnData::measure_prefix`]) without decoding or
    /// allocating. Returns `Ok(false)` for shapes it does not measure (Variant,
    /// Dynamic, JSON, detached serialization, malformed sparse or replicated layers):
    /// decode those directly.
    ///
    /// Below revision 54492 a String column has no length up front, so a decoder
    /// that runs out of input can only say it needs "one more string". Measuring
    /// first, with the progress kept in `memo` between calls on longer input, lets a
    /// column arriving in many pieces be scanned once and decoded once.
    pub(crate) fn measure_data(
        &self,
        r: &mut Reader<'_>,
        rows: usize,
        info: Option<&SerInfo>,
        layout: Layout,
        memo: &mut ScanMemo,
    ) -> Result<bool> {
        match info {
            None => self.measure_plain(r, rows, layout.into(), memo),
            Some(info) => self.measure_kinds(r, rows, &info.stack, &info.elems, layout, memo),
        }
    }

    fn measure_plain(&self, r: &mut Reader<'_>, rows: usize, form: BodyForm<'_>, memo: &mut ScanMemo) -> Result<bool> {
        dispatch!(self, c => c.measure_body(r, rows, form, memo))
    }

    // ----- gathering (sparse / replicated materialisation) ---------------

    /// Replaces `self` with rows of `src` picked by `idx`; `u64::MAX` picks the
    /// type's default (zero, empty, NULL).
    pub fn take_from(&mut self, src: &ColumnData, idx: &[u64], pool: &mut BufferPool) -> Result<()> {
        let mut unlimited = Budget::UNLIMITED;
        self.gather(src, idx, pool, &mut unlimited)
    }

    /// [`ColumnData::take_from`], charging what it allocates to `budget` first:
    /// a few index bytes can pick the same large row many times.
    pub(crate) fn gather(
        &mut self,
        src: &ColumnData,
        idx: &[u64],
        pool: &mut BufferPool,
        budget: &mut Budget,
    ) -> Result<()> {
        self.clear();
        self.append_from(src, idx, pool, budget)
    }

    fn append_from(&mut self, src: &ColumnData, idx: &[u64], pool: &mut BufferPool, budget: &mut Budget) -> Result<()> {
        let dynamic = matches!(self, ColumnData::Dynamic(_) | ColumnData::Json(_));
        dispatch_pair!(self, src, (c, s) => c.append_from(s, idx, pool, budget), _ => Err(if dynamic {
            dynamic::sparse_dynamic_unsupported()
        } else {
            ProtoError::violation("column shapes differ")
        }))
    }

    // ----- encoding -------------------------------------------------------

    /// Writes the state prefixes of the type tree.
    pub fn write_prefix(&self, out: &mut Vec<u8>) {
        dispatch!(self, c => c.write_prefix(out))
    }

    /// Writes the data of every row (after the prefix).
    pub fn write_data(&self, out: &mut Vec<u8>, layout: Layout) -> Result<()> {
        dispatch!(self, c => c.write_body(out, layout))
    }
}

/// The last of a run of u64 end offsets (0 for none): the size of what they index.
fn last_offset(raw: &[u8]) -> Result<usize> {
    let Some(last) = raw.len().checked_sub(8) else { return Ok(0) };
    let mut a = [0u8; 8];
    a.copy_from_slice(&raw[last..]);
    usize::try_from(u64::from_le_bytes(a)).map_err(|_| ProtoError::violation("offset does not fit in memory"))
}

/// The total length of the rows `idx` picks out of end `offsets` (`u64::MAX` picks none),
/// so a gather can be charged to the budget before it copies anything.
fn selected_len(offsets: &[u64], idx: &[u64]) -> Result<u64> {
    let mut total = 0u64;
    for &i in idx.iter().filter(|&&i| i != u64::MAX) {
        let i = i as usize;
        let end = *offsets.get(i).ok_or_else(|| ProtoError::violation("row index out of range"))?;
        let start = if i == 0 { 0 } else { offsets[i - 1] };
        total = total.saturating_add(end.saturating_sub(start));
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::test_util::round_trip;
    use super::*;
    use crate::wire::WriteExt;

    const OLD: Layout = Layout { sized_strings: false, sized_dict_strings: false };
    const NEW: Layout = Layout { sized_strings: true, sized_dict_strings: true };

    #[test]
    fn low_cardinality_from_notes() {
        let mut b = Vec::new();
        b.put_u64_le(1);
        b.put_u64_le(0x600);
        b.put_u64_le(3);
        b.extend_from_slice(&[0, 1, b'a', 1, b'b']);
        b.put_u64_le(3);
        b.extend_from_slice(&[1, 2, 1]);
        round_trip("LowCardinality(String)", 3, &b, OLD);
    }

    #[test]
    fn strings_both_layouts() {
        round_trip("String", 3, &[2, b'a', b'b', 1, b'c', 0], OLD);
        let mut b = Vec::new();
        for o in [2u64, 3, 3] {
            b.put_u64_le(o);
        }
        b.extend_from_slice(b"abc");
        round_trip("String", 3, &b, NEW);
    }

    #[test]
    fn nested_arrays_and_nullable() {
        let mut b = Vec::new();
        // Array(Array(Nullable(UInt8))) rows: [[1,NULL]], [[],[3]]
        for o in [1u64, 3] {
            b.put_u64_le(o);
        }
        for o in [2u64, 2, 3] {
            b.put_u64_le(o);
        }
        b.extend_from_slice(&[0, 1, 0]);
        b.extend_from_slice(&[1, 0, 3]);
        round_trip("Array(Array(Nullable(UInt8)))", 2, &b, OLD);
    }

    #[test]
    fn bad_offsets_are_errors() {
        let mut b = Vec::new();
        b.put_u64_le(5);
        b.put_u64_le(2);
        let mut pool = BufferPool::new();
        let mut c = ColumnData::for_type(&DataType::parse("Array(UInt8)").unwrap(), &mut pool).unwrap();
        assert!(matches!(c.read_data(&mut Reader::new(&b), 2, None, OLD, &mut pool), Err(ProtoError::Violation(_))));
    }
}
