//! UUID columns to RFC 4122 bytes in bulk.
//!
//! A UUID travels as two little-endian `u64` halves, the high half first
//! (`550e8400-e29b-41d4-a716-446655440000` is `d4 41 9b e2 00 84 0e 55 00 00 44 55 66 44
//! 16 a7`), while RFC 4122 bytes are the 128-bit value big-endian. Going from one to the
//! other reverses the bytes of each 8-byte half; the permutation is its own inverse, so
//! the same kernels serve SELECT results ([`to_rfc`]) and INSERT data ([`from_rfc`]).
//!
//! Kernels ([`Kernel::detect`] picks the fastest): a safe scalar loop (a byte swap per
//! half), and on x86-64 SSSE3 `pshufb` (one UUID per shuffle) and AVX2 `vpshufb` (two
//! per shuffle), chosen at run time. With the `uuid` feature, the same conversions
//! write `uuid::Uuid`s directly.

use crate::error::{ProtoError, Result};
use crate::view::{ColumnView, WireUuid};

/// Which implementation swaps the bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Kernel {
    /// Safe portable code: `u64` byte swaps.
    Scalar,
    /// x86-64 SSSE3 `pshufb`, 16 bytes per shuffle.
    Ssse3,
    /// x86-64 AVX2 `vpshufb`, 32 bytes per shuffle.
    Avx2,
}

crate::qbit::kernel_choice!(Kernel, Ssse3, "ssse3");

fn check_lengths(kernel: Kernel, src: usize, dst: usize) -> Result<()> {
    if !kernel.is_available() {
        return Err(ProtoError::violation(format!("UUID kernel {kernel:?} is not available on this CPU")));
    }
    if src != dst {
        return Err(ProtoError::violation(format!("UUID conversion from {src} bytes into {dst}")));
    }
    if !src.is_multiple_of(16) {
        return Err(ProtoError::violation(format!("{src} bytes are not a whole number of UUIDs")));
    }
    Ok(())
}

/// Reverses the bytes of each 8-byte half of every 16-byte UUID in `src` into `dst`:
/// wire order to RFC 4122 order, or back. Both must have the same length, a multiple of 16.
pub fn swap_halves_with(kernel: Kernel, src: &[u8], dst: &mut [u8]) -> Result<()> {
    check_lengths(kernel, src.len(), dst.len())?;
    #[cfg(target_arch = "x86_64")]
    let done = match kernel {
        // SAFETY: `check_lengths` verified the CPU has AVX2.
        Kernel::Avx2 => unsafe { x86::swap_avx2(src, dst) },
        // SAFETY: `check_lengths` verified the CPU has SSSE3.
        Kernel::Ssse3 => unsafe { x86::swap_ssse3(src, dst) },
        Kernel::Scalar => 0,
    };
    #[cfg(not(target_arch = "x86_64"))]
    let done = {
        let _ = kernel;
        0
    };
    swap_scalar(&src[done..], &mut dst[done..]);
    Ok(())
}

/// [`swap_halves_with`] in place.
pub fn swap_halves_in_place_with(kernel: Kernel, buf: &mut [u8]) -> Result<()> {
    check_lengths(kernel, buf.len(), buf.len())?;
    #[cfg(target_arch = "x86_64")]
    let done = match kernel {
        // SAFETY: `check_lengths` verified the CPU has AVX2.
        Kernel::Avx2 => unsafe { x86::swap_in_place_avx2(buf) },
        // SAFETY: `check_lengths` verified the CPU has SSSE3.
        Kernel::Ssse3 => unsafe { x86::swap_in_place_ssse3(buf) },
        Kernel::Scalar => 0,
    };
    #[cfg(not(target_arch = "x86_64"))]
    let done = {
        let _ = kernel;
        0
    };
    for c in buf[done..].chunks_exact_mut(16) {
        c[..8].reverse();
        c[8..].reverse();
    }
    Ok(())
}

fn swap_scalar(src: &[u8], dst: &mut [u8]) {
    for (s, d) in src.chunks_exact(16).zip(dst.chunks_exact_mut(16)) {
        let (mut hi, mut lo) = ([0u8; 8], [0u8; 8]);
        hi.copy_from_slice(&s[..8]);
        lo.copy_from_slice(&s[8..]);
        d[..8].copy_from_slice(&u64::from_le_bytes(hi).to_be_bytes());
        d[8..].copy_from_slice(&u64::from_le_bytes(lo).to_be_bytes());
    }
}

/// UUIDs as read from a column (see [`ColumnView::values::<WireUuid>`]) to RFC 4122
/// bytes, `dst[i]` for `src[i]` (equal lengths), with the fastest kernel.
pub fn to_rfc(src: &[WireUuid], dst: &mut [[u8; 16]]) -> Result<()> {
    swap_halves_with(Kernel::detect(), bytemuck::cast_slice(src), bytemuck::cast_slice_mut(dst))
}

