//! `lz4`: which LZ4 implementation should chnative use? Decodes and encodes
//! realistic column data with lz4_flex 0.11 (the version chnative has used),
//! lz4_flex 0.14 (adds a reusable compression table) and the C library
//! (lz4-sys, liblz4 1.10), each the way chnative would call it.
//!
//! ```text
//! cargo run --release --bin lz4 -- [--reps N] [--rows N]
//! ```
//!
//! Data: `SELECT * FROM hits LIMIT rows FORMAT Native` (the 105-column hits
//! table the peer benchmark fills; random values, so strings barely compress)
//! and the columns of the peer benchmark's workloads (b) and (c), `number` and
//! `toString(number)` of `numbers(…)` (very compressible), fetched over HTTP and cut into 1 MiB chunks like the
//! server's frames. Each figure is the median over `reps` passes of the CPU
//! time of one pass over all chunks, as MB/s of uncompressed data.

use std::io::{Read, Write};

use lz4_sys::{c_char, c_int, c_void};

extern "C" {
    // Part of liblz4's stable API (lz4.h, LZ4LIB_API) but not declared by
    // lz4-sys; the library lz4-sys links does export it.
    fn LZ4_compress_fast_extState(
        state: *mut c_void,
        src: *const c_char,
        dst: *mut c_char,
        src_size: c_int,
        dst_capacity: c_int,
        acceleration: c_int,
    ) -> c_int;
    // Same, without re-clearing the whole table on every call (lz4.h's
    // static-linking section; exported by the static library lz4-sys builds).
    fn LZ4_compress_fast_extState_fastReset(
        state: *mut c_void,
        src: *const c_char,
        dst: *mut c_char,
        src_size: c_int,
        dst_capacity: c_int,
        acceleration: c_int,
    ) -> c_int;
}

/// A decoder under test: (frame body, uncompressed size, output).
type Decoder<'a> = dyn FnMut(&[u8], usize, &mut Vec<u8>) + 'a;

