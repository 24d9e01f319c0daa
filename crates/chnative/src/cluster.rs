//! A cluster of ClickHouse servers: shards, each with replicas.
//!
//! A [`Cluster`] knows the [`Topology`] (read from `system.clusters`, or given)
//! and keeps one [`Client`] (a pool) per replica, opened when first needed. It
//!
//! * runs a query on one replica of every shard — the query's *local-table form*,
//!   i.e. SQL over the shard's local table, not over a `Distributed` table — as one
//!   [`ShardStream`] per shard ([`Cluster::shard_streams`], one partition per
//!   shard for a distributed engine) or as one merged stream
//!   ([`Cluster::query_merged`]);
//! * routes INSERTs to shards by a sharding key ([`Cluster::insert`]), the way a
//!   `Distributed` table does: the key value modulo the total weight picks a
//!   slot, and each shard owns as many consecutive slots as its weight. Every
//!   shard's part goes in one INSERT carrying a deduplication token derived from
//!   the insert's token, so retrying a failed insert with the same token stores
//!   no block twice;
//! * picks a replica within a shard by its recent errors, halved every
//!   [`ClusterOptions::error_half_life`] (as the server's `load_balancing` does
//!   with `distributed_replica_error_half_life`), ties broken by a
//!   [`LoadBalancing`] policy, and fails over to the next replica when one cannot
//!   be reached.
//!
//! Errors from a shard say which shard and replica they came from
//! ([`Error::shard`], [`Error::replica`], and the message).
//!
//! # Routed inserts or a `Distributed` table
//!
//! The alternative to routing on the client is an INSERT into a `Distributed`
//! table, which splits the rows on the server it reaches. How it sends them is
//! the setting `distributed_foreground_insert` (formerly `insert_distributed_sync`):
//!
//! * `0` (the default): the INSERT returns once the parts for the other shards are
//!   queued as files on the receiving server's disk; a background sender delivers
//!   them later. Fast and tolerant of a shard being down, but "OK" does not mean
//!   stored: the rows show up later, an error surfaces only in
//!   `system.distribution_queue`, and the queue dies with that server's disk. (In
//!   the embedded server of `scripts/cluster.sh` the background sender does not
//!   run at all: queued parts move only on `SYSTEM FLUSH DISTRIBUTED`.)
//! * `1`: the INSERT returns once every shard stored its part (waiting up to
//!   `insert_distributed_timeout`), and fails when one cannot. Read-your-writes and
//!   a real error, at the price of latency and of one slow or dead shard failing
//!   the whole INSERT.
//!
//! Either way every row crosses the network twice (client → receiving server →
//! shard) and the receiving server does the splitting. [`Cluster::insert`] sends
//! each shard its part directly, in parallel, and knows which shard failed; its
//! deduplication tokens make the retry safe. It needs the sharding key computed
//! on the client ([`ShardKey`]) and the same weights as the table's cluster.
//!
//! # Replicas and Keeper
//!
//! With `ReplicatedMergeTree` tables a shard's replicas copy each other through
//! ZooKeeper/Keeper, so a routed INSERT goes to one replica
//! ([`Shard::internal_replication`] true) and their deduplication is shared.
//! Without it (plain MergeTree on every replica, `internal_replication = false`)
//! the writer writes every replica, as a `Distributed` table does; each replica
//! deduplicates by itself (`non_replicated_deduplication_window`). The embedded
//! server of `scripts/cluster.sh` runs no Keeper, so its cluster is of the second
//! kind.
//!
//! ```no_run
//! # async fn demo() -> chnative::Result<()> {
//! use chnative::cluster::{Cluster, ShardKey};
//! use chnative::Config;
//!
//! let config = Config::from_url("clickhouse://default@127.0.0.1:29111/default")?;
//! let cluster = Cluster::discover(config, "chn_cluster").await?;
//!
//! // Route blocks (here: made by a server) to the shards' local tables by `id`,
//! // one token per block so that a retried block is stored once.
//! let (_, client) = cluster.shard_client(0).await?;
//! let mut rows = client.stream("SELECT number AS id, toString(number) AS name FROM numbers(100000)").await?;
//! let mut n = 0;
//! while let Some(block) = rows.next().await? {
//!     cluster.insert("events_local", ShardKey::column("id")).deduplication_token(format!("load-1-{n}")).send(block).await?;
//!     n += 1;
//! }
//!
//! // One stream per shard, read in parallel.
//! let mut tasks = Vec::new();
//! for mut s in cluster.shard_streams("SELECT id, name FROM events_local WHERE id % 7 = 0").await? {
//!     tasks.push(tokio::spawn(async move {
//!         let (shard, replica) = (s.shard(), s.replica().to_string());
//!         let mut rows = 0;
//!         while let Some(block) = s.next().await? {
//!             rows += block.rows();
//!         }
//!         Ok::<_, chnative::Error>((shard, replica, rows))
//!     }));
//! }
//! for t in tasks {
//!     let (shard, replica, rows) = t.await.expect("task")?;
//!     println!("shard {shard} ({replica}): {rows} rows");
//! }
//! # Ok(()) }
//! ```

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chnative_proto::Block;
use tokio::sync::OnceCell;

use crate::config::Config;
use crate::error::{Error, ErrorKind, Result};
use crate::netopts::LoadBalancing;
use crate::pool::Client;
use crate::query::Query;
use crate::stream::{CancelHandle, QueryStream};

/// One replica of a shard: where its native protocol listens.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Replica {
    /// Host name or address.
    pub host: String,
    /// Native TCP port.
    pub port: u16,
}

