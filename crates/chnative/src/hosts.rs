//! Opening connections: the host list, load balancing and failover with a
//! cool-down (dialing one host is `transport::open`).
//!
//! Only connecting is retried on another host. Once a query's first byte is
//! sent nothing is retried: the server may have run it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use crate::config::Config;
use crate::driver::Driver;
use crate::error::{Error, Repr, Result};
use crate::netopts::LoadBalancing;
use crate::tls::Tls;

/// Opens connections to the configured hosts (one per client, shared by its pool).
pub(crate) struct Connector {
    cfg: Config,
    hosts: Vec<(String, u16)>,
    tls: Option<Tls>,
    /// Per host: until when it is tried last after a failed connect.
    cooling_until: Mutex<Vec<Option<Instant>>>,
    next: AtomicUsize,
}

impl Connector {
    pub(crate) fn new(cfg: Config) -> Result<Connector> {
        cfg.validate()?;
        cfg.net.validate()?;
        let hosts = cfg.hosts();
        let tls = Tls::new(&cfg.net.tls)?;
        Ok(Connector { cooling_until: Mutex::new(vec![None; hosts.len()]), hosts, tls, cfg, next: AtomicUsize::new(0) })
    }

    pub(crate) fn config(&self) -> &Config {
        &self.cfg
    }

    /// The order to try hosts in for one new connection: by policy, then
    /// the hosts cooling down after a failure last (still tried: when every
    /// host failed recently, one may be back).
    fn order(&self) -> Vec<usize> {
        let n = self.hosts.len();
        let start = match self.cfg.net.load_balancing {
            LoadBalancing::InOrder => 0,
            LoadBalancing::RoundRobin => self.next.fetch_add(1, Ordering::Relaxed) % n,
            LoadBalancing::Random => random() as usize % n,
        };
        let now = Instant::now();
        let cooling = self.cooling_until.lock().unwrap_or_else(|p| p.into_inner());
        let rotated = (0..n).map(|i| (start + i) % n);
        let (mut ready, late): (Vec<usize>, Vec<usize>) = rotated.partition(|&i| cooling[i].is_none_or(|t| t <= now));
        ready.extend(late);
        ready
    }

    fn mark(&self, i: usize, failed: bool) {
        let mut cooling = self.cooling_until.lock().unwrap_or_else(|p| p.into_inner());
        cooling[i] = failed.then(|| Instant::now() + self.cfg.net.host_cooldown);
    }

    /// Connects (TCP, TLS, handshake) to the first host that answers.
    ///
    /// A socket error or a connect deadline is a connect error ([`Error::is_connect`]; a deadline
    /// with an I/O error of kind `TimedOut`, whose [`Error::kind`] is
    /// `Timeout`), naming the host and port: no query was sent, so it is
    /// retryable.
    pub(crate) async fn connect(&self) -> Result<Driver> {
        self.connect_any().await.map_err(|e| match e.into_repr() {
            Repr::Io(e) => Error::connect(e),
            r => r.into(),
        })
    }

    /// [`Connector::connect`] before its errors are classified.
    async fn connect_any(&self) -> Result<Driver> {
        let mut last = None;
        let mut failures: Vec<String> = Vec::new();
        for i in self.order() {
            let (host, port) = &self.hosts[i];
            let span = tracing::debug_span!("chnative.connect", host = %host, port = *port, tls = self.tls.is_some());
            let mut cfg = self.cfg.clone();
            cfg.host = host.clone();
            cfg.port = *port;
            cfg.net.port_given = true;
            cfg.net.more_hosts.clear();
            let started = Instant::now();
            let res = tracing::Instrument::instrument(Driver::connect(cfg, self.tls.as_ref()), span.clone()).await;
            let e = match res {
                Ok(c) => {
                    self.mark(i, false);
                    tracing::debug!(parent: &span, elapsed_us = started.elapsed().as_micros() as u64, "connected");
                    return Ok(c);
                }
                Err(e) => at_host(self.explain(e), host, *port),
            };
            if !fails_over(&e) {
                return Err(e);
            }
            tracing::warn!(parent: &span, error = %e, "connect failed");
            self.mark(i, true);
            failures.push(match e.repr() {
                Repr::Io(io) => io.to_string(),
                _ => format!("connecting to {} failed: {e}", address(host, *port)),
            });
            last = Some(e);
        }
        match last {
            // Several hosts: say what happened at each, keeping the last error's kind.
            Some(e) if failures.len() > 1 && matches!(e.repr(), Repr::Io(_)) => {
                let kind = e.as_io().map_or(std::io::ErrorKind::Other, std::io::Error::kind);
                Err(Error::from(std::io::Error::new(kind, format!("no host answered: {}", failures.join("; ")))))
            }
            Some(e) => Err(e),
            None => Err(Error::config("no host to connect to")),
        }
    }

    /// A plaintext client talking to a TLS port sees the server hang up.
    fn explain(&self, e: Error) -> Error {
        match e.repr() {
            Repr::Io(io)
                if self.tls.is_none()
                    && matches!(io.kind(), std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::ConnectionReset) =>
            {
                Error::from(std::io::Error::new(
                    io.kind(),
                    format!("{io} during the handshake (if this port expects TLS, set secure=true)"),
                ))
            }
            _ => e,
        }
    }
}

/// `host:port`, with an IPv6 address in brackets.
fn address(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// A socket error while connecting to one host, naming the host as configured
/// and the port (the error it wraps is its `source`).
#[derive(Debug)]
struct ConnectFailed {
    address: String,
    source: std::io::Error,
}

impl std::fmt::Display for ConnectFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "connecting to {} failed: {}", self.address, self.source)
    }
}

impl std::error::Error for ConnectFailed {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// Names the host in a connect error whose text would not: a socket error
/// (keeping its kind), or a server this client cannot talk to (a wrong port).
fn at_host(e: Error, host: &str, port: u16) -> Error {
    match e.into_repr() {
        Repr::Io(source) => {
            Error::from(std::io::Error::new(source.kind(), ConnectFailed { address: address(host, port), source }))
        }
        Repr::Config(why) => Error::config(format!("connecting to {} failed: {why}", address(host, port))),
        r => r.into(),
    }
}

/// Connect errors worth trying the next host for (not bad credentials,
/// an unknown database or a bad config: those are the same everywhere).
fn fails_over(e: &Error) -> bool {
    matches!(e.repr(), Repr::Io(_) | Repr::Timeout(_) | Repr::Closed(_) | Repr::Protocol(_))
}

fn random() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(Instant::now().elapsed().as_nanos());
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_named_with_their_port() {
        let refused = || std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        let e = at_host(Error::from(refused()), "db1", 9000);
        assert!(e.to_string().ends_with("connecting to db1:9000 failed: connection refused"), "{e}");
        let e = at_host(Error::from(refused()), "::1", 9440);
        assert!(e.to_string().contains("connecting to [::1]:9440 failed"), "{e}");
        let e = at_host(Error::config("wrong port"), "h", 8123);
        assert_eq!(e.to_string(), "configuration: connecting to h:8123 failed: wrong port");
    }
}
