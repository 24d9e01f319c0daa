//! How a read's cost grows: rows, columns, parallel streams and block size, for chnative and
//! its peers on the same axes (issue 20, part 6).
//!
//! ```text
//! cd benches/peers && cargo run --release --bin scaling -- [--max-rows N (20000000)] [--reps N (1)]
//!     [--axes rows,columns,streams,block] [--clients chnative,official-rowbinary,official-native,clickhouse-rs]
//!     [--out scaling/scaling.json]
//! python3 plot_scaling.py scaling/ scaling/*.json
//! ```
//!
//! Every point runs in a fresh child process (`scaling --point CLIENT ROWS COLS STREAMS BLOCK`),
//! so its peak RSS (`getrusage(RUSAGE_SELF).ru_maxrss` at the end) is that point's alone and no
//! buffer grown by an earlier point is reused. The child connects its streams first (outside
//! the measurement), then measures the read: wall time, process CPU (user + sys; the server is
//! another process), bytes and calls of a counting global allocator; it also reports its RSS
//! before the read. Clients take turns at every point; with `--reps N` each point runs N times
//! per client and the JSON holds every sample and the medians.
//!
//! The query: `SELECT number AS c0, …, number AS c{COLS-1} FROM numbers(start, count)
//! [SETTINGS max_block_size = BLOCK]`, split into STREAMS ranges read at once on one
//! current-thread runtime, one connection each. Every client sums every value of every
//! column; the sum must be COLS × (0 + 1 + … + ROWS-1) (wrapping).
//!
//! Axes (defaults; `--max-rows` caps every row count):
//! - rows: 1M, 2M, 5M, 10M, 20M, 50M, 100M rows of one UInt64 column;
//! - columns: 1, 10, 50, 100, 200, 500 UInt64 columns of 100k rows;
//! - streams: 1, 2, 4, 8, 16, 32, 64 streams sharing 10M rows of one column;
//! - block: max_block_size 8192, 32768, 65536, 131072, 262144, 1048576 for 10M rows of one column.
//!
//! Clients, all uncompressed: chnative (column blocks, `fetch_blocks`), the official crate over HTTP
//! in RowBinary (rows of COLS `u64`, validation off: a row type with a column count known only
//! at run time cannot be validated) and in Native (`fetch_native`, `Column::iter::<u64>`),
//! clickhouse-rs (native TCP, `stream_blocks`, `Column::iter::<u64>`).

use host::{loadavg, now_utc};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Instant;

use futures_util::{future::join_all, StreamExt};

#[path = "../counting.rs"]
mod counting;
#[path = "../host.rs"]
mod host;
use counting::{BYTES, CALLS};

type BoxError = Box<dyn std::error::Error + Send + Sync>;
type Res<T> = std::result::Result<T, BoxError>;

const CLIENTS: [&str; 4] = ["chnative", "official-rowbinary", "official-native", "clickhouse-rs"];

/// Process CPU seconds (user + sys) and peak RSS in KiB.
fn rusage() -> (f64, u64) {
    // SAFETY: getrusage only writes into the struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    if rc != 0 {
        return (f64::NAN, 0);
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (tv(ru.ru_utime) + tv(ru.ru_stime), ru.ru_maxrss as u64)
}

/// The current RSS in KiB (/proc/self/statm).
fn rss_now() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1).and_then(|p| p.parse::<u64>().ok()))
        .map(|pages| pages * 4)
        .unwrap_or(0)
}

fn port(var: &str, default: u16) -> u16 {
    std::env::var(var).ok().and_then(|p| p.parse().ok()).unwrap_or(default)
}

fn sql(cols: usize, start: u64, count: u64, block: u64) -> String {
    let list: Vec<String> = (0..cols).map(|i| format!("number AS c{i}")).collect();
    let mut q = format!("SELECT {} FROM numbers({start}, {count})", list.join(", "));
    if block > 0 {
        q.push_str(&format!(" SETTINGS max_block_size = {block}"));
    }
    q
}

fn expected(rows: u64, cols: usize) -> u64 {
    let s = (rows as u128 * (rows as u128).saturating_sub(1) / 2) as u64;
    s.wrapping_mul(cols as u64)
}

// ---- the official crate's RowBinary: a row of COLS u64 ----

/// Columns per row of the RowBinary read (set once per process, before the read).
static COLS: AtomicUsize = AtomicUsize::new(1);

/// One row of `COLS` UInt64 values, read as a RowBinary tuple and summed.
struct Wide(u64);

