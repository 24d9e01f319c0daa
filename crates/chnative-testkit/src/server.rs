//! The real ClickHouse server of the test suites, and its HTTP interface as the reference.
//!
//! The first test to need it runs `scripts/server.sh start`, which installs chdb-core into a
//! cached venv if needed and starts the server, or reuses one already answering on the port.
//! `CHNATIVE_TCP_PORT` and `CHNATIVE_HTTP_PORT` choose the ports (19000 and 18123 by default).

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

/// The test server, started on first use.
pub fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        let (tcp_port, http_port) = (port("CHNATIVE_TCP_PORT", 19000), port("CHNATIVE_HTTP_PORT", 18123));
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/server.sh");
        let out = Command::new("bash")
            .arg(script)
            .arg("start")
            .env("CHNATIVE_TCP_PORT", tcp_port.to_string())
            .env("CHNATIVE_HTTP_PORT", http_port.to_string())
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
pub fn http_raw(path: &str, sql: &str) -> Option<Vec<u8>> {
    let s = server();
    post(&s.host, s.http_port, path, sql)
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
/// test's own server, a cluster node); panics naming the port and the query on an HTTP error.
pub fn http_at_port(port: u16, sql: &str) -> String {
    let resp = post("127.0.0.1", port, "/", sql).unwrap_or_else(|| panic!("HTTP connect to 127.0.0.1:{port}"));
    let resp = String::from_utf8_lossy(&resp).into_owned();
    let (head, body) = resp.split_once("\r\n\r\n").unwrap_or((&resp, ""));
    assert!(head.contains(" 200 "), "HTTP query to 127.0.0.1:{port} failed: {sql}\n{resp}");
    body.to_string()
}

/// The whole HTTP response to `sql` as text, or `None`; no status check.
pub fn http_try(sql: &str) -> Option<String> {
    http_raw("/", sql).map(|r| String::from_utf8_lossy(&r).into_owned())
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
