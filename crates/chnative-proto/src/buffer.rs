//! Aligned, reusable byte buffers that columns live in.
//!
//! A column's fixed-width values are handed to users as `&[T]`, which needs the
//! bytes to sit at an address aligned for `T` (16 bytes for `u128` on x86-64).
//! Storage is a `Vec` of 64-byte lines, so every buffer starts on a cache line and
//! can be viewed as any plain-old-data type with a checked `bytemuck` cast.
//! Memory is not zeroed before it is written: bytes are copied straight into the
//! `Vec`'s spare capacity (`Appender`, the one `unsafe` part), and a line
//! becomes part of the `Vec` only once every byte of it is written. Buffers go back to a [`BufferPool`] when a block is recycled and
//! keep their capacity, so steady-state streaming allocates nothing. A buffer a
//! kept block (a clone) still shares finds its way home when its last holder drops
//! it, from any thread.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

use bytemuck::{Pod, Zeroable};

use crate::error::{ProtoError, Result};

#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C, align(64))]
struct Line([u8; 64]);

/// A growable byte buffer aligned to 64 bytes.
///
/// The lines are shared on `clone` (an `Arc`), so cloning a decoded block to keep
/// it costs no copy of its data. A buffer that is shared is copied before it is
/// changed, or replaced when its contents are being thrown away, so neither side
/// ever sees the other's writes.
#[derive(Default, Clone)]
pub struct AlignedBuf {
    lines: Arc<Lines>,
    len: usize,
}

/// The memory of a buffer and the pool it came from. The pool is held weakly, so
/// a block kept after its connection is gone frees its memory instead.
#[derive(Default, Clone)]
struct Lines {
    lines: Vec<Line>,
    home: Option<Weak<Returns>>,
}

impl std::ops::Deref for Lines {
    type Target = Vec<Line>;
    fn deref(&self) -> &Vec<Line> {
        &self.lines
    }
}

impl Drop for Lines {
    fn drop(&mut self) {
        // Only memory that left the pool's own hands gets here with capacity: the
        // pool unwraps what it is given back directly.
        if self.lines.capacity() == 0 {
            return;
        }
        if let Some(home) = self.home.as_ref().and_then(Weak::upgrade) {
            home.put(std::mem::take(&mut self.lines));
        }
    }
}

/// Memory handed back by buffers dropped outside the pool (kept blocks), possibly
/// on another thread; the pool drains it when its own free list is empty.
#[derive(Default)]
struct Returns {
    queued: AtomicUsize,
    lines: Mutex<Vec<Vec<Line>>>,
}

impl Returns {
    fn put(&self, lines: Vec<Line>) {
        // A poisoned lock only means another thread panicked mid-push; the list is still a list.
        let mut q = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        if q.len() < POOL_LIMIT {
            q.push(lines);
            self.queued.store(q.len(), Ordering::Release);
        }
    }

    /// Returned memory with room for at least `lines` lines (any, for 0).
    fn take(&self, lines: usize) -> Option<Vec<Line>> {
        // The counter spares the lock on the common path, where nothing was kept.
        if self.queued.load(Ordering::Acquire) == 0 {
            return None;
        }
        let mut q = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        let at = q.iter().rposition(|v| v.capacity() >= lines)?;
        let found = q.swap_remove(at);
        self.queued.store(q.len(), Ordering::Release);
        Some(found)
    }
}

impl std::fmt::Debug for AlignedBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AlignedBuf").field("len", &self.len).field("capacity", &self.capacity()).finish()
    }
}

