//! The cluster client against the local cluster of scripts/cluster.sh (2 shards x
//! 2 replicas of embedded servers, started by the first test that needs it).
//!
//! Replicas are "killed" by a TCP proxy in front of them (tests run in parallel and
//! share the cluster, so the servers themselves stay up): closing the proxy resets
//! every connection through it and refuses new ones, which is what a client sees of
//! a dead server. Values are compared with the servers' own answers over HTTP.

use crate::common;

use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use chnative::cluster::{Cluster, Replica, Shard, ShardKey, Topology};
use chnative::{Block, Client, Config};
use common::own_server::OwnServer;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use chnative_testkit::cluster::{self, http_port, tcp_port, NAME, REPLICAS, SHARDS};

fn cluster_up() {
    cluster::up();
}

fn http(s: u16, r: u16, sql: &str) -> String {
    cluster::http(s, r, sql).trim_end().to_string()
}

fn every_node(sql: &str) {
    for s in 1..=SHARDS {
        for r in 1..=REPLICAS {
            http(s, r, sql);
        }
    }
}

/// A table of the same name on every node, dropped at the end.
struct Tables(String);

impl Tables {
    fn create(prefix: &str, rest: &str) -> Tables {
        static N: AtomicU64 = AtomicU64::new(0);
        let name = format!("cluster_{prefix}_{}_{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed));
        every_node(&format!("CREATE TABLE {name} {rest}"));
        Tables(name)
    }
    /// MergeTree that deduplicates by token.
    fn local(prefix: &str, columns: &str) -> Tables {
        Tables::create(
            prefix,
            &format!(
                "({columns}) ENGINE = MergeTree ORDER BY tuple() SETTINGS non_replicated_deduplication_window = 1000"
            ),
        )
    }
    /// `SELECT <what> FROM table` on node (s, r).
    fn at(&self, s: u16, r: u16, what: &str) -> String {
        http(s, r, &format!("SELECT {what} FROM {} FORMAT TSV", self.0))
    }
}

impl Drop for Tables {
    fn drop(&mut self) {
        for s in 1..=SHARDS {
            for r in 1..=REPLICAS {
                if let Ok(mut sock) = std::net::TcpStream::connect(("127.0.0.1", http_port(s, r))) {
                    let sql = format!("DROP TABLE IF EXISTS {} SYNC", self.0);
                    let req = format!("POST / HTTP/1.0\r\nContent-Length: {}\r\n\r\n{sql}", sql.len());
                    let _ = sock.write_all(req.as_bytes());
                    let _ = sock.read_to_end(&mut Vec::new());
                }
            }
        }
    }
}

fn config() -> Config {
    cluster_up();
    Config::from_url(&format!("clickhouse://default@127.0.0.1:{}/default", tcp_port(1, 1))).unwrap()
}

/// A block made by the server: `SELECT <sql>` on node s1r1 (one block).
async fn block_of(sql: &str) -> Block {
    let c = Client::connect_with(config()).await.unwrap();
    let mut s = c.fetch_blocks(format!("SELECT {sql} SETTINGS max_block_size = 1000000")).await.unwrap();
    let b = s.next().await.unwrap().expect("a block").clone();
    assert!(s.next().await.unwrap().is_none(), "one block expected");
    b
}

/// A TCP proxy in front of one server; `kill` drops every connection through it
/// and closes the port, `revive` opens it again on the same port.
struct Proxy {
    port: u16,
    target: u16,
    alive: Arc<AtomicBool>,
    /// Bytes from the client after which every connection is cut (`u64::MAX`: never).
    cut_after: Arc<AtomicU64>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Proxy {
    async fn start(target: u16) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let mut p = Proxy {
            port,
            target,
            alive: Arc::new(AtomicBool::new(true)),
            cut_after: Arc::new(AtomicU64::new(u64::MAX)),
            task: None,
        };
        p.serve(listener);
        p
    }

