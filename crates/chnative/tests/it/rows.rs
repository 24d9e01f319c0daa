//! Typed rows (`#[derive(Row)]`) against the real server: reads, borrowed rows,
//! schema checks, inserts and the inserter, at old and new revisions, with and
//! without compression.

use crate::common;

use std::collections::{BTreeMap, HashMap};
use std::net::{Ipv4Addr, Ipv6Addr};

use chnative::convert::{Decimal, I256, U256};
use chnative::{Client, Error, Row};
use common::{client, client_at, http, row_hash, unique_table};

const CONFIGS: [(u64, &str); 4] = [(54460, "lz4"), (54460, "none"), (54492, "lz4"), (54492, "none")];

#[derive(Row, Debug, Clone, PartialEq)]
struct Scalars {
    id: u64,
    i8: i8,
    i16: i16,
    i32: i32,
    i64: i64,
    i128: i128,
    u8: u8,
    u16: u16,
    u32: u32,
    u128: u128,
    i256: I256,
    u256: U256,
    f32: f32,
    f64: f64,
    b: bool,
    s: String,
    fs: [u8; 3],
    bytes: Vec<u8>,
    n: Option<i32>,
    ns: Option<String>,
    arr: Vec<u32>,
    arr_s: Vec<String>,
    arr_n: Vec<Option<i64>>,
    nested: Vec<Vec<u8>>,
    lc: String,
    lcn: Option<String>,
    ip4: Ipv4Addr,
    ip6: Ipv6Addr,
    dec: Decimal,
    wuuid: chnative::WireUuid,
}

const SCALARS_DDL: &str = "id UInt64, i8 Int8, i16 Int16, i32 Int32, i64 Int64, i128 Int128, u8 UInt8, u16 UInt16, \
    u32 UInt32, u128 UInt128, i256 Int256, u256 UInt256, f32 Float32, f64 Float64, b Bool, s String, fs FixedString(3), \
    bytes String, n Nullable(Int32), ns Nullable(String), arr Array(UInt32), arr_s Array(String), \
    arr_n Array(Nullable(Int64)), nested Array(Array(UInt8)), lc LowCardinality(String), \
    lcn LowCardinality(Nullable(String)), ip4 IPv4, ip6 IPv6, dec Decimal(20, 4), wuuid UUID";

fn scalars(n: u64) -> Vec<Scalars> {
    (0..n)
        .map(|i| Scalars {
            id: i,
            i8: (i as i8).wrapping_neg(),
            i16: (i as i16).wrapping_mul(-7),
            i32: i as i32 * -100_003,
            i64: i as i64 * -1_000_000_007,
            i128: -(i as i128) << 70,
            u8: i as u8,
            u16: i as u16 * 3,
            u32: i as u32 * 100_003,
            u128: (i as u128) << 100,
            i256: format!("-{i}000000000000000000000000000000000000000000").parse().unwrap(),
            u256: format!("{i}000000000000000000000000000000000000000000000").parse().unwrap(),
            f32: i as f32 * 0.5,
            f64: i as f64 / 3.0,
            b: i % 2 == 0,
            s: format!("row {i} ünïcode"),
            fs: [b'a', b'b' + (i % 3) as u8, 0],
            bytes: vec![0xff, i as u8, 0],
            n: (i % 3 != 0).then_some(i as i32),
            ns: (i % 4 != 1).then(|| "x".repeat(i as usize % 5)),
            arr: (0..(i % 4) as u32).collect(),
            arr_s: (0..(i % 3)).map(|k| format!("s{k}")).collect(),
            arr_n: vec![None, Some(i as i64)],
            nested: vec![vec![], vec![i as u8; (i % 3) as usize]],
            lc: format!("lc{}", i % 5),
            lcn: (i % 2 == 0).then(|| format!("v{}", i % 3)),
            ip4: Ipv4Addr::new(10, 0, (i >> 8) as u8, i as u8),
            ip6: Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, i as u16),
            dec: format!("-{i}.0{}", i % 10).parse().unwrap(),
            wuuid: chnative::WireUuid::from_u128(0x0123_4567_89ab_cdef_0011_2233_4455_6677 + i as u128),
        })
        .collect()
}

struct Table(String);

impl Table {
    fn new(prefix: &str, ddl: &str) -> Table {
        let t = unique_table(prefix);
        http(&format!("CREATE TABLE {t} ({ddl}) ENGINE = MergeTree ORDER BY tuple()"));
        Table(t)
    }
}

impl Drop for Table {
    fn drop(&mut self) {
        common::http_try(&format!("DROP TABLE IF EXISTS {}", self.0));
    }
}

#[tokio::test]
async fn typed_rows_round_trip_every_config() {
    let rows = scalars(1000);
    for (rev, comp) in CONFIGS {
        let c = client_at(rev, comp).await;
        let t = Table::new("rows_rt", SCALARS_DDL);
        let s = c.insert_rows(&t.0, &rows).await.unwrap_or_else(|e| panic!("insert at {rev}/{comp}: {e}"));
        assert_eq!(s.rows, 1000);
        // The server agrees on a few renderings (checked independently of our reader).
        let row7 = http(&format!(
            "SELECT s, toString(dec), toString(wuuid), toString(ip6), lcn FROM {} WHERE id = 7 FORMAT TSV",
            t.0
        ));
        assert_eq!(row7.trim_end(), "row 7 ünïcode\t-7.07\t01234567-89ab-cdef-0011-22334455667e\t2001:db8::7\t\\N");
        let back: Vec<Scalars> = c.fetch_all(format!("SELECT * FROM {} ORDER BY id", t.0)).await.unwrap();
        assert_eq!(back.len(), rows.len(), "{rev}/{comp}");
        for (a, b) in back.iter().zip(&rows) {
            assert_eq!(a, b, "{rev}/{comp}");
        }
        // Many blocks: the per-block readers are re-resolved.
        let mut s = c
            .fetch::<Scalars>(format!("SELECT * FROM {} ORDER BY id SETTINGS max_block_size = 77", t.0))
            .await
            .unwrap();
        let mut n = 0;
        while let Some(r) = s.next().await.unwrap() {
            assert_eq!(r, rows[n]);
            n += 1;
        }
        assert_eq!(n, rows.len());
    }
}

#[derive(Row, Debug)]
struct Borrowed<'a> {
    id: u64,
    name: &'a str,
    raw: &'a [u8],
    nums: &'a [u32],
    lc: &'a str,
    opt: Option<&'a str>,
}

#[tokio::test]
async fn borrowed_rows_point_into_the_block() {
    for (rev, comp) in CONFIGS {
        let c = client_at(rev, comp).await;
        let mut s = c
            .fetch::<Borrowed<'_>>(
                "SELECT number AS id, toString(number) AS name, unhex('ff00') AS raw, range(number % 5)::Array(UInt32) AS nums, \
                 toLowCardinality(toString(number % 3)) AS lc, if(number % 2 = 0, NULL, 'odd') AS opt \
                 FROM numbers(200000)",
            )
            .await
            .unwrap();
        let mut n = 0u64;
        while let Some(r) = s.next().await.unwrap() {
            assert_eq!(r.id, n);
            assert_eq!(r.name, n.to_string());
            assert_eq!(r.raw, [0xff, 0]);
            assert_eq!(r.nums, (0..(n % 5) as u32).collect::<Vec<_>>());
            assert_eq!(r.lc, (n % 3).to_string());
            assert_eq!(r.opt, (n % 2 == 1).then_some("odd"));
            n += 1;
        }
        assert_eq!(n, 200000);
    }
}

