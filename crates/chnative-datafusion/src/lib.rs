//! An [Apache DataFusion](https://datafusion.apache.org) table provider for ClickHouse,
//! on [chnative](https://docs.rs/chnative) and [chnative-arrow](https://docs.rs/chnative-arrow).
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use datafusion::prelude::SessionContext;
//! use chnative_datafusion::ClickHouseTable;
//!
//! let table = ClickHouseTable::open("clickhouse://default@127.0.0.1:9000/default", "hits").await?;
//! let ctx = SessionContext::new();
//! ctx.register_table("hits", Arc::new(table))?;
//! // (`ctx.sql` needs DataFusion's `sql` feature in your own dependency.)
//! # Ok(()) }
//! ```
//!
//! # What is pushed down
//!
//! - **Projection**: only the columns the plan needs are selected.
//! - **Filters**: comparisons (`= != < <= > >=`), `AND`/`OR`/`NOT`, `IN` lists,
//!   `BETWEEN`, `IS [NOT] NULL` and `LIKE` without `_`, between a column and a literal,
//!   on integer, String, Bool, Date, DateTime and DateTime64(3/6/9) columns. Values go
//!   as `{name:Type}` query parameters, never spliced into the text. Each is reported
//!   `Exact` (DataFusion does not evaluate it again); everything else is `Unsupported`
//!   and evaluated by DataFusion (see the `filter` module's notes for why float
//!   comparisons, `ILIKE` and `_` patterns stay out).
//! - **Limit**: `LIMIT n` in each partition's query (when no filter stays above the scan).
//!
//! # Partitions
//!
//! A scan has one partition per shard ([`ClickHouseTableBuilder::shards`] or
//! [`ClickHouseTableBuilder::cluster`]), each split into ranges of the table's first
//! sorting-key column ([`ClickHouseTableBuilder::key_ranges`]: equal-width ranges
//! between its min and max, for integer, Date and DateTime keys). Every partition is a
//! query on its own connection, run in parallel by DataFusion.
//!
//! # Shipping a scan
//!
//! [`ClickHouseScanExec::config`] is a [`ScanConfig`]: plain data (serde) naming the
//! endpoints, the SQL pieces and parameters of every partition. An engine that ships
//! plans (Ballista-style) serializes it and rebuilds the plan on a worker with
//! [`ClickHouseScanExec::try_new`]; connections are made when a partition executes.
//!
//! # Statistics
//!
//! Row count and uncompressed size from `system.tables` (`total_rows`,
//! `total_bytes_uncompressed`), summed over shards, read when the table is opened and
//! always reported `Inexact`.
#![warn(missing_docs)]

pub mod config;
mod exec;
mod filter;
mod pushdown;

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::catalog::Session;
use datafusion::catalog::TableProvider;
use datafusion::common::{DataFusionError, Statistics};
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown, TableType};
use datafusion::physical_plan::ExecutionPlan;

pub use config::{
    ColumnSpec, ConnectionSpec, OutputColumn, PartitionSpec, PushedAggregate, ScanConfig, Shard, SqlFragment,
};
pub use exec::{ClickHouseScanExec, TableStats};
pub use pushdown::{register_table, ClickHousePushdown};

use config::quote_ident;
use filter::{base_type, Translator};

/// Errors of this crate. The client's errors and arrow-rs's come as the Arrow
/// conversion's ([`chnative_arrow::Error::Client`], [`chnative_arrow::Error::Arrow`]),
/// so one error type says what the client said.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// From the client (connection, server error), the Arrow conversion or arrow-rs.
    #[error(transparent)]
    Arrow(#[from] chnative_arrow::Error),
    /// A request that cannot be made as given (bad table name, endpoint, empty cluster).
    #[error("{0}")]
    Usage(String),
}

impl From<chnative::Error> for Error {
    fn from(e: chnative::Error) -> Self {
        Error::Arrow(e.into())
    }
}

impl From<datafusion::arrow::error::ArrowError> for Error {
    fn from(e: datafusion::arrow::error::ArrowError) -> Self {
        Error::Arrow(e.into())
    }
}

