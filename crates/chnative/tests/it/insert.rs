//! The column tier's INSERT side against the real server: every supported type
//! from slices (checked value by value by the server against a table filled over
//! HTTP), big inserts split into several Data packets, SELECT → INSERT round
//! trips of whole blocks, header checks, deduplication tokens, server errors and
//! empty inserts. Each runs at every revision in `REVISIONS` (LZ4) plus ZSTD and
//! no compression at the default revision, unless noted.

use crate::common;
use common::*;

use chnative::{Client, Config, DataType, Error, ErrorKind, InsertData, WireUuid};

/// (revision, compression) pairs every test runs at.
fn combos() -> Vec<(u64, &'static str)> {
    let default = *REVISIONS.last().unwrap();
    let mut v: Vec<(u64, &'static str)> = REVISIONS.iter().map(|&r| (r, "lz4")).collect();
    v.push((default, "zstd"));
    v.push((default, "none"));
    v
}

/// A client with a given number of rows per Data packet.
async fn client_rows(revision: u64, compression: &str, insert_block_rows: usize) -> Client {
    let cfg = Config::from_url(&url(&format!("revision={revision}&compression={compression}")))
        .unwrap()
        .insert_block_rows(insert_block_rows);
    Client::connect_with(cfg).await.unwrap_or_else(|e| panic!("connect at {revision}/{compression}: {e}"))
}

/// `SELECT proj FROM a EXCEPT SELECT proj FROM b` both ways must be empty and the
/// counts equal; with a unique id column that proves the tables hold the same rows.
fn assert_same_rows(a: &str, b: &str, proj: &str, what: &str) {
    let ca = q(&format!("SELECT count() FROM {a}"));
    let cb = q(&format!("SELECT count() FROM {b}"));
    assert_eq!(ca, cb, "{what}: row counts differ");
    for (x, y) in [(a, b), (b, a)] {
        // Lossy: the rows may hold bytes that are not UTF-8.
        let diff = String::from_utf8_lossy(&http_bytes(&format!(
            "SELECT count(), groupArray(3)(toString(tuple(*))) FROM (SELECT {proj} FROM {x} EXCEPT DISTINCT SELECT {proj} FROM {y}) FORMAT TSVRaw"
        )))
        .into_owned();
        assert!(diff.starts_with("0\t"), "{what}: rows of {x} missing from {y}: {diff}");
    }
}

/// SplitMix64.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn next128(&mut self) -> u128 {
        (u128::from(self.next()) << 64) | u128::from(self.next())
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

// ---------------------------------------------------------------------------
// Rendering of expected values as SQL literals for `INSERT … VALUES` over HTTP.
// Written independently of the library (no use of its Display impls).

/// A quoted string literal; every byte that is not printable ASCII is `\xHH`.
fn lit_bytes(b: &[u8]) -> String {
    let mut s = String::from("'");
    for &c in b {
        match c {
            b'\'' => s.push_str("\\'"),
            b'\\' => s.push_str("\\\\"),
            0x20..=0x7e => s.push(c as char),
            _ => s.push_str(&format!("\\x{c:02x}")),
        }
    }
    s.push('\'');
    s
}

fn lit_str(s: &str) -> String {
    lit_bytes(s.as_bytes())
}

/// Days since 1970-01-01 to (year, month, day) — H. Hinnant's civil_from_days.
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

fn lit_date(days: u16) -> String {
    let (y, m, d) = civil(i64::from(days));
    format!("'{y:04}-{m:02}-{d:02}'")
}

fn datetime_text(secs: i64) -> String {
    let (y, m, d) = civil(secs.div_euclid(86_400));
    let t = secs.rem_euclid(86_400);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60)
}

fn lit_datetime64_3(ms: i64) -> String {
    format!("'{}.{:03}'", datetime_text(ms.div_euclid(1000)), ms.rem_euclid(1000))
}

fn lit_uuid(u: WireUuid) -> String {
    let h = format!("{:016x}{:016x}", u.high, u.low);
    format!("'{}-{}-{}-{}-{}'", &h[0..8], &h[8..12], &h[12..16], &h[16..20], &h[20..32])
}

/// A decimal with `scale` digits after the point from its raw integer.
fn lit_decimal(raw: i128, scale: u32) -> String {
    let p = 10u128.pow(scale);
    let a = raw.unsigned_abs();
    format!("{}{}.{:0width$}", if raw < 0 { "-" } else { "" }, a / p, a % p, width = scale as usize)
}

fn lit_array(items: impl IntoIterator<Item = String>) -> String {
    format!("[{}]", items.into_iter().collect::<Vec<_>>().join(","))
}

// ---------------------------------------------------------------------------
// 1. Every type from slices.

const TYPES: &[(&str, &str)] = &[
    ("id", "UInt32"),
    ("i8", "Int8"),
    ("i16", "Int16"),
    ("i32", "Int32"),
    ("i64", "Int64"),
    ("u8", "UInt8"),
    ("u16", "UInt16"),
    ("u32", "UInt32"),
    ("u64", "UInt64"),
    ("i128", "Int128"),
    ("u128", "UInt128"),
    ("f32", "Float32"),
    ("f64", "Float64"),
    ("b", "Bool"),
    ("d", "Date"),
    ("dt", "DateTime('UTC')"),
    ("dt64", "DateTime64(3, 'UTC')"),
    ("uuid", "UUID"),
    ("e", "Enum8('lo' = -128, 'a' = 1, 'b' = 2, 'hi' = 127)"),
    ("dec", "Decimal(18, 4)"),
    ("dec128", "Decimal(38, 10)"),
    ("ip", "IPv4"),
    ("fs16", "FixedString(16)"),
    ("fs4", "FixedString(4)"),
    ("s_str", "String"),
    ("s_string", "String"),
    ("s_blob", "String"),
    ("lc", "LowCardinality(String)"),
    ("nu", "Nullable(UInt64)"),
    ("ns", "Nullable(String)"),
    ("lcn", "LowCardinality(Nullable(String))"),
    ("au", "Array(UInt32)"),
    ("aau", "Array(Array(UInt8))"),
    ("as", "Array(String)"),
    ("alc", "Array(LowCardinality(String))"),
    ("ani", "Array(Nullable(Int32))"),
];

/// Rows for the all-types test: one Vec per column, plus the expected literals.
struct AllTypes {
    id: Vec<u32>,
    i8: Vec<i8>,
    i16: Vec<i16>,
    i32: Vec<i32>,
    i64: Vec<i64>,
    u8: Vec<u8>,
    u16: Vec<u16>,
    u32: Vec<u32>,
    u64: Vec<u64>,
    i128: Vec<i128>,
    u128: Vec<u128>,
    f32: Vec<f32>,
    f64: Vec<f64>,
    b: Vec<u8>,
    d: Vec<u16>,
    dt: Vec<u32>,
    dt64: Vec<i64>,
    uuid: Vec<WireUuid>,
    e: Vec<i8>,
    dec: Vec<i64>,
    dec128: Vec<i128>,
    ip: Vec<u32>,
    fs16: Vec<[u8; 16]>,
    fs4: Vec<u8>,
    s_string: Vec<String>,
    blob_offsets: Vec<u64>,
    blob: Vec<u8>,
    nu_nulls: Vec<u8>,
    nu: Vec<u64>,
    ns_nulls: Vec<u8>,
    ns: Vec<String>,
    lcn_nulls: Vec<u8>,
    lcn: Vec<String>,
    au_offsets: Vec<u64>,
    au: Vec<u32>,
    aau_outer: Vec<u64>,
    aau_inner: Vec<u64>,
    aau: Vec<u8>,
    as_offsets: Vec<u64>,
    as_idx: Vec<usize>,
    alc_offsets: Vec<u64>,
    alc_idx: Vec<usize>,
    ani_offsets: Vec<u64>,
    ani_nulls: Vec<u8>,
    ani: Vec<i32>,
    /// Indexes into `pool` for `s_str` and `lc`.
    s_idx: Vec<usize>,
    lc_idx: Vec<usize>,
    pool: Vec<String>,
    /// One `(…)` literal per row, in `TYPES` order.
    values: Vec<String>,
}

