//! The type system's conformance matrix, against the real server: every Rust
//! type × ClickHouse type pair, on every path that names a Rust type.
//!
//! For each pair the paths must agree: the typed read check (`#[derive(Row)]`
//! fields, single values, `fetch_scalar`) accepts exactly the pairs the typed
//! write check (`insert_rows`, the inserter) accepts. Then, on the server:
//! `fetch_scalar` and a typed row read a stored value if and only if the pair is
//! accepted (refusals are type mismatches named before any row is read), an
//! INSERT of rows is refused before any data is sent for a refused pair, and an
//! accepted value round-trips: written as `T`, read back as `T` equal, with the
//! same server rendering (`toString`) after a trip through dynamic `Value` rows.

use crate::common;

use std::collections::HashMap;
use std::future::Future;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::pin::Pin;

use chnative::convert::{Decimal, I256, U256};
use chnative::proto::DataType;
use chnative::{Client, ErrorKind, Row, WireUuid};
use common::{client, unique_table};

/// ClickHouse column types, with a SQL literal each table is seeded with.
const CH_TYPES: &[(&str, &str)] = &[
    ("Int8", "7"),
    ("Int16", "7"),
    ("Int32", "7"),
    ("Int64", "7"),
    ("Int128", "7"),
    ("Int256", "7"),
    ("UInt8", "7"),
    ("UInt16", "7"),
    ("UInt32", "7"),
    ("UInt64", "7"),
    ("UInt128", "7"),
    ("UInt256", "7"),
    ("Float32", "1.5"),
    ("Float64", "1.5"),
    ("BFloat16", "1.5"),
    ("Bool", "true"),
    ("String", "'abc'"),
    ("FixedString(16)", "'0123456789abcdef'"),
    ("Date", "'2024-01-02'"),
    ("Date32", "'2024-01-02'"),
    ("DateTime", "'2024-01-02 03:04:05'"),
    ("DateTime('Asia/Tokyo')", "'2024-01-02 03:04:05'"),
    ("DateTime64(3)", "'2024-01-02 03:04:05.678'"),
    ("Decimal(9, 2)", "1.5"),
    ("Decimal(18, 4)", "1.5"),
    ("Decimal(38, 6)", "1.5"),
    ("Decimal(76, 10)", "1.5"),
    ("UUID", "'61f0c404-5cb3-11e7-907b-a6006ad3dba0'"),
    ("IPv4", "'1.2.3.4'"),
    ("IPv6", "'::1'"),
    ("Enum8('a' = 1, 'b' = 7)", "'b'"),
    ("Nullable(Int32)", "7"),
    ("Nullable(String)", "'abc'"),
    ("LowCardinality(String)", "'abc'"),
    ("Array(Int32)", "[7, 8]"),
    ("Array(String)", "['a', 'b']"),
    ("Array(Nullable(Int64))", "[7, NULL]"),
    ("Map(String, Int32)", "{'a': 7}"),
    ("Tuple(Int32, String)", "(7, 'abc')"),
    ("Array(UInt8)", "[1, 2]"),
];

type Fut<T> = Pin<Box<dyn Future<Output = Result<T, String>> + Send>>;

/// One Rust type of the matrix: its checks and the live probes.
struct Case {
    rust: &'static str,
    reads: fn(&DataType) -> bool,
    writes: fn(&DataType) -> bool,
    /// Reads the one row of `table` with `fetch_scalar` and as a typed row:
    /// `Ok(true)` both read, `Ok(false)` both refused with a type mismatch.
    read: fn(Client, String) -> Fut<bool>,
    /// Inserts the sample into `table`: `Ok(true)` inserted, `Ok(false)` refused
    /// as a type mismatch.
    write: fn(Client, String) -> Fut<bool>,
    /// Reads the sample back from `table` (where `write` put it) and compares.
    check: fn(Client, String) -> Fut<()>,
}

fn mismatch(e: &chnative::Error) -> bool {
    e.kind() == ErrorKind::TypeMismatch
}

