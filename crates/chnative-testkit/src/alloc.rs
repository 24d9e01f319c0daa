//! A counting global allocator with per-thread counters.
//!
//! Declare it once per test binary:
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOC: chnative_testkit::alloc::Counting = chnative_testkit::alloc::Counting;
//! ```
//!
//! Every counter counts the calling thread's allocations only, so tests that run at the same
//! time in the same process (cargo runs a binary's tests on several threads) do not disturb
//! each other. A test that measures must therefore do its measured work on its own thread: a
//! plain `#[test]`, or a current-thread tokio runtime (`#[tokio::test(flavor =
//! "current_thread")]`); work done on a multi-thread runtime's workers is not counted.
//!
//! `alloc`, `alloc_zeroed` and a growing `realloc` count one call and the bytes they add; a
//! shrinking `realloc` counts one call and no bytes. [`live`] is the bytes allocated minus
//! the bytes freed on this thread (memory freed on another thread than it was allocated on
//! makes it drift, so use it over windows where one thread does all the work).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The counting allocator (wraps [`System`]).
pub struct Counting;

thread_local! {
    static CALLS: Cell<u64> = const { Cell::new(0) };
    static BYTES: Cell<u64> = const { Cell::new(0) };
    static LIVE: Cell<i64> = const { Cell::new(0) };
    static PEAK: Cell<i64> = const { Cell::new(0) };
}

fn grew(by: usize) {
    // `try_with`: a thread being torn down may still allocate; its counts no longer matter.
    let _ = CALLS.try_with(|c| c.set(c.get() + 1));
    let _ = BYTES.try_with(|c| c.set(c.get() + by as u64));
    let _ = LIVE.try_with(|live| {
        let now = live.get() + by as i64;
        live.set(now);
        let _ = PEAK.try_with(|p| p.set(p.get().max(now)));
    });
}

fn shrank(by: usize) {
    let _ = LIVE.try_with(|c| c.set(c.get() - by as i64));
}

// SAFETY: every call is forwarded to `System` unchanged; the counters are const-initialised
// thread-locals without destructors, so counting never allocates or re-enters the allocator.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        // SAFETY: the caller's contract is passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        // SAFETY: the caller's contract is passed on.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        shrank(layout.size());
        // SAFETY: the caller's contract is passed on.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            grew(new_size - layout.size());
        } else {
            let _ = CALLS.try_with(|c| c.set(c.get() + 1));
            shrank(layout.size() - new_size);
        }
        // SAFETY: the caller's contract is passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Allocation calls made by this thread so far.
pub fn calls() -> u64 {
    CALLS.with(Cell::get)
}

/// Bytes allocated by this thread so far (growth of reallocations included).
pub fn bytes() -> u64 {
    BYTES.with(Cell::get)
}

/// Bytes allocated minus bytes freed by this thread.
pub fn live() -> i64 {
    LIVE.with(Cell::get)
}

/// Restarts the peak of [`live`] at its current value.
pub fn reset_peak() {
    PEAK.with(|p| p.set(live()));
}

/// The highest [`live`] since the last [`reset_peak`].
pub fn peak() -> i64 {
    PEAK.with(Cell::get)
}

/// Counts of one window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Allocation calls.
    pub calls: u64,
    /// Bytes allocated.
    pub bytes: u64,
}

/// Runs `f` and returns its value and what this thread allocated meanwhile.
pub fn counting<T>(f: impl FnOnce() -> T) -> (T, Counts) {
    let (c0, b0) = (calls(), bytes());
    let v = f();
    (v, Counts { calls: calls() - c0, bytes: bytes() - b0 })
}
