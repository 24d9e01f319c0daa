//! The physical scan: one DataFusion partition per [`PartitionSpec`], each a query of its
//! own on a connection made when the partition starts.

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::arrow::record_batch::RecordBatchOptions;
use datafusion::common::stats::Precision;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Statistics};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties};

use crate::config::{PartitionSpec, ScanConfig};
use crate::{Error, Result};

/// Table-level sizes, for the planner.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TableStats {
    /// Rows (`system.tables.total_rows`, summed over shards).
    pub rows: Option<u64>,
    /// Uncompressed bytes (`system.tables.total_bytes_uncompressed`, or `system.parts`).
    pub bytes: Option<u64>,
}

/// A scan of a ClickHouse table, described by a [`ScanConfig`] (see
/// [`ClickHouseScanExec::config`]); `EXPLAIN` shows the SQL each partition sends.
pub struct ClickHouseScanExec {
    config: ScanConfig,
    schema: SchemaRef,
    properties: Arc<PlanProperties>,
    stats: TableStats,
    /// With [`ClickHouseScanExec::with_task_partitions`]: a child naming the partitions
    /// this scan runs (see there).
    task_partitions: Option<Arc<dyn ExecutionPlan>>,
}

/// The column of a task-partitions child: one row per partition, the partition's
/// [`PartitionSpec`] as JSON.
const TASK_PARTITION_COLUMN: &str = "chnative_partition";

impl fmt::Debug for ClickHouseScanExec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClickHouseScanExec").field("config", &self.config).finish()
    }
}

impl ClickHouseScanExec {
    /// A plan for `config`; `stats` are the whole table's (or unknown).
    pub fn try_new(config: ScanConfig, stats: TableStats) -> Result<Self> {
        let schema = crate::projected_schema(&config)?;
        let parts = config.partitions.len().max(1);
        let properties = properties(&schema, parts);
        Ok(ClickHouseScanExec { config, schema, properties: Arc::new(properties), stats, task_partitions: None })
    }

    /// The same scan with a child that names its partitions, for an engine that hands
    /// each task a share of a plan by rewriting the plan's leaves (Ballista 55: its
    /// scheduler restricts shuffle readers and file or memory `DataSourceExec`s to a
    /// task's partitions, runs every partition of what is left, and leaves any other
    /// leaf whole, so a leaf scan of its own would run whole in every task).
    ///
    /// The child is a `DataSourceExec` over a `MemorySourceConfig` with one partition
    /// per scan partition, each one row holding the partition's [`PartitionSpec`]. An
    /// engine that restricts that child to some of its partitions and gives it back
    /// through [`ExecutionPlan::with_new_children`] gets a scan of exactly those
    /// partitions, in the child's order. The child is never executed.
    pub fn with_task_partitions(self) -> Result<Self> {
        let field = datafusion::arrow::datatypes::Field::new(
            TASK_PARTITION_COLUMN,
            datafusion::arrow::datatypes::DataType::Utf8,
            false,
        );
        let child_schema = Arc::new(Schema::new(vec![field]));
        let mut parts = Vec::with_capacity(self.config.partitions.len());
        for p in &self.config.partitions {
            let json = serde_json::to_string(p).map_err(|e| Error::Usage(format!("a partition as JSON: {e}")))?;
            let col = datafusion::arrow::array::StringArray::from(vec![json]);
            parts.push(vec![RecordBatch::try_new(child_schema.clone(), vec![Arc::new(col)])?]);
        }
        let source = datafusion::datasource::memory::MemorySourceConfig::try_new(&parts, child_schema, None)
            .map_err(|e| Error::Usage(format!("the task-partitions child: {e}")))?;
        let child = datafusion::datasource::source::DataSourceExec::from_data_source(source);
        let properties = properties(&self.schema, self.config.partitions.len());
        Ok(ClickHouseScanExec { properties: Arc::new(properties), task_partitions: Some(child), ..self })
    }

    /// The task-partitions child, when the scan has one
    /// ([`ClickHouseScanExec::with_task_partitions`]).
    pub fn task_partitions(&self) -> Option<&Arc<dyn ExecutionPlan>> {
        self.task_partitions.as_ref()
    }