// A hand-written `Row`: the derive needs the column names at compile time. With validation
// off the crate reads plain RowBinary and calls `Deserialize` once per row.
impl clickhouse::Row for Wide {
    const NAME: &'static str = "Wide";
    const COLUMN_NAMES: &'static [&'static str] = &[];
    const COLUMN_COUNT: usize = 1;
    const KIND: clickhouse::_priv::RowKind = clickhouse::_priv::RowKind::Primitive;
    type Value<'a> = Wide;
}

impl<'de> serde::Deserialize<'de> for Wide {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V(usize);
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Wide;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                write!(f, "{} UInt64 values", self.0)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Wide, A::Error> {
                let mut s = 0u64;
                for _ in 0..self.0 {
                    let x: u64 = seq.next_element()?.ok_or_else(|| serde::de::Error::invalid_length(0, &self))?;
                    s = s.wrapping_add(x);
                }
                Ok(Wide(s))
            }
        }
        let n = COLS.load(Relaxed);
        d.deserialize_tuple(n, V(n))
    }
}

// ---- one point, in a child process ----

struct Point {
    client: String,
    rows: u64,
    cols: usize,
    streams: usize,
    block: u64,
}

/// The stream's `(start, count)` ranges.
fn ranges(rows: u64, streams: usize) -> Vec<(u64, u64)> {
    let per = rows / streams as u64;
    (0..streams as u64)
        .map(|i| {
            let start = i * per;
            let count = if i + 1 == streams as u64 { rows - start } else { per };
            (start, count)
        })
        .collect()
}

async fn ch_read(c: &chnative::Client, q: String) -> Res<(u64, u64)> {
    let mut s = c.fetch_blocks(q.as_str()).await?;
    let (mut rows, mut sum) = (0u64, 0u64);
    while let Some(b) = s.next().await? {
        for col in b.columns() {
            sum = col.view().values::<u64>()?.iter().fold(sum, |a, &x| a.wrapping_add(x));
        }
        rows += b.rows() as u64;
    }
    Ok((rows, sum))
}

async fn off_rb_read(c: &clickhouse::Client, q: String) -> Res<(u64, u64)> {
    let mut cur = c.query(&q).fetch::<Wide>()?;
    let (mut rows, mut sum) = (0u64, 0u64);
    while let Some(r) = cur.next().await? {
        sum = sum.wrapping_add(r.0);
        rows += 1;
    }
    Ok((rows, sum))
}

async fn off_native_read(c: &clickhouse::Client, q: String) -> Res<(u64, u64)> {
    let mut cur = c.query(&q).fetch_native()?;
    let (mut rows, mut sum) = (0u64, 0u64);
    while let Some(b) = cur.next().await? {
        for col in b.columns() {
            for x in col.iter::<u64>()? {
                sum = sum.wrapping_add(x?);
            }
        }
        rows += b.num_rows() as u64;
    }
    Ok((rows, sum))
}

async fn crs_read(c: &mut clickhouse_rs::ClientHandle, q: String) -> Res<(u64, u64)> {
    let mut st = c.query(q.as_str()).stream_blocks();
    let (mut rows, mut sum) = (0u64, 0u64);
    while let Some(b) = st.next().await {
        let b = b?;
        for col in b.columns() {
            sum = col.iter::<u64>()?.fold(sum, |a, &x| a.wrapping_add(x));
        }
        rows += b.row_count() as u64;
    }
    Ok((rows, sum))
}

fn fold(r: Vec<Res<(u64, u64)>>) -> Res<(u64, u64)> {
    r.into_iter().try_fold((0u64, 0u64), |(n, s), x| x.map(|(a, b)| (n + a, s.wrapping_add(b))))
}

