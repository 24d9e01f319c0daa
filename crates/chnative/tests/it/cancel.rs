//! Cancellation reaches the server: the query stops there, and the connection
//! is drained back to a known state.

use crate::common;
use std::time::{Duration, Instant};

use common::*;

const SLEEPY: &str = "SELECT sleepEachRow(0.5), number FROM numbers(1000) \
                      SETTINGS max_block_size = 1, function_sleep_max_microseconds_per_block = 0";

/// Waits until the server no longer lists `query_id` in system.processes.
fn wait_gone(query_id: &str) {
    let start = Instant::now();
    loop {
        let n = http(&format!("SELECT count() FROM system.processes WHERE query_id = '{query_id}'"));
        if n.trim() == "0" {
            return;
        }
        // SLEEPY runs for 500 s when not cancelled: a minute tells the two apart on any machine.
        assert!(start.elapsed() < Duration::from_secs(60), "query {query_id} still running on the server");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn is_running(query_id: &str) -> bool {
    http(&format!("SELECT count() FROM system.processes WHERE query_id = '{query_id}'")).trim() == "1"
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explicit_cancel_stops_the_server_query() {
    for rev in [54460, 54492] {
        let c = client_at(rev, "lz4").await;
        let mut s = c.fetch_blocks(SLEEPY).await.unwrap();
        let id = s.query_id().to_string();
        assert!(s.next().await.unwrap().is_some());
        assert!(is_running(&id), "query should be running before cancel");
        s.cancel().await.unwrap();
        wait_gone(&id);
        let one: u8 = c.fetch_scalar("SELECT 1").await.unwrap();
        assert_eq!(one, 1, "connection usable after cancel");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_a_stream_cancels_and_the_next_query_drains() {
    let c = client().await;
    let id;
    {
        let mut s = c.fetch_blocks(SLEEPY).await.unwrap();
        id = s.query_id().to_string();
        assert!(s.next().await.unwrap().is_some());
    } // dropped mid-query: Cancel goes out now
    wait_gone(&id);
    let v: u64 = c.fetch_scalar("SELECT 42::UInt64").await.unwrap();
    assert_eq!(v, 42);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_handle_from_another_task() {
    let c = client().await;
    let mut s = c.fetch_blocks(SLEEPY).await.unwrap();
    let id = s.query_id().to_string();
    let h = s.cancel_handle();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(700)).await;
        h.cancel();
    });
    let mut blocks = 0;
    let err = loop {
        match s.next().await {
            Ok(Some(_)) => blocks += 1,
            Ok(None) => panic!("query should not finish by itself"),
            Err(e) => break e,
        }
    };
    assert!(err.kind() == chnative::ErrorKind::Cancelled, "{err:?}");
    assert!(blocks < 10, "{blocks}");
    drop(s);
    wait_gone(&id);
    c.ping().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_an_endless_scan_cancels_it() {
    let c = client().await;
    let id;
    {
        let mut s = c.fetch_blocks("SELECT number FROM system.numbers").await.unwrap();
        id = s.query_id().to_string();
        for _ in 0..5 {
            assert!(s.next().await.unwrap().is_some());
        }
    }
    wait_gone(&id);
    let v: u64 = c.fetch_scalar("SELECT count() FROM numbers(10)").await.unwrap();
    assert_eq!(v, 10);
}