impl AlignedBuf {
    /// An empty buffer: no data, only the small shared header every buffer has.
    pub fn new() -> Self {
        Self::default()
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes that fit without growing.
    pub fn capacity(&self) -> usize {
        self.lines.capacity() * 64
    }

    /// Bytes of memory that are initialised (written at least once): the
    /// contents, and what earlier contents left behind.
    fn initialised(&self) -> usize {
        self.lines.len() * 64
    }

    /// Whether another buffer (a clone kept by a user) shares these bytes.
    pub fn is_shared(&self) -> bool {
        Arc::strong_count(&self.lines) > 1
    }

    /// The lines, for writing: copied first when shared (the contents are kept).
    fn lines_mut(&mut self) -> &mut Vec<Line> {
        &mut Arc::make_mut(&mut self.lines).lines
    }

    /// Forgets the contents, keeps the memory (or, when shared, lets the other
    /// holder keep it and starts afresh).
    pub(crate) fn clear(&mut self) {
        if self.is_shared() {
            let home = self.lines.home.clone();
            self.lines = Arc::new(Lines { lines: Vec::new(), home });
        }
        self.len = 0;
    }

    /// Makes the capacity at least `bytes` (nothing is initialised).
    fn grow_to(&mut self, bytes: usize) {
        let need = bytes.div_ceil(64);
        if self.lines.capacity() < need && !self.is_shared() {
            // Memory a kept block gave back is preferred to a new allocation.
            let home = self.lines.home.as_ref().and_then(Weak::upgrade);
            if let Some(mut bigger) = home.as_ref().and_then(|h| h.take(need)) {
                let keep = self.len.div_ceil(64);
                bigger.clear();
                bigger.extend_from_slice(&self.lines[..keep]);
                let old = std::mem::replace(self.lines_mut(), bigger);
                if let Some(h) = home.filter(|_| old.capacity() > 0) {
                    h.put(old);
                }
                return;
            }
        }
        if self.lines.capacity() < need {
            // Grow geometrically so byte-at-a-time appends stay amortised O(1).
            let target = need.max(self.lines.capacity() * 2);
            let lines = self.lines_mut();
            lines.reserve_exact(target - lines.len());
        }
    }

    /// Makes the first `bytes` bytes of memory initialised (new lines zeroed),
    /// for writers that need a `&mut [u8]` beyond the contents.
    fn init_to(&mut self, bytes: usize) {
        self.grow_to(bytes);
        let need = bytes.div_ceil(64);
        if self.lines.len() < need {
            self.lines_mut().resize(need, Line([0; 64]));
        }
    }

    /// Room for `n` more bytes after the contents, to be written in order with
    /// [`Appender::put`] (without zeroing them first); the contents grow by what
    /// was written when the appender is dropped.
    #[inline]
    pub(crate) fn appender(&mut self, n: usize) -> Appender<'_> {
        let at = self.len;
        let end = at.checked_add(n).expect("a buffer of more than usize::MAX bytes");
        // Unshared first (a copy of a shared buffer has no spare capacity), then grown.
        self.lines_mut();
        self.grow_to(end);
        let AlignedBuf { lines, len } = self;
        let lines = &mut Arc::make_mut(lines).lines;
        // The appender's writes rely on this.
        assert!(lines.capacity() * 64 >= end, "an appender without its room");
        Appender { lines, len, at, end }
    }

