//! chnative-datafusion's ClickHouse tables on an
//! [Apache DataFusion Ballista](https://datafusion.apache.org/ballista/) 55 cluster: codecs
//! that ship a [`ClickHouseTable`] (in logical plans, client to scheduler) and a
//! [`ClickHouseScanExec`] (in physical plans, scheduler to executors), and a local cluster
//! of Ballista's own scheduler and executors for tests and benchmarks.
//!
//! Each codec wraps Ballista's own (which ships its shuffles and file formats) and passes
//! everything that is not this crate's on to it. What goes over the wire is the
//! [`ScanConfig`] as JSON (connection URL included: see
//! [`ConnectionSpec`](chnative_datafusion::ConnectionSpec) on passwords); an executor connects to
//! ClickHouse when a task runs a partition.
//!
//! Every table the logical codec decodes (on the scheduler) makes scans with a
//! task-partitions child ([`ClickHouseScanExec::with_task_partitions`]): Ballista's
//! scheduler gives each task its share of a stage by restricting the plan's leaves it
//! knows, and the executor runs every partition of the plan it gets; the child is such a
//! leaf, so each task runs only its own partitions of the scan.
//!
//! ```no_run
//! # async fn demo() -> datafusion::common::Result<()> {
//! use ballista::prelude::SessionContextExt;
//! use chnative_ballista::session_state;
//! use datafusion::prelude::SessionContext;
//!
//! let state = session_state(); // the codecs and the pushdown rule
//! let ctx = SessionContext::remote_with_state("df://scheduler:50050", state).await?;
//! # Ok(()) }
//! ```
//! The scheduler and every executor must use the same codecs: build their session state
//! with [`session_state`] (or [`with_codecs`] on your own), as [`LocalCluster`] does.

use std::net::SocketAddr;
use std::sync::Arc;

use ballista_core::extension::SessionConfigExt;
use ballista_core::serde::protobuf::scheduler_grpc_client::SchedulerGrpcClient;
use ballista_core::serde::{BallistaLogicalExtensionCodec, BallistaPhysicalExtensionCodec};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::TableProvider;
use datafusion::common::{DataFusionError, Result, TableReference};
use datafusion::datasource::file_format::FileFormatFactory;
use datafusion::execution::{SessionState, SessionStateBuilder, TaskContext};
use datafusion::logical_expr::{Extension, LogicalPlan};
use datafusion::physical_plan::{replace_children_if_necessary, ExecutionPlan};
use datafusion::prelude::SessionConfig;
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use datafusion_proto::physical_plan::{PhysicalExtensionCodec, PhysicalProtoConverterExtension};
use serde::{Deserialize, Serialize};

use chnative_datafusion::{ClickHousePushdown, ClickHouseScanExec, ClickHouseTable, ScanConfig, TableStats};

/// Starts every buffer this crate's codecs write: a zero byte, which no protobuf message
/// (Ballista's own buffers) begins with (field number 0 is invalid).
const MAGIC: &[u8] = b"\0chnative-datafusion/1\0";

#[derive(Serialize, Deserialize)]
struct Shipped {
    config: ScanConfig,
    rows: Option<u64>,
    bytes: Option<u64>,
    pushdown: bool,
    sharding_key: Option<String>,
}

fn encode(s: &Shipped, buf: &mut Vec<u8>) -> Result<()> {
    buf.extend_from_slice(MAGIC);
    serde_json::to_writer(buf, s).map_err(|e| DataFusionError::Internal(format!("encoding a ClickHouse scan: {e}")))
}

fn decode(buf: &[u8]) -> Option<Result<Shipped>> {
    let body = buf.strip_prefix(MAGIC)?;
    Some(
        serde_json::from_slice(body).map_err(|e| DataFusionError::Internal(format!("decoding a ClickHouse scan: {e}"))),
    )
}

/// The logical codec: [`ClickHouseTable`] providers, then Ballista's own.
#[derive(Debug, Default)]
pub struct LogicalCodec {
    inner: BallistaLogicalExtensionCodec,
}

impl LogicalExtensionCodec for LogicalCodec {
    fn try_decode(&self, buf: &[u8], inputs: &[LogicalPlan], ctx: &TaskContext) -> Result<Extension> {
        self.inner.try_decode(buf, inputs, ctx)
    }

    fn try_encode(&self, node: &Extension, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode(node, buf)
    }

    fn try_decode_table_provider(
        &self,
        buf: &[u8],
        table_ref: &TableReference,
        schema: SchemaRef,
        ctx: &TaskContext,
    ) -> Result<Arc<dyn TableProvider>> {
        match decode(buf) {
            Some(s) => {
                let s = s?;
                let t = ClickHouseTable::from_config(s.config, TableStats { rows: s.rows, bytes: s.bytes })?
                    .with_pushdown(s.pushdown)
                    .with_sharding_key(s.sharding_key)
                    // Decoded here means planned by a Ballista scheduler: its task builder
                    // must be able to give each task its own share of the scan.
                    .with_task_partitions(true);
                Ok(Arc::new(t))
            }
            None => self.inner.try_decode_table_provider(buf, table_ref, schema, ctx),
        }
    }

