//! `cpp_peers`: chn and chnative against the official C++ tools, as whole processes, side by
//! side: clickhouse-client 25.8 and clickhouse-benchmark 25.8 (from the chdb 3.7.2 wheel, run by
//! scripts/chmain.py; scripts/clickhouse-client.sh installs them).
//!
//! ```text
//! cargo build --release -p chnative-cli            # at the repository root: target/release/chn
//! cd benches/peers && cargo run --release --bin cpp_peers -- [--rounds 5] [--rows 10000000]
//!     [--formats TSV,CSV,JSONEachRow,Pretty] [--queries 20000] [--only rs] [--chn PATH]
//! ```
//!
//! (r) rendering: `SELECT number, toString(number * 3) AS s, toDateTime(number, 'UTC') AS t FROM
//! numbers(N)` written in each format by `chn --format F` and by clickhouse-client (`… INTO
//! OUTFILE '/dev/stdout' APPEND FORMAT F`: under chdb the client's own stdout is captured), both
//! with stdout on /dev/null. Each round runs every command once, in turn, so the machine's drift
//! hits them alike. Before timing, each format's output is compared (length and a hash): equal
//! or not is printed. `SELECT 1` through each client measures its start-up, so the rendering's
//! cost can be given net of it. Pretty also runs with `--output_format_pretty_max_rows=N` for
//! clickhouse-client, which by default stops rendering after 10,000 rows.
//!
//! (s) `SELECT 1` with 16 in flight: clickhouse-benchmark `--concurrency 16 -i Q`, against this
//! binary's `select1-child`: chnative, one pooled `Client` shared by 16 tokio tasks on a
//! current-thread runtime. Each tool's queries/s is its own report; CPU per query is the
//! difference of the whole process's CPU between Q queries and Q/10, divided by the difference
//! in queries (so start-up cancels out).
//!
//! Figures are the kernel's accounting of each finished child (wait4: user + system CPU, peak
//! RSS) and wall time around it: the same as `/usr/bin/time -v` shows. Port: CHNATIVE_TCP_PORT
//! (default 19000); the server must be running.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::Instant;

type Res<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

#[derive(Clone, Copy, Debug)]
struct Run {
    wall: f64,
    cpu: f64,
    /// Peak resident set, KiB.
    rss: u64,
}

/// Runs `cmd` to its end with stdout/stderr as given; the kernel's figures of the child.
fn measure(cmd: &mut Command) -> Res<(Run, i32)> {
    let t0 = Instant::now();
    let child = cmd.spawn()?;
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: wait4 writes only into the two out-parameters we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; `pid` is our own child, not yet reaped.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    let wall = t0.elapsed().as_secs_f64();
    if r != pid {
        return Err(format!("wait4: {}", std::io::Error::last_os_error()).into());
    }
    std::mem::forget(child); // reaped above
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let code = if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) } else { -1 };
    Ok((Run { wall, cpu: tv(ru.ru_utime) + tv(ru.ru_stime), rss: ru.ru_maxrss as u64 }, code))
}

fn stats(v: &[f64]) -> (f64, f64, f64) {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let n = s.len();
    let med = if n % 2 == 1 { s[n / 2] } else { (s[n / 2 - 1] + s[n / 2]) / 2.0 };
    (s[0], med, s[n - 1])
}

fn fmt3(v: &[f64]) -> String {
    let (a, b, c) = stats(v);
    format!("{b:.3} ({a:.3}–{c:.3})")
}

struct Tools {
    chn: String,
    python: String,
    chmain: String,
    port: String,
}

impl Tools {
    fn chn(&self, sql: &str, format: &str) -> Command {
        let mut c = Command::new(&self.chn);
        c.args(["--port", &self.port, "--query", sql, "--format", format]).env_remove("CLICKHOUSE_PASSWORD");
        c
    }

    fn client(&self, sql: &str, format: &str, extra: &[String]) -> Command {
        let mut c = Command::new(&self.python);
        c.args([&self.chmain, "client", "--port", &self.port])
            .args(extra)
            .arg("--query")
            .arg(format!("{sql} INTO OUTFILE '/dev/stdout' APPEND FORMAT {format}"));
        c
    }

