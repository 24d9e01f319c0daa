//! The test server (started by scripts/server.sh if none answers), its HTTP
//! interface as the reference, and a way to run the built `chn`.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

pub struct Server {
    pub tcp_port: u16,
    pub http_port: u16,
}

/// The server of chnative's test suites (same ports and script).
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
        Server { tcp_port, http_port }
    })
}

/// The body of an HTTP POST of `sql` (status checked), as bytes.
pub fn http_bytes(sql: &str) -> Vec<u8> {
    let s = server();
    let mut sock = std::net::TcpStream::connect(("127.0.0.1", s.http_port)).expect("connect to HTTP");
    let req = format!("POST / HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Length: {}\r\n\r\n{}", sql.len(), sql);
    sock.write_all(req.as_bytes()).unwrap();
    let mut resp = Vec::new();
    sock.read_to_end(&mut resp).unwrap();
    let split = resp.windows(4).position(|w| w == b"\r\n\r\n").expect("an HTTP response");
    let head = String::from_utf8_lossy(&resp[..split]).into_owned();
    assert!(head.contains(" 200 "), "HTTP query failed: {sql}\n{}", String::from_utf8_lossy(&resp));
    resp[split + 4..].to_vec()
}

/// The body of an HTTP POST of `sql`, as text.
pub fn http(sql: &str) -> String {
    String::from_utf8(http_bytes(sql)).expect("UTF-8")
}

/// A table name unique to this run (prefixed with the branch name).
pub fn unique(prefix: &str) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    format!("cli_{prefix}_{}_{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed))
}

/// `chn` with the test server's port and no password from the environment.
pub fn chn_command() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_chn"));
    c.arg("--port").arg(server().tcp_port.to_string());
    c.env_remove("CLICKHOUSE_PASSWORD");
    c
}

/// Runs `chn` with `args`, `stdin` as its input (empty when `None`).
pub fn chn(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut c = chn_command();
    c.args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().expect("run chn");
    let mut input = child.stdin.take().unwrap();
    let data = stdin.unwrap_or_default().to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().expect("wait for chn");
    writer.join().unwrap();
    out
}

/// `chn` that must succeed: its stdout.
pub fn chn_ok(args: &[&str], stdin: Option<&[u8]>) -> Vec<u8> {
    let out = chn(args, stdin);
    assert!(out.status.success(), "chn {args:?} failed ({}):\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// Drops a table when the test ends, passed or not.
pub struct Table(pub String);

impl Table {
    pub fn create(prefix: &str, columns: &str) -> Table {
        let name = unique(prefix);
        http(&format!("CREATE TABLE {name} ({columns}) ENGINE = MergeTree ORDER BY tuple()"));
        Table(name)
    }
}

impl Drop for Table {
    fn drop(&mut self) {
        let _ = std::panic::catch_unwind(|| http(&format!("DROP TABLE IF EXISTS {}", self.0)));
    }
}