    fn try_encode_table_provider(
        &self,
        table_ref: &TableReference,
        node: Arc<dyn TableProvider>,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        match node.downcast_ref::<ClickHouseTable>() {
            Some(t) => encode(
                &Shipped {
                    config: t.config().clone(),
                    rows: t.stats().rows,
                    bytes: t.stats().bytes,
                    pushdown: t.pushdown_enabled(),
                    sharding_key: t.sharding_key().map(str::to_string),
                },
                buf,
            ),
            None => self.inner.try_encode_table_provider(table_ref, node, buf),
        }
    }

    fn try_decode_file_format(&self, buf: &[u8], ctx: &TaskContext) -> Result<Arc<dyn FileFormatFactory>> {
        self.inner.try_decode_file_format(buf, ctx)
    }

    fn try_encode_file_format(&self, buf: &mut Vec<u8>, node: Arc<dyn FileFormatFactory>) -> Result<()> {
        self.inner.try_encode_file_format(buf, node)
    }
}

/// The physical codec: [`ClickHouseScanExec`] plans, then Ballista's own.
#[derive(Debug, Default)]
pub struct PhysicalCodec {
    inner: BallistaPhysicalExtensionCodec,
}

impl PhysicalExtensionCodec for PhysicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        match decode(buf) {
            Some(s) => {
                let s = s?;
                let scan = ClickHouseScanExec::try_new(s.config, TableStats { rows: s.rows, bytes: s.bytes })?;
                if inputs.is_empty() {
                    Ok(Arc::new(scan))
                } else {
                    // The task-partitions child, restricted by the scheduler to the task's
                    // share: the scan runs the partitions it names.
                    replace_children_if_necessary(Arc::new(scan.with_task_partitions()?), inputs.to_vec())
                }
            }
            None => self.inner.try_decode(buf, inputs, ctx, proto_converter),
        }
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        match node.downcast_ref::<ClickHouseScanExec>() {
            Some(e) => {
                let stats = e.table_stats();
                encode(
                    &Shipped {
                        config: e.config().clone(),
                        rows: stats.rows,
                        bytes: stats.bytes,
                        pushdown: true,
                        sharding_key: None,
                    },
                    buf,
                )
            }
            None => self.inner.try_encode(node, buf, proto_converter),
        }
    }
}

/// `config` with this crate's codecs as Ballista's logical and physical extension codecs.
pub fn with_codecs(config: SessionConfig) -> SessionConfig {
    config
        .with_ballista_logical_extension_codec(Arc::new(LogicalCodec::default()))
        .with_ballista_physical_extension_codec(Arc::new(PhysicalCodec::default()))
}

/// A session state for a Ballista client, scheduler or executor: DataFusion's defaults,
/// this crate's codecs and the [`ClickHousePushdown`] rule.
pub fn session_state() -> SessionState {
    SessionStateBuilder::new()
        .with_default_features()
        .with_config(with_codecs(SessionConfig::new_with_ballista()))
        .with_optimizer_rule(Arc::new(ClickHousePushdown))
        .build()
}

/// A Ballista cluster in this process, on loopback: Ballista's own scheduler
/// (`ballista_scheduler::standalone`) and `executors` executors
/// (`ballista_executor::new_standalone_executor_from_state`), each with its own gRPC and
/// Flight ports picked by the kernel, all with [`session_state`]'s codecs. Its tasks run
/// on the caller's Tokio runtime and stop with it.
#[derive(Debug, Clone)]
pub struct LocalCluster {
    /// The scheduler's address.
    pub scheduler: SocketAddr,
}

impl LocalCluster {
    /// Starts the scheduler and `executors` executors of `vcores` task slots each.
    pub async fn start(executors: usize, vcores: usize) -> Result<LocalCluster> {
        let state = session_state();
        let scheduler = ballista_scheduler::standalone::new_standalone_scheduler_from_state(&state)
            .await
            .map_err(|e| DataFusionError::External(Box::new(e)))?;
        let url = format!("http://localhost:{}", scheduler.port());
        for _ in 0..executors {
            // The scheduler's server task may not be accepting yet.
            let mut tries = 0;
            let client = loop {
                match SchedulerGrpcClient::connect(url.clone()).await {
                    Ok(c) => break c,
                    Err(e) if tries >= 100 => return Err(DataFusionError::External(Box::new(e))),
                    Err(_) => tries += 1,
                }
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            };
            ballista_executor::new_standalone_executor_from_state(client, vcores, &state)
                .await
                .map_err(|e| DataFusionError::External(Box::new(e)))?;
        }
        Ok(LocalCluster { scheduler })
    }

    /// The URL a client gives `SessionContext::remote_with_state`.
    pub fn url(&self) -> String {
        format!("df://localhost:{}", self.scheduler.port())
    }
}
