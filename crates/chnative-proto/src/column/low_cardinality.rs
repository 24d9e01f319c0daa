//! LowCardinality(T): a dictionary and one key per row.
//!
//! The state prefix is the key version (`SharedDictionariesWithAdditionalKeys`, the
//! only one). Each block then carries its own dictionary: index type (key width and
//! flags), the dictionary's rows, the row count, and the keys at that width. For
//! LowCardinality(Nullable(T)) dictionary entry 0 stands for NULL.

use super::{checked_len, ColumnData, Layout, ScanMemo};
use crate::buffer::{AlignedBuf, BufferPool};
use crate::error::{ProtoError, Result};
use crate::wire::{Budget, Reader, WriteExt};

/// `SharedDictionariesWithAdditionalKeys`, the only LowCardinality key version.
const KEY_VERSION: u64 = 1;
const NEED_GLOBAL_DICTIONARY: u64 = 1 << 8;
const HAS_ADDITIONAL_KEYS: u64 = 1 << 9;
const NEED_UPDATE_DICTIONARY: u64 = 1 << 10;

/// Reads the state prefix (the key version).
pub(super) fn read_prefix(r: &mut Reader<'_>) -> Result<()> {
    let v = r.u64_le()?;
    if v != KEY_VERSION {
        return Err(ProtoError::violation(format!("LowCardinality key version {v}, expected 1")));
    }
    Ok(())
}

/// Writes the state prefix.
pub(super) fn write_prefix(out: &mut Vec<u8>) {
    out.put_u64_le(KEY_VERSION);
}

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

/// Reads one block's dictionary and `rows` keys.
pub(super) fn read(
    r: &mut Reader<'_>,
    rows: usize,
    (dict, key_width_out, keys): (&mut ColumnData, &mut u8, &mut AlignedBuf),
    layout: Layout,
    pool: &mut BufferPool,
) -> Result<()> {
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
    let dict_layout = Layout { sized_strings: layout.sized_dict_strings, ..layout };
    dict.read_plain(r, nkeys, None, dict_layout, pool)?;
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

/// Steps over one block's dictionary and keys; `false` for what the decoder refuses
/// (it says why) or a dictionary that is not measured.
pub(super) fn measure(
    r: &mut Reader<'_>,
    rows: usize,
    dict: &ColumnData,
    layout: Layout,
    memo: &mut ScanMemo,
) -> Result<bool> {
    if rows == 0 {
        return Ok(true);
    }
    let Ok(Some(kw)) = key_width(r.u64_le()?) else { return Ok(false) };
    let nkeys = usize::try_from(r.u64_le()?).map_err(|_| ProtoError::violation("dictionary too large"))?;
    let dict_layout = Layout { sized_strings: layout.sized_dict_strings, ..layout };
    if !dict.measure_data(r, nkeys, None, dict_layout, memo)? {
        return Ok(false);
    }
    r.u64_le()?;
    r.bytes(checked_len(rows, usize::from(kw))?)?;
    Ok(true)
}

/// Writes the dictionary and keys (nothing for no rows).
pub(super) fn write(
    out: &mut Vec<u8>,
    (dict, key_width, keys): (&ColumnData, u8, &AlignedBuf),
    layout: Layout,
) -> Result<()> {
    let rows = keys.len() / usize::from(key_width).max(1);
    if rows == 0 {
        return Ok(());
    }
    let code: u64 = match key_width {
        1 => 0,
        2 => 1,
        4 => 2,
        _ => 3,
    };
    out.put_u64_le(code | HAS_ADDITIONAL_KEYS | NEED_UPDATE_DICTIONARY);
    out.put_u64_le(dict.rows() as u64);
    dict.write_data(out, Layout { sized_strings: layout.sized_dict_strings, ..layout })?;
    out.put_u64_le(rows as u64);
    out.extend_from_slice(keys.as_bytes());
    Ok(())
}

/// Appends the rows `idx` picks (`u64::MAX`: key 0). The source dictionary is copied
/// whole and the keys widened to u64: simple, and rare (sparse or replicated layers
/// over LowCardinality).
pub(super) fn append(
    (dict, key_width, keys): (&mut ColumnData, &mut u8, &mut AlignedBuf),
    (src_dict, src_width, src_keys): (&ColumnData, u8, &AlignedBuf),
    idx: &[u64],
    pool: &mut BufferPool,
    budget: &mut Budget,
) -> Result<()> {
    budget.charge_n(src_dict.rows(), 8)?;
    let all: Vec<u64> = (0..src_dict.rows() as u64).collect();
    dict.gather(src_dict, &all, pool, budget)?;
    budget.charge_n(idx.len(), 8)?;
    *key_width = 8;
    let n = src_keys.len() / usize::from(src_width).max(1);
    for &i in idx {
        let k = if i == u64::MAX {
            0
        } else {
            let i = i as usize;
            if i >= n {
                return Err(ProtoError::violation("row index out of range"));
            }
            key_at(src_keys, src_width, i)
        };
        keys.push(k);
    }
    Ok(())
}

pub(super) fn key_at(keys: &AlignedBuf, kw: u8, i: usize) -> u64 {
    let b = keys.as_bytes();
    let w = usize::from(kw);
    let mut a = [0u8; 8];
    if let Some(s) = b.get(i * w..i * w + w) {
        a[..w].copy_from_slice(s);
    }
    u64::from_le_bytes(a)
}

pub(super) fn max_key(keys: &AlignedBuf, kw: u8) -> Result<u64> {
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
            let dict = ColumnData::from_strings(&["a", "b", "c"]);
            let layout = Layout::for_revision(54492);
            let mut out = Vec::new();
            write(&mut out, (&dict, kw, &keys), layout).unwrap();
            let mut pool = BufferPool::new();
            let (mut d2, mut w2, mut k2) = (ColumnData::from_strings::<&str>(&[]), 1, AlignedBuf::new());
            read(&mut Reader::new(&out), 3, (&mut d2, &mut w2, &mut k2), layout, &mut pool).unwrap();
            assert_eq!((w2, k2.as_bytes()), (kw, keys.as_bytes()));
            let mut r = Reader::new(&out);
            assert!(measure(&mut r, 3, &dict, layout, &mut ScanMemo::default()).unwrap());
            assert_eq!(r.remaining(), 0);
        }
    }

    #[test]
    fn a_key_beyond_the_dictionary_is_refused() {
        let dict = ColumnData::from_strings(&["a"]);
        let mut keys = AlignedBuf::new();
        keys.push(1u8);
        let layout = Layout::for_revision(54492);
        let mut out = Vec::new();
        write(&mut out, (&dict, 1, &keys), layout).unwrap();
        let mut pool = BufferPool::new();
        let (mut d2, mut w2, mut k2) = (ColumnData::from_strings::<&str>(&[]), 1, AlignedBuf::new());
        let res = read(&mut Reader::new(&out), 1, (&mut d2, &mut w2, &mut k2), layout, &mut pool);
        assert!(matches!(res, Err(ProtoError::Violation(_))));
    }
}
