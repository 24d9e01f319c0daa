//! Query deadlines that hold: `query_timeout` (config, URL option, or per query
//! with `Query::timeout`) ends the call at the deadline whatever the server
//! does, and the cancelled query is finished off the caller's path (the pool
//! gets the connection back only if that ended cleanly; a connection in an
//! unknown state is never reused).
//!
//! The bounds below are generous "no hang" bounds: the old behaviour waited for
//! the server (a 3 s sleep, or the Cancel bound) before reporting the timeout.

use crate::common;
use crate::common::fake_server;

use std::io::Write;
use std::time::{Duration, Instant};

use chnative::{Client, Config, Connection, Query};
use chnative_testkit::packets::{block, data_packet, end_of_stream, progress};
use common::*;
use fake_server::{trickle, ScriptedServer};

/// Sleeps 3 s on the server; ClickHouse does not look at a Cancel during `sleep`.
const SLEEP3: &str = "SELECT sleep(3)";

/// Well before the 3 s sleep ends.
const BOUND: Duration = Duration::from_millis(2500);

fn assert_timeout<T: std::fmt::Debug>(r: chnative::Result<T>, start: Instant) {
    let took = start.elapsed();
    assert!(matches!(r, Err(ref e) if e.kind() == chnative::ErrorKind::Timeout), "{r:?}");
    assert!(took < BOUND, "the timeout came after {took:?}");
}