    fn benchmark(&self, queries: usize) -> Command {
        let mut c = Command::new(&self.python);
        c.args([&self.chmain, "benchmark", "--port", &self.port, "--concurrency", "16", "--delay", "0"]).args([
            "-i",
            &queries.to_string(),
            "--query",
            "SELECT 1",
        ]);
        c
    }
}

/// Runs `cmd` with stdout into a pipe: (bytes, FNV-1a hash) of what it wrote.
fn output_of(cmd: &mut Command) -> Res<(u64, u64)> {
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::null()).spawn()?;
    let mut out = child.stdout.take().unwrap();
    let (mut n, mut h) = (0u64, 0xcbf29ce484222325u64);
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let k = out.read(&mut buf)?;
        if k == 0 {
            break;
        }
        n += k as u64;
        for &b in &buf[..k] {
            h = (h ^ b as u64).wrapping_mul(0x100000001b3);
        }
    }
    let st = child.wait()?;
    if !st.success() {
        return Err(format!("{cmd:?} failed: {st}").into());
    }
    Ok((n, h))
}

fn timed(cmd: &mut Command) -> Res<Run> {
    let (r, code) = measure(cmd.stdout(Stdio::null()).stderr(Stdio::null()))?;
    if code != 0 {
        return Err(format!("{cmd:?} exited with {code}").into());
    }
    Ok(r)
}

fn render(t: &Tools, rows: u64, rounds: usize, formats: &[String]) -> Res<()> {
    let sql = format!("SELECT number, toString(number * 3) AS s, toDateTime(number, 'UTC') AS t FROM numbers({rows})");
    println!("### (r) {sql}\n");
    // (label, command maker)
    type Maker<'a> = Box<dyn Fn() -> Command + 'a>;
    let mut variants: Vec<(String, Maker<'_>)> = vec![
        ("chn, SELECT 1 (start-up)".into(), Box::new(|| t.chn("SELECT 1", "TSV"))),
        ("clickhouse-client, SELECT 1 (start-up)".into(), Box::new(|| t.client("SELECT 1", "TSV", &[]))),
    ];
    let all_rows = vec![format!("--output_format_pretty_max_rows={rows}")];
    for f in formats {
        let (f1, f2, s1, s2) = (f.clone(), f.clone(), sql.clone(), sql.clone());
        let (a, b) = (format!("chn, {f}"), format!("clickhouse-client, {f}"));
        let (ca, cb) = (t.chn(&sql, f), t.client(&sql, f, &[]));
        let (mut ca, mut cb) = (ca, cb);
        let (na, ha) = output_of(&mut ca)?;
        let (nb, hb) = output_of(&mut cb)?;
        println!(
            "- {f}: chn wrote {na} bytes, clickhouse-client {nb}: {}",
            if (na, ha) == (nb, hb) { "identical" } else { "DIFFERENT" }
        );
        variants.push((a, Box::new(move || t.chn(&s1, &f1))));
        variants.push((b, Box::new(move || t.client(&s2, &f2, &[]))));
        if f.starts_with("Pretty") {
            let (f3, s3, extra) = (f.clone(), sql.clone(), all_rows.clone());
            let mut cc = t.client(&sql, f, &all_rows);
            let (nc, hc) = output_of(&mut cc)?;
            println!(
                "- {f}, clickhouse-client with {}: {nc} bytes: {}",
                all_rows[0],
                if (na, ha) == (nc, hc) { "identical to chn's" } else { "not chn's" }
            );
            variants.push((
                format!("clickhouse-client, {f}, {}", all_rows[0]),
                Box::new(move || t.client(&s3, &f3, &extra)),
            ));
        }
    }
    println!();
    let mut runs: Vec<Vec<Run>> = vec![Vec::new(); variants.len()];
    for round in 0..rounds {
        for (k, (label, make)) in variants.iter().enumerate() {
            let r = timed(&mut make())?;
            eprintln!("  round {round} {label:<60} wall {:.3} cpu {:.3} rss {} KiB", r.wall, r.cpu, r.rss);
            runs[k].push(r);
        }
    }
    let cpu = |k: usize| -> Vec<f64> { runs[k].iter().map(|r| r.cpu).collect() };
    let start_chn = stats(&cpu(0)).1;
    let start_cpp = stats(&cpu(1)).1;
    println!("| command | wall s, median (min–max) | CPU s, median (min–max) | CPU net of start-up | peak RSS MiB | CPU vs clickhouse-client (net) |");
    println!("|---|---:|---:|---:|---:|---:|");
    for (k, (label, _)) in variants.iter().enumerate() {
        let wall: Vec<f64> = runs[k].iter().map(|r| r.wall).collect();
        let rss: Vec<f64> = runs[k].iter().map(|r| r.rss as f64 / 1024.0).collect();
        let c = cpu(k);
        let is_chn = label.starts_with("chn");
        let net = if k < 2 { f64::NAN } else { stats(&c).1 - if is_chn { start_chn } else { start_cpp } };
        // The ratio to the client's default run of the same format, net of each one's start-up.
        let ratio = if is_chn && k >= 2 {
            let peer = |j: usize| net / (stats(&cpu(j)).1 - start_cpp);
            match variants.get(k + 2) {
                // Pretty: also against the client rendering every row, as chn does.
                Some((l, _)) if l.contains("max_rows") => {
                    format!("{:.2}× (all rows: {:.2}×)", peer(k + 1), peer(k + 2))
                }
                _ => format!("{:.2}×", peer(k + 1)),
            }
        } else {
            "–".into()
        };
        println!(
            "| {label} | {} | {} | {} | {:.1} | {ratio} |",
            fmt3(&wall),
            fmt3(&c),
            if net.is_nan() { "–".into() } else { format!("{net:.3}") },
            stats(&rss).1
        );
    }
    println!();
    Ok(())
}

