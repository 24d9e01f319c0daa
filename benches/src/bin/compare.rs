//! `compare`: chnative (native TCP, column tier) against the official `clickhouse`
//! crate (HTTP, RowBinary) on the same server, queries and machine, in one run.
//!
//! ```text
//! cargo run --release -p chnative-bench --bin compare [-- --quick] [--reps N] [--only a,b,c] [--filter TEXT]
//! ```
//!
//! Each measurement covers one whole query (sending it, reading every row, the
//! end of the response) on an already connected client, on a current-thread
//! tokio runtime, so the process's CPU time (getrusage, user + sys) is the
//! client's: the server is another process. A counting global allocator counts
//! bytes and calls of alloc/alloc_zeroed/realloc (a realloc counts its growth).
//! Clients take turns within each repetition; the table shows medians.
//!
//! Ports: CHNATIVE_TCP_PORT (default 19000) and CHNATIVE_HTTP_PORT (default 18123);
//! the server is started with `scripts/server.sh start` if it does not answer.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

use clickhouse::Row;
use serde::{Deserialize, Serialize};

struct Counting;

static BYTES: AtomicU64 = AtomicU64::new(0);
static CALLS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        BYTES.fetch_add(layout.size() as u64, Relaxed);
        CALLS.fetch_add(1, Relaxed);
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        BYTES.fetch_add(layout.size() as u64, Relaxed);
        CALLS.fetch_add(1, Relaxed);
        System.alloc_zeroed(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        BYTES.fetch_add((new_size as u64).saturating_sub(layout.size() as u64), Relaxed);
        CALLS.fetch_add(1, Relaxed);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

type BoxError = Box<dyn std::error::Error + Send + Sync>;
type Res<T> = std::result::Result<T, BoxError>;

/// Process CPU time (user + sys), seconds.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage only writes into the struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    if rc != 0 {
        return f64::NAN;
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

#[derive(Debug, Clone, Copy)]
struct Sample {
    wall: f64,
    cpu: f64,
    bytes: u64,
    allocs: u64,
    rows: u64,
}

struct Meter {
    t0: Instant,
    cpu0: f64,
    bytes0: u64,
    allocs0: u64,
}

impl Meter {
    fn start() -> Meter {
        Meter { bytes0: BYTES.load(Relaxed), allocs0: CALLS.load(Relaxed), cpu0: cpu_seconds(), t0: Instant::now() }
    }

    fn stop(self, rows: u64) -> Sample {
        let wall = self.t0.elapsed().as_secs_f64();
        let cpu = cpu_seconds() - self.cpu0;
        Sample { wall, cpu, bytes: BYTES.load(Relaxed) - self.bytes0, allocs: CALLS.load(Relaxed) - self.allocs0, rows }
    }
}

fn median_f(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn median_u(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2
    }
}

/// Total length of the decimal renderings of 0..n.
fn decimal_lengths(n: u64) -> u64 {
    (0..19u32)
        .map(|d| {
            let lo = if d == 0 { 0 } else { 10u64.pow(d) };
            let hi = 10u64.pow(d + 1).min(n);
            if hi > lo {
                (hi - lo) * (d as u64 + 1)
            } else {
                0
            }
        })
        .sum()
}

fn check(what: &str, got: u64, want: u64) -> Res<()> {
    if got != want {
        return Err(format!("{what}: got {got}, expected {want}").into());
    }
    Ok(())
}

// ---- the clickhouse crate's rows ----

#[derive(Row, Deserialize)]
struct NumStrBorrowed<'a> {
    n: u64,
    s: &'a str,
}

#[derive(Row, Serialize)]
struct InsertRow<'a> {
    n: u64,
    s: &'a str,
}

// ---- workloads ----

