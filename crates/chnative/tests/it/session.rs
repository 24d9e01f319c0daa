//! Sessions: one pooled connection pinned for calls that share server state.

use crate::common;

use chnative::{Client, Config};
use common::{http, unique_table, url};

#[tokio::test]
async fn temporary_tables_settings_and_use_survive_across_calls() {
    let db = unique_table("chn_session_db");
    http(&format!("CREATE DATABASE {db}"));
    let client = Client::connect_with(Config::from_url(&url("")).unwrap().pool_max_size(4)).await.unwrap();
    {
        let mut s = client.session().await.unwrap();
        s.execute("CREATE TEMPORARY TABLE chn_tmp (id UInt64)").await.unwrap();
        s.insert("chn_tmp").column("id", &[1u64, 2, 3][..]).send().await.unwrap();
        s.execute("INSERT INTO chn_tmp SELECT number + 10 FROM numbers(7)").await.unwrap();
        s.execute("SET max_threads = 3").await.unwrap();
        s.execute(format!("USE {db}")).await.unwrap();
        assert_eq!(s.fetch_scalar::<u64>("SELECT count() FROM chn_tmp").await.unwrap(), 10);
        assert_eq!(s.fetch_scalar::<String>("SELECT getSetting('max_threads')::String").await.unwrap(), "3");
        assert_eq!(s.fetch_scalar::<String>("SELECT currentDatabase()").await.unwrap(), db);
        // A stream through the session borrows it like a single connection.
        let mut st = s.fetch_blocks("SELECT id FROM chn_tmp ORDER BY id").await.unwrap();
        let mut n = 0;
        while let Some(b) = st.next().await.unwrap() {
            n += b.rows();
        }
        assert_eq!(n, 10);
        drop(st);
        s.ping().await.unwrap();
        assert!(s.is_usable());
        assert_eq!(client.pool_status().in_use, 1);
    }
    // The session's socket is closed, not pooled: none of its state leaks.
    assert_eq!(client.pool_status().in_use, 0);
    for _ in 0..4 {
        assert_eq!(client.fetch_scalar::<String>("SELECT currentDatabase()").await.unwrap(), "default");
        assert_ne!(client.fetch_scalar::<String>("SELECT getSetting('max_threads')::String").await.unwrap(), "3");
        let e = client.fetch_scalar::<u64>("SELECT count() FROM chn_tmp").await.unwrap_err();
        assert_eq!(e.server_code(), Some(60), "{e}");
    }
    http(&format!("DROP DATABASE {db}"));
}

#[tokio::test]
async fn a_session_dropped_mid_query_frees_its_slot() {
    let client = Client::connect_with(Config::from_url(&url("")).unwrap().pool_max_size(1)).await.unwrap();
    let mut s = client.session().await.unwrap();
    let st = s.fetch_blocks("SELECT number FROM system.numbers").await.unwrap();
    drop(st);
    drop(s);
    assert_eq!(client.pool_status().in_use, 0);
    assert_eq!(client.fetch_scalar::<u8>("SELECT 1").await.unwrap(), 1);
}
