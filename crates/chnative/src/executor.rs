//! One query surface: every call of [`Client`], [`Session`] and [`Connection`]
//! is written once, on [`Via`] (where a call gets its connection), and shared
//! through the [`Executor`] trait and the types' inherent methods.

use std::future::{Future, IntoFuture};
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;

use chnative_proto::{DataType, ProtoError};

use chnative_proto::packet::Progress;

use crate::block_insert::BlockInsert;
use crate::driver::{new_query_id, QueryId, QueryWire};
use crate::error::{Error, Result};
use crate::ident;
use crate::insert::{Insert, InsertOptions};
use crate::insert_send::InsertSummary;
use crate::pool::{Client, Shared};
use crate::query::Query;
use crate::row::{field_mismatch, Inserter, OwnedRow, ReadContext, Row, RowStream, RowWrite};
use crate::scalar::{scalar_of, Scalar};
use crate::slot::Slot;
use crate::stream::QueryStream;
use crate::value::{ValueRow, ValueRowStream};
use crate::via::{Home, Src, Via};

pub(crate) mod sealed {
    /// Keeps [`super::Executor`] to this crate's three receivers.
    pub trait Sealed {
        /// The connection source of one call.
        fn via(&mut self) -> super::Via<'_>;
    }
}

impl<'c> Via<'c> {
    pub(crate) async fn stream(self, query: Query) -> Result<QueryStream<'c>> {
        match self.0 {
            Src::Slot(slot, _) => slot_stream(slot, query).await,
            Src::Pool(shared) => pool_stream(shared, query).await,
        }
    }

    pub(crate) async fn execute(self, query: Query) -> Result<Progress> {
        self.stream(query).await?.finish_all().await
    }

    pub(crate) async fn scalar<T: Scalar>(self, query: Query) -> Result<T> {
        match self.0 {
            // The slot and the server's zone borrowed apart: no copy of the zone.
            Src::Slot(slot, info) => {
                let s = slot_stream(slot, query).await?;
                scalar_of(s, &info.timezone).await
            }
            Src::Pool(shared) => {
                let s = pool_stream(shared.clone(), query).await?;
                scalar_of(s, &shared.info().timezone).await
            }
        }
    }

    /// `query` with `output_format_native_write_json_as_string = 1` when the server knows
    /// it (24.10 and later): JSON columns as text. An older server is not sent it (it would
    /// refuse the query with UNKNOWN_SETTING); its JSON columns fail to read as text with an
    /// error naming the setting.
    fn json_as_text(&self, query: Query) -> Query {
        if self.info().sends_json_as_text() {
            query.setting(chnative_proto::column::JSON_AS_STRING_SETTING, "1")
        } else {
            query
        }
    }

    pub(crate) async fn rows<T: Row>(self, query: Query) -> Result<RowStream<'c, T>> {
        let query = self.json_as_text(query);
        let stream = self.stream(query).await?;
        // DateTime columns that name no zone: the zone the server used.
        let ctx = ReadContext { server_timezone: stream.timezone().to_string() };
        Ok(RowStream::new(stream, ctx))
    }

    pub(crate) async fn fetch_all<T: OwnedRow>(self, query: Query) -> Result<Vec<T>> {
        self.rows::<T>(query).await?.collect().await
    }

    pub(crate) async fn fetch_optional<T: OwnedRow>(self, query: Query) -> Result<Option<T>> {
        let mut s = self.rows::<T>(query).await?;
        let first = s.next().await?;
        if first.is_some() && s.next().await?.is_some() {
            return Err(Error::too_many_rows("the query returned more than one row, expected at most one"));
        }
        Ok(first)
    }

    pub(crate) async fn fetch_one<T: OwnedRow>(self, query: Query) -> Result<T> {
        match self.fetch_optional(query).await? {
            Some(r) => Ok(r),
            None => Err(Error::no_rows("the query returned no rows, expected one")),
        }
    }

    pub(crate) async fn values(self, query: Query) -> Result<ValueRowStream<'c>> {
        let query = self.json_as_text(query);
        let stream = self.stream(query).await?;
        let tz: Arc<str> = Arc::from(stream.timezone());
        Ok(ValueRowStream::new(stream, tz))
    }

    pub(crate) async fn all_values(self, query: Query) -> Result<Vec<ValueRow>> {
        let mut s = self.values(query).await?;
        let mut out = Vec::new();
        while let Some(r) = s.next().await? {
            out.push(r);
        }
        Ok(out)
    }

    pub(crate) fn insert<'a>(self, table: &str) -> Insert<'c, 'a> {
        Insert::new(self, table)
    }

    pub(crate) async fn insert_blocks(self, table: &str) -> Result<BlockInsert<'c>> {
        self.insert(table).open().await
    }

    pub(crate) async fn ping(self) -> Result<()> {
        self.home().await?.slot().get().await?.ping().await
    }

    /// The types of `columns` in `table`, from the header of an empty SELECT.
    pub(crate) async fn column_types(&mut self, table: &str, columns: &[&str]) -> Result<Vec<(String, DataType)>> {
        let list: Vec<String> = columns.iter().map(|c| crate::ident::quote_ident(c)).collect();
        let sql = format!("SELECT {} FROM {table} LIMIT 0", if list.is_empty() { "*".into() } else { list.join(", ") });
        let mut s = self.reborrow().stream(sql.into()).await?;
        while s.next().await?.is_some() {}
        let header = s
            .header()
            .ok_or_else(|| Error::from(ProtoError::violation(format!("the server sent no header for `{table}`"))))?;
        Ok(header.columns().iter().map(|c| (c.name().to_string(), c.data_type().clone())).collect())
    }

    /// Checks `T`'s fields against `table`'s columns and returns the column types in
    /// field order (before any data is sent).
    pub(crate) async fn field_types<T: RowWrite>(&mut self, table: &str) -> Result<Vec<DataType>> {
        let names: Vec<&str> = T::FIELDS.iter().map(|f| f.column).collect();
        let cols = match self.column_types(table, &names).await {
            Ok(c) => c,
            // Name the missing column instead of relaying the server's message.
            Err(e) if e.server_code() == Some(47) => {
                let all = self.column_types(table, &[]).await?;
                if let Some(f) = T::FIELDS.iter().find(|f| !all.iter().any(|(n, _)| n == f.column)) {
                    return Err(Error::invalid_input(format!(
                        "table {table} has no column `{}` for field `{}` of {}",
                        f.column,
                        f.field,
                        T::NAME
                    )));
                }
                return Err(e);
            }
            Err(e) => return Err(e),
        };
        // A DateTime without a zone shows its values in the server's: local
        // date-times (chrono's NaiveDateTime) are written as instants of that zone.
        let zone = self.info().timezone.clone();
        let mut types = Vec::with_capacity(T::FIELDS.len());
        for (f, (_, ty)) in T::FIELDS.iter().zip(&cols) {
            if !(f.writes)(ty) {
                return Err(field_mismatch::<T>(f, &ty.to_string(), None).into());
            }
            types.push(if zone.is_empty() { ty.clone() } else { ty.with_default_zone(&zone) });
        }
        Ok(types)
    }

    pub(crate) async fn inserter<T: RowWrite>(mut self, table: &str) -> Result<Inserter<'c, T>> {
        let types = self.field_types::<T>(table).await?;
        let buffers = self.row_buffers::<T>(&types)?;
        Ok(Inserter::new(self, table.to_string(), types, buffers))
    }

    /// Column buffers for `T`'s fields: kept ones of an earlier typed INSERT
    /// into columns of the same types (emptied, with their capacity), or new ones.
    pub(crate) fn row_buffers<T: RowWrite>(&self, types: &[DataType]) -> Result<T::Buffers> {
        match self.kept_buffers().take::<T::Buffers>(types) {
            Some(b) => Ok(b),
            None => Ok(T::buffers(types)?),
        }
    }
}

