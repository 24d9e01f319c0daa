//! Inserting typed (and dynamic) rows: transposed into column buffers, then
//! sent with the column-tier INSERT.

use std::ops::Range;
use std::time::{Duration, Instant};

use chnative_proto::insert::InsertData;
use chnative_proto::value::{clear_value_rows, push_value_rows, ValueColumnBuffer};
use chnative_proto::DataType;

use super::RowWrite;
use crate::error::{Error, Repr, Result};
use crate::insert::InsertOptions;
use crate::insert_send::InsertSummary;
use crate::via::Via;

/// Rows an [`Inserter`] buffers before sending, unless told otherwise.
pub const DEFAULT_MAX_ROWS: usize = 100_000;
/// Bytes an [`Inserter`] buffers before sending, unless told otherwise.
pub const DEFAULT_MAX_BYTES: usize = 64 << 20;

pub(crate) fn row_error(e: impl Into<Error>, i: usize) -> Error {
    let mut e = e.into();
    if let Repr::InvalidInput(m) = e.repr_mut() {
        *m = format!("row {i}: {m}");
    }
    e
}

async fn send<T: RowWrite>(
    via: Via<'_>,
    table: &str,
    buffers: &T::Buffers,
    options: &InsertOptions,
    nth: u64,
) -> Result<InsertSummary> {
    let mut insert = via.insert(table);
    for (name, data) in T::columns(buffers) {
        insert = insert.column(name, data);
    }
    options.apply(insert, Some(nth)).send().await
}

/// About how many bytes of rows [`send_rows`] transposes before it sends them
/// as one block. Measured on 100k hits rows (105 columns, 108 MB of column
/// data; benches/peers `--only d`, chunk sizes from 64 KiB to all rows): 4 MiB
/// took 0.80× the client CPU and 0.79× the wall time of one transposition of
/// every row (whose buffers go out to memory and are read back to be sent).
/// 256 KiB took as little CPU but 1.6× the wall time: more blocks cost the server.
pub(crate) const ROW_CHUNK_BYTES: usize = 4 << 20;

/// Rows transposed before the chunk's size is first measured.
const FIRST_CHUNK_ROWS: usize = 64;

/// Column buffers that a slice of rows is written into a range at a time.
pub(crate) trait RowChunks {
    /// Appends the rows of `range` to the buffers; an error names the row.
    fn push(&mut self, range: Range<usize>) -> Result<()>;
    /// About how many bytes the buffers hold.
    fn bytes(&self) -> usize;
    /// The buffers' columns, to send.
    fn columns(&self) -> Vec<(&str, InsertData<'_>)>;
    /// Empties the buffers.
    fn clear(&mut self);
}

/// Typed rows and the buffers of their row type.
pub(crate) struct TypedChunks<'a, T: RowWrite> {
    pub(crate) rows: &'a [T],
    pub(crate) buffers: &'a mut T::Buffers,
}

impl<T: RowWrite> RowChunks for TypedChunks<'_, T> {
    fn push(&mut self, range: Range<usize>) -> Result<()> {
        let start = range.start;
        for (i, row) in self.rows[range].iter().enumerate() {
            T::push(row, self.buffers).map_err(|e| row_error(e, start + i))?;
        }
        Ok(())
    }
    fn bytes(&self) -> usize {
        T::bytes(self.buffers)
    }
    fn columns(&self) -> Vec<(&str, InsertData<'_>)> {
        T::columns(self.buffers)
    }
    fn clear(&mut self) {
        T::truncate(self.buffers, 0);
    }
}

/// Dynamic rows and a buffer per column of `types`.
pub(crate) struct ValueChunks<'a> {
    pub(crate) types: &'a [(String, DataType)],
    pub(crate) rows: &'a [crate::ValueRow],
    pub(crate) buffers: Vec<ValueColumnBuffer>,
}

impl RowChunks for ValueChunks<'_> {
    fn push(&mut self, range: Range<usize>) -> Result<()> {
        Ok(push_value_rows(&mut self.buffers, self.types, self.rows, range)?)
    }
    fn bytes(&self) -> usize {
        self.buffers.iter().map(ValueColumnBuffer::bytes).sum()
    }
    fn columns(&self) -> Vec<(&str, InsertData<'_>)> {
        self.types.iter().zip(&self.buffers).map(|((name, _), b)| (name.as_str(), b.data())).collect()
    }
    fn clear(&mut self) {
        clear_value_rows(&mut self.buffers);
    }
}

