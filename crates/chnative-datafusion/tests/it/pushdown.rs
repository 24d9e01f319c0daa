//! Aggregate and top-N pushdown on the local 2-shard cluster: every query's answer compared
//! with ClickHouse's own through a `Distributed` table and with DataFusion's own (the same
//! table with pushdown off), output types included; `EXPLAIN` shows what went down.

use std::sync::OnceLock;

use chnative_datafusion::{register_table, ClickHouseTable};
use datafusion::prelude::SessionContext;

use chnative_testkit::cluster::{http, tcp_port, NAME};
use chnative_testkit::rows::{same_rows, tsv_lines};

pub(crate) const LOCAL: &str = "datafusion_pd_local";
pub(crate) const DIST: &str = "datafusion_pd_dist";

/// The local table on every node (shard S: rows whose `g % 2 = S - 1`, so `g` is a
/// sharding key) and a Distributed table over it on s1r1.
pub(crate) fn tables() {
    static MADE: OnceLock<()> = OnceLock::new();
    MADE.get_or_init(|| chnative_testkit::cluster::make_sharded_table(LOCAL, DIST));
}

pub(crate) fn url(s: u16) -> String {
    format!("clickhouse://default@127.0.0.1:{}/default", tcp_port(s, 1))
}

/// Two sessions over the whole cluster (`t`), one with pushdown, one without.
async fn cluster_contexts() -> (SessionContext, SessionContext) {
    tables();
    let on = SessionContext::new();
    let t =
        ClickHouseTable::builder(url(1), LOCAL).cluster(NAME).key_ranges(2).sharding_key("g").build().await.unwrap();
    register_table(&on, "t", t.clone()).unwrap();
    let off = SessionContext::new();
    let t = ClickHouseTable::builder(url(1), LOCAL).cluster(NAME).key_ranges(2).pushdown(false).build().await.unwrap();
    register_table(&off, "t", t).unwrap();
    (on, off)
}

