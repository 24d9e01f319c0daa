//! Dynamic rows (`Value`, `query_rows`): every value renders exactly like the
//! server's own `toString`, and the dynamic tier agrees with the column tier.

use crate::common;

use chnative::{Client, Value};
use common::{client, client_at};

/// Reads `SELECT x, toString(x) AS s FROM (<inner>)` as dynamic rows and compares
/// `Value`'s Display with the server's text, row by row. Returns the row count.
async fn check(c: &mut Client, inner: &str) -> usize {
    let sql = format!("SELECT x, toString(x) AS s FROM ({inner})");
    let rows = c.fetch_all_values(sql.as_str()).await.unwrap_or_else(|e| panic!("{inner}: {e}"));
    for r in &rows {
        let want = r["s"].as_str().unwrap_or_else(|| panic!("{inner}: toString is not UTF-8"));
        assert_eq!(r[0].to_string(), want, "{inner}: {:?}", r[0]);
    }
    assert!(!rows.is_empty(), "{inner}: no rows");
    rows.len()
}

const CASES: &[&str] = &[
    "SELECT toInt8(number - 128) AS x FROM numbers(256)",
    "SELECT toInt16(number * 257 - 32768) AS x FROM numbers(256)",
    "SELECT toInt32(number * 16777259 - 2147483648) AS x FROM numbers(256)",
    "SELECT toInt64(number * 72057594037927941 - 9223372036854775807) AS x FROM numbers(256)",
    "SELECT toUInt64(number * 72057594037927941) AS x FROM numbers(256)",
    "SELECT toInt128(number) * toInt128('-664613997892457936451903530140172288') AS x FROM numbers(256)",
    "SELECT toUInt128(number) * toUInt128('1329227995784915872903807060280344576') AS x FROM numbers(256)",
    "SELECT toInt256(number) * toInt256('-226156424291633194186662080095093570025917938800079226639565593765455331328') AS x FROM numbers(256)",
    "SELECT toUInt256(number) * toUInt256('452312848583266388373324160190187140051835877600158453279131187530910662656') AS x FROM numbers(256)",
    "SELECT arrayJoin([0., -0., 1., -1.5, 0.1, 1e-7, 1.5e-7, 1e-6, 123456789012345680000., 1e21, 1e22, 1.7976931348623157e308, reinterpretAsFloat64(toUInt64(1)), inf, -inf, nan]) AS x",
    "SELECT toFloat64(number) / 7 * pow(10, number % 60 - 30) AS x FROM numbers(1000)",
    "SELECT toFloat32(number) / 7 * pow(10, number % 40 - 20) AS x FROM numbers(1000)",
    "SELECT toBFloat16(number / 3) AS x FROM numbers(100)",
    "SELECT toDecimal64(number, 4) / 7 AS x FROM numbers(100)",
    "SELECT toDecimal256(number, 30) / -3 AS x FROM numbers(100)",
    "SELECT arrayJoin(['', 'a', 'it''s', 'back\\\\slash', 'tab\\tnl\\ncr\\r', 'zero\\0', 'ünï']) AS x",
    "SELECT [arrayJoin(['', 'a', 'it''s', 'back\\\\slash', 'tab\\tnl\\ncr\\r', 'zero\\0', 'bs\\b ff\\f', 'ünï'])] AS x",
    "SELECT toFixedString(toString(number), 3) AS x FROM numbers(20)",
    "SELECT toDate(number * 97) AS x FROM numbers(676)",
    "SELECT toDate32(number * 4507 - 25567) AS x FROM numbers(1000)",
    "SELECT toDateTime(number * 3607 * 1013, 'Asia/Tokyo') AS x FROM numbers(1000)",
    "SELECT toDateTime(number * 3607 * 1013, 'America/New_York') AS x FROM numbers(1000)",
    "SELECT toDateTime(number * 3607 * 1013) AS x FROM numbers(1000)",
    "SELECT toDateTime64(number * 3607 * 1013 + number / 1000, 3, 'Europe/Berlin') AS x FROM numbers(1000)",
    "SELECT toDateTime64(-1000000000 + number * 7777777, 6, 'UTC') AS x FROM numbers(1000)",
    "SELECT [toDate(number), toDate(number + 1)] AS x FROM numbers(3)",
    "SELECT generateUUIDv4() AS x FROM numbers(50)",
    "SELECT toIPv4(number * 16777259) AS x FROM numbers(100)",
    "SELECT arrayJoin([toIPv6('::'), toIPv6('::ffff:1.2.3.4'), toIPv6('2001:db8::1'), toIPv6('fe80::1:2:3:4')]) AS x",
    "SELECT CAST(number % 3, 'Enum8(\\'a\\' = 0, \\'b c\\' = 1, \\'it\\\\\\'s\\' = 2)') AS x FROM numbers(3)",
    "SELECT [CAST(number % 2, 'Enum16(\\'x\\' = 0, \\'y\\' = 1)')] AS x FROM numbers(2)",
    "SELECT number % 2 = 0 AS x FROM numbers(2)",
    "SELECT [NULL, number, number + 1] AS x FROM numbers(3)",
    "SELECT (number, toString(number), [number]) AS x FROM numbers(3)",
    "SELECT CAST((number, 'a'), 'Tuple(n UInt64, s String)') AS x FROM numbers(3)",
    "SELECT map('k', number, 'j''s', number * 2) AS x FROM numbers(3)",
    "SELECT map(toString(number), [toDate(number)]) AS x FROM numbers(3)",
    "SELECT toLowCardinality(toString(number % 3)) AS x FROM numbers(10)",
    "SELECT [toLowCardinality(toString(number % 3))] AS x FROM numbers(10)",
    "SELECT [[toString(number)], []] AS x FROM numbers(3)",
    "SELECT toNullable(number) AS x FROM numbers(3)",
    "SELECT [toUUID('01234567-89ab-cdef-0011-223344556677')] AS x",
    "SELECT [toIPv4('1.2.3.4')] AS x",
    "SELECT [toDateTime('2024-01-02 03:04:05', 'UTC')] AS x",
    "SELECT [1.5, 1e25] AS x",
    "SELECT [toDecimal32(1.5, 2)] AS x",
    "SELECT (1, NULL) AS x",
    "SELECT CAST(number, 'Variant(UInt64, String)') AS x FROM numbers(3)",
    "SELECT [CAST(toString(number), 'Variant(UInt64, String)')] AS x FROM numbers(3)",
];