fn string_pool(rng: &mut Rng) -> Vec<String> {
    let mut pool: Vec<String> = [
        "",
        "a",
        "hello world",
        "tab\there\nnew line\r\n",
        "quote ' dq \" backslash \\ backtick `",
        "ünïcödé ✓ 😀 日本語",
        "\0nul\0",
        "{}[](),;",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    pool.push("x".repeat(1000));
    for _ in 0..40 {
        let n = rng.below(24) as usize;
        pool.push((0..n).map(|_| (b' ' + rng.below(95) as u8) as char).collect());
    }
    pool
}

fn all_types(rows: usize, seed: u64) -> AllTypes {
    let mut r = Rng(seed);
    let pool = string_pool(&mut r);
    let np = pool.len() as u64;
    let edge = |i: usize, e: &[u64]| e.get(i).copied();
    let mut a = AllTypes {
        id: Vec::new(),
        i8: Vec::new(),
        i16: Vec::new(),
        i32: Vec::new(),
        i64: Vec::new(),
        u8: Vec::new(),
        u16: Vec::new(),
        u32: Vec::new(),
        u64: Vec::new(),
        i128: Vec::new(),
        u128: Vec::new(),
        f32: Vec::new(),
        f64: Vec::new(),
        b: Vec::new(),
        d: Vec::new(),
        dt: Vec::new(),
        dt64: Vec::new(),
        uuid: Vec::new(),
        e: Vec::new(),
        dec: Vec::new(),
        dec128: Vec::new(),
        ip: Vec::new(),
        fs16: Vec::new(),
        fs4: Vec::new(),
        s_string: Vec::new(),
        blob_offsets: Vec::new(),
        blob: Vec::new(),
        nu_nulls: Vec::new(),
        nu: Vec::new(),
        ns_nulls: Vec::new(),
        ns: Vec::new(),
        lcn_nulls: Vec::new(),
        lcn: Vec::new(),
        au_offsets: Vec::new(),
        au: Vec::new(),
        aau_outer: Vec::new(),
        aau_inner: Vec::new(),
        aau: Vec::new(),
        as_offsets: Vec::new(),
        as_idx: Vec::new(),
        alc_offsets: Vec::new(),
        alc_idx: Vec::new(),
        ani_offsets: Vec::new(),
        ani_nulls: Vec::new(),
        ani: Vec::new(),
        s_idx: Vec::new(),
        lc_idx: Vec::new(),
        pool: Vec::new(),
        values: Vec::new(),
    };
    // DateTime64(3) range: 1900-01-01 .. 2299-12-31.
    let dt64_lo: i64 = -2_208_988_800_000;
    let dt64_hi: i64 = 10_413_791_999_999;
    let enums: [(i8, &str); 4] = [(-128, "lo"), (1, "a"), (2, "b"), (127, "hi")];
    for i in 0..rows {
        let mut v: Vec<String> = Vec::new();
        let id = i as u32;
        a.id.push(id);
        v.push(id.to_string());

        let x = edge(i, &[i8::MIN as u64, i8::MAX as u64, 0, u64::MAX]).unwrap_or_else(|| r.next()) as i8;
        a.i8.push(x);
        v.push(x.to_string());
        let x = edge(i, &[i16::MIN as u64, i16::MAX as u64, 0, u64::MAX]).unwrap_or_else(|| r.next()) as i16;
        a.i16.push(x);
        v.push(x.to_string());
        let x = edge(i, &[i32::MIN as u64, i32::MAX as u64, 0, u64::MAX]).unwrap_or_else(|| r.next()) as i32;
        a.i32.push(x);
        v.push(x.to_string());
        let x = edge(i, &[i64::MIN as u64, i64::MAX as u64, 0, u64::MAX]).unwrap_or_else(|| r.next()) as i64;
        a.i64.push(x);
        v.push(x.to_string());
        let x = edge(i, &[0, u8::MAX as u64]).unwrap_or_else(|| r.next()) as u8;
        a.u8.push(x);
        v.push(x.to_string());
        let x = edge(i, &[0, u16::MAX as u64]).unwrap_or_else(|| r.next()) as u16;
        a.u16.push(x);
        v.push(x.to_string());
        let x = edge(i, &[0, u32::MAX as u64]).unwrap_or_else(|| r.next()) as u32;
        a.u32.push(x);
        v.push(x.to_string());
        let x = edge(i, &[0, u64::MAX]).unwrap_or_else(|| r.next());
        a.u64.push(x);
        v.push(x.to_string());
        let x = match i {
            0 => i128::MIN,
            1 => i128::MAX,
            2 => 0,
            3 => -1,
            _ => r.next128() as i128,
        };
        a.i128.push(x);
        v.push(x.to_string());
        let x = match i {
            0 => 0,
            1 => u128::MAX,
            _ => r.next128(),
        };
        a.u128.push(x);
        v.push(x.to_string());

        let f32s = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0, f32::MIN_POSITIVE, f32::MAX, f32::from_bits(1)];
        let x = f32s.get(i).copied().unwrap_or_else(|| {
            let f = f32::from_bits(r.next() as u32);
            if f.is_nan() {
                1.5
            } else {
                f
            }
        });
        a.f32.push(x);
        // From the bits: before 26.x the server parses subnormals, the extremes and about
        // half of random floats' text a little off.
        v.push(format!("reinterpretAsFloat32(toUInt32({}))", x.to_bits()));
        let f64s = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, f64::MIN_POSITIVE, f64::MAX, f64::from_bits(1)];
        let x = f64s.get(i).copied().unwrap_or_else(|| {
            let f = f64::from_bits(r.next());
            if f.is_nan() {
                -2.25
            } else {
                f
            }
        });
        a.f64.push(x);
        v.push(format!("reinterpretAsFloat64(toUInt64({}))", x.to_bits()));

        let x = (r.next() & 1) as u8;
        a.b.push(x);
        v.push(if x == 1 { "true" } else { "false" }.into());
        let x = edge(i, &[0, u16::MAX as u64]).unwrap_or_else(|| r.next()) as u16;
        a.d.push(x);
        v.push(lit_date(x));
        let x = edge(i, &[0, u32::MAX as u64]).unwrap_or_else(|| r.next()) as u32;
        a.dt.push(x);
        v.push(format!("'{}'", datetime_text(i64::from(x))));
        let x = match i {
            0 => dt64_lo,
            1 => dt64_hi,
            2 => 0,
            3 => -1,
            _ => dt64_lo + r.below((dt64_hi - dt64_lo) as u64) as i64,
        };
        a.dt64.push(x);
        v.push(lit_datetime64_3(x));
        let x = match i {
            0 => WireUuid { high: 0, low: 0 },
            1 => WireUuid { high: u64::MAX, low: u64::MAX },
            2 => WireUuid { high: 0x0123_4567_89ab_cdef, low: 0xfedc_ba98_7654_3210 },
            _ => WireUuid { high: r.next(), low: r.next() },
        };
        a.uuid.push(x);
        v.push(lit_uuid(x));
        let (x, name) = enums[r.below(4) as usize];
        a.e.push(x);
        v.push(lit_str(name));
        let x = match i {
            0 => 999_999_999_999_999_999,
            1 => -999_999_999_999_999_999,
            _ => (r.next() % 1_000_000_000_000_000_000) as i64 * if r.next() & 1 == 1 { -1 } else { 1 },
        };
        a.dec.push(x);
        v.push(lit_decimal(i128::from(x), 4));
        let max38 = 10i128.pow(38) - 1;
        let x = match i {
            0 => max38,
            1 => -max38,
            _ => (r.next128() % 10u128.pow(38)) as i128 * if r.next() & 1 == 1 { -1 } else { 1 },
        };
        a.dec128.push(x);
        v.push(lit_decimal(x, 10));
        let x = r.next() as u32;
        a.ip.push(x);
        v.push(format!("'{}.{}.{}.{}'", x >> 24, (x >> 16) & 255, (x >> 8) & 255, x & 255));
        let x: [u8; 16] = r.next128().to_le_bytes();
        a.fs16.push(x);
        v.push(lit_bytes(&x));
        let x: [u8; 4] = (r.next() as u32).to_le_bytes();
        a.fs4.extend_from_slice(&x);
        v.push(lit_bytes(&x));

        // Strings.
        let k = r.below(np) as usize;
        a.s_idx.push(k);
        v.push(lit_str(&pool[k]));
        let s = format!("{}#{i}", pool[r.below(np) as usize]);
        v.push(lit_str(&s));
        a.s_string.push(s);
        let n = if i == 0 { 0 } else { r.below(40) as usize };
        let bytes: Vec<u8> = (0..n).map(|_| r.next() as u8).collect();
        v.push(lit_bytes(&bytes));
        a.blob.extend_from_slice(&bytes);
        a.blob_offsets.push(a.blob.len() as u64);
        let k = r.below(np.min(10)) as usize;
        a.lc_idx.push(k);
        v.push(lit_str(&pool[k]));

        // Nullables.
        let null = r.below(3) == 0;
        let x = r.next();
        a.nu_nulls.push(null as u8);
        a.nu.push(x);
        v.push(if null { "NULL".into() } else { x.to_string() });
        let null = r.below(3) == 0;
        let s = pool[r.below(np) as usize].clone();
        v.push(if null { "NULL".into() } else { lit_str(&s) });
        a.ns_nulls.push(null as u8);
        a.ns.push(s);
        let null = r.below(3) == 0;
        let s = pool[r.below(np.min(6)) as usize].clone();
        v.push(if null { "NULL".into() } else { lit_str(&s) });
        a.lcn_nulls.push(null as u8);
        a.lcn.push(s);

        // Arrays.
        let n = r.below(6);
        let items: Vec<u32> = (0..n).map(|_| r.next() as u32).collect();
        v.push(lit_array(items.iter().map(|x| x.to_string())));
        a.au.extend_from_slice(&items);
        a.au_offsets.push(a.au.len() as u64);
        let outer = r.below(4);
        let mut parts = Vec::new();
        for _ in 0..outer {
            let n = r.below(4);
            let items: Vec<u8> = (0..n).map(|_| r.next() as u8).collect();
            parts.push(lit_array(items.iter().map(|x| x.to_string())));
            a.aau.extend_from_slice(&items);
            a.aau_inner.push(a.aau.len() as u64);
        }
        v.push(lit_array(parts));
        a.aau_outer.push(a.aau_inner.len() as u64);
        let n = r.below(5);
        let idx: Vec<usize> = (0..n).map(|_| r.below(np) as usize).collect();
        v.push(lit_array(idx.iter().map(|&k| lit_str(&pool[k]))));
        a.as_idx.extend_from_slice(&idx);
        a.as_offsets.push(a.as_idx.len() as u64);
        let n = r.below(5);
        let idx: Vec<usize> = (0..n).map(|_| r.below(8) as usize).collect();
        v.push(lit_array(idx.iter().map(|&k| lit_str(&pool[k]))));
        a.alc_idx.extend_from_slice(&idx);
        a.alc_offsets.push(a.alc_idx.len() as u64);
        let n = r.below(5);
        let mut parts = Vec::new();
        for _ in 0..n {
            let null = r.below(3) == 0;
            let x = r.next() as i32;
            a.ani_nulls.push(null as u8);
            a.ani.push(x);
            parts.push(if null { "NULL".into() } else { x.to_string() });
        }
        v.push(lit_array(parts));
        a.ani_offsets.push(a.ani.len() as u64);

        assert_eq!(v.len(), TYPES.len());
        a.values.push(format!("({})", v.join(",")));
    }
    a.pool = pool;
    a
}

