//! The real ClickHouse server of the test suites, and its HTTP interface as the reference.
//!
//! The first test to need it runs `scripts/server.sh start`, which installs the server's wheel
//! into a cached venv if needed and starts the server, or reuses one already answering on the
//! port. `CHNATIVE_TCP_PORT` and `CHNATIVE_HTTP_PORT` choose the ports (19000 and 18123 by
//! default); `CHNATIVE_SERVER_VERSION` the release (26.9 by default, also 26.7, 25.8, 24.8 and
//! 24.5) and `CHNATIVE_SERVER_DIR` its run directory; all four pass through to the script.
//!
//! Tests that need a newer server than the one running skip with a printed reason: see
//! [`requires`].

use std::io::{Read, Write};
use std::process::Command;
use std::sync::OnceLock;

/// Where the test server listens.
#[derive(Debug)]
pub struct Server {
    /// Its address (loopback).
    pub host: String,
    /// The native protocol's port.
    pub tcp_port: u16,
    /// The HTTP interface's port.
    pub http_port: u16,
}

fn port(var: &str, default: u16) -> u16 {
    std::env::var(var).ok().and_then(|p| p.parse().ok()).unwrap_or(default)
}

static SERVER: OnceLock<Server> = OnceLock::new();

/// The test server, started on first use.
pub fn server() -> &'static Server {
    SERVER.get_or_init(|| {
        let (tcp_port, http_port) = (port("CHNATIVE_TCP_PORT", 19000), port("CHNATIVE_HTTP_PORT", 18123));
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/server.sh");
        let out = Command::new("bash")
            .arg(script)
            .arg("start")
            .env("CHNATIVE_TCP_PORT", tcp_port.to_string())
            .env("CHNATIVE_HTTP_PORT", http_port.to_string())
            // CHNATIVE_SERVER_VERSION and CHNATIVE_SERVER_DIR reach the script as inherited:
            // it starts the version the suite was asked for, in its run dir, and refuses to
            // reuse a server of another version on these ports.
            .output()
            .expect("run scripts/server.sh");
        assert!(
            out.status.success(),
            "scripts/server.sh start failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        Server { host: "127.0.0.1".into(), tcp_port, http_port }
    })
}

/// The test server's version: `major.minor.patch` from `SELECT version()` over HTTP, asked once.
pub fn version() -> (u64, u64, u64) {
    static VERSION: OnceLock<(u64, u64, u64)> = OnceLock::new();
    *VERSION.get_or_init(|| {
        let v = q("SELECT version()");
        let mut parts = v.split('.').map(|p| p.parse::<u64>().unwrap_or(0));
        let mut next = || parts.next().unwrap_or(0);
        (next(), next(), next())
    })
}

/// Whether the test server is at least `major.minor`, which `what` needs. When it is not, prints
/// `skipped <test>: <what>: needs ClickHouse >= <major>.<minor> (server is <version>)` and returns false:
/// the test returns at once.
///
/// ```no_run
/// if !chnative_testkit::server::requires(25, 1, "BFloat16") {
///     return;
/// }
/// ```
pub fn requires(major: u64, minor: u64, what: &str) -> bool {
    let (a, b, c) = version();
    if (a, b) >= (major, minor) {
        return true;
    }
    skip(&format!("{what}: needs ClickHouse >= {major}.{minor} (server is {a}.{b}.{c})"));
    false
}

/// Whether the server's protocol revision (`ServerInfo::revision` of a client) reaches
/// `needed`, which `what` needs; when not, prints why the test is skipped and returns false.
pub fn requires_revision(server_revision: u64, needed: u64, what: &str) -> bool {
    if server_revision >= needed {
        return true;
    }
    let (a, b, c) = version();
    skip(&format!("{what}: needs protocol revision {needed} (server is {a}.{b}.{c}, revision {server_revision})"));
    false
}

/// Prints `skipped <test>: <reason>` past the test harness's output capture (straight to
/// stderr), so that every run shows what it did not test; the caller then returns.
pub fn skip(reason: &str) {
    let test = std::thread::current().name().map(|t| format!(" {t}")).unwrap_or_default();
    let _ = writeln!(std::io::stderr(), "skipped{test}: {reason}");
}

/// Whether the test server is the embedded 26.x engine (chdb-core: no Keeper, no query_log, no
/// CREATE ROLE) rather than a full `clickhouse server` (scripts/server.sh's full route).
pub fn is_embedded() -> bool {
    matches!(std::env::var("CHNATIVE_SERVER_VERSION").as_deref(), Err(_) | Ok("26.9" | "26.7" | ""))
}

/// A connection string to the test server, with extra `?` options (may be empty).
pub fn url(options: &str) -> String {
    let s = server();
    if options.is_empty() {
        format!("clickhouse://default@{}:{}/default", s.host, s.tcp_port)
    } else {
        format!("clickhouse://default@{}:{}/default?{options}", s.host, s.tcp_port)
    }
}

