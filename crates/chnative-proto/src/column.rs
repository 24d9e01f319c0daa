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

use crate::buffer::{AlignedBuf, BufferPool};
use crate::error::{ProtoError, Result};
use crate::types::DataType;
use crate::wire::{Budget, Reader};

// One module per family, decoding and encoding side by side; the `match` arms
// below only dispatch to them.
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
mod kinds;
mod rowbinary;
#[cfg(test)]
mod test_util;

pub use aggregate::{AggregateState, StateValue};
pub(crate) use check::{check_end_offsets, check_fixed_values};
pub use delimited::RowFormat;
pub use dynamic::*;
pub use json::*;
pub use kinds::{Kind, SerInfo};
pub use rowbinary::*;
pub(crate) use string::ScanMemo;
pub use string::{var_string_rows_stepped, write_strings};
pub use variant::*;

/// The storage of one column, shaped by its type.
///
/// This is the low level: outside this crate a `ColumnData` comes from the
/// decoders, [`ColumnData::for_type`] and the builders ([`ColumnData::from_values`],
/// [`ColumnData::from_strings`], [`ColumnData::nullable`], [`ColumnData::array`],
/// …); its buffers cannot be written and its variants cannot be built (they are
/// `#[non_exhaustive]`; read them with `..` in the pattern). Data becomes a
/// [`crate::Column`] only through [`crate::Column::new`], which checks it
/// against the type.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ColumnData {
    /// Any fixed-width type: numbers, dates, UUID, IPs, decimals, enums, FixedString(N), Nothing.
    #[non_exhaustive]
    Fixed {
        /// Bytes per row.
        width: usize,
        /// `rows × width` bytes, little-endian as on the wire.
        data: AlignedBuf,
    },
    /// String: cumulative end offsets (u64 per row) into one byte blob.
    #[non_exhaustive]
    String {
        /// u64 end offset of each row.
        offsets: AlignedBuf,
        /// All bytes back to back.
        data: AlignedBuf,
    },
    /// Nullable(T): one byte per row (1 = NULL) and the inner column (placeholders at NULLs).
    #[non_exhaustive]
    Nullable {
        /// Null map.
        nulls: AlignedBuf,
        /// Values.
        inner: Box<ColumnData>,
    },
    /// Array(T), Map(K, V) (as Array(Tuple(K, V))), Nested, geo rings and polygons.
    #[non_exhaustive]
    Array {
        /// u64 end offset of each row into `inner`.
        offsets: AlignedBuf,
        /// Flattened elements.
        inner: Box<ColumnData>,
    },
    /// Tuple(T1, …) and Point: one column per element.
    #[non_exhaustive]
    Tuple(Vec<ColumnData>),
    /// LowCardinality(T): a dictionary and one key per row.
    #[non_exhaustive]
    LowCardinality {
        /// Distinct values; for LowCardinality(Nullable(T)), entry 0 stands for NULL.
        dict: Box<ColumnData>,
        /// Bytes per key: 1, 2, 4 or 8.
        key_width: u8,
        /// Keys, `rows × key_width` bytes.
        keys: AlignedBuf,
        /// True for LowCardinality(Nullable(T)).
        nullable: bool,
    },
    /// Variant(T1, …): discriminators plus one dense column per alternative.
    #[non_exhaustive]
    Variant(Box<VariantData>),
    /// Dynamic: the per-block type list and the values (see [`DynamicData`]).
    #[non_exhaustive]
    Dynamic(Box<DynamicData>),
    /// JSON: typed paths, dynamic paths and shared data, or text (see [`JsonData`]).
    #[non_exhaustive]
    Json(Box<JsonData>),
    /// Rows that delimit themselves, kept as they came (aggregate-function states):
    /// the [`RowFormat`] that finds each row's end, end offsets, and the bytes.
    #[non_exhaustive]
    Delimited {
        /// How a row ends.
        format: std::sync::Arc<dyn RowFormat>,
        /// u64 end offset of each row.
        offsets: AlignedBuf,
        /// All rows back to back, as on the wire.
        data: AlignedBuf,
    },
}

/// How strings are laid out at the negotiated revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Revision ≥ 54492: String columns are u64 end offsets followed by the bytes.
    pub sized_strings: bool,
    /// The same layout inside LowCardinality dictionaries (which use the single-stream writer).
    pub sized_dict_strings: bool,
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

