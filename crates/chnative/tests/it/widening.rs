//! Lossless conversions of typed rows and `query_scalar` against the real server:
//! every number column type against every number Rust type (accepted exactly when
//! the Rust type holds every value of the column, with the value the server shows
//! for the widened type; refused otherwise, naming both types), single values and
//! tuples as rows, and widening across blocks, Nullable, Array and LowCardinality.

use crate::common;

use std::fmt::Debug;
use std::str::FromStr;

use chnative::convert::{I256, U256};
use chnative::row::OwnedRow;
use chnative::{Client, Query, Row, Scalar};
use common::client;

/// A number column type: its name, whether it is signed, its magnitude bits (an
/// integer's) or `None` for a float, and values that span its range (SQL strings).
struct Source {
    ty: &'static str,
    signed: bool,
    bits: Option<u32>,
    values: &'static [&'static str],
}

const SOURCES: &[Source] = &[
    Source { ty: "UInt8", signed: false, bits: Some(8), values: &["0", "1", "255"] },
    Source { ty: "UInt16", signed: false, bits: Some(16), values: &["0", "256", "65535"] },
    Source { ty: "UInt32", signed: false, bits: Some(32), values: &["0", "65536", "4294967295"] },
    Source { ty: "UInt64", signed: false, bits: Some(64), values: &["0", "4294967296", "18446744073709551615"] },
    Source {
        ty: "UInt128",
        signed: false,
        bits: Some(128),
        values: &["0", "18446744073709551616", "340282366920938463463374607431768211455"],
    },
    Source {
        ty: "UInt256",
        signed: false,
        bits: Some(256),
        values: &["0", "115792089237316195423570985008687907853269984665640564039457584007913129639935"],
    },
    Source { ty: "Int8", signed: true, bits: Some(8), values: &["-128", "-1", "0", "127"] },
    Source { ty: "Int16", signed: true, bits: Some(16), values: &["-32768", "-129", "32767"] },
    Source { ty: "Int32", signed: true, bits: Some(32), values: &["-2147483648", "-32769", "2147483647"] },
    Source {
        ty: "Int64",
        signed: true,
        bits: Some(64),
        values: &["-9223372036854775808", "-2147483649", "9223372036854775807"],
    },
    Source {
        ty: "Int128",
        signed: true,
        bits: Some(128),
        values: &["-170141183460469231731687303715884105728", "-1", "170141183460469231731687303715884105727"],
    },
    Source {
        ty: "Int256",
        signed: true,
        bits: Some(256),
        values: &[
            "-57896044618658097711785492504343953926634992332820282019728792003956564819968",
            "57896044618658097711785492504343953926634992332820282019728792003956564819967",
        ],
    },
    Source { ty: "Float32", signed: true, bits: None, values: &["0.1", "-1.5", "3.4028235e38", "1e-45", "-inf"] },
    Source { ty: "BFloat16", signed: true, bits: None, values: &["0.1", "-1.5", "3.3895314e38"] },
    Source { ty: "Float64", signed: true, bits: None, values: &["0.1", "-1e308", "5e-324", "inf"] },
];

/// A number Rust type as the matrix sees it: its name, the ClickHouse type the
/// server widens to for the expected rendering, signedness and bits (`None`:
/// a float, with its significand bits in `mantissa`).
struct Target {
    rust: &'static str,
    ch: &'static str,
    signed: bool,
    bits: Option<u32>,
    mantissa: u32,
}

/// Whether `t` holds every value of `s`: the rule the client must implement.
fn lossless(s: &Source, t: &Target) -> bool {
    match (s.bits, t.bits) {
        (Some(sb), Some(tb)) => (s.signed == t.signed && sb <= tb) || (!s.signed && t.signed && sb < tb),
        // Float32 and BFloat16 into f64; each float into itself.
        (None, None) => t.rust == "f64" || s.ty != "Float64",
        // Integers are not read as floats, floats not as integers.
        _ => false,
    }
}

