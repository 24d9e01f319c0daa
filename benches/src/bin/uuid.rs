//! `uuid`: UUID wire order <-> RFC 4122 byte order kernels against a byte-at-a-time loop.
//!
//! ```text
//! cargo run --release -p chnative-bench --bin uuid [-- --n N] [--reps R]
//! ```
//!
//! Two sizes: `--n` UUIDs (default 10,000,000 = 160 MB, out of cache) and a
//! cache-resident batch of 4,096 (64 KiB) repeated until it covers as many. Each
//! kernel converts into a preallocated buffer `--reps` times (default 9); the table
//! shows the median. Every kernel's output is checked against the loop's.
//!
//! To see the shuffles in the binary: `objdump -d --no-show-raw-insn -C
//! target/release/uuid | grep -E 'v?pshufb'`.

use std::hint::black_box;
use std::time::Instant;

use chnative_proto::uuid_simd::{self, Kernel};

/// xorshift64*.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// The obvious loop: one byte per step. LLVM vectorizes it (SSE2 unpack/pshuflw/
/// pshufhw/pack, ~10 instructions per UUID; see the disassembly of `uuid::byte_loop`).
#[inline(never)]
fn byte_loop(src: &[u8], dst: &mut [u8]) {
    for (s, d) in src.chunks_exact(16).zip(dst.chunks_exact_mut(16)) {
        for k in 0..8 {
            d[k] = s[7 - k];
            d[8 + k] = s[15 - k];
        }
    }
}

/// A byte loop through a permutation table the optimizer cannot see (as a generic
/// byte shuffle would be written): 16 byte loads and 16 byte stores per UUID.
#[inline(never)]
fn strict_byte_loop(src: &[u8], dst: &mut [u8]) {
    let perm: [usize; 16] = black_box([7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8]);
    for (s, d) in src.chunks_exact(16).zip(dst.chunks_exact_mut(16)) {
        for k in 0..16 {
            d[k] = s[perm[k] & 15];
        }
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn time(reps: usize, iters: usize, mut f: impl FnMut()) -> f64 {
    f();
    median(
        (0..reps)
            .map(|_| {
                let t = Instant::now();
                for _ in 0..iters {
                    f();
                }
                t.elapsed().as_secs_f64()
            })
            .collect(),
    )
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let n: usize = arg("--n").map_or(10_000_000, |v| v.parse().expect("--n"));
    let reps: usize = arg("--reps").map_or(9, |v| v.parse().expect("--reps"));
    println!("UUID kernels; detected: {:?}; available: {:?}", Kernel::detect(), Kernel::available());
    let small = 4096.min(n);
    for (label, count, iters) in [("large", n, 1usize), ("cached", small, (n / small).max(1))] {
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        let src: Vec<u8> = (0..count * 2).flat_map(|_| rng.next().to_le_bytes()).collect();
        let mut want = vec![0u8; src.len()];
        let mut dst = vec![0u8; src.len()];
        let total = (count * iters) as f64;
        println!(
            "\n{label}: {count} UUIDs ({:.1} MB per pass){}",
            src.len() as f64 / 1e6,
            if iters > 1 { format!(", x{iters} passes") } else { String::new() }
        );
        println!("{:<24} {:>10} {:>12} {:>9} {:>9}", "kernel", "median ms", "M UUIDs/s", "GB/s in", "speed-up");
        let t_loop = time(reps, iters, || byte_loop(black_box(&src), black_box(&mut want)));
        let line = |what: &str, t: f64| {
            println!(
                "{what:<24} {:>10.2} {:>12.1} {:>9.2} {:>8.2}x",
                t * 1e3,
                total / t / 1e6,
                total * 16.0 / t / 1e9,
                t_loop / t
            );
        };
        line("byte-at-a-time loop", t_loop);
        let mut strict = vec![0u8; src.len()];
        let t = time(reps.min(3), iters, || strict_byte_loop(black_box(&src), black_box(&mut strict)));
        assert!(strict == want);
        line("byte loop, table-driven", t);
        for k in Kernel::available() {
            let t = time(reps, iters, || uuid_simd::swap_halves_with(k, black_box(&src), &mut dst).unwrap());
            assert!(dst == want, "{k:?} differs");
            line(&format!("{k:?}"), t);
        }
        let mut buf = src.clone();
        let k = Kernel::detect();
        let t = time(reps, iters, || uuid_simd::swap_halves_in_place_with(k, black_box(&mut buf)).unwrap());
        line(&format!("{k:?} in place"), t);
    }
}
