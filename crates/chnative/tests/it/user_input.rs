//! User input against the real server: table names are quoted, never spliced;
//! malformed setting and parameter names are refused before anything is sent and
//! leave the connection usable; connection-string options mean what they say.

use crate::common;

use chnative::{params, Client, Config, ErrorKind, Query};
use common::{client, http, server, unique_table, url};

fn count(table: &str) -> u64 {
    http(&format!("SELECT count() FROM {table}")).trim().parse().unwrap()
}

/// Drops the tables when the test ends, however it ends.
struct Tables(Vec<String>);

impl Drop for Tables {
    fn drop(&mut self) {
        for t in &self.0 {
            common::http_try(&format!("DROP TABLE IF EXISTS {t}"));
        }
    }
}

#[tokio::test]
async fn injected_table_names_run_nothing() {
    let t = unique_table("chn_inj");
    let _cleanup = Tables(vec![t.clone()]);
    http(&format!("CREATE TABLE {t} (a UInt64) ENGINE = Memory"));
    let c = client().await;
    let a = [1u64];
    for name in [
        format!("{t} (a) SELECT 7 --"),
        format!("{t} (a) SELECT 7; --"),
        format!("{t} (a) VALUES (8) --"),
        format!("{t} SELECT 9 FORMAT Native --"),
        format!("`{t}` (a) SELECT 7 --"),
        format!("{t}` (a) SELECT 7 --"),
        format!("default.{t} (a) SELECT 7 --"),
        format!("{t}\\` (a) SELECT 7 --"),
    ] {
        let err = c.insert(&name).column("a", &a[..]).send().await.unwrap_err();
        // Either the quoted name names no table, or the name is refused before sending.
        assert!(
            err.server_code() == Some(60) || err.kind() == ErrorKind::InvalidInput,
            "{name:?} must not run: {err:?}"
        );
        assert_eq!(count(&t), 0, "{name:?} inserted rows");
        assert!(c.is_usable(), "{name:?}");
    }
    c.ping().await.unwrap();
}

#[tokio::test]
async fn qualified_and_unusual_table_names_still_work() {
    let plain = unique_table("chn_q");
    let spaced = format!("{} has `ticks` and \\ \"quotes\"", unique_table("chn q"));
    let spaced_sql = format!("`{}`", spaced.replace('\\', "\\\\").replace('`', "\\`"));
    let dotted = unique_table("chn.dot");
    let _cleanup = Tables(vec![plain.clone(), format!("default.{spaced_sql}"), format!("`{dotted}`")]);
    for t in [plain.clone(), spaced_sql.clone(), format!("`{dotted}`")] {
        http(&format!("CREATE TABLE default.{t} (a UInt64) ENGINE = Memory"));
    }
    let c = client().await;
    let a = [5u64];
    let cases = [
        (plain.clone(), plain.clone()),
        (format!("default.{plain}"), plain.clone()),
        (format!("`default`.`{plain}`"), plain.clone()),
        (format!("\"default\".\"{plain}\""), plain.clone()),
        (spaced.clone(), spaced_sql.clone()),
        (format!("default.{spaced_sql}"), spaced_sql.clone()),
        (format!("`{dotted}`"), format!("`{dotted}`")),
        (format!("default.`{dotted}`"), format!("`{dotted}`")),
    ];
    for (n, (name, sql_name)) in cases.iter().enumerate() {
        let before = count(&format!("default.{sql_name}"));
        c.insert(name).column("a", &a[..]).send().await.unwrap_or_else(|e| panic!("{name:?}: {e}"));
        assert_eq!(count(&format!("default.{sql_name}")), before + 1, "case {n}: {name:?}");
    }
}

#[tokio::test]
async fn malformed_table_names_are_refused_before_sending() {
    let c = client().await;
    let a = [1u64];
    for name in ["", "a.b.c", "db.", ".t", "`t", "t\n", "a\0b"] {
        let err = c.insert(name).column("a", &a[..]).send().await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput, "{name:?}: {err}");
        assert!(c.is_usable());
    }
    assert_eq!(c.fetch_scalar::<u8>("SELECT 1").await.unwrap(), 1);
}

