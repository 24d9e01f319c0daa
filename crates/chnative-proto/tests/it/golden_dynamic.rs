//! Variant, Dynamic and JSON columns decoded from bytes captured from a real
//! ClickHouse 26.9 server (scripts/capture.py, compression off), checked against
//! the server's own `toString` / `variantType` / `dynamicType` / `toJSONString`
//! columns in the same block, and re-encoded byte for byte.
//!
//! Captures (tests/data/captures):
//! * `variant_{54460,54492}.bin`: `WITH [[1,2]::Array(UInt8), 'ab', 7::UInt64, NULL,
//!   []::Array(UInt8), 'c'] AS arr SELECT arrayJoin(arr) AS v, toString(v) AS s,
//!   variantType(v) AS t, arr AS av`
//! * `dynamic_{v1_54472,v2_54492,flat_54492}.bin`: twelve values of nine types cast to
//!   `Dynamic(max_types=2)` (so most go to the shared variant), with `toString(d) AS s,
//!   dynamicType(d) AS t`; `flat` with
//!   `output_format_native_use_flattened_dynamic_and_json_serialization=1`.
//! * `json_{v1_54472,v2_54492,flat_54492,string_54472,string_54492}.bin`: four objects as
//!   `JSON(max_dynamic_paths=2, a UInt32, l LowCardinality(String))` with
//!   `toJSONString(j) AS s`; `string` with `output_format_native_write_json_as_string=1`.

use std::fmt::Write as _;

use chnative_proto::column::{
    ColumnData, DYNAMIC_FLATTENED, DYNAMIC_V1, DYNAMIC_V2, JSON_FLATTENED, JSON_STRING, JSON_V1, JSON_V2,
};
use chnative_proto::packet::{read_server_packet, BlockKind, ServerPacket};
use chnative_proto::view::ColumnView;
use chnative_proto::wire::Reader;
use chnative_proto::{Block, BlockLimits, BufferPool, DataType};

