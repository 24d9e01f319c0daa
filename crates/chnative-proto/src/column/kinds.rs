//! Serialization kinds: the layers a column's data may be wrapped in (sparse,
//! replicated, detached), as the block header's serialization info announces them,
//! and their materialisation to the dense shapes on read.

use super::codec::ColumnCodec;
use super::{checked_len, BodyForm, ColumnData, Layout, ScanMemo};
use crate::buffer::BufferPool;
use crate::error::{ProtoError, Result};
use crate::wire::Reader;

/// Marks the last VarUInt of a sparse offsets list.
pub(super) const SPARSE_END_OF_GRANULE: u64 = 1 << 62;

/// One layer of a column's serialization kind stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
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
        let elems =
            dispatch!(data, c => c.info_elements()).iter().map(|c| SerInfo::read(r, c)).collect::<Result<Vec<_>>>()?;
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
            None | Some((Kind::Default, _)) => self.read_plain(r, rows, BodyForm { layout, elems: elems_opt }, pool),
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
                let res = if let ColumnData::Nullable(n) = self {
                    let mut tmp = n.inner.empty_like(pool);
                    let res = tmp
                        .read_kinds(r, values as usize, rest, elems, layout, pool)
                        .and_then(|_| n.expand_sparse(&tmp, idx.typed::<u64>()?, pool, r.budget_mut()));
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
            None | Some((Kind::Default, _)) => self.measure_plain(
                r,
                rows,
                BodyForm { layout, elems: if elems.is_empty() { None } else { Some(elems) } },
                memo,
            ),
            Some((Kind::Detached, _)) => Ok(false),
            Some((Kind::Sparse, rest)) => {
                let Some(values) = skip_sparse_offsets(r, rows)? else { return Ok(false) };
                // Sparse Nullable(T) sends its non-default values as T (see read_kinds).
                let values_of = match self {
                    ColumnData::Nullable(n) => n.inner.as_ref(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::column::{FixedColumn, NullableColumn};
    use crate::types::DataType;
    use crate::wire::WriteExt;

    /// 1000 rows replicated (u16 indexes) over a sparse column of `elements` UInt64
    /// values: every 10th element is non-default.
    fn replicated_over_sparse(elements: u64) -> (SerInfo, Vec<u8>) {
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

    /// Measures `col`'s prefix and 1000 rows, as a block decode does.
    fn measure(col: &ColumnData, r: &mut Reader<'_>, info: &SerInfo, layout: Layout) -> Result<bool> {
        Ok(col.measure_prefix(r)? && col.measure_data(r, 1000, Some(info), layout, &mut ScanMemo::default())?)
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
        assert!(measure(&col, &mut r, &info, layout).unwrap());
        assert_eq!(r.position(), bytes.len());
        // Cut short: an exact request for the rest once the value count is known.
        let cut = bytes.len() - 5;
        let err = measure(&col, &mut Reader::new(&bytes[..cut]), &info, layout);
        assert!(matches!(err, Err(ProtoError::Incomplete { needed }) if needed == bytes.len()), "{err:?}");
        // The decode agrees with the measure.
        let mut col = col;
        let mut r = Reader::new(&bytes);
        col.read_data(&mut r, 1000, Some(&info), layout, pool).unwrap();
        assert_eq!(r.position(), bytes.len());
        let ColumnData::Fixed(FixedColumn { data, .. }) = &col else { panic!("{col:?}") };
        let v = data.typed::<u64>().unwrap();
        assert_eq!((v[8], v[9], v[19], v[199], v[200], v[209]), (0, 1, 2, 20, 0, 1));
        // A Nullable column's sparse values come without a null map.
        let ty = DataType::parse("Nullable(UInt64)").unwrap();
        let col = ColumnData::for_type(&ty, pool).unwrap();
        assert!(measure(&col, &mut Reader::new(&bytes), &info, layout).unwrap());
        // Malformed offsets are left to the decoder, which says what is wrong.
        let mut bad = bytes.clone();
        let first_gap = 2 + 1 + 2000 + 2;
        bad[first_gap] = 0x7f;
        let col = ColumnData::for_type(&DataType::UInt64, pool).unwrap();
        assert!(!measure(&col, &mut Reader::new(&bad), &info, layout).unwrap());
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
        c.read_data(&mut Reader::new(&b), 6, Some(&info), Layout::for_revision(54460), &mut pool).unwrap();
        match &c {
            ColumnData::Fixed(FixedColumn { data, .. }) => {
                assert_eq!(data.typed::<u32>().unwrap(), &[0, 7, 0, 0, 9, 0])
            }
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
        c.read_data(&mut r, 5, Some(&info), Layout::for_revision(54460), &mut pool).unwrap();
        assert_eq!(r.remaining(), 0);
        match &c {
            ColumnData::Nullable(NullableColumn { nulls, inner }) => {
                assert_eq!(nulls.as_bytes(), &[0, 1, 1, 0, 1]);
                match inner.as_ref() {
                    ColumnData::Fixed(FixedColumn { data, .. }) => {
                        assert_eq!(data.typed::<u32>().unwrap(), &[7, 0, 0, 9, 0])
                    }
                    _ => unreachable!(),
                }
            }
            _ => unreachable!(),
        }
    }
}