    fn serve(&mut self, listener: TcpListener) {
        let (target, alive, cut) = (self.target, self.alive.clone(), self.cut_after.clone());
        self.task = Some(tokio::spawn(async move {
            let mut conns = tokio::task::JoinSet::new();
            loop {
                let Ok((client, _)) = listener.accept().await else { return };
                let (alive, cut) = (alive.clone(), cut.clone());
                conns.spawn(async move {
                    let Ok(server) = TcpStream::connect(("127.0.0.1", target)).await else { return };
                    let (mut cr, mut cw) = client.into_split();
                    let (mut sr, mut sw) = server.into_split();
                    let up = async {
                        let mut buf = vec![0u8; 16 * 1024];
                        let mut sent = 0u64;
                        loop {
                            let n = match cr.read(&mut buf).await {
                                Ok(0) | Err(_) => return,
                                Ok(n) => n,
                            };
                            let limit = cut.load(Ordering::SeqCst);
                            let n = if sent + n as u64 > limit { (limit - sent) as usize } else { n };
                            if sw.write_all(&buf[..n]).await.is_err() || !alive.load(Ordering::SeqCst) {
                                return;
                            }
                            sent += n as u64;
                            if sent >= limit {
                                return; // cut mid-stream: both sides are dropped below
                            }
                        }
                    };
                    let down = async {
                        let _ = tokio::io::copy(&mut sr, &mut cw).await;
                    };
                    tokio::select! { _ = up => {}, _ = down => {} }
                });
            }
        }));
    }

    fn replica(&self) -> Replica {
        Replica::new("127.0.0.1", self.port)
    }

    fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Resets every connection through the proxy and refuses new ones.
    fn kill(&mut self) {
        self.alive.store(false, Ordering::SeqCst);
        if let Some(t) = self.task.take() {
            t.abort(); // drops the listener and (with the JoinSet) every connection
        }
    }

