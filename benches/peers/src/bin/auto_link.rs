//! `compression=auto` against every fixed choice, on whatever link the bench runs over
//! (issue 20, part 4): loopback, or `scripts/slowlink.sh`'s rate-limited veth at 10 or 1 Gbit.
//!
//! ```text
//! cd benches/peers && cargo build --release --bin auto_link
//! B=$CARGO_TARGET_DIR/release/auto_link
//! $B [--host 127.0.0.1] [--rounds 5] [--warmup 3] [--hits-rows 1000000] [--numbers 20000000] [--insert-rows 100000]
//! scripts/slowlink.sh up   # 1gbit; CHN_SLOW_RATE=10gbit CHN_SLOW_BURST=1mb for 10 Gbit
//! CHNATIVE_LISTEN_HOST=127.0.0.1,10.77.0.1 scripts/server.sh start
//! ip netns exec chn-slow $B --host 10.77.0.1
//! ```
//!
//! Workloads: (a) read the hits table (`SELECT * FROM hits LIMIT n`: 105 columns of random
//! data that compress badly), (b) read `numbers(n)` (compresses 8× with ZSTD), (d) insert n hits
//! rows from columns into a Null table. Clients: chnative with compression none, lz4, zstd:1
//! and auto, one pooled client each, connected once. auto runs `--warmup` untimed rounds of each
//! workload first (it learns per statement: none, then LZ4 and ZSTD(1) on a slow link), then
//! every client runs each workload once per round, interleaved. Reported: medians of wall time
//! and client CPU (user + sys of this process), what auto chose in its timed rounds, and auto's
//! wall time over the best fixed choice's. Every read's checksum and every insert's row count is
//! checked.

#[allow(dead_code)]
#[path = "../hits.rs"]
mod hits;
#[path = "../host.rs"]
mod host;

use std::time::Instant;

use host::{loadavg, now_utc};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

const MODES: [&str; 4] = ["none", "lz4", "zstd:1", "auto"];

struct Opts {
    host: String,
    tcp: u16,
    rounds: usize,
    warmup: usize,
    hits_rows: u64,
    numbers: u64,
    insert_rows: usize,
    only: String,
}

fn opts() -> Res<Opts> {
    let mut o = Opts {
        host: "127.0.0.1".into(),
        tcp: std::env::var("CHNATIVE_TCP_PORT").ok().and_then(|p| p.parse().ok()).unwrap_or(19000),
        rounds: 5,
        warmup: 3,
        hits_rows: 1_000_000,
        numbers: 20_000_000,
        insert_rows: 100_000,
        only: "abd".into(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut v = || args.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--host" => o.host = v()?,
            "--port" => o.tcp = v()?.parse()?,
            "--rounds" => o.rounds = v()?.parse()?,
            "--warmup" => o.warmup = v()?.parse()?,
            "--hits-rows" => o.hits_rows = v()?.parse()?,
            "--numbers" => o.numbers = v()?.parse()?,
            "--insert-rows" => o.insert_rows = v()?.parse()?,
            "--only" => o.only = v()?,
            other => return Err(format!("unknown argument `{other}`").into()),
        }
    }
    Ok(o)
}

