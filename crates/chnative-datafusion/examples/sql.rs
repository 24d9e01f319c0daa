//! DataFusion SQL over a ClickHouse table sharded across the local cluster, joined with a
//! local CSV file, and checked against ClickHouse's own answer through a `Distributed` table.
//!
//! `cargo run --release -p chnative-datafusion --example sql [clickhouse://user@host:port/db [cluster]]`
//!
//! With no URL it starts the local cluster of embedded servers (`scripts/cluster.sh start`:
//! 2 shards x 2 replicas, cluster `chn_cluster`). The table is created on every replica and
//! filled through the `Distributed` table, so each shard holds its share of the rows; the
//! provider reads one partition set per shard (two key ranges each), in parallel.

use std::sync::Arc;

use chnative::cluster::Cluster;
use chnative::Config;
use chnative_datafusion::ClickHouseTable;
use datafusion::prelude::{CsvReadOptions, SessionContext};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn start_local_cluster() -> String {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/cluster.sh");
    let out = std::process::Command::new("bash").arg(script).arg("start").output().expect("run scripts/cluster.sh");
    assert!(out.status.success(), "scripts/cluster.sh start failed:\n{}", String::from_utf8_lossy(&out.stderr));
    "clickhouse://default@127.0.0.1:29111/default".to_string()
}

#[tokio::main]
async fn main() -> Res<()> {
    let mut args = std::env::args().skip(1);
    let url = args.next().unwrap_or_else(start_local_cluster);
    let name = args.next().unwrap_or_else(|| "chn_cluster".to_string());

    // The data: a local table on every replica (no ON CLUSTER: the embedded server has no
    // Keeper) and a Distributed table that splits rows by `user_id` when filled.
    let cluster = Cluster::discover(Config::from_url(&url)?, &name).await?;
    cluster.execute_on_every_replica("DROP TABLE IF EXISTS example_visits_local SYNC").await?;
    cluster
        .execute_on_every_replica(
            "CREATE TABLE example_visits_local (user_id UInt64, region_id UInt32, url String) \
             ENGINE = MergeTree ORDER BY user_id",
        )
        .await?;
    cluster
        .execute_on_every_replica(format!(
            "CREATE OR REPLACE TABLE example_visits AS example_visits_local \
             ENGINE = Distributed({name}, currentDatabase(), example_visits_local, user_id)"
        ))
        .await?;
    let client = chnative::Client::connect(url.as_str()).await?;
    client
        .execute(
            "INSERT INTO example_visits SELECT number, number % 20, concat('/page/', toString(number % 100)) \
             FROM numbers(100000) SETTINGS distributed_foreground_insert = 1",
        )
        .await?;

    // A local CSV file: region names, joined in DataFusion.
    let csv = std::env::temp_dir().join(format!("chnative-example-regions-{}.csv", std::process::id()));
    let mut text = String::from("region_id,region_name\n");
    for id in 0..20 {
        text.push_str(&format!("{id},region {}\n", id % 4));
    }
    std::fs::write(&csv, text)?;

    // The provider: one partition set per shard of the cluster, two key ranges each.
    let table = ClickHouseTable::builder(url.as_str(), "example_visits_local")
        .cluster(name.as_str())
        .key_ranges(2)
        .build()
        .await?;
    println!("{} partitions: {} shards x 2 key ranges", table.partitions().len(), cluster.topology().shards.len());
    let ctx = SessionContext::new();
    ctx.register_table("visits", Arc::new(table))?;
    ctx.register_csv("regions", csv.to_str().ok_or("temp path is not UTF-8")?, CsvReadOptions::new()).await?;
    let sql = "SELECT r.region_name, COUNT(*) AS visits, COUNT(DISTINCT v.url) AS urls \
               FROM visits v JOIN regions r ON v.region_id = r.region_id \
               WHERE v.user_id >= 1000 GROUP BY r.region_name ORDER BY r.region_name";
    let df = ctx.sql(sql).await?;
    let batches = df.clone().collect().await?;
    df.show().await?;
    std::fs::remove_file(&csv).ok();

    // ClickHouse's own answer, through the Distributed table.
    let theirs: Vec<(u64, u64)> = client
        .fetch_all(
            "SELECT count(), uniqExact(url) FROM example_visits WHERE user_id >= 1000 \
             GROUP BY region_id % 4 ORDER BY region_id % 4",
        )
        .await?;
    let ours: Vec<(u64, u64)> = batches
        .iter()
        .flat_map(|b| {
            use datafusion::arrow::array::{AsArray, Int64Array};
            let c: &Int64Array = b.column(1).as_primitive();
            let u: &Int64Array = b.column(2).as_primitive();
            (0..b.num_rows()).map(|i| (c.value(i) as u64, u.value(i) as u64)).collect::<Vec<_>>()
        })
        .collect();
    println!("ClickHouse's own answer: {theirs:?}");
    if ours != theirs {
        return Err(format!("DataFusion {ours:?} != ClickHouse {theirs:?}").into());
    }
    println!("DataFusion and ClickHouse agree");
    Ok(())
}