/// [`to_rfc`] into a new `Vec`.
pub fn to_rfc_vec(src: &[WireUuid]) -> Vec<[u8; 16]> {
    let mut out = vec![[0u8; 16]; src.len()];
    swap_scalar_or_simd(bytemuck::cast_slice(src), bytemuck::cast_slice_mut(&mut out));
    out
}

/// RFC 4122 bytes to UUIDs ready to INSERT (`&[WireUuid]` is accepted for UUID columns).
pub fn from_rfc(src: &[[u8; 16]], dst: &mut [WireUuid]) -> Result<()> {
    swap_halves_with(Kernel::detect(), bytemuck::cast_slice(src), bytemuck::cast_slice_mut(dst))
}

/// [`from_rfc`] into a new `Vec`.
pub fn from_rfc_vec(src: &[[u8; 16]]) -> Vec<WireUuid> {
    let mut out = vec![WireUuid::default(); src.len()];
    swap_scalar_or_simd(bytemuck::cast_slice(src), bytemuck::cast_slice_mut(&mut out));
    out
}

/// The RFC 4122 bytes of every row of a UUID column.
pub fn column_to_rfc(view: &ColumnView<'_>) -> Result<Vec<[u8; 16]>> {
    Ok(to_rfc_vec(view.values::<WireUuid>()?))
}

/// Lengths are equal multiples of 16 by construction here.
fn swap_scalar_or_simd(src: &[u8], dst: &mut [u8]) {
    if swap_halves_with(Kernel::detect(), src, dst).is_err() {
        swap_scalar(src, dst);
    }
}

#[cfg(feature = "uuid")]
mod uuid_crate {
    use super::*;
    use uuid::Uuid;

    /// UUIDs as read from a column to `uuid::Uuid`s (equal lengths).
    pub fn to_uuids(src: &[WireUuid], dst: &mut [Uuid]) -> Result<()> {
        swap_halves_with(Kernel::detect(), bytemuck::cast_slice(src), bytemuck::cast_slice_mut(dst))
    }

    /// [`to_uuids`] into a new `Vec`.
    pub fn to_uuid_vec(src: &[WireUuid]) -> Vec<Uuid> {
        let mut out = vec![Uuid::nil(); src.len()];
        swap_scalar_or_simd(bytemuck::cast_slice(src), bytemuck::cast_slice_mut(&mut out));
        out
    }

    /// `uuid::Uuid`s to UUIDs ready to INSERT (equal lengths).
    pub fn from_uuids(src: &[Uuid], dst: &mut [WireUuid]) -> Result<()> {
        swap_halves_with(Kernel::detect(), bytemuck::cast_slice(src), bytemuck::cast_slice_mut(dst))
    }

    /// [`from_uuids`] into a new `Vec`.
    pub fn from_uuid_vec(src: &[Uuid]) -> Vec<WireUuid> {
        let mut out = vec![WireUuid::default(); src.len()];
        swap_scalar_or_simd(bytemuck::cast_slice(src), bytemuck::cast_slice_mut(&mut out));
        out
    }

    /// Every row of a UUID column as `uuid::Uuid`.
    pub fn column_to_uuids(view: &ColumnView<'_>) -> Result<Vec<Uuid>> {
        Ok(to_uuid_vec(view.values::<WireUuid>()?))
    }

    impl From<WireUuid> for Uuid {
        fn from(w: WireUuid) -> Uuid {
            Uuid::from_u64_pair(w.high, w.low)
        }
    }

    impl From<Uuid> for WireUuid {
        fn from(u: Uuid) -> WireUuid {
            let (high, low) = u.as_u64_pair();
            WireUuid { high, low }
        }
    }
}

#[cfg(feature = "uuid")]
pub use uuid_crate::{column_to_uuids, from_uuid_vec, from_uuids, to_uuid_vec, to_uuids};

#[cfg(target_arch = "x86_64")]
mod x86 {
    //! Each function needs the CPU feature it is compiled for; the callers check it at
    //! run time. Loads and stores take the pointer of a sub-slice of exactly the
    //! accessed length. Each returns how many leading bytes it converted.
    use std::arch::x86_64::*;

    /// Byte `k` of the result is byte `SHUFFLE[k]` of the source: each 8-byte half reversed.
    const SHUFFLE: [i8; 16] = [7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8];

