//! Borrowed byte runs spliced into an encoded block, so that large column
//! buffers already in wire layout go to the socket (or the compressor) from
//! where they lie instead of being copied into the outgoing packet first.
//!
//! An encoder writes its own bytes (headers, rebased offsets, gathered
//! strings) into a `Vec<u8>` as usual and, for a run it can send as it is,
//! records the run with the position in that vector where it belongs
//! ([`Splices::push`]). The connection keeps only positions and lengths
//! ([`Connection::send_data_spliced`](crate::connection::Connection::send_data_spliced));
//! the caller keeps the [`Splices`] until the bytes are written and passes it
//! to [`Connection::transmit_spliced`](crate::connection::Connection::transmit_spliced).

/// Runs shorter than this are copied: a run costs an I/O vector entry (or a
/// compressed frame of its own), which only pays for itself on larger runs.
pub const MIN_SPLICE: usize = 4 << 10;

/// Borrowed runs and where they go among an encoder's own bytes.
#[derive(Debug, Default, Clone)]
pub struct Splices<'a> {
    runs: Vec<(usize, &'a [u8])>,
}

impl<'a> Splices<'a> {
    /// No runs.
    pub fn new() -> Self {
        Splices { runs: Vec::new() }
    }

    /// Places `bytes` at `out.len()` of the encoder's output `out` (they come
    /// after the bytes written so far, before any written later); short runs
    /// (under [`MIN_SPLICE`]) are copied into `out` instead.
    pub fn push(&mut self, out: &mut Vec<u8>, bytes: &'a [u8]) {
        if bytes.len() < MIN_SPLICE {
            out.extend_from_slice(bytes);
        } else {
            self.runs.push((out.len(), bytes));
        }
    }

    /// The same with an optional splicer: without one, the bytes are copied.
    pub fn push_or_copy(splices: Option<&mut Self>, out: &mut Vec<u8>, bytes: &'a [u8]) {
        match splices {
            Some(s) => s.push(out, bytes),
            None => out.extend_from_slice(bytes),
        }
    }

    /// No runs, in the memory of `self`'s (whose runs borrowed other data): an
    /// INSERT of many blocks keeps one vector instead of growing a new one per
    /// block. The standard library collects a mapped `into_iter()` in place when
    /// the element layouts agree, as they do here (only the lifetime differs).
    pub fn recycle<'b>(mut self) -> Splices<'b> {
        self.runs.clear();
        Splices { runs: self.runs.into_iter().map(|_| unreachable!("the runs were cleared")).collect() }
    }

    /// Forgets every run (keeping the memory).
    pub fn clear(&mut self) {
        self.runs.clear();
    }

    /// Whether there are no runs.
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// How many runs.
    pub fn len(&self) -> usize {
        self.runs.len()
    }

    /// The runs in order: the position in the encoder's output each goes
    /// before, and its bytes.
    pub fn runs(&self) -> &[(usize, &'a [u8])] {
        &self.runs
    }

    /// Bytes in all runs.
    pub fn bytes(&self) -> usize {
        self.runs.iter().map(|(_, b)| b.len()).sum()
    }

    /// The whole stream: `own` with every run in its place, copied into `out`.
    pub fn materialize(&self, own: &[u8], out: &mut Vec<u8>) {
        out.reserve(own.len() + self.bytes());
        let mut pos = 0;
        for &(at, bytes) in &self.runs {
            out.extend_from_slice(&own[pos..at]);
            out.extend_from_slice(bytes);
            pos = at;
        }
        out.extend_from_slice(&own[pos..]);
    }

    /// The pieces of the whole stream in order, without copying: runs of
    /// `own` (empty ones left out) and the borrowed runs.
    pub fn pieces<'s>(&'s self, own: &'s [u8]) -> impl Iterator<Item = &'s [u8]> + 's {
        let mut pos = 0;
        let mut runs = self.runs.iter();
        let mut pending: Option<&'s [u8]> = None;
        std::iter::from_fn(move || loop {
            if let Some(b) = pending.take() {
                return Some(b);
            }
            match runs.next() {
                Some(&(at, bytes)) => {
                    let before = &own[pos..at];
                    pos = at;
                    pending = Some(bytes);
                    if !before.is_empty() {
                        return Some(before);
                    }
                }
                None => {
                    let rest = &own[pos..];
                    pos = own.len();
                    return (!rest.is_empty()).then_some(rest);
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_runs_are_copied_long_ones_spliced() {
        let big = vec![7u8; MIN_SPLICE];
        let mut out = b"ab".to_vec();
        let mut s = Splices::new();
        s.push(&mut out, b"cd");
        s.push(&mut out, &big);
        out.extend_from_slice(b"ef");
        s.push(&mut out, &big);
        assert_eq!(out, b"abcdef");
        assert_eq!(s.runs().iter().map(|r| r.0).collect::<Vec<_>>(), [4, 6]);
        let mut whole = Vec::new();
        s.materialize(&out, &mut whole);
        let mut want = b"abcd".to_vec();
        want.extend_from_slice(&big);
        want.extend_from_slice(b"ef");
        want.extend_from_slice(&big);
        assert_eq!(whole, want);
        assert_eq!(s.pieces(&out).flatten().copied().collect::<Vec<u8>>(), want);
        assert_eq!(s.pieces(&out).count(), 4);
        assert_eq!(s.bytes(), 2 * MIN_SPLICE);
    }

    #[test]
    fn pieces_leave_out_empty_runs_of_own_bytes() {
        let big = vec![1u8; MIN_SPLICE];
        let mut out = Vec::new();
        let mut s = Splices::new();
        s.push(&mut out, &big);
        s.push(&mut out, &big);
        assert_eq!(s.pieces(&out).map(<[u8]>::len).collect::<Vec<_>>(), [MIN_SPLICE, MIN_SPLICE]);
        let none = Splices::new();
        assert_eq!(none.pieces(b"xy").collect::<Vec<_>>(), [b"xy"]);
        assert_eq!(none.pieces(b"").count(), 0);
    }

    #[test]
    fn recycled_splices_keep_their_memory() {
        let data = vec![7u8; 3 * MIN_SPLICE];
        let mut out = Vec::new();
        let mut sp = Splices::new();
        for chunk in data.chunks(MIN_SPLICE) {
            sp.push(&mut out, chunk);
        }
        assert_eq!(sp.len(), 3);
        let cap = sp.runs.capacity();
        let again: Splices<'static> = sp.recycle();
        assert!(again.is_empty());
        assert_eq!(again.runs.capacity(), cap);
    }
}