/// The rows of `InsertRows` or `InsertValues` (`rows` of them, in `chunks`):
/// written a chunk of about [`ROW_CHUNK_BYTES`] at a time and sent as blocks
/// of one INSERT. Rows that fit in one chunk go as one plain INSERT (nothing is
/// sent before every row was written). With more, a row that cannot be written
/// aborts the INSERT (its connection is closed, so the server discards what it
/// has not written as parts: nothing, below `min_insert_block_size_rows`).
/// Returns the most bytes the buffers held in `peak`.
pub(crate) async fn send_rows(
    via: Via<'_>,
    table: &str,
    rows: usize,
    chunks: &mut impl RowChunks,
    options: &InsertOptions,
    peak: &mut usize,
) -> Result<InsertSummary> {
    let mut written = rows.min(FIRST_CHUNK_ROWS);
    chunks.push(0..written)?;
    let mut in_chunk = written;
    let mut chunk_rows = chunk_rows_after(chunks.bytes(), in_chunk);
    if written < rows && chunk_rows >= rows {
        // The rest fits in the same chunk: write it all, send one INSERT.
        chunks.push(written..rows)?;
        written = rows;
    }
    if written == rows {
        *peak = (*peak).max(chunks.bytes());
        let mut insert = via.insert(table);
        for (name, data) in chunks.columns() {
            insert = insert.column(name, data);
        }
        return options.apply(insert, None).send().await;
    }
    let mut open = options.apply(via.insert(table), None).open().await?;
    loop {
        if written < rows && in_chunk < chunk_rows {
            let end = rows.min(written + (chunk_rows - in_chunk));
            if let Err(e) = chunks.push(written..end) {
                open.abort();
                return Err(e);
            }
            in_chunk += end - written;
            written = end;
        }
        let bytes = chunks.bytes();
        *peak = (*peak).max(bytes);
        chunk_rows = chunk_rows_after(bytes, in_chunk);
        // A failed write has ended the INSERT (or aborts it when `open` is dropped).
        open.write_columns(&chunks.columns()).await?;
        chunks.clear();
        in_chunk = 0;
        if written == rows {
            return open.end().await;
        }
    }
}

/// Rows per chunk at the average row size of `rows` rows that took `bytes`.
fn chunk_rows_after(bytes: usize, rows: usize) -> usize {
    let per_row = (bytes / rows.max(1)).max(1);
    (ROW_CHUNK_BYTES / per_row).max(FIRST_CHUNK_ROWS)
}

/// Writes rows in blocks; see [`Executor::inserter`](crate::Executor::inserter).
///
/// A pooled [`Client`](crate::Client)'s inserter (`Inserter<'static, T>`) owns
/// what it needs: it can move into a spawned task and outlive the client.
///
/// Each flush sends the buffered rows as one INSERT. A flush happens when
/// [`Inserter::write`] finds a limit reached ([`Inserter::max_rows`],
/// [`Inserter::max_bytes`], or rows older than [`Inserter::period`]), when
/// [`Inserter::commit`] finds one reached, and on [`Inserter::flush`] and
/// [`Inserter::end`].
///
/// **End it.** Rows still buffered when the inserter is dropped are lost:
/// call [`Inserter::end`] (which sends them and returns what all the INSERTs
/// did) before dropping it, including on early-return paths. Dropping an
/// inserter that holds rows logs a `tracing` warning with their number.
///
/// **A failed flush** returns its error and discards the rows it tried to send
/// (they may or may not have been stored, as with any INSERT whose answer was
/// lost); the inserter stays usable.
///
/// ```no_run
/// # #[derive(chnative::Row)] struct Event { id: u64 }
/// # async fn demo(client: chnative::Client, mut rx: tokio::sync::mpsc::Receiver<Event>) -> chnative::Result<()> {
/// use std::time::Duration;
/// let mut ins = client
///     .inserter::<Event>("events")
///     .await?
///     .max_rows(50_000)
///     .period(Duration::from_secs(5))
///     .setting("insert_quorum", "auto")
///     .query_id("events-loader");
/// loop {
///     // Rows wait at most 5 s even when none arrive: commit() when they are due.
///     let due = ins.time_left().unwrap_or(Duration::from_secs(3600));
///     tokio::select! {
///         event = rx.recv() => match event {
///             Some(e) => ins.write(&e).await?,
///             None => break,
///         },
///         _ = tokio::time::sleep(due) => {
///             ins.commit().await?;
///         }
///     }
/// }
/// ins.end().await?;
/// # Ok(()) }
/// ```
pub struct Inserter<'c, T: RowWrite> {
    via: Via<'c>,
    table: String,
    /// The table's types of the fields' columns (what `buffers` were made for).
    types: Vec<DataType>,
    buffers: T::Buffers,
    /// The most bytes `buffers` held (at a flush), for `KeptBuffers`.
    peak: usize,
    rows: usize,
    max_rows: usize,
    max_bytes: usize,
    period: Option<Duration>,
    /// When the oldest buffered row was written.
    oldest: Option<Instant>,
    options: InsertOptions,
    /// Rows to write before the buffered bytes are summed again (see `due`).
    bytes_check_in: usize,
    /// INSERTs sent so far (numbers the query ids and tokens).
    inserts: u64,
    total: InsertSummary,
}

