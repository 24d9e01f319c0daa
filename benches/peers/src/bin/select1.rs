//! `select1`: chnative alone, for profiling the small-query path. `SELECT 1`
//! with N tokio tasks in flight through one shared pooled `Client`, on a
//! current-thread runtime; prints queries per second, process CPU µs per query
//! and allocations per query for each round (the first round warms up).
//!
//! ```text
//! cargo build --release --bin select1
//! perf record -g target/release/select1 -- [--tasks 16] [--queries 20000] [--rounds 3] [--compression none]
//! ```
//!
//! Port: CHNATIVE_TCP_PORT (default 19000); the server must be running.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

struct Counting;

static CALLS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards every call to the system allocator unchanged; the counter
// is a relaxed atomic that never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        CALLS.fetch_add(1, Relaxed);
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        CALLS.fetch_add(1, Relaxed);
        // SAFETY: same contract as ours.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        CALLS.fetch_add(1, Relaxed);
        // SAFETY: same contract as ours.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// (user, system) CPU seconds of the process.
fn cpu_split() -> (f64, f64) {
    // SAFETY: getrusage only writes into the struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return (f64::NAN, f64::NAN);
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (tv(ru.ru_utime), tv(ru.ru_stime))
}

type Res<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

async fn run() -> Res<()> {
    let (mut tasks, mut queries, mut rounds, mut compression) = (16usize, 20_000usize, 3usize, "none".to_string());
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let v = args.next().ok_or("every option takes a value")?;
        match a.as_str() {
            "--tasks" => tasks = v.parse()?,
            "--queries" => queries = v.parse()?,
            "--rounds" => rounds = v.parse()?,
            "--compression" => compression = v,
            _ => return Err(format!("unknown option {a}").into()),
        }
    }
    let port = std::env::var("CHNATIVE_TCP_PORT").unwrap_or_else(|_| "19000".into());
    let client =
        chnative::Client::connect(&format!("clickhouse://default@127.0.0.1:{port}/default?compression={compression}"))
            .await?;
    let per_task = queries.div_ceil(tasks.max(1));
    // Futures are moved (memcpy) as they are built and first polled: their size is a cost per query.
    println!("future size: query_scalar {} bytes", std::mem::size_of_val(&client.query_scalar::<u8>("SELECT 1 AS x")),);
    for round in 0..=rounds {
        let (t0, cpu0, calls0) = (Instant::now(), cpu_split(), CALLS.load(Relaxed));
        let handles: Vec<_> = (0..tasks)
            .map(|_| {
                let c = client.clone();
                tokio::spawn(async move {
                    let mut s = 0u64;
                    for _ in 0..per_task {
                        s += c.query_scalar::<u8>("SELECT 1 AS x").await? as u64;
                    }
                    Res::Ok(s)
                })
            })
            .collect();
        let mut sum = 0;
        for h in handles {
            sum += h.await??;
        }
        let n = (per_task * tasks) as f64;
        assert_eq!(sum as f64, n);
        let (wall, (user, sys), calls) = (t0.elapsed().as_secs_f64(), cpu_split(), CALLS.load(Relaxed) - calls0);
        let (user, sys) = (user - cpu0.0, sys - cpu0.1);
        println!(
            "round {round}{}: {:.0} qps, {:.1} µs CPU/query (user {:.1}, system {:.1}), {:.2} allocations/query",
            if round == 0 { " (warm-up)" } else { "" },
            n / wall,
            (user + sys) / n * 1e6,
            user / n * 1e6,
            sys / n * 1e6,
            calls as f64 / n
        );
    }
    println!("{:?}", client.pool_status());
    Ok(())
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
    if let Err(e) = rt.block_on(run()) {
        eprintln!("select1: {e}");
        std::process::exit(1);
    }
}
