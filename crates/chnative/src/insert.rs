//! The column tier's write side: INSERT from borrowed columns.
//!
//! Columns are checked against the server's header block before any data is
//! sent; the data, its type rules and its encoding are
//! [`chnative_proto::insert`]'s.

use chnative_proto::insert::InsertColumns;
pub use chnative_proto::insert::{fixed, InsertData, IntoInsertData, StartOffsets};
use chnative_proto::row::{ColumnBuffer, RowError, ToColumn};
use chnative_proto::Block;
use chnative_proto::DataType;

pub use crate::block_insert::BlockInsert;
use crate::driver::{new_query_id, Driver, QueryId, QueryWire};
use crate::error::{Error, Result};
use crate::ident::{check_setting_name, quote_table};
pub use crate::insert_send::InsertSummary;
use crate::insert_send::{
    check_against_header, end_insert, insert_sql, refuse_insert, send_rows, start_insert, InsertBlocks,
};
use crate::via::Via;

/// A column given as Rust values ([`Insert::values`]): made into a column
/// buffer once the table's header gives the column's type.
type ValuesColumn<'a> = Box<dyn FnOnce(&DataType) -> Result<Box<dyn ColumnBuffer + 'a>> + Send + 'a>;

/// What a row INSERT ([`crate::InsertRows`], [`crate::InsertValues`],
/// [`crate::Inserter`]) sends besides its rows.
#[derive(Default)]
pub(crate) struct InsertOptions {
    settings: Vec<(String, String)>,
    query_id: Option<String>,
    token: Option<String>,
    /// The first setting name refused when it was given.
    bad: Option<String>,
}

impl InsertOptions {
    pub(crate) fn setting(&mut self, name: String, value: String) {
        if let Some(why) = crate::ident::setting_name_problem(&name) {
            self.bad.get_or_insert(why);
        }
        self.settings.push((name, value));
    }

    pub(crate) fn set_query_id(&mut self, id: String) {
        self.query_id = Some(id);
    }

    pub(crate) fn set_token(&mut self, token: String) {
        self.token = Some(token);
    }

    /// A setting name that was refused, as the error of the call after it.
    pub(crate) fn check(&self) -> Result<()> {
        match &self.bad {
            Some(why) => Err(Error::invalid_input(why.clone())),
            None => Ok(()),
        }
    }

    /// Puts the options on `insert`. An inserter's `nth` INSERT (from 1) gets
    /// `-<nth>` after its query id and token, so each is told apart.
    pub(crate) fn apply<'c, 'a>(&self, mut insert: Insert<'c, 'a>, nth: Option<u64>) -> Insert<'c, 'a> {
        for (k, v) in &self.settings {
            insert = insert.setting(k.as_str(), v.as_str());
        }
        let numbered = |s: &str| match nth {
            Some(n) => format!("{s}-{n}"),
            None => s.to_string(),
        };
        if let Some(id) = &self.query_id {
            insert = insert.query_id(numbered(id));
        }
        if let Some(token) = &self.token {
            insert = insert.deduplication_token(numbered(token));
        }
        insert
    }
}

