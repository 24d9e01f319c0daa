//! Columns whose rows delimit themselves: the wire has no lengths, each row's
//! encoding says where it ends (aggregate-function states are the first such family).
//!
//! Rows are kept as they came, as end offsets into one blob, so a column is written
//! back byte for byte. What a row looks like is a [`RowFormat`], found for a type in
//! the registry below: a new format is one module and one line there.

use std::sync::Arc;

use super::check::{cannot_hold, Reason};
use super::codec::ColumnCodec;
use super::string::{self, StringColumn};
use super::{BodyForm, Layout, ScanMemo};
use crate::buffer::{AlignedBuf, BufferPool};
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

/// Storage of a column whose rows delimit themselves: the [`RowFormat`] that finds
/// each row's end, and the rows as they came, kept as a String column keeps its
/// strings (the u64 end offset of each row into one blob).
#[derive(Debug, Clone)]
pub struct DelimitedColumn {
    pub(crate) format: Arc<dyn RowFormat>,
    pub(crate) rows: StringColumn,
}

impl DelimitedColumn {
    pub(crate) fn new(format: Arc<dyn RowFormat>, offsets: AlignedBuf, data: AlignedBuf) -> DelimitedColumn {
        DelimitedColumn { format, rows: StringColumn::new(offsets, data) }
    }

    /// How a row ends.
    pub fn format(&self) -> &Arc<dyn RowFormat> {
        &self.format
    }

    /// The u64 end offset of each row.
    pub fn offsets(&self) -> &AlignedBuf {
        &self.rows.offsets
    }

    /// All rows back to back, as on the wire.
    pub fn data(&self) -> &AlignedBuf {
        &self.rows.data
    }
}

impl ColumnCodec for DelimitedColumn {
    fn empty_like(&self, pool: &mut BufferPool) -> Self {
        DelimitedColumn { format: self.format.clone(), rows: StringColumn::take(pool) }
    }

    fn recycle(self, pool: &mut BufferPool) {
        self.rows.recycle(pool);
    }

    fn rows(&self) -> usize {
        self.rows.rows()
    }

    fn clear(&mut self) {
        self.rows.clear();
    }

    fn shape_name(&self) -> String {
        "aggregate states".into()
    }

    /// Finds where each row ends, then copies them as one blob.
    fn read_body(&mut self, r: &mut Reader<'_>, rows: usize, _: BodyForm<'_>, _: &mut BufferPool) -> Result<()> {
        // Each row takes at least one byte: the row count is bounded by the input before
        // anything is reserved for it.
        r.need(rows)?;
        r.charge_n(rows, 8)?;
        let start = r.position();
        let StringColumn { offsets, data, .. } = &mut self.rows;
        offsets.clear();
        for _ in 0..rows {
            self.format.skip_row(r)?;
            offsets.push((r.position() - start) as u64);
        }
        let total = r.position() - start;
        r.charge(total)?;
        r.set_position(start);
        data.set_from(r.bytes(total)?);
        Ok(())
    }

    fn measure_body(&self, r: &mut Reader<'_>, rows: usize, _: BodyForm<'_>, _: &mut ScanMemo) -> Result<bool> {
        r.need(rows)?;
        (0..rows).try_for_each(|_| self.format.skip_row(r))?;
        Ok(true)
    }

    /// The rows back to back, as they came.
    fn write_body(&self, out: &mut Vec<u8>, _: Layout) -> Result<()> {
        out.extend_from_slice(self.rows.data.as_bytes());
        Ok(())
    }

    /// A self-delimiting row has no default this crate could write, so `u64::MAX`
    /// (a row left out by a sparse layer) is refused.
    fn append_from(&mut self, src: &Self, idx: &[u64], _: &mut BufferPool, budget: &mut Budget) -> Result<()> {
        if idx.contains(&u64::MAX) {
            return Err(ProtoError::violation("a sparse layer over a column with no default row"));
        }
        let (to, from) = (&mut self.rows, &src.rows);
        string::append(&mut to.offsets, &mut to.data, &from.offsets, &from.data, idx, budget)
    }

    /// Self-delimiting rows only come from a decoder, which checks them.
    fn check_fits(&self, ty: &DataType, _: Option<&[u8]>) -> Result<(), Reason> {
        match ty {
            DataType::AggregateFunction(..) => Ok(()),
            _ => Err(cannot_hold(self, ty)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::column::test_util::body_round_trip;

    /// Rows of one length byte and that many bytes.
    #[derive(Debug)]
    struct Counted;

    impl RowFormat for Counted {
        fn skip_row(&self, r: &mut Reader<'_>) -> Result<()> {
            let n = r.u8()?;
            r.bytes(usize::from(n)).map(|_| ())
        }
    }

    const L: Layout = Layout { sized_strings: true, sized_dict_strings: false };

    fn counted() -> DelimitedColumn {
        DelimitedColumn::new(Arc::new(Counted), AlignedBuf::new(), AlignedBuf::new())
    }

    #[test]
    fn rows_are_found_kept_and_written_back() {
        let bytes = [1u8, 9, 0, 2, 7, 8];
        let mut c = counted();
        body_round_trip(&mut c, 3, &bytes, L);
        assert_eq!(c.rows(), 3);
        assert_eq!(c.offsets().typed::<u64>().unwrap(), [2, 3, 6]);
    }

    #[test]
    fn short_input_and_impossible_row_counts() {
        let bytes = [1u8, 9, 0, 2, 7, 8];
        let mut c = counted();
        let pool = &mut BufferPool::new();
        for cut in 0..bytes.len() {
            let res = c.read_body(&mut Reader::new(&bytes[..cut]), 3, L.into(), pool);
            assert!(matches!(res, Err(ProtoError::Incomplete { .. })), "cut at {cut}: {res:?}");
        }
        // More rows than bytes: refused before a row is read or an offset reserved.
        let res = c.read_body(&mut Reader::new(&bytes), usize::MAX, L.into(), pool);
        assert!(matches!(res, Err(ProtoError::Incomplete { .. })), "{res:?}");
    }

    #[test]
    fn gather_refuses_a_default_row() {
        let pool = &mut BufferPool::new();
        let mut src = counted();
        src.read_body(&mut Reader::new(&[1u8, 9, 0]), 2, L.into(), pool).unwrap();
        let mut c = counted();
        let mut budget = Budget::UNLIMITED;
        c.append_from(&src, &[1, 0], pool, &mut budget).unwrap();
        assert_eq!(c.data().as_bytes(), [0, 1, 9]);
        assert!(c.append_from(&src, &[u64::MAX], pool, &mut budget).is_err());
    }
}
