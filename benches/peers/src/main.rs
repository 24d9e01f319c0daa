//! `chnative-peers`: chnative against every Rust ClickHouse client worth
//! comparing, on the same server, data and machine, in one run.
//!
//! ```text
//! cd benches/peers && cargo run --release -- [--rounds N] [--only abcdefghijk] [--filter TEXT] [sizes…]
//! ```
//!
//! Clients: chnative (native TCP; no compression, LZ4, ZSTD), the official
//! `clickhouse` crate (HTTP, RowBinary; and HTTP, Native blocks through `fetch_native` and
//! `insert_native`, uncompressed: src/official_native.rs), clickhouse-rs (suharev; native),
//! clickhouse-arrow (native, Arrow record batches) and klickhouse (native,
//! rows; always LZ4). Each measurement covers one whole operation on an
//! already connected client, on a current-thread tokio runtime, so the
//! process's CPU time (getrusage, user + sys) is the client's: the server is
//! another process. A counting global allocator counts bytes and calls of
//! alloc/alloc_zeroed/realloc (a realloc counts its growth). Clients take
//! turns within each round; the tables show medians. Every client's checksum
//! of what it read (or, for inserts, what the server stored) must agree.
//!
//! Workloads: (a) read hits, (b) read UInt64, (c) read String, (d) insert
//! hits, (e) parallel inserts of hits, (f) `SELECT 1` with many in flight,
//! (g) the socket floor for (b): the bytes chnative receives for (b) without
//! compression, captured once through a relay and replayed from a local TCP
//! server; only the reading thread's CPU time counts. (h) read hits by chnative
//! tier (columns, typed rows with String or &str fields, dynamic rows) next to
//! the official crate's derive Row; (i) insert hits from typed rows (chnative's
//! inserter, its column insert, the official inserter). With `--features arrow`: (j) read
//! hits into Arrow RecordBatches (chnative-arrow, clickhouse-arrow, the server's HTTP
//! ArrowStream read by pyarrow, next to chnative's column tier) and (k) insert them
//! from RecordBatches (src/arrow_rb.rs).
//!
//! Every workload (a)–(f) also runs chnative's row tiers, uncompressed (src/tiers.rs):
//! typed rows (`query::<T>`; inserts: `inserter::<T>`, new per insert or one kept
//! open, and `insert_rows`; `SELECT 1`: `fetch_one`) and dynamic rows (`query_rows`;
//! inserts: `insert_value_rows`; `SELECT 1`: `fetch_all_rows`). With (a) in the run,
//! (h) is not run again: (a) has all of its clients.
//!
//! Ports: CHNATIVE_TCP_PORT (default 19000) and CHNATIVE_HTTP_PORT (default
//! 18123); the server is started with `scripts/server.sh start` if it does not
//! answer on loopback. `--host ADDR` points every client at another address
//! (for the rate-limited link of `scripts/slowlink.sh`: run the built binary
//! with `ip netns exec chn-slow … --host 10.77.0.1`); such a server must
//! already run. `--net-dev IFACE` adds the bytes that crossed that interface
//! during each operation (received/sent, from /sys/class/net; only meaningful
//! when nothing else uses it, as inside the namespace). The hits table is created and filled once (`generateRandom(…, 42,
//! 40, 4)`), and reused while it has the requested number of rows.

mod arrow_rb;
mod ch_rows;
mod counting;
mod hits;
mod host;
mod nativeclick_peer;
mod official_native;
mod peer_arrow;
mod rows;
mod tiers;

use host::{loadavg, now_utc};
use std::io::{Read, Write};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use futures_util::{future::join_all, StreamExt};

use ch_rows::ChBorrowed;
use counting::{BYTES, CALLS};
use hits::{sum_ints, Col, HitsData, Kind};
use rows::{KlickRow, OfficialRow};

type BoxError = Box<dyn std::error::Error + Send + Sync>;
type Res<T> = std::result::Result<T, BoxError>;

/// CPU time (user + sys) of the process (`RUSAGE_SELF`) or of the calling
/// thread (`RUSAGE_THREAD`), seconds.
fn cpu_seconds(who: libc::c_int) -> f64 {
    // SAFETY: getrusage only writes into the struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; `who` is RUSAGE_SELF or RUSAGE_THREAD.
    let rc = unsafe { libc::getrusage(who, &mut ru) };
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
    /// Rows (or queries) the operation moved.
    ops: u64,
    /// Bytes received and sent on `--net-dev` during the operation.
    wire: Option<(u64, u64)>,
    /// Per-operation latency (p50, p99) in µs, where the workload times each operation.
    lat: Option<(f64, f64)>,
}

/// The interface of `--net-dev`, set once before any measurement.
static NET_DEV: Mutex<Option<String>> = Mutex::new(None);

/// (received, sent) byte counters of a network interface, link-level framing included.
fn net_bytes(dev: &str) -> std::io::Result<(u64, u64)> {
    let read = |what: &str| -> std::io::Result<u64> {
        let path = format!("/sys/class/net/{dev}/statistics/{what}");
        std::fs::read_to_string(&path)?
            .trim()
            .parse()
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{path}: {e}")))
    };
    Ok((read("rx_bytes")?, read("tx_bytes")?))
}

fn net_now() -> Option<(u64, u64)> {
    NET_DEV.lock().unwrap().as_deref().and_then(|d| net_bytes(d).ok())
}

/// The queueing discipline of `dev` as `tc` reports it (the link's rate), if tc runs.
fn link_note(dev: &str) -> String {
    std::process::Command::new("tc")
        .args(["qdisc", "show", "dev", dev])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| format!(" (tc: {})", String::from_utf8_lossy(&o.stdout).trim()))
        .unwrap_or_default()
}

struct Meter {
    who: libc::c_int,
    t0: Instant,
    cpu0: f64,
    bytes0: u64,
    allocs0: u64,
    net0: Option<(u64, u64)>,
}

impl Meter {
    fn start() -> Meter {
        Meter::start_for(libc::RUSAGE_SELF)
    }

    fn start_for(who: libc::c_int) -> Meter {
        Meter {
            who,
            net0: net_now(),
            bytes0: BYTES.load(Relaxed),
            allocs0: CALLS.load(Relaxed),
            cpu0: cpu_seconds(who),
            t0: Instant::now(),
        }
    }

    fn stop(self, ops: u64) -> Sample {
        let wall = self.t0.elapsed().as_secs_f64();
        let cpu = cpu_seconds(self.who) - self.cpu0;
        let wire = match (self.net0, net_now()) {
            (Some((r0, t0)), Some((r1, t1))) => Some((r1.wrapping_sub(r0), t1.wrapping_sub(t0))),
            _ => None,
        };
        Sample {
            wall,
            cpu,
            bytes: BYTES.load(Relaxed) - self.bytes0,
            allocs: CALLS.load(Relaxed) - self.allocs0,
            ops,
            wire,
            lat: None,
        }
    }
}

impl Sample {
    /// This sample with the latency percentiles recorded in [`LAT`] since `prepare`.
    fn with_lat(mut self) -> Sample {
        self.lat = LAT.percentiles();
        self
    }
}

/// Per-query latencies of one round: every task takes a buffer made before the
/// round's meter starts (so timing allocates nothing that is counted), records
/// each query's wall time in it, and gives it back.
struct Latencies(Mutex<Vec<Vec<u32>>>);

static LAT: Latencies = Latencies(Mutex::new(Vec::new()));

impl Latencies {
    /// `tasks` buffers of room for `per_task` latencies each (before the meter starts).
    fn prepare(&self, tasks: usize, per_task: usize) {
        let mut g = self.0.lock().unwrap();
        g.clear();
        g.reserve(tasks);
        for _ in 0..tasks {
            g.push(Vec::with_capacity(per_task));
        }
    }

    /// A task's buffer (allocates nothing: `prepare` made it).
    fn take(&self) -> Vec<u32> {
        self.0.lock().unwrap().pop().unwrap_or_default()
    }

    /// Gives a filled buffer back (no allocation: the list has room for every buffer).
    fn give(&self, v: Vec<u32>) {
        self.0.lock().unwrap().push(v);
    }

    /// (p50, p99) in µs of every latency recorded since `prepare` (after the meter stopped).
    fn percentiles(&self) -> Option<(f64, f64)> {
        let mut all: Vec<u32> = self.0.lock().unwrap().drain(..).flatten().collect();
        if all.is_empty() {
            return None;
        }
        all.sort_unstable();
        let at = |q: f64| all[((all.len() as f64 * q).ceil() as usize).clamp(1, all.len()) - 1] as f64 / 1e3;
        Some((at(0.50), at(0.99)))
    }
}