async fn check_pair<T>(c: &Client, s: &Source, t: &Target)
where
    T: OwnedRow + Scalar + FromStr + PartialEq + Debug + Clone + Send + 'static,
    <T as FromStr>::Err: Debug,
    (T, String): OwnedRow,
    (Option<T>, Vec<T>, String): OwnedRow,
{
    let list = s.values.iter().map(|v| format!("'{v}'")).collect::<Vec<_>>().join(", ");
    let inner = format!("SELECT CAST(v, '{}') AS x FROM (SELECT arrayJoin([{list}]) AS v)", s.ty);
    let what = format!("{} as {}", s.ty, t.rust);
    if lossless(s, t) {
        // A tuple row: the value and the server's rendering of it widened to the target type.
        let sql = format!("SELECT x, toString(CAST(x, '{}')) AS s FROM ({inner})", t.ch);
        let rows = c.fetch_all::<(T, String)>(sql.as_str()).await.unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(rows.len(), s.values.len(), "{what}");
        for (v, shown) in &rows {
            let want: T = shown.parse().unwrap_or_else(|e| panic!("{what}: parse {shown:?}: {e:?}"));
            assert_eq!(*v, want, "{what}: server shows {shown}");
        }
        // A single value per row, and the first one as a scalar.
        let single = c.fetch_all::<T>(inner.as_str()).await.unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(single, rows.iter().map(|r| r.0.clone()).collect::<Vec<_>>(), "{what}");
        let first = c.fetch_scalar::<T>(inner.as_str()).await.unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(first, rows[0].0, "{what}");
        // Inside Nullable and Array.
        let sql = format!(
            "SELECT CAST(x, 'Nullable({0})') AS n, CAST([x, x], 'Array({0})') AS a, toString(CAST(x, '{1}')) AS s \
             FROM ({inner})",
            s.ty, t.ch
        );
        let wrapped = c.fetch_all::<(Option<T>, Vec<T>, String)>(sql.as_str()).await.unwrap();
        for ((n, a, _), (v, _)) in wrapped.iter().zip(&rows) {
            assert_eq!(n.as_ref(), Some(v), "{what}");
            assert_eq!(a, &[v.clone(), v.clone()], "{what}");
        }
    } else {
        let named = format!("column `x` is {}, not {}", s.ty, t.rust);
        let narrowing = match (s.bits, t.bits) {
            // An integer a float could hold exactly is refused, but it is not narrowing.
            (Some(b), None) if b <= t.mantissa => "integers are not read as floats",
            _ => "narrowing",
        };
        let fetch = c.fetch_all::<T>(inner.as_str()).await.err().unwrap_or_else(|| panic!("{what}: accepted"));
        let tuple = c.fetch_all::<(T, String)>(format!("SELECT x, '' FROM ({inner})").as_str()).await.err();
        let scalar = c.fetch_scalar::<T>(inner.as_str()).await.err();
        // An empty result is refused too: the check runs on the header.
        let empty = c.fetch_all::<T>(format!("{inner} LIMIT 0").as_str()).await.err();
        let empty_scalar = c.fetch_scalar::<T>(format!("{inner} LIMIT 0").as_str()).await.err();
        for e in [Some(fetch), tuple, scalar, empty, empty_scalar] {
            let e = e.unwrap_or_else(|| panic!("{what}: accepted"));
            assert!(e.kind() == chnative::ErrorKind::TypeMismatch, "{what}: {e:?}");
            let msg = e.to_string();
            assert!(msg.starts_with(&named), "{what}: {msg}");
            assert!(msg.contains(narrowing), "{what}: {msg}");
        }
    }
}

const TARGETS: &[Target] = &[
    Target { rust: "u8", ch: "UInt8", signed: false, bits: Some(8), mantissa: 0 },
    Target { rust: "u16", ch: "UInt16", signed: false, bits: Some(16), mantissa: 0 },
    Target { rust: "u32", ch: "UInt32", signed: false, bits: Some(32), mantissa: 0 },
    Target { rust: "u64", ch: "UInt64", signed: false, bits: Some(64), mantissa: 0 },
    Target { rust: "u128", ch: "UInt128", signed: false, bits: Some(128), mantissa: 0 },
    Target { rust: "U256", ch: "UInt256", signed: false, bits: Some(256), mantissa: 0 },
    Target { rust: "i8", ch: "Int8", signed: true, bits: Some(8), mantissa: 0 },
    Target { rust: "i16", ch: "Int16", signed: true, bits: Some(16), mantissa: 0 },
    Target { rust: "i32", ch: "Int32", signed: true, bits: Some(32), mantissa: 0 },
    Target { rust: "i64", ch: "Int64", signed: true, bits: Some(64), mantissa: 0 },
    Target { rust: "i128", ch: "Int128", signed: true, bits: Some(128), mantissa: 0 },
    Target { rust: "I256", ch: "Int256", signed: true, bits: Some(256), mantissa: 0 },
    Target { rust: "f32", ch: "Float32", signed: true, bits: None, mantissa: 24 },
    Target { rust: "f64", ch: "Float64", signed: true, bits: None, mantissa: 53 },
];