/// `Q` queries/s reported by the tool itself, from its output.
fn qps_from(text: &str, key: &str) -> Option<f64> {
    let at = text.find(key)? + key.len();
    text[at..].trim_start().split(|c: char| !(c.is_ascii_digit() || c == '.')).next()?.parse().ok()
}

fn select1(t: &Tools, queries: usize, rounds: usize) -> Res<()> {
    println!("### (s) SELECT 1, 16 in flight, {queries} queries\n");
    let me = std::env::current_exe()?;
    let small = (queries / 10).max(16);
    let chn_cmd = |q: usize| {
        let mut c = Command::new(&me);
        c.args(["select1-child", &q.to_string(), "16"]).env("CHNATIVE_TCP_PORT", &t.port);
        c
    };
    // (label, runs of `queries`, runs of `small`, queries/s reported)
    type Row<'a> = (&'a str, Vec<Run>, Vec<Run>, Vec<f64>);
    let mut rows: Vec<Row<'_>> = vec![
        ("chnative (one pooled Client, 16 tasks)", vec![], vec![], vec![]),
        ("clickhouse-benchmark --concurrency 16", vec![], vec![], vec![]),
    ];
    for round in 0..rounds {
        for (k, row) in rows.iter_mut().enumerate() {
            let mut full = if k == 0 { chn_cmd(queries) } else { t.benchmark(queries) };
            let mut short = if k == 0 { chn_cmd(small) } else { t.benchmark(small) };
            // Its report goes to a file (stderr for the benchmark, stdout for the child).
            let report = std::env::temp_dir().join(format!("cpp_peers-{}-{k}.txt", std::process::id()));
            let f = std::fs::File::create(&report)?;
            let (r, code) = if k == 0 {
                measure(full.stdout(f).stderr(Stdio::null()))?
            } else {
                measure(full.stdout(Stdio::null()).stderr(f))?
            };
            let text = std::fs::read_to_string(&report)?;
            let _ = std::fs::remove_file(&report);
            if code != 0 {
                return Err(format!("{full:?} exited with {code}: {text}").into());
            }
            let qps =
                qps_from(&text, if k == 0 { "qps:" } else { "QPS:" }).ok_or_else(|| format!("no QPS in {text}"))?;
            let s = timed(&mut short)?;
            eprintln!(
                "  round {round} {:<45} qps {qps:.0} cpu {:.3} (short run {:.3}) rss {} KiB",
                row.0, r.cpu, s.cpu, r.rss
            );
            row.1.push(r);
            row.2.push(s);
            row.3.push(qps);
        }
    }
    println!("| client | queries/s, median (min–max) | CPU µs per query | peak RSS MiB | whole process CPU s, {queries} queries |");
    println!("|---|---:|---:|---:|---:|");
    for (label, full, short, qps) in &rows {
        let f: Vec<f64> = full.iter().map(|r| r.cpu).collect();
        let s: Vec<f64> = short.iter().map(|r| r.cpu).collect();
        let per = (stats(&f).1 - stats(&s).1) / (queries - small) as f64 * 1e6;
        let rss: Vec<f64> = full.iter().map(|r| r.rss as f64 / 1024.0).collect();
        println!("| {label} | {} | {per:.1} | {:.1} | {} |", fmt3(qps).replace(".000", ""), stats(&rss).1, fmt3(&f));
    }
    println!();
    Ok(())
}