    /// The scan over the partitions a task-partitions `child` names.
    fn restricted_to(&self, child: Arc<dyn ExecutionPlan>) -> datafusion::common::Result<Self> {
        let bad = |why: &str| {
            DataFusionError::Internal(format!(
                "ClickHouseScanExec: its child must be the task-partitions memory source ({why})"
            ))
        };
        let exec = child
            .downcast_ref::<datafusion::datasource::source::DataSourceExec>()
            .ok_or_else(|| bad("not a DataSourceExec"))?;
        let source: &dyn std::any::Any = exec.data_source().as_ref();
        let memory = source
            .downcast_ref::<datafusion::datasource::memory::MemorySourceConfig>()
            .ok_or_else(|| bad("not a memory source"))?;
        let mut specs = Vec::new();
        for batches in memory.partitions() {
            let mut found = None;
            for b in batches {
                let col = b
                    .column_by_name(TASK_PARTITION_COLUMN)
                    .and_then(|c| c.as_any().downcast_ref::<datafusion::arrow::array::StringArray>())
                    .ok_or_else(|| bad("no partition column"))?;
                for json in col.iter().flatten() {
                    if found.is_some() {
                        return Err(bad("two rows in one partition"));
                    }
                    let spec: PartitionSpec =
                        serde_json::from_str(json).map_err(|e| bad(&format!("a partition's JSON: {e}")))?;
                    found = Some(spec);
                }
            }
            specs.push(found.ok_or_else(|| bad("a partition with no row"))?);
        }
        let mut config = self.config.clone();
        config.partitions = specs;
        let properties = properties(&self.schema, config.partitions.len());
        Ok(ClickHouseScanExec {
            config,
            schema: self.schema.clone(),
            properties: Arc::new(properties),
            stats: self.stats,
            task_partitions: Some(child),
        })
    }

    /// The scan's serializable description.
    pub fn config(&self) -> &ScanConfig {
        &self.config
    }

    /// The table statistics the scan was made with.
    pub fn table_stats(&self) -> TableStats {
        self.stats
    }

    fn statistics(&self, partition: Option<usize>) -> Statistics {
        let mut s = Statistics::new_unknown(&self.schema);
        let parts = self.config.partitions.len().max(1) as u64;
        // Never Exact: the numbers were read when the table was opened, and a filter or
        // a key range keeps an unknown share of them.
        let share = |v: u64| if partition.is_some() { v / parts } else { v };
        if let Some(rows) = self.stats.rows {
            let mut rows = share(rows);
            if let Some(l) = self.config.limit {
                let cap = l as u64 * if partition.is_some() { 1 } else { parts };
                rows = rows.min(cap);
            }
            s.num_rows = Precision::Inexact(rows as usize);
        }
        if let (Some(bytes), Some(rows)) = (self.stats.bytes, self.stats.rows) {
            // The projected share of the bytes, by column count (no per-column sizes).
            let total_cols = self.config.columns.len().max(1) as u64;
            let cols = self.schema.fields().len() as u64;
            let b = share(bytes) * cols / total_cols;
            let b = match (s.num_rows, rows) {
                (Precision::Inexact(n), r) if r > 0 => b.min(b * n as u64 / share(r).max(1)),
                _ => b,
            };
            s.total_byte_size = Precision::Inexact(b as usize);
        }
        s
    }
}

fn properties(schema: &SchemaRef, parts: usize) -> PlanProperties {
    PlanProperties::new(
        EquivalenceProperties::new(schema.clone()),
        Partitioning::UnknownPartitioning(parts),
        EmissionType::Incremental,
        Boundedness::Bounded,
    )
}

impl DisplayAs for ClickHouseScanExec {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.config;
        write!(f, "ClickHouseScanExec: table={}.{}, partitions={}", c.database, c.table, c.partitions.len())?;
        if let Some(a) = &c.aggregate {
            let mode = if a.exact_per_partition { "final" } else { "partial" };
            write!(f, ", aggregate={mode}")?;
        }
        if !c.order_by.is_empty() {
            write!(f, ", order_by=[{}]", c.order_by.join(", "))?;
        }
        if let Some(l) = c.limit {
            write!(f, ", limit={l}")?;
        }
        if !matches!(t, DisplayFormatType::TreeRender) {
            match c.partition_query(0) {
                Ok(q) => {
                    write!(f, ", sql={}", q.sql)?;
                    if !q.params.is_empty() {
                        let ps: Vec<String> = q.params.iter().map(|(k, v)| format!("{k}={v:?}")).collect();
                        write!(f, ", params=[{}]", ps.join(", "))?;
                    }
                }
                Err(e) => write!(f, ", sql=<{e}>")?,
            }
        }
        Ok(())
    }
}