fn cpu_seconds() -> f64 {
    // SAFETY: getrusage only writes into the struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return f64::NAN;
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// One run of a workload: (wall s, CPU s, the codec used).
type Run = (f64, f64, chnative::Compression);

async fn read(c: &chnative::Client, sql: &str, kinds: Option<&[hits::Kind]>, expect: (u64, u64)) -> Res<Run> {
    let (t0, cpu0) = (Instant::now(), cpu_seconds());
    let mut s = c.fetch_blocks(sql).await?;
    let (mut rows, mut sum) = (0u64, 0u64);
    while let Some(b) = s.next().await? {
        rows += b.rows() as u64;
        sum = sum.wrapping_add(match kinds {
            Some(k) => hits::block_sum(b, k)?,
            None => b.column("number").unwrap().view().values::<u64>()?.iter().fold(0u64, |a, &x| a.wrapping_add(x)),
        });
    }
    let run = (t0.elapsed().as_secs_f64(), cpu_seconds() - cpu0, s.compression());
    if expect.0 != 0 && (rows, sum) != expect {
        return Err(format!("{sql}: got ({rows}, {sum}), expected {expect:?}").into());
    }
    Ok(run)
}

async fn insert(c: &chnative::Client, table: &str, d: &hits::HitsData) -> Res<Run> {
    let (t0, cpu0) = (Instant::now(), cpu_seconds());
    let s = hits::insert_summary(c, table, d).await?;
    if s.rows != d.rows as u64 {
        return Err(format!("inserted {} rows of {}", s.rows, d.rows).into());
    }
    Ok((t0.elapsed().as_secs_f64(), cpu_seconds() - cpu0, s.compression))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Res<()> {
    let o = opts()?;
    let url = |mode: &str| format!("clickhouse://default@{}:{}/default?compression={mode}", o.host, o.tcp);
    let admin = chnative::Client::connect(&url("none")).await?;
    let mut clients = Vec::new();
    for m in MODES {
        clients.push((m, chnative::Client::connect(&url(m)).await?));
    }
    hits::ensure(&admin, o.hits_rows.max(o.insert_rows as u64)).await?;
    let kinds: Vec<hits::Kind> = hits::schema().iter().map(|(_, _, k)| *k).collect();
    let hits_sql = format!("SELECT * FROM hits LIMIT {}", o.hits_rows);
    let nums_sql = format!("SELECT number FROM numbers({})", o.numbers);
    let n = o.numbers;
    let nums_expect = (n, (n as u128 * (n as u128 - 1) / 2) as u64);
    println!("# compression=auto against fixed codecs");
    println!();
    println!("- date: {}; host {}:{}", now_utc(), o.host, o.tcp);
    println!("- load average at start: {}", loadavg());
    println!(
        "- {} timed rounds (clients interleaved), auto warmed up with {} untimed rounds per workload",
        o.rounds, o.warmup
    );

    let mut table: Vec<(String, String, Vec<Run>)> = Vec::new();

    if o.only.contains('a') {
        // The expected checksum: an uncompressed read.
        let mut s = admin.fetch_blocks(hits_sql.as_str()).await?;
        let (mut rows, mut sum) = (0u64, 0u64);
        while let Some(b) = s.next().await? {
            rows += b.rows() as u64;
            sum = sum.wrapping_add(hits::block_sum(b, &kinds)?);
        }
        drop(s);
        let expect = (rows, sum);
        let w = format!("(a) read {} hits rows", o.hits_rows);
        eprintln!("{w}");
        for _ in 0..o.warmup {
            read(&clients[3].1, &hits_sql, Some(&kinds), expect).await?;
        }
        let mut runs: Vec<Vec<Run>> = vec![Vec::new(); MODES.len()];
        for _ in 0..o.rounds {
            for (i, (_, c)) in clients.iter().enumerate() {
                runs[i].push(read(c, &hits_sql, Some(&kinds), expect).await?);
            }
        }
        for (i, r) in runs.into_iter().enumerate() {
            table.push((w.clone(), MODES[i].into(), r));
        }
    }
    if o.only.contains('b') {
        let w = format!("(b) read {} UInt64", o.numbers);
        eprintln!("{w}");
        for _ in 0..o.warmup {
            read(&clients[3].1, &nums_sql, None, nums_expect).await?;
        }
        let mut runs: Vec<Vec<Run>> = vec![Vec::new(); MODES.len()];
        for _ in 0..o.rounds {
            for (i, (_, c)) in clients.iter().enumerate() {
                runs[i].push(read(c, &nums_sql, None, nums_expect).await?);
            }
        }
        for (i, r) in runs.into_iter().enumerate() {
            table.push((w.clone(), MODES[i].into(), r));
        }
    }
    if o.only.contains('d') {
        let w = format!("(d) insert {} hits rows", o.insert_rows);
        eprintln!("{w}");
        let data = hits::load(&admin, o.insert_rows).await?;
        let s = hits::structure();
        admin.execute("DROP TABLE IF EXISTS auto_link_null").await?;
        admin.execute(format!("CREATE TABLE auto_link_null ({s}) ENGINE = Null").as_str()).await?;
        for _ in 0..o.warmup {
            insert(&clients[3].1, "auto_link_null", &data).await?;
        }
        let mut runs: Vec<Vec<Run>> = vec![Vec::new(); MODES.len()];
        for _ in 0..o.rounds {
            for (i, (_, c)) in clients.iter().enumerate() {
                runs[i].push(insert(c, "auto_link_null", &data).await?);
            }
        }
        for (i, r) in runs.into_iter().enumerate() {
            table.push((w.clone(), MODES[i].into(), r));
        }
    }
    println!("- load average at end: {}", loadavg());
    println!();
    println!("| workload | compression | wall s | client CPU s | auto chose (timed rounds) | wall vs best fixed |");
    println!("|---|---|---:|---:|---|---:|");
    for w in table.iter().map(|(w, _, _)| w.clone()).collect::<std::collections::BTreeSet<_>>() {
        let rows: Vec<_> = table.iter().filter(|(x, _, _)| *x == w).collect();
        let wall = |r: &[Run]| median(r.iter().map(|x| x.0).collect());
        let best = rows.iter().filter(|(_, m, _)| m != "auto").map(|(_, _, r)| wall(r)).fold(f64::INFINITY, f64::min);
        for (i, (_, m, r)) in rows.iter().enumerate() {
            let chose = if m == "auto" {
                r.iter().map(|x| x.2.to_string()).collect::<Vec<_>>().join(", ")
            } else {
                String::new()
            };
            println!(
                "| {} | {m} | {:.3} | {:.3} | {chose} | {:.2}× |",
                if i == 0 { w.as_str() } else { "" },
                wall(r),
                median(r.iter().map(|x| x.1).collect()),
                wall(r) / best
            );
        }
    }
    admin.execute("DROP TABLE IF EXISTS auto_link_null").await?;
    Ok(())
}