/// chnative's side of (s): `queries` `SELECT 1` over `tasks` tasks sharing one pooled Client.
fn select1_child(queries: usize, tasks: usize) -> Res<()> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    rt.block_on(async {
        let port = std::env::var("CHNATIVE_TCP_PORT").unwrap_or_else(|_| "19000".into());
        let client = chnative::Client::connect(&format!("clickhouse://default@127.0.0.1:{port}/default")).await?;
        let per = queries.div_ceil(tasks);
        let t0 = Instant::now();
        let handles: Vec<_> = (0..tasks)
            .map(|_| {
                let c = client.clone();
                tokio::spawn(async move {
                    let mut s = 0u64;
                    for _ in 0..per {
                        s += c.fetch_scalar::<u8>("SELECT 1").await? as u64;
                    }
                    Res::Ok(s)
                })
            })
            .collect();
        let mut sum = 0;
        for h in handles {
            sum += h.await??;
        }
        assert_eq!(sum as usize, per * tasks);
        println!("qps: {:.1}", (per * tasks) as f64 / t0.elapsed().as_secs_f64());
        Res::Ok(())
    })
}

fn main() -> Res<()> {
    let mut args = std::env::args().skip(1).collect::<Vec<_>>();
    if args.first().map(String::as_str) == Some("select1-child") {
        let q = args.get(1).and_then(|x| x.parse().ok()).unwrap_or(20_000);
        let t = args.get(2).and_then(|x| x.parse().ok()).unwrap_or(16);
        return select1_child(q, t);
    }
    let (mut rounds, mut rows, mut queries) = (5usize, 10_000_000u64, 20_000usize);
    let mut formats = "TSV,CSV,JSONEachRow,Pretty".to_string();
    let mut only = "rs".to_string();
    let mut chn = format!("{ROOT}/target/release/chn");
    let mut it = args.drain(..);
    while let Some(a) = it.next() {
        let mut v = || it.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--rounds" => rounds = v()?.parse()?,
            "--rows" => rows = v()?.parse()?,
            "--queries" => queries = v()?.parse()?,
            "--formats" => formats = v()?,
            "--only" => only = v()?,
            "--chn" => chn = v()?,
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let out = Command::new("bash").arg(format!("{ROOT}/scripts/clickhouse-client.sh")).arg("--install").output()?;
    if !out.status.success() {
        return Err(format!("scripts/clickhouse-client.sh --install: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    let tools = Tools {
        chn,
        python: String::from_utf8(out.stdout)?.trim().to_string(),
        chmain: format!("{ROOT}/scripts/chmain.py"),
        port: std::env::var("CHNATIVE_TCP_PORT").unwrap_or_else(|_| "19000".into()),
    };
    if !std::path::Path::new(&tools.chn).exists() {
        return Err(format!("no {}: cargo build --release -p chnative-cli first", tools.chn).into());
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let commit = Command::new("git")
        .args(["-C", ROOT, "rev-parse", "--short", "HEAD"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    println!("## chn and chnative against the official C++ client and benchmark\n");
    println!("- commit {commit}; {rounds} rounds, the commands interleaved within each round");
    println!("- load average at start: {}", load.split_whitespace().take(3).collect::<Vec<_>>().join(" "));
    println!();
    let formats: Vec<String> = formats.split(',').map(str::to_string).collect();
    if only.contains('r') {
        render(&tools, rows, rounds, &formats)?;
    }
    if only.contains('s') {
        select1(&tools, queries, rounds)?;
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("- load average at end: {}", load.split_whitespace().take(3).collect::<Vec<_>>().join(" "));
    Ok(())
}
