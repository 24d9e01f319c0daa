//! chnative-datafusion against the real server: DataFusion's answers compared with
//! ClickHouse's own answers to the same SQL on the same data, pushdown seen in the SQL
//! the scan sends, partitions, statistics, a serialized scan, and a join with a CSV file.

use std::sync::{Arc, OnceLock};

use chnative_datafusion::{ClickHouseScanExec, ClickHouseTable, ScanConfig};
use datafusion::physical_plan::{collect, ExecutionPlan, ExecutionPlanProperties};
use datafusion::prelude::{CsvReadOptions, SessionContext};

use chnative_testkit::rows::{same_rows, tsv_lines};
use chnative_testkit::server::{http, server};

fn url() -> String {
    chnative_testkit::server::url("")
}

const HITS: &str = "datafusion_hits";

/// A hits-like table (ClickBench column names and sorting key), filled deterministically.
fn hits() -> &'static str {
    static MADE: OnceLock<()> = OnceLock::new();
    MADE.get_or_init(|| {
        http(&format!("DROP TABLE IF EXISTS {HITS}"));
        http(&format!(
            "CREATE TABLE {HITS} (WatchID Int64, CounterID UInt32, EventDate Date, EventTime DateTime('UTC'), \
             UserID Int64, AdvEngineID Int16, ResolutionWidth Int16, SearchPhrase String, URL String, \
             RegionID UInt32, MobilePhoneModel LowCardinality(String), IsRefresh Int16, Score Float64, \
             Referer Nullable(String)) \
             ENGINE = MergeTree ORDER BY (CounterID, EventDate, UserID)"
        ));
        http(&format!(
            "INSERT INTO {HITS} SELECT toInt64(cityHash64(number)), number % 97, \
             toDate('2013-07-01') + number % 31, toDateTime('2013-07-01 00:00:00', 'UTC') + number * 13, \
             toInt64(cityHash64(number % 20011)) % 1000000, if(number % 9 = 0, number % 4, 0), \
             toInt16(800 + number % 1200), if(number % 7 = 0, '', concat('phrase ', toString(number % 113))), \
             concat('http://site', toString(number % 50), '.com/page', toString(number % 1000)), number % 300, \
             if(number % 5 = 0, '', ['iPhone', 'Galaxy', 'Pixel'][number % 3 + 1]), toInt16(number % 4 = 0), \
             if(number % 101 = 0, nan, (number % 1000) / 1000), if(number % 3 = 0, NULL, concat('ref', toString(number % 17))) \
             FROM numbers(200000)"
        ));
    });
    HITS
}

async fn ctx_with_hits(key_ranges: usize) -> (SessionContext, Arc<ClickHouseTable>) {
    let t = Arc::new(ClickHouseTable::builder(url(), hits()).key_ranges(key_ranges).build().await.expect("open table"));
    let ctx = SessionContext::new();
    ctx.register_table("hits", t.clone()).unwrap();
    (ctx, t)
}