impl Replica {
    /// A replica at `host:port`.
    pub fn new(host: impl Into<String>, port: u16) -> Self {
        Replica { host: host.into(), port }
    }

    /// `host:port` (`[v6]:port` for an IPv6 address).
    pub fn address(&self) -> String {
        if self.host.contains(':') && !self.host.starts_with('[') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// One shard: its weight and its replicas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shard {
    /// The shard's number as `system.clusters` has it (from 1).
    pub num: u32,
    /// Its share of routed rows: `weight` of the total weight's slots.
    pub weight: u32,
    /// True when the table replicates by itself (ReplicatedMergeTree): a routed
    /// INSERT goes to one replica. False: it goes to every replica (what a
    /// `Distributed` table does with `internal_replication = false`).
    pub internal_replication: bool,
    /// The replicas, in the configured order.
    pub replicas: Vec<Replica>,
}

impl Shard {
    /// A shard of weight 1 that replicates by itself (`internal_replication`).
    pub fn new(replicas: impl IntoIterator<Item = Replica>) -> Self {
        Shard { num: 0, weight: 1, internal_replication: true, replicas: replicas.into_iter().collect() }
    }

    /// Sets the weight (0 takes no routed rows).
    pub fn weight(mut self, weight: u32) -> Self {
        self.weight = weight;
        self
    }

    /// Sets `internal_replication` (see the field).
    pub fn internal_replication(mut self, on: bool) -> Self {
        self.internal_replication = on;
        self
    }
}

/// The shape of a cluster: its shards, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topology {
    /// The cluster's name (informational when given explicitly).
    pub name: String,
    /// The shards, in order; routing and [`Error::shard`] index this list.
    pub shards: Vec<Shard>,
}

impl Topology {
    /// A topology with no shards yet.
    pub fn new(name: impl Into<String>) -> Self {
        Topology { name: name.into(), shards: Vec::new() }
    }

    /// Adds a shard (numbered after the ones before it when its `num` is 0).
    pub fn shard(mut self, mut shard: Shard) -> Self {
        if shard.num == 0 {
            shard.num = self.shards.len() as u32 + 1;
        }
        self.shards.push(shard);
        self
    }

    /// Reads cluster `name` from `system.clusters` of the server `client` talks to.
    pub async fn from_system_clusters(client: &Client, name: &str) -> Result<Topology> {
        let q = Query::new(
            "SELECT shard_num, shard_weight, internal_replication, host_name, port \
             FROM system.clusters WHERE cluster = {c:String} ORDER BY shard_num, replica_num",
        )
        .bind("c", name);
        let rows = client.fetch_all_rows(q).await?;
        let mut topo = Topology::new(name);
        for row in rows {
            let v = row.values();
            let int = |i: usize| -> Result<i128> {
                v.get(i).and_then(|x| x.as_i128()).ok_or_else(|| {
                    Error::invalid_input(format!("system.clusters gave an unexpected row {:?}", row.values()))
                })
            };
            let num = int(0)? as u32;
            let weight = int(1)? as u32;
            let internal = int(2)? != 0;
            let port = u16::try_from(int(4)?)
                .map_err(|_| Error::invalid_input(format!("system.clusters: port of shard {num} is out of range")))?;
            let host = v
                .get(3)
                .and_then(|x| x.as_str())
                .ok_or_else(|| Error::invalid_input("system.clusters: host_name is not a string"))?
                .to_string();
            if topo.shards.last().map(|s| s.num) != Some(num) {
                topo.shards.push(Shard { num, weight, internal_replication: internal, replicas: Vec::new() });
            }
            topo.shards.last_mut().expect("pushed above").replicas.push(Replica { host, port });
        }
        if topo.shards.is_empty() {
            let at = client.server_info().display_name;
            return Err(Error::config(format!("cluster `{name}` is not in system.clusters of the server {at}")));
        }
        Ok(topo)
    }

    /// The sum of the shards' weights.
    pub fn total_weight(&self) -> u64 {
        self.shards.iter().map(|s| u64::from(s.weight)).sum()
    }

    /// The shard (index into [`Topology::shards`]) a row with sharding-key value
    /// `key` goes to, as a `Distributed` table chooses it: slot `key % total
    /// weight`, each shard owning `weight` consecutive slots in order. `None` when
    /// the total weight is 0.
    pub fn shard_for(&self, key: u64) -> Option<usize> {
        let total = self.total_weight();
        if total == 0 {
            return None;
        }
        let mut slot = key % total;
        for (i, s) in self.shards.iter().enumerate() {
            if slot < u64::from(s.weight) {
                return Some(i);
            }
            slot -= u64::from(s.weight);
        }
        None
    }

    fn check(&self) -> Result<()> {
        if self.shards.is_empty() {
            return Err(Error::config(format!("cluster `{}` has no shards", self.name)));
        }
        for s in &self.shards {
            if s.replicas.is_empty() {
                return Err(Error::config(format!("shard {} of cluster `{}` has no replicas", s.num, self.name)));
            }
        }
        Ok(())
    }
}

/// How a [`Cluster`] picks and scores replicas.
#[derive(Debug, Clone)]
pub struct ClusterOptions {
    /// The order among replicas with the same error count (default
    /// [`LoadBalancing::InOrder`]: the configured order).
    pub load_balancing: LoadBalancing,
    /// Every this long a replica's error count is halved (the server's
    /// `distributed_replica_error_half_life`, 60 s by default).
    pub error_half_life: Duration,
    /// Error counts stop growing here (`distributed_replica_error_cap`, 1000).
    pub error_cap: u64,
}

