//! The test server (started by scripts/server.sh if none answers), its HTTP
//! interface as the reference, and a way to run the built `chn`.
#![allow(dead_code)]

use std::io::Write;
use std::process::{Command, Output, Stdio};

pub use chnative_testkit::server::{http, http_bytes, server};

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
