//! Row-by-row `&str`s out of a String column, with UTF-8 checked once per block.
//!
//! A typed read visits a row's 100-odd columns before the next row, so anything it
//! touches per value is a cache miss waiting to happen. Validating each string when its
//! row is read (31 % of a typed read of hits), or even loading the byte at its end to
//! check a character boundary (67 % of what was left), costs far more than one
//! sequential pass per column when the block arrives. This module does that pass and
//! then hands out slices without touching the bytes again.

use crate::view::StrView;

/// A String column whose every row is known to be valid UTF-8.
#[derive(Clone, Copy)]
pub(crate) struct CheckedText<'r> {
    text: &'r str,
    offsets: &'r [u64],
}

impl<'r> CheckedText<'r> {
    /// The column's text, if every row is valid UTF-8 and the offsets are sound; `None`
    /// sends the caller to per-row checks (which then say which row is wrong).
    pub(crate) fn new(view: &StrView<'r>) -> Option<CheckedText<'r>> {
        let blob = view.blob();
        let offsets = view.offsets();
        let len = blob.len() as u64;
        if view.is_known_ascii() {
            // SAFETY: the decoder checked every byte to be ASCII, which is valid UTF-8,
            // and its offsets monotonic up to the blob's end (so every cut is in range
            // and on a character boundary).
            return Some(CheckedText { text: unsafe { std::str::from_utf8_unchecked(blob) }, offsets });
        }
        if blob.is_ascii() {
            // SAFETY: ASCII is valid UTF-8. (One pass over the bytes instead of
            // `from_utf8` followed by `is_ascii`: the text of a wide block is most of
            // its bytes, and this pass is what the column tier does not pay.)
            let text = unsafe { std::str::from_utf8_unchecked(blob) };
            // Every byte of ASCII text is a character boundary: only the order and
            // range of the offsets matter, checked in one branch-free pass.
            let (mut start, mut ok) = (0u64, true);
            for &end in offsets {
                ok &= start <= end && end <= len;
                start = end;
            }
            return ok.then_some(CheckedText { text, offsets });
        }
        let text = std::str::from_utf8(blob).ok()?;
        let mut start = 0u64;
        for &end in offsets {
            // Valid text cut at character boundaries gives valid pieces.
            if end < start || end > len || !text.is_char_boundary(end as usize) {
                return None;
            }
            start = end;
        }
        Some(CheckedText { text, offsets })
    }

    /// Row `i`, or `None` past the end.
    #[inline(always)]
    pub(crate) fn get(&self, i: usize) -> Option<&'r str> {
        let end = *self.offsets.get(i)? as usize;
        let start = if i == 0 { 0 } else { self.offsets[i - 1] as usize };
        // SAFETY: `new` checked that the offsets are monotonic, within `text`, and on
        // character boundaries (offset 0 is one too), so `start..end` is in bounds and
        // cuts `text` at character boundaries.
        Some(unsafe { self.text.get_unchecked(start..end) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::column::Layout;
    use crate::wire::Reader;
    use crate::{BufferPool, Column, ColumnData, DataType};

    fn column(strings: &[&[u8]]) -> Column {
        let mut pool = BufferPool::new();
        let mut c = ColumnData::for_type(&DataType::String, &mut pool).unwrap();
        let mut wire = Vec::new();
        for s in strings {
            wire.push(s.len() as u8);
            wire.extend_from_slice(s);
        }
        c.read_data(&mut Reader::new(&wire), strings.len(), None, Layout::for_revision(0), &mut pool).unwrap();
        Column::new("s", "String", c).unwrap()
    }

    fn view(c: &Column) -> StrView<'_> {
        c.view().as_strings().unwrap()
    }

    #[test]
    fn valid_rows_are_handed_out_whole() {
        let c = column(&[b"", "é".as_bytes(), b"ok", "日本".as_bytes()]);
        let t = CheckedText::new(&view(&c)).unwrap();
        let rows: Vec<&str> = (0..4).map(|i| t.get(i).unwrap()).collect();
        assert_eq!(rows, ["", "é", "ok", "日本"]);
        assert_eq!(t.get(4), None);
    }

    #[test]
    fn ascii_rows_are_checked_for_order_and_range_only() {
        let c = column(&[b"ab", b"", b"cde"]);
        let t = CheckedText::new(&view(&c)).unwrap();
        assert_eq!((0..3).map(|i| t.get(i).unwrap()).collect::<Vec<_>>(), ["ab", "", "cde"]);
    }

    #[test]
    fn a_character_split_across_rows_is_refused() {
        // "é" is C3 A9: the blob is valid, each row alone is not.
        let c = column(&[&[0xc3], &[0xa9]]);
        assert!(CheckedText::new(&view(&c)).is_none());
        let c = column(&[b"a", &[0xff]]);
        assert!(CheckedText::new(&view(&c)).is_none());
    }
}