    #[inline]
    #[target_feature(enable = "ssse3")]
    unsafe fn mask128() -> __m128i {
        let m = SHUFFLE;
        _mm_setr_epi8(
            m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8], m[9], m[10], m[11], m[12], m[13], m[14], m[15],
        )
    }

    /// # Safety
    /// The CPU must support SSSE3; `src` and `dst` have equal lengths.
    #[target_feature(enable = "ssse3")]
    pub(super) unsafe fn swap_ssse3(src: &[u8], dst: &mut [u8]) -> usize {
        let mask = mask128();
        let n = src.len().min(dst.len()) / 16 * 16;
        for (s, d) in src[..n].chunks_exact(16).zip(dst[..n].chunks_exact_mut(16)) {
            // SAFETY: `s` and `d` are 16 bytes each; unaligned load and store.
            unsafe {
                _mm_storeu_si128(d.as_mut_ptr().cast(), _mm_shuffle_epi8(_mm_loadu_si128(s.as_ptr().cast()), mask))
            };
        }
        n
    }

    /// # Safety
    /// The CPU must support SSSE3.
    #[target_feature(enable = "ssse3")]
    pub(super) unsafe fn swap_in_place_ssse3(buf: &mut [u8]) -> usize {
        let mask = mask128();
        let n = buf.len() / 16 * 16;
        for c in buf[..n].chunks_exact_mut(16) {
            // SAFETY: `c` is 16 bytes, read then written back; unaligned.
            unsafe {
                _mm_storeu_si128(c.as_mut_ptr().cast(), _mm_shuffle_epi8(_mm_loadu_si128(c.as_ptr().cast()), mask))
            };
        }
        n
    }

    /// # Safety
    /// The CPU must support AVX2; `src` and `dst` have equal lengths.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn swap_avx2(src: &[u8], dst: &mut [u8]) -> usize {
        // `vpshufb` shuffles within each 128-bit lane: the same pattern twice.
        let mask = _mm256_broadcastsi128_si256(mask128());
        let n = src.len().min(dst.len()) / 128 * 128;
        for (s, d) in src[..n].chunks_exact(128).zip(dst[..n].chunks_exact_mut(128)) {
            // Four independent 32-byte shuffles per step.
            for k in 0..4 {
                let (s, d) = (&s[32 * k..32 * k + 32], &mut d[32 * k..32 * k + 32]);
                // SAFETY: `s` and `d` are 32 bytes each; unaligned load and store.
                unsafe {
                    _mm256_storeu_si256(
                        d.as_mut_ptr().cast(),
                        _mm256_shuffle_epi8(_mm256_loadu_si256(s.as_ptr().cast()), mask),
                    )
                };
            }
        }
        let m = src.len().min(dst.len()) / 32 * 32;
        for (s, d) in src[n..m].chunks_exact(32).zip(dst[n..m].chunks_exact_mut(32)) {
            // SAFETY: as above.
            unsafe {
                _mm256_storeu_si256(
                    d.as_mut_ptr().cast(),
                    _mm256_shuffle_epi8(_mm256_loadu_si256(s.as_ptr().cast()), mask),
                )
            };
        }
        m
    }

    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn swap_in_place_avx2(buf: &mut [u8]) -> usize {
        let mask = _mm256_broadcastsi128_si256(mask128());
        let n = buf.len() / 32 * 32;
        for c in buf[..n].chunks_exact_mut(32) {
            // SAFETY: `c` is 32 bytes, read then written back; unaligned.
            unsafe {
                _mm256_storeu_si256(
                    c.as_mut_ptr().cast(),
                    _mm256_shuffle_epi8(_mm256_loadu_si256(c.as_ptr().cast()), mask),
                )
            };
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::Rng;

    /// The byte-at-a-time reference.
    fn reference(src: &[u8]) -> Vec<u8> {
        let mut out = vec![0u8; src.len()];
        for (s, d) in src.chunks_exact(16).zip(out.chunks_exact_mut(16)) {
            for k in 0..8 {
                d[k] = s[7 - k];
                d[8 + k] = s[15 - k];
            }
        }
        out
    }

    fn canonical(b: &[u8; 16]) -> String {
        let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
        format!("{}-{}-{}-{}-{}", &h[..8], &h[8..12], &h[12..16], &h[16..20], &h[20..])
    }

    /// Wire bytes of UUIDs from ClickHouse 26.9 (`SELECT toUUID('…') FORMAT Native`) and
    /// the server's text for them.
    const SERVER: [(&str, &str); 4] = [
        ("d4419be200840e5500004455664416a7", "550e8400-e29b-41d4-a716-446655440000"),
        ("7766554433221100ffeeddccbbaa9988", "00112233-4455-6677-8899-aabbccddeeff"),
        ("ffffffffffffffffffffffffffffffff", "ffffffff-ffff-ffff-ffff-ffffffffffff"),
        ("00000000000000000100000000000000", "00000000-0000-0000-0000-000000000001"),
    ];

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len() / 2).map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap()).collect()
    }

    #[test]
    fn known_values() {
        for (wire, text) in SERVER {
            let w = unhex(wire);
            let src: Vec<WireUuid> = vec![bytemuck::pod_read_unaligned(&w)];
            let rfc = to_rfc_vec(&src);
            assert_eq!(canonical(&rfc[0]), text);
            assert_eq!(src[0].to_string(), text);
            assert_eq!(from_rfc_vec(&rfc), src);
            for k in Kernel::available() {
                let mut out = [0u8; 16];
                swap_halves_with(k, &w, &mut out).unwrap();
                assert_eq!(canonical(&out), text, "{k:?}");
            }
        }
    }

    #[test]
    fn every_kernel_matches_the_reference() {
        let mut rng = Rng(7);
        let kernels = Kernel::available();
        assert!(kernels.contains(&Kernel::Scalar));
        for n in (0..=70).chain([127, 128, 129, 1000, 1023]) {
            let src: Vec<u8> = (0..16 * n).map(|_| rng.next() as u8).collect();
            let want = reference(&src);
            for &k in &kernels {
                let mut dst = vec![0u8; src.len()];
                swap_halves_with(k, &src, &mut dst).unwrap();
                assert_eq!(dst, want, "{k:?} n={n}");
                let mut buf = src.clone();
                swap_halves_in_place_with(k, &mut buf).unwrap();
                assert_eq!(buf, want, "{k:?} in place n={n}");
                // Its own inverse.
                swap_halves_in_place_with(k, &mut buf).unwrap();
                assert_eq!(buf, src);
            }
            // Misaligned sub-slices.
            if n > 2 {
                for &k in &kernels {
                    let mut dst = vec![0u8; src.len() + 3];
                    swap_halves_with(k, &src[16..], &mut dst[3..3 + src.len() - 16]).unwrap();
                    assert_eq!(&dst[3..3 + src.len() - 16], &want[16..]);
                }
            }
        }
    }

    #[test]
    fn scalar_kernel_runs_explicitly() {
        let src: Vec<u8> = (0..=255).collect();
        let mut dst = vec![0u8; 256];
        swap_halves_with(Kernel::Scalar, &src, &mut dst).unwrap();
        assert_eq!(dst, reference(&src));
        assert_eq!(&dst[..16], &[7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8]);
    }

    #[test]
    fn typed_conversions() {
        let mut rng = Rng(11);
        let wire: Vec<WireUuid> = (0..37).map(|_| WireUuid { high: rng.next(), low: rng.next() }).collect();
        let rfc = to_rfc_vec(&wire);
        for (w, r) in wire.iter().zip(&rfc) {
            assert_eq!(*r, w.as_u128().to_be_bytes());
            assert_eq!(canonical(r), w.to_string());
        }
        let mut back = vec![WireUuid::default(); wire.len()];
        from_rfc(&rfc, &mut back).unwrap();
        assert_eq!(back, wire);
        let mut rfc2 = vec![[0u8; 16]; wire.len()];
        to_rfc(&wire, &mut rfc2).unwrap();
        assert_eq!(rfc2, rfc);
    }

    #[test]
    fn errors() {
        let mut dst = [0u8; 32];
        assert!(swap_halves_with(Kernel::Scalar, &[0u8; 16], &mut dst).is_err());
        assert!(swap_halves_with(Kernel::Scalar, &[0u8; 31], &mut dst[..31]).is_err());
        assert!(swap_halves_in_place_with(Kernel::Scalar, &mut dst[..17]).is_err());
        let mut w = [WireUuid::default(); 2];
        assert!(from_rfc(&[[0u8; 16]; 3], &mut w).is_err());
        swap_halves_with(Kernel::detect(), &[], &mut []).unwrap();
    }

    #[cfg(feature = "uuid")]
    #[test]
    fn uuid_crate() {
        let text = "550e8400-e29b-41d4-a716-446655440000";
        let u = uuid::Uuid::parse_str(text).unwrap();
        let wire = from_uuid_vec(&[u, uuid::Uuid::nil(), uuid::Uuid::max()]);
        assert_eq!(wire[0].to_string(), text);
        assert_eq!(wire[0], WireUuid::from(u));
        assert_eq!(uuid::Uuid::from(wire[0]), u);
        assert_eq!(wire[2], WireUuid { high: u64::MAX, low: u64::MAX });
        let back = to_uuid_vec(&wire);
        assert_eq!(back, [u, uuid::Uuid::nil(), uuid::Uuid::max()]);
        let mut rng = Rng(5);
        let many: Vec<uuid::Uuid> = (0..101).map(|_| uuid::Uuid::from_u64_pair(rng.next(), rng.next())).collect();
        let mut w = vec![WireUuid::default(); many.len()];
        from_uuids(&many, &mut w).unwrap();
        for (a, b) in many.iter().zip(&w) {
            assert_eq!(a.to_string(), b.to_string());
        }
        let mut u2 = vec![uuid::Uuid::nil(); many.len()];
        to_uuids(&w, &mut u2).unwrap();
        assert_eq!(u2, many);
    }
}