/// `next_block` yields the same rows as `next`, a block at a time, and rows a block
/// iterator leaves (or `next` leaves) are not lost. Text with and without non-ASCII
/// bytes, long enough to cross the decoder's copy pieces, at both string layouts.
#[tokio::test]
async fn block_iterators_yield_the_rows_next_would() {
    #[derive(Row, Debug, PartialEq)]
    struct Text<'a> {
        id: u64,
        s: &'a str,
    }
    let sql = "SELECT number AS id, if(number % 1000 = 7, concat('é', toString(number)),                if(number % 777 = 0, repeat('x', 20000), toString(number))) AS s                FROM numbers(150000) SETTINGS max_block_size = 10000";
    let want = |n: u64| -> String {
        if n % 1000 == 7 {
            format!("é{n}")
        } else if n.is_multiple_of(777) {
            "x".repeat(20000)
        } else {
            n.to_string()
        }
    };
    for (rev, comp) in CONFIGS {
        let c = client_at(rev, comp).await;
        let mut s = c.fetch::<Text<'_>>(sql).await.unwrap();
        let mut n = 0u64;
        // A few rows through `next` first, then blocks; each block iterator is
        // dropped after 3000 rows, so the rest of its block comes with the next call.
        for _ in 0..5 {
            let r = s.next().await.unwrap().unwrap();
            assert_eq!((r.id, r.s), (n, want(n).as_str()));
            n += 1;
        }
        while let Some(rows) = s.next_block().await.unwrap() {
            assert!(rows.len() > 0);
            for r in rows.take(3000) {
                let r = r.unwrap();
                assert_eq!(r.id, n, "{rev} {comp}");
                assert_eq!(r.s, want(n), "{rev} {comp}");
                n += 1;
            }
        }
        assert_eq!(n, 150000, "{rev} {comp}");
        assert!(s.next().await.unwrap().is_none());
    }
}

#[derive(Row, Debug, PartialEq)]
struct Attrs {
    #[row(rename = "number")]
    id: u64,
    #[row(skip)]
    local: String,
    #[row(default)]
    absent: u32,
}

#[derive(Row, Debug, PartialEq)]
#[row(ignore_extra_columns)]
struct OnlyId {
    id: u64,
}

#[derive(Row, Debug, PartialEq)]
struct Composite {
    t: (u8, String),
    m: HashMap<String, u64>,
    bm: BTreeMap<String, u64>,
    pairs: Vec<(String, u64)>,
    bf: f32,
}

#[tokio::test]
async fn attributes_and_composite_types() {
    let c = client().await;
    let rows: Vec<Attrs> = c.fetch_all("SELECT number FROM numbers(3)").await.unwrap();
    assert_eq!(rows, (0..3).map(|id| Attrs { id, local: String::new(), absent: 0 }).collect::<Vec<_>>());
    let rows: Vec<Attrs> = c.fetch_all("SELECT number, 7::UInt32 AS absent FROM numbers(1)").await.unwrap();
    assert_eq!(rows[0].absent, 7);
    let one: OnlyId = c.fetch_one("SELECT 5::UInt64 AS id, 'extra' AS other").await.unwrap();
    assert_eq!(one, OnlyId { id: 5 });
    assert_eq!(c.fetch_optional::<OnlyId>("SELECT 1::UInt64 AS id WHERE 0").await.unwrap(), None);
    assert!(c.fetch_one::<OnlyId>("SELECT 1::UInt64 AS id WHERE 0").await.is_err());
    assert!(c.fetch_optional::<OnlyId>("SELECT number AS id FROM numbers(2)").await.is_err());

    // BFloat16 from 25.1; before, the f32 field reads a Float32.
    let bf = if common::requires(25, 1, "the BFloat16 column") { "BFloat16" } else { "Float32" };
    let r: Composite = c
        .fetch_one(
            format!(
                "SELECT (7::UInt8, 'seven') AS t, map('a', 1::UInt64, 'b', 2::UInt64) AS m, m AS bm, m AS pairs, \
                 1.5::{bf} AS bf"
            )
            .as_str(),
        )
        .await
        .unwrap();
    assert_eq!(r.t, (7, "seven".to_string()));
    assert_eq!(r.m, HashMap::from([("a".to_string(), 1), ("b".to_string(), 2)]));
    assert_eq!(r.bm, BTreeMap::from([("a".to_string(), 1), ("b".to_string(), 2)]));
    assert_eq!(r.pairs, vec![("a".to_string(), 1), ("b".to_string(), 2)]);
    assert_eq!(r.bf, 1.5);
}

fn mismatch_text(e: Error) -> String {
    e.to_string()
}

#[tokio::test]
async fn schema_mismatches_are_errors_before_any_row() {
    #[derive(Row, Debug)]
    struct Wrong {
        id: u32,
    }
    #[derive(Row, Debug)]
    struct NotOption {
        name: String,
    }
    #[derive(Row, Debug)]
    struct Missing {
        id: u64,
        name: String,
    }
    let c = client().await;
    let e = c.fetch_all::<Wrong>("SELECT number AS id FROM numbers(3)").await.unwrap_err();
    let text = mismatch_text(e);
    assert!(
        text.contains("`id`") && text.contains("UInt64") && text.contains("u32") && text.contains("Wrong"),
        "{text}"
    );
    // Also for an empty result: the header is checked.
    let e = c.fetch_all::<Wrong>("SELECT number AS id FROM numbers(3) WHERE 0").await.unwrap_err();
    assert!(mismatch_text(e).contains("UInt64"));
    let e = c.fetch_all::<NotOption>("SELECT CAST(NULL, 'Nullable(String)') AS name").await.unwrap_err();
    let text = mismatch_text(e);
    assert!(text.contains("Nullable(String)") && text.contains("field `name`"), "{text}");
    let e = c.fetch_all::<Missing>("SELECT number AS id FROM numbers(3)").await.unwrap_err();
    let text = mismatch_text(e);
    assert!(text.contains("no column `name`"), "{text}");
    let e = c.fetch_all::<Missing>("SELECT 1::UInt64 AS id, 'a' AS name, 1 AS extra").await.unwrap_err();
    let text = mismatch_text(e);
    assert!(text.contains("`extra`"), "{text}");
    // LowCardinality(Nullable) NULL into a non-Option: caught by the type check.
    let e =
        c.fetch_all::<NotOption>("SELECT toLowCardinality(CAST(NULL, 'Nullable(String)')) AS name").await.unwrap_err();
    assert!(mismatch_text(e).contains("LowCardinality(Nullable(String))"));
    // Invalid UTF-8 into String is an error, not a lossy value.
    let e = c.fetch_all::<NotOption>("SELECT unhex('ff') AS name").await.unwrap_err();
    assert!(mismatch_text(e).contains("UTF-8"), "{}", "utf8");
    // The connection is still usable after each of these.
    assert_eq!(c.fetch_scalar::<u8>("SELECT 1::UInt8").await.unwrap(), 1);
}

#[tokio::test]
async fn insert_checks_types_before_sending() {
    #[derive(Row, Debug)]
    struct Wrong {
        id: u32,
    }
    #[derive(Row, Debug)]
    struct NotThere {
        nope: u64,
    }
    #[derive(Row, Debug)]
    struct OptIntoPlain {
        id: Option<u64>,
    }
    let t = Table::new("rows_bad", "id UInt64");
    let c = client().await;
    let e = c.insert_rows(&t.0, &[Wrong { id: 1 }]).await.unwrap_err().to_string();
    assert!(e.contains("u32") && e.contains("UInt64") && e.contains("`id`"), "{e}");
    let e = c.insert_rows(&t.0, &[NotThere { nope: 1 }]).await.unwrap_err().to_string();
    assert!(e.contains("no column `nope`"), "{e}");
    // An Option writes to the column its value type does (as it reads from it);
    // a None there is refused before anything is sent.
    let e = c.insert_rows(&t.0, &[OptIntoPlain { id: None }]).await.unwrap_err().to_string();
    assert!(e.contains("`id`") && e.contains("not Nullable"), "{e}");
    assert_eq!(http(&format!("SELECT count() FROM {}", t.0)).trim(), "0");
    assert!(c.is_usable());
}