impl From<Error> for DataFusionError {
    fn from(e: Error) -> Self {
        DataFusionError::External(Box::new(e))
    }
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Opens a [`ClickHouseTable`] (see [`ClickHouseTable::builder`]).
#[derive(Debug, Clone)]
pub struct ClickHouseTableBuilder {
    url: String,
    table: String,
    shards: Option<Vec<Shard>>,
    cluster: Option<String>,
    key_ranges: usize,
    settings: Vec<(String, String)>,
    pushdown: bool,
    sharding_key: Option<String>,
}

impl ClickHouseTableBuilder {
    /// Whether [`ClickHousePushdown`] may hand this table's aggregates and top-N
    /// (`ORDER BY … LIMIT`) queries to ClickHouse (on by default).
    pub fn pushdown(mut self, on: bool) -> Self {
        self.pushdown = on;
        self
    }

    /// The column the cluster's rows are sharded by: every row with one value of it is
    /// on one shard (as with a `Distributed` table whose sharding key is that column).
    /// An aggregate grouped by it is computed whole on each shard, `COUNT(DISTINCT)`
    /// included. Not checked: a wrong key gives wrong answers.
    pub fn sharding_key(mut self, column: impl Into<String>) -> Self {
        self.sharding_key = Some(column.into());
        self
    }

    /// Reads the table on each of these shards (its local table there), one partition
    /// (or [`key_ranges`](Self::key_ranges) partitions) per shard.
    pub fn shards(mut self, shards: Vec<Shard>) -> Self {
        self.shards = Some(shards);
        self
    }

    /// Reads the table on the shards of a [`chnative::cluster::Topology`] (given, or
    /// from `Topology::from_system_clusters`).
    pub fn topology(self, topology: &chnative::cluster::Topology) -> Self {
        self.shards(shards_of(topology))
    }

    /// Reads the shards of cluster `name` from the URL server's `system.clusters`.
    pub fn cluster(mut self, name: impl Into<String>) -> Self {
        self.cluster = Some(name.into());
        self
    }

    /// Splits each shard's scan into `n` ranges of the first sorting-key column (4 by
    /// default; 1 turns splitting off). Tables whose first key column is not an integer,
    /// Date or DateTime column (or is Nullable) are read as one range.
    pub fn key_ranges(mut self, n: usize) -> Self {
        self.key_ranges = n.max(1);
        self
    }

    /// A setting sent with every query of the scan.
    pub fn setting(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.settings.push((name.into(), value.into()));
        self
    }

