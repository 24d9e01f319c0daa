//! CityHash128 as ClickHouse computes it for compressed-frame checksums.
//!
//! ClickHouse pins an old release of Google's CityHash, **v1.0.2** (vendored as
//! `contrib/cityhash102`, namespace `CityHash_v1_0_2`). Later releases (1.0.3,
//! 1.1.x) changed the mixing for short and long inputs, so a modern `cityhash`
//! crate computes different values and the server would reject our frames. This
//! module is our own safe Rust rendering of the v1.0.2 `CityHash128`, written
//! from the reference algorithm (all arithmetic wrapping on `u64`, loads are
//! little-endian as on the x86/ARM hosts the server runs on).

const K0: u64 = 0xc3a5_c85c_97cb_3127;
const K1: u64 = 0xb492_b66f_be98_f273;
const K2: u64 = 0x9ae1_6a3b_2f90_404f;
const K3: u64 = 0xc949_d7c7_509e_6557;
/// Multiplier of the 128-to-64-bit mixer (`Hash128to64` in `city.h`).
const K_MUL: u64 = 0x9ddf_ea08_eb38_2d69;

/// Little-endian u64 at `at`.
#[inline(always)]
fn load64(s: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&s[at..at + 8]);
    u64::from_le_bytes(b)
}

/// Little-endian u32 at `at`, widened.
#[inline(always)]
fn load32(s: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&s[at..at + 4]);
    u64::from(u32::from_le_bytes(b))
}

#[inline(always)]
fn shift_mix(v: u64) -> u64 {
    v ^ (v >> 47)
}

/// Folds 128 bits into 64 (a Murmur-inspired mix).
#[inline(always)]
fn mix128to64(lo: u64, hi: u64) -> u64 {
    let mut a = (lo ^ hi).wrapping_mul(K_MUL);
    a ^= a >> 47;
    let mut b = (hi ^ a).wrapping_mul(K_MUL);
    b ^= b >> 47;
    b.wrapping_mul(K_MUL)
}

/// 64-bit hash of at most 16 bytes (v1.0.2 flavour: the 9..=16 case rotates by
/// the length, the 4..=8 case mixes two 32-bit loads).
#[inline]
fn hash_upto16(s: &[u8]) -> u64 {
    let n = s.len();
    if n > 8 {
        let a = load64(s, 0);
        let b = load64(s, n - 8);
        mix128to64(a, b.wrapping_add(n as u64).rotate_right(n as u32)) ^ b
    } else if n >= 4 {
        let a = load32(s, 0);
        mix128to64((n as u64).wrapping_add(a << 3), load32(s, n - 4))
    } else if n > 0 {
        let y = u64::from(s[0]) + (u64::from(s[n >> 1]) << 8);
        let z = n as u64 + (u64::from(s[n - 1]) << 2);
        shift_mix(y.wrapping_mul(K2) ^ z.wrapping_mul(K3)).wrapping_mul(K2)
    } else {
        K2
    }
}

/// Mixes 32 bytes at `s[at..at + 32]` into the pair `(a, b)`.
#[inline(always)]
fn weak32(s: &[u8], at: usize, a: u64, b: u64) -> (u64, u64) {
    let w = load64(s, at);
    let x = load64(s, at + 8);
    let y = load64(s, at + 16);
    let z = load64(s, at + 24);
    let a = a.wrapping_add(w);
    let b = b.wrapping_add(a).wrapping_add(z).rotate_right(21);
    let c = a;
    let a = a.wrapping_add(x).wrapping_add(y);
    let b = b.wrapping_add(a.rotate_right(44));
    (a.wrapping_add(z), b.wrapping_add(c))
}

/// The short-input path (`CityMurmur`): any `s` shorter than 128 bytes.
fn murmur(s: &[u8], seed_lo: u64, seed_hi: u64) -> (u64, u64) {
    let n = s.len();
    let mut a = seed_lo;
    let mut b = seed_hi;
    let mut c;
    let mut d;
    if n <= 16 {
        a = shift_mix(a.wrapping_mul(K1)).wrapping_mul(K1);
        c = b.wrapping_mul(K1).wrapping_add(hash_upto16(s));
        d = shift_mix(a.wrapping_add(if n >= 8 { load64(s, 0) } else { c }));
    } else {
        c = mix128to64(load64(s, n - 8).wrapping_add(K1), a);
        d = mix128to64(b.wrapping_add(n as u64), c.wrapping_add(load64(s, n - 16)));
        a = a.wrapping_add(d);
        // 16-byte steps from the front while more than 16 bytes were left
        // before the step: ceil((n - 16) / 16) of them, all in bounds.
        let mut at = 0;
        let mut left = n - 16;
        loop {
            a ^= shift_mix(load64(s, at).wrapping_mul(K1)).wrapping_mul(K1);
            a = a.wrapping_mul(K1);
            b ^= a;
            c ^= shift_mix(load64(s, at + 8).wrapping_mul(K1)).wrapping_mul(K1);
            c = c.wrapping_mul(K1);
            d ^= c;
            at += 16;
            if left <= 16 {
                break;
            }
            left -= 16;
        }
    }
    let a2 = mix128to64(a, c);
    let b2 = mix128to64(d, b);
    (a2 ^ b2, mix128to64(b2, a2))
}

