//! Apache Arrow for [chnative](https://docs.rs/chnative): ClickHouse query results
//! as [`RecordBatch`]es, one per block, and INSERTs from record batches.
//!
//! ```no_run
//! # async fn demo() -> chnative_arrow::Result<()> {
//! use chnative::Client;
//! let client = Client::connect("clickhouse://default@127.0.0.1:9000/default").await?;
//!
//! let mut stream = chnative_arrow::query_arrow(&client, "SELECT number, toString(number) AS s FROM numbers(10)").await?;
//! let schema = stream.schema().await?;
//! let mut batches = Vec::new();
//! while let Some(batch) = stream.next().await? {
//!     batches.push(batch); // one per block; memory held is what you keep
//! }
//!
//! client.execute("CREATE TABLE IF NOT EXISTS copy (number UInt64, s String) ENGINE = Memory").await?;
//! let summary = chnative_arrow::insert_arrow(&client, "copy", &batches).await?;
//! println!("{schema:?}: {} rows copied", summary.rows);
//! # Ok(()) }
//! ```
//!
//! # Why a separate crate
//!
//! Arrow lives here rather than behind a feature of `chnative`: arrow-rs is a large
//! dependency tree that the core should not compile for users who never touch
//! Arrow, and arrow-rs makes a breaking release every few months. A crate of its
//! own lets its Arrow version move (with the ADBC crates' range) without a breaking
//! release of the client.
//!
//! This crate uses arrow-rs 59: the version DataFusion 55 (chnative-datafusion) is
//! on, inside the range the ADBC crates (`adbc_core`, `adbc_ffi` 0.25: `>=58, <61`)
//! accept, so an application using them together gets one Arrow build.
//!
//! # Reading: memory and copies
//!
//! [`ArrowStream::next`] converts one block into one batch; the stream holds no
//! other block, so memory is bounded by one block plus the batches you keep.
//! Fixed-width columns whose bytes are what Arrow expects (integers, floats,
//! Date32, DateTime64(0/3/6/9), Decimal128/256, FixedString, IPv4/IPv6, the
//! 128/256-bit integers) become Arrow buffers **without a copy**: the batch holds a
//! reference-counted share of the block's aligned buffer, which goes back to the
//! connection's pool when the batch is dropped. Strings share their byte blob and
//! convert the offsets once (see [`StringType`] for the measured choice). The other
//! types are converted in one pass. The buffers converted for a batch (offsets,
//! widened dates and times) are reused for the next batch when the caller has
//! dropped it by then, so a stream read batch by batch allocates them once.
//!
//! # Type mapping (ClickHouse 26.9 → Arrow)
//!
//! Every top-level field carries its ClickHouse type in the field metadata key
//! `clickhouse.type`.
//!
//! | ClickHouse | Arrow | copy? |
//! |---|---|---|
//! | Int8…Int64, UInt8…UInt64, Float32, Float64 | the same | none |
//! | Int128, UInt128 / Int256, UInt256 | FixedSizeBinary(16) / (32), little-endian two's complement (as the server's own Arrow output) | none |
//! | BFloat16 | Float32 (exact) | widened |
//! | Bool | Boolean | packed to bits |
//! | String | Utf8 (default; see [`StringType`]: LargeUtf8, Utf8View, Binary) | blob shared, offsets converted |
//! | FixedString(N) | FixedSizeBinary(N) | none |
//! | Date | Date32 | widened |
//! | Date32 | Date32 | none |
//! | DateTime(tz) | Timestamp(Second, tz) (tz: the column's, else the server's) | widened |
//! | DateTime64(P, tz) | Timestamp(s/ms/µs/ns, tz): the unit of P's precision, or the next finer one | none for P = 0, 3, 6, 9; rescaled otherwise |
//! | Time / Time64(P) | Duration(Second) / Duration(unit of P) | widened / none for P = 0, 3, 6, 9 |
//! | IntervalNanosecond…IntervalSecond | Duration(unit) | none |
//! | other Interval kinds | Int64 (count of the unit named by `clickhouse.type`) | none |
//! | Decimal32(S), Decimal64(S) | Decimal128(P, S) | widened |
//! | Decimal128(S) / Decimal256(S) | Decimal128(P, S) / Decimal256(P, S) | none |
//! | UUID | FixedSizeBinary(16), extension `arrow.uuid` (RFC 4122 byte order) | bytes reordered |
//! | IPv4 | UInt32 (the address as a number, as the server's own Arrow output) | none |
//! | IPv6 | FixedSizeBinary(16) (network order) | none |
//! | Enum8 / Enum16 | Dictionary(Int16 / Int32, Utf8) of the labels in declaration order | keys mapped |
//! | LowCardinality(T) | Dictionary(Int32, T) with the block's dictionary | keys widened |
//! | Nullable(T) | T, nullable (validity from the null map) | null map packed |
//! | Array(T) | List(T) (field `item`) | offsets converted |
//! | Map(K, V) | Map(entries: Struct(key, value)), unsorted | offsets converted |
//! | Tuple(…) | Struct (element names, or `1`, `2`, … for unnamed elements) | none at this level |
//! | Nested(…) | List(Struct(…)) | as Array |
//! | Point, Ring, LineString, Polygon, MultiLineString, MultiPolygon | their structure: Struct(1, 2 Float64), Lists of those | as Tuple/Array |
//! | SimpleAggregateFunction(f, T) | as T | |
//! | JSON | Utf8, extension `arrow.json` (the server's text; [`query_arrow`] asks for it) | offsets converted |
//! | Nothing / Nullable(Nothing) | Null | none |
//! | QBit(Float32/BFloat16/Float64, N) | FixedSizeList(Float32 / Float32 / Float64, N): the vectors, bit planes transposed back | transposed |
//! | Variant(T1, …) | dense Union: one member per alternative (named by its type), then a `null` member of type Null for NULL rows | discriminators mapped |
//! | Dynamic | with [`DynamicMode::Union`]: dense Union of the listed types (one member each, named by its type), then a `null` member; by default refused (see [`DynamicMode`]) | discriminators mapped |
//! | strided QBit, AggregateFunction | refused with [`Error::Unsupported`] naming the column and what to do (CAST in the query, or finalize the state) | |
//!
//! # Writing (Arrow → ClickHouse)
//!
//! [`insert_arrow`] and [`ArrowInsert`] look up the table's column types first and
//! check every batch's schema against them before anything is sent (the types, and
//! the vectors batches were converted into, are kept with the client for the next
//! INSERT into the table; every INSERT's header from the server is compared with
//! them before its data is sent). Each type
//! above reads back from the Arrow type it produces, and also: any Arrow string or
//! binary type into String, FixedString (padded) and JSON; Timestamp of any unit
//! into DateTime/DateTime64 (exact rescaling: a value with more precision than the
//! column keeps is an error, not a truncation); Duration into Time/Time64/Interval;
//! UInt32 into DateTime and IPv4; Int8/Int16 values or string labels into Enums;
//! Decimal32…256 of the column's scale into any Decimal (range-checked against the
//! precision); Decimal(P, 0) into Int128/Int256; dictionaries of any of these
//! (unpacked); Null arrays into Nullable columns; fixed-size or plain lists of
//! floats of the right length into a top-level QBit column; dense or sparse unions
//! into Variant columns (members matched to alternatives by name, or by Arrow type). Buffers whose bytes are already
//! Native's (integers, floats, Date32, DateTime64 of the same unit, FixedString,
//! 128/256-bit values, the string bytes) are sent without an intermediate copy.
#![warn(missing_docs)]

