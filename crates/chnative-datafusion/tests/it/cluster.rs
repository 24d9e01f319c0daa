//! chnative-datafusion on the local cluster of scripts/cluster.sh (`chn_cluster`: 2 shards
//! x 2 replicas, started here when it is not up): the topology read from
//! `system.clusters`, one partition set per shard, and answers compared with ClickHouse's
//! own over the whole cluster (`cluster('chn_cluster', …)`).

use std::sync::{Arc, OnceLock};

use chnative_datafusion::ClickHouseTable;
use datafusion::prelude::SessionContext;

const TABLE: &str = "datafusion_cluster_hits";

use chnative_testkit::cluster::{http, tcp_port, NAME, REPLICAS, SHARDS};
use chnative_testkit::rows::tsv_lines;

/// The table on every node; shard S holds rows with number % SHARDS = S - 1 (both its
/// replicas the same rows: there is no Keeper, the writer replicates).
fn table() {
    static MADE: OnceLock<()> = OnceLock::new();
    MADE.get_or_init(|| {
        for s in 1..=SHARDS {
            for r in 1..=REPLICAS {
                http(s, r, &format!("DROP TABLE IF EXISTS {TABLE}"));
                http(
                    s,
                    r,
                    &format!(
                        "CREATE TABLE {TABLE} (CounterID UInt32, EventDate Date, UserID Int64, AdvEngineID Int16, \
                         SearchPhrase String) ENGINE = MergeTree ORDER BY (CounterID, EventDate, UserID)"
                    ),
                );
                http(
                    s,
                    r,
                    &format!(
                        "INSERT INTO {TABLE} SELECT number % 97, toDate('2013-07-01') + number % 31, \
                         toInt64(cityHash64(number % 5003)) % 100000, if(number % 9 = 0, number % 4, 0), \
                         if(number % 7 = 0, '', concat('phrase ', toString(number % 113))) \
                         FROM numbers(60000) WHERE number % {SHARDS} = {}",
                        s - 1
                    ),
                );
            }
        }
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_shard_partitions_match_the_cluster_answer() {
    table();
    let url = format!("clickhouse://default@127.0.0.1:{}/default", tcp_port(1, 1));
    let t = ClickHouseTable::builder(url, TABLE).cluster(NAME).key_ranges(2).build().await.unwrap();
    // Two shards, each with both replicas (failover order), two key ranges each.
    let shards: Vec<_> = t.partitions().iter().filter_map(|p| p.shard.clone()).collect();
    assert_eq!(shards.len(), 4, "{:?}", t.partitions());
    for s in 1..=SHARDS {
        let eps: Vec<String> = (1..=REPLICAS).map(|r| format!("127.0.0.1:{}", tcp_port(s, r))).collect();
        assert_eq!(shards.iter().filter(|sh| sh.replicas == eps).count(), 2, "shard {s}: {shards:?}");
    }
    let total: u64 =
        http(1, 1, &format!("SELECT count() FROM cluster('{NAME}', default, {TABLE})")).trim().parse().unwrap();
    assert_eq!(t.stats().rows, Some(total));
    let ctx = SessionContext::new();
    ctx.register_table("hits", Arc::new(t)).unwrap();
    for (ours, theirs) in [
        ("SELECT COUNT(*) FROM hits", "SELECT count() FROM T"),
        (
            "SELECT \"AdvEngineID\", COUNT(*), COUNT(DISTINCT \"UserID\") FROM hits GROUP BY \"AdvEngineID\" ORDER BY 1",
            "SELECT AdvEngineID, count(), uniqExact(UserID) FROM T GROUP BY AdvEngineID ORDER BY 1",
        ),
        (
            "SELECT \"SearchPhrase\", COUNT(*) AS c FROM hits WHERE \"SearchPhrase\" <> '' AND \"CounterID\" < 50 \
             GROUP BY \"SearchPhrase\" ORDER BY c DESC, \"SearchPhrase\" LIMIT 10",
            "SELECT SearchPhrase, count() AS c FROM T WHERE SearchPhrase != '' AND CounterID < 50 \
             GROUP BY SearchPhrase ORDER BY c DESC, SearchPhrase LIMIT 10",
        ),
    ] {
        let got = tsv_lines(&ctx.sql(ours).await.unwrap().collect().await.unwrap());
        let want: Vec<String> = http(
            1,
            1,
            &format!("{} FORMAT TSV", theirs.replace("FROM T", &format!("FROM cluster('{NAME}', default, {TABLE})"))),
        )
        .lines()
        .map(str::to_string)
        .collect();
        assert!(!want.is_empty());
        assert_eq!(got, want, "{ours}");
    }
}
