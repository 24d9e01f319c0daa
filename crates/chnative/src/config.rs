//! Connection settings: a builder and a URL-style connection string.

use std::path::PathBuf;
use std::time::Duration;

use chnative_proto::chunked::Mode as ChunkMode;
use chnative_proto::compression::auto::Auto;
use chnative_proto::compression::Method;
use chnative_proto::revision;
use std::sync::atomic::AtomicU32;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::ident::setting_name_problem;
use crate::netopts::{parse_timeout, LoadBalancing, TlsRoots, SECURE_PORT};

/// Block compression on the wire.
///
/// The default is [`Compression::Auto`]: none on a fast link (loopback, 10 Gbit:
/// there no compression is the fastest and cheapest for client and server
/// alike), and on a slower one the codec each statement measured fastest (at
/// 1 Gbit: ZSTD(1) for tables of text, LZ4 for plain integers, measured within
/// 5 % of the best fixed choice on reads and inserts). A fixed codec saves auto's
/// first runs of each statement on a slow link, which explore. The README's
/// "Compression" section has the measurements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Compression {
    /// No compression.
    None,
    /// LZ4: cheaper on CPU than ZSTD, fewer bytes saved.
    Lz4,
    /// ZSTD at the given level: 1..=22, 0 for zstd's default (3), or a negative
    /// fast level down to -131072. Level 1 is the one to use on slow links.
    Zstd(i32),
    /// Chosen per query from what the link did (`compression=auto`, the
    /// default): none on a fast link; on a slower one, each statement tries none, LZ4 and ZSTD(1)
    /// and keeps the fastest. What is learned is shared by the connections made
    /// from one [`Config`] (a [`Client`](crate::Client)'s pool), per server.
    /// [`QueryStream::compression`](crate::QueryStream::compression) and
    /// [`InsertSummary::compression`](crate::InsertSummary::compression) say what a
    /// query used; the policy is `chnative_proto::compression::auto`'s.
    Auto,
}

impl Compression {
    /// The fixed codec (`None` for none, and for `Auto`, which chooses per query).
    pub(crate) fn method(self) -> Option<Method> {
        match self {
            Compression::None | Compression::Auto => None,
            Compression::Lz4 => Some(Method::Lz4),
            Compression::Zstd(level) => Some(Method::Zstd { level }),
        }
    }

    /// The codec as a [`Compression`] (what a query used).
    pub(crate) fn of(method: Method) -> Compression {
        match method {
            Method::Lz4 => Compression::Lz4,
            Method::Zstd { level } => Compression::Zstd(level),
            _ => Compression::None,
        }
    }
}

/// The connection string's spelling: `none`, `lz4`, `zstd:LEVEL`, `auto`.
impl std::fmt::Display for Compression {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Compression::None => f.write_str("none"),
            Compression::Lz4 => f.write_str("lz4"),
            Compression::Zstd(level) => write!(f, "zstd:{level}"),
            Compression::Auto => f.write_str("auto"),
        }
    }
}

/// What `compression=auto` has learned, by server: one table for the whole
/// process, so every client and connection to a server (16 `Client`s inserting
/// at once as much as one pooled client's 16 connections) shares what its link
/// did and counts the transfers to it that run at once. The link is the
/// network's, not a client's: 16 clients that each judged their own INSERT
/// against a busy server saw 16 slow links and explored codecs.
#[derive(Clone)]
pub(crate) struct AutoLinks(std::sync::Arc<std::sync::Mutex<Vec<AutoLink>>>);

impl Default for AutoLinks {
    fn default() -> Self {
        static ALL: std::sync::OnceLock<AutoLinks> = std::sync::OnceLock::new();
        ALL.get_or_init(|| AutoLinks(Arc::default())).clone()
    }
}

/// A server (host, port) with the fast-link threshold it is judged by (a
/// [`Config::auto_fast_link`] of its own gets a table of its own), what
/// `compression=auto` learned of its link, and how many queries to it run
/// under `auto` right now (see `Sample::concurrent`).
type AutoLink = ((String, u16, u64), Auto, Arc<AtomicU32>);