fn checked_len(rows: usize, width: usize) -> Result<usize> {
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
            return Ok(ColumnData::Fixed { width, data: pool.take() });
        }
        if let Some(format) = delimited::format_for(ty) {
            return Ok(ColumnData::Delimited { format, offsets: pool.take(), data: pool.take() });
        }
        Ok(match ty {
            DataType::String => ColumnData::String { offsets: pool.take(), data: pool.take() },
            DataType::Nullable(t) => {
                ColumnData::Nullable { nulls: pool.take(), inner: Box::new(ColumnData::for_type(t, pool)?) }
            }
            DataType::Array(t) => {
                ColumnData::Array { offsets: pool.take(), inner: Box::new(ColumnData::for_type(t, pool)?) }
            }
            DataType::Map(k, v) => ColumnData::Array {
                offsets: pool.take(),
                inner: Box::new(ColumnData::Tuple(vec![
                    ColumnData::for_type(k, pool)?,
                    ColumnData::for_type(v, pool)?,
                ])),
            },
            DataType::Tuple(elems) if elems.is_empty() => ColumnData::Fixed { width: 1, data: pool.take() },
            DataType::Tuple(elems) => {
                ColumnData::Tuple(elems.iter().map(|(_, t)| ColumnData::for_type(t, pool)).collect::<Result<_>>()?)
            }
            DataType::LowCardinality(t) => {
                let (inner, nullable) = match t.as_ref() {
                    DataType::Nullable(t) => (t.as_ref(), true),
                    t => (t, false),
                };
                ColumnData::LowCardinality {
                    dict: Box::new(ColumnData::for_type(inner, pool)?),
                    key_width: 1,
                    keys: pool.take(),
                    nullable,
                }
            }
            DataType::Variant(alts) => {
                let cols = alts.iter().map(|t| ColumnData::for_type(t, pool)).collect::<Result<Vec<_>>>()?;
                ColumnData::Variant(Box::new(VariantData::new(cols, pool)))
            }
            DataType::Dynamic { .. } => ColumnData::Dynamic(Box::new(DynamicData::new(pool))),
            DataType::Json(j) => ColumnData::Json(Box::new(JsonData::new(j, pool)?)),
            other => return Err(ProtoError::ty(other.to_string(), "no Native codec for this type yet")),
        })
    }

    /// Empty storage of the same shape, with buffers from `pool`.
    pub fn empty_like(&self, pool: &mut BufferPool) -> ColumnData {
        match self {
            ColumnData::Fixed { width, .. } => ColumnData::Fixed { width: *width, data: pool.take() },
            ColumnData::String { .. } => ColumnData::String { offsets: pool.take(), data: pool.take() },
            ColumnData::Nullable { inner, .. } => {
                ColumnData::Nullable { nulls: pool.take(), inner: Box::new(inner.empty_like(pool)) }
            }
            ColumnData::Array { inner, .. } => {
                ColumnData::Array { offsets: pool.take(), inner: Box::new(inner.empty_like(pool)) }
            }
            ColumnData::Tuple(cols) => ColumnData::Tuple(cols.iter().map(|c| c.empty_like(pool)).collect()),
            ColumnData::LowCardinality { dict, nullable, .. } => ColumnData::LowCardinality {
                dict: Box::new(dict.empty_like(pool)),
                key_width: 1,
                keys: pool.take(),
                nullable: *nullable,
            },
            ColumnData::Variant(v) => ColumnData::Variant(Box::new(v.empty_like(pool))),
            ColumnData::Dynamic(d) => ColumnData::Dynamic(Box::new(d.empty_like(pool))),
            ColumnData::Json(j) => ColumnData::Json(Box::new(j.empty_like(pool))),
            ColumnData::Delimited { format, .. } => {
                ColumnData::Delimited { format: format.clone(), offsets: pool.take(), data: pool.take() }
            }
        }
    }

    /// Gives every buffer back to `pool`.
    pub fn recycle(self, pool: &mut BufferPool) {
        match self {
            ColumnData::Fixed { data, .. } => pool.give(data),
            ColumnData::String { offsets, data } => {
                pool.give(offsets);
                pool.give(data);
            }
            ColumnData::Nullable { nulls, inner } => {
                pool.give(nulls);
                inner.recycle(pool);
            }
            ColumnData::Array { offsets, inner } => {
                pool.give(offsets);
                inner.recycle(pool);
            }
            ColumnData::Tuple(cols) => cols.into_iter().for_each(|c| c.recycle(pool)),
            ColumnData::LowCardinality { dict, keys, .. } => {
                pool.give(keys);
                dict.recycle(pool);
            }
            ColumnData::Variant(v) => v.recycle(pool),
            ColumnData::Dynamic(d) => d.recycle(pool),
            ColumnData::Json(j) => j.recycle(pool),
            ColumnData::Delimited { offsets, data, .. } => {
                pool.give(offsets);
                pool.give(data);
            }
        }
    }

    /// A Tuple's element columns (`None` for other shapes): the read accessor
    /// for a variant whose fields cannot be named outside this crate.
    pub fn tuple_elements(&self) -> Option<&[ColumnData]> {
        match self {
            ColumnData::Tuple(cols) => Some(cols),
            _ => None,
        }
    }

    /// Number of rows held.
    pub fn rows(&self) -> usize {
        match self {
            ColumnData::Fixed { width, data } => data.len() / (*width).max(1),
            ColumnData::String { offsets, .. } | ColumnData::Array { offsets, .. } => offsets.len() / 8,
            ColumnData::Nullable { nulls, .. } => nulls.len(),
            ColumnData::Tuple(cols) => cols.first().map_or(0, ColumnData::rows),
            ColumnData::LowCardinality { key_width, keys, .. } => keys.len() / usize::from(*key_width).max(1),
            ColumnData::Variant(v) => v.rows(),
            ColumnData::Dynamic(d) => d.rows(),
            ColumnData::Json(j) => j.rows(),
            ColumnData::Delimited { offsets, .. } => delimited::rows(offsets),
        }
    }

    pub(crate) fn clear(&mut self) {
        match self {
            ColumnData::Fixed { data, .. } => data.clear(),
            ColumnData::String { offsets, data } => {
                offsets.clear();
                data.clear();
            }
            ColumnData::Nullable { nulls, inner } => {
                nulls.clear();
                inner.clear();
            }
            ColumnData::Array { offsets, inner } => {
                offsets.clear();
                inner.clear();
            }
            ColumnData::Tuple(cols) => cols.iter_mut().for_each(ColumnData::clear),
            ColumnData::LowCardinality { dict, keys, .. } => {
                keys.clear();
                dict.clear();
            }
            ColumnData::Variant(v) => v.clear(),
            ColumnData::Dynamic(d) => d.clear(),
            ColumnData::Json(j) => j.clear(),
            ColumnData::Delimited { offsets, data, .. } => {
                offsets.clear();
                data.clear();
            }
        }
    }

    // ----- decoding -------------------------------------------------------

    /// Reads the state prefixes of the whole type tree (written before any data).
    ///
    /// Dynamic and JSON prefixes carry the block's structure (its types and paths),
    /// so this reshapes those columns.
    pub fn read_prefix(&mut self, r: &mut Reader<'_>) -> Result<()> {
        match self {
            ColumnData::Fixed { .. } | ColumnData::String { .. } | ColumnData::Delimited { .. } => Ok(()),
            ColumnData::Nullable { inner, .. } | ColumnData::Array { inner, .. } => inner.read_prefix(r),
            ColumnData::Tuple(cols) => cols.iter_mut().try_for_each(|c| c.read_prefix(r)),
            ColumnData::LowCardinality { .. } => low_cardinality::read_prefix(r),
            ColumnData::Variant(v) => v.read_prefix(r),
            ColumnData::Dynamic(d) => d.read_prefix(r),
            ColumnData::Json(j) => j.read_prefix(r),
        }
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
            None => self.read_plain(r, rows, None, layout, pool),
            Some(info) => self.read_kinds(r, rows, &info.stack, &info.elems, layout, pool),
        }
    }

    fn read_plain(
        &mut self,
        r: &mut Reader<'_>,
        rows: usize,
        elems: Option<&[SerInfo]>,
        layout: Layout,
        pool: &mut BufferPool,
    ) -> Result<()> {
        match self {
            ColumnData::Fixed { width, data } => fixed::read(r, rows, *width, data),
            ColumnData::String { offsets, data } => string::read(r, rows, offsets, data, layout.sized_strings),
            ColumnData::Nullable { nulls, inner } => nullable::read(r, rows, nulls, inner, layout, pool),
            ColumnData::Array { offsets, inner } => array::read(r, rows, offsets, inner, layout, pool),
            ColumnData::Tuple(cols) => tuple::read(r, rows, cols, elems, layout, pool),
            ColumnData::LowCardinality { dict, key_width, keys, .. } => {
                low_cardinality::read(r, rows, (dict, key_width, keys), layout, pool)
            }
            ColumnData::Variant(v) => v.read_body(r, rows, layout, pool),
            ColumnData::Dynamic(d) => d.read_body(r, rows, layout, pool),
            ColumnData::Json(j) => j.read_body(r, rows, elems, layout, pool),
            ColumnData::Delimited { format, offsets, data } => delimited::read(r, rows, format.as_ref(), offsets, data),
        }
    }

    // ----- measuring (how many bytes a column takes, without decoding) ---

    /// Steps over the column's prefix and `rows` rows of data without decoding or
    /// allocating. Returns `Ok(false)` for shapes it does not measure (Variant,
    /// Dynamic, JSON, detached serialization, malformed sparse or replicated layers):
    /// decode those directly.
    ///
    /// Below revision 54492 a String column has no length up front, so a decoder
    /// that runs out of input can only say it needs "one more string". Measuring
    /// first, with the progress kept in `memo` between calls on longer input, lets a
    /// column arriving in many pieces be scanned once and decoded once.
    pub(crate) fn measure(
        &self,
        r: &mut Reader<'_>,
        rows: usize,
        info: Option<&SerInfo>,
        layout: Layout,
        memo: &mut ScanMemo,
    ) -> Result<bool> {
        Ok(self.measure_prefix(r)? && self.measure_data(r, rows, info, layout, memo)?)
    }

    fn measure_prefix(&self, r: &mut Reader<'_>) -> Result<bool> {
        match self {
            ColumnData::Fixed { .. } | ColumnData::String { .. } | ColumnData::Delimited { .. } => Ok(true),
            ColumnData::Nullable { inner, .. } | ColumnData::Array { inner, .. } => inner.measure_prefix(r),
            ColumnData::Tuple(cols) => {
                for c in cols {
                    if !c.measure_prefix(r)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            ColumnData::LowCardinality { .. } => low_cardinality::read_prefix(r).map(|_| true),
            ColumnData::Variant(_) | ColumnData::Dynamic(_) | ColumnData::Json(_) => Ok(false),
        }
    }

    fn measure_data(
        &self,
        r: &mut Reader<'_>,
        rows: usize,
        info: Option<&SerInfo>,
        layout: Layout,
        memo: &mut ScanMemo,
    ) -> Result<bool> {
        match info {
            None => self.measure_plain(r, rows, None, layout, memo),
            Some(info) => self.measure_kinds(r, rows, &info.stack, &info.elems, layout, memo),
        }
    }

    fn measure_plain(
        &self,
        r: &mut Reader<'_>,
        rows: usize,
        elems: Option<&[SerInfo]>,
        layout: Layout,
        memo: &mut ScanMemo,
    ) -> Result<bool> {
        match self {
            ColumnData::Fixed { width, .. } => fixed::measure(r, rows, *width).map(|_| true),
            ColumnData::String { .. } => string::measure(r, rows, layout.sized_strings, memo).map(|_| true),
            ColumnData::Nullable { inner, .. } => nullable::measure(r, rows, inner, layout, memo),
            ColumnData::Array { inner, .. } => array::measure(r, rows, inner, layout, memo),
            ColumnData::Tuple(cols) => tuple::measure(r, rows, cols, elems, layout, memo),
            ColumnData::LowCardinality { dict, .. } => low_cardinality::measure(r, rows, dict, layout, memo),
            ColumnData::Delimited { format, .. } => delimited::measure(r, rows, format.as_ref()).map(|_| true),
            ColumnData::Variant(_) | ColumnData::Dynamic(_) | ColumnData::Json(_) => Ok(false),
        }
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
        match (self, src) {
            (ColumnData::Fixed { width, data }, ColumnData::Fixed { data: s, .. }) => {
                fixed::append(data, *width, s, idx, budget)
            }
            (ColumnData::String { offsets, data }, ColumnData::String { offsets: so, data: sd }) => {
                string::append(offsets, data, so, sd, idx, budget)
            }
            (ColumnData::Nullable { nulls, inner }, ColumnData::Nullable { nulls: sn, inner: si }) => {
                nullable::append((nulls, inner), (sn, si), idx, pool, budget)
            }
            (ColumnData::Array { offsets, inner }, ColumnData::Array { offsets: so, inner: si }) => {
                array::append((offsets, inner), (so, si), idx, pool, budget)
            }
            (ColumnData::Tuple(cols), ColumnData::Tuple(scols)) => tuple::append(cols, scols, idx, pool, budget),
            (
                ColumnData::LowCardinality { dict, key_width, keys, .. },
                ColumnData::LowCardinality { dict: sd, key_width: skw, keys: sk, .. },
            ) => low_cardinality::append((dict, key_width, keys), (sd, *skw, sk), idx, pool, budget),
            (ColumnData::Variant(v), ColumnData::Variant(s)) => v.append_from(s, idx, pool, budget),
            (ColumnData::Delimited { offsets, data, .. }, ColumnData::Delimited { offsets: so, data: sd, .. }) => {
                delimited::append((offsets, data), (so, sd), idx, budget)
            }
            (ColumnData::Dynamic(_), _) | (ColumnData::Json(_), _) => Err(ProtoError::ty(
                "Dynamic/JSON",
                "sparse or replicated serialization of Dynamic and JSON columns is not supported",
            )),
            _ => Err(ProtoError::violation("column shapes differ")),
        }
    }

    // ----- encoding -------------------------------------------------------

    /// Writes the state prefixes of the type tree.
    pub fn write_prefix(&self, out: &mut Vec<u8>) {
        match self {
            ColumnData::Fixed { .. } | ColumnData::String { .. } | ColumnData::Delimited { .. } => {}
            ColumnData::Nullable { inner, .. } | ColumnData::Array { inner, .. } => inner.write_prefix(out),
            ColumnData::Tuple(cols) => cols.iter().for_each(|c| c.write_prefix(out)),
            ColumnData::LowCardinality { .. } => low_cardinality::write_prefix(out),
            ColumnData::Variant(v) => v.write_prefix(out),
            ColumnData::Dynamic(d) => d.write_prefix(out),
            ColumnData::Json(j) => j.write_prefix(out),
        }
    }

    /// Writes the data of every row (after the prefix).
    pub fn write_data(&self, out: &mut Vec<u8>, layout: Layout) -> Result<()> {
        match self {
            ColumnData::Fixed { data, .. } => {
                fixed::write(out, data);
                Ok(())
            }
            ColumnData::String { offsets, data } => {
                write_strings(out, offsets.typed::<u64>()?, data.as_bytes(), layout.sized_strings)
            }
            ColumnData::Nullable { nulls, inner } => nullable::write(out, nulls, inner, layout),
            ColumnData::Array { offsets, inner } => array::write(out, offsets, inner, layout),
            ColumnData::Tuple(cols) => tuple::write(out, cols, layout),
            ColumnData::LowCardinality { dict, key_width, keys, .. } => {
                low_cardinality::write(out, (dict, *key_width, keys), layout)
            }
            ColumnData::Variant(v) => v.write_body(out, layout),
            ColumnData::Dynamic(d) => d.write_body(out, layout),
            ColumnData::Json(j) => j.write_body(out, layout),
            ColumnData::Delimited { data, .. } => {
                delimited::write(out, data);
                Ok(())
            }
        }
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
    use super::*;
    use crate::wire::WriteExt;

    fn round_trip(ty: &str, rows: usize, bytes: &[u8], layout: Layout) {
        let mut pool = BufferPool::new();
        let t = DataType::parse(ty).unwrap();
        let mut c = ColumnData::for_type(&t, &mut pool).unwrap();
        let mut r = Reader::new(bytes);
        c.read_prefix(&mut r).unwrap();
        c.read_data(&mut r, rows, None, layout, &mut pool).unwrap();
        assert_eq!(r.remaining(), 0, "{ty}");
        assert_eq!(c.rows(), rows);
        let mut out = Vec::new();
        c.write_prefix(&mut out);
        c.write_data(&mut out, layout).unwrap();
        assert_eq!(out, bytes, "{ty}");
        // Every strict prefix is incomplete, never a panic or a wrong value.
        for cut in 0..bytes.len() {
            let mut c = ColumnData::for_type(&t, &mut pool).unwrap();
            let mut r = Reader::new(&bytes[..cut]);
            let res = c.read_prefix(&mut r).and_then(|_| c.read_data(&mut r, rows, None, layout, &mut pool));
            assert!(matches!(res, Err(ProtoError::Incomplete { .. })), "{ty} cut at {cut}: {res:?}");
        }
    }

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
