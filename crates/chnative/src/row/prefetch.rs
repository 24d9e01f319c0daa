//! A cache prefetch hint for the typed row read: the one `unsafe` it needs, alone.

/// Starts loading the cache lines of `bytes` (a hint, no effect on results).
///
/// A typed read builds each row from every column before the next row, so it
/// walks ~100 column streams at once, more than the CPU's prefetchers follow;
/// asking for the next rows' lines ahead keeps the values in cache when the row
/// is built. The row stream does it once per 64 rows.
#[inline(always)]
pub fn prefetch(bytes: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let mut at = 0;
        while at < bytes.len() {
            // SAFETY: a prefetch is a hint that never faults and reads nothing
            // into the program; the address is inside `bytes` anyway.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(bytes.as_ptr().add(at).cast()) };
            at += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = bytes;
}
