//! Aggregate and top-N pushdown: a DataFusion logical optimizer rule
//! ([`ClickHousePushdown`]) that hands ClickHouse the work it is built for.
//!
//! - `Aggregate` directly over a scan of a [`ClickHouseTable`] becomes a scan whose
//!   partitions (one per shard) send `SELECT keys, aggregates … GROUP BY keys`:
//!   - **exact per partition** when there is one shard, or when the grouping keys
//!     include the table's [sharding key](crate::ClickHouseTableBuilder::sharding_key):
//!     DataFusion only renames and casts the rows;
//!   - **partial** otherwise: each shard sends its partial results (counts, sums, mins,
//!     maxes) and DataFusion merges them with a final aggregate (`SUM` of counts and
//!     sums, `MIN` of mins, `MAX` of maxes).
//! - `Sort` with a fetch (`ORDER BY … LIMIT n`) directly over a scan: each partition
//!   sends `ORDER BY … LIMIT n`; DataFusion's sort above merges the partitions' top n.
//!
//! Only what ClickHouse computes exactly as DataFusion would is pushed; anything else
//! stays as it was (the whole aggregate is then computed by DataFusion):
//! - grouping keys and `MIN`/`MAX`/`COUNT(DISTINCT)`/sort arguments: plain columns of
//!   integer, String, Bool, Date and DateTime[64] types (no floats: NaN orders and
//!   groups differently; no casts or expressions);
//! - `COUNT(*)`, `COUNT(col)`: any column; `COUNT(DISTINCT col)` only when exact per
//!   partition (DataFusion itself turns a lone `COUNT(DISTINCT x) … GROUP BY k` into a
//!   `GROUP BY k, x` below a count, and that inner grouping is pushed, partial or not);
//! - `SUM` of integer columns: both engines wrap around modulo 2^64 in Int64/UInt64, so
//!   partial sums merge to the same bits;
//! - `AVG` of integer columns up to 32 bits: pushed as `SUM` and `COUNT`, divided by
//!   DataFusion in Float64. DataFusion's own AVG adds Float64 values: the two agree
//!   while the sum of |x| stays below 2^53 (about two million rows of extreme 32-bit
//!   values); past that DataFusion's own answer depends on its summation order.
//!   64-bit integers are not pushed (each value would round on its way to Float64);
//! - no `FILTER`, `ORDER BY` inside an aggregate, grouping sets, or other functions.
//!
//! Empty inputs: `sumOrNull`/`minOrNull`/`maxOrNull` give NULL where DataFusion does,
//! counts are 0; NULL grouping keys form one group in both engines.

use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{Column, DFSchema, Result as DFResult};
use datafusion::datasource::{provider_as_source, source_as_provider};
use datafusion::functions_aggregate::average::Avg;
use datafusion::functions_aggregate::count::Count;
use datafusion::functions_aggregate::expr_fn::{max, min, sum};
use datafusion::functions_aggregate::min_max::{Max, Min};
use datafusion::functions_aggregate::sum::Sum;
use datafusion::logical_expr::expr::{AggregateFunction, Cast};
use datafusion::logical_expr::{
    lit, when, Aggregate, Expr, ExprSchemable, LogicalPlan, LogicalPlanBuilder, Projection, Sort, TableScan,
};
use datafusion::optimizer::{ApplyOrder, OptimizerConfig, OptimizerRule};
use datafusion::prelude::SessionContext;

use crate::config::{quote_ident, ColumnSpec, OutputColumn, PartitionSpec, PushedAggregate};
use crate::filter::{base_type, kind, Kind};
use crate::{ClickHouseTable, TableStats};

/// The optimizer rule that pushes aggregates and top-N queries over [`ClickHouseTable`]s
/// down to ClickHouse (see the module notes in the crate docs). Add it to a session with
/// `SessionContext::add_optimizer_rule` (or use [`register_table`], which does);
/// [`ClickHouseTableBuilder::pushdown`](crate::ClickHouseTableBuilder::pushdown) turns
/// it off for one table.
#[derive(Debug, Default, Clone, Copy)]
pub struct ClickHousePushdown;

impl ClickHousePushdown {
    /// The rule's name in the optimizer.
    pub const NAME: &'static str = "chnative_clickhouse_pushdown";
}

/// Registers `table` as `name` in `ctx`, and adds [`ClickHousePushdown`] to the
/// session's optimizer rules when it is not there yet.
pub fn register_table(ctx: &SessionContext, name: &str, table: ClickHouseTable) -> DFResult<()> {
    if !ctx.state().optimizer().rules.iter().any(|r| r.name() == ClickHousePushdown::NAME) {
        ctx.add_optimizer_rule(Arc::new(ClickHousePushdown));
    }
    ctx.register_table(name, Arc::new(table))?;
    Ok(())
}

