//! The connection-management part of [`Config`]: pool sizing, TLS, extra
//! hosts and load balancing, TCP keepalive. Kept apart from the protocol
//! options so that each URL option is parsed in one place ([`NetOptions::set`]).

use std::path::PathBuf;
use std::time::Duration;

use crate::config::Config;
use crate::error::{Error, Result};

/// The port of the native protocol over TLS.
pub(crate) const SECURE_PORT: u16 = 9440;

/// How a multi-host client picks the host for a new connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum LoadBalancing {
    /// The first host that is not cooling down after a failure (the default).
    #[default]
    InOrder,
    /// Each new connection starts at the next host.
    RoundRobin,
    /// Each new connection starts at a random host.
    Random,
}

/// Pool sizing and health (see [`crate::Client`]).
#[derive(Debug, Clone)]
pub(crate) struct PoolOptions {
    pub max_size: usize,
    pub min_idle: usize,
    pub acquire_timeout: Option<Duration>,
    pub idle_timeout: Option<Duration>,
    pub max_lifetime: Option<Duration>,
    pub health_check_after: Option<Duration>,
}

impl Default for PoolOptions {
    fn default() -> Self {
        PoolOptions {
            max_size: 20,
            min_idle: 0,
            acquire_timeout: Some(Duration::from_secs(30)),
            idle_timeout: Some(Duration::from_secs(600)),
            max_lifetime: Some(Duration::from_secs(3600)),
            health_check_after: Some(Duration::from_secs(60)),
        }
    }
}

/// Which root certificates a TLS client trusts, besides [`Config::tls_ca_file`]
/// (URL option `tls_roots`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TlsRoots {
    /// The operating system's certificate store (the default; `tls_roots=system`):
    /// the roots an administrator installed are trusted like everywhere else on
    /// the machine.
    #[default]
    System,
    /// Mozilla's roots as bundled by the `webpki-roots` crate (`tls_roots=webpki`),
    /// for containers without a system store. Needs chnative's `webpki-roots`
    /// cargo feature; the list is as new as the build.
    WebPki,
    /// Both (`tls_roots=both`).
    Both,
}

/// TLS settings (see [`Config::secure`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct TlsOptions {
    pub enabled: bool,
    pub roots: TlsRoots,
    pub ca_file: Option<PathBuf>,
    pub cert_file: Option<PathBuf>,
    pub key_file: Option<PathBuf>,
    pub server_name: Option<String>,
    pub danger_no_hostname_check: bool,
}

/// The connection-management options of a [`Config`].
#[derive(Debug, Clone)]
pub(crate) struct NetOptions {
    pub pool: PoolOptions,
    pub tls: TlsOptions,
    /// Hosts after the first (`host`/`port` of the config); `None` port: the default.
    pub more_hosts: Vec<(String, Option<u16>)>,
    /// Whether a port was given for the first host (else the default follows `secure`).
    pub port_given: bool,
    pub load_balancing: LoadBalancing,
    pub host_cooldown: Duration,
    pub keepalive: Option<Duration>,
}

impl Default for NetOptions {
    fn default() -> Self {
        NetOptions {
            pool: PoolOptions::default(),
            tls: TlsOptions::default(),
            more_hosts: Vec::new(),
            port_given: false,
            load_balancing: LoadBalancing::InOrder,
            host_cooldown: Duration::from_secs(30),
            keepalive: Some(Duration::from_secs(60)),
        }
    }
}

fn flag(key: &str, v: &str) -> Result<bool> {
    match v.to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(Error::config(format!("{key}: `{v}` is not a boolean (true or false)"))),
    }
}

fn count(key: &str, v: &str) -> Result<usize> {
    v.parse().map_err(|_| Error::config(format!("{key}: `{v}` is not a count")))
}

fn path(key: &str, v: &str) -> Result<PathBuf> {
    if v.is_empty() {
        return Err(Error::config(format!("{key}: empty path")));
    }
    Ok(PathBuf::from(v))
}

/// `0` turns a duration off, as for `read_timeout`.
fn optional_duration(key: &str, v: &str) -> Result<Option<Duration>> {
    crate::config::parse_timeout(key, v)
}