impl Default for ClusterOptions {
    fn default() -> Self {
        ClusterOptions {
            load_balancing: LoadBalancing::InOrder,
            error_half_life: Duration::from_secs(60),
            error_cap: 1000,
        }
    }
}

/// A replica's recent errors: halved every half-life, as the server decays its
/// `errors_count` (whole half-lives only, by shifting).
#[derive(Debug, Clone, Copy)]
struct Health {
    errors: u64,
    /// When the count was last halved (or first counted).
    since: Instant,
}

impl Health {
    fn new(now: Instant) -> Self {
        Health { errors: 0, since: now }
    }

    /// The count at `now`, after halving it once per whole half-life passed.
    fn errors_at(&mut self, now: Instant, half_life: Duration) -> u64 {
        if half_life.is_zero() {
            self.errors = 0;
            self.since = now;
            return 0;
        }
        let elapsed = now.saturating_duration_since(self.since);
        let periods = elapsed.as_nanos() / half_life.as_nanos();
        if periods > 0 {
            self.errors = if periods >= 64 { 0 } else { self.errors >> periods };
            // Keep the remainder of the current period.
            self.since += half_life * (periods.min(u32::MAX as u128) as u32);
            if self.errors == 0 {
                self.since = now;
            }
        }
        self.errors
    }

    fn record(&mut self, now: Instant, half_life: Duration, cap: u64) {
        let e = self.errors_at(now, half_life);
        if e == 0 {
            self.since = now;
        }
        self.errors = (e + 1).min(cap);
    }
}

struct ReplicaState {
    replica: Replica,
    address: String,
    client: OnceCell<Client>,
    health: Mutex<Health>,
}

struct Inner {
    topology: Topology,
    config: Config,
    options: ClusterOptions,
    shards: Vec<Vec<ReplicaState>>,
    round_robin: AtomicUsize,
    seed: AtomicU64,
    tokens: AtomicU64,
}

/// A cluster: a [`Topology`] and a connection pool per replica (see the
/// [module](self) docs). Cheap to clone and `Send + Sync`.
#[derive(Clone)]
pub struct Cluster {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster").field("topology", &self.inner.topology).finish()
    }
}

impl Cluster {
    /// A cluster of the given shape. `config` gives everything but the address
    /// (user, password, database, TLS, settings, pool sizes) for every replica;
    /// its host, port and failover hosts are ignored. No connection is opened
    /// until a replica is first used.
    pub fn new(config: Config, topology: Topology) -> Result<Cluster> {
        Self::with_options(config, topology, ClusterOptions::default())
    }