async fn df_rows(ctx: &SessionContext, sql: &str) -> Vec<String> {
    let batches = ctx
        .sql(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .collect()
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    tsv_lines(&batches)
}

fn ch_rows(sql: &str) -> Vec<String> {
    http(&format!("{sql} FORMAT TSV")).lines().map(str::to_string).collect()
}

/// The physical plan's text (EXPLAIN shows the SQL each scan sends).
async fn plan_text(ctx: &SessionContext, sql: &str) -> String {
    let batches = ctx.sql(&format!("EXPLAIN {sql}")).await.unwrap().collect().await.unwrap();
    tsv_lines(&batches).join("\n")
}

// A ClickBench subset (queries 0-8, 10, 12, 19-21, 24, 36 in spirit), in SQL both engines
// read the same way: quoted identifiers, deterministic ORDER BY.
const CLICKBENCH: &[&str] = &[
    "SELECT COUNT(*) FROM hits",
    "SELECT COUNT(*) FROM hits WHERE \"AdvEngineID\" <> 0",
    "SELECT SUM(\"AdvEngineID\"), COUNT(*), AVG(\"ResolutionWidth\") FROM hits",
    "SELECT AVG(\"UserID\") FROM hits",
    "SELECT COUNT(DISTINCT \"UserID\") FROM hits",
    "SELECT COUNT(DISTINCT \"SearchPhrase\") FROM hits",
    "SELECT MIN(\"EventDate\"), MAX(\"EventDate\") FROM hits",
    "SELECT \"AdvEngineID\", COUNT(*) FROM hits WHERE \"AdvEngineID\" <> 0 GROUP BY \"AdvEngineID\" ORDER BY COUNT(*) DESC, \"AdvEngineID\"",
    "SELECT \"RegionID\", COUNT(DISTINCT \"UserID\") AS u FROM hits GROUP BY \"RegionID\" ORDER BY u DESC, \"RegionID\" LIMIT 10",
    "SELECT \"MobilePhoneModel\", COUNT(DISTINCT \"UserID\") AS u FROM hits WHERE \"MobilePhoneModel\" <> '' GROUP BY \"MobilePhoneModel\" ORDER BY u DESC, \"MobilePhoneModel\" LIMIT 10",
    "SELECT \"SearchPhrase\", COUNT(*) AS c FROM hits WHERE \"SearchPhrase\" <> '' GROUP BY \"SearchPhrase\" ORDER BY c DESC, \"SearchPhrase\" LIMIT 10",
    "SELECT \"UserID\", COUNT(*) FROM hits WHERE \"UserID\" IN (SELECT \"UserID\" FROM hits ORDER BY \"UserID\" LIMIT 3) GROUP BY \"UserID\" ORDER BY \"UserID\"",
    "SELECT COUNT(*) FROM hits WHERE \"URL\" LIKE '%site1%'",
    "SELECT \"SearchPhrase\", MIN(\"URL\"), COUNT(*) AS c FROM hits WHERE \"URL\" LIKE '%page7%' AND \"SearchPhrase\" <> '' GROUP BY \"SearchPhrase\" ORDER BY c DESC, \"SearchPhrase\" LIMIT 10",
    "SELECT \"SearchPhrase\" FROM hits WHERE \"SearchPhrase\" <> '' ORDER BY \"EventTime\", \"SearchPhrase\" LIMIT 10",
    "SELECT \"URL\", COUNT(*) AS \"PageViews\" FROM hits WHERE \"CounterID\" = 62 AND \"EventDate\" >= '2013-07-01' AND \"EventDate\" <= '2013-07-31' AND \"IsRefresh\" = 0 GROUP BY \"URL\" ORDER BY \"PageViews\" DESC, \"URL\" LIMIT 10",
    "SELECT \"Referer\", COUNT(*) FROM hits WHERE \"Referer\" IS NOT NULL AND \"Referer\" NOT IN ('ref1', 'ref2') GROUP BY \"Referer\" ORDER BY \"Referer\"",
    "SELECT COUNT(*) FROM hits WHERE \"Referer\" IS NULL OR \"CounterID\" BETWEEN 10 AND 20",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clickbench_subset_matches_clickhouse() {
    let (ctx, _) = ctx_with_hits(4).await;
    for sql in CLICKBENCH {
        let ours = df_rows(&ctx, sql).await;
        let theirs = ch_rows(&sql.replace(" hits", &format!(" {HITS}")));
        assert!(same_rows(&ours, &theirs), "{sql}\nDataFusion: {ours:?}\nClickHouse: {theirs:?}");
        assert!(!theirs.is_empty(), "{sql}: an empty answer proves little");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn projection_filters_and_limit_reach_the_sql() {
    let (ctx, _) = ctx_with_hits(1).await;
    // Projection and an exact filter: one column selected, the condition in WHERE with
    // its value as a parameter, no FilterExec left above the scan.
    let plan = plan_text(&ctx, "SELECT \"URL\" FROM hits WHERE \"CounterID\" = 62 AND \"SearchPhrase\" <> 'x'").await;
    let select = select_list(&plan);
    assert!(select.contains("`URL`") && !select.contains("`WatchID`"), "{plan}");
    assert!(plan.contains("FROM `default`.`datafusion_hits` WHERE"), "{plan}");
    assert!(plan.contains("`CounterID` = {f"), "{plan}");
    assert!(plan.contains("`SearchPhrase` != {f"), "{plan}");
    assert!(plan.contains("=\"62\"") && plan.contains("=\"x\""), "{plan}");
    assert!(!plan.contains("FilterExec"), "exact filters are not evaluated again: {plan}");
    // Limit without filters: LIMIT in the SQL.
    let plan = plan_text(&ctx, "SELECT \"URL\", \"UserID\" FROM hits LIMIT 7").await;
    assert!(plan.contains("LIMIT {__limit:UInt64}") && plan.contains("__limit=\"7\""), "{plan}");
    assert_eq!(df_rows(&ctx, "SELECT \"URL\", \"UserID\" FROM hits LIMIT 7").await.len(), 7);
    // A float comparison is Unsupported (NaN orders differently): DataFusion filters,
    // the SQL has no WHERE, and the column is read for it.
    let plan = plan_text(&ctx, "SELECT \"URL\" FROM hits WHERE \"Score\" > 0.5").await;
    assert!(plan.contains("FilterExec"), "{plan}");
    assert!(
        plan.contains("sql=SELECT `URL`, `Score` FROM") || plan.contains("sql=SELECT `Score`, `URL` FROM"),
        "{plan}"
    );
    assert!(!plan.contains("WHERE"), "{plan}");
    // And the answer is DataFusion's (NaN above every number), not ClickHouse's
    // (NaN compares false): pushing it down would have lost the NaN rows.
    let ours = df_rows(&ctx, "SELECT COUNT(*) FROM hits WHERE \"Score\" > 0.5").await;
    assert_eq!(ours, ch_rows(&format!("SELECT count() FROM {HITS} WHERE Score > 0.5 OR isNaN(Score)")));
    assert_ne!(ours, ch_rows(&format!("SELECT count() FROM {HITS} WHERE Score > 0.5")));
    // A mix: the pushable half goes to ClickHouse, the other stays.
    let plan = plan_text(&ctx, "SELECT COUNT(*) FROM hits WHERE \"Score\" > 0.5 AND \"AdvEngineID\" = 2").await;
    assert!(plan.contains("FilterExec") && plan.contains("`AdvEngineID` = {f"), "{plan}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn values_are_parameters_never_text() {
    let (ctx, _) = ctx_with_hits(1).await;
    let evil = "x' OR 1 = 1 OR '' = '";
    let sql = format!("SELECT COUNT(*) FROM hits WHERE \"SearchPhrase\" = '{}'", evil.replace('\'', "''"));
    assert_eq!(df_rows(&ctx, &sql).await, vec!["0"]);
    let plan = plan_text(&ctx, &sql).await;
    assert!(!plan.contains("OR 1 = 1 OR '' = '') "), "{plan}");
    assert!(plan.contains("`SearchPhrase` = {f0_0:String}"), "{plan}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn key_ranges_cover_every_row_once() {
    let (ctx, t) = ctx_with_hits(4).await;
    assert_eq!(t.partitions().len(), 4, "{:?}", t.partitions());
    let df = ctx.sql("SELECT \"WatchID\", \"CounterID\" FROM hits").await.unwrap();
    let plan = df.create_physical_plan().await.unwrap();
    // The scan itself, under whatever DataFusion put above it.
    let scan = find_scan(&plan).expect("a ClickHouseScanExec");
    assert_eq!(scan.output_partitioning().partition_count(), 4);
    let task = ctx.task_ctx();
    let mut total = 0usize;
    for p in 0..4 {
        let rows: usize = datafusion::physical_plan::common::collect(scan.execute(p, task.clone()).unwrap())
            .await
            .unwrap()
            .iter()
            .map(|b| b.num_rows())
            .sum();
        assert!(rows > 0, "partition {p} is empty");
        total += rows;
    }
    assert_eq!(total.to_string(), http(&format!("SELECT count() FROM {HITS}")).trim());
    // Disjoint: every WatchID once.
    let distinct = df_rows(&ctx, "SELECT COUNT(DISTINCT \"WatchID\") FROM hits").await;
    assert_eq!(distinct, ch_rows(&format!("SELECT uniqExact(WatchID) FROM {HITS}")));
}

/// The column list of the first scan's SELECT in a plan's text.
fn select_list(plan: &str) -> &str {
    let start = plan.find("sql=SELECT ").expect("a scan's SQL") + "sql=SELECT ".len();
    let end = plan[start..].find(" FROM ").expect("FROM") + start;
    &plan[start..end]
}

fn find_scan(plan: &Arc<dyn ExecutionPlan>) -> Option<Arc<dyn ExecutionPlan>> {
    if plan.name() == "ClickHouseScanExec" {
        return Some(plan.clone());
    }
    plan.children().into_iter().find_map(find_scan)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn statistics_from_system_tables() {
    let (_, t) = ctx_with_hits(1).await;
    let s = t.stats();
    assert_eq!(s.rows.unwrap().to_string(), http(&format!("SELECT count() FROM {HITS}")).trim());
    let bytes: u64 = http(&format!(
        "SELECT total_bytes_uncompressed FROM system.tables WHERE database = 'default' AND name = '{HITS}'"
    ))
    .trim()
    .parse()
    .unwrap();
    assert_eq!(s.bytes, Some(bytes));
    use datafusion::datasource::TableProvider;
    let st = t.statistics().unwrap();
    assert_eq!(st.num_rows.get_value().copied(), Some(s.rows.unwrap() as usize));
    assert!(!st.num_rows.is_exact().unwrap_or(true), "read at open time: never Exact");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scan_ships_as_json_and_runs_elsewhere() {
    let (ctx, _) = ctx_with_hits(2).await;
    let sql = "SELECT \"SearchPhrase\", \"UserID\" FROM hits WHERE \"CounterID\" = 5 AND \"SearchPhrase\" <> ''";
    let plan = ctx.sql(sql).await.unwrap().create_physical_plan().await.unwrap();
    let scan = find_scan(&plan).unwrap();
    let config = scan.downcast_ref::<ClickHouseScanExec>().expect("our plan").config().clone();
    let json = serde_json::to_string(&config).unwrap();
    // A "worker": a fresh context, nothing but the JSON.
    let shipped: ScanConfig = serde_json::from_str(&json).unwrap();
    assert_eq!(shipped, config);
    let exec: Arc<dyn ExecutionPlan> = Arc::new(ClickHouseScanExec::try_new(shipped, Default::default()).unwrap());
    let mut rows = tsv_lines(&collect(exec, SessionContext::new().task_ctx()).await.unwrap());
    rows.sort();
    let mut theirs =
        ch_rows(&format!("SELECT UserID, SearchPhrase FROM {HITS} WHERE CounterID = 5 AND SearchPhrase != ''"));
    theirs.sort();
    assert!(!theirs.is_empty());
    assert_eq!(rows, theirs);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn join_with_a_local_csv_file() {
    let (ctx, _) = ctx_with_hits(4).await;
    let dir = std::env::temp_dir().join(format!("chnative-datafusion-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("regions.csv");
    let mut text = String::from("region_id,region_name\n");
    let mut values = Vec::new();
    for id in (0..300).step_by(7) {
        text.push_str(&format!("{id},region {}\n", id % 11));
        values.push(format!("({id}, 'region {}')", id % 11));
    }
    std::fs::write(&csv, text).unwrap();
    ctx.register_csv("regions", csv.to_str().unwrap(), CsvReadOptions::new()).await.unwrap();
    let ours = df_rows(
        &ctx,
        "SELECT r.region_name, COUNT(*) AS c, COUNT(DISTINCT h.\"UserID\") AS u FROM hits h \
         JOIN regions r ON h.\"RegionID\" = r.region_id WHERE h.\"AdvEngineID\" = 0 \
         GROUP BY r.region_name ORDER BY r.region_name",
    )
    .await;
    let theirs = ch_rows(&format!(
        "SELECT r.region_name, count() AS c, uniqExact(h.UserID) AS u FROM {HITS} h \
         JOIN (SELECT * FROM values('region_id UInt32, region_name String', {})) r ON h.RegionID = r.region_id \
         WHERE h.AdvEngineID = 0 GROUP BY r.region_name ORDER BY r.region_name",
        values.join(", ")
    ));
    assert_eq!(theirs.len(), 11);
    assert!(same_rows(&ours, &theirs), "DataFusion: {ours:?}\nClickHouse: {theirs:?}");
    std::fs::remove_dir_all(&dir).ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_table_and_a_dead_endpoint_are_clear_errors() {
    let e = ClickHouseTable::open(url(), "datafusion_no_such_table").await.unwrap_err().to_string();
    assert!(e.contains("datafusion_no_such_table"), "{e}");
    let (ctx, t) = ctx_with_hits(1).await;
    let mut config = t.scan_config(None, &[], None).unwrap();
    // Port 1 on loopback: nothing listens there.
    config.connection.url = "clickhouse://default@127.0.0.1:1/default?connect_timeout=2s".into();
    let exec: Arc<dyn ExecutionPlan> = Arc::new(ClickHouseScanExec::try_new(config, Default::default()).unwrap());
    let started = std::time::Instant::now();
    let e = collect(exec, ctx.task_ctx()).await.unwrap_err().to_string();
    assert!(started.elapsed() < std::time::Duration::from_secs(30), "no hang");
    assert!(e.to_lowercase().contains("connect") || e.contains("refused"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_partition_set_per_shard_with_replica_failover() {
    // Until the local cluster is up: two "shards" that are the same server, so every row
    // is read twice. The first shard's preferred replica is dead (port 1): the partition
    // fails over to the next replica of the same shard.
    let port = server().tcp_port;
    let shards = vec![
        chnative_datafusion::Shard::new(["127.0.0.1:1".to_string(), format!("127.0.0.1:{port}")]),
        chnative_datafusion::Shard::new([format!("127.0.0.1:{port}")]),
    ];
    let t = ClickHouseTable::builder(url(), hits()).shards(shards.clone()).key_ranges(2).build().await.unwrap();
    assert_eq!(t.partitions().len(), 4);
    assert_eq!(t.partitions().iter().filter(|p| p.shard.as_ref() == Some(&shards[0])).count(), 2);
    let n: u64 = http(&format!("SELECT count() FROM {HITS}")).trim().parse().unwrap();
    assert_eq!(t.stats().rows, Some(2 * n), "statistics summed over shards");
    let ctx = SessionContext::new();
    ctx.register_table("hits", Arc::new(t)).unwrap();
    assert_eq!(df_rows(&ctx, "SELECT COUNT(*) FROM hits").await, vec![(2 * n).to_string()]);
    let ours = df_rows(&ctx, "SELECT \"AdvEngineID\", COUNT(*) FROM hits GROUP BY \"AdvEngineID\" ORDER BY 1").await;
    let theirs = ch_rows(&format!("SELECT AdvEngineID, 2 * count() FROM {HITS} GROUP BY AdvEngineID ORDER BY 1"));
    assert_eq!(ours, theirs);
}
