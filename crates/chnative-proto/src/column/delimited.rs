//! Columns whose rows delimit themselves: the wire has no lengths, each row's
//! encoding says where it ends (aggregate-function states are the first such family).
//!
//! Rows are kept as they came, as end offsets into one blob, so a column is written
//! back byte for byte. What a row looks like is a [`RowFormat`], found for a type in
//! the registry below: a new format is one module and one line there.

use std::sync::Arc;

use super::string;
use crate::buffer::AlignedBuf;
use crate::error::{ProtoError, Result};
use crate::types::DataType;
use crate::wire::{Budget, Reader};

/// How to find the end of one row of a self-delimiting column.
pub trait RowFormat: std::fmt::Debug + Send + Sync {
    /// Steps `r` over one row. Every row takes at least one byte; a row cut short
    /// is [`ProtoError::Incomplete`], as the reader reports it.
    fn skip_row(&self, r: &mut Reader<'_>) -> Result<()>;
}

/// A registry entry: the row format of a type, when the entry's family knows the type.
type FormatFor = fn(&DataType) -> Option<Arc<dyn RowFormat>>;

/// The formats, asked in turn for a type; the first that knows it wins.
const REGISTRY: &[FormatFor] = &[super::aggregate::row_format];

/// The row format of `ty`, when it is a self-delimiting type this crate knows.
pub(super) fn format_for(ty: &DataType) -> Option<Arc<dyn RowFormat>> {
    REGISTRY.iter().find_map(|f| f(ty))
}

/// Reads `rows` rows: finds where each ends, then copies them as one blob.
pub(super) fn read(
    r: &mut Reader<'_>,
    rows: usize,
    format: &dyn RowFormat,
    offsets: &mut AlignedBuf,
    data: &mut AlignedBuf,
) -> Result<()> {
    // Each row takes at least one byte: the row count is bounded by the input before
    // anything is reserved for it.
    r.need(rows)?;
    r.charge_n(rows, 8)?;
    let start = r.position();
    offsets.clear();
    for _ in 0..rows {
        format.skip_row(r)?;
        offsets.push((r.position() - start) as u64);
    }
    let total = r.position() - start;
    r.charge(total)?;
    r.set_position(start);
    data.set_from(r.bytes(total)?);
    Ok(())
}

/// Steps over `rows` rows.
pub(super) fn measure(r: &mut Reader<'_>, rows: usize, format: &dyn RowFormat) -> Result<()> {
    r.need(rows)?;
    (0..rows).try_for_each(|_| format.skip_row(r))
}

/// Writes the rows back to back, as they came.
pub(super) fn write(out: &mut Vec<u8>, data: &AlignedBuf) {
    out.extend_from_slice(data.as_bytes());
}

/// Appends the rows of `src` that `idx` picks. A self-delimiting row has no default
/// this crate could write, so `u64::MAX` (a row left out by a sparse layer) is refused.
pub(super) fn append(
    (offsets, data): (&mut AlignedBuf, &mut AlignedBuf),
    (src_offsets, src_data): (&AlignedBuf, &AlignedBuf),
    idx: &[u64],
    budget: &mut Budget,
) -> Result<()> {
    if idx.contains(&u64::MAX) {
        return Err(ProtoError::violation("a sparse layer over a column with no default row"));
    }
    string::append(offsets, data, src_offsets, src_data, idx, budget)
}

/// Rows held: one end offset each.
pub(super) fn rows(offsets: &AlignedBuf) -> usize {
    offsets.len() / 8
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows of one length byte and that many bytes.
    #[derive(Debug)]
    struct Counted;

    impl RowFormat for Counted {
        fn skip_row(&self, r: &mut Reader<'_>) -> Result<()> {
            let n = r.u8()?;
            r.bytes(usize::from(n)).map(|_| ())
        }
    }

    #[test]
    fn rows_are_found_kept_and_written_back() {
        let bytes = [1u8, 9, 0, 2, 7, 8];
        let (mut offsets, mut data) = (AlignedBuf::new(), AlignedBuf::new());
        let mut r = Reader::new(&bytes);
        read(&mut r, 3, &Counted, &mut offsets, &mut data).unwrap();
        assert_eq!((r.remaining(), rows(&offsets)), (0, 3));
        assert_eq!(offsets.typed::<u64>().unwrap(), [2, 3, 6]);
        let mut out = Vec::new();
        write(&mut out, &data);
        assert_eq!(out, bytes);
        let mut r = Reader::new(&bytes);
        measure(&mut r, 3, &Counted).unwrap();
        assert_eq!(r.remaining(), 0);
    }

    #[test]
    fn short_input_and_impossible_row_counts() {
        let bytes = [1u8, 9, 0, 2, 7, 8];
        let (mut offsets, mut data) = (AlignedBuf::new(), AlignedBuf::new());
        for cut in 0..bytes.len() {
            let res = read(&mut Reader::new(&bytes[..cut]), 3, &Counted, &mut offsets, &mut data);
            assert!(matches!(res, Err(ProtoError::Incomplete { .. })), "cut at {cut}: {res:?}");
        }
        // More rows than bytes: refused before a row is read or an offset reserved.
        let res = read(&mut Reader::new(&bytes), usize::MAX, &Counted, &mut offsets, &mut data);
        assert!(matches!(res, Err(ProtoError::Incomplete { .. })), "{res:?}");
    }

    #[test]
    fn gather_refuses_a_default_row() {
        let (mut so, mut sd) = (AlignedBuf::new(), AlignedBuf::new());
        read(&mut Reader::new(&[1u8, 9, 0]), 2, &Counted, &mut so, &mut sd).unwrap();
        let (mut offsets, mut data) = (AlignedBuf::new(), AlignedBuf::new());
        let mut budget = Budget::UNLIMITED;
        append((&mut offsets, &mut data), (&so, &sd), &[1, 0], &mut budget).unwrap();
        assert_eq!(data.as_bytes(), [0, 1, 9]);
        assert!(append((&mut offsets, &mut data), (&so, &sd), &[u64::MAX], &mut budget).is_err());
    }
}