impl ExecutionPlan for ClickHouseScanExec {
    fn name(&self) -> &str {
        "ClickHouseScanExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        self.task_partitions.iter().collect()
    }

    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        // The task-partitions child is a list of names: repartitioning it would break
        // the one-to-one map of its partitions to the scan's.
        vec![false; self.children().len()]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> datafusion::common::Result<TreeNodeRecursion>,
    ) -> datafusion::common::Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> datafusion::common::Result<Arc<dyn ExecutionPlan>> {
        match (children.len(), &self.task_partitions) {
            (0, None) => Ok(self),
            (1, _) => {
                let child = children.into_iter().next().expect("one child");
                Ok(Arc::new(self.restricted_to(child)?))
            }
            (n, _) => Err(DataFusionError::Internal(format!(
                "ClickHouseScanExec with {} children given {n}",
                self.children().len()
            ))),
        }
    }

    fn partition_statistics(&self, partition: Option<usize>) -> datafusion::common::Result<Arc<Statistics>> {
        Ok(Arc::new(self.statistics(partition)))
    }

    fn execute(
        &self,
        partition: usize,
        _context: Arc<TaskContext>,
    ) -> datafusion::common::Result<SendableRecordBatchStream> {
        let query = self.config.partition_query(partition).map_err(DataFusionError::from)?;
        let part = self.config.partitions[partition].clone();
        let (tx, mut rx) = tokio::sync::mpsc::channel::<datafusion::common::Result<RecordBatch>>(2);
        let config = self.config.clone();
        let schema = self.schema.clone();
        // The partition's own task: it dials the shard, streams, and stops (cancelling the
        // query) when the receiver is dropped.
        let rt = tokio::runtime::Handle::try_current()
            .map_err(|_| DataFusionError::Execution("ClickHouseScanExec runs inside a Tokio runtime".into()))?;
        rt.spawn(async move {
            if let Err(e) = run_partition(&config, &part, query, schema, &tx).await {
                let _ = tx.send(Err(DataFusionError::from(e))).await;
            }
        });
        let stream = futures::stream::poll_fn(move |cx| rx.poll_recv(cx));
        Ok(Box::pin(RecordBatchStreamAdapter::new(self.schema.clone(), stream)))
    }
}

async fn run_partition(
    config: &ScanConfig,
    part: &PartitionSpec,
    query: crate::config::SqlFragment,
    schema: SchemaRef,
    tx: &tokio::sync::mpsc::Sender<datafusion::common::Result<RecordBatch>>,
) -> Result<()> {
    let client_config = config.connection.config(part.shard.as_ref())?.pool_max_size(1);
    let client = chnative::Client::connect_with(client_config).await?;
    let mut q = chnative::Query::new(query.sql);
    for (k, v) in query.params {
        q = q.bind(k, v);
    }
    for (k, v) in &config.settings {
        q = q.setting(k.clone(), v.clone());
    }
    let options = chnative_arrow::ArrowOptions {
        server_timezone: config.server_timezone.clone().or_else(|| Some(client.server_info().timezone)),
        ..Default::default()
    };
    let mut stream = chnative_arrow::query_arrow_with(&client, q, &options).await?;
    while let Some(batch) = stream.next().await? {
        let batch = conform(&schema, batch)?;
        if tx.send(Ok(batch)).await.is_err() {
            // The consumer is gone (a LIMIT above was satisfied, or the query dropped):
            // dropping the stream cancels the query.
            return Ok(());
        }
    }
    Ok(())
}

/// The batch under the scan's schema (same columns; the names and metadata of the
/// table's schema), or a clear error when the server sent other types.
fn conform(schema: &SchemaRef, batch: RecordBatch) -> Result<RecordBatch> {
    if schema.fields().is_empty() {
        let opts = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
        return Ok(RecordBatch::try_new_with_options(Arc::new(Schema::empty()), vec![], &opts)?);
    }
    if batch.num_columns() != schema.fields().len() {
        return Err(Error::Usage(format!(
            "the server sent {} columns, the scan expects {}",
            batch.num_columns(),
            schema.fields().len()
        )));
    }
    Ok(RecordBatch::try_new(schema.clone(), batch.columns().to_vec())?)
}