mod read;
mod schema;
mod write;

use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{ArrowError, DataType as ArrowType, Field, Schema, SchemaRef};
use chnative::proto::JSON_AS_STRING_SETTING;
use chnative::{BlockInsert, CancelHandle, Client, DataType, InsertData, InsertSummary, Query, QueryStream};

pub use read::{CLICKHOUSE_TYPE_KEY, EXTENSION_NAME_KEY};
pub use schema::clickhouse_type;

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// From the client: the server, the connection, a bad request.
    #[error(transparent)]
    Client(#[from] chnative::Error),
    /// From the protocol layer (a column read as a type it does not have).
    #[error(transparent)]
    Proto(#[from] chnative::proto::ProtoError),
    /// From arrow-rs, building an array or batch.
    #[error("arrow: {0}")]
    Arrow(#[from] ArrowError),
    /// A ClickHouse type with no Arrow form here.
    #[error("column `{column}` of type {ty} cannot be read as Arrow: {reason}")]
    Unsupported {
        /// The column.
        column: String,
        /// Its ClickHouse type.
        ty: String,
        /// Why, and what to do instead.
        reason: String,
    },
    /// Arrow data that does not fit the table's column.
    #[error("column `{column}`: Arrow {arrow} does not fit {clickhouse}: {reason}")]
    Mismatch {
        /// The column.
        column: String,
        /// The Arrow type given.
        arrow: String,
        /// The table column's ClickHouse type.
        clickhouse: String,
        /// What does not fit.
        reason: String,
    },
    /// A value that cannot be converted (out of range, invalid UTF-8, …).
    #[error("{0}")]
    Conversion(String),
    /// The server's data broke an expectation (a bug or a corrupt stream).
    #[error("protocol: {0}")]
    Protocol(String),
    /// A request that cannot be made as given.
    #[error("{0}")]
    Usage(String),
}

impl Error {
    /// Names the column a conversion error happened in.
    pub(crate) fn in_column(self, column: &str) -> Error {
        match self {
            Error::Conversion(m) => Error::Conversion(format!("column `{column}`: {m}")),
            Error::Protocol(m) => Error::Protocol(format!("column `{column}`: {m}")),
            e => e,
        }
    }
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The Arrow type String columns are read as.
///
/// All four share the block's string bytes without copying them; they differ in
/// what is built per row. Measured on this crate's benchmark (1M hits-like rows,
/// `cargo run -p chnative-bench --release --bin arrow_bench`): Utf8 builds 4 bytes
/// of offsets per row in one pass and was the fastest; LargeUtf8 builds 8;
/// Utf8View builds a 16-byte view per row (copying up to 12 bytes of short strings
/// into it), which costs more here but lets consumers compare prefixes without
/// touching the blob. Utf8 is the default; a block of more than 2 GiB of strings
/// needs LargeUtf8.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StringType {
    /// `Utf8`: i32 offsets (the default). The bytes must be UTF-8 (checked,
    /// skipped for columns the decoder found to be ASCII).
    #[default]
    Utf8,
    /// `LargeUtf8`: i64 offsets.
    LargeUtf8,
    /// `Utf8View`: 16-byte views into the shared blob.
    Utf8View,
    /// `Binary`: i32 offsets, any bytes (no UTF-8 check).
    Binary,
}

impl StringType {
    fn data_type(self) -> ArrowType {
        match self {
            StringType::Utf8 => ArrowType::Utf8,
            StringType::LargeUtf8 => ArrowType::LargeUtf8,
            StringType::Utf8View => ArrowType::Utf8View,
            StringType::Binary => ArrowType::Binary,
        }
    }
}

/// How `Dynamic` columns are read.
///
/// A record batch stream has one schema, fixed before the first batch, but a
/// Dynamic column's types are only known block by block (each block lists the
/// types its rows hold, and a later block may bring a new one). There is no
/// Arrow type that fits every Dynamic result without knowing its types, so the
/// types are declared: [`DynamicMode::Union`] reads every Dynamic column as a
/// dense Union of the listed types, the same shape as a `Variant` of those types.
/// A value of a type not listed is an error naming that type (never a silent
/// NULL or a changed schema). To find the types a column holds, ask the server:
/// `SELECT DISTINCT dynamicType(col) FROM t`. Without a declaration Dynamic is
/// refused with a hint; CASTing in the query (`col::String`,
/// `col::Variant(Int64, String)`) works too.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum DynamicMode {
    /// Refuse Dynamic columns with [`Error::Unsupported`] naming the column and the ways out (the default).
    #[default]
    Refuse,
    /// A dense Union with one member per listed ClickHouse type (as the server
    /// spells them, e.g. `"Int64"`, `"String"`, `"Array(Int64)"`; members are named
    /// by these names and typed by this crate's mapping), then a `null` member of
    /// type Null for NULL rows. Applies to every Dynamic column of the result,
    /// nested ones included.
    Union(Vec<String>),
}

/// Choices for reading results as Arrow.
#[derive(Debug, Clone, Default)]
pub struct ArrowOptions {
    /// How String columns are read.
    pub strings: StringType,
    /// The zone of DateTime / DateTime64 columns whose type names none (the
    /// server's zone: [`query_arrow`] fills it in from the client).
    pub server_timezone: Option<String>,
    /// How Dynamic columns are read (refused unless their types are declared).
    pub dynamic: DynamicMode,
}

impl ArrowOptions {
    fn ctx(&self) -> read::Ctx {
        read::Ctx {
            strings: self.strings,
            server_tz: self.server_timezone.as_deref().map(Arc::from),
            dynamic: self.dynamic.clone(),
        }
    }
}

/// The Arrow field a column named `name` of ClickHouse type `type_name` is read as.
pub fn arrow_field(name: &str, type_name: &str, options: &ArrowOptions) -> Result<Field> {
    let ty = DataType::parse(type_name).map_err(chnative::Error::from)?;
    let (_, field) = read::plan_field(name, &ty, &options.ctx())?;
    let mut meta = field.metadata().clone();
    meta.insert(CLICKHOUSE_TYPE_KEY.to_string(), type_name.to_string());
    Ok(field.with_metadata(meta))
}

/// A SELECT streamed as record batches, one per block. Made by [`query_arrow`],
/// or by [`ArrowStream::new`] over any [`QueryStream`] (a `Session`'s or a
/// `Connection`'s).
///
/// Dropping it before the end cancels the query, like dropping the stream.
pub struct ArrowStream<'c> {
    stream: QueryStream<'c>,
    ctx: read::Ctx,
    plan: Option<read::BlockPlan>,
    pending: Option<RecordBatch>,
    done: bool,
}