impl AutoLinks {
    /// Runs `f` on what is known of `host:port`, and its count of queries under way.
    pub(crate) fn with<R>(&self, cfg: &Config, f: impl FnOnce(&mut Auto, &Arc<AtomicU32>) -> R) -> R {
        let (host, port, fast) = (cfg.host.as_str(), cfg.effective_port(), cfg.auto_fast_link.to_bits());
        let mut links = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let i = match links.iter().position(|((h, p, f), ..)| h == host && *p == port && *f == fast) {
            Some(i) => i,
            None => {
                let mut auto = Auto::new();
                auto.set_fast_link(cfg.auto_fast_link);
                links.push(((host.to_string(), port, fast), auto, Arc::default()));
                links.len() - 1
            }
        };
        let (_, auto, running) = &mut links[i];
        f(auto, running)
    }
}

impl std::fmt::Debug for AutoLinks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AutoLinks")
    }
}

/// ZSTD levels: ClickHouse 26.9 refuses a `network_zstd_compression_level` above
/// 22 ("ZSTD codec can't have level more than 22", code 433) and takes 0 (zstd's
/// default, 3) and negative levels (zstd's fast modes, which end at -131072).
pub(crate) const ZSTD_LEVELS: std::ops::RangeInclusive<i32> = -131072..=22;

/// A password: `Debug` shows whether one is set, never its text.
#[derive(Clone, Default, PartialEq, Eq)]
pub(crate) struct Password(String);

impl std::ops::Deref for Password {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Password {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_empty() { "\"\"" } else { "<redacted>" })
    }
}

/// How to reach and talk to a server.
///
/// `Debug` prints everything except the password.
#[derive(Debug, Clone)]
pub struct Config {
    pub(crate) host: String,
    pub(crate) port: u16,
    pub(crate) user: String,
    pub(crate) password: Password,
    pub(crate) database: String,
    pub(crate) compression: Compression,
    pub(crate) revision: u64,
    pub(crate) settings: Vec<(String, String)>,
    /// `Duration::MAX` when there is no deadline: `tokio::time::timeout` treats a
    /// deadline past the end of time as none (use [`Config::connect_deadline`] elsewhere).
    pub(crate) connect_timeout: Duration,
    pub(crate) read_timeout: Option<Duration>,
    pub(crate) client_name: String,
    pub(crate) quota_key: String,
    pub(crate) max_block_bytes: usize,
    pub(crate) max_block_rows: u64,
    pub(crate) insert_block_rows: usize,
    pub(crate) insert_block_bytes: usize,
    pub(crate) max_silent_packets: u64,
    pub(crate) cancel_timeout: Duration,
    pub(crate) query_timeout: Option<Duration>,
    pub(crate) chunked_send: ChunkMode,
    pub(crate) chunked_recv: ChunkMode,
    /// Pool, TLS, hosts and keepalive (see netopts.rs).
    pub(crate) net: crate::netopts::NetOptions,
    /// What `compression=auto` learned of each server.
    pub(crate) auto_links: AutoLinks,
    /// From what rate `compression=auto` counts a link as fast.
    pub(crate) auto_fast_link: f64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            host: "127.0.0.1".into(),
            port: 9000,
            user: "default".into(),
            password: Password::default(),
            database: String::new(),
            compression: Compression::Auto,
            revision: revision::DEFAULT,
            settings: Vec::new(),
            connect_timeout: Duration::from_secs(10),
            read_timeout: Some(Duration::from_secs(300)),
            client_name: "chnative".into(),
            quota_key: String::new(),
            // 64 connections each holding a block this size fit in 16 GiB, which a
            // 24 GiB machine survives; larger blocks need an explicit opt-in.
            max_block_bytes: 256 << 20,
            max_block_rows: chnative_proto::BlockLimits::default().max_rows,
            insert_block_rows: 1 << 20,
            // Measured (benches/peers --bin insert_blocks, 100k hits rows): client CPU is
            // the same from 2k- to 1M-row blocks, but each pooled connection keeps buffers
            // the size of its largest block (about 2 × 97 MB for 100k hits rows in one).
            insert_block_bytes: 8 << 20,
            max_silent_packets: chnative_proto::connection::DEFAULT_MAX_SILENT_PACKETS,
            cancel_timeout: Duration::from_secs(30),
            query_timeout: None,
            chunked_send: ChunkMode::default(),
            chunked_recv: ChunkMode::default(),
            net: Default::default(),
            auto_links: AutoLinks::default(),
            auto_fast_link: chnative_proto::compression::auto::FAST_LINK,
        }
    }
}