    /// Connects, reads the schema, the statistics and the key ranges, and returns the
    /// table. The connections made here are closed before it returns.
    pub async fn build(self) -> Result<ClickHouseTable> {
        let connection = ConnectionSpec { url: self.url.clone() };
        let client = chnative::Client::connect_with(connection.config(None)?.pool_max_size(1)).await?;
        let shards = match (&self.shards, &self.cluster) {
            (Some(s), _) => Some(s.clone()),
            (None, Some(name)) => Some(cluster_shards(&client, name).await?),
            (None, None) => None,
        };
        if shards.as_ref().is_some_and(|s| s.is_empty()) {
            return Err(Error::Usage("no shards".into()));
        }
        let (db, table) = match self.table.split_once('.') {
            Some((d, t)) => (d.to_string(), t.to_string()),
            None => (client.fetch_scalar::<String>("SELECT currentDatabase()").await?, self.table.clone()),
        };
        let timezone = client.server_info().timezone;
        let shard_list: Vec<Option<Shard>> = match &shards {
            Some(s) => s.iter().cloned().map(Some).collect(),
            None => vec![None],
        };
        // The schema from the first shard (all shards hold the same table).
        let first = match &shard_list[0] {
            None => client,
            Some(s) => chnative::Client::connect_with(connection.config(Some(s))?.pool_max_size(1)).await?,
        };
        let qualified = format!("{}.{}", quote_ident(&db), quote_ident(&table));
        let columns: Vec<ColumnSpec> = chnative_arrow::describe_table(&first, &qualified)
            .await?
            .into_iter()
            .filter(|c| c.default_kind != "ALIAS" && c.default_kind != "EPHEMERAL")
            .map(|c| ColumnSpec { name: c.name, clickhouse_type: c.type_name })
            .collect();
        drop(first);
        let mut stats = TableStats { rows: Some(0), bytes: Some(0) };
        let mut partitions = Vec::new();
        for shard in shard_list {
            let c = chnative::Client::connect_with(connection.config(shard.as_ref())?.pool_max_size(1)).await?;
            let info = table_info(&c, &db, &table).await?;
            stats.rows = stats.rows.zip(info.rows).map(|(a, b)| a + b);
            stats.bytes = stats.bytes.zip(info.bytes).map(|(a, b)| a + b);
            let ranges = if self.key_ranges > 1 {
                key_ranges(&c, &db, &table, &columns, &info.sorting_key, self.key_ranges).await?
            } else {
                vec![None]
            };
            partitions.extend(ranges.into_iter().map(|range| PartitionSpec { shard: shard.clone(), range }));
        }
        let base = ScanConfig {
            connection,
            database: db,
            table,
            columns,
            server_timezone: Some(timezone),
            projection: None,
            filters: Vec::new(),
            limit: None,
            partitions,
            settings: self.settings,
            aggregate: None,
            order_by: Vec::new(),
        };
        let schema = projected_schema(&base)?;
        Ok(ClickHouseTable {
            base,
            schema,
            stats,
            pushdown: self.pushdown,
            sharding_key: self.sharding_key,
            task_partitions: false,
        })
    }
}

/// A ClickHouse table (on one server or on every shard of a cluster) as a DataFusion
/// [`TableProvider`].
#[derive(Debug, Clone)]
pub struct ClickHouseTable {
    base: ScanConfig,
    schema: SchemaRef,
    stats: TableStats,
    pushdown: bool,
    sharding_key: Option<String>,
    task_partitions: bool,
}

impl ClickHouseTable {
    /// A builder for `table` (`table` or `database.table`) on the server of `url`
    /// (a `clickhouse://` URL, see `chnative::Config::from_url`).
    pub fn builder(url: impl Into<String>, table: impl Into<String>) -> ClickHouseTableBuilder {
        ClickHouseTableBuilder {
            url: url.into(),
            table: table.into(),
            shards: None,
            cluster: None,
            key_ranges: 4,
            settings: Vec::new(),
            pushdown: true,
            sharding_key: None,
        }
    }

    /// `table` on the server of `url`, with the default [`ClickHouseTableBuilder`].
    pub async fn open(url: impl Into<String>, table: impl Into<String>) -> Result<ClickHouseTable> {
        Self::builder(url, table).build().await
    }

    /// The statistics read when the table was opened.
    pub fn stats(&self) -> TableStats {
        self.stats
    }

    /// A table whose scans run `config` as it is (with the projection, filters and
    /// limit DataFusion adds); how a shipped provider is rebuilt, and what aggregate
    /// pushdown puts in a plan.
    pub fn from_config(config: ScanConfig, stats: TableStats) -> Result<ClickHouseTable> {
        let schema = projected_schema(&config)?;
        Ok(ClickHouseTable { base: config, schema, stats, pushdown: true, sharding_key: None, task_partitions: false })
    }

    /// The configuration every scan starts from.
    pub fn config(&self) -> &ScanConfig {
        &self.base
    }

    /// Whether pushdown of aggregates and top-N is on for this table.
    pub fn pushdown_enabled(&self) -> bool {
        self.pushdown
    }

    /// The declared sharding-key column (see [`ClickHouseTableBuilder::sharding_key`]).
    pub fn sharding_key(&self) -> Option<&str> {
        self.sharding_key.as_deref()
    }

    /// This table with pushdown of aggregates and top-N on or off (as
    /// [`ClickHouseTableBuilder::pushdown`]).
    pub fn with_pushdown(mut self, on: bool) -> Self {
        self.pushdown = on;
        self
    }

    /// This table with a declared sharding-key column, or none (as
    /// [`ClickHouseTableBuilder::sharding_key`]).
    pub fn with_sharding_key(mut self, column: Option<String>) -> Self {
        self.sharding_key = column;
        self
    }

    /// This table with its scans carrying a child that names their partitions (see
    /// [`ClickHouseScanExec::with_task_partitions`]), for an engine that gives each task
    /// its share of a plan by rewriting the plan's leaves, as Ballista 55 does. The
    /// Ballista codec turns it on for every table it decodes.
    pub fn with_task_partitions(mut self, on: bool) -> Self {
        self.task_partitions = on;
        self
    }