/// Rendering a DateTime in a zone other than UTC needs a time zone database
/// (the default `tz` feature, or `chrono` or `jiff`; tests/zones.rs checks the
/// rendering without one).
fn zone_known(case: &str) -> bool {
    chnative::convert::zone::HAS_DATABASE || !case.contains("DateTime") || case.contains("'UTC'")
}

#[tokio::test]
async fn display_equals_to_string() {
    let mut c = client().await;
    let mut n = 0;
    for case in CASES.iter().filter(|c| zone_known(c)) {
        // Types older servers do not have.
        if (case.contains("BFloat16") && !common::requires(25, 1, "BFloat16"))
            || (case.contains("Variant") && !common::requires(25, 3, "Variant without allow_experimental_variant_type"))
        {
            continue;
        }
        n += check(&mut c, case).await;
    }
    assert!(n > 5000);
}

#[tokio::test]
async fn display_equals_to_string_on_random_values() {
    let mut c = client().await;
    let structure = "a Int32, b UInt64, c Float32, d Float64, e Decimal(18, 6), f Date, g Date32, \
        h DateTime('Asia/Kolkata'), i DateTime64(6, 'America/Sao_Paulo'), j UUID, k IPv4, l IPv6, \
        m Array(Nullable(Int16)), n Tuple(Int8, Float64), o Map(UInt8, Decimal(9, 2)), p Int128, q UInt256, r Bool";
    for col in "abcdefghijklmnopqr".chars().filter(|c| zone_known("DateTime") || !"hi".contains(*c)) {
        let inner =
            format!("SELECT {col} AS x FROM generateRandom('{}', 7, 10, 3) LIMIT 3000", structure.replace('\'', "\\'"));
        check(&mut c, &inner).await;
    }
}