/// RFC 3986 percent-decoding: `%XX` is the byte XX and every other character is
/// itself (`+` included: it means a space only in HTML forms). The bytes must be
/// UTF-8.
fn percent_decode(what: &str, s: &str) -> Result<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b.get(i + 1..i + 3).filter(|h| h.iter().all(u8::is_ascii_hexdigit));
            let Some(hex) = hex else {
                return Err(Error::config(format!(
                    "{what}: `%` must start an escape of two hex digits (write a literal % as %25)"
                )));
            };
            let digit = |c: u8| (c as char).to_digit(16).unwrap_or(0) as u8;
            out.push(digit(hex[0]) << 4 | digit(hex[1]));
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| Error::config(format!("{what}: not UTF-8 after percent-decoding")))
}

/// Splits `host`, `host:port`, `[v6]` or `[v6]:port`; anything else is an error.
pub(crate) fn parse_host_port(hostport: &str) -> Result<(String, Option<u16>)> {
    let bad = |why: &str| Error::config(format!("host `{hostport}`: {why}"));
    let (host, port) = if let Some(inner) = hostport.strip_prefix('[') {
        let (v6, after) = inner.split_once(']').ok_or_else(|| bad("no closing `]`"))?;
        if v6.parse::<std::net::Ipv6Addr>().is_err() {
            return Err(bad("not an IPv6 address between `[` and `]`"));
        }
        let port = match after {
            "" => None,
            a => Some(a.strip_prefix(':').ok_or_else(|| bad("only `:port` may follow `]`"))?),
        };
        (v6.to_string(), port)
    } else {
        let (host, port) = match hostport.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (hostport, None),
        };
        if port.is_some_and(|p| p.contains(':')) {
            return Err(bad("more than one `:` (write an IPv6 address as [addr]:port)"));
        }
        let host = percent_decode("host", host)?;
        if host.chars().any(|c| c.is_control() || c.is_whitespace() || "[]@/?#:".contains(c)) {
            return Err(bad("not a host name"));
        }
        (host, port)
    };
    let port = match port {
        None => None,
        Some(p) => match p.parse::<u16>() {
            Ok(n) if n > 0 && p.bytes().all(|c| c.is_ascii_digit()) => Some(n),
            _ => return Err(bad("the port must be a number from 1 to 65535")),
        },
    };
    Ok((host, port))
}

/// Reads `compression`: `lz4`, `zstd`, `zstd:LEVEL`, `auto` or `none` (any case).
fn parse_compression(v: &str) -> Result<Compression> {
    let lower = v.to_ascii_lowercase();
    let c = match lower.as_str() {
        "lz4" => Compression::Lz4,
        "auto" => Compression::Auto,
        "none" | "off" | "false" => Compression::None,
        "zstd" => Compression::Zstd(1),
        z => match z.strip_prefix("zstd:") {
            Some(level) if is_integer(level) => Compression::Zstd(level.parse().unwrap_or(i32::MAX)),
            Some(_) => return Err(Error::config(format!("compression `{v}`: the level must be a number"))),
            None => {
                return Err(Error::config(format!("unknown compression `{v}` (lz4, zstd, zstd:LEVEL, auto, none)")))
            }
        },
    };
    check_compression(c)?;
    Ok(c)
}

