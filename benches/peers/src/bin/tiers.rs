//! `tiers`: chnative's read tiers alone on the hits table, for profiling the row
//! mapping (the full comparison with the peers is workload (a), or (h) on its own, of chnative-peers).
//!
//! `cargo run --release --bin tiers -- [ROWS (1000000)] [ROUNDS (3)]`, against the
//! server on CHNATIVE_TCP_PORT (the hits table must exist: run chnative-peers once).

#[allow(dead_code)]
#[path = "../ch_rows.rs"]
mod ch_rows;
#[allow(dead_code)]
#[path = "../hits.rs"]
mod hits;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use ch_rows::{ChBorrowed, ChOwned};

struct Counting;
static CALLS: AtomicU64 = AtomicU64::new(0);
// SAFETY: forwards to the system allocator unchanged; only counts calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        CALLS.fetch_add(1, Relaxed);
        // SAFETY: the caller's contract is passed on as is.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(p, l) }
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

async fn run(rows: u64, rounds: usize) -> Res<()> {
    let port = std::env::var("CHNATIVE_TCP_PORT").unwrap_or_else(|_| "19000".into());
    let c =
        chnative::Client::connect(&format!("clickhouse://default@127.0.0.1:{port}/default?compression=none")).await?;
    let sql = format!("SELECT * FROM hits LIMIT {rows}");
    let only = std::env::var("TIERS_ONLY").unwrap_or_default();
    if only == "inserter" {
        // The (i) workload's chnative inserter alone: 100k rows from owned copies.
        let mut s = c.query::<ChOwned>("SELECT * FROM hits LIMIT 100000").await?;
        let mut owned = Vec::new();
        while let Some(r) = s.next().await? {
            owned.push(r);
        }
        drop(s);
        let rows: Vec<ChBorrowed<'_>> = owned.iter().map(ChBorrowed::from_owned).collect();
        let table = format!("hits_tiers_null_{}", std::process::id());
        c.execute(format!("CREATE TABLE {table} ({}) ENGINE = Null", hits::structure()).as_str()).await?;
        for _ in 0..rounds {
            let (t, a) = (cpu(), CALLS.load(Relaxed));
            let mut ins = c.inserter::<ChBorrowed<'_>>(&table).await?;
            for r in &rows {
                ins.write(r).await?;
            }
            let n = ins.end().await?.rows;
            println!("inserter         {n} rows {:.3} s cpu {} allocs", cpu() - t, CALLS.load(Relaxed) - a);
        }
        // The same with one inserter kept across rounds (flushing each round): the
        // cost of the transposition into buffers that are already there.
        let mut ins = c.inserter::<ChBorrowed<'_>>(&table).await?;
        for _ in 0..rounds {
            let (t, a) = (cpu(), CALLS.load(Relaxed));
            for r in &rows {
                ins.write(r).await?;
            }
            ins.flush().await?;
            println!("inserter, warm   {} rows {:.3} s cpu {} allocs", rows.len(), cpu() - t, CALLS.load(Relaxed) - a);
        }
        ins.end().await?;
        c.execute(format!("DROP TABLE {table}").as_str()).await?;
        return Ok(());
    }
    let runs = |name: &str| only.is_empty() || only.contains(name);
    if runs("u64") {
        // One narrow column: what a row costs besides its fields.
        #[derive(chnative::Row)]
        struct Number {
            number: u64,
        }
        let sql = format!("SELECT number FROM numbers({})", rows * 20);
        for _ in 0..rounds {
            let (t, a) = (cpu(), CALLS.load(Relaxed));
            let mut s = c.query::<Number>(sql.as_str()).await?;
            let (mut n, mut sum) = (0u64, 0u64);
            while let Some(r) = s.next().await? {
                sum = sum.wrapping_add(r.number);
                n += 1;
            }
            drop(s);
            println!(
                "u64 next         {n} rows {:.3} s cpu {} allocs sum {sum:#x}",
                cpu() - t,
                CALLS.load(Relaxed) - a
            );
            let (t, a) = (cpu(), CALLS.load(Relaxed));
            let mut s = c.query::<Number>(sql.as_str()).await?;
            let (mut n, mut sum) = (0u64, 0u64);
            while let Some(rows) = s.next_block().await? {
                for r in rows {
                    sum = sum.wrapping_add(r?.number);
                    n += 1;
                }
            }
            drop(s);
            println!(
                "u64 next_block   {n} rows {:.3} s cpu {} allocs sum {sum:#x}",
                cpu() - t,
                CALLS.load(Relaxed) - a
            );
            let (t, a) = (cpu(), CALLS.load(Relaxed));
            let mut s = c.stream(sql.as_str()).await?;
            let (mut n, mut sum) = (0u64, 0u64);
            while let Some(b) = s.next().await? {
                for v in b.columns()[0].view().values::<u64>()? {
                    sum = sum.wrapping_add(*v);
                }
                n += b.rows() as u64;
            }
            drop(s);
            println!(
                "u64 columns      {n} rows {:.3} s cpu {} allocs sum {sum:#x}",
                cpu() - t,
                CALLS.load(Relaxed) - a
            );
        }
        return Ok(());
    }
    for _ in 0..rounds {
        if runs("columns") {
            let (t, a) = (cpu(), CALLS.load(Relaxed));
            let mut s = c.stream(sql.as_str()).await?;
            let mut n = 0u64;
            while let Some(b) = s.next().await? {
                n += b.rows() as u64;
            }
            drop(s);
            println!("columns          {n} rows {:.3} s cpu {} allocs", cpu() - t, CALLS.load(Relaxed) - a);
        }
        if runs("str") {
            let (t, a) = (cpu(), CALLS.load(Relaxed));
            let mut s = c.query::<ChBorrowed<'_>>(sql.as_str()).await?;
            let (mut n, mut sum) = (0u64, 0u64);
            while let Some(r) = s.next().await? {
                sum = sum.wrapping_add(r.checksum());
                n += 1;
            }
            drop(s);
            println!(
                "typed &str       {n} rows {:.3} s cpu {} allocs sum {sum:#x}",
                cpu() - t,
                CALLS.load(Relaxed) - a
            );
        }
        if runs("blocks") {
            let (t, a) = (cpu(), CALLS.load(Relaxed));
            let mut s = c.query::<ChBorrowed<'_>>(sql.as_str()).await?;
            let (mut n, mut sum) = (0u64, 0u64);
            while let Some(rows) = s.next_block().await? {
                for r in rows {
                    sum = sum.wrapping_add(r?.checksum());
                    n += 1;
                }
            }
            drop(s);
            println!(
                "typed &str block {n} rows {:.3} s cpu {} allocs sum {sum:#x}",
                cpu() - t,
                CALLS.load(Relaxed) - a
            );
        }
        if runs("dynamic") {
            let (t, a) = (cpu(), CALLS.load(Relaxed));
            let mut s = c.query_rows(sql.as_str()).await?;
            let (mut n, mut sum) = (0u64, 0u64);
            while let Some(r) = s.next().await? {
                for v in r.values() {
                    sum = sum.wrapping_add(match v {
                        chnative::Value::String(b) => b.len() as u64,
                        v => v.as_i128().unwrap_or(0) as u64,
                    });
                }
                n += 1;
            }
            drop(s);
            println!(
                "dynamic          {n} rows {:.3} s cpu {} allocs sum {sum:#x}",
                cpu() - t,
                CALLS.load(Relaxed) - a
            );
        }
        if runs("String") {
            let (t, a) = (cpu(), CALLS.load(Relaxed));
            let mut s = c.query::<ChOwned>(sql.as_str()).await?;
            let (mut n, mut sum) = (0u64, 0u64);
            while let Some(r) = s.next().await? {
                sum = sum.wrapping_add(r.checksum());
                n += 1;
            }
            drop(s);
            println!(
                "typed String     {n} rows {:.3} s cpu {} allocs sum {sum:#x}",
                cpu() - t,
                CALLS.load(Relaxed) - a
            );
        }
    }
    Ok(())
}

fn main() -> Res<()> {
    let mut args = std::env::args().skip(1);
    let rows = args.next().map(|a| a.parse()).transpose()?.unwrap_or(1_000_000);
    let rounds = args.next().map(|a| a.parse()).transpose()?.unwrap_or(3);
    tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(run(rows, rounds))
}