/// `insert_rows` sends a large slice in chunks (blocks of one INSERT) while it
/// writes them: a row that its column cannot hold, after chunks went out,
/// aborts the INSERT. Nothing is stored (fewer rows than the server gathers
/// into a part), the error names the row, and the client goes on.
#[tokio::test]
async fn a_bad_row_after_the_first_chunk_aborts_the_insert() {
    #[derive(Row, Debug)]
    struct Tagged<'a> {
        id: chnative::Value,
        name: &'a str,
    }
    let t = Table::new("rows_bad_later", "id UInt16, name String");
    let name = "n".repeat(200);
    let n = 60_000u64; // about 12 MB: three chunks or more
    let bad = 50_000;
    let mut rows: Vec<Tagged<'_>> =
        (0..n).map(|i| Tagged { id: chnative::Value::UInt64(i % 1000), name: &name }).collect();
    rows[bad].id = chnative::Value::UInt64(70_000);
    let c = client().await;
    let e = c.insert_rows(&t.0, &rows).await.unwrap_err().to_string();
    assert!(e.contains(&format!("row {bad}")) && e.contains("70000") && e.contains("UInt16"), "{e}");
    assert_eq!(http(&format!("SELECT count() FROM {}", t.0)).trim(), "0");
    // The same client inserts the good rows (a new connection if the old one was closed).
    rows[bad].id = chnative::Value::UInt64(1);
    let s = c.insert_rows(&t.0, &rows).await.unwrap();
    assert_eq!((s.rows, s.blocks > 1), (n, true), "{s:?}");
    assert_eq!(http(&format!("SELECT count(), sum(length(name)) FROM {}", t.0)).trim(), format!("{n},{}", n * 200));
}

#[tokio::test]
async fn inserter_flushes_in_blocks_and_reuses_buffers() {
    #[derive(Row, Debug, PartialEq)]
    struct Item<'a> {
        id: u64,
        name: &'a str,
        tags: Vec<String>,
    }
    let t = Table::new("rows_ins", "id UInt64, name String, tags Array(String)");
    let names: Vec<String> = (0..2500).map(|i| format!("name{i}")).collect();
    let c = client_at(54460, "lz4").await;
    let mut ins = c.inserter::<Item<'_>>(&t.0).await.unwrap().max_rows(1000);
    for (i, name) in names.iter().enumerate() {
        ins.write(&Item { id: i as u64, name, tags: vec![format!("t{}", i % 3)] }).await.unwrap();
        assert!(ins.pending() < 1000);
    }
    let s = ins.end().await.unwrap();
    assert_eq!(s.rows, 2500);
    assert_eq!(http(&format!("SELECT count(), sum(id), countIf(name = concat('name', toString(id))), countIf(tags[1] = concat('t', toString(id % 3))) FROM {} FORMAT TSV", t.0)).trim(), "2500\t3123750\t2500\t2500");
    // Three INSERTs (1000 + 1000 + 500) made three parts.
    assert_eq!(http(&format!("SELECT count() FROM system.parts WHERE table = '{}' AND active", t.0)).trim(), "3");

    // A byte limit flushes too: about 50 bytes a row, 25 kB a block -> 5 or 6 INSERTs.
    let t2 = Table::new("rows_ins_bytes", "id UInt64, name String, tags Array(String)");
    let mut ins = c.inserter::<Item<'_>>(&t2.0).await.unwrap().max_rows(1_000_000).max_bytes(25_000);
    for (i, name) in names.iter().enumerate() {
        ins.write(&Item { id: i as u64, name, tags: vec![format!("t{}", i % 3)] }).await.unwrap();
    }
    assert_eq!(ins.end().await.unwrap().rows, 2500);
    let parts: u32 =
        http(&format!("SELECT count() FROM system.parts WHERE table = '{}' AND active", t2.0)).trim().parse().unwrap();
    assert!((4..=7).contains(&parts), "{parts} parts");
    assert_eq!(http(&format!("SELECT count(), sum(id) FROM {} FORMAT TSV", t2.0)).trim(), "2500\t3123750");
}

#[tokio::test]
async fn typed_and_dynamic_agree_with_the_column_tier_on_random_data() {
    #[derive(Row, Debug)]
    struct R {
        a: i64,
        b: Vec<u8>,
        c: Option<f64>,
        d: Vec<u16>,
        e: Vec<u8>,
        f: Decimal,
    }
    let c: Client = client().await;
    let sql = "SELECT * FROM generateRandom('a Int64, b String, c Nullable(Float64), d Array(UInt16), e LowCardinality(String), f Decimal(18, 5)', 42, 10, 3) LIMIT 20000";
    let typed: Vec<R> = c.fetch_all(sql).await.unwrap();
    let mut k = 0usize;
    let mut s = c.fetch_blocks(sql).await.unwrap();
    while let Some(b) = s.next().await.unwrap() {
        let a = b.column("a").unwrap().view();
        let a: &[i64] = a.values().unwrap();
        let bs = b.column("b").unwrap().view();
        let bs = bs.as_strings().unwrap();
        let cn = b.column("c").unwrap().view();
        let cn = cn.as_nullable().unwrap();
        let cv: &[f64] = cn.inner().values().unwrap();
        let d = b.column("d").unwrap().view();
        let d = d.as_array().unwrap();
        let dv: &[u16] = d.inner().values().unwrap();
        for i in 0..b.rows() {
            let r = &typed[k];
            assert_eq!(r.a, a[i]);
            assert_eq!(r.b, bs.bytes(i));
            assert_eq!(r.c.map(f64::to_bits), (!cn.is_null(i)).then(|| cv[i].to_bits()));
            assert_eq!(r.d, dv[d.range(i)]);
            k += 1;
        }
    }
    assert_eq!(k, typed.len());
}

#[cfg(all(feature = "chrono", feature = "uuid"))]
mod temporal {
    use super::*;
    use chnative::convert::ext::chrono::{self, TimeZone};
    use chnative::convert::ext::chrono_tz;

    #[derive(Row, Debug, Clone, PartialEq)]
    struct Temporal {
        id: u64,
        uuid: uuid::Uuid,
        date: chrono::NaiveDate,
        date32: chrono::NaiveDate,
        dt: chrono::DateTime<chrono_tz::Tz>,
        dt64: chrono::DateTime<chrono::Utc>,
        ndt: Option<chrono::DateTime<chrono_tz::Tz>>,
    }