fn cpu_seconds() -> f64 {
    // SAFETY: getrusage only writes into the struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; RUSAGE_SELF is a valid selector.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

fn http_get(port: u16, sql: &str) -> Vec<u8> {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect to the server's HTTP port");
    write!(s, "POST /?max_block_size=65409 HTTP/1.0\r\nContent-Length: {}\r\n\r\n{sql}", sql.len()).unwrap();
    let mut all = Vec::new();
    s.read_to_end(&mut all).unwrap();
    let at = all.windows(4).position(|w| w == b"\r\n\r\n").expect("HTTP header end") + 4;
    assert!(
        all.starts_with(b"HTTP/1.0 200") || all.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&all[..at])
    );
    all.split_off(at)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Runs `pass` `reps` times and returns MB/s of `bytes` per CPU second (median).
fn rate(reps: usize, bytes: usize, mut pass: impl FnMut() -> u64) -> (f64, u64) {
    let mut check = 0;
    let mut t = Vec::new();
    for _ in 0..reps {
        let c0 = cpu_seconds();
        check = pass();
        let cpu = (cpu_seconds() - c0).max(1e-9);
        t.push(bytes as f64 / cpu / 1e6);
    }
    (median(t), check)
}

struct CState(*mut c_void);

impl CState {
    fn new() -> CState {
        // SAFETY: LZ4_createStream allocates an LZ4_stream_t, which is a valid
        // extState (same size and alignment as LZ4_sizeofState()).
        let p = unsafe { lz4_sys::LZ4_createStream() } as *mut c_void;
        assert!(!p.is_null());
        CState(p)
    }
}

impl Drop for CState {
    fn drop(&mut self) {
        // SAFETY: created by LZ4_createStream and freed once.
        unsafe { lz4_sys::LZ4_freeStream(self.0 as *mut _) };
    }
}

fn c_compress_into(state: &CState, data: &[u8], out: &mut Vec<u8>) {
    c_compress_into_with(LZ4_compress_fast_extState, state, data, out)
}

type CompressFn = unsafe extern "C" fn(*mut c_void, *const c_char, *mut c_char, c_int, c_int, c_int) -> c_int;

fn c_compress_into_with(f: CompressFn, state: &CState, data: &[u8], out: &mut Vec<u8>) {
    out.clear();
    // SAFETY: LZ4_compressBound is a pure function.
    let bound = unsafe { lz4_sys::LZ4_compressBound(data.len() as c_int) } as usize;
    out.reserve(bound);
    // SAFETY: the destination is `bound` bytes of spare capacity; liblz4
    // writes at most dst_capacity bytes and returns how many it wrote.
    let n = unsafe {
        f(
            state.0,
            data.as_ptr() as *const c_char,
            out.as_mut_ptr() as *mut c_char,
            data.len() as c_int,
            bound as c_int,
            1,
        )
    };
    assert!(n > 0);
    // SAFETY: liblz4 initialised the first n bytes.
    unsafe { out.set_len(n as usize) };
}

fn c_decompress_into(body: &[u8], n: usize, out: &mut Vec<u8>) -> usize {
    out.clear();
    out.reserve(n);
    // SAFETY: LZ4_decompress_safe never writes more than its capacity
    // argument (n, within the spare capacity) and never reads past the input.
    let got = unsafe {
        lz4_sys::LZ4_decompress_safe(
            body.as_ptr() as *const c_char,
            out.as_mut_ptr() as *mut c_char,
            body.len() as c_int,
            n as c_int,
        )
    };
    assert!(got >= 0 && got as usize == n, "C LZ4: {got}");
    // SAFETY: the decoder wrote exactly n bytes.
    unsafe { out.set_len(n) };
    n
}

fn checksum(b: &[u8]) -> u64 {
    b.iter().step_by(61).fold(b.len() as u64, |a, &x| a.wrapping_mul(31).wrapping_add(u64::from(x)))
}

fn bench(name: &str, data: &[u8], reps: usize) {
    let chunks: Vec<&[u8]> = data.chunks(1 << 20).collect();
    let total = data.len();
    let state = CState::new();
    // The wire frames: any encoder's output decodes with every decoder.
    let frames: Vec<Vec<u8>> = chunks
        .iter()
        .map(|c| {
            let mut o = Vec::new();
            c_compress_into(&state, c, &mut o);
            o
        })
        .collect();
    let packed: usize = frames.iter().map(Vec::len).sum();
    println!(
        "\n### {name}: {:.1} MB in {} chunks of ≤1 MiB, LZ4 ratio {:.2}\n",
        total as f64 / 1e6,
        chunks.len(),
        total as f64 / packed as f64
    );
    println!("| operation | implementation | MB/s of uncompressed data (CPU) |\n|---|---|---:|");
    let want: u64 = chunks.iter().map(|c| checksum(c)).fold(0, u64::wrapping_add);

    let mut out: Vec<u8> = Vec::new();
    let mut dec = |label: &str, f: &mut Decoder<'_>| {
        let (r, sum) = rate(reps, total, || {
            let mut s = 0u64;
            for (f_, c) in frames.iter().zip(&chunks) {
                f(f_, c.len(), &mut out);
                s = s.wrapping_add(checksum(&out));
            }
            s
        });
        assert_eq!(sum, want, "{label}");
        println!("| decode | {label} | {r:.0} |");
    };
    dec("lz4_flex 0.11, zero-filled output (chnative before)", &mut |b, n, out| {
        out.clear();
        out.resize(n, 0);
        assert_eq!(lz4_flex::block::decompress_into(b, out).unwrap(), n);
    });
    dec("lz4_flex 0.11, output buffer already filled (no zeroing cost)", &mut |b, n, out| {
        if out.len() < n {
            out.resize(n, 0);
        }
        let got = lz4_flex::block::decompress_into(b, &mut out[..n]).unwrap();
        out.truncate(got);
    });
    dec("lz4_flex 0.14, output buffer already filled", &mut |b, n, out| {
        if out.len() < n {
            out.resize(n, 0);
        }
        let got = lz4_flex_014::block::decompress_into(b, &mut out[..n]).unwrap();
        out.truncate(got);
    });
    dec("liblz4 1.10 LZ4_decompress_safe into spare capacity", &mut |b, n, out| {
        c_decompress_into(b, n, out);
    });

    let mut out: Vec<u8> = Vec::new();
    let mut table = lz4_flex_014::block::CompressTable::large();
    let mut enc = |label: &str, f: &mut dyn FnMut(&[u8], &mut Vec<u8>)| {
        let mut size = 0;
        let (r, _) = rate(reps, total, || {
            size = 0;
            for c in &chunks {
                f(c, &mut out);
                size += out.len();
            }
            size as u64
        });
        println!("| encode | {label} (ratio {:.3}) | {r:.0} |", total as f64 / size as f64);
    };
    enc("lz4_flex 0.11 compress_into, zero-filled output, table per call (chnative before)", &mut |c, out| {
        out.clear();
        out.resize(lz4_flex::block::get_maximum_output_size(c.len()), 0);
        let n = lz4_flex::block::compress_into(c, out).unwrap();
        out.truncate(n);
    });
    enc("lz4_flex 0.14 compress_into_with_table, reused table", &mut |c, out| {
        out.clear();
        out.resize(lz4_flex_014::block::get_maximum_output_size(c.len()), 0);
        let n = lz4_flex_014::block::compress_into_with_table(c, out, &mut table).unwrap();
        out.truncate(n);
    });
    enc("liblz4 1.10 LZ4_compress_fast_extState, reused state, spare capacity", &mut |c, out| {
        c_compress_into(&state, c, out);
    });
    enc("liblz4 1.10 LZ4_compress_fast_extState_fastReset, reused state, spare capacity", &mut |c, out| {
        c_compress_into_with(LZ4_compress_fast_extState_fastReset, &state, c, out);
    });

    // Small frames (a SELECT 1 reply, an empty terminator): per-call overhead.
    let small = &data[..data.len().min(64)];
    let calls = 200_000;
    let mut o = Vec::new();
    let (r1, _) = rate(reps, calls, || {
        for _ in 0..calls {
            o.clear();
            o.resize(lz4_flex::block::get_maximum_output_size(small.len()), 0);
            let n = lz4_flex::block::compress_into(small, &mut o).unwrap();
            o.truncate(n);
        }
        0
    });
    let (r2, _) = rate(reps, calls, || {
        for _ in 0..calls {
            c_compress_into(&state, small, &mut o);
        }
        0
    });
    let (r3, _) = rate(reps, calls, || {
        for _ in 0..calls {
            c_compress_into_with(LZ4_compress_fast_extState_fastReset, &state, small, &mut o);
        }
        0
    });
    println!("| encode 64 B | lz4_flex 0.11 (table per call) | {:.0} ns/call |", 1e3 / r1);
    println!("| encode 64 B | liblz4 extState, reused state | {:.0} ns/call |", 1e3 / r2);
    println!("| encode 64 B | liblz4 extState_fastReset, reused state | {:.0} ns/call |", 1e3 / r3);
}

