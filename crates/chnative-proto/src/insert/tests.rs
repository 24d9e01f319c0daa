//! Unit tests of the INSERT encoder.

use super::*;
use crate::block::{write_block, BlockInfo, BlockLimits};
use crate::buffer::BufferPool;
use crate::packet::{read_server_packet, BlockKind, ServerPacket};
use crate::wire::Reader;
use crate::Block;

fn ty(name: &str) -> DataType {
    DataType::parse(name).unwrap()
}

#[test]
fn geo_types_take_their_structure() {
    let point =
        || InsertData::Tuple(vec![fixed(&[1.5f64][..]).into_insert_data(), fixed(&[2.5f64][..]).into_insert_data()]);
    assert_eq!(point().check_type("p", &ty("Point"), "Point").unwrap(), "Tuple(Float64, Float64)");
    let ring = InsertData::Array { offsets: &[1], inner: Box::new(point()) };
    assert_eq!(ring.check_type("r", &ty("Ring"), "Ring").unwrap(), "Array(Tuple(Float64, Float64))");
    assert!(InsertData::Tuple(vec![fixed(&[1.5f64][..]).into_insert_data()])
        .check_type("p", &ty("Point"), "Point")
        .is_err());
}

fn decode(bytes: &[u8], revision: u64) -> Block {
    let mut b = Block::new();
    let mut r = Reader::new(bytes);
    b.read(&mut r, revision, &BlockLimits::default(), &mut BufferPool::new()).unwrap();
    assert_eq!(r.remaining(), 0);
    b
}

/// An INSERT header: empty columns of the given names and types.
fn header(cols: &[(&str, &str)]) -> Block {
    let mut pool = BufferPool::new();
    let cols =
        cols.iter().map(|(n, t)| Column::new(*n, *t, crate::ColumnData::for_type(&ty(t), &mut pool).unwrap()).unwrap());
    Block::from_columns(cols.collect()).unwrap()
}

