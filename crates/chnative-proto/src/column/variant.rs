//! Variant columns.
//!
//! Wire layouts, as ClickHouse 26.9 sends them in Native blocks (verified against
//! captures in `tests/data/captures/`, see `tests/golden_dynamic.rs`):
//!
//! **Variant(T1..Tn)**: prefix = UInt64 discriminator mode (0 BASIC, 1 COMPACT), then
//! each alternative's prefix. Data = one UInt8 discriminator per row (255 = NULL; in
//! COMPACT mode granules of `VarUInt rows, UInt8 format (0 plain / 1 single), bytes`),
//! then each alternative's rows, densely, in alternative order.

use crate::buffer::{AlignedBuf, BufferPool};
use crate::error::{ProtoError, Result};
use crate::wire::{Budget, Reader, WriteExt};

use super::check::{cannot_hold, Reason};
use super::codec::{no_row_binary, not_measured, ColumnCodec};
use super::{checked_len, BodyForm, ColumnData, Layout};
use crate::types::DataType;

/// The discriminator of a NULL Variant row.
pub const NULL_DISCRIMINATOR: u8 = 255;
/// Variant discriminators mode: one byte per row.
pub const VARIANT_MODE_BASIC: u64 = 0;
/// Variant discriminators mode: granules that may collapse to a single discriminator.
pub const VARIANT_MODE_COMPACT: u64 = 1;
const GRANULE_PLAIN: u8 = 0;
const GRANULE_SINGLE: u8 = 1;
/// Storage of a `Variant(T1, …)` column.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct VariantData {
    /// Discriminators mode read from the prefix (written back unchanged).
    pub mode: u64,
    /// One byte per row: the alternative, [`NULL_DISCRIMINATOR`] for NULL.
    pub discriminators: AlignedBuf,
    /// u64 per row: the row's index inside its alternative (0 for NULL rows).
    pub offsets: AlignedBuf,
    /// One column per alternative, holding only the rows that chose it.
    pub variants: Vec<ColumnData>,
}

impl VariantData {
    /// Storage over the given alternatives.
    pub fn new(variants: Vec<ColumnData>, pool: &mut BufferPool) -> VariantData {
        VariantData { mode: VARIANT_MODE_BASIC, discriminators: pool.take(), offsets: pool.take(), variants }
    }

    /// Rows held.
    pub fn rows(&self) -> usize {
        self.discriminators.len()
    }

    /// Validates the discriminators, fills `offsets`, and returns the rows per alternative.
    fn compute_offsets(&mut self) -> Result<[usize; 256]> {
        let n = self.variants.len();
        let rows = self.discriminators.len();
        let mut counts = [0usize; 256];
        self.offsets.clear();
        self.offsets.resize_zeroed(checked_len(rows, 8)?);
        let offsets = self.offsets.typed_mut::<u64>()?;
        for (o, &d) in offsets.iter_mut().zip(self.discriminators.as_bytes()) {
            if d == NULL_DISCRIMINATOR {
                continue;
            }
            if usize::from(d) >= n {
                return Err(ProtoError::violation(format!("Variant discriminator {d} beyond {n} alternatives")));
            }
            *o = counts[usize::from(d)] as u64;
            counts[usize::from(d)] += 1;
        }
        Ok(counts)
    }

    pub(super) fn push_null(&mut self) {
        self.discriminators.push(NULL_DISCRIMINATOR);
        self.offsets.push(0u64);
    }
}

impl ColumnCodec for VariantData {
    fn empty_like(&self, pool: &mut BufferPool) -> VariantData {
        VariantData {
            mode: self.mode,
            discriminators: pool.take(),
            offsets: pool.take(),
            variants: self.variants.iter().map(|v| v.empty_like(pool)).collect(),
        }
    }

    fn recycle(self, pool: &mut BufferPool) {
        pool.give(self.discriminators);
        pool.give(self.offsets);
        self.variants.into_iter().for_each(|v| v.recycle(pool));
    }

