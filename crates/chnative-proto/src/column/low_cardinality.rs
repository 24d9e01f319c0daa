//! LowCardinality(T): a dictionary and one key per row.
//!
//! The state prefix is the key version (`SharedDictionariesWithAdditionalKeys`, the
//! only one). Each block then carries its own dictionary: index type (key width and
//! flags), the dictionary's rows, the row count, and the keys at that width. For
//! LowCardinality(Nullable(T)) dictionary entry 0 stands for NULL.

use super::check::{cannot_hold, Reason};
use super::codec::{no_default, no_row_binary, ColumnCodec};
use super::{checked_len, BodyForm, ColumnData, Layout, ScanMemo};
use crate::buffer::{AlignedBuf, BufferPool};
use crate::error::{ProtoError, Result};
use crate::types::DataType;
use crate::wire::{Budget, Reader, WriteExt};

/// `SharedDictionariesWithAdditionalKeys`, the only LowCardinality key version.
const KEY_VERSION: u64 = 1;
const NEED_GLOBAL_DICTIONARY: u64 = 1 << 8;
const HAS_ADDITIONAL_KEYS: u64 = 1 << 9;
const NEED_UPDATE_DICTIONARY: u64 = 1 << 10;

/// The key width an index type announces, `None` for a form Native does not use
/// (a global dictionary) or an unknown width code.
fn key_width(index_type: u64) -> Result<Option<u8>> {
    if index_type & NEED_GLOBAL_DICTIONARY != 0 || index_type & HAS_ADDITIONAL_KEYS == 0 {
        return Ok(None);
    }
    Ok(Some(match index_type & 0xff {
        0 => 1,
        1 => 2,
        2 => 4,
        3 => 8,
        w => return Err(ProtoError::violation(format!("LowCardinality key width code {w}"))),
    }))
}

/// Storage of a LowCardinality(T) column: a dictionary and one key per row.
#[derive(Debug, Clone)]
pub struct LowCardinalityColumn {
    pub(crate) dict: Box<ColumnData>,
    /// Bytes per key: 1, 2, 4 or 8.
    pub(crate) key_width: u8,
    pub(crate) keys: AlignedBuf,
    pub(crate) nullable: bool,
}

impl LowCardinalityColumn {
    pub(crate) fn new(dict: ColumnData, key_width: u8, keys: AlignedBuf, nullable: bool) -> LowCardinalityColumn {
        LowCardinalityColumn { dict: Box::new(dict), key_width, keys, nullable }
    }

    /// Distinct values; for LowCardinality(Nullable(T)), entry 0 stands for NULL.
    pub fn dict(&self) -> &ColumnData {
        &self.dict
    }

    /// Bytes per key: 1, 2, 4 or 8.
    pub fn key_width(&self) -> u8 {
        self.key_width
    }

    /// Keys, `rows × key_width` bytes.
    pub fn keys(&self) -> &AlignedBuf {
        &self.keys
    }

    /// True for LowCardinality(Nullable(T)).
    pub fn is_nullable(&self) -> bool {
        self.nullable
    }

    /// Before a row appended value by value (RowBinary): u64 keys, and for
    /// LowCardinality(Nullable(T)) the NULL slot at key 0. Returns the
    /// dictionary's type (`t` without Nullable).
    fn start_row_keys<'t>(&mut self, t: &'t DataType) -> Result<&'t DataType> {
        let inner = match t {
            DataType::Nullable(t) => t.as_ref(),
            t => t,
        };
        if self.keys.is_empty() {
            if self.key_width != 8 || self.dict.rows() > 0 {
                self.dict.clear();
            }
            self.key_width = 8;
            if self.nullable && self.dict.rows() == 0 {
                self.dict.push_default(inner)?;
            }
        } else if self.key_width != 8 {
            return Err(ProtoError::violation("LowCardinality keys are not 64-bit"));
        }
        Ok(inner)
    }
}

/// Reads the state prefix, the key version, which must be [`KEY_VERSION`].
fn read_key_version(r: &mut Reader<'_>) -> Result<()> {
    let v = r.u64_le()?;
    if v != KEY_VERSION {
        return Err(ProtoError::violation(format!("LowCardinality key version {v}, expected 1")));
    }
    Ok(())
}

impl ColumnCodec for LowCardinalityColumn {
    fn empty_like(&self, pool: &mut BufferPool) -> Self {
        LowCardinalityColumn {
            dict: Box::new(self.dict.empty_like(pool)),
            key_width: 1,
            keys: pool.take(),
            nullable: self.nullable,
        }
    }

    fn recycle(self, pool: &mut BufferPool) {
        pool.give(self.keys);
        self.dict.recycle(pool);
    }

    fn rows(&self) -> usize {
        self.keys.len() / usize::from(self.key_width).max(1)
    }

    fn clear(&mut self) {
        self.keys.clear();
        self.dict.clear();
    }

    fn shape_name(&self) -> String {
        "LowCardinality data".into()
    }

    /// The state prefix is the key version.
    fn read_prefix(&mut self, r: &mut Reader<'_>) -> Result<()> {
        read_key_version(r)
    }

