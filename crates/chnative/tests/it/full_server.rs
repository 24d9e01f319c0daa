//! What only a full `clickhouse server` has, on servers of these tests' own
//! (`common::replicated`): roles (`CREATE ROLE`, `GRANT`, `SET ROLE`, default roles),
//! `system.query_log`, and `ReplicatedMergeTree` through ZooKeeper on a local cluster of
//! 2 shards × 2 replicas (`ON CLUSTER` DDL, replication between replicas, an INSERT retried
//! with the same deduplication token stored once). The shared embedded 26.9 test server has
//! none of these: no access storage, no query_log, no Keeper.
//!
//! Values are compared with the servers' own answers over HTTP. The replication tests skip,
//! printing why, where ZooKeeper is not installed and cannot be (see scripts/zookeeper.sh).

use crate::common;

use chnative::cluster::{Cluster, ShardKey};
use chnative::{Client, Query};
use common::replicated::{full_server, ReplicatedCluster, NAME, REPLICAS, SHARDS};

/// The server's error code of `r`, or a panic saying what came instead.
fn code<T: std::fmt::Debug>(r: chnative::Result<T>, what: &str) -> i32 {
    match r {
        Ok(v) => panic!("{what}: expected a server error, got {v:?}"),
        Err(e) => e.server_code().unwrap_or_else(|| panic!("{what}: expected a server error, got {e}")),
    }
}

const ACCESS_DENIED: i32 = 497;
const SET_NON_GRANTED_ROLE: i32 = 512;