#[tokio::test]
async fn empty_or_malformed_setting_names_are_refused_and_the_connection_stays_usable() {
    let c = client().await;
    for name in ["", " ", "max threads", "max_threads\0", "1x"] {
        let err = c.execute(Query::new("SELECT 1").setting(name, "1")).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput, "{name:?}: {err}");
        assert!(!err.is_closed());
        assert!(c.is_usable());
        assert_eq!(c.fetch_scalar::<u8>("SELECT 1").await.unwrap(), 1, "after {name:?}");
    }
    // A good setting still goes through.
    let v: String = c
        .fetch_scalar(Query::new("SELECT getSetting('max_threads')::String").setting("max_threads", "3"))
        .await
        .unwrap();
    assert_eq!(v, "3");
}

#[tokio::test]
async fn empty_or_malformed_parameter_names_are_refused_and_the_connection_stays_usable() {
    let c = client().await;
    let queries = [
        Query::new("SELECT {x:UInt8}").bind("x", 1u8).bind("", 2u8),
        Query::new("SELECT 1").bind("", 2u8),
        Query::new("SELECT 1").params(params! { "a b" => 1u8 }),
        Query::new("SELECT 1").params(params! { "x\0" => "v" }),
    ];
    for q in queries {
        let err = c.execute(q).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
        assert!(c.is_usable());
        assert_eq!(c.fetch_scalar::<u8>("SELECT {x:UInt8}".to_string()).await.unwrap_err().server_code(), Some(456));
        assert_eq!(c.fetch_scalar::<u8>(("SELECT {x:UInt8}", params! {"x" => 4u8})).await.unwrap(), 4);
    }
}

#[tokio::test]
async fn empty_insert_setting_name_is_refused_before_sending() {
    let t = unique_table("chn_inset");
    let _cleanup = Tables(vec![t.clone()]);
    http(&format!("CREATE TABLE {t} (a UInt64) ENGINE = Memory"));
    let c = client().await;
    let a = [1u64];
    let err = c.insert(&t).setting("", "1").column("a", &a[..]).send().await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
    assert!(c.is_usable());
    c.insert(&t).setting("max_threads", "1").column("a", &a[..]).send().await.unwrap();
    assert_eq!(count(&t), 1);
}

#[tokio::test]
async fn config_with_an_empty_setting_name_is_refused_at_connect() {
    let cfg = Config::from_url(&url("")).unwrap().setting("", "1");
    let err = Client::connect_with(cfg).await.expect_err("must be refused");
    assert_eq!(err.kind(), ErrorKind::Config, "{err}");
}

#[tokio::test]
async fn connect_timeout_zero_means_no_deadline() {
    let c = Client::connect(&url("connect_timeout=0&read_timeout=0")).await.unwrap();
    assert_eq!(c.fetch_scalar::<u8>("SELECT 1").await.unwrap(), 1);
}

#[tokio::test]
async fn zstd_levels_at_the_ends_of_the_range_work() {
    // ClickHouse refuses levels above 22 (code 433) and takes 0 and negative ones.
    for level in [22, 0, -131072] {
        let c = Client::connect(&url(&format!("compression=zstd:{level}"))).await.unwrap();
        let n: u64 = c.fetch_scalar("SELECT sum(number) FROM numbers(100000)").await.unwrap();
        assert_eq!(n, 4_999_950_000, "level {level}");
    }
    assert_eq!(Client::connect(&url("compression=zstd:23")).await.err().unwrap().kind(), ErrorKind::Config);
}

#[tokio::test]
async fn refused_connection_is_retryable() {
    // A port that was free a moment ago: nothing listens there now.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let err = Client::connect(&format!("clickhouse://127.0.0.1:{port}")).await.expect_err("nothing listens");
    assert_eq!(err.kind(), ErrorKind::Io, "{err:?}");
    assert!(err.is_retryable() && err.is_closed(), "{err:?}");
    // A server exception is not.
    let _ = server();
    let c = client().await;
    let err = c.execute("SELECT throwIf(1)").await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Server);
    assert!(!err.is_retryable() && !err.is_closed());
}

#[tokio::test]
async fn wrong_password_is_a_server_error_at_connect() {
    let s = server();
    let err = Client::connect(&format!("clickhouse://chn_pw:wrong@{}:{}", s.host, s.tcp_port)).await.err().unwrap();
    assert_eq!(err.server_code(), Some(516), "{err}");
    assert!(!err.is_retryable());
    // The right password, written with escapes, works.
    let c = Client::connect(&format!("clickhouse://chn_pw:%73ecret@{}:{}", s.host, s.tcp_port)).await.unwrap();
    c.ping().await.unwrap();
}