    /// [`Cluster::new`] with replica-choice options.
    pub fn with_options(config: Config, topology: Topology, options: ClusterOptions) -> Result<Cluster> {
        topology.check()?;
        let now = Instant::now();
        let shards = topology
            .shards
            .iter()
            .map(|s| {
                s.replicas
                    .iter()
                    .map(|r| ReplicaState {
                        replica: r.clone(),
                        address: r.address(),
                        client: OnceCell::new(),
                        health: Mutex::new(Health::new(now)),
                    })
                    .collect()
            })
            .collect();
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0x9e37_79b9)
            ^ u64::from(std::process::id());
        Ok(Cluster {
            inner: Arc::new(Inner {
                topology,
                config,
                options,
                shards,
                round_robin: AtomicUsize::new(0),
                seed: AtomicU64::new(seed | 1),
                tokens: AtomicU64::new(0),
            }),
        })
    }

    /// Connects to the server in `config` and reads cluster `name` from its
    /// `system.clusters`; every replica is then reached with `config`'s user,
    /// password and options.
    pub async fn discover(config: Config, name: &str) -> Result<Cluster> {
        let seed = Client::connect_with(config.clone()).await?;
        let topology = Topology::from_system_clusters(&seed, name).await?;
        Cluster::new(config, topology)
    }

    /// The cluster's shape.
    pub fn topology(&self) -> &Topology {
        &self.inner.topology
    }

    /// The number of shards.
    pub fn shard_count(&self) -> usize {
        self.inner.shards.len()
    }

    /// Each replica of shard `shard` (index) with its current error count, in
    /// the order they would be tried now.
    pub fn replica_errors(&self, shard: usize) -> Vec<(Replica, u64)> {
        let Some(replicas) = self.inner.shards.get(shard) else { return Vec::new() };
        let now = Instant::now();
        self.inner
            .order(shard, now)
            .into_iter()
            .map(|i| {
                let r = &replicas[i];
                let e = r
                    .health
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .errors_at(now, self.inner.options.error_half_life);
                (r.replica.clone(), e)
            })
            .collect()
    }

    /// A client for one replica of shard `shard`, chosen by recent errors; a
    /// replica that cannot be reached counts an error and the next is tried.
    /// Returns the replica's address with the client.
    pub async fn shard_client(&self, shard: usize) -> Result<(Replica, Client)> {
        let order = self.inner.checked_order(shard)?;
        let mut failures = Vec::new();
        for i in order {
            match self.inner.client(shard, i).await {
                Ok(c) => return Ok((self.inner.shards[shard][i].replica.clone(), c)),
                Err(e) => failures.push((i, e)),
            }
        }
        Err(self.inner.all_failed(shard, failures))
    }

    /// Runs a statement on every replica of every shard, all at once (e.g. the
    /// `CREATE TABLE` of a local table where `ON CLUSTER` is not available: it
    /// needs Keeper). The first failure (in shard, then replica order) is returned,
    /// naming its shard and replica; the statement may have run elsewhere.
    pub async fn execute_on_every_replica(&self, query: impl Into<Query>) -> Result<()> {
        let query = query.into();
        let mut set = tokio::task::JoinSet::new();
        for (shard, replicas) in self.inner.shards.iter().enumerate() {
            for replica in 0..replicas.len() {
                let (inner, q) = (self.inner.clone(), query.clone());
                set.spawn(async move {
                    let r = match inner.client(shard, replica).await {
                        Ok(c) => c.execute(q).await.map(drop).map_err(|e| inner.locate(e, shard, Some(replica))),
                        Err(e) => Err(e),
                    };
                    ((shard, replica), r)
                });
            }
        }
        let mut first: Option<((usize, usize), Error)> = None;
        while let Some(j) = set.join_next().await {
            match j {
                Ok((_, Ok(()))) => {}
                Ok((at, Err(e))) => {
                    if first.as_ref().is_none_or(|(f, _)| at < *f) {
                        first = Some((at, e));
                    }
                }
                Err(j) => return Err(Error::internal(format!("a replica's task failed: {j}"))),
            }
        }
        first.map_or(Ok(()), |(_, e)| Err(e))
    }

    /// Starts `query` on one replica of shard `shard` (index). The query runs as
    /// written: name the shard's local table in it.
    pub async fn shard_stream(&self, shard: usize, query: impl Into<Query>) -> Result<ShardStream> {
        ShardStream::open(self.inner.clone(), shard, query.into()).await
    }

    /// Starts `query` on one replica of every shard, all at once; one stream per
    /// shard, in shard order (one partition per shard for a distributed engine).
    /// If a shard cannot start it, the streams already started are dropped
    /// (their queries cancelled) and that shard's error is returned.
    pub async fn shard_streams(&self, query: impl Into<Query>) -> Result<Vec<ShardStream>> {
        let query = query.into();
        let mut set = tokio::task::JoinSet::new();
        for shard in 0..self.shard_count() {
            let (inner, q) = (self.inner.clone(), query.clone());
            set.spawn(async move { (shard, ShardStream::open(inner, shard, q).await) });
        }
        let mut out: Vec<Option<ShardStream>> = (0..self.shard_count()).map(|_| None).collect();
        let mut first_err: Option<Error> = None;
        while let Some(r) = set.join_next().await {
            match r {
                Ok((i, Ok(s))) => out[i] = Some(s),
                Ok((i, Err(e))) => {
                    if first_err.as_ref().is_none_or(|f| f.shard().unwrap_or(usize::MAX) > i) {
                        first_err = Some(e);
                    }
                }
                Err(j) => return Err(Error::internal(format!("a shard's query task failed: {j}"))),
            }
        }
        if let Some(e) = first_err {
            return Err(e);
        }
        Ok(out.into_iter().map(|s| s.expect("every shard answered")).collect())
    }

    /// Runs `query` on one replica of every shard and merges the results into
    /// one stream of `(shard index, block)`, in arrival order. Each shard is
    /// read by its own task into a small queue (`queue_blocks` blocks per
    /// shard, at least 1), so memory stays bounded when the consumer is slower.
    /// The first shard error ends the stream (the other queries are cancelled).
    pub fn query_merged(&self, query: impl Into<Query>, queue_blocks: usize) -> MergedStream {
        let query = query.into();
        let n = self.shard_count();
        let (tx, rx) = tokio::sync::mpsc::channel(queue_blocks.max(1) * n);
        let mut tasks = tokio::task::JoinSet::new();
        for shard in 0..n {
            let (inner, q, tx) = (self.inner.clone(), query.clone(), tx.clone());
            tasks.spawn(async move {
                let mut s = match ShardStream::open(inner, shard, q).await {
                    Ok(s) => s,
                    Err(e) => {
                        let _ = tx.send(Err(e)).await;
                        return;
                    }
                };
                loop {
                    match s.next().await {
                        Ok(Some(b)) => {
                            if tx.send(Ok((shard, b.clone()))).await.is_err() {
                                return; // the consumer is gone: drop (cancels) the query
                            }
                        }
                        Ok(None) => return,
                        Err(e) => {
                            let _ = tx.send(Err(e)).await;
                            return;
                        }
                    }
                }
            });
        }
        MergedStream { rx, tasks, done: false }
    }

    /// Starts an INSERT into `table` (each shard's local table) routed by `key`.
    pub fn insert(&self, table: &str, key: ShardKey) -> ClusterInsert {
        ClusterInsert { cluster: self.clone(), table: table.to_string(), key, token: None, settings: Vec::new() }
    }

    /// A fresh deduplication token (unique to this process and cluster handle).
    fn new_token(&self) -> String {
        let n = self.inner.tokens.fetch_add(1, Ordering::Relaxed);
        format!("chn-{:016x}-{n}", self.inner.seed.load(Ordering::Relaxed))
    }
}

impl Inner {
    /// The replicas of `shard` in the order to try them at `now`: fewest recent
    /// errors first, ties in the load-balancing policy's order.
    fn order(&self, shard: usize, now: Instant) -> Vec<usize> {
        let replicas = &self.shards[shard];
        let n = replicas.len();
        let start = match self.options.load_balancing {
            LoadBalancing::RoundRobin => self.round_robin.fetch_add(1, Ordering::Relaxed) % n,
            LoadBalancing::Random => (self.next_random() % n as u64) as usize,
            _ => 0,
        };
        let mut keyed: Vec<(u64, usize, usize)> = (0..n)
            .map(|i| {
                let e = replicas[i]
                    .health
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .errors_at(now, self.options.error_half_life);
                (e, (i + n - start) % n, i)
            })
            .collect();
        keyed.sort_unstable();
        keyed.into_iter().map(|(_, _, i)| i).collect()
    }

