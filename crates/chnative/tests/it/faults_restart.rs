//! The server killed (SIGKILL) and restarted while a query streams and while an
//! insert sends. Each test kills a server of its own (`OwnServer`: scripts/server.sh on
//! ports of its own), never the shared test server the other tests use meanwhile. A
//! restarted server starts with no tables (its data is in a temporary folder).

use crate::common;
use crate::common_proxy;

use std::time::Duration;

use chnative::{Compression, Config, Connection as Client, Error};
use common::own_server::OwnServer;
use common_proxy::{Dir, Proxy};

const BOUND: Duration = Duration::from_secs(60);

async fn within<T>(what: &str, fut: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(BOUND, fut).await.unwrap_or_else(|_| panic!("{what}: no answer within {BOUND:?}"))
}

/// The connection died with `first`: it is never reused (the next call fails at
/// once with `Closed`); after a restart a new client works.
async fn assert_not_reused_then_restart(c: &mut Client, first: &Error, own: &OwnServer, fresh: Config) {
    assert!(!c.is_usable(), "is_usable() is true after {first}");
    // Whether the message names `first` is checked in faults.rs
    // (the_call_after_a_fault_names_the_fault): here the kill may land inside
    // a block or between packets, and only the kind is the same either way.
    let next = within("the call after the server died", c.fetch_scalar::<u64>("SELECT 1")).await;
    assert!(
        matches!(next, Err(ref e) if e.kind() == chnative::ErrorKind::Closed),
        "the call after `{first}` returned {next:?}, not a Closed error"
    );
    tokio::task::block_in_place(|| own.start_again());
    let mut fresh = within("connect after restart", Client::connect_with(fresh)).await.expect("connect after restart");
    let v: u64 =
        within("query after restart", fresh.fetch_scalar("SELECT 5::UInt64")).await.expect("query after restart");
    assert_eq!(v, 5);
}

/// Starts the test's own server (blocking in place: it takes a second or two).
fn own_server(name: &str) -> OwnServer {
    tokio::task::block_in_place(|| OwnServer::start(name))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_killed_mid_stream() {
    let own = own_server("kill-stream");
    let mut c = within("connect", Client::connect_with(own.config())).await.expect("connect");
    let mut s = within("stream", c.fetch_blocks("SELECT number FROM system.numbers SETTINGS max_block_size = 1000"))
        .await
        .expect("stream");
    assert!(within("first block", s.next()).await.expect("first block").is_some());
    tokio::task::block_in_place(|| own.kill9());
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
    assert_not_reused_then_restart(&mut c, &e, &own, own.config()).await;
    tokio::task::block_in_place(|| drop(own));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_killed_mid_insert() {
    let own = own_server("kill-insert");
    let table = "fault_kill_insert";
    own.http(&format!("CREATE TABLE {table} (id UInt64) ENGINE = MergeTree ORDER BY id"));
    // Through a slow proxy, so the insert is still sending when the server dies.
    let p = Proxy::start(([127, 0, 0, 1], own.tcp_port).into()).await;
    p.throttle(Dir::Up, 16 << 10, Duration::from_millis(1));
    let cfg = p.config().compression(Compression::None).insert_block_rows(100_000);
    let mut c = within("connect", Client::connect_with(cfg.clone())).await.expect("connect");
    let ids: Vec<u64> = (0..2_000_000).collect();
    let sent_before = p.forwarded(Dir::Up);
    let mut killed = false;
    let (res, ()) =
        tokio::join!(within("an insert while the server dies", c.insert(table).column("id", &ids).send()), async {
            assert!(
                p.wait_forwarded(Dir::Up, sent_before + (2 << 20), BOUND).await,
                "the insert did not start sending"
            );
            tokio::task::block_in_place(|| own.kill9());
            killed = true;
        });
    let e = res.expect_err("an insert to a killed server must fail");
    assert!(e.kind() == chnative::ErrorKind::Io, "a killed server mid-insert gave {e:?}, not an I/O error");
    p.clear();
    assert!(killed);
    assert_not_reused_then_restart(&mut c, &e, &own, cfg).await;
    drop(p);
    tokio::task::block_in_place(|| drop(own));
}
