//! Opening connections: the host list, load balancing, failover with a
//! cool-down, TCP options and TLS.
//!
//! Only connecting is retried on another host. Once a query's first byte is
//! sent nothing is retried: the server may have run it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use tokio::net::TcpStream;

use crate::config::Config;
use crate::conn::{Conn, Transport};
use crate::error::{Error, Result};
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
    /// A socket error is [`Error::Connect`] and a deadline `Timeout("connecting")`:
    /// no query was sent, so both are retryable.
    pub(crate) async fn connect(&self) -> Result<Conn> {
        self.connect_any().await.map_err(|e| match e {
            Error::Io(e) => Error::Connect(e),
            Error::Timeout(_) => Error::Timeout(crate::error::TIMEOUT_CONNECTING),
            e => e,
        })
    }

    /// [`Connector::connect`] before its errors are classified.
    async fn connect_any(&self) -> Result<Conn> {
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
            let res = tracing::Instrument::instrument(Conn::connect(cfg, self.tls.as_ref()), span.clone()).await;
            match res {
                Ok(c) => {
                    self.mark(i, false);
                    tracing::debug!(parent: &span, elapsed_us = started.elapsed().as_micros() as u64, "connected");
                    return Ok(c);
                }
                Err(e) if fails_over(&e) => {
                    let e = self.explain(e);
                    tracing::warn!(parent: &span, error = %e, "connect failed");
                    self.mark(i, true);
                    failures.push(format!("{host}:{port}: {e}"));
                    last = Some(e);
                }
                Err(e) => return Err(e),
            }
        }
        match last {
            // Several hosts: say what happened at each, keeping the last error's kind.
            Some(Error::Io(io)) if failures.len() > 1 => {
                Err(Error::Io(std::io::Error::new(io.kind(), format!("no host answered ({})", failures.join("; ")))))
            }
            Some(e) => Err(e),
            None => Err(Error::Config("no host to connect to".into())),
        }
    }

    /// A plaintext client talking to a TLS port sees the server hang up.
    fn explain(&self, e: Error) -> Error {
        match e {
            Error::Io(io)
                if self.tls.is_none()
                    && matches!(io.kind(), std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::ConnectionReset) =>
            {
                Error::Io(std::io::Error::new(
                    io.kind(),
                    format!("{io} during the handshake (if this port expects TLS, set secure=true)"),
                ))
            }
            e => e,
        }
    }
}

/// Connect errors worth trying the next host for (not bad credentials,
/// an unknown database or a bad config: those are the same everywhere).
fn fails_over(e: &Error) -> bool {
    matches!(e, Error::Io(_) | Error::Timeout(_) | Error::Closed(_) | Error::Protocol(_))
}

/// A TCP connection with the options set, wrapped in TLS when configured.
pub(crate) async fn open(cfg: &Config, tls: Option<&Tls>) -> Result<Box<dyn Transport>> {
    let tcp = TcpStream::connect((cfg.host.as_str(), cfg.effective_port())).await?;
    tcp.set_nodelay(true)?;
    if let Some(idle) = cfg.net.keepalive {
        let ka = socket2::TcpKeepalive::new().with_time(idle).with_interval(idle);
        socket2::SockRef::from(&tcp).set_tcp_keepalive(&ka)?;
    }
    match tls {
        Some(tls) => tls.connect(&cfg.host, tcp).await,
        None => Ok(Box::new(tcp)),
    }
}

fn random() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(Instant::now().elapsed().as_nanos());
    h.finish()
}
