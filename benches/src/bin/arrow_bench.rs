//! `arrow_bench`: reading hits-like rows as Arrow RecordBatches against the column
//! tier, and inserting them from RecordBatches against inserting the blocks.
//!
//! ```text
//! cargo run --release -p chnative-bench --bin arrow_bench [-- ROWS (1000000)] [ROUNDS (3)]
//! ```
//!
//! Against the server on CHNATIVE_TCP_PORT (19000). The table `arrow_bench_hits`
//! (the 105 hits columns of benches/peers/hits_columns.tsv, MergeTree) is created
//! and filled once with `generateRandom(…, 42, 40, 4)`. Client CPU is the
//! process's user + system time (getrusage) over each round; allocations are
//! counted by a counting global allocator. Each read touches every value (a
//! checksum over numbers and string lengths) so every path does the same work.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType as A;
use chnative::proto::ColumnData;
use chnative_arrow::{query_arrow_with, ArrowInsert, ArrowOptions, StringType};

struct Counting;
static CALLS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);
// SAFETY: forwards to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        CALLS.fetch_add(1, Relaxed);
        BYTES.fetch_add(l.size() as u64, Relaxed);
        // SAFETY: the caller's contract is passed on as is.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        CALLS.fetch_add(1, Relaxed);
        BYTES.fetch_add(new as u64, Relaxed);
        // SAFETY: as above.
        unsafe { System.realloc(p, l, new) }
    }
}
#[global_allocator]
static GLOBAL: Counting = Counting;

fn cpu() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
    t(u.ru_utime) + t(u.ru_stime)
}

type Res<T> = Result<T, Box<dyn std::error::Error>>;

const TABLE: &str = "arrow_bench_hits";

