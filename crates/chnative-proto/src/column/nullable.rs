//! Nullable(T): one byte per row (1 = NULL), then the inner column with a
//! placeholder at each NULL row.

use super::{ColumnData, Layout, ScanMemo};
use crate::buffer::{AlignedBuf, BufferPool};
use crate::error::{ProtoError, Result};
use crate::wire::{Budget, Reader};

/// Reads the null map and `rows` inner values.
pub(super) fn read(
    r: &mut Reader<'_>,
    rows: usize,
    nulls: &mut AlignedBuf,
    inner: &mut ColumnData,
    layout: Layout,
    pool: &mut BufferPool,
) -> Result<()> {
    let raw = r.bytes(rows)?;
    r.charge(raw.len())?;
    nulls.set_from(raw);
    inner.read_data(r, rows, None, layout, pool)
}

/// Steps over the null map and the inner values; `false` when the inner column is not measured.
pub(super) fn measure(
    r: &mut Reader<'_>,
    rows: usize,
    inner: &ColumnData,
    layout: Layout,
    memo: &mut ScanMemo,
) -> Result<bool> {
    r.bytes(rows)?;
    inner.measure_data(r, rows, None, layout, memo)
}

/// Writes the null map and the inner values.
pub(super) fn write(out: &mut Vec<u8>, nulls: &AlignedBuf, inner: &ColumnData, layout: Layout) -> Result<()> {
    out.extend_from_slice(nulls.as_bytes());
    inner.write_data(out, layout)
}

/// Appends the rows of the source's null map and values that `idx` picks (`u64::MAX`: NULL).
pub(super) fn append(
    (nulls, inner): (&mut AlignedBuf, &mut ColumnData),
    (src_nulls, src_inner): (&AlignedBuf, &ColumnData),
    idx: &[u64],
    pool: &mut BufferPool,
    budget: &mut Budget,
) -> Result<()> {
    let sn = src_nulls.as_bytes();
    budget.charge(idx.len())?;
    for &i in idx {
        let null = if i == u64::MAX {
            1u8
        } else {
            *sn.get(i as usize).ok_or_else(|| ProtoError::violation("row index out of range"))?
        };
        nulls.push(null);
    }
    inner.append_from(src_inner, idx, pool, budget)
}

/// A sparse Nullable(T) (revision ≥ 54483): NULL is the default, and the non-default
/// values, already read into `values`, came as T without a null map. `idx` maps each
/// row to its value, `u64::MAX` for NULL.
pub(super) fn expand_sparse(
    (nulls, inner): (&mut AlignedBuf, &mut ColumnData),
    values: &ColumnData,
    idx: &[u64],
    pool: &mut BufferPool,
    budget: &mut Budget,
) -> Result<()> {
    budget.charge(idx.len())?;
    nulls.clear();
    for &i in idx {
        nulls.push(u8::from(i == u64::MAX));
    }
    inner.gather(values, idx, pool, budget)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nulls_then_values_both_ways() {
        let bytes = [0u8, 1, 0, 7, 0, 9];
        let mut pool = BufferPool::new();
        let (mut nulls, mut inner) = (AlignedBuf::new(), ColumnData::from_values::<u8>(&[]));
        let layout = Layout::for_revision(54492);
        read(&mut Reader::new(&bytes), 3, &mut nulls, &mut inner, layout, &mut pool).unwrap();
        assert_eq!(nulls.as_bytes(), [0, 1, 0]);
        let mut out = Vec::new();
        write(&mut out, &nulls, &inner, layout).unwrap();
        assert_eq!(out, bytes);
        let mut r = Reader::new(&bytes);
        assert!(measure(&mut r, 3, &inner, layout, &mut ScanMemo::default()).unwrap());
        assert_eq!(r.remaining(), 0);
    }

    #[test]
    fn gather_and_sparse_expansion() {
        let mut pool = BufferPool::new();
        let mut budget = Budget::UNLIMITED;
        let src_nulls = {
            let mut b = AlignedBuf::new();
            b.set_from(&[1, 0]);
            b
        };
        let src_inner = ColumnData::from_values(&[0u32, 5]);
        let (mut nulls, mut inner) = (AlignedBuf::new(), ColumnData::from_values::<u32>(&[]));
        append((&mut nulls, &mut inner), (&src_nulls, &src_inner), &[1, u64::MAX, 0], &mut pool, &mut budget).unwrap();
        assert_eq!(nulls.as_bytes(), [0, 1, 1]);
        assert!(append((&mut nulls, &mut inner), (&src_nulls, &src_inner), &[2], &mut pool, &mut budget).is_err());

        let values = ColumnData::from_values(&[8u32]);
        expand_sparse((&mut nulls, &mut inner), &values, &[u64::MAX, 0, u64::MAX], &mut pool, &mut budget).unwrap();
        assert_eq!(nulls.as_bytes(), [1, 0, 1]);
        let ColumnData::Fixed { data, .. } = &inner else { unreachable!() };
        assert_eq!(data.typed::<u32>().unwrap(), [0, 8, 0]);
    }
}