    fn clear(&mut self) {
        self.discriminators.clear();
        self.offsets.clear();
        self.variants.iter_mut().for_each(ColumnData::clear);
    }

    fn read_prefix(&mut self, r: &mut Reader<'_>) -> Result<()> {
        let mode = r.u64_le()?;
        if mode != VARIANT_MODE_BASIC && mode != VARIANT_MODE_COMPACT {
            return Err(ProtoError::violation(format!("Variant discriminators mode {mode}")));
        }
        self.mode = mode;
        self.variants.iter_mut().try_for_each(|v| v.read_prefix(r))
    }

    fn read_body(&mut self, r: &mut Reader<'_>, rows: usize, form: BodyForm<'_>, pool: &mut BufferPool) -> Result<()> {
        self.discriminators.clear();
        if rows > 0 {
            // A discriminator and an offset per row, however few bytes COMPACT granules take.
            r.charge_n(rows, 9)?;
            match self.mode {
                VARIANT_MODE_BASIC => self.discriminators.set_from(r.bytes(rows)?),
                _ => {
                    let mut got = 0usize;
                    while got < rows {
                        let n = r.varuint()?;
                        let n = usize::try_from(n)
                            .ok()
                            .filter(|&n| n > 0 && n <= rows - got)
                            .ok_or_else(|| ProtoError::violation("Variant granule size does not fit the rows"))?;
                        match r.u8()? {
                            GRANULE_PLAIN => self.discriminators.extend_from(r.bytes(n)?),
                            GRANULE_SINGLE => {
                                let d = r.u8()?;
                                let at = self.discriminators.len();
                                self.discriminators.resize_zeroed(at + n);
                                self.discriminators.as_bytes_mut()[at..].fill(d);
                            }
                            f => return Err(ProtoError::violation(format!("Variant granule format {f}"))),
                        }
                        got += n;
                    }
                }
            }
        }
        let counts = self.compute_offsets()?;
        for (v, &n) in self.variants.iter_mut().zip(counts.iter()) {
            v.read_data(r, n, None, form.layout, pool)?;
        }
        Ok(())
    }

    fn write_prefix(&self, out: &mut Vec<u8>) {
        out.put_u64_le(self.mode);
        self.variants.iter().for_each(|v| v.write_prefix(out));
    }

    fn write_body(&self, out: &mut Vec<u8>, layout: Layout) -> Result<()> {
        let rows = self.rows();
        if rows > 0 {
            if self.mode == VARIANT_MODE_COMPACT {
                out.put_varuint(rows as u64);
                out.put_u8(GRANULE_PLAIN);
            }
            out.extend_from_slice(self.discriminators.as_bytes());
        }
        for v in &self.variants {
            v.write_data(out, layout)?;
        }
        Ok(())
    }

    /// `u64::MAX` picks NULL.
    fn append_from(
        &mut self,
        src: &VariantData,
        idx: &[u64],
        pool: &mut BufferPool,
        budget: &mut Budget,
    ) -> Result<()> {
        if self.variants.len() != src.variants.len() {
            return Err(ProtoError::violation("column shapes differ"));
        }
        // A discriminator, an offset and (temporarily) a pick per row.
        budget.charge_n(idx.len(), 17)?;
        let oob = || ProtoError::violation("row index out of range");
        let sd = src.discriminators.as_bytes();
        let so = src.offsets.typed::<u64>()?;
        let mut picks: Vec<Vec<u64>> = vec![Vec::new(); self.variants.len()];
        let mut next: Vec<u64> = self.variants.iter().map(|v| v.rows() as u64).collect();
        for &i in idx {
            let d = if i == u64::MAX { NULL_DISCRIMINATOR } else { *sd.get(i as usize).ok_or_else(oob)? };
            self.discriminators.push(d);
            if d == NULL_DISCRIMINATOR {
                self.offsets.push(0u64);
            } else {
                let k = usize::from(d);
                self.offsets.push(next[k]);
                next[k] += 1;
                picks[k].push(so[i as usize]);
            }
        }
        for ((v, s), p) in self.variants.iter_mut().zip(&src.variants).zip(&picks) {
            if !p.is_empty() {
                v.append_from(s, p, pool, budget)?;
            }
        }
        Ok(())
    }