#[tokio::test]
async fn every_number_column_against_every_number_type() {
    let c = client().await;
    let (mut widened, mut refused, mut all) = (0, 0, true);
    for s in SOURCES {
        if s.ty == "BFloat16" && !common::requires(25, 1, "BFloat16") {
            all = false;
            continue;
        }
        for t in TARGETS {
            match t.rust {
                "u8" => check_pair::<u8>(&c, s, t).await,
                "u16" => check_pair::<u16>(&c, s, t).await,
                "u32" => check_pair::<u32>(&c, s, t).await,
                "u64" => check_pair::<u64>(&c, s, t).await,
                "u128" => check_pair::<u128>(&c, s, t).await,
                "U256" => check_pair::<U256>(&c, s, t).await,
                "i8" => check_pair::<i8>(&c, s, t).await,
                "i16" => check_pair::<i16>(&c, s, t).await,
                "i32" => check_pair::<i32>(&c, s, t).await,
                "i64" => check_pair::<i64>(&c, s, t).await,
                "i128" => check_pair::<i128>(&c, s, t).await,
                "I256" => check_pair::<I256>(&c, s, t).await,
                "f32" => check_pair::<f32>(&c, s, t).await,
                "f64" => check_pair::<f64>(&c, s, t).await,
                other => unreachable!("{other}"),
            }
            if lossless(s, t) {
                widened += 1;
            } else {
                refused += 1;
            }
        }
    }
    // 12 integer types and 3 float types against 14 Rust types.
    if all {
        assert_eq!((widened, refused), (62, 148));
    }
}

#[tokio::test]
async fn dates_widen_into_day_and_second_counts() {
    let c = client().await;
    // Date (u16 days) into i32 (Date32's days); DateTime (u32 seconds) into i64
    // (DateTime64(0)'s ticks): the server's own casts give the same numbers.
    let rows = c
        .fetch_all::<(i32, String, i64, String)>(
            "SELECT d, toString(toInt32(d)), t, toString(toInt64(t)) FROM (SELECT \
             arrayJoin([toDate('1970-01-01'), toDate('2024-02-29'), toDate('2149-06-06')]) AS d, \
             toDateTime('2106-02-07 06:28:15', 'Europe/Paris') - toUInt32(d) AS t)",
        )
        .await
        .unwrap();
    assert_eq!(rows.len(), 3);
    for (d, ds, t, ts) in rows {
        assert_eq!(d.to_string(), ds);
        assert_eq!(t.to_string(), ts);
    }
    // Date32 and DateTime64 do not narrow back.
    for (sql, rust) in [("SELECT toDate32('2024-01-01') AS x", "u16"), ("SELECT toDateTime64(0, 3) AS x", "u32")] {
        let e = if rust == "u16" { c.fetch_one::<u16>(sql).await.err() } else { c.fetch_one::<u32>(sql).await.err() };
        let msg = e.expect("refused").to_string();
        assert!(msg.starts_with("column `x` is Date"), "{msg}");
        assert!(msg.contains(&format!("not {rust}")), "{msg}");
    }
}

#[tokio::test]
async fn the_trial_calls_work() {
    let c = client().await;
    assert_eq!(c.fetch_scalar::<u64>("SELECT 1").await.unwrap(), 1);
    assert_eq!(c.fetch_one::<u64>("SELECT 1").await.unwrap(), 1);
    assert_eq!(
        c.fetch_all::<(u64, String)>("SELECT number, toString(number * 2) FROM numbers(3)").await.unwrap(),
        [(0, "0".to_string()), (1, "2".into()), (2, "4".into())]
    );
    assert_eq!(c.fetch_optional::<u64>("SELECT 1 WHERE 0").await.unwrap(), None);
    assert_eq!(c.fetch_optional::<(u8, i64)>("SELECT 1, -1").await.unwrap(), Some((1, -1)));
    // Float32 into f64: exactly the Float32's value, as the server widens it.
    let v = c.fetch_scalar::<f64>("SELECT toFloat32(0.1)").await.unwrap();
    assert_eq!(v, f64::from(0.1f32));
    let shown = c.fetch_scalar::<String>("SELECT toString(toFloat64(toFloat32(0.1)))").await.unwrap();
    assert_eq!(v, shown.parse::<f64>().unwrap());
    // A stream of tuples, row by row and a block at a time.
    let mut rows = c
        .fetch::<(u64, Option<String>)>(
            Query::new("SELECT number, if(number % 2 = 0, NULL, toString(number)) FROM numbers(10)")
                .setting("max_block_size", "3"),
        )
        .await
        .unwrap();
    let mut n = 0u64;
    while let Some((k, s)) = rows.next().await.unwrap() {
        assert_eq!(k, n);
        assert_eq!(s, (n % 2 == 1).then(|| n.to_string()));
        n += 1;
    }
    assert_eq!(n, 10);
    let mut rows = c.fetch::<u16>("SELECT toUInt8(number) FROM numbers(300) WHERE number < 256").await.unwrap();
    let mut sum = 0u64;
    while let Some(block) = rows.next_block().await.unwrap() {
        for v in block {
            sum += u64::from(v.unwrap());
        }
    }
    assert_eq!(sum, 255 * 256 / 2);
    // A Connection and a Session read scalars by the same rules.
    let mut conn = chnative::Connection::connect(&common::url("")).await.unwrap();
    assert_eq!(conn.fetch_scalar::<i64>("SELECT toUInt32(4000000000)").await.unwrap(), 4_000_000_000);
    let mut session = c.session().await.unwrap();
    assert_eq!(session.fetch_scalar::<u128>("SELECT 7").await.unwrap(), 7);
}