/// One 64-byte round of the long-input loop; `s` is exactly 64 bytes.
#[inline(always)]
fn round64(s: &[u8], x: &mut u64, y: &mut u64, z: &mut u64, v: &mut (u64, u64), w: &mut (u64, u64)) {
    *x = x.wrapping_add(*y).wrapping_add(v.0).wrapping_add(load64(s, 16)).rotate_right(37).wrapping_mul(K1);
    *y = y.wrapping_add(v.1).wrapping_add(load64(s, 48)).rotate_right(42).wrapping_mul(K1);
    *x ^= w.1;
    *y ^= v.0;
    *z = (*z ^ w.0).rotate_right(33);
    *v = weak32(s, 0, v.1.wrapping_mul(K1), x.wrapping_add(w.0));
    *w = weak32(s, 32, z.wrapping_add(w.1), *y);
    std::mem::swap(z, x);
}

/// `CityHash128WithSeed` of v1.0.2.
fn hash128_seeded(s: &[u8], seed_lo: u64, seed_hi: u64) -> (u64, u64) {
    let n = s.len();
    if n < 128 {
        return murmur(s, seed_lo, seed_hi);
    }
    let mut x = seed_lo;
    let mut y = seed_hi;
    let mut z = (n as u64).wrapping_mul(K1);
    let v0 = (y ^ K1).rotate_right(49).wrapping_mul(K1).wrapping_add(load64(s, 0));
    let mut v = (v0, v0.rotate_right(42).wrapping_mul(K1).wrapping_add(load64(s, 8)));
    let mut w = (
        y.wrapping_add(z).rotate_right(35).wrapping_mul(K1).wrapping_add(x),
        x.wrapping_add(load64(s, 88)).rotate_right(53).wrapping_mul(K1),
    );

    // Whole 128-byte blocks, two 64-byte rounds each.
    let mut blocks = s.chunks_exact(128);
    for block in &mut blocks {
        let (first, second) = block.split_at(64);
        round64(first, &mut x, &mut y, &mut z, &mut v, &mut w);
        round64(second, &mut x, &mut y, &mut z, &mut v, &mut w);
    }
    let rest = blocks.remainder().len();

    y = y.wrapping_add(w.0.rotate_right(37).wrapping_mul(K0)).wrapping_add(z);
    x = x.wrapping_add(v.0.wrapping_add(z).rotate_right(49).wrapping_mul(K0));

    // Up to four 32-byte chunks taken backwards from the end of the input; they
    // may reach back into the last whole block (n >= 128 keeps them in bounds).
    let mut done = 0;
    while done < rest {
        done += 32;
        let at = n - done;
        y = y.wrapping_sub(x).rotate_right(42).wrapping_mul(K0).wrapping_add(v.1);
        w.0 = w.0.wrapping_add(load64(s, at + 16));
        x = x.rotate_right(49).wrapping_mul(K0).wrapping_add(w.0);
        w.0 = w.0.wrapping_add(v.0);
        v = weak32(s, at, v.0, v.1);
    }

    let x = mix128to64(x, v.0);
    let y = mix128to64(y, w.0);
    (mix128to64(x.wrapping_add(v.1), w.1).wrapping_add(y), mix128to64(x.wrapping_add(w.1), y.wrapping_add(v.1)))
}

/// CityHash128 v1.0.2 as ClickHouse uses it; returns (low64, high64) packed as `low | (high << 64)`.
///
/// ClickHouse stores the checksum of a compressed frame as `low64` little-endian
/// followed by `high64` little-endian, which is exactly `u128::to_le_bytes` of
/// this value.
pub fn city_hash128(data: &[u8]) -> u128 {
    let n = data.len();
    let (lo, hi) = if n >= 16 {
        hash128_seeded(&data[16..], load64(data, 0) ^ K3, load64(data, 8))
    } else if n >= 8 {
        hash128_seeded(&[], load64(data, 0) ^ (n as u64).wrapping_mul(K0), load64(data, n - 8) ^ K1)
    } else {
        hash128_seeded(data, K0, K1)
    };
    u128::from(lo) | (u128::from(hi) << 64)
}