#[tokio::test]
async fn dynamic_json_and_null_values() {
    if !common::requires(25, 3, "Variant, Dynamic and JSON without allow_experimental_* settings") {
        return;
    }
    let c = client().await;
    let rows = c
        .fetch_all_values(
            // multiIf's branches have a common type only as a Variant before 26.x.
            chnative::Query::new(
                "SELECT CAST(multiIf(number = 0, 1::Int64, number = 1, 'two', number = 2, [3.5], NULL), 'Dynamic') AS d, \
                 toString(d) AS s, CAST('{\"a\": {\"b\": 1}}', 'JSON') AS j, CAST(NULL, 'Nullable(String)') AS n FROM numbers(4)",
            )
            .setting("use_variant_as_common_type", "1"),
        )
        .await
        .unwrap();
    assert_eq!(rows.len(), 4);
    assert_eq!(rows[0]["d"], Value::Int64(1));
    assert_eq!(rows[1]["d"].as_str(), Some("two"));
    assert_eq!(rows[2]["d"], Value::Array(vec![Value::Float64(3.5)]));
    assert!(rows[3]["d"].is_null());
    for r in &rows[..3] {
        assert_eq!(r["d"].to_string(), r["s"].as_str().unwrap());
    }
    assert_eq!(rows[0]["j"].as_str(), Some("{\"a\":{\"b\":1}}"));
    assert!(rows[0]["n"].is_null());
    assert_eq!(rows[0].names(), ["d", "s", "j", "n"]);
    assert!(rows[0].get("missing").is_none());
}

#[tokio::test]
async fn dynamic_rows_agree_with_the_column_tier_at_every_config() {
    for (rev, comp) in [(54460, "lz4"), (54460, "none"), (54492, "lz4"), (54492, "none")] {
        let c = client_at(rev, comp).await;
        let sql = "SELECT * FROM generateRandom('a Int64, b String, c Nullable(Float64), d Array(UInt16), \
                   e LowCardinality(String), f Decimal(18, 5)', 42, 10, 3) LIMIT 20000";
        let rows = c.fetch_all_values(sql).await.unwrap();
        let mut k = 0usize;
        let mut s = c.fetch_blocks(sql).await.unwrap();
        while let Some(b) = s.next().await.unwrap() {
            let a: &[i64] = b.columns()[0].view().values().unwrap();
            let bv = b.columns()[1].view();
            let bs = bv.as_strings().unwrap();
            let cv = b.columns()[2].view();
            let cn = cv.as_nullable().unwrap();
            let cf: &[f64] = cn.inner().values().unwrap();
            let dv = b.columns()[3].view();
            let d = dv.as_array().unwrap();
            let du: &[u16] = d.inner().values().unwrap();
            let ev = b.columns()[4].view();
            let e = ev.as_low_cardinality().unwrap();
            let es = e.strings().unwrap();
            let fd = chnative::convert::decimal_column(&b.columns()[5].view()).unwrap();
            for i in 0..b.rows() {
                let r = &rows[k];
                assert_eq!(r[0], Value::Int64(a[i]));
                assert_eq!(r[1].as_bytes(), Some(bs.bytes(i)));
                match &r[2] {
                    Value::Float64(v) => assert_eq!(v.to_bits(), cf[i].to_bits()),
                    v => assert!(v.is_null() && cn.is_null(i)),
                }
                assert_eq!(r[3], Value::Array(du[d.range(i)].iter().map(|v| Value::UInt16(*v)).collect()));
                assert_eq!(r[4].as_bytes(), Some(es.bytes(e.key(i))));
                assert_eq!(r[5], Value::Decimal(fd.get(i)));
                k += 1;
            }
        }
        assert_eq!(k, rows.len());
    }
}

fn tsv(sql: &str) -> String {
    common::http(&format!("{sql} FORMAT TSV"))
}

struct Table(String);

impl Drop for Table {
    fn drop(&mut self) {
        common::http_try(&format!("DROP TABLE IF EXISTS {}", self.0));
    }
}

