//! Inserting typed rows: transposed into column buffers, then sent with the
//! column-tier INSERT.

use chnative_proto::DataType;

use super::{field_mismatch, RowWrite};
use crate::error::{Error, Result};
use crate::{Client, InsertSummary};

/// Backquotes a column name for SQL.
pub(crate) fn quote_ident(name: &str) -> String {
    let mut s = String::with_capacity(name.len() + 2);
    s.push('`');
    for c in name.chars() {
        if c == '`' || c == '\\' {
            s.push('\\');
        }
        s.push(c);
    }
    s.push('`');
    s
}

/// Rows an [`Inserter`] buffers before sending, unless told otherwise.
pub const DEFAULT_MAX_ROWS: usize = 100_000;
/// Bytes an [`Inserter`] buffers before sending, unless told otherwise.
pub const DEFAULT_MAX_BYTES: usize = 64 << 20;

impl Client {
    /// The types of `columns` in `table`, from the header of an empty SELECT.
    pub(crate) async fn column_types(&self, table: &str, columns: &[&str]) -> Result<Vec<(String, DataType)>> {
        let list: Vec<String> = columns.iter().map(|c| quote_ident(c)).collect();
        let sql = format!("SELECT {} FROM {table} LIMIT 0", if list.is_empty() { "*".into() } else { list.join(", ") });
        let mut s = self.stream(sql).await?;
        while s.next().await?.is_some() {}
        let header = s.header().ok_or_else(|| Error::Usage(format!("the server sent no header for `{table}`")))?;
        Ok(header.columns().iter().map(|c| (c.name().to_string(), c.data_type().clone())).collect())
    }

    /// Checks `T`'s fields against `table`'s columns and returns the column types in
    /// field order (before any data is sent).
    async fn field_types<T: RowWrite>(&self, table: &str) -> Result<Vec<DataType>> {
        let names: Vec<&str> = T::FIELDS.iter().map(|f| f.column).collect();
        let cols = match self.column_types(table, &names).await {
            Ok(c) => c,
            // Name the missing column instead of relaying the server's message.
            Err(Error::Server(e)) if e.code == 47 => {
                let all = self.column_types(table, &[]).await?;
                if let Some(f) = T::FIELDS.iter().find(|f| !all.iter().any(|(n, _)| n == f.column)) {
                    return Err(Error::Usage(format!(
                        "table {table} has no column `{}` for field `{}` of {}",
                        f.column,
                        f.field,
                        T::NAME
                    )));
                }
                return Err(Error::Server(e));
            }
            Err(e) => return Err(e),
        };
        let mut types = Vec::with_capacity(T::FIELDS.len());
        for (f, (_, ty)) in T::FIELDS.iter().zip(&cols) {
            if !(f.writes)(ty) {
                return Err(field_mismatch::<T>(f, &ty.to_string(), None));
            }
            types.push(ty.clone());
        }
        Ok(types)
    }

    /// Inserts rows of a `#[derive(Row)]` struct. Every field's type is checked
    /// against the table before any data is sent; the rows are transposed into
    /// column buffers and sent like [`Client::insert`] columns.
    pub async fn insert_rows<T: RowWrite>(&self, table: &str, rows: &[T]) -> Result<InsertSummary> {
        let types = self.field_types::<T>(table).await?;
        let mut buffers = T::buffers(&types)?;
        for (i, row) in rows.iter().enumerate() {
            T::push(row, &mut buffers).map_err(|e| row_error(e, i))?;
        }
        send::<T>(self, table, &buffers).await
    }

    /// A long-lived writer of `T` rows into `table`: rows are buffered by column
    /// and sent as one INSERT every [`Inserter::max_rows`] rows (default
    /// 100,000) or [`Inserter::max_bytes`] bytes (default 64 MiB), whichever
    /// comes first, so memory stays bounded by one block.
    pub async fn inserter<T: RowWrite>(&self, table: &str) -> Result<Inserter<'_, T>> {
        let types = self.field_types::<T>(table).await?;
        let buffers = T::buffers(&types)?;
        Ok(Inserter {
            client: self,
            table: table.to_string(),
            buffers,
            rows: 0,
            max_rows: DEFAULT_MAX_ROWS,
            max_bytes: DEFAULT_MAX_BYTES,
            total: InsertSummary::default(),
        })
    }
}

fn row_error(e: Error, i: usize) -> Error {
    match e {
        Error::Usage(m) => Error::Usage(format!("row {i}: {m}")),
        e => e,
    }
}

async fn send<T: RowWrite>(client: &Client, table: &str, buffers: &T::Buffers) -> Result<InsertSummary> {
    let mut insert = client.insert(table);
    for (name, data) in T::columns(buffers) {
        insert = insert.column(name, data);
    }
    insert.send().await
}

/// Writes rows in blocks; see [`Client::inserter`]. Call [`Inserter::end`] to send
/// the last rows (dropping an inserter discards rows not yet sent).
pub struct Inserter<'c, T: RowWrite> {
    client: &'c Client,
    table: String,
    buffers: T::Buffers,
    rows: usize,
    max_rows: usize,
    max_bytes: usize,
    total: InsertSummary,
}

impl<T: RowWrite> Inserter<'_, T> {
    /// Sends an INSERT every `n` rows (at least 1).
    pub fn max_rows(mut self, n: usize) -> Self {
        self.max_rows = n.max(1);
        self
    }

    /// Sends an INSERT once the buffered rows hold `n` bytes (at least 1; about
    /// their size on the wire).
    pub fn max_bytes(mut self, n: usize) -> Self {
        self.max_bytes = n.max(1);
        self
    }

    /// Rows buffered and not yet sent.
    pub fn pending(&self) -> usize {
        self.rows
    }

    /// Adds a row; sends the buffered rows when there are `max_rows` of them or
    /// they hold `max_bytes`.
    /// A row that cannot be written is an error and is not kept (nothing of it is sent).
    pub async fn write(&mut self, row: &T) -> Result<()> {
        if let Err(e) = T::push(row, &mut self.buffers) {
            T::truncate(&mut self.buffers, self.rows);
            return Err(row_error(e, self.total.rows as usize + self.rows));
        }
        self.rows += 1;
        if self.rows >= self.max_rows || T::bytes(&self.buffers) >= self.max_bytes {
            self.flush().await?;
        }
        Ok(())
    }

    /// Sends the buffered rows now (no-op when there are none).
    pub async fn flush(&mut self) -> Result<()> {
        if self.rows == 0 {
            return Ok(());
        }
        let res = send::<T>(self.client, &self.table, &self.buffers).await;
        // Sent or failed, these rows are done with; the buffers keep their capacity.
        T::truncate(&mut self.buffers, 0);
        self.rows = 0;
        let s = res?;
        self.total.rows += s.rows;
        self.total.blocks += s.blocks;
        self.total.progress.accumulate(&s.progress);
        Ok(())
    }

    /// Sends the remaining rows and returns what all INSERTs did together.
    pub async fn end(mut self) -> Result<InsertSummary> {
        self.flush().await?;
        Ok(self.total)
    }
}
