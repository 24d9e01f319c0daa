//! A cluster in miniature: route a million rows to two shards by their key, read
//! them back one stream per shard in parallel, and check the sum against the
//! servers' own answer through a `Distributed` table.
//!
//! `cargo run --release -p chnative --example cluster [clickhouse://user@host:port/db [cluster]]`
//!
//! With no URL it starts the local cluster of embedded servers
//! (`scripts/cluster.sh start`: 2 shards x 2 replicas, cluster `chn_cluster`).

use chnative::cluster::{Cluster, ShardKey};
use chnative::Config;

fn start_local_cluster() -> String {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/cluster.sh");
    let out = std::process::Command::new("bash").arg(script).arg("start").output().expect("run scripts/cluster.sh");
    assert!(out.status.success(), "scripts/cluster.sh start failed:\n{}", String::from_utf8_lossy(&out.stderr));
    "clickhouse://default@127.0.0.1:29111/default".to_string()
}

#[tokio::main]
async fn main() -> chnative::Result<()> {
    let mut args = std::env::args().skip(1);
    let url = args.next().unwrap_or_else(start_local_cluster);
    let name = args.next().unwrap_or_else(|| "chn_cluster".to_string());
    let cluster = Cluster::discover(Config::from_url(&url)?, &name).await?;
    for s in &cluster.topology().shards {
        let replicas: Vec<String> = s.replicas.iter().map(|r| r.address()).collect();
        println!("shard {} (weight {}): {}", s.num, s.weight, replicas.join(", "));
    }

    // The local table on every replica (no ON CLUSTER: the embedded server has no
    // Keeper), and a Distributed table over it for the server's own answer.
    cluster.execute_on_every_replica("DROP TABLE IF EXISTS example_events_local SYNC").await?;
    cluster
        .execute_on_every_replica(
            "CREATE TABLE example_events_local (id UInt64, name String) ENGINE = MergeTree ORDER BY id \
             SETTINGS non_replicated_deduplication_window = 100",
        )
        .await?;
    cluster
        .execute_on_every_replica(format!(
            "CREATE OR REPLACE TABLE example_events AS example_events_local \
             ENGINE = Distributed({name}, currentDatabase(), example_events_local, id)"
        ))
        .await?;

    // Route: rows made by a server, split by `id` and sent to each shard directly.
    let (_, client) = cluster.shard_client(0).await?;
    let mut source =
        client.stream("SELECT number AS id, concat('event ', toString(number)) AS name FROM numbers(1000000)").await?;
    let mut n = 0;
    while let Some(block) = source.next().await? {
        let sent = cluster
            .insert("example_events_local", ShardKey::column("id"))
            .deduplication_token(format!("example-{n}"))
            .send(block)
            .await?;
        n += 1;
        if n == 1 {
            println!("first block: {:?} rows per shard", sent.rows_per_shard);
        }
    }
    drop(source);

    // Read: one stream per shard, in parallel.
    let mut tasks = Vec::new();
    for mut s in cluster.shard_streams("SELECT id FROM example_events_local").await? {
        tasks.push(tokio::spawn(async move {
            let (shard, replica) = (s.shard(), s.replica().to_string());
            let (mut rows, mut sum) = (0u64, 0u64);
            while let Some(block) = s.next().await? {
                let ids = block.try_column("id")?.view().values::<u64>()?;
                rows += ids.len() as u64;
                sum += ids.iter().sum::<u64>();
            }
            Ok::<_, chnative::Error>((shard, replica, rows, sum))
        }));
    }
    let mut total = 0u64;
    for t in tasks {
        let (shard, replica, rows, sum) = t.await.expect("shard task")?;
        println!("shard index {shard} read from {replica}: {rows} rows");
        total += sum;
    }
    let server: u64 = client.query_scalar("SELECT sum(id) FROM example_events").await?;
    println!("sum(id): {total} from the shards, {server} from the Distributed table");
    assert_eq!(total, server);
    cluster.execute_on_every_replica("DROP TABLE IF EXISTS example_events SYNC").await?;
    cluster.execute_on_every_replica("DROP TABLE IF EXISTS example_events_local SYNC").await?;
    Ok(())
}