async fn a_chnative(c: &mut chnative::Client, sql: &str) -> Res<(u64, u64)> {
    let mut s = c.fetch_blocks(sql).await?;
    let (mut rows, mut sum) = (0u64, 0u64);
    while let Some(block) = s.next().await? {
        let col = block.columns()[0].view();
        let v = col.values::<u64>()?;
        sum = v.iter().fold(sum, |a, &x| a.wrapping_add(x));
        rows += v.len() as u64;
    }
    Ok((rows, sum))
}

async fn a_crate(c: &clickhouse::Client, sql: &str) -> Res<(u64, u64)> {
    let mut cur = c.query(sql).fetch::<u64>()?;
    let (mut rows, mut sum) = (0u64, 0u64);
    while let Some(x) = cur.next().await? {
        sum = sum.wrapping_add(x);
        rows += 1;
    }
    Ok((rows, sum))
}

/// Returns (rows, sum of numbers + sum of string lengths).
async fn b_chnative(c: &mut chnative::Client, sql: &str) -> Res<(u64, u64)> {
    let mut s = c.fetch_blocks(sql).await?;
    let (mut rows, mut acc) = (0u64, 0u64);
    while let Some(block) = s.next().await? {
        let cols = block.columns();
        let nums = cols[0].view();
        let nums = nums.values::<u64>()?;
        let strs = cols[1].view().as_strings()?;
        acc = nums.iter().fold(acc, |a, &x| a.wrapping_add(x));
        for i in 0..strs.len() {
            acc = acc.wrapping_add(strs.bytes(i).len() as u64);
        }
        rows += nums.len() as u64;
    }
    Ok((rows, acc))
}

async fn b_crate_owned(c: &clickhouse::Client, sql: &str) -> Res<(u64, u64)> {
    let mut cur = c.query(sql).fetch::<(u64, String)>()?;
    let (mut rows, mut acc) = (0u64, 0u64);
    while let Some((n, s)) = cur.next().await? {
        acc = acc.wrapping_add(n).wrapping_add(s.len() as u64);
        rows += 1;
    }
    Ok((rows, acc))
}

async fn b_crate_borrowed(c: &clickhouse::Client, sql: &str) -> Res<(u64, u64)> {
    let mut cur = c.query(sql).fetch::<NumStrBorrowed<'_>>()?;
    let (mut rows, mut acc) = (0u64, 0u64);
    while let Some(r) = cur.next().await? {
        acc = acc.wrapping_add(r.n).wrapping_add(r.s.len() as u64);
        rows += 1;
    }
    Ok((rows, acc))
}

async fn c_chnative(c: &mut chnative::Client, table: &str, ids: &[u64], names: &[String]) -> Res<u64> {
    let summary = c.insert(table).column("n", ids).column("s", names).send().await?;
    Ok(summary.rows)
}

async fn c_crate(c: &clickhouse::Client, table: &str, ids: &[u64], names: &[String]) -> Res<u64> {
    let mut ins = c.insert::<InsertRow<'_>>(table).await?.with_setting("async_insert", "0");
    for (n, s) in ids.iter().zip(names) {
        ins.write(&InsertRow { n: *n, s }).await?;
    }
    ins.end().await?;
    Ok(ids.len() as u64)
}

// ---- setup ----

fn port(var: &str, default: u16) -> u16 {
    std::env::var(var).ok().and_then(|p| p.parse().ok()).unwrap_or(default)
}

fn ensure_server(tcp: u16, http: u16) -> Res<()> {
    let up = |p: u16| std::net::TcpStream::connect(("127.0.0.1", p)).is_ok();
    if up(tcp) && up(http) {
        return Ok(());
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/server.sh");
    eprintln!("starting the server: bash {script} start");
    let st = std::process::Command::new("bash")
        .arg(script)
        .arg("start")
        .env("CHNATIVE_TCP_PORT", tcp.to_string())
        .env("CHNATIVE_HTTP_PORT", http.to_string())
        .status()?;
    if !st.success() {
        return Err(format!("scripts/server.sh start failed: {st}").into());
    }
    Ok(())
}

fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name").map(|r| r.trim_start_matches([' ', '\t', ':']).to_string()))
        .unwrap_or_else(|| "unknown".into());
    let nproc = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    let mem_gib = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| m.lines().next().and_then(|l| l.split_whitespace().nth(1).and_then(|k| k.parse::<f64>().ok())))
        .map(|kib| kib / (1 << 20) as f64)
        .unwrap_or(0.0);
    format!("nproc {nproc}, CPU \"{model}\", {mem_gib:.0} GiB RAM")
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