async fn point(p: Point) -> Res<String> {
    let host = std::env::var("CHNATIVE_HOST").unwrap_or_else(|_| "127.0.0.1".into());
    let (tcp, http) = (port("CHNATIVE_TCP_PORT", 19000), port("CHNATIVE_HTTP_PORT", 18123));
    COLS.store(p.cols, Relaxed);
    let queries: Vec<String> = ranges(p.rows, p.streams).into_iter().map(|(s, n)| sql(p.cols, s, n, p.block)).collect();
    // Connect every stream first; only the reads are measured.
    enum Conns {
        Ch(Vec<chnative::Client>),
        Off(clickhouse::Client),
        Crs(Vec<clickhouse_rs::ClientHandle>),
    }
    let conns = match p.client.as_str() {
        "chnative" => {
            let mut v = Vec::new();
            for _ in 0..p.streams {
                v.push(
                    chnative::Client::connect_with(
                        chnative::Config::from_url(&format!(
                            "clickhouse://default@{host}:{tcp}/default?compression=none"
                        ))?
                        .max_block_bytes(1 << 31),
                    )
                    .await?,
                );
            }
            Conns::Ch(v)
        }
        "official-rowbinary" | "official-native" => Conns::Off(
            clickhouse::Client::default()
                .with_url(format!("http://{host}:{http}"))
                .with_user("default")
                .with_compression(clickhouse::Compression::None)
                .with_validation(false),
        ),
        "clickhouse-rs" => {
            let mut v = Vec::new();
            for _ in 0..p.streams {
                let url = format!(
                    "tcp://default@{host}:{tcp}/default?compression=none&ping_before_query=false&pool_min=1&pool_max=1"
                );
                v.push(clickhouse_rs::Pool::new(url).get_handle().await?);
            }
            Conns::Crs(v)
        }
        other => return Err(format!("unknown client {other}").into()),
    };
    let rss_before = rss_now();
    let (b0, a0) = (BYTES.load(Relaxed), CALLS.load(Relaxed));
    let (cpu0, _) = rusage();
    let t0 = Instant::now();
    let (rows, sum) = match conns {
        Conns::Ch(v) => fold(join_all(v.iter().zip(queries).map(|(c, q)| ch_read(c, q))).await)?,
        Conns::Off(c) if p.client == "official-rowbinary" => {
            fold(join_all(queries.into_iter().map(|q| off_rb_read(&c, q))).await)?
        }
        Conns::Off(c) => fold(join_all(queries.into_iter().map(|q| off_native_read(&c, q))).await)?,
        Conns::Crs(mut v) => fold(join_all(v.iter_mut().zip(queries).map(|(c, q)| crs_read(c, q))).await)?,
    };
    let wall = t0.elapsed().as_secs_f64();
    let (cpu1, maxrss) = rusage();
    let (bytes, allocs) = (BYTES.load(Relaxed) - b0, CALLS.load(Relaxed) - a0);
    Ok(format!(
        "{{\"rows\": {rows}, \"sum\": {sum}, \"wall\": {wall:.6}, \"cpu\": {:.6}, \"maxrss_kib\": {maxrss}, \
         \"rss_before_kib\": {rss_before}, \"bytes\": {bytes}, \"allocs\": {allocs}}}",
        cpu1 - cpu0
    ))
}

// ---- the driver ----