/// Checks, then encodes rows `lo..hi` of `(name, type, data)` columns.
fn encode(cols: &[(&str, &str, InsertData<'_>)], lo: usize, hi: usize, revision: u64) -> Vec<u8> {
    let columns: Vec<(String, InsertData<'_>)> = cols.iter().map(|(n, _, d)| (n.to_string(), d.clone())).collect();
    let names: Vec<(&str, &str)> = cols.iter().map(|(n, t, _)| (*n, *t)).collect();
    let typed = InsertColumns::new(&columns).unwrap().with_header(&header(&names)).unwrap();
    let mut out = Vec::new();
    typed.write_block(&mut out, revision, lo, hi).unwrap();
    // The spliced encoding, runs put back in, is the same bytes.
    let (mut own, mut sp) = (Vec::new(), Splices::new());
    typed.write_block_spliced(&mut own, &mut sp, revision, lo, hi).unwrap();
    let mut whole = Vec::new();
    sp.materialize(&own, &mut whole);
    assert_eq!(whole, out, "rows {lo}..{hi} at {revision}");
    out
}

/// Encodes every column of `block` whole, as an INSERT of the block into a table of its shape.
fn encode_block(block: &Block, revision: u64) -> Vec<u8> {
    let columns: Vec<(String, InsertData<'_>)> =
        block.columns().iter().map(|c| (c.name().to_string(), InsertData::Column(c))).collect();
    let typed = InsertColumns::new(&columns).unwrap().with_header(block).unwrap();
    assert!(!typed.splittable());
    let mut out = Vec::new();
    typed.write_block(&mut out, revision, 0, block.rows()).unwrap();
    out
}

/// The Data block of a captured response, as the server's bytes and decoded.
fn captured_block(capture: &[u8], revision: u64) -> (Vec<u8>, Block) {
    let mut r = Reader::new(capture);
    loop {
        match read_server_packet(&mut r, revision, revision, false).unwrap() {
            ServerPacket::Block { kind, .. } => {
                let start = r.position();
                let mut b = Block::new();
                b.read(&mut r, revision, &BlockLimits::default(), &mut BufferPool::new()).unwrap();
                if kind == BlockKind::Data && b.rows() > 0 {
                    return (capture[start..r.position()].to_vec(), b);
                }
            }
            ServerPacket::EndOfStream => panic!("no data block"),
            _ => {}
        }
    }
}

const TYPES_54460: &[u8] = include_bytes!("../../tests/data/captures/types_54460.bin");
const TYPES_54492: &[u8] = include_bytes!("../../tests/data/captures/types_54492.bin");

#[test]
fn columns_from_a_select_encode_to_the_captured_bytes() {
    for (rev, capture) in [(54460, TYPES_54460), (54492, TYPES_54492)] {
        let (raw, block) = captured_block(capture, rev);
        assert_eq!(encode_block(&block, rev), raw, "{rev}");
        // Block::write shares the header writers and gives the same bytes.
        let mut again = Vec::new();
        block.write(&mut again, rev).unwrap();
        assert_eq!(again, raw, "{rev}");
    }
}

#[test]
fn rust_values_encode_like_the_server_sends_them() {
    for (rev, capture) in [(54460, TYPES_54460), (54492, TYPES_54492)] {
        let (_, block) = captured_block(capture, rev);
        let uuid = block.column("u").unwrap().view().values::<WireUuid>().unwrap().to_vec();
        let s = ["héllo"];
        let ns = [""];
        let strings = vec!["héllo".to_string()];
        let aa_inner = [2u64, 3];
        let cases: Vec<(&str, InsertData<'_>)> = vec![
            ("i8", fixed(&[-1i8])),
            ("u64", fixed(&[u64::MAX])),
            ("i128", fixed(&[-2i128])),
            ("f64", fixed(&[1.5f64])),
            ("b", fixed(&[1u8])),
            ("s", (&s[..]).into_insert_data()),
            ("s", (&strings).into_insert_data()),
            ("s", InsertData::Blob { offsets: &[6], data: "héllo".as_bytes() }),
            ("s", InsertData::BlobStarts { offsets: StartOffsets::I32(&[0, 6]), data: "héllo".as_bytes() }),
            ("s", InsertData::BlobStarts { offsets: StartOffsets::I64(&[3, 9]), data: "xyzhéllo!".as_bytes() }),
            ("fs", InsertData::fixed_strings(b"ab\0", 3)),
            ("d", fixed(&[19782u16])),
            ("dt", fixed(&[1709210096u32])),
            ("dt64", fixed(&[1709210096789i64])),
            ("u", fixed(&uuid)),
            ("ns", InsertData::nullable(&[1], &ns[..])),
            ("aa", InsertData::array(&[2], InsertData::array(&aa_inner, &[1u8, 2, 3][..]))),
            ("e", fixed(&[-2i8])),
        ];
        for (name, data) in cases {
            let col = block.column(name).unwrap();
            let got = encode(&[(name, col.type_name(), data)], 0, 1, rev);
            let mut want = Vec::new();
            write_block(&mut want, rev, &BlockInfo::default(), 1, [(name, col.type_name(), col.data())].into_iter())
                .unwrap();
            assert_eq!(got, want, "{name} at {rev}");
        }
    }
}

#[test]
fn every_family_round_trips_in_slices() {
    let ints = [1u32, 2, 3, 4, 5];
    let fs = b"aabbccddee";
    let strs = ["a", "", "ccc", "dd", "e"];
    let strings: Vec<String> = strs.iter().map(|s| s.to_string()).collect();
    let blob_offsets = [1u64, 1, 4, 6, 7];
    // The same strings as Arrow holds them: start offsets, here of a slice that starts at byte 2.
    let starts32 = [2i32, 3, 3, 6, 8, 9];
    let starts64 = starts32.map(i64::from);
    let nulls = [0u8, 1, 0, 1, 0];
    let arr_offsets = [2u64, 2, 3, 6, 6];
    let elems = [10i16, 11, 12, 13, 14, 15];
    let inner_offsets = [1u64, 1, 2, 4, 4, 5];
    let words = ["p", "q", "r", "s", "t"];
    let cols: Vec<(&str, &str, InsertData<'_>)> = vec![
        ("u", "UInt32", fixed(&ints)),
        ("lc", "LowCardinality(UInt32)", fixed(&ints)),
        ("fs", "FixedString(2)", InsertData::fixed_strings(fs, 2)),
        ("strs", "String", (&strs[..]).into_insert_data()),
        ("strings", "LowCardinality(String)", (&strings).into_insert_data()),
        ("blob", "String", InsertData::Blob { offsets: &blob_offsets, data: b"acccdde" }),
        ("starts32", "String", InsertData::BlobStarts { offsets: StartOffsets::I32(&starts32), data: b"..acccdde." }),
        ("starts64", "String", InsertData::BlobStarts { offsets: StartOffsets::I64(&starts64), data: b"..acccdde" }),
        ("n", "Nullable(UInt32)", InsertData::nullable(&nulls, &ints[..])),
        ("ns", "LowCardinality(Nullable(String))", InsertData::nullable(&nulls, &strs[..])),
        ("a", "Array(Int16)", InsertData::array(&arr_offsets, &elems[..])),
        ("aas", "Array(Array(String))", InsertData::array(&arr_offsets, InsertData::array(&inner_offsets, &words[..]))),
    ];
    for rev in [54460, 54492] {
        for (lo, hi) in [(0, 5), (0, 2), (1, 4), (3, 5), (2, 2)] {
            let b = decode(&encode(&cols, lo, hi, rev), rev);
            assert_eq!(b.rows(), hi - lo);
            let v = |n: &str| b.column(n).unwrap().view();
            assert_eq!(v("u").values::<u32>().unwrap(), &ints[lo..hi]);
            assert_eq!(v("lc").values::<u32>().unwrap(), &ints[lo..hi]);
            assert_eq!(v("fs").as_fixed_strings().unwrap(), (&fs[lo * 2..hi * 2], 2));
            for n in ["strs", "strings", "blob", "starts32", "starts64"] {
                let s = v(n).as_strings().unwrap();
                let got: Vec<&str> = (0..s.len()).map(|i| s.str(i).unwrap()).collect();
                // The blob holds the same strings as `strs`.
                assert_eq!(got, &strs[lo..hi], "{n} {lo}..{hi} at {rev}");
            }
            let n = v("n").as_nullable().unwrap();
            assert_eq!(n.nulls(), &nulls[lo..hi]);
            assert_eq!(n.inner().values::<u32>().unwrap(), &ints[lo..hi]);
            let ns = v("ns").as_nullable().unwrap();
            assert_eq!(ns.nulls(), &nulls[lo..hi]);
            let a = v("a").as_array().unwrap();
            let base = if lo == 0 { 0 } else { arr_offsets[lo - 1] };
            let rebased: Vec<u64> = arr_offsets[lo..hi].iter().map(|o| o - base).collect();
            assert_eq!(a.offsets(), &rebased[..]);
            let end = if hi == 0 { 0 } else { arr_offsets[hi - 1] };
            assert_eq!(a.inner().values::<i16>().unwrap(), &elems[base as usize..end as usize]);
            let aas = v("aas").as_array().unwrap();
            assert_eq!(aas.offsets(), &rebased[..]);
            let inner = aas.inner().as_array().unwrap();
            let s = inner.inner().as_strings().unwrap();
            let ibase = if base == 0 { 0 } else { inner_offsets[base as usize - 1] };
            let iend = if end == 0 { 0 } else { inner_offsets[end as usize - 1] };
            let got: Vec<&str> = (0..s.len()).map(|i| s.str(i).unwrap()).collect();
            assert_eq!(got, &words[ibase as usize..iend as usize]);

            // What was decoded goes out again unchanged as whole columns.
            let mut direct = Vec::new();
            b.write(&mut direct, rev).unwrap();
            assert_eq!(encode_block(&b, rev), direct);
        }
    }
}

/// Tuple and Map data (and pairs in arrays into a Map) encode like the server's
/// columns, in whole and in slices; a LowCardinality element of a tuple or map is
/// sent as the table's own type (24.8 and 25.8 refuse the plain type there), its
/// dictionary built by the client.
#[test]
fn tuples_and_maps_round_trip_in_slices() {
    let ids = [1u8, 2, 3, 4];
    let names = ["a", "bb", "", "d"];
    let map_offsets = [1u64, 1, 3, 4];
    let keys = ["k", "x", "y", "z"];
    let keys_all = || keys;
    let values = [10u64, 11, 12, 13];
    let tuple = || InsertData::tuple(vec![fixed(&ids), (&names[..]).into_insert_data()]);
    let cols: Vec<(&str, &str, InsertData<'_>)> = vec![
        ("t", "Tuple(a UInt8, b LowCardinality(String))", tuple()),
        ("m", "Map(String, UInt64)", InsertData::map(&map_offsets, &keys[..], &values[..])),
        (
            "pairs",
            "Map(LowCardinality(String), UInt64)",
            InsertData::array(&map_offsets, InsertData::tuple(vec![(&keys[..]).into_insert_data(), fixed(&values)])),
        ),
    ];
    let header = |c: &(&str, &str, InsertData<'_>)| c.2.check_type(c.0, &ty(c.1), c.1).unwrap();
    assert_eq!(header(&cols[0]), "Tuple(`a` UInt8, `b` LowCardinality(String))");
    assert_eq!(header(&cols[1]), "Map(String, UInt64)");
    assert_eq!(header(&cols[2]), "Map(LowCardinality(String), UInt64)");
    for rev in [54460, 54492] {
        for (lo, hi) in [(0, 4), (1, 3), (2, 2), (3, 4)] {
            let b = decode(&encode(&cols, lo, hi, rev), rev);
            assert_eq!(b.rows(), hi - lo);
            let t = b.column("t").unwrap().view();
            assert_eq!(t.tuple_element(0).unwrap().values::<u8>().unwrap(), &ids[lo..hi]);
            let s = t.tuple_element(1).unwrap();
            let lc = s.as_low_cardinality().unwrap();
            let dict = lc.strings().unwrap();
            let got: Vec<&str> = (0..lc.len()).map(|i| dict.str(lc.key(i)).unwrap()).collect();
            assert_eq!(got, &names[lo..hi]);
            // The map with LowCardinality keys holds the same entries as the plain one.
            let pairs = b.column("pairs").unwrap().view();
            let pairs = pairs.as_array().unwrap();
            let keys = pairs.inner().tuple_element(0).unwrap();
            let keys = keys.as_low_cardinality().unwrap();
            let kdict = keys.strings().unwrap();
            let base = if lo == 0 { 0 } else { map_offsets[lo - 1] } as usize;
            let end = if hi == 0 { 0 } else { map_offsets[hi - 1] } as usize;
            let got: Vec<&str> = (0..keys.len()).map(|i| kdict.str(keys.key(i)).unwrap()).collect();
            assert_eq!(got, &keys_all()[base..end], "pairs {lo}..{hi}");
            let base = if lo == 0 { 0 } else { map_offsets[lo - 1] } as usize;
            let end = if hi == 0 { 0 } else { map_offsets[hi - 1] } as usize;
            let mut direct = Vec::new();
            b.write(&mut direct, rev).unwrap();
            assert_eq!(encode_block(&b, rev), direct);
            let m = b.column("m").unwrap().view();
            let entries = m.as_array().unwrap();
            let v = entries.inner().tuple_element(1).unwrap();
            assert_eq!(v.values::<u64>().unwrap(), &values[base..end]);
        }
    }
    invalid(InsertData::tuple(vec![]).validate("c"), "needs elements");
    invalid(InsertData::tuple(vec![fixed(&ids), fixed(&[1u8])]).validate("c"), "element 2 has 1 rows");
    invalid(InsertData::map(&[1], &keys[..], &values[..1]).validate("c"), "4 keys but 1 values");
    invalid(InsertData::map(&[1, 5], &keys[..], &values[..]).validate("c"), "end at 5");
    let e = tuple().check_type("c", &ty("Tuple(UInt8)"), "Tuple(UInt8)").unwrap_err();
    assert!(matches!(e, ProtoError::TypeMismatch { .. }), "{e:?}");
    let e = tuple().check_type("c", &ty("Tuple(UInt8, UInt8)"), "Tuple(UInt8, UInt8)").unwrap_err();
    assert!(matches!(e, ProtoError::TypeMismatch { .. }), "{e:?}");
}

#[test]
fn blocks_are_sized_by_bytes_within_the_row_limit() {
    let ids: Vec<u64> = (0..1000).collect();
    let names: Vec<String> = (0..1000).map(|i| format!("{i:032}")).collect();
    // 8 + 32 + 8 (offset) = 48 bytes a row.
    let cols = vec![("id".to_string(), fixed(&ids)), ("s".to_string(), (&names).into_insert_data())];
    let typed = InsertColumns::new(&cols).unwrap().with_header(&header(&[("id", "UInt64"), ("s", "String")])).unwrap();
    assert_eq!(typed.block_rows(4800, 1 << 20), 100);
    assert_eq!(typed.block_rows(4800, 30), 30);
    assert_eq!(typed.block_rows(1, 1 << 20), 1);
    assert_eq!(typed.block_rows(usize::MAX, 1 << 20), 1 << 20);
}

fn invalid(res: Result<impl std::fmt::Debug>, words: &str) {
    match res {
        Err(ProtoError::InvalidColumn { column, reason, .. }) => {
            assert_eq!(column, "c");
            assert!(reason.contains(words), "{reason}");
        }
        other => panic!("expected InvalidColumn with {words:?}, got {other:?}"),
    }
}

#[test]
fn shapes_are_validated_once_before_encoding() {
    let zero = InsertData::Fixed { bytes: &[], width: 0, rust: "()", accepts: |_| true };
    invalid(zero.validate("c"), "0-byte values");
    invalid(InsertData::fixed_strings(b"abc", 2).validate("c"), "3 bytes");
    invalid(InsertData::Blob { offsets: &[2, 1], data: b"ab" }.validate("c"), "not monotonic");
    invalid(InsertData::Blob { offsets: &[1, 3], data: b"ab" }.validate("c"), "end at 3");
    let starts =
        |o: &'static [i32], data: &'static [u8]| InsertData::BlobStarts { offsets: StartOffsets::I32(o), data };
    invalid(starts(&[-1, 1], b"ab").validate("c"), "not monotonic");
    invalid(starts(&[0, 2, 1], b"ab").validate("c"), "not monotonic");
    invalid(starts(&[0, 3], b"ab").validate("c"), "end at 3");
    assert_eq!(starts(&[1, 2], b"ab").rows(), 1);
    assert_eq!(starts(&[], b"").rows(), 0);
    // Arrays whose elements are strings given by no offset at all (no elements): no panic.
    let empty = InsertData::array(&[0, 0], starts(&[], b""));
    let bytes = encode(&[("a", "Array(String)", empty)], 0, 2, 54492);
    let b = decode(&bytes, 54492);
    assert_eq!(b.column("a").unwrap().view().as_array().unwrap().offsets(), &[0, 0]);
    invalid(InsertData::nullable(&[0, 1], &[1u8][..]).validate("c"), "null map has 2 rows");
    invalid(InsertData::array(&[1, 0], &[1u8][..]).validate("c"), "not monotonic");
    invalid(InsertData::array(&[1, 2], &[1u8][..]).validate("c"), "end at 2");
    invalid(InsertData::array(&[1], InsertData::array(&[5], &[1u8][..])).validate("c"), "end at 5");
    let err = InsertData::array(&[1, 2], &[1u8][..]).validate("c").unwrap_err();
    assert_eq!(err.to_string(), "column `c` (Array(u8 values)): array offsets end at 2, but there are 1 array items");
}

#[test]
fn types_follow_the_read_rules() {
    let wire = |d: InsertData<'_>, t: &str| d.check_type("c", &ty(t), t);
    assert_eq!(wire(fixed(&[1u32]), "DateTime('UTC')").unwrap(), "DateTime('UTC')");
    assert_eq!(wire(fixed(&[1u32]), "LowCardinality(UInt32)").unwrap(), "UInt32");
    assert_eq!(wire(fixed(&[1u64]), "SimpleAggregateFunction(sum, UInt64)").unwrap(), "UInt64");
    assert_eq!(wire(InsertData::Strs(&["a"]), "LowCardinality(String)").unwrap(), "String");
    assert_eq!(
        wire(InsertData::nullable(&[0], InsertData::Strs(&["a"])), "LowCardinality(Nullable(String))").unwrap(),
        "Nullable(String)"
    );
    assert_eq!(wire(InsertData::fixed_strings(b"ab", 2), "LowCardinality(FixedString(2))").unwrap(), "FixedString(2)");
    // Hand-made data that claims to fit is held to the type's width.
    let lying = InsertData::Fixed { bytes: &[0; 8], width: 4, rust: "u32", accepts: |_| true };
    invalid(wire(lying.clone(), "UInt64"), "values are 4 bytes wide, UInt64 needs 8");
    invalid(wire(InsertData::array(&[2], lying.clone()), "Array(UInt64)"), "4 bytes wide");
    invalid(wire(lying, "String"), "String is not a fixed-width type");
    // Two u32 values are not UInt64s.
    let err = wire(fixed(&[1u32, 2]), "UInt64").unwrap_err();
    assert_eq!(err, ProtoError::TypeMismatch { column: "c".into(), requested: "u32".into(), actual: "UInt64".into() });
    assert!(matches!(wire(InsertData::Strs(&["a"]), "FixedString(1)"), Err(ProtoError::TypeMismatch { .. })));
    assert!(matches!(wire(fixed(&[1u8]), "Array(UInt8)"), Err(ProtoError::TypeMismatch { .. })));
    assert!(matches!(wire(InsertData::array(&[1], &[1u16][..]), "Array(UInt8)"), Err(ProtoError::TypeMismatch { .. })));
    // Values the type cannot hold, except placeholders under NULL.
    invalid(wire(fixed(&[1i8, 3]), "Enum8('a' = 1, 'b' = 2)"), "value #1 is 3");
    invalid(wire(fixed(&[2u8]), "Bool"), "value #0 is 2");
    invalid(wire(InsertData::array(&[2], &[1u8, 7][..]), "Array(Bool)"), "value #1 is 7");
    wire(InsertData::nullable(&[0, 1], &[1i8, 9][..]), "Nullable(Enum8('a' = 1))").unwrap();
    invalid(wire(InsertData::nullable(&[1, 0], &[1i8, 9][..]), "Nullable(Enum8('a' = 1))"), "value #1 is 9");
    invalid(wire(fixed(&[5i16]), "LowCardinality(Enum16('a' = 1))"), "value #0 is 5");
}

#[test]
fn a_column_is_sent_whole() {
    let b = decode(&encode(&[("c", "UInt8", fixed(&[1u8, 2]))], 0, 2, 54492), 54492);
    let columns = vec![("c".to_string(), InsertData::Column(b.column("c").unwrap()))];
    let typed = InsertColumns::new(&columns).unwrap().with_header(&b).unwrap();
    let mut out = Vec::new();
    assert!(matches!(typed.write_block(&mut out, 54492, 1, 2), Err(ProtoError::Violation(_))));
    assert!(matches!(typed.write_block(&mut out, 54492, 0, 3), Err(ProtoError::Violation(_))));
    assert!(out.is_empty());
}

#[test]
fn columns_are_checked_together_and_against_the_header() {
    let (a, b) = ([1u8, 2], [1u16]);
    let columns = vec![("a".to_string(), fixed(&a)), ("b".to_string(), fixed(&b))];
    let err = InsertColumns::new(&columns).unwrap_err();
    assert_eq!(err.to_string(), "column `b` (u16 values): 1 rows, but column `a` has 2");
    let columns = vec![("a".to_string(), fixed(&a)), ("c".to_string(), InsertData::array(&[1, 3], &a[..]))];
    invalid(InsertColumns::new(&columns).map(|c| c.rows()), "array offsets end at 3");

    let columns = vec![("a".to_string(), fixed(&a))];
    let checked = InsertColumns::new(&columns).unwrap();
    assert_eq!(checked.rows(), 2);
    let err = checked.with_header(&header(&[("x", "UInt8"), ("y", "String")])).unwrap_err();
    assert_eq!(err.to_string(), "column `a` (u8 values): the table has no such column (it has `x`, `y`)");
    assert!(matches!(checked.with_header(&header(&[("a", "Int8")])), Err(ProtoError::TypeMismatch { .. })));
    let typed = checked.with_header(&header(&[("a", "LowCardinality(UInt8)")])).unwrap();
    assert_eq!(typed.wire_types(), ["UInt8"]);
    assert!(typed.splittable());
}

#[test]
fn spliced_blocks_are_the_same_bytes_and_leave_long_runs_in_place() {
    let n = 3000usize;
    let ids: Vec<u64> = (0..n as u64).collect();
    let small: Vec<u8> = (0..n).map(|i| (i % 200) as u8).collect();
    let nulls: Vec<u8> = (0..n).map(|i| u8::from(i % 3 == 0)).collect();
    let strs: Vec<String> = (0..n).map(|i| format!("value {i}")).collect();
    let refs: Vec<&str> = strs.iter().map(String::as_str).collect();
    let mut blob_offsets = Vec::new();
    let mut blob = Vec::new();
    for s in &strs {
        blob.extend_from_slice(s.as_bytes());
        blob_offsets.push(blob.len() as u64);
    }
    let starts: Vec<i32> = std::iter::once(0).chain(blob_offsets.iter().map(|&o| o as i32)).collect();
    let arr_offsets: Vec<u64> = (1..=n as u64).map(|i| i * 2).collect();
    let arr_values: Vec<i32> = (0..2 * n as i32).collect();
    let keys = [ids.clone(), ids.clone()].concat();
    let cols = [
        ("id", "UInt64", fixed(&ids[..])),
        ("b", "UInt8", fixed(&small[..])),
        ("s", "String", InsertData::Strs(&refs)),
        ("blob", "String", InsertData::Blob { offsets: &blob_offsets, data: &blob }),
        ("starts", "String", InsertData::BlobStarts { offsets: StartOffsets::I32(&starts), data: &blob }),
        (
            "ns",
            "Nullable(String)",
            InsertData::nullable(&nulls, InsertData::Blob { offsets: &blob_offsets, data: &blob }),
        ),
        ("a", "Array(Int32)", InsertData::array(&arr_offsets, &arr_values[..])),
        ("m", "Map(UInt64, Int32)", InsertData::map(&arr_offsets, &keys[..], &arr_values[..])),
    ];
    for revision in [54460, 54492] {
        for (lo, hi) in [(0, n), (0, 1), (1, n), (700, 2500), (n, n)] {
            let bytes = encode(&cols, lo, hi, revision);
            let block = decode(&bytes, revision);
            assert_eq!(block.rows(), hi - lo);
            assert_eq!(block.column("id").unwrap().view().values::<u64>().unwrap(), &ids[lo..hi]);
            for name in ["blob", "starts"] {
                let col = block.column(name).unwrap().view();
                let got = col.as_strings().unwrap();
                for (i, want) in refs[lo..hi].iter().enumerate() {
                    assert_eq!(got.bytes(i), want.as_bytes());
                }
            }
        }
    }
    // Whole, at 54492: the u64 column, both blobs' offsets and bytes, the
    // array's offsets and values, the map's offsets, keys and values are left
    // where they are, and so are the bytes of the start-offset strings (whose
    // offsets are written as u64 ends); the &strs are gathered, the 3000-byte
    // UInt8 column and null map copied (shorter than MIN_SPLICE).
    let columns: Vec<(String, InsertData<'_>)> = cols.iter().map(|(c, _, d)| (c.to_string(), d.clone())).collect();
    let names: Vec<(&str, &str)> = cols.iter().map(|(c, t, _)| (*c, *t)).collect();
    let typed = InsertColumns::new(&columns).unwrap().with_header(&header(&names)).unwrap();
    let (mut own, mut sp) = (Vec::new(), Splices::new());
    typed.write_block_spliced(&mut own, &mut sp, 54492, 0, n).unwrap();
    assert_eq!(sp.len(), 1 + 2 + 1 + 2 + 2 + 3, "{:?}", sp.runs().iter().map(|r| r.1.len()).collect::<Vec<_>>());
    assert!(own.len() < 2 * n + 16 * n + blob.len() + 300, "{}", own.len());
    // From row 1 on, offsets are rebased (written), bytes still left in place.
    typed.write_block_spliced(&mut own, &mut sp, 54492, 1, n).unwrap();
}

/// The Native bytes of `rows` strings, one `put_string` at a time: what the fast writer must equal.
fn var_strings_one_by_one(rows: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for r in rows {
        out.put_string(r);
    }
    out
}

#[test]
fn strings_at_start_offsets_are_written_like_one_put_string_each() {
    // Lengths around every boundary of the writer: the fixed 32-byte move, one- and
    // two-byte VarUInt lengths, a three-byte one, and a last row that ends the data
    // (no bytes after it for the fixed move to read).
    let lens = [0usize, 1, 5, 31, 32, 33, 127, 128, 129, 300, 16_383, 16_384, 20_000, 3, 0, 32];
    let mut data = Vec::new();
    let mut starts = vec![0i64];
    for (k, &n) in lens.iter().enumerate() {
        data.extend((0..n).map(|i| (i * 7 + k) as u8));
        starts.push(data.len() as i64);
    }
    let starts32: Vec<i32> = starts.iter().map(|&s| s as i32).collect();
    let rows: Vec<&[u8]> = starts.windows(2).map(|w| &data[w[0] as usize..w[1] as usize]).collect();
    for lo in 0..rows.len() {
        for hi in lo..=rows.len() {
            let want = var_strings_one_by_one(&rows[lo..hi]);
            for offsets in [StartOffsets::I32(&starts32), StartOffsets::I64(&starts)] {
                let mut out = vec![0xAB; 3];
                put_strings_at(&mut out, offsets, &data, lo, hi);
                assert_eq!(&out[..3], &[0xAB; 3], "rows {lo}..{hi}: what was there before is kept");
                assert_eq!(out[3..], want[..], "rows {lo}..{hi}");
            }
        }
    }
}

#[test]
fn start_offsets_name_the_first_offset_out_of_order() {
    let check = |o: &[i32], len: usize| StartOffsets::I32(o).check(len);
    assert_eq!(check(&[0, 2, 2, 5], 5), Ok(()));
    assert_eq!(check(&[], 0), Ok(()));
    assert_eq!(check(&[0, 3, 2, 5], 5).unwrap_err(), "string offsets are not monotonic (offset 2 is 2)");
    assert_eq!(check(&[-1, 3], 5).unwrap_err(), "string offsets are not monotonic (offset 0 is -1)");
    assert_eq!(check(&[0, 3, 6], 5).unwrap_err(), "string offsets end at 6, but the data has 5 bytes");
    let long: Vec<i64> = (0..1000).chain([998, 1000]).collect();
    assert_eq!(
        StartOffsets::I64(&long).check(2000).unwrap_err(),
        "string offsets are not monotonic (offset 1000 is 998)"
    );
}