    /// The contents.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        &bytemuck::cast_slice::<Line, u8>(&self.lines)[..self.len]
    }

    /// The contents, mutable.
    #[inline]
    pub(crate) fn as_bytes_mut(&mut self) -> &mut [u8] {
        let len = self.len;
        &mut bytemuck::cast_slice_mut::<Line, u8>(self.lines_mut())[..len]
    }

    /// Replaces the contents with a copy of `src` (the one copy a column gets).
    #[inline]
    pub(crate) fn set_from(&mut self, src: &[u8]) {
        self.clear();
        self.extend_from(src);
    }

    /// Appends a copy of `src`.
    #[inline]
    pub(crate) fn extend_from(&mut self, src: &[u8]) {
        self.appender(src.len()).put(src);
    }

    /// Makes the capacity at least `bytes` (contents kept): room a direct fill
    /// then writes into through [`AlignedBuf::spare_mut`], or a copy in pieces.
    pub(crate) fn reserve_total(&mut self, bytes: usize) {
        self.grow_to(bytes);
    }

    /// The bytes between the length and `end`, to be written and then taken in
    /// with [`AlignedBuf::commit`]. `end` is cut to the capacity. Lines not yet
    /// initialised are zeroed first (a socket read wants a `&mut [u8]`).
    pub(crate) fn spare_mut(&mut self, end: usize) -> &mut [u8] {
        let (start, end) = (self.len, end.min(self.capacity()));
        if start >= end {
            return &mut [];
        }
        self.init_to(end);
        &mut bytemuck::cast_slice_mut::<Line, u8>(self.lines_mut())[start..end]
    }

    /// Takes the next `n` bytes of [`AlignedBuf::spare_mut`] into the contents
    /// (cut to what `spare_mut` handed out).
    pub(crate) fn commit(&mut self, n: usize) {
        debug_assert!(self.len + n <= self.initialised(), "commit past the spare bytes");
        self.len = (self.len + n).min(self.initialised());
    }

    /// Appends one plain-old-data value.
    #[inline]
    pub(crate) fn push<T: Pod>(&mut self, v: T) {
        self.extend_from(bytemuck::bytes_of(&v));
    }

    /// Resizes to `len` bytes; new bytes are zero.
    pub(crate) fn resize_zeroed(&mut self, len: usize) {
        self.resize_filled(len, 0)
    }

    /// Resizes to `len` bytes; new bytes are `byte` (`0xff` makes `u64::MAX` entries).
    pub(crate) fn resize_filled(&mut self, len: usize, byte: u8) {
        if len > self.len {
            let n = len - self.len;
            self.appender(n).fill(byte, n);
        }
        self.len = len;
    }

    /// Views the contents as `&[T]`. Fails only if the length is not a multiple of
    /// `size_of::<T>()`, which column constructors rule out.
    #[inline]
    pub fn typed<T: Pod>(&self) -> Result<&[T]> {
        bytemuck::try_cast_slice(self.as_bytes()).map_err(|e| {
            ProtoError::violation(format!(
                "buffer of {} bytes viewed as {}: {e:?}",
                self.len,
                std::any::type_name::<T>()
            ))
        })
    }

    /// Views the contents as `&mut [T]`.
    #[inline]
    pub(crate) fn typed_mut<T: Pod>(&mut self) -> Result<&mut [T]> {
        let len = self.len;
        bytemuck::try_cast_slice_mut(self.as_bytes_mut()).map_err(|e| {
            ProtoError::violation(format!("buffer of {len} bytes viewed as {}: {e:?}", std::any::type_name::<T>()))
        })
    }
}

/// Writes bytes after a buffer's contents, into memory that need not be
/// initialised: see [`AlignedBuf::appender`]. What was written becomes part of
/// the contents when it is dropped.
pub(crate) struct Appender<'a> {
    lines: &'a mut Vec<Line>,
    len: &'a mut usize,
    /// Where the next byte goes, and the end of the reserved room (bytes).
    at: usize,
    end: usize,
}

impl Appender<'_> {
    /// Appends `src`. Panics past the room asked for (a bug of the caller's).
    #[inline]
    pub(crate) fn put(&mut self, src: &[u8]) {
        assert!(src.len() <= self.end - self.at, "an appender wrote past its room");
        // SAFETY: `at + src.len() <= end <= capacity * 64` (checked above; `appender`
        // reserved `end`), so the bytes written are inside the Vec's allocation (its
        // pointer may be written through up to the capacity). `src` cannot overlap them:
        // the Vec is borrowed mutably here, and memory shared with another buffer was
        // copied by `Arc::make_mut` before this appender was made. The bytes past the
        // Vec's length are not read before `drop` makes their lines part of it, by which
        // time every byte of those lines has been written (see `drop`).
        unsafe {
            std::ptr::copy_nonoverlapping(src.as_ptr(), self.lines.as_mut_ptr().cast::<u8>().add(self.at), src.len())
        }
        self.at += src.len();
    }

    /// Appends `input[at..at + n]`. A short string is copied as one fixed 32-byte
    /// move when the input has the bytes after it and the room has the space: the
    /// bytes beyond `n` land where the next writes go (or are zeroed on drop), and a
    /// fixed-size copy is one load and one store instead of a call to `memcpy` per
    /// string (the copy loop of a String column's decode).
    #[inline]
    pub(crate) fn put_from(&mut self, input: &[u8], at: usize, n: usize) {
        const WIDE: usize = 32;
        if n <= WIDE && input.len().saturating_sub(at) >= WIDE && self.end - self.at >= WIDE {
            let src: &[u8; WIDE] = input[at..at + WIDE].try_into().expect("WIDE bytes");
            // SAFETY: `at + WIDE <= end` (checked above) keeps the write inside the
            // reserved room, as in `put`; only `n` bytes count as written, the rest are
            // overwritten by the following writes or zeroed by `drop` before anything
            // reads them.
            unsafe {
                std::ptr::copy_nonoverlapping(src.as_ptr(), self.lines.as_mut_ptr().cast::<u8>().add(self.at), WIDE)
            }
            self.at += n;
        } else {
            self.put(&input[at..at + n]);
        }
    }

    /// Appends `n` copies of `byte`. Panics past the room asked for.
    pub(crate) fn fill(&mut self, byte: u8, n: usize) {
        assert!(n <= self.end - self.at, "an appender wrote past its room");
        // SAFETY: as in `put`: inside the allocation, nothing else points there.
        unsafe { std::ptr::write_bytes(self.lines.as_mut_ptr().cast::<u8>().add(self.at), byte, n) }
        self.at += n;
    }
}