    fn measure_prefix(&self, r: &mut Reader<'_>) -> Result<bool> {
        read_key_version(r)?;
        Ok(true)
    }

    fn write_prefix(&self, out: &mut Vec<u8>) {
        out.put_u64_le(KEY_VERSION);
    }

    /// Reads one block's dictionary and `rows` keys.
    fn read_body(&mut self, r: &mut Reader<'_>, rows: usize, form: BodyForm<'_>, pool: &mut BufferPool) -> Result<()> {
        let LowCardinalityColumn { dict, key_width: key_width_out, keys, .. } = self;
        if rows == 0 {
            dict.clear();
            keys.clear();
            return Ok(());
        }
        let Some(kw) = key_width(r.u64_le()?)? else {
            return Err(ProtoError::violation("LowCardinality with a global dictionary is not used in Native"));
        };
        let nkeys = r.u64_le()?;
        let nkeys = usize::try_from(nkeys).map_err(|_| ProtoError::violation("dictionary too large"))?;
        r.need(nkeys.min(usize::MAX / 2))?;
        let dict_layout = Layout { sized_strings: form.layout.sized_dict_strings, ..form.layout };
        dict.read_plain(r, nkeys, dict_layout.into(), pool)?;
        let n = r.u64_le()?;
        if n != rows as u64 {
            return Err(ProtoError::violation("LowCardinality row count differs from the block"));
        }
        *key_width_out = kw;
        let raw = r.bytes(checked_len(rows, usize::from(kw))?)?;
        r.charge(raw.len())?;
        keys.set_from(raw);
        let max = max_key(keys, kw)?;
        if rows > 0 && max >= nkeys as u64 {
            return Err(ProtoError::violation("LowCardinality key beyond its dictionary"));
        }
        Ok(())
    }

    /// `false` for what the decoder refuses (it says why) or a dictionary that is not measured.
    fn measure_body(&self, r: &mut Reader<'_>, rows: usize, form: BodyForm<'_>, memo: &mut ScanMemo) -> Result<bool> {
        if rows == 0 {
            return Ok(true);
        }
        let Ok(Some(kw)) = key_width(r.u64_le()?) else { return Ok(false) };
        let nkeys = usize::try_from(r.u64_le()?).map_err(|_| ProtoError::violation("dictionary too large"))?;
        let dict_layout = Layout { sized_strings: form.layout.sized_dict_strings, ..form.layout };
        if !self.dict.measure_data(r, nkeys, None, dict_layout, memo)? {
            return Ok(false);
        }
        r.u64_le()?;
        r.bytes(checked_len(rows, usize::from(kw))?)?;
        Ok(true)
    }

    /// Writes the dictionary and keys (nothing for no rows).
    fn write_body(&self, out: &mut Vec<u8>, layout: Layout) -> Result<()> {
        let rows = self.rows();
        if rows == 0 {
            return Ok(());
        }
        let code: u64 = match self.key_width {
            1 => 0,
            2 => 1,
            4 => 2,
            _ => 3,
        };
        out.put_u64_le(code | HAS_ADDITIONAL_KEYS | NEED_UPDATE_DICTIONARY);
        out.put_u64_le(self.dict.rows() as u64);
        self.dict.write_data(out, Layout { sized_strings: layout.sized_dict_strings, ..layout })?;
        out.put_u64_le(rows as u64);
        out.extend_from_slice(self.keys.as_bytes());
        Ok(())
    }

    /// `u64::MAX` picks key 0. The source dictionary is copied whole and the keys
    /// widened to u64: simple, and rare (sparse or replicated layers over LowCardinality).
    fn append_from(&mut self, src: &Self, idx: &[u64], pool: &mut BufferPool, budget: &mut Budget) -> Result<()> {
        let src_dict = src.dict.as_ref();
        budget.charge_n(src_dict.rows(), 8)?;
        let all: Vec<u64> = (0..src_dict.rows() as u64).collect();
        self.dict.gather(src_dict, &all, pool, budget)?;
        budget.charge_n(idx.len(), 8)?;
        self.key_width = 8;
        let n = src.rows();
        for &i in idx {
            let k = if i == u64::MAX {
                0
            } else {
                let i = i as usize;
                if i >= n {
                    return Err(ProtoError::violation("row index out of range"));
                }
                key_at(&src.keys, src.key_width, i)
            };
            self.keys.push(k);
        }
        Ok(())
    }

    fn check_fits(&self, ty: &DataType, _: Option<&[u8]>) -> Result<(), Reason> {
        let DataType::LowCardinality(t) = ty else { return Err(cannot_hold(self, ty)) };
        let (inner, is_nullable) = match t.as_ref() {
            DataType::Nullable(t) => (t.as_ref(), true),
            t => (t, false),
        };
        if self.nullable != is_nullable {
            return Err(cannot_hold(self, ty));
        }
        let key_width = self.key_width;
        if ![1, 2, 4, 8].contains(&key_width) {
            return Err(format!("LowCardinality keys are {key_width} bytes wide (1, 2, 4 or 8)"));
        }
        let kw = usize::from(key_width);
        let keys = &self.keys;
        if !keys.len().is_multiple_of(kw) {
            return Err(format!("{} key bytes is not a whole number of {kw}-byte keys", keys.len()));
        }
        self.dict.check_at(inner, None)?;
        let rows = keys.len() / kw;
        let size = self.dict.rows() as u64;
        if rows > 0 && max_key(keys, key_width).map_err(|e| e.to_string())? >= size {
            let i = (0..rows).find(|&i| key_at(keys, key_width, i) >= size).unwrap_or(0);
            return Err(format!("key #{i} is {}, beyond the dictionary of {size} values", key_at(keys, key_width, i)));
        }
        Ok(())
    }

