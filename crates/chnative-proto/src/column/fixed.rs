//! Fixed-width columns: every type whose rows are `width` little-endian bytes
//! (numbers, dates and times, decimals, UUID, IPs, enums, FixedString(N), Nothing).
//!
//! One codec serves them all: which types are fixed-width, and how wide, is
//! [`DataType::fixed_width`](crate::types::DataType::fixed_width), and which Rust
//! type views them is [`FixedValue`](crate::view::FixedValue).

use super::check::{cannot_hold, check_fixed_values, Reason};
use super::codec::ColumnCodec;
use super::{checked_len, BodyForm, Layout, ScanMemo};
use crate::buffer::{AlignedBuf, BufferPool};
use crate::error::{ProtoError, Result};
use crate::types::DataType;
use crate::wire::{Budget, Reader};

/// Storage of a fixed-width column: `rows × width` bytes, little-endian as on the wire.
#[derive(Debug, Clone)]
pub struct FixedColumn {
    /// Bytes per row.
    pub(crate) width: usize,
    pub(crate) data: AlignedBuf,
}

impl FixedColumn {
    pub(crate) fn new(width: usize, data: AlignedBuf) -> FixedColumn {
        FixedColumn { width, data }
    }

    /// Bytes per row.
    pub fn width(&self) -> usize {
        self.width
    }

    /// The values, `rows × width` bytes back to back.
    pub fn data(&self) -> &AlignedBuf {
        &self.data
    }
}

impl ColumnCodec for FixedColumn {
    fn empty_like(&self, pool: &mut BufferPool) -> Self {
        FixedColumn { width: self.width, data: pool.take() }
    }

    fn recycle(self, pool: &mut BufferPool) {
        pool.give(self.data);
    }

    fn rows(&self) -> usize {
        self.data.len() / self.width.max(1)
    }

    fn clear(&mut self) {
        self.data.clear();
    }

    fn shape_name(&self) -> String {
        format!("fixed-width data of {} bytes per value", self.width)
    }

    fn read_body(&mut self, r: &mut Reader<'_>, rows: usize, _: BodyForm<'_>, _: &mut BufferPool) -> Result<()> {
        let raw = r.bytes(checked_len(rows, self.width)?)?;
        r.charge(raw.len())?;
        self.data.set_from(raw);
        Ok(())
    }

    fn measure_body(&self, r: &mut Reader<'_>, rows: usize, _: BodyForm<'_>, _: &mut ScanMemo) -> Result<bool> {
        r.bytes(checked_len(rows, self.width)?)?;
        Ok(true)
    }

    fn write_body(&self, out: &mut Vec<u8>, _: Layout) -> Result<()> {
        out.extend_from_slice(self.data.as_bytes());
        Ok(())
    }

    /// `u64::MAX` picks zero bytes, the default.
    fn append_from(&mut self, src: &Self, idx: &[u64], _: &mut BufferPool, budget: &mut Budget) -> Result<()> {
        let oob = || ProtoError::violation("row index out of range");
        let width = self.width;
        budget.charge_n(idx.len(), width)?;
        let sb = src.data.as_bytes();
        for &i in idx {
            if i == u64::MAX {
                self.data.resize_zeroed(self.data.len() + width);
            } else {
                let at = (i as usize).checked_mul(width).ok_or_else(oob)?;
                self.data.extend_from(sb.get(at..at + width).ok_or_else(oob)?);
            }
        }
        Ok(())
    }

    fn check_fits(&self, ty: &DataType, nulls: Option<&[u8]>) -> Result<(), Reason> {
        let Some(want) = ty.fixed_width() else {
            // Tuple() is a one-byte placeholder per row.
            return match ty {
                DataType::Tuple(elems) if elems.is_empty() && self.width == 1 => Ok(()),
                _ => Err(cannot_hold(self, ty)),
            };
        };
        if self.width != want {
            return Err(format!("values are {} bytes wide, {ty} needs {want}", self.width));
        }
        if want == 0 || !self.data.len().is_multiple_of(want) {
            return Err(format!("{} bytes is not a whole number of {want}-byte values", self.data.len()));
        }
        check_fixed_values(ty, self.data.as_bytes(), want, nulls)
    }

    fn push_row_binary(&mut self, _: &DataType, r: &mut Reader<'_>) -> Result<()> {
        self.data.extend_from(r.bytes(self.width)?);
        Ok(())
    }

    fn push_default(&mut self, _: &DataType) -> Result<()> {
        self.data.resize_zeroed(self.data.len() + self.width);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::column::test_util::body_round_trip;
    use crate::column::ColumnData;
    use crate::error::ProtoError;

    const L: Layout = Layout { sized_strings: true, sized_dict_strings: false };

    #[test]
    fn read_write_measure_agree() {
        let bytes: Vec<u8> = (0u8..12).collect();
        let mut c = FixedColumn::new(4, AlignedBuf::new());
        body_round_trip(&mut c, 3, &bytes, L);
        let pool = &mut BufferPool::new();
        // Short input asks for exactly what is missing.
        let mut r = Reader::new(&bytes[..10]);
        assert!(matches!(c.read_body(&mut r, 3, L.into(), pool), Err(ProtoError::Incomplete { needed: 12 })));
        let mut r = Reader::new(&bytes);
        let wide = FixedColumn::new(8, AlignedBuf::new());
        assert!(matches!(
            wide.measure_body(&mut r, usize::MAX, L.into(), &mut ScanMemo::default()),
            Err(ProtoError::Violation(_))
        ));
    }

    #[test]
    fn gather_picks_rows_and_defaults() {
        let ColumnData::Fixed(src) = ColumnData::from_values(&[10u16, 20, 30]) else { unreachable!() };
        let pool = &mut BufferPool::new();
        let mut c = FixedColumn::new(2, AlignedBuf::new());
        let mut unlimited = Budget::UNLIMITED;
        c.append_from(&src, &[2, u64::MAX, 0, 2], pool, &mut unlimited).unwrap();
        assert_eq!(c.data.typed::<u16>().unwrap(), [30, 0, 10, 30]);
        assert!(matches!(c.append_from(&src, &[3], pool, &mut unlimited), Err(ProtoError::Violation(_))));
        // The budget is charged before anything is copied.
        let mut tight = Budget::new(7);
        let mut c = FixedColumn::new(2, AlignedBuf::new());
        assert!(c.append_from(&src, &[0, 1, 2, 0], pool, &mut tight).is_err());
    }
}