    #[tokio::test]
    async fn uuid_and_chrono_round_trip_honouring_zones() {
        let tokyo: chrono_tz::Tz = "Asia/Tokyo".parse().unwrap();
        let rows: Vec<Temporal> = (0..500u64)
            .map(|i| Temporal {
                id: i,
                uuid: uuid::Uuid::from_u128(0x0123_4567_89ab_cdef_0011_2233_4455_6677 + i as u128),
                date: chrono::NaiveDate::from_ymd_opt(
                    2000 + (i % 100) as i32,
                    1 + (i % 12) as u32,
                    1 + (i % 28) as u32,
                )
                .unwrap(),
                date32: chrono::NaiveDate::from_ymd_opt(1900 + (i % 100) as i32, 1, 1).unwrap(),
                dt: tokyo.timestamp_opt(1_700_000_000 + i as i64 * 3_601, 0).unwrap(),
                dt64: chrono::Utc.timestamp_millis_opt(1_700_000_000_123 + i as i64 * 1_001).unwrap(),
                ndt: (i % 2 == 0).then(|| tokyo.timestamp_opt(1_600_000_000 + i as i64, 0).unwrap()),
            })
            .collect();
        for (rev, comp) in CONFIGS {
            let c = client_at(rev, comp).await;
            let t = Table::new(
                "rows_time",
                "id UInt64, uuid UUID, date Date, date32 Date32, dt DateTime('Asia/Tokyo'), dt64 DateTime64(3, 'UTC'), \
                 ndt Nullable(DateTime('Asia/Tokyo'))",
            );
            c.insert_rows(&t.0, &rows).await.unwrap();
            let row7 = http(&format!(
                "SELECT toString(uuid), toString(date), toString(date32), toString(dt), toString(dt64) FROM {} WHERE id = 7 FORMAT TSV",
                t.0
            ));
            assert_eq!(
                row7.trim_end(),
                "01234567-89ab-cdef-0011-22334455667e\t2007-08-08\t1907-01-01\t2023-11-15 14:13:27\t2023-11-14 22:13:27.130"
            );
            let back: Vec<Temporal> = c.fetch_all(format!("SELECT * FROM {} ORDER BY id", t.0)).await.unwrap();
            assert_eq!(back, rows, "{rev}/{comp}");
            // Wall-clock reads honour the column's zone, not the server's.
            let (naive,): (chrono::NaiveDateTime,) = {
                #[derive(Row)]
                struct N {
                    dt: chrono::NaiveDateTime,
                }
                let n: N = c.fetch_one(format!("SELECT dt FROM {} WHERE id = 7", t.0)).await.unwrap();
                (n.dt,)
            };
            assert_eq!(naive.to_string(), "2023-11-15 14:13:27");
        }
    }
}

#[derive(Row, Debug, PartialEq)]
struct Point {
    x: f64,
    y: f64,
}

#[derive(Row, Debug, PartialEq)]
struct Item<'a> {
    name: &'a str,
    qty: u32,
}

#[derive(Row, Debug, PartialEq)]
struct Order<'a> {
    id: u64,
    at: Point,
    items: Vec<Item<'a>>,
    geo: (f64, f64),
    ring: Vec<(f64, f64)>,
    pos: Item<'a>,
}

#[tokio::test]
async fn nested_structs_read_tuples_and_nested() {
    let c = client().await;
    let mut s = c
        .fetch::<Order<'_>>(
            "SELECT number AS id, CAST((number, -1.5), 'Tuple(y Float64, x Float64)') AS at, \
             CAST([('apple', 1), ('pear', toUInt32(number))], 'Nested(name String, qty UInt32)') AS items, \
             (1.5, 2.5)::Point AS geo, [(0., 0.), (1., 1.)]::Ring AS ring, ('plum', 7::UInt32) AS pos \
             FROM numbers(3) SETTINGS flatten_nested = 0",
        )
        .await
        .unwrap();
    let mut n = 0u64;
    while let Some(o) = s.next().await.unwrap() {
        assert_eq!(o.id, n);
        // Named tuple elements bind by name (y before x here), unnamed ones by position.
        assert_eq!(o.at, Point { x: -1.5, y: n as f64 });
        assert_eq!(o.items, vec![Item { name: "apple", qty: 1 }, Item { name: "pear", qty: n as u32 }]);
        assert_eq!(o.geo, (1.5, 2.5));
        assert_eq!(o.ring, vec![(0., 0.), (1., 1.)]);
        assert_eq!(o.pos, Item { name: "plum", qty: 7 });
        n += 1;
    }
    assert_eq!(n, 3);
    drop(s);
    // A tuple whose names do not match the struct is a bind-time error.
    let e = c
        .fetch_all::<OnlyPoint>("SELECT CAST((1., 2.), 'Tuple(a Float64, b Float64)') AS p")
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("Point") && e.contains("Tuple(a Float64, b Float64)"), "{e}");
}

#[derive(Row, Debug)]
struct OnlyPoint {
    #[allow(dead_code)]
    p: Point,
}

/// Every type typed rows can insert, read from a generateRandom table and
/// written back: the copy must be identical (cityHash64 of every row).
#[derive(Row, Debug, Clone, PartialEq)]
struct Random {
    id: u64,
    i8: i8,
    i16: i16,
    i32: i32,
    i64: i64,
    i128: i128,
    i256: I256,
    u8: u8,
    u16: u16,
    u32: u32,
    u128: u128,
    u256: U256,
    f32: f32,
    f64: f64,
    b: bool,
    s: Vec<u8>,
    fs: [u8; 5],
    n: Option<u64>,
    ns: Option<Vec<u8>>,
    a: Vec<Option<i32>>,
    aa: Vec<Vec<Vec<u8>>>,
    lc: Vec<u8>,
    lcn: Option<Vec<u8>>,
    d9: Decimal,
    d18: Decimal,
    d38: Decimal,
    d76: Decimal,
    ip4: Ipv4Addr,
    ip6: Ipv6Addr,
    uuid: chnative::WireUuid,
    date: u16,
    date32: i32,
    dt: u32,
    dt64: i64,
    e8: i8,
}

#[tokio::test]
async fn typed_rows_copy_a_random_table_exactly() {
    let ddl = "i8 Int8, i16 Int16, i32 Int32, i64 Int64, i128 Int128, i256 Int256, u8 UInt8, u16 UInt16, u32 UInt32, \
        u128 UInt128, u256 UInt256, f32 Float32, f64 Float64, b Bool, s String, fs FixedString(5), n Nullable(UInt64), \
        ns Nullable(String), a Array(Nullable(Int32)), aa Array(Array(String)), lc LowCardinality(String), \
        lcn LowCardinality(Nullable(String)), d9 Decimal(9, 3), d18 Decimal(18, 18), d38 Decimal(38, 10), \
        d76 Decimal(76, 20), ip4 IPv4, ip6 IPv6, uuid UUID, date Date, date32 Date32, dt DateTime('Asia/Tokyo'), \
        dt64 DateTime64(9, 'UTC'), e8 Enum8('x' = -128, 'y' = 0, 'z' = 127)";
    let src = Table::new("rows_rsrc", &format!("id UInt64, {ddl}"));
    let dst = Table::new("rows_rdst", &format!("id UInt64, {ddl}"));
    http(&format!(
        "INSERT INTO {} SELECT rowNumberInAllBlocks(), * FROM generateRandom('{}', 11, 12, 4) LIMIT 5000",
        src.0,
        ddl.replace('\'', "\\'")
    ));
    let digest = |t: &str| http(&format!("SELECT groupBitXor({}), count() FROM {t} FORMAT TSV", row_hash()));
    for (rev, comp) in CONFIGS {
        http(&format!("TRUNCATE TABLE {}", dst.0));
        let c = client_at(rev, comp).await;
        let rows: Vec<Random> = c.fetch_all(format!("SELECT * FROM {} ORDER BY id", src.0)).await.unwrap();
        assert_eq!(rows.len(), 5000);
        let s = c.insert_rows(&dst.0, &rows).await.unwrap();
        assert_eq!(s.rows, 5000);
        assert_eq!(digest(&dst.0), digest(&src.0), "{rev}/{comp}");
        // The dynamic tier reads the same values.
        let dynamic = c.fetch_all_values(format!("SELECT id, d76, ns, aa FROM {} ORDER BY id", src.0)).await.unwrap();
        for (t, d) in rows.iter().zip(&dynamic) {
            assert_eq!(d[0], chnative::Value::UInt64(t.id));
            assert_eq!(d[1], chnative::Value::Decimal(t.d76));
            assert_eq!(d[2].as_bytes(), t.ns.as_deref());
            let chnative::Value::Array(outer) = &d[3] else { panic!("aa is not an array") };
            assert_eq!(outer.len(), t.aa.len());
        }
    }
}

