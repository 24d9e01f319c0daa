//! The server killed (SIGKILL) and restarted while a query streams and while an
//! insert sends. These tests stop the whole test server, so they live in their
//! own test binary (cargo runs test binaries one at a time) and take turns
//! within it. They only kill a server that `scripts/server.sh` started for this
//! run directory; a server run by someone else is left alone and the test says so.
//! A restarted server starts with no tables (its data is in a temporary folder).

use crate::common;
use crate::common_proxy;

use std::process::Command;
use std::time::{Duration, Instant};

use chnative::{Compression, Config, Connection as Client, Error};
use common::*;
use common_proxy::{Dir, Proxy};

const BOUND: Duration = Duration::from_secs(60);

/// One restart at a time.
static TURN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

async fn within<T>(what: &str, fut: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(BOUND, fut).await.unwrap_or_else(|_| panic!("{what}: no answer within {BOUND:?}"))
}

fn run_dir() -> String {
    std::env::var("CHNATIVE_SERVER_DIR")
        .unwrap_or_else(|_| format!("{}/chnative-server", std::env::var("TMPDIR").unwrap_or_else(|_| "/tmp".into())))
}

/// The pid of the server `scripts/server.sh` started, if it is alive and is ours.
fn our_server_pid() -> Option<u32> {
    let pid: u32 = std::fs::read_to_string(format!("{}/server.pid", run_dir())).ok()?.trim().parse().ok()?;
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    String::from_utf8_lossy(&cmdline).contains("chserver.py").then_some(pid)
}

fn server_script(cmd: &str) {
    let s = server();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/server.sh");
    let out = Command::new("bash")
        .arg(script)
        .arg(cmd)
        .env("CHNATIVE_TCP_PORT", s.tcp_port.to_string())
        .env("CHNATIVE_HTTP_PORT", s.http_port.to_string())
        .output()
        .expect("run scripts/server.sh");
    assert!(out.status.success(), "scripts/server.sh {cmd} failed:\n{}", String::from_utf8_lossy(&out.stderr));
}

/// Restarts the server when dropped, so a failing test leaves a working one behind.
struct Restart;

impl Drop for Restart {
    fn drop(&mut self) {
        server_script("start");
    }
}

/// SIGKILLs the server's process group and waits until its port is closed.
fn kill_server(pid: u32) -> Restart {
    // server.sh starts the server with setsid, so its pid is its process group.
    let status = Command::new("kill").arg("-KILL").arg("--").arg(format!("-{pid}")).status().expect("kill");
    assert!(status.success(), "kill -KILL -{pid} failed");
    let s = server();
    let start = Instant::now();
    while std::net::TcpStream::connect((s.host.as_str(), s.tcp_port)).is_ok() {
        assert!(start.elapsed() < BOUND, "the server port is still open after SIGKILL");
        std::thread::sleep(Duration::from_millis(20));
    }
    Restart
}

/// The connection died with `first`: it is never reused (the next call fails at
/// once with `Closed`); after a restart a new client works.
async fn assert_not_reused_then_restart(c: &mut Client, first: &Error, restart: Restart, fresh: Config) {
    assert!(!c.is_usable(), "is_usable() is true after {first}");
    // Whether the message names `first` is checked in faults.rs
    // (the_call_after_a_fault_names_the_fault): here the kill may land inside
    // a block or between packets, and only the kind is the same either way.
    let next = within("the call after the server died", c.fetch_scalar::<u64>("SELECT 1")).await;
    assert!(
        matches!(next, Err(ref e) if e.kind() == chnative::ErrorKind::Closed),
        "the call after `{first}` returned {next:?}, not a Closed error"
    );
    tokio::task::block_in_place(|| drop(restart));
    let mut fresh = within("connect after restart", Client::connect_with(fresh)).await.expect("connect after restart");
    let v: u64 =
        within("query after restart", fresh.fetch_scalar("SELECT 5::UInt64")).await.expect("query after restart");
    assert_eq!(v, 5);
}

fn direct() -> Config {
    let s = server();
    Config::new().host(s.host.clone()).port(s.tcp_port)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_killed_mid_stream() {
    let _alone = crate::alone();
    let _turn = TURN.lock().await;
    let _ = server();
    let Some(pid) = our_server_pid() else {
        eprintln!("skipped: the test server was not started by scripts/server.sh for {}", run_dir());
        return;
    };
    let mut c = within("connect", Client::connect_with(direct())).await.expect("connect");
    let mut s = within("stream", c.fetch_blocks("SELECT number FROM system.numbers SETTINGS max_block_size = 1000"))
        .await
        .expect("stream");
    assert!(within("first block", s.next()).await.expect("first block").is_some());
    let restart = tokio::task::block_in_place(|| kill_server(pid));
    let e = within("the stream after the server died", async {
        for _ in 0..10_000_000u64 {
            if let Err(e) = s.next().await {
                return e;
            }
        }
        panic!("the stream kept yielding blocks after the server died");
    })
    .await;
    assert!(e.kind() == chnative::ErrorKind::Io, "a killed server gave {e:?}, not an I/O error");
    drop(s);
    assert_not_reused_then_restart(&mut c, &e, restart, direct()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_killed_mid_insert() {
    let _alone = crate::alone();
    let _turn = TURN.lock().await;
    let _ = server();
    let Some(pid) = our_server_pid() else {
        eprintln!("skipped: the test server was not started by scripts/server.sh for {}", run_dir());
        return;
    };
    let table = unique_table("fault_kill_insert");
    http(&format!("CREATE TABLE {table} (id UInt64) ENGINE = MergeTree ORDER BY id"));
    // Through a slow proxy, so the insert is still sending when the server dies.
    let p = Proxy::to_server().await;
    p.throttle(Dir::Up, 16 << 10, Duration::from_millis(1));
    let cfg = p.config().compression(Compression::None).insert_block_rows(100_000);
    let mut c = within("connect", Client::connect_with(cfg.clone())).await.expect("connect");
    let ids: Vec<u64> = (0..2_000_000).collect();
    let sent_before = p.forwarded(Dir::Up);
    let mut restart = None;
    let (res, ()) =
        tokio::join!(within("an insert while the server dies", c.insert(&table).column("id", &ids).send()), async {
            assert!(
                p.wait_forwarded(Dir::Up, sent_before + (2 << 20), BOUND).await,
                "the insert did not start sending"
            );
            restart = Some(tokio::task::block_in_place(|| kill_server(pid)));
        });
    let e = res.expect_err("an insert to a killed server must fail");
    assert!(e.kind() == chnative::ErrorKind::Io, "a killed server mid-insert gave {e:?}, not an I/O error");
    p.clear();
    assert_not_reused_then_restart(&mut c, &e, restart.expect("killed"), cfg).await;
}