/// Times one query into `lat` (nanoseconds, saturating at ~4.3 s).
async fn timed<T>(lat: &mut Vec<u32>, f: impl std::future::Future<Output = T>) -> T {
    let t0 = Instant::now();
    let r = f.await;
    lat.push(t0.elapsed().as_nanos().min(u32::MAX as u128) as u32);
    r
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
    if n == 0 {
        return 0;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2
    }
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

fn human_count(n: u64) -> String {
    if n >= 1_000_000 && n.is_multiple_of(1_000_000) {
        format!("{}M", n / 1_000_000)
    } else if n >= 1000 && n.is_multiple_of(1000) {
        format!("{}k", n / 1000)
    } else {
        n.to_string()
    }
}

// ---- results ----

struct Cell {
    workload: String,
    client: String,
    samples: Vec<Sample>,
    checksum: u64,
}

#[derive(Default)]
struct Results {
    cells: Vec<Cell>,
}

impl Results {
    fn add(&mut self, workload: &str, client: &str, s: Sample, checksum: u64) {
        let wire = s.wire.map(|(rx, tx)| format!("  wire rx {rx} tx {tx}")).unwrap_or_default();
        eprintln!(
            "  {workload:<34} {client:<42} {:>8.3} s wall {:>7.3} s cpu {:>10} allocs {:>12} bytes  sum {checksum:#x}{wire}",
            s.wall, s.cpu, s.allocs, s.bytes
        );
        match self.cells.iter_mut().find(|r| r.workload == workload && r.client == client) {
            Some(r) => {
                r.samples.push(s);
                if r.checksum != checksum {
                    eprintln!("  !! {client}: checksum changed between rounds ({:#x} then {checksum:#x})", r.checksum);
                    r.checksum = u64::MAX;
                }
            }
            None => {
                self.cells.push(Cell { workload: workload.into(), client: client.into(), samples: vec![s], checksum })
            }
        }
    }

    /// Every client of `workload` must have the checksum `want`.
    fn verify(&self, workload: &str, want: u64) -> Res<()> {
        let bad: Vec<String> = self
            .cells
            .iter()
            .filter(|c| c.workload == workload && c.checksum != want)
            .map(|c| format!("{} ({:#x})", c.client, c.checksum))
            .collect();
        if bad.is_empty() {
            Ok(())
        } else {
            Err(format!("{workload}: checksum differs from {want:#x}: {}", bad.join(", ")).into())
        }
    }

    fn print(&self) {
        let wired = self.cells.iter().any(|c| c.samples.iter().any(|s| s.wire.is_some()));
        println!(
            "| workload | client | rows/s | wall s | client CPU s | CPU vs best peer | bytes allocated | allocations |{}",
            if wired { " wire MB received / sent |" } else { "" }
        );
        println!("|---|---|---:|---:|---:|---:|---:|---:|{}", if wired { "---:|" } else { "" });
        let mut last = String::new();
        for r in &self.cells {
            let cpu = median_f(r.samples.iter().map(|s| s.cpu).collect());
            let best_peer = self
                .cells
                .iter()
                .filter(|c| {
                    c.workload == r.workload && !c.client.starts_with("chnative") && !c.client.starts_with("floor")
                })
                .map(|c| median_f(c.samples.iter().map(|s| s.cpu).collect()))
                .fold(f64::INFINITY, f64::min);
            let ratio = if best_peer.is_finite() { format!("{:.2}×", cpu / best_peer) } else { "–".into() };
            let wall = median_f(r.samples.iter().map(|s| s.wall).collect());
            let rate = median_f(r.samples.iter().map(|s| s.ops as f64 / s.wall).collect());
            let bytes = median_u(r.samples.iter().map(|s| s.bytes).collect());
            let allocs = median_u(r.samples.iter().map(|s| s.allocs).collect());
            let w = if r.workload == last { String::new() } else { r.workload.clone() };
            last = r.workload.clone();
            let wire = if wired {
                let rx = median_u(r.samples.iter().filter_map(|s| s.wire.map(|w| w.0)).collect());
                let tx = median_u(r.samples.iter().filter_map(|s| s.wire.map(|w| w.1)).collect());
                format!(" {:.1} / {:.1} |", rx as f64 / 1e6, tx as f64 / 1e6)
            } else {
                String::new()
            };
            println!(
                "| {w} | {} | {} | {wall:.3} | {cpu:.3} | {ratio} | {} | {allocs} |{wire}",
                r.client,
                human_rate(rate),
                human_bytes(bytes),
            );
        }
    }

    /// Per-operation figures (for the `SELECT 1` workload).
    fn print_per_op(&self, workload: &str) {
        println!(
            "\n| {workload} | queries/s | client CPU µs per query | CPU vs best peer | qps vs best peer | allocations per query | bytes per query | p50 µs | p99 µs |"
        );
        println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
        let cells = || self.cells.iter().filter(|c| c.workload == workload);
        let per_op = |r: &Cell| {
            let ops = r.samples[0].ops.max(1) as f64;
            let rate = median_f(r.samples.iter().map(|s| s.ops as f64 / s.wall).collect());
            let cpu = median_f(r.samples.iter().map(|s| s.cpu).collect()) / ops * 1e6;
            (ops, rate, cpu)
        };
        let peers = || cells().filter(|c| !c.client.starts_with("chnative") && !c.client.starts_with("floor"));
        let best_cpu = peers().map(|c| per_op(c).2).fold(f64::INFINITY, f64::min);
        let best_rate = peers().map(|c| per_op(c).1).fold(0.0, f64::max);
        let ratio = |x: f64, best: f64| {
            if best.is_finite() && best > 0.0 {
                format!("{:.2}×", x / best)
            } else {
                "–".into()
            }
        };
        for r in cells() {
            let (ops, rate, cpu) = per_op(r);
            let allocs = median_u(r.samples.iter().map(|s| s.allocs).collect()) as f64 / ops;
            let bytes = median_u(r.samples.iter().map(|s| s.bytes).collect()) as f64 / ops;
            let lat: Vec<(f64, f64)> = r.samples.iter().filter_map(|s| s.lat).collect();
            let (p50, p99) = if lat.is_empty() {
                ("–".to_string(), "–".to_string())
            } else {
                (
                    format!("{:.0}", median_f(lat.iter().map(|l| l.0).collect())),
                    format!("{:.0}", median_f(lat.iter().map(|l| l.1).collect())),
                )
            };
            println!(
                "| {} | {rate:.0} | {cpu:.1} | {} | {} | {allocs:.1} | {bytes:.0} | {p50} | {p99} |",
                r.client,
                ratio(cpu, best_cpu),
                ratio(rate, best_rate)
            );
        }
    }
}

// ---- options ----

struct Opts {
    rounds: usize,
    only: String,
    filter: String,
    hits_rows: u64,
    numbers: u64,
    strings: u64,
    insert_rows: usize,
    parallel: usize,
    select1: usize,
    select1_tasks: usize,
    floor_buf: usize,
    host: String,
    net_dev: Option<String>,
}

impl Opts {
    fn runs(&self, client: &str) -> bool {
        self.filter.split(',').any(|f| client.contains(f))
    }
}

const USAGE: &str =
    "usage: chnative-peers [--rounds N (5)] [--only abcdefghijk] [--filter TEXT[,TEXT…] (client labels)]
       [--hits-rows N (1000000)] [--numbers N (100000000)] [--strings N (20000000)]
       [--insert-rows N (100000)] [--parallel N (16)] [--select1 N per task (300)] [--select1-tasks N (16)]
       [--floor-buf BYTES (65536)] [--host ADDR (127.0.0.1)] [--net-dev IFACE (count its rx/tx bytes)]";

fn parse_args() -> Res<Opts> {
    let mut o = Opts {
        rounds: 5,
        // (j) and (k), the Arrow workloads, need the `arrow` feature.
        only: if peer_arrow::AVAILABLE { "abcdefghijk" } else { "abcdefghi" }.into(),
        filter: String::new(),
        hits_rows: 1_000_000,
        numbers: 100_000_000,
        strings: 20_000_000,
        insert_rows: 100_000,
        parallel: 16,
        select1: 300,
        select1_tasks: 16,
        floor_buf: 64 << 10,
        host: "127.0.0.1".into(),
        net_dev: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().ok_or_else(|| format!("{a} needs a value\n{USAGE}"));
        match a.as_str() {
            "--rounds" => o.rounds = val()?.parse()?,
            "--only" => o.only = val()?,
            "--filter" => o.filter = val()?,
            "--hits-rows" => o.hits_rows = val()?.parse()?,
            "--numbers" => o.numbers = val()?.parse()?,
            "--strings" => o.strings = val()?.parse()?,
            "--insert-rows" => o.insert_rows = val()?.parse()?,
            "--parallel" => o.parallel = val()?.parse()?,
            "--select1" => o.select1 = val()?.parse()?,
            "--select1-tasks" => o.select1_tasks = val()?.parse()?,
            "--floor-buf" => o.floor_buf = val()?.parse()?,
            "--host" => o.host = val()?,
            "--net-dev" => o.net_dev = Some(val()?),
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument `{other}`\n{USAGE}").into()),
        }
    }
    o.rounds = o.rounds.max(1);
    o.parallel = o.parallel.max(1);
    o.select1_tasks = o.select1_tasks.max(1);
    Ok(o)
}

// ---- clients ----

const CH_MODES: [(&str, &str); 5] = [
    ("chnative, no compression", "none"),
    ("chnative, LZ4", "lz4"),
    ("chnative, ZSTD(1)", "zstd:1"),
    ("chnative, ZSTD(3)", "zstd:3"),
    // Learns per statement (none on a fast link): its first rounds explore.
    ("chnative, compression=auto", "auto"),
];
const OFF_NONE: &str = "clickhouse (official, HTTP RowBinary), no compression";
const OFF_LZ4: &str = "clickhouse (official, HTTP RowBinary), LZ4";
const CRS_NONE: &str = "clickhouse-rs, no compression";
const CRS_LZ4: &str = "clickhouse-rs, LZ4";
const ARW_NONE: &str = "clickhouse-arrow, no compression";
const ARW_LZ4: &str = "clickhouse-arrow, LZ4";
const KLICK: &str = "klickhouse (LZ4, its only mode)";
/// nativeclick 0.26.9 in its default build (compression on): answers in LZ4 or ZSTD by the
/// `network_compression_method` it asks for; it has no uncompressed mode in that build.
const NC_MODES: [(&str, &str); 2] = [("nativeclick, LZ4", "lz4"), ("nativeclick, ZSTD(1)", "zstd")];

struct Env {
    /// The server's address as every client dials it (an IP address or a name).
    host: String,
    tcp: u16,
    http: u16,
}

impl Env {
    async fn chnative(&self, compression: &str) -> Res<chnative::Client> {
        Ok(chnative::Client::connect(&format!(
            "clickhouse://default@{}:{}/default?compression={compression}",
            self.host, self.tcp
        ))
        .await?)
    }

    fn official(&self, lz4: bool) -> clickhouse::Client {
        clickhouse::Client::default()
            .with_url(format!("http://{}:{}", self.host, self.http))
            .with_user("default")
            .with_compression(if lz4 { clickhouse::Compression::Lz4 } else { clickhouse::Compression::None })
    }

    async fn crs(&self, lz4: bool) -> Res<clickhouse_rs::ClientHandle> {
        // No ping before every query (its default), so a query is one round trip like the others.
        // It does not ask for LZ4 by name, and the server's default network_compression_method
        // may be ZSTD (it is on the chdb server), which it cannot read: ask explicitly.
        let url = format!(
            "tcp://default@{}:{}/default?compression={}&ping_before_query=false&pool_min=1&pool_max=1",
            self.host,
            self.tcp,
            if lz4 { "lz4&network_compression_method=lz4" } else { "none" }
        );
        Ok(clickhouse_rs::Pool::new(url).get_handle().await?)
    }

    /// nativeclick clients of every mode the filter lets run.
    async fn nativeclick(&self, o: &Opts) -> Res<Vec<(&'static str, nativeclick::Client)>> {
        let mut v = Vec::new();
        for (label, method) in NC_MODES {
            if o.runs(label) {
                v.push((label, nativeclick_peer::connect(&self.host, self.tcp, method).await?));
            }
        }
        Ok(v)
    }

    async fn klick(&self) -> Res<klickhouse::Client> {
        // Always compresses, with whatever the server's default method is; it reads only LZ4.
        let mut opts = klickhouse::ClientOptions::default();
        opts.settings.insert("network_compression_method".into(), "lz4".into());
        Ok(klickhouse::Client::connect((self.host.as_str(), self.tcp), opts).await?)
    }
}

// ---- checksums of what each client reads ----

/// chnative: every column of a block, by the schema's kinds.
fn ch_block_sum(block: &chnative::Block, kinds: &[Kind]) -> Res<u64> {
    Ok(hits::block_sum(block, kinds)?)
}

fn crs_block_sum(block: &clickhouse_rs::Block) -> Res<u64> {
    use clickhouse_rs::types::SqlType;
    let epoch = chrono::NaiveDate::from_ymd_opt(1970, 1, 1).unwrap();
    let mut s = 0u64;
    for col in block.columns() {
        s = s.wrapping_add(match col.sql_type() {
            SqlType::Int16 => sum_ints(col.iter::<i16>()?.map(|&x| x as i64)),
            SqlType::Int32 => sum_ints(col.iter::<i32>()?.map(|&x| x as i64)),
            SqlType::Int64 => sum_ints(col.iter::<i64>()?.copied()),
            SqlType::UInt64 => col.iter::<u64>()?.fold(0u64, |a, &x| a.wrapping_add(x)),
            SqlType::UInt8 => col.iter::<u8>()?.map(|&x| x as u64).sum(),
            SqlType::String => col.iter::<&[u8]>()?.map(|x| x.len() as u64).sum(),
            SqlType::Date => col.iter::<chrono::NaiveDate>()?.map(|d| (d - epoch).num_days() as u64).sum(),
            SqlType::DateTime(_) => {
                col.iter::<chrono::DateTime<chrono_tz_08::Tz>>()?.map(|t| t.timestamp() as u64).sum()
            }
            other => return Err(format!("clickhouse-rs: type {other:?} not handled by the bench").into()),
        });
    }
    Ok(s)
}

// ---- one-column rows of the row-based peers ----

#[derive(clickhouse::Row, serde::Deserialize)]
struct OffStr<'a> {
    s: &'a str,
}

