//! The ADBC statement: queries as Arrow streams, parameters, bulk ingest, partitions.

use adbc_core::error::{Error, Result, Status};
use adbc_core::options::{IngestMode, OptionStatement, OptionValue};
use adbc_core::{Optionable, PartitionedResult};
use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_schema::{ArrowError, Schema, SchemaRef};
use chnative::{Client, Query, ToParam};

use crate::params::{encode_partition, row_params};
use crate::{arrow_error, client_error, invalid, not_implemented, runtime, CancelSlot};

/// The statement option (ADBC 1.1, set by Python's driver manager when parameters are a
/// mapping) asking for parameters bound by name.
const BIND_BY_NAME: &str = "adbc.statement.bind_by_name";

type Reader = Box<dyn RecordBatchReader + Send + 'static>;

/// Parameter text passed as it is (already in the form the server parses).
struct Raw(String);

impl ToParam for Raw {
    fn to_param(&self) -> String {
        self.0.clone()
    }
}

fn query(sql: &str, params: &[(String, String)]) -> Query {
    let mut q = Query::new(sql);
    for (n, v) in params {
        q = q.bind(n.clone(), Raw(v.clone()));
    }
    q
}

/// Batches of a running query, handed over from the runtime one at a time: the
/// channel holds one, so the driver holds at most a block being converted, one
/// waiting and the one the consumer has.
struct StreamReader {
    schema: SchemaRef,
    rx: tokio::sync::mpsc::Receiver<std::result::Result<RecordBatch, chnative_arrow::Error>>,
}

impl Iterator for StreamReader {
    type Item = std::result::Result<RecordBatch, ArrowError>;
    fn next(&mut self) -> Option<Self::Item> {
        // The ADBC status and ClickHouse's code name go into the text: a stream's error
        // reaches Python as a pyarrow exception carrying only the text.
        // The whole error is kept for the driver manager's ErrorFromArrayStream.
        crate::set_stream_error(None);
        self.rx.blocking_recv().map(|r| {
            r.map_err(|e| {
                let e = arrow_error(e);
                let text = format!("{:?}: {}", e.status, e.message);
                crate::set_stream_error(Some(e));
                ArrowError::ExternalError(text.into())
            })
        })
    }
}

impl RecordBatchReader for StreamReader {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

/// Runs `sql` and returns its result as a reader; the query's cancel handle goes
/// into `cancel`. Dropping the reader early cancels the query.
pub(crate) fn run_query(
    client: &Client,
    cancel: &CancelSlot,
    sql: String,
    params: Vec<(String, String)>,
) -> Result<Reader> {
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    let (schema_tx, schema_rx) = tokio::sync::oneshot::channel();
    let client = client.clone();
    // Begun before the query is sent: a cancel that comes before the stream (and its cancel
    // handle) exists still ends the query.
    let ticket = cancel.begin();
    runtime().spawn(async move {
        let mut stream = match chnative_arrow::query_arrow(&client, query(&sql, &params)).await {
            Ok(s) => s,
            Err(e) => {
                let _ = schema_tx.send(Err(e));
                return;
            }
        };
        ticket.running(stream.cancel_handle());
        match stream.schema().await {
            Ok(s) => {
                if schema_tx.send(Ok(s)).is_err() {
                    return;
                }
            }
            Err(e) => {
                let _ = schema_tx.send(Err(e));
                return;
            }
        }
        loop {
            let next = stream.next().await;
            let end = !matches!(next, Ok(Some(_)));
            match next.transpose() {
                Some(item) => {
                    if tx.send(item).await.is_err() {
                        break; // the reader was dropped: dropping the stream cancels the query
                    }
                }
                None => break,
            }
            if end {
                break;
            }
        }
        drop(ticket);
    });
    let schema = schema_rx
        .blocking_recv()
        .map_err(|_| Error::with_message_and_status("the query task ended early", Status::Internal))?
        .map_err(arrow_error)?;
    Ok(Box::new(StreamReader { schema, rx }))
}

/// An ADBC statement.
pub struct ChStatement {
    client: Client,
    cancel: CancelSlot,
    sql: Option<String>,
    bound: Option<Vec<RecordBatch>>,
    bound_stream: Option<Box<dyn RecordBatchReader + Send>>,
    target_table: Option<String>,
    target_catalog: Option<String>,
    mode: IngestMode,
    /// `adbc.statement.bind_by_name`: placeholders take the bound column of their name
    /// only, never a column by position (Python's driver manager sets it for a mapping of
    /// parameters).
    bind_by_name: bool,
}

impl ChStatement {
    pub(crate) fn new(client: Client, cancel: CancelSlot) -> Self {
        ChStatement {
            client,
            cancel,
            sql: None,
            bound: None,
            bound_stream: None,
            target_table: None,
            target_catalog: None,
            mode: IngestMode::Create,
            bind_by_name: false,
        }
    }

    fn sql(&self) -> Result<&str> {
        self.sql.as_deref().ok_or_else(|| Error::with_message_and_status("no SQL query set", Status::InvalidState))
    }

