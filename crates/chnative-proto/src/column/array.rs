//! Array(T), and what is an array on the wire (Map as Array(Tuple(K, V)), Nested,
//! the geo rings and polygons): u64 end offsets per row, then the flattened elements.

use super::check::{cannot_hold, check_end_offsets, Reason};
use super::codec::{no_row_binary, prefix_of, ColumnCodec};
use super::{
    check_offsets, checked_len, last_offset, selected_len, BodyForm, ColumnData, Layout, ScanMemo, TupleColumn,
};
use crate::buffer::{AlignedBuf, BufferPool};
use crate::error::{ProtoError, Result};
use crate::types::DataType;
use crate::wire::{Budget, Reader};

/// Storage of an Array(T) (or Map, Nested, geo) column: end offsets and the elements.
#[derive(Debug, Clone)]
pub struct ArrayColumn {
    pub(crate) offsets: AlignedBuf,
    pub(crate) inner: Box<ColumnData>,
}

impl ArrayColumn {
    pub(crate) fn new(offsets: AlignedBuf, inner: ColumnData) -> ArrayColumn {
        ArrayColumn { offsets, inner: Box::new(inner) }
    }

    /// The u64 end offset of each row into [`ArrayColumn::inner`].
    pub fn offsets(&self) -> &AlignedBuf {
        &self.offsets
    }

    /// The flattened elements.
    pub fn inner(&self) -> &ColumnData {
        &self.inner
    }
}

impl ColumnCodec for ArrayColumn {
    fn empty_like(&self, pool: &mut BufferPool) -> Self {
        ArrayColumn { offsets: pool.take(), inner: Box::new(self.inner.empty_like(pool)) }
    }

    fn recycle(self, pool: &mut BufferPool) {
        pool.give(self.offsets);
        self.inner.recycle(pool);
    }

    fn rows(&self) -> usize {
        self.offsets.len() / 8
    }

    fn clear(&mut self) {
        self.offsets.clear();
        self.inner.clear();
    }

    fn shape_name(&self) -> String {
        "array data".into()
    }

    prefix_of!(inner);

    /// Reads `rows` end offsets and the elements they count.
    fn read_body(&mut self, r: &mut Reader<'_>, rows: usize, form: BodyForm<'_>, pool: &mut BufferPool) -> Result<()> {
        let raw = r.bytes(checked_len(rows, 8)?)?;
        r.charge(raw.len())?;
        self.offsets.set_from(raw);
        let n = check_offsets(self.offsets.typed::<u64>()?)?;
        self.inner.read_data(r, n, None, form.layout, pool)
    }

    fn measure_body(&self, r: &mut Reader<'_>, rows: usize, form: BodyForm<'_>, memo: &mut ScanMemo) -> Result<bool> {
        let n = last_offset(r.bytes(checked_len(rows, 8)?)?)?;
        self.inner.measure_data(r, n, None, form.layout, memo)
    }

    fn write_body(&self, out: &mut Vec<u8>, layout: Layout) -> Result<()> {
        out.extend_from_slice(self.offsets.as_bytes());
        self.inner.write_data(out, layout)
    }