    fn rows(&self) -> usize {
        VariantData::rows(self)
    }

    fn shape_name(&self) -> String {
        "Variant data".into()
    }

    not_measured!();

    fn check_fits(&self, ty: &DataType, _: Option<&[u8]>) -> Result<(), Reason> {
        let DataType::Variant(alts) = ty else { return Err(cannot_hold(self, ty)) };
        if alts.len() != self.variants.len() {
            return Err(format!("{} alternatives, the type has {}", self.variants.len(), alts.len()));
        }
        let mut counts = vec![0usize; alts.len()];
        for (i, &d) in self.discriminators.as_bytes().iter().enumerate() {
            match counts.get_mut(usize::from(d)) {
                Some(n) => *n += 1,
                None if d == NULL_DISCRIMINATOR => {}
                None => return Err(format!("discriminator #{i} is {d}, beyond {} alternatives", alts.len())),
            }
        }
        for (i, (t, c)) in alts.iter().zip(&self.variants).enumerate() {
            if c.rows() != counts[i] {
                return Err(format!("alternative {t} has {} rows, {} rows choose it", c.rows(), counts[i]));
            }
            c.check_at(t, None)?;
        }
        Ok(())
    }

    fn push_row_binary(&mut self, ty: &DataType, r: &mut Reader<'_>) -> Result<()> {
        let DataType::Variant(alts) = ty else { return Err(no_row_binary(ty)) };
        let d = r.u8()?;
        if d == NULL_DISCRIMINATOR {
            self.push_null();
        } else {
            let k = usize::from(d);
            let (Some(col), Some(t)) = (self.variants.get_mut(k), alts.get(k)) else {
                return Err(ProtoError::violation(format!("Variant discriminator {d} out of range")));
            };
            let at = col.rows() as u64;
            col.push_row_binary(t, r)?;
            self.discriminators.push(d);
            self.offsets.push(at);
        }
        Ok(())
    }