/// The query as sent. Names are checked here, before anything is written: an
/// empty one would end its list on the wire early.
fn wire(q: Query) -> Result<QueryWire> {
    for (name, _) in &q.settings {
        ident::check_setting_name(name)?;
    }
    for (name, _) in &q.params {
        ident::check_param_name(name)?;
    }
    Ok(QueryWire {
        id: q.id.map_or_else(new_query_id, QueryId::Given),
        sql: q.sql,
        settings: q.settings.into_iter().map(|(k, v)| (k, v, chnative_proto::packet::SETTING_IMPORTANT)).collect(),
        params: q.params.into_iter().map(|(k, v)| (k, chnative_proto::packet::encode_parameter(&v))).collect(),
        trace: q.trace.map(|t| t.0),
    })
}

/// The `SET ROLE` statement that activates `roles` (none: `SET ROLE NONE`).
fn set_role_sql(roles: &[String]) -> Result<String> {
    if roles.is_empty() {
        return Ok("SET ROLE NONE".to_string());
    }
    let mut sql = String::from("SET ROLE ");
    for (i, r) in roles.iter().enumerate() {
        if r.is_empty() {
            return Err(Error::invalid_input("Query::roles: a role name is empty"));
        }
        if i > 0 {
            sql.push_str(", ");
        }
        ident::push_quoted_ident(&mut sql, r);
    }
    Ok(sql)
}

/// Runs `SET ROLE …` (`sql`) on the connection in `slot`.
async fn set_roles(slot: &mut Slot, sql: &str) -> Result<()> {
    let mut set = Query::new(sql);
    set.timeout = Some(std::time::Duration::ZERO); // within the query's own deadline
    slot_stream(slot, set).await?.finish_all().await?;
    Ok(())
}