    fn checked_order(&self, shard: usize) -> Result<Vec<usize>> {
        if shard >= self.shards.len() {
            return Err(Error::invalid_input(format!(
                "shard index {shard} is out of range: cluster `{}` has {} shards",
                self.topology.name,
                self.shards.len()
            )));
        }
        Ok(self.order(shard, Instant::now()))
    }

    fn next_random(&self) -> u64 {
        // xorshift64*: enough to spread ties, no dependency.
        let mut x = self.seed.load(Ordering::Relaxed);
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.seed.store(x, Ordering::Relaxed);
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn record_error(&self, shard: usize, replica: usize) {
        let o = &self.options;
        self.shards[shard][replica].health.lock().unwrap_or_else(|p| p.into_inner()).record(
            Instant::now(),
            o.error_half_life,
            o.error_cap,
        );
    }

    /// The pooled client of one replica, connecting when first asked. A failed
    /// connect counts an error and comes back located.
    async fn client(&self, shard: usize, replica: usize) -> Result<Client> {
        let r = &self.shards[shard][replica];
        let cfg = || {
            let mut c = self.config.clone().host(r.replica.host.clone()).port(r.replica.port);
            c.net.more_hosts.clear();
            c
        };
        match r.client.get_or_try_init(|| Client::connect_with(cfg())).await {
            Ok(c) => Ok(c.clone()),
            Err(e) => {
                self.record_error(shard, replica);
                Err(self.locate(e, shard, Some(replica)))
            }
        }
    }

    /// `e`, said to come from `shard` (and `replica`).
    fn locate(&self, e: Error, shard: usize, replica: Option<usize>) -> Error {
        if e.shard().is_some() {
            return e;
        }
        let s = &self.topology.shards[shard];
        let (place, addr) = match replica {
            Some(i) => {
                let a = self.shards[shard][i].address.clone();
                (format!("cluster `{}` shard {} (replica {a})", self.topology.name, s.num), Some(a))
            }
            None => (format!("cluster `{}` shard {}", self.topology.name, s.num), None),
        };
        e.located(place, shard, addr)
    }

    /// Every replica of `shard` failed: one error naming them all (the last
    /// failure is the error's own).
    fn all_failed(&self, shard: usize, mut failures: Vec<(usize, Error)>) -> Error {
        let s = &self.topology.shards[shard];
        let n = failures.len();
        let (i, e) = failures.pop().expect("at least one replica");
        if n == 1 {
            // One replica: its own located error says it all.
            return e;
        }
        // "shard 2: all 2 replicas failed: A: error A; B" + ": error B" (the error's own).
        let mut place = format!("cluster `{}` shard {}: all {n} replicas failed: ", self.topology.name, s.num);
        for (j, f) in &failures {
            place.push_str(&format!("{}: {}; ", self.shards[shard][*j].address, f.unlocated_ref()));
        }
        let addr = self.shards[shard][i].address.clone();
        place.push_str(&addr);
        e.unlocated().located(place, shard, Some(addr))
    }
}

/// Whether a failure of this kind means "this replica is unwell" (try another)
/// rather than "this query is wrong" (the same everywhere).
fn replica_fault(e: &Error) -> bool {
    match e.kind() {
        ErrorKind::Io | ErrorKind::Timeout | ErrorKind::Closed | ErrorKind::Protocol => true,
        ErrorKind::Server => e.is_retryable(),
        _ => false,
    }
}

/// A query running on one replica of one shard (see [`Cluster::shard_stream`]).
///
/// Until its first block is returned, a replica that fails (cannot be reached,
/// or drops the connection) counts an error and the query restarts on the next
/// replica; after that, a failure ends the stream with an error naming the
/// shard and replica (the rows already returned cannot be taken back, so the
/// stream does not silently restart). Dropping it cancels the query.
pub struct ShardStream {
    inner: Arc<Inner>,
    shard: usize,
    replica: usize,
    query: Query,
    stream: QueryStream<'static>,
    /// Replicas not tried yet (in order).
    rest: Vec<usize>,
    /// Failures before the current replica.
    failures: Vec<(usize, Error)>,
    delivered: bool,
}

impl std::fmt::Debug for ShardStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShardStream").field("shard", &self.shard).field("replica", &self.replica()).finish()
    }
}

impl ShardStream {
    async fn open(inner: Arc<Inner>, shard: usize, query: Query) -> Result<ShardStream> {
        let order = inner.checked_order(shard)?;
        let mut failures = Vec::new();
        let mut rest = order.into_iter();
        while let Some(i) = rest.next() {
            match start(&inner, shard, i, &query).await {
                Ok(stream) => {
                    return Ok(ShardStream {
                        inner,
                        shard,
                        replica: i,
                        query,
                        stream,
                        rest: rest.collect(),
                        failures,
                        delivered: false,
                    })
                }
                Err(e) if replica_fault(&e) => failures.push((i, e)),
                Err(e) => return Err(e),
            }
        }
        Err(inner.all_failed(shard, failures))
    }

    /// The shard's index in the topology.
    pub fn shard(&self) -> usize {
        self.shard
    }

    /// The replica (`host:port`) the query runs on now.
    pub fn replica(&self) -> &str {
        &self.inner.shards[self.shard][self.replica].address
    }