impl OptimizerRule for ClickHousePushdown {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn apply_order(&self) -> Option<ApplyOrder> {
        Some(ApplyOrder::BottomUp)
    }

    fn rewrite(&self, plan: LogicalPlan, _config: &dyn OptimizerConfig) -> DFResult<Transformed<LogicalPlan>> {
        let new = match &plan {
            LogicalPlan::Aggregate(agg) => push_aggregate(agg)?,
            LogicalPlan::Sort(sort) => push_top_n(sort)?,
            _ => None,
        };
        Ok(match new {
            Some(p) => Transformed::yes(p),
            None => Transformed::no(plan),
        })
    }
}

/// The ClickHouse table a scan reads, when pushdown may change its scan.
fn table_of(scan: &TableScan) -> Option<Arc<dyn datafusion::catalog::TableProvider>> {
    let provider = source_as_provider(&scan.source).ok()?;
    let t = provider.downcast_ref::<ClickHouseTable>()?;
    let b = &t.base;
    (t.pushdown
        && b.aggregate.is_none()
        && b.order_by.is_empty()
        && b.limit.is_none()
        && b.projection.is_none()
        && scan.fetch.is_none())
    .then_some(provider)
}

/// A column of the table named by `e`: a plain column reference, or one under a cast
/// that loses nothing (DataFusion's type coercion puts `CAST(i AS Int64)` under `SUM`,
/// `CAST(s AS Utf8)` around a LowCardinality column under `MIN`, `CAST(i AS Float64)`
/// under `AVG`).
fn column<'a>(table: &'a ClickHouseTable, e: &Expr) -> Option<&'a ColumnSpec> {
    match e {
        Expr::Column(c) => table.base.columns.iter().find(|s| s.name == c.name),
        Expr::Alias(a) => column(table, &a.expr),
        Expr::Cast(Cast { expr, field }) => {
            let c = column(table, expr)?;
            let b = base_type(&c.clickhouse_type);
            let small = matches!(b, "Int8" | "Int16" | "Int32" | "UInt8" | "UInt16" | "UInt32");
            let ok = match field.data_type() {
                DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
                    kind(&c.clickhouse_type) == Some(Kind::Str)
                }
                DataType::Int64 => small || b == "Int64",
                DataType::UInt64 => matches!(b, "UInt8" | "UInt16" | "UInt32" | "UInt64"),
                DataType::Float64 => small,
                _ => false,
            };
            ok.then_some(c)
        }
        _ => None,
    }
}

/// `e` with the columns of projection `p` (the plan's input) replaced by what they stand
/// for, so it reads the scan below `p` directly.
fn through(p: Option<&Projection>, e: &Expr) -> DFResult<Expr> {
    let Some(p) = p else { return Ok(e.clone()) };
    e.clone()
        .transform(|x| {
            if let Expr::Column(c) = &x {
                for (i, pe) in p.expr.iter().enumerate() {
                    let (q, f) = p.schema.qualified_field(i);
                    if f.name() == &c.name && q == c.relation.as_ref() {
                        return Ok(Transformed::yes(unalias(pe).clone()));
                    }
                }
            }
            Ok(Transformed::no(x))
        })
        .map(|t| t.data)
}

/// Whether both engines group, compare and order values of this column the same way.
fn comparable(c: &ColumnSpec) -> bool {
    kind(&c.clickhouse_type).is_some()
}

fn is_int(c: &ColumnSpec) -> bool {
    kind(&c.clickhouse_type) == Some(Kind::Int)
}

fn unalias(e: &Expr) -> &Expr {
    match e {
        Expr::Alias(a) => unalias(&a.expr),
        e => e,
    }
}

/// What a pushed aggregate becomes once DataFusion has the rows.
struct Plan {
    /// The pushed scan's outputs.
    outputs: Vec<OutputColumn>,
    /// Merging aggregates (partial mode), each aliased.
    merges: Vec<Expr>,
}

impl Plan {
    fn output(&mut self, sql: String, ty: &str) -> String {
        let name = format!("__a{}", self.outputs.len());
        self.outputs.push(OutputColumn { name: name.clone(), sql, clickhouse_type: ty.to_string() });
        name
    }
}

