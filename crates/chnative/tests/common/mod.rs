//! Shared helpers for the integration tests: a real ClickHouse server on loopback.
//!
//! The first test to need it runs `scripts/server.sh start`, which installs
//! chdb-core 26.9 into a cached venv if needed and starts the server, or reuses
//! one already answering on the port.
#![allow(dead_code)]

use std::process::Command;
use std::sync::OnceLock;

/// Revisions the core suite runs at (oldest first); the last is the default.
pub const REVISIONS: [u64; 5] = [54460, 54465, 54473, 54483, 54492];

pub struct Server {
    pub host: String,
    pub tcp_port: u16,
    pub http_port: u16,
}

pub fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        let tcp_port: u16 = std::env::var("CHNATIVE_TCP_PORT").ok().and_then(|p| p.parse().ok()).unwrap_or(19000);
        let http_port: u16 = std::env::var("CHNATIVE_HTTP_PORT").ok().and_then(|p| p.parse().ok()).unwrap_or(18123);
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

/// A connection string to the test server with extra `?` options.
pub fn url(options: &str) -> String {
    let s = server();
    if options.is_empty() {
        format!("clickhouse://default@{}:{}/default", s.host, s.tcp_port)
    } else {
        format!("clickhouse://default@{}:{}/default?{options}", s.host, s.tcp_port)
    }
}

/// A client at a given revision and compression ("lz4", "zstd", "none").
pub async fn client_at(revision: u64, compression: &str) -> chnative::Client {
    chnative::Client::connect(&url(&format!("revision={revision}&compression={compression}")))
        .await
        .unwrap_or_else(|e| panic!("connect at revision {revision}: {e}"))
}

/// A default client.
pub async fn client() -> chnative::Client {
    chnative::Client::connect(&url("")).await.expect("connect")
}

/// HTTP without asserting (the whole response, or `None`), for cleanup in `Drop`.
pub fn http_try(sql: &str) -> Option<String> {
    use std::io::{Read, Write};
    let s = server();
    let mut sock = std::net::TcpStream::connect((s.host.as_str(), s.http_port)).ok()?;
    let req = format!("POST / HTTP/1.0\r\nHost: {}\r\nContent-Length: {}\r\n\r\n{}", s.host, sql.len(), sql);
    sock.write_all(req.as_bytes()).ok()?;
    let mut resp = String::new();
    sock.read_to_string(&mut resp).ok()?;
    Some(resp)
}

/// Runs SQL over the server's HTTP interface and returns the body (for checks
/// that must not depend on the code under test).
pub fn http(sql: &str) -> String {
    let resp = http_try(sql).expect("HTTP query to the test server");
    let (head, body) = resp.split_once("\r\n\r\n").unwrap_or((&resp, ""));
    assert!(head.starts_with("HTTP/1.0 200") || head.starts_with("HTTP/1.1 200"), "HTTP query failed: {sql}\n{resp}");
    body.to_string()
}

/// A table name unique to this test run.
pub fn unique_table(prefix: &str) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    format!("{prefix}_{}_{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed))
}

/// One value from the server over HTTP (independent of the code under test).
pub fn q(sql: &str) -> String {
    http(&format!("{sql} FORMAT TSVRaw")).trim_end().to_string()
}

/// A table dropped when the test ends (also when it fails).
pub struct Table(pub String);

impl Table {
    /// Creates `CREATE TABLE <name> <rest>` over HTTP.
    pub fn create(prefix: &str, rest: &str) -> Table {
        let t = Table(unique_table(prefix));
        http(&format!("CREATE TABLE {} {rest}", t.0));
        t
    }

    pub fn count(&self) -> u64 {
        q(&format!("SELECT count() FROM {}", self.0)).parse().unwrap()
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
