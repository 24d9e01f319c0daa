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
//! let mut rows = client.fetch_blocks("SELECT number AS id, toString(number) AS name FROM numbers(100000)").await?;
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

mod insert;
mod stream;
#[cfg(test)]
mod tests;
mod topology;

pub use insert::{ClusterInsert, ClusterInsertSummary, KeyFn, ShardKey};
pub use stream::{MergedStream, ShardStream};
pub use topology::{Replica, Shard, Topology};

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
