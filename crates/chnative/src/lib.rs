//! chnative: a ClickHouse client over the native TCP protocol (port 9000), moving
//! data in the Native columnar format in both directions.
//!
//! ```toml
//! [dependencies]
//! chnative = "0.1"
//! tokio = { version = "1", features = ["macros", "rt-multi-thread"] }
//! ```
//!
//! # Quickstart: typed rows
//!
//! [`Client`] is a pool of connections behind a cheap, cloneable, `Send + Sync`
//! handle. A `#[derive(Row)]` struct is inserted with [`Client::insert_rows`] (or
//! a long-lived [`Client::inserter`]) and read back with [`Client::fetch_all`]
//! (or streamed with [`Client::query`]). Fields bind to columns by name, and their
//! types are checked against the table or the result before any row moves.
//! `{name:Type}` placeholders take values bound with [`Query::bind`] (or the
//! [`params!`] macro), sent as query parameters, never spliced into the SQL.
//!
//! ```no_run
//! use chnative::{Client, Query, Row};
//!
//! #[derive(Row, Debug)]
//! struct Event {
//!     id: u64,
//!     name: String,
//!     score: Option<f64>, // Nullable(Float64)
//! }
//!
//! #[tokio::main]
//! async fn main() -> chnative::Result<()> {
//!     let client = Client::connect("clickhouse://default@127.0.0.1:9000/default").await?;
//!     client
//!         .execute("CREATE TABLE IF NOT EXISTS events (id UInt64, name String, score Nullable(Float64)) \
//!                   ENGINE = MergeTree ORDER BY id")
//!         .await?;
//!
//!     let events: Vec<Event> = (0..1000)
//!         .map(|id| Event { id, name: format!("event {id}"), score: (id % 3 != 0).then(|| id as f64 / 4.0) })
//!         .collect();
//!     client.insert_rows("events", &events).await?;
//!
//!     let query = Query::new("SELECT id, name, score FROM events WHERE id >= {min:UInt64} ORDER BY id")
//!         .bind("min", 995u64);
//!     let last: Vec<Event> = client.fetch_all(query).await?;
//!     assert_eq!(last.len(), 5);
//!     println!("{last:?}");
//!     Ok(())
//! }
//! ```
//!
//! For a steady flow of rows, the inserter buffers them by column and sends an
//! INSERT every 100,000 rows or 64 MiB (both adjustable), reusing its buffers; a
//! row type may borrow from the result it reads (`&str`, `&[u8]`, `&[T]` fields
//! allocate nothing per row):
//!
//! ```no_run
//! # #[derive(chnative::Row)] struct Event { id: u64, name: String, score: Option<f64> }
//! # async fn run(client: chnative::Client) -> chnative::Result<()> {
//! let mut inserter = client.inserter::<Event>("events").await?.max_rows(10_000);
//! for id in 1000..50_000 {
//!     inserter.write(&Event { id, name: format!("event {id}"), score: None }).await?;
//! }
//! let summary = inserter.end().await?;
//! println!("{} rows in {} blocks", summary.rows, summary.blocks);
//!
//! #[derive(chnative::Row)]
//! struct Name<'a> {
//!     id: u64,
//!     name: &'a str,
//! }
//! let mut rows = client.query::<Name<'_>>("SELECT id, name FROM events").await?;
//! while let Some(row) = rows.next().await? {
//!     println!("{} {}", row.id, row.name);
//! }
//! # Ok(()) }
//! ```
//!
//! The [`row`] module has the attributes (`rename`, `skip`, `default`,
//! `ignore_extra_columns`), nested rows, `#[derive(Enum)]` and `#[derive(Variant)]`;
//! the README has the full table of ClickHouse types and the Rust types that read
//! and write them.
//!
//! # Dynamic rows
//!
//! When the shape is known only at run time (CLIs, admin tools, migrations), rows
//! are [`ValueRow`]s of [`Value`]s, indexed by position or by column name.
//! `Display` renders a value the way the server's `toString` does; values are exact
//! (Decimals, 128/256-bit integers, zoned DateTimes). [`Client::insert_value_rows`]
//! converts every cell exactly to its column's type before sending.
//!
//! ```no_run
//! # async fn run(client: chnative::Client) -> chnative::Result<()> {
//! use chnative::{Value, ValueRow};
//!
//! let rows = client.fetch_all_rows("SELECT name, count() AS n FROM events GROUP BY name LIMIT 3").await?;
//! for row in &rows {
//!     println!("{} {}", row["name"], row[1]);
//! }
//!
//! let names: std::sync::Arc<[String]> = vec!["id".to_string(), "name".to_string(), "score".to_string()].into();
//! let row = ValueRow::new(names, vec![Value::UInt64(7), Value::String(b"seven".to_vec()), Value::Null])?;
//! client.insert_value_rows("events", &[row]).await?;
//! # Ok(()) }
//! ```
//!
//! # Columns, when you need the speed
//!
//! The column tier moves whole columns: a SELECT streams borrowed blocks whose
//! fixed-width columns are `&[T]` views of reusable aligned buffers, and an INSERT
//! sends columns from your slices with one copy each. Nothing is allocated per row.
//!
//! ```no_run
//! # async fn demo() -> chnative::Result<()> {
//! use chnative::{params, Client};
//! let client = Client::connect("clickhouse://default@127.0.0.1:9000/default?compression=lz4").await?;
//!
//! let ids: Vec<u64> = (0..1000).collect();
//! let names: Vec<String> = ids.iter().map(|i| format!("n{i}")).collect();
//! client.insert("events").column("id", &ids).column("name", &names).send().await?;
//!
//! let mut stream = client
//!     .stream(("SELECT id, name FROM events WHERE id > {min:UInt64}", params! {"min" => 10u64}))
//!     .await?;
//! while let Some(block) = stream.next().await? {
//!     let ids: &[u64] = block.column("id").unwrap().view().values()?;
//!     let names = block.column("name").unwrap().view().as_strings()?; // names.bytes(i), names.str(i)
//!     for i in 0..ids.len() {
//!         println!("{} {:?}", ids[i], names.str(i));
//!     }
//! }
//! # Ok(()) }
//! ```
//!
//! **The borrowing rule:** a block borrows the stream, so it must be dropped before
//! the next call to `next()`; that is how its buffers are reused without copies.
//! To keep a block longer, `block.clone()` it: the clone shares the buffers (no
//! copy), can be sent to another task, and gives them back to the connection's
//! pool when it is dropped. Borrowed typed rows follow the same rule.
//!
//! # Connections
//!
//! [`Client`] is a pool (every call takes `&self`); a stream holds one pooled
//! connection until it is dropped. [`Session`] pins one pooled connection for
//! calls that share server-side state (`SET`, `USE`, temporary tables).
//! [`Connection`] is the single socket underneath, with `&mut self` calls. A call
//! dropped halfway (a timeout, a `select!`) never leaves a connection in an
//! unknown state in the pool: an unfinished SELECT is cancelled and drained, and
//! anything that cannot be finished safely is closed.
//!
//! ## The connection string
//!
//! `clickhouse://user:password@host:port/database?option=value&…`
//! (`clickhouses://` for TLS, `tcp://` as an alias of `clickhouse://`); see
//! [`Config::from_url`] for the parsing rules. Every option is also a [`Config`]
//! builder method. Options are strict: an unknown one, an empty value, a value out
//! of range or an option given twice is an error.
//!
//! | option | default | meaning |
//! |---|---|---|
//! | `compression` | `none` | `none`, `lz4`, `zstd` (level 1), `zstd:LEVEL` (-131072..=22) |
//! | `connect_timeout` | `10s` | TCP connect plus handshake (`0`: none); durations are `250ms`, `5s`, `2m`, `1h` |
//! | `read_timeout` | `300s` | longest silence between reads, and longest write (`0`: none) |
//! | `query_timeout` | none | deadline per query (`0`: none); [`Query::timeout`] overrides it per query |
//! | `revision` | `54492` | the protocol revision announced (54459..=54492) |
//! | `user`, `password`, `database` | `default`, empty, the server's | instead of the user info and the path |
//! | `client_name`, `quota_key` | `chnative`, empty | shown in `system.processes` / used for quotas |
//! | `set_<name>=<value>` | | a server setting sent with every query |
//! | `chunked`, `chunked_send`, `chunked_recv` | `notchunked_optional` | chunked framing (both directions, or one): `notchunked_optional`, `chunked_optional`, `chunked`, `notchunked` |
//! | `pool_max_size`, `pool_min_idle` | `20`, `0` | connections at most, idle connections kept ready |
//! | `pool_acquire_timeout`, `pool_idle_timeout`, `pool_max_lifetime`, `pool_health_check_after` | `30s`, `10m`, `1h`, `60s` | `0` turns one off |
//! | `secure` | `false` (`true` with `clickhouses://`) | TLS; the default port becomes 9440 |
//! | `tls_ca_file`, `tls_cert_file` + `tls_key_file`, `tls_server_name` | | extra trusted CA (PEM), client certificate (mTLS), name to verify |
//! | `danger_disable_hostname_verification` | `false` | accept a certificate for another name (the chain is still checked) |
//! | `tls_roots` | `system` | roots that verify the server: `system`, `webpki` (feature `webpki-roots`), `both` |
//! | `load_balancing` | `in_order` | `in_order`, `round_robin`, `random` across `h1:9000,h2:9000,h3` |
//! | `host_cooldown` | `30s` | how long a host that failed is tried last |
//! | `tcp_keepalive` | `60s` | keepalive idle time (`0`: off) |
//!
//! # Cargo features
//!
//! All off by default except `tz`.
//!
//! | feature | adds |
//! |---|---|
//! | `tz` (on by default) | zoned DateTimes shown in their zone's local time (jiff's bundled time-zone database); without it they show in UTC marked ` UTC` |
//! | `chrono` | `chrono` date, time and duration conversions (`chrono::DateTime<chrono_tz::Tz>` in the column's zone) for columns and row fields |
//! | `time` | `time::Date`, `time::OffsetDateTime` (UTC), `time::Duration` |
//! | `jiff` | `jiff::civil::Date`, `jiff::Timestamp`, `jiff::ZonedDateTime` (bundled tz database), `jiff::SignedDuration` |
//! | `rust_decimal` | `rust_decimal::Decimal` ↔ Decimal(P ≤ 28) |
//! | `uuid` | `uuid::Uuid` row fields and UUID column conversions |
//! | `serde` | `Serialize` for [`Value`] and [`ValueRow`] (print dynamic rows as JSON) |
//! | `serde_json` | `serde_json::Value` row fields (JSON columns parsed; any column read as JSON); implies `serde` |
//! | `opentelemetry` | the current OpenTelemetry span's context is sent with each query (`TraceContext::current()`) |
//! | `webpki-roots` | Mozilla's roots bundled in the binary, for containers without a system trust store (`tls_roots=webpki`) |
//!
//! # Layers
//!
//! This crate's root holds what an application needs. The protocol itself — wire
//! readers, packets, compression framing, the connection state machine, buffer
//! pools, raw column storage — is the sans-IO crate `chnative-proto`, re-exported
//! as [`proto`]: the low level, for tools that drive the protocol themselves.
#![warn(missing_docs)]