#[derive(klickhouse::Row)]
struct KNum {
    number: u64,
}

#[derive(klickhouse::Row)]
struct KStr {
    s: String,
}

#[derive(klickhouse::Row)]
struct KOne {
    x: u8,
}

// ---- setup ----

fn port(var: &str, default: u16) -> u16 {
    std::env::var(var).ok().and_then(|p| p.parse().ok()).unwrap_or(default)
}

fn ensure_server(host: &str, tcp: u16, http: u16) -> Res<()> {
    let up = |p: u16| std::net::TcpStream::connect((host, p)).is_ok();
    if up(tcp) && up(http) {
        return Ok(());
    }
    if host != "127.0.0.1" && host != "localhost" {
        return Err(format!(
            "no server answers on {host}:{tcp} (native) and {host}:{http} (HTTP); start it yourself, e.g. \
             CHNATIVE_LISTEN_HOST=127.0.0.1,{host} scripts/server.sh start"
        )
        .into());
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/server.sh");
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

/// Creates and fills `hits` with exactly `rows` rows unless it has them.
async fn ensure_hits(c: &mut chnative::Client, rows: u64) -> Res<()> {
    Ok(hits::ensure(c, rows).await?)
}

/// The bench checksum of a whole table, read back with chnative.
async fn table_sum(c: &mut chnative::Client, table: &str, kinds: &[Kind]) -> Res<(u64, u64)> {
    let mut s = c.stream(format!("SELECT * FROM {table}").as_str()).await?;
    let (mut rows, mut sum) = (0u64, 0u64);
    while let Some(block) = s.next().await? {
        sum = sum.wrapping_add(ch_block_sum(block, kinds)?);
        rows += block.rows() as u64;
    }
    Ok((rows, sum))
}

/// The checksum of what a verification insert stored; a wrong row count
/// gives a checksum no client can match.
async fn stored_sum(c: &mut chnative::Client, table: &str, kinds: &[Kind], rows: u64) -> Res<u64> {
    let (got, sum) = table_sum(c, table, kinds).await?;
    if got != rows {
        eprintln!("  !! {table} holds {got} rows after inserting {rows}");
        return Ok(u64::MAX);
    }
    Ok(sum)
}

fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name").map(|r| r.trim_start_matches([' ', '\t', ':']).to_string()))
        .unwrap_or_else(|| "unknown".into());
    let nproc = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    format!("nproc {nproc}, CPU \"{model}\"")
}

// ---- the socket floor ----

/// Runs `sql` through chnative (with `compression`: none or lz4) via a relay on loopback and
/// returns the bytes the server sent for the query (after the handshake).
async fn capture_server_bytes(env: &Env, sql: &str, compression: &str) -> Res<Vec<u8>> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    let relay_port = listener.local_addr()?.port();
    let server = (env.host.as_str(), env.tcp);
    let captured = Arc::new(Mutex::new(Vec::<u8>::new()));
    let cap = captured.clone();
    let server_addr = std::net::TcpStream::connect(server)?.peer_addr()?;
    let relay = std::thread::spawn(move || -> std::io::Result<()> {
        let (mut client, _) = listener.accept()?;
        let mut upstream = std::net::TcpStream::connect(server_addr)?;
        let (mut c2, mut u2) = (client.try_clone()?, upstream.try_clone()?);
        let up = std::thread::spawn(move || {
            let _ = std::io::copy(&mut c2, &mut u2);
            let _ = u2.shutdown(std::net::Shutdown::Write);
        });
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = upstream.read(&mut buf)?;
            if n == 0 {
                break;
            }
            cap.lock().unwrap().extend_from_slice(&buf[..n]);
            if client.write_all(&buf[..n]).is_err() {
                break;
            }
        }
        let _ = client.shutdown(std::net::Shutdown::Write);
        let _ = up.join();
        Ok(())
    });
    let c = chnative::Client::connect(&format!(
        "clickhouse://default@127.0.0.1:{relay_port}/default?compression={compression}"
    ))
    .await?;
    let mark = captured.lock().unwrap().len();
    let mut s = c.stream(sql).await?;
    while let Some(b) = s.next().await? {
        let _ = b.rows();
    }
    drop(s);
    drop(c);
    relay.join().map_err(|_| "relay thread panicked")??;
    let mut all = std::mem::take(&mut *captured.lock().unwrap());
    Ok(all.split_off(mark))
}

/// Serves `bytes` once from a local TCP server thread and reads them all on
/// this thread into a `buf_len` buffer; returns this thread's CPU time.
fn replay_floor(bytes: Arc<Vec<u8>>, buf_len: usize) -> Res<Sample> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    let sender = std::thread::spawn(move || -> std::io::Result<()> {
        let (mut s, _) = listener.accept()?;
        s.write_all(&bytes)?;
        Ok(())
    });
    let mut sock = std::net::TcpStream::connect(addr)?;
    let mut buf = vec![0u8; buf_len];
    let m = Meter::start_for(libc::RUSAGE_THREAD);
    let mut total = 0u64;
    let mut acc = 0u8;
    loop {
        let n = sock.read(&mut buf)?;
        if n == 0 {
            break;
        }
        // Touch the data once, as any decoder must.
        acc ^= buf[n - 1];
        total += n as u64;
    }
    let s = m.stop(total);
    std::hint::black_box(acc);
    sender.join().map_err(|_| "sender thread panicked")??;
    Ok(s)
}

