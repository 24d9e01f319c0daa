//! Variant, Dynamic and JSON against the real server at every revision the server
//! changes their wire form around (54460 … 54492): values are compared with the
//! server's own `toString` / `variantType` / `dynamicType` / `toJSONString` computed
//! in the same query, over several blocks, and blocks read from a SELECT are
//! inserted unchanged into an identical table through a second client.

use crate::common;
use common::*;

use std::fmt::Write as _;

use chnative::{Block, ColumnView, DataType as D, Query};
use chnative_proto::column::{
    DYNAMIC_FLATTENED, DYNAMIC_V1, DYNAMIC_V2, JSON_FLATTENED, JSON_STRING, JSON_V1, JSON_V2,
};
use chnative_proto::view::JsonValue;

/// 54473 is where Dynamic and JSON switch from V1 to V2.
const DYN_REVISIONS: [u64; 5] = [54460, 54465, 54473, 54483, 54492];

const FLATTENED: &str = "output_format_native_use_flattened_dynamic_and_json_serialization";
const JSON_AS_STRING: &str = "output_format_native_write_json_as_string";

fn expected_dynamic_version(rev: u64) -> u64 {
    if rev >= 54473 {
        DYNAMIC_V2
    } else {
        DYNAMIC_V1
    }
}

fn expected_json_version(rev: u64) -> u64 {
    if rev >= 54473 {
        JSON_V2
    } else {
        JSON_V1
    }
}

// ===========================================================================
// A small `toString` renderer for the value types used here.
// ===========================================================================

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