#[tokio::test]
async fn value_rows_insert_round_trip_and_reject_bad_cells() {
    let ddl = "id UInt64, i8 Int8, i256 Int256, u128 UInt128, f32 Float32, f64 Float64, b Bool, s String, fs FixedString(4), d Date, d32 Date32, dt DateTime('Asia/Tokyo'), dt64 DateTime64(6, 'UTC'), \
        dec Decimal(40, 10), u UUID, ip4 IPv4, ip6 IPv6, e Enum8('a' = 1, 'b' = -2), n Nullable(Int32), \
        a Array(Nullable(String)), aa Array(Array(UInt8)), lc LowCardinality(String), lcn LowCardinality(Nullable(String)), \
        t Tuple(a UInt8,b Nullable(String)), m Map(String,Array(Int32)), tm Array(Tuple(LowCardinality(String),Map(UInt8,UUID)))";
    // Tuple and Map columns are spelled without ", " inside, which the column list below splits on.
    // generateRandom has no BFloat16: that column is derived.
    let full = if common::requires(25, 1, "the BFloat16 column") {
        format!("{ddl}, bf BFloat16 DEFAULT toBFloat16(i8 / 8)")
    } else {
        ddl.to_string()
    };
    let src = Table(common::unique_table("vals_src"));
    let dst = Table(common::unique_table("vals_dst"));
    for t in [&src, &dst] {
        common::http(&format!("CREATE TABLE {} ({full}) ENGINE = MergeTree ORDER BY id", t.0));
    }
    common::http(&format!(
        "INSERT INTO {} ({}) SELECT rowNumberInAllBlocks(), * EXCEPT id FROM generateRandom('id UInt64, {}', 3, 8, 3) LIMIT 3000",
        src.0,
        ddl.split(", ").filter_map(|c| c.split_once(' ')).map(|c| c.0).filter(|c| c.chars().all(|ch| ch.is_ascii_alphanumeric())).collect::<Vec<_>>().join(", "),
        ddl.split_once(", ").unwrap().1.replace('\'', "\\'")
    ));
    for (rev, comp) in [(54460, "lz4"), (54460, "none"), (54492, "lz4"), (54492, "none")] {
        common::http(&format!("TRUNCATE TABLE {}", dst.0));
        let c = client_at(rev, comp).await;
        let rows = c.fetch_all_values(format!("SELECT * FROM {} ORDER BY id", src.0)).await.unwrap();
        let s = c.insert_values(&dst.0, &rows).await.unwrap();
        assert_eq!(s.rows, 3000);
        let digest = |t: &str| tsv(&format!("SELECT groupBitXor({}), count() FROM {t}", common::row_hash()));
        assert_eq!(digest(&dst.0), digest(&src.0), "{rev}/{comp}");
    }

    // A cell that does not fit: an error naming row, column, value and type; nothing sent.
    common::http(&format!("TRUNCATE TABLE {}", dst.0));
    let c = client().await;
    let mut rows = c.fetch_all_values(format!("SELECT id, i8 FROM {} ORDER BY id LIMIT 3", src.0)).await.unwrap();
    let names: std::sync::Arc<[String]> = rows[0].names().to_vec().into();
    rows[2] = chnative::ValueRow::new(names, vec![Value::UInt64(9), Value::Int64(300)]).unwrap();
    let e = c.insert_values(&dst.0, &rows).await.unwrap_err().to_string();
    assert!(e.contains("row 2") && e.contains("`i8`") && e.contains("300") && e.contains("Int8"), "{e}");
    assert_eq!(tsv(&format!("SELECT count() FROM {}", dst.0)).trim(), "0");
    assert!(c.is_usable());
}

#[cfg(feature = "serde")]
#[tokio::test]
async fn value_rows_serialize_to_json() {
    let c = client().await;
    let rows = c
        .fetch_all_values(
            "SELECT 1::UInt8 AS a, 'x\"y' AS s, [1.5, -2] AS arr, map('k', NULL::Nullable(Int8)) AS m, \
             toDecimal128('-12.340', 3) AS d, toInt256('-1') * toInt256('1000000000000000000000000000000') AS big, \
             toDate('2024-02-29') AS dt, unhex('ff') AS raw",
        )
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_string(&rows[0]).unwrap(),
        r#"{"a":1,"s":"x\"y","arr":[1.5,-2.0],"m":{"k":null},"d":"-12.34","big":"-1000000000000000000000000000000","dt":"2024-02-29","raw":[255]}"#
    );
}