/// An optional `-` and decimal digits (no `+`, which `str::parse` would allow).
fn is_integer(s: &str) -> bool {
    let digits = s.strip_prefix('-').unwrap_or(s);
    !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit())
}

fn check_compression(c: Compression) -> Result<()> {
    match c {
        Compression::Zstd(level) if !ZSTD_LEVELS.contains(&level) => Err(Error::config(format!(
            "ZSTD level {level} is outside {}..={}, the levels ClickHouse and zstd accept",
            ZSTD_LEVELS.start(),
            ZSTD_LEVELS.end()
        ))),
        _ => Ok(()),
    }
}

impl Config {
    /// Defaults: `default@127.0.0.1:9000`, compression chosen by the link ([`Compression::Auto`]), revision 54492.
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses `clickhouse://user:password@host:port/database?option=value&…`
    /// (`tcp://` works too).
    ///
    /// Every part is percent-decoded as RFC 3986 says: `%XX` is a byte and `+` is
    /// a plus sign. A `@`, `:`, `/`, `?`, `&`, `#` or `%` inside a user, password or
    /// value must be written `%40`, `%3A`, `%2F`, `%3F`, `%26`, `%23`, `%25`.
    /// The host defaults to 127.0.0.1 and the port to 9000; an IPv6 address goes
    /// in brackets (`[::1]:9000`).
    ///
    /// Options (each at most once, each with a non-empty value except `password`):
    /// - `compression`: `auto` (default: chosen per query from the link), `none`, `lz4`,
    ///   `zstd` (level 1), `zstd:LEVEL` (-131072..=22; 0 is zstd's default, negative
    ///   levels are its fast modes); see [`Compression`] for when to use which;
    /// - `connect_timeout`: deadline for TCP connect plus handshake (default 10s);
    /// - `read_timeout`: longest wait for the server's next bytes (default 300s);
    /// - `query_timeout`: a deadline for each query (default none; see
    ///   [`Config::query_timeout`]);
    /// - `revision`: the protocol revision to announce;
    /// - `client_name`, `quota_key`;
    /// - `chunked`: chunked framing of the packets in both directions (protocol
    ///   revision 54470 and later), as in ClickHouse's `proto_caps`:
    ///   `notchunked_optional` (default: not chunked unless the server requires
    ///   it), `chunked_optional` (chunked unless the server refuses it),
    ///   `chunked` or `notchunked` (refuse a server that insists on the other);
    ///   `chunked_send` and `chunked_recv` set one direction (the packets the
    ///   client sends, the packets it receives);
    /// - `user`, `password`, `database`: instead of the user info and the path;
    /// - `set_<setting>=<value>`: a server setting sent with every query.
    ///
    /// Durations are a number with an optional unit: `250ms`, `5s` (the default
    /// unit), `2m`, `1h`. For every timeout `0` means no timeout.
    ///
    /// Anything else is an error: an unknown option, an option without `=value`,
    /// an empty value, a value out of range, a bad percent escape, text after the
    /// host and port, or an option given twice.
    ///
    /// ```
    /// let c = chnative::Config::from_url("clickhouse://app:s%40cret@db:9000/logs?compression=zstd&set_max_threads=4").unwrap();
    /// assert_eq!(c.address(), "db:9000");
    /// assert!(chnative::Config::from_url("clickhouse://db?set_max_threads").is_err());
    /// ```
    pub fn from_url(url: &str) -> Result<Config> {
        let (scheme, rest) =
            url.split_once("://").ok_or_else(|| Error::config("the URL must start with clickhouse://"))?;
        let secure_scheme = scheme.eq_ignore_ascii_case("clickhouses");
        if !secure_scheme && !scheme.eq_ignore_ascii_case("clickhouse") && !scheme.eq_ignore_ascii_case("tcp") {
            return Err(Error::config(format!(
                "scheme `{scheme}`: the URL must start with clickhouse:// (or clickhouses:// for TLS)"
            )));
        }
        if rest.contains('#') {
            return Err(Error::config("a `#` in the URL must be written %23"));
        }
        let (rest, query) = match rest.split_once('?') {
            Some((a, q)) => (a, Some(q)),
            None => (rest, None),
        };
        let (authority, path) = match rest.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (rest, None),
        };
        let mut c = Config::default();
        c.net.tls.enabled = secure_scheme;
        let mut given: Vec<String> = Vec::new();
        let (userinfo, hostport) = match authority.split_once('@') {
            Some((u, hp)) => (Some(u), hp),
            None => (None, authority),
        };
        if hostport.contains('@') {
            return Err(Error::config("an `@` in the user or password must be written %40"));
        }
        if let Some(userinfo) = userinfo {
            let (user, password) = match userinfo.split_once(':') {
                Some((u, p)) => (u, Some(p)),
                None => (userinfo, None),
            };
            c.user = percent_decode("user", user)?;
            if c.user.is_empty() {
                return Err(Error::config("the user name before `@` is empty"));
            }
            given.push("user".into());
            if let Some(p) = password {
                c.password = Password(percent_decode("password", p)?);
                given.push("password".into());
            }
        }
        // Failover hosts: `h1:9000,h2,[::1]:9001`; the first is the primary.
        let (hostport, more_hosts) = match hostport.split_once(',') {
            Some((first, more)) => (first, Some(more)),
            None => (hostport, None),
        };
        for h in more_hosts.into_iter().flat_map(|m| m.split(',')) {
            let (host, port) = parse_host_port(h)?;
            if host.is_empty() {
                return Err(Error::config(format!("host list: an empty host before or after `,` in `{h}`")));
            }
            c.net.more_hosts.push((host, port));
        }
        let (host, port) = parse_host_port(hostport)?;
        c.net.port_given = port.is_some();
        if !host.is_empty() {
            c.host = host;
        }
        if let Some(p) = port {
            c.port = p;
        }
        if let Some(path) = path {
            let db = path.strip_suffix('/').unwrap_or(path);
            if db.contains('/') {
                return Err(Error::config(format!("path `/{path}`: only a database name may follow the host")));
            }
            c.database = percent_decode("database", db)?;
            if !c.database.is_empty() {
                given.push("database".into());
            }
        }
        for pair in query.into_iter().flat_map(|q| q.split('&')).filter(|p| !p.is_empty()) {
            let (k, v) = pair
                .split_once('=')
                .ok_or_else(|| Error::config(format!("option `{pair}` has no value (write `{pair}=value`)")))?;
            let k = percent_decode("option name", k)?;
            let v = percent_decode(&format!("option `{k}`"), v)?;
            if given.contains(&k) {
                return Err(Error::config(format!("`{k}` is given twice")));
            }
            if v.is_empty() && k != "password" {
                return Err(Error::config(format!("option `{k}` has an empty value")));
            }
            match k.as_str() {
                "compression" => c.compression = parse_compression(&v)?,
                "connect_timeout" => c = c.connect_timeout(parse_timeout(&k, &v)?.unwrap_or(Duration::ZERO)),
                "read_timeout" => c.read_timeout = parse_timeout(&k, &v)?,
                "query_timeout" => c.query_timeout = parse_timeout(&k, &v)?,
                "revision" => {
                    let r = v
                        .parse()
                        .ok()
                        .filter(|_| is_integer(&v) && !v.starts_with('-'))
                        .ok_or_else(|| Error::config(format!("revision `{v}` is not a number")))?;
                    c = c.revision(r)?;
                }
                "chunked" | "chunked_send" | "chunked_recv" => {
                    let mode = ChunkMode::parse(&v).ok_or_else(|| {
                        Error::config(format!(
                            "{k} `{v}`: not one of notchunked_optional, chunked_optional, chunked, notchunked"
                        ))
                    })?;
                    if k != "chunked_recv" {
                        c.chunked_send = mode;
                    }
                    if k != "chunked_send" {
                        c.chunked_recv = mode;
                    }
                }
                "client_name" => c.client_name = v,
                "quota_key" => c.quota_key = v,
                "user" => c.user = v,
                "password" => c.password = Password(v),
                "database" => c.database = v,
                _ => match k.strip_prefix("set_") {
                    Some(name) => {
                        if let Some(why) = setting_name_problem(name) {
                            return Err(Error::config(format!("option `{k}`: {why}")));
                        }
                        c.settings.push((name.to_string(), v));
                    }
                    None if c.net.set(&k, &v)? => {}
                    None => {
                        return Err(Error::config(format!("unknown option `{k}` (server settings take a set_ prefix)")))
                    }
                },
            }
            given.push(k);
        }
        c.net.validate()?;
        // No port given: the field holds the one a connection uses, so `Debug` shows it too.
        c.port = c.effective_port();
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
    /// Password (`Debug` does not print it).
    pub fn password(mut self, password: impl Into<String>) -> Self {
        self.password = Password(password.into());
        self
    }
    /// Default database.
    pub fn database(mut self, db: impl Into<String>) -> Self {
        self.database = db.into();
        self
    }
    /// Block compression (default [`Compression::Auto`]). A ZSTD level outside
    /// -131072..=22 is refused when connecting.
    pub fn compression(mut self, c: Compression) -> Self {
        self.compression = c;
        self
    }
    /// Under [`Compression::Auto`], the transfer rate (wire bytes per second of
    /// a query's wall time) from which a link counts as fast and is left
    /// uncompressed; default 400 MB/s (`chnative_proto::compression::auto::FAST_LINK`).
    /// `f64::INFINITY` makes every link slow (each statement then tries none,
    /// LZ4 and ZSTD(1) and keeps the fastest). What auto learns of a server is
    /// shared by every client in the process judged by the same threshold.
    ///
    /// ```
    /// let c = chnative::Config::new().compression(chnative::Compression::Auto).auto_fast_link(1e9);
    /// ```
    pub fn auto_fast_link(mut self, bytes_per_second: f64) -> Self {
        self.auto_fast_link = bytes_per_second;
        self
    }
    /// The protocol revision to announce (54459..=54492). Lower values speak to
    /// older servers; every field is gated on `min(this, server's)`.
    pub fn revision(mut self, revision: u64) -> Result<Self> {
        if !(revision::MIN_SUPPORTED..=revision::DEFAULT).contains(&revision) {
            return Err(Error::config(format!(
                "revision {revision} outside the supported range {}..={}",
                revision::MIN_SUPPORTED,
                revision::DEFAULT
            )));
        }
        self.revision = revision;
        Ok(self)
    }
    /// A server setting sent with every query. A name that is not an identifier
    /// is refused when connecting.
    pub fn setting(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.settings.push((name.into(), value.into()));
        self
    }
    /// Deadline for TCP connect plus handshake (10 s by default);
    /// `Duration::ZERO` means no deadline.
    pub fn connect_timeout(mut self, d: Duration) -> Self {
        self.connect_timeout = if d.is_zero() { Duration::MAX } else { d };
        self
    }
    /// Longest wait for the next bytes from the server (300 s by default), and for
    /// a write to complete; `None` or `Some(Duration::ZERO)` waits forever.
    pub fn read_timeout(mut self, d: Option<Duration>) -> Self {
        self.read_timeout = d.filter(|d| !d.is_zero());
        self
    }
    /// Name shown in `system.processes.client_name`.
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }
    /// Largest block (uncompressed bytes) accepted from the server before
    /// allocating: 256 MiB by default.
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
    /// Rows per Data packet when inserting from slices, at most (1,048,576 by default;
    /// see also [`Config::insert_block_bytes`]).
    pub fn insert_block_rows(mut self, n: usize) -> Self {
        self.insert_block_rows = n.max(1);
        self
    }

    /// About how many bytes one Data packet of an INSERT from slices holds (8 MiB by
    /// default): rows are split into blocks of this size, within `insert_block_rows`.
    /// The server joins small blocks before writing parts, so this bounds the client's
    /// memory (each connection keeps buffers the size of its largest block) without
    /// changing what is stored.
    pub fn insert_block_bytes(mut self, n: usize) -> Self {
        self.insert_block_bytes = n.max(1);
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
    /// the connection is closed instead (30 s by default); `Duration::ZERO`
    /// means no bound.
    pub fn cancel_timeout(mut self, d: Duration) -> Self {
        self.cancel_timeout = if d.is_zero() { Duration::MAX } else { d };
        self
    }
    /// Chunked framing of the packets in both directions (protocol revision
    /// 54470 and later; ClickHouse's `proto_caps`). The default,
    /// [`ChunkMode::NotChunkedOptional`], does without it unless the server
    /// requires it; [`ChunkMode::ChunkedOptional`] uses it unless the server
    /// refuses it; [`ChunkMode::Chunked`] and [`ChunkMode::NotChunked`] refuse
    /// a server that insists on the other (a [`crate::ErrorKind::Config`] error
    /// when connecting).
    pub fn chunked(self, mode: ChunkMode) -> Self {
        self.chunked_send(mode).chunked_recv(mode)
    }

    /// [`Config::chunked`] for the packets the client sends only.
    pub fn chunked_send(mut self, mode: ChunkMode) -> Self {
        self.chunked_send = mode;
        self
    }

    /// [`Config::chunked`] for the packets the client receives only.
    pub fn chunked_recv(mut self, mode: ChunkMode) -> Self {
        self.chunked_recv = mode;
        self
    }

    /// A deadline for each query (off by default; [`crate::Query::timeout`]
    /// overrides it for one query). `None` or `Some(Duration::ZERO)` means no
    /// deadline. URL option `query_timeout` (e.g. `30s`, `1500ms`).
    ///
    /// A SELECT's deadline runs from the call that starts it (waiting for a
    /// connection counts) to the end of its result, the time between
    /// [`crate::QueryStream::next`] calls included. At the deadline the call
    /// fails with an [`ErrorKind::Timeout`](crate::ErrorKind::Timeout) error at once, whatever the server does (a
    /// server still computing, trickling Progress or ignoring Cancel does not
    /// hold it up): Cancel is sent and the rest of the answer is read off the
    /// caller's path, bounded by [`Config::cancel_timeout`]. A pooled
    /// [`crate::Client`] does that in a background task that holds the
    /// connection's pool slot: the connection goes back to the pool only if the
    /// answer ended cleanly within the bound, and is closed otherwise. A
    /// [`crate::Connection`] or [`crate::Session`] keeps its connection: its
    /// next call waits for the cancelled query to end first (that wait counts
    /// against the next call's own deadline), and fails with
    /// an [`ErrorKind::Closed`](crate::ErrorKind::Closed) error if the server did not end it within the bound.
    ///
    /// An INSERT's deadline runs from when it is sent; past it the INSERT fails
    /// with the same error and the connection is closed (its data may or may
    /// not be stored).
    pub fn query_timeout(mut self, d: Option<Duration>) -> Self {
        self.query_timeout = d.filter(|d| !d.is_zero());
        self
    }
}

impl Config {
    /// The connect deadline, `None` for none.
    pub(crate) fn connect_deadline(&self) -> Option<Duration> {
        (self.connect_timeout != Duration::MAX).then_some(self.connect_timeout)
    }

    /// Checks what the builder methods cannot refuse on the spot.
    pub(crate) fn validate(&self) -> Result<()> {
        check_compression(self.compression)?;
        for (name, _) in &self.settings {
            if let Some(why) = setting_name_problem(name) {
                return Err(Error::config(why));
            }
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
mod tests;