fn quote(out: &mut String, s: &str) {
    out.push('\'');
    for c in s.chars() {
        match c {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out.push('\'');
}

/// Row `i` of `v` as the server's `toString` prints it (`quoted`: inside a composite).
fn render(v: &ColumnView<'_>, i: usize, quoted: bool, out: &mut String) {
    let text = |out: &mut String, s: &str| if quoted { quote(out, s) } else { out.push_str(s) };
    match v.data_type() {
        D::UInt8 => write!(out, "{}", v.values::<u8>().unwrap()[i]).unwrap(),
        D::UInt16 => write!(out, "{}", v.values::<u16>().unwrap()[i]).unwrap(),
        D::Int8 => write!(out, "{}", v.values::<i8>().unwrap()[i]).unwrap(),
        D::Int16 => write!(out, "{}", v.values::<i16>().unwrap()[i]).unwrap(),
        D::UInt32 => write!(out, "{}", v.values::<u32>().unwrap()[i]).unwrap(),
        D::UInt64 => write!(out, "{}", v.values::<u64>().unwrap()[i]).unwrap(),
        D::Int32 => write!(out, "{}", v.values::<i32>().unwrap()[i]).unwrap(),
        D::Int64 => write!(out, "{}", v.values::<i64>().unwrap()[i]).unwrap(),
        // Only values with short exact decimal forms are used (n / 4).
        D::Float64 => write!(out, "{}", v.values::<f64>().unwrap()[i]).unwrap(),
        D::Bool => out.push_str(if v.values::<u8>().unwrap()[i] != 0 { "true" } else { "false" }),
        D::String => text(out, v.as_strings().unwrap().str(i).unwrap()),
        D::Date => {
            let (y, m, d) = civil(i64::from(v.values::<u16>().unwrap()[i]));
            text(out, &format!("{y:04}-{m:02}-{d:02}"));
        }
        D::Nullable(_) => {
            let n = v.as_nullable().unwrap();
            if n.is_null(i) {
                out.push_str("NULL");
            } else {
                render(n.inner(), i, quoted, out);
            }
        }
        D::LowCardinality(_) => {
            let lc = v.as_low_cardinality().unwrap();
            if lc.is_null(i) {
                out.push_str("NULL");
            } else {
                render(lc.dictionary(), lc.key(i), quoted, out);
            }
        }
        D::Array(_) => {
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
        D::Map(..) => {
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
        D::Tuple(elems) => {
            out.push('(');
            for k in 0..elems.len() {
                if k > 0 {
                    out.push(',');
                }
                render(&v.tuple_element(k).unwrap(), i, true, out);
            }
            out.push(')');
        }
        D::Variant(_) => match v.as_variant().unwrap().value(i).unwrap() {
            None => out.push_str("NULL"),
            Some((c, at)) => render(&c, at, quoted, out),
        },
        D::Dynamic { .. } => match v.as_dynamic().unwrap().value(i).unwrap() {
            None => out.push_str("NULL"),
            Some((c, at)) => render(&c, at, quoted, out),
        },
        other => panic!("no renderer for {other}"),
    }
}

fn to_string(v: &ColumnView<'_>, i: usize) -> String {
    let mut s = String::new();
    render(v, i, false, &mut s);
    s
}

fn strings(v: &ColumnView<'_>) -> Vec<String> {
    match v.as_low_cardinality() {
        Ok(lc) => {
            let d = lc.strings().unwrap();
            (0..lc.len()).map(|i| d.str(lc.key(i)).unwrap().to_string()).collect()
        }
        Err(_) => {
            let s = v.as_strings().unwrap();
            (0..s.len()).map(|i| s.str(i).unwrap().to_string()).collect()
        }
    }
}

/// Runs `q` and returns every block with rows.
async fn blocks(c: &mut chnative::Client, q: Query) -> Vec<Block> {
    let mut s = c.fetch_blocks(q).await.unwrap();
    let mut out = Vec::new();
    while let Some(b) = s.next().await.unwrap() {
        if b.rows() > 0 {
            // Keep a copy: re-encode and decode into an owned block.
            out.push(clone_block(b));
        }
    }
    out
}

/// An owned copy of a block (through its own encoder and decoder).
fn clone_block(b: &Block) -> Block {
    let mut bytes = Vec::new();
    b.write(&mut bytes, 54492).unwrap();
    let mut copy = Block::new();
    let mut pool = chnative_proto::BufferPool::new();
    copy.read(
        &mut chnative_proto::wire::Reader::new(&bytes),
        54492,
        &chnative_proto::BlockLimits::default(),
        &mut pool,
    )
    .unwrap();
    copy
}

// ===========================================================================
// Variant
// ===========================================================================

const VARIANT: &str = "Variant(UInt64, String, Array(UInt64), Date)";

fn variant_sql(rows: u64) -> String {
    let v = |e: &str| format!("{e}::{VARIANT}");
    format!(
        "SELECT v, toString(v) AS s, variantType(v) AS t, [v, v] AS av, toString(av) AS avs, number AS n \
         FROM (SELECT number, multiIf(number % 5 = 0, {}, number % 5 = 1, {}, number % 5 = 2, {}, \
         number % 5 = 3, {}, NULL) AS v FROM numbers({rows})) ORDER BY n",
        v("number"),
        // A plain number string would be cast to UInt64 (cast_string_to_variant_use_inference).
        v("concat('s', toString(number))"),
        v("[number, number + 1]"),
        v("toDate(number)"),
    )
}

#[tokio::test]
async fn variant_every_alternative_and_null() {
    if !common::requires(25, 3, "Variant, Dynamic and JSON without allow_experimental_* settings") {
        return;
    }
    for rev in DYN_REVISIONS {
        let mut c = client_at(rev, "lz4").await;
        let q = Query::new(variant_sql(1000)).setting("max_block_size", "300");
        let bs = blocks(&mut c, q).await;
        assert!(bs.len() >= 3, "rev {rev}: {} blocks", bs.len());
        let mut seen = 0u64;
        let mut kinds = [0usize; 5];
        for b in &bs {
            let v = b.column("v").unwrap().view();
            // The server lists the alternatives sorted by name.
            assert_eq!(v.data_type(), &D::parse("Variant(Array(UInt64), Date, String, UInt64)").unwrap());
            let var = v.as_variant().unwrap();
            let s = strings(&b.column("s").unwrap().view());
            let t = b.column("t").unwrap().view();
            let t = t.values::<i8>().unwrap();
            let avs = strings(&b.column("avs").unwrap().view());
            let av = b.column("av").unwrap().view();
            let n = b.column("n").unwrap().view();
            let n = n.values::<u64>().unwrap();
            for i in 0..b.rows() {
                assert_eq!(n[i], seen, "rev {rev}");
                seen += 1;
                assert_eq!(var.discriminator(i).map_or(-1, |d| d as i8), t[i], "rev {rev} row {}", n[i]);
                kinds[var.discriminator(i).unwrap_or(4)] += 1;
                if var.is_null(i) {
                    // toString of a NULL: empty on 26.x, ᴺᵁᴸᴸ on 25.x.
                    assert!(s[i].is_empty() || s[i] == "ᴺᵁᴸᴸ", "rev {rev} row {}: {}", n[i], s[i]);
                } else {
                    assert_eq!(to_string(&v, i), s[i], "rev {rev} row {}", n[i]);
                }
                assert_eq!(to_string(&av, i), avs[i], "rev {rev} row {}", n[i]);
            }
        }
        assert_eq!(seen, 1000);
        assert!(kinds.iter().all(|&k| k == 200), "rev {rev}: {kinds:?}");
    }
}

#[tokio::test]
async fn variant_with_low_cardinality_and_nested_variant_rows() {
    if !common::requires(25, 3, "Variant, Dynamic and JSON without allow_experimental_* settings") {
        return;
    }
    // LowCardinality alternatives carry their own prefix inside the Variant's.
    let mut c = client_at(54492, "none").await;
    let q = "SELECT v, toString(v) AS s FROM (SELECT arrayJoin([NULL, 'a'::LowCardinality(String), 42::UInt8, 'b'::LowCardinality(String)]::Array(Variant(LowCardinality(String), UInt8))) AS v)";
    // The array's elements have a common type only as a Variant before 26.x.
    let bs = blocks(&mut c, Query::new(q).setting("use_variant_as_common_type", "1")).await;
    let b = &bs[0];
    let v = b.column("v").unwrap().view();
    // toString of a NULL: empty on 26.x, ᴺᵁᴸᴸ on 25.x.
    let s: Vec<String> = strings(&b.column("s").unwrap().view())
        .into_iter()
        .map(|s| if s == "ᴺᵁᴸᴸ" { String::new() } else { s })
        .collect();
    let got: Vec<String> = (0..b.rows())
        .map(|i| if v.as_variant().unwrap().is_null(i) { String::new() } else { to_string(&v, i) })
        .collect();
    assert_eq!(got, s);
    assert_eq!(got, ["", "a", "42", "b"]);
}

// ===========================================================================
// Dynamic
// ===========================================================================

/// Eight kinds of values (seven types and NULL) in a Dynamic(max_types=3): most
/// blocks need the shared variant.
fn dynamic_sql(rows: u64) -> String {
    format!(
        "SELECT d, toString(d) AS s, dynamicType(d) AS t, number AS n FROM (SELECT number, \
         multiIf(number % 8 = 0, number::Dynamic, number % 8 = 1, toString(number)::Dynamic, \
         number % 8 = 2, [number]::Dynamic, number % 8 = 3, toDate(number)::Dynamic, \
         number % 8 = 4, (number, 'x')::Dynamic, number % 8 = 5, (toFloat64(number) / 4)::Dynamic, \
         number % 8 = 6, map(toString(number), toInt32(number))::Dynamic, NULL)::Dynamic(max_types=3) AS d \
         FROM numbers({rows})) ORDER BY n"
    )
}

fn check_dynamic_blocks(bs: &[Block], rows: u64, version: u64, what: &str) -> usize {
    let mut seen = 0u64;
    let mut shared_rows = 0usize;
    for b in bs {
        let d = b.column("d").unwrap().view();
        assert_eq!(d.data_type(), &D::Dynamic { max_types: Some(3) });
        let dy = d.as_dynamic().unwrap();
        assert_eq!(dy.version(), version, "{what}");
        if version != DYNAMIC_FLATTENED {
            assert!(dy.declared_types().len() <= 3, "{what}: {:?}", dy.declared_types());
        }
        let s = strings(&b.column("s").unwrap().view());
        let t = strings(&b.column("t").unwrap().view());
        let n = b.column("n").unwrap().view();
        let n = n.values::<u64>().unwrap();
        for i in 0..b.rows() {
            assert_eq!(n[i], seen, "{what}");
            seen += 1;
            match dy.value(i).unwrap() {
                None => {
                    assert_eq!(t[i], "None", "{what} row {}", n[i]);
                    assert!(dy.is_null(i));
                }
                Some((col, at)) => {
                    assert_eq!(dy.row_type_name(i).unwrap(), t[i], "{what} row {}", n[i]);
                    assert_eq!(dy.row_type(i).unwrap(), &D::parse(&t[i]).unwrap(), "{what} row {}", n[i]);
                    assert_eq!(to_string(&col, at), s[i], "{what} row {}", n[i]);
                    shared_rows += usize::from(dy.shared_bytes(i).is_some());
                }
            }
        }
    }
    assert_eq!(seen, rows, "{what}");
    shared_rows
}

#[tokio::test]
async fn dynamic_more_types_than_max_types() {
    if !common::requires(25, 3, "Variant, Dynamic and JSON without allow_experimental_* settings") {
        return;
    }
    for rev in DYN_REVISIONS {
        let mut c = client_at(rev, "zstd").await;
        let q = Query::new(dynamic_sql(800)).setting("max_block_size", "250");
        let bs = blocks(&mut c, q).await;
        assert!(bs.len() >= 3, "rev {rev}");
        let shared = check_dynamic_blocks(&bs, 800, expected_dynamic_version(rev), &format!("rev {rev}"));
        // 7 types, at most 3 declared per block: about half of the rows are shared.
        assert!(shared >= 300, "rev {rev}: only {shared} rows came through the shared variant");
    }
}

#[tokio::test]
async fn dynamic_flattened_on_request() {
    if !common::requires(25, 6, "output_format_native_use_flattened_dynamic_and_json_serialization") {
        return;
    }
    for rev in [54465, 54492] {
        let mut c = client_at(rev, "lz4").await;
        let q = Query::new(dynamic_sql(500)).setting("max_block_size", "200").setting(FLATTENED, "1");
        let bs = blocks(&mut c, q).await;
        assert_eq!(check_dynamic_blocks(&bs, 500, DYNAMIC_FLATTENED, &format!("flattened rev {rev}")), 0);
    }
}

#[tokio::test]
async fn dynamic_shared_values_of_every_kind() {
    if !common::requires(25, 3, "Variant, Dynamic and JSON without allow_experimental_* settings") {
        return;
    }
    // Types only reachable through the shared variant (max_types=1), including
    // nested Nullable, LowCardinality, Variant, Map and named Tuple values.
    let mut c = client_at(54492, "none").await;
    let q = "SELECT d, toString(d) AS s, dynamicType(d) AS t FROM (SELECT arrayJoin([\
             1::Int8::Dynamic, [NULL, 'z']::Array(Nullable(String))::Dynamic, \
             'lc'::LowCardinality(String)::Dynamic, \
             [NULL, 'q']::Array(LowCardinality(Nullable(String)))::Dynamic, \
             7::Variant(String, UInt16)::Dynamic, \
             map('a', [1, 2], 'b', [])::Map(String, Array(UInt8))::Dynamic, \
             (3, 'n')::Tuple(a UInt32, b String)::Dynamic, \
             true::Dynamic, \
             NULL]) ::Dynamic(max_types=1) AS d)";
    // The array's elements have a common type only as a Variant before 26.x.
    let bs = blocks(&mut c, Query::new(q).setting("use_variant_as_common_type", "1")).await;
    let b = &bs[0];
    let dy = b.column("d").unwrap().view();
    let dy = dy.as_dynamic().unwrap();
    let s = strings(&b.column("s").unwrap().view());
    let t = strings(&b.column("t").unwrap().view());
    for i in 0..b.rows() {
        match dy.value(i).unwrap() {
            None => assert_eq!(t[i], "None"),
            Some((col, at)) => {
                assert_eq!(dy.row_type(i).unwrap(), &D::parse(&t[i]).unwrap(), "row {i}");
                assert_eq!(to_string(&col, at), s[i], "row {i}");
            }
        }
    }
    assert!(dy.type_count() >= 8);
}

#[tokio::test]
async fn dynamic_columns_after_it_stay_aligned() {
    if !common::requires(25, 3, "Variant, Dynamic and JSON without allow_experimental_* settings") {
        return;
    }
    // A JSON value inside Dynamic's shared variant has no RowBinary decoder here:
    // that row reports a Type error, every other row and every later column decodes.
    let mut c = client_at(54492, "none").await;
    let q = "SELECT d, toString(d) AS s, 'after' AS tail FROM (SELECT arrayJoin([\
             1::UInt8::Dynamic, 2::UInt8::Dynamic, '{\"k\":1}'::JSON::Dynamic, 'x'::Dynamic]) ::Dynamic(max_types=1) AS d)";
    // The array's elements have a common type only as a Variant before 26.x.
    let bs = blocks(&mut c, Query::new(q).setting("use_variant_as_common_type", "1")).await;
    let b = &bs[0];
    let dy = b.column("d").unwrap().view();
    let dy = dy.as_dynamic().unwrap();
    let s = strings(&b.column("s").unwrap().view());
    let mut errors = 0;
    for (i, want) in s.iter().enumerate() {
        match dy.value(i) {
            Ok(Some((col, at))) => assert_eq!(&to_string(&col, at), want),
            Ok(None) => panic!("row {i} is not NULL"),
            Err(e) => {
                errors += 1;
                assert!(matches!(e, chnative_proto::ProtoError::Type { .. }), "{e}");
                assert!(matches!(dy.row_type(i), Some(D::Json(_))));
                assert!(dy.shared_bytes(i).is_some());
            }
        }
    }
    // max_types=1 keeps the most frequent type (UInt8); JSON goes to the shared variant.
    assert_eq!(dy.declared_types(), ["UInt8"]);
    assert_eq!(errors, 1);
    assert_eq!(strings(&b.column("tail").unwrap().view()), ["after"; 4]);
}

// ===========================================================================
// JSON
// ===========================================================================

const JSON_TYPE: &str = "JSON(max_dynamic_paths=3, a UInt32, t.u Nullable(String))";

fn json_sql(rows: u64) -> String {
    // Nested objects, arrays (of numbers and of objects), typed paths, more paths
    // than max_dynamic_paths (so some go to the shared data), and empty objects.
    format!(
        "SELECT j, toJSONString(j) AS s, toString(j.a) AS a, toString(j.b.c) AS bc, dynamicType(j.b.c) AS bct, \
         toString(j.x) AS x, dynamicType(j.x) AS xt, number AS n FROM (SELECT number, \
         multiIf(number % 4 = 0, concat('{{\"a\":', toString(number), ',\"b\":{{\"c\":\"s', toString(number), '\"}},\"t\":{{\"u\":\"v\"}}}}'), \
         number % 4 = 1, concat('{{\"b\":{{\"c\":', toString(number), '}},\"d\":[1,2,3],\"e\":{{\"f\":true,\"g\":[{{\"h\":1}}]}},\"x\":', toString(number), '}}'), \
         number % 4 = 2, '{{}}', \
         concat('{{\"a\":7,\"x\":\"str', toString(number), '\",\"y\":{{\"z\":[\"p\",\"q\"]}},\"w\":', toString(number / 4), '}}')) \
         ::{JSON_TYPE} AS j FROM numbers({rows})) ORDER BY n"
    )
}

#[tokio::test]
async fn json_as_text_every_revision() {
    if !common::requires(25, 3, "Variant, Dynamic and JSON without allow_experimental_* settings") {
        return;
    }
    for rev in DYN_REVISIONS {
        let mut c = client_at(rev, "lz4").await;
        let q = Query::new(json_sql(400)).setting("max_block_size", "150").setting(JSON_AS_STRING, "1");
        let bs = blocks(&mut c, q).await;
        assert!(bs.len() >= 2);
        let mut seen = 0;
        for b in &bs {
            let j = b.column("j").unwrap().view();
            let j = j.as_json().unwrap();
            assert_eq!(j.version(), JSON_STRING);
            let s = strings(&b.column("s").unwrap().view());
            for (i, s) in s.iter().enumerate() {
                assert_eq!(j.text(i).unwrap(), s, "rev {rev} row {seen}");
                seen += 1;
            }
        }
        assert_eq!(seen, 400);
    }
}

fn check_json_native(bs: &[Block], version: u64, what: &str) {
    let mut seen = 0;
    let mut shared_seen = 0;
    let mut shared_rows = 0;
    for b in bs {
        let jv = b.column("j").unwrap().view();
        let j = jv.as_json().unwrap();
        assert_eq!(j.version(), version, "{what}");
        // Without the text setting the error names it.
        let err = j.text(0).unwrap_err().to_string();
        assert!(err.contains(JSON_AS_STRING), "{err}");
        assert_eq!(j.typed_paths(), ["a", "t.u"]);
        let a = strings(&b.column("a").unwrap().view());
        let bc = strings(&b.column("bc").unwrap().view());
        let bct = strings(&b.column("bct").unwrap().view());
        let x = strings(&b.column("x").unwrap().view());
        let xt = strings(&b.column("xt").unwrap().view());
        for i in 0..b.rows() {
            let typed = j.path_value(i, "a").unwrap().unwrap();
            let (col, at) = typed.view();
            assert_eq!(to_string(&col, at), a[i], "{what} row {seen}");
            for (path, want, want_t) in [("b.c", &bc[i], &bct[i]), ("x", &x[i], &xt[i])] {
                match j.path_value(i, path).unwrap() {
                    None => assert_eq!(want_t, "None", "{what} row {seen} {path}"),
                    Some(v) => {
                        shared_seen += usize::from(matches!(v, JsonValue::Owned(_)));
                        assert_eq!(v.data_type(), &D::parse(want_t).unwrap(), "{what} row {seen} {path}");
                        let (col, at) = v.view();
                        assert_eq!(&to_string(&col, at), want, "{what} row {seen} {path}");
                    }
                }
            }
            let paths = j.paths(i).unwrap();
            assert!(paths.contains(&"a") && paths.contains(&"t.u"));
            shared_rows += usize::from(!j.shared(i).unwrap().is_empty());
            seen += 1;
        }
        if version != JSON_FLATTENED {
            assert!(j.dynamic_paths().len() <= 3, "{what}: {:?}", j.dynamic_paths());
        }
    }
    if version == JSON_FLATTENED {
        assert_eq!(shared_rows + shared_seen, 0, "{what}");
    } else {
        // Seven paths besides the typed ones and max_dynamic_paths=3: shared data in use.
        assert!(shared_rows > 0, "{what}");
    }
}

#[tokio::test]
async fn json_native_paths_every_revision() {
    if !common::requires(25, 3, "Variant, Dynamic and JSON without allow_experimental_* settings") {
        return;
    }
    for rev in DYN_REVISIONS {
        let mut c = client_at(rev, "none").await;
        let q = Query::new(json_sql(300)).setting("max_block_size", "120");
        let bs = blocks(&mut c, q).await;
        check_json_native(&bs, expected_json_version(rev), &format!("rev {rev}"));
        let q = Query::new(json_sql(300)).setting("max_block_size", "120").setting(FLATTENED, "1");
        let bs = blocks(&mut c, q).await;
        check_json_native(&bs, JSON_FLATTENED, &format!("flattened rev {rev}"));
    }
}

// ===========================================================================
// Round trip: SELECT blocks, INSERT them unchanged, compare in SQL.
// ===========================================================================

async fn round_trip(rev_read: u64, rev_write: u64, settings: &[(&str, &str)]) {
    let src = unique_table("dyn_src");
    let dst = unique_table("dyn_dst");
    let cols = format!("id UInt64, v {VARIANT}, av Array({VARIANT}), d Dynamic(max_types=3), j {JSON_TYPE}");
    for t in [&src, &dst] {
        http(&format!("CREATE TABLE {t} ({cols}) ENGINE = MergeTree ORDER BY id SETTINGS index_granularity = 128"));
    }
    http(&format!(
        "INSERT INTO {src} SELECT n, v, av, d, j FROM (SELECT n, v, av FROM ({})) AS x \
         JOIN (SELECT n, d FROM ({})) AS y USING n JOIN (SELECT n, j FROM ({})) AS z USING n",
        variant_sql(700),
        dynamic_sql(700),
        json_sql(700)
    ));
    let mut reader = client_at(rev_read, "lz4").await;
    let writer = client_at(rev_write, "zstd").await;
    let mut q = Query::new(format!("SELECT * FROM {src} ORDER BY id")).setting("max_block_size", "256");
    for (k, v) in settings {
        q = q.setting(*k, *v);
    }
    let bs = blocks(&mut reader, q).await;
    assert!(bs.len() >= 2);
    for b in &bs {
        writer.insert(&dst).block(b).send().await.unwrap();
    }
    let cmp = |t: &str| {
        http(&format!(
            "SELECT id, toString(v), variantType(v), toString(av), toString(d), dynamicType(d), toJSONString(j) \
             FROM {t} ORDER BY id FORMAT TSV"
        ))
    };
    let (a, b) = (cmp(&src), cmp(&dst));
    assert_eq!(a.lines().count(), 700);
    assert!(a == b, "round trip {rev_read} -> {rev_write} {settings:?} differs");
    for t in [&src, &dst] {
        http(&format!("DROP TABLE {t}"));
    }
}

#[tokio::test]
async fn round_trip_native_forms() {
    if !common::requires(25, 3, "Variant, Dynamic and JSON without allow_experimental_* settings") {
        return;
    }
    for rev in DYN_REVISIONS {
        round_trip(rev, rev, &[]).await;
    }
    // Blocks read at one revision inserted at another (V1 → V2 server, and back).
    round_trip(54460, 54492, &[]).await;
    round_trip(54492, 54465, &[]).await;
}

#[tokio::test]
async fn round_trip_flattened_and_text_forms() {
    if !common::requires(25, 3, "Variant, Dynamic and JSON without allow_experimental_* settings") {
        return;
    }
    round_trip(54492, 54492, &[(FLATTENED, "1")]).await;
    round_trip(54465, 54492, &[(FLATTENED, "1")]).await;
    round_trip(54492, 54492, &[(JSON_AS_STRING, "1")]).await;
    round_trip(54460, 54460, &[(JSON_AS_STRING, "1")]).await;
}