#[cfg(all(feature = "time", feature = "jiff", feature = "chrono"))]
mod time_and_jiff {
    use super::*;
    use chnative::convert::ext::{chrono, jiff, time};

    #[derive(Row, Debug, Clone, PartialEq)]
    struct Times {
        id: u64,
        td: time::Date,
        tdt: time::OffsetDateTime,
        tdur: time::Duration,
        jd: jiff::civil::Date,
        jts: jiff::Timestamp,
        jz: jiff::ZonedDateTime,
        jdur: jiff::SignedDuration,
        cdur: chrono::TimeDelta,
    }

    #[tokio::test]
    async fn time_and_jiff_types_round_trip() {
        let berlin = jiff::tz::TimeZone::get("Europe/Berlin").unwrap();
        let rows: Vec<Times> = (0..300i64)
            .map(|i| Times {
                id: i as u64,
                td: time::Date::from_julian_day(2_440_588 + 40 * i as i32).unwrap(),
                tdt: time::OffsetDateTime::from_unix_timestamp_nanos(
                    1_600_000_000_123_000_000 + i as i128 * 1_000_000_007_000,
                )
                .unwrap(),
                tdur: time::Duration::seconds(i * 3_601 - 50_000),
                jd: jiff::civil::date(1980, 1, 1).checked_add(jiff::Span::new().days(i * 97)).unwrap(),
                jts: jiff::Timestamp::from_second(1_700_000_000 + i * 86_399).unwrap(),
                jz: jiff::Timestamp::from_millisecond(1_650_000_000_000 + i * 3_600_001)
                    .unwrap()
                    .to_zoned_datetime(berlin.clone()),
                jdur: jiff::SignedDuration::from_millis(i * 1_234_567 - 99_999),
                cdur: chrono::TimeDelta::seconds(i * 61 - 7_000),
            })
            .collect();
        for (rev, comp) in [(54460, "none"), (54492, "lz4")] {
            let c = client_at(rev, comp).await;
            let t = Table(unique_table("rows_tj"));
            http(&format!(
                "CREATE TABLE {} (id UInt64, td Date32, tdt DateTime64(6, 'UTC'), tdur Time, jd Date, jts DateTime('UTC'), \
                 jz DateTime64(3, 'Europe/Berlin'), jdur Time64(3), cdur Time) ENGINE = MergeTree ORDER BY id \
                 SETTINGS allow_experimental_time_time64_type = 1",
                t.0
            ));
            c.insert_rows(&t.0, &rows).await.unwrap();
            let back: Vec<Times> = c.fetch_all(format!("SELECT * FROM {} ORDER BY id", t.0)).await.unwrap();
            assert_eq!(back, rows, "{rev}/{comp}");
            let row5 = http(&format!(
                "SELECT toString(td), toString(tdur), toString(jz), toString(jdur) FROM {} WHERE id = 5 FORMAT TSV",
                t.0
            ));
            assert_eq!(
                row5.trim_end(),
                format!("{}\t{}\t{}\t{}", "1970-07-20", "-08:53:15", "2022-04-15 12:20:00.005", "01:41:12.836")
            );
        }
    }
}

#[derive(chnative::Enum, Debug, Clone, Copy, PartialEq)]
enum Color {
    #[row(rename = "red")]
    Red,
    #[row(rename = "green")]
    Green,
    #[row(rename = "dark blue")]
    Blue,
}

#[derive(Row, Debug, Clone, PartialEq)]
struct Paint {
    id: u64,
    c: Color,
    n: Option<Color>,
    all: Vec<Color>,
}

#[tokio::test]
async fn enums_by_label() {
    let t = Table::new(
        "rows_enum",
        "id UInt64, c Enum8('red' = -1, 'green' = 5, 'dark blue' = 100), \
         n Nullable(Enum16('dark blue' = -300, 'green' = 0, 'red' = 7, 'unused' = 9)), \
         all Array(Enum8('red' = 1, 'green' = 2, 'dark blue' = 3))",
    );
    let colors = [Color::Red, Color::Green, Color::Blue];
    let rows: Vec<Paint> = (0..30u64)
        .map(|i| Paint {
            id: i,
            c: colors[i as usize % 3],
            n: (i % 4 != 0).then_some(colors[(i as usize + 1) % 3]),
            all: colors[..i as usize % 4].to_vec(),
        })
        .collect();
    let c = client().await;
    c.insert_rows(&t.0, &rows).await.unwrap();
    assert_eq!(
        http(&format!("SELECT c, n, all FROM {} WHERE id = 5 FORMAT TSV", t.0)).trim_end(),
        "dark blue\tred\t['red']"
    );
    // `n`'s type has a label no variant has: reading is refused at bind time.
    let e = c.fetch_all::<Paint>(format!("SELECT * FROM {} ORDER BY id", t.0)).await.unwrap_err().to_string();
    assert!(e.contains("`n`") && e.contains("unused"), "{e}");
    let back: Vec<Paint> = c
        .fetch_all(format!(
            "SELECT id, c, CAST(n, 'Nullable(Enum16(\\'dark blue\\' = -300, \\'green\\' = 0, \\'red\\' = 7))') AS n, all FROM {} ORDER BY id",
            t.0
        ))
        .await
        .unwrap();
    assert_eq!(back, rows);
}

