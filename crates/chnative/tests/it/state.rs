//! Connection state at the tokio layer: cancel safety of INSERT, an INSERT
//! that stops when the server refuses it, written-row counts, bounds on
//! endless answers, and errors that name their first cause.
//!
//! A small fake server (it speaks just the handshake, then sends what a test
//! needs) stands in where a real server cannot be made to misbehave.

use crate::common;

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

// These tests are about one connection's state, so they use the single-socket
// `Connection` (a pooled `Client` would open a fresh socket for the next call).
use chnative::{Config, Connection};
use common::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

fn table(prefix: &str, schema: &str) -> String {
    let t = unique_table(prefix);
    http(&format!("CREATE TABLE {t} ({schema}) ENGINE = MergeTree ORDER BY tuple()"));
    t
}

fn count(t: &str) -> u64 {
    http(&format!("SELECT count() FROM {t}")).trim().parse().unwrap()
}

/// Polls `fut` at most `n` times (yielding between polls) and drops it if it
/// has not finished by then. Returns its output if it finished.
async fn poll_n_times<F: Future>(fut: F, n: usize) -> Option<F::Output> {
    let mut fut = std::pin::pin!(fut);
    for _ in 0..n {
        let polled = std::future::poll_fn(|cx| std::task::Poll::Ready(fut.as_mut().poll(cx))).await;
        if let std::task::Poll::Ready(out) = polled {
            return Some(out);
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_insert_dropped_anywhere_is_never_resent_nor_reported_stored() {
    let t = table("sm_drop", "n UInt64");
    let rows: Vec<u64> = (0..2_000_000).collect();
    let mut total_landed = 0u64;
    for n in [1usize, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610, 987] {
        let cfg = Config::from_url(&url("compression=none")).unwrap().insert_block_rows(250_000);
        let mut c = Connection::connect_with(cfg).await.unwrap();
        let before = count(&t);
        let out = poll_n_times(c.insert(&t).column("n", &rows).send(), n).await;
        match out {
            Some(r) => {
                let s = r.unwrap();
                assert_eq!(s.rows, rows.len() as u64);
                total_landed += rows.len() as u64;
                assert_eq!(count(&t), before + rows.len() as u64, "a reported insert is stored");
            }
            None => {
                // The next call works (nothing had been sent, or the rest was
                // drained) or names why the connection was closed.
                match c.fetch_scalar::<u8>("SELECT 1").await {
                    Ok(1) => {}
                    Err(e) if e.kind() == chnative::ErrorKind::Closed => {
                        assert!(e.to_string().contains("abandoned"), "{e}");
                        assert!(!c.is_usable());
                    }
                    other => panic!("after dropping the insert at poll {n}: {other:?}"),
                }
                drop(c);
                // An abandoned insert lands whole or not at all, never twice.
                let mut after = count(&t);
                for _ in 0..50 {
                    if after == before || after == before + rows.len() as u64 {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    after = count(&t);
                }
                assert!(after == before || after == before + rows.len() as u64, "poll {n}: {before} → {after}");
                total_landed += after - before;
            }
        }
    }
    assert_eq!(count(&t), total_landed);
    http(&format!("DROP TABLE {t}"));
}

/// Forwards client→server bytes to the real server, counting them.
async fn counting_proxy() -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let upstream = format!("127.0.0.1:{}", server().tcp_port);
    let sent = Arc::new(AtomicUsize::new(0));
    let counter = sent.clone();
    tokio::spawn(async move {
        let Ok((client, _)) = listener.accept().await else { return };
        let Ok(server) = TcpStream::connect(&upstream).await else { return };
        let (mut cr, mut cw) = client.into_split();
        let (mut sr, mut sw) = server.into_split();
        tokio::spawn(async move {
            let _ = tokio::io::copy(&mut sr, &mut cw).await;
        });
        let mut buf = vec![0u8; 64 << 10];
        loop {
            let n = match cr.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            counter.fetch_add(n, Ordering::SeqCst);
            if sw.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
    });
    (port, sent)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_insert_stops_sending_once_the_server_refused_it() {
    let t = table("sm_refused", "n UInt64, CONSTRAINT positive CHECK n > 0");
    let (port, sent) = counting_proxy().await;
    let cfg = Config::from_url(&format!("clickhouse://default@127.0.0.1:{port}/default?compression=none"))
        .unwrap()
        .insert_block_rows(100_000);
    let mut c = Connection::connect_with(cfg).await.unwrap();
    // Row 1 breaks the constraint; 80 MB follow it.
    let rows: Vec<u64> = (0..10_000_000).collect();
    let err = c.insert(&t).column("n", &rows).send().await.unwrap_err();
    if version() < (25, 0, 0) {
        // 24.8 sends its exception and closes the connection. The client reports that
        // exception, not the write the close broke (regression: a broken pipe or a reset was
        // reported when the client was inside a write as the close came); the connection is
        // then closed, and nothing was stored.
        assert_eq!(err.server_code(), Some(469), "{err}");
        let sent = sent.load(Ordering::SeqCst);
        assert!(sent < 40 << 20, "{sent} bytes sent after the server refused the first block");
        assert!(c.fetch_scalar::<u8>("SELECT 1").await.is_err());
        assert_eq!(count(&t), 0);
        http(&format!("DROP TABLE {t}"));
        return;
    }
    assert_eq!(err.server_code(), Some(469), "{err}");
    let sent = sent.load(Ordering::SeqCst);
    assert!(sent < 40 << 20, "{sent} bytes sent after the server refused the first block");
    // The data was ended properly: the connection is usable.
    assert!(c.is_usable());
    assert_eq!(c.fetch_scalar::<u8>("SELECT 1").await.unwrap(), 1);
    assert_eq!(count(&t), 0);
    http(&format!("DROP TABLE {t}"));
}

#[tokio::test]
async fn insert_summary_reports_the_rows_the_server_wrote() {
    let t = table("sm_written", "n UInt64, s String");
    for compression in ["none", "lz4"] {
        let cfg = Config::from_url(&url(&format!("compression={compression}"))).unwrap().insert_block_rows(1000);
        let mut c = Connection::connect_with(cfg).await.unwrap();
        let n: Vec<u64> = (0..2500).collect();
        let s: Vec<String> = n.iter().map(|i| i.to_string()).collect();
        let summary = c.insert(&t).column("n", &n).column("s", &s).send().await.unwrap();
        assert_eq!(summary.rows, 2500);
        assert_eq!(summary.blocks, 3);
        assert_eq!(summary.progress.written_rows, 2500, "{compression}: {summary:?}");
        assert!(summary.progress.written_bytes > 0, "{summary:?}");
    }
    http(&format!("DROP TABLE {t}"));
}

#[tokio::test]
async fn unknown_setting_makes_the_client_unusable_at_once() {
    let mut c = Connection::connect(&url("")).await.unwrap();
    let err = c.execute(chnative::Query::new("SELECT 1").setting("no_such_setting_sm", "1")).await.unwrap_err();
    assert_eq!(err.server_code(), Some(115));
    assert!(!c.is_usable(), "the server closes the connection after code 115");
    match c.fetch_scalar::<u8>("SELECT 1").await {
        Err(e) if e.kind() == chnative::ErrorKind::Closed => {
            let why = e.to_string();
            assert!(why.contains("115") && why.contains("no_such_setting_sm"), "{why}")
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_deadline_cancels_and_keeps_the_connection() {
    let cfg = Config::from_url(&url("")).unwrap().query_timeout(Some(Duration::from_millis(300)));
    let mut c = Connection::connect_with(cfg).await.unwrap();
    let sleepy = "SELECT sleepEachRow(0.1), number FROM numbers(1000) \
                  SETTINGS max_block_size = 1, function_sleep_max_microseconds_per_block = 0";
    let err = c.execute(sleepy).await.unwrap_err();
    assert!(err.kind() == chnative::ErrorKind::Timeout, "{err:?}");
    assert!(c.is_usable());
    // The cancelled query is finished in the background; ping waits for that
    // (the next query would too, but within its own 300 ms deadline).
    c.ping().await.unwrap();
    assert_eq!(c.fetch_scalar::<u8>("SELECT 1").await.unwrap(), 1);
}

// ---- a fake server for answers a real server does not give ----

/// What the fake server sends after the query arrives.
#[derive(Clone, Copy)]
enum Script {
    /// Progress packets forever (also after Cancel).
    EndlessProgress,
    /// Empty Data blocks forever.
    EndlessEmptyBlocks,
    /// A Data block whose column has an unknown type.
    BadType,
}

fn server_hello() -> Vec<u8> {
    std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../chnative-proto/tests/data/captures/hello_54492.bin"))
        .unwrap()
}

fn varuint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn string(out: &mut Vec<u8>, s: &str) {
    varuint(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

/// A Data packet (revision 54492, uncompressed) with one column, no rows.
fn data_packet(type_name: &str, columns: u64) -> Vec<u8> {
    let mut b = vec![1, 0]; // Data, table ""
    b.extend_from_slice(&[1, 0, 2, 0xff, 0xff, 0xff, 0xff, 3, 0, 0]); // BlockInfo
    varuint(&mut b, columns);
    varuint(&mut b, 0);
    if columns > 0 {
        string(&mut b, "x");
        string(&mut b, type_name);
        b.push(0);
    }
    b
}

/// Listens once; after the client's Hello and Query, plays `script`.
async fn fake_server(script: Script) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let Ok((sock, _)) = listener.accept().await else { return };
        let (mut r, mut w) = sock.into_split();
        let mut buf = vec![0u8; 64 << 10];
        // The client's Hello.
        if r.read(&mut buf).await.unwrap_or(0) == 0 {
            return;
        }
        if w.write_all(&server_hello()).await.is_err() {
            return;
        }
        // The Addendum (24 bytes) and a Query (well over 100), then keep reading in the background.
        let mut got = 0;
        while got < 100 {
            match r.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => got += n,
            }
        }
        tokio::spawn(async move { while r.read(&mut buf).await.is_ok_and(|n| n > 0) {} });
        let chunk: Vec<u8> = match script {
            Script::EndlessProgress => {
                let mut p = Vec::new();
                for _ in 0..100 {
                    p.extend_from_slice(&[3, 1, 1, 0, 0, 0, 0, 1]);
                }
                p
            }
            Script::EndlessEmptyBlocks => (0..100).flat_map(|_| data_packet("", 0)).collect(),
            Script::BadType => {
                let _ = w.write_all(&data_packet("NoSuchTypeSM", 1)).await;
                tokio::time::sleep(Duration::from_secs(60)).await;
                return;
            }
        };
        loop {
            if w.write_all(&chunk).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    });
    port
}

fn fake_url(port: u16) -> String {
    format!("clickhouse://default@127.0.0.1:{port}/default?compression=none")
}

#[tokio::test]
async fn endless_progress_is_capped() {
    for script in [Script::EndlessProgress, Script::EndlessEmptyBlocks] {
        let port = fake_server(script).await;
        let cfg = Config::from_url(&fake_url(port)).unwrap().max_silent_packets(1000);
        let mut c = Connection::connect_with(cfg).await.unwrap();
        let err = tokio::time::timeout(Duration::from_secs(60), c.execute("SELECT 1"))
            .await
            .expect("the cap ends the query")
            .unwrap_err();
        assert!(err.to_string().contains("without rows"), "{err}");
        assert!(!c.is_usable());
    }
}

#[tokio::test]
async fn a_server_ignoring_cancel_is_given_up_on() {
    let port = fake_server(Script::EndlessProgress).await;
    let cfg = Config::from_url(&fake_url(port)).unwrap().cancel_timeout(Duration::from_millis(200));
    let mut c = Connection::connect_with(cfg).await.unwrap();
    let s = c.fetch_blocks("SELECT 1").await.unwrap();
    let r = tokio::time::timeout(Duration::from_secs(60), s.cancel()).await.expect("cancel returns");
    assert!(matches!(r, Err(ref e) if e.kind() == chnative::ErrorKind::Timeout), "{r:?}");
    assert!(!c.is_usable());
    let next = tokio::time::timeout(Duration::from_secs(60), c.ping()).await.expect("no hang");
    assert!(
        matches!(&next, Err(e) if e.kind() == chnative::ErrorKind::Closed && e.to_string().contains("cancelled query")),
        "{next:?}"
    );
}

#[tokio::test]
async fn a_dropped_stream_on_a_server_ignoring_cancel_does_not_hang_the_client() {
    let port = fake_server(Script::EndlessProgress).await;
    let cfg = Config::from_url(&fake_url(port)).unwrap().cancel_timeout(Duration::from_millis(200));
    let mut c = Connection::connect_with(cfg).await.unwrap();
    drop(c.fetch_blocks("SELECT 1").await.unwrap());
    let next = tokio::time::timeout(Duration::from_secs(60), c.ping()).await.expect("no hang");
    assert!(next.is_err(), "{next:?}");
    assert!(!c.is_usable());
}

#[tokio::test]
async fn after_a_decode_error_later_calls_name_it() {
    let port = fake_server(Script::BadType).await;
    let mut c = Connection::connect(&fake_url(port)).await.unwrap();
    let first = c.execute("SELECT 1").await.unwrap_err();
    assert!(first.to_string().contains("NoSuchTypeSM"), "{first}");
    assert!(!c.is_usable());
    match c.ping().await {
        Err(e) if e.kind() == chnative::ErrorKind::Closed => assert!(e.to_string().contains("NoSuchTypeSM"), "{e}"),
        other => panic!("{other:?}"),
    }
}