    /// The running query's id.
    pub fn query_id(&self) -> &str {
        self.stream.query_id()
    }

    /// A handle that cancels the query from elsewhere.
    pub fn cancel_handle(&self) -> CancelHandle {
        self.stream.cancel_handle()
    }

    /// The result's header (names and types), once received.
    pub fn header(&self) -> Option<&Block> {
        self.stream.header()
    }

    /// The next block with rows, or `None` at the end.
    pub async fn next(&mut self) -> Result<Option<&Block>> {
        loop {
            match self.stream.next().await.map(|b| b.is_some()) {
                Ok(true) => {
                    self.delivered = true;
                    return Ok(Some(self.stream.current()));
                }
                Ok(false) => return Ok(None),
                Err(e) => {
                    let fault = replica_fault(&e);
                    if fault {
                        self.inner.record_error(self.shard, self.replica);
                    }
                    let e = self.inner.locate(e, self.shard, Some(self.replica));
                    if !fault || self.delivered {
                        return Err(e);
                    }
                    self.failures.push((self.replica, e));
                    self.failover().await?;
                }
            }
        }
    }

    /// Restarts the query on the next replica that takes it.
    async fn failover(&mut self) -> Result<()> {
        while !self.rest.is_empty() {
            let i = self.rest.remove(0);
            match start(&self.inner, self.shard, i, &self.query).await {
                Ok(stream) => {
                    self.stream = stream;
                    self.replica = i;
                    return Ok(());
                }
                Err(e) if replica_fault(&e) => self.failures.push((i, e)),
                Err(e) => return Err(e),
            }
        }
        Err(self.inner.all_failed(self.shard, std::mem::take(&mut self.failures)))
    }
}

/// Starts `query` on replica `i` of `shard`; failures are counted and located.
async fn start(inner: &Arc<Inner>, shard: usize, i: usize, query: &Query) -> Result<QueryStream<'static>> {
    let client = inner.client(shard, i).await?;
    match client.stream(query.clone()).await {
        Ok(s) => Ok(s),
        Err(e) => {
            if replica_fault(&e) {
                inner.record_error(shard, i);
            }
            Err(inner.locate(e, shard, Some(i)))
        }
    }
}

/// The blocks of every shard's result, merged (see [`Cluster::query_merged`]).
pub struct MergedStream {
    rx: tokio::sync::mpsc::Receiver<Result<(usize, Block)>>,
    tasks: tokio::task::JoinSet<()>,
    done: bool,
}

impl std::fmt::Debug for MergedStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MergedStream").field("done", &self.done).finish()
    }
}

impl MergedStream {
    /// The next block and the index of the shard it came from, or `None` when
    /// every shard has finished. After an error the stream ends.
    pub async fn next(&mut self) -> Result<Option<(usize, Block)>> {
        if self.done {
            return Ok(None);
        }
        match self.rx.recv().await {
            Some(Ok(b)) => Ok(Some(b)),
            Some(Err(e)) => {
                self.done = true;
                self.tasks.abort_all();
                Err(e)
            }
            None => {
                self.done = true;
                // A task that panicked sent nothing: say so rather than end short.
                while let Some(r) = self.tasks.join_next().await {
                    if let Err(j) = r {
                        if j.is_panic() {
                            return Err(Error::internal(format!("a shard's read task panicked: {j}")));
                        }
                    }
                }
                Ok(None)
            }
        }
    }
}

/// A sharding-key function: the key of every row of a block.
pub type KeyFn = Arc<dyn Fn(&Block) -> Result<Vec<u64>> + Send + Sync>;

/// How a routed INSERT finds a row's sharding-key value (see [`Cluster::insert`]).
#[derive(Clone)]
pub enum ShardKey {
    /// An integer column (`UInt8`…`UInt64`, `Int8`…`Int64`): its value is the
    /// key, a negative value read as the unsigned integer of the same width, as
    /// the server does.
    Column(String),
    /// A function computing the key of every row of a block (e.g. a hash of a
    /// string column matching the table's sharding expression).
    Func(KeyFn),
}

impl std::fmt::Debug for ShardKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ShardKey::Column(c) => f.debug_tuple("Column").field(c).finish(),
            ShardKey::Func(_) => f.write_str("Func(..)"),
        }
    }
}

impl ShardKey {
    /// The key is integer column `name`.
    pub fn column(name: impl Into<String>) -> Self {
        ShardKey::Column(name.into())
    }

    /// The key is computed by `f` for every row of a block.
    pub fn func(f: impl Fn(&Block) -> Result<Vec<u64>> + Send + Sync + 'static) -> Self {
        ShardKey::Func(Arc::new(f))
    }

    /// The key of every row of `block`.
    pub fn keys(&self, block: &Block) -> Result<Vec<u64>> {
        match self {
            ShardKey::Func(f) => {
                let keys = f(block)?;
                if keys.len() != block.rows() {
                    return Err(Error::invalid_input(format!(
                        "the sharding-key function gave {} keys for a block of {} rows",
                        keys.len(),
                        block.rows()
                    )));
                }
                Ok(keys)
            }
            ShardKey::Column(name) => {
                use chnative_proto::DataType as D;
                let col = block.try_column(name)?;
                let view = col.view();
                let ty = view.data_type().clone();
                let bad = || {
                    Error::invalid_input(format!(
                        "sharding-key column `{name}` is {}, not an integer type (use ShardKey::func)",
                        col.type_name()
                    ))
                };
                Ok(match ty {
                    D::UInt8 => view.values::<u8>()?.iter().map(|&v| u64::from(v)).collect(),
                    D::UInt16 => view.values::<u16>()?.iter().map(|&v| u64::from(v)).collect(),
                    D::UInt32 => view.values::<u32>()?.iter().map(|&v| u64::from(v)).collect(),
                    D::UInt64 => view.values::<u64>()?.to_vec(),
                    D::Int8 => view.values::<i8>()?.iter().map(|&v| u64::from(v as u8)).collect(),
                    D::Int16 => view.values::<i16>()?.iter().map(|&v| u64::from(v as u16)).collect(),
                    D::Int32 => view.values::<i32>()?.iter().map(|&v| u64::from(v as u32)).collect(),
                    D::Int64 => view.values::<i64>()?.iter().map(|&v| v as u64).collect(),
                    _ => return Err(bad()),
                })
            }
        }
    }
}