/// Value rows go into Variant, Dynamic and JSON columns: a Variant value into the
/// alternative of its own type (else the first it converts to), a Dynamic value
/// as its own type (NULL as NULL), JSON as its text; the server stores the same
/// values and types as the source table it was read from.
#[tokio::test]
async fn value_rows_insert_into_variant_dynamic_and_json() {
    if !common::requires(25, 3, "Variant, Dynamic and JSON without allow_experimental_* settings") {
        return;
    }
    let ddl = "id UInt64, v Variant(String, UInt64, Array(Int32)), d Dynamic, j JSON";
    let src = Table(common::unique_table("vals_var_src"));
    let dst = Table(common::unique_table("vals_var_dst"));
    for t in [&src, &dst] {
        common::http(&format!("CREATE TABLE {} ({ddl}) ENGINE = MergeTree ORDER BY id", t.0));
    }
    common::http(&format!(
        "INSERT INTO {} SELECT number, \
           multiIf(number % 4 = 0, number::Variant(String, UInt64, Array(Int32)), \
                   number % 4 = 1, toString(number)::Variant(String, UInt64, Array(Int32)), \
                   number % 4 = 2, [number::Int32, -1]::Variant(String, UInt64, Array(Int32)), NULL), \
           multiIf(number % 9 = 0, number::Dynamic, number % 9 = 1, toString(number)::Dynamic, \
                   number % 9 = 2, [number::Int32, 2]::Dynamic, number % 9 = 3, NULL::Dynamic, \
                   number % 9 = 4, toDecimal32(number / 3, 4)::Dynamic, number % 9 = 5, map('k', number)::Dynamic, \
                   number % 9 = 6, (number, 'x')::Dynamic, number % 9 = 7, toDateTime(number, 'Asia/Tokyo')::Dynamic, \
                   (number / 7)::Float64::Dynamic), \
           concat('{{\"a\":', toString(number), ',\"b\":[\"x\"]}}')::JSON \
         FROM numbers(500)",
        src.0
    ));
    let shown = |t: &str| {
        common::http(&format!(
            "SELECT id, toString(v), variantType(v), toString(d), dynamicType(d), toString(j) FROM {t} ORDER BY id FORMAT TSV"
        ))
    };
    for (rev, comp) in [(54460, "lz4"), (54492, "none")] {
        common::http(&format!("TRUNCATE TABLE {}", dst.0));
        let c = client_at(rev, comp).await;
        let rows = c.fetch_all_values(format!("SELECT * FROM {} ORDER BY id", src.0)).await.unwrap();
        let s = c.insert_values(&dst.0, &rows).await.unwrap_or_else(|e| panic!("{rev}/{comp}: {e}"));
        assert_eq!(s.rows, 500);
        assert_eq!(shown(&dst.0), shown(&src.0), "{rev}/{comp}");
    }
    // Hand-made values: `[]` is Array(Nothing) in a Dynamic column; an Enum value
    // (whose type is not in the value) cannot go into Dynamic.
    let dst = Table(common::unique_table("vals_dyn"));
    common::http(&format!("CREATE TABLE {} (id UInt64, d Dynamic) ENGINE = MergeTree ORDER BY id", dst.0));
    let c = client().await;
    let names: std::sync::Arc<[String]> = vec!["id".to_string(), "d".to_string()].into();
    let row = |id: u64, d: Value| chnative::ValueRow::new(names.clone(), vec![Value::UInt64(id), d]).unwrap();
    c.insert_values(&dst.0, &[row(1, Value::Array(vec![])), row(2, Value::Float32(0.5))]).await.unwrap();
    assert_eq!(
        common::http(&format!("SELECT id, toString(d), dynamicType(d) FROM {} ORDER BY id FORMAT TSV", dst.0)),
        "1\t[]\tArray(Nothing)\n2\t0.5\tFloat32\n"
    );
    let e =
        c.insert_values(&dst.0, &[row(3, Value::Enum { label: "a".into(), value: 1 })]).await.unwrap_err().to_string();
    assert!(e.contains("row 0") && e.contains("`d`") && e.contains("Dynamic"), "{e}");
}