/// Tuples, maps and nested structs are written as well as read: Rust tuples and
/// derived structs into Tuple columns (named elements bound by name, in any
/// order), HashMap/BTreeMap/`Vec<(K, V)>` into Map, `Vec<struct>` into
/// Array(Tuple) and Nested (flatten_nested = 0). Before, each was refused with
/// "inserting a tuple/HashMap/the nested row … is not supported yet".
#[tokio::test]
async fn composite_types_insert_and_read_back() {
    #[derive(Row, Debug, Clone, PartialEq)]
    struct Fruit {
        name: String,
        qty: u32,
    }
    #[derive(Row, Debug, PartialEq)]
    struct Composite {
        id: u64,
        t: (u8, String),
        at: Point,
        m: HashMap<String, u64>,
        bm: BTreeMap<String, Vec<u32>>,
        pairs: Vec<(String, Option<i64>)>,
        items: Vec<Fruit>,
        nested: Vec<Fruit>,
        pos: Vec<(i32, Vec<String>)>,
    }
    let ddl = "id UInt64, t Tuple(UInt8, String), at Tuple(y Float64, x Float64), m Map(String, UInt64), \
        bm Map(LowCardinality(String), Array(UInt32)), pairs Map(String, Nullable(Int64)), \
        items Array(Tuple(name String, qty UInt32)), nested Nested(qty UInt32, name String), \
        pos Array(Tuple(Int32, Array(String)))";
    let names = ["apple", "pear", "plum"];
    let fruit = |k: u64, qty: u64| Fruit { name: names[(k % 3) as usize].to_string(), qty: qty as u32 };
    let rows: Vec<Composite> = (0..300u64)
        .map(|i| Composite {
            id: i,
            t: (i as u8, format!("s{i}")),
            at: Point { x: i as f64, y: -(i as f64) },
            m: (0..i % 4).map(|k| (format!("k{k}"), i * k)).collect(),
            bm: (0..i % 3).map(|k| (names[k as usize].to_string(), (0..k as u32).collect())).collect(),
            pairs: vec![("z".into(), Some(i as i64)), ("a".into(), None)],
            items: (0..i % 3).map(|k| fruit(k, k)).collect(),
            nested: vec![fruit(i, i)],
            pos: vec![(i as i32, vec!["x".into(); (i % 2) as usize])],
        })
        .collect();
    for (rev, comp) in CONFIGS {
        let c = client_at(rev, comp).await;
        let t = unique_table("rows_composite");
        c.execute(
            chnative::Query::new(format!("CREATE TABLE {t} ({ddl}) ENGINE = MergeTree ORDER BY id"))
                .setting("flatten_nested", "0"),
        )
        .await
        .unwrap();
        let _drop = Table(t.clone());
        assert_eq!(c.insert_rows(&t, &rows).await.unwrap().rows, 300);
        // The server's own rendering of a row.
        let tsv =
            http(&format!("SELECT t, at, mapSort(m), bm, pairs, items, nested, pos FROM {t} WHERE id = 5 FORMAT TSV"));
        assert_eq!(
            tsv.trim(),
            "(5,'s5')\t(-5,5)\t{'k0':0}\t{'apple':[],'pear':[0]}\t{'z':5,'a':NULL}\
             \t[('apple',0),('pear',1)]\t[(5,'plum')]\t[(5,['x'])]",
            "{rev}/{comp}"
        );
        assert_eq!(
            http(&format!(
                "SELECT count(), sum(tupleElement(t, 1)), sum(length(m)), sum(length(items)) FROM {t} FORMAT TSV"
            ))
            .trim(),
            "300\t33586\t450\t300",
            "{rev}/{comp}"
        );
        // And back through the typed tier.
        let back: Vec<Composite> = c.fetch_all(format!("SELECT * FROM {t} ORDER BY id")).await.unwrap();
        assert_eq!(back, rows, "{rev}/{comp}");
    }
}

/// LowCardinality inside Array, Map, Tuple and Nullable positions, written from plain
/// Rust values: the client sends the table's own types (the dictionary built by the
/// client). Before, it declared the plain types (`Map(String, …)`), which 26.9 converts
/// but 24.8 and 25.8 refuse: "Cannot convert: Map(String, Array(UInt32)) to
/// Map(LowCardinality(String), Array(UInt32))" (TYPE_MISMATCH).
#[tokio::test]
async fn nested_low_cardinality_columns_take_plain_values() {
    #[derive(Row, Debug, PartialEq)]
    struct Nested {
        id: u64,
        a: Vec<String>,
        an: Vec<Option<String>>,
        m: BTreeMap<String, u32>,
        t: (Option<String>, String),
        af: Vec<[u8; 2]>,
        au: Vec<u32>,
    }
    let ddl = "id UInt64, a Array(LowCardinality(String)), an Array(LowCardinality(Nullable(String))), \
        m Map(LowCardinality(String), UInt32), t Tuple(LowCardinality(Nullable(String)), LowCardinality(String)), \
        af Array(LowCardinality(FixedString(2))), au Array(LowCardinality(UInt32))";
    let words = ["", "a", "bb", "a", "ccc"];
    let rows: Vec<Nested> = (0..700u64)
        .map(|i| Nested {
            id: i,
            a: (0..i % 4).map(|k| words[((i + k) % 5) as usize].to_string()).collect(),
            an: (0..i % 3).map(|k| (k % 2 == 0).then(|| format!("n{}", (i + k) % 7))).collect(),
            m: (0..i % 3).map(|k| (format!("k{}", (i * k) % 5), (i * k) as u32)).collect(),
            t: ((i % 5 != 0).then(|| format!("t{}", i % 11)), words[(i % 5) as usize].to_string()),
            af: (0..i % 2).map(|_| [b'a' + (i % 26) as u8, b'z']).collect(),
            au: (0..i % 3).map(|k| (i % 9 + k) as u32).collect(),
        })
        .collect();
    for (rev, comp) in CONFIGS {
        let c = client_at(rev, comp).await;
        let t = unique_table("rows_nested_lc");
        c.execute(
            chnative::Query::new(format!("CREATE TABLE {t} ({ddl}) ENGINE = MergeTree ORDER BY id"))
                .setting("allow_suspicious_low_cardinality_types", "1"),
        )
        .await
        .unwrap();
        let _drop = Table(t.clone());
        // Small blocks: each one carries its own dictionaries.
        let sum = c.insert_rows(&t, &rows).await.unwrap_or_else(|e| panic!("{rev}/{comp}: {e}"));
        assert_eq!(sum.rows, 700, "{rev}/{comp}");
        // The server's own rendering against ours.
        let got = http(&format!("SELECT a, an, m, t, af, au FROM {t} WHERE id IN (5, 13, 0) ORDER BY id FORMAT TSV"));
        let text = |r: &Nested| {
            let q = |s: &str| format!("'{s}'");
            let list = |v: Vec<String>| format!("[{}]", v.join(","));
            format!(
                "{}\t{}\t{{{}}}\t({},{})\t{}\t{}\n",
                list(r.a.iter().map(|s| q(s)).collect()),
                list(r.an.iter().map(|s| s.as_deref().map_or("NULL".into(), q)).collect()),
                r.m.iter().map(|(k, v)| format!("{}:{v}", q(k))).collect::<Vec<_>>().join(","),
                r.t.0.as_deref().map_or("NULL".into(), q),
                q(&r.t.1),
                list(r.af.iter().map(|f| q(std::str::from_utf8(f).unwrap())).collect()),
                list(r.au.iter().map(u32::to_string).collect()),
            )
        };
        let want: String = [0usize, 5, 13].iter().map(|&i| text(&rows[i])).collect();
        assert_eq!(got, want, "{rev}/{comp}");
        let back: Vec<Nested> = c.fetch_all(format!("SELECT * FROM {t} ORDER BY id")).await.unwrap();
        assert_eq!(back, rows, "{rev}/{comp}");
    }
}

/// A nested struct whose fields do not match the tuple's element names is refused
/// before anything is sent, naming the struct and the column type.
#[tokio::test]
async fn nested_struct_insert_mismatch_is_refused_before_sending() {
    #[derive(Row, Debug)]
    struct Holder {
        p: Point,
    }
    let t = Table::new("rows_nested_bad", "p Tuple(a Float64, b Float64)");
    let c = client().await;
    let e = c.insert_rows(&t.0, &[Holder { p: Point { x: 1.0, y: 2.0 } }]).await.unwrap_err().to_string();
    assert!(e.contains("Point") && e.contains("`p`") && e.contains("Tuple(`a` Float64, `b` Float64)"), "{e}");
    assert_eq!(http(&format!("SELECT count() FROM {}", t.0)).trim(), "0");
    assert!(c.is_usable());
}