macro_rules! case {
    ($row:ident: $t:ty = $sample:expr) => {{
        #[derive(Row, Debug, PartialEq)]
        struct $row {
            x: $t,
        }
        fn sample() -> $t {
            $sample
        }
        Case {
            rust: stringify!($t),
            reads: |ty| chnative::row::accepts::<$t>(ty),
            writes: |ty| chnative::row::writes::<$t>(ty),
            read: |c, table| {
                Box::pin(async move {
                    let sql = format!("SELECT x FROM {table}");
                    let scalar = c.fetch_scalar::<$t>(sql.as_str()).await;
                    let row = c.fetch_all::<$row>(sql.as_str()).await;
                    match (scalar, row) {
                        (Ok(_), Ok(_)) => Ok(true),
                        (Err(a), Err(b)) if mismatch(&a) && mismatch(&b) => Ok(false),
                        (a, b) => Err(format!("query_scalar: {:?}, row: {:?}", a.err(), b.err())),
                    }
                })
            },
            write: |c, table| {
                Box::pin(async move {
                    match c.insert_rows(&table, &[$row { x: sample() }]).await {
                        Ok(_) => Ok(true),
                        Err(e) if mismatch(&e) => Ok(false),
                        Err(e) => Err(format!("insert_rows: {e}")),
                    }
                })
            },
            check: |c, table| {
                Box::pin(async move {
                    let sql = format!("SELECT x FROM {table}");
                    let got = c.fetch_scalar::<$t>(sql.as_str()).await.map_err(|e| format!("read back: {e}"))?;
                    if !same(&got, &sample()) {
                        return Err(format!("wrote {:?}, read back {got:?}", sample()));
                    }
                    Ok(())
                })
            },
        }
    }};
}

/// Equality for the round trip: decimals by value (the column's scale pads them).
trait Same {
    fn same(&self, other: &Self) -> bool;
}
impl<T: std::fmt::Debug + PartialEq> Same for T {
    fn same(&self, other: &Self) -> bool {
        self == other
    }
}
fn same<T: Same>(a: &T, b: &T) -> bool {
    a.same(b)
}

#[derive(chnative::Enum, Debug, Clone, Copy, PartialEq)]
#[allow(non_camel_case_types)]
enum Ab {
    a,
    b,
}

fn cases() -> Vec<Case> {
    #[allow(unused_mut)]
    let mut v = vec![
        case!(RI8: i8 = 7),
        case!(RI16: i16 = 7),
        case!(RI32: i32 = 7),
        case!(RI64: i64 = 7),
        case!(RI128: i128 = 7),
        case!(RI256: I256 = I256::from(7i8)),
        case!(RU8: u8 = 7),
        case!(RU16: u16 = 7),
        case!(RU32: u32 = 7),
        case!(RU64: u64 = 7),
        case!(RU128: u128 = 7),
        case!(RU256: U256 = U256::from(7u8)),
        case!(RF32: f32 = 1.5),
        case!(RF64: f64 = 1.5),
        case!(RBool: bool = true),
        case!(RString: String = "abc".into()),
        case!(RBytes: Vec<u8> = vec![1, 2]),
        case!(RFixed: [u8; 16] = *b"0123456789abcdef"),
        case!(RWireUuid: WireUuid = WireUuid::from_u128(0x61f0c404_5cb3_11e7_907b_a6006ad3dba0)),
        case!(RIpv4: Ipv4Addr = Ipv4Addr::new(1, 2, 3, 4)),
        case!(RIpv6: Ipv6Addr = Ipv6Addr::LOCALHOST),
        case!(RDecimal: Decimal = Decimal::new(150i32, 2).unwrap()),
        case!(REnum: Ab = Ab::b),
        case!(ROptI32: Option<i32> = Some(7)),
        case!(ROptString: Option<String> = Some("abc".into())),
        case!(RVecI32: Vec<i32> = vec![7, 8]),
        case!(RVecString: Vec<String> = vec!["a".into(), "b".into()]),
        case!(RVecOptI64: Vec<Option<i64>> = vec![Some(7), Some(8)]),
        case!(RMap: HashMap<String, i32> = HashMap::from([("a".to_string(), 7)])),
        case!(RTuple: (i32, String) = (7, "abc".into())),
        case!(RNonZeroU64: std::num::NonZeroU64 = std::num::NonZeroU64::new(7).unwrap()),
        case!(RNonZeroI16: std::num::NonZeroI16 = std::num::NonZeroI16::new(7).unwrap()),
    ];
    #[cfg(feature = "uuid")]
    v.push(case!(RUuid: uuid::Uuid = uuid::Uuid::from_u128(0x61f0c404_5cb3_11e7_907b_a6006ad3dba0)));
    #[cfg(feature = "chrono")]
    {
        use chnative::convert::ext::chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};
        let day = || NaiveDate::from_ymd_opt(2024, 1, 2).unwrap();
        let _ = day;
        v.push(case!(RNaiveDate: NaiveDate = NaiveDate::from_ymd_opt(2024, 1, 2).unwrap()));
        v.push(case!(RNaiveDateTime: NaiveDateTime =
            NaiveDate::from_ymd_opt(2024, 1, 2).unwrap().and_hms_opt(3, 4, 5).unwrap()));
        v.push(case!(RDateTimeUtc: DateTime<Utc> = DateTime::from_timestamp(1_704_164_645, 0).unwrap()));
    }
    #[cfg(feature = "time")]
    {
        use chnative::convert::ext::time::{Date, Month, OffsetDateTime};
        v.push(case!(RTimeDate: Date = Date::from_calendar_date(2024, Month::January, 2).unwrap()));
        v.push(case!(RTimeOffset: OffsetDateTime = OffsetDateTime::from_unix_timestamp(1_704_164_645).unwrap()));
    }
    #[cfg(feature = "jiff")]
    {
        use chnative::convert::ext::jiff::{civil, Timestamp};
        v.push(case!(RJiffDate: civil::Date = civil::date(2024, 1, 2)));
        v.push(case!(RJiffTs: Timestamp = Timestamp::from_second(1_704_164_645).unwrap()));
    }
    #[cfg(feature = "rust_decimal")]
    v.push(case!(RRustDecimal: chnative::convert::ext::rust_decimal::Decimal =
        chnative::convert::ext::rust_decimal::Decimal::new(150, 2)));
    v
}