impl Drop for Appender<'_> {
    fn drop(&mut self) {
        let lines = self.at.div_ceil(64);
        if lines > self.lines.len() {
            // SAFETY: bytes from the old length (`*self.len <= self.lines.len() * 64`) up
            // to `at` were written in order by `put`/`fill`; the rest of the last line,
            // `at..lines * 64`, is zeroed here (inside the capacity: `at <= end` and
            // `grow_to` reserved whole lines). So every byte of the lines
            // `self.lines.len()..lines` is initialised, and any bytes make a valid `Line`.
            unsafe {
                let base = self.lines.as_mut_ptr().cast::<u8>();
                std::ptr::write_bytes(base.add(self.at), 0, lines * 64 - self.at);
                self.lines.set_len(lines);
            }
        }
        *self.len = self.at;
    }
}

/// Free buffers waiting to be reused. Owned by one stream; no locking, except
/// for memory coming back from kept blocks (see [`AlignedBuf`]).
#[derive(Default)]
pub struct BufferPool {
    // Declared first so it is dropped first: the free buffers dropped after it
    // find no home to go back to.
    returns: Arc<Returns>,
    free: Vec<AlignedBuf>,
}

impl std::fmt::Debug for BufferPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BufferPool")
            .field("free", &self.free.len())
            .field("returned", &self.returns.queued.load(Ordering::Relaxed))
            .finish()
    }
}

/// Buffers kept at most; beyond this, returned buffers are freed.
const POOL_LIMIT: usize = 256;

impl BufferPool {
    /// An empty pool.
    pub fn new() -> Self {
        Self::default()
    }

    /// A cleared buffer, reused when one is free.
    pub fn take(&mut self) -> AlignedBuf {
        if let Some(mut b) = self.free.pop() {
            b.clear();
            return b;
        }
        let home = Some(Arc::downgrade(&self.returns));
        let lines = self.returns.take(0).unwrap_or_default();
        AlignedBuf { lines: Arc::new(Lines { lines, home }), len: 0 }
    }

    /// Returns a buffer for reuse. A buffer a kept block still shares stays with
    /// that block (the pool would only have to replace it).
    pub fn give(&mut self, buf: AlignedBuf) {
        if buf.capacity() > 0 && !buf.is_shared() && self.free.len() < POOL_LIMIT {
            self.free.push(buf);
        }
    }

    /// Buffers currently free (including memory returned by kept blocks).
    pub fn len(&self) -> usize {
        self.free.len() + self.returns.queued.load(Ordering::Acquire)
    }