/// What a routed INSERT stored (see [`ClusterInsert::send`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClusterInsertSummary {
    /// Rows routed to each shard (index as in the topology).
    pub rows_per_shard: Vec<u64>,
    /// The insert's deduplication token; shard `n`'s INSERT used `{token}-s{n}`
    /// (`n` the shard's number from 1). Retry with [`ClusterInsert::deduplication_token`]
    /// set to it after an error, and no shard stores the block twice.
    pub token: String,
}

/// A routed INSERT (see [`Cluster::insert`]).
#[derive(Debug, Clone)]
pub struct ClusterInsert {
    cluster: Cluster,
    table: String,
    key: ShardKey,
    token: Option<String>,
    settings: Vec<(String, String)>,
}

impl ClusterInsert {
    /// The insert's deduplication token (default: a fresh one per `send`). Give
    /// the same token when retrying the same rows: each shard's INSERT carries
    /// `{token}-s{shard number}` as `insert_deduplication_token`, so a shard that
    /// stored its part the first time skips it. The tables must deduplicate:
    /// ReplicatedMergeTree does by default; a plain MergeTree needs
    /// `SETTINGS non_replicated_deduplication_window = N` (N > 0).
    pub fn deduplication_token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// A server setting for every shard's INSERT.
    pub fn setting(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.settings.push((name.into(), value.into()));
        self
    }

    /// Splits `block` by shard and inserts every shard's part, the shards in
    /// parallel. For a shard with `internal_replication` the part goes to one
    /// replica (failing over to the next with the same token); otherwise to
    /// every replica. On error (naming the shard and replica) other shards may
    /// have stored their parts: retry the same block with the same token.
    pub async fn send(self, block: &Block) -> Result<ClusterInsertSummary> {
        let inner = &self.cluster.inner;
        let token = self.token.clone().unwrap_or_else(|| self.cluster.new_token());
        let keys = self.key.keys(block)?;
        let topo = &inner.topology;
        let n = topo.shards.len();
        let mut picks: Vec<Vec<u64>> = vec![Vec::new(); n];
        for (row, &k) in keys.iter().enumerate() {
            let s = topo
                .shard_for(k)
                .ok_or_else(|| Error::config(format!("cluster `{}` has a total weight of 0", topo.name)))?;
            picks[s].push(row as u64);
        }
        let rows_per_shard: Vec<u64> = picks.iter().map(|p| p.len() as u64).collect();
        let mut set = tokio::task::JoinSet::new();
        for (shard, idx) in picks.into_iter().enumerate() {
            if idx.is_empty() {
                continue;
            }
            let part = if idx.len() == block.rows() { block.clone() } else { take_rows(block, &idx)? };
            let (inner, table) = (inner.clone(), self.table.clone());
            let shard_token = format!("{token}-s{}", topo.shards[shard].num);
            let settings = self.settings.clone();
            set.spawn(
                async move { (shard, insert_shard(&inner, shard, &table, &part, &shard_token, &settings).await) },
            );
        }
        let mut failed: Vec<(usize, Error)> = Vec::new();
        while let Some(r) = set.join_next().await {
            match r {
                Ok((_, Ok(()))) => {}
                Ok((shard, Err(e))) => failed.push((shard, e)),
                Err(j) => return Err(Error::internal(format!("a shard's insert task failed: {j}"))),
            }
        }
        if failed.is_empty() {
            return Ok(ClusterInsertSummary { rows_per_shard, token });
        }
        failed.sort_by_key(|(s, _)| *s);
        let count = failed.len();
        let (shard, e) = failed.remove(0);
        let others: Vec<String> = failed.iter().map(|(s, _)| topo.shards[*s].num.to_string()).collect();
        let note = match others.len() {
            0 => String::new(),
            1 => format!(" (shard {} failed too)", others[0]),
            _ => format!(" (shards {} failed too)", others.join(", ")),
        };
        let replica = e.replica().map(str::to_string);
        let shard_idx = e.shard().unwrap_or(shard);
        let place = format!(
            "routed INSERT into `{}` with token `{token}`: {count} of {n} shards failed{note}; retry with the same \
             token to store each block once; {}",
            self.table,
            e.place().unwrap_or_default()
        );
        Err(e.unlocated().located(place, shard_idx, replica))
    }
}