    /// NULL, whatever the type.
    fn push_default(&mut self, _: &DataType) -> Result<()> {
        self.push_null();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::column::test_util::*;
    use crate::types::DataType;

    #[test]
    fn variant_basic_as_the_server_sends_it() {
        // Variant(Array(UInt8), String, UInt64, UInt8) rows: 1::UInt64, 'ab', [1,2], NULL, 7::UInt8 (revision 54492).
        let mut b = Vec::new();
        b.put_u64_le(VARIANT_MODE_BASIC);
        b.extend_from_slice(&[2, 1, 0, 255, 3]);
        b.put_u64_le(2);
        b.extend_from_slice(&[1, 2]);
        b.put_u64_le(2);
        b.extend_from_slice(b"ab");
        b.put_u64_le(1);
        b.push(7);
        let ty = "Variant(Array(UInt8), String, UInt64, UInt8)";
        let c = round_trip(ty, 5, &b, NEW);
        let t = DataType::parse(ty).unwrap();
        let v = view(&t, ty, &c);
        let var = v.as_variant().unwrap();
        assert_eq!(var.row(0), Some((2, 0)));
        assert_eq!(var.row(3), None);
        assert_eq!(var.variant(2).unwrap().values::<u64>().unwrap(), &[1]);
        assert_eq!(var.variant(1).unwrap().as_strings().unwrap().str(0).unwrap(), "ab");
    }

    #[test]
    fn variant_compact_granules() {
        // COMPACT: one single-discriminator granule of 2 rows, then a plain one of 3.
        let mut b = Vec::new();
        b.put_u64_le(VARIANT_MODE_COMPACT);
        let ty = DataType::parse("Variant(String, UInt32)").unwrap();
        let mut pool = BufferPool::new();
        let mut c = ColumnData::for_type(&ty, &mut pool).unwrap();
        b.put_varuint(2);
        b.push(GRANULE_SINGLE);
        b.push(1);
        b.put_varuint(3);
        b.push(GRANULE_PLAIN);
        b.extend_from_slice(&[0, 255, 1]);
        b.extend_from_slice(&[1, b'x']);
        for v in [5u32, 6, 7] {
            b.put_u32_le(v);
        }
        let mut r = Reader::new(&b);
        c.read_prefix(&mut r).unwrap();
        c.read_data(&mut r, 5, None, OLD, &mut pool).unwrap();
        assert_eq!(r.remaining(), 0);
        let ColumnData::Variant(v) = &c else { panic!() };
        assert_eq!(v.discriminators.as_bytes(), &[1, 1, 0, 255, 1]);
        assert_eq!(v.offsets.typed::<u64>().unwrap(), &[0, 1, 0, 0, 2]);
        // Written back as one plain granule, and read again to the same rows.
        let mut out = Vec::new();
        c.write_prefix(&mut out);
        c.write_data(&mut out, OLD).unwrap();
        let mut d = ColumnData::for_type(&ty, &mut pool).unwrap();
        let mut r = Reader::new(&out);
        d.read_prefix(&mut r).unwrap();
        d.read_data(&mut r, 5, None, OLD, &mut pool).unwrap();
        let ColumnData::Variant(w) = &d else { panic!() };
        assert_eq!(w.discriminators.as_bytes(), v.discriminators.as_bytes());
        // A granule larger than the rows left is a violation.
        let mut bad = Vec::new();
        bad.put_u64_le(VARIANT_MODE_COMPACT);
        bad.put_varuint(9);
        bad.push(GRANULE_SINGLE);
        bad.push(0);
        let mut r = Reader::new(&bad);
        c.read_prefix(&mut r).unwrap();
        assert!(matches!(c.read_data(&mut r, 5, None, OLD, &mut pool), Err(ProtoError::Violation(_))));
    }

    #[test]
    fn variant_bad_discriminator_and_mode() {
        let mut pool = BufferPool::new();
        let ty = DataType::parse("Variant(String, UInt32)").unwrap();
        let mut c = ColumnData::for_type(&ty, &mut pool).unwrap();
        let mut b = Vec::new();
        b.put_u64_le(0);
        b.extend_from_slice(&[2]);
        let mut r = Reader::new(&b);
        c.read_prefix(&mut r).unwrap();
        assert!(matches!(c.read_data(&mut r, 1, None, OLD, &mut pool), Err(ProtoError::Violation(_))));
        let mut b = Vec::new();
        b.put_u64_le(7);
        assert!(matches!(c.read_prefix(&mut Reader::new(&b)), Err(ProtoError::Violation(_))));
    }

    #[test]
    fn variant_gather_for_replicated_rows() {
        let mut b = Vec::new();
        b.put_u64_le(0);
        b.extend_from_slice(&[1, 0, 255, 1]);
        b.extend_from_slice(&[1, b'a']);
        b.put_u32_le(10);
        b.put_u32_le(20);
        let ty = DataType::parse("Variant(String, UInt32)").unwrap();
        let src = round_trip("Variant(String, UInt32)", 4, &b, OLD);
        let mut pool = BufferPool::new();
        let mut dst = ColumnData::for_type(&ty, &mut pool).unwrap();
        dst.take_from(&src, &[3, 3, u64::MAX, 1, 0], &mut pool).unwrap();
        let v = view(&ty, "Variant(String, UInt32)", &dst);
        let var = v.as_variant().unwrap();
        assert_eq!(var.discriminators(), &[1, 1, 255, 0, 1]);
        assert_eq!(var.variant(1).unwrap().values::<u32>().unwrap(), &[20, 20, 10]);
        assert_eq!(var.row(4), Some((1, 2)));
    }
}
