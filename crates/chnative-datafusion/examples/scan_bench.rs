//! `scan_bench`: scan throughput of a hits-like table read through DataFusion (this
//! crate's table provider) against the plain Arrow read (`chnative_arrow::query_arrow`).
//!
//! ```text
//! cargo run --release -p chnative-datafusion --example scan_bench [-- ROWS (1000000)] [ROUNDS (3)] [CLUSTER]
//! ```
//!
//! Against the server on CHNATIVE_TCP_PORT (19000). The table `datafusion_bench_hits`
//! (the 105 hits columns of benches/peers/hits_columns.tsv, MergeTree ordered by
//! CounterID, EventDate, UserID as in ClickBench) is created and filled once with
//! `generateRandom(…, 42, 40, 4)`. Every read streams `SELECT *` and drops the batches
//! (nothing kept); the wall time of the best round is reported. With CLUSTER, the same
//! table is read on each shard of that cluster (it must exist there, filled the same
//! way: the bench creates and fills it on each shard with its share of the rows).

use std::sync::Arc;
use std::time::Instant;

use chnative_datafusion::{cluster_shards, ClickHouseTable};
use datafusion::prelude::SessionContext;
use futures::StreamExt;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

const TABLE: &str = "datafusion_bench_hits";

fn structure() -> Res<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../benches/peers/hits_columns.tsv");
    let text = std::fs::read_to_string(path)?;
    let cols: Vec<String> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let mut f = l.split('\t');
            format!("{} {}", f.next().unwrap_or(""), f.next().unwrap_or(""))
        })
        .collect();
    Ok(cols.join(", "))
}

async fn fill(url: &str, rows: u64, seed: u64) -> Res<()> {
    let client = chnative::Client::connect(url).await?;
    let have: u64 = client
        .fetch_scalar(
            format!("SELECT count() FROM system.tables WHERE name = '{TABLE}' AND database = currentDatabase()")
                .as_str(),
        )
        .await?;
    let filled: u64 =
        if have == 1 { client.fetch_scalar(format!("SELECT count() FROM {TABLE}").as_str()).await? } else { 0 };
    if filled != rows {
        eprintln!("filling {TABLE} with {rows} rows on {url} (generateRandom, seed {seed})…");
        let s = structure()?;
        client.execute(format!("DROP TABLE IF EXISTS {TABLE}").as_str()).await?;
        client
            .execute(
                format!("CREATE TABLE {TABLE} ({s}) ENGINE = MergeTree ORDER BY (CounterID, EventDate, UserID)")
                    .as_str(),
            )
            .await?;
        client
            .execute(
                format!("INSERT INTO {TABLE} SELECT * FROM generateRandom('{s}', {seed}, 40, 4) LIMIT {rows}").as_str(),
            )
            .await?;
        client.execute(format!("OPTIMIZE TABLE {TABLE} FINAL").as_str()).await?;
    }
    Ok(())
}

async fn arrow_read(url: &str) -> Res<u64> {
    let client = chnative::Client::connect(url).await?;
    let mut s = chnative_arrow::query_arrow(&client, format!("SELECT * FROM {TABLE}")).await?;
    let mut rows = 0u64;
    while let Some(b) = s.next().await? {
        rows += b.num_rows() as u64;
    }
    Ok(rows)
}

async fn datafusion_read(table: Arc<ClickHouseTable>) -> Res<u64> {
    let ctx = SessionContext::new();
    ctx.register_table("hits", table)?;
    let df = ctx.table("hits").await?;
    let mut streams = df.execute_stream_partitioned().await?;
    // Every partition drained concurrently, as a parallel consumer would.
    let tasks: Vec<_> = streams
        .drain(..)
        .map(|mut s| {
            tokio::spawn(async move {
                let mut rows = 0u64;
                while let Some(b) = s.next().await {
                    rows += b?.num_rows() as u64;
                }
                Ok::<u64, datafusion::error::DataFusionError>(rows)
            })
        })
        .collect();
    let mut rows = 0;
    for t in tasks {
        rows += t.await??;
    }
    Ok(rows)
}

