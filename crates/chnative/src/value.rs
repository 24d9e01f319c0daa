//! Dynamic rows: [`Value`], one variant per ClickHouse value kind, and
//! [`ValueRow`], a row of them with the result's column names.
//!
//! For tools that do not know the schema at compile time (CLIs, admin tools,
//! migrations). Values are exact: Decimals and 128/256-bit integers keep every
//! digit, DateTimes keep their time zone, Maps keep their order, Strings keep
//! their bytes. `Display` renders a value the way the server's `toString` does.
//!
//! ```no_run
//! # async fn demo(client: &mut chnative::Client) -> chnative::Result<()> {
//! let mut rows = client.fetch_values("SELECT number AS n, toString(number) AS s FROM numbers(3)").await?;
//! while let Some(row) = rows.next().await? {
//!     println!("{} {}", row[0], row.get("s").unwrap());
//! }
//! # Ok(()) }
//! ```
//!
//! `Value`, `ValueRow` and their conversions live in the sans-IO crate
//! (`chnative_proto::value`) and are re-exported here; the stream is this crate's.

use std::collections::VecDeque;
use std::sync::Arc;

use chnative_proto::value::ColumnReader;
#[cfg(feature = "serde_json")]
pub use chnative_proto::value::JsonValueReader;
pub use chnative_proto::value::{to_string, Value, ValueReader, ValueRow};

use crate::error::Result;
use crate::QueryStream;

/// A SELECT read as [`ValueRow`]s. Each block is decoded into rows once it arrives.
pub struct ValueRowStream<'c> {
    inner: QueryStream<'c>,
    server_tz: Arc<str>,
    names: Option<Arc<[String]>>,
    rows: VecDeque<ValueRow>,
    /// The current block's next row to convert, and its rows.
    next_row: usize,
    block_rows: usize,
}

/// Rows converted at a time: enough to pay for resolving the column readers, few
/// enough that their values are still in cache when the caller takes them (a whole
/// block of 100-column rows is hundreds of MB of `Value`s).
const ROWS_PER_BATCH: usize = 256;

impl<'c> ValueRowStream<'c> {
    pub(crate) fn new(inner: QueryStream<'c>, server_tz: Arc<str>) -> Self {
        ValueRowStream { inner, server_tz, names: None, rows: VecDeque::new(), next_row: 0, block_rows: 0 }
    }

    /// The next row, or `None` at the end.
    pub async fn next(&mut self) -> Result<Option<ValueRow>> {
        loop {
            if let Some(r) = self.rows.pop_front() {
                return Ok(Some(r));
            }
            if self.next_row < self.block_rows {
                self.convert_batch()?;
                continue;
            }
            let Some(block) = self.inner.next().await? else { return Ok(None) };
            let same = self.names.as_ref().is_some_and(|n| {
                n.len() == block.columns().len() && n.iter().zip(block.columns()).all(|(a, c)| a == c.name())
            });
            if !same {
                self.names = Some(block.columns().iter().map(|c| c.name().to_string()).collect());
            }
            (self.next_row, self.block_rows) = (0, block.rows());
        }
    }

    /// Converts the current block's next rows (up to [`ROWS_PER_BATCH`]).
    fn convert_batch(&mut self) -> Result<()> {
        let block = self.inner.current();
        let names = self.names.clone().unwrap_or_else(|| Arc::from(Vec::new()));
        let readers = block
            .columns()
            .iter()
            .map(|c| ColumnReader::new(&c.view(), &self.server_tz))
            .collect::<Result<Vec<_>, _>>()?;
        let end = (self.next_row + ROWS_PER_BATCH).min(self.block_rows);
        // Column by column: each column is read in order (a row at a time would walk
        // all the columns at once, which the CPU's prefetchers do not follow). All
        // or nothing: a value that fails to convert leaves no rows of its batch behind.
        let mut batch: Vec<Vec<Value>> = (self.next_row..end).map(|_| Vec::with_capacity(readers.len())).collect();
        for r in &readers {
            for (values, i) in batch.iter_mut().zip(self.next_row..end) {
                values.push(r.get(i)?);
            }
        }
        // One value per name in every row: `readers` and `names` are the block's columns.
        self.rows.extend(batch.into_iter().map(|values| ValueRow::from_parts(names.clone(), values)));
        self.next_row = end;
        Ok(())
    }

    /// The column names (once the first block arrived).
    pub fn names(&self) -> Option<&[String]> {
        self.names.as_deref()
    }

    /// The underlying block stream.
    pub fn blocks(&self) -> &QueryStream<'c> {
        &self.inner
    }
}