/// Columns compared bit for bit (floats as their bits, so NaN and -0 count).
fn all_types_projection() -> String {
    TYPES
        .iter()
        .map(|(n, t)| match *t {
            "Float32" => format!("reinterpretAsUInt32({n}) AS {n}"),
            "Float64" => format!("reinterpretAsUInt64({n}) AS {n}"),
            _ => format!("`{n}`"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn all_types_ddl() -> String {
    let cols: Vec<String> = TYPES.iter().map(|(n, t)| format!("`{n}` {t}")).collect();
    format!("({}) ENGINE = MergeTree ORDER BY id", cols.join(", "))
}

async fn insert_all_types(c: &mut Client, table: &str, a: &AllTypes) -> chnative::Result<chnative::InsertSummary> {
    let s_str: Vec<&str> = a.s_idx.iter().map(|&k| a.pool[k].as_str()).collect();
    let lc: Vec<&str> = a.lc_idx.iter().map(|&k| a.pool[k].as_str()).collect();
    let as_: Vec<&str> = a.as_idx.iter().map(|&k| a.pool[k].as_str()).collect();
    let alc: Vec<&str> = a.alc_idx.iter().map(|&k| a.pool[k].as_str()).collect();
    c.insert(table)
        .column("id", &a.id[..])
        .column("i8", &a.i8[..])
        .column("i16", &a.i16[..])
        .column("i32", &a.i32[..])
        .column("i64", &a.i64[..])
        .column("u8", &a.u8[..])
        .column("u16", &a.u16[..])
        .column("u32", &a.u32[..])
        .column("u64", &a.u64)
        .column("i128", &a.i128[..])
        .column("u128", &a.u128[..])
        .column("f32", &a.f32[..])
        .column("f64", &a.f64[..])
        .column("b", &a.b[..])
        .column("d", &a.d[..])
        .column("dt", &a.dt[..])
        .column("dt64", &a.dt64[..])
        .column("uuid", &a.uuid[..])
        .column("e", &a.e[..])
        .column("dec", &a.dec[..])
        .column("dec128", &a.dec128[..])
        .column("ip", &a.ip[..])
        .column("fs16", &a.fs16[..])
        // FixedString(N) for N other than 16/32 has no slice type: raw Fixed data.
        .column(
            "fs4",
            InsertData::Fixed {
                bytes: &a.fs4,
                width: 4,
                rust: "[u8; 4]",
                accepts: |t| matches!(t, DataType::FixedString(4)),
            },
        )
        .column("s_str", &s_str[..])
        .column("s_string", &a.s_string[..])
        .column("s_blob", InsertData::Blob { offsets: &a.blob_offsets, data: &a.blob })
        .column("lc", &lc[..])
        .column("nu", InsertData::nullable(&a.nu_nulls, &a.nu[..]))
        .column("ns", InsertData::nullable(&a.ns_nulls, &a.ns[..]))
        .column("lcn", InsertData::nullable(&a.lcn_nulls, &a.lcn))
        .column("au", InsertData::array(&a.au_offsets, &a.au[..]))
        .column("aau", InsertData::array(&a.aau_outer, InsertData::array(&a.aau_inner, &a.aau[..])))
        .column("as", InsertData::array(&a.as_offsets, &as_[..]))
        .column("alc", InsertData::array(&a.alc_offsets, &alc[..]))
        .column("ani", InsertData::array(&a.ani_offsets, InsertData::nullable(&a.ani_nulls, &a.ani[..])))
        .send()
        .await
}

#[tokio::test]
async fn every_type_from_slices() {
    let rows = 300;
    let a = all_types(rows, 42);
    let expected = Table::create("ins_all_expected", &all_types_ddl());
    let names: Vec<String> = TYPES.iter().map(|(n, _)| format!("`{n}`")).collect();
    http(&format!(
        "INSERT INTO {} ({}) SETTINGS async_insert = 0 VALUES {}",
        &*expected,
        names.join(", "),
        a.values.join(",\n")
    ));
    assert_eq!(expected.count(), rows as u64);
    // Sanity: the expected table really has the edge values (NaN, -0, NULLs).
    assert_eq!(
        q(&format!("SELECT isNaN(f64), reinterpretAsUInt64(f64), toString(i128) FROM {} WHERE id = 0", &*expected)),
        format!("1\t{}\t{}", f64::NAN.to_bits(), i128::MIN)
    );
    assert_eq!(
        q(&format!("SELECT reinterpretAsUInt32(f32), reinterpretAsUInt64(f64) FROM {} WHERE id = 3", &*expected)),
        format!("{}\t{}", (-0.0f32).to_bits(), (-0.0f64).to_bits())
    );
    let proj = all_types_projection();
    // And the comparison is not vacuous: one row left out is seen.
    assert_eq!(
        q(&format!(
            "SELECT count() FROM (SELECT {proj} FROM {e} EXCEPT DISTINCT SELECT {proj} FROM {e} WHERE id != 5)",
            e = &*expected
        )),
        "1"
    );
    for (rev, comp) in combos() {
        // One Data packet, then 7 (300 rows / 45) so every column is also split.
        for block_rows in [1 << 20, 45] {
            let what = format!("revision {rev}, {comp}, {block_rows} rows per block");
            let t = Table::create("ins_all", &all_types_ddl());
            let mut c = client_rows(rev, comp, block_rows).await;
            let summary = insert_all_types(&mut c, &t, &a).await.unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(summary.rows, rows as u64, "{what}");
            assert_eq!(summary.blocks, rows.div_ceil(block_rows) as u64, "{what}");
            assert_same_rows(&t, &expected, &proj, &what);
            // Per-column spot checks with the server's own rendering.
            assert_eq!(
                q(&format!(
                    "SELECT countIf(isNull(nu)), countIf(isNull(ns)), countIf(isNull(lcn)), sum(length(au)), \
                     sum(length(aau)), sum(length(s_blob)) FROM {}",
                    &*t
                )),
                format!(
                    "{}\t{}\t{}\t{}\t{}\t{}",
                    a.nu_nulls.iter().filter(|&&n| n == 1).count(),
                    a.ns_nulls.iter().filter(|&&n| n == 1).count(),
                    a.lcn_nulls.iter().filter(|&&n| n == 1).count(),
                    a.au.len(),
                    a.aau_inner.len(),
                    a.blob.len()
                ),
                "{what}"
            );
            let one: u8 = c.fetch_scalar("SELECT 1").await.unwrap();
            assert_eq!(one, 1);
        }
    }
}

/// Strings inserted from a `StrView` read by a SELECT (rows split across packets,
/// so offsets are rebased), including bytes that are not UTF-8.
#[tokio::test]
async fn strings_from_a_str_view() {
    // Small granules so that the SELECT returns blocks of max_block_size rows.
    let src = Table::create(
        "ins_sv_src",
        "(id UInt64, s String) ENGINE = MergeTree ORDER BY id SETTINGS index_granularity = 100",
    );
    http(&format!(
        "INSERT INTO {} SELECT number, if(number % 7 = 0, '', concat(toString(number), repeat(char(number % 256), \
         number % 13))) FROM numbers(5000) SETTINGS async_insert = 0",
        &*src
    ));
    for (rev, comp) in combos() {
        let what = format!("revision {rev}, {comp}");
        let dst = Table::create("ins_sv_dst", "(id UInt64, s String) ENGINE = MergeTree ORDER BY id");
        let reader = client_at(rev, comp).await;
        let writer = client_rows(rev, comp, 333).await;
        let mut s = reader
            .fetch_blocks(
                chnative::Query::new(format!("SELECT id, s FROM {} ORDER BY id", &*src))
                    .setting("max_block_size", "1000"),
            )
            .await
            .unwrap();
        let (mut blocks, mut packets) = (0, 0);
        while let Some(block) = s.next().await.unwrap() {
            let ids = block.column("id").unwrap().view().values::<u64>().unwrap();
            let strs = block.column("s").unwrap().view().as_strings().unwrap();
            let sum = writer.insert(&dst).column("id", ids).column("s", strs).send().await.unwrap();
            assert_eq!(sum.rows, ids.len() as u64);
            packets += sum.blocks;
            blocks += 1;
        }
        assert!(blocks >= 5, "{what}: {blocks} blocks");
        assert!(packets >= 15, "{what}: {packets} Data packets");
        assert_same_rows(&src, &dst, "id, s", &what);
    }
}

// ---------------------------------------------------------------------------
// 2. A large insert, split into several Data packets.

#[tokio::test]
async fn million_rows_in_several_packets() {
    let n = 1_000_000u64;
    let ids: Vec<u64> = (0..n).collect();
    let strs: Vec<String> = ids.iter().map(|i| format!("s{i}")).collect();
    // LZ4 once cost about 2 s per million rows here in a debug build (lz4_flex, unoptimised),
    // so the full million goes with ZSTD and uncompressed, and LZ4 with 300k
    // rows; splitting at every revision and compression is also covered by
    // `every_type_from_slices`.
    let default = *REVISIONS.last().unwrap();
    for (rev, comp, n) in [(default, "zstd", n), (REVISIONS[0], "none", n), (default, "lz4", 300_000)] {
        let what = format!("revision {rev}, {comp}, {n} rows");
        let (ids, strs) = (&ids[..n as usize], &strs[..n as usize]);
        let total_len: usize = strs.iter().map(|s| s.len()).sum();
        let t = Table::create("ins_big", "(id UInt64, s String) ENGINE = MergeTree ORDER BY id");
        let mut c = client_rows(rev, comp, 100_000).await;
        let started = std::time::Instant::now();
        let sum = c.insert(&t).column("id", ids).column("s", strs).send().await.unwrap();
        eprintln!("{what}: inserted in {:?}; {sum:?}", started.elapsed());
        assert_eq!(sum.rows, n, "{what}");
        assert_eq!(sum.blocks, n.div_ceil(100_000), "{what}");
        // ClickHouse sends no Progress packets for an INSERT with client data
        // ("we cannot send Progress for regular INSERT (with VALUES) without
        // breaking protocol compatibility", TCPHandler.cpp), so
        // `sum.progress` stays zero; the counts are checked on the server instead.
        assert_eq!(
            q(&format!(
                "SELECT count(), sum(id), sum(length(s)), countIf(s != concat('s', toString(id))), uniqExact(id) FROM {}",
                &*t
            )),
            format!("{n}\t{}\t{total_len}\t0\t{n}", n * (n - 1) / 2),
            "{what}"
        );
        // The server formed parts from the packets (at most one per packet).
        let parts: u64 =
            q(&format!("SELECT count() FROM system.parts WHERE active AND table = '{}'", &*t)).parse().unwrap();
        eprintln!("{what}: {parts} active parts");
        assert!((1..=10).contains(&parts), "{what}: {parts} parts");
        assert_usable(&mut c).await;
    }
}

// ---------------------------------------------------------------------------
// 3. SELECT → INSERT round trip of whole blocks.

const ROUND_TRIP_COLUMNS: &str = "id UInt64, lc LowCardinality(String), lcn LowCardinality(Nullable(String)), \
    alc Array(LowCardinality(String)), ns Nullable(String), m Map(String, UInt64), t Tuple(UInt8, String), \
    ani Array(Nullable(Int32)), nt Tuple(a Nullable(UInt32), b Array(String)), aas Array(Array(String)), \
    f Float64, dec Decimal(18, 4), dt64 DateTime64(3, 'UTC'), u UUID, e Enum8('a' = 1, 'b' = 2), \
    fs FixedString(5), ip6 IPv6, b Bool, i256 Int256, d32 Date32";

#[tokio::test]
async fn select_blocks_round_trip() {
    let a = Table::create(
        "ins_rt_a",
        &format!("({ROUND_TRIP_COLUMNS}) ENGINE = MergeTree ORDER BY id SETTINGS index_granularity = 100"),
    );
    // Random rows with a fixed seed...
    http(&format!(
        "INSERT INTO {} SELECT * REPLACE (rowNumberInAllBlocks() + 1000 AS id) FROM generateRandom('{}', 20240917, 10, 5) \
         LIMIT 2000 SETTINGS async_insert = 0",
        &*a,
        ROUND_TRIP_COLUMNS.replace('\'', "\\'")
    ));
    // ...and hand-written edge rows: NULLs, empties, shared LowCardinality keys.
    http(&format!(
        "INSERT INTO {} SETTINGS async_insert = 0 VALUES \
         (1, '', NULL, [], NULL, {{}}, (0, ''), [], (NULL, []), [], 0, 0, 0, '00000000-0000-0000-0000-000000000000', 'a', '', '::', false, 0, '1900-01-01'), \
         (2, 'x', 'x', ['x', '', 'x'], '', {{'':0, 'k':18446744073709551615}}, (255, 'é\\0'), [NULL, -2147483648, NULL], (4294967295, ['', 'b']), [[], [''], ['a', 'b']], nan, -99999999999999.9999, '2299-12-31 23:59:59.999', 'ffffffff-ffff-ffff-ffff-ffffffffffff', 'b', 'abcde', 'ffff::1', true, -1, '2299-12-31'), \
         (3, 'x', NULL, ['y'], 'z', {{'a':1}}, (1, 'x'), [NULL], (0, []), [['c']], -0., 0.0001, '1900-01-01 00:00:00.000', '01234567-89ab-cdef-fedc-ba9876543210', 'a', '\\0\\0\\0\\0\\0', '1.2.3.4', false, 1, '1970-01-01')",
        &*a
    ));
    assert_eq!(a.count(), 2003);
    let proj =
        "id, lc, lcn, alc, ns, m, t, ani, nt, aas, reinterpretAsUInt64(f), dec, dt64, u, e, fs, ip6, b, i256, d32";

    for (rev, comp) in combos() {
        let what = format!("revision {rev}, {comp}");
        let b = Table::create("ins_rt_b", &format!("AS {}", &*a));
        let reader = client_at(rev, comp).await;
        let writer = client_at(rev, comp).await;
        let mut s = reader
            .fetch_blocks(chnative::Query::new(format!("SELECT * FROM {}", &*a)).setting("max_block_size", "700"))
            .await
            .unwrap();
        let (mut blocks, mut rows) = (0u64, 0u64);
        while let Some(block) = s.next().await.unwrap() {
            if block.rows() == 0 {
                continue;
            }
            let sum = writer.insert(&b).block(block).send().await.unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(sum.rows, block.rows() as u64);
            assert_eq!(sum.blocks, 1);
            blocks += 1;
            rows += sum.rows;
        }
        drop(s);
        assert_eq!(rows, 2003, "{what}");
        assert!(blocks >= 3, "{what}: {blocks} blocks");
        assert_same_rows(&a, &b, proj, &what);
        // And the reader is usable again after the stream ended.
        let one: u8 = reader.fetch_scalar("SELECT 1").await.unwrap();
        assert_eq!(one, 1);
    }
}

// ---------------------------------------------------------------------------
// 4. The client checks columns against the server's header first.

async fn assert_usable(c: &mut Client) {
    let one: u8 = c.fetch_scalar("SELECT 1").await.expect("the connection must be usable after a rejected INSERT");
    assert_eq!(one, 1);
}

#[tokio::test]
async fn header_checks() {
    for (rev, comp) in combos() {
        let what = format!("revision {rev}, {comp}");
        let t = Table::create(
            "ins_hdr",
            "(id UInt64, name String, small UInt8, d UInt32 DEFAULT 7, n Nullable(UInt8), \
             m UInt64 MATERIALIZED id * 2, al UInt64 ALIAS id + 1) ENGINE = MergeTree ORDER BY id",
        );
        let mut c = client_at(rev, comp).await;
        let ids = [1u64, 2, 3];
        let names = ["a", "b", "c"];
        let smalls = [1u8, 2, 3];
        let nulls = [0u8, 1, 0];

        // Unknown column: the server itself rejects the column list.
        let e = c
            .insert(&t)
            .column("id", &ids[..])
            .column("name", &names[..])
            .column("small", &smalls[..])
            .column("n", InsertData::nullable(&nulls, &smalls[..]))
            .column("nope", &ids[..])
            .send()
            .await
            .unwrap_err();
        // (The client lists the columns in the SQL, so the server refuses before the
        // header: NO_SUCH_COLUMN_IN_TABLE.)
        match e.as_server() {
            Some(s) => assert!(s.code == 16 && s.message.contains("nope"), "{what}: {e}"),
            None => panic!("{what}: unknown column gave {e:?}"),
        }
        assert_usable(&mut c).await;

        // Unknown table.
        let e = c.insert("no_such_table_xyz").column("id", &ids[..]).send().await.unwrap_err();
        assert_eq!(e.server_code(), Some(60), "{what}: {e}");
        assert_usable(&mut c).await;

        // Missing columns without a DEFAULT (`small`, `n`): a usage error naming them.
        let e = c.insert(&t).column("id", &ids[..]).column("name", &names[..]).send().await.unwrap_err();
        match e.kind() {
            ErrorKind::InvalidInput => {
                // "missing column(s) without a DEFAULT: small, n (use allow_missing_columns() …)"
                let m = e.to_string();
                let list = m.split_once(": ").map(|(_, r)| r.split(" (").next().unwrap_or(r)).unwrap_or(&m);
                let mut listed: Vec<&str> = list.split(", ").collect();
                listed.sort();
                assert_eq!(listed, ["n", "small"], "{what}: {m}");
            }
            _ => panic!("{what}: missing column gave {e:?}"),
        }
        assert_usable(&mut c).await;

        // Wrong fixed type: u32 into UInt64.
        let ids32 = [1u32, 2, 3];
        let e = c
            .insert(&t)
            .column("id", &ids32[..])
            .column("name", &names[..])
            .column("small", &smalls[..])
            .column("n", InsertData::nullable(&nulls, &smalls[..]))
            .send()
            .await
            .unwrap_err();
        match e.as_type_mismatch() {
            Some(m) => assert_eq!(
                (m.column.as_str(), m.requested.as_str(), m.actual.as_str()),
                ("id", "u32", "UInt64"),
                "{what}"
            ),
            None => panic!("{what}: u32 into UInt64 gave {e:?}"),
        }
        assert_usable(&mut c).await;

        // Strings into UInt8.
        let e = c
            .insert(&t)
            .column("id", &ids[..])
            .column("name", &names[..])
            .column("small", &names[..])
            .column("n", InsertData::nullable(&nulls, &smalls[..]))
            .send()
            .await
            .unwrap_err();
        match e.as_type_mismatch() {
            Some(m) => {
                assert_eq!(m.column, "small", "{what}");
                assert!(m.requested.contains("string"), "{what}: {e}");
                assert_eq!(m.actual, "UInt8", "{what}");
                let text = e.to_string();
                assert!(text.contains("small") && text.contains("UInt8"), "{what}: {text}");
            }
            None => panic!("{what}: strings into UInt8 gave {e:?}"),
        }
        assert_usable(&mut c).await;

        // Plain values into a Nullable column, nullable data into a plain one, array into scalar.
        let off = [1u64, 2, 3];
        for (col, data) in [
            ("n", chnative::fixed(&smalls[..])),
            ("small", InsertData::nullable(&nulls, &smalls[..])),
            ("small", InsertData::array(&off, &smalls[..])),
        ] {
            let mut ins = c.insert(&t).column("id", &ids[..]).column("name", &names[..]);
            ins = match col {
                "n" => ins.column("small", &smalls[..]).column("n", data),
                _ => ins.column("small", data).column("n", InsertData::nullable(&nulls, &smalls[..])),
            };
            let e = ins.send().await.unwrap_err();
            assert!(e.as_type_mismatch().is_some_and(|m| m.column == col), "{what}: {e:?}");
            assert_usable(&mut c).await;
        }

        // Mismatched row counts: caught before anything is sent.
        let e = c
            .insert(&t)
            .column("id", &ids[..])
            .column("name", &names[..2])
            .column("small", &smalls[..])
            .column("n", InsertData::nullable(&nulls, &smalls[..]))
            .send()
            .await
            .unwrap_err();
        assert!(e.kind() == ErrorKind::InvalidInput && e.to_string().contains("name"), "{what}: {e:?}");
        assert_usable(&mut c).await;

        // The same column twice.
        let e = c.insert(&t).column("id", &ids[..]).column("id", &ids[..]).send().await.unwrap_err();
        assert!(e.kind() == ErrorKind::InvalidInput && e.to_string().contains("id"), "{what}: {e:?}");
        assert_usable(&mut c).await;

        // Nothing of the above reached the table.
        assert_eq!(t.count(), 0, "{what}");

        // Leaving out only a column with a DEFAULT works, and the DEFAULT applies.
        let sum = c
            .insert(&t)
            .column("id", &ids[..])
            .column("name", &names[..])
            .column("small", &smalls[..])
            .column("n", InsertData::nullable(&nulls, &smalls[..]))
            .send()
            .await
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(sum.rows, 3);
        assert_eq!(
            q(&format!("SELECT groupArray(toString((id, name, small, d, n, m, al))) FROM (SELECT * , m, al FROM {} ORDER BY id)", &*t)),
            "['(1,\\'a\\',1,7,1,2,2)','(2,\\'b\\',2,7,NULL,4,3)','(3,\\'c\\',3,7,3,6,4)']",
            "{what}"
        );

        // allow_missing_columns(): the rest get their type's default.
        let ids2 = [10u64, 11];
        let sum = c.insert(&t).column("id", &ids2[..]).allow_missing_columns().send().await.unwrap();
        assert_eq!(sum.rows, 2);
        assert_eq!(
            q(&format!("SELECT groupArray(toString((id, name, small, d, n, m))) FROM (SELECT *, m FROM {} WHERE id >= 10 ORDER BY id)", &*t)),
            "['(10,\\'\\',0,7,NULL,20)','(11,\\'\\',0,7,NULL,22)']",
            "{what}"
        );
        // A column with a DEFAULT given explicitly overrides it.
        let ds = [70u32];
        c.insert(&t).column("id", &[20u64][..]).column("d", &ds[..]).allow_missing_columns().send().await.unwrap();
        assert_eq!(q(&format!("SELECT d FROM {} WHERE id = 20", &*t)), "70", "{what}");
        assert_eq!(t.count(), 6, "{what}");
        assert_usable(&mut c).await;
    }
}

// ---------------------------------------------------------------------------
// 5. Deduplication tokens.

#[tokio::test]
async fn deduplication_token() {
    for (rev, comp) in combos() {
        let what = format!("revision {rev}, {comp}");
        let t = Table::create(
            "ins_dedup",
            "(id UInt64, s String) ENGINE = MergeTree ORDER BY id SETTINGS non_replicated_deduplication_window = 100",
        );
        let mut c = client_rows(rev, comp, 300).await;
        let ids: Vec<u64> = (0..1000).collect();
        let strs: Vec<String> = ids.iter().map(|i| format!("v{i}")).collect();
        async fn ins(c: &mut Client, t: &str, ids: &[u64], strs: &[String], tok: &str) -> chnative::InsertSummary {
            c.insert(t).column("id", ids).column("s", strs).deduplication_token(tok).send().await.unwrap()
        }
        // 1000 rows in four Data packets.
        let sum = ins(&mut c, &t, &ids, &strs, "tok-1").await;
        assert_eq!(sum.blocks, 4);
        assert_eq!(t.count(), 1000, "{what}");
        ins(&mut c, &t, &ids, &strs, "tok-1").await;
        assert_eq!(t.count(), 1000, "{what}: the same token must be stored once");
        ins(&mut c, &t, &ids, &strs, "tok-2").await;
        assert_eq!(t.count(), 2000, "{what}: a new token stores again");
        ins(&mut c, &t, &ids, &strs, "tok-1").await;
        assert_eq!(t.count(), 2000, "{what}: tok-1 is still in the window");
        // The token decides, not the data: other rows under a used token are dropped.
        let (one, one_s) = ([5000u64], ["first"]);
        let (two, two_s) = ([6000u64], ["second"]);
        c.insert(&t).column("id", &one[..]).column("s", &one_s[..]).deduplication_token("tok-3").send().await.unwrap();
        assert_eq!(t.count(), 2001, "{what}");
        c.insert(&t).column("id", &two[..]).column("s", &two_s[..]).deduplication_token("tok-3").send().await.unwrap();
        assert_eq!(t.count(), 2001, "{what}: other data under a used token is dropped");
        // But the server's block id is the token *and the number of Data packets*
        // (observed on 26.9): the same token with a different packet count is new.
        // So a retry is only deduplicated if it is split the same way (same rows,
        // same `insert_block_rows`) -- the one-row `tok-2` INSERT is stored.
        // Before 26.2 (observed on 24.8 and 25.8) block k of an INSERT has the id
        // `<token>_k`: a one-packet INSERT under a token matches the first packet
        // of an earlier one and is dropped.
        let packets_count = version() >= (26, 2, 0);
        let (after_tok2, after_one_packet) = if packets_count { (2002, 3002) } else { (2001, 2001) };
        c.insert(&t).column("id", &one[..]).column("s", &one_s[..]).deduplication_token("tok-2").send().await.unwrap();
        assert_eq!(t.count(), after_tok2, "{what}: tok-2 was used by a 4-packet INSERT, this one has 1 packet");
        let mut c1 = client_rows(rev, comp, 1 << 20).await;
        ins(&mut c1, &t, &ids, &strs, "tok-1").await;
        assert_eq!(t.count(), after_one_packet, "{what}: tok-1 again but in one packet instead of four");
        ins(&mut c1, &t, &ids, &strs, "tok-1").await;
        assert_eq!(t.count(), after_one_packet, "{what}: and that retried in one packet is deduplicated");
        // Without a token, identical data is deduplicated by its hash on such a table.
        c.insert(&t).column("id", &two[..]).column("s", &two_s[..]).send().await.unwrap();
        assert_eq!(t.count(), after_one_packet + 1, "{what}");
        c.insert(&t).column("id", &two[..]).column("s", &two_s[..]).send().await.unwrap();
        assert_eq!(
            t.count(),
            after_one_packet + 1,
            "{what}: identical blocks without a token are deduplicated by hash"
        );
        let copies = if packets_count { 3 } else { 2 };
        assert_eq!(
            q(&format!("SELECT sum(id) FROM {} WHERE id < 1000", &*t)),
            (copies * 999 * 1000 / 2).to_string(),
            "{what}"
        );
        assert_usable(&mut c).await;
    }
}

// ---------------------------------------------------------------------------
// 6. A server-side error during the INSERT.

#[tokio::test]
async fn constraint_violation_is_a_server_error() {
    let default = *REVISIONS.last().unwrap();
    let n = 200_000u64;
    let big: Vec<String> = (0..n).map(|i| format!("{i:040}")).collect();
    for (rev, comp) in combos() {
        let what = format!("revision {rev}, {comp}");
        let t = Table::create(
            "ins_check",
            "(x UInt64, s String, CONSTRAINT c CHECK x < 100) ENGINE = MergeTree ORDER BY x",
        );
        let mut c = client_rows(rev, comp, 1000).await;
        let good: Vec<u64> = (0..50).collect();
        let good_s: Vec<&str> = good.iter().map(|_| "ok").collect();
        c.insert(&t).column("x", &good).column("s", &good_s).send().await.unwrap();

        // One bad value in a single block.
        let xs = [1u64, 2, 100, 3];
        let ss = ["a", "b", "c", "d"];
        let e = c.insert(&t).column("x", &xs[..]).column("s", &ss[..]).send().await.unwrap_err();
        match e.as_server() {
            Some(s) => {
                assert_eq!(s.code, 469, "{what}: {e}");
                assert!(s.message.contains("Constraint `c`") && s.message.contains("x = 100"), "{what}: {e}");
            }
            None => panic!("{what}: expected a server error, got {e:?}"),
        }
        assert_eq!(e.server_code(), Some(469));
        assert!(c.is_usable(), "{what}");
        assert_usable(&mut c).await;
        assert_eq!(t.count(), 50, "{what}");

        // Multi-packet INSERTs (about 10 MB, 200 packets) at the default revision
        // with LZ4 and uncompressed only, to keep the test fast in a debug build.
        if !(rev == default && comp != "zstd") {
            continue;
        }
        // A violation in the first of many Data packets: the server answers with the
        // exception, skips the packets that follow it (TCPHandler::skipData), and
        // the connection stays in step.
        let mut xs: Vec<u64> = (0..n).map(|i| i % 100).collect();
        xs[10] = 1_000;
        let e = c.insert(&t).column("x", &xs).column("s", &big).send().await.unwrap_err();
        assert_eq!(e.server_code(), Some(469), "{what}: {e}");
        assert_usable(&mut c).await;
        assert_eq!(t.count(), 50, "{what}: the failed INSERT stored rows");

        // A violation in the last packet: nothing is stored either, because the
        // server squashes the packets into blocks of min_insert_block_size_rows
        // (about 1M) before it checks and writes; a bigger INSERT can be stored
        // in part.
        let mut xs: Vec<u64> = (0..n).map(|i| i % 100).collect();
        xs[n as usize - 1] = 1_000;
        let e = c.insert(&t).column("x", &xs).column("s", &big).send().await.unwrap_err();
        assert_eq!(e.server_code(), Some(469), "{what}: {e}");
        assert_usable(&mut c).await;
        assert_eq!(t.count(), 50, "{what}: rows of earlier packets were stored");
    }
}

// ---------------------------------------------------------------------------
// 7. Zero rows.

#[tokio::test]
async fn empty_insert() {
    for (rev, comp) in combos() {
        let what = format!("revision {rev}, {comp}");
        let t = Table::create("ins_empty", "(id UInt64, s String, a Array(UInt8)) ENGINE = MergeTree ORDER BY id");
        let mut c = client_at(rev, comp).await;
        let ids: [u64; 0] = [];
        let strs: [&str; 0] = [];
        let offs: [u64; 0] = [];
        let elems: [u8; 0] = [];
        let sum = c
            .insert(&t)
            .column("id", &ids[..])
            .column("s", &strs[..])
            .column("a", InsertData::array(&offs, &elems[..]))
            .send()
            .await
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!((sum.rows, sum.blocks), (0, 0), "{what}");
        assert_eq!(t.count(), 0, "{what}");
        assert_usable(&mut c).await;
        // The header is still checked with no rows.
        let e = c.insert(&t).column("id", &strs[..]).allow_missing_columns().send().await.unwrap_err();
        assert!(e.kind() == chnative::ErrorKind::TypeMismatch, "{what}: {e:?}");
        assert_usable(&mut c).await;
        // No columns at all is a usage error.
        let e = c.insert(&t).send().await.unwrap_err();
        assert!(e.kind() == chnative::ErrorKind::InvalidInput, "{what}: {e:?}");
        assert_usable(&mut c).await;
    }
}

// ---------------------------------------------------------------------------
// async_insert interplay: the client sends async_insert = 0 unless told otherwise.

#[tokio::test]
async fn async_insert_setting() {
    for (rev, comp) in combos() {
        let what = format!("revision {rev}, {comp}");
        let t = Table::create("ins_async", "(id UInt64) ENGINE = MergeTree ORDER BY id");
        let mut c = client_at(rev, comp).await;
        let ids: Vec<u64> = (0..100).collect();
        // Default: synchronous (the client sends async_insert = 0), the rows are
        // there when send() returns although the server defaults to async_insert = 1.
        c.insert(&t).column("id", &ids).send().await.unwrap();
        assert_eq!(t.count(), 100, "{what}");
        // Asynchronous, waiting for the flush: the rows are there too.
        let sum = c
            .insert(&t)
            .column("id", &ids)
            .setting("async_insert", "1")
            .setting("wait_for_async_insert", "1")
            .setting("async_insert_busy_timeout_max_ms", "100")
            .send()
            .await
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(sum.rows, 100, "{what}");
        assert_eq!(t.count(), 200, "{what}");
        // Fire and forget: the INSERT returns before the rows are stored.
        let sum = c
            .insert(&t)
            .column("id", &ids)
            .setting("async_insert", "1")
            .setting("wait_for_async_insert", "0")
            .setting("async_insert_busy_timeout_min_ms", "2000")
            .setting("async_insert_busy_timeout_max_ms", "2000")
            .send()
            .await
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(sum.rows, 100, "{what}");
        let right_after = t.count();
        // This server has no asynchronous insert queue ("Cannot flush asynchronous
        // insert queue because it is not initialized"), so async_insert = 1 may well
        // be synchronous here; wait up to 5 s for the rows either way.
        let _ = http_try("SYSTEM FLUSH ASYNC INSERT QUEUE");
        let mut flushed = t.count();
        for _ in 0..50 {
            if flushed == 300 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            flushed = t.count();
        }
        eprintln!("{what}: fire-and-forget async insert: {right_after} rows right after, {flushed} later");
        assert_eq!(flushed, 300, "{what}");
        assert_usable(&mut c).await;
    }
}

// ---------------------------------------------------------------------------
// Values of the right width that the column type cannot hold.

#[tokio::test]
async fn values_the_type_cannot_hold() {
    for (rev, comp) in combos() {
        let what = format!("revision {rev}, {comp}");
        let t = Table::create(
            "ins_vals",
            "(id UInt64, e Enum8('neg' = -3, 'a' = 1), e16 Enum16('big' = 1000, 'b' = -1000), b Bool, \
             ne Nullable(Enum8('a' = 1)), ae Array(Enum8('a' = 1, 'b' = 2))) ENGINE = MergeTree ORDER BY id",
        );
        let mut c = client_at(rev, comp).await;
        let good_e = [-3i8, 1, 1];
        let good_e16 = [1000i16, -1000, 1000];
        let good_b = [0u8, 1, 1];
        let ne_nulls = [0u8, 1, 0];
        let ne = [1i8, 0, 1]; // 0 is no enum value, but that row is NULL
        let ae = [1i8, 2, 1]; // rows: [1], [], [2, 1]
        async fn ins(
            c: &mut Client,
            t: &str,
            e: &[i8],
            e16: &[i16],
            b: &[u8],
            ne: (&[u8], &[i8]),
            ae: &[i8],
        ) -> chnative::Result<chnative::InsertSummary> {
            let ids = [1u64, 2, 3];
            let ae_off = [1u64, 1, 3];
            c.insert(t)
                .column("id", &ids[..])
                .column("e", e)
                .column("e16", e16)
                .column("b", b)
                .column("ne", InsertData::nullable(ne.0, ne.1))
                .column("ae", InsertData::array(&ae_off, ae))
                .send()
                .await
        }
        // Each bad value is refused before any data is sent, naming the column.
        type Case<'a> = (&'a str, &'a [i8], &'a [i16], &'a [u8], &'a [i8], &'a [i8], &'a str);
        let cases: [Case; 5] = [
            ("e", &[-3, 5, 1], &good_e16, &good_b, &ne, &ae, "5"),
            ("e16", &good_e, &[1000, 999, 1000], &good_b, &ne, &ae, "999"),
            ("b", &good_e, &good_e16, &[0, 1, 2], &ne, &ae, "2"),
            ("ne", &good_e, &good_e16, &good_b, &[1, 0, 7], &ae, "7"),
            ("ae", &good_e, &good_e16, &good_b, &ne, &[1, 3, 2], "3"),
        ];
        for (col, e, e16, b, ne_vals, ae_vals, v) in cases {
            let err = ins(&mut c, &t, e, e16, b, (&ne_nulls, ne_vals), ae_vals).await.unwrap_err();
            let m = err.to_string();
            assert_eq!(err.kind(), ErrorKind::InvalidInput, "{what}: bad value in {col} gave {err:?}");
            assert!(m.contains(&format!("`{col}`")) && m.contains(v), "{what}: {m}");
            assert_usable(&mut c).await;
        }
        assert_eq!(t.count(), 0, "{what}");
        // Valid values, including a placeholder at a NULL row, go in and read back.
        ins(&mut c, &t, &good_e, &good_e16, &good_b, (&ne_nulls, &ne), &ae)
            .await
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(
            q(&format!("SELECT groupArray(toString((e, e16, b, ne, ae))) FROM (SELECT * FROM {} ORDER BY id)", &*t)),
            "['(\\'neg\\',\\'big\\',false,\\'a\\',[\\'a\\'])','(\\'a\\',\\'b\\',true,NULL,[])','(\\'a\\',\\'big\\',true,\\'a\\',[\\'b\\',\\'a\\'])']",
            "{what}"
        );
        // A hand-made Fixed column with width 0 is a usage error, not a panic.
        let err = c
            .insert(&t)
            .column("id", InsertData::Fixed { bytes: &[], width: 0, rust: "()", accepts: |_| true })
            .allow_missing_columns()
            .send()
            .await
            .unwrap_err();
        assert!(err.kind() == chnative::ErrorKind::InvalidInput, "{what}: {err:?}");
        assert_usable(&mut c).await;
    }
}

#[tokio::test]
async fn fixed_strings_bulk_insert() {
    let c = client().await;
    let t = unique_table("ins_fixed");
    c.execute(
        format!("CREATE TABLE {t} (s FixedString(4), l LowCardinality(FixedString(2))) ENGINE = Memory").as_str(),
    )
    .await
    .unwrap();
    let s = b"abcd\0\0\0\0xy\0\0\xff\x00\x01\x02";
    let l = b"aabbaa\0\0";
    c.insert(&t)
        .column("s", chnative::InsertData::fixed_strings(s, 4))
        .column("l", chnative::InsertData::fixed_strings(l, 2))
        .send()
        .await
        .unwrap();
    assert_eq!(
        http(&format!("SELECT hex(s), hex(l) FROM {t} FORMAT TSV")),
        "61626364\t6161\n00000000\t6262\n78790000\t6161\nFF000102\t0000\n"
    );
    let err = c.insert(&t).column("s", chnative::InsertData::fixed_strings(b"abc", 3)).send().await.unwrap_err();
    assert!(err.kind() == chnative::ErrorKind::TypeMismatch, "{err:?}");
    let one: u8 = c.fetch_scalar("SELECT 1").await.unwrap();
    assert_eq!(one, 1);
    c.execute(format!("DROP TABLE {t}").as_str()).await.unwrap();
}

/// Column data that does not fit its type is refused when the column is built,
/// with an error naming the column, the type and the problem. Before, two u32
/// values were accepted as a UInt64 column and only the server refused the
/// INSERT (code 432).
#[tokio::test]
async fn column_data_that_does_not_fit_its_type_is_refused_before_sending() {
    use chnative::{Block, Column};
    use chnative_proto::column::{ColumnData, Layout};
    use chnative_proto::wire::Reader;
    use chnative_proto::BufferPool;

    let mut c = client().await;
    let t = Table::create("ins_unfit", "(v UInt64) ENGINE = Memory");
    let mut pool = BufferPool::new();
    let mut data = ColumnData::for_type(&DataType::UInt32, &mut pool).unwrap();
    let two_u32s = [1u8, 0, 0, 0, 2, 0, 0, 0];
    data.read_data(&mut Reader::new(&two_u32s), 2, None, Layout::for_revision(54492), &mut pool).unwrap();
    match Column::new("v", "UInt64", data) {
        Ok(col) => {
            let block = Block::from_columns(vec![col]).unwrap();
            let sent = c.insert(&t).block(&block).send().await;
            panic!("Column::new accepted 4-byte values as UInt64; the INSERT then gave {sent:?}");
        }
        Err(e) => {
            let msg = e.to_string();
            assert_eq!(msg, "column `v` (UInt64): values are 4 bytes wide, UInt64 needs 8");
            assert_eq!(Error::from(e).kind(), ErrorKind::InvalidInput);
        }
    }
    assert_eq!(t.count(), 0);
    assert_usable(&mut c).await;
}

/// A user's column mistake is a usage error, not a protocol violation, and the
/// connection stays usable.
#[tokio::test]
async fn invalid_insert_data_is_a_usage_error() {
    let mut c = client().await;
    let t = Table::create("ins_invalid", "(a Array(UInt8)) ENGINE = Memory");
    let elems = [1u8, 2];
    let err = c.insert(&t).column("a", InsertData::array(&[1, 3], &elems[..])).send().await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("column `a`") && msg.contains("array offsets end at 3"), "{msg}");
    assert_eq!(t.count(), 0);
    assert_usable(&mut c).await;
}

/// An INSERT from slices is split into blocks of about `insert_block_bytes` (8 MiB by
/// default), within `insert_block_rows`; the rows arrive whole either way.
#[tokio::test]
async fn inserts_are_split_into_blocks_by_bytes() {
    let ids: Vec<u64> = (0..200_000).collect();
    let names: Vec<String> = ids.iter().map(|i| format!("{i:040}")).collect();
    // 8 + 40 + 8 (offset) = 56 bytes a row: 11.2 MB in all.
    for (bytes, rows_cap, want_blocks) in [(None, None, 2), (Some(1 << 20), None, 11), (Some(1 << 20), Some(5000), 40)]
    {
        let mut cfg = Config::from_url(&url("")).unwrap();
        if let Some(b) = bytes {
            cfg = cfg.insert_block_bytes(b);
        }
        if let Some(r) = rows_cap {
            cfg = cfg.insert_block_rows(r);
        }
        let c = Client::connect_with(cfg).await.unwrap();
        let t = unique_table("ins_blocks");
        http(&format!("CREATE TABLE {t} (id UInt64, s String) ENGINE = MergeTree ORDER BY id"));
        let s = c.insert(&t).column("id", &ids).column("s", &names).send().await.unwrap();
        assert_eq!((s.rows, s.blocks), (200_000, want_blocks), "{bytes:?} {rows_cap:?}");
        assert_eq!(
            http(&format!("SELECT count(), sum(id), countIf(s = leftPad(toString(id), 40, '0')) FROM {t} FORMAT TSV"))
                .trim(),
            "200000\t19999900000\t200000"
        );
        http(&format!("DROP TABLE {t}"));
    }
}

/// `Insert::values` takes every Rust type typed rows write (here Option, Vec, BTreeMap, tuples,
/// LowCardinality strings and Date days), next to plain columns; the stored
/// values are the server's own rendering of what was sent. A type that does not fit the column
/// is refused before any data is sent, and the connection stays usable.
#[tokio::test]
async fn values_columns_take_every_row_type() {
    let t = Table::create(
        "ins_values",
        "(id UInt64, tags Array(String), score Nullable(Float64), m Map(String, UInt32), \
         pair Tuple(String, Int8), lc LowCardinality(String), day Date) ENGINE = MergeTree ORDER BY id",
    );
    let c = client().await;
    let ids = [1u64, 2, 3];
    let tags = [vec!["a".to_string()], vec![], vec!["b".to_string(), "c".to_string()]];
    let score = [Some(0.5f64), None, Some(2.0)];
    let m: Vec<std::collections::BTreeMap<String, u32>> =
        vec![[("x".to_string(), 1)].into(), Default::default(), [("y".to_string(), 2), ("z".to_string(), 3)].into()];
    let pair = [("p".to_string(), -1i8), ("q".to_string(), 0), ("r".to_string(), 127)];
    let lc = ["u", "v", "u"];
    let day = [0u16, 19_000, 20_000];
    let s = c
        .insert(&t)
        .column("id", &ids[..])
        .values("tags", &tags)
        .values("score", &score)
        .values("m", &m)
        .values("pair", &pair)
        .values("lc", &lc)
        .values("day", &day)
        .send()
        .await
        .unwrap();
    assert_eq!(s.rows, 3);
    assert_eq!(
        http(&format!("SELECT id, tags, score, m, pair, lc, day FROM {} ORDER BY id FORMAT TSV", t.0)),
        "1\t['a']\t0.5\t{'x':1}\t('p',-1)\tu\t1970-01-01\n\
         2\t[]\t\\N\t{}\t('q',0)\tv\t2022-01-08\n\
         3\t['b','c']\t2\t{'y':2,'z':3}\t('r',127)\tu\t2024-10-04\n"
    );
    // A String value for a Float64 column: refused by the header, nothing sent.
    let words = ["x", "y", "z"];
    let e = c.insert(&t).column("id", &ids[..]).values("score", &words).send().await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TypeMismatch, "{e}");
    assert!(e.to_string().contains("column `score`"), "{e}");
    // A column the table does not have: the server refuses the statement.
    let e = c.insert(&t).column("id", &ids[..]).values("nope", &words).send().await.unwrap_err();
    assert!(e.to_string().contains("nope"), "{e}");
    // Unequal lengths.
    let e = c.insert(&t).column("id", &ids[..]).values("tags", &tags[..2]).send().await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
    assert_eq!(t.count(), 3);
    assert_eq!(c.fetch_scalar::<u64>("SELECT toUInt64(7)").await.unwrap(), 7);
}
