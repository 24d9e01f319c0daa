//! Per-query observers: the side information a query produces while it runs.

use std::sync::Arc;

use chnative_proto::packet::{ProfileInfo, Progress};
use chnative_proto::Block;

/// Watches one query or insert as it runs. Every method has an empty default,
/// so an observer implements only what it needs. Calls come from the task that
/// drives the query, between blocks: keep them short.
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use chnative::{Observer, Progress, Query};
///
/// #[derive(Default)]
/// struct RowsRead(AtomicU64);
/// impl Observer for RowsRead {
///     fn progress(&self, _increment: &Progress, total: &Progress) {
///         self.0.store(total.read_rows, Ordering::Relaxed);
///     }
/// }
/// let q = Query::new("SELECT count() FROM numbers(1000000)").observer(RowsRead::default());
/// ```
pub trait Observer: Send + Sync {
    /// A Progress packet: the increment it carried and the running totals.
    fn progress(&self, _increment: &Progress, _total: &Progress) {}
    /// The final ProfileInfo (rows, blocks, bytes, rows before LIMIT).
    fn profile_info(&self, _info: &ProfileInfo) {}
    /// A ProfileEvents block (counters since the previous one).
    fn profile_events(&self, _block: &Block) {}
    /// A block of server log lines (with `send_logs_level`).
    fn log(&self, _block: &Block) {}
    /// The WITH TOTALS row.
    fn totals(&self, _block: &Block) {}
    /// The extremes (with `extremes = 1`).
    fn extremes(&self, _block: &Block) {}
}

/// An optional observer that a `Query` (which is `Debug` and `Clone`) can hold.
#[derive(Clone, Default)]
pub(crate) struct ObserverSlot(pub(crate) Option<Arc<dyn Observer>>);

impl std::fmt::Debug for ObserverSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "Some(Observer)" } else { "None" })
    }
}

/// `trace_context` and `observer`, the same on [`crate::Query`] and
/// [`crate::Insert`] (structs with `trace` and `observer` fields); `$watched`
/// says what the observer sees.
macro_rules! trace_and_observer {
    ($watched:literal) => {
        /// Continues this W3C trace on the server (sent in ClientInfo).
        pub fn trace_context(mut self, trace: crate::trace::TraceContext) -> Self {
            self.trace = Some(trace);
            self
        }

        #[doc = concat!("Watches ", $watched, " as it runs.")]
        pub fn observer(mut self, observer: impl crate::observe::Observer + 'static) -> Self {
            self.observer = crate::observe::ObserverSlot(Some(std::sync::Arc::new(observer)));
            self
        }
    };
}
pub(crate) use trace_and_observer;
