//! INSERTs routed to shards by a sharding key.

#[allow(unused_imports)]
use super::*;
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
    pub(super) cluster: Cluster,
    pub(super) table: String,
    pub(super) key: ShardKey,
    pub(super) token: Option<String>,
    pub(super) settings: Vec<(String, String)>,
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
