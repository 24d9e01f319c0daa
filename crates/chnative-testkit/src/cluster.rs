//! The local cluster of `scripts/cluster.sh` (`chn_cluster`: 2 shards × 2 replicas of embedded
//! servers), started by the first test of a binary that needs it, or reused when it is up.
//! It is always of the default version (26.9), also when `CHNATIVE_SERVER_VERSION` names
//! another for the test server.

use std::sync::OnceLock;

/// Shards of the cluster.
pub const SHARDS: u16 = 2;
/// Replicas of each shard.
pub const REPLICAS: u16 = 2;
/// Its name in the servers' `remote_servers`.
pub const NAME: &str = "chn_cluster";

/// The native port of shard `s`, replica `r` (both from 1).
pub fn tcp_port(s: u16, r: u16) -> u16 {
    29100 + 10 * s + r
}

/// The HTTP port of shard `s`, replica `r`.
pub fn http_port(s: u16, r: u16) -> u16 {
    28100 + 10 * s + r
}

/// Starts the cluster once per test binary (`scripts/cluster.sh start` reuses one already up).
pub fn up() {
    static UP: OnceLock<()> = OnceLock::new();
    UP.get_or_init(|| {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/cluster.sh");
        // Always the default version (26.9), whatever the suite runs against: the cluster's
        // ports and run dirs are shared by every test process on the machine, and its tests
        // are about the client's routing, not the server's version.
        let out = std::process::Command::new("bash")
            .arg(script)
            .arg("start")
            .env_remove("CHNATIVE_SERVER_VERSION")
            .env_remove("CHNATIVE_ZOOKEEPER")
            .output()
            .expect("run scripts/cluster.sh");
        assert!(
            out.status.success(),
            "scripts/cluster.sh start failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    });
}

/// SQL over the HTTP interface of shard `s`, replica `r` (the cluster started first): the
/// body, or a panic naming the node's port and the query.
pub fn http(s: u16, r: u16, sql: &str) -> String {
    up();
    crate::server::http_at_port(http_port(s, r), sql)
}

/// The pushdown tests' sharded table (`id`, `g`, nullable and LowCardinality columns, dates, a
/// large Int64, a Float64; 20,000 rows in all), made anew as `local` on every node (shard S holds
/// the rows whose `g % SHARDS = S - 1`, so `g` is a sharding key), with a `Distributed` table
/// `dist` over it on s1r1 for ClickHouse's own answers.
pub fn make_sharded_table(local: &str, dist: &str) {
    let columns = "id UInt64, g UInt16, k Nullable(Int32), s LowCardinality(Nullable(String)), d Date, \
                   t DateTime('UTC'), i Int32, big Int64, f Float64";
    for s in 1..=SHARDS {
        for r in 1..=REPLICAS {
            http(s, r, &format!("DROP TABLE IF EXISTS {dist}"));
            http(s, r, &format!("DROP TABLE IF EXISTS {local}"));
            http(s, r, &format!("CREATE TABLE {local} ({columns}) ENGINE = MergeTree ORDER BY (g, id)"));
            http(
                s,
                r,
                &format!(
                    "INSERT INTO {local} SELECT number, number % 50, \
                     if(number % 11 = 0, NULL, toInt32(number % 7) - 3), \
                     if(number % 13 = 0, NULL, concat('s', toString(number % 17))), \
                     toDate('2020-01-01') + number % 40, toDateTime('2020-01-01 00:00:00', 'UTC') + number * 37, \
                     toInt32(number * 7919 % 100000) - 50000, \
                     if(number % 3 = 0, toInt64(9223372036854775000) - toInt64(number), toInt64(number)), \
                     number / 7 \
                     FROM numbers(20000) WHERE (number % 50) % {SHARDS} = {}",
                    s - 1
                ),
            );
        }
    }
    http(1, 1, &format!("CREATE TABLE {dist} AS {local} ENGINE = Distributed({NAME}, default, {local})"));
}