#[cfg(test)]
mod tests {
    use super::city_hash128;

    fn pair(lo: u64, hi: u64) -> u128 {
        u128::from(lo) | (u128::from(hi) << 64)
    }

    /// The pseudo-random buffer of the CityHash v1.0.2 self-test
    /// (`src/city-test.cc`, `setup()`, google/cityhash at commit ffa7d87, the
    /// v1.0.2 release of May 2011).
    fn reference_data() -> Vec<u8> {
        const K0: u64 = 0xc3a5_c85c_97cb_3127;
        let mut a: u64 = 9;
        let mut b: u64 = 777;
        (0..1u64 << 20)
            .map(|i| {
                a = (a ^ (a >> 41)).wrapping_mul(K0).wrapping_add(b);
                b = (b ^ (b >> 41)).wrapping_mul(K0).wrapping_add(i);
                (b >> 37) as u8
            })
            .collect()
    }

    /// Selected rows of the v1.0.2 self-test table `testdata` (same source as
    /// above): row `r` hashes `data[r*r .. r*r + r]`, row 299 hashes the whole
    /// 1 MiB buffer; the values are its columns 3 and 4
    /// (`Uint128Low64/Uint128High64(CityHash128(..))`).
    ///
    /// The lengths reach every branch: 0, 1..=3 and 4..=7 (the short hashes
    /// on the input itself), 8..=15 (seeded from the input, empty murmur),
    /// 16..=32 (murmur's short path on the 0..=16 bytes after the seed),
    /// 33..=143 (murmur with 16-byte steps), 144 (exactly one 128-byte block,
    /// no tail), 145..=271 (one to four 32-byte tail chunks), 272+ (several
    /// blocks) and 1 MiB (8191 blocks + 4 tail chunks).
    const V102_ROWS: &[(usize, u64, u64)] = &[
        (0, 0x3df09dfc64c09a2b, 0x3cb540c392e51e29),
        (1, 0x1290f0e8a5caa74d, 0xca4c6bf7583f5cda),
        (2, 0xb4af8ae673acb930, 0x992b7acb203d8885),
        (3, 0x8f52532fc6f005b7, 0x4ebe60df371ec129),
        (4, 0x0798637e677c65a3, 0x83e3b06adc4cd3ff),
        (5, 0xb342cdf0d7ac4b2a, 0x66914d44b373b232),
        (7, 0xb298265ebd1bd55f, 0x4a5f6838b55c0b08),
        (8, 0x763529c8d4189ea8, 0x860d77e7fef74ca3),
        (9, 0x313d49cb51b8cd2c, 0x6e982d8b4658654a),
        (12, 0x2498586ac2e1fab2, 0xe683f9cbea22809a),
        (15, 0x1c66ceea473413df, 0xdc3f70a124b25a40),
        (16, 0x8505c996b70ee9fc, 0xb92bba6b5d778eb7),
        (17, 0x1660a2c4972d0fa1, 0x01a1538d6b50a57c),
        (24, 0xac0c0b84df66df9d, 0x3ee2337b437eb264),
        (31, 0x441133d221486a3d, 0x0fb9c5a40e19515b),
        (32, 0x15bb46383daec2a5, 0x716294063b4ba089),
        (33, 0xf6916c341cb31f2a, 0x591da1353ee5f31c),
        (47, 0xa39e946d02e14ec2, 0x1c88cc1d3822a193),
        (48, 0xacab0139dc4f36df, 0x9502b1605ca1345a),
        (63, 0x87e11c0f44454863, 0x2df1aedb5871cc4b),
        (64, 0x4caf4deeda66a6ee, 0x264720f6f35f7840),
        (65, 0xd82489179f16d4e8, 0xa3c59f65e2913cc5),
        (100, 0x2a55645640911e27, 0x4fac2eefbd36e26f),
        (127, 0x664ec3fad8521859, 0x406f082beb9ca29a),
        (128, 0x5414e385f5677a6d, 0x41ef105f8a682a28),
        (129, 0xd4bd358fed3e6aa5, 0x8a1ba396356197d9),
        (142, 0x8d8e7c63385df78e, 0x16d55add72a5e25e),
        (143, 0xce218d5b44f7825a, 0x2ae0c64765800d3a),
        (144, 0x1682f54521c291e2, 0x17ca7ab8d97ba0d9),
        (145, 0x08868a216a8f9946, 0x136b5ce2ede03238),
        (160, 0xe8e11d96868fd11e, 0xd7323d276887576a),
        (175, 0x932d16df5d691fb1, 0x5dde659f15fe9b64),
        (176, 0x0bd6947ba8f8af57, 0xe2c925a1262dbc65),
        (177, 0x60386ba5baeb0a28, 0x4c8db172ac835d05),
        (200, 0xac61387d34b8eba3, 0xf658eceff68e4f98),
        (208, 0x674142656124b5c7, 0x1280123d0a21a062),
        (209, 0x81b2a78e5319365c, 0xb3aa90916d02335f),
        (240, 0xf427ee42d5ee8003, 0x1eebdcf751988c45),
        (241, 0xbd8a072257c813e4, 0x547537b7deeece82),
        (255, 0x3ad5fe46fea96c61, 0x5b78b66fef8dea6f),
        (256, 0xbb2fca5617f2c8c8, 0x0a68ae975813669d),
        (271, 0xac5aadb9c48b988d, 0x850ad5a0d3650159),
        (272, 0xe38fa487026a5a0b, 0x3b9b7540bf4802a5),
        (273, 0x6e5f6aded4efd69f, 0x41aaf253fd433093),
        (298, 0x19fa48781ce2b326, 0xf34fc200e9ca457c),
        (299, 0x0fc34a738dc6b2cf, 0x1a72ebef9f3084a1),
    ];

