//! Tuple(T1, …) and Point: one column per element, one after the other, each with
//! its own serialization info.

use super::check::{cannot_hold, Reason};
use super::codec::{no_default, no_row_binary, ColumnCodec};
use super::{BodyForm, ColumnData, Layout, ScanMemo};
use crate::buffer::BufferPool;
use crate::error::{ProtoError, Result};
use crate::types::DataType;
use crate::wire::{Budget, Reader};

/// Storage of a Tuple(T1, …) column: one column per element.
#[derive(Debug, Clone)]
pub struct TupleColumn {
    pub(crate) elems: Vec<ColumnData>,
}

impl TupleColumn {
    pub(crate) fn new(elems: Vec<ColumnData>) -> TupleColumn {
        TupleColumn { elems }
    }

    /// The element columns.
    pub fn elements(&self) -> &[ColumnData] {
        &self.elems
    }
}

impl ColumnCodec for TupleColumn {
    fn empty_like(&self, pool: &mut BufferPool) -> Self {
        TupleColumn { elems: self.elems.iter().map(|c| c.empty_like(pool)).collect() }
    }

    fn recycle(self, pool: &mut BufferPool) {
        self.elems.into_iter().for_each(|c| c.recycle(pool));
    }

    fn rows(&self) -> usize {
        self.elems.first().map_or(0, ColumnData::rows)
    }

    fn clear(&mut self) {
        self.elems.iter_mut().for_each(ColumnData::clear);
    }

    fn info_elements(&self) -> &[ColumnData] {
        &self.elems
    }

    fn shape_name(&self) -> String {
        format!("tuple data of {} elements", self.elems.len())
    }

    fn read_prefix(&mut self, r: &mut Reader<'_>) -> Result<()> {
        self.elems.iter_mut().try_for_each(|c| c.read_prefix(r))
    }

    fn measure_prefix(&self, r: &mut Reader<'_>) -> Result<bool> {
        for c in &self.elems {
            if !c.measure_prefix(r)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn write_prefix(&self, out: &mut Vec<u8>) {
        self.elems.iter().for_each(|c| c.write_prefix(out));
    }

    /// Reads `rows` rows of every element, each with its serialization info from `form.elems`.
    fn read_body(&mut self, r: &mut Reader<'_>, rows: usize, form: BodyForm<'_>, pool: &mut BufferPool) -> Result<()> {
        for (i, c) in self.elems.iter_mut().enumerate() {
            let info = form.elems.and_then(|e| e.get(i));
            c.read_data(r, rows, info, form.layout, pool)?;
        }
        Ok(())
    }

    /// `false` as soon as one element is not measured.
    fn measure_body(&self, r: &mut Reader<'_>, rows: usize, form: BodyForm<'_>, memo: &mut ScanMemo) -> Result<bool> {
        for (i, c) in self.elems.iter().enumerate() {
            let elem = form.elems.and_then(|e| e.get(i));
            if !c.measure_data(r, rows, elem, form.layout, memo)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn write_body(&self, out: &mut Vec<u8>, layout: Layout) -> Result<()> {
        self.elems.iter().try_for_each(|c| c.write_data(out, layout))
    }

    fn append_from(&mut self, src: &Self, idx: &[u64], pool: &mut BufferPool, budget: &mut Budget) -> Result<()> {
        if self.elems.len() != src.elems.len() {
            return Err(ProtoError::violation("column shapes differ"));
        }
        self.elems.iter_mut().zip(&src.elems).try_for_each(|(c, s)| c.append_from(s, idx, pool, budget))
    }

    fn check_fits(&self, ty: &DataType, _: Option<&[u8]>) -> Result<(), Reason> {
        let DataType::Tuple(types) = ty else { return Err(cannot_hold(self, ty)) };
        if types.len() != self.elems.len() {
            return Err(format!("{} tuple elements, the type has {}", self.elems.len(), types.len()));
        }
        let rows = self.rows();
        for (i, ((_, t), c)) in types.iter().zip(&self.elems).enumerate() {
            if c.rows() != rows {
                return Err(format!("tuple element {} has {} rows, element 1 has {rows}", i + 1, c.rows()));
            }
            c.check_at(t, None).map_err(|r| format!("tuple element {}: {r}", i + 1))?;
        }
        Ok(())
    }

    fn push_row_binary(&mut self, ty: &DataType, r: &mut Reader<'_>) -> Result<()> {
        let DataType::Tuple(types) = ty else { return Err(no_row_binary(ty)) };
        if types.len() != self.elems.len() {
            return Err(no_row_binary(ty));
        }
        for (c, (_, t)) in self.elems.iter_mut().zip(types) {
            c.push_row_binary(t, r)?;
        }
        Ok(())
    }

    fn push_default(&mut self, ty: &DataType) -> Result<()> {
        let DataType::Tuple(types) = ty else { return Err(no_default(ty)) };
        if types.len() != self.elems.len() {
            return Err(no_default(ty));
        }
        for (c, (_, t)) in self.elems.iter_mut().zip(types) {
            c.push_default(t)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::column::test_util::body_round_trip;

    #[test]
    fn elements_one_after_the_other() {
        let bytes = [1u8, 2, 3, 0, 4, 0];
        let mut pool = BufferPool::new();
        let layout = Layout::for_revision(54492);
        let mut c = TupleColumn::new(vec![ColumnData::from_values::<u8>(&[]), ColumnData::from_values::<u16>(&[])]);
        body_round_trip(&mut c, 2, &bytes, layout);
        let src = TupleColumn::new(vec![ColumnData::from_values(&[9u8]), ColumnData::from_values(&[7u16])]);
        let mut budget = Budget::UNLIMITED;
        c.append_from(&src, &[0], &mut pool, &mut budget).unwrap();
        assert_eq!(c.elems[1].rows(), 3);
        let short = TupleColumn::new(vec![ColumnData::from_values(&[9u8])]);
        assert!(c.append_from(&short, &[0], &mut pool, &mut budget).is_err());
    }
}