/// Starts a query on the connection in `slot`.
async fn slot_stream(slot: &mut Slot, mut query: Query) -> Result<QueryStream<'_>> {
    if query.roles.is_some() {
        return Err(Error::invalid_input(
            "Query::roles is for a Client's pooled connections; on a Session or a Connection, run SET ROLE \
             (it holds for the connection's later calls)",
        ));
    }
    let observer = std::mem::take(&mut query.observer);
    let deadline = crate::driver::query_deadline(query.timeout, slot.query_timeout());
    let q = wire(query)?;
    // The connection stays in its slot until the Query is out: a future
    // dropped halfway (or cut short by the deadline) must leave it where
    // the next call finds (and finishes or closes) it.
    let conn = {
        let start = std::pin::pin!(async {
            slot.get().await?.send_query(&q, false, deadline).await?;
            slot.take().await
        });
        crate::driver::within(deadline, start).await?
    };
    Ok(QueryStream::new(conn, Home::Slot(slot), q.id).observed(observer))
}

/// Starts a query on a pooled connection, which the stream owns until it is dropped.
async fn pool_stream<'c>(shared: Arc<Shared>, mut query: Query) -> Result<QueryStream<'c>> {
    let observer = std::mem::take(&mut query.observer);
    let deadline = crate::driver::query_deadline(query.timeout, shared.query_timeout());
    let set_role = query.roles.take().map(|r| set_role_sql(&r)).transpose()?;
    let q = wire(query)?;
    let (lease, conn) = {
        let start = std::pin::pin!(async {
            let mut lease = shared.acquire().await?;
            if let Some(sql) = &set_role {
                // The roles hold for the connection: it is closed after this query, not pooled.
                lease.discard = true;
                // Boxed: a rare path, kept out of every pooled query's future (its size is
                // moved at each await; select1_alloc bounds it).
                Box::pin(set_roles(&mut lease.slot, sql)).await?;
            }
            // The connection stays in the lease until the Query is out (see slot_stream).
            lease.slot.get().await?.send_query(&q, false, deadline).await?;
            let conn = lease.slot.take().await?;
            Ok((lease, conn))
        });
        crate::driver::within(deadline, start).await?
    };
    Ok(QueryStream::new(conn, Home::Lease(lease, PhantomData), q.id).observed(observer))
}

/// The builder methods shared by the two row inserts.
macro_rules! row_options {
    () => {
        crate::insert::insert_options! {
            setting:
            /// A server setting for this INSERT (as [`Insert::setting`]). A name
            /// that is not an identifier is refused before anything is sent.
            query_id:
            /// Uses this query id instead of a generated one (visible in
            /// `system.processes` while the INSERT runs, and in the server's logs).
            deduplication_token:
            /// Sets `insert_deduplication_token`: an INSERT retried with the same
            /// rows and the same token is stored once, on a table that deduplicates
            /// (Replicated*MergeTree, or MergeTree with
            /// `non_replicated_deduplication_window`). See [`Insert::deduplication_token`].
        }
    };
}

/// An INSERT of typed rows, made by [`Executor::insert_rows`]: `.await` it
/// (or call [`InsertRows::send`]), after any of [`InsertRows::setting`],
/// [`InsertRows::query_id`] and [`InsertRows::deduplication_token`].
///
/// Every field's type is checked against the table before any data is sent.
/// The rows are transposed into column buffers about 4 MiB at a time, each
/// chunk sent as a block of one INSERT before the next is written (a slice of
/// any length costs one chunk of buffers, and they are sent while still in the
/// CPU's cache). Rows that fit in one chunk are all written before anything is sent.
/// With more, a row that cannot be written (a value its column cannot hold)
/// returns its error and aborts the INSERT: its connection is closed, and the
/// server discards the blocks it had received (it writes nothing before
/// `min_insert_block_size_rows` rows, 1,048,449 by default, have arrived; parts
/// written before that point of a larger INSERT stay, as on any failure).
///
/// ```no_run
/// # #[derive(chnative::Row)] struct Event { id: u64 }
/// # async fn demo(client: chnative::Client, rows: Vec<Event>) -> chnative::Result<()> {
/// client.insert_rows("events", &rows).await?;
/// client
///     .insert_rows("events", &rows)
///     .setting("insert_quorum", "auto")
///     .query_id("load-42")
///     .deduplication_token("load-42")
///     .await?;
/// # Ok(()) }
/// ```
#[must_use = "an INSERT does nothing until it is awaited"]
pub struct InsertRows<'r, T> {
    via: Via<'r>,
    table: String,
    rows: &'r [T],
    options: InsertOptions,
}

impl<'r, T: RowWrite> InsertRows<'r, T> {
    pub(crate) fn new(via: Via<'r>, table: &str, rows: &'r [T]) -> Self {
        InsertRows { via, table: table.to_string(), rows, options: InsertOptions::default() }
    }

    row_options!();