/// The rows and the column types of `sql`.
async fn run(ctx: &SessionContext, sql: &str) -> (Vec<String>, Vec<String>) {
    let df = ctx.sql(sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    let batches = df.collect().await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    let types = match batches.first() {
        Some(b) => b.schema().fields().iter().map(|f| f.data_type().to_string()).collect(),
        None => Vec::new(),
    };
    (tsv_lines(&batches), types)
}

async fn explain(ctx: &SessionContext, sql: &str) -> String {
    tsv_lines(&ctx.sql(&format!("EXPLAIN {sql}")).await.unwrap().collect().await.unwrap()).join("\n")
}

pub(crate) fn clickhouse(s: u16, sql: &str) -> Vec<String> {
    http(s, 1, &format!("{sql} FORMAT TSV")).lines().map(str::to_string).collect()
}

/// (DataFusion SQL over `t`, ClickHouse SQL over `T`, what the plan must show).
const CASES: &[(&str, &str, &str)] = &[
    ("SELECT COUNT(*) FROM t", "SELECT count() FROM T", "aggregate=partial"),
    (
        "SELECT k, COUNT(*), COUNT(s), SUM(i), SUM(big), MIN(s), MAX(s), MIN(d), MAX(t), AVG(i) FROM t \
         GROUP BY k ORDER BY k NULLS FIRST",
        "SELECT k, count(), count(s), sum(i), sum(big), min(s), max(s), min(d), max(t), avg(i) FROM T \
         GROUP BY k ORDER BY k NULLS FIRST",
        "aggregate=partial",
    ),
    (
        "SELECT SUM(big), MIN(t), MAX(k), AVG(k) FROM t WHERE g < 30 AND s <> 's3'",
        "SELECT sum(big), min(t), max(k), avg(k) FROM T WHERE g < 30 AND s != 's3'",
        "aggregate=partial",
    ),
    // Empty input: counts 0, everything else NULL (ClickHouse's plain sum/avg would say
    // 0/nan: the reference uses its -OrNull forms).
    (
        "SELECT COUNT(*), SUM(i), MIN(s), AVG(i), MAX(d) FROM t WHERE id > 100000000",
        "SELECT count(), sumOrNull(i), minOrNull(s), avgOrNull(i), maxOrNull(d) FROM T WHERE id > 100000000",
        "aggregate=partial",
    ),
    (
        "SELECT k, COUNT(*) FROM t WHERE id > 100000000 GROUP BY k",
        "SELECT k, count() FROM T WHERE id > 100000000 GROUP BY k",
        "aggregate=partial",
    ),
    // COUNT(DISTINCT) across shards: DataFusion groups by the counted column below the
    // count, and that grouping is what goes down (partial).
    ("SELECT COUNT(DISTINCT s) FROM t", "SELECT uniqExact(s) FROM T", "GROUP BY `s`"),
    (
        "SELECT k, COUNT(DISTINCT s) FROM t GROUP BY k ORDER BY k NULLS FIRST",
        "SELECT k, uniqExact(s) FROM T GROUP BY k ORDER BY k NULLS FIRST",
        "aggregate=partial",
    ),
    // Grouped by the sharding key: each shard's answer is final, COUNT(DISTINCT) too.
    (
        "SELECT g, COUNT(DISTINCT s), COUNT(*), SUM(i), MAX(s) FROM t GROUP BY g ORDER BY g",
        "SELECT g, uniqExact(s), count(), sum(i), max(s) FROM T GROUP BY g ORDER BY g",
        "aggregate=final",
    ),
    (
        "SELECT g, k, COUNT(*) AS c FROM t GROUP BY g, k HAVING COUNT(*) > 55 ORDER BY g, k",
        "SELECT g, k, count() AS c FROM T GROUP BY g, k HAVING count() > 55 ORDER BY g, k",
        "aggregate=final",
    ),
    // Top-N: each partition's first n in ClickHouse, merged by DataFusion's sort.
    (
        "SELECT id, s, d FROM t ORDER BY s DESC NULLS LAST, id LIMIT 7",
        "SELECT id, s, d FROM T ORDER BY s DESC NULLS LAST, id LIMIT 7",
        "order_by=[`s` DESC NULLS LAST, `id` ASC NULLS LAST]",
    ),
    (
        "SELECT id, k FROM t WHERE g < 20 ORDER BY k NULLS FIRST, id DESC LIMIT 5 OFFSET 2",
        "SELECT id, k FROM T WHERE g < 20 ORDER BY k NULLS FIRST, id DESC LIMIT 2, 5",
        "order_by=[`k` ASC NULLS FIRST, `id` DESC NULLS FIRST]",
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pushed_aggregates_match_clickhouse_and_datafusion() {
    let (on, off) = cluster_contexts().await;
    for (ours, theirs, shows) in CASES {
        let (got, types) = run(&on, ours).await;
        let (plain, plain_types) = run(&off, ours).await;
        let want = clickhouse(1, &theirs.replace(" T", &format!(" {DIST}")));
        assert!(same_rows(&got, &want), "{ours}\npushdown:   {got:?}\nClickHouse: {want:?}");
        assert!(same_rows(&got, &plain), "{ours}\npushdown:   {got:?}\nDataFusion: {plain:?}");
        assert_eq!(types, plain_types, "{ours}: output types");
        let plan = explain(&on, ours).await;
        assert!(plan.contains(shows), "{ours}: expected {shows:?} in\n{plan}");
        let plain_plan = explain(&off, ours).await;
        assert!(!plain_plan.contains("GROUP BY") && !plain_plan.contains("order_by="), "{plain_plan}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_shard_computes_the_whole_aggregate() {
    tables();
    // Shard 1's local table on its own: one server, so every aggregate is final there.
    let on = SessionContext::new();
    register_table(&on, "t", ClickHouseTable::builder(url(1), LOCAL).key_ranges(3).build().await.unwrap()).unwrap();
    let off = SessionContext::new();
    let t = ClickHouseTable::builder(url(1), LOCAL).key_ranges(3).pushdown(false).build().await.unwrap();
    register_table(&off, "t", t).unwrap();
    // (query, ClickHouse's, whether nothing is left for DataFusion to aggregate: a
    // COUNT(DISTINCT) beside other aggregates is first split by DataFusion's own rewrite
    // into GROUP BY key, x below a count, and only the inner grouping goes down).
    for (ours, theirs, whole) in [
        ("SELECT COUNT(*), COUNT(DISTINCT s) FROM t", "SELECT count(), uniqExact(s) FROM T", true),
        ("SELECT COUNT(*), SUM(big), AVG(i), MAX(s) FROM t", "SELECT count(), sum(big), avg(i), max(s) FROM T", true),
        (
            "SELECT s, COUNT(DISTINCT k), MIN(t), SUM(i) FROM t GROUP BY s ORDER BY s NULLS FIRST",
            "SELECT s, uniqExact(k), min(t), sum(i) FROM T GROUP BY s ORDER BY s NULLS FIRST",
            false,
        ),
        (
            "SELECT s, COUNT(k), MIN(t), SUM(i) FROM t GROUP BY s ORDER BY s NULLS FIRST",
            "SELECT s, count(k), min(t), sum(i) FROM T GROUP BY s ORDER BY s NULLS FIRST",
            true,
        ),
    ] {
        let (got, types) = run(&on, ours).await;
        let (plain, plain_types) = run(&off, ours).await;
        let want = clickhouse(1, &theirs.replace(" T", &format!(" {LOCAL}")));
        assert!(same_rows(&got, &want), "{ours}\npushdown:   {got:?}\nClickHouse: {want:?}");
        assert!(same_rows(&got, &plain), "{ours}\npushdown:   {got:?}\nDataFusion: {plain:?}");
        assert_eq!(types, plain_types);
        let plan = explain(&on, ours).await;
        assert!(plan.contains("aggregate=final") && plan.contains("partitions=1"), "{plan}");
        assert_eq!(!plan.contains("AggregateExec"), whole, "{plan}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_differs_stays_in_datafusion() {
    let (on, off) = cluster_contexts().await;
    for sql in [
        // Floats: NaN and summation order.
        "SELECT SUM(f), MIN(f) FROM t",
        // AVG over 64-bit integers: each value would round on its way to Float64.
        "SELECT AVG(big) FROM t",
        // Expressions as keys or arguments.
        "SELECT g % 3, COUNT(*) FROM t GROUP BY g % 3 ORDER BY 1",
        "SELECT SUM(i + 1) FROM t",
        // COUNT(DISTINCT) beside other aggregates, not grouped by the sharding key.
        "SELECT k, COUNT(DISTINCT s), COUNT(DISTINCT d) FROM t GROUP BY k ORDER BY k NULLS FIRST",
        // A top-N on a float column.
        "SELECT id FROM t ORDER BY f DESC, id LIMIT 3",
    ] {
        let plan = explain(&on, sql).await;
        assert!(!plan.contains("aggregate=") && !plan.contains("order_by="), "{sql}: {plan}");
        let (got, _) = run(&on, sql).await;
        let (plain, _) = run(&off, sql).await;
        // Within 1e-9: DataFusion's own float sum changes in the last digits from run to
        // run (partitions arrive in any order), which is why it is not pushed.
        assert!(same_rows(&got, &plain), "{sql}: {got:?} vs {plain:?}");
    }
    // SUM over Int64 wraps around in all three engines alike: the data's `big` column
    // overflows, and the pushed answer is DataFusion's and ClickHouse's.
    let (got, _) = run(&on, "SELECT SUM(big) FROM t").await;
    let exact: i128 = clickhouse(1, &format!("SELECT toString(sum(toInt128(big))) FROM {DIST}"))[0].parse().unwrap();
    assert!(exact > i128::from(i64::MAX), "the data overflows Int64: {exact}");
    assert_eq!(got, vec![(exact as i64).to_string()]);
    assert_eq!(got, run(&off, "SELECT SUM(big) FROM t").await.0);
}