fn main() -> Res<()> {
    let mut args = std::env::args().skip(1);
    let rows: u64 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(1_000_000);
    let rounds: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(3);
    let cluster = args.next();
    let port = std::env::var("CHNATIVE_TCP_PORT").unwrap_or_else(|_| "19000".into());
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let url = format!("clickhouse://default@127.0.0.1:{port}/default?compression=lz4");
    rt.block_on(fill(&url, rows, 42))?;
    let bytes: u64 = rt.block_on(async {
        let c = chnative::Client::connect(&url).await?;
        c.fetch_scalar::<u64>(
            format!("SELECT assumeNotNull(total_bytes_uncompressed) FROM system.tables WHERE name = '{TABLE}' AND database = currentDatabase()")
                .as_str(),
        )
        .await
    })?;

    let mut cases: Vec<(String, Option<Arc<ClickHouseTable>>)> = vec![("plain Arrow read (query_arrow)".into(), None)];
    for n in [1usize, 2, 4] {
        let t = rt.block_on(ClickHouseTable::builder(url.clone(), TABLE).key_ranges(n).build())?;
        let parts = t.partitions().len();
        cases.push((format!("DataFusion, 1 server, {parts} key range(s)"), Some(Arc::new(t))));
    }
    if let Some(name) = &cluster {
        // A node of the cluster (scripts/cluster.sh's s1r1 by default) knows its topology.
        let node = std::env::var("CHNATIVE_CLUSTER_URL")
            .unwrap_or_else(|_| "clickhouse://default@127.0.0.1:29111/default?compression=lz4".into());
        let shards = rt.block_on(async {
            let c = chnative::Client::connect(&node).await?;
            Ok::<_, Box<dyn std::error::Error>>(cluster_shards(&c, name).await?)
        })?;
        let share = rows / shards.len() as u64;
        for (i, s) in shards.iter().enumerate() {
            rt.block_on(fill(
                &format!("clickhouse://default@{}/default?compression=lz4", s.replicas[0]),
                share,
                42 + i as u64,
            ))?;
        }
        let t =
            rt.block_on(ClickHouseTable::builder(node.clone(), TABLE).shards(shards.clone()).key_ranges(1).build())?;
        cases.push((format!("DataFusion, {} shards × 1 range", shards.len()), Some(Arc::new(t))));
        let t =
            rt.block_on(ClickHouseTable::builder(node.clone(), TABLE).shards(shards.clone()).key_ranges(2).build())?;
        cases.push((format!("DataFusion, {} shards × 2 ranges", shards.len()), Some(Arc::new(t))));
    }

    println!(
        "{rows} rows × 105 columns ({:.0} MiB uncompressed), best wall time of {rounds} rounds\n",
        bytes as f64 / (1 << 20) as f64
    );
    println!("| read | partitions | wall (s) | rows/s | MiB/s |");
    println!("|---|---|---|---|---|");
    for (name, table) in cases {
        let mut best = f64::MAX;
        let mut got = 0;
        for _ in 0..rounds {
            let t0 = Instant::now();
            got = match &table {
                None => rt.block_on(arrow_read(&url))?,
                Some(t) => rt.block_on(datafusion_read(t.clone()))?,
            };
            best = best.min(t0.elapsed().as_secs_f64());
        }
        let parts = table.as_ref().map_or(1, |t| t.partitions().len());
        let mib = if table.as_ref().is_some_and(|t| t.partitions().iter().any(|p| p.shard.is_some())) {
            // Shards hold their own shares; the bytes of the scanned tables.
            let b = table.as_ref().and_then(|t| t.stats().bytes).unwrap_or(bytes);
            b as f64 / (1 << 20) as f64
        } else {
            bytes as f64 / (1 << 20) as f64
        };
        println!("| {name} | {parts} | {best:.3} | {:.0} | {:.0} |", got as f64 / best, mib / best);
    }
    Ok(())
}
