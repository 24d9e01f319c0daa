//! The connection-management part of [`Config`]: pool sizing, TLS, extra
//! hosts and load balancing, TCP keepalive. Kept apart from the protocol
//! options so that each URL option is parsed in one place ([`NetOptions::set`]).

use std::path::PathBuf;
use std::time::Duration;

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

/// Which root certificates a TLS client trusts, besides [`Config::tls_ca_file`](crate::Config::tls_ca_file)
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
    parse_timeout(key, v)
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
            "host_cooldown" => self.host_cooldown = parse_timeout(key, v)?.unwrap_or(Duration::ZERO),
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

/// Reads a duration: a number with an optional unit (`ms`, `s`, `m`, `h`; seconds
/// without one). Zero means "no timeout", so it comes back as `None`.
pub(crate) fn parse_timeout(key: &str, v: &str) -> Result<Option<Duration>> {
    let bad = || Error::config(format!("{key}: `{v}` is not a duration (e.g. 5s, 250ms, 2m; 0 for none)"));
    let (num, unit) = match v.find(|c: char| !c.is_ascii_digit() && c != '.') {
        Some(i) => (&v[..i], &v[i..]),
        None => (v, "s"),
    };
    if num.is_empty() || !num.starts_with(|c: char| c.is_ascii_digit()) {
        return Err(bad());
    }
    let n: f64 = num.parse().map_err(|_| bad())?;
    let secs = match unit {
        "ms" => n / 1000.0,
        "s" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(bad()),
    };
    let d = Duration::try_from_secs_f64(secs).map_err(|_| bad())?;
    Ok((!d.is_zero()).then_some(d))
}
