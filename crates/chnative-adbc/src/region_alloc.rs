//! The driver library's allocator for large buffers (feature `region-alloc`, on by
//! default; Linux only).
//!
//! Why: a result read into Arrow is written into memory new to the process, and where a
//! page fault is dear (a VM: microseconds each) faulting it in is most of a read's CPU:
//! 1M rows of the 105 hits columns take about 230,000 faults of 4 KiB. The system
//! allocator serves each buffer of a block's column (64 KiB to a few MiB) from a mapping of
//! its own, faulted a page at a time by the first writes. Here those buffers are carved
//! from 64 MiB regions that the kernel fills 2 MiB at a time on request
//! (`MADV_POPULATE_WRITE`, Linux 5.14): one call instead of 512 traps. Reads of 10M mixed
//! rows and of the hits rows into pyarrow cost about a fifth less CPU in a fresh process
//! (benches/python/RESULTS-2026-12-06.md).
//!
//! The rules:
//! - Allocations of 64 KiB to 16 MiB, aligned to at most a page, come from the current
//!   region, rounded up to whole pages: an allocation owns its pages alone. Everything
//!   else, and everything once regions cannot be had, goes to the system allocator.
//! - A region whose allocations are all freed is used again with its pages still faulted
//!   in: the current one starts over from its beginning, an old one is kept as a spare
//!   (8 at most, 512 MiB; more are unmapped). So a program that reads result after result
//!   writes into memory it already has, as the system allocator's reused heap gives it.
//!   The price, as with any heap: pages of freed allocations stay with the process while
//!   their region still holds another allocation.
//! - Growing the last allocation of the current region happens in place.
//!
//! A global allocator applies to every Rust allocation of the program it is linked into.
//! The driver's shared library is such a program; a Rust program that links this crate and
//! chooses its own allocator turns the feature off (`default-features = false`).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, Ordering};

const PAGE: usize = 4096;
/// The smallest allocation served from regions: below it the system allocator's heap
/// reuses memory well, and a page per allocation would waste it.
const MIN: usize = 64 << 10;
/// The largest: a quarter of a region, so a region is never left mostly empty.
const MAX: usize = 16 << 20;
const REGION: usize = 64 << 20;
/// How much of a region is faulted in at a time, ahead of the allocations.
const STEP: usize = 2 << 20;
/// Regions alive at most (16 GiB); past that, the system allocator.
const SLOTS: usize = 256;
/// Empty regions kept, faulted in, for the next results (512 MiB at most).
const SPARES: usize = 8;
/// `MADV_POPULATE_WRITE` (linux/mman-common.h): fault a range in, writable, in one call.
const MADV_POPULATE_WRITE: libc::c_int = 23;

/// Large allocations from page-populated regions; see the module.
pub struct RegionAlloc {
    locked: AtomicBool,
    regions: UnsafeCell<Regions>,
}

// SAFETY: `regions` is only touched while `locked` is held (`with`), which makes access to
// it exclusive across threads.
unsafe impl Sync for RegionAlloc {}

struct Regions {
    /// Each live region's address (0: a free slot) and its count of live allocations.
    base: [usize; SLOTS],
    live: [usize; SLOTS],
    /// Empty regions kept for reuse (0: none), their pages still faulted in.
    spare: [usize; SPARES],
    /// The slot allocations are carved from (`SLOTS`: none yet), how far it is used and
    /// how far it was populated.
    current: usize,
    bump: usize,
    populated: usize,
}

/// Served from regions (by size and alignment): the same answer at allocation and free.
fn in_class(layout: &Layout) -> bool {
    (MIN..=MAX).contains(&layout.size()) && layout.align() <= PAGE
}

fn pages(size: usize) -> usize {
    size.next_multiple_of(PAGE)
}

impl RegionAlloc {
    /// An allocator with no region yet.
    pub const fn new() -> RegionAlloc {
        RegionAlloc {
            locked: AtomicBool::new(false),
            regions: UnsafeCell::new(Regions {
                base: [0; SLOTS],
                live: [0; SLOTS],
                spare: [0; SPARES],
                current: SLOTS,
                bump: 0,
                populated: 0,
            }),
        }
    }