/// The whole HTTP response to a POST of `sql` at `path` (e.g. `/` or `/?setting=1`), or `None`
/// when the server cannot be reached; no status check (for cleanup in `Drop`).
///
/// A query without a `FORMAT` clause is answered in CSV on every server (`default_format=CSV`
/// is added to `path`): the embedded 26.x answers CSV by default, real servers TSV.
pub fn http_raw(path: &str, sql: &str) -> Option<Vec<u8>> {
    let s = server();
    post(&s.host, s.http_port, &with_csv_default(path), sql)
}

/// `path` with `default_format=CSV` added, unless it names a default format already.
fn with_csv_default(path: &str) -> String {
    if path.contains("default_format=") {
        path.to_string()
    } else if path.contains('?') {
        format!("{path}&default_format=CSV")
    } else {
        format!("{path}?default_format=CSV")
    }
}

/// The whole HTTP response to a POST of `sql` at `path` of `host:port`, or `None` when it
/// cannot be reached.
fn post(host: &str, port: u16, path: &str, sql: &str) -> Option<Vec<u8>> {
    let mut sock = std::net::TcpStream::connect((host, port)).ok()?;
    let req = format!("POST {path} HTTP/1.0\r\nHost: {host}\r\nContent-Length: {}\r\n\r\n{sql}", sql.len());
    sock.write_all(req.as_bytes()).ok()?;
    let mut resp = Vec::new();
    sock.read_to_end(&mut resp).ok()?;
    Some(resp)
}

/// The body of the response to `sql` from another server's HTTP interface on loopback (a
/// test's own server, a cluster node), CSV unless `sql` names a format; panics naming the port and the query on an HTTP error.
pub fn http_at_port(port: u16, sql: &str) -> String {
    let resp = post("127.0.0.1", port, "/?default_format=CSV", sql)
        .unwrap_or_else(|| panic!("HTTP connect to 127.0.0.1:{port}"));
    let resp = String::from_utf8_lossy(&resp).into_owned();
    let (head, body) = resp.split_once("\r\n\r\n").unwrap_or((&resp, ""));
    assert!(head.contains(" 200 "), "HTTP query to 127.0.0.1:{port} failed: {sql}\n{resp}");
    body.to_string()
}

/// The whole HTTP response to `sql` as text, or `None`; no status check.
pub fn http_try(sql: &str) -> Option<String> {
    // Never starts the server: `http_try` runs in destructors (a test's table dropped), and a
    // start that failed once and panicked again there, while the test unwound, aborted the
    // whole test binary (seen when `scripts/server.sh start` failed on a fresh machine).
    let s = SERVER.get()?;
    post(&s.host, s.http_port, &with_csv_default("/"), sql).map(|r| String::from_utf8_lossy(&r).into_owned())
}

/// The body of the response to a POST of `sql` at `path`; panics on an HTTP error.
pub fn http_bytes_at(path: &str, sql: &str) -> Vec<u8> {
    let resp = http_raw(path, sql).expect("HTTP query to the test server");
    let split = resp.windows(4).position(|w| w == b"\r\n\r\n").map_or(resp.len(), |p| p + 4);
    let head = String::from_utf8_lossy(&resp[..split]);
    assert!(
        head.starts_with("HTTP/1.0 200") || head.starts_with("HTTP/1.1 200"),
        "HTTP query failed: {sql}\n{}",
        String::from_utf8_lossy(&resp)
    );
    resp[split..].to_vec()
}

/// The body of the response to `sql`; panics on an HTTP error.
pub fn http_bytes(sql: &str) -> Vec<u8> {
    http_bytes_at("/", sql)
}

/// Runs SQL over the server's HTTP interface and returns the body as text (for checks that
/// must not depend on the code under test).
pub fn http(sql: &str) -> String {
    String::from_utf8(http_bytes(sql)).expect("a UTF-8 HTTP response")
}

/// One value from the server over HTTP (`FORMAT TSVRaw`, trailing newline removed).
pub fn q(sql: &str) -> String {
    http(&format!("{sql} FORMAT TSVRaw")).trim_end().to_string()
}

/// A table name unique to this test run: `<prefix>_<pid>_<n>`.
pub fn unique_table(prefix: &str) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    format!("{prefix}_{}_{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed))
}

/// A table dropped when the test ends (also when it fails).
#[derive(Debug)]
pub struct Table(pub String);

impl Table {
    /// Runs `CREATE TABLE <unique name> <rest>` over HTTP.
    pub fn create(prefix: &str, rest: &str) -> Table {
        let t = Table(unique_table(prefix));
        http(&format!("CREATE TABLE {} {rest}", t.0));
        t
    }

    /// Its row count, from the server.
    pub fn count(&self) -> u64 {
        q(&format!("SELECT count() FROM {}", self.0)).parse().expect("a count")
    }
}

impl std::ops::Deref for Table {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl Drop for Table {
    fn drop(&mut self) {
        let _ = http_try(&format!("DROP TABLE IF EXISTS {} SYNC", self.0));
    }
}
