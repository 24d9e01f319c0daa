//! Column buffers of finished typed INSERTs, kept for the next INSERT of the
//! same row type into columns of the same types.
//!
//! A typed INSERT transposes its rows into one buffer per field. Made anew for
//! every INSERT, those buffers grow from empty each time: reallocated as they
//! double, and every fresh page faulted in and zeroed by the kernel (for 100k
//! rows of a wide table, about as much client CPU as writing the rows). A new
//! [`Inserter`](crate::Inserter) or `insert_rows` takes buffers kept here
//! instead, emptied but with their capacity, as a kept-open inserter reuses its
//! own; an inserter gives its buffers back when it is dropped, `insert_rows`
//! when its INSERT is done. A client (and its clones) or a connection keeps its
//! own set.

use std::any::{Any, TypeId};
use std::sync::Mutex;

use chnative_proto::DataType;

/// How many bytes the kept buffers may have held at their fullest, together
/// (their capacity can be up to twice that); the oldest are let go first.
const MAX_KEPT_BYTES: usize = 128 << 20;

/// How many sets of buffers are kept (concurrent INSERTs of one row type each
/// give theirs back).
const MAX_KEPT: usize = 8;

/// Emptied column buffers of earlier typed INSERTs, by buffer type and column types.
#[derive(Default)]
pub(crate) struct KeptBuffers(Mutex<Vec<Kept>>);

struct Kept {
    id: TypeId,
    types: Vec<DataType>,
    /// The most bytes the buffers held (`RowWrite::bytes`).
    peak: usize,
    buffers: Box<dyn Any + Send>,
}

impl KeptBuffers {
    /// Buffers of type `B` kept for columns of `types` (empty, with their capacity).
    pub(crate) fn take<B: Any + Send>(&self, types: &[DataType]) -> Option<B> {
        let mut all = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let i = all.iter().rposition(|k| k.id == TypeId::of::<B>() && k.types == types)?;
        all.remove(i).buffers.downcast::<B>().ok().map(|b| *b)
    }

    /// Keeps `buffers`, already emptied, that held at most `peak` bytes.
    pub(crate) fn give<B: Any + Send>(&self, types: Vec<DataType>, buffers: B, peak: usize) {
        if peak > MAX_KEPT_BYTES {
            return;
        }
        let mut all = self.0.lock().unwrap_or_else(|e| e.into_inner());
        all.push(Kept { id: TypeId::of::<B>(), types, peak, buffers: Box::new(buffers) });
        while all.len() > MAX_KEPT || all.iter().map(|k| k.peak).sum::<usize>() > MAX_KEPT_BYTES {
            all.remove(0);
        }
    }
}

impl std::fmt::Debug for KeptBuffers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.0.lock().map_or(0, |all| all.len());
        write!(f, "KeptBuffers({n})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_come_back_for_the_same_type_and_columns_only() {
        let kept = KeptBuffers::default();
        let types = vec![DataType::UInt64];
        kept.give(types.clone(), Vec::<u64>::with_capacity(1000), 8000);
        assert!(kept.take::<Vec<u32>>(&types).is_none(), "another buffer type");
        assert!(kept.take::<Vec<u64>>(&[DataType::UInt32]).is_none(), "other column types");
        let back = kept.take::<Vec<u64>>(&types).expect("kept");
        assert!(back.capacity() >= 1000);
        assert!(kept.take::<Vec<u64>>(&types).is_none(), "taken once");
    }

    #[test]
    fn what_is_kept_is_bounded() {
        let kept = KeptBuffers::default();
        let types = vec![DataType::UInt64];
        kept.give(types.clone(), 1u8, MAX_KEPT_BYTES + 1);
        assert!(kept.take::<u8>(&types).is_none(), "too large to keep");
        for i in 0..MAX_KEPT as u64 + 3 {
            kept.give(types.clone(), i, 1);
        }
        assert_eq!(kept.0.lock().unwrap().len(), MAX_KEPT);
        // The newest comes back first; the oldest were let go.
        assert_eq!(kept.take::<u64>(&types), Some(MAX_KEPT as u64 + 2));
        kept.give(types.clone(), 0u64, MAX_KEPT_BYTES);
        assert_eq!(kept.0.lock().unwrap().len(), 1, "the byte budget lets the others go");
    }
}