impl<'c, T: RowWrite> Inserter<'c, T> {
    pub(crate) fn new(via: Via<'c>, table: String, types: Vec<DataType>, buffers: T::Buffers) -> Self {
        Inserter {
            via,
            table,
            types,
            buffers,
            peak: 0,
            rows: 0,
            max_rows: DEFAULT_MAX_ROWS,
            max_bytes: DEFAULT_MAX_BYTES,
            period: None,
            oldest: None,
            options: InsertOptions::default(),
            bytes_check_in: 0,
            inserts: 0,
            total: InsertSummary::default(),
        }
    }

    /// Sends an INSERT every `n` rows (at least 1).
    pub fn max_rows(mut self, n: usize) -> Self {
        self.max_rows = n.max(1);
        self
    }

    /// Sends an INSERT once the buffered rows hold `n` bytes (at least 1; about
    /// their size on the wire). While they hold less than half of `n`, the sum
    /// is taken every few rows (as many as would fill half of the rest at the
    /// average row size so far, at most 64), after every row above that.
    pub fn max_bytes(mut self, n: usize) -> Self {
        self.max_bytes = n.max(1);
        self
    }

    /// Sends the buffered rows once the oldest of them has waited `period`.
    ///
    /// The inserter has no timer of its own: the age is checked by
    /// [`Inserter::write`] (after adding its row) and by
    /// [`Inserter::commit`]. A service whose rows may stop arriving calls
    /// `commit()` when [`Inserter::time_left`] has passed (see the example on
    /// [`Inserter`]), or on a `tokio::time::interval`.
    ///
    /// (The official `clickhouse` crate's `with_period` differs: its periods
    /// are ticks of the clock, checked only by its `commit()`, and its rows are
    /// streamed into an INSERT that stays open between commits. Here rows wait
    /// in memory, and the period counts from the oldest of them, so no row
    /// waits longer than `period` as long as writes or commits come.)
    pub fn period(mut self, period: Duration) -> Self {
        self.period = Some(period);
        self
    }

    crate::insert::insert_options! {
        setting:
        /// A server setting for every INSERT this inserter sends (as
        /// [`Insert::setting`](crate::Insert::setting)). A name that is not an
        /// identifier is refused by the next call.
        query_id:
        /// Names this inserter's INSERTs: the `n`th one it sends (from 1) has the
        /// query id `<id>-<n>` (visible in `system.processes` while it runs and in
        /// the server's logs). Without this, each INSERT gets a generated id.
        deduplication_token:
        /// Sets `insert_deduplication_token` on every INSERT: the `n`th one sent
        /// (from 1) carries `<token>-<n>`, so a run that is repeated with the same
        /// rows, the same token and the same flush points (rows and bytes limits,
        /// no [`Inserter::period`], whose flush points depend on timing) stores each
        /// INSERT once, on a table that deduplicates (Replicated*MergeTree, or
        /// MergeTree with `non_replicated_deduplication_window`).
        ///
        /// The client sends `async_insert = 0` unless a setting says otherwise.
        /// With `async_insert = 1`, the server deduplicates only if
        /// `deduplicate_insert = 'enable'` (the 26.9 default) or, on servers before
        /// that setting, `async_insert_deduplicate = 1`.
    }

    /// Rows buffered and not yet sent.
    pub fn pending(&self) -> usize {
        self.rows
    }

    /// How long until the buffered rows are due under [`Inserter::period`]
    /// (zero once they are); `None` without a period or without rows.
    pub fn time_left(&self) -> Option<Duration> {
        let (period, oldest) = (self.period?, self.oldest?);
        Some(period.saturating_sub(oldest.elapsed()))
    }