    /// True when no buffer is free.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_views_are_aligned() {
        let mut b = AlignedBuf::new();
        for i in 0u128..10 {
            b.push(i);
        }
        let v: &[u128] = b.typed().unwrap();
        assert_eq!(v[9], 9);
        assert_eq!(v.as_ptr() as usize % 64, 0);
        assert!(b.typed::<[u8; 3]>().is_err() || b.len().is_multiple_of(3));
    }

    #[test]
    fn clones_share_until_one_side_writes() {
        let mut a = AlignedBuf::new();
        a.set_from(&[1, 2, 3]);
        let kept = a.clone();
        assert!(a.is_shared() && kept.is_shared());
        assert_eq!(kept.as_bytes().as_ptr(), a.as_bytes().as_ptr(), "a clone copies nothing");
        // Appending copies first: the kept clone is unchanged.
        a.extend_from(&[4]);
        assert_eq!((a.as_bytes(), kept.as_bytes()), (&[1, 2, 3, 4][..], &[1, 2, 3][..]));
        assert!(!a.is_shared() && !kept.is_shared());
        // Replacing the contents of a shared buffer starts afresh, without copying.
        let kept2 = a.clone();
        a.set_from(&[9]);
        assert_eq!((a.as_bytes(), kept2.as_bytes()), (&[9][..], &[1, 2, 3, 4][..]));
        // The pool leaves a buffer a clone still shares with that clone.
        let mut p = BufferPool::new();
        let b = kept2.clone();
        p.give(b);
        assert!(p.is_empty());
        p.give(a);
        assert_eq!(p.len(), 1);
    }

    #[test]
    fn kept_buffers_come_home_when_dropped() {
        let mut p = BufferPool::new();
        let mut b = p.take();
        b.set_from(&[7u8; 4096]);
        let (ptr, cap) = (b.as_bytes().as_ptr(), b.capacity());
        let kept = b.clone();
        p.give(b); // still shared: stays with the kept clone
        assert!(p.is_empty());
        // The last holder drops it on another thread; the memory goes back to the pool.
        std::thread::spawn(move || drop(kept)).join().unwrap();
        assert_eq!(p.len(), 1);
        let mut again = p.take();
        assert!(again.is_empty());
        assert_eq!(again.capacity(), cap);
        again.set_from(&[1]);
        assert_eq!(again.as_bytes().as_ptr(), ptr, "the same memory, not a new allocation");
        assert!(p.is_empty());
        // A buffer outliving its pool is simply freed.
        let kept = again.clone();
        p.give(again);
        drop(p);
        assert_eq!(kept.as_bytes(), &[1]);
        drop(kept);
        // Plain buffers have no pool.
        let mut plain = AlignedBuf::new();
        plain.set_from(&[1, 2]);
        drop(plain);
    }

    #[test]
    fn appenders_write_in_order_over_spare_capacity() {
        let input: Vec<u8> = (0..200u8).collect();
        let mut b = AlignedBuf::new();
        b.set_from(&[9; 70]);
        let kept = b.clone();
        {
            // Shared: the appender writes into a copy, the clone keeps its bytes.
            let mut w = b.appender(3 + 40 + 5);
            w.put(&[1, 2, 3]);
            w.put_from(&input, 10, 40); // too long for the fixed move
            w.put_from(&input, 100, 5); // a fixed move, its tail overwritten by nothing
        }
        assert_eq!(kept.as_bytes(), &[9; 70][..]);
        let mut want = vec![9u8; 70];
        want.extend_from_slice(&[1, 2, 3]);
        want.extend_from_slice(&input[10..50]);
        want.extend_from_slice(&input[100..105]);
        assert_eq!(b.as_bytes(), &want[..]);
        // The fixed move's extra bytes are overwritten by what follows.
        let mut w = b.appender(4);
        w.put_from(&input, 0, 2);
        w.put(&[7, 7]);
        drop(w);
        want.extend_from_slice(&[0, 1, 7, 7]);
        assert_eq!(b.as_bytes(), &want[..]);
        // Nothing written, nothing added; the spare bytes a direct fill gets are zeroed.
        drop(b.appender(100));
        assert_eq!(b.len(), want.len());
        let spare = b.spare_mut(b.len() + 100);
        assert_eq!(spare.len(), 100);
        assert!(spare.iter().all(|&x| x == 0), "{spare:?}");
        b.commit(10);
        assert_eq!(b.len(), want.len() + 10);
    }

    #[test]
    fn pool_reuses_capacity() {
        let mut p = BufferPool::new();
        let mut b = p.take();
        b.set_from(&[1u8; 1000]);
        let cap = b.capacity();
        p.give(b);
        let b = p.take();
        assert!(b.is_empty());
        assert_eq!(b.capacity(), cap);
    }
}
