//! The serializable description of a scan: what to read, from where, in which pieces.
//!
//! Nothing here holds a connection. A [`ScanConfig`] can be shipped to another process
//! (serde, e.g. JSON or bincode) and executed there; each partition dials its shard when
//! it starts.

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// One shard of a cluster: the `host:port` native endpoints of its replicas, the first
/// preferred (the others are failover hosts of the same connection).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// `host:port` of each replica (`[::1]:9000` for IPv6).
    pub replicas: Vec<String>,
}

impl Shard {
    /// A shard with these replicas.
    pub fn new<S: Into<String>>(replicas: impl IntoIterator<Item = S>) -> Shard {
        Shard { replicas: replicas.into_iter().map(Into::into).collect() }
    }
}

/// How to reach the servers: a `clickhouse://` URL (user, password, database, options;
/// see `chnative::Config::from_url`). When a scan names shards, their endpoints replace
/// the URL's host and port.
///
/// The URL is shipped with the configuration, password included: an engine that sends
/// scans over the network must protect the channel, or give the user in the URL no
/// password and authenticate otherwise.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConnectionSpec {
    /// The `clickhouse://` URL.
    pub url: String,
}

impl std::fmt::Debug for ConnectionSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The URL may hold a password: show the parsed config (which hides it) instead.
        match chnative::Config::from_url(&self.url) {
            Ok(c) => f.debug_struct("ConnectionSpec").field("config", &c).finish(),
            Err(_) => f.debug_struct("ConnectionSpec").field("url", &"<unparsable>").finish(),
        }
    }
}

impl ConnectionSpec {
    /// The client configuration for `shard` (the URL's own host when `None`).
    pub fn config(&self, shard: Option<&Shard>) -> Result<chnative::Config> {
        let mut config = chnative::Config::from_url(&self.url)?;
        if let Some(shard) = shard {
            let mut eps = shard.replicas.iter();
            let first = eps.next().ok_or_else(|| Error::Usage("a shard with no replicas".into()))?;
            let (h, p) = split_endpoint(first)?;
            config = config.host(h).port(p);
            for ep in eps {
                let (h, p) = split_endpoint(ep)?;
                config = config.add_host(h, Some(p));
            }
        }
        Ok(config)
    }
}

/// Splits `host:port` (`[v6]:port`).
fn split_endpoint(ep: &str) -> Result<(String, u16)> {
    let bad = || Error::Usage(format!("endpoint {ep:?}: expected host:port"));
    let (host, port) = ep.rsplit_once(':').ok_or_else(bad)?;
    let port: u16 = port.parse().map_err(|_| bad())?;
    let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    if host.is_empty() {
        return Err(bad());
    }
    Ok((host.to_string(), port))
}

/// A piece of SQL whose values are `{name:Type}` placeholders, with the parameters that
/// fill them (name, text as ClickHouse reads it for the type). The text holds only
/// quoted identifiers, operators and placeholders: no value is ever spliced into it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct SqlFragment {
    /// SQL text.
    pub sql: String,
    /// `(name, value)` for each placeholder.
    pub params: Vec<(String, String)>,
}

/// A column of the scanned table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnSpec {
    /// Name.
    pub name: String,
    /// ClickHouse type.
    pub clickhouse_type: String,
}

/// One partition of a scan: a shard (or the URL's server) and an optional range of the
/// first sorting-key column.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionSpec {
    /// The shard this partition reads; `None`: the connection URL's server.
    pub shard: Option<Shard>,
    /// A condition selecting this partition's rows (a key range), or `None` for all.
    pub range: Option<SqlFragment>,
}

/// Everything needed to run a scan of a ClickHouse table, with no live connection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScanConfig {
    /// How to connect.
    pub connection: ConnectionSpec,
    /// Database of the table (on each shard).
    pub database: String,
    /// The table (on each shard: the local table of a cluster).
    pub table: String,
    /// All columns of the table, in order (the schema is built from them).
    pub columns: Vec<ColumnSpec>,
    /// The server's time zone (for DateTime columns without one).
    pub server_timezone: Option<String>,
    /// Indices into `columns` to read; `None`: all.
    pub projection: Option<Vec<usize>>,
    /// Conditions ANDed into every partition's WHERE.
    pub filters: Vec<SqlFragment>,
    /// At most this many rows per partition (the plan above applies the global limit).
    pub limit: Option<usize>,
    /// The partitions, executed in parallel.
    pub partitions: Vec<PartitionSpec>,
    /// Settings sent with every partition's query.
    #[serde(default)]
    pub settings: Vec<(String, String)>,
    /// An aggregate ClickHouse computes (aggregate pushdown): when set, each partition
    /// selects its outputs, grouped, instead of the table's columns, and `projection`
    /// indexes them.
    #[serde(default)]
    pub aggregate: Option<PushedAggregate>,
    /// `ORDER BY` terms (SQL) each partition applies before `limit` (top-N pushdown).
    #[serde(default)]
    pub order_by: Vec<String>,
}