impl NetOptions {
    /// Applies one URL option if it is one of these; `Ok(false)` if not.
    pub(crate) fn set(&mut self, key: &str, v: &str) -> Result<bool> {
        match key {
            "pool_max_size" => {
                self.pool.max_size = count(key, v)?;
                if self.pool.max_size == 0 {
                    return Err(Error::config("pool_max_size must be at least 1"));
                }
            }
            "pool_min_idle" => self.pool.min_idle = count(key, v)?,
            "pool_acquire_timeout" => self.pool.acquire_timeout = optional_duration(key, v)?,
            "pool_idle_timeout" => self.pool.idle_timeout = optional_duration(key, v)?,
            "pool_max_lifetime" => self.pool.max_lifetime = optional_duration(key, v)?,
            "pool_health_check_after" => self.pool.health_check_after = optional_duration(key, v)?,
            "secure" => self.tls.enabled = flag(key, v)?,
            "tls_ca_file" => self.tls.ca_file = Some(path(key, v)?),
            "tls_roots" => {
                self.tls.roots = match v {
                    "system" => TlsRoots::System,
                    "webpki" => TlsRoots::WebPki,
                    "both" => TlsRoots::Both,
                    _ => return Err(Error::config(format!("tls_roots: `{v}` is not system, webpki or both"))),
                }
            }
            "tls_cert_file" => self.tls.cert_file = Some(path(key, v)?),
            "tls_key_file" => self.tls.key_file = Some(path(key, v)?),
            "tls_server_name" if !v.is_empty() => self.tls.server_name = Some(v.to_string()),
            "danger_disable_hostname_verification" => self.tls.danger_no_hostname_check = flag(key, v)?,
            "load_balancing" => {
                self.load_balancing = match v {
                    "in_order" => LoadBalancing::InOrder,
                    "round_robin" => LoadBalancing::RoundRobin,
                    "random" => LoadBalancing::Random,
                    _ => {
                        return Err(Error::config(format!(
                            "load_balancing: `{v}` is not in_order, round_robin or random"
                        )))
                    }
                }
            }
            "host_cooldown" => self.host_cooldown = crate::config::parse_timeout(key, v)?.unwrap_or(Duration::ZERO),
            "tcp_keepalive" => self.keepalive = optional_duration(key, v)?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Checks combinations that no single option can.
    pub(crate) fn validate(&self) -> Result<()> {
        if self.pool.min_idle > self.pool.max_size {
            return Err(Error::config(format!(
                "pool_min_idle ({}) is larger than pool_max_size ({})",
                self.pool.min_idle, self.pool.max_size
            )));
        }
        if self.tls.cert_file.is_some() != self.tls.key_file.is_some() {
            return Err(Error::config("a client certificate needs both tls_cert_file and tls_key_file"));
        }
        Ok(())
    }
}

/// Connection management: pooling, TLS, hosts, keepalive.
impl Config {
    /// The port used when none is given: 9440 with TLS, 9000 without.
    pub(crate) fn effective_port(&self) -> u16 {
        if !self.net.port_given && self.net.tls.enabled {
            SECURE_PORT
        } else {
            self.port
        }
    }

    /// Every host to try, the configured one first, with ports resolved.
    pub(crate) fn hosts(&self) -> Vec<(String, u16)> {
        let default_port = if self.net.tls.enabled { SECURE_PORT } else { 9000 };
        let mut out = vec![(self.host.clone(), self.effective_port())];
        for (h, p) in &self.net.more_hosts {
            out.push((h.clone(), p.unwrap_or(default_port)));
        }
        out
    }

    /// Most connections the pool keeps open at once (20 by default).
    pub fn pool_max_size(mut self, n: usize) -> Self {
        self.net.pool.max_size = n.max(1);
        self
    }
    /// Idle connections the pool keeps ready (0 by default), opened in the background.
    pub fn pool_min_idle(mut self, n: usize) -> Self {
        self.net.pool.min_idle = n;
        self
    }
    /// Longest wait for a free connection when all are in use (30 s by
    /// default; `None` waits forever). Past it a call fails with an [`ErrorKind::Timeout`](crate::ErrorKind::Timeout) error.
    pub fn pool_acquire_timeout(mut self, d: Option<Duration>) -> Self {
        self.net.pool.acquire_timeout = d;
        self
    }
    /// An idle connection unused this long is closed (10 min by default).
    pub fn pool_idle_timeout(mut self, d: Option<Duration>) -> Self {
        self.net.pool.idle_timeout = d;
        self
    }
    /// A connection older than this is closed when it comes back (1 h by default).
    pub fn pool_max_lifetime(mut self, d: Option<Duration>) -> Self {
        self.net.pool.max_lifetime = d;
        self
    }
    /// A connection idle longer than this is pinged before it is handed out
    /// (60 s by default; `Some(ZERO)` pings on every checkout, `None` never).
    pub fn pool_health_check_after(mut self, d: Option<Duration>) -> Self {
        self.net.pool.health_check_after = d;
        self
    }

    /// TLS on or off. On, the default port is 9440. `clickhouses://` or
    /// `secure=true` in a URL turn it on.
    pub fn secure(mut self, on: bool) -> Self {
        self.net.tls.enabled = on;
        if !self.net.port_given {
            // The default port follows TLS; kept in the field so `Debug` shows it.
            self.port = if on { SECURE_PORT } else { 9000 };
        }
        self
    }
    /// A PEM file of CA certificates trusted in addition to the roots of
    /// [`Config::tls_roots`] (URL option `tls_ca_file`): the way to trust a
    /// server whose certificate is self-signed or from a private CA.
    pub fn tls_ca_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.net.tls.ca_file = Some(path.into());
        self
    }
    /// Which root certificates to trust besides [`Config::tls_ca_file`]: the
    /// system's (the default), the bundled web PKI roots (cargo feature
    /// `webpki-roots`), or both. URL option `tls_roots=system|webpki|both`.
    pub fn tls_roots(mut self, roots: TlsRoots) -> Self {
        self.net.tls.roots = roots;
        self
    }
    /// A client certificate chain and its private key (PEM), for mutual TLS.
    pub fn tls_client_cert(mut self, cert_file: impl Into<PathBuf>, key_file: impl Into<PathBuf>) -> Self {
        self.net.tls.cert_file = Some(cert_file.into());
        self.net.tls.key_file = Some(key_file.into());
        self
    }
    /// The name the server's certificate must carry (and that is sent as SNI);
    /// by default the host connected to.
    pub fn tls_server_name(mut self, name: impl Into<String>) -> Self {
        self.net.tls.server_name = Some(name.into());
        self
    }
    /// **Dangerous:** accepts a server certificate issued for another name.
    /// The chain is still verified against the trusted roots, but anyone with
    /// any certificate from those roots can impersonate the server.
    pub fn danger_disable_hostname_verification(mut self) -> Self {
        self.net.tls.danger_no_hostname_check = true;
        self
    }

    /// Another host to fail over to (`None` port: 9000, or 9440 with TLS).
    pub fn add_host(mut self, host: impl Into<String>, port: Option<u16>) -> Self {
        self.net.more_hosts.push((host.into(), port));
        self
    }
    /// How a host is picked for each new connection when there are several.
    pub fn load_balancing(mut self, policy: LoadBalancing) -> Self {
        self.net.load_balancing = policy;
        self
    }
    /// How long a host that failed to connect is tried last (30 s by default).
    pub fn host_cooldown(mut self, d: Duration) -> Self {
        self.net.host_cooldown = d;
        self
    }
    /// TCP keepalive idle time (60 s by default; `None` turns keepalive off).
    pub fn tcp_keepalive(mut self, d: Option<Duration>) -> Self {
        self.net.keepalive = d;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_and_hosts() {
        let c = Config::from_url(
            "clickhouse://u@h1:9001,h2,[::1]:9003/db?load_balancing=round_robin&pool_max_size=5&pool_min_idle=2&pool_idle_timeout=0&secure=true",
        )
        .unwrap();
        assert_eq!(c.hosts(), vec![("h1".to_string(), 9001), ("h2".to_string(), 9440), ("::1".to_string(), 9003)]);
        assert_eq!(c.net.load_balancing, LoadBalancing::RoundRobin);
        assert_eq!((c.net.pool.max_size, c.net.pool.min_idle, c.net.pool.idle_timeout), (5, 2, None));
        let c = Config::from_url("clickhouses://h/db").unwrap();
        assert!(c.net.tls.enabled);
        assert_eq!(c.address(), "h:9440");
        let c = Config::from_url("clickhouses://h:9000/db").unwrap();
        assert_eq!(c.address(), "h:9000");
        assert_eq!(Config::from_url("clickhouse://h/db").unwrap().address(), "h:9000");
        assert_eq!(c.net.tls.roots, TlsRoots::System);
        for (v, roots) in [("system", TlsRoots::System), ("webpki", TlsRoots::WebPki), ("both", TlsRoots::Both)] {
            let c = Config::from_url(&format!("clickhouses://h?tls_roots={v}")).unwrap();
            assert_eq!(c.net.tls.roots, roots);
        }
        for bad in [
            "clickhouse://h1,/db",
            "clickhouse://h1,h2:x/db",
            "clickhouse://h1,h2:0/db",
            "clickhouse://h?load_balancing=first",
            "clickhouse://h?pool_max_size=0",
            "clickhouse://h?pool_max_size=2&pool_min_idle=3",
            "clickhouse://h?secure=maybe",
            "clickhouse://h?tls_cert_file=/a",
            "clickhouse://h?tls_roots=mozilla",
        ] {
            assert!(Config::from_url(bad).is_err(), "{bad}");
        }
    }

    /// `Debug` shows the port a connection uses: 9440 for TLS when none is given
    /// (it said 9000 for `clickhouses://h`, which connects on 9440).
    #[test]
    fn debug_shows_the_port_in_use() {
        let port = |c: &Config| {
            let d = format!("{c:?}");
            let at = d.find("port: ").expect("a port field");
            d[at + 6..].split(|ch: char| !ch.is_ascii_digit()).next().unwrap().to_string()
        };
        for (c, want) in [
            (Config::from_url("clickhouses://h/db").unwrap(), "9440"),
            (Config::from_url("clickhouse://h/db?secure=true").unwrap(), "9440"),
            (Config::from_url("clickhouses://h:9000/db").unwrap(), "9000"),
            (Config::from_url("clickhouse://h/db").unwrap(), "9000"),
            (Config::new().host("h").secure(true), "9440"),
            (Config::new().host("h").secure(true).secure(false), "9000"),
            (Config::new().port(9000).secure(true), "9000"),
            (Config::new().secure(true).port(9001), "9001"),
        ] {
            assert_eq!(port(&c), want, "{c:?}");
            assert_eq!(c.address(), format!("{}:{want}", c.host));
        }
    }
}
