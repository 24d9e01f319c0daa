//! Special serialization kinds (SPARSE, REPLICATED and their COMBINATION) in Native blocks.
//!
//! Two halves:
//! * captures of a real ClickHouse 26.9 server (scripts/capture.py, compression off), decoded
//!   with `Block::read`; the kinds the server put in each column header are checked too, so the
//!   tests keep proving that the server really sent them;
//! * blocks built by hand from the documented layout, for shapes and index widths the server
//!   does not produce on its own (LowCardinality, 2/4/8-byte indexes, a replicated tuple element)
//!   and for malformed input.
//!
//! How the captures were made (the server materialises nothing below the revision gates:
//! REPLICATED needs ≥ 54482, SPARSE ≥ 54465, SPARSE on Nullable ≥ 54483):
//!
//! `replicated_54492.bin`: lazy replication of ARRAY JOIN (`enable_lazy_columns_replication = 1`,
//! the default) replicates every other column of the row that holds the array, except those for
//! which ClickHouse finds it useless (constants, LowCardinality, fixed-width values of ≤ 8 bytes):
//!
//! ```sql
//! SELECT k, s, ns, arr, lc, t, tlc, alc, m, n8, u128, fs, x FROM (SELECT number AS k,
//!   concat('s', toString(number)) AS s, if(number % 3 = 0, NULL, toString(number)) AS ns,
//!   range(number % 4) AS arr, toLowCardinality(toString(number % 2)) AS lc,
//!   (toUInt8(number), toString(number)) AS t,
//!   (toLowCardinality(toString(number % 3)), [toString(number)]) AS tlc,
//!   [toLowCardinality(toString(number))] AS alc, map(toString(number), number) AS m,
//!   toNullable(toUInt8(number)) AS n8, toUInt128(number) AS u128,
//!   toFixedString(leftPad(toString(number), 16, '0'), 16) AS fs FROM numbers(10))
//! ARRAY JOIN arr AS x
//! ```
//!
//! `sparse_54492.bin` and `combination_{54482,54492}.bin` read this table (one part, after
//! `OPTIMIZE TABLE golden_sparse FINAL`):
//!
//! ```sql
//! CREATE TABLE golden_sparse (id UInt64, v UInt64, s String, ns Nullable(String), nu Nullable(UInt32),
//!   arr Array(UInt16), t Tuple(a UInt64, b String), lc LowCardinality(String))
//! ENGINE = MergeTree ORDER BY id SETTINGS ratio_of_defaults_for_sparse_serialization = 0.5,
//!   serialization_info_version = 'with_types', nullable_serialization_version = 'allow_sparse',
//!   min_bytes_for_wide_part = 0;
//! INSERT INTO golden_sparse SELECT number, if(number % 7 = 0, number * 1000, 0),
//!   if(number % 5 = 0, concat('s', toString(number)), ''), if(number % 11 = 0, toString(number), NULL),
//!   if(number % 9 = 0, toUInt32(number), NULL), if(number % 8 = 0, [toUInt16(number), 1], []),
//!   (if(number % 13 = 0, number, 0), if(number % 17 = 0, 'x', '')), if(number % 3 = 0, 'x', '')
//! FROM numbers(100);
//! ```
//!
//! `sparse_54492.bin`: `SELECT * FROM golden_sparse ORDER BY id`.
//! `combination_*.bin`: the probe side of a hash join whose rows each match two build rows is
//! lazily replicated, on top of the sparse columns read from the part:
//!
//! ```sql
//! SELECT p.*, r.x FROM golden_sparse AS p INNER JOIN (SELECT number % 3 AS k, number AS x FROM numbers(6)) AS r
//!   ON p.id % 3 = r.k SETTINGS query_plan_join_swap_table = 0, max_threads = 1
//! ```

use chnative_proto::column::{Kind, SerInfo};
use chnative_proto::packet::{read_server_packet, BlockKind, ServerPacket};
use chnative_proto::view::ColumnView;
use chnative_proto::wire::{Reader, WriteExt};
use chnative_proto::{Block, BlockLimits, BufferPool, DataType, ProtoError};