/// Waits (up to a generous bound) for `cond`.
async fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < Duration::from_secs(60), "{what}: not within 60 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sleeping_query_times_out_at_the_deadline_and_the_pool_goes_on() {
    let cfg = Config::from_url(&url("")).unwrap().query_timeout(Some(Duration::from_secs(1)));
    let c = Client::connect_with(cfg).await.unwrap();
    let start = Instant::now();
    assert_timeout(c.fetch_scalar::<u8>(SLEEP3).await, start);
    // The next query runs at once, on another connection: the timed-out one is
    // still being drained in the background.
    let v: u64 = c.fetch_scalar("SELECT 42::UInt64").await.unwrap();
    assert_eq!(v, 42);
    // The drain ends cleanly when the sleep does, and that connection goes
    // back to the pool.
    eventually("both connections idle", || c.pool_status().idle == 2).await;
    let v: u64 = c.fetch_scalar("SELECT 43::UInt64").await.unwrap();
    assert_eq!(v, 43);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sleeping_query_times_out_at_the_deadline_on_a_single_connection() {
    let cfg = Config::from_url(&url("")).unwrap().query_timeout(Some(Duration::from_secs(1)));
    let mut c = Connection::connect_with(cfg).await.unwrap();
    let start = Instant::now();
    assert_timeout(c.execute(SLEEP3).await, start);
    assert!(c.is_usable());
    // The connection is kept: the next call finishes the cancelled query first.
    c.ping().await.unwrap();
    assert_eq!(c.fetch_scalar::<u8>("SELECT 7").await.unwrap(), 7);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_url_option_and_a_per_query_timeout_set_the_deadline() {
    // The URL option.
    let c = Client::connect(&url("query_timeout=1000ms")).await.unwrap();
    let start = Instant::now();
    assert_timeout(c.execute(SLEEP3).await, start);
    // A longer per-query timeout overrides it, and so does ZERO (none).
    let q = Query::new("SELECT toUInt8(sleep(1.5) + 1)").timeout(Duration::from_secs(30));
    assert_eq!(c.fetch_scalar::<u8>(q).await.unwrap(), 1);
    let q = Query::new("SELECT toUInt8(sleep(1.5) + 2)").timeout(Duration::ZERO);
    assert_eq!(c.fetch_scalar::<u8>(q).await.unwrap(), 2);

    // A per-query timeout where the config has none.
    let c = Client::connect(&url("")).await.unwrap();
    let start = Instant::now();
    assert_timeout(c.execute(Query::new(SLEEP3).timeout(Duration::from_secs(1))).await, start);
    assert_eq!(c.fetch_scalar::<u8>("SELECT 3").await.unwrap(), 3);

    for bad in ["soon", "-1s", "1x"] {
        assert!(Config::from_url(&url(&format!("query_timeout={bad}"))).is_err(), "{bad}");
    }
    // Zero turns it off.
    let c = Client::connect(&url("query_timeout=0")).await.unwrap();
    assert_eq!(c.fetch_scalar::<u8>("SELECT toUInt8(sleep(0.1) + 4)").await.unwrap(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deadline_passed_between_next_calls_ends_the_stream_at_once() {
    let cfg = Config::from_url(&url("")).unwrap().query_timeout(Some(Duration::from_secs(1)));
    let c = Client::connect_with(cfg).await.unwrap();
    let start = Instant::now();
    // The first row comes at once, the second after the server's 3 s sleep.
    let mut s = c.fetch_blocks("SELECT 0 AS n UNION ALL SELECT sleep(3) + 1 AS n").await.unwrap();
    assert!(s.next().await.unwrap().is_some(), "the first block");
    // The caller is busy past the deadline; the next call fails at once
    // instead of waiting for the cancelled query to end.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert_timeout(s.next().await.map(|b| b.map(|b| b.rows())), start);
    drop(s);
    assert_eq!(c.fetch_scalar::<u8>("SELECT 5").await.unwrap(), 5);
}

/// An answer to `SELECT`: the header, one row of UInt8 `value`, EndOfStream.
fn answer(revision: u64, value: u8) -> Vec<u8> {
    let mut out = data_packet(&block(revision, 0, &[("x", "UInt8", &[0], &[])]), None);
    out.extend(data_packet(&block(revision, 1, &[("x", "UInt8", &[0], &[value])]), None));
    out.extend(end_of_stream());
    out
}

/// The first connection answers the query with `head`, then sends Progress
/// every 100 ms and ignores Cancel; later ones answer 7.
fn trickling_server(head: Vec<u8>) -> ScriptedServer {
    const REV: u64 = 54492;
    ScriptedServer::start(REV, false, move |n, sock| {
        if n == 0 {
            let _ = sock.write_all(&head);
            trickle(sock, &progress(REV), Duration::from_millis(100), Duration::from_secs(60));
        } else {
            let _ = sock.write_all(&answer(REV, 7));
        }
    })
}

/// A Cancel bound long enough that waiting for it breaks the 8 s bound, which the 500 ms
/// deadline meets with room to spare on a loaded machine.
const CANCEL_BOUND: Duration = Duration::from_secs(12);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_trickling_progress_and_ignoring_cancel_cannot_hold_the_deadline() {
    let fake = trickling_server(Vec::new());
    let cfg = Config::from_url(&fake.url(54492, "none"))
        .unwrap()
        .query_timeout(Some(Duration::from_millis(500)))
        .cancel_timeout(CANCEL_BOUND);
    let c = Client::connect_with(cfg).await.unwrap();
    let start = Instant::now();
    let r = c.execute("SELECT 1").await;
    let took = start.elapsed();
    assert!(matches!(r, Err(ref e) if e.kind() == chnative::ErrorKind::Timeout), "{r:?}");
    assert!(took < Duration::from_secs(8), "the timeout came after {took:?}");
    // The next query gets a fresh connection, not the one still draining.
    assert_eq!(c.fetch_scalar::<u8>("SELECT 1").await.unwrap(), 7);
    assert_eq!(fake.accepted(), 2);
    // When the Cancel bound passes, the draining connection is closed, never pooled.
    eventually("the abandoned connection closed", || fake.closed() == 1).await;
    eventually("one open connection", || c.pool_status().size == 1).await;
    assert_eq!(c.pool_status().idle, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_times_out_mid_result_on_a_server_ignoring_cancel() {
    const REV: u64 = 54492;
    let mut head = data_packet(&block(REV, 0, &[("x", "UInt8", &[0], &[])]), None);
    head.extend(data_packet(&block(REV, 1, &[("x", "UInt8", &[0], &[1])]), None));
    let fake = trickling_server(head);
    let cfg = Config::from_url(&fake.url(REV, "none"))
        .unwrap()
        .query_timeout(Some(Duration::from_millis(500)))
        .cancel_timeout(CANCEL_BOUND);
    let mut c = Connection::connect_with(cfg).await.unwrap();
    let start = Instant::now();
    let mut s = c.fetch_blocks("SELECT 1").await.unwrap();
    assert_eq!(s.next().await.unwrap().map(|b| b.rows()), Some(1));
    let r = s.next().await.map(|b| b.map(|b| b.rows()));
    let took = start.elapsed();
    assert!(matches!(r, Err(ref e) if e.kind() == chnative::ErrorKind::Timeout), "{r:?}");
    assert!(took < Duration::from_secs(8), "the timeout came after {took:?}");
    drop(s);
    // The single connection is kept while the cancelled query is drained; the
    // server never ends it, so the next call finds it closed at the Cancel bound.
    let next = tokio::time::timeout(Duration::from_secs(30), c.ping()).await.expect("no hang");
    assert!(
        matches!(&next, Err(e) if e.kind() == chnative::ErrorKind::Closed && e.to_string().contains("cancelled query")),
        "{next:?}"
    );
    assert!(!c.is_usable());
    eventually("the connection closed", || fake.closed() == 1).await;
}