    /// Whether a limit says the buffered rows must go now.
    fn due(&self) -> bool {
        self.rows > 0
            && (self.rows >= self.max_rows
                || T::bytes(&self.buffers) >= self.max_bytes
                || self.time_left().is_some_and(|t| t.is_zero()))
    }

    /// [`Inserter::due`] after a write. Summing the buffered bytes visits every
    /// column's buffer, so while they are well under `max_bytes` (less than
    /// half) it is done again only after as many rows as would, at the average
    /// row size so far, fill half of what is left (at most 64 rows); near the
    /// limit, after every row.
    fn due_after_write(&mut self) -> bool {
        if self.rows >= self.max_rows || self.time_left().is_some_and(|t| t.is_zero()) {
            return true;
        }
        if self.bytes_check_in > 0 {
            self.bytes_check_in -= 1;
            return false;
        }
        let bytes = T::bytes(&self.buffers);
        if bytes >= self.max_bytes {
            return true;
        }
        let per_row = (bytes / self.rows.max(1)).max(1);
        let half_left = (self.max_bytes - bytes) / 2;
        self.bytes_check_in = if bytes < self.max_bytes / 2 { (half_left / per_row).min(64) } else { 0 };
        false
    }

    fn check_options(&self) -> Result<()> {
        self.options.check()
    }

    /// Adds a row; sends the buffered rows when there are `max_rows` of them,
    /// they hold `max_bytes`, or the oldest has waited the [`Inserter::period`].
    /// A row that cannot be written is an error and is not kept (nothing of it is sent).
    pub async fn write(&mut self, row: &T) -> Result<()> {
        self.check_options()?;
        if let Err(e) = T::push(row, &mut self.buffers) {
            T::truncate(&mut self.buffers, self.rows);
            return Err(row_error(e, self.total.rows as usize + self.rows));
        }
        self.rows += 1;
        if self.oldest.is_none() && self.period.is_some() {
            self.oldest = Some(Instant::now());
        }
        if self.due_after_write() {
            self.flush().await?;
        }
        Ok(())
    }

    /// Sends the buffered rows if a limit says they are due (rows, bytes, or
    /// their age under [`Inserter::period`]); returns whether it sent them.
    /// Call it when [`Inserter::time_left`] has passed, or periodically.
    #[doc(alias = "tick")]
    pub async fn commit(&mut self) -> Result<bool> {
        self.check_options()?;
        if !self.due() {
            return Ok(false);
        }
        self.flush().await?;
        Ok(true)
    }

    /// Sends the buffered rows now (no-op when there are none).
    pub async fn flush(&mut self) -> Result<()> {
        self.check_options()?;
        if self.rows == 0 {
            return Ok(());
        }
        let n = self.inserts + 1;
        let res = send::<T>(self.via.reborrow(), &self.table, &self.buffers, &self.options, n).await;
        // Sent or failed, these rows are done with; the buffers keep their capacity.
        self.peak = self.peak.max(T::bytes(&self.buffers));
        T::truncate(&mut self.buffers, 0);
        self.rows = 0;
        self.bytes_check_in = 0;
        self.oldest = None;
        self.inserts = n;
        let s = res?;
        self.total.rows += s.rows;
        self.total.blocks += s.blocks;
        self.total.progress.accumulate(&s.progress);
        self.total.compression = s.compression;
        Ok(())
    }

    /// Sends the remaining rows and returns what all INSERTs did together.
    pub async fn end(mut self) -> Result<InsertSummary> {
        self.flush().await?;
        Ok(self.total)
    }
}

impl<T: RowWrite> Drop for Inserter<'_, T> {
    fn drop(&mut self) {
        if self.rows > 0 {
            tracing::warn!(
                table = %self.table,
                rows = self.rows,
                "an Inserter was dropped holding {} rows that were never sent: they are lost \
                 (call end() to send them before dropping it)",
                self.rows
            );
        }
        // The buffers go back, emptied, for the next typed INSERT of `T` (the
        // placeholder left here holds no capacity).
        if let Ok(empty) = T::buffers(&self.types) {
            let peak = self.peak.max(T::bytes(&self.buffers));
            let mut buffers = std::mem::replace(&mut self.buffers, empty);
            T::truncate(&mut buffers, 0);
            self.via.kept_buffers().give(std::mem::take(&mut self.types), buffers, peak);
        }
    }
}