impl<'c> ArrowStream<'c> {
    /// Reads `stream`'s blocks as Arrow with `options`. JSON columns need the
    /// query to have been sent with `output_format_native_write_json_as_string = 1`
    /// (as [`query_arrow`] does).
    pub fn new(stream: QueryStream<'c>, options: &ArrowOptions) -> Self {
        ArrowStream { stream, ctx: options.ctx(), plan: None, pending: None, done: false }
    }

    /// The result's schema. It comes with the first block, which this reads (and
    /// keeps for [`ArrowStream::next`]) if it has not arrived yet.
    pub async fn schema(&mut self) -> Result<SchemaRef> {
        if self.plan.is_none() && !self.done {
            self.pending = self.pull().await?;
        }
        Ok(match &self.plan {
            Some(p) => p.schema.clone(),
            None => Arc::new(Schema::empty()),
        })
    }

    /// The next block as a record batch, or `None` at the end of the result.
    pub async fn next(&mut self) -> Result<Option<RecordBatch>> {
        if let Some(b) = self.pending.take() {
            return Ok(Some(b));
        }
        self.pull().await
    }

    async fn pull(&mut self) -> Result<Option<RecordBatch>> {
        if self.done {
            return Ok(None);
        }
        let block = match self.stream.next().await {
            Ok(b) => b,
            Err(e) => {
                self.done = true;
                return Err(e.into());
            }
        };
        match block {
            Some(block) => {
                if self.plan.is_none() {
                    // A data block has the header's names and types.
                    self.plan = Some(read::BlockPlan::new(block, &self.ctx)?);
                }
                let plan = self.plan.as_ref().expect("planned above");
                plan.convert(block).map(Some)
            }
            None => {
                self.done = true;
                if self.plan.is_none() {
                    if let Some(h) = self.stream.header() {
                        self.plan = Some(read::BlockPlan::new(h, &self.ctx)?);
                    }
                }
                Ok(None)
            }
        }
    }