    /// Listens again on the same port.
    async fn revive(&mut self) {
        self.kill();
        tokio::task::yield_now().await;
        let sock = tokio::net::TcpSocket::new_v4().unwrap();
        sock.set_reuseaddr(true).unwrap();
        let mut tries = 0;
        while let Err(e) = sock.bind(([127, 0, 0, 1], self.port).into()) {
            tries += 1;
            assert!(tries < 100, "rebinding proxy port {}: {e}", self.port);
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        self.alive.store(true, Ordering::SeqCst);
        self.cut_after.store(u64::MAX, Ordering::SeqCst);
        self.serve(sock.listen(64).unwrap());
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.kill();
    }
}

fn real(s: u16, r: u16) -> Replica {
    Replica::new("127.0.0.1", tcp_port(s, r))
}

#[tokio::test]
async fn topology_is_read_from_system_clusters() {
    let cluster = Cluster::discover(config(), NAME).await.unwrap();
    let t = cluster.topology();
    let got: Vec<String> = t
        .shards
        .iter()
        .flat_map(|s| s.replicas.iter().map(move |r| format!("{}\t{}\t{}\t{}", s.num, s.weight, r.host, r.port)))
        .collect();
    let server = http(
        2,
        2,
        &format!(
            "SELECT shard_num, shard_weight, host_name, port FROM system.clusters WHERE cluster = '{NAME}' \
             ORDER BY shard_num, replica_num FORMAT TSV"
        ),
    );
    assert_eq!(got.join("\n"), server);
    assert!(t.shards.iter().all(|s| !s.internal_replication));

    let w = Cluster::discover(config(), "chn_cluster_weighted").await.unwrap();
    assert_eq!(w.topology().shards.iter().map(|s| s.weight).collect::<Vec<_>>(), [3, 4]);

    let e = Cluster::discover(config(), "no_such_cluster").await.unwrap_err();
    assert!(e.to_string().contains("cluster `no_such_cluster` is not in system.clusters"), "{e}");
}

/// Routed inserts land where a Distributed table puts the same rows (weights 3 and
/// 4, negative Int32 keys, and a key function), and per-shard reads add up to the
/// Distributed table's answer.
#[tokio::test]
async fn routing_matches_a_distributed_table_and_reads_match_the_server() {
    let ours = Tables::local("route", "k Int32, s String");
    let theirs = Tables::local("route_ref", "k Int32, s String");
    let dist = Tables::create(
        "route_dist",
        &format!("AS {} ENGINE = Distributed(chn_cluster_weighted, default, {}, k)", theirs.0, theirs.0),
    );
    let rows = "toInt32(toInt64(number) - 500) AS k, toString(number) AS s FROM numbers(1000)";
    http(1, 1, &format!("INSERT INTO {} SELECT {rows} SETTINGS distributed_foreground_insert = 1", dist.0));

    let cluster = Cluster::discover(config(), "chn_cluster_weighted").await.unwrap();
    let block = block_of(rows).await;
    let summary = cluster.insert(&ours.0, ShardKey::column("k")).send(&block).await.unwrap();
    assert_eq!(summary.rows_per_shard.iter().sum::<u64>(), 1000);
    for s in 1..=SHARDS {
        for r in 1..=REPLICAS {
            let what = "count(), sum(k), groupArraySorted(1000)(k)";
            assert_eq!(ours.at(s, r, what), theirs.at(s, r, what), "node s{s}r{r}");
        }
        assert_eq!(ours.at(s, 1, "count()"), summary.rows_per_shard[s as usize - 1].to_string());
    }

    // A key function: k * 7 (Int64 on the server, so the same arithmetic here).
    let ours2 = Tables::local("route_fn", "k Int32, s String");
    let theirs2 = Tables::local("route_fn_ref", "k Int32, s String");
    let dist2 = Tables::create(
        "route_fn_dist",
        &format!("AS {} ENGINE = Distributed(chn_cluster_weighted, default, {}, k * 7)", theirs2.0, theirs2.0),
    );
    http(1, 2, &format!("INSERT INTO {} SELECT {rows} SETTINGS distributed_foreground_insert = 1", dist2.0));
    let key = ShardKey::func(|b: &Block| {
        let k = b.try_column("k")?.view().values::<i32>()?.to_vec();
        Ok(k.into_iter().map(|k| (i64::from(k) * 7) as u64).collect())
    });
    cluster.insert(&ours2.0, key).send(&block).await.unwrap();
    for s in 1..=SHARDS {
        let what = "count(), sum(k), groupArraySorted(1000)(k)";
        assert_eq!(ours2.at(s, 2, what), theirs2.at(s, 2, what), "shard {s}");
    }

    // Reads: one stream per shard; together they are the Distributed table's answer.
    let streams = cluster.shard_streams(format!("SELECT k FROM {}", ours.0)).await.unwrap();
    assert_eq!(streams.len(), 2);
    let (mut count, mut sum) = (0u64, 0i64);
    for mut st in streams {
        while let Some(b) = st.next().await.unwrap() {
            let k = b.try_column("k").unwrap().view().values::<i32>().unwrap().to_vec();
            count += k.len() as u64;
            sum += k.iter().map(|&v| i64::from(v)).sum::<i64>();
        }
    }
    let server = http(2, 1, &format!("SELECT count(), sum(k) FROM {} FORMAT TSV", dist.0));
    assert_eq!(format!("{count}\t{sum}"), server);

    // The merged stream: the same total, every shard present.
    let mut merged = cluster.query_merged(format!("SELECT k FROM {}", ours.0), 2);
    let (mut count, mut shards) = (0usize, [false; 2]);
    while let Some((shard, b)) = merged.next().await.unwrap() {
        count += b.rows();
        shards[shard] = true;
    }
    assert_eq!((count, shards), (1000, [true, true]));
}

/// Shard 2's first replica is down before the query: the read fails over to the
/// second, the dead one counts an error and is tried last from then on.
#[tokio::test]
async fn a_dead_replica_is_skipped_and_scored() {
    let t = Tables::local("failover", "k UInt64");
    every_node(&format!("INSERT INTO {} SELECT number FROM numbers(10)", t.0));
    let mut dead = Proxy::start(tcp_port(2, 1)).await;
    dead.kill();
    let topo = Topology::new("proxied")
        .shard(Shard::new([real(1, 1), real(1, 2)]))
        .shard(Shard::new([dead.replica(), real(2, 2)]));
    let cluster = Cluster::new(config(), topo).unwrap();
    let mut s = cluster.shard_stream(1, format!("SELECT sum(k) FROM {}", t.0)).await.unwrap();
    assert_eq!(s.replica(), format!("127.0.0.1:{}", tcp_port(2, 2)));
    let b = s.next().await.unwrap().unwrap();
    assert_eq!(b.column("sum(k)").unwrap().view().values::<u64>().unwrap(), [45]);
    let errors = cluster.replica_errors(1);
    assert_eq!(errors[0], (real(2, 2), 0));
    assert_eq!(errors[1], (dead.replica(), 1));

    // The whole shard down: one error naming the shard and both replicas.
    let mut dead2 = Proxy::start(tcp_port(2, 2)).await;
    dead2.kill();
    let topo =
        Topology::new("proxied").shard(Shard::new([real(1, 1)])).shard(Shard::new([dead.replica(), dead2.replica()]));
    let cluster = Cluster::new(config(), topo).unwrap();
    let e = cluster.shard_streams(format!("SELECT k FROM {}", t.0)).await.unwrap_err();
    let text = e.to_string();
    assert_eq!(e.shard(), Some(1), "{text}");
    assert!(text.contains("shard 2: all 2 replicas failed"), "{text}");
    assert!(text.contains(&dead.address()) && text.contains(&dead2.address()), "{text}");
}

/// The replica dies while its shard's rows are being read: the stream ends with
/// an error naming the shard and replica (never a short result that looks whole).
#[tokio::test]
async fn a_replica_killed_mid_read_is_a_clear_error() {
    let mut proxy = Proxy::start(tcp_port(2, 1)).await;
    let topo = Topology::new("proxied").shard(Shard::new([real(1, 1)])).shard(Shard::new([proxy.replica()]));
    let cluster = Cluster::new(config(), topo).unwrap();
    // Blocks of 10 rows, each taking the server a while: the result cannot be
    // sent whole before the kill.
    let sql = "SELECT number, sleepEachRow(0.001) FROM numbers(1000000) \
               SETTINGS max_block_size = 10, function_sleep_max_microseconds_per_block = 0";
    let mut streams = cluster.shard_streams(sql).await.unwrap();
    let mut st = streams.pop().unwrap();
    drop(streams); // shard 1's query is not needed: cancelled
    assert_eq!(st.shard(), 1);
    let first = st.next().await.unwrap().unwrap().rows();
    assert!(first > 0);
    proxy.kill();
    let mut rows = first;
    let e = loop {
        match st.next().await {
            Ok(Some(b)) => rows += b.rows(),
            Ok(None) => panic!("the stream ended normally after {rows} rows though its replica was killed"),
            Err(e) => break e,
        }
    };
    assert!(rows < 1_000_000);
    let text = e.to_string();
    assert_eq!((e.shard(), e.replica()), (Some(1), Some(proxy.address().as_str())), "{text}");
    assert!(text.starts_with(&format!("cluster `proxied` shard 2 (replica {})", proxy.address())), "{text}");
    assert_eq!(cluster.replica_errors(1)[0].1, 1);
}

/// One replica dies in the middle of its INSERT (the connection is cut after
/// 100 kB of the data). The error names the shard and the replica; the other
/// shard stored its part. Retrying with the same token after the replica is back
/// stores every row exactly once on every replica.
#[tokio::test]
async fn a_replica_killed_mid_insert_then_a_retry_with_the_token_stores_each_row_once() {
    let t = Tables::local("kill_insert", "k UInt64, s String");
    let mut proxy = Proxy::start(tcp_port(2, 2)).await;
    let topo = Topology::new("proxied")
        .shard(Shard::new([real(1, 1), real(1, 2)]).internal_replication(false))
        .shard(Shard::new([real(2, 1), proxy.replica()]).internal_replication(false));
    let cluster = Cluster::new(config(), topo).unwrap();
    // Hex of hashes: compresses little, so the cut lands inside the data.
    let rows = "number AS k, hex(SHA256(toString(number))) AS s FROM numbers(20000)";
    let block = block_of(rows).await;
    proxy.cut_after.store(100_000, Ordering::SeqCst);
    let e = cluster.insert(&t.0, ShardKey::column("k")).deduplication_token("tok-1").send(&block).await.unwrap_err();
    let text = e.to_string();
    assert_eq!((e.shard(), e.replica()), (Some(1), Some(proxy.address().as_str())), "{text}");
    assert!(text.contains("1 of 2 shards failed"), "{text}");
    assert!(text.contains("token `tok-1`"), "{text}");
    assert!(text.contains(&format!("shard 2 (replica {})", proxy.address())), "{text}");
    // Shard 1 stored its half; the replica that was cut stored nothing.
    assert_eq!(t.at(1, 1, "count()"), "10000");
    assert_eq!(t.at(2, 2, "count()"), "0");

    // Retried with the same token twice: no duplicates anywhere.
    proxy.revive().await;
    for _ in 0..2 {
        let ok = cluster.insert(&t.0, ShardKey::column("k")).deduplication_token("tok-1").send(&block).await.unwrap();
        assert_eq!(ok.rows_per_shard, [10000, 10000]);
    }
    for s in 1..=SHARDS {
        let want = http(
            1,
            1,
            &format!(
                "SELECT count(), sum(k), sum(cityHash64(s)) FROM (SELECT {rows}) WHERE k % 2 = {} FORMAT TSV",
                s - 1
            ),
        );
        for r in 1..=REPLICAS {
            assert_eq!(t.at(s, r, "count(), sum(k), sum(cityHash64(s))"), want, "node s{s}r{r}");
        }
    }
}

/// A whole shard down during a routed INSERT (internal replication: one replica
/// per shard, failover between them): the error names the shard and both
/// replicas; the retry with the token, once one replica is back, completes it
/// without duplicating the other shard's part.
#[tokio::test]
async fn a_shard_down_mid_insert_then_a_retry_completes_it_once() {
    let t = Tables::local("shard_down", "k UInt64");
    let mut p1 = Proxy::start(tcp_port(2, 1)).await;
    let mut p2 = Proxy::start(tcp_port(2, 2)).await;
    let topo = Topology::new("proxied").shard(Shard::new([real(1, 1)])).shard(Shard::new([p1.replica(), p2.replica()]));
    let cluster = Cluster::new(config(), topo).unwrap();
    let block = block_of("number AS k FROM numbers(1000)").await;
    p1.kill();
    p2.kill();
    let e = cluster.insert(&t.0, ShardKey::column("k")).deduplication_token("tok-2").send(&block).await.unwrap_err();
    let text = e.to_string();
    assert_eq!(e.shard(), Some(1), "{text}");
    assert!(text.contains("shard 2: all 2 replicas failed"), "{text}");
    assert_eq!(t.at(1, 1, "count()"), "500");

    p2.revive().await;
    let ok = cluster.insert(&t.0, ShardKey::column("k")).deduplication_token("tok-2").send(&block).await.unwrap();
    assert_eq!(ok.rows_per_shard, [500, 500]);
    assert_eq!(
        t.at(1, 1, "count(), sum(k)"),
        http(1, 1, "SELECT count(), sum(number) FROM numbers(1000) WHERE number % 2 = 0 FORMAT TSV")
    );
    assert_eq!(
        t.at(2, 2, "count(), sum(k)"),
        http(1, 1, "SELECT count(), sum(number) FROM numbers(1000) WHERE number % 2 = 1 FORMAT TSV")
    );
    assert_eq!(t.at(2, 1, "count()"), "0");
}

/// The server honours insert_deduplication_token on a MergeTree with
/// non_replicated_deduplication_window (what routed inserts rely on), and a
/// sharding-key column of the wrong type is refused before anything is sent.
#[tokio::test]
async fn tokens_deduplicate_and_bad_keys_are_refused() {
    let t = Tables::local("dedup", "k UInt64, s String");
    let cluster = Cluster::discover(config(), NAME).await.unwrap();
    let block = block_of("number AS k, toString(number) AS s FROM numbers(100)").await;
    let a = cluster.insert(&t.0, ShardKey::column("k")).send(&block).await.unwrap();
    let b =
        cluster.insert(&t.0, ShardKey::column("k")).deduplication_token(a.token.clone()).send(&block).await.unwrap();
    assert_eq!(a.token, b.token);
    // A fresh token is a new insert.
    let c = cluster.insert(&t.0, ShardKey::column("k")).send(&block).await.unwrap();
    assert_ne!(a.token, c.token);
    for s in 1..=SHARDS {
        assert_eq!(t.at(s, 1, "count()"), "100", "shard {s}");
        assert_eq!(t.at(s, 2, "count()"), "100", "shard {s}");
    }
    let e = cluster.insert(&t.0, ShardKey::column("s")).send(&block).await.unwrap_err();
    assert!(e.to_string().contains("sharding-key column `s` is String, not an integer type"), "{e}");
    let e = cluster.insert(&t.0, ShardKey::column("nope")).send(&block).await.unwrap_err();
    assert!(e.to_string().contains("nope"), "{e}");
}

/// A real server (shard 2's only replica) is killed with SIGKILL while a read and
/// an INSERT run on it: both fail with errors naming shard 2 and that server; the
/// other shard stored exactly its part.
#[tokio::test]
async fn a_server_killed_mid_read_and_mid_insert() {
    cluster_up();
    let own = tokio::task::spawn_blocking(|| OwnServer::start("cluster-sigkill")).await.unwrap();
    let own_replica = Replica::new("127.0.0.1", own.tcp_port);
    let t = Tables::local("sigkill", "k UInt64");
    own.http(&format!("CREATE TABLE {} (k UInt64) ENGINE = MergeTree ORDER BY tuple()", t.0));
    // Inserts into the table take long on this server: a view sleeps on every row.
    own.http(&format!("CREATE TABLE {}_sink (x UInt8) ENGINE = Null", t.0));
    own.http(&format!(
        "CREATE MATERIALIZED VIEW {0}_mv TO {0}_sink AS SELECT sleepEachRow(0.01) AS x FROM {0} \
         SETTINGS function_sleep_max_microseconds_per_block = 0",
        t.0
    ));
    let topo = Topology::new("own").shard(Shard::new([real(1, 1)])).shard(Shard::new([own_replica.clone()]));
    let cluster = Cluster::new(config(), topo).unwrap();
    let addr = own_replica.address();

    let sql = "SELECT number, sleepEachRow(0.001) FROM numbers(1000000) \
               SETTINGS max_block_size = 10, function_sleep_max_microseconds_per_block = 0";
    let mut read = cluster.shard_stream(1, sql).await.unwrap();
    assert!(read.next().await.unwrap().is_some());

    let block = block_of("number AS k FROM numbers(1000)").await;
    let (c2, table) = (cluster.clone(), t.0.clone());
    let insert = tokio::spawn(async move { c2.insert(&table, ShardKey::column("k")).send(&block).await });
    // Kill it once its INSERT runs (never on a timer).
    let running = format!(
        "SELECT count() FROM system.processes WHERE query_kind = 'Insert' AND query LIKE '%{}%' FORMAT TSV",
        t.0
    );
    let mut polls = 0;
    while own.http(&running).trim() == "0" {
        polls += 1;
        assert!(polls < 600, "the INSERT never showed up in system.processes");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    own.kill9();

    let e = loop {
        match read.next().await {
            Ok(Some(_)) => {}
            Ok(None) => panic!("the read ended normally though its server was killed"),
            Err(e) => break e,
        }
    };
    assert_eq!((e.shard(), e.replica()), (Some(1), Some(addr.as_str())), "{e}");
    assert!(e.to_string().starts_with(&format!("cluster `own` shard 2 (replica {addr})")), "{e}");

    let e = insert.await.unwrap().unwrap_err();
    assert_eq!((e.shard(), e.replica()), (Some(1), Some(addr.as_str())), "{e}");
    assert!(e.to_string().contains(&format!("shard 2 (replica {addr})")), "{e}");
    assert_eq!(
        t.at(1, 1, "count(), sum(k)"),
        http(1, 1, "SELECT 500, sum(number) FROM numbers(1000) WHERE number % 2 = 0 FORMAT TSV")
    );

    // While it is down, a new read of that shard fails at once, naming it.
    let e = cluster.shard_streams("SELECT 1").await.unwrap_err();
    assert!(e.to_string().starts_with(&format!("cluster `own` shard 2 (replica {addr}): ")), "{e}");
    tokio::task::spawn_blocking(move || drop(own)).await.unwrap();
}
