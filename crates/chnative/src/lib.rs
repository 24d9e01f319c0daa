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
//! (or streamed with [`Client::fetch`]). Fields bind to columns by name, and their
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
//! let mut rows = client.fetch::<Name<'_>>("SELECT id, name FROM events").await?;
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
//! (Decimals, 128/256-bit integers, zoned DateTimes). [`Client::insert_values`]
//! converts every cell exactly to its column's type before sending.
//!
//! ```no_run
//! # async fn run(client: chnative::Client) -> chnative::Result<()> {
//! use chnative::{Value, ValueRow};
//!
//! let rows = client.fetch_all_values("SELECT name, count() AS n FROM events GROUP BY name LIMIT 3").await?;
//! for row in &rows {
//!     println!("{} {}", row["name"], row[1]);
//! }
//!
//! let names: std::sync::Arc<[String]> = vec!["id".to_string(), "name".to_string(), "score".to_string()].into();
//! let row = ValueRow::new(names, vec![Value::UInt64(7), Value::String(b"seven".to_vec()), Value::Null])?;
//! client.insert_values("events", &[row]).await?;
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
//!     .fetch_blocks(("SELECT id, name FROM events WHERE id > {min:UInt64}", params! {"min" => 10u64}))
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
//! connection until it is dropped, and owns it: what a `Client` returns (streams,
//! inserters, INSERT builders) is `Send + 'static` and can move into a spawned
//! task. [`Session`] pins one pooled connection for calls that share server-side
//! state (`SET`, `USE`, temporary tables). [`Connection`] is the single socket
//! underneath, with `&mut self` calls. A call dropped halfway (a timeout, a
//! `select!`) never leaves a connection in an unknown state in the pool: an
//! unfinished SELECT is cancelled and drained, and anything that cannot be
//! finished safely is closed.
//!
//! # One set of calls
//!
//! The three have the same calls, with the same names; the [`Executor`] trait
//! holds them for code that takes any of the three (`db: &mut impl Executor`).
//! A query `q` is a `&str`, a `String`, `(sql, params! {..})` or a [`Query`].
//!
//! | task | call | returns |
//! |---|---|---|
//! | run a statement (DDL, `INSERT … SELECT`) | `execute(q)` | [`Progress`] |
//! | stream typed rows | `fetch::<T>(q)` | [`RowStream`] |
//! | all / exactly one / at most one row | `fetch_all::<T>(q)`, `fetch_one`, `fetch_optional` | `Vec<T>`, `T`, `Option<T>` |
//! | one value | `fetch_scalar::<T>(q)` | `T` |
//! | stream blocks of columns | `fetch_blocks(q)` | [`QueryStream`] |
//! | stream / all dynamic rows | `fetch_values(q)`, `fetch_all_values(q)` | [`ValueRowStream`], `Vec<ValueRow>` |
//! | insert typed rows | `insert_rows(table, &rows)` (`.setting`, `.query_id`, `.deduplication_token`) | [`InsertSummary`] |
//! | insert dynamic rows | `insert_values(table, &rows)` (same options) | [`InsertSummary`] |
//! | insert columns | `insert(table).column("a", &a).send()` | [`InsertSummary`] |
//! | insert any number of blocks in one INSERT | `insert_blocks(table)`, or `insert(table).open()` | [`BlockInsert`] |
//! | a long-lived, buffering row writer | `inserter::<T>(table)` | [`Inserter`] |
//! | check the server answers | `ping()` | `()` |
//!
//! The names of 0.1 (`stream`, `query`, `query_scalar`, `query_rows`,
//! `fetch_all_rows`, `insert_value_rows`) still work, deprecated.
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
//! | `compression` | `auto` | `auto` (per query, from the link), `none`, `lz4`, `zstd` (level 1), `zstd:LEVEL` (-131072..=22) |
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
//! This crate's root holds what an application needs; [`row`] and [`value`] hold
//! the typed and dynamic row tiers' details, [`convert`] the conversions of
//! column values, and [`proto`] a chosen part of the low level (raw columns and
//! their views). The protocol itself — wire readers, packets, compression
//! framing, the connection state machine, buffer pools — is the sans-IO crate
//! `chnative-proto`, for tools that drive the protocol themselves.
#![warn(missing_docs)]

#[doc(hidden)]
pub mod __private;
mod block_insert;
mod blocks;
pub mod cluster;
mod config;
mod connection;
mod dial;
mod driver;
mod error;
mod executor;
mod hosts;
mod ident;
mod insert;
mod insert_send;
mod netopts;
mod observe;
mod params;
mod pool;
mod query;
pub mod row;
mod scalar;
mod session;
mod slot;
mod sql_zone;
mod stream;
mod tls;
mod trace;
mod transport;
pub mod value;
mod via;

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

/// The low level, a chosen part of the sans-IO protocol crate `chnative-proto`:
/// raw column storage and its views, for tools that convert whole columns
/// (Arrow, exporters) or read types the typed tiers do not cover. Applications
/// rarely need it; what they do need is at this crate's root.
///
/// The rest of `chnative-proto` (wire readers and writers, packets, compression
/// framing, the connection state machine, buffer pools, SIMD kernels) is not
/// re-exported: a program that drives the protocol itself depends on
/// `chnative-proto` directly, at the version this crate uses.
pub mod proto {
    pub use chnative_proto::column::{
        AggregateState, DynamicData, JsonData, StateValue, JSON_AS_STRING_SETTING, JSON_STRING,
    };
    /// Conversions of column values to and from Rust types (also at [`crate::convert`]).
    #[doc(no_inline)]
    pub use chnative_proto::convert;
    pub use chnative_proto::insert::VARIANT_NULL;
    pub use chnative_proto::qbit::{Element, QBitValue, QBitView};
    pub use chnative_proto::types::IntervalKind;
    pub use chnative_proto::view::{
        AggregateStatesView, ArrayView, ColumnView, DynamicView, FixedValue, JsonValue, JsonView, Keys,
        LowCardinalityView, NullableView, OwnedValue, StrView, VariantView, WireUuid,
    };
    pub use chnative_proto::{AlignedBuf, Block, BlockInfo, Column, ColumnData, DataType, ProtoError};
}
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
pub use connection::Connection;
pub use driver::ServerInfo;
pub use error::{Error, ErrorKind, Result, ServerError, TypeMismatch};
pub use executor::{Executor, InsertRows, InsertValues};
pub use insert::{fixed, BlockInsert, Insert, InsertData, InsertSummary, IntoInsertData, StartOffsets};
pub use netopts::{LoadBalancing, TlsRoots};
pub use observe::Observer;
pub use params::{Params, ToParam};
pub use pool::{Client, PoolStatus};
pub use query::Query;
pub use scalar::Scalar;
pub use session::Session;
pub use stream::{CancelHandle, QueryStream};
pub use trace::TraceContext;

/// Compiles the README's examples as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
