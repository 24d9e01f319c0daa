//! Connection settings: a builder and a URL-style connection string.

use std::time::Duration;

use chnative_proto::compression::Method;
use chnative_proto::revision;

use crate::error::{Error, Result};

/// Block compression on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// No compression.
    None,
    /// LZ4 (the default: cheapest on CPU).
    Lz4,
    /// ZSTD at the given level.
    Zstd(i32),
}

impl Compression {
    pub(crate) fn method(self) -> Option<Method> {
        match self {
            Compression::None => None,
            Compression::Lz4 => Some(Method::Lz4),
            Compression::Zstd(level) => Some(Method::Zstd { level }),
        }
    }
}

/// How to reach and talk to a server.
#[derive(Debug, Clone)]
pub struct Config {
    pub(crate) host: String,
    pub(crate) port: u16,
    pub(crate) user: String,
    pub(crate) password: String,
    pub(crate) database: String,
    pub(crate) compression: Compression,
    pub(crate) revision: u64,
    pub(crate) settings: Vec<(String, String)>,
    pub(crate) connect_timeout: Duration,
    pub(crate) read_timeout: Option<Duration>,
    pub(crate) client_name: String,
    pub(crate) quota_key: String,
    pub(crate) max_block_bytes: usize,
    pub(crate) max_block_rows: u64,
    pub(crate) insert_block_rows: usize,
    pub(crate) max_silent_packets: u64,
    pub(crate) cancel_timeout: Duration,
    pub(crate) query_timeout: Option<Duration>,
    /// Pool, TLS, hosts and keepalive (see netopts.rs).
    pub(crate) net: crate::netopts::NetOptions,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            host: "127.0.0.1".into(),
            port: 9000,
            user: "default".into(),
            password: String::new(),
            database: String::new(),
            compression: Compression::Lz4,
            revision: revision::DEFAULT,
            settings: Vec::new(),
            connect_timeout: Duration::from_secs(10),
            read_timeout: Some(Duration::from_secs(300)),
            client_name: "chnative".into(),
            quota_key: String::new(),
            max_block_bytes: 2 << 30,
            max_block_rows: chnative_proto::BlockLimits::default().max_rows,
            insert_block_rows: 1 << 20,
            max_silent_packets: chnative_proto::connection::DEFAULT_MAX_SILENT_PACKETS,
            cancel_timeout: Duration::from_secs(30),
            query_timeout: None,
            net: Default::default(),
        }
    }
}

pub(crate) fn parse_duration(key: &str, v: &str) -> Result<Duration> {
    let bad = || Error::Config(format!("{key}: `{v}` is not a duration (e.g. 5s, 250ms, 2m)"));
    let (num, unit) = match v.find(|c: char| !c.is_ascii_digit() && c != '.') {
        Some(i) => (&v[..i], &v[i..]),
        None => (v, "s"),
    };
    let n: f64 = num.parse().map_err(|_| bad())?;
    let secs = match unit {
        "ms" => n / 1000.0,
        "s" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(bad()),
    };
    Duration::try_from_secs_f64(secs).map_err(|_| bad())
}

fn percent_decode(s: &str) -> Result<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                let h = s.get(i + 1..i + 3).ok_or_else(|| Error::Config(format!("bad percent escape in `{s}`")))?;
                out.push(u8::from_str_radix(h, 16).map_err(|_| Error::Config(format!("bad percent escape in `{s}`")))?);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8(out).map_err(|_| Error::Config(format!("`{s}` is not UTF-8 after decoding")))
}