#[tokio::test]
async fn roles_are_granted_and_set_per_session_and_by_default() {
    let srv = full_server("roles");
    srv.http("CREATE TABLE facts (x UInt64) ENGINE = MergeTree ORDER BY x");
    srv.http("INSERT INTO facts VALUES (1), (2), (3)");
    // A reader and a writer role, and a user granted both but with no role active by default.
    let admin = Client::connect_with(srv.config()).await.unwrap();
    for sql in [
        "CREATE ROLE reader",
        "CREATE ROLE writer",
        "GRANT SELECT ON default.facts TO reader",
        "GRANT INSERT ON default.facts TO writer",
        "CREATE USER alice IDENTIFIED WITH sha256_password BY 'pw' DEFAULT ROLE NONE",
        "GRANT reader, writer TO alice",
    ] {
        admin.execute(sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    assert_eq!(srv.http("SELECT name FROM system.roles ORDER BY name FORMAT TSV"), "reader\nwriter\n");

    let alice = Client::connect_with(srv.config().user("alice").password("pw")).await.unwrap();
    let count = "SELECT count() FROM facts";
    assert_eq!(code(alice.fetch_scalar::<u64>(count).await, "no role active"), ACCESS_DENIED);

    // SET ROLE holds for the connection: a session's later calls see it.
    let mut s = alice.session().await.unwrap();
    s.execute("SET ROLE reader").await.unwrap();
    let roles: String = s.fetch_scalar("SELECT arrayStringConcat(arraySort(currentRoles()), ',')").await.unwrap();
    assert_eq!(roles, "reader");
    assert_eq!(s.fetch_scalar::<u64>(count).await.unwrap(), 3);
    let insert = "INSERT INTO facts VALUES (4)";
    assert_eq!(code(s.execute(insert).await, "INSERT as reader"), ACCESS_DENIED);
    s.execute("SET ROLE writer").await.unwrap();
    s.execute(insert).await.unwrap();
    assert_eq!(code(s.fetch_scalar::<u64>(count).await, "SELECT as writer"), ACCESS_DENIED);
    s.execute("SET ROLE ALL").await.unwrap();
    assert_eq!(s.fetch_scalar::<u64>(count).await.unwrap(), 4);
    // A role not granted to alice is refused.
    admin.execute("CREATE ROLE auditor").await.unwrap();
    assert_eq!(code(s.execute("SET ROLE auditor").await, "SET ROLE of a role not granted"), SET_NON_GRANTED_ROLE);
    s.execute("SET ROLE NONE").await.unwrap();
    assert_eq!(code(s.fetch_scalar::<u64>(count).await, "after SET ROLE NONE"), ACCESS_DENIED);
    s.execute("SET ROLE reader").await.unwrap();
    // The role stays with the session's connection: the client's other connections, and the
    // one after the session (the session's is closed, not pooled), have none.
    assert_eq!(code(alice.fetch_scalar::<u64>(count).await, "another connection during the session"), ACCESS_DENIED);
    drop(s);
    assert_eq!(code(alice.fetch_scalar::<u64>(count).await, "after the session"), ACCESS_DENIED);

    // A default role is active on every new connection, with no SET ROLE.
    admin.execute("SET DEFAULT ROLE reader TO alice").await.unwrap();
    let alice2 = Client::connect_with(srv.config().user("alice").password("pw")).await.unwrap();
    assert_eq!(alice2.fetch_scalar::<u64>(count).await.unwrap(), 4);
    assert_eq!(code(alice2.execute(insert).await, "INSERT with default role reader"), ACCESS_DENIED);
    assert_eq!(srv.http("SELECT count() FROM facts FORMAT TSV"), "4\n");
    // Per-query roles instead of the default ones (an empty list: none).
    let none: [&str; 0] = [];
    assert_eq!(code(alice2.fetch_scalar::<u64>(Query::new(count).roles(none)).await, "roles([])"), ACCESS_DENIED);
    assert_eq!(alice2.fetch_scalar::<u64>(count).await.unwrap(), 4, "the default role is back");
}

#[tokio::test]
async fn per_query_roles_apply_to_that_query_only() {
    let srv = full_server("query_roles");
    srv.http("CREATE TABLE facts (x UInt64) ENGINE = MergeTree ORDER BY x");
    srv.http("INSERT INTO facts VALUES (1), (2), (3)");
    for sql in [
        "CREATE ROLE reader",
        "CREATE ROLE writer",
        "CREATE ROLE `odd role`",
        "CREATE ROLE auditor",
        "GRANT SELECT ON default.facts TO reader",
        "GRANT INSERT ON default.facts TO writer",
        "GRANT SELECT(x) ON default.facts TO `odd role`",
        "CREATE USER bob IDENTIFIED WITH sha256_password BY 'pw' DEFAULT ROLE NONE",
        "GRANT reader, writer, `odd role` TO bob",
    ] {
        srv.http(sql);
    }
    // One pooled connection: a query after a roled one must not find the roles still set.
    let bob = Client::connect_with(srv.config().user("bob").password("pw").pool_max_size(1)).await.unwrap();
    let count = "SELECT count() FROM facts";
    let as_ = |sql: &str, roles: &[&str]| Query::new(sql.to_string()).roles(roles.iter().map(|r| r.to_string()));
    assert_eq!(bob.fetch_scalar::<u64>(as_(count, &["reader"])).await.unwrap(), 3);
    assert_eq!(code(bob.fetch_scalar::<u64>(count).await, "the query after a roled one"), ACCESS_DENIED);
    let roles: String = bob
        .fetch_scalar(as_("SELECT arrayStringConcat(arraySort(currentRoles()), ',')", &["writer", "odd role"]))
        .await
        .unwrap();
    assert_eq!(roles, "odd role,writer");
    bob.execute(as_("INSERT INTO facts VALUES (4)", &["writer"])).await.unwrap();
    assert_eq!(code(bob.fetch_scalar::<u64>(as_(count, &["writer"])).await, "SELECT as writer"), ACCESS_DENIED);
    // Every kind of call: streams, typed rows, values.
    let mut st = bob.fetch_blocks(as_("SELECT x FROM facts ORDER BY x", &["reader", "writer"])).await.unwrap();
    let mut n = 0;
    while let Some(b) = st.next().await.unwrap() {
        n += b.rows();
    }
    drop(st);
    assert_eq!(n, 4);
    let rows: Vec<(u64,)> = bob.fetch_all(as_("SELECT x FROM facts ORDER BY x", &["odd role"])).await.unwrap();
    assert_eq!(rows, vec![(1,), (2,), (3,), (4,)]);
    assert_eq!(bob.fetch_all_values(as_(count, &["reader"])).await.unwrap().len(), 1);
    // Roles the user may not take, or that do not exist: the server's errors.
    assert_eq!(
        code(bob.fetch_scalar::<u64>(as_(count, &["auditor"])).await, "a role not granted"),
        SET_NON_GRANTED_ROLE
    );
    assert_eq!(code(bob.fetch_scalar::<u64>(as_(count, &["no_such_role"])).await, "an unknown role"), 511);
    // The client is still usable, and still without roles.
    assert_eq!(code(bob.fetch_scalar::<u64>(count).await, "after the failures"), ACCESS_DENIED);
    assert_eq!(bob.fetch_scalar::<u64>(as_(count, &["reader"])).await.unwrap(), 4);
    // What Query::roles exists for: the native protocol takes no `role` setting (HTTP's
    // `role=` parameter is not a setting).
    let setting = Query::new(count).setting("role", "reader");
    assert_eq!(code(bob.fetch_scalar::<u64>(setting).await, "a role setting"), 115, "UNKNOWN_SETTING");
    // A session keeps SET ROLE for its later calls, so per-query roles are refused there.
    let mut s = bob.session().await.unwrap();
    let e = s.fetch_scalar::<u64>(as_(count, &["reader"])).await.unwrap_err();
    assert_eq!(e.kind(), chnative::ErrorKind::InvalidInput, "{e}");
    assert!(e.to_string().contains("SET ROLE"), "{e}");
    drop(s);
    assert_eq!(srv.http("SELECT count() FROM facts FORMAT TSV"), "4\n");
}

#[tokio::test]
async fn query_log_holds_the_query_id_chnative_sent() {
    let srv = full_server("query_log");
    let client = Client::connect_with(srv.config().client_name("chn-query-log-test")).await.unwrap();
    // An id of the caller's, and one chnative generated (read back from the stream).
    let id = format!("chn-query-log-{}", std::process::id());
    let q = Query::new("SELECT sum(number) FROM numbers(1000)").id(id.clone());
    let sum: u64 = client.fetch_scalar(q).await.unwrap();
    assert_eq!(sum, 499_500);
    let mut stream = client.fetch_blocks("SELECT 42 AS answer").await.unwrap();
    let generated = stream.query_id().to_string();
    while stream.next().await.unwrap().is_some() {}
    drop(stream);
    assert!(!generated.is_empty(), "chnative sends a query id");
    // An INSERT's id too.
    srv.http("CREATE TABLE logged (x UInt64) ENGINE = MergeTree ORDER BY x");
    let insert_id = format!("chn-insert-{}", std::process::id());
    client.insert("logged").column("x", &[1u64, 2, 3][..]).query_id(insert_id.clone()).send().await.unwrap();

    srv.http("SYSTEM FLUSH LOGS");
    let row = |id: &str| {
        srv.http(&format!(
            "SELECT type, query_kind, query, client_name, user, written_rows FROM system.query_log \
             WHERE query_id = '{id}' ORDER BY event_time_microseconds FORMAT TSV"
        ))
    };
    assert_eq!(
        row(&id),
        "QueryStart\tSelect\tSELECT sum(number) FROM numbers(1000)\tchn-query-log-test\tdefault\t0\n\
         QueryFinish\tSelect\tSELECT sum(number) FROM numbers(1000)\tchn-query-log-test\tdefault\t0\n"
    );
    assert_eq!(
        row(&generated),
        "QueryStart\tSelect\tSELECT 42 AS answer\tchn-query-log-test\tdefault\t0\n\
         QueryFinish\tSelect\tSELECT 42 AS answer\tchn-query-log-test\tdefault\t0\n"
    );
    assert_eq!(
        row(&insert_id),
        "QueryStart\tInsert\tINSERT INTO `logged` (`x`) VALUES\tchn-query-log-test\tdefault\t0\n\
         QueryFinish\tInsert\tINSERT INTO `logged` (`x`) VALUES\tchn-query-log-test\tdefault\t3\n"
    );
}

/// A table created `ON CLUSTER` on every node, dropped the same way at the end.
struct ReplicatedTable<'c> {
    cluster: &'c ReplicatedCluster,
    name: String,
}

impl<'c> ReplicatedTable<'c> {
    fn create(cluster: &'c ReplicatedCluster, prefix: &str, columns: &str) -> ReplicatedTable<'c> {
        let name = common::unique_table(prefix);
        cluster.http(
            1,
            1,
            &format!(
                "CREATE TABLE {name} ON CLUSTER {NAME} ({columns}) \
                 ENGINE = ReplicatedMergeTree('/clickhouse/tables/{{shard}}/{{database}}/{{table}}', '{{replica}}') \
                 ORDER BY tuple()"
            ),
        );
        ReplicatedTable { cluster, name }
    }

    /// `SYSTEM SYNC REPLICA` on node (s, r), then `SELECT <what>` there (over HTTP).
    fn synced(&self, s: u16, r: u16, what: &str) -> String {
        self.cluster.http(s, r, &format!("SYSTEM SYNC REPLICA {}", self.name));
        self.cluster.http(s, r, &format!("SELECT {what} FROM {} FORMAT TSV", self.name))
    }
}

impl Drop for ReplicatedTable<'_> {
    fn drop(&mut self) {
        use std::io::{Read, Write};
        let sql = format!("DROP TABLE IF EXISTS {} ON CLUSTER {NAME} SYNC", self.name);
        if let Ok(mut sock) = std::net::TcpStream::connect(("127.0.0.1", self.cluster.node(1, 1).http)) {
            let req = format!("POST / HTTP/1.0\r\nContent-Length: {}\r\n\r\n{sql}", sql.len());
            let _ = sock.write_all(req.as_bytes());
            let _ = sock.read_to_end(&mut Vec::new());
        }
    }
}

#[tokio::test]
async fn replicated_merge_tree_on_cluster_replicates_between_replicas() {
    let Some(cluster) = ReplicatedCluster::shared() else { return };
    // ON CLUSTER DDL sent by chnative: the DDL queue in ZooKeeper runs it on every node, and
    // the answer is one row per node.
    let name = common::unique_table("repl");
    let c11 = Client::connect_with(cluster.config(1, 1)).await.unwrap();
    let ddl = format!(
        "CREATE TABLE {name} ON CLUSTER {NAME} (id UInt64, s String) \
         ENGINE = ReplicatedMergeTree('/clickhouse/tables/{{shard}}/{{database}}/{{table}}', '{{replica}}') ORDER BY id"
    );
    let answer = c11.fetch_all_values(ddl.as_str()).await.unwrap();
    assert_eq!(answer.len(), usize::from(SHARDS * REPLICAS), "one row per node: {answer:?}");
    let table = ReplicatedTable { cluster: &cluster, name };
    for s in 1..=SHARDS {
        for r in 1..=REPLICAS {
            let engine = cluster.http(
                s,
                r,
                &format!("SELECT engine FROM system.tables WHERE name = '{}' FORMAT TSV", table.name),
            );
            assert_eq!(engine, "ReplicatedMergeTree\n", "s{s}r{r}");
        }
    }

    // Rows inserted on replica 1 of shard 1 reach replica 2, and not shard 2.
    let ids: Vec<u64> = (0..1000).collect();
    let strs: Vec<String> = ids.iter().map(|i| format!("row {i}")).collect();
    c11.insert(&table.name).column("id", &ids[..]).values("s", &strs).send().await.unwrap();
    let c12 = Client::connect_with(cluster.config(1, 2)).await.unwrap();
    c12.execute(format!("SYSTEM SYNC REPLICA {}", table.name)).await.unwrap();
    let read: Vec<(u64, String)> =
        c12.fetch_all(format!("SELECT id, s FROM {} ORDER BY id", table.name)).await.unwrap();
    assert_eq!(read.len(), 1000);
    assert!(read.iter().zip(&ids).all(|((id, s), want)| id == want && *s == format!("row {want}")));
    let all = "count(), sum(id), groupBitXor(cityHash64(s))";
    let expect = table.synced(1, 1, all);
    assert_eq!(table.synced(1, 2, all), expect);
    assert_eq!(expect.split('\t').next(), Some("1000"));
    assert_eq!(table.synced(2, 1, "count()"), "0\n");

    // chnative's Cluster reads the topology (internal_replication = true) and routes each
    // shard's part to one replica; the other replica gets it from ZooKeeper.
    let routed = Cluster::discover(cluster.config(1, 1), NAME).await.unwrap();
    assert!(routed.topology().shards.iter().all(|s| s.internal_replication && s.replicas.len() == 2));
    let block = {
        let mut st = c11
            .fetch_blocks(
                "SELECT number + 1000 AS id, toString(number) AS s FROM numbers(5000) SETTINGS max_block_size = 100000",
            )
            .await
            .unwrap();
        st.next().await.unwrap().expect("a block").clone()
    };
    let sent = routed.insert(&table.name, ShardKey::column("id")).send(&block).await.unwrap();
    assert_eq!(sent.rows_per_shard.iter().sum::<u64>(), 5000);
    let counts: Vec<u64> = (1..=SHARDS)
        .map(|s| {
            let here: Vec<String> = (1..=REPLICAS).map(|r| table.synced(s, r, "count(), sum(id)")).collect();
            assert!(here.iter().all(|h| *h == here[0]), "shard {s}'s replicas differ: {here:?}");
            here[0].split('\t').next().unwrap().parse().unwrap()
        })
        .collect();
    // Shard 1 also holds the first 1000 rows.
    assert_eq!(counts[0] - 1000, sent.rows_per_shard[0]);
    assert_eq!(counts[1], sent.rows_per_shard[1]);
}

#[tokio::test]
async fn a_retried_insert_with_the_same_token_lands_once_across_replicas() {
    let Some(cluster) = ReplicatedCluster::shared() else { return };
    let table = ReplicatedTable::create(&cluster, "dedup", "id UInt64, v String");
    let ids: Vec<u64> = (0..100).collect();
    let vs: Vec<String> = ids.iter().map(|i| format!("v{i}")).collect();
    let c11 = Client::connect_with(cluster.config(1, 1)).await.unwrap();
    let c12 = Client::connect_with(cluster.config(1, 2)).await.unwrap();
    let send = |c: &Client, token: &str| {
        c.insert(&table.name).column("id", &ids[..]).values("v", &vs).deduplication_token(token.to_string()).send()
    };
    // The first attempt; its retry on the same replica, then on the other replica (where a
    // client that lost the answer would fail over to): both are deduplicated.
    let first = send(&c11, "batch-1").await.unwrap();
    assert_eq!(first.rows, 100);
    send(&c11, "batch-1").await.unwrap();
    send(&c12, "batch-1").await.unwrap();
    assert_eq!(table.synced(1, 1, "count(), sum(id)"), "100\t4950\n");
    assert_eq!(table.synced(1, 2, "count(), sum(id)"), "100\t4950\n");
    // The same rows under another token are another insert.
    send(&c12, "batch-2").await.unwrap();
    assert_eq!(table.synced(1, 1, "count(), sum(id)"), "200\t9900\n");
    // With insert_deduplicate = 0 the server does not deduplicate: a repeat lands again.
    c11.insert(&table.name)
        .column("id", &ids[..])
        .values("v", &vs)
        .deduplication_token("batch-2")
        .setting("insert_deduplicate", "0")
        .send()
        .await
        .unwrap();
    assert_eq!(table.synced(1, 2, "count()"), "300\n");
    // The deduplication log in ZooKeeper holds the two tokens' blocks.
    let blocks = cluster.http(
        1,
        1,
        &format!(
            "SELECT count() FROM system.zookeeper WHERE path = '/clickhouse/tables/1/default/{}/blocks'",
            table.name
        ),
    );
    assert_eq!(blocks, "2\n");

    // A routed insert (chnative's Cluster) retried with the same token: each shard stores its
    // part once, whichever replica took it.
    let routed = Cluster::discover(cluster.config(2, 1), NAME).await.unwrap();
    let block = {
        let mut st = c11
            .fetch_blocks(
                "SELECT number + 1000 AS id, toString(number) AS v FROM numbers(2000) SETTINGS max_block_size = 100000",
            )
            .await
            .unwrap();
        st.next().await.unwrap().expect("a block").clone()
    };
    let once =
        routed.insert(&table.name, ShardKey::column("id")).deduplication_token("load-7").send(&block).await.unwrap();
    for _ in 0..2 {
        routed.insert(&table.name, ShardKey::column("id")).deduplication_token("load-7").send(&block).await.unwrap();
    }
    let s2 = table.synced(2, 2, "count()");
    assert_eq!(s2, format!("{}\n", once.rows_per_shard[1]));
    assert_eq!(table.synced(1, 2, "count()"), format!("{}\n", 300 + once.rows_per_shard[0]));
}