fn push_aggregate(agg: &Aggregate) -> DFResult<Option<LogicalPlan>> {
    // The scan, under a projection of its columns (possibly cast) or not.
    let (scan, proj) = match agg.input.as_ref() {
        LogicalPlan::TableScan(s) => (s, None),
        LogicalPlan::Projection(p) => match p.input.as_ref() {
            LogicalPlan::TableScan(s) => (s, Some(p)),
            _ => return Ok(None),
        },
        _ => return Ok(None),
    };
    let Some(provider) = table_of(scan) else {
        return Ok(None);
    };
    let table = provider.downcast_ref::<ClickHouseTable>().expect("checked");
    let group_expr: Vec<Expr> = agg.group_expr.iter().map(|g| through(proj, unalias(g))).collect::<DFResult<_>>()?;
    let aggr_expr: Vec<Expr> = agg.aggr_expr.iter().map(|a| through(proj, unalias(a))).collect::<DFResult<_>>()?;
    // The scan's filters (all exact) go into every partition's WHERE.
    let Ok(mut config) = table.scan_config(None, &scan.filters, None) else {
        return Ok(None);
    };
    let mut shards: Vec<Option<crate::Shard>> = Vec::new();
    for p in &config.partitions {
        if !shards.contains(&p.shard) {
            shards.push(p.shard.clone());
        }
    }
    let mut plan = Plan { outputs: Vec::new(), merges: Vec::new() };
    let mut group_by = Vec::new();
    let mut keys = Vec::new();
    for (i, g) in group_expr.iter().enumerate() {
        let Some(c) = column(table, g) else { return Ok(None) };
        if !comparable(c) {
            return Ok(None);
        }
        let q = quote_ident(&c.name);
        plan.outputs.push(OutputColumn {
            name: format!("__g{i}"),
            sql: q.clone(),
            clickhouse_type: c.clickhouse_type.clone(),
        });
        group_by.push(q);
        keys.push(c.name.clone());
    }
    let exact = shards.len() <= 1 || table.sharding_key.as_ref().is_some_and(|k| keys.contains(k));
    let qualifier = scan.table_name.clone();
    let scan_col = |name: &str| Expr::Column(Column::new(Some(qualifier.clone()), name));
    // How each output of the scan is read back: itself (exact), or merged (partial).
    let mut finals = Vec::new();
    for (j, e) in aggr_expr.iter().enumerate() {
        let Expr::AggregateFunction(AggregateFunction { func, params }) = unalias(e) else {
            return Ok(None);
        };
        if params.filter.is_some() || !params.order_by.is_empty() || params.null_treatment.is_some() {
            return Ok(None);
        }
        let out_type = agg.schema.field(agg.group_expr.len() + j).data_type().clone();
        let f = func.inner();
        // Reads output `name` back: as it is, or through `merge` with an alias.
        let read = |plan: &mut Plan, name: String, merge: fn(Expr) -> Expr| -> Expr {
            if exact {
                scan_col(&name)
            } else {
                let m = format!("__m{}", plan.merges.len());
                plan.merges.push(merge(scan_col(&name)).alias(&m));
                Expr::Column(Column::new_unqualified(m))
            }
        };
        let zero_if_null = |e: Expr| -> DFResult<Expr> { when(e.clone().is_null(), lit(0i64)).otherwise(e) };
        let expr = if f.is::<Count>() {
            let arg = match params.args.as_slice() {
                [] => None,
                [Expr::Literal(v, _)] if !v.is_null() => None,
                [a] => match column(table, a) {
                    Some(c) => Some(c),
                    None => return Ok(None),
                },
                _ => return Ok(None),
            };
            if params.distinct {
                let Some(c) = arg.filter(|c| comparable(c)) else { return Ok(None) };
                if !exact {
                    return Ok(None);
                }
                let name = plan.output(format!("uniqExact({})", quote_ident(&c.name)), "Int64");
                scan_col(&name)
            } else {
                let sql = match arg {
                    Some(c) => format!("count({})", quote_ident(&c.name)),
                    None => "count()".to_string(),
                };
                let name = plan.output(sql, "Int64");
                let e = read(&mut plan, name, sum);
                if exact {
                    e
                } else {
                    zero_if_null(e)?
                }
            }
        } else if f.is::<Sum>() && !params.distinct {
            let [a] = params.args.as_slice() else { return Ok(None) };
            let Some(c) = column(table, a).filter(|c| is_int(c)) else { return Ok(None) };
            let ty = match out_type {
                DataType::Int64 => "Nullable(Int64)",
                DataType::UInt64 => "Nullable(UInt64)",
                _ => return Ok(None),
            };
            let name = plan.output(format!("sumOrNull({})", quote_ident(&c.name)), ty);
            read(&mut plan, name, sum)
        } else if f.is::<Min>() || f.is::<Max>() {
            let [a] = params.args.as_slice() else { return Ok(None) };
            let Some(c) = column(table, a).filter(|c| comparable(c)) else { return Ok(None) };
            let (fname, merge): (&str, fn(Expr) -> Expr) =
                if f.is::<Min>() { ("minOrNull", min) } else { ("maxOrNull", max) };
            let name = plan.output(
                format!("{fname}({})", quote_ident(&c.name)),
                &format!("Nullable({})", base_type(&c.clickhouse_type)),
            );
            read(&mut plan, name, merge)
        } else if f.is::<Avg>() && !params.distinct {
            let [a] = params.args.as_slice() else { return Ok(None) };
            let Some(c) = column(table, a).filter(|c| is_int(c)) else { return Ok(None) };
            if !matches!(base_type(&c.clickhouse_type), "Int8" | "Int16" | "Int32" | "UInt8" | "UInt16" | "UInt32") {
                return Ok(None);
            }
            let q = quote_ident(&c.name);
            let s = plan.output(format!("sumOrNull({q})"), "Nullable(Int64)");
            let n = plan.output(format!("count({q})"), "Int64");
            let s = read(&mut plan, s, sum);
            let n = read(&mut plan, n, sum);
            let n = if exact { n } else { zero_if_null(n)? };
            Expr::Cast(Cast::new(Box::new(s), DataType::Float64))
                / Expr::Cast(Cast::new(Box::new(n), DataType::Float64))
        } else {
            return Ok(None);
        };
        finals.push(expr);
    }
    let n_keys = agg.group_expr.len();
    config.aggregate = Some(PushedAggregate { outputs: plan.outputs, group_by, exact_per_partition: exact });
    config.partitions = shards.into_iter().map(|shard| PartitionSpec { shard, range: None }).collect();
    let pushed =
        ClickHouseTable::from_config(config, TableStats::default())?.with_task_partitions(table.task_partitions);
    let mut b = LogicalPlanBuilder::scan(qualifier.clone(), provider_as_source(Arc::new(pushed)), None)?;
    let key_cols: Vec<Expr> = (0..n_keys).map(|i| scan_col(&format!("__g{i}"))).collect();
    if !exact {
        b = b.aggregate(key_cols.clone(), plan.merges)?;
    }
    let input = b.build()?;
    let input_schema: &DFSchema = input.schema();
    let mut exprs = Vec::with_capacity(agg.schema.fields().len());
    for (i, e) in key_cols.into_iter().chain(finals).enumerate() {
        let (q, field) = agg.schema.qualified_field(i);
        let e = if &e.get_type(input_schema)? == field.data_type() {
            e
        } else {
            Expr::Cast(Cast::new(Box::new(e), field.data_type().clone()))
        };
        exprs.push(e.alias_qualified(q.cloned(), field.name()));
    }
    Ok(Some(LogicalPlanBuilder::from(input).project(exprs)?.build()?))
}

