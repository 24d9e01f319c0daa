//! Array(T), and what is an array on the wire (Map as Array(Tuple(K, V)), Nested,
//! the geo rings and polygons): u64 end offsets per row, then the flattened elements.

use super::{check_offsets, checked_len, last_offset, selected_len, ColumnData, Layout, ScanMemo};
use crate::buffer::{AlignedBuf, BufferPool};
use crate::error::{ProtoError, Result};
use crate::wire::{Budget, Reader};

/// Reads `rows` end offsets and the elements they count.
pub(super) fn read(
    r: &mut Reader<'_>,
    rows: usize,
    offsets: &mut AlignedBuf,
    inner: &mut ColumnData,
    layout: Layout,
    pool: &mut BufferPool,
) -> Result<()> {
    let raw = r.bytes(checked_len(rows, 8)?)?;
    r.charge(raw.len())?;
    offsets.set_from(raw);
    let n = check_offsets(offsets.typed::<u64>()?)?;
    inner.read_data(r, n, None, layout, pool)
}

/// Steps over the offsets and the elements; `false` when the elements are not measured.
pub(super) fn measure(
    r: &mut Reader<'_>,
    rows: usize,
    inner: &ColumnData,
    layout: Layout,
    memo: &mut ScanMemo,
) -> Result<bool> {
    let n = last_offset(r.bytes(checked_len(rows, 8)?)?)?;
    inner.measure_data(r, n, None, layout, memo)
}

/// Writes the offsets and the elements.
pub(super) fn write(out: &mut Vec<u8>, offsets: &AlignedBuf, inner: &ColumnData, layout: Layout) -> Result<()> {
    out.extend_from_slice(offsets.as_bytes());
    inner.write_data(out, layout)
}

/// Appends the arrays of the source that `idx` picks (`u64::MAX`: the empty array).
pub(super) fn append(
    (offsets, inner): (&mut AlignedBuf, &mut ColumnData),
    (src_offsets, src_inner): (&AlignedBuf, &ColumnData),
    idx: &[u64],
    pool: &mut BufferPool,
    budget: &mut Budget,
) -> Result<()> {
    let oob = || ProtoError::violation("row index out of range");
    let so = src_offsets.typed::<u64>()?;
    let elements = selected_len(so, idx)?;
    // Offsets, and the temporary element index list.
    budget.charge_n(idx.len(), 8)?;
    budget.charge_n(usize::try_from(elements).unwrap_or(usize::MAX), 8)?;
    let mut inner_idx = pool.take();
    let mut total = offsets.typed::<u64>()?.last().copied().unwrap_or(0);
    for &i in idx {
        if i != u64::MAX {
            let i = i as usize;
            let Some(&end) = so.get(i) else {
                pool.give(inner_idx);
                return Err(oob());
            };
            let start = if i == 0 { 0 } else { so[i - 1] };
            for k in start..end {
                inner_idx.push(k);
            }
            total += end - start;
        }
        offsets.push(total);
    }
    let res = inner_idx.typed::<u64>().and_then(|ix| inner.append_from(src_inner, ix, pool, budget));
    pool.give(inner_idx);
    res
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::WriteExt;

    #[test]
    fn offsets_then_elements() {
        let mut bytes = Vec::new();
        for o in [2u64, 2, 3] {
            bytes.put_u64_le(o);
        }
        bytes.extend_from_slice(&[1, 2, 3]);
        let mut pool = BufferPool::new();
        let layout = Layout::for_revision(54492);
        let (mut offsets, mut inner) = (AlignedBuf::new(), ColumnData::from_values::<u8>(&[]));
        read(&mut Reader::new(&bytes), 3, &mut offsets, &mut inner, layout, &mut pool).unwrap();
        assert_eq!(inner.rows(), 3);
        let mut out = Vec::new();
        write(&mut out, &offsets, &inner, layout).unwrap();
        assert_eq!(out, bytes);
        let mut r = Reader::new(&bytes);
        assert!(measure(&mut r, 3, &inner, layout, &mut ScanMemo::default()).unwrap());
        assert_eq!(r.remaining(), 0);
        // Offsets going backwards are refused before any element is read.
        bytes[8] = 1;
        let res = read(&mut Reader::new(&bytes), 3, &mut offsets, &mut inner, layout, &mut pool);
        assert!(matches!(res, Err(ProtoError::Violation(_))));
    }

    #[test]
    fn gather_copies_picked_arrays() {
        let ColumnData::Array { offsets: so, inner: si } =
            ColumnData::array(&[2, 2, 3], ColumnData::from_values(&[1u8, 2, 3]))
        else {
            unreachable!()
        };
        let mut pool = BufferPool::new();
        let mut budget = Budget::UNLIMITED;
        let (mut offsets, mut inner) = (AlignedBuf::new(), ColumnData::from_values::<u8>(&[]));
        append((&mut offsets, &mut inner), (&so, &si), &[2, u64::MAX, 0], &mut pool, &mut budget).unwrap();
        assert_eq!(offsets.typed::<u64>().unwrap(), [1, 1, 3]);
        let ColumnData::Fixed { data, .. } = &inner else { unreachable!() };
        assert_eq!(data.as_bytes(), [3, 1, 2]);
        assert!(append((&mut offsets, &mut inner), (&so, &si), &[3], &mut pool, &mut budget).is_err());
    }
}