    fn push_row_binary(&mut self, ty: &DataType, r: &mut Reader<'_>) -> Result<()> {
        let DataType::LowCardinality(t) = ty else { return Err(no_row_binary(ty)) };
        let inner = self.start_row_keys(t)?;
        if self.nullable && r.u8()? != 0 {
            self.keys.push(0u64);
        } else {
            self.dict.push_row_binary(inner, r)?;
            self.keys.push(self.dict.rows() as u64 - 1);
        }
        Ok(())
    }

    fn push_default(&mut self, ty: &DataType) -> Result<()> {
        let DataType::LowCardinality(t) = ty else { return Err(no_default(ty)) };
        let inner = self.start_row_keys(t)?;
        if self.nullable {
            self.keys.push(0u64);
        } else {
            self.dict.push_default(inner)?;
            self.keys.push(self.dict.rows() as u64 - 1);
        }
        Ok(())
    }
}

pub(crate) fn key_at(keys: &AlignedBuf, kw: u8, i: usize) -> u64 {
    let b = keys.as_bytes();
    let w = usize::from(kw);
    let mut a = [0u8; 8];
    if let Some(s) = b.get(i * w..i * w + w) {
        a[..w].copy_from_slice(s);
    }
    u64::from_le_bytes(a)
}

pub(crate) fn max_key(keys: &AlignedBuf, kw: u8) -> Result<u64> {
    Ok(match kw {
        1 => keys.as_bytes().iter().copied().max().unwrap_or(0) as u64,
        2 => keys.typed::<u16>()?.iter().copied().max().unwrap_or(0) as u64,
        4 => keys.typed::<u32>()?.iter().copied().max().unwrap_or(0) as u64,
        _ => keys.typed::<u64>()?.iter().copied().max().unwrap_or(0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_types() {
        assert_eq!(key_width(HAS_ADDITIONAL_KEYS).unwrap(), Some(1));
        assert_eq!(key_width(HAS_ADDITIONAL_KEYS | NEED_UPDATE_DICTIONARY | 3).unwrap(), Some(8));
        assert_eq!(key_width(3).unwrap(), None, "without additional keys");
        assert_eq!(key_width(HAS_ADDITIONAL_KEYS | NEED_GLOBAL_DICTIONARY).unwrap(), None);
        assert!(key_width(HAS_ADDITIONAL_KEYS | 4).is_err());
    }

    #[test]
    fn keys_at_every_width() {
        for kw in [1u8, 2, 4, 8] {
            let mut keys = AlignedBuf::new();
            for k in [2u64, 0, 1] {
                keys.extend_from(&k.to_le_bytes()[..usize::from(kw)]);
            }
            assert_eq!((0..3).map(|i| key_at(&keys, kw, i)).collect::<Vec<_>>(), [2, 0, 1]);
            assert_eq!(max_key(&keys, kw).unwrap(), 2);
            let lc = LowCardinalityColumn::new(ColumnData::from_strings(&["a", "b", "c"]), kw, keys.clone(), false);
            let layout = Layout::for_revision(54492);
            let mut out = Vec::new();
            lc.write_body(&mut out, layout).unwrap();
            let mut pool = BufferPool::new();
            let mut back =
                LowCardinalityColumn::new(ColumnData::from_strings::<&str>(&[]), 1, AlignedBuf::new(), false);
            back.read_body(&mut Reader::new(&out), 3, layout.into(), &mut pool).unwrap();
            assert_eq!((back.key_width, back.keys.as_bytes()), (kw, keys.as_bytes()));
            let mut r = Reader::new(&out);
            assert!(lc.measure_body(&mut r, 3, layout.into(), &mut ScanMemo::default()).unwrap());
            assert_eq!(r.remaining(), 0);
        }
    }

    #[test]
    fn a_key_beyond_the_dictionary_is_refused() {
        let mut keys = AlignedBuf::new();
        keys.push(1u8);
        let lc = LowCardinalityColumn::new(ColumnData::from_strings(&["a"]), 1, keys, false);
        let layout = Layout::for_revision(54492);
        let mut out = Vec::new();
        lc.write_body(&mut out, layout).unwrap();
        let mut pool = BufferPool::new();
        let mut back = LowCardinalityColumn::new(ColumnData::from_strings::<&str>(&[]), 1, AlignedBuf::new(), false);
        let res = back.read_body(&mut Reader::new(&out), 1, layout.into(), &mut pool);
        assert!(matches!(res, Err(ProtoError::Violation(_))));
    }
}