    pub(crate) fn lock(&self) {
        let mut spins = 0u32;
        while self.locked.compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed).is_err() {
            spins += 1;
            if spins < 64 {
                std::hint::spin_loop();
            } else {
                // A holder may be in a system call (populating 2 MiB): give it the core.
                std::thread::yield_now();
            }
        }
    }

    pub(crate) fn unlock(&self) {
        self.locked.store(false, Ordering::Release);
    }

    /// Runs `f` on the regions with the lock held.
    fn with<R>(&self, f: impl FnOnce(&mut Regions) -> R) -> R {
        self.lock();
        // SAFETY: the lock is held until `unlock` below, so this is the only reference.
        let r = f(unsafe { &mut *self.regions.get() });
        self.unlock();
        r
    }

    /// `size` bytes (whole pages) from the current region, a new one when it is full;
    /// `None` when no region can be had. Also returns a range to populate.
    fn carve(&self, size: usize) -> Option<(usize, Option<(usize, usize)>)> {
        self.with(|r| {
            if r.current == SLOTS || r.bump + size > REGION {
                r.new_region()?;
            }
            let c = r.current;
            let at = r.base[c] + r.bump;
            r.bump += size;
            r.live[c] += 1;
            Some((at, r.populate_to(r.bump)))
        })
    }
}

impl Regions {
    /// Makes a spare or newly mapped region current; the old current one is retired if it
    /// holds nothing.
    fn new_region(&mut self) -> Option<()> {
        let slot = self.base.iter().position(|&b| b == 0)?;
        let p = match self.spare.iter_mut().find(|b| **b != 0) {
            Some(b) => std::mem::take(b) as *mut libc::c_void,
            None => Self::map()?,
        };
        if self.current != SLOTS && self.live[self.current] == 0 {
            self.retire(self.current);
        }
        self.base[slot] = p as usize;
        self.live[slot] = 0;
        self.current = slot;
        self.bump = 0;
        self.populated = 0;
        Some(())
    }

    fn map() -> Option<*mut libc::c_void> {
        // SAFETY: a fresh anonymous private mapping; no existing memory is affected.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                REGION,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        (p != libc::MAP_FAILED).then_some(p)
    }

    /// The range of the current region to populate so that it is faulted in up to `end`
    /// (a step ahead), marked as populated.
    fn populate_to(&mut self, end: usize) -> Option<(usize, usize)> {
        if end <= self.populated {
            return None;
        }
        let to = end.next_multiple_of(STEP).min(REGION);
        let range = (self.base[self.current] + self.populated, to - self.populated);
        self.populated = to;
        Some(range)
    }

    /// A region that holds nothing any more: kept as a spare, or unmapped when there are
    /// enough spares.
    fn retire(&mut self, slot: usize) {
        let base = std::mem::take(&mut self.base[slot]);
        if slot == self.current {
            self.current = SLOTS;
        }
        match self.spare.iter_mut().find(|b| **b == 0) {
            Some(free) => *free = base,
            // SAFETY: the region holds no live allocation (its count is 0), so nothing
            // points into it; it was mapped by `map` with this size.
            None => unsafe {
                libc::munmap(base as *mut libc::c_void, REGION);
            },
        }
    }

    fn slot_of(&self, addr: usize) -> Option<usize> {
        self.base.iter().position(|&b| b != 0 && (b..b + REGION).contains(&addr))
    }
}

/// Faults `(addr, len)` in. Outside the lock: the range belongs to a region that stays
/// mapped (it is current and holds the allocation just made, which its caller has not
/// had the chance to free), and populating pages another thread already writes does not
/// change them. An older kernel refuses the advice; the pages then fault one by one.
fn populate(range: Option<(usize, usize)>) {
    if let Some((addr, len)) = range {
        // SAFETY: advice on mapped memory of ours; it changes no contents.
        unsafe { libc::madvise(addr as *mut libc::c_void, len, MADV_POPULATE_WRITE) };
    }
}

