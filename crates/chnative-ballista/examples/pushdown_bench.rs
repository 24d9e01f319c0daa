//! `pushdown_bench`: a grouped aggregate and a top-N over a table sharded on the local
//! 2-shard cluster (scripts/cluster.sh), through ClickHouse itself (a `Distributed`
//! table), through DataFusion with and without aggregate/top-N pushdown, and through a
//! Ballista scheduler and two executors in this process.
//!
//! ```text
//! scripts/cluster.sh start
//! cargo run --release -p chnative-ballista --example pushdown_bench [-- ROWS (10000000)] [ROUNDS (3)]
//! ```
//!
//! The table `datafusion_pushdown_bench` is created on every node and filled once (shard S
//! holds the rows with `number % 2 = S - 1`, on both its replicas); the Distributed table
//! `datafusion_pushdown_bench_dist` over it lives on s1r1. Every answer is checked equal to
//! ClickHouse's before it is timed; the median wall time of ROUNDS rounds is reported.

use std::sync::Arc;
use std::time::Instant;

use chnative_datafusion::{register_table, ClickHouseTable};
use chnative_testkit::rows::{same_rows, tsv_lines};
use datafusion::prelude::SessionContext;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

const TABLE: &str = "datafusion_pushdown_bench";
const DIST: &str = "datafusion_pushdown_bench_dist";
const NODES: [(u16, u16); 4] = [(1, 1), (1, 2), (2, 1), (2, 2)];

fn node_url(s: u16, r: u16) -> String {
    format!("clickhouse://default@127.0.0.1:{}/default?compression=lz4", 29100 + 10 * s + r)
}

async fn fill(rows: u64) -> Res<()> {
    let cols = "id UInt64, RegionID UInt32, UserID Int64, Width Int16, Phrase String, Price Int64";
    for (s, r) in NODES {
        let c = chnative::Client::connect(node_url(s, r).as_str()).await?;
        let have: u64 = c
            .fetch_scalar(
                format!("SELECT count() FROM system.tables WHERE name = '{TABLE}' AND database = 'default'").as_str(),
            )
            .await?;
        let filled: u64 =
            if have == 1 { c.fetch_scalar(format!("SELECT count() FROM {TABLE}").as_str()).await? } else { 0 };
        if filled != rows / 2 + (rows % 2) * u64::from(s == 1) {
            eprintln!("filling {TABLE} on s{s}r{r}…");
            c.execute(format!("DROP TABLE IF EXISTS {TABLE}").as_str()).await?;
            c.execute(format!("CREATE TABLE {TABLE} ({cols}) ENGINE = MergeTree ORDER BY (RegionID, id)").as_str())
                .await?;
            c.execute(
                format!(
                    "INSERT INTO {TABLE} SELECT number, cityHash64(number) % 5000, toInt64(cityHash64(number, 1) % 2000000), \
                     toInt16(800 + number % 1200), concat('phrase ', toString(cityHash64(number, 2) % 100000)), \
                     toInt64(cityHash64(number, 3) % 1000000000) \
                     FROM numbers({rows}) WHERE number % 2 = {}",
                    s - 1
                )
                .as_str(),
            )
            .await?;
            c.execute(format!("OPTIMIZE TABLE {TABLE} FINAL").as_str()).await?;
        }
    }
    let c = chnative::Client::connect(node_url(1, 1).as_str()).await?;
    c.execute(format!("DROP TABLE IF EXISTS {DIST}").as_str()).await?;
    c.execute(format!("CREATE TABLE {DIST} AS {TABLE} ENGINE = Distributed(chn_cluster, default, {TABLE})").as_str())
        .await?;
    Ok(())
}

async fn clickhouse(sql: &str) -> Res<Vec<String>> {
    let c = chnative::Client::connect(node_url(1, 1).as_str()).await?;
    let q = chnative::Query::new(sql.replace(" t ", &format!(" {DIST} "))).setting("load_balancing", "in_order");
    let mut s = chnative_arrow::query_arrow(&c, q).await?;
    let mut batches = Vec::new();
    while let Some(b) = s.next().await? {
        batches.push(b);
    }
    Ok(tsv_lines(&batches))
}

