//! Handshake, revisions, authentication, ping, server info.

use crate::common;
use common::*;

#[tokio::test]
async fn connects_at_every_revision_and_compression() {
    let (major, minor, _) = version();
    // The protocol revision of each server version the suite runs against.
    let server_revision = match (major, minor) {
        (24, 8) => Some(54469),
        (25, 8) => Some(54479),
        (26, 9) => Some(54492),
        _ => None,
    };
    for rev in REVISIONS {
        for comp in ["none", "lz4", "zstd"] {
            let c = client_at(rev, comp).await;
            let info = c.server_info();
            assert_eq!(info.name, "ClickHouse");
            assert_eq!((info.version.0, info.version.1), (major, minor));
            if let Some(r) = server_revision {
                assert_eq!(info.revision, r);
            }
            assert_eq!(info.negotiated_revision, rev.min(info.revision));
            assert!(!info.timezone.is_empty());
            c.ping().await.unwrap();
            let one: u8 = c.fetch_scalar("SELECT 1").await.unwrap();
            assert_eq!(one, 1);
            let v: String = c.fetch_scalar("SELECT version()").await.unwrap();
            assert!(v.starts_with(&format!("{major}.{minor}.")), "{v}");
        }
    }
}

#[tokio::test]
async fn password_user_and_wrong_password() {
    let s = server();
    let ok = chnative::Client::connect(&format!("clickhouse://chn_pw:secret@{}:{}/default", s.host, s.tcp_port))
        .await
        .expect("user with password");
    let me: String = ok.fetch_scalar("SELECT currentUser()").await.unwrap();
    assert_eq!(me, "chn_pw");

    let err = chnative::Client::connect(&format!("clickhouse://chn_pw:wrong@{}:{}/default", s.host, s.tcp_port))
        .await
        .expect_err("wrong password must fail");
    match err.as_server() {
        Some(e) => {
            assert_eq!(e.code, 516, "{e}");
            assert!(e.message.contains("password") || e.message.contains("Authentication"), "{e}");
        }
        None => panic!("expected a server error, got {err:?}"),
    }
}

#[tokio::test]
async fn unknown_database_is_a_server_error() {
    let s = server();
    let url = format!("clickhouse://default@{}:{}/no_such_db_xyz", s.host, s.tcp_port);
    // 25.x and later refuse the database in the handshake; 24.8 accepts the Hello and
    // refuses the first query.
    let err = if version() >= (25, 0, 0) {
        chnative::Client::connect(&url).await.expect_err("must fail")
    } else {
        let c = chnative::Client::connect(&url).await.unwrap();
        c.execute("SELECT 1").await.expect_err("must fail")
    };
    assert_eq!(err.server_code(), Some(81), "{err}");
}

#[tokio::test]
async fn ping_between_queries_and_settings_from_url() {
    let c = chnative::Client::connect(&url("set_max_threads=3&client_name=chn-test")).await.unwrap();
    c.ping().await.unwrap();
    let v: String = c.fetch_scalar("SELECT getSetting('max_threads')::String").await.unwrap();
    assert_eq!(v, "3");
    c.ping().await.unwrap();
}

#[tokio::test]
async fn unknown_setting_is_an_error() {
    // Settings from the caller carry the IMPORTANT flag, so a typo fails loudly
    // instead of being skipped by the server.
    let mut c = chnative::Connection::connect(&url("set_no_such_setting_xyz=1")).await.unwrap();
    let err = c.execute("SELECT 1").await.unwrap_err();
    assert_eq!(err.server_code(), Some(115), "{err}");
    match err.as_server() {
        Some(e) => assert!(e.message.contains("no_such_setting_xyz"), "{e}"),
        None => panic!("{err:?}"),
    }
    // The server closes the connection after rejecting a Query packet: the
    // client knows at once, and the next call names that first cause (not an
    // I/O error, not a hang or a misread).
    assert!(!c.is_usable());
    let next = c.ping().await;
    assert!(
        matches!(&next, Err(e) if e.kind() == chnative::ErrorKind::Closed && e.to_string().contains("115")),
        "{next:?}"
    );
    assert!(!c.is_usable());
}

#[tokio::test]
async fn server_exception_leaves_connection_usable() {
    let c = client().await;
    let err = c.execute(chnative::Query::new("SELECT throwIf(1, 'nope')")).await.unwrap_err();
    assert_eq!(err.server_code(), Some(395), "{err}");
    match err.as_server() {
        Some(e) => {
            assert_eq!(e.name, "DB::Exception");
            assert!(e.message.contains("nope"), "{e}");
            assert!(!e.stack_trace.is_empty());
        }
        None => panic!("{err:?}"),
    }
    assert!(c.is_usable());
    c.ping().await.unwrap();
    let one: u8 = c.fetch_scalar("SELECT 1").await.unwrap();
    assert_eq!(one, 1);
}