    /// `u64::MAX` picks the empty array.
    fn append_from(&mut self, src: &Self, idx: &[u64], pool: &mut BufferPool, budget: &mut Budget) -> Result<()> {
        let oob = || ProtoError::violation("row index out of range");
        let so = src.offsets.typed::<u64>()?;
        let elements = selected_len(so, idx)?;
        // Offsets, and the temporary element index list.
        budget.charge_n(idx.len(), 8)?;
        budget.charge_n(usize::try_from(elements).unwrap_or(usize::MAX), 8)?;
        let mut inner_idx = pool.take();
        let mut total = self.offsets.typed::<u64>()?.last().copied().unwrap_or(0);
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
            self.offsets.push(total);
        }
        let res = inner_idx.typed::<u64>().and_then(|ix| self.inner.append_from(&src.inner, ix, pool, budget));
        pool.give(inner_idx);
        res
    }

    fn check_fits(&self, ty: &DataType, _: Option<&[u8]>) -> Result<(), Reason> {
        match ty {
            DataType::Array(t) => {
                let offsets = self.offsets.typed::<u64>().map_err(|e| e.to_string())?;
                check_end_offsets(offsets, self.inner.rows(), "array")?;
                self.inner.check_at(t, None)
            }
            DataType::Map(k, v) => {
                let offsets = self.offsets.typed::<u64>().map_err(|e| e.to_string())?;
                check_end_offsets(offsets, self.inner.rows(), "map")?;
                let Some([keys, values]) = self.inner.tuple_elements() else { return Err(cannot_hold(self, ty)) };
                if keys.rows() != values.rows() {
                    return Err(format!("map has {} keys and {} values", keys.rows(), values.rows()));
                }
                keys.check_at(k, None)?;
                values.check_at(v, None)
            }
            _ => Err(cannot_hold(self, ty)),
        }
    }

    /// Arrays, and maps as arrays of key-value tuples.
    fn push_row_binary(&mut self, ty: &DataType, r: &mut Reader<'_>) -> Result<()> {
        match ty {
            DataType::Array(t) => {
                let n = r.varuint()?;
                // Every element takes at least one byte.
                let n = usize::try_from(n)
                    .ok()
                    .filter(|&n| n <= r.remaining())
                    .ok_or_else(|| ProtoError::violation("array length beyond the value"))?;
                for _ in 0..n {
                    self.inner.push_row_binary(t, r)?;
                }
                self.offsets.push(self.inner.rows() as u64);
            }
            DataType::Map(k, v) => {
                let n = r.varuint()?;
                let n = usize::try_from(n)
                    .ok()
                    .filter(|&n| n <= r.remaining())
                    .ok_or_else(|| ProtoError::violation("map size beyond the value"))?;
                let ColumnData::Tuple(TupleColumn { elems: kv }) = self.inner.as_mut() else {
                    return Err(ProtoError::violation("column shape differs from its type"));
                };
                if kv.len() != 2 {
                    return Err(ProtoError::violation("column shape differs from its type"));
                }
                for _ in 0..n {
                    kv[0].push_row_binary(k, r)?;
                    kv[1].push_row_binary(v, r)?;
                }
                self.offsets.push(kv[0].rows() as u64);
            }
            _ => return Err(no_row_binary(ty)),
        }
        Ok(())
    }

    fn push_default(&mut self, _: &DataType) -> Result<()> {
        self.offsets.push(self.inner.rows() as u64);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::column::test_util::body_round_trip;
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
        let mut c = ArrayColumn::new(AlignedBuf::new(), ColumnData::from_values::<u8>(&[]));
        body_round_trip(&mut c, 3, &bytes, layout);
        assert_eq!(c.inner.rows(), 3);
        // Offsets going backwards are refused before any element is read.
        bytes[8] = 1;
        let res = c.read_body(&mut Reader::new(&bytes), 3, layout.into(), &mut pool);
        assert!(matches!(res, Err(ProtoError::Violation(_))));
    }

    #[test]
    fn gather_copies_picked_arrays() {
        let ColumnData::Array(src) = ColumnData::array(&[2, 2, 3], ColumnData::from_values(&[1u8, 2, 3])) else {
            unreachable!()
        };
        let mut pool = BufferPool::new();
        let mut budget = Budget::UNLIMITED;
        let mut c = ArrayColumn::new(AlignedBuf::new(), ColumnData::from_values::<u8>(&[]));
        c.append_from(&src, &[2, u64::MAX, 0], &mut pool, &mut budget).unwrap();
        assert_eq!(c.offsets.typed::<u64>().unwrap(), [1, 1, 3]);
        let ColumnData::Fixed(inner) = c.inner.as_ref() else { unreachable!() };
        assert_eq!(inner.data.as_bytes(), [3, 1, 2]);
        assert!(c.append_from(&src, &[3], &mut pool, &mut budget).is_err());
    }
}