fn structure() -> String {
    // Read at run time: benches/peers is a package of its own, so a compile-time
    // include would reach outside this package (`cargo package` verifies it alone).
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/peers/hits_columns.tsv");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let mut f = l.split('\t');
            format!("{} {}", f.next().unwrap(), f.next().unwrap())
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Checksum of a block through the column tier's views.
fn block_sum(block: &chnative::Block) -> u64 {
    let mut s = 0u64;
    for c in block.columns() {
        match c.data() {
            ColumnData::Fixed(f) => {
                let b = f.data().as_bytes();
                s = s.wrapping_add(match f.width() {
                    2 => bytemuck::cast_slice::<u8, u16>(b).iter().map(|&x| x as u64).fold(0, u64::wrapping_add),
                    4 => bytemuck::cast_slice::<u8, u32>(b).iter().map(|&x| x as u64).fold(0, u64::wrapping_add),
                    8 => bytemuck::cast_slice::<u8, u64>(b).iter().copied().fold(0, u64::wrapping_add),
                    _ => b.iter().map(|&x| x as u64).sum(),
                });
            }
            ColumnData::String(st) => {
                let ends: &[u64] = st.offsets().typed().unwrap();
                let mut prev = 0;
                for &e in ends {
                    s = s.wrapping_add(e - prev);
                    prev = e;
                }
            }
            _ => {}
        }
    }
    s
}

/// The same checksum over a record batch.
fn batch_sum(b: &RecordBatch) -> u64 {
    let mut s = 0u64;
    for a in b.columns() {
        s = s.wrapping_add(match a.data_type() {
            A::Int16 => {
                a.as_primitive::<Int16Type>().values().iter().map(|&x| x as u16 as u64).fold(0, u64::wrapping_add)
            }
            A::Int32 => {
                a.as_primitive::<Int32Type>().values().iter().map(|&x| x as u32 as u64).fold(0, u64::wrapping_add)
            }
            A::Int64 => a.as_primitive::<Int64Type>().values().iter().map(|&x| x as u64).fold(0, u64::wrapping_add),
            A::Date32 => a.as_primitive::<Date32Type>().values().iter().map(|&x| x as u64).fold(0, u64::wrapping_add),
            A::Timestamp(..) => {
                a.as_primitive::<TimestampSecondType>().values().iter().map(|&x| x as u64).fold(0, u64::wrapping_add)
            }
            A::Utf8 | A::Binary => {
                let o = a.to_data().buffers()[0].typed_data::<i32>().to_vec();
                o.windows(2).map(|w| (w[1] - w[0]) as u64).fold(0, u64::wrapping_add)
            }
            A::LargeUtf8 => {
                let o = a.as_string::<i64>().value_offsets();
                o.windows(2).map(|w| (w[1] - w[0]) as u64).fold(0, u64::wrapping_add)
            }
            A::Utf8View => a.as_string_view().views().iter().map(|&v| (v as u32) as u64).fold(0, u64::wrapping_add),
            _ => 0,
        });
    }
    s
}

struct Round {
    cpu: f64,
    allocs: u64,
    bytes: u64,
}

fn measure<F: std::future::Future<Output = Res<u64>>>(rt: &tokio::runtime::Runtime, f: F) -> Res<(Round, u64)> {
    let (t, c, b) = (cpu(), CALLS.load(Relaxed), BYTES.load(Relaxed));
    let sum = rt.block_on(f)?;
    Ok((Round { cpu: cpu() - t, allocs: CALLS.load(Relaxed) - c, bytes: BYTES.load(Relaxed) - b }, sum))
}

fn report(name: &str, rounds: &[Round]) {
    let mut cpus: Vec<f64> = rounds.iter().map(|r| r.cpu).collect();
    cpus.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let r = &rounds[rounds.len() - 1];
    println!("| {name} | {:.3} | {} | {:.1} |", cpus[cpus.len() / 2], r.allocs, r.bytes as f64 / (1 << 20) as f64);
}

fn main() -> Res<()> {
    let mut args = std::env::args().skip(1);
    let rows: u64 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(1_000_000);
    let rounds: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(3);
    let port = std::env::var("CHNATIVE_TCP_PORT").unwrap_or_else(|_| "19000".into());
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let url = format!("clickhouse://default@127.0.0.1:{port}/default?compression=lz4");
    let client = rt.block_on(chnative::Client::connect(&url))?;
    let have: u64 = rt.block_on(client.fetch_scalar(
        format!("SELECT count() FROM system.tables WHERE name = '{TABLE}' AND database = currentDatabase()").as_str(),
    ))?;
    let filled: u64 =
        if have == 1 { rt.block_on(client.fetch_scalar(format!("SELECT count() FROM {TABLE}").as_str()))? } else { 0 };
    if filled < rows {
        eprintln!("filling {TABLE} with {rows} rows (generateRandom, seed 42)…");
        let s = structure();
        rt.block_on(client.execute(format!("DROP TABLE IF EXISTS {TABLE}").as_str()))?;
        rt.block_on(
            client.execute(format!("CREATE TABLE {TABLE} ({s}) ENGINE = MergeTree ORDER BY tuple()").as_str()),
        )?;
        rt.block_on(client.execute(
            format!("INSERT INTO {TABLE} SELECT * FROM generateRandom('{s}', 42, 40, 4) LIMIT {rows}").as_str(),
        ))?;
    }
    let sql = format!("SELECT * FROM {TABLE} LIMIT {rows} SETTINGS max_threads = 1");
    let tz = client.server_info().timezone;

    println!("{rows} rows × 105 columns, median client CPU of {rounds} rounds; allocations of the last round\n");
    println!("| read | client CPU (s) | allocations | allocated (MiB) |");
    println!("|---|---|---|---|");
    let mut expect = None;
    let mut tier = Vec::new();
    for _ in 0..rounds {
        let (r, sum) = measure(&rt, async {
            let mut s = client.fetch_blocks(sql.as_str()).await?;
            let mut sum = 0u64;
            while let Some(b) = s.next().await? {
                sum = sum.wrapping_add(block_sum(b));
            }
            Ok(sum)
        })?;
        expect.get_or_insert(sum);
        tier.push(r);
    }
    report("column tier (blocks)", &tier);
    for (kind, name) in [
        (StringType::Utf8, "Arrow, strings as Utf8 (default)"),
        (StringType::LargeUtf8, "Arrow, strings as LargeUtf8"),
        (StringType::Utf8View, "Arrow, strings as Utf8View"),
        (StringType::Binary, "Arrow, strings as Binary"),
    ] {
        let options = ArrowOptions { strings: kind, server_timezone: Some(tz.clone()), ..Default::default() };
        let mut rs = Vec::new();
        for _ in 0..rounds {
            let (r, sum) = measure(&rt, async {
                let mut s = query_arrow_with(&client, sql.as_str(), &options).await?;
                let mut sum = 0u64;
                while let Some(b) = s.next().await? {
                    sum = sum.wrapping_add(batch_sum(&b));
                }
                Ok(sum)
            })?;
            assert_eq!(Some(sum), expect, "{name}: checksum differs from the column tier's");
            rs.push(r);
        }
        report(name, &rs);
    }

    // Insert: the same rows from RecordBatches, and from the blocks, into a Null table.
    let insert_rows = rows.min(200_000);
    let null = format!("arrow_bench_null_{}", std::process::id());
    rt.block_on(client.execute(format!("CREATE TABLE {null} ({}) ENGINE = Null", structure()).as_str()))?;
    let isql = format!("SELECT * FROM {TABLE} LIMIT {insert_rows}");
    let batches = rt.block_on(async {
        query_arrow_with(&client, isql.as_str(), &ArrowOptions::default()).await?.collect().await
    })?;
    let blocks: Vec<chnative::Block> = rt.block_on(async {
        let mut s = client.fetch_blocks(isql.as_str()).await?;
        let mut v = Vec::new();
        while let Some(b) = s.next().await? {
            v.push(b.clone());
        }
        Ok::<_, chnative::Error>(v)
    })?;
    println!("\n{insert_rows} rows inserted into a Null table, median client CPU of {rounds} rounds\n");
    println!("| insert | client CPU (s) | allocations | allocated (MiB) |");
    println!("|---|---|---|---|");
    let mut rs = Vec::new();
    for _ in 0..rounds {
        let (r, _) = measure(&rt, async {
            let mut ins = client.insert_blocks(&null).await?;
            for b in &blocks {
                ins.write(b).await?;
            }
            Ok(ins.end().await?.rows)
        })?;
        rs.push(r);
    }
    report("column tier (blocks)", &rs);
    let mut rs = Vec::new();
    for _ in 0..rounds {
        let (r, _) = measure(&rt, async {
            let mut ins = ArrowInsert::open(&client, &null).await?;
            for b in &batches {
                ins.write(b).await?;
            }
            Ok(ins.end().await?.rows)
        })?;
        rs.push(r);
    }
    report("Arrow RecordBatches", &rs);
    rt.block_on(client.execute(format!("DROP TABLE {null}").as_str()))?;
    Ok(())
}