    /// Whether scans carry the task-partitions child ([`ClickHouseTable::with_task_partitions`]).
    pub fn task_partitions(&self) -> bool {
        self.task_partitions
    }

    /// The partitions every scan has.
    pub fn partitions(&self) -> &[PartitionSpec] {
        &self.base.partitions
    }

    /// The scan configuration for these pushed-down parts. Filters that cannot be
    /// pushed exactly are an error (DataFusion only passes the ones
    /// [`TableProvider::supports_filters_pushdown`] accepted).
    pub fn scan_config(
        &self,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<ScanConfig> {
        let mut c = self.base.clone();
        if c.projection.is_some() {
            return Err(Error::Usage("the table's configuration already has a projection".into()));
        }
        c.projection = projection.cloned();
        if c.aggregate.is_some() && !filters.is_empty() {
            return Err(Error::Usage("filters over a pushed-down aggregate stay in DataFusion".into()));
        }
        let start = c.filters.len();
        let added = filters
            .iter()
            .enumerate()
            .map(|(i, f)| {
                Translator::new(&c.columns, format!("f{}_", start + i))
                    .translate(f)
                    .ok_or_else(|| Error::Usage(format!("filter cannot be pushed down: {f}")))
            })
            .collect::<Result<Vec<_>>>()?;
        c.filters.extend(added);
        c.limit = match (c.limit, limit) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        Ok(c)
    }
}

#[async_trait]
impl TableProvider for ClickHouseTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    async fn scan(
        &self,
        _state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> datafusion::common::Result<Arc<dyn ExecutionPlan>> {
        let config = self.scan_config(projection, filters, limit)?;
        let exec = ClickHouseScanExec::try_new(config, self.stats)?;
        let exec = if self.task_partitions { exec.with_task_partitions()? } else { exec };
        Ok(Arc::new(exec))
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> datafusion::common::Result<Vec<TableProviderFilterPushDown>> {
        if self.base.aggregate.is_some() {
            // Its columns are the aggregate's outputs: a filter on them is a HAVING,
            // evaluated by DataFusion.
            return Ok(vec![TableProviderFilterPushDown::Unsupported; filters.len()]);
        }
        Ok(filters
            .iter()
            .map(|f| match Translator::new(&self.base.columns, "p").translate(f) {
                Some(_) => TableProviderFilterPushDown::Exact,
                None => TableProviderFilterPushDown::Unsupported,
            })
            .collect())
    }

    fn statistics(&self) -> Option<Statistics> {
        let exec = ClickHouseScanExec::try_new(self.base.clone(), self.stats).ok()?;
        #[allow(deprecated)]
        let s = exec.partition_statistics(None).ok()?;
        Some((*s).clone())
    }
}

/// The Arrow schema of a scan's selected columns.
pub(crate) fn projected_schema(config: &ScanConfig) -> Result<SchemaRef> {
    let options =
        chnative_arrow::ArrowOptions { server_timezone: config.server_timezone.clone(), ..Default::default() };
    let fields = config
        .output_columns()
        .iter()
        .map(|c| chnative_arrow::arrow_field(&c.name, &c.clickhouse_type, &options))
        .collect::<chnative_arrow::Result<Vec<_>>>()?;
    let full = Schema::new(fields);
    Ok(Arc::new(match &config.projection {
        Some(p) => full.project(p)?,
        None => full,
    }))
}

/// The shards of `cluster` from `system.clusters` (see
/// `chnative::cluster::Topology::from_system_clusters`), replicas in `replica_num` order.
pub async fn cluster_shards(client: &chnative::Client, cluster: &str) -> Result<Vec<Shard>> {
    let topology = chnative::cluster::Topology::from_system_clusters(client, cluster).await?;
    let shards = shards_of(&topology);
    if shards.is_empty() {
        return Err(Error::Usage(format!("cluster {cluster:?} is not in system.clusters")));
    }
    Ok(shards)
}

/// A topology's shards as scan shards (endpoints only).
pub fn shards_of(topology: &chnative::cluster::Topology) -> Vec<Shard> {
    topology.shards.iter().map(|s| Shard { replicas: s.replicas.iter().map(|r| r.address()).collect() }).collect()
}

struct TableInfo {
    rows: Option<u64>,
    bytes: Option<u64>,
    sorting_key: String,
}

async fn table_info(client: &chnative::Client, db: &str, table: &str) -> Result<TableInfo> {
    let q = chnative::Query::new(
        "SELECT ifNull(toString(total_rows), ''), ifNull(toString(total_bytes_uncompressed), ''), sorting_key \
         FROM system.tables WHERE database = {d:String} AND name = {t:String}",
    )
    .bind("d", db)
    .bind("t", table);
    let Some(row) = string_rows(client, q).await?.into_iter().next() else {
        return Err(Error::Usage(format!("table {db}.{table} does not exist")));
    };
    Ok(TableInfo { rows: row[0].parse().ok(), bytes: row[1].parse().ok(), sorting_key: row[2].clone() })
}

/// Every row of `q`, each value as its text (the query returns only String columns).
async fn string_rows(client: &chnative::Client, q: impl Into<chnative::Query>) -> Result<Vec<Vec<String>>> {
    client
        .fetch_all_values(q)
        .await?
        .into_iter()
        .map(|r| {
            r.values()
                .iter()
                .map(|v| {
                    v.as_str().map(String::from).ok_or_else(|| Error::Usage(format!("expected a string, got {v:?}")))
                })
                .collect()
        })
        .collect()
}

/// Conditions splitting the table into `n` ranges of its first sorting-key column (one
/// `None` when it cannot be split). Together they cover every row: the first range has
/// no lower bound and the last no upper bound.
async fn key_ranges(
    client: &chnative::Client,
    db: &str,
    table: &str,
    columns: &[ColumnSpec],
    sorting_key: &str,
    n: usize,
) -> Result<Vec<Option<SqlFragment>>> {
    let first = sorting_key.split(',').next().unwrap_or("").trim();
    let first = first.strip_prefix('`').and_then(|f| f.strip_suffix('`')).unwrap_or(first);
    let Some(col) = columns.iter().find(|c| c.name == first) else {
        return Ok(vec![None]);
    };
    // A Nullable key's NULLs would fall in no range.
    if col.clickhouse_type.contains("Nullable(") {
        return Ok(vec![None]);
    }
    let c = quote_ident(&col.name);
    let expr = match base_type(&col.clickhouse_type) {
        "Int8" | "Int16" | "Int32" | "Int64" | "UInt8" | "UInt16" | "UInt32" | "UInt64" => c,
        "Date" | "Date32" | "DateTime" => format!("toInt64({c})"),
        t if t.starts_with("DateTime(") => format!("toInt64({c})"),
        _ => return Ok(vec![None]),
    };
    let q = format!(
        "SELECT toString(min({expr})), toString(max({expr})), toString(count()) FROM {}.{}",
        quote_ident(db),
        quote_ident(table)
    );
    let Some(row) = string_rows(client, q).await?.into_iter().next() else {
        return Ok(vec![None]);
    };
    let (lo, hi, count) = (&row[0], &row[1], row[2].parse::<u64>().unwrap_or(0));
    let (Ok(lo), Ok(hi)) = (lo.parse::<i128>(), hi.parse::<i128>()) else {
        return Ok(vec![None]);
    };
    if count == 0 || hi <= lo {
        return Ok(vec![None]);
    }
    let span = hi - lo + 1;
    let mut bounds: Vec<i128> = (1..n as i128).map(|k| lo + span * k / n as i128).collect();
    bounds.dedup();
    bounds.retain(|b| *b > lo && *b <= hi);
    if bounds.is_empty() {
        return Ok(vec![None]);
    }
    let mut out = Vec::with_capacity(bounds.len() + 1);
    for i in 0..=bounds.len() {
        let mut parts = Vec::new();
        let mut params = Vec::new();
        if i > 0 {
            parts.push(format!("{expr} >= {{r_lo:Int128}}"));
            params.push(("r_lo".to_string(), bounds[i - 1].to_string()));
        }
        if i < bounds.len() {
            parts.push(format!("{expr} < {{r_hi:Int128}}"));
            params.push(("r_hi".to_string(), bounds[i].to_string()));
        }
        out.push(Some(SqlFragment { sql: parts.join(" AND "), params }));
    }
    Ok(out)
}
