//! Nullable(T): one byte per row (1 = NULL), then the inner column with a
//! placeholder at each NULL row.

use super::check::{cannot_hold, Reason};
use super::codec::{no_default, no_row_binary, prefix_of, ColumnCodec};
use super::{BodyForm, ColumnData, Layout, ScanMemo};
use crate::buffer::{AlignedBuf, BufferPool};
use crate::error::{ProtoError, Result};
use crate::types::DataType;
use crate::wire::{Budget, Reader};

/// Storage of a Nullable(T) column: the null map and the values.
#[derive(Debug, Clone)]
pub struct NullableColumn {
    pub(crate) nulls: AlignedBuf,
    pub(crate) inner: Box<ColumnData>,
}

impl NullableColumn {
    pub(crate) fn new(nulls: AlignedBuf, inner: ColumnData) -> NullableColumn {
        NullableColumn { nulls, inner: Box::new(inner) }
    }

    /// One byte per row, 1 for NULL.
    pub fn nulls(&self) -> &AlignedBuf {
        &self.nulls
    }

    /// The values, with a placeholder at each NULL row.
    pub fn inner(&self) -> &ColumnData {
        &self.inner
    }

    /// A sparse Nullable(T) (revision ≥ 54483): NULL is the default, and the non-default
    /// values, already read into `values`, came as T without a null map. `idx` maps each
    /// row to its value, `u64::MAX` for NULL.
    pub(super) fn expand_sparse(
        &mut self,
        values: &ColumnData,
        idx: &[u64],
        pool: &mut BufferPool,
        budget: &mut Budget,
    ) -> Result<()> {
        budget.charge(idx.len())?;
        self.nulls.clear();
        for &i in idx {
            self.nulls.push(u8::from(i == u64::MAX));
        }
        self.inner.gather(values, idx, pool, budget)
    }
}

impl ColumnCodec for NullableColumn {
    fn empty_like(&self, pool: &mut BufferPool) -> Self {
        NullableColumn { nulls: pool.take(), inner: Box::new(self.inner.empty_like(pool)) }
    }

    fn recycle(self, pool: &mut BufferPool) {
        pool.give(self.nulls);
        self.inner.recycle(pool);
    }

    fn rows(&self) -> usize {
        self.nulls.len()
    }

    fn clear(&mut self) {
        self.nulls.clear();
        self.inner.clear();
    }

    fn shape_name(&self) -> String {
        "nullable data".into()
    }

    prefix_of!(inner);

    /// Reads the null map and `rows` inner values.
    fn read_body(&mut self, r: &mut Reader<'_>, rows: usize, form: BodyForm<'_>, pool: &mut BufferPool) -> Result<()> {
        let raw = r.bytes(rows)?;
        r.charge(raw.len())?;
        self.nulls.set_from(raw);
        self.inner.read_data(r, rows, None, form.layout, pool)
    }

    fn measure_body(&self, r: &mut Reader<'_>, rows: usize, form: BodyForm<'_>, memo: &mut ScanMemo) -> Result<bool> {
        r.bytes(rows)?;
        self.inner.measure_data(r, rows, None, form.layout, memo)
    }

    fn write_body(&self, out: &mut Vec<u8>, layout: Layout) -> Result<()> {
        out.extend_from_slice(self.nulls.as_bytes());
        self.inner.write_data(out, layout)
    }

    /// `u64::MAX` picks NULL.
    fn append_from(&mut self, src: &Self, idx: &[u64], pool: &mut BufferPool, budget: &mut Budget) -> Result<()> {
        let sn = src.nulls.as_bytes();
        budget.charge(idx.len())?;
        for &i in idx {
            let null = if i == u64::MAX {
                1u8
            } else {
                *sn.get(i as usize).ok_or_else(|| ProtoError::violation("row index out of range"))?
            };
            self.nulls.push(null);
        }
        self.inner.append_from(&src.inner, idx, pool, budget)
    }

    fn check_fits(&self, ty: &DataType, _: Option<&[u8]>) -> Result<(), Reason> {
        let DataType::Nullable(t) = ty else { return Err(cannot_hold(self, ty)) };
        let nulls = self.nulls.as_bytes();
        if nulls.len() != self.inner.rows() {
            return Err(format!("null map has {} rows, values have {}", nulls.len(), self.inner.rows()));
        }
        if let Some(i) = nulls.iter().position(|&b| b > 1) {
            return Err(format!("null map byte #{i} is {}, not 0 or 1", nulls[i]));
        }
        self.inner.check_at(t, Some(nulls))
    }

    fn push_row_binary(&mut self, ty: &DataType, r: &mut Reader<'_>) -> Result<()> {
        let DataType::Nullable(t) = ty else { return Err(no_row_binary(ty)) };
        if r.u8()? != 0 {
            self.nulls.push(1u8);
            self.inner.push_default(t)
        } else {
            self.inner.push_row_binary(t, r)?;
            self.nulls.push(0u8);
            Ok(())
        }
    }

    fn push_default(&mut self, ty: &DataType) -> Result<()> {
        let DataType::Nullable(t) = ty else { return Err(no_default(ty)) };
        self.nulls.push(1u8);
        self.inner.push_default(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::column::test_util::body_round_trip;

    #[test]
    fn nulls_then_values_both_ways() {
        let bytes = [0u8, 1, 0, 7, 0, 9];
        let mut c = NullableColumn::new(AlignedBuf::new(), ColumnData::from_values::<u8>(&[]));
        let layout = Layout::for_revision(54492);
        body_round_trip(&mut c, 3, &bytes, layout);
        assert_eq!(c.nulls.as_bytes(), [0, 1, 0]);
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
        let src = NullableColumn::new(src_nulls, ColumnData::from_values(&[0u32, 5]));
        let mut c = NullableColumn::new(AlignedBuf::new(), ColumnData::from_values::<u32>(&[]));
        c.append_from(&src, &[1, u64::MAX, 0], &mut pool, &mut budget).unwrap();
        assert_eq!(c.nulls.as_bytes(), [0, 1, 1]);
        assert!(c.append_from(&src, &[2], &mut pool, &mut budget).is_err());

        let values = ColumnData::from_values(&[8u32]);
        c.expand_sparse(&values, &[u64::MAX, 0, u64::MAX], &mut pool, &mut budget).unwrap();
        assert_eq!(c.nulls.as_bytes(), [1, 0, 1]);
        let ColumnData::Fixed(inner) = c.inner.as_ref() else { unreachable!() };
        assert_eq!(inner.data.typed::<u32>().unwrap(), [0, 8, 0]);
    }
}
