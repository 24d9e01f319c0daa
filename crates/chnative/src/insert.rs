//! The column tier's write side: INSERT from borrowed columns.
//!
//! Columns are checked against the server's header block before any data is
//! sent; the data, its type rules and its encoding are
//! [`chnative_proto::insert`]'s.

use chnative_proto::insert::InsertColumns;
pub use chnative_proto::insert::{fixed, InsertData, IntoInsertData, StartOffsets};
use chnative_proto::Block;

pub use crate::block_insert::BlockInsert;
use crate::conn::{new_query_id, Conn, QueryId, QueryWire};
use crate::error::{Error, Result};
use crate::ident::{check_setting_name, quote_table};
pub use crate::insert_send::InsertSummary;
use crate::insert_send::{
    check_against_header, end_insert, insert_sql, refuse_insert, send_rows, start_insert, InsertBlocks,
};
use crate::pool::{Home, Target};

/// An INSERT being assembled: `client.insert("t").column("a", &a[..]).send().await`.
pub struct Insert<'c, 'a> {
    conn: Target<'c>,
    table: String,
    columns: Vec<(String, InsertData<'a>)>,
    settings: Vec<(String, String, u64)>,
    allow_missing: bool,
    error: Option<Error>,
    trace: Option<crate::trace::TraceContext>,
    observer: crate::observe::ObserverSlot,
    id: Option<String>,
}

impl<'c, 'a> Insert<'c, 'a> {
    pub(crate) fn new(conn: Target<'c>, table: &str) -> Self {
        Insert {
            conn,
            table: table.to_string(),
            columns: Vec::new(),
            settings: Vec::new(),
            allow_missing: false,
            error: None,
            trace: crate::trace::TraceContext::ambient(),
            observer: Default::default(),
            id: None,
        }
    }

    /// Adds a column by name.
    pub fn column(mut self, name: &str, data: impl IntoInsertData<'a>) -> Self {
        if self.columns.iter().any(|(n, _)| n == name) {
            self.error.get_or_insert(Error::invalid_input(format!("column `{name}` given twice")));
        }
        self.columns.push((name.to_string(), data.into_insert_data()));
        self
    }

    /// Adds every column of a block (e.g. one read from a SELECT), unchanged.
    pub fn block(mut self, block: &'a Block) -> Self {
        for c in block.columns() {
            self = self.column(c.name(), c);
        }
        self
    }

    /// A server setting for this INSERT only.
    pub fn setting(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        let name = name.into();
        if let Err(e) = check_setting_name(&name) {
            self.error.get_or_insert(e);
        }
        self.settings.push((name, value.into(), chnative_proto::packet::SETTING_IMPORTANT));
        self
    }

    /// Sets `insert_deduplication_token`: a retried INSERT with the same token is
    /// stored once (on tables that deduplicate).
    ///
    /// The server keys deduplication on the token *and* the sequence of Data
    /// packets, so a retry must send the same rows split the same way (same
    /// [`crate::Config::insert_block_rows`]).
    pub fn deduplication_token(self, token: impl Into<String>) -> Self {
        self.setting("insert_deduplication_token", token)
    }

    /// Continues this W3C trace on the server (sent in ClientInfo).
    pub fn trace_context(mut self, trace: crate::trace::TraceContext) -> Self {
        self.trace = Some(trace);
        self
    }

    /// Watches the INSERT's progress and profile events as it runs.
    pub fn observer(mut self, observer: impl crate::observe::Observer + 'static) -> Self {
        self.observer = crate::observe::ObserverSlot(Some(std::sync::Arc::new(observer)));
        self
    }

    /// Lets table columns without a DEFAULT expression be left out (they get
    /// their type's default value). Without this, leaving one out is an error.
    pub fn allow_missing_columns(mut self) -> Self {
        self.allow_missing = true;
        self
    }

    /// Uses this query id instead of a generated one (visible in
    /// `system.processes` while the INSERT runs, and in the server's logs).
    pub fn query_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// Sends the data and waits for the server to confirm.
    pub async fn send(self) -> Result<InsertSummary> {
        let id = self.id.clone().map_or_else(new_query_id, QueryId::Given);
        let mut span = crate::trace::OpSpan::insert(&id);
        let res = tracing::Instrument::instrument(self.send_as(id), span.span().clone()).await;
        match &res {
            Ok(s) => span.finish(Some(s.rows), s.progress.written_bytes, "ok"),
            Err(_) => span.finish(None, 0, "error"),
        }
        res
    }