/// A `Value` field reads any column, Dynamic, Variant and JSON included (its Display
/// is the server's toString), and inserts into any column the dynamic tier can fill.
/// A `serde_json::Value` field (feature `serde_json`) parses a JSON column and
/// converts any other column through `Value`'s Serialize.
#[tokio::test]
async fn value_fields_read_dynamic_variant_and_json() {
    if !common::requires(25, 3, "Variant, Dynamic and JSON without allow_experimental_* settings") {
        return;
    }
    use chnative::Value;
    #[derive(Row, Debug)]
    #[row(ignore_extra_columns)]
    struct Any {
        id: u64,
        d: Value,
        ds: String,
        v: Value,
        vs: String,
        j: Value,
        n: Value,
    }
    let c = client().await;
    let rows: Vec<Any> = c
        .fetch_all(
            // multiIf's branches have a common type only as a Variant before 26.x.
            chnative::Query::new(
                "SELECT number AS id, CAST(multiIf(number = 0, 1::Int64, number = 1, 'two', [3.5]), 'Dynamic') AS d, \
                 toString(d) AS ds, CAST(if(number = 1, 'x', toString(number)), 'Variant(String, UInt64)') AS v0, \
                 if(number = 2, CAST(7::UInt64, 'Variant(String, UInt64)'), v0) AS v, toString(v) AS vs, \
                 CAST('{\"a\": {\"b\": 1}}', 'JSON') AS j, if(number = 1, NULL, number::Nullable(UInt8)) AS n \
                 FROM numbers(3) ORDER BY id",
            )
            .setting("use_variant_as_common_type", "1"),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rows.len(), 3);
    for r in &rows {
        assert_eq!(r.d.to_string(), r.ds);
        assert_eq!(r.v.to_string(), r.vs);
        assert_eq!(r.j.as_str(), Some("{\"a\":{\"b\":1}}"));
    }
    assert_eq!(rows[0].d, Value::Int64(1));
    assert_eq!(rows[2].v, Value::UInt64(7));
    assert!(rows[1].n.is_null());
    assert_eq!(rows[2].n, Value::UInt8(2));

    // Value fields insert, converted exactly to each column's type.
    #[derive(Row, Debug)]
    struct Loose {
        id: Value,
        t: Value,
        m: Value,
    }
    let t = Table::new("rows_value_fields", "id UInt16, t Tuple(Int8, String), m Map(String, Nullable(Int32))");
    let loose = [Loose {
        id: Value::UInt64(9),
        t: Value::Tuple(vec![Value::Int64(-3), Value::String(b"s".to_vec())]),
        m: Value::Map(vec![(Value::String(b"k".to_vec()), Value::Null)]),
    }];
    assert_eq!(c.insert_rows(&t.0, &loose).await.unwrap().rows, 1);
    assert_eq!(http(&format!("SELECT * FROM {} FORMAT TSV", t.0)).trim(), "9\t(-3,'s')\t{'k':NULL}");
    let too_big = [Loose { id: Value::UInt64(70000), t: loose[0].t.clone(), m: loose[0].m.clone() }];
    let e = c.insert_rows(&t.0, &too_big).await.unwrap_err().to_string();
    assert!(e.contains("70000") && e.contains("UInt16") && e.contains("`id`"), "{e}");
    assert_eq!(http(&format!("SELECT count() FROM {}", t.0)).trim(), "1");

    #[cfg(feature = "serde_json")]
    {
        #[derive(Row, Debug)]
        struct Doc {
            j: serde_json::Value,
            m: serde_json::Value,
            big: serde_json::Value,
        }
        let d: Doc = c
            .fetch_one(
                "SELECT CAST('{\"a\": {\"b\": [1, 2]}}', 'JSON') AS j, map('x', 1::UInt8) AS m, 2::Int256 AS big",
            )
            .await
            .unwrap();
        assert_eq!(d.j, serde_json::json!({"a": {"b": [1, 2]}}));
        assert_eq!(d.m, serde_json::json!({"x": 1}));
        assert_eq!(d.big, serde_json::json!("2"));

        // Into a JSON column (and a String column) as JSON text.
        #[derive(Row, Debug)]
        struct Put {
            j: serde_json::Value,
            s: serde_json::Value,
        }
        let t = Table::new("rows_json_put", "j JSON, s String");
        let put = [Put { j: serde_json::json!({"a": {"b": 5}, "c": "x"}), s: serde_json::json!([1, "two"]) }];
        c.insert_rows(&t.0, &put).await.unwrap();
        assert_eq!(http(&format!("SELECT j.a.b, j.c, s FROM {} FORMAT TSV", t.0)).trim(), "5\tx\t[1,\"two\"]");
        let back: Put = c.fetch_one(format!("SELECT j, s FROM {}", t.0)).await.unwrap();
        assert_eq!(back.j, put[0].j);
        assert_eq!(back.s, serde_json::json!("[1,\"two\"]"));
    }
}

/// `#[derive(Variant)]`: each alternative of a Variant column is read by the Rust variant
/// whose type accepts it; NULL is `None` in an `Option`; an enum that cannot read some
/// alternative is refused when the result is bound, and a NULL into a bare enum is an error.
#[tokio::test]
async fn variant_columns_read_into_derived_enums() {
    if !common::requires(25, 3, "Variant, Dynamic and JSON without allow_experimental_* settings") {
        return;
    }
    #[derive(chnative::Variant, Debug, PartialEq)]
    enum Cell {
        Text(String),
        Count(u64),
        List(Vec<i32>),
    }
    #[derive(Row, Debug, PartialEq)]
    struct WithVariant {
        id: u64,
        v: Option<Cell>,
    }
    let sql = "SELECT number AS id, \
        CAST(multiIf(number % 4 = 0, CAST(number, 'Variant(String, UInt64, Array(Int32))'), \
                     number % 4 = 1, CAST(concat('s', toString(number)), 'Variant(String, UInt64, Array(Int32))'), \
                     number % 4 = 2, CAST([toInt32(number), -1], 'Variant(String, UInt64, Array(Int32))'), \
                     NULL), 'Variant(String, UInt64, Array(Int32))') AS v \
        FROM numbers(1000)";
    let c = client().await;
    let rows: Vec<WithVariant> = c.fetch_all(sql).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rows.len(), 1000);
    for r in &rows {
        let n = r.id;
        let want = match n % 4 {
            0 => Some(Cell::Count(n)),
            1 => Some(Cell::Text(format!("s{n}"))),
            2 => Some(Cell::List(vec![n as i32, -1])),
            _ => None,
        };
        assert_eq!(r.v, want, "row {n}");
    }
    // A bare enum: fine until a NULL arrives.
    #[derive(Row, Debug)]
    struct Bare {
        #[allow(dead_code)]
        v: Cell,
    }
    let e =
        c.fetch_all::<Bare>(format!("SELECT v FROM ({sql}) WHERE id < 4 ORDER BY id")).await.unwrap_err().to_string();
    assert!(e.contains("NULL") && e.contains("`v`"), "{e}");
    // An alternative no Rust variant reads: refused before any row.
    #[derive(chnative::Variant, Debug)]
    enum Narrow {
        #[allow(dead_code)]
        Text(String),
    }
    #[derive(Row, Debug)]
    struct NarrowRow {
        #[allow(dead_code)]
        v: Option<Narrow>,
    }
    let e = c.fetch_all::<NarrowRow>(sql).await.unwrap_err().to_string();
    assert!(e.contains("Variant(") && e.contains("`v`"), "{e}");
}