/// An aggregate pushed down to ClickHouse: the SELECT list and GROUP BY of each partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushedAggregate {
    /// The outputs, in order: grouping keys, then aggregates (or their partial states).
    pub outputs: Vec<OutputColumn>,
    /// `GROUP BY` terms (SQL); empty: one row per partition.
    pub group_by: Vec<String>,
    /// `true` when each partition's rows are final (one shard, or the grouping keys
    /// include the sharding key); `false` when DataFusion merges partial results.
    pub exact_per_partition: bool,
}

/// One output of a [`PushedAggregate`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputColumn {
    /// Its name in the scan's schema.
    pub name: String,
    /// The SQL expression ClickHouse computes.
    pub sql: String,
    /// Its ClickHouse type (the expression is cast to it).
    pub clickhouse_type: String,
}

/// Quotes an identifier for ClickHouse with backquotes.
pub(crate) fn quote_ident(name: &str) -> String {
    let mut s = String::with_capacity(name.len() + 2);
    s.push('`');
    for c in name.chars() {
        match c {
            '`' => s.push_str("\\`"),
            '\\' => s.push_str("\\\\"),
            c => s.push(c),
        }
    }
    s.push('`');
    s
}

impl ScanConfig {
    /// The columns the scan yields before `projection`: the table's, or the pushed
    /// aggregate's outputs.
    pub fn output_columns(&self) -> Vec<ColumnSpec> {
        match &self.aggregate {
            Some(a) => a
                .outputs
                .iter()
                .map(|o| ColumnSpec { name: o.name.clone(), clickhouse_type: o.clickhouse_type.clone() })
                .collect(),
            None => self.columns.clone(),
        }
    }

    /// The SELECT partition `i` sends, and its parameters.
    pub fn partition_query(&self, i: usize) -> Result<SqlFragment> {
        let part = self
            .partitions
            .get(i)
            .ok_or_else(|| Error::Usage(format!("partition {i} of a scan with {}", self.partitions.len())))?;
        // Each selected item: a column, or a pushed output `CAST(expr AS T) AS name`.
        let item = |c: usize| -> Result<String> {
            match &self.aggregate {
                Some(a) => a
                    .outputs
                    .get(c)
                    .map(|o| format!("CAST({} AS {}) AS {}", o.sql, o.clickhouse_type, quote_ident(&o.name))),
                None => self.columns.get(c).map(|c| quote_ident(&c.name)),
            }
            .ok_or_else(|| Error::Usage(format!("projection index {c} out of range")))
        };
        let n = self.aggregate.as_ref().map_or(self.columns.len(), |a| a.outputs.len());
        let cols: Vec<String> = match &self.projection {
            Some(p) => p.iter().map(|&c| item(c)).collect::<Result<_>>()?,
            None => (0..n).map(item).collect::<Result<_>>()?,
        };
        // No column wanted (count(*)): one constant per row.
        let select = if cols.is_empty() { "toUInt8(0) AS `_`".to_string() } else { cols.join(", ") };
        let mut sql = format!("SELECT {select} FROM {}.{}", quote_ident(&self.database), quote_ident(&self.table));
        let mut params = Vec::new();
        let conds: Vec<&SqlFragment> = self.filters.iter().chain(part.range.as_ref()).collect();
        for (k, c) in conds.iter().enumerate() {
            sql.push_str(if k == 0 { " WHERE (" } else { " AND (" });
            sql.push_str(&c.sql);
            sql.push(')');
            params.extend(c.params.iter().cloned());
        }
        if let Some(a) = &self.aggregate {
            if !a.group_by.is_empty() {
                sql.push_str(" GROUP BY ");
                sql.push_str(&a.group_by.join(", "));
            }
        }
        if !self.order_by.is_empty() {
            sql.push_str(" ORDER BY ");
            sql.push_str(&self.order_by.join(", "));
        }
        if let Some(n) = self.limit {
            sql.push_str(" LIMIT {__limit:UInt64}");
            params.push(("__limit".to_string(), n.to_string()));
        }
        Ok(SqlFragment { sql, params })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints() {
        assert_eq!(split_endpoint("h:9000").unwrap(), ("h".into(), 9000));
        assert_eq!(split_endpoint("[::1]:19000").unwrap(), ("::1".into(), 19000));
        assert!(split_endpoint("h").is_err());
        assert!(split_endpoint(":9000").is_err());
        assert!(split_endpoint("h:x").is_err());
    }

    #[test]
    fn identifiers_are_quoted() {
        assert_eq!(quote_ident("a`b\\c"), "`a\\`b\\\\c`");
    }
}
