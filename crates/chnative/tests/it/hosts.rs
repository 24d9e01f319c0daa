//! Multi-host connection strings: failover past dead and silent hosts, each
//! load-balancing policy (against the shared test server), and a server stopped and
//! restarted under a pooled client in use (a server of the test's own, `OwnServer`).

use crate::common;

use std::time::Duration;

use chnative::{Client, Config, LoadBalancing};
use common::own_server::OwnServer;
use common::server;

/// A loopback port with nothing listening.
fn dead_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn multi(hosts: &str, options: &str) -> Config {
    Config::from_url(&format!("clickhouse://default@{hosts}/default?{options}")).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_host_is_skipped_under_every_policy() {
    let live = server().tcp_port;
    let dead = dead_port();
    for lb in ["in_order", "round_robin", "random"] {
        let cfg = multi(&format!("127.0.0.1:{dead},127.0.0.1:{live}"), &format!("load_balancing={lb}"));
        let client = Client::connect_with(cfg.pool_max_size(4)).await.unwrap_or_else(|e| panic!("{lb}: {e}"));
        let mut tasks = Vec::new();
        for i in 0..16u64 {
            let c = client.clone();
            tasks.push(tokio::spawn(async move {
                c.fetch_scalar::<u64>(chnative::Query::new("SELECT {i:UInt64} + 1").bind("i", i)).await
            }));
        }
        for (i, t) in tasks.into_iter().enumerate() {
            assert_eq!(t.await.unwrap().unwrap(), i as u64 + 1, "{lb}");
        }
    }
    // Only dead hosts: the error says why, quickly.
    let err =
        Client::connect_with(multi(&format!("127.0.0.1:{dead},127.0.0.1:{}", dead_port()), "")).await.unwrap_err();
    assert!(err.is_connect(), "{err:?}");
    assert!(err.to_string().contains(&format!("127.0.0.1:{dead}")), "each host's failure is named: {err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_that_accepts_but_never_answers_is_failed_over_after_the_connect_timeout() {
    // Accepts connections and keeps them, silent.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent_port = silent.local_addr().unwrap().port();
    let keeper = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = silent.accept().await {
            held.push(s);
        }
    });
    let cfg = Config::new()
        .host("127.0.0.1")
        .port(silent_port)
        .add_host("127.0.0.1", Some(server().tcp_port))
        .load_balancing(LoadBalancing::InOrder)
        .connect_timeout(Duration::from_millis(500));
    let client = Client::connect_with(cfg).await.unwrap();
    assert_eq!(client.fetch_scalar::<u8>("SELECT 3").await.unwrap(), 3);
    keeper.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pooled_client_recovers_after_the_server_restarts() {
    let own = std::sync::Arc::new(tokio::task::spawn_blocking(|| OwnServer::start("hosts-restart")).await.unwrap());
    let cfg = Config::from_url(&own.url("connect_timeout=2s&pool_health_check_after=0")).unwrap().pool_max_size(4);
    let client = Client::connect_with(cfg).await.unwrap();
    // Fill the pool with idle connections that the restart will kill.
    let mut streams = Vec::new();
    for _ in 0..4 {
        streams.push(client.fetch_blocks("SELECT 1").await.unwrap());
    }
    for s in streams {
        s.finish_all().await.unwrap();
    }
    assert_eq!(client.pool_status().idle, 4);
    // A query in flight while the server goes away fails; it is not retried.
    let inflight = {
        let c = client.clone();
        tokio::spawn(async move {
            c.execute("SELECT sleepEachRow(0.5) FROM numbers(100) SETTINGS max_block_size = 1").await
        })
    };
    // Restart once it runs (the server is this test's own: nothing else runs there).
    let running = "SELECT count() FROM system.processes WHERE query LIKE 'SELECT sleepEachRow(0.5)%'";
    for polls in 0.. {
        if own.http(running).trim() != "0" {
            break;
        }
        assert!(polls < 600, "the query never showed up in system.processes");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let restarting = own.clone();
    tokio::task::spawn_blocking(move || restarting.restart()).await.unwrap();
    assert!(inflight.await.unwrap().is_err(), "a query cut by the restart must fail, not be rerun");
    // No manual action: the stale connections are dropped at checkout and new ones opened.
    for i in 0..20u64 {
        let v: u64 = client
            .fetch_scalar(chnative::Query::new("SELECT {i:UInt64}").bind("i", i))
            .await
            .unwrap_or_else(|e| panic!("call {i} after the restart: {e}"));
        assert_eq!(v, i);
    }
    assert!(client.is_usable());
    drop(client);
    tokio::task::spawn_blocking(move || drop(own)).await.unwrap();
}