    /// Sends the rows and waits for the server to confirm.
    pub async fn send(self) -> Result<InsertSummary> {
        let InsertRows { mut via, table, rows, options } = self;
        let types = via.field_types::<T>(&table).await?;
        let mut buffers = via.row_buffers::<T>(&types)?;
        let mut peak = 0;
        let mut chunks = crate::row::TypedChunks { rows, buffers: &mut buffers };
        let res = crate::row::send_rows(via.reborrow(), &table, rows.len(), &mut chunks, &options, &mut peak).await;
        // Sent or not, the buffers go back for the next typed INSERT of `T`.
        let peak = peak.max(T::bytes(&buffers));
        T::truncate(&mut buffers, 0);
        via.kept_buffers().give(types, buffers, peak);
        res
    }
}

impl<'r, T: RowWrite + Sync> IntoFuture for InsertRows<'r, T> {
    type Output = Result<InsertSummary>;
    type IntoFuture = Pin<Box<dyn Future<Output = Result<InsertSummary>> + Send + 'r>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.send())
    }
}

/// An INSERT of dynamic rows ([`ValueRow`]s, all with the same column names),
/// made by [`Executor::insert_values`]: `.await` it (or call
/// [`InsertValues::send`]), after any of the same options as [`InsertRows`].
///
/// The table's column types are read first; every cell is converted exactly
/// (integers that fit, floats that are exact, dates, times, decimals without
/// rounding, enum labels) before its chunk is sent. Rows are written and sent
/// in chunks of about 4 MiB, as [`InsertRows`] does (the same rules for a row
/// that cannot be converted: rows that fit in one chunk are all checked before
/// anything is sent; after that, a bad row aborts the INSERT).
#[must_use = "an INSERT does nothing until it is awaited"]
pub struct InsertValues<'r> {
    via: Via<'r>,
    table: String,
    rows: &'r [ValueRow],
    options: InsertOptions,
}

impl<'r> InsertValues<'r> {
    pub(crate) fn new(via: Via<'r>, table: &str, rows: &'r [ValueRow]) -> Self {
        InsertValues { via, table: table.to_string(), rows, options: InsertOptions::default() }
    }

    row_options!();

    /// Sends the rows and waits for the server to confirm.
    pub async fn send(self) -> Result<InsertSummary> {
        let InsertValues { mut via, table, rows, options } = self;
        let Some(first) = rows.first() else {
            return Ok(InsertSummary::default());
        };
        let names: Vec<&str> = first.names().iter().map(String::as_str).collect();
        let types = via.column_types(&table, &names).await?;
        let mut chunks = crate::row::ValueChunks { types: &types, rows, buffers: Vec::new() };
        crate::row::send_rows(via, &table, rows.len(), &mut chunks, &options, &mut 0).await
    }
}

impl<'r> IntoFuture for InsertValues<'r> {
    type Output = Result<InsertSummary>;
    type IntoFuture = Pin<Box<dyn Future<Output = Result<InsertSummary>> + Send + 'r>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.send())
    }
}

/// The calls [`Client`], [`Session`](crate::Session) and [`Connection`](crate::Connection) share, for code that
/// takes any of them (as tokio-postgres's `GenericClient` and sqlx's `Executor`
/// do):
///
/// ```no_run
/// use chnative::{Executor, Row};
///
/// #[derive(Row)]
/// struct Event { id: u64, name: String }
///
/// async fn load(db: &mut impl Executor, events: &[Event]) -> chnative::Result<u64> {
///     db.execute("CREATE TABLE IF NOT EXISTS events (id UInt64, name String) ENGINE = MergeTree ORDER BY id").await?;
///     db.insert_rows("events", events).deduplication_token("load-1").await?;
///     db.fetch_scalar::<u64>("SELECT count() FROM events").await
/// }
///
/// # async fn demo(client: chnative::Client, events: Vec<Event>) -> chnative::Result<()> {
/// load(&mut client.clone(), &events).await?;        // pooled
/// load(&mut client.session().await?, &events).await?; // one pinned connection
/// let mut conn = chnative::Connection::connect("clickhouse://127.0.0.1:9000").await?;
/// load(&mut conn, &events).await?;                   // one socket
/// # Ok(()) }
/// ```
///
/// Every call takes `&mut self` (a [`Session`](crate::Session) or [`Connection`](crate::Connection) runs one call
/// at a time), and what it returns borrows the receiver. [`Client`]'s inherent
/// methods of the same names take `&self` and return owned (`'static`)
/// streams and inserters that can move into spawned tasks.
///
/// The trait is sealed: it is implemented by these three types only.
///
/// | task | call |
/// |---|---|
/// | run a statement | [`execute(q)`](Executor::execute) |
/// | stream blocks (columns) | [`fetch_blocks(q)`](Executor::fetch_blocks) |
/// | stream typed rows | [`fetch::<T>(q)`](Executor::fetch) |
/// | all / one / at most one typed row | [`fetch_all`](Executor::fetch_all), [`fetch_one`](Executor::fetch_one), [`fetch_optional`](Executor::fetch_optional) |
/// | one value | [`fetch_scalar::<T>(q)`](Executor::fetch_scalar) |
/// | stream / all dynamic rows | [`fetch_values(q)`](Executor::fetch_values), [`fetch_all_values(q)`](Executor::fetch_all_values) |
/// | insert columns | [`insert(table)`](Executor::insert)`.column(..).send()` |
/// | insert blocks | [`insert_blocks(table)`](Executor::insert_blocks) |
/// | insert typed / dynamic rows | [`insert_rows(table, &rows)`](Executor::insert_rows), [`insert_values(table, &rows)`](Executor::insert_values) |
/// | a long-lived row writer | [`inserter::<T>(table)`](Executor::inserter) |
///
/// A query `q` is anything that converts into a [`Query`]: `&str`, `String`,
/// `(sql, params! {..})` or a [`Query`] with bound parameters and settings.
pub trait Executor: sealed::Sealed + Send {
    /// Runs a statement (DDL, INSERT … SELECT, SYSTEM …) and discards any result.
    fn execute(&mut self, query: impl Into<Query>) -> impl Future<Output = Result<Progress>> + Send {
        self.via().execute(query.into())
    }