fn capture(name: &str) -> Vec<u8> {
    std::fs::read(format!("{}/tests/data/captures/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

// ===========================================================================
// Helpers
// ===========================================================================

/// One line per kind stack: `-` (no custom info), `D` (custom info, plain), `S`, `R`, `S+R`,
/// and for tuples the elements in parentheses, e.g. `R(S,S)`.
fn describe(info: Option<&SerInfo>) -> String {
    let Some(info) = info else { return "-".into() };
    let mut s: Vec<&str> = info
        .stack
        .iter()
        .filter(|k| **k != Kind::Default)
        .map(|k| match k {
            Kind::Sparse => "S",
            Kind::Replicated => "R",
            Kind::Detached => "X",
            Kind::Default => unreachable!(),
            other => panic!("a kind this test does not know: {other:?}"),
        })
        .collect();
    if s.is_empty() {
        s.push("D");
    }
    let mut out = s.join("+");
    if !info.elems.is_empty() {
        let e: Vec<String> = info.elems.iter().map(|e| describe(Some(e))).collect();
        out.push_str(&format!("({})", e.join(",")));
    }
    out
}

/// The kinds each column header of a decoded block announced. `bytes` is the encoded block;
/// headers are found by their name + type bytes, searching forward from the previous header.
fn header_kinds(bytes: &[u8], block: &Block) -> Vec<String> {
    let mut from = 0;
    let mut out = Vec::new();
    for col in block.columns() {
        let mut pat = Vec::new();
        pat.put_string(col.name());
        pat.put_string(col.type_name());
        let at = bytes[from..]
            .windows(pat.len())
            .position(|w| w == pat.as_slice())
            .unwrap_or_else(|| panic!("header of `{}` not found", col.name()))
            + from;
        from = at + pat.len();
        let mut r = Reader::new(&bytes[from..]);
        let info = if r.bool().unwrap() { Some(SerInfo::read(&mut r, col.data()).unwrap()) } else { None };
        out.push(format!("{} {}", col.name(), describe(info.as_ref())));
    }
    out
}

/// Decodes an uncompressed captured response: the Data blocks with rows (with the kinds
/// their headers announced), and how the response ended.
fn decode_all(bytes: &[u8], revision: u64) -> (Vec<(Block, Vec<String>)>, ServerPacket) {
    let mut r = Reader::new(bytes);
    let mut pool = BufferPool::new();
    let mut blocks = Vec::new();
    loop {
        match read_server_packet(&mut r, revision, revision, false).unwrap() {
            ServerPacket::Block { kind, .. } => {
                let start = r.position();
                let mut b = Block::new();
                b.read(&mut r, revision, &BlockLimits::default(), &mut pool).unwrap();
                if kind == BlockKind::Data && b.rows() > 0 {
                    let kinds = header_kinds(&bytes[start..r.position()], &b);
                    blocks.push((b, kinds));
                }
            }
            p @ (ServerPacket::EndOfStream | ServerPacket::Exception(_)) => {
                assert_eq!(r.remaining(), 0, "bytes after the end");
                return (blocks, p);
            }
            _ => {}
        }
    }
}

/// A value as ClickHouse's `toString` renders it (`quoted` inside arrays, tuples and maps).
/// `None` for a top-level NULL.
fn render(v: &ColumnView<'_>, i: usize, quoted: bool) -> Option<String> {
    fn quote(b: &[u8], quoted: bool) -> String {
        let s = String::from_utf8_lossy(b);
        if quoted {
            format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
        } else {
            s.into_owned()
        }
    }
    Some(match v.data_type().clone() {
        DataType::UInt8 => v.values::<u8>().unwrap()[i].to_string(),
        DataType::UInt16 => v.values::<u16>().unwrap()[i].to_string(),
        DataType::UInt32 => v.values::<u32>().unwrap()[i].to_string(),
        DataType::UInt64 => v.values::<u64>().unwrap()[i].to_string(),
        DataType::UInt128 => v.values::<u128>().unwrap()[i].to_string(),
        DataType::String => quote(v.as_strings().unwrap().bytes(i), quoted),
        DataType::FixedString(n) => quote(&v.as_fixed_strings().unwrap().0[i * n..(i + 1) * n], quoted),
        DataType::Nullable(_) => {
            let n = v.as_nullable().unwrap();
            if n.is_null(i) {
                return if quoted { Some("NULL".into()) } else { None };
            }
            render(n.inner(), i, quoted)?
        }
        DataType::Array(_) | DataType::Map(..) => {
            let a = v.as_array().unwrap();
            let is_map = matches!(v.data_type(), DataType::Map(..));
            let items: Vec<String> = a
                .range(i)
                .map(|j| {
                    if is_map {
                        let t = a.inner();
                        format!(
                            "{}:{}",
                            render(&t.tuple_element(0).unwrap(), j, true).unwrap(),
                            render(&t.tuple_element(1).unwrap(), j, true).unwrap()
                        )
                    } else {
                        render(a.inner(), j, true).unwrap()
                    }
                })
                .collect();
            if is_map {
                format!("{{{}}}", items.join(","))
            } else {
                format!("[{}]", items.join(","))
            }
        }
        DataType::Tuple(elems) => {
            let items: Vec<String> =
                (0..elems.len()).map(|e| render(&v.tuple_element(e).unwrap(), i, true).unwrap()).collect();
            format!("({})", items.join(","))
        }
        DataType::LowCardinality(_) => {
            let lc = v.as_low_cardinality().unwrap();
            if lc.is_null(i) {
                return if quoted { Some("NULL".into()) } else { None };
            }
            render(lc.dictionary(), lc.key(i), quoted)?
        }
        other => panic!("no renderer for {other:?}"),
    })
}

fn col_text(b: &Block, name: &str, i: usize) -> Option<String> {
    render(&b.column(name).unwrap_or_else(|| panic!("no column {name}")).view(), i, false)
}

fn text(b: &Block, name: &str, i: usize) -> String {
    col_text(b, name, i).unwrap_or_else(|| "NULL".into())
}

/// Re-encodes a block (always plain), decodes it again, and checks every value survived.
fn reencode_round_trip(b: &Block, rev: u64) {
    let mut out = Vec::new();
    b.write(&mut out, rev).unwrap();
    let mut again = Block::new();
    let mut r = Reader::new(&out);
    again.read(&mut r, rev, &BlockLimits::default(), &mut BufferPool::new()).unwrap();
    assert_eq!(r.remaining(), 0);
    assert_eq!(again.rows(), b.rows());
    for c in b.columns() {
        for i in 0..b.rows() {
            assert_eq!(col_text(&again, c.name(), i), col_text(b, c.name(), i), "{} row {i}", c.name());
        }
    }
}

// ===========================================================================
// Captures from the real server
// ===========================================================================

#[test]
fn replicated_array_join_capture() {
    let (blocks, end) = decode_all(&capture("replicated_54492.bin"), 54492);
    assert_eq!(end, ServerPacket::EndOfStream);
    assert_eq!(blocks.len(), 1);
    let (b, kinds) = &blocks[0];
    // Kinds differ per column within the block.
    assert_eq!(
        kinds,
        &[
            "k -",
            "s R",
            "ns R",
            "arr R",
            "lc -",
            "t R(D,D)",
            "tlc R(D,D)",
            "alc R",
            "m R",
            "n8 R",
            "u128 R",
            "fs R",
            "x -"
        ]
    );
    let mut expected_rows = Vec::new();
    for k in 0..10u64 {
        for x in 0..k % 4 {
            expected_rows.push((k, x));
        }
    }
    assert_eq!(b.rows(), expected_rows.len());
    for (i, &(k, x)) in expected_rows.iter().enumerate() {
        let arr: Vec<String> = (0..k % 4).map(|v| v.to_string()).collect();
        let expect = [
            ("k", k.to_string()),
            ("s", format!("s{k}")),
            ("ns", if k.is_multiple_of(3) { "NULL".into() } else { k.to_string() }),
            ("arr", format!("[{}]", arr.join(","))),
            ("lc", (k % 2).to_string()),
            ("t", format!("({k},'{k}')")),
            ("tlc", format!("('{}',['{k}'])", k % 3)),
            ("alc", format!("['{k}']")),
            ("m", format!("{{'{k}':{k}}}")),
            ("n8", k.to_string()),
            ("u128", k.to_string()),
            ("fs", format!("{k:0>16}")),
            ("x", x.to_string()),
        ];
        for (name, want) in expect {
            assert_eq!(text(b, name, i), want, "{name} row {i}");
        }
    }
    reencode_round_trip(b, 54492);
}

/// Row `id` of the golden_sparse table, column by column, as `toString` renders it.
fn golden_sparse_row(id: u64) -> Vec<(&'static str, String)> {
    vec![
        ("id", id.to_string()),
        ("v", if id.is_multiple_of(7) { (id * 1000).to_string() } else { "0".into() }),
        ("s", if id.is_multiple_of(5) { format!("s{id}") } else { String::new() }),
        ("ns", if id.is_multiple_of(11) { id.to_string() } else { "NULL".into() }),
        ("nu", if id.is_multiple_of(9) { id.to_string() } else { "NULL".into() }),
        ("arr", if id.is_multiple_of(8) { format!("[{id},1]") } else { "[]".into() }),
        (
            "t",
            format!(
                "({},'{}')",
                if id.is_multiple_of(13) { id } else { 0 },
                if id.is_multiple_of(17) { "x" } else { "" }
            ),
        ),
        ("lc", if id.is_multiple_of(3) { "x".into() } else { String::new() }),
    ]
}

#[test]
fn sparse_capture() {
    let (blocks, end) = decode_all(&capture("sparse_54492.bin"), 54492);
    assert_eq!(end, ServerPacket::EndOfStream);
    assert_eq!(blocks.len(), 1);
    let (b, kinds) = &blocks[0];
    // Nullable columns are sparse too (NULL is their default; the values carry no null map).
    assert_eq!(kinds, &["id -", "v S", "s S", "ns S", "nu S", "arr -", "t D(S,S)", "lc -"]);
    assert_eq!(b.rows(), 100);
    for id in 0..100u64 {
        let i = id as usize;
        for (name, want) in golden_sparse_row(id) {
            assert_eq!(text(b, name, i), want, "{name} row {i}");
        }
    }
    reencode_round_trip(b, 54492);
}

fn check_combination(file: &str, rev: u64, expected_kinds: &[&str]) {
    let (blocks, end) = decode_all(&capture(file), rev);
    assert_eq!(end, ServerPacket::EndOfStream);
    let mut seen = Vec::new();
    for (b, kinds) in &blocks {
        assert_eq!(kinds, expected_kinds, "{file}");
        let ids = b.column("id").unwrap().view();
        let ids = ids.values::<u64>().unwrap();
        let xs = b.column("x").unwrap().view();
        let xs = xs.values::<u64>().unwrap();
        for i in 0..b.rows() {
            // `id` and `x` are plain columns: every replicated one must agree with them.
            for (name, want) in golden_sparse_row(ids[i]) {
                assert_eq!(text(b, name, i), want, "{file}: {name} row {i} (id {})", ids[i]);
            }
            seen.push((ids[i], xs[i]));
        }
        reencode_round_trip(b, rev);
    }
    seen.sort_unstable();
    let mut want: Vec<(u64, u64)> =
        (0..100u64).flat_map(|id| (0..6).filter(move |x| x % 3 == id % 3).map(move |x| (id, x))).collect();
    want.sort_unstable();
    assert_eq!(seen, want, "{file}");
}

#[test]
fn sparse_and_replicated_combination_capture() {
    check_combination(
        "combination_54492.bin",
        54492,
        &["id -", "v S+R", "s S+R", "ns S+R", "nu S+R", "arr R", "t R(S,S)", "lc -", "x -"],
    );
    // Below 54483 the server densifies sparse Nullable columns but keeps them replicated.
    check_combination(
        "combination_54482.bin",
        54482,
        &["id -", "v S+R", "s S+R", "ns R", "nu R", "arr R", "t R(S,S)", "lc -", "x -"],
    );
}

#[test]
fn truncated_kind_captures_never_panic() {
    for (file, rev) in [
        ("replicated_54492.bin", 54492),
        ("combination_54492.bin", 54492),
        ("combination_54482.bin", 54482),
        ("sparse_54492.bin", 54492),
    ] {
        let b = capture(file);
        for cut in (0..b.len()).step_by(5) {
            let mut r = Reader::new(&b[..cut]);
            let mut pool = BufferPool::new();
            loop {
                match read_server_packet(&mut r, rev, rev, false) {
                    Ok(ServerPacket::Block { .. }) => {
                        let mut blk = Block::new();
                        match blk.read(&mut r, rev, &BlockLimits::default(), &mut pool) {
                            Ok(()) => {}
                            Err(ProtoError::Incomplete { .. }) => break,
                            Err(e) => panic!("{file} cut at {cut}: {e}"),
                        }
                    }
                    Ok(ServerPacket::EndOfStream) => break,
                    Err(ProtoError::Incomplete { .. }) => break,
                    Err(e) => panic!("{file} cut at {cut}: {e}"),
                    Ok(_) => {}
                }
            }
        }
    }
}

// ===========================================================================
// Hand-built blocks
// ===========================================================================

/// BlockInfo as 26.9 sends it at revision ≥ 54480.
const BLOCK_INFO: [u8; 10] = [0x01, 0x00, 0x02, 0xff, 0xff, 0xff, 0xff, 0x03, 0x00, 0x00];

/// A whole block: each column is (name, type, bytes after the type: has_custom, kinds, prefix, data).
fn block_bytes(rows: u64, cols: &[(&str, &str, Vec<u8>)]) -> Vec<u8> {
    let mut b = BLOCK_INFO.to_vec();
    b.put_varuint(cols.len() as u64);
    b.put_varuint(rows);
    for (name, ty, body) in cols {
        b.put_string(name);
        b.put_string(ty);
        b.extend_from_slice(body);
    }
    b
}

fn decode(bytes: &[u8], rev: u64) -> Block {
    let mut b = Block::new();
    let mut r = Reader::new(bytes);
    b.read(&mut r, rev, &BlockLimits::default(), &mut BufferPool::new()).unwrap();
    assert_eq!(r.remaining(), 0, "trailing bytes");
    b
}

fn decode_err(bytes: &[u8], rev: u64) -> ProtoError {
    let mut b = Block::new();
    b.read(&mut Reader::new(bytes), rev, &BlockLimits::default(), &mut BufferPool::new()).unwrap_err()
}

fn texts(b: &Block, name: &str) -> Vec<String> {
    (0..b.rows()).map(|i| text(b, name, i)).collect()
}

/// Replicated header and indexes: `has_custom=1`, `kinds`, then the prefix, then
/// num_rows, index width and the indexes, then num_elements.
fn replicated(kinds: &[u8], prefix: &[u8], idx: &[u64], width: u8, elements: u64) -> Vec<u8> {
    let mut b = vec![1];
    b.extend_from_slice(kinds);
    b.extend_from_slice(prefix);
    b.put_varuint(idx.len() as u64);
    b.put_u8(width);
    for &i in idx {
        b.extend_from_slice(&i.to_le_bytes()[..usize::from(width)]);
    }
    b.put_varuint(elements);
    b
}

/// Strings in the layout of the revision (54492: u64 end offsets then bytes; older: VarUInt-prefixed).
fn strings(vals: &[&str], rev: u64) -> Vec<u8> {
    let mut b = Vec::new();
    if rev >= 54492 {
        let mut end = 0u64;
        for v in vals {
            end += v.len() as u64;
            b.put_u64_le(end);
        }
        for v in vals {
            b.extend_from_slice(v.as_bytes());
        }
    } else {
        for v in vals {
            b.put_string(v);
        }
    }
    b
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

const IDX: [u64; 7] = [2, 0, 0, 1, 2, 2, 1];

#[test]
fn hand_built_uint64_every_index_width() {
    for width in [1u8, 2, 4, 8] {
        let mut body = replicated(&[4], &[], &IDX, width, 3);
        for v in [10u64, 20, 30] {
            body.put_u64_le(v);
        }
        let b = decode(&block_bytes(7, &[("u", "UInt64", body)]), 54492);
        assert_eq!(b.column("u").unwrap().view().values::<u64>().unwrap(), &[30, 10, 10, 20, 30, 30, 20], "{width}");
    }
}

#[test]
fn hand_built_strings_nullable_arrays_both_layouts() {
    for rev in [54482u64, 54492] {
        // String
        let mut s = replicated(&[4], &[], &IDX, 1, 3);
        s.extend(strings(&["a", "", "ccc"], rev));
        // Nullable(String): null map then the strings (placeholder at the NULL).
        let mut ns = replicated(&[4], &[], &IDX, 1, 3);
        ns.extend_from_slice(&[0, 1, 0]);
        ns.extend(strings(&["x", "", "zz"], rev));
        // Array(UInt32): offsets then elements.
        let mut a = replicated(&[4], &[], &IDX, 2, 3);
        for o in [2u64, 2, 5] {
            a.put_u64_le(o);
        }
        for v in [1u32, 2, 3, 4, 5] {
            a.put_u32_le(v);
        }
        // A plain column next to them.
        let mut p = vec![0u8];
        for v in 0..7u8 {
            p.push(v);
        }
        let b = decode(
            &block_bytes(
                7,
                &[("s", "String", s), ("ns", "Nullable(String)", ns), ("a", "Array(UInt32)", a), ("p", "UInt8", p)],
            ),
            rev,
        );
        assert_eq!(texts(&b, "s"), strs(&["ccc", "a", "a", "", "ccc", "ccc", ""]), "{rev}");
        assert_eq!(texts(&b, "ns"), strs(&["zz", "x", "x", "NULL", "zz", "zz", "NULL"]), "{rev}");
        assert_eq!(texts(&b, "a"), strs(&["[3,4,5]", "[1,2]", "[1,2]", "[]", "[3,4,5]", "[3,4,5]", "[]"]), "{rev}");
        assert_eq!(b.column("p").unwrap().view().values::<u8>().unwrap(), &[0, 1, 2, 3, 4, 5, 6]);
        reencode_round_trip(&b, rev);
    }
}

/// LowCardinality: the key-version prefix comes before num_rows, the dictionary keeps the
/// VarUInt string layout even at 54492.
fn lc_body(kinds: &[u8], idx: &[u64], dict: &[&str], keys: &[u8]) -> Vec<u8> {
    let mut prefix = Vec::new();
    prefix.put_u64_le(1);
    let mut b = replicated(kinds, &prefix, idx, 1, keys.len() as u64);
    b.put_u64_le(0x600); // UInt8 keys | HasAdditionalKeys | NeedUpdateDictionary
    b.put_u64_le(dict.len() as u64);
    for d in dict {
        b.put_string(d);
    }
    b.put_u64_le(keys.len() as u64);
    b.extend_from_slice(keys);
    b
}

#[test]
fn hand_built_low_cardinality() {
    let body = lc_body(&[4], &IDX, &["", "a", "b"], &[1, 2, 0]);
    let b = decode(&block_bytes(7, &[("lc", "LowCardinality(String)", body)]), 54492);
    assert_eq!(texts(&b, "lc"), strs(&["", "a", "a", "b", "", "", "b"]));
    reencode_round_trip(&b, 54492);
    // LowCardinality(Nullable(String)): key 0 is NULL.
    let body = lc_body(&[4], &IDX, &["", "", "q"], &[2, 0, 1]);
    let b = decode(&block_bytes(7, &[("lc", "LowCardinality(Nullable(String))", body)]), 54492);
    assert_eq!(texts(&b, "lc"), strs(&["", "q", "q", "NULL", "", "", "NULL"]));
}

#[test]
fn hand_built_tuples() {
    // Tuple(UInt8, String) replicated as a whole: info = own kinds (04), then one per element (00 00).
    let mut t = replicated(&[4, 0, 0], &[], &IDX, 1, 3);
    t.extend_from_slice(&[7, 8, 9]);
    t.extend(strings(&["a", "b", "c"], 54492));
    // Tuple(UInt8, String) with only its String element replicated: info 00, 00, 04.
    let mut e = vec![1, 0, 0, 4];
    e.extend_from_slice(&[1, 2, 3, 4, 5, 6, 7]);
    e.put_varuint(7);
    e.put_u8(1);
    e.extend(IDX.iter().map(|&i| i as u8));
    e.put_varuint(3);
    e.extend(strings(&["a", "b", "c"], 54492));
    let b = decode(&block_bytes(7, &[("t", "Tuple(UInt8, String)", t), ("e", "Tuple(a UInt8, b String)", e)]), 54492);
    assert_eq!(texts(&b, "t"), strs(&["(9,'c')", "(7,'a')", "(7,'a')", "(8,'b')", "(9,'c')", "(9,'c')", "(8,'b')"]));
    assert_eq!(texts(&b, "e"), strs(&["(1,'c')", "(2,'a')", "(3,'a')", "(4,'b')", "(5,'c')", "(6,'c')", "(7,'b')"]));
    reencode_round_trip(&b, 54492);
}

/// Sparse offsets for `rows` rows whose non-default rows are `at` (ascending).
fn sparse_offsets(at: &[usize], rows: usize) -> Vec<u8> {
    let mut b = Vec::new();
    let mut next = 0;
    for &i in at {
        b.put_varuint((i - next) as u64);
        next = i + 1;
    }
    b.put_varuint((rows - next) as u64 | 1 << 62);
    b
}

#[test]
fn hand_built_combination_sparse_then_replicated() {
    // COMBINATION: 05, count 3, DEFAULT SPARSE REPLICATED. The replicated elements (4 of them)
    // are sparse: non-default at elements 1 and 3.
    let kinds = [5, 3, 0, 1, 3];
    let idx = [3u64, 0, 1, 1, 2, 3];
    let mut u = replicated(&kinds, &[], &idx, 1, 4);
    u.extend(sparse_offsets(&[1, 3], 4));
    u.put_u64_le(11);
    u.put_u64_le(33);
    let mut s = replicated(&kinds, &[], &idx, 1, 4);
    s.extend(sparse_offsets(&[1, 3], 4));
    s.extend(strings(&["p", "qq"], 54492));
    // Sparse Nullable: NULL is the default and the values are the inner type, no null map.
    let mut n = replicated(&kinds, &[], &idx, 1, 4);
    n.extend(sparse_offsets(&[1, 3], 4));
    n.extend(strings(&["n1", "n3"], 54492));
    // Replicated tuple whose elements are sparse: info 04 01 01.
    let mut t = replicated(&[4, 1, 1], &[], &idx, 1, 4);
    t.extend(sparse_offsets(&[3], 4));
    t.put_u64_le(5);
    t.extend(sparse_offsets(&[1], 4));
    t.extend(strings(&["w"], 54492));
    let b = decode(
        &block_bytes(
            6,
            &[("u", "UInt64", u), ("s", "String", s), ("n", "Nullable(String)", n), ("t", "Tuple(UInt64, String)", t)],
        ),
        54492,
    );
    assert_eq!(b.column("u").unwrap().view().values::<u64>().unwrap(), &[33, 0, 11, 11, 0, 33]);
    assert_eq!(texts(&b, "s"), strs(&["qq", "", "p", "p", "", "qq"]));
    assert_eq!(texts(&b, "n"), strs(&["n3", "NULL", "n1", "n1", "NULL", "n3"]));
    assert_eq!(texts(&b, "t"), strs(&["(5,'')", "(0,'')", "(0,'w')", "(0,'w')", "(0,'')", "(5,'')"]));
    reencode_round_trip(&b, 54492);
}

#[test]
fn hand_built_sparse_nullable_uint32() {
    // Kind 01 on Nullable(UInt32): offsets, then the non-NULL values as plain UInt32.
    let mut n = vec![1, 1];
    n.extend(sparse_offsets(&[0, 4], 6));
    n.put_u32_le(7);
    n.put_u32_le(9);
    let b = decode(&block_bytes(6, &[("n", "Nullable(UInt32)", n)]), 54492);
    assert_eq!(texts(&b, "n"), strs(&["7", "NULL", "NULL", "NULL", "9", "NULL"]));
}

#[test]
fn block_reuse_across_kinds() {
    // A replicated LowCardinality block, then a plain one, decoded into the same Block.
    let rep = block_bytes(7, &[("lc", "LowCardinality(String)", lc_body(&[4], &IDX, &["", "a", "b"], &[1, 2, 0]))]);
    let mut plain_body = vec![0u8];
    plain_body.put_u64_le(1);
    plain_body.put_u64_le(0x600);
    plain_body.put_u64_le(2);
    plain_body.put_string("");
    plain_body.put_string("z");
    plain_body.put_u64_le(3);
    plain_body.extend_from_slice(&[1, 0, 1]);
    let plain = block_bytes(3, &[("lc", "LowCardinality(String)", plain_body)]);
    let mut b = Block::new();
    let mut pool = BufferPool::new();
    for (bytes, want) in [
        (&rep, strs(&["", "a", "a", "b", "", "", "b"])),
        (&plain, strs(&["z", "", "z"])),
        (&rep, strs(&["", "a", "a", "b", "", "", "b"])),
    ] {
        b.read(&mut Reader::new(bytes), 54492, &BlockLimits::default(), &mut pool).unwrap();
        assert_eq!(texts(&b, "lc"), want);
    }
}

#[test]
fn malformed_replicated_columns_are_errors() {
    let values = |b: &mut Vec<u8>| {
        for v in [10u64, 20, 30] {
            b.put_u64_le(v);
        }
    };
    // Index beyond num_elements.
    let mut body = replicated(&[4], &[], &[0, 3, 1], 1, 3);
    values(&mut body);
    assert!(matches!(decode_err(&block_bytes(3, &[("u", "UInt64", body)]), 54492), ProtoError::Violation(_)));
    // Index width 3: has_custom, kind, num_rows 3, width 3, 9 index bytes, num_elements 3.
    let mut body = vec![1, 4, 3, 3];
    body.extend_from_slice(&[0; 9]);
    body.put_varuint(3);
    values(&mut body);
    assert!(matches!(decode_err(&block_bytes(3, &[("u", "UInt64", body)]), 54492), ProtoError::Violation(_)));
    // num_rows differs from the block's.
    let mut body = replicated(&[4], &[], &[0, 1], 1, 3);
    values(&mut body);
    assert!(matches!(decode_err(&block_bytes(3, &[("u", "UInt64", body)]), 54492), ProtoError::Violation(_)));
    // Unknown kind inside a COMBINATION, and an unknown kind stack byte.
    let mut body = replicated(&[5, 2, 0, 7], &[], &[0], 1, 1);
    body.put_u64_le(1);
    assert!(matches!(decode_err(&block_bytes(1, &[("u", "UInt64", body)]), 54492), ProtoError::Violation(_)));
    let mut body = replicated(&[6], &[], &[0], 1, 1);
    body.put_u64_le(1);
    assert!(matches!(decode_err(&block_bytes(1, &[("u", "UInt64", body)]), 54492), ProtoError::Violation(_)));
    // Every strict prefix of a valid block is incomplete, never a panic or a wrong value.
    let mut body = replicated(&[5, 3, 0, 1, 3], &[], &[3, 0, 1, 1, 2, 3], 1, 4);
    body.extend(sparse_offsets(&[1, 3], 4));
    body.extend(strings(&["p", "qq"], 54492));
    let full = block_bytes(6, &[("s", "String", body)]);
    decode(&full, 54492);
    for cut in 0..full.len() {
        assert!(matches!(decode_err(&full[..cut], 54492), ProtoError::Incomplete { .. }), "cut at {cut}");
    }
}