    /// A handle that cancels the query from anywhere (see [`CancelHandle`]).
    pub fn cancel_handle(&self) -> CancelHandle {
        self.stream.cancel_handle()
    }

    /// The query's id.
    pub fn query_id(&self) -> &str {
        self.stream.query_id()
    }

    /// Reads every remaining batch.
    pub async fn collect(mut self) -> Result<Vec<RecordBatch>> {
        let mut out = Vec::new();
        while let Some(b) = self.next().await? {
            out.push(b);
        }
        Ok(out)
    }
}

/// Runs a SELECT and streams its result as record batches (see [`ArrowStream`]),
/// with the default [`ArrowOptions`] and, for DateTime columns whose type names
/// no zone, the zone the server shows them in (its own, or the `session_timezone`
/// in force: see [`QueryStream::timezone`](chnative::QueryStream::timezone)).
pub async fn query_arrow(client: &Client, query: impl Into<Query>) -> Result<ArrowStream<'_>> {
    let stream = start(client, query.into()).await?;
    let options = ArrowOptions { server_timezone: Some(stream.timezone().to_string()), ..Default::default() };
    Ok(ArrowStream::new(stream, &options))
}

/// [`query_arrow`] with chosen options (`server_timezone` is used as given).
pub async fn query_arrow_with<'c>(
    client: &'c Client,
    query: impl Into<Query>,
    options: &ArrowOptions,
) -> Result<ArrowStream<'c>> {
    let stream = start(client, query.into()).await?;
    Ok(ArrowStream::new(stream, options))
}