// SAFETY: every allocation handed out is `layout.size()` bytes or more (whole pages from
// a region, or the system allocator's), page-aligned in a region (so at least as aligned as
// the layouts served there, at most a page), and is handed out once until freed: the bump
// only moves forward, and a region starts over only when its count of live allocations is 0.
// Pages handed back or unmapped belong to freed allocations only.
unsafe impl GlobalAlloc for RegionAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !in_class(&layout) {
            // SAFETY: the caller's contract, passed on.
            return unsafe { System.alloc(layout) };
        }
        match self.carve(pages(layout.size())) {
            Some((at, range)) => {
                populate(range);
                at as *mut u8
            }
            // SAFETY: as above.
            None => unsafe { System.alloc(layout) },
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if in_class(&layout) {
            let ours = self.with(|r| {
                let slot = r.slot_of(ptr as usize)?;
                r.live[slot] -= 1;
                if r.live[slot] == 0 {
                    if slot == r.current {
                        r.bump = 0;
                        r.populated = 0;
                    } else {
                        r.retire(slot);
                    }
                }
                Some(())
            });
            if ours.is_some() {
                return;
            }
        }
        // SAFETY: not from a region, so from the system allocator with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller guarantees a valid size and alignment for the new layout.
        let new = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        if in_class(&layout) && in_class(&new) {
            // The last allocation of the current region grows or shrinks where it is.
            let (old_end, new_end) = (ptr as usize + pages(layout.size()), ptr as usize + pages(new_size));
            let range = self.with(|r| {
                let c = r.current;
                let in_current = c != SLOTS && (r.base[c]..r.base[c] + REGION).contains(&(ptr as usize));
                if !in_current || r.base[c] + r.bump != old_end || new_end > r.base[c] + REGION {
                    return None;
                }
                r.bump = new_end - r.base[c];
                Some(r.populate_to(r.bump))
            });
            if let Some(range) = range {
                populate(range);
                return ptr;
            }
        }
        if !in_class(&layout) && !in_class(&new) {
            // SAFETY: both sides are the system allocator's; the caller's contract.
            return unsafe { System.realloc(ptr, layout, new_size) };
        }
        // SAFETY: `new` is valid (above); the copy covers what both allocations hold.
        unsafe {
            let p = self.alloc(new);
            if !p.is_null() {
                std::ptr::copy_nonoverlapping(ptr, p, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
            p
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Marks an allocation with a pattern of its own (every 512th byte and the last, so
    /// every page of it), to find it overwritten or handed back later.
    fn fill(p: *mut u8, n: usize, seed: u8) {
        for i in (0..n).step_by(512).chain([n - 1]) {
            // SAFETY: `p` is a live allocation of at least `n` bytes.
            unsafe { *p.add(i) = seed.wrapping_add((i % 251) as u8) };
        }
    }

    fn intact(p: *const u8, n: usize, seed: u8) -> bool {
        // SAFETY: as in `fill`.
        (0..n).step_by(512).chain([n - 1]).all(|i| unsafe { *p.add(i) } == seed.wrapping_add((i % 251) as u8))
    }

    fn regions(a: &RegionAlloc) -> usize {
        a.with(|r| r.base.iter().filter(|&&b| b != 0).count())
    }

    #[test]
    fn allocations_keep_their_bytes_until_freed_in_any_order() {
        let a = RegionAlloc::new();
        let sizes = [64 << 10, 100_000, 1 << 20, 3 << 20, 16 << 20, 65_537, 5 << 20, 200_000];
        let mut live = Vec::new();
        for round in 0..40usize {
            let n = sizes[round % sizes.len()];
            let l = Layout::from_size_align(n, 64).unwrap();
            // SAFETY: a non-zero size.
            let p = unsafe { a.alloc(l) };
            assert!(!p.is_null());
            assert_eq!(p as usize % PAGE, 0, "region allocations start on a page");
            fill(p, n, round as u8);
            live.push((p, l, round as u8));
            if round % 3 == 2 {
                // Free one from the middle: its pages go back, its neighbours stay.
                let (p, l, seed) = live.remove(live.len() / 2);
                assert!(intact(p, l.size(), seed));
                // SAFETY: allocated above with `l`, freed once.
                unsafe { a.dealloc(p, l) };
            }
        }
        assert!(regions(&a) > 1, "the test spans several regions");
        for (p, l, seed) in &live {
            assert!(intact(*p, l.size(), *seed), "an allocation of {} bytes was overwritten", l.size());
        }
        for (p, l, _) in live.into_iter().rev() {
            // SAFETY: as above.
            unsafe { a.dealloc(p, l) };
        }
        assert_eq!(regions(&a), 1, "old regions are unmapped when empty; the current one stays");
        a.with(|r| assert_eq!((r.bump, r.live[r.current]), (0, 0), "the empty current region starts over"));
    }

    #[test]
    fn emptied_regions_are_kept_as_spares_and_used_again() {
        let a = RegionAlloc::new();
        let l = Layout::from_size_align(MAX, 64).unwrap();
        // Twelve 16 MiB allocations: three regions filled, since four fill one.
        // SAFETY: a non-zero size; each is freed once below with the same layout.
        let first: Vec<usize> = (0..12).map(|_| unsafe { a.alloc(l) } as usize).collect();
        let bases: Vec<usize> = a.with(|r| r.base.iter().copied().filter(|&b| b != 0).collect());
        assert_eq!(bases.len(), 3);
        for &p in &first {
            // SAFETY: as above.
            unsafe { a.dealloc(p as *mut u8, l) };
        }
        a.with(|r| {
            assert_eq!(r.spare.iter().filter(|&&b| b != 0).count(), 2, "the two old regions are spares");
            assert_eq!(r.bump, 0, "the current one starts over");
        });
        // The next allocations land in the regions already faulted in, not new mappings.
        // SAFETY: as above.
        let again: Vec<usize> = (0..12).map(|_| unsafe { a.alloc(l) } as usize).collect();
        assert!(again.iter().all(|p| bases.iter().any(|b| (*b..b + REGION).contains(p))));
        for p in again {
            // SAFETY: as above.
            unsafe { a.dealloc(p as *mut u8, l) };
        }
        // Past the spares kept, emptied regions are unmapped.
        // SAFETY: as above.
        let many: Vec<usize> = (0..4 * (SPARES + 3)).map(|_| unsafe { a.alloc(l) } as usize).collect();
        for p in many {
            // SAFETY: as above.
            unsafe { a.dealloc(p as *mut u8, l) };
        }
        a.with(|r| {
            assert_eq!(r.spare.iter().filter(|&&b| b != 0).count(), SPARES);
            assert_eq!(r.base.iter().filter(|&&b| b != 0).count(), 1);
        });
    }

    #[test]
    fn small_large_and_overaligned_allocations_go_to_the_system() {
        let a = RegionAlloc::new();
        for l in [
            Layout::from_size_align(1000, 8).unwrap(),
            Layout::from_size_align(MAX + 1, 64).unwrap(),
            Layout::from_size_align(1 << 20, 2 * PAGE).unwrap(),
        ] {
            // SAFETY: non-zero sizes.
            let p = unsafe { a.alloc(l) };
            assert_eq!(p as usize % l.align(), 0);
            fill(p, l.size(), 7);
            assert!(intact(p, l.size(), 7));
            // SAFETY: allocated above with `l`.
            unsafe { a.dealloc(p, l) };
        }
        assert_eq!(regions(&a), 0);
    }

    #[test]
    fn growing_keeps_the_contents_in_place_or_moved() {
        let a = RegionAlloc::new();
        let l = Layout::from_size_align(64 << 10, 64).unwrap();
        // SAFETY: a non-zero size; each realloc gets the pointer and layout of the last.
        unsafe {
            let p = a.alloc(l);
            fill(p, l.size(), 3);
            // The last allocation of the region grows where it is.
            let q = a.realloc(p, l, 1 << 20);
            assert_eq!(q, p);
            assert!(intact(q, l.size(), 3));
            let l1 = Layout::from_size_align(1 << 20, 64).unwrap();
            fill(q, l1.size(), 4);
            // Not the last any more: it moves, with its bytes.
            let other = a.alloc(l);
            let r = a.realloc(q, l1, 4 << 20);
            assert_ne!(r, q);
            assert!(intact(r, l1.size(), 4));
            let l4 = Layout::from_size_align(4 << 20, 64).unwrap();
            // Into the system allocator's range and back out.
            let s = a.realloc(r, l4, 40 << 20);
            assert!(intact(s, l1.size(), 4));
            let l40 = Layout::from_size_align(40 << 20, 64).unwrap();
            let t = a.realloc(s, l40, 100);
            assert!(intact(t, 1, 4), "the first bytes survive the shrink");
            a.dealloc(t, Layout::from_size_align(100, 64).unwrap());
            a.dealloc(other, l);
        }
    }

    #[test]
    fn threads_allocating_and_freeing_at_once_never_share_bytes() {
        let a = std::sync::Arc::new(RegionAlloc::new());
        let workers: Vec<_> = (0..4u8)
            .map(|t| {
                let a = a.clone();
                std::thread::spawn(move || {
                    let mut held = Vec::new();
                    for i in 0..300usize {
                        let n = (64 << 10) + (i * 7919 + usize::from(t) * 104_729) % (2 << 20);
                        let l = Layout::from_size_align(n, 16).unwrap();
                        let seed = t.wrapping_mul(31).wrapping_add(i as u8);
                        // SAFETY: a non-zero size.
                        let p = unsafe { a.alloc(l) };
                        fill(p, n, seed);
                        held.push((p as usize, l, seed));
                        if held.len() > 8 {
                            let (p, l, seed) = held.remove(i % held.len());
                            assert!(intact(p as *const u8, l.size(), seed));
                            // SAFETY: allocated by this thread with `l`, freed once.
                            unsafe { a.dealloc(p as *mut u8, l) };
                        }
                    }
                    for (p, l, seed) in held {
                        assert!(intact(p as *const u8, l.size(), seed));
                        // SAFETY: as above.
                        unsafe { a.dealloc(p as *mut u8, l) };
                    }
                })
            })
            .collect();
        for w in workers {
            w.join().unwrap();
        }
        assert!(regions(&a) <= 1);
    }
}