fn push_top_n(sort: &Sort) -> DFResult<Option<LogicalPlan>> {
    let Some(fetch) = sort.fetch else { return Ok(None) };
    let LogicalPlan::TableScan(scan) = sort.input.as_ref() else {
        return Ok(None);
    };
    let Some(provider) = table_of(scan) else {
        return Ok(None);
    };
    let table = provider.downcast_ref::<ClickHouseTable>().expect("checked");
    let mut order_by = Vec::new();
    for s in &sort.expr {
        let Some(c) = column(table, &s.expr).filter(|c| comparable(c)) else { return Ok(None) };
        order_by.push(format!(
            "{} {} NULLS {}",
            quote_ident(&c.name),
            if s.asc { "ASC" } else { "DESC" },
            if s.nulls_first { "FIRST" } else { "LAST" }
        ));
    }
    let mut config = table.base.clone();
    config.order_by = order_by;
    config.limit = Some(fetch);
    let mut pushed = ClickHouseTable::from_config(config, table.stats)?;
    pushed.sharding_key = table.sharding_key.clone();
    pushed.task_partitions = table.task_partitions;
    let mut new_scan = scan.clone();
    new_scan.source = provider_as_source(Arc::new(pushed));
    Ok(Some(LogicalPlan::Sort(Sort {
        expr: sort.expr.clone(),
        input: Arc::new(LogicalPlan::TableScan(new_scan)),
        fetch: sort.fetch,
    })))
}