#[tokio::test]
async fn positional_rows_need_the_right_number_of_columns() {
    let c = client().await;
    let e = c.fetch_one::<u64>("SELECT 1 AS a, 2 AS b").await.unwrap_err().to_string();
    assert!(e.contains("one column") && e.contains("`a`, `b`") && e.contains("tuple"), "{e}");
    let e = c.fetch_all::<(u64, String)>("SELECT 1 AS a").await.unwrap_err().to_string();
    assert!(e.contains("(u64, String) reads 2 columns") && e.contains("`a`"), "{e}");
    // Also when the result is empty (the header is checked).
    let e = c.fetch_all::<(u64, String, u8)>("SELECT 1, 'a' WHERE 0").await.unwrap_err().to_string();
    assert!(e.contains("reads 3 columns"), "{e}");
    // An element that cannot read its column names both types and its position.
    let e = c.fetch_all::<(u64, u8)>("SELECT 1 AS a, 300 AS b").await.unwrap_err().to_string();
    assert_eq!(e, "column `b` is UInt16, not u8 (narrowing; element 1 of (u64, u8))");
    let e = c.fetch_one::<u8>("SELECT toUInt64(1) AS x").await.unwrap_err().to_string();
    assert_eq!(e, "column `x` is UInt64, not u8 (narrowing)");
    let e = c.fetch_scalar::<u8>("SELECT toUInt64(1) AS x").await.unwrap_err().to_string();
    assert_eq!(e, "column `x` is UInt64, not u8 (narrowing)");
    // Strings are not numbers (no note: just the two types).
    let e = c.fetch_one::<u64>("SELECT 'a' AS x").await.unwrap_err().to_string();
    assert_eq!(e, "column `x` is String, not u64");
}

#[derive(Row, Debug, PartialEq)]
struct Wide {
    a: u64,
    b: Option<i64>,
    c: f64,
    d: Vec<u128>,
    e: i32,
    lc: u32,
}

#[derive(Row, Debug)]
struct Narrow {
    #[allow(dead_code)]
    x: u8,
}

#[tokio::test]
async fn derived_rows_widen_per_block() {
    let c = client().await;
    // Many blocks, each widened once; Nullable, Array and LowCardinality columns too.
    let q = Query::new(
        "SELECT toUInt8(number % 256) AS a, if(number % 3 = 0, NULL, toInt16(number % 30000) - 15000) AS b, \
         toFloat32(number) / 4 AS c, [toUInt64(number), 18446744073709551615] AS d, toInt8(number % 256 - 128) AS e, \
         toLowCardinality(toUInt16(number % 7)) AS lc FROM numbers(50000)",
    )
    .setting("max_block_size", "777")
    .setting("allow_suspicious_low_cardinality_types", "1");
    let rows = c.fetch_all::<Wide>(q).await.unwrap();
    assert_eq!(rows.len(), 50_000);
    for (n, r) in rows.iter().enumerate() {
        let n = n as u64;
        let want = Wide {
            a: n % 256,
            b: (!n.is_multiple_of(3)).then(|| (n % 30000) as i64 - 15000),
            c: f64::from(n as f32 / 4.0),
            d: vec![u128::from(n), u128::from(u64::MAX)],
            e: (n % 256) as i32 - 128,
            lc: (n % 7) as u32,
        };
        assert_eq!(*r, want);
    }
    let e = c.fetch_all::<Narrow>("SELECT toUInt64(1) AS x").await.unwrap_err().to_string();
    assert_eq!(e, "column `x` is UInt64, not u8 (narrowing; field `x` of Narrow)");
    let e = c.fetch_all::<Narrow>("SELECT toInt8(1) AS x").await.unwrap_err().to_string();
    assert_eq!(e, "column `x` is Int8, not u8 (narrowing; field `x` of Narrow)");
}