    /// Starts a query and streams its result block by block (the column tier;
    /// see [`QueryStream`]).
    ///
    /// The query deadline ([`Query::timeout`], else [`crate::Config::query_timeout`])
    /// runs from this call: waiting for a connection counts.
    fn fetch_blocks(&mut self, query: impl Into<Query>) -> impl Future<Output = Result<QueryStream<'_>>> + Send {
        self.via().stream(query.into())
    }

    /// Runs a query and streams its result as typed rows (`#[derive(Row)]`, a
    /// single value or a tuple).
    ///
    /// DateTime columns whose type names no zone are read in the zone the server
    /// shows them in (the `session_timezone` in force: see [`QueryStream::timezone`]).
    /// For a struct with borrowed fields, name it with an elided lifetime:
    /// `db.fetch::<Event<'_>>(…)`. JSON columns arrive as their text (the query
    /// gets `output_format_native_write_json_as_string = 1` from servers that know
    /// it, 24.10 and later: see [`ServerInfo::sends_json_as_text`](crate::ServerInfo::sends_json_as_text)).
    fn fetch<T: Row>(&mut self, query: impl Into<Query>) -> impl Future<Output = Result<RowStream<'_, T>>> + Send {
        self.via().rows::<T>(query.into())
    }

    /// Runs a query and returns all its rows.
    fn fetch_all<T: OwnedRow + Send>(&mut self, query: impl Into<Query>) -> impl Future<Output = Result<Vec<T>>> + Send
    where
        for<'r> T::Readers<'r>: Send,
    {
        self.via().fetch_all::<T>(query.into())
    }

    /// Runs a query that must return exactly one row
    /// ([`ErrorKind::NoRows`](crate::ErrorKind) when it returns none, an error
    /// when it returns more).
    fn fetch_one<T: OwnedRow + Send>(&mut self, query: impl Into<Query>) -> impl Future<Output = Result<T>> + Send
    where
        for<'r> T::Readers<'r>: Send,
    {
        self.via().fetch_one::<T>(query.into())
    }

    /// Runs a query that returns at most one row.
    fn fetch_optional<T: OwnedRow + Send>(
        &mut self,
        query: impl Into<Query>,
    ) -> impl Future<Output = Result<Option<T>>> + Send
    where
        for<'r> T::Readers<'r>: Send,
    {
        self.via().fetch_optional::<T>(query.into())
    }

    /// Runs a query returning one value: the first column of the first row, read
    /// by the rules of a typed-row field ([`Scalar`]).
    fn fetch_scalar<T: Scalar + Send>(&mut self, query: impl Into<Query>) -> impl Future<Output = Result<T>> + Send {
        self.via().scalar::<T>(query.into())
    }

    /// Runs a query and streams its result as dynamic rows of [`crate::Value`]s.
    /// JSON columns arrive as their text; DateTime columns whose type names no
    /// zone are in the zone the server shows them in ([`QueryStream::timezone`]).
    fn fetch_values(&mut self, query: impl Into<Query>) -> impl Future<Output = Result<ValueRowStream<'_>>> + Send {
        self.via().values(query.into())
    }

    /// Runs a query and returns all its rows as [`ValueRow`]s.
    fn fetch_all_values(&mut self, query: impl Into<Query>) -> impl Future<Output = Result<Vec<ValueRow>>> + Send {
        self.via().all_values(query.into())
    }

    /// Starts an INSERT of columns into `table`: `table` or `db.table`, each
    /// part quoted as an identifier (parts may come quoted already, with
    /// backticks or double quotes; quote a name that holds a dot).
    fn insert<'a>(&mut self, table: &str) -> Insert<'_, 'a> {
        self.via().insert(table)
    }

    /// Opens one INSERT into `table` that takes any number of blocks (see
    /// [`BlockInsert`]); for settings, a query id or a deduplication token use
    /// [`Insert::open`].
    fn insert_blocks(&mut self, table: &str) -> impl Future<Output = Result<BlockInsert<'_>>> + Send {
        let via = self.via();
        let table = table.to_string();
        async move { via.insert_blocks(&table).await }
    }

    /// Inserts rows of a `#[derive(Row)]` struct in one INSERT; `.await` the
    /// result, after any settings, query id or deduplication token (see
    /// [`InsertRows`]).
    fn insert_rows<'r, T: RowWrite + Sync>(&'r mut self, table: &str, rows: &'r [T]) -> InsertRows<'r, T> {
        InsertRows::new(self.via(), table, rows)
    }

    /// Inserts dynamic rows in one INSERT; `.await` the result, after any
    /// settings, query id or deduplication token (see [`InsertValues`]).
    fn insert_values<'r>(&'r mut self, table: &str, rows: &'r [ValueRow]) -> InsertValues<'r> {
        InsertValues::new(self.via(), table, rows)
    }

    /// A long-lived writer of `T` rows into `table` (see [`Inserter`]): rows are
    /// buffered by column and sent as one INSERT every
    /// [`Inserter::max_rows`] rows (default 100,000) or [`Inserter::max_bytes`]
    /// bytes (default 64 MiB), or once the oldest buffered row has waited
    /// [`Inserter::period`]. Call [`Inserter::end`] to send the last rows.
    fn inserter<T: RowWrite>(&mut self, table: &str) -> impl Future<Output = Result<Inserter<'_, T>>> + Send {
        let via = self.via();
        let table = table.to_string();
        async move { via.inserter::<T>(&table).await }
    }

    /// Checks the server answers.
    fn ping(&mut self) -> impl Future<Output = Result<()>> + Send {
        self.via().ping()
    }
}