/// Inserts one shard's part: to one replica (failover) or to all replicas.
async fn insert_shard(
    inner: &Arc<Inner>,
    shard: usize,
    table: &str,
    part: &Block,
    token: &str,
    settings: &[(String, String)],
) -> Result<()> {
    let one = inner.topology.shards[shard].internal_replication;
    let order = inner.checked_order(shard)?;
    if one {
        let mut failures = Vec::new();
        for i in order {
            match insert_replica(inner, shard, i, table, part, token, settings).await {
                Ok(()) => return Ok(()),
                Err(e) if replica_fault(&e) => failures.push((i, e)),
                Err(e) => return Err(e),
            }
        }
        return Err(inner.all_failed(shard, failures));
    }
    // Every replica, in the configured order (not the health order: all must take it).
    for i in 0..inner.shards[shard].len() {
        insert_replica(inner, shard, i, table, part, token, settings).await?;
    }
    Ok(())
}

async fn insert_replica(
    inner: &Arc<Inner>,
    shard: usize,
    i: usize,
    table: &str,
    part: &Block,
    token: &str,
    settings: &[(String, String)],
) -> Result<()> {
    let client = inner.client(shard, i).await?;
    let mut ins = client.insert(table).block(part).deduplication_token(token);
    for (k, v) in settings {
        ins = ins.setting(k.clone(), v.clone());
    }
    match ins.send().await {
        Ok(_) => Ok(()),
        Err(e) => {
            if replica_fault(&e) {
                inner.record_error(shard, i);
            }
            Err(inner.locate(e, shard, Some(i)))
        }
    }
}

/// The rows `idx` of `block`, as a new block with the same columns.
fn take_rows(block: &Block, idx: &[u64]) -> Result<Block> {
    let mut pool = chnative_proto::buffer::BufferPool::new();
    let mut cols = Vec::with_capacity(block.columns().len());
    for c in block.columns() {
        let mut d = c.data().empty_like(&mut pool);
        d.take_from(c.data(), idx, &mut pool)?;
        cols.push(chnative_proto::Column::new(c.name(), c.type_name(), d)?);
    }
    Ok(Block::from_columns(cols)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topo(weights: &[u32]) -> Topology {
        weights.iter().enumerate().fold(Topology::new("t"), |t, (i, &w)| {
            t.shard(Shard::new([Replica::new("127.0.0.1", 9000 + i as u16)]).weight(w))
        })
    }

    #[test]
    fn keys_map_to_shards_by_weight_ranges() {
        let t = topo(&[3, 4]);
        let got: Vec<usize> = (0..14).map(|k| t.shard_for(k).unwrap()).collect();
        assert_eq!(got, [0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1]);
        let t = topo(&[1, 0, 2]);
        let got: Vec<usize> = (0..6).map(|k| t.shard_for(k).unwrap()).collect();
        assert_eq!(got, [0, 2, 2, 0, 2, 2]);
        assert_eq!(topo(&[0, 0]).shard_for(5), None);
    }

    #[test]
    fn errors_halve_per_whole_half_life_and_stop_at_the_cap() {
        let t0 = Instant::now();
        let hl = Duration::from_secs(60);
        let mut h = Health::new(t0);
        for _ in 0..8 {
            h.record(t0, hl, 1000);
        }
        assert_eq!(h.errors_at(t0 + Duration::from_secs(59), hl), 8);
        assert_eq!(h.errors_at(t0 + Duration::from_secs(60), hl), 4);
        assert_eq!(h.errors_at(t0 + Duration::from_secs(150), hl), 2);
        assert_eq!(h.errors_at(t0 + Duration::from_secs(180), hl), 1);
        assert_eq!(h.errors_at(t0 + Duration::from_secs(100_000), hl), 0);
        let mut h = Health::new(t0);
        for _ in 0..10 {
            h.record(t0, hl, 3);
        }
        assert_eq!(h.errors_at(t0, hl), 3);
    }

    #[test]
    fn replicas_are_ordered_by_errors_then_policy() {
        let t = Topology::new("t").shard(Shard::new((0..3).map(|i| Replica::new("h", 9000 + i))));
        let c = Cluster::new(Config::new(), t).unwrap();
        assert_eq!(c.inner.order(0, Instant::now()), [0, 1, 2]);
        c.inner.record_error(0, 0);
        c.inner.record_error(0, 0);
        c.inner.record_error(0, 1);
        assert_eq!(c.inner.order(0, Instant::now()), [2, 1, 0]);
        let errs: Vec<(u16, u64)> = c.replica_errors(0).into_iter().map(|(r, e)| (r.port, e)).collect();
        assert_eq!(errs, [(9002, 0), (9001, 1), (9000, 2)]);
        // Two half-lives later: 2 -> 0 and 1 -> 0: back to the configured order.
        let later = Instant::now() + Duration::from_secs(121);
        assert_eq!(c.inner.order(0, later), [0, 1, 2]);
    }

    #[test]
    fn located_errors_keep_their_kind_and_say_where() {
        let e = Error::timeout("reading").located("cluster `c` shard 2 (replica h:1)".into(), 1, Some("h:1".into()));
        assert_eq!(e.kind(), ErrorKind::Timeout);
        assert!(e.is_closed() && replica_fault(&e));
        assert_eq!((e.shard(), e.replica()), (Some(1), Some("h:1")));
        assert_eq!(e.to_string(), "cluster `c` shard 2 (replica h:1): timed out reading");
        assert_eq!(e.unlocated().shard(), None);
        let e = Error::invalid_input("bad").located("x".into(), 0, None);
        assert!(!replica_fault(&e));
    }

    #[test]
    fn bad_topologies_are_refused() {
        assert!(Cluster::new(Config::new(), Topology::new("e")).is_err());
        let t = Topology::new("e").shard(Shard::new([]));
        let e = Cluster::new(Config::new(), t).unwrap_err();
        assert!(e.to_string().contains("shard 1 of cluster `e` has no replicas"), "{e}");
    }
}