    #[test]
    fn v102_reference_table() {
        let data = reference_data();
        for &(row, lo, hi) in V102_ROWS {
            let (off, len) = if row == 299 { (0, data.len()) } else { (row * row, row) };
            let got = city_hash128(&data[off..off + len]);
            assert_eq!(got, pair(lo, hi), "row {row} (len {len}) got {got:032x}");
        }
    }

    /// Entries of go-faster/city `_testdata/ch128.csv` (test data of its
    /// ClickHouse `CH128`, the Go port ch-go uses for frame checksums).
    const GO_FASTER_CH128: &[(&str, u64, u64)] = &[
        ("I", 0x3a4a285c94f1936e, 0x18115b183f326829),
        ("3Nv7DSqKym", 0x0a15c18688f33289, 0xa992a0eb969152cc),
        ("m0nF3pZ4UJC", 0xd877b187ad4b19d5, 0xc11eca27072916b7),
        ("y2JxfVmFTDCc5E8j6SyJ", 0x55dbda31fd73db4f, 0xe93b771a2f3821ea),
        ("TSDGQtM27SmjL0naFMqcQ3ETsYKbDbrBeIj", 0x5a568f460b784901, 0x8194e9a0cefb22fd),
        ("O0XSJeqbLzMSSUOA96wrpVfy7FPUM40hmkaRVF3JYd1RVVTtZUX8vr0PfcRKVDtTX9gmXEVTXlo59QWsPRxtQfSN1SkGPJvwEIndrWt3yIF", 0x8df30cba53a75ac6, 0x620e1abc75cb4f77),
    ];

    #[test]
    fn go_faster_ch128_vectors() {
        for &(s, lo, hi) in GO_FASTER_CH128 {
            assert_eq!(city_hash128(s.as_bytes()), pair(lo, hi), "input {s:?}");
        }
    }

    /// Vectors of the `naive-cityhash` crate (PsiACE/naive-cityhash,
    /// `tests/it/main.rs`), a ClickHouse-compatible CityHash 1.0.2 port.
    #[test]
    fn naive_cityhash_vectors() {
        assert_eq!(city_hash128(b""), pair(4463240938071824939, 4374473821787594281));
        assert_eq!(city_hash128(b"abc"), pair(0x900ff195577748fe, 0x13a9176355b20d7e));
        assert_eq!(city_hash128(b"1234567890AbcDEF"), pair(15073733098592741404, 5913034415582713572));
        assert_eq!(city_hash128(b"this is somewhat long string"), pair(2957911805285034456, 6923665615086076251));
        assert_eq!(
            city_hash128(b"DMqhuXQxgAmJ9EOkT1n2lpzu7YD6zKc6ESSDWfJfohaQDwu0ba61bfGMiuS5GXpr0bIVcCtLwRtIVGmK"),
            pair(9681404383092874918, 15631953994107571989)
        );
    }

    /// Unaligned and aligned views of the same bytes hash alike, and every
    /// length up to a few blocks runs without panicking.
    #[test]
    fn every_length_and_alignment() {
        let data = reference_data();
        for len in 0..600 {
            let a = city_hash128(&data[..len]);
            let mut shifted = vec![0u8; len + 1];
            shifted[1..].copy_from_slice(&data[..len]);
            assert_eq!(a, city_hash128(&shifted[1..]), "len {len}");
        }
    }
}