/// `insert_values` writes and sends a large slice in chunks, blocks of one
/// INSERT: 300k dynamic rows (about 33 MB of column data) never hold more than
/// a few MiB of column buffers at once (measured peak 7.4 MB; 59 MB before, the
/// whole transposition with its buffers' doubling). A bad cell after chunks went
/// out aborts the INSERT: nothing is stored, the error names the row.
#[tokio::test(flavor = "current_thread")]
async fn insert_values_sends_chunks_and_holds_one() {
    use chnative_testkit::alloc;
    let t = common::unique_table("values_chunks");
    common::http(&format!("CREATE TABLE {t} (id UInt32, name String) ENGINE = MergeTree ORDER BY id"));
    let names: std::sync::Arc<[String]> = vec!["id".to_string(), "name".to_string()].into();
    let text = "v".repeat(100);
    let n = 300_000u64;
    let mut rows: Vec<chnative::ValueRow> = (0..n)
        .map(|i| {
            chnative::ValueRow::new(names.clone(), vec![Value::UInt64(i), Value::String(text.clone().into())]).unwrap()
        })
        .collect();
    let c = Client::connect(&common::url("compression=none")).await.unwrap();
    let bad = 250_000;
    rows[bad] = chnative::ValueRow::new(names.clone(), vec![Value::Int64(-1), Value::String(b"x".to_vec())]).unwrap();
    let e = c.insert_values(&t, &rows).await.unwrap_err().to_string();
    assert!(e.contains(&format!("row {bad}")) && e.contains("UInt32") && e.contains("-1"), "{e}");
    assert_eq!(common::http(&format!("SELECT count() FROM {t}")).trim(), "0");
    rows[bad] =
        chnative::ValueRow::new(names.clone(), vec![Value::UInt64(bad as u64), Value::String(text.clone().into())])
            .unwrap();
    let live = alloc::live();
    alloc::reset_peak();
    let s = c.insert_values(&t, &rows).await.unwrap();
    let peak = alloc::peak() - live;
    println!("insert_values of {n} rows: peak {peak} bytes over the start, {} blocks", s.blocks);
    assert_eq!((s.rows, s.blocks > 1), (n, true), "{s:?}");
    assert!(peak < 16 << 20, "insert_values held {peak} bytes at its peak");
    let stored = common::http(&format!("SELECT count(), sum(id), sum(length(name)) FROM {t}"));
    assert_eq!(stored.trim(), format!("{n},{},{}", (n - 1) * n / 2, n * 100));

    // A Dynamic column over several chunks: the types found in one chunk stay
    // declared (without rows) in the next blocks.
    if !common::requires(25, 3, "Dynamic without allow_experimental_dynamic_type") {
        return;
    }
    let d = common::unique_table("values_chunks_dynamic");
    common::http(&format!("CREATE TABLE {d} (id UInt32, v Dynamic) ENGINE = MergeTree ORDER BY id"));
    let names: std::sync::Arc<[String]> = vec!["id".to_string(), "v".to_string()].into();
    let n = 100_000u64;
    let rows: Vec<chnative::ValueRow> = (0..n)
        .map(|i| {
            let v = if i < 60_000 { Value::String(text.clone().into()) } else { Value::UInt64(i) };
            chnative::ValueRow::new(names.clone(), vec![Value::UInt64(i), v]).unwrap()
        })
        .collect();
    let s = c.insert_values(&d, &rows).await.unwrap();
    assert_eq!((s.rows, s.blocks > 1), (n, true), "{s:?}");
    let stored = common::http(&format!(
        "SELECT count(), countIf(dynamicType(v) = 'String' AND v.String = '{text}'), sum(v.UInt64) FROM {d}"
    ));
    assert_eq!(stored.trim(), format!("{n},60000,{}", (60_000..n).sum::<u64>()));
}