async fn start(client: &Client, mut query: Query) -> Result<chnative::QueryStream<'_>> {
    // JSON columns as text. Only servers that know the setting get it (settings go
    // out as important, and an old server refuses one it does not know); on 24.x a
    // JSON column then fails with an error naming the setting.
    if client.server_info().sends_json_as_text() {
        query = query.setting(JSON_AS_STRING_SETTING, "1");
    }
    Ok(client.fetch_blocks(query).await?)
}

/// A column of a table, as [`describe_table`] reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableColumnInfo {
    /// Column name.
    pub name: String,
    /// ClickHouse type.
    pub type_name: String,
    /// `DEFAULT`, `MATERIALIZED`, `ALIAS`, `EPHEMERAL` or empty.
    pub default_kind: String,
}

/// Splits `db.table` at its first unquoted dot, unquoting backquoted parts.
pub(crate) fn split_table(name: &str) -> Result<(Option<String>, String)> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = name.chars();
    while let Some(c) = chars.next() {
        match c {
            '`' | '"' if !quoted && cur.is_empty() => quoted = true,
            '`' | '"' if quoted => quoted = false,
            '\\' if quoted => cur.extend(chars.next()),
            '.' if !quoted => parts.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    parts.push(cur);
    match parts.len() {
        1 if !parts[0].is_empty() => Ok((None, parts.remove(0))),
        2 if !parts[0].is_empty() && !parts[1].is_empty() => {
            let t = parts.pop().unwrap_or_default();
            Ok((parts.pop(), t))
        }
        _ => Err(Error::Usage(format!("table name {name:?}: expected `table` or `database.table`"))),
    }
}

/// The columns of `table` (`table` or `database.table`) from `DESCRIBE TABLE`.
pub async fn describe_table(client: &Client, table: &str) -> Result<Vec<TableColumnInfo>> {
    let (db, t) = split_table(table)?;
    let q = match db {
        Some(db) => Query::new("DESCRIBE TABLE {db:Identifier}.{t:Identifier}").bind("db", db).bind("t", t),
        None => Query::new("DESCRIBE TABLE {t:Identifier}").bind("t", t),
    };
    let mut stream = client.fetch_blocks(q).await?;
    let mut out = Vec::new();
    while let Some(block) = stream.next().await? {
        let names = block.try_column("name").map_err(chnative::Error::from)?.view();
        let types = block.try_column("type").map_err(chnative::Error::from)?.view();
        let kinds = block.try_column("default_type").map_err(chnative::Error::from)?.view();
        let (names, types, kinds) = (names.as_strings()?, types.as_strings()?, kinds.as_strings()?);
        for i in 0..block.rows() {
            let s = |v: &chnative::StrView<'_>| String::from_utf8_lossy(v.bytes(i)).into_owned();
            out.push(TableColumnInfo { name: s(&names), type_name: s(&types), default_kind: s(&kinds) });
        }
    }
    Ok(out)
}

/// The Arrow schema of `table`'s columns (as [`query_arrow`] would read them).
pub async fn table_schema(client: &Client, table: &str) -> Result<Schema> {
    let options = ArrowOptions { server_timezone: Some(client.server_info().timezone), ..Default::default() };
    let fields = describe_table(client, table)
        .await?
        .iter()
        .filter(|c| c.default_kind != "ALIAS")
        .map(|c| arrow_field(&c.name, &c.type_name, &options))
        .collect::<Result<Vec<_>>>()?;
    Ok(Schema::new(fields))
}

/// An INSERT fed with record batches, all in one INSERT statement (a
/// [`BlockInsert`] underneath: see it for what a failure leaves on the server).
///
/// [`ArrowInsert::open`] learns the table's column types; each batch's schema
/// is checked against them, and its values converted, before any of it is
/// sent. The first write starts the INSERT and checks the batch against the
/// table's header (the server's own types of the columns) before sending it.
///
/// What an INSERT learned is kept with the client for the next INSERT into the
/// same table: the column types (so `open` asks the server nothing; every
/// INSERT's header is still compared with them before data is sent, and a
/// table changed meanwhile is looked up again) and the vectors the batches
/// were converted into.
pub struct ArrowInsert<'c> {
    client: &'c Client,
    /// `None` once the INSERT was ended after a refused header.
    ins: Option<BlockInsert<'c>>,
    kept: write::Kept,
    /// Whether `kept.columns` came from this client's memory of the table
    /// rather than from the server for this INSERT.
    remembered: bool,
    /// Whether the INSERT was started (by the first batch with rows).
    started: bool,
    checked: Option<SchemaRef>,
}