/// The builder methods of [`InsertOptions`] on a row INSERT (a struct with an
/// `options` field), each with its own documentation.
macro_rules! insert_options {
    (
        setting: $(#[$setting:meta])*
        query_id: $(#[$query_id:meta])*
        deduplication_token: $(#[$token:meta])*
    ) => {
        $(#[$setting])*
        pub fn setting(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
            self.options.setting(name.into(), value.into());
            self
        }

        $(#[$query_id])*
        pub fn query_id(mut self, id: impl Into<String>) -> Self {
            self.options.set_query_id(id.into());
            self
        }

        $(#[$token])*
        pub fn deduplication_token(mut self, token: impl Into<String>) -> Self {
            self.options.set_token(token.into());
            self
        }
    };
}
pub(crate) use insert_options;

/// An INSERT being assembled: `client.insert("t").column("a", &a[..]).send().await`.
pub struct Insert<'c, 'a> {
    conn: Via<'c>,
    table: String,
    columns: Vec<(String, InsertData<'a>)>,
    /// Columns of Rust values, after `columns` in the statement.
    values: Vec<(String, ValuesColumn<'a>)>,
    settings: Vec<(String, String, u64)>,
    allow_missing: bool,
    error: Option<Error>,
    trace: Option<crate::trace::TraceContext>,
    observer: crate::observe::ObserverSlot,
    id: Option<String>,
}

impl<'c, 'a> Insert<'c, 'a> {
    pub(crate) fn new(conn: Via<'c>, table: &str) -> Self {
        Insert {
            conn,
            table: table.to_string(),
            columns: Vec::new(),
            values: Vec::new(),
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

    /// Adds a column of Rust values of any type typed rows write
    /// ([`ToColumn`](crate::row::ToColumn): `Option<T>`, `Vec<T>`, maps, tuples,
    /// decimals, dates and times of chrono/time/jiff, `uuid::Uuid`, `Ipv4Addr`,
    /// derived enums, [`Value`](crate::Value), …), by the same rules: the values are written
    /// into a column buffer of the column's type once the server's header
    /// block gives it, and a type that does not fit is refused before any
    /// data is sent. Fixed-width slices and strings are cheaper through
    /// [`Insert::column`], which sends them as they lie.
    ///
    /// ```no_run
    /// # async fn demo(client: chnative::Client) -> chnative::Result<()> {
    /// let ids = [1u64, 2, 3];
    /// let tags = [vec!["a".to_string()], vec![], vec!["b".into(), "c".into()]];
    /// let score = [Some(0.5f64), None, Some(2.0)];
    /// client.insert("events").column("id", &ids[..]).values("tags", &tags).values("score", &score).send().await?;
    /// # Ok(()) }
    /// ```
    pub fn values<T: ToColumn + Sync>(mut self, name: &str, values: &'a [T]) -> Self
    where
        T::Buffer: 'a,
    {
        if self.columns.iter().map(|(n, _)| n).chain(self.values.iter().map(|(n, _)| n)).any(|n| n == name) {
            self.error.get_or_insert(Error::invalid_input(format!("column `{name}` given twice")));
        }
        let column = name.to_string();
        let make: ValuesColumn<'a> = Box::new(move |ty: &DataType| {
            if !chnative_proto::row::writes::<T>(ty) {
                let e = RowError::type_mismatch(column, std::any::type_name::<T>().to_string(), ty.to_string());
                return Err(Error::from(e));
            }
            let mut buf = chnative_proto::row::__private::buffer_of::<T>(ty)?;
            for v in values {
                v.write_to(&mut buf).map_err(|e| chnative_proto::row::__private::push_error(e, &column))?;
            }
            Ok(Box::new(buf) as Box<dyn ColumnBuffer + 'a>)
        });
        self.values.push((name.to_string(), make));
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

    crate::observe::trace_and_observer!("the INSERT's progress and profile events");

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
        let Insert { conn, table, columns, values, settings, allow_missing, error, trace, observer, id } = self;
        if let Some(e) = error {
            return Err(e);
        }
        if !columns.is_empty() || !values.is_empty() {
            return Err(Error::invalid_input(
                "an opened INSERT takes its columns from the blocks written to it; give no column(), values() or block() before open()"
                    ,
            ));
        }
        let quoted = quote_table(&table)?;
        let home = conn.home().await?;
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
    pub async fn from_stream(self, stream: &mut crate::stream::QueryStream<'_>) -> Result<InsertSummary> {
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
        let Insert { conn: via, table, columns, values, settings, allow_missing, error, trace, observer, id: _ } = self;
        if let Some(e) = error {
            return Err(e);
        }
        if columns.is_empty() && values.is_empty() {
            return Err(Error::invalid_input("an INSERT needs at least one column"));
        }
        // Without columns of Rust values, the columns are checked before the
        // statement is sent; with them, once the header has typed those.
        let early = if values.is_empty() { Some(InsertColumns::new(&columns)?) } else { None };
        let names = columns.iter().map(|(n, _)| n.as_str()).chain(values.iter().map(|(n, _)| n.as_str()));
        let q = QueryWire {
            id,
            sql: insert_sql(&quote_table(&table)?, names),
            settings: sync_by_default(settings),
            params: Vec::new(),
            trace: trace.map(|t| t.0),
        };
        // A pooled connection is held until `send` ends; dropped halfway, the
        // lease finishes or closes it (see pool.rs).
        let mut home = via.home().await?;
        let conn: &mut Driver = home.slot().get().await?;
        let mut sink = InsertBlocks::observed(observer);
        start_insert(conn, &q, &mut sink).await?;

        let made = match make_values(values, sink.flow.header()) {
            Ok(m) => m,
            Err(e) => {
                refuse_insert(conn, &mut sink).await?;
                conn.keep_insert_flow(&mut sink.flow);
                return Err(e);
            }
        };
        let (rows, blocks, progress) = match early {
            Some(checked) => send_checked(conn, &mut sink, Ok(checked), allow_missing).await?,
            None => {
                let all: Vec<(&str, InsertData<'_>)> = columns
                    .iter()
                    .map(|(n, d)| (n.as_str(), d.clone()))
                    .chain(made.iter().map(|(n, b)| (n.as_str(), b.data())))
                    .collect();
                send_checked(conn, &mut sink, InsertColumns::new(&all).map_err(Error::from), allow_missing).await?
            }
        };
        let compression = conn.compression_used();
        tracing::Span::current().record("compression", tracing::field::display(compression));
        Ok(InsertSummary { rows: rows as u64, blocks, progress, compression })
    }
}

/// Checks the INSERT's columns against the header, sends them and ends the
/// INSERT (or ends it unsent when they do not fit): (rows, Data packets, the server's progress).
async fn send_checked<N: AsRef<str>>(
    conn: &mut Driver,
    sink: &mut InsertBlocks,
    checked: Result<InsertColumns<'_, '_, N>>,
    allow_missing: bool,
) -> Result<(usize, u64, chnative_proto::packet::Progress)> {
    let typed = match checked.and_then(|c| check_against_header(c, sink, allow_missing, Vec::new())) {
        Ok(t) => t,
        Err(e) => {
            refuse_insert(conn, sink).await?;
            conn.keep_insert_flow(&mut sink.flow);
            return Err(e);
        }
    };
    let rows = typed.rows();
    let blocks = send_rows(conn, &typed, sink, &mut Default::default()).await?;
    let progress = end_insert(conn, sink).await?;
    conn.keep_insert_flow(&mut sink.flow);
    Ok((rows, blocks, progress))
}

/// The columns of Rust values written into buffers of their columns' types in `header`.
fn make_values<'a>(
    values: Vec<(String, ValuesColumn<'a>)>,
    header: &Block,
) -> Result<Vec<(String, Box<dyn ColumnBuffer + 'a>)>> {
    let mut made = Vec::with_capacity(values.len());
    for (name, make) in values {
        let column = header.column(&name).ok_or_else(|| {
            let names: Vec<&str> = header.columns().iter().map(|c| c.name()).collect();
            Error::invalid_input(format!("the table has no column `{name}` (it has {})", names.join(", ")))
        })?;
        made.push((name, make(column.data_type())?));
    }
    Ok(made)
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
