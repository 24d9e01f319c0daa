//! The pooled `Client`: waiting for a slot, replacing failed connections,
//! options. (The many-task drop test is pool_stress.rs, on a server of its
//! own so that no other test's sockets or queries disturb its counts.)

use crate::common;

use std::time::Duration;

use chnative::{Client, Config};
use common::{eventually, url};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_pool_makes_callers_wait_and_times_out() {
    let cfg =
        Config::from_url(&url("")).unwrap().pool_max_size(2).pool_acquire_timeout(Some(Duration::from_millis(200)));
    let client = Client::connect_with(cfg).await.unwrap();
    let a = client.fetch_blocks("SELECT number FROM numbers(10)").await.unwrap();
    let b = client.fetch_blocks("SELECT number FROM numbers(10)").await.unwrap();
    assert_eq!(client.pool_status().in_use, 2);
    match client.ping().await {
        Err(e) if e.kind() == chnative::ErrorKind::Timeout => assert!(e.to_string().contains("pool"), "{e}"),
        other => panic!("{other:?}"),
    }
    // Finishing one frees a slot for the waiter.
    let waiter = {
        let client = client.clone();
        tokio::spawn(async move { client.fetch_scalar::<u8>("SELECT 7").await })
    };
    a.finish_all().await.unwrap();
    assert_eq!(waiter.await.unwrap().unwrap(), 7);
    drop(b);
    assert!(eventually(|| client.pool_status().in_use == 0).await);
    assert!(client.pool_status().size <= 2);
}

#[tokio::test]
async fn a_failed_connection_is_replaced_not_reused() {
    let client = Client::connect(&url("")).await.unwrap();
    // The server closes the connection after an unknown setting (code 115).
    let err = client.execute(chnative::Query::new("SELECT 1").setting("no_such_setting_pool", "1")).await.unwrap_err();
    assert_eq!(err.server_code(), Some(115));
    assert!(!client.is_usable());
    assert_eq!(client.pool_status().size, 0, "the closed connection left the pool");
    assert_eq!(client.fetch_scalar::<u8>("SELECT 1").await.unwrap(), 1);
    assert!(client.is_usable());
    assert_eq!(client.pool_status().size, 1);
}

#[tokio::test]
async fn min_idle_and_pool_options_from_the_url() {
    let client = Client::connect(&url("pool_max_size=5&pool_min_idle=3&pool_idle_timeout=1h")).await.unwrap();
    assert!(eventually(|| client.pool_status().idle >= 3).await, "{:?}", client.pool_status());
    assert_eq!(client.pool_status().max_size, 5);
}

#[test]
fn client_is_send_sync_and_cheap_to_clone() {
    fn check<T: Send + Sync + Clone + 'static>() {}
    check::<Client>();
    fn send<T: Send>() {}
    send::<chnative::Session>();
}

#[tokio::test]
async fn a_connection_past_its_lifetime_is_closed_when_it_comes_back() {
    let cfg = Config::from_url(&url("")).unwrap().pool_max_lifetime(Some(Duration::from_nanos(1)));
    let client = Client::connect_with(cfg).await.unwrap();
    for i in 0..3u8 {
        assert_eq!(client.fetch_scalar::<u8>(chnative::Query::new("SELECT {i:UInt8}").bind("i", i)).await.unwrap(), i);
        assert_eq!(client.pool_status().size, 0, "{:?}", client.pool_status());
    }
    // Health checks on every checkout still hand out working connections.
    let cfg =
        Config::from_url(&url("pool_health_check_after=1ms")).unwrap().pool_health_check_after(Some(Duration::ZERO));
    let client = Client::connect_with(cfg).await.unwrap();
    for _ in 0..3 {
        assert_eq!(client.fetch_scalar::<u8>("SELECT 1").await.unwrap(), 1);
        assert_eq!(client.pool_status().size, 1);
    }
}