fn ch_type(name: &str) -> DataType {
    DataType::parse(name).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Without a server: every pair that reads also writes (a value read from a
/// column can be written back to it). Writing may take more (a lossless
/// widening write, such as rust_decimal into Decimal128, has no lossless read).
#[test]
fn what_reads_also_writes() {
    let mut bad = Vec::new();
    let mut pairs = 0;
    for (name, _) in CH_TYPES {
        let ty = ch_type(name);
        for c in cases() {
            pairs += 1;
            if (c.reads)(&ty) && !(c.writes)(&ty) {
                bad.push(format!("{} × {name}: reads, but does not write", c.rust));
            }
        }
    }
    assert!(bad.is_empty(), "{} of {pairs} pairs disagree:\n{}", bad.len(), bad.join("\n"));
}

/// On the server: every path agrees with the checks, and accepted values
/// round-trip. The column types run side by side (one task each).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_path_agrees_and_round_trips() {
    let c = client().await;
    let mut tasks = tokio::task::JoinSet::new();
    for &(name, literal) in CH_TYPES {
        if name == "BFloat16" && !common::requires(25, 1, "BFloat16") {
            continue;
        }
        let c = c.clone();
        tasks.spawn(async move {
            let mut bad = Vec::new();
            let (mut pairs, mut accepted) = (0usize, 0usize);
            let ty = ch_type(name);
            let seeded = unique_table("types_seed");
            c.execute(format!("CREATE TABLE {seeded} (x {name}) ENGINE = Memory")).await.unwrap();
            c.execute(format!("INSERT INTO {seeded} VALUES ({literal})")).await.unwrap();
            for case in cases() {
                pairs += 1;
                let (reads, writes) = ((case.reads)(&ty), (case.writes)(&ty));
                accepted += usize::from(reads);
                let pair = format!("{} × {name}", case.rust);
                match (case.read)(c.clone(), seeded.clone()).await {
                    Ok(read) if read == reads => {}
                    Ok(read) => bad.push(format!("{pair}: the read check says {reads}, reading says {read}")),
                    Err(e) => bad.push(format!("{pair}: {e}")),
                }
                if !writes {
                    // Refused before any data is sent: the seeded row stays alone.
                    match (case.write)(c.clone(), seeded.clone()).await {
                        Ok(false) => {}
                        Ok(true) => bad.push(format!("{pair}: the write check refuses, inserting accepts")),
                        Err(e) => bad.push(format!("{pair}: {e}")),
                    }
                    continue;
                }
                let table = unique_table("types_rt");
                c.execute(format!("CREATE TABLE {table} (x {name}) ENGINE = Memory")).await.unwrap();
                match (case.write)(c.clone(), table.clone()).await {
                    Ok(true) => {}
                    Ok(false) => bad.push(format!("{pair}: the write check accepts, inserting refuses")),
                    Err(e) => bad.push(format!("{pair}: {e}")),
                }
                if reads {
                    if let Err(e) = (case.check)(c.clone(), table.clone()).await {
                        bad.push(format!("{pair}: {e}"));
                    }
                }
                // The dynamic path: the same rows as Values, written back, render the same.
                let rows = c.fetch_all_values(format!("SELECT x FROM {table}")).await.unwrap();
                let copy = unique_table("types_dyn");
                c.execute(format!("CREATE TABLE {copy} (x {name}) ENGINE = Memory")).await.unwrap();
                match c.insert_values(&copy, &rows).await {
                    Ok(_) => {
                        let render = |t: &str| format!("SELECT toString(x) FROM {t}");
                        let a = c.fetch_scalar::<String>(render(&table).as_str()).await.map_err(|e| e.to_string());
                        let b = c.fetch_scalar::<String>(render(&copy).as_str()).await.map_err(|e| e.to_string());
                        if a != b {
                            bad.push(format!("{pair}: Value round trip renders {b:?}, typed {a:?}"));
                        }
                    }
                    Err(e) => bad.push(format!("{pair}: insert_value_rows: {e}")),
                }
                c.execute(format!("DROP TABLE {copy}")).await.unwrap();
                c.execute(format!("DROP TABLE {table}")).await.unwrap();
            }
            if c.fetch_scalar::<u64>(format!("SELECT count() FROM {seeded}").as_str()).await.unwrap() != 1 {
                bad.push(format!("{name}: a refused insert left rows"));
            }
            c.execute(format!("DROP TABLE {seeded}")).await.unwrap();
            (bad, pairs, accepted)
        });
    }
    let (mut bad, mut pairs, mut accepted) = (Vec::new(), 0, 0);
    while let Some(r) = tasks.join_next().await {
        let (b, p, a) = r.unwrap();
        bad.extend(b);
        pairs += p;
        accepted += a;
    }
    eprintln!("conformance: {pairs} pairs, {accepted} read and written");
    assert!(bad.is_empty(), "{} of {pairs} pairs fail:\n{}", bad.len(), bad.join("\n"));
}

/// One-column tables for the regression tests below.
async fn one_column(c: &Client, ty: &str) -> String {
    let t = unique_table("types_one");
    c.execute(format!("CREATE TABLE {t} (x {ty}) ENGINE = Memory")).await.unwrap();
    t
}

async fn rendered(c: &Client, t: &str) -> Vec<String> {
    c.fetch_all::<String>(format!("SELECT toString(x) FROM {t}").as_str()).await.unwrap()
}

#[derive(Row, Debug, PartialEq)]
struct F32Row {
    x: f32,
}

/// Was: ``column `x` is BFloat16, not f32`` on insert, though f32 reads BFloat16.
#[tokio::test]
async fn f32_writes_bfloat16_exactly_or_not_at_all() {
    if !common::requires(25, 1, "BFloat16") {
        return;
    }
    let c = client().await;
    let t = one_column(&c, "BFloat16").await;
    c.insert_rows(&t, &[F32Row { x: 1.5 }, F32Row { x: -0.09375 }]).await.unwrap();
    assert_eq!(rendered(&c, &t).await, ["1.5", "-0.09375"]);
    assert_eq!(c.fetch_all::<f32>(format!("SELECT x FROM {t}").as_str()).await.unwrap(), [1.5, -0.09375]);
    // 1.1 has no BFloat16: refused, not rounded.
    let e = c.insert_rows(&t, &[F32Row { x: 1.1 }]).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
    assert!(e.to_string().contains("1.1 does not fit a BFloat16 column exactly"), "{e}");
    assert_eq!(rendered(&c, &t).await.len(), 2);
}

#[derive(Row, Debug, PartialEq)]
struct OptRow {
    x: Option<i32>,
}

/// Was: ``column `x` is Int32, not Option<i32>`` on insert, though it reads Int32.
#[tokio::test]
async fn option_writes_a_column_that_is_not_nullable() {
    let c = client().await;
    let t = one_column(&c, "Int32").await;
    c.insert_rows(&t, &[OptRow { x: Some(-7) }]).await.unwrap();
    assert_eq!(rendered(&c, &t).await, ["-7"]);
    let e = c.insert_rows(&t, &[OptRow { x: Some(1) }, OptRow { x: None }]).await.unwrap_err();
    assert!(e.to_string().contains("row 1") && e.to_string().contains("not Nullable"), "{e}");
    assert_eq!(rendered(&c, &t).await, ["-7"]);
}

#[derive(Row, Debug, PartialEq)]
struct I64Row {
    x: i64,
}

/// Was: ``column `x` is Int8, not i64`` on insert, though i64 reads Int8 (widening).
#[tokio::test]
async fn a_wide_integer_writes_a_narrower_column_when_the_value_fits() {
    let c = client().await;
    for (ty, ok, too_big, shown) in [
        ("Int8", -128i64, 128i64, "-128"),
        ("UInt16", 65_535, -1, "65535"),
        ("UInt32", 4_000_000_000, 1 << 32, "4000000000"),
        ("DateTime('UTC')", 1_704_164_645, -1, "2024-01-02 03:04:05"),
    ] {
        let t = one_column(&c, ty).await;
        c.insert_rows(&t, &[I64Row { x: ok }]).await.unwrap();
        assert_eq!(rendered(&c, &t).await, [shown], "{ty}");
        let e = c.insert_rows(&t, &[I64Row { x: too_big }]).await.unwrap_err();
        assert!(e.to_string().contains(&format!("{too_big} does not fit a {ty} column")), "{ty}: {e}");
        assert_eq!(c.fetch_scalar::<i64>(format!("SELECT x FROM {t}").as_str()).await.unwrap(), ok);
    }
}

#[cfg(feature = "chrono")]
mod naive {
    use super::*;
    use chnative::convert::ext::chrono::{NaiveDate, NaiveDateTime};

    #[derive(Row, Debug, PartialEq)]
    struct Naive {
        x: NaiveDateTime,
    }

    fn at(h: u32, m: u32, s: u32, ms: u32) -> NaiveDateTime {
        NaiveDate::from_ymd_opt(2024, 3, 10).unwrap().and_hms_milli_opt(h, m, s, ms).unwrap()
    }

    /// Was: "inserting a NaiveDateTime … is not supported", though it reads them:
    /// the wall clock of the column's zone (else the server's) both ways.
    #[tokio::test]
    async fn naive_date_times_write_the_wall_clock_they_read() {
        let c = client().await;
        for (ty, shown) in [
            ("DateTime", "2024-03-10 01:02:03"),
            ("DateTime('Asia/Tokyo')", "2024-03-10 01:02:03"),
            ("DateTime64(3)", "2024-03-10 01:02:03.456"),
            ("DateTime64(3, 'America/New_York')", "2024-03-10 01:02:03.456"),
        ] {
            let t = one_column(&c, ty).await;
            let v = at(1, 2, 3, if ty.starts_with("DateTime64") { 456 } else { 0 });
            c.insert_rows(&t, &[Naive { x: v }]).await.unwrap();
            assert_eq!(rendered(&c, &t).await, [shown], "{ty}");
            assert_eq!(c.fetch_all::<Naive>(format!("SELECT x FROM {t}").as_str()).await.unwrap(), [Naive { x: v }]);
        }
        // 02:30 does not exist in New York that day: an error, not a guess.
        let t = one_column(&c, "DateTime('America/New_York')").await;
        let e = c.insert_rows(&t, &[Naive { x: at(2, 30, 0, 0) }]).await.unwrap_err();
        assert!(e.to_string().contains("does not exist in America/New_York"), "{e}");
    }
}

/// A NonZero integer reads and writes its integer's columns; a zero read is an error.
#[tokio::test]
async fn a_zero_is_not_read_into_a_nonzero_integer() {
    let c = client().await;
    let v = c.fetch_scalar::<std::num::NonZeroU64>("SELECT 7::UInt8").await.unwrap();
    assert_eq!(v.get(), 7);
    let e = c.fetch_scalar::<std::num::NonZeroU64>("SELECT 0::UInt32").await.unwrap_err();
    assert!(e.to_string().contains("row 0 is 0, which a std::num::NonZeroU64 cannot hold"), "{e}");
}