    /// Opens an INSERT that takes any number of blocks, all sent in one INSERT
    /// statement: see [`BlockInsert`]. The settings, query id, trace context,
    /// observer and [`Insert::allow_missing_columns`] given here apply; the
    /// columns come from the blocks written, so none may be given with
    /// [`Insert::column`] or [`Insert::block`].
    ///
    /// A pooled client's connection is taken now and held until the
    /// `BlockInsert` is ended or dropped.
    pub async fn open(self) -> Result<BlockInsert<'c>> {
        let Insert { conn, table, columns, settings, allow_missing, error, trace, observer, id } = self;
        if let Some(e) = error {
            return Err(e);
        }
        if !columns.is_empty() {
            return Err(Error::invalid_input(
                "an opened INSERT takes its columns from the blocks written to it; give no column() or block() before open()"
                    ,
            ));
        }
        let quoted = quote_table(&table)?;
        let home = match conn {
            Target::Slot(s) => Home::Slot(s),
            Target::Pool(pool) => Home::Lease(pool.acquire().await?, std::marker::PhantomData),
        };
        let q = QueryWire {
            id: id.map_or_else(new_query_id, QueryId::Given),
            sql: String::new(),
            settings: sync_by_default(settings),
            params: Vec::new(),
            trace: trace.map(|t| t.0),
        };
        Ok(BlockInsert::new(home, table, quoted, q, allow_missing, observer))
    }

    /// Inserts every block of `stream` (a SELECT, perhaps on another server)
    /// in one INSERT, and returns what it did: [`Insert::open`], then
    /// [`BlockInsert::write`] for each block and [`BlockInsert::end`].
    ///
    /// If the stream fails, or a block does not fit the table, the INSERT is
    /// aborted as [`BlockInsert`] describes and the error returned.
    ///
    /// The stream and the INSERT each hold a connection: with one [`Client`](crate::Client)
    /// for both, its pool must allow two ([`Config::pool_max_size`](crate::Config::pool_max_size)).
    ///
    /// ```no_run
    /// # async fn demo(source: chnative::Client, target: chnative::Client) -> chnative::Result<()> {
    /// let mut stream = source.fetch_blocks("SELECT number AS id, toString(number) AS name FROM numbers(1000000)").await?;
    /// let summary = target.insert("copy").from_stream(&mut stream).await?;
    /// assert_eq!(summary.rows, 1_000_000);
    /// # Ok(()) }
    /// ```
    pub async fn from_stream(self, stream: &mut crate::QueryStream<'_>) -> Result<InsertSummary> {
        let mut ins = self.open().await?;
        loop {
            match stream.next().await {
                Ok(Some(block)) => ins.write(block).await?,
                Ok(None) => return ins.end().await,
                Err(e) => {
                    ins.abort();
                    return Err(e);
                }
            }
        }
    }

    async fn send_as(self, id: QueryId) -> Result<InsertSummary> {
        let Insert { conn: slot, table, columns, settings, allow_missing, error, trace, observer, id: _ } = self;
        if let Some(e) = error {
            return Err(e);
        }
        if columns.is_empty() {
            return Err(Error::invalid_input("an INSERT needs at least one column"));
        }
        let checked = InsertColumns::new(&columns)?;
        let rows = checked.rows();
        let q = QueryWire {
            id,
            sql: insert_sql(&quote_table(&table)?, columns.iter().map(|(n, _)| n.as_str())),
            settings: sync_by_default(settings),
            params: Vec::new(),
            trace: trace.map(|t| t.0),
        };
        // A pooled connection is held until `send` ends; dropped halfway, the
        // lease finishes or closes it (see pool.rs).
        let mut lease;
        let slot = match slot {
            Target::Slot(s) => s,
            Target::Pool(pool) => {
                lease = pool.acquire().await?;
                &mut lease.slot
            }
        };
        let conn: &mut Conn = slot.get().await?;
        let mut sink = InsertBlocks::observed(observer);
        start_insert(conn, &q, &mut sink).await?;

        let typed = match check_against_header(checked, &sink, allow_missing, Vec::new()) {
            Ok(t) => t,
            Err(e) => {
                refuse_insert(conn, &mut sink).await?;
                conn.keep_insert_flow(&mut sink.flow);
                return Err(e);
            }
        };
        let blocks = send_rows(conn, &typed, &mut sink, &mut Default::default()).await?;
        let progress = end_insert(conn, &mut sink).await?;
        conn.keep_insert_flow(&mut sink.flow);
        let compression = conn.compression_used();
        tracing::Span::current().record("compression", tracing::field::display(compression));
        Ok(InsertSummary { rows: rows as u64, blocks, progress, compression })
    }
}

/// The settings with `async_insert = 0` added unless the caller set it.
fn sync_by_default(mut settings: Vec<(String, String, u64)>) -> Vec<(String, String, u64)> {
    if !settings.iter().any(|(k, _, _)| k == "async_insert") {
        // Synchronous by default so that a returned INSERT is stored and
        // deduplication tokens apply as documented.
        settings.push(("async_insert".into(), "0".into(), 0));
    }
    settings
}
