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
use crate::wire::{Budget, Reader, WriteExt};

mod build;
mod check;
mod dynamic;
mod json;
mod rowbinary;
#[cfg(test)]
mod test_util;
mod variant;
pub(crate) use check::{check_end_offsets, check_fixed_values};
pub use dynamic::*;
pub use json::*;
pub use rowbinary::*;
pub use variant::*;

/// `SharedDictionariesWithAdditionalKeys`, the only LowCardinality key version.
const LC_KEY_VERSION: u64 = 1;
const LC_NEED_GLOBAL_DICTIONARY: u64 = 1 << 8;
const LC_HAS_ADDITIONAL_KEYS: u64 = 1 << 9;
const LC_NEED_UPDATE_DICTIONARY: u64 = 1 << 10;
/// Marks the last VarUInt of a sparse offsets list.
const SPARSE_END_OF_GRANULE: u64 = 1 << 62;

/// The storage of one column, shaped by its type.
///
/// This is the low level: outside this crate a `ColumnData` comes from the
/// decoders, [`ColumnData::for_type`] and the builders ([`ColumnData::from_values`],
/// [`ColumnData::from_strings`], [`ColumnData::nullable`], [`ColumnData::array`],
/// …); its buffers cannot be written and its variants cannot be built (they are
/// `#[non_exhaustive]`; read them with `..` in the pattern). Data becomes a
/// [`crate::Column`] only through [`crate::Column::new`], which checks it
/// against the type.
#[derive(Debug)]
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
}

/// One layer of a column's serialization kind stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Plain.
    Default,
    /// Offsets of non-default rows, then the non-default values.
    Sparse,
    /// A compressed blob (secondary queries only; not supported).
    Detached,
    /// Indexes into a column of distinct rows.
    Replicated,
}

/// A column's serialization info as the block header carries it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SerInfo {
    /// Kinds from innermost to outermost (the first is always `Default`).
    pub stack: Vec<Kind>,
    /// For tuples: one per element.
    pub elems: Vec<SerInfo>,
}

