//! Serialization kinds: the layers a column's data may be wrapped in (sparse,
//! replicated, detached), as the block header's serialization info announces them,
//! and their materialisation to the dense shapes on read.

use super::{checked_len, nullable, ColumnData, Layout, ScanMemo};
use crate::buffer::BufferPool;
use crate::error::{ProtoError, Result};
use crate::wire::Reader;

/// Marks the last VarUInt of a sparse offsets list.
pub(super) const SPARSE_END_OF_GRANULE: u64 = 1 << 62;

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

impl ColumnData {
    pub(super) fn read_kinds(
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
                        nullable::expand_sparse((nulls, inner), &tmp, idx.typed::<u64>()?, pool, r.budget_mut())
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

    /// The measuring twin of [`ColumnData::read_kinds`]. Sparse and replicated layers
    /// expand into a row index on decode; measuring them first means a column that
    /// arrives in many pieces is expanded once, not once per piece.
    pub(super) fn measure_kinds(
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