fn capture(name: &str) -> Vec<u8> {
    std::fs::read(format!("{}/tests/data/captures/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// Decodes an uncompressed capture; returns the Data blocks with rows, each with
/// the bytes it was decoded from. Every block must re-encode to exactly those bytes.
fn decode_all(bytes: &[u8], revision: u64) -> Vec<Block> {
    let mut r = Reader::new(bytes);
    let mut pool = BufferPool::new();
    let mut blocks = Vec::new();
    loop {
        let at = r.position();
        match read_server_packet(&mut r, revision, revision, false).unwrap_or_else(|e| panic!("packet at {at:#x}: {e}"))
        {
            ServerPacket::Block { kind, .. } => {
                let start = r.position();
                let mut b = Block::new();
                b.read(&mut r, revision, &BlockLimits::default(), &mut pool)
                    .unwrap_or_else(|e| panic!("{kind:?} block at {start:#x}: {e}"));
                if kind == BlockKind::Data {
                    let mut again = Vec::new();
                    b.write(&mut again, revision).unwrap();
                    assert_eq!(again, &bytes[start..r.position()], "block re-encodes unchanged");
                    if b.rows() > 0 {
                        blocks.push(b);
                    }
                }
            }
            ServerPacket::EndOfStream => {
                assert_eq!(r.remaining(), 0);
                return blocks;
            }
            ServerPacket::Exception(e) => panic!("{e:?}"),
            _ => {}
        }
    }
}

fn strings(v: &ColumnView<'_>) -> Vec<String> {
    let s = v.as_strings().unwrap();
    (0..s.len()).map(|i| s.str(i).unwrap().to_string()).collect()
}

/// A LowCardinality(String) or String column as strings.
fn lc_strings(v: &ColumnView<'_>) -> Vec<String> {
    match v.as_low_cardinality() {
        Ok(lc) => {
            let d = lc.strings().unwrap();
            (0..lc.len()).map(|i| d.str(lc.key(i)).unwrap().to_string()).collect()
        }
        Err(_) => strings(v),
    }
}

/// `toString` of the value at `i` for the types these captures hold; `quoted` is the
/// form inside composites (strings and dates in single quotes).
fn render(v: &ColumnView<'_>, i: usize, quoted: bool, out: &mut String) {
    let q = |out: &mut String, s: &str| {
        if quoted {
            write!(out, "'{s}'").unwrap()
        } else {
            out.push_str(s)
        }
    };
    match v.data_type() {
        DataType::UInt8 => write!(out, "{}", v.values::<u8>().unwrap()[i]).unwrap(),
        DataType::UInt32 => write!(out, "{}", v.values::<u32>().unwrap()[i]).unwrap(),
        DataType::UInt64 => write!(out, "{}", v.values::<u64>().unwrap()[i]).unwrap(),
        DataType::Int32 => write!(out, "{}", v.values::<i32>().unwrap()[i]).unwrap(),
        DataType::Int64 => write!(out, "{}", v.values::<i64>().unwrap()[i]).unwrap(),
        DataType::Float64 => write!(out, "{}", v.values::<f64>().unwrap()[i]).unwrap(),
        DataType::Bool => out.push_str(if v.values::<u8>().unwrap()[i] != 0 { "true" } else { "false" }),
        DataType::String => q(out, v.as_strings().unwrap().str(i).unwrap()),
        DataType::Date => {
            // Only dates after 2000 here: count days.
            let days = i64::from(v.values::<u16>().unwrap()[i]);
            let (y, m, d) = civil(days);
            q(out, &format!("{y:04}-{m:02}-{d:02}"));
        }
        DataType::Nullable(_) => {
            let n = v.as_nullable().unwrap();
            if n.is_null(i) {
                out.push_str("NULL");
            } else {
                render(n.inner(), i, quoted, out);
            }
        }
        DataType::Array(_) => {
            let a = v.as_array().unwrap();
            out.push('[');
            for (k, e) in a.range(i).enumerate() {
                if k > 0 {
                    out.push(',');
                }
                render(a.inner(), e, true, out);
            }
            out.push(']');
        }
        DataType::Map(..) => {
            let a = v.as_array().unwrap();
            out.push('{');
            for (k, e) in a.range(i).enumerate() {
                if k > 0 {
                    out.push(',');
                }
                render(&a.inner().tuple_element(0).unwrap(), e, true, out);
                out.push(':');
                render(&a.inner().tuple_element(1).unwrap(), e, true, out);
            }
            out.push('}');
        }
        DataType::Tuple(elems) => {
            out.push('(');
            for k in 0..elems.len() {
                if k > 0 {
                    out.push(',');
                }
                render(&v.tuple_element(k).unwrap(), i, true, out);
            }
            out.push(')');
        }
        DataType::Variant(_) => {
            let var = v.as_variant().unwrap();
            match var.value(i).unwrap() {
                None => out.push_str("NULL"),
                Some((col, at)) => render(&col, at, quoted, out),
            }
        }
        other => panic!("no renderer for {other}"),
    }
}

fn civil(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

fn to_string(v: &ColumnView<'_>, i: usize) -> String {
    let mut s = String::new();
    render(v, i, false, &mut s);
    s
}

#[test]
fn variant_both_string_layouts() {
    for (file, rev) in [("variant_54460.bin", 54460), ("variant_54492.bin", 54492)] {
        let blocks = decode_all(&capture(file), rev);
        assert_eq!(blocks.len(), 1, "{file}");
        let b = &blocks[0];
        assert_eq!(b.rows(), 6);
        let v = b.column("v").unwrap().view();
        assert_eq!(v.data_type(), &DataType::parse("Variant(Array(UInt8), String, UInt64)").unwrap());
        let var = v.as_variant().unwrap();
        // variantType is Enum8('None' = -1, 'Array(UInt8)' = 0, ...): the discriminator.
        let t = b.column("t").unwrap().view();
        let t = t.values::<i8>().unwrap();
        let s = strings(&b.column("s").unwrap().view());
        for i in 0..6 {
            assert_eq!(var.discriminator(i).map_or(-1, |d| d as i8), t[i], "{file} row {i}");
            let got = if var.is_null(i) { String::new() } else { to_string(&v, i) };
            assert_eq!(got, s[i], "{file} row {i}");
        }
        assert_eq!(var.discriminators(), &[0, 1, 2, 255, 0, 1]);
        assert_eq!(var.row(4), Some((0, 1)));
        assert_eq!(var.variant(1).unwrap().len(), 2);
        // Array(Variant): every row is the whole array.
        let av = b.column("av").unwrap().view();
        for i in 0..6 {
            assert_eq!(to_string(&av, i), "[[1,2],'ab',7,NULL,[],'c']");
        }
    }
}

fn check_dynamic(file: &str, rev: u64, version: u64) {
    let blocks = decode_all(&capture(file), rev);
    assert_eq!(blocks.len(), 1, "{file}");
    let b = &blocks[0];
    assert_eq!(b.rows(), 12);
    let d = b.column("d").unwrap().view();
    assert_eq!(d.data_type(), &DataType::Dynamic { max_types: Some(2) });
    let dy = d.as_dynamic().unwrap();
    assert_eq!(dy.version(), version, "{file}");
    let s = strings(&b.column("s").unwrap().view());
    let t = lc_strings(&b.column("t").unwrap().view());
    let mut shared = 0;
    for i in 0..12 {
        match dy.value(i).unwrap() {
            None => {
                assert_eq!(t[i], "None", "{file} row {i}");
                assert_eq!(s[i], "", "{file} row {i}");
            }
            Some((col, at)) => {
                assert_eq!(dy.row_type(i).unwrap(), &DataType::parse(&t[i]).unwrap(), "{file} row {i}");
                assert_eq!(dy.row_type_name(i).unwrap(), t[i], "{file} row {i}");
                assert_eq!(to_string(&col, at), s[i], "{file} row {i}");
                shared += usize::from(dy.shared_bytes(i).is_some());
            }
        }
    }
    if version == DYNAMIC_FLATTENED {
        assert_eq!(shared, 0);
        assert_eq!(dy.type_count(), dy.declared_types().len());
    } else {
        // max_types=2: two declared types, the other six in the shared variant.
        assert_eq!(dy.declared_types().len(), 2, "{file}");
        assert_eq!(dy.type_count(), 8, "{file}");
        assert!(shared >= 6, "{file}: {shared} shared rows");
    }
}

#[test]
fn dynamic_v1_v2_and_flattened() {
    check_dynamic("dynamic_v1_54472.bin", 54472, DYNAMIC_V1);
    check_dynamic("dynamic_v2_54492.bin", 54492, DYNAMIC_V2);
    check_dynamic("dynamic_flat_54492.bin", 54492, DYNAMIC_FLATTENED);
}

const JSON_TEXTS: [&str; 4] = [
    r#"{"a":1,"b":{"c":"x"},"l":"p"}"#,
    r#"{"a":2,"d":[1,2],"e":{"f":true},"l":""}"#,
    r#"{"a":0,"l":""}"#,
    r#"{"a":0,"b":{"c":"y"},"g":[{"h":1}],"l":"q"}"#,
];

#[test]
fn json_as_text() {
    for (file, rev) in [("json_string_54472.bin", 54472), ("json_string_54492.bin", 54492)] {
        let blocks = decode_all(&capture(file), rev);
        let b = &blocks[0];
        let j = b.column("j").unwrap().view().as_json().unwrap();
        assert_eq!(j.version(), JSON_STRING);
        let s = strings(&b.column("s").unwrap().view());
        for i in 0..4 {
            assert_eq!(j.text(i).unwrap(), s[i], "{file} row {i}");
            assert_eq!(j.text(i).unwrap(), JSON_TEXTS[i], "{file} row {i}");
        }
    }
}

#[test]
fn json_native_paths() {
    for (file, rev, version) in [
        ("json_v1_54472.bin", 54472, JSON_V1),
        ("json_v2_54492.bin", 54492, JSON_V2),
        ("json_flat_54492.bin", 54492, JSON_FLATTENED),
    ] {
        let blocks = decode_all(&capture(file), rev);
        let b = &blocks[0];
        let col = b.column("j").unwrap().view();
        let j = col.as_json().unwrap();
        assert_eq!(j.version(), version, "{file}");
        assert!(j.text(0).unwrap_err().to_string().contains("output_format_native_write_json_as_string"));
        assert_eq!(j.typed_paths(), &["a".to_string(), "l".to_string()]);
        let a = j.typed_path("a").unwrap();
        assert_eq!(a.values::<u32>().unwrap(), &[1, 2, 0, 0]);
        assert_eq!(lc_strings(&j.typed_path("l").unwrap()), ["p", "", "", "q"]);
        // b.c is a dynamic path in every form (the first two paths by frequency).
        let bc = j.dynamic_path("b.c").unwrap();
        let got: Vec<String> = (0..4)
            .map(|i| match bc.value(i).unwrap() {
                None => "NULL".into(),
                Some((c, at)) => to_string(&c, at),
            })
            .collect();
        assert_eq!(got, ["x", "NULL", "NULL", "y"], "{file}");
        let d = j.dynamic_path("d").unwrap();
        assert_eq!(d.row_type(1).unwrap(), &DataType::parse("Array(Nullable(Int64))").unwrap());
        let (c, at) = d.value(1).unwrap().unwrap();
        assert_eq!(to_string(&c, at), "[1,2]");
        if version == JSON_FLATTENED {
            assert_eq!(j.dynamic_paths(), &["b.c", "d", "e.f", "g"]);
            let ef = j.dynamic_path("e.f").unwrap();
            assert_eq!(ef.row_type(1), Some(&DataType::Bool));
            assert!(j.shared(1).unwrap().is_empty());
        } else {
            assert_eq!(j.dynamic_paths(), &["b.c", "d"]);
            // e.f and g went to the shared data: path, then binary type + RowBinary value.
            let shared = j.shared(1).unwrap();
            assert_eq!(shared, vec![("e.f", &[0x2d, 0x01][..])]);
            let shared = j.shared(3).unwrap();
            assert_eq!(shared.len(), 1);
            assert_eq!(shared[0].0, "g");
            let mut r = Reader::new(shared[0].1);
            assert!(
                matches!(DataType::decode_binary(&mut r).unwrap(), DataType::Array(t) if matches!(*t, DataType::Json(_)))
            );
        }
        // A JSON column that is not text says which setting gives text.
        let _ = ColumnData::rows(col.data());
    }
}

#[test]
fn truncated_captures_are_incomplete_not_garbage() {
    // Cut the Dynamic V2 capture inside its Dynamic column: the block must report
    // Incomplete at every cut, never succeed or fail otherwise.
    for (file, rev) in [("dynamic_v2_54492.bin", 54492), ("json_v2_54492.bin", 54492), ("variant_54492.bin", 54492)] {
        let bytes = capture(file);
        let mut r = Reader::new(&bytes);
        let mut pool = BufferPool::new();
        // Skip to the first Data block with rows.
        let (start, end) = loop {
            let at = r.position();
            match read_server_packet(&mut r, rev, rev, false)
                .unwrap_or_else(|e| panic!("{file}: packet at {at:#x}: {e}"))
            {
                ServerPacket::Block { .. } => {
                    let start = r.position();
                    let mut b = Block::new();
                    b.read(&mut r, rev, &BlockLimits::default(), &mut pool).unwrap();
                    if b.rows() > 0 {
                        break (start, r.position());
                    }
                }
                p => assert!(!matches!(p, ServerPacket::EndOfStream), "{file}: no data block"),
            }
        };
        let block = &bytes[start..end];
        for cut in 0..block.len() {
            let mut b = Block::new();
            let res = b.read(&mut Reader::new(&block[..cut]), rev, &BlockLimits::default(), &mut pool);
            assert!(
                matches!(res, Err(chnative_proto::ProtoError::Incomplete { .. })),
                "{file} cut at {cut}/{}: {res:?}",
                block.len()
            );
        }
    }
}