/// The compressed frames in `bytes` (a captured answer): (body start, body length,
/// uncompressed size) of each, found where a frame header's CityHash128 checksum
/// matches its body (the bytes between frames are packet headers).
fn lz4_frames(bytes: &[u8]) -> Vec<(usize, usize, usize)> {
    let mut frames = Vec::new();
    let mut p = 0;
    while p + 25 <= bytes.len() {
        let at = p + 16;
        let csize = u32::from_le_bytes(bytes[at + 1..at + 5].try_into().unwrap()) as usize;
        let usize_ = u32::from_le_bytes(bytes[at + 5..at + 9].try_into().unwrap()) as usize;
        let fits = bytes[at] == 0x82 && csize >= 9 && at + csize <= bytes.len() && usize_ <= 1 << 30;
        if fits {
            let sum = u128::from_le_bytes(bytes[p..p + 16].try_into().unwrap());
            let hash = chnative_proto::cityhash::city_hash128(&bytes[at..at + csize]);
            // Low 64 bits then high, each little-endian: the u128's little-endian bytes.
            if sum == hash {
                frames.push((at + 9, csize - 9, usize_));
                p = at + csize;
                continue;
            }
        }
        p += 1;
    }
    frames
}

/// Decompresses `frames` of `bytes` with liblz4 (the decoder chnative uses) on this
/// thread, into one reused buffer; returns this thread's CPU time.
fn lz4_decode_floor(bytes: &[u8], frames: &[(usize, usize, usize)]) -> Res<Sample> {
    let mut out: Vec<u8> = Vec::with_capacity(frames.iter().map(|f| f.2).max().unwrap_or(0));
    let m = Meter::start_for(libc::RUSAGE_THREAD);
    let mut acc = 0u8;
    for &(at, len, size) in frames {
        // SAFETY: the source is `len` readable bytes, the destination has `size`
        // bytes of capacity (allocated above for the largest frame); the decoder
        // writes at most `size` bytes and returns how many, or a negative error.
        let n = unsafe {
            lz4_sys::LZ4_decompress_safe(
                bytes[at..].as_ptr() as *const lz4_sys::c_char,
                out.as_mut_ptr() as *mut lz4_sys::c_char,
                len as i32,
                size as i32,
            )
        };
        if n < 0 || n as usize != size {
            return Err(format!("LZ4 frame at {at}: decoded {n} of {size} bytes").into());
        }
        // SAFETY: the decoder initialised `n` bytes.
        unsafe { out.set_len(n as usize) };
        acc ^= out[n as usize - 1];
    }
    std::hint::black_box(acc);
    Ok(m.stop(0))
}

// ---- the run ----

async fn run(o: Opts) -> Res<()> {
    let env =
        Env { host: o.host.clone(), tcp: port("CHNATIVE_TCP_PORT", 19000), http: port("CHNATIVE_HTTP_PORT", 18123) };
    ensure_server(&env.host, env.tcp, env.http)?;
    if let Some(dev) = &o.net_dev {
        net_bytes(dev).map_err(|e| format!("--net-dev {dev}: {e}"))?;
        *NET_DEV.lock().unwrap() = Some(dev.clone());
    }
    // The admin reads back whole Memory tables, whose blocks are as large as the
    // inserts that made them (1M hits rows: 278 MB, over the default 256 MiB bound).
    let mut admin = chnative::Client::connect_with(
        chnative::Config::from_url(&format!("clickhouse://default@{}:{}/default?compression=none", env.host, env.tcp))?
            .max_block_bytes(1 << 30),
    )
    .await?;
    let info = admin.server_info().clone();
    let schema = hits::schema();
    let kinds: Vec<Kind> = schema.iter().map(|c| c.2).collect();
    let need_hits = o.only.contains(['a', 'd', 'e', 'h', 'i', 'j', 'k']);
    if need_hits {
        ensure_hits(&mut admin, o.hits_rows.max(o.insert_rows as u64)).await?;
    }

    println!("## chnative against its peers\n");
    println!("- date: {}", now_utc());
    println!("- machine: {} (server and client on the same machine; shared and noisy)", machine());
    println!(
        "- server: ClickHouse {}.{}.{} (revision {}), native TCP {}:{}, HTTP {}:{}",
        info.version.0, info.version.1, info.version.2, info.revision, env.host, env.tcp, env.host, env.http
    );
    if let Some(dev) = &o.net_dev {
        println!(
            "- network: the clients run with interface {dev}; wire bytes are its rx/tx counters{}",
            link_note(dev)
        );
    }
    println!(
        "- clients: chnative {} (revision {}), clickhouse 0.15.3 (HTTP: RowBinary, and Native blocks), clickhouse-rs 1.1.0-alpha.1, clickhouse-arrow 0.2.1, \
         klickhouse 0.16.0, nativeclick 0.26.9; tokio current-thread runtime; release build",
        env!("CARGO_PKG_VERSION"),
        info.negotiated_revision
    );
    println!("- {} rounds, clients interleaved within each round; medians shown", o.rounds);
    println!("- load average (1/5/15 min) at start: {}", loadavg());

    let mut res = Results::default();

    if o.only.contains('a') {
        let n = o.hits_rows;
        let sql = format!("SELECT * FROM hits LIMIT {n}");
        let w = format!("(a) read {} hits rows × 105 columns", human_count(n));
        eprintln!("{w}");
        let mut ch = Vec::new();
        for (label, mode) in CH_MODES {
            if o.runs(label) {
                ch.push((label, env.chnative(mode).await?));
            }
        }
        let off = [(OFF_NONE, env.official(false)), (OFF_LZ4, env.official(true))];
        let mut crs = Vec::new();
        for (label, lz4) in [(CRS_NONE, false), (CRS_LZ4, true)] {
            if o.runs(label) {
                crs.push((label, env.crs(lz4).await?));
            }
        }
        let mut arw = Vec::new();
        for (label, lz4) in [(ARW_NONE, false), (ARW_LZ4, true)] {
            if peer_arrow::AVAILABLE && o.runs(label) {
                arw.push((label, peer_arrow::connect(&env.host, env.tcp, lz4).await?));
            }
        }
        let klick = if o.runs(KLICK) { Some(env.klick().await?) } else { None };
        let nc = env.nativeclick(&o).await?;
        let tier = if tiers::HITS_READS.iter().any(|l| o.runs(l)) { Some(env.chnative("none").await?) } else { None };
        for _ in 0..o.rounds {
            for (label, c) in ch.iter_mut() {
                let m = Meter::start();
                let mut s = c.stream(sql.as_str()).await?;
                let (mut rows, mut sum) = (0u64, 0u64);
                while let Some(block) = s.next().await? {
                    sum = sum.wrapping_add(ch_block_sum(block, &kinds)?);
                    rows += block.rows() as u64;
                }
                drop(s);
                res.add(&w, label, m.stop(rows), sum);
            }
            if let Some(c) = &tier {
                tiers::read_hits_round(&o, c, &sql, &w, &mut res).await?;
            }
            for (label, c) in off.iter().filter(|(l, _)| o.runs(l)) {
                let m = Meter::start();
                let mut cur = c.query(&sql).fetch::<OfficialRow<'_>>()?;
                let (mut rows, mut sum) = (0u64, 0u64);
                while let Some(r) = cur.next().await? {
                    sum = sum.wrapping_add(r.checksum());
                    rows += 1;
                }
                res.add(&w, label, m.stop(rows), sum);
            }
            if o.runs(official_native::LABEL) {
                let m = Meter::start();
                let (rows, sum) = official_native::read_sum(&off[0].1, &sql).await?;
                res.add(&w, official_native::LABEL, m.stop(rows), sum);
            }
            for (label, c) in crs.iter_mut() {
                let m = Meter::start();
                let mut st = c.query(sql.as_str()).stream_blocks();
                let (mut rows, mut sum) = (0u64, 0u64);
                while let Some(b) = st.next().await {
                    let b = b?;
                    sum = sum.wrapping_add(crs_block_sum(&b)?);
                    rows += b.row_count() as u64;
                }
                drop(st);
                res.add(&w, label, m.stop(rows), sum);
            }
            for (label, c) in arw.iter() {
                let m = Meter::start();
                let (rows, sum) = peer_arrow::read_sum(c, &sql).await?;
                res.add(&w, label, m.stop(rows), sum);
            }
            if let Some(c) = &klick {
                let m = Meter::start();
                let mut st = c.query::<KlickRow, _>(sql.as_str()).await?;
                let (mut rows, mut sum) = (0u64, 0u64);
                while let Some(r) = st.next().await {
                    sum = sum.wrapping_add(r?.checksum());
                    rows += 1;
                }
                res.add(&w, KLICK, m.stop(rows), sum);
            }
            for (label, c) in nc.iter() {
                let m = Meter::start();
                let mut st = c.query::<nativeclick_peer::NcRow, _>(sql.as_str()).await?;
                let (mut rows, mut sum) = (0u64, 0u64);
                while let Some(r) = st.next().await {
                    sum = sum.wrapping_add(r?.checksum());
                    rows += 1;
                }
                res.add(&w, label, m.stop(rows), sum);
            }
        }
        let (rows, want) = table_sum(&mut admin, &format!("(SELECT * FROM hits LIMIT {n})"), &kinds).await?;
        if rows != n {
            return Err(format!("hits has {rows} rows, expected {n}").into());
        }
        res.verify(&w, want)?;
    }

    if o.only.contains('b') {
        let n = o.numbers;
        let sql = format!("SELECT number FROM numbers({n})");
        let want = (n as u128 * (n as u128).saturating_sub(1) / 2) as u64;
        let w = format!("(b) read {} UInt64", human_count(n));
        eprintln!("{w}");
        read_numbers_or_strings(&o, &env, &mut res, &w, &sql, false).await?;
        res.verify(&w, want)?;
    }

    if o.only.contains('c') {
        let n = o.strings;
        let sql = format!("SELECT toString(number) AS s FROM numbers({n})");
        let want = (0..19u32)
            .map(|d| {
                let lo = if d == 0 { 0 } else { 10u64.pow(d) };
                let hi = 10u64.saturating_pow(d + 1).min(n);
                if hi > lo {
                    (hi - lo) * (d as u64 + 1)
                } else {
                    0
                }
            })
            .sum();
        let w = format!("(c) read {} String", human_count(n));
        eprintln!("{w}");
        read_numbers_or_strings(&o, &env, &mut res, &w, &sql, true).await?;
        res.verify(&w, want)?;
    }

    if o.only.contains(['d', 'e']) {
        let data = hits::load(&admin, o.insert_rows).await?;
        let want = data.checksum();
        let s = hits::structure();
        let null = format!("hits_null_{}", std::process::id());
        let check = format!("hits_check_{}", std::process::id());
        admin.execute(format!("CREATE TABLE {null} ({s}) ENGINE = Null").as_str()).await?;
        admin.execute(format!("CREATE TABLE {check} ({s}) ENGINE = Memory").as_str()).await?;
        let r = inserts(&o, &env, &mut admin, &mut res, &data, &null, &check, want, &kinds).await;
        admin.execute(format!("DROP TABLE IF EXISTS {null}").as_str()).await?;
        admin.execute(format!("DROP TABLE IF EXISTS {check}").as_str()).await?;
        r?;
    }

    if o.only.contains('f') {
        select1(&o, &env, &mut res).await?;
    }

    if o.only.contains('h') {
        if o.only.contains('a') {
            // (a) has all of (h)'s clients (uncompressed columns, the row tiers, the official crate).
            eprintln!("(h) read hits by tier: measured as part of (a)");
        } else {
            tiers::read(&o, &env, &mut res, &mut admin, &kinds).await?;
        }
    }
    if o.only.contains('i') {
        tiers::insert(&o, &env, &mut res, &mut admin, &kinds).await?;
    }

    if o.only.contains(['j', 'k']) {
        arrow_rb::run(&o, &env, &mut res, &mut admin, &kinds).await?;
    }

    if o.only.contains('g') {
        let n = o.numbers;
        let sql = format!("SELECT number FROM numbers({n})");
        let w = format!("(b) read {} UInt64", human_count(n));
        eprintln!("(g) socket floor for {w}");
        let bytes = Arc::new(capture_server_bytes(&env, &sql, "none").await?);
        eprintln!("  captured {} bytes", bytes.len());
        let label = format!("floor: read the same bytes off a socket ({} KiB reads)", o.floor_buf >> 10);
        for _ in 0..o.rounds {
            let mut s = replay_floor(bytes.clone(), o.floor_buf)?;
            s.ops = n;
            // The floor reads, it does not decode: its "checksum" is the expected one.
            let want = (n as u128 * (n as u128).saturating_sub(1) / 2) as u64;
            res.add(&w, &label, s, want);
        }
        // LZ4: reading the compressed answer off a socket, plus liblz4 decoding its
        // frames on the same thread (measured apart, summed): what an LZ4 read cannot
        // go below (checksums, packet parsing and copying into columns not counted).
        let lz4 = Arc::new(capture_server_bytes(&env, &sql, "lz4").await?);
        let frames = lz4_frames(&lz4);
        let raw: usize = frames.iter().map(|f| f.2).sum();
        eprintln!("  LZ4: captured {} bytes, {} frames, {} bytes uncompressed", lz4.len(), frames.len(), raw);
        let label = format!("floor: LZ4 bytes off a socket ({} KiB reads) + liblz4 decoding", o.floor_buf >> 10);
        for _ in 0..o.rounds {
            let mut s = replay_floor(lz4.clone(), o.floor_buf)?;
            let d = lz4_decode_floor(&lz4, &frames)?;
            s.wall += d.wall;
            s.cpu += d.cpu;
            s.ops = n;
            let want = (n as u128 * (n as u128).saturating_sub(1) / 2) as u64;
            res.add(&w, &label, s, want);
        }
    }

    println!("- load average at end: {}\n", loadavg());
    res.print();
    if o.only.contains('f') {
        res.print_per_op(&format!("(f) SELECT 1, {} in flight", o.select1_tasks));
    }
    println!(
        "\nNotes: wall/CPU/allocations cover one whole operation on connected clients (the parallel workloads: all of \
         them together). \"CPU vs best peer\" divides by the lowest median client CPU of the non-chnative clients in \
         the same workload. Reads (a) and (d) checksum every value (integers sign-extended, dates as days, times as \
         seconds, strings by length), compared with what chnative reads back from the server. Inserts go to a \
         Null-engine table from input prepared before timing (chnative: the columns; official: borrowed row \
         structs; official Native: the same columns, copied into a BlockBuilder inside the timing (its encoding \
         step; the \"block built before timing\" row measures the send alone); clickhouse-rs: a Block; clickhouse-arrow: a RecordBatch; klickhouse: owned row structs, cloned \
         before timing; chnative's typed rows: borrowed row structs; its dynamic rows: ValueRows); each client's \
         insert is verified once by inserting into a Memory table and reading it back. The row tiers (typed and \
         dynamic rows) run uncompressed. The floor row replays the server's bytes for (b) uncompressed, captured \
         once, from a local TCP server thread, and counts only the reading thread's CPU (RUSAGE_THREAD)."
    );
    Ok(())
}

