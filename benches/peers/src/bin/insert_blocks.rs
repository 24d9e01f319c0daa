//! `insert_blocks`: how the rows per INSERT block (`Config::insert_block_rows`) change
//! chnative's client CPU and allocation for inserting hits rows, one insert and 16 in
//! parallel, into a Null table. Evidence for the default.
//!
//! `cargo run --release --bin insert_blocks -- [ROWS (100000)] [ROUNDS (5)]`

#[allow(dead_code)]
#[path = "../hits.rs"]
mod hits;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

struct Counting;
static BYTES: AtomicU64 = AtomicU64::new(0);
// SAFETY: forwards to the system allocator unchanged; only counts bytes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        BYTES.fetch_add(l.size() as u64, Relaxed);
        // SAFETY: the caller's contract is passed on as is.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        BYTES.fetch_add(new.saturating_sub(l.size()) as u64, Relaxed);
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

/// One round for one block size: CPU s and bytes of one insert, then of 16 in parallel.
type Round = (f64, u64, f64, u64);

async fn run(rows: usize, rounds: usize) -> Res<()> {
    let port = std::env::var("CHNATIVE_TCP_PORT").unwrap_or_else(|_| "19000".into());
    let url = |comp: &str| format!("clickhouse://default@127.0.0.1:{port}/default?compression={comp}");
    let admin = chnative::Client::connect(&url("none")).await?;
    let data = hits::load(&admin, rows).await?;
    let table = format!("hits_blocks_null_{}", std::process::id());
    admin.execute(format!("CREATE TABLE {table} ({}) ENGINE = Null", hits::structure()).as_str()).await?;
    let sizes = [1usize << 20, 65536, 16384, 8192, 2048];
    for comp in ["none", "lz4"] {
        let clients: Vec<chnative::Client> = {
            let mut v = Vec::new();
            for &n in &sizes {
                let cfg = chnative::Config::from_url(&url(comp))?.insert_block_rows(n).pool_max_size(16);
                v.push(chnative::Client::connect_with(cfg).await?);
            }
            v
        };
        let mut results: Vec<Vec<Round>> = vec![Vec::new(); sizes.len()];
        for _ in 0..rounds {
            for (k, c) in clients.iter().enumerate() {
                let (t, b) = (cpu(), BYTES.load(Relaxed));
                hits::insert_columns(c, &table, &data).await?;
                let one = (cpu() - t, BYTES.load(Relaxed) - b);
                let (t, b) = (cpu(), BYTES.load(Relaxed));
                let jobs: Vec<_> = (0..16).map(|_| hits::insert_columns(c, &table, &data)).collect();
                for r in futures_util::future::join_all(jobs).await {
                    r?;
                }
                results[k].push((one.0, one.1, cpu() - t, BYTES.load(Relaxed) - b));
            }
        }
        for (k, n) in sizes.iter().enumerate() {
            let med = |f: &dyn Fn(&Round) -> f64| {
                let mut v: Vec<f64> = results[k].iter().map(f).collect();
                v.sort_by(|a, b| a.partial_cmp(b).unwrap());
                v[v.len() / 2]
            };
            println!(
                "{comp:4} insert_block_rows {n:>8}: one insert {:.3} s cpu {:>7.1} MB | 16 parallel {:.3} s cpu {:>8.1} MB",
                med(&|r| r.0),
                med(&|r| r.1 as f64) / 1e6,
                med(&|r| r.2),
                med(&|r| r.3 as f64) / 1e6
            );
        }
    }
    admin.execute(format!("DROP TABLE {table}").as_str()).await?;
    Ok(())
}

fn main() -> Res<()> {
    let mut args = std::env::args().skip(1);
    let rows = args.next().map(|a| a.parse()).transpose()?.unwrap_or(100_000);
    let rounds = args.next().map(|a| a.parse()).transpose()?.unwrap_or(5);
    tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(run(rows, rounds))
}