fn now_utc() -> String {
    std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

fn human_rate(r: f64) -> String {
    if r >= 1e6 {
        format!("{:.1} M", r / 1e6)
    } else if r >= 1e3 {
        format!("{:.1} K", r / 1e3)
    } else {
        format!("{r:.0}")
    }
}

struct Cell {
    workload: String,
    client: &'static str,
    samples: Vec<Sample>,
}

struct Results(Vec<Cell>);

impl Results {
    fn add(&mut self, workload: &str, client: &'static str, s: Sample) {
        eprintln!(
            "  {workload:<28} {client:<44} {:>8.3} s wall {:>7.3} s cpu {:>12} allocs {:>14} bytes",
            s.wall, s.cpu, s.allocs, s.bytes
        );
        match self.0.iter_mut().find(|r| r.workload == workload && r.client == client) {
            Some(r) => r.samples.push(s),
            None => self.0.push(Cell { workload: workload.into(), client, samples: vec![s] }),
        }
    }

    fn print(&self) {
        println!(
            "| workload | client | rows/s (median) | wall s | client CPU s | bytes allocated | allocations | \
             bytes allocated, 1st rep |"
        );
        println!("|---|---|---:|---:|---:|---:|---:|---:|");
        for r in &self.0 {
            let wall = median_f(r.samples.iter().map(|s| s.wall).collect());
            let rows = r.samples[0].rows;
            let rate = median_f(r.samples.iter().map(|s| s.rows as f64 / s.wall).collect());
            let cpu = median_f(r.samples.iter().map(|s| s.cpu).collect());
            let bytes = median_u(r.samples.iter().map(|s| s.bytes).collect());
            let allocs = median_u(r.samples.iter().map(|s| s.allocs).collect());
            println!(
                "| {} | {} | {} | {wall:.2} | {cpu:.2} | {} | {allocs} | {} |",
                r.workload.replace("{rows}", &human_rows(rows)),
                r.client,
                human_rate(rate),
                human_bytes(bytes),
                human_bytes(r.samples[0].bytes),
            );
        }
    }
}

fn human_rows(n: u64) -> String {
    if n >= 1_000_000 && n.is_multiple_of(1_000_000) {
        format!("{}M", n / 1_000_000)
    } else if n >= 1000 && n.is_multiple_of(1000) {
        format!("{}K", n / 1000)
    } else {
        n.to_string()
    }
}

struct Opts {
    quick: bool,
    reps: usize,
    only: String,
    /// Run only the clients whose label contains this text (for profiling).
    filter: String,
}

impl Opts {
    fn runs(&self, client: &str) -> bool {
        client.contains(self.filter.as_str())
    }
}

fn parse_args() -> Res<Opts> {
    let mut o = Opts { quick: false, reps: 3, only: "abc".into(), filter: String::new() };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--quick" => o.quick = true,
            "--reps" => o.reps = args.next().ok_or("--reps needs a number")?.parse()?,
            "--only" => o.only = args.next().ok_or("--only needs a list like a,b")?,
            "--filter" => o.filter = args.next().ok_or("--filter needs text")?,
            "-h" | "--help" => {
                println!("usage: compare [--quick] [--reps N] [--only a,b,c] [--filter CLIENT-LABEL-TEXT]");
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument `{other}`").into()),
        }
    }
    o.reps = o.reps.max(1);
    Ok(o)
}