mod block_insert;
pub mod cluster;
mod config;
mod conn;
mod error;
mod hosts;
mod ident;
mod insert;
mod netopts;
mod observe;
mod params;
mod pool;
mod query;
pub mod row;
mod session;
mod stream;
mod tls;
mod trace;
pub mod value;
mod value_insert;
#[cfg(feature = "serde")]
mod value_serde;

// Lets the derive's `::chnative::…` paths resolve inside this crate too.
extern crate self as chnative;

/// `#[derive(Enum)]`: a Rust enum ↔ an Enum8/Enum16 column by label; see the trait it
/// implements, [the `EnumLabels` trait](crate::row::EnumLabels).
pub use chnative_derive::Enum;
/// `#[derive(Row)]`: see the [row module](crate::row).
pub use chnative_derive::Row;
/// `#[derive(Variant)]`: a Rust enum of one-value variants ↔ a `Variant(…)` column,
/// read and inserted; see the [row module](crate::row).
pub use chnative_derive::Variant;
pub use row::{Inserter, RowStream};
pub use value::{Value, ValueRow, ValueRowStream};

/// The low level: the sans-IO protocol crate (`chnative-proto`) — wire readers and
/// writers, packets, compression framing, the connection state machine, buffer
/// pools, `Block::read` and raw column storage. Applications rarely need it; the
/// items they do need are re-exported at this crate's root.
pub use chnative_proto as proto;
pub use chnative_proto::chunked::Mode as ChunkMode;
/// Conversions of column values to and from Rust types (`chrono`, `time`, `jiff`,
/// `rust_decimal`, `uuid`, `std::net`, exact `Decimal`, Int256/UInt256): chnative-proto's
/// `convert` module. Not inlined, so the docs of the crates it re-exports under `ext`
/// are linked rather than copied.
#[doc(no_inline)]
pub use chnative_proto::convert;
pub use chnative_proto::convert::{I256, U256};
pub use chnative_proto::packet::{ProfileInfo, Progress, ServerHello};
pub use chnative_proto::view::{
    ArrayView, ColumnView, FixedValue, Keys, LowCardinalityView, NullableView, StrView, WireUuid,
};
pub use chnative_proto::{Block, Column, DataType};
pub use config::{Compression, Config};
pub use error::{Error, ErrorKind, Result, ServerError, TypeMismatch};
pub use insert::{fixed, BlockInsert, Insert, InsertData, InsertSummary, IntoInsertData};
pub use netopts::{LoadBalancing, TlsRoots};
pub use observe::Observer;
pub use params::{Params, ToParam};
pub use pool::{Client, PoolStatus};
pub use query::Query;
pub use session::Session;
pub use stream::{CancelHandle, QueryStream};
pub use trace::TraceContext;