impl sealed::Sealed for Client {
    fn via(&mut self) -> Via<'_> {
        Via::pool(self.shared())
    }
}
impl Executor for Client {}

/// The pooled client's calls: `&self`, and what they return owns its pooled
/// connection (`'static`, `Send`), so it can move into a spawned task and
/// outlive the `Client` it came from.
impl Client {
    fn pooled(&self) -> Via<'static> {
        Via::pool(self.shared())
    }

    /// Runs a statement (DDL, INSERT … SELECT, SYSTEM …) and discards any result.
    /// See [`Executor::execute`].
    pub async fn execute(&self, query: impl Into<Query>) -> Result<Progress> {
        self.pooled().execute(query.into()).await
    }

    /// Starts a query and streams its result block by block; the stream holds
    /// one pooled connection until it is dropped. See [`Executor::fetch_blocks`].
    pub async fn fetch_blocks(&self, query: impl Into<Query>) -> Result<QueryStream<'static>> {
        self.pooled().stream(query.into()).await
    }

    /// Streams typed rows; see [`Executor::fetch`].
    pub async fn fetch<T: Row>(&self, query: impl Into<Query>) -> Result<RowStream<'static, T>> {
        self.pooled().rows::<T>(query.into()).await
    }

    /// All the rows of a query; see [`Executor::fetch_all`].
    pub async fn fetch_all<T: OwnedRow>(&self, query: impl Into<Query>) -> Result<Vec<T>> {
        self.pooled().fetch_all::<T>(query.into()).await
    }

    /// The one row of a query; see [`Executor::fetch_one`].
    pub async fn fetch_one<T: OwnedRow>(&self, query: impl Into<Query>) -> Result<T> {
        self.pooled().fetch_one::<T>(query.into()).await
    }

    /// At most one row; see [`Executor::fetch_optional`].
    pub async fn fetch_optional<T: OwnedRow>(&self, query: impl Into<Query>) -> Result<Option<T>> {
        self.pooled().fetch_optional::<T>(query.into()).await
    }

    /// One value; see [`Executor::fetch_scalar`].
    pub async fn fetch_scalar<T: Scalar>(&self, query: impl Into<Query>) -> Result<T> {
        self.pooled().scalar::<T>(query.into()).await
    }

    /// Streams dynamic rows; see [`Executor::fetch_values`].
    pub async fn fetch_values(&self, query: impl Into<Query>) -> Result<ValueRowStream<'static>> {
        self.pooled().values(query.into()).await
    }

    /// All the rows of a query as [`ValueRow`]s; see [`Executor::fetch_all_values`].
    pub async fn fetch_all_values(&self, query: impl Into<Query>) -> Result<Vec<ValueRow>> {
        self.pooled().all_values(query.into()).await
    }

    /// Starts an INSERT of columns into `table`; it takes a pooled connection
    /// when sent. See [`Executor::insert`].
    pub fn insert<'a>(&self, table: &str) -> Insert<'static, 'a> {
        self.pooled().insert(table)
    }

    /// Opens one INSERT into `table` that takes any number of blocks (see
    /// [`BlockInsert`]); it holds a pooled connection until it is ended or
    /// dropped. For settings, a query id or a deduplication token use
    /// [`Insert::open`]: `client.insert(table).setting(..).open()`.
    pub async fn insert_blocks(&self, table: &str) -> Result<BlockInsert<'static>> {
        self.pooled().insert_blocks(table).await
    }

    /// Inserts typed rows; see [`Executor::insert_rows`] and [`InsertRows`].
    pub fn insert_rows<'r, T: RowWrite>(&self, table: &str, rows: &'r [T]) -> InsertRows<'r, T> {
        InsertRows::new(self.pooled(), table, rows)
    }

    /// Inserts dynamic rows; see [`Executor::insert_values`] and [`InsertValues`].
    pub fn insert_values<'r>(&self, table: &str, rows: &'r [ValueRow]) -> InsertValues<'r> {
        InsertValues::new(self.pooled(), table, rows)
    }

    /// A long-lived writer of `T` rows; see [`Executor::inserter`]. It takes a
    /// pooled connection for each INSERT it sends, and does not borrow the client.
    pub async fn inserter<T: RowWrite>(&self, table: &str) -> Result<Inserter<'static, T>> {
        self.pooled().inserter::<T>(table).await
    }

    /// Checks the server answers (on a pooled connection).
    pub async fn ping(&self) -> Result<()> {
        self.pooled().ping().await
    }

    /// Old name of [`Client::fetch_blocks`].
    #[deprecated(since = "0.2.0", note = "renamed `fetch_blocks`")]
    pub async fn stream(&self, query: impl Into<Query>) -> Result<QueryStream<'static>> {
        self.fetch_blocks(query).await
    }

    /// Old name of [`Client::fetch`].
    #[deprecated(since = "0.2.0", note = "renamed `fetch`")]
    pub async fn query<T: Row>(&self, query: impl Into<Query>) -> Result<RowStream<'static, T>> {
        self.fetch(query).await
    }

    /// Old name of [`Client::fetch_scalar`].
    #[deprecated(since = "0.2.0", note = "renamed `fetch_scalar`")]
    pub async fn query_scalar<T: Scalar>(&self, query: impl Into<Query>) -> Result<T> {
        self.fetch_scalar(query).await
    }

    /// Old name of [`Client::fetch_values`].
    #[deprecated(since = "0.2.0", note = "renamed `fetch_values`")]
    pub async fn query_rows(&self, query: impl Into<Query>) -> Result<ValueRowStream<'static>> {
        self.fetch_values(query).await
    }

    /// Old name of [`Client::fetch_all_values`].
    #[deprecated(since = "0.2.0", note = "renamed `fetch_all_values`")]
    pub async fn fetch_all_rows(&self, query: impl Into<Query>) -> Result<Vec<ValueRow>> {
        self.fetch_all_values(query).await
    }

    /// Old name of [`Client::insert_values`].
    #[deprecated(since = "0.2.0", note = "renamed `insert_values`")]
    pub async fn insert_value_rows(&self, table: &str, rows: &[ValueRow]) -> Result<InsertSummary> {
        self.insert_values(table, rows).send().await
    }
}