impl SerInfo {
    /// Reads the info for a column of shape `data` (a Tuple's info is recursive).
    pub fn read(r: &mut Reader<'_>, data: &ColumnData) -> Result<SerInfo> {
        let stack = match r.u8()? {
            0 => vec![Kind::Default],
            1 => vec![Kind::Default, Kind::Sparse],
            2 => vec![Kind::Default, Kind::Detached],
            3 => vec![Kind::Default, Kind::Sparse, Kind::Detached],
            4 => vec![Kind::Default, Kind::Replicated],
            5 => {
                let n = r.varuint_bounded("kind stack length", 16)?;
                let mut s = Vec::with_capacity(n);
                for _ in 0..n {
                    s.push(match r.u8()? {
                        0 => Kind::Default,
                        1 => Kind::Sparse,
                        2 => Kind::Detached,
                        3 => Kind::Replicated,
                        k => return Err(ProtoError::violation(format!("unknown serialization kind {k}"))),
                    });
                }
                s
            }
            k => return Err(ProtoError::violation(format!("unknown serialization kind stack {k}"))),
        };
        let mut elems = Vec::new();
        match data {
            ColumnData::Tuple(cols) => {
                for c in cols {
                    elems.push(SerInfo::read(r, c)?);
                }
            }
            // JSON's info is named like a Tuple's: one per typed path, in path order.
            ColumnData::Json(j) => {
                for c in &j.typed {
                    elems.push(SerInfo::read(r, c)?);
                }
            }
            _ => {}
        }
        Ok(SerInfo { stack, elems })
    }
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
            other => return Err(ProtoError::ty(format!("{other:?}"), "no Native codec for this type yet")),
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
        }
    }

    // ----- decoding -------------------------------------------------------

    /// Reads the state prefixes of the whole type tree (written before any data).
    ///
    /// Dynamic and JSON prefixes carry the block's structure (its types and paths),
    /// so this reshapes those columns.
    pub fn read_prefix(&mut self, r: &mut Reader<'_>) -> Result<()> {
        match self {
            ColumnData::Fixed { .. } | ColumnData::String { .. } => Ok(()),
            ColumnData::Nullable { inner, .. } | ColumnData::Array { inner, .. } => inner.read_prefix(r),
            ColumnData::Tuple(cols) => cols.iter_mut().try_for_each(|c| c.read_prefix(r)),
            ColumnData::Variant(v) => v.read_prefix(r),
            ColumnData::Dynamic(d) => d.read_prefix(r),
            ColumnData::Json(j) => j.read_prefix(r),
            ColumnData::LowCardinality { .. } => {
                let v = r.u64_le()?;
                if v != LC_KEY_VERSION {
                    return Err(ProtoError::violation(format!("LowCardinality key version {v}, expected 1")));
                }
                Ok(())
            }
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

    fn read_kinds(
        &mut self,
        r: &mut Reader<'_>,
        rows: usize,
        stack: &[Kind],
        elems: &[SerInfo],
        layout: Layout,
        pool: &mut BufferPool,
    ) -> Result<()> {
        let elems_opt = if elems.is_empty() { None } else { Some(elems) };
        match stack.split_last() {
            None | Some((Kind::Default, _)) => self.read_plain(r, rows, elems_opt, layout, pool),
            Some((Kind::Detached, _)) => {
                Err(ProtoError::violation("DETACHED column serialization is only used between servers"))
            }
            Some((Kind::Sparse, rest)) => {
                // Offsets: defaults skipped before each non-default row, then trailing | END flag.
                // The index list has one entry per row whatever the wire holds: charge it first.
                r.charge_n(rows, 8)?;
                let mut idx = pool.take();
                let mut row = 0usize;
                let mut values = 0u64;
                loop {
                    let v = r.varuint()?;
                    let end = v & SPARSE_END_OF_GRANULE != 0;
                    let gap = usize::try_from(v & !SPARSE_END_OF_GRANULE)
                        .map_err(|_| ProtoError::violation("sparse gap overflows"))?;
                    if gap > rows - row.min(rows) {
                        pool.give(idx);
                        return Err(ProtoError::violation("sparse offsets exceed the row count"));
                    }
                    idx.resize_filled(idx.len() + gap * 8, 0xff);
                    row += gap;
                    if end {
                        break;
                    }
                    if row >= rows {
                        pool.give(idx);
                        return Err(ProtoError::violation("sparse offsets exceed the row count"));
                    }
                    idx.push(values);
                    values += 1;
                    row += 1;
                }
                if row != rows {
                    pool.give(idx);
                    return Err(ProtoError::violation("sparse offsets do not cover the rows"));
                }
                // Sparse Nullable(T) (revision ≥ 54483): NULL is the default, and the
                // non-default values are sent as T, without a null map.
                let res = if let ColumnData::Nullable { nulls, inner } = self {
                    let mut tmp = inner.empty_like(pool);
                    let res = tmp.read_kinds(r, values as usize, rest, elems, layout, pool).and_then(|_| {
                        let idx = idx.typed::<u64>()?;
                        r.charge(idx.len())?;
                        nulls.clear();
                        for &i in idx {
                            nulls.push(u8::from(i == u64::MAX));
                        }
                        inner.gather(&tmp, idx, pool, r.budget_mut())
                    });
                    tmp.recycle(pool);
                    res
                } else {
                    let mut tmp = self.empty_like(pool);
                    let res = tmp
                        .read_kinds(r, values as usize, rest, elems, layout, pool)
                        .and_then(|_| self.gather(&tmp, idx.typed::<u64>()?, pool, r.budget_mut()));
                    tmp.recycle(pool);
                    res
                };
                pool.give(idx);
                res
            }
            Some((Kind::Replicated, rest)) => {
                let n = r.varuint()?;
                if n != rows as u64 {
                    return Err(ProtoError::violation("replicated column row count differs from the block"));
                }
                let width = r.u8()?;
                let raw = r.bytes(checked_len(rows, usize::from(width))?)?;
                let elements = r.varuint_bounded("replicated elements", u32::MAX as u64)?;
                r.charge_n(rows, 8)?;
                let mut idx = pool.take();
                macro_rules! widen {
                    ($t:ty) => {
                        for c in raw.chunks_exact(std::mem::size_of::<$t>()) {
                            let v = <$t>::from_le_bytes(c.try_into().unwrap_or_default()) as u64;
                            if v >= elements as u64 {
                                pool.give(idx);
                                return Err(ProtoError::violation("replicated index out of range"));
                            }
                            idx.push(v);
                        }
                    };
                }
                match width {
                    1 => widen!(u8),
                    2 => widen!(u16),
                    4 => widen!(u32),
                    8 => widen!(u64),
                    w => {
                        pool.give(idx);
                        return Err(ProtoError::violation(format!("replicated index width {w}")));
                    }
                }
                let mut tmp = self.empty_like(pool);
                let res = tmp
                    .read_kinds(r, elements, rest, elems, layout, pool)
                    .and_then(|_| self.gather(&tmp, idx.typed::<u64>()?, pool, r.budget_mut()));
                tmp.recycle(pool);
                pool.give(idx);
                res
            }
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
            ColumnData::Fixed { width, data } => {
                let raw = r.bytes(checked_len(rows, *width)?)?;
                r.charge(raw.len())?;
                data.set_from(raw);
            }
            ColumnData::String { offsets, data } => read_strings(r, rows, offsets, data, layout.sized_strings)?,
            ColumnData::Nullable { nulls, inner } => {
                let raw = r.bytes(rows)?;
                r.charge(raw.len())?;
                nulls.set_from(raw);
                inner.read_data(r, rows, None, layout, pool)?;
            }
            ColumnData::Array { offsets, inner } => {
                let raw = r.bytes(checked_len(rows, 8)?)?;
                r.charge(raw.len())?;
                offsets.set_from(raw);
                let n = check_offsets(offsets.typed::<u64>()?)?;
                inner.read_data(r, n, None, layout, pool)?;
            }
            ColumnData::Tuple(cols) => {
                for (i, c) in cols.iter_mut().enumerate() {
                    let info = elems.and_then(|e| e.get(i));
                    c.read_data(r, rows, info, layout, pool)?;
                }
            }
            ColumnData::LowCardinality { dict, key_width, keys, .. } => {
                if rows == 0 {
                    dict.clear();
                    keys.clear();
                    return Ok(());
                }
                let index_type = r.u64_le()?;
                if index_type & LC_NEED_GLOBAL_DICTIONARY != 0 || index_type & LC_HAS_ADDITIONAL_KEYS == 0 {
                    return Err(ProtoError::violation("LowCardinality with a global dictionary is not used in Native"));
                }
                let kw: u8 = match index_type & 0xff {
                    0 => 1,
                    1 => 2,
                    2 => 4,
                    3 => 8,
                    w => return Err(ProtoError::violation(format!("LowCardinality key width code {w}"))),
                };
                let nkeys = r.u64_le()?;
                let nkeys = usize::try_from(nkeys).map_err(|_| ProtoError::violation("dictionary too large"))?;
                r.need(nkeys.min(usize::MAX / 2))?;
                let dict_layout = Layout { sized_strings: layout.sized_dict_strings, ..layout };
                dict.read_plain(r, nkeys, None, dict_layout, pool)?;
                let n = r.u64_le()?;
                if n != rows as u64 {
                    return Err(ProtoError::violation("LowCardinality row count differs from the block"));
                }
                *key_width = kw;
                let raw = r.bytes(checked_len(rows, usize::from(kw))?)?;
                r.charge(raw.len())?;
                keys.set_from(raw);
                let max = max_key(keys, kw)?;
                if rows > 0 && max >= nkeys as u64 {
                    return Err(ProtoError::violation("LowCardinality key beyond its dictionary"));
                }
            }
            ColumnData::Variant(v) => v.read_body(r, rows, layout, pool)?,
            ColumnData::Dynamic(d) => d.read_body(r, rows, layout, pool)?,
            ColumnData::Json(j) => j.read_body(r, rows, elems, layout, pool)?,
        }
        Ok(())
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
            ColumnData::Fixed { .. } | ColumnData::String { .. } => Ok(true),
            ColumnData::Nullable { inner, .. } | ColumnData::Array { inner, .. } => inner.measure_prefix(r),
            ColumnData::Tuple(cols) => {
                for c in cols {
                    if !c.measure_prefix(r)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            ColumnData::LowCardinality { .. } => r.u64_le().map(|_| true),
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

    /// The measuring twin of [`ColumnData::read_kinds`]. Sparse and replicated layers
    /// expand into a row index on decode; measuring them first means a column that
    /// arrives in many pieces is expanded once, not once per piece.
    fn measure_kinds(
        &self,
        r: &mut Reader<'_>,
        rows: usize,
        stack: &[Kind],
        elems: &[SerInfo],
        layout: Layout,
        memo: &mut ScanMemo,
    ) -> Result<bool> {
        match stack.split_last() {
            None | Some((Kind::Default, _)) => {
                self.measure_plain(r, rows, if elems.is_empty() { None } else { Some(elems) }, layout, memo)
            }
            Some((Kind::Detached, _)) => Ok(false),
            Some((Kind::Sparse, rest)) => {
                let Some(values) = skip_sparse_offsets(r, rows)? else { return Ok(false) };
                // Sparse Nullable(T) sends its non-default values as T (see read_kinds).
                let values_of = match self {
                    ColumnData::Nullable { inner, .. } => inner.as_ref(),
                    other => other,
                };
                values_of.measure_kinds(r, values, rest, elems, layout, memo)
            }
            Some((Kind::Replicated, rest)) => {
                if r.varuint()? != rows as u64 {
                    return Ok(false);
                }
                let width = usize::from(r.u8()?);
                if !matches!(width, 1 | 2 | 4 | 8) {
                    return Ok(false);
                }
                r.bytes(checked_len(rows, width)?)?;
                let elements = r.varuint()?;
                if elements > u64::from(u32::MAX) {
                    return Ok(false);
                }
                self.measure_kinds(r, elements as usize, rest, elems, layout, memo)
            }
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
            ColumnData::Fixed { width, .. } => {
                r.bytes(checked_len(rows, *width)?)?;
            }
            ColumnData::String { .. } if layout.sized_strings => {
                let total = last_offset(r.bytes(checked_len(rows, 8)?)?)?;
                r.bytes(total)?;
            }
            ColumnData::String { .. } => memo.skip_strings(r, rows)?,
            ColumnData::Nullable { inner, .. } => {
                r.bytes(rows)?;
                return inner.measure_data(r, rows, None, layout, memo);
            }
            ColumnData::Array { inner, .. } => {
                let n = last_offset(r.bytes(checked_len(rows, 8)?)?)?;
                return inner.measure_data(r, n, None, layout, memo);
            }
            ColumnData::Tuple(cols) => {
                for (i, c) in cols.iter().enumerate() {
                    let elem = elems.and_then(|e| e.get(i));
                    if !c.measure_data(r, rows, elem, layout, memo)? {
                        return Ok(false);
                    }
                }
            }
            ColumnData::LowCardinality { dict, .. } => {
                if rows == 0 {
                    return Ok(true);
                }
                let index_type = r.u64_le()?;
                if index_type & LC_NEED_GLOBAL_DICTIONARY != 0 || index_type & LC_HAS_ADDITIONAL_KEYS == 0 {
                    // Refused by the decoder, which says why.
                    return Ok(false);
                }
                let kw: usize = match index_type & 0xff {
                    0 => 1,
                    1 => 2,
                    2 => 4,
                    3 => 8,
                    _ => return Ok(false),
                };
                let nkeys = usize::try_from(r.u64_le()?).map_err(|_| ProtoError::violation("dictionary too large"))?;
                let dict_layout = Layout { sized_strings: layout.sized_dict_strings, ..layout };
                if !dict.measure_data(r, nkeys, None, dict_layout, memo)? {
                    return Ok(false);
                }
                r.u64_le()?;
                r.bytes(checked_len(rows, kw)?)?;
            }
            ColumnData::Variant(_) | ColumnData::Dynamic(_) | ColumnData::Json(_) => return Ok(false),
        }
        Ok(true)
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
        let oob = || ProtoError::violation("row index out of range");
        match (self, src) {
            (ColumnData::Fixed { width, data }, ColumnData::Fixed { data: s, .. }) => {
                let w = *width;
                budget.charge_n(idx.len(), w)?;
                let sb = s.as_bytes();
                for &i in idx {
                    if i == u64::MAX {
                        data.resize_zeroed(data.len() + w);
                    } else {
                        let at = (i as usize).checked_mul(w).ok_or_else(oob)?;
                        data.extend_from(sb.get(at..at + w).ok_or_else(oob)?);
                    }
                }
            }
            (ColumnData::String { offsets, data }, ColumnData::String { offsets: so, data: sd }) => {
                let so = so.typed::<u64>()?;
                let sd = sd.as_bytes();
                let total = selected_len(so, idx)?;
                budget.charge_n(idx.len(), 8)?;
                budget.charge(usize::try_from(total).unwrap_or(usize::MAX))?;
                for &i in idx {
                    if i != u64::MAX {
                        let i = i as usize;
                        let end = *so.get(i).ok_or_else(oob)? as usize;
                        let start = if i == 0 { 0 } else { so[i - 1] as usize };
                        data.extend_from(sd.get(start..end).ok_or_else(oob)?);
                    }
                    offsets.push(data.len() as u64);
                }
            }
            (ColumnData::Nullable { nulls, inner }, ColumnData::Nullable { nulls: sn, inner: si }) => {
                let sn = sn.as_bytes();
                budget.charge(idx.len())?;
                for &i in idx {
                    nulls.push(if i == u64::MAX { 1u8 } else { *sn.get(i as usize).ok_or_else(oob)? });
                }
                inner.append_from(si, idx, pool, budget)?;
            }
            (ColumnData::Array { offsets, inner }, ColumnData::Array { offsets: so, inner: si }) => {
                let so = so.typed::<u64>()?;
                let elements = selected_len(so, idx)?;
                // Offsets, and the temporary element index list.
                budget.charge_n(idx.len(), 8)?;
                budget.charge_n(usize::try_from(elements).unwrap_or(usize::MAX), 8)?;
                let mut inner_idx = pool.take();
                let mut total = offsets.typed::<u64>()?.last().copied().unwrap_or(0);
                for &i in idx {
                    if i != u64::MAX {
                        let i = i as usize;
                        let end = *so.get(i).ok_or_else(oob)?;
                        let start = if i == 0 { 0 } else { so[i - 1] };
                        for k in start..end {
                            inner_idx.push(k);
                        }
                        total += end - start;
                    }
                    offsets.push(total);
                }
                let res = inner.append_from(si, inner_idx.typed::<u64>()?, pool, budget);
                pool.give(inner_idx);
                res?;
            }
            (ColumnData::Tuple(cols), ColumnData::Tuple(scols)) if cols.len() == scols.len() => {
                for (c, s) in cols.iter_mut().zip(scols) {
                    c.append_from(s, idx, pool, budget)?;
                }
            }
            (
                ColumnData::LowCardinality { dict, key_width, keys, .. },
                ColumnData::LowCardinality { dict: sdict, key_width: skw, keys: skeys, .. },
            ) => {
                // Copy the dictionary whole and re-key with u64 keys: simple, and rare.
                budget.charge_n(sdict.rows(), 8)?;
                let all: Vec<u64> = (0..sdict.rows() as u64).collect();
                dict.gather(sdict, &all, pool, budget)?;
                budget.charge_n(idx.len(), 8)?;
                *key_width = 8;
                let n = skeys.len() / usize::from(*skw).max(1);
                for &i in idx {
                    let k = if i == u64::MAX {
                        0
                    } else {
                        let i = i as usize;
                        if i >= n {
                            return Err(oob());
                        }
                        key_at(skeys, *skw, i)
                    };
                    keys.push(k);
                }
            }
            (ColumnData::Variant(v), ColumnData::Variant(s)) => v.append_from(s, idx, pool, budget)?,
            (ColumnData::Dynamic(_), _) | (ColumnData::Json(_), _) => {
                return Err(ProtoError::ty(
                    "Dynamic/JSON",
                    "sparse or replicated serialization of Dynamic and JSON columns is not supported",
                ))
            }
            _ => return Err(ProtoError::violation("column shapes differ")),
        }
        Ok(())
    }

    // ----- encoding -------------------------------------------------------

    /// Writes the state prefixes of the type tree.
    pub fn write_prefix(&self, out: &mut Vec<u8>) {
        match self {
            ColumnData::Fixed { .. } | ColumnData::String { .. } => {}
            ColumnData::Nullable { inner, .. } | ColumnData::Array { inner, .. } => inner.write_prefix(out),
            ColumnData::Tuple(cols) => cols.iter().for_each(|c| c.write_prefix(out)),
            ColumnData::LowCardinality { .. } => out.put_u64_le(LC_KEY_VERSION),
            ColumnData::Variant(v) => v.write_prefix(out),
            ColumnData::Dynamic(d) => d.write_prefix(out),
            ColumnData::Json(j) => j.write_prefix(out),
        }
    }

    /// Writes the data of every row (after the prefix).
    pub fn write_data(&self, out: &mut Vec<u8>, layout: Layout) -> Result<()> {
        match self {
            ColumnData::Fixed { data, .. } => out.extend_from_slice(data.as_bytes()),
            ColumnData::String { offsets, data } => {
                write_strings(out, offsets.typed::<u64>()?, data.as_bytes(), layout.sized_strings)?
            }
            ColumnData::Nullable { nulls, inner } => {
                out.extend_from_slice(nulls.as_bytes());
                inner.write_data(out, layout)?;
            }
            ColumnData::Array { offsets, inner } => {
                out.extend_from_slice(offsets.as_bytes());
                inner.write_data(out, layout)?;
            }
            ColumnData::Tuple(cols) => {
                for c in cols {
                    c.write_data(out, layout)?;
                }
            }
            ColumnData::LowCardinality { dict, key_width, keys, .. } => {
                let rows = keys.len() / usize::from(*key_width).max(1);
                if rows == 0 {
                    return Ok(());
                }
                let code: u64 = match key_width {
                    1 => 0,
                    2 => 1,
                    4 => 2,
                    _ => 3,
                };
                out.put_u64_le(code | LC_HAS_ADDITIONAL_KEYS | LC_NEED_UPDATE_DICTIONARY);
                out.put_u64_le(dict.rows() as u64);
                dict.write_data(out, Layout { sized_strings: layout.sized_dict_strings, ..layout })?;
                out.put_u64_le(rows as u64);
                out.extend_from_slice(keys.as_bytes());
            }
            ColumnData::Variant(v) => v.write_body(out, layout)?,
            ColumnData::Dynamic(d) => d.write_body(out, layout)?,
            ColumnData::Json(j) => j.write_body(out, layout)?,
        }
        Ok(())
    }
}

/// The last of a run of u64 end offsets (0 for none): the size of what they index.
fn last_offset(raw: &[u8]) -> Result<usize> {
    let Some(last) = raw.len().checked_sub(8) else { return Ok(0) };
    let mut a = [0u8; 8];
    a.copy_from_slice(&raw[last..]);
    usize::try_from(u64::from_le_bytes(a)).map_err(|_| ProtoError::violation("offset does not fit in memory"))
}

/// How far [`ColumnData::measure`] got through each run of VarUInt-prefixed
/// strings of one column, kept between calls on the same, longer input.
#[derive(Debug, Default)]
pub(crate) struct ScanMemo {
    runs: Vec<StringRun>,
}

#[derive(Debug)]
struct StringRun {
    /// Input offset of the run's first row, and its row count: what identifies it.
    start: usize,
    rows: usize,
    /// Rows passed so far, and the input offset of the next one.
    done: usize,
    next: usize,
    bytes: usize,
}

impl ScanMemo {
    /// Forgets every run (for a new input, or once a column is decoded).
    pub(crate) fn clear(&mut self) {
        self.runs.clear();
    }

    fn skip_strings(&mut self, r: &mut Reader<'_>, rows: usize) -> Result<()> {
        let start = r.position();
        let i = match self.runs.iter().position(|x| x.start == start && x.rows == rows) {
            Some(i) => i,
            None => {
                self.runs.push(StringRun { start, rows, done: 0, next: start, bytes: 0 });
                self.runs.len() - 1
            }
        };
        let run = &mut self.runs[i];
        r.set_position(run.next);
        let res = skip_var_strings(r, rows, &mut run.done, &mut run.bytes);
        run.next = r.position();
        res
    }
}

/// Steps over a sparse column's offsets (the same rules as the decoder's loop in
/// `read_kinds`) and returns how many non-default values follow, or `None` when the
/// offsets are malformed (the decoder then says why).
fn skip_sparse_offsets(r: &mut Reader<'_>, rows: usize) -> Result<Option<usize>> {
    let mut row = 0usize;
    let mut values = 0usize;
    loop {
        let v = r.varuint()?;
        let gap = v & !SPARSE_END_OF_GRANULE;
        if gap > (rows - row) as u64 {
            return Ok(None);
        }
        row += gap as usize;
        if v & SPARSE_END_OF_GRANULE != 0 {
            return Ok((row == rows).then_some(values));
        }
        if row >= rows {
            return Ok(None);
        }
        values += 1;
        row += 1;
    }
}

fn key_at(keys: &AlignedBuf, kw: u8, i: usize) -> u64 {
    let b = keys.as_bytes();
    let w = usize::from(kw);
    let mut a = [0u8; 8];
    if let Some(s) = b.get(i * w..i * w + w) {
        a[..w].copy_from_slice(s);
    }
    u64::from_le_bytes(a)
}

fn max_key(keys: &AlignedBuf, kw: u8) -> Result<u64> {
    Ok(match kw {
        1 => keys.as_bytes().iter().copied().max().unwrap_or(0) as u64,
        2 => keys.typed::<u16>()?.iter().copied().max().unwrap_or(0) as u64,
        4 => keys.typed::<u32>()?.iter().copied().max().unwrap_or(0) as u64,
        _ => keys.typed::<u64>()?.iter().copied().max().unwrap_or(0),
    })
}

fn read_strings(
    r: &mut Reader<'_>,
    rows: usize,
    offsets: &mut AlignedBuf,
    data: &mut AlignedBuf,
    sized: bool,
) -> Result<()> {
    if sized {
        let raw = r.bytes(checked_len(rows, 8)?)?;
        r.charge(raw.len())?;
        offsets.set_from(raw);
        let total = check_offsets(offsets.typed::<u64>()?)?;
        let raw = r.bytes(total)?;
        r.charge(total)?;
        data.set_from(raw);
    } else {
        // Each row needs at least its length byte: check before reserving anything.
        r.need(rows)?;
        // Lengths first, without copying: the exact size to charge and allocate
        // once, and an exact `Incomplete` bound when the input is short.
        let start = r.position();
        let (mut done, mut total) = (0, 0);
        skip_var_strings(r, rows, &mut done, &mut total)?;
        r.charge_n(rows, 8)?;
        r.charge(total)?;
        r.set_position(start);
        offsets.clear();
        data.clear();
        offsets.resize_zeroed(checked_len(rows, 8)?);
        data.resize_zeroed(total);
        let (offs, bytes) = (offsets.typed_mut::<u64>()?, data.as_bytes_mut());
        let mut end = 0usize;
        for o in offs.iter_mut() {
            let n = r.varuint()? as usize;
            bytes[end..end + n].copy_from_slice(r.bytes(n)?);
            end += n;
            *o = end as u64;
        }
    }
    Ok(())
}

/// Steps over VarUInt-prefixed strings from row `*done` to `rows`, adding their
/// lengths to `*bytes`. When the input runs out, the reader is left at the start
/// of the first missing row (`*done` counts the rows passed), so a later call on
/// longer input resumes there, and the error's bound counts at least one byte per
/// row still to come.
pub(crate) fn skip_var_strings(r: &mut Reader<'_>, rows: usize, done: &mut usize, bytes: &mut usize) -> Result<()> {
    let first = *done;
    let res = skip_var_strings_from(r, rows, done, bytes);
    ROWS_STEPPED.with(|n| n.set(n.get() + (*done - first) as u64));
    res
}

thread_local! {
    static ROWS_STEPPED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Rows of VarUInt-prefixed strings this thread has stepped over so far, measuring
/// or decoding: tests use it to check that a column arriving in pieces is not
/// re-read from its start on every piece.
#[doc(hidden)]
pub fn var_string_rows_stepped() -> u64 {
    ROWS_STEPPED.with(|n| n.get())
}

fn skip_var_strings_from(r: &mut Reader<'_>, rows: usize, done: &mut usize, bytes: &mut usize) -> Result<()> {
    while *done < rows {
        let at = r.position();
        let after = rows - *done - 1;
        let n = match r.varuint() {
            Ok(n) => n,
            Err(ProtoError::Incomplete { .. }) => {
                let end = r.position() + r.remaining();
                r.set_position(at);
                return Err(ProtoError::Incomplete { needed: (end + 1).max(at.saturating_add(after + 1)) });
            }
            Err(e) => return Err(e),
        };
        let n = usize::try_from(n).map_err(|_| ProtoError::violation("string length overflows"))?;
        if r.remaining() < n {
            let needed = r.position().saturating_add(n).saturating_add(after);
            r.set_position(at);
            return Err(ProtoError::Incomplete { needed });
        }
        r.bytes(n)?;
        *bytes = bytes.checked_add(n).ok_or_else(|| ProtoError::violation("string lengths overflow"))?;
        *done += 1;
    }
    Ok(())
}

/// Writes strings given as end offsets + blob in the layout of the revision.
pub fn write_strings(out: &mut Vec<u8>, offsets: &[u64], data: &[u8], sized: bool) -> Result<()> {
    if sized {
        out.extend_from_slice(bytemuck::cast_slice(offsets));
        out.extend_from_slice(data);
    } else {
        let mut start = 0usize;
        for &end in offsets {
            let end = end as usize;
            let s = data.get(start..end).ok_or_else(|| ProtoError::violation("string offsets out of range"))?;
            out.put_string(s);
            start = end;
        }
    }
    Ok(())
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

    /// 1000 rows replicated (u16 indexes) over a sparse column of `elements` UInt64
    /// values: every 10th element is non-default.
    fn replicated_over_sparse(elements: u64) -> (SerInfo, Vec<u8>) {
        use crate::wire::WriteExt;
        let mut b = Vec::new();
        b.put_varuint(1000);
        b.push(2);
        for i in 0..1000u16 {
            b.extend_from_slice(&(i % elements as u16).to_le_bytes());
        }
        b.put_varuint(elements);
        for _ in 0..elements / 10 {
            b.put_varuint(9);
        }
        b.put_varuint(SPARSE_END_OF_GRANULE);
        for v in 1..=elements / 10 {
            b.put_u64_le(v);
        }
        (SerInfo { stack: vec![Kind::Default, Kind::Sparse, Kind::Replicated], elems: vec![] }, b)
    }

    /// Regression (fuzz, server_packets timeout): sparse and replicated layers were not
    /// measured, so a column arriving in pieces was expanded again on every piece (up to
    /// the block budget each time). Measuring steps over them without allocating.
    #[test]
    fn sparse_and_replicated_layers_are_measured() {
        let (info, bytes) = replicated_over_sparse(200);
        let pool = &mut BufferPool::new();
        let col = ColumnData::for_type(&DataType::UInt64, pool).unwrap();
        let layout = Layout::for_revision(54492);
        let mut r = Reader::new(&bytes);
        assert!(col.measure(&mut r, 1000, Some(&info), layout, &mut ScanMemo::default()).unwrap());
        assert_eq!(r.position(), bytes.len());
        // Cut short: an exact request for the rest once the value count is known.
        let cut = bytes.len() - 5;
        let err = col.measure(&mut Reader::new(&bytes[..cut]), 1000, Some(&info), layout, &mut ScanMemo::default());
        assert!(matches!(err, Err(ProtoError::Incomplete { needed }) if needed == bytes.len()), "{err:?}");
        // The decode agrees with the measure.
        let mut col = col;
        let mut r = Reader::new(&bytes);
        col.read_data(&mut r, 1000, Some(&info), layout, pool).unwrap();
        assert_eq!(r.position(), bytes.len());
        let ColumnData::Fixed { data, .. } = &col else { panic!("{col:?}") };
        let v = data.typed::<u64>().unwrap();
        assert_eq!((v[8], v[9], v[19], v[199], v[200], v[209]), (0, 1, 2, 20, 0, 1));
        // A Nullable column's sparse values come without a null map.
        let ty = DataType::parse("Nullable(UInt64)").unwrap();
        let col = ColumnData::for_type(&ty, pool).unwrap();
        assert!(col.measure(&mut Reader::new(&bytes), 1000, Some(&info), layout, &mut ScanMemo::default()).unwrap());
        // Malformed offsets are left to the decoder, which says what is wrong.
        let mut bad = bytes.clone();
        let first_gap = 2 + 1 + 2000 + 2;
        bad[first_gap] = 0x7f;
        let col = ColumnData::for_type(&DataType::UInt64, pool).unwrap();
        assert!(!col.measure(&mut Reader::new(&bad), 1000, Some(&info), layout, &mut ScanMemo::default()).unwrap());
    }

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
    fn sparse_expands_to_dense() {
        let mut pool = BufferPool::new();
        let mut c = ColumnData::for_type(&DataType::UInt32, &mut pool).unwrap();
        // rows: 0, 7, 0, 0, 9, 0  -> gaps 1 (then value), 2 (then value), trailing 1
        let mut b = Vec::new();
        b.put_varuint(1);
        b.put_varuint(2);
        b.put_varuint(1 | SPARSE_END_OF_GRANULE);
        b.put_u32_le(7);
        b.put_u32_le(9);
        let info = SerInfo { stack: vec![Kind::Default, Kind::Sparse], elems: vec![] };
        c.read_data(&mut Reader::new(&b), 6, Some(&info), OLD, &mut pool).unwrap();
        match &c {
            ColumnData::Fixed { data, .. } => assert_eq!(data.typed::<u32>().unwrap(), &[0, 7, 0, 0, 9, 0]),
            _ => unreachable!(),
        }
    }

    #[test]
    fn sparse_nullable_values_have_no_null_map() {
        // As 26.9 sends Nullable(UInt32) at 54483: rows 7, NULL, NULL, 9, NULL.
        let mut pool = BufferPool::new();
        let mut c = ColumnData::for_type(&DataType::parse("Nullable(UInt32)").unwrap(), &mut pool).unwrap();
        let mut b = Vec::new();
        b.put_varuint(0);
        b.put_varuint(2);
        b.put_varuint(1 | SPARSE_END_OF_GRANULE);
        b.put_u32_le(7);
        b.put_u32_le(9);
        let info = SerInfo { stack: vec![Kind::Default, Kind::Sparse], elems: vec![] };
        let mut r = Reader::new(&b);
        c.read_data(&mut r, 5, Some(&info), OLD, &mut pool).unwrap();
        assert_eq!(r.remaining(), 0);
        match &c {
            ColumnData::Nullable { nulls, inner } => {
                assert_eq!(nulls.as_bytes(), &[0, 1, 1, 0, 1]);
                match inner.as_ref() {
                    ColumnData::Fixed { data, .. } => assert_eq!(data.typed::<u32>().unwrap(), &[7, 0, 0, 9, 0]),
                    _ => unreachable!(),
                }
            }
            _ => unreachable!(),
        }
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