use chnative_proto::ProtoError;
use conn::{new_query_id, Conn, ConnSlot, QueryId, QueryWire};

/// One connection to a ClickHouse server: a single socket, one call at a time
/// (`&mut self`). Most programs want the pooled [`Client`]; this is the layer
/// below it, for programs that want exactly one socket.
pub struct Connection {
    slot: ConnSlot,
    info: ServerInfo,
}

/// Facts the server told us at the handshake.
#[derive(Debug, Clone)]
pub struct ServerInfo {
    /// Server name ("ClickHouse").
    pub name: String,
    /// `major.minor.patch`.
    pub version: (u64, u64, u64),
    /// The server's protocol revision.
    pub revision: u64,
    /// The revision in use: min(ours, server's).
    pub negotiated_revision: u64,
    /// Server time zone.
    pub timezone: String,
    /// The server's display name.
    pub display_name: String,
    /// Whether the packets the client sends are chunked (negotiated in the
    /// handshake from the server's `proto_caps` and [`Config::chunked_send`]).
    pub chunked_send: bool,
    /// Whether the packets the client receives are chunked ([`Config::chunked_recv`]).
    pub chunked_recv: bool,
}

impl ServerInfo {
    fn of(conn: &Conn) -> ServerInfo {
        let h = conn.server();
        ServerInfo {
            name: h.name.clone(),
            version: (h.version_major, h.version_minor, h.version_patch),
            revision: h.revision,
            negotiated_revision: conn.revision(),
            timezone: h.timezone.clone(),
            display_name: h.display_name.clone(),
            chunked_send: conn.proto.chunking().send,
            chunked_recv: conn.proto.chunking().recv,
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

/// Starts a query on the connection in `slot` (see `stream` of [`Connection`]).
async fn slot_stream(slot: &mut ConnSlot, mut query: Query) -> Result<QueryStream<'_>> {
    let observer = std::mem::take(&mut query.observer);
    let deadline = crate::conn::query_deadline(query.timeout, slot.query_timeout());
    let q = crate::wire(query)?;
    // The connection stays in its slot until the Query is out: a future
    // dropped halfway (or cut short by the deadline) must leave it where
    // the next call finds (and finishes or closes) it.
    let start = async {
        slot.get().await?.send_query(&q, false, deadline).await?;
        slot.take().await
    };
    let conn = crate::conn::within(deadline, start).await?;
    Ok(QueryStream::new(conn, crate::pool::Home::Slot(slot), q.id).observed(observer))
}

/// The first value of the first row of a result, read by `T`'s typed-row rules
/// with `server_tz` (the server's time zone, or the query's `session_timezone`)
/// for DateTime columns that name none.
async fn scalar_of<T: Scalar>(mut s: QueryStream<'_>, server_tz: &str) -> Result<T> {
    let mut out: Option<T> = None;
    while let Some(block) = s.next().await? {
        if out.is_none() && block.rows() > 0 {
            let col = block
                .columns()
                .first()
                .ok_or_else(|| Error::from(ProtoError::violation("a block with rows has no columns")))?;
            // The zone only where a value may need it: no allocation for the rest.
            let name = col.type_name();
            let zoned = ["DateTime", "Dynamic", "JSON", "Object"].iter().any(|k| name.contains(k));
            let zone = if zoned { server_tz.to_string() } else { String::new() };
            let ctx = row::ReadContext { server_timezone: zone };
            out = Some(T::from_column(&col.view(), &ctx)?);
        }
    }
    if out.is_none() {
        // No rows: still check the type, so that a mismatch is reported as one.
        if let Some(col) = s.header().and_then(|h| h.columns().first()) {
            T::check(&col.view())?;
        }
    }
    out.ok_or_else(|| Error::no_rows("the query returned no rows"))
}

/// The calls of a type that owns one socket (a [`Connection`], a [`Session`]),
/// each taking `&mut self`. `$slot` names the `ConnSlot` in `self`.
macro_rules! single_socket_api {
    ($($slot:tt)+) => {
        /// What the server said about itself.
        pub fn server_info(&self) -> ServerInfo {
            self.info.clone()
        }

        /// False once the connection was closed after an error; make a new one then.
        /// (While a cancelled query is being finished in the background this says true;
        /// the next call waits for it.)
        pub fn is_usable(&self) -> bool {
            self.$($slot)+.peek().is_none_or(|c| !c.is_broken())
        }

        /// Starts a query and streams its result block by block.
        ///
        /// The query deadline ([`crate::Query::timeout`], else [`crate::Config::query_timeout`])
        /// runs from this call: a query that timed out before is finished in the
        /// background, and the wait for that counts.
        pub async fn stream(&mut self, query: impl Into<Query>) -> Result<QueryStream<'_>> {
            crate::slot_stream(&mut self.$($slot)+, query.into()).await
        }

        /// Runs a statement (DDL, INSERT … SELECT, SYSTEM …) and discards any result.
        pub async fn execute(&mut self, query: impl Into<Query>) -> Result<Progress> {
            self.stream(query).await?.finish_all().await
        }

        /// Runs a query returning one value: the first column of the first row, read
        /// by the rules of a typed-row field ([`Scalar`]).
        pub async fn query_scalar<T: Scalar>(&mut self, query: impl Into<Query>) -> Result<T> {
            let query: Query = query.into();
            let session_tz = query.session_timezone().map(str::to_string);
            // The slot and the server's zone borrowed apart: no copy of the zone.
            let stream = crate::slot_stream(&mut self.$($slot)+, query).await?;
            crate::scalar_of(stream, session_tz.as_deref().unwrap_or(&self.info.timezone)).await
        }

        /// Starts an INSERT into `table`: `table` or `db.table`, each part quoted as an
        /// identifier (parts may come quoted already, with backticks or double quotes;
        /// quote a name that holds a dot).
        pub fn insert<'a>(&mut self, table: &str) -> Insert<'_, 'a> {
            Insert::new(crate::pool::Target::Slot(&mut self.$($slot)+), table)
        }

        /// Opens one INSERT into `table` that takes any number of blocks (see
        /// [`BlockInsert`]); for settings, a query id or a deduplication token use
        /// [`Insert::open`].
        pub async fn insert_blocks(&mut self, table: &str) -> Result<BlockInsert<'_>> {
            self.insert(table).open().await
        }