/// Columns shaped like a web log: slowly rising times, clustered ids, a few
/// status codes and URLs from a small vocabulary.
const LOG_LIKE: &str = "toDateTime('2026-01-01 00:00:00') + intDiv(number, 7) AS t, \
    intDiv(number, 1000) * 37 + number % 11 AS user_id, toUInt16([200, 200, 200, 304, 404, 500][number % 6 + 1]) AS status, \
    cityHash64(number % 5000) % 1000000 AS item_id, \
    concat('https://example.com/', ['catalog', 'item', 'search', 'cart'][number % 4 + 1], '/', toString(cityHash64(number % 5000) % 100000)) AS url";

fn main() {
    let mut reps = 7;
    let mut rows = 200_000u64;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--reps" => reps = args.next().and_then(|v| v.parse().ok()).expect("--reps N"),
            "--rows" => rows = args.next().and_then(|v| v.parse().ok()).expect("--rows N"),
            _ => panic!("usage: lz4 [--reps N] [--rows N]"),
        }
    }
    let port: u16 = std::env::var("CHNATIVE_HTTP_PORT").ok().and_then(|p| p.parse().ok()).unwrap_or(18123);
    let hits = http_get(port, &format!("SELECT * FROM hits LIMIT {rows} FORMAT Native"));
    let nums = http_get(port, &format!("SELECT number FROM numbers({}) FORMAT Native", rows * 40));
    let strs = http_get(port, &format!("SELECT toString(number) FROM numbers({}) FORMAT Native", rows * 40));
    println!("## LZ4 implementations on this machine ({reps} reps, medians)");
    bench(&format!("hits, {rows} rows × 105 columns (workloads a, d)"), &hits, reps);
    bench(&format!("UInt64 number, {} rows (workload b)", rows * 40), &nums, reps);
    bench(&format!("toString(number), {} rows (workload c)", rows * 40), &strs, reps);
    let log = http_get(port, &format!("SELECT {LOG_LIKE} FROM numbers({}) FORMAT Native", rows * 20));
    bench(&format!("log-like table (time, ids, status, URL; deterministic), {} rows", rows * 20), &log, reps);
    let text = http_get(port, "SELECT * FROM system.functions FORMAT Native");
    bench("system.functions (real text: names, descriptions, examples)", &text, reps);
}