    /// The parameter sets: one per bound row, or one empty set.
    fn param_rows(&self) -> Result<Vec<Vec<(String, String)>>> {
        let sql = self.sql()?;
        let Some(batches) = &self.bound else { return Ok(vec![Vec::new()]) };
        let mut out = Vec::new();
        for b in batches {
            for row in 0..b.num_rows() {
                out.push(row_params(sql, b, row, self.bind_by_name)?);
            }
        }
        Ok(out)
    }

    /// The one parameter set of a query.
    fn query_params(&self) -> Result<Vec<(String, String)>> {
        let mut rows = self.param_rows()?;
        if rows.len() > 1 {
            return Err(invalid(format!("{} parameter rows bound to a query; bind one row", rows.len())));
        }
        Ok(rows.pop().unwrap_or_default())
    }

    fn quoted_target(&self) -> Result<String> {
        let q = |s: &str| format!("`{}`", s.replace('\\', "\\\\").replace('`', "\\`"));
        let t = self.target_table.as_deref().ok_or_else(|| invalid("no ingest target table"))?;
        Ok(match &self.target_catalog {
            Some(c) => format!("{}.{}", q(c), q(t)),
            None => q(t),
        })
    }

    fn ingest(&mut self) -> Result<Option<i64>> {
        let table = self.quoted_target()?;
        let mut batches: Box<dyn Iterator<Item = std::result::Result<RecordBatch, ArrowError>> + Send> =
            match (self.bound.take(), self.bound_stream.take()) {
                (Some(b), _) => Box::new(b.into_iter().map(Ok)),
                (None, Some(s)) => s,
                (None, None) => {
                    return Err(Error::with_message_and_status("no data bound to ingest", Status::InvalidState))
                }
            };
        // The schema: the stream's, or the first batch's.
        let first = batches.next().transpose().map_err(|e| invalid(e.to_string()))?;
        let Some(first) = first else { return Ok(Some(0)) };
        let schema = first.schema();
        let create = |if_not_exists: bool| -> Result<String> {
            let cols = schema
                .fields()
                .iter()
                .map(|f| {
                    let ty = chnative_arrow::clickhouse_type(f).map_err(arrow_error)?;
                    Ok(format!("`{}` {ty}", f.name().replace('\\', "\\\\").replace('`', "\\`")))
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(format!(
                "CREATE TABLE {}{table} ({}) ENGINE = MergeTree ORDER BY tuple()",
                if if_not_exists { "IF NOT EXISTS " } else { "" },
                cols.join(", ")
            ))
        };
        let client = self.client.clone();
        let ddl: Vec<String> = match self.mode {
            IngestMode::Create => vec![create(false)?],
            IngestMode::Append => vec![],
            IngestMode::Replace => vec![format!("DROP TABLE IF EXISTS {table}"), create(false)?],
            IngestMode::CreateAppend => vec![create(true)?],
        };
        runtime().block_on(async move {
            for stmt in ddl {
                client.execute(stmt.as_str()).await.map_err(client_error)?;
            }
            let mut ins = chnative_arrow::ArrowInsert::open(&client, &table).await.map_err(arrow_error)?;
            ins.write(&first).await.map_err(arrow_error)?;
            for b in batches {
                let b = b.map_err(|e| invalid(e.to_string()))?;
                ins.write(&b).await.map_err(arrow_error)?;
            }
            let s = ins.end().await.map_err(arrow_error)?;
            Ok(Some(s.rows as i64))
        })
    }
}

impl Optionable for ChStatement {
    type Option = OptionStatement;

    fn set_option(&mut self, key: OptionStatement, value: OptionValue) -> Result<()> {
        let OptionValue::String(v) = value else {
            return Err(invalid(format!("option {} takes a string", key.as_ref())));
        };
        match key {
            OptionStatement::TargetTable => self.target_table = Some(v),
            OptionStatement::TargetCatalog => self.target_catalog = Some(v),
            OptionStatement::TargetDbSchema if v.is_empty() => {}
            OptionStatement::IngestMode => self.mode = v.parse::<IngestMode>()?,
            OptionStatement::Temporary if v == "false" => {}
            OptionStatement::Temporary => {
                return Err(not_implemented("temporary ingest tables (they would live on one pooled connection only)"))
            }
            OptionStatement::Other(ref k) if k == BIND_BY_NAME => {
                self.bind_by_name = match v.as_str() {
                    "true" => true,
                    "false" => false,
                    _ => return Err(invalid(format!("{BIND_BY_NAME} takes true or false, not {v:?}"))),
                }
            }
            k => return Err(not_implemented(&format!("statement option {}", k.as_ref()))),
        }
        Ok(())
    }

    fn get_option_string(&self, key: OptionStatement) -> Result<String> {
        match key {
            OptionStatement::TargetTable => {
                self.target_table.clone().ok_or_else(|| Error::with_message_and_status("not set", Status::NotFound))
            }
            OptionStatement::IngestMode => Ok(String::from(self.mode)),
            OptionStatement::Other(ref k) if k == BIND_BY_NAME => Ok(self.bind_by_name.to_string()),
            k => Err(Error::with_message_and_status(format!("{} not readable", k.as_ref()), Status::NotFound)),
        }
    }

    fn get_option_bytes(&self, key: OptionStatement) -> Result<Vec<u8>> {
        Err(Error::with_message_and_status(format!("{} is not a bytes option", key.as_ref()), Status::NotFound))
    }

    fn get_option_int(&self, key: OptionStatement) -> Result<i64> {
        Err(Error::with_message_and_status(format!("{} is not an int option", key.as_ref()), Status::NotFound))
    }

    fn get_option_double(&self, key: OptionStatement) -> Result<f64> {
        Err(Error::with_message_and_status(format!("{} is not a double option", key.as_ref()), Status::NotFound))
    }
}

impl adbc_core::Statement for ChStatement {
    fn bind(&mut self, batch: RecordBatch) -> Result<()> {
        self.bound = Some(vec![batch]);
        self.bound_stream = None;
        Ok(())
    }

    fn bind_stream(&mut self, reader: Box<dyn RecordBatchReader + Send>) -> Result<()> {
        self.bound_stream = Some(reader);
        self.bound = None;
        Ok(())
    }

    fn execute(&mut self) -> Result<Reader> {
        if self.target_table.is_some() {
            self.ingest()?;
            let schema = std::sync::Arc::new(Schema::empty());
            return Ok(Box::new(arrow_array::RecordBatchIterator::new(Vec::new(), schema)));
        }
        if self.bound.is_none() {
            if let Some(s) = self.bound_stream.take() {
                self.bound = Some(s.collect::<std::result::Result<Vec<_>, _>>().map_err(|e| invalid(e.to_string()))?);
            }
        }
        let params = self.query_params()?;
        run_query(&self.client, &self.cancel, self.sql()?.to_string(), params)
    }

    fn execute_update(&mut self) -> Result<Option<i64>> {
        if self.target_table.is_some() {
            return self.ingest();
        }
        if self.bound.is_none() {
            if let Some(s) = self.bound_stream.take() {
                self.bound = Some(s.collect::<std::result::Result<Vec<_>, _>>().map_err(|e| invalid(e.to_string()))?);
            }
        }
        let sql = self.sql()?.to_string();
        let rows = self.param_rows()?;
        let client = self.client.clone();
        runtime().block_on(async move {
            let mut written = 0u64;
            for params in rows {
                let p = client.execute(query(&sql, &params)).await.map_err(client_error)?;
                written += p.written_rows;
            }
            Ok((written > 0).then_some(written as i64))
        })
    }

    fn execute_schema(&mut self) -> Result<Schema> {
        let sql = self.sql()?.to_string();
        let params = self.query_params()?;
        describe(&self.client, &sql, &params)
    }

    fn execute_partitions(&mut self) -> Result<PartitionedResult> {
        let sql = self.sql()?.to_string();
        let params = self.query_params()?;
        let schema = describe(&self.client, &sql, &params)?;
        Ok(PartitionedResult { partitions: vec![encode_partition(&sql, &params)], schema, rows_affected: -1 })
    }

    /// The `{name:Type}` placeholders, in order, as the Arrow fields their values
    /// are bound as.
    fn get_parameter_schema(&self) -> Result<Schema> {
        let options = chnative_arrow::ArrowOptions {
            server_timezone: Some(self.client.server_info().timezone),
            ..Default::default()
        };
        let fields = crate::params::typed_placeholders(self.sql()?)
            .iter()
            .map(|(n, t)| chnative_arrow::arrow_field(n, t, &options))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(arrow_error)?;
        Ok(Schema::new(fields))
    }

    fn prepare(&mut self) -> Result<()> {
        self.sql()?;
        Ok(())
    }

    fn set_sql_query(&mut self, query: impl AsRef<str>) -> Result<()> {
        // A new query starts without the previous one's parameters or ingest target
        // (DB-API cursors reuse one statement and bind only when given parameters).
        self.sql = Some(query.as_ref().to_string());
        self.target_table = None;
        self.bound = None;
        self.bound_stream = None;
        Ok(())
    }

    fn set_substrait_plan(&mut self, _plan: impl AsRef<[u8]>) -> Result<()> {
        Err(not_implemented("Substrait"))
    }

    fn get_cancel_handle(&self) -> Box<dyn adbc_core::CancelHandle> {
        Box::new(self.cancel.clone())
    }
}

/// The Arrow schema of a query's result, without running it (`DESCRIBE (query)`).
fn describe(client: &Client, sql: &str, params: &[(String, String)]) -> Result<Schema> {
    let q = query(&format!("DESCRIBE ({sql})"), params);
    let c = client.clone();
    let rows = runtime().block_on(async move { c.fetch_all_values(q).await }).map_err(client_error)?;
    let options =
        chnative_arrow::ArrowOptions { server_timezone: Some(client.server_info().timezone), ..Default::default() };
    let fields = rows
        .iter()
        .map(|r| chnative_arrow::arrow_field(&r[0].to_string(), &r[1].to_string(), &options))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(arrow_error)?;
    Ok(Schema::new(fields))
}
