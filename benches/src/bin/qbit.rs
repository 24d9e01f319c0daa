//! `qbit`: QBit bit-plane transposition kernels against a bit-at-a-time loop.
//!
//! ```text
//! cargo run --release -p chnative-bench --bin qbit [-- --rows N] [--dim D] [--reps R] [--elem f32|f64|bf16|all]
//! ```
//!
//! Two sizes per element type: `--rows` vectors (default 1,000,000 of dim 128: the
//! data does not fit in cache) and a batch of 512 vectors (256 KiB of Float32 values,
//! as much again of planes: cache-resident) repeated until it covers as many values.
//! Each kernel runs `--reps` times (default 7; the bit-at-a-time loop only once on the
//! large data) and the table shows the median. Transposition writes into storage
//! reused across repetitions, untransposition into a preallocated buffer. Every
//! kernel's output is checked against the bit-at-a-time loop's.

use std::hint::black_box;
use std::time::Instant;

use chnative::proto::ColumnData;
use chnative_proto::qbit::{self, Kernel, QBitValue, QBitView};

/// xorshift64*.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Roughly embedding-like values in (-1, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

/// The obvious loop: one bit per step.
fn naive_encode(src: &[u8], b: usize, dim: usize, planes: &mut [Vec<u8>]) {
    let w = 8 * b;
    let nb = dim.div_ceil(8);
    for p in planes.iter_mut() {
        p.fill(0);
    }
    for (r, row) in src.chunks_exact(dim * b).enumerate() {
        for i in 0..dim {
            let mut v = [0u8; 8];
            v[..b].copy_from_slice(&row[i * b..(i + 1) * b]);
            let x = u64::from_le_bytes(v);
            let at = r * nb + nb - 1 - i / 8;
            for (p, plane) in planes.iter_mut().enumerate() {
                plane[at] |= (((x >> (w - 1 - p)) & 1) as u8) << (i % 8);
            }
        }
    }
}

fn naive_decode(planes: &[&[u8]], b: usize, dim: usize, out: &mut [u8]) {
    let w = 8 * b;
    let nb = dim.div_ceil(8);
    for (r, row) in out.chunks_exact_mut(dim * b).enumerate() {
        for i in 0..dim {
            let at = r * nb + nb - 1 - i / 8;
            let mut x = 0u64;
            for (p, plane) in planes.iter().enumerate() {
                x |= u64::from((plane[at] >> (i % 8)) & 1) << (w - 1 - p);
            }
            row[i * b..(i + 1) * b].copy_from_slice(&x.to_le_bytes()[..b]);
        }
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn time(reps: usize, iters: usize, mut f: impl FnMut()) -> f64 {
    if reps > 1 {
        f(); // warm-up (page faults, caches)
    }
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

fn planes_of(data: &ColumnData) -> Vec<&[u8]> {
    data.tuple_elements()
        .unwrap()
        .iter()
        .map(|c| match c {
            ColumnData::Fixed(c) => c.data().as_bytes(),
            _ => unreachable!(),
        })
        .collect()
}

struct Opts {
    rows: usize,
    dim: usize,
    reps: usize,
}

fn run<T: QBitValue>(name: &str, make: impl Fn(f64) -> T, o: &Opts) {
    let b = T::ELEMENT.bytes();
    let dim = o.dim;
    let small = 512.min(o.rows);
    for (label, rows, iters) in [("large", o.rows, 1usize), ("cached", small, (o.rows / small).max(1))] {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let src: Vec<T> = (0..rows * dim).map(|_| make(rng.unit())).collect();
        let bytes: &[u8] = bytemuck::cast_slice(&src);
        let values = (rows * dim * iters) as f64;
        let mut ref_planes = vec![vec![0u8; rows * dim.div_ceil(8)]; 8 * b];
        // The bit-at-a-time loop takes minutes on the large data: one timed pass there.
        let naive_reps = if label == "large" { 1 } else { o.reps };
        let t_naive_enc = time(naive_reps, iters, || naive_encode(black_box(bytes), b, dim, &mut ref_planes));
        let mut out = vec![0u8; bytes.len()];
        let refs: Vec<&[u8]> = ref_planes.iter().map(|p| p.as_slice()).collect();
        let t_naive_dec = time(naive_reps, iters, || naive_decode(black_box(&refs), b, dim, &mut out));
        assert!(out == bytes, "bit-at-a-time round trip");

        println!(
            "\n{name}: {label}, {rows} vectors x dim {dim}{} ({:.1} MB of values per pass)",
            if iters > 1 { format!(", x{iters} passes") } else { String::new() },
            bytes.len() as f64 / 1e6
        );
        println!("{:<22} {:>11} {:>12} {:>9}", "kernel", "median ms", "Mvalues/s", "speed-up");
        let line = |what: &str, t: f64, base: f64| {
            println!("{what:<22} {:>11.2} {:>12.1} {:>8.1}x", t * 1e3, values / t / 1e6, base / t);
        };
        line("transpose bit-at-a-time", t_naive_enc, t_naive_enc);
        let mut data = qbit::transpose_with(Kernel::Scalar, &src[..0], dim).unwrap();
        for k in Kernel::available() {
            let t = time(o.reps, iters, || qbit::transpose_into(k, black_box(&src), dim, &mut data).unwrap());
            assert!(planes_of(&data) == refs, "{k:?} transposition differs");
            line(&format!("transpose {k:?}"), t, t_naive_enc);
        }
        line("untranspose bit-at-a-time", t_naive_dec, t_naive_dec);
        let view = QBitView::from_data(T::ELEMENT, dim, &data).unwrap();
        let mut back = vec![T::zeroed(); src.len()];
        for k in Kernel::available() {
            let t = time(o.reps, iters, || view.read_rows_with(k, 0..rows, black_box(&mut back)).unwrap());
            assert!(bytemuck::cast_slice::<T, u8>(&back) == bytes, "{k:?} untransposition differs");
            line(&format!("untranspose {k:?}"), t, t_naive_dec);
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let o = Opts {
        rows: arg("--rows").map_or(1_000_000, |v| v.parse().expect("--rows")),
        dim: arg("--dim").map_or(128, |v| v.parse().expect("--dim")),
        reps: arg("--reps").map_or(7, |v| v.parse().expect("--reps")),
    };
    let elem = arg("--elem").unwrap_or_else(|| "f32".into());
    println!("QBit kernels; detected: {:?}; available: {:?}", Kernel::detect(), Kernel::available());
    if elem == "f32" || elem == "all" {
        run::<f32>("QBit(Float32)", |x| x as f32, &o);
    }
    if elem == "f64" || elem == "all" {
        run::<f64>("QBit(Float64)", |x| x, &o);
    }
    if elem == "bf16" || elem == "all" {
        run::<u16>("QBit(BFloat16)", |x| ((x as f32).to_bits() >> 16) as u16, &o);
    }
}