impl Drop for ArrowInsert<'_> {
    fn drop(&mut self) {
        // The types (remembered ones are checked against the next INSERT's
        // header before use) and the conversion vectors, for the next INSERT.
        if !self.kept.table.is_empty() {
            self.client.extension::<write::KeptTables>().keep(std::mem::take(&mut self.kept));
        }
    }
}

fn refused(table: &str) -> Error {
    Error::Usage(format!("the INSERT into {table} was refused before any data was sent; start a new one"))
}

/// An empty vector with `v`'s memory, for elements of another lifetime. The
/// standard library collects a mapped `into_iter()` in place when the
/// element layouts agree (they do: only lifetimes differ), so no allocation.
fn recycle<T, U>(mut v: Vec<T>) -> Vec<U> {
    v.clear();
    v.into_iter().map(|_| unreachable!("the vector was cleared")).collect()
}

impl<'c> ArrowInsert<'c> {
    /// Opens an INSERT into `table` (`table` or `database.table`).
    pub async fn open(client: &'c Client, table: &str) -> Result<ArrowInsert<'c>> {
        let (kept, remembered) = match client.extension::<write::KeptTables>().take(table) {
            Some(k) => (k, true),
            None => (write::Kept::new(table, insertable_columns(client, table).await?), false),
        };
        let ins = client.insert_blocks(table).await?;
        Ok(ArrowInsert { client, ins: Some(ins), kept, remembered, started: false, checked: None })
    }

    /// Checks `schema` against the table without sending anything. For a
    /// table this client inserted into before, the check is against the types
    /// it learned then; the first write checks the batch again against the
    /// server's header before sending it.
    pub fn check_schema(&self, schema: &Schema) -> Result<()> {
        write::check_schema(schema, &self.kept.columns, &self.kept.table)
    }

    /// [`ArrowInsert::check_schema`]; a refusal by types remembered from an
    /// earlier INSERT is checked again against the table as it is now.
    async fn check_schema_now(&mut self, schema: &Schema) -> Result<()> {
        match self.check_schema(schema) {
            Err(_) if self.remembered => {
                self.relearn().await?;
                self.check_schema(schema)
            }
            res => res,
        }
    }

    /// Learns the table's columns from the server again.
    async fn relearn(&mut self) -> Result<()> {
        // The INSERT's connection goes back to the pool first, so that a pool
        // of one connection serves the DESCRIBE; an INSERT not started yet is
        // opened again after it.
        let reopen = self.ins.take().is_some() && !self.started;
        self.kept.columns = insertable_columns(self.client, &self.kept.table).await?;
        self.remembered = false;
        if reopen {
            self.ins = Some(self.client.insert_blocks(&self.kept.table).await?);
        }
        Ok(())
    }

    /// Sends `batch`'s rows as part of the INSERT. Its columns are matched to the
    /// table's by name; table columns it leaves out must have a DEFAULT.
    pub async fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        if self.checked.as_ref() != Some(&batch.schema()) {
            self.check_schema_now(&batch.schema()).await?;
            self.checked = Some(batch.schema());
        }
        if batch.num_rows() == 0 {
            return Ok(());
        }
        if !self.started {
            self.start(batch).await?;
        }
        let mut prepared = std::mem::take(&mut self.kept.prepared);
        let mut prepare_failed = false;
        let k = &mut self.kept;
        let res = match write::prepare_batch(batch, &k.columns, &k.table, &mut k.pool, &mut prepared) {
            Ok(()) => {
                let mut data: Vec<(&str, InsertData<'_>)> = recycle(std::mem::take(&mut k.data));
                data.extend(prepared.iter().map(|(i, p)| (k.columns[*i].name.as_str(), p.data())));
                let res = match self.ins.as_mut() {
                    Some(ins) => ins.write_columns(&data).await.map_err(Error::from),
                    None => Err(refused(&k.table)),
                };
                self.kept.data = recycle(data);
                res
            }
            Err(e) => {
                prepare_failed = true;
                Err(e)
            }
        };
        for (_, p) in prepared.drain(..) {
            self.kept.pool.give(p);
        }
        self.kept.prepared = prepared;
        if prepare_failed && self.started && self.rows() == 0 {
            // Refused before any data went out (a value the column does not
            // take): end the started INSERT unsent, so that the connection
            // stays usable, and be ready for another first batch, as before
            // the statement was sent.
            self.unstart().await?;
        }
        res
    }

    /// Ends the started INSERT, which has sent no data, and opens a new one.
    async fn unstart(&mut self) -> Result<()> {
        if let Some(ins) = self.ins.take() {
            ins.end().await?;
        }
        self.started = false;
        self.ins = Some(self.client.insert_blocks(&self.kept.table).await?);
        Ok(())
    }

    /// Starts the INSERT with `batch`'s columns and checks the table's header
    /// (the server's types of those columns) against the types the batch was
    /// checked with; a table changed since they were learned is looked up
    /// again and the batch checked anew. A refused batch ends the INSERT with
    /// nothing sent, the connection usable.
    async fn start(&mut self, batch: &RecordBatch) -> Result<()> {
        let schema = batch.schema();
        let mut names: Vec<&str> = recycle(std::mem::take(&mut self.kept.names));
        names.extend(schema.fields().iter().map(|f| f.name().as_str()));
        let Some(ins) = self.ins.as_mut() else { return Err(refused(&self.kept.table)) };
        let started = ins.start(&names).await.map(|h| write::header_agrees(h, &self.kept.columns));
        self.kept.names = recycle(names);
        self.started = true;
        match started {
            Ok(true) => {
                self.remembered = false;
                return Ok(());
            }
            Ok(false) => {}
            // The table may have lost a column since its types were learned:
            // the check against the table as it is now names the problem.
            Err(e) if self.remembered => {
                self.relearn().await?;
                self.check_schema(&schema)?;
                return Err(e.into());
            }
            Err(e) => return Err(e.into()),
        }
        // The table changed: its header has the truth for the batch's columns.
        if let Some(ins) = &self.ins {
            write::learn_header(ins.header(), &mut self.kept.columns);
        }
        self.remembered = false;
        if let Err(e) = self.check_schema(&schema) {
            self.checked = None;
            if let Some(ins) = self.ins.take() {
                ins.end().await?;
            }
            return Err(e);
        }
        Ok(())
    }

    /// Ends the INSERT and waits for the server to confirm it.
    pub async fn end(mut self) -> Result<InsertSummary> {
        match self.ins.take() {
            Some(ins) => Ok(ins.end().await?),
            None => Err(refused(&self.kept.table)),
        }
    }

    /// Rows sent so far.
    pub fn rows(&self) -> u64 {
        self.ins.as_ref().map_or(0, BlockInsert::rows)
    }
}

async fn insertable_columns(client: &Client, table: &str) -> Result<Vec<write::TableColumn>> {
    let mut out = Vec::new();
    for c in describe_table(client, table).await? {
        if c.default_kind == "MATERIALIZED" || c.default_kind == "ALIAS" {
            continue;
        }
        let ty = DataType::parse(&c.type_name).map_err(chnative::Error::from)?;
        out.push(write::TableColumn { name: c.name, ty, type_name: c.type_name });
    }
    Ok(out)
}

/// Inserts `batches` into `table` in one INSERT. Every batch's schema is checked
/// against the table before anything is sent; each batch's values are converted
/// (and checked: ranges, Enum labels, NULLs, precision) before that batch is sent.
/// A value refused in a later batch aborts the INSERT the way a failed
/// [`BlockInsert`] does: the server discards the rows it has not written yet (all
/// of them for an INSERT smaller than one part, `min_insert_block_size_rows`).
pub async fn insert_arrow(client: &Client, table: &str, batches: &[RecordBatch]) -> Result<InsertSummary> {
    let mut ins = ArrowInsert::open(client, table).await?;
    for b in batches {
        ins.check_schema_now(&b.schema()).await?;
    }
    for b in batches {
        ins.write(b).await?;
    }
    ins.end().await
}