async fn datafusion(ctx: &SessionContext, sql: &str) -> Res<Vec<String>> {
    Ok(tsv_lines(&ctx.sql(sql).await?.collect().await?))
}

const QUERIES: [(&str, &str, &str); 2] = [
    (
        "grouped aggregate",
        // DataFusion's spelling; ClickHouse's below.
        "SELECT \"RegionID\", COUNT(*) AS c, SUM(\"Price\") AS p, MIN(\"Phrase\") AS m, AVG(\"Width\") AS w \
         FROM t GROUP BY \"RegionID\" ORDER BY c DESC, \"RegionID\" LIMIT 10",
        "SELECT RegionID, count() AS c, sum(Price) AS p, min(Phrase) AS m, avg(Width) AS w \
         FROM t GROUP BY RegionID ORDER BY c DESC, RegionID LIMIT 10",
    ),
    (
        "top-N",
        "SELECT \"id\", \"UserID\", \"Phrase\", \"Price\" FROM t ORDER BY \"Price\" DESC, \"id\" LIMIT 10",
        "SELECT id, UserID, Phrase, Price FROM t ORDER BY Price DESC, id LIMIT 10",
    ),
];

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() -> Res<()> {
    let mut args = std::env::args().skip(1);
    let rows: u64 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(10_000_000);
    let rounds: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(3);
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    rt.block_on(fill(rows))?;
    let open = |pushdown: bool| {
        rt.block_on(
            ClickHouseTable::builder(node_url(1, 1), TABLE)
                .cluster("chn_cluster")
                .key_ranges(2)
                .pushdown(pushdown)
                .build(),
        )
    };
    let mut engines: Vec<(String, SessionContext)> = Vec::new();
    for (name, on) in [("DataFusion, pushdown", true), ("DataFusion, no pushdown", false)] {
        let ctx = SessionContext::new();
        register_table(&ctx, "t", open(on)?)?;
        engines.push((name.to_string(), ctx));
    }
    let _cluster = {
        use ballista::prelude::SessionContextExt;
        let cluster = rt.block_on(chnative_ballista::LocalCluster::start(2, 2))?;
        for (name, on) in [("Ballista (2 executors), pushdown", true), ("Ballista (2 executors), no pushdown", false)] {
            let ctx =
                rt.block_on(SessionContext::remote_with_state(&cluster.url(), chnative_ballista::session_state()))?;
            ctx.register_table("t", Arc::new(open(on)?))?;
            engines.push((name.to_string(), ctx));
        }
        cluster
    };
    println!("{rows} rows on 2 shards (×2 replicas), median wall of {rounds} rounds, {}", chrono_free_date());
    println!();
    println!("| query | engine | wall (s) | × ClickHouse |");
    println!("|---|---|---|---|");
    for (qname, df_sql, ch_sql) in QUERIES {
        let want = rt.block_on(clickhouse(ch_sql))?;
        let mut times = Vec::new();
        for _ in 0..rounds {
            let t0 = Instant::now();
            rt.block_on(clickhouse(ch_sql))?;
            times.push(t0.elapsed().as_secs_f64());
        }
        let base = median(times);
        println!("| {qname} | ClickHouse (Distributed table) | {base:.3} | 1.00 |");
        for (ename, ctx) in &engines {
            let got = rt.block_on(datafusion(ctx, df_sql))?;
            if !same_rows(&got, &want) {
                println!("| {qname} | {ename} | wrong answer: {got:?} | ClickHouse: {want:?} |");
                continue;
            }
            let mut times = Vec::new();
            for _ in 0..rounds {
                let t0 = Instant::now();
                rt.block_on(datafusion(ctx, df_sql))?;
                times.push(t0.elapsed().as_secs_f64());
            }
            let t = median(times);
            println!("| {qname} | {ename} | {t:.3} | {:.2} |", t / base);
        }
    }
    Ok(())
}

/// Today's date (UTC) from the system clock, `YYYY-MM-DD`.
fn chrono_free_date() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let (y, m, d) = chnative::convert::calendar::civil_from_days((secs / 86_400) as i64);
    format!("{y:04}-{m:02}-{d:02}")
}
