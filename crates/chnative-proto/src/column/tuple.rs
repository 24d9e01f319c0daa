//! Tuple(T1, …) and Point: one column per element, one after the other, each with
//! its own serialization info.

use super::{ColumnData, Layout, ScanMemo, SerInfo};
use crate::buffer::BufferPool;
use crate::error::{ProtoError, Result};
use crate::wire::{Budget, Reader};

/// Reads `rows` rows of every element, each with its serialization info from `elems`.
pub(super) fn read(
    r: &mut Reader<'_>,
    rows: usize,
    cols: &mut [ColumnData],
    elems: Option<&[SerInfo]>,
    layout: Layout,
    pool: &mut BufferPool,
) -> Result<()> {
    for (i, c) in cols.iter_mut().enumerate() {
        let info = elems.and_then(|e| e.get(i));
        c.read_data(r, rows, info, layout, pool)?;
    }
    Ok(())
}

/// Steps over every element; `false` as soon as one is not measured.
pub(super) fn measure(
    r: &mut Reader<'_>,
    rows: usize,
    cols: &[ColumnData],
    elems: Option<&[SerInfo]>,
    layout: Layout,
    memo: &mut ScanMemo,
) -> Result<bool> {
    for (i, c) in cols.iter().enumerate() {
        let elem = elems.and_then(|e| e.get(i));
        if !c.measure_data(r, rows, elem, layout, memo)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Writes every element.
pub(super) fn write(out: &mut Vec<u8>, cols: &[ColumnData], layout: Layout) -> Result<()> {
    cols.iter().try_for_each(|c| c.write_data(out, layout))
}

/// Appends the rows `idx` picks to every element.
pub(super) fn append(
    cols: &mut [ColumnData],
    src: &[ColumnData],
    idx: &[u64],
    pool: &mut BufferPool,
    budget: &mut Budget,
) -> Result<()> {
    if cols.len() != src.len() {
        return Err(ProtoError::violation("column shapes differ"));
    }
    cols.iter_mut().zip(src).try_for_each(|(c, s)| c.append_from(s, idx, pool, budget))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_one_after_the_other() {
        let bytes = [1u8, 2, 3, 0, 4, 0];
        let mut pool = BufferPool::new();
        let layout = Layout::for_revision(54492);
        let mut cols = vec![ColumnData::from_values::<u8>(&[]), ColumnData::from_values::<u16>(&[])];
        read(&mut Reader::new(&bytes), 2, &mut cols, None, layout, &mut pool).unwrap();
        let mut out = Vec::new();
        write(&mut out, &cols, layout).unwrap();
        assert_eq!(out, bytes);
        let mut r = Reader::new(&bytes);
        assert!(measure(&mut r, 2, &cols, None, layout, &mut ScanMemo::default()).unwrap());
        assert_eq!(r.remaining(), 0);
        let src = vec![ColumnData::from_values(&[9u8]), ColumnData::from_values(&[7u16])];
        let mut budget = Budget::UNLIMITED;
        append(&mut cols, &src, &[0], &mut pool, &mut budget).unwrap();
        assert_eq!(cols[1].rows(), 3);
        assert!(append(&mut cols, &src[..1], &[0], &mut pool, &mut budget).is_err());
    }
}