/// `#[derive(Variant)]` enums are inserted too: each Rust alternative goes to the
/// column alternative its type fits (the column may have more), `None` is the
/// Variant's NULL, and what the server stores reads back the same; an enum with an
/// alternative that fits none of the column's is refused before anything is sent.
#[tokio::test]
async fn derived_variant_enums_are_inserted() {
    if !common::requires(25, 3, "Variant, Dynamic and JSON without allow_experimental_* settings") {
        return;
    }
    #[derive(chnative::Variant, Debug, PartialEq, Clone)]
    enum Cell {
        Text(String),
        Count(u64),
        List(Vec<i32>),
    }
    #[derive(Row, Debug, PartialEq, Clone)]
    struct WithVariant {
        id: u64,
        v: Option<Cell>,
        w: Cell,
    }
    // `w` has exactly Cell's alternatives, so it reads back into Cell.
    #[derive(Row, Debug, PartialEq)]
    struct Back {
        id: u64,
        w: Cell,
    }
    let rows: Vec<WithVariant> = (0..1000u64)
        .map(|n| {
            let cell = |k: u64| match k % 3 {
                0 => Cell::Count(k),
                1 => Cell::Text(format!("s{k}")),
                _ => Cell::List(vec![k as i32, -1]),
            };
            WithVariant { id: n, v: (n % 4 != 3).then(|| cell(n)), w: cell(n + 1) }
        })
        .collect();
    for (rev, comp) in CONFIGS {
        let t = Table::new(
            "variant_ins",
            "id UInt64, v Variant(String, UInt64, Array(Int32), Float64), w Variant(Array(Int32), String, UInt64)",
        );
        let c = client_at(rev, comp).await;
        let sum = c.insert_rows(&t.0, &rows).await.unwrap_or_else(|e| panic!("insert at {rev}/{comp}: {e}"));
        assert_eq!(sum.rows, 1000);
        // The server's own view of what it stored.
        let got = http(&format!(
            "SELECT id, variantType(v), toString(v), variantType(w), toString(w) FROM {} ORDER BY id FORMAT TSV",
            t.0
        ))
        // toString of a NULL Variant: empty on 26.x, ᴺᵁᴸᴸ on 25.x.
        .replace("\tNone\tᴺᵁᴸᴸ\t", "\tNone\t\t");
        let want: String = rows
            .iter()
            .map(|r| {
                let shown = |c: &Option<Cell>| match c {
                    None => ("None".to_string(), String::new()),
                    Some(Cell::Count(k)) => ("UInt64".into(), k.to_string()),
                    Some(Cell::Text(s)) => ("String".into(), s.clone()),
                    Some(Cell::List(l)) => ("Array(Int32)".into(), format!("[{},{}]", l[0], l[1])),
                };
                let (vt, vs) = shown(&r.v);
                let (wt, ws) = shown(&Some(r.w.clone()));
                format!("{}\t{vt}\t{vs}\t{wt}\t{ws}\n", r.id)
            })
            .collect();
        assert_eq!(got, want, "{rev}/{comp}");
        let back: Vec<Back> = c.fetch_all(format!("SELECT id, w FROM {} ORDER BY id", t.0)).await.unwrap();
        let sent: Vec<Back> = rows.iter().map(|r| Back { id: r.id, w: r.w.clone() }).collect();
        assert_eq!(back, sent, "{rev}/{comp}");
    }
    // An alternative that fits none of the column's: refused before sending.
    #[derive(chnative::Variant, Debug)]
    enum Wide {
        #[allow(dead_code)]
        Count(u64),
        #[allow(dead_code)]
        Flag(bool),
    }
    #[derive(Row, Debug)]
    struct WideRow {
        w: Wide,
    }
    let t = Table::new("variant_ins_bad", "w Variant(String, UInt64)");
    let c = client().await;
    let e = c.insert_rows(&t.0, &[WideRow { w: Wide::Count(1) }]).await.unwrap_err().to_string();
    assert!(e.contains("`w`") && e.contains("Variant(String, UInt64)"), "{e}");
    assert_eq!(http(&format!("SELECT count() FROM {}", t.0)).trim(), "0");
}

/// `&str` / `String` fields check UTF-8 once per block and then each row's ends: a
/// character split across two rows (valid as a whole blob, invalid per row) is still
/// an error naming the column, and valid multibyte text reads back exactly.
#[tokio::test]
async fn utf8_is_checked_per_row_even_when_the_block_is_valid() {
    #[derive(Row, Debug)]
    struct S<'a> {
        s: &'a str,
    }
    #[derive(Row, Debug)]
    struct Owned {
        s: String,
    }
    let c = client().await;
    let e = c.fetch_all::<Owned>("SELECT arrayJoin([unhex('C3'), unhex('A9')]) AS s").await.unwrap_err().to_string();
    assert!(e.contains("UTF-8") && e.contains("`s`"), "{e}");
    let mut st = c.fetch::<S<'_>>("SELECT arrayJoin(['é', 'ok', '', '日本語', 'x']) AS s").await.unwrap();
    let mut got = Vec::new();
    while let Some(r) = st.next().await.unwrap() {
        got.push(r.s.to_string());
    }
    assert_eq!(got, ["é", "ok", "", "日本語", "x"]);
}

/// `rust_decimal::Decimal` fields (feature `rust_decimal`): inserted exactly into
/// Decimal columns of every width that fits its 28 digits, read back equal, shown by the
/// server as written; a value with more fraction digits than the column's scale, or too
/// many integer digits, is refused before anything is sent.
#[cfg(feature = "rust_decimal")]
#[tokio::test]
async fn rust_decimal_fields_round_trip() {
    use chnative::convert::ext::rust_decimal::Decimal as Rd;
    use std::str::FromStr;
    #[derive(Row, Debug, PartialEq)]
    struct Money {
        id: u32,
        small: Rd,
        wide: Rd,
        maybe: Option<Rd>,
    }
    let t = Table::new(
        "rows_rust_decimal",
        "id UInt32, small Decimal(9, 2), wide Decimal(28, 10), maybe Nullable(Decimal(18, 4))",
    );
    let d = |s: &str| Rd::from_str(s).unwrap();
    let rows = vec![
        Money { id: 1, small: d("1234567.89"), wide: d("-123456789012345678.0123456789"), maybe: Some(d("-0.0001")) },
        Money { id: 2, small: d("-0.01"), wide: d("0"), maybe: None },
        Money { id: 3, small: d("9999999.99"), wide: d("1.5"), maybe: Some(d("99999999999999.9999")) },
    ];
    let c = client().await;
    assert_eq!(c.insert_rows(&t.0, &rows).await.unwrap().rows, 3);
    assert_eq!(
        http(&format!("SELECT toString(small), toString(wide), toString(maybe) FROM {} ORDER BY id FORMAT TSV", t.0)),
        "1234567.89\t-123456789012345678.0123456789\t-0.0001\n-0.01\t0\t\\N\n9999999.99\t1.5\t99999999999999.9999\n"
    );
    let back: Vec<Money> = c.fetch_all(format!("SELECT * FROM {} ORDER BY id", t.0)).await.unwrap();
    assert_eq!(back, rows);
    for bad in [
        Money { id: 4, small: d("0.001"), wide: d("0"), maybe: None },
        Money { id: 5, small: d("10000000.00"), wide: d("0"), maybe: None },
    ] {
        let e = c.insert_rows(&t.0, &[bad]).await.unwrap_err().to_string();
        assert!(e.contains("`small`") && e.contains("Decimal(9, 2)"), "{e}");
    }
    assert_eq!(http(&format!("SELECT count() FROM {}", t.0)).trim(), "3");
    // Above 28 digits a column can hold values rust_decimal cannot: refused when bound.
    #[derive(Row, Debug)]
    struct Wide {
        #[allow(dead_code)]
        w: Rd,
    }
    let e = c.fetch_all::<Wide>("SELECT 1::Decimal(38, 10) AS w").await.unwrap_err().to_string();
    assert!(e.contains("Decimal(38, 10)") && e.contains("`w`"), "{e}");
}
