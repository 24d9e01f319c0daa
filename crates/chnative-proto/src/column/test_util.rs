//! Helpers shared by the column codecs' unit tests.

use super::codec::ColumnCodec;
use super::{ColumnData, Layout, ScanMemo};
use crate::buffer::BufferPool;
use crate::error::ProtoError;
use crate::types::DataType;
use crate::view::ColumnView;
use crate::wire::Reader;

pub(crate) const OLD: Layout = Layout { sized_strings: false, sized_dict_strings: false };
pub(crate) const NEW: Layout = Layout { sized_strings: true, sized_dict_strings: false };

/// Decodes prefix + data, checks the bytes are consumed and re-encode unchanged,
/// and that every strict prefix of the input is `Incomplete`.
pub(crate) fn round_trip(ty: &str, rows: usize, bytes: &[u8], layout: Layout) -> ColumnData {
    let mut pool = BufferPool::new();
    let t = DataType::parse(ty).unwrap();
    let mut c = ColumnData::for_type(&t, &mut pool).unwrap();
    let mut r = Reader::new(bytes);
    c.read_prefix(&mut r).unwrap();
    c.read_data(&mut r, rows, None, layout, &mut pool).unwrap();
    assert_eq!(r.remaining(), 0, "{ty}");
    assert_eq!(c.rows(), rows, "{ty}");
    let mut out = Vec::new();
    c.write_prefix(&mut out);
    c.write_data(&mut out, layout).unwrap();
    assert_eq!(out, bytes, "{ty}");
    for cut in 0..bytes.len() {
        let mut c = ColumnData::for_type(&t, &mut pool).unwrap();
        let mut r = Reader::new(&bytes[..cut]);
        let res = c.read_prefix(&mut r).and_then(|_| c.read_data(&mut r, rows, None, layout, &mut pool));
        assert!(matches!(res, Err(ProtoError::Incomplete { .. })), "{ty} cut at {cut}: {res:?}");
    }
    c
}

pub(crate) fn view<'a>(ty: &'a DataType, name: &'a str, c: &'a ColumnData) -> ColumnView<'a> {
    ColumnView::new("c", ty, name, c)
}

/// Reads `bytes` as the body of `rows` rows into `c`, then checks that they are consumed,
/// that writing `c` gives them back, and that measuring steps over exactly them.
pub(crate) fn body_round_trip(c: &mut impl ColumnCodec, rows: usize, bytes: &[u8], layout: Layout) {
    let mut r = Reader::new(bytes);
    c.read_body(&mut r, rows, layout.into(), &mut BufferPool::new()).unwrap();
    assert_eq!(r.remaining(), 0);
    let mut out = Vec::new();
    c.write_body(&mut out, layout).unwrap();
    assert_eq!(out, bytes);
    let mut r = Reader::new(bytes);
    assert!(c.measure_body(&mut r, rows, layout.into(), &mut ScanMemo::default()).unwrap());
    assert_eq!(r.remaining(), 0);
}