fn field(json: &str, key: &str) -> Option<f64> {
    let at = json.find(&format!("\"{key}\": "))? + key.len() + 4;
    let rest = &json[at..];
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    rest[..end].trim().parse().ok()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn run_child(exe: &std::path::Path, client: &str, rows: u64, cols: usize, streams: usize, block: u64) -> Res<String> {
    let out = std::process::Command::new(exe)
        .args(["--point", client, &rows.to_string(), &cols.to_string(), &streams.to_string(), &block.to_string()])
        .output()?;
    if !out.status.success() {
        return Err(format!(
            "{client} rows {rows} cols {cols} streams {streams} block {block}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )
        .into());
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

const USAGE: &str = "usage: scaling [--max-rows N (20000000)] [--reps N (1)] [--axes rows,columns,streams,block]
       [--clients chnative,official-rowbinary,official-native,clickhouse-rs] [--out FILE (stdout)]
       scaling --point CLIENT ROWS COLS STREAMS BLOCK (one point; what the driver runs)";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--point") {
        let p = (|| -> Res<Point> {
            Ok(Point {
                client: args.get(1).ok_or(USAGE)?.clone(),
                rows: args.get(2).ok_or(USAGE)?.parse()?,
                cols: args.get(3).ok_or(USAGE)?.parse()?,
                streams: args.get(4).ok_or(USAGE)?.parse::<usize>()?.max(1),
                block: args.get(5).ok_or(USAGE)?.parse()?,
            })
        })();
        let r = p.and_then(|p| tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(point(p)));
        match r {
            Ok(line) => println!("{line}"),
            Err(e) => {
                eprintln!("scaling --point: {e}");
                std::process::exit(1);
            }
        }
        return;
    }
    if let Err(e) = drive(args) {
        eprintln!("scaling: {e}");
        std::process::exit(1);
    }
}

fn drive(args: Vec<String>) -> Res<()> {
    let mut max_rows: u64 = 20_000_000;
    let mut reps = 1usize;
    let mut axes = "rows,columns,streams,block".to_string();
    let mut clients = CLIENTS.join(",");
    let mut out: Option<String> = None;
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        let mut val = || it.next().ok_or_else(|| format!("{a} needs a value\n{USAGE}"));
        match a.as_str() {
            "--max-rows" => max_rows = val()?.parse()?,
            "--reps" => reps = val()?.parse::<usize>()?.max(1),
            "--axes" => axes = val()?,
            "--clients" => clients = val()?,
            "--out" => out = Some(val()?),
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            other => return Err(format!("unknown argument `{other}`\n{USAGE}").into()),
        }
    }
    let clients: Vec<&str> = clients.split(',').filter(|c| !c.is_empty()).collect();
    let exe = std::env::current_exe()?;
    // (axis, x, rows, cols, streams, block)
    let mut plan: Vec<(&str, u64, u64, usize, usize, u64)> = Vec::new();
    for axis in axes.split(',') {
        match axis {
            "rows" => {
                for r in [1_000_000u64, 2_000_000, 5_000_000, 10_000_000, 20_000_000, 50_000_000, 100_000_000] {
                    if r <= max_rows {
                        plan.push(("rows", r, r, 1, 1, 0));
                    }
                }
            }
            "columns" => {
                for c in [1usize, 10, 50, 100, 200, 500] {
                    plan.push(("columns", c as u64, 100_000u64.min(max_rows), c, 1, 0));
                }
            }
            "streams" => {
                for s in [1usize, 2, 4, 8, 16, 32, 64] {
                    plan.push(("streams", s as u64, 10_000_000u64.min(max_rows), 1, s, 0));
                }
            }
            "block" => {
                for b in [8192u64, 32768, 65536, 131072, 262144, 1048576] {
                    plan.push(("block", b, 10_000_000u64.min(max_rows), 1, 1, b));
                }
            }
            other => return Err(format!("unknown axis `{other}`\n{USAGE}").into()),
        }
    }
    let started = now_utc();
    let load0 = loadavg();
    let mut points = Vec::new();
    for &(axis, x, rows, cols, streams, block) in &plan {
        let want = expected(rows, cols);
        for &client in &clients {
            points.push((axis, x, rows, cols, streams, block, client, Vec::<String>::new()));
        }
        let first = points.len() - clients.len();
        for _ in 0..reps {
            for (i, &client) in clients.iter().enumerate() {
                let line = run_child(&exe, client, rows, cols, streams, block)?;
                let sum = field(&line, "sum").map(|s| s as u64);
                let got_rows = field(&line, "rows").map(|r| r as u64);
                // The sum is compared as text: f64 loses the low bits of a u64.
                let sum_ok = line.contains(&format!("\"sum\": {want},"));
                if !sum_ok || got_rows != Some(rows) {
                    return Err(format!(
                        "{client} {axis}={x}: rows {got_rows:?} (want {rows}), sum {sum:?} (want {want}): {line}"
                    )
                    .into());
                }
                eprintln!(
                    "{axis:>7} {x:>9} {client:<20} wall {:>7.3} s cpu {:>7.3} s maxrss {:>8} KiB bytes {:>12}",
                    field(&line, "wall").unwrap_or(f64::NAN),
                    field(&line, "cpu").unwrap_or(f64::NAN),
                    field(&line, "maxrss_kib").unwrap_or(0.0),
                    field(&line, "bytes").unwrap_or(0.0),
                );
                points[first + i].7.push(line);
            }
        }
    }
    let mut json = String::new();
    json.push_str(&format!(
        "{{\n  \"started\": \"{started}\",\n  \"finished\": \"{}\",\n  \"loadavg_start\": \"{load0}\",\n  \"loadavg_end\": \"{}\",\n  \
         \"reps\": {reps},\n  \"max_rows\": {max_rows},\n  \"nproc\": {},\n  \"points\": [\n",
        now_utc(),
        loadavg(),
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0)
    ));
    for (i, (axis, x, rows, cols, streams, block, client, samples)) in points.iter().enumerate() {
        let med = |k: &str| median(samples.iter().filter_map(|s| field(s, k)).collect());
        json.push_str(&format!(
            "    {{\"axis\": \"{axis}\", \"x\": {x}, \"client\": \"{client}\", \"rows\": {rows}, \"cols\": {cols}, \
             \"streams\": {streams}, \"block\": {block}, \"wall\": {:.6}, \"cpu\": {:.6}, \"maxrss_kib\": {:.0}, \
             \"rss_before_kib\": {:.0}, \"bytes\": {:.0}, \"allocs\": {:.0}, \"samples\": [{}]}}{}\n",
            med("wall"),
            med("cpu"),
            med("maxrss_kib"),
            med("rss_before_kib"),
            med("bytes"),
            med("allocs"),
            samples.join(", "),
            if i + 1 == points.len() { "" } else { "," }
        ));
    }
    json.push_str("  ]\n}\n");
    match out {
        Some(path) => std::fs::write(&path, json)?,
        None => print!("{json}"),
    }
    Ok(())
}
