//! Fixed-width columns: every type whose rows are `width` little-endian bytes
//! (numbers, dates and times, decimals, UUID, IPs, enums, FixedString(N), Nothing).
//!
//! One codec serves them all: which types are fixed-width, and how wide, is
//! [`DataType::fixed_width`](crate::types::DataType::fixed_width), and which Rust
//! type views them is [`FixedValue`](crate::view::FixedValue).

use super::checked_len;
use crate::buffer::AlignedBuf;
use crate::error::{ProtoError, Result};
use crate::wire::{Budget, Reader};

/// Reads `rows` values.
pub(super) fn read(r: &mut Reader<'_>, rows: usize, width: usize, data: &mut AlignedBuf) -> Result<()> {
    let raw = r.bytes(checked_len(rows, width)?)?;
    r.charge(raw.len())?;
    data.set_from(raw);
    Ok(())
}

/// Steps over `rows` values.
pub(super) fn measure(r: &mut Reader<'_>, rows: usize, width: usize) -> Result<()> {
    r.bytes(checked_len(rows, width)?)?;
    Ok(())
}

/// Writes the values.
pub(super) fn write(out: &mut Vec<u8>, data: &AlignedBuf) {
    out.extend_from_slice(data.as_bytes());
}

/// Appends the rows of `src` that `idx` picks (`u64::MAX`: zero bytes, the default).
pub(super) fn append(
    data: &mut AlignedBuf,
    width: usize,
    src: &AlignedBuf,
    idx: &[u64],
    budget: &mut Budget,
) -> Result<()> {
    let oob = || ProtoError::violation("row index out of range");
    budget.charge_n(idx.len(), width)?;
    let sb = src.as_bytes();
    for &i in idx {
        if i == u64::MAX {
            data.resize_zeroed(data.len() + width);
        } else {
            let at = (i as usize).checked_mul(width).ok_or_else(oob)?;
            data.extend_from(sb.get(at..at + width).ok_or_else(oob)?);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::column::ColumnData;
    use crate::error::ProtoError;

    #[test]
    fn read_write_measure_agree() {
        let bytes: Vec<u8> = (0u8..12).collect();
        let mut data = AlignedBuf::new();
        let mut r = Reader::new(&bytes);
        read(&mut r, 3, 4, &mut data).unwrap();
        assert_eq!(r.remaining(), 0);
        let mut out = Vec::new();
        write(&mut out, &data);
        assert_eq!(out, bytes);
        let mut r = Reader::new(&bytes);
        measure(&mut r, 3, 4).unwrap();
        assert_eq!(r.remaining(), 0);
        // Short input asks for exactly what is missing.
        let mut r = Reader::new(&bytes[..10]);
        assert!(matches!(read(&mut r, 3, 4, &mut data), Err(ProtoError::Incomplete { needed: 12 })));
        let mut r = Reader::new(&bytes);
        assert!(matches!(measure(&mut r, usize::MAX, 8), Err(ProtoError::Violation(_))));
    }

    #[test]
    fn gather_picks_rows_and_defaults() {
        let ColumnData::Fixed { data: src, .. } = ColumnData::from_values(&[10u16, 20, 30]) else { unreachable!() };
        let mut data = AlignedBuf::new();
        let mut unlimited = Budget::UNLIMITED;
        append(&mut data, 2, &src, &[2, u64::MAX, 0, 2], &mut unlimited).unwrap();
        assert_eq!(data.typed::<u16>().unwrap(), [30, 0, 10, 30]);
        assert!(matches!(append(&mut data, 2, &src, &[3], &mut unlimited), Err(ProtoError::Violation(_))));
        // The budget is charged before anything is copied.
        let mut tight = Budget::new(7);
        assert!(append(&mut AlignedBuf::new(), 2, &src, &[0, 1, 2, 0], &mut tight).is_err());
    }
}
