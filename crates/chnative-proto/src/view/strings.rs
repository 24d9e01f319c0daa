//! String columns: one blob plus u64 end offsets, rows borrowed as `&[u8]` / `&str`.

use crate::column::StringColumn;
use std::ops::Range;

use super::{strip_simple_agg, ColumnView, D};
use crate::column::ColumnData;
use crate::error::Result;

impl<'a> ColumnView<'a> {
    /// A String column.
    pub fn as_strings(&self) -> Result<StrView<'a>> {
        match (strip_simple_agg(&self.ty), self.data) {
            (D::String, ColumnData::String(StringColumn { offsets, data, ascii })) => {
                Ok(StrView { offsets: offsets.typed::<u64>()?, data: data.as_bytes(), ascii: *ascii })
            }
            _ => Err(self.mismatch("String")),
        }
    }
}

/// Strings as one UTF-8 (unchecked) blob plus end offsets.
#[derive(Debug, Clone, Copy)]
pub struct StrView<'a> {
    pub(super) offsets: &'a [u64],
    pub(super) data: &'a [u8],
    pub(super) ascii: bool,
}

impl<'a> StrView<'a> {
    /// Number of strings.
    pub fn len(&self) -> usize {
        self.offsets.len()
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.offsets.is_empty()
    }
    /// Byte range of row `i` in [`Self::blob`]. Panics if `i >= len()`.
    pub fn range(&self, i: usize) -> Range<usize> {
        let start = if i == 0 { 0 } else { self.offsets[i - 1] as usize };
        start..self.offsets[i] as usize
    }
    /// Row `i` as bytes, zero-copy. Panics if `i >= len()`.
    pub fn bytes(&self, i: usize) -> &'a [u8] {
        &self.data[self.range(i)]
    }
    /// Row `i` as `&str`, validating UTF-8. Panics if `i >= len()`.
    pub fn str(&self, i: usize) -> std::result::Result<&'a str, std::str::Utf8Error> {
        std::str::from_utf8(self.bytes(i))
    }
    /// End offsets (u64 per row).
    pub fn offsets(&self) -> &'a [u64] {
        self.offsets
    }
    /// All bytes back to back.
    pub fn blob(&self) -> &'a [u8] {
        self.data
    }
    /// Whether the decoder found every byte to be ASCII (checked while it copied
    /// the column in; `false` when it did not look, e.g. before revision 54492).
    /// Then every row is valid UTF-8, and the offsets are known to be
    /// monotonic and to end at the blob's length.
    pub fn is_known_ascii(&self) -> bool {
        self.ascii && self.offsets.last().map_or(0, |&e| e) == self.data.len() as u64
    }
    /// Iterates the rows as bytes.
    pub fn iter(&self) -> impl Iterator<Item = &'a [u8]> + '_ {
        (0..self.len()).map(|i| self.bytes(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::column::StringColumn;
    use crate::types::DataType;

    #[test]
    fn rows_are_slices_of_one_blob() {
        let data = ColumnData::from_strings(&["a", "", "héllo", "xyz"]);
        let ty = DataType::String;
        let v = ColumnView::new("s", &ty, "String", &data);
        let s = v.as_strings().unwrap();
        assert_eq!(s.len(), 4);
        assert!(!s.is_empty());
        assert_eq!(s.offsets(), [1, 1, 7, 10]);
        assert_eq!(s.range(2), 1..7);
        assert_eq!(s.bytes(1), b"");
        assert_eq!(s.str(2).unwrap(), "héllo");
        assert_eq!(s.blob(), "ahélloxyz".as_bytes());
        assert_eq!(s.iter().collect::<Vec<_>>(), [&b"a"[..], b"", "héllo".as_bytes(), b"xyz"]);
        let ColumnData::String(StringColumn { data: blob, .. }) = &data else { unreachable!() };
        assert_eq!(s.bytes(0).as_ptr(), blob.as_bytes().as_ptr(), "copied");
    }

    #[test]
    fn invalid_utf8_is_an_error_not_a_panic() {
        let data = ColumnData::from_strings(&[&[0xffu8, 0xfe][..]]);
        let ty = DataType::String;
        let v = ColumnView::new("s", &ty, "String", &data);
        let s = v.as_strings().unwrap();
        assert!(s.str(0).is_err());
        assert_eq!(s.bytes(0), [0xff, 0xfe]);
    }

    #[test]
    fn other_types_are_a_mismatch() {
        let data = ColumnData::from_values(&[1u8]);
        let ty = DataType::UInt8;
        assert!(ColumnView::new("n", &ty, "UInt8", &data).as_strings().is_err());
        // A SimpleAggregateFunction over String reads as String.
        let data = ColumnData::from_strings(&["x"]);
        let ty = DataType::parse("SimpleAggregateFunction(any, String)").unwrap();
        let v = ColumnView::new("a", &ty, "SimpleAggregateFunction(any, String)", &data);
        assert_eq!(v.as_strings().unwrap().str(0).unwrap(), "x");
    }
}