/// The calls of a type that owns one socket (a [`Connection`], a [`Session`]),
/// each taking `&mut self` and forwarding to [`Executor`]'s (so that no import
/// is needed to call them).
macro_rules! single_socket_api {
    ($($slot:tt)+) => {
        /// Where this type's calls get their connection.
        pub(crate) fn via(&mut self) -> crate::via::Via<'_> {
            crate::via::Via::slot(&mut self.$($slot)+, &self.info)
        }

        /// What the server said about itself.
        pub fn server_info(&self) -> crate::driver::ServerInfo {
            self.info.clone()
        }

        /// False once the connection was closed after an error; make a new one then.
        /// (While a cancelled query is being finished in the background this says true;
        /// the next call waits for it.)
        pub fn is_usable(&self) -> bool {
            self.$($slot)+.peek().is_none_or(|c| !c.is_broken())
        }

        /// Runs a statement; see [`Executor::execute`](crate::Executor::execute).
        pub async fn execute(&mut self, query: impl Into<crate::query::Query>) -> crate::error::Result<chnative_proto::packet::Progress> {
            self.via().execute(query.into()).await
        }

        /// Streams blocks; see [`Executor::fetch_blocks`](crate::Executor::fetch_blocks).
        ///
        /// The query deadline ([`crate::Query::timeout`], else [`crate::Config::query_timeout`])
        /// runs from this call: a query that timed out before is finished in the
        /// background, and the wait for that counts.
        pub async fn fetch_blocks(&mut self, query: impl Into<crate::query::Query>) -> crate::error::Result<crate::stream::QueryStream<'_>> {
            self.via().stream(query.into()).await
        }

        /// Streams typed rows; see [`Executor::fetch`](crate::Executor::fetch).
        pub async fn fetch<T: crate::row::Row>(
            &mut self,
            query: impl Into<crate::query::Query>,
        ) -> crate::error::Result<crate::row::RowStream<'_, T>> {
            self.via().rows::<T>(query.into()).await
        }

        /// All the rows; see [`Executor::fetch_all`](crate::Executor::fetch_all).
        pub async fn fetch_all<T: crate::row::OwnedRow>(
            &mut self,
            query: impl Into<crate::query::Query>,
        ) -> crate::error::Result<Vec<T>> {
            self.via().fetch_all::<T>(query.into()).await
        }

        /// The one row; see [`Executor::fetch_one`](crate::Executor::fetch_one).
        pub async fn fetch_one<T: crate::row::OwnedRow>(&mut self, query: impl Into<crate::query::Query>) -> crate::error::Result<T> {
            self.via().fetch_one::<T>(query.into()).await
        }

        /// At most one row; see [`Executor::fetch_optional`](crate::Executor::fetch_optional).
        pub async fn fetch_optional<T: crate::row::OwnedRow>(
            &mut self,
            query: impl Into<crate::query::Query>,
        ) -> crate::error::Result<Option<T>> {
            self.via().fetch_optional::<T>(query.into()).await
        }

        /// One value; see [`Executor::fetch_scalar`](crate::Executor::fetch_scalar).
        pub async fn fetch_scalar<T: crate::scalar::Scalar>(&mut self, query: impl Into<crate::query::Query>) -> crate::error::Result<T> {
            self.via().scalar::<T>(query.into()).await
        }

        /// Streams dynamic rows; see [`Executor::fetch_values`](crate::Executor::fetch_values).
        pub async fn fetch_values(
            &mut self,
            query: impl Into<crate::query::Query>,
        ) -> crate::error::Result<crate::value::ValueRowStream<'_>> {
            self.via().values(query.into()).await
        }

        /// All dynamic rows; see [`Executor::fetch_all_values`](crate::Executor::fetch_all_values).
        pub async fn fetch_all_values(&mut self, query: impl Into<crate::query::Query>) -> crate::error::Result<Vec<crate::value::ValueRow>> {
            self.via().all_values(query.into()).await
        }

        /// Starts an INSERT of columns; see [`Executor::insert`](crate::Executor::insert).
        pub fn insert<'a>(&mut self, table: &str) -> crate::insert::Insert<'_, 'a> {
            self.via().insert(table)
        }

        /// Opens a many-block INSERT; see [`Executor::insert_blocks`](crate::Executor::insert_blocks).
        pub async fn insert_blocks(&mut self, table: &str) -> crate::error::Result<crate::block_insert::BlockInsert<'_>> {
            self.via().insert_blocks(table).await
        }

        /// Inserts typed rows; see [`Executor::insert_rows`](crate::Executor::insert_rows).
        pub fn insert_rows<'r, T: crate::row::RowWrite>(
            &'r mut self,
            table: &str,
            rows: &'r [T],
        ) -> crate::executor::InsertRows<'r, T> {
            crate::executor::InsertRows::new(self.via(), table, rows)
        }

        /// Inserts dynamic rows; see [`Executor::insert_values`](crate::Executor::insert_values).
        pub fn insert_values<'r>(&'r mut self, table: &str, rows: &'r [crate::value::ValueRow]) -> crate::executor::InsertValues<'r> {
            crate::executor::InsertValues::new(self.via(), table, rows)
        }

        /// A long-lived row writer; see [`Executor::inserter`](crate::Executor::inserter).
        pub async fn inserter<T: crate::row::RowWrite>(&mut self, table: &str) -> crate::error::Result<crate::row::Inserter<'_, T>> {
            self.via().inserter::<T>(table).await
        }

        /// Checks the server answers.
        pub async fn ping(&mut self) -> crate::error::Result<()> {
            self.via().ping().await
        }

        /// Old name of `fetch_blocks`.
        #[deprecated(since = "0.2.0", note = "renamed `fetch_blocks`")]
        pub async fn stream(&mut self, query: impl Into<crate::query::Query>) -> crate::error::Result<crate::stream::QueryStream<'_>> {
            self.fetch_blocks(query).await
        }

        /// Old name of `fetch_scalar`.
        #[deprecated(since = "0.2.0", note = "renamed `fetch_scalar`")]
        pub async fn query_scalar<T: crate::scalar::Scalar>(&mut self, query: impl Into<crate::query::Query>) -> crate::error::Result<T> {
            self.fetch_scalar(query).await
        }
    };
}
pub(crate) use single_socket_api;