async fn read_numbers_or_strings(o: &Opts, env: &Env, res: &mut Results, w: &str, sql: &str, strings: bool) -> Res<()> {
    let mut ch = Vec::new();
    for (label, mode) in CH_MODES {
        if o.runs(label) {
            ch.push((label, env.chnative(mode).await?));
        }
    }
    let off = [(OFF_NONE, env.official(false)), (OFF_LZ4, env.official(true))];
    let mut crs = Vec::new();
    for (label, lz4) in [(CRS_NONE, false), (CRS_LZ4, true)] {
        if o.runs(label) {
            crs.push((label, env.crs(lz4).await?));
        }
    }
    let mut arw = Vec::new();
    for (label, lz4) in [(ARW_NONE, false), (ARW_LZ4, true)] {
        if peer_arrow::AVAILABLE && o.runs(label) {
            arw.push((label, peer_arrow::connect(&env.host, env.tcp, lz4).await?));
        }
    }
    let klick = if o.runs(KLICK) { Some(env.klick().await?) } else { None };
    let nc = env.nativeclick(o).await?;
    let tier_labels: &[&str] = if strings { &tiers::STRING_READS } else { &tiers::NUMBER_READS };
    let tier = if tier_labels.iter().any(|l| o.runs(l)) { Some(env.chnative("none").await?) } else { None };
    for _ in 0..o.rounds {
        for (label, c) in ch.iter_mut() {
            let m = Meter::start();
            let mut s = c.stream(sql).await?;
            let (mut rows, mut sum) = (0u64, 0u64);
            while let Some(block) = s.next().await? {
                let v = block.columns()[0].view();
                if strings {
                    let strs = v.as_strings()?;
                    sum = (0..strs.len()).fold(sum, |a, i| a.wrapping_add(strs.bytes(i).len() as u64));
                } else {
                    sum = v.values::<u64>()?.iter().fold(sum, |a, &x| a.wrapping_add(x));
                }
                rows += block.rows() as u64;
            }
            drop(s);
            res.add(w, label, m.stop(rows), sum);
        }
        if let Some(c) = &tier {
            tiers::read_column_round(o, c, sql, w, res, strings).await?;
        }
        for (label, c) in off.iter().filter(|(l, _)| o.runs(l)) {
            let m = Meter::start();
            let (mut rows, mut sum) = (0u64, 0u64);
            if strings {
                let mut cur = c.query(sql).fetch::<OffStr<'_>>()?;
                while let Some(r) = cur.next().await? {
                    sum = sum.wrapping_add(r.s.len() as u64);
                    rows += 1;
                }
            } else {
                let mut cur = c.query(sql).fetch::<u64>()?;
                while let Some(x) = cur.next().await? {
                    sum = sum.wrapping_add(x);
                    rows += 1;
                }
            }
            res.add(w, label, m.stop(rows), sum);
        }
        if o.runs(official_native::LABEL) {
            let m = Meter::start();
            let (rows, sum) = official_native::read_sum(&off[0].1, sql).await?;
            res.add(w, official_native::LABEL, m.stop(rows), sum);
        }
        for (label, c) in crs.iter_mut() {
            let m = Meter::start();
            let mut st = c.query(sql).stream_blocks();
            let (mut rows, mut sum) = (0u64, 0u64);
            while let Some(b) = st.next().await {
                let b = b?;
                sum = sum.wrapping_add(crs_block_sum(&b)?);
                rows += b.row_count() as u64;
            }
            drop(st);
            res.add(w, label, m.stop(rows), sum);
        }
        for (label, c) in arw.iter() {
            let m = Meter::start();
            let (rows, sum) = peer_arrow::read_sum(c, sql).await?;
            res.add(w, label, m.stop(rows), sum);
        }
        if let Some(c) = &klick {
            let m = Meter::start();
            let (mut rows, mut sum) = (0u64, 0u64);
            if strings {
                let mut st = c.query::<KStr, _>(sql).await?;
                while let Some(r) = st.next().await {
                    sum = sum.wrapping_add(r?.s.len() as u64);
                    rows += 1;
                }
            } else {
                let mut st = c.query::<KNum, _>(sql).await?;
                while let Some(r) = st.next().await {
                    sum = sum.wrapping_add(r?.number);
                    rows += 1;
                }
            }
            res.add(w, KLICK, m.stop(rows), sum);
        }
        for (label, c) in nc.iter() {
            let m = Meter::start();
            let (mut rows, mut sum) = (0u64, 0u64);
            if strings {
                let mut st = c.query::<nativeclick_peer::NcStr, _>(sql).await?;
                while let Some(r) = st.next().await {
                    sum = sum.wrapping_add(r?.s.len() as u64);
                    rows += 1;
                }
            } else {
                let mut st = c.query::<nativeclick_peer::NcNum, _>(sql).await?;
                while let Some(r) = st.next().await {
                    sum = sum.wrapping_add(r?.number);
                    rows += 1;
                }
            }
            res.add(w, label, m.stop(rows), sum);
        }
    }
    Ok(())
}

