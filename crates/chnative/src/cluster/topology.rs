//! Where a cluster's shards and replicas are: read from `system.clusters` or given.

#[allow(unused_imports)]
use super::*;
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
        let rows = client.fetch_all_values(q).await?;
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

    pub(super) fn check(&self) -> Result<()> {
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