impl Config {
    /// Defaults: `default@127.0.0.1:9000`, LZ4, revision 54492.
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses `clickhouse://user:password@host:port/database?option=value&…`.
    ///
    /// Options: `compression` (`lz4`, `zstd`, `zstd:LEVEL`, `none`), `connect_timeout`,
    /// `read_timeout` (idle time between reads; `0` disables), `revision`,
    /// `client_name`, `quota_key`, and `set_<setting>=<value>` for server settings.
    ///
    /// ```
    /// let c = chnative::Config::from_url("clickhouse://app:s%40cret@db:9000/logs?compression=zstd&set_max_threads=4").unwrap();
    /// assert_eq!(c.address(), "db:9000");
    /// ```
    pub fn from_url(url: &str) -> Result<Config> {
        let secure_scheme = url.starts_with("clickhouses://");
        let rest = url
            .strip_prefix("clickhouse://")
            .or_else(|| url.strip_prefix("clickhouses://"))
            .or_else(|| url.strip_prefix("tcp://"))
            .ok_or_else(|| Error::Config(format!("`{url}` must start with clickhouse://")))?;
        let (rest, query) = match rest.split_once('?') {
            Some((a, q)) => (a, Some(q)),
            None => (rest, None),
        };
        let (authority, path) = match rest.split_once('/') {
            Some((a, p)) => (a, p),
            None => (rest, ""),
        };
        let mut c = Config::default();
        c.net.tls.enabled = secure_scheme;
        let hostport = match authority.rsplit_once('@') {
            Some((userinfo, hp)) => {
                match userinfo.split_once(':') {
                    Some((u, p)) => {
                        c.user = percent_decode(u)?;
                        c.password = percent_decode(p)?;
                    }
                    None => c.user = percent_decode(userinfo)?,
                }
                hp
            }
            None => authority,
        };
        // Failover hosts: `h1:9000,h2,[::1]:9001`; the first is parsed below.
        let hostport = match hostport.split_once(',') {
            Some((first, more)) => {
                for h in more.split(',') {
                    c.net.more_hosts.push(crate::netopts::parse_host(h)?);
                }
                first
            }
            None => hostport,
        };
        let (host, port) = if let Some(h) = hostport.strip_prefix('[') {
            let (h, rest) = h.split_once(']').ok_or_else(|| Error::Config(format!("bad IPv6 host in `{url}`")))?;
            (h, rest.strip_prefix(':'))
        } else {
            match hostport.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (hostport, None),
            }
        };
        if !host.is_empty() {
            c.host = host.to_string();
        }
        if let Some(p) = port {
            c.port = p.parse().map_err(|_| Error::Config(format!("bad port `{p}`")))?;
        }
        c.net.port_given = port.is_some();
        c.database = percent_decode(path.trim_end_matches('/'))?;
        for pair in query.into_iter().flat_map(|q| q.split('&')).filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let v = percent_decode(v)?;
            match k {
                "compression" => {
                    c.compression = match v.to_ascii_lowercase().as_str() {
                        "lz4" => Compression::Lz4,
                        "none" | "off" | "false" => Compression::None,
                        "zstd" => Compression::Zstd(1),
                        z if z.starts_with("zstd:") => Compression::Zstd(
                            z[5..].parse().map_err(|_| Error::Config(format!("bad zstd level in `{v}`")))?,
                        ),
                        _ => return Err(Error::Config(format!("unknown compression `{v}`"))),
                    }
                }
                "connect_timeout" => c.connect_timeout = parse_duration(k, &v)?,
                "read_timeout" => {
                    let d = parse_duration(k, &v)?;
                    c.read_timeout = (!d.is_zero()).then_some(d);
                }
                "revision" => {
                    c = c.revision(v.parse().map_err(|_| Error::Config(format!("bad revision `{v}`")))?)?;
                }
                "client_name" => c.client_name = v,
                "quota_key" => c.quota_key = v,
                "user" => c.user = v,
                "password" => c.password = v,
                "database" => c.database = v,
                k if k.starts_with("set_") => c.settings.push((k[4..].to_string(), v)),
                k if c.net.set(k, &v)? => {}
                _ => return Err(Error::Config(format!("unknown option `{k}` (server settings take a set_ prefix)"))),
            }
        }
        c.net.validate()?;
        Ok(c)
    }

    /// `host:port` of the first host.
    pub fn address(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.effective_port())
        } else {
            format!("{}:{}", self.host, self.effective_port())
        }
    }

    /// Server host name or address.
    pub fn host(mut self, host: impl Into<String>) -> Self {
        self.host = host.into();
        self
    }
    /// Native protocol port (9000 by default).
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self.net.port_given = true;
        self
    }
    /// User name.
    pub fn user(mut self, user: impl Into<String>) -> Self {
        self.user = user.into();
        self
    }
    /// Password.
    pub fn password(mut self, password: impl Into<String>) -> Self {
        self.password = password.into();
        self
    }
    /// Default database.
    pub fn database(mut self, db: impl Into<String>) -> Self {
        self.database = db.into();
        self
    }
    /// Block compression.
    pub fn compression(mut self, c: Compression) -> Self {
        self.compression = c;
        self
    }
    /// The protocol revision to announce (54459..=54492). Lower values speak to
    /// older servers; every field is gated on `min(this, server's)`.
    pub fn revision(mut self, revision: u64) -> Result<Self> {
        if !(revision::MIN_SUPPORTED..=revision::DEFAULT).contains(&revision) {
            return Err(Error::Config(format!(
                "revision {revision} outside the supported range {}..={}",
                revision::MIN_SUPPORTED,
                revision::DEFAULT
            )));
        }
        self.revision = revision;
        Ok(self)
    }
    /// A server setting sent with every query.
    pub fn setting(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.settings.push((name.into(), value.into()));
        self
    }
    /// Deadline for TCP connect plus handshake.
    pub fn connect_timeout(mut self, d: Duration) -> Self {
        self.connect_timeout = d;
        self
    }
    /// Longest wait for the next bytes from the server; `None` waits forever.
    pub fn read_timeout(mut self, d: Option<Duration>) -> Self {
        self.read_timeout = d;
        self
    }
    /// Name shown in `system.processes.client_name`.
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }
    /// Largest block (uncompressed bytes) accepted from the server before allocating.
    pub fn max_block_bytes(mut self, n: usize) -> Self {
        self.max_block_bytes = n;
        self
    }
    /// Largest row count accepted in one block from the server (64M by default).
    /// Sparse columns expand on read, so this bounds a block's memory too.
    pub fn max_block_rows(mut self, n: u64) -> Self {
        self.max_block_rows = n;
        self
    }
    /// Rows per Data packet when inserting from slices.
    pub fn insert_block_rows(mut self, n: usize) -> Self {
        self.insert_block_rows = n.max(1);
        self
    }

    /// How many packets without rows (Progress, Log, ProfileEvents, empty
    /// blocks…) may follow each other before the server is taken to be stuck
    /// and the connection is closed (10 million by default).
    pub fn max_silent_packets(mut self, n: u64) -> Self {
        self.max_silent_packets = n.max(1);
        self
    }
    /// How long a cancelled query may take to end after Cancel was sent before
    /// the connection is closed instead (30 s by default).
    pub fn cancel_timeout(mut self, d: Duration) -> Self {
        self.cancel_timeout = d;
        self
    }
    /// A deadline for each query, from the moment it is sent (off by default).
    /// A SELECT past it is cancelled and fails with [`Error::Timeout`]; an
    /// INSERT past it fails with the same error and closes the connection.
    pub fn query_timeout(mut self, d: Option<Duration>) -> Self {
        self.query_timeout = d;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_parsing() {
        let c = Config::from_url(
            "clickhouse://u%3Ax:p%40ss@example.org:9440/db1?compression=zstd:3&read_timeout=250ms&set_max_threads=2&revision=54465",
        )
        .unwrap();
        assert_eq!((c.user.as_str(), c.password.as_str()), ("u:x", "p@ss"));
        assert_eq!(c.address(), "example.org:9440");
        assert_eq!(c.database, "db1");
        assert_eq!(c.compression, Compression::Zstd(3));
        assert_eq!(c.read_timeout, Some(Duration::from_millis(250)));
        assert_eq!(c.settings, vec![("max_threads".to_string(), "2".to_string())]);
        assert_eq!(c.revision, 54465);
        let c = Config::from_url("clickhouse://[::1]:9000").unwrap();
        assert_eq!(c.address(), "[::1]:9000");
        assert!(Config::from_url("http://x").is_err());
        assert!(Config::from_url("clickhouse://x?bogus=1").is_err());
        assert!(Config::from_url("clickhouse://x?revision=1").is_err());
    }
}