/// The natural insert input of clickhouse-rs: a Block of owned columns.
fn crs_block(d: &HitsData) -> clickhouse_rs::Block {
    let epoch = chrono::NaiveDate::from_ymd_opt(1970, 1, 1).unwrap();
    let mut b = clickhouse_rs::Block::new();
    for ((name, _, _), col) in hits::schema().iter().zip(&d.cols) {
        b = match col {
            Col::I16(v) => b.column(name, v.clone()),
            Col::I32(v) => b.column(name, v.clone()),
            Col::I64(v) => b.column(name, v.clone()),
            Col::Str(v) => b.column(name, v.clone()),
            Col::Date(v) => b.column(
                name,
                v.iter().map(|&x| epoch + chrono::Days::new(x as u64)).collect::<Vec<chrono::NaiveDate>>(),
            ),
            Col::DateTime(v) => {
                use chrono::TimeZone;
                b.column(
                    name,
                    v.iter()
                        .map(|&x| chrono_tz_08::Tz::UTC.timestamp_opt(x as i64, 0).unwrap())
                        .collect::<Vec<chrono::DateTime<chrono_tz_08::Tz>>>(),
                )
            }
        };
    }
    b
}

async fn off_insert(c: &clickhouse::Client, table: &str, rows: &[OfficialRow<'_>]) -> Res<u64> {
    let mut ins = c.insert::<OfficialRow<'_>>(table).await?.with_setting("async_insert", "0");
    for r in rows {
        ins.write(r).await?;
    }
    ins.end().await?;
    Ok(rows.len() as u64)
}

async fn klick_insert(c: &klickhouse::Client, table: &str, rows: Vec<KlickRow>) -> Res<u64> {
    let n = rows.len() as u64;
    c.insert_native_block(format!("INSERT INTO {table} FORMAT Native").as_str(), rows).await?;
    Ok(n)
}

#[allow(clippy::too_many_arguments)]
// Without the `arrow` feature the clickhouse-arrow stub's input is `()`.
#[allow(clippy::let_unit_value, clippy::unit_arg, clippy::clone_on_copy)]
async fn inserts(
    o: &Opts,
    env: &Env,
    admin: &mut chnative::Client,
    res: &mut Results,
    data: &HitsData,
    null: &str,
    check: &str,
    want: u64,
    kinds: &[Kind],
) -> Res<()> {
    let n = data.rows as u64;
    let off_rows: Vec<OfficialRow<'_>> = (0..data.rows).map(|i| OfficialRow::of(data, i)).collect();
    let crs_input = crs_block(data);
    let arrow_input = peer_arrow::batch(data)?;
    let klick_input: Vec<KlickRow> = (0..data.rows).map(|i| KlickRow::of(data, i)).collect();
    let nc_input: Vec<nativeclick_peer::NcRow> = if NC_MODES.iter().any(|(l, _)| o.runs(l)) {
        (0..data.rows).map(|i| nativeclick_peer::NcRow::of(data, i)).collect()
    } else {
        Vec::new()
    };
    let ins_modes = CH_MODES;
    let row_labels: Vec<&str> = tiers::INSERTS.iter().copied().filter(|l| o.runs(l)).collect();
    let kept = o.runs(tiers::INSERTER_KEPT);
    let typed_input = if kept || row_labels.iter().any(|&l| l != tiers::INSERT_VALUES) {
        tiers::typed_rows(data)
    } else {
        Vec::new()
    };
    let value_input = if row_labels.contains(&tiers::INSERT_VALUES) { tiers::value_rows(data)? } else { Vec::new() };

    // Each client's insert, once into a Memory table, read back: the checksum the table rows show.
    let w_d = format!("(d) insert {} hits rows", human_count(n));
    let w_e = format!("(e) {} parallel inserts of {} hits rows", o.parallel, human_count(n));
    let mut verified: Vec<(String, u64)> = Vec::new();
    for (label, mode) in ins_modes {
        if o.runs(label) {
            admin.execute(format!("TRUNCATE TABLE {check}").as_str()).await?;
            hits::insert_columns(&env.chnative(mode).await?, check, data).await?;
            verified.push((label.into(), stored_sum(admin, check, kinds, n).await?));
        }
    }
    for &label in &row_labels {
        admin.execute(format!("TRUNCATE TABLE {check}").as_str()).await?;
        tiers::insert_hits(label, &env.chnative("none").await?, check, &typed_input, &value_input).await?;
        verified.push((label.into(), stored_sum(admin, check, kinds, n).await?));
    }
    if kept {
        let c = env.chnative("none").await?;
        let mut ins = c.inserter::<ChBorrowed<'_>>(check).await?;
        // Twice: what the table holds is the second insert, from the buffers the first one left.
        for _ in 0..2 {
            admin.execute(format!("TRUNCATE TABLE {check}").as_str()).await?;
            tiers::write_all(&mut ins, &typed_input).await?;
        }
        verified.push((tiers::INSERTER_KEPT.into(), stored_sum(admin, check, kinds, n).await?));
    }
    for (label, lz4) in [(OFF_NONE, false), (OFF_LZ4, true)] {
        if o.runs(label) {
            admin.execute(format!("TRUNCATE TABLE {check}").as_str()).await?;
            off_insert(&env.official(lz4), check, &off_rows).await?;
            verified.push((label.into(), stored_sum(admin, check, kinds, n).await?));
        }
    }
    if o.runs(official_native::LABEL) {
        admin.execute(format!("TRUNCATE TABLE {check}").as_str()).await?;
        official_native::insert(&env.official(false), check, data).await?;
        verified.push((official_native::LABEL.into(), stored_sum(admin, check, kinds, n).await?));
    }
    // (d) also sends one Block built before timing, so the send is measured alone.
    let onat_block = if o.only.contains('d') && o.runs(official_native::LABEL_PREBUILT) {
        Some(official_native::build(data)?)
    } else {
        None
    };
    if let Some(block) = &onat_block {
        admin.execute(format!("TRUNCATE TABLE {check}").as_str()).await?;
        official_native::send(&env.official(false), check, block).await?;
        verified.push((official_native::LABEL_PREBUILT.into(), stored_sum(admin, check, kinds, n).await?));
    }
    for (label, lz4) in [(CRS_NONE, false), (CRS_LZ4, true)] {
        if o.runs(label) {
            admin.execute(format!("TRUNCATE TABLE {check}").as_str()).await?;
            env.crs(lz4).await?.insert(check, &crs_input).await?;
            verified.push((label.into(), stored_sum(admin, check, kinds, n).await?));
        }
    }
    for (label, lz4) in [(ARW_NONE, false), (ARW_LZ4, true)] {
        if peer_arrow::AVAILABLE && o.runs(label) {
            admin.execute(format!("TRUNCATE TABLE {check}").as_str()).await?;
            peer_arrow::insert(&peer_arrow::connect(&env.host, env.tcp, lz4).await?, check, arrow_input.clone())
                .await?;
            verified.push((label.into(), stored_sum(admin, check, kinds, n).await?));
        }
    }
    if o.runs(KLICK) {
        admin.execute(format!("TRUNCATE TABLE {check}").as_str()).await?;
        klick_insert(&env.klick().await?, check, klick_input.clone()).await?;
        verified.push((KLICK.into(), stored_sum(admin, check, kinds, n).await?));
    }
    for (label, c) in env.nativeclick(o).await? {
        admin.execute(format!("TRUNCATE TABLE {check}").as_str()).await?;
        nativeclick_peer::insert(&c, check, nc_input.clone()).await?;
        verified.push((label.into(), stored_sum(admin, check, kinds, n).await?));
    }
    let sum_of = |label: &str| verified.iter().find(|(l, _)| l == label).map(|v| v.1).unwrap_or(want);

    if o.only.contains('d') {
        eprintln!("{w_d}");
        let mut ch = Vec::new();
        for (label, mode) in ins_modes {
            if o.runs(label) {
                ch.push((label, env.chnative(mode).await?));
            }
        }
        let mut rowc = Vec::new();
        for &label in &row_labels {
            rowc.push((label, env.chnative("none").await?));
        }
        let kept_c = if kept { Some(env.chnative("none").await?) } else { None };
        let mut kept_ins = None;
        if let Some(c) = &kept_c {
            let mut ins = c.inserter::<ChBorrowed<'_>>(null).await?;
            // Once before the rounds, so every measured insert reuses the buffers.
            tiers::write_all(&mut ins, &typed_input).await?;
            kept_ins = Some(ins);
        }
        let off = [(OFF_NONE, env.official(false)), (OFF_LZ4, env.official(true))];
        let mut crs = Vec::new();
        for (label, lz4) in [(CRS_NONE, false), (CRS_LZ4, true)] {
            if o.runs(label) {
                crs.push((label, env.crs(lz4).await?));
            }
        }
        let mut arw = Vec::new();
        for (label, lz4) in [(ARW_NONE, false), (ARW_LZ4, true)] {
            if peer_arrow::AVAILABLE && o.runs(label) {
                arw.push((label, peer_arrow::connect(&env.host, env.tcp, lz4).await?));
            }
        }
        let klick = if o.runs(KLICK) { Some(env.klick().await?) } else { None };
        let nc = env.nativeclick(o).await?;
        for _ in 0..o.rounds {
            for (label, c) in ch.iter_mut() {
                let m = Meter::start();
                let rows = hits::insert_columns(c, null, data).await?;
                res.add(&w_d, label, m.stop(rows), sum_of(label));
            }
            for (label, c) in rowc.iter() {
                let m = Meter::start();
                let rows = tiers::insert_hits(label, c, null, &typed_input, &value_input).await?;
                res.add(&w_d, label, m.stop(rows), sum_of(label));
            }
            if let Some(ins) = kept_ins.as_mut() {
                let m = Meter::start();
                let rows = tiers::write_all(ins, &typed_input).await?;
                res.add(&w_d, tiers::INSERTER_KEPT, m.stop(rows), sum_of(tiers::INSERTER_KEPT));
            }
            for (label, c) in off.iter().filter(|(l, _)| o.runs(l)) {
                let m = Meter::start();
                let rows = off_insert(c, null, &off_rows).await?;
                res.add(&w_d, label, m.stop(rows), sum_of(label));
            }
            if o.runs(official_native::LABEL) {
                let m = Meter::start();
                let rows = official_native::insert(&off[0].1, null, data).await?;
                res.add(&w_d, official_native::LABEL, m.stop(rows), sum_of(official_native::LABEL));
            }
            if let Some(block) = &onat_block {
                let m = Meter::start();
                let rows = official_native::send(&off[0].1, null, block).await?;
                res.add(&w_d, official_native::LABEL_PREBUILT, m.stop(rows), sum_of(official_native::LABEL_PREBUILT));
            }
            for (label, c) in crs.iter_mut() {
                let m = Meter::start();
                c.insert(null, &crs_input).await?;
                res.add(&w_d, label, m.stop(n), sum_of(label));
            }
            for (label, c) in arw.iter() {
                let input = arrow_input.clone();
                let m = Meter::start();
                let rows = peer_arrow::insert(c, null, input).await?;
                res.add(&w_d, label, m.stop(rows), sum_of(label));
            }
            if let Some(c) = &klick {
                let input = klick_input.clone();
                let m = Meter::start();
                let rows = klick_insert(c, null, input).await?;
                res.add(&w_d, KLICK, m.stop(rows), sum_of(KLICK));
            }
            for (label, c) in nc.iter() {
                let input = nc_input.clone();
                let m = Meter::start();
                let rows = nativeclick_peer::insert(c, null, input).await?;
                res.add(&w_d, label, m.stop(rows), sum_of(label));
            }
        }
        res.verify(&w_d, want)?;
    }

    if o.only.contains('e') {
        let p = o.parallel;
        eprintln!("{w_e}");
        let mut ch = Vec::new();
        for (label, mode) in ins_modes {
            if o.runs(label) {
                let mut conns = Vec::new();
                for _ in 0..p {
                    conns.push(env.chnative(mode).await?);
                }
                ch.push((label, conns));
            }
        }
        let mut rowc = Vec::new();
        for &label in &row_labels {
            let mut conns = Vec::new();
            for _ in 0..p {
                conns.push(env.chnative("none").await?);
            }
            rowc.push((label, conns));
        }
        let mut kept_c = Vec::new();
        if kept {
            for _ in 0..p {
                kept_c.push(env.chnative("none").await?);
            }
        }
        let mut kept_ins = Vec::new();
        for c in &kept_c {
            let mut ins = c.inserter::<ChBorrowed<'_>>(null).await?;
            tiers::write_all(&mut ins, &typed_input).await?;
            kept_ins.push(ins);
        }
        let off = [(OFF_NONE, env.official(false)), (OFF_LZ4, env.official(true))];
        let mut crs = Vec::new();
        for (label, lz4) in [(CRS_NONE, false), (CRS_LZ4, true)] {
            if o.runs(label) {
                let mut conns = Vec::new();
                for _ in 0..p {
                    conns.push(env.crs(lz4).await?);
                }
                crs.push((label, conns));
            }
        }
        let mut arw = Vec::new();
        for (label, lz4) in [(ARW_NONE, false), (ARW_LZ4, true)] {
            if peer_arrow::AVAILABLE && o.runs(label) {
                let mut conns = Vec::new();
                for _ in 0..p {
                    conns.push(peer_arrow::connect(&env.host, env.tcp, lz4).await?);
                }
                arw.push((label, conns));
            }
        }
        let mut klick = Vec::new();
        if o.runs(KLICK) {
            for _ in 0..p {
                klick.push(env.klick().await?);
            }
        }
        let mut nc = Vec::new();
        for (label, method) in NC_MODES {
            if o.runs(label) {
                let mut conns = Vec::new();
                for _ in 0..p {
                    conns.push(nativeclick_peer::connect(&env.host, env.tcp, method).await?);
                }
                nc.push((label, conns));
            }
        }
        let total = n * p as u64;
        for _ in 0..o.rounds {
            for (label, conns) in ch.iter_mut() {
                let m = Meter::start();
                let r = join_all(conns.iter_mut().map(|c| hits::insert_columns(c, null, data))).await;
                let rows = r.into_iter().try_fold(0u64, |a, r| r.map(|x| a + x))?;
                res.add(&w_e, label, m.stop(rows), sum_of(label));
            }
            for (label, conns) in rowc.iter() {
                let m = Meter::start();
                let r = join_all(conns.iter().map(|c| tiers::insert_hits(label, c, null, &typed_input, &value_input)))
                    .await;
                let rows = r.into_iter().try_fold(0u64, |a, r| r.map(|x| a + x))?;
                res.add(&w_e, label, m.stop(rows), sum_of(label));
            }
            if !kept_ins.is_empty() {
                let m = Meter::start();
                let r = join_all(kept_ins.iter_mut().map(|ins| tiers::write_all(ins, &typed_input))).await;
                let rows = r.into_iter().try_fold(0u64, |a, r| r.map(|x| a + x))?;
                res.add(&w_e, tiers::INSERTER_KEPT, m.stop(rows), sum_of(tiers::INSERTER_KEPT));
            }
            for (label, c) in off.iter().filter(|(l, _)| o.runs(l)) {
                let m = Meter::start();
                let r = join_all((0..p).map(|_| off_insert(c, null, &off_rows))).await;
                let rows = r.into_iter().try_fold(0u64, |a, r| r.map(|x| a + x))?;
                res.add(&w_e, label, m.stop(rows), sum_of(label));
            }
            if o.runs(official_native::LABEL) {
                let c = &off[0].1;
                let m = Meter::start();
                let r = join_all((0..p).map(|_| official_native::insert(c, null, data))).await;
                let rows = r.into_iter().try_fold(0u64, |a, r| r.map(|x| a + x))?;
                res.add(&w_e, official_native::LABEL, m.stop(rows), sum_of(official_native::LABEL));
            }
            for (label, conns) in crs.iter_mut() {
                let m = Meter::start();
                let r = join_all(conns.iter_mut().map(|c| c.insert(null, &crs_input))).await;
                for x in r {
                    x?;
                }
                res.add(&w_e, label, m.stop(total), sum_of(label));
            }
            for (label, conns) in arw.iter() {
                let inputs: Vec<_> = (0..p).map(|_| arrow_input.clone()).collect();
                let m = Meter::start();
                let r = join_all(conns.iter().zip(inputs).map(|(c, b)| peer_arrow::insert(c, null, b))).await;
                let rows = r.into_iter().try_fold(0u64, |a, r| r.map(|x| a + x))?;
                res.add(&w_e, label, m.stop(rows), sum_of(label));
            }
            if !klick.is_empty() {
                let inputs: Vec<Vec<KlickRow>> = (0..p).map(|_| klick_input.clone()).collect();
                let m = Meter::start();
                let r = join_all(klick.iter().zip(inputs).map(|(c, rows)| klick_insert(c, null, rows))).await;
                let rows = r.into_iter().try_fold(0u64, |a, r| r.map(|x| a + x))?;
                res.add(&w_e, KLICK, m.stop(rows), sum_of(KLICK));
            }
            for (label, conns) in nc.iter() {
                let inputs: Vec<Vec<nativeclick_peer::NcRow>> = (0..p).map(|_| nc_input.clone()).collect();
                let m = Meter::start();
                let r =
                    join_all(conns.iter().zip(inputs).map(|(c, rows)| nativeclick_peer::insert(c, null, rows))).await;
                let rows = r.into_iter().try_fold(0u64, |a, r| r.map(|x| a + x))?;
                res.add(&w_e, label, m.stop(rows), sum_of(label));
            }
        }
        res.verify(&w_e, want)?;
    }
    Ok(())
}

/// Runs one tokio task per connection handle (`tasks` of them in flight) and
/// gives the handles back with the tasks' results. Real tasks, as a service
/// would run them: no combinator polls futures that were not woken (join_all
/// on fewer than 31 futures polls all of them on every wake-up) or yields to
/// the driver after polling them all (FuturesUnordered).
async fn spawn_each<C, F, Fut>(conns: Vec<C>, f: F) -> Res<(Vec<C>, u64)>
where
    C: Send + 'static,
    F: Fn(C) -> Fut,
    Fut: std::future::Future<Output = (C, Res<u64>)> + Send + 'static,
{
    let handles: Vec<_> = conns.into_iter().map(|c| tokio::spawn(f(c))).collect();
    let (mut back, mut sum) = (Vec::new(), 0u64);
    for h in handles {
        let (c, r) = h.await?;
        back.push(c);
        sum = sum.wrapping_add(r?);
    }
    Ok((back, sum))
}

async fn select1(o: &Opts, env: &Env, res: &mut Results) -> Res<()> {
    let (t, q) = (o.select1_tasks, o.select1);
    let total = (t * q) as u64;
    let w = format!("(f) SELECT 1, {t} in flight");
    eprintln!("{w}: {t} tasks × {q} queries (one warm-up round first, not counted)");
    const SQL: &str = "SELECT 1 AS x";
    // chnative: one shared pooled Client that all the tasks use at once (the
    // pool opens up to 16 connections in the warm-up round).
    let mut ch = Vec::new();
    for (label, mode) in CH_MODES.iter().take(2) {
        let label = format!("{label}, one shared pooled Client");
        if o.runs(&label) {
            ch.push((label, env.chnative(mode).await?));
        }
    }
    // The row tiers, each on a Client of its own shared the same way.
    let mut rowc = Vec::new();
    for tier in tiers::SELECT1 {
        let label = format!("{tier}, one shared pooled Client");
        if o.runs(&label) {
            rowc.push((tier, label, env.chnative("none").await?));
        }
    }
    let off = [(OFF_NONE, env.official(false)), (OFF_LZ4, env.official(true))];
    let mut crs = Vec::new();
    for (label, lz4) in [(CRS_NONE, false), (CRS_LZ4, true)] {
        if o.runs(label) {
            let mut conns = Vec::new();
            for _ in 0..t {
                conns.push(env.crs(lz4).await?);
            }
            crs.push((label, conns));
        }
    }
    let mut arw = Vec::new();
    for (label, lz4) in [(ARW_NONE, false), (ARW_LZ4, true)] {
        if peer_arrow::AVAILABLE && o.runs(label) {
            let mut conns = Vec::new();
            for _ in 0..t {
                conns.push(Arc::new(peer_arrow::connect(&env.host, env.tcp, lz4).await?));
            }
            arw.push((label, conns));
        }
    }
    let mut klick = Vec::new();
    if o.runs(KLICK) {
        for _ in 0..t {
            klick.push(env.klick().await?);
        }
    }
    let mut nc = Vec::new();
    for (label, method) in NC_MODES {
        if o.runs(label) {
            let mut conns = Vec::new();
            for _ in 0..t {
                conns.push(nativeclick_peer::connect(&env.host, env.tcp, method).await?);
            }
            nc.push((label, conns));
        }
    }
    // Round 0 warms every client (connections, buffers) and is not recorded.
    for round in 0..=o.rounds {
        let mut add = |label: &str, s: Sample, sum: u64| {
            if round > 0 {
                res.add(&w, label, s, sum);
            }
        };
        for (label, c) in ch.iter() {
            LAT.prepare(t, q);
            let m = Meter::start();
            let (_, s) = spawn_each(vec![c.clone(); t], |c| async move {
                let mut s = 0u64;
                let mut lat = LAT.take();
                for _ in 0..q {
                    match timed(&mut lat, c.query_scalar::<u8>(SQL)).await {
                        Ok(x) => s += x as u64,
                        Err(e) => return (c, Err(e.into())),
                    }
                }
                LAT.give(lat);
                (c, Ok(s))
            })
            .await?;
            add(label, m.stop(total).with_lat(), s);
        }
        for &(tier, ref label, ref c) in rowc.iter() {
            LAT.prepare(t, q);
            let m = Meter::start();
            let (_, s) = spawn_each(vec![c.clone(); t], |c| tiers::select1(c, q, SQL, tier)).await?;
            add(label, m.stop(total).with_lat(), s);
        }
        for (label, c) in off.iter().filter(|(l, _)| o.runs(l)) {
            LAT.prepare(t, q);
            let m = Meter::start();
            let (_, s) = spawn_each(vec![c.clone(); t], |c| async move {
                let mut s = 0u64;
                let mut lat = LAT.take();
                for _ in 0..q {
                    match timed(&mut lat, c.query(SQL).fetch_one::<u8>()).await {
                        Ok(x) => s += x as u64,
                        Err(e) => return (c, Err(e.into())),
                    }
                }
                LAT.give(lat);
                (c, Ok(s))
            })
            .await?;
            add(label, m.stop(total).with_lat(), s);
        }
        if o.runs(official_native::LABEL) {
            let m = Meter::start();
            let (_, s) = spawn_each(vec![off[0].1.clone(); t], |c| async move {
                let mut s = 0u64;
                for _ in 0..q {
                    match official_native::read_sum(&c, SQL).await {
                        Ok((_, x)) => s = s.wrapping_add(x),
                        Err(e) => return (c, Err(e)),
                    }
                }
                (c, Ok(s))
            })
            .await?;
            add(official_native::LABEL, m.stop(total), s);
        }
        for (label, conns) in crs.iter_mut() {
            LAT.prepare(t, q);
            let m = Meter::start();
            let (back, s) = spawn_each(std::mem::take(conns), |mut c| async move {
                let mut s = 0u64;
                let mut lat = LAT.take();
                for _ in 0..q {
                    let r = match timed(&mut lat, c.query(SQL).fetch_all()).await {
                        Ok(b) => b.get::<u8, _>(0, 0),
                        Err(e) => Err(e),
                    };
                    match r {
                        Ok(x) => s += x as u64,
                        Err(e) => return (c, Err(e.into())),
                    }
                }
                LAT.give(lat);
                (c, Ok(s))
            })
            .await?;
            *conns = back;
            add(label, m.stop(total).with_lat(), s);
        }
        for (label, conns) in arw.iter() {
            LAT.prepare(t, q);
            let m = Meter::start();
            let (_, s) = spawn_each(conns.clone(), |c| async move {
                let mut s = 0u64;
                let mut lat = LAT.take();
                for _ in 0..q {
                    match timed(&mut lat, peer_arrow::read_sum(&c, SQL)).await {
                        Ok((_, x)) => s = s.wrapping_add(x),
                        Err(e) => return (c, Err(e)),
                    }
                }
                LAT.give(lat);
                (c, Ok(s))
            })
            .await?;
            add(label, m.stop(total).with_lat(), s);
        }
        if !klick.is_empty() {
            LAT.prepare(t, q);
            let m = Meter::start();
            let (_, s) = spawn_each(klick.clone(), |c| async move {
                let mut s = 0u64;
                let mut lat = LAT.take();
                for _ in 0..q {
                    match timed(&mut lat, c.query_one::<KOne>(SQL)).await {
                        Ok(x) => s += x.x as u64,
                        Err(e) => return (c, Err(e.into())),
                    }
                }
                LAT.give(lat);
                (c, Ok(s))
            })
            .await?;
            add(KLICK, m.stop(total).with_lat(), s);
        }
        for (label, conns) in nc.iter() {
            LAT.prepare(t, q);
            let m = Meter::start();
            let (_, s) = spawn_each(conns.clone(), |c| async move {
                let mut s = 0u64;
                let mut lat = LAT.take();
                for _ in 0..q {
                    match timed(&mut lat, c.query_one::<nativeclick_peer::NcOne>(SQL)).await {
                        Ok(x) => s += x.x as u64,
                        Err(e) => return (c, Err(e.into())),
                    }
                }
                LAT.give(lat);
                (c, Ok(s))
            })
            .await?;
            add(label, m.stop(total).with_lat(), s);
        }
    }
    res.verify(&w, total)?;
    Ok(())
}

fn main() {
    let opts = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("chnative-peers: {e}");
            std::process::exit(2);
        }
    };
    let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("chnative-peers: tokio runtime: {e}");
            std::process::exit(1);
        }
    };
    if let Err(e) = rt.block_on(run(opts)) {
        eprintln!("chnative-peers: {e}");
        std::process::exit(1);
    }
}
