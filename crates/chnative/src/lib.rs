//! chnative: a ClickHouse client over the native TCP protocol.
//!
//! Three tiers over one protocol core. The **column tier**: a SELECT streams
//! borrowed blocks whose fixed-width columns are `&[T]` views of reusable aligned
//! buffers, and an INSERT sends columns from your slices with one copy each.
//! **Typed rows** ([`row`], `#[derive(Row)]`): [`Client::query`],
//! [`Client::insert_rows`], [`Client::inserter`]. **Dynamic rows** ([`value`]):
//! [`Client::query_rows`].
//!
//! ```no_run
//! # async fn demo() -> chnative::Result<()> {
//! use chnative::{params, Client};
//! let client = Client::connect("clickhouse://default@127.0.0.1:9000/default").await?;
//! let mut stream = client.stream(("SELECT number AS id, toString(number) AS name FROM numbers(10) WHERE id > {min:UInt64}", params! {"min" => 3u64})).await?;
//! while let Some(block) = stream.next().await? {
//!     let ids: &[u64] = block.column("id").unwrap().view().values::<u64>()?;
//!     let names = block.column("name").unwrap().view().as_strings()?;
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
//! pool when it is dropped.
//!
//! **Layers.** This crate's root holds what an application needs. The protocol
//! itself — wire readers, packets, compression framing, the connection state
//! machine, buffer pools, raw column storage — is the sans-IO crate
//! `chnative-proto`, re-exported as [`proto`]: the low level, for tools that
//! drive the protocol themselves.
//!
//! **Connections.** [`Client`] is a pool behind a cheap, cloneable, `Send + Sync`
//! handle (every call takes `&self`); a stream holds one pooled connection until
//! it is dropped. [`Session`] pins one pooled connection for calls that share
//! server-side state (`SET`, `USE`, temporary tables). [`Connection`] is the single
//! socket underneath, with `&mut self` calls. TLS, several hosts with failover,
//! and the pool's sizes are [`Config`] options (see the README).
#![warn(missing_docs)]

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

/// `#[derive(Enum)]`: a Rust enum ↔ an Enum8/Enum16 column by label; see [`row::EnumLabels`].
pub use chnative_derive::Enum;
/// `#[derive(Row)]`: see [`row`].
pub use chnative_derive::Row;
/// `#[derive(Variant)]`: a Rust enum of one-value variants ↔ a Variant column (read);
/// see [`row::VariantReader`].
pub use chnative_derive::Variant;
pub use row::{Inserter, RowStream};
pub use value::{Value, ValueRow, ValueRowStream};

/// The low level: the sans-IO protocol crate (`chnative-proto`) — wire readers and
/// writers, packets, compression framing, the connection state machine, buffer
/// pools, `Block::read` and raw column storage. Applications rarely need it; the
/// items they do need are re-exported at this crate's root.
pub use chnative_proto as proto;
pub use chnative_proto::chunked::Mode as ChunkMode;
pub use chnative_proto::convert::{self, I256, U256};
pub use chnative_proto::packet::{ProfileInfo, Progress, ServerHello};
pub use chnative_proto::view::{
    ArrayView, ColumnView, FixedValue, Keys, LowCardinalityView, NullableView, StrView, WireUuid,
};
pub use chnative_proto::{Block, Column, DataType};
pub use config::{Compression, Config};
pub use error::{Error, ErrorKind, Result, ServerError};
pub use insert::{fixed, Insert, InsertData, InsertSummary, IntoInsertData};
pub use netopts::LoadBalancing;
pub use observe::Observer;
pub use params::{Params, ToParam};
pub use pool::{Client, PoolStatus};
pub use query::Query;
pub use session::Session;
pub use stream::{CancelHandle, QueryStream};
pub use trace::TraceContext;

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
    let q = crate::wire(query)?;
    // The connection stays in its slot until the Query is out: a future
    // dropped halfway must leave it where the next call finds (and closes) it.
    slot.get().await?.send_query(&q, false).await?;
    let conn = slot.take().await?;
    Ok(QueryStream::new(conn, crate::pool::Home::Slot(slot), q.id).observed(observer))
}

/// The first value of the first row of a result, read by `T`'s typed-row rules
/// with `server_tz` (the server's time zone, or the query's `session_timezone`)
/// for DateTime columns that name none.
async fn scalar_of<T: Scalar>(mut s: QueryStream<'_>, server_tz: &str) -> Result<T> {
    let mut out: Option<T> = None;
    while let Some(block) = s.next().await? {
        if out.is_none() && block.rows() > 0 {
            let col = block.columns().first().ok_or_else(|| Error::Usage("the query returned no columns".into()))?;
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
    out.ok_or_else(|| Error::Usage("the query returned no rows".into()))
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
            return Err(Error::Usage("empty column".into()));
        }
        row::Reader::<T>::new(col, ctx)?.get(0)
    }
}

/// Compiles the README's examples as doctests.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