        /// Checks the server answers.
        pub async fn ping(&mut self) -> Result<()> {
            self.$($slot)+.get().await?.ping().await
        }
    };
}
pub(crate) use single_socket_api;

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("server", &self.info.display_name)
            .field("usable", &self.is_usable())
            .finish()
    }
}

impl Connection {
    /// Connects with a connection string (see [`Config::from_url`]).
    pub async fn connect(url: &str) -> Result<Connection> {
        Self::connect_with(Config::from_url(url)?).await
    }

    /// Connects with a [`Config`] (to the first of its hosts that answers).
    pub async fn connect_with(config: Config) -> Result<Connection> {
        let conn = hosts::Connector::new(config)?.connect().await?;
        let info = ServerInfo::of(&conn);
        Ok(Connection { slot: ConnSlot::new(conn), info })
    }

    single_socket_api!(slot);
}

/// A value [`Client::query_scalar`] can return: any type a typed-row field can
/// have ([`row::FromColumn`]), read by the same rules (`u64` reads UInt8 … UInt64,
/// `f64` reads Float32, `Option<T>` reads Nullable(T), `String` must be UTF-8, …).
pub trait Scalar: Sized {
    /// Checks that `Self` can read a column of `col`'s type (the typed-row check,
    /// with the same error).
    fn check(col: &ColumnView<'_>) -> Result<()>;
    /// Reads row 0 of `col` (`ctx`: the server's time zone, for DateTime columns
    /// that name none).
    fn from_column(col: &ColumnView<'_>, ctx: &row::ReadContext) -> Result<Self>;
}

impl<T: for<'r> row::FromColumn<'r>> Scalar for T {
    fn check(col: &ColumnView<'_>) -> Result<()> {
        row::positional_check::<T>(col)
    }
    fn from_column(col: &ColumnView<'_>, ctx: &row::ReadContext) -> Result<Self> {
        Self::check(col)?;
        if col.is_empty() {
            return Err(Error::internal("query_scalar read a column without rows"));
        }
        row::Reader::<T>::new(col, ctx)?.get(0)
    }
}

/// Compiles the README's examples as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