const CH_LZ4: &str = "chnative (native TCP, LZ4)";
const CH_NONE: &str = "chnative (native TCP, no compression)";
const CR_LZ4: &str = "clickhouse crate (HTTP RowBinary, LZ4)";
const CR_NONE: &str = "clickhouse crate (HTTP RowBinary, no compression)";
const CR_OWNED_LZ4: &str = "clickhouse crate, (u64, String) rows, LZ4";
const CR_BORROWED_LZ4: &str = "clickhouse crate, &str rows, LZ4";
const CR_BORROWED_NONE: &str = "clickhouse crate, &str rows, no compression";

async fn run(o: Opts) -> Res<()> {
    let tcp = port("CHNATIVE_TCP_PORT", 19000);
    let http = port("CHNATIVE_HTTP_PORT", 18123);
    ensure_server(tcp, http)?;
    let scale = if o.quick { 10 } else { 1 };

    let mut ch_lz4 =
        chnative::Client::connect(&format!("clickhouse://default@127.0.0.1:{tcp}/default?compression=lz4")).await?;
    let mut ch_none =
        chnative::Client::connect(&format!("clickhouse://default@127.0.0.1:{tcp}/default?compression=none")).await?;
    let url = format!("http://127.0.0.1:{http}");
    let cr_lz4 = clickhouse::Client::default()
        .with_url(&url)
        .with_user("default")
        .with_compression(clickhouse::Compression::Lz4);
    let cr_none = clickhouse::Client::default()
        .with_url(&url)
        .with_user("default")
        .with_compression(clickhouse::Compression::None);

    let info = ch_lz4.server_info();
    println!("## chnative vs clickhouse crate\n");
    println!("- date: {}", now_utc());
    println!("- machine: {} (server and client on the same machine, loopback)", machine());
    println!(
        "- server: ClickHouse {}.{}.{} (revision {}), native TCP 127.0.0.1:{tcp}, HTTP 127.0.0.1:{http}",
        info.version.0, info.version.1, info.version.2, info.revision
    );
    println!(
        "- clients: chnative {} (revision {}); clickhouse crate 0.15 (validation on, default settings); \
         tokio current-thread runtime; release build",
        env!("CARGO_PKG_VERSION"),
        info.negotiated_revision
    );
    println!(
        "- {} repetitions per cell, clients interleaved; medians shown{}",
        o.reps,
        if o.quick { "; --quick (10x smaller)" } else { "" }
    );
    println!("- load average (1/5/15 min) at start: {}", loadavg());

    let mut res = Results(Vec::new());

    if o.only.contains('a') {
        let n = 100_000_000 / scale;
        let sql = format!("SELECT number FROM system.numbers LIMIT {n}");
        let want = n * (n - 1) / 2;
        let w = "(a) SELECT {rows} UInt64";
        eprintln!("workload (a): {sql}");
        for _ in 0..o.reps {
            for (name, c) in [(CH_LZ4, &mut ch_lz4), (CH_NONE, &mut ch_none)] {
                if !o.runs(name) {
                    continue;
                }
                let m = Meter::start();
                let (rows, sum) = a_chnative(c, &sql).await?;
                let s = m.stop(rows);
                check(name, sum, want)?;
                check(name, rows, n)?;
                res.add(w, name, s);
            }
            for (name, c) in [(CR_LZ4, &cr_lz4), (CR_NONE, &cr_none)] {
                if !o.runs(name) {
                    continue;
                }
                let m = Meter::start();
                let (rows, sum) = a_crate(c, &sql).await?;
                let s = m.stop(rows);
                check(name, sum, want)?;
                check(name, rows, n)?;
                res.add(w, name, s);
            }
        }
    }

    if o.only.contains('b') {
        let n = 20_000_000 / scale;
        let sql = format!("SELECT number AS n, toString(number) AS s FROM system.numbers LIMIT {n}");
        let want = (n * (n - 1) / 2).wrapping_add(decimal_lengths(n));
        let w = "(b) SELECT {rows} (UInt64, String)";
        eprintln!("workload (b): {sql}");
        for _ in 0..o.reps {
            for (name, c) in [(CH_LZ4, &mut ch_lz4), (CH_NONE, &mut ch_none)] {
                if !o.runs(name) {
                    continue;
                }
                let m = Meter::start();
                let (rows, acc) = b_chnative(c, &sql).await?;
                let s = m.stop(rows);
                check(name, acc, want)?;
                check(name, rows, n)?;
                res.add(w, name, s);
            }
            if o.runs(CR_OWNED_LZ4) {
                let m = Meter::start();
                let (rows, acc) = b_crate_owned(&cr_lz4, &sql).await?;
                let s = m.stop(rows);
                check(CR_OWNED_LZ4, acc, want)?;
                check(CR_OWNED_LZ4, rows, n)?;
                res.add(w, CR_OWNED_LZ4, s);
            }
            for (name, c) in [(CR_BORROWED_LZ4, &cr_lz4), (CR_BORROWED_NONE, &cr_none)] {
                if !o.runs(name) {
                    continue;
                }
                let m = Meter::start();
                let (rows, acc) = b_crate_borrowed(c, &sql).await?;
                let s = m.stop(rows);
                check(name, acc, want)?;
                check(name, rows, n)?;
                res.add(w, name, s);
            }
        }
    }

    if o.only.contains('c') {
        let n = 10_000_000 / scale;
        let table = format!("chnative_bench_null_{}", std::process::id());
        ch_lz4.execute(format!("CREATE TABLE {table} (n UInt64, s String) ENGINE = Null").as_str()).await?;
        let ids: Vec<u64> = (0..n).collect();
        let names: Vec<String> = ids.iter().map(|i| i.to_string()).collect();
        let w = "(c) INSERT {rows} (UInt64, String) into Null";
        eprintln!("workload (c): INSERT INTO {table} (n UInt64, s String) ENGINE = Null, {n} rows");
        let result: Res<()> = async {
            for _ in 0..o.reps {
                for (name, c) in [(CH_LZ4, &mut ch_lz4), (CH_NONE, &mut ch_none)] {
                    if !o.runs(name) {
                        continue;
                    }
                    let m = Meter::start();
                    let rows = c_chnative(c, &table, &ids, &names).await?;
                    let s = m.stop(rows);
                    check(name, rows, n)?;
                    res.add(w, name, s);
                }
                for (name, c) in [(CR_LZ4, &cr_lz4), (CR_NONE, &cr_none)] {
                    if !o.runs(name) {
                        continue;
                    }
                    let m = Meter::start();
                    let rows = c_crate(c, &table, &ids, &names).await?;
                    let s = m.stop(rows);
                    res.add(w, name, s);
                }
            }
            Ok(())
        }
        .await;
        ch_lz4.execute(format!("DROP TABLE IF EXISTS {table}").as_str()).await?;
        result?;
    }

    println!("- load average at end: {}\n", loadavg());
    res.print();
    println!(
        "\nNotes: wall/CPU/allocations cover one whole query on a connected client. (b) aliases the columns \
         (`number AS n, toString(number) AS s`) so the crate's validated struct fields match. (c) inserts rows \
         prepared before timing (Vec<u64> + Vec<String>) into a Null-engine table with async_insert=0: chnative \
         sends the two columns, the crate writes `{{n: u64, s: &str}}` rows. The 1st repetition of a chnative \
         cell includes growing a new connection's reusable buffers, later ones reuse them."
    );
    Ok(())
}

fn main() {
    let opts = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("compare: {e}");
            std::process::exit(2);
        }
    };
    let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("compare: tokio runtime: {e}");
            std::process::exit(1);
        }
    };
    if let Err(e) = rt.block_on(run(opts)) {
        eprintln!("compare: {e}");
        std::process::exit(1);
    }
}
