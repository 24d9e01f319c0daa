//! TLS through an in-process TLS terminator (tests/common_tls) in front of the
//! real server's plaintext port, with certificates made in-process: the
//! server's, a wrong CA, an expired one, a client certificate, and the two
//! port mix-ups. Every failure is a clear error that arrives well within the
//! connect timeout. Nothing outside the test binary is needed (no openssl, no
//! socat).

use crate::common;
use crate::common_tls;

use std::sync::OnceLock;
use std::time::Duration;

use chnative::{Client, Config, Connection, Error};
use common::server;
use common_tls::{certs, TlsProxy};

/// The shared proxy presenting the server certificate, started on first use;
/// its port.
fn tls_port() -> u16 {
    static PROXY: OnceLock<TlsProxy> = OnceLock::new();
    PROXY.get_or_init(|| TlsProxy::start(server().tcp_port, &certs().server, None)).port()
}

/// The certificate of the shared proxy (trusted as a root by the tests).
fn proxy_cert() -> String {
    certs().server.cert_file()
}

const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Connects (through the pool, then one socket) and runs a query; the error
/// must come back within the connect timeout, never hang.
async fn try_connect(cfg: Config) -> chnative::Result<u8> {
    let cfg = cfg.connect_timeout(CONNECT_TIMEOUT);
    let r = tokio::time::timeout(CONNECT_TIMEOUT * 3, async {
        let client = Client::connect_with(cfg.clone()).await?;
        let one: u8 = client.fetch_scalar("SELECT 1").await?;
        let mut conn = Connection::connect_with(cfg).await?;
        assert_eq!(conn.fetch_scalar::<u8>("SELECT 2").await?, 2);
        Ok(one)
    })
    .await;
    r.expect("a TLS failure hung past the connect timeout")
}

fn tls_cfg(port: u16) -> Config {
    Config::from_url(&format!("clickhouses://default@127.0.0.1:{port}/default")).unwrap()
}

fn expect_err(r: chnative::Result<u8>, needle: &str) -> Error {
    let e = r.expect_err("should fail");
    assert!(e.to_string().contains(needle), "expected `{needle}` in: {e}");
    e
}

#[tokio::test]
async fn tls_with_a_custom_ca_works_by_url_and_by_builder() {
    let cert = proxy_cert();
    let url = format!("clickhouse://default@127.0.0.1:{}/default?secure=true&tls_ca_file={cert}", tls_port());
    assert_eq!(try_connect(Config::from_url(&url).unwrap()).await.unwrap(), 1);
    // By name: the certificate names localhost too.
    let cfg = Config::from_url(&format!("clickhouses://default@localhost:{}/default", tls_port()))
        .unwrap()
        .tls_ca_file(&cert);
    assert_eq!(try_connect(cfg).await.unwrap(), 1);
    // Streams and inserts run over TLS like over TCP.
    let client = Client::connect_with(tls_cfg(tls_port()).tls_ca_file(&cert)).await.unwrap();
    let n: u64 = client.fetch_scalar("SELECT sum(number) FROM numbers(100000)").await.unwrap();
    assert_eq!(n, 4_999_950_000);
}

#[tokio::test]
async fn uncompressed_columns_arrive_straight_from_the_tls_stream() {
    // Fixed-width values are read from the TLS stream into the column's buffer.
    let cert = proxy_cert();
    let cfg = tls_cfg(tls_port()).tls_ca_file(cert).compression(chnative::Compression::None);
    let client = Client::connect_with(cfg).await.unwrap();
    let mut s = client.fetch_blocks("SELECT number FROM numbers(3000000)").await.unwrap();
    let (mut rows, mut sum) = (0u64, 0u64);
    while let Some(b) = s.next().await.unwrap() {
        let v: &[u64] = b.column("number").unwrap().view().values().unwrap();
        assert!(v.iter().enumerate().all(|(i, &x)| x == rows + i as u64));
        rows += v.len() as u64;
        sum += v.iter().sum::<u64>();
    }
    assert_eq!((rows, sum), (3_000_000, 3_000_000 * 2_999_999 / 2));
    assert!(s.direct_bytes() > 0, "no bytes came straight from the TLS stream");
}

#[tokio::test]
async fn an_untrusted_certificate_is_refused() {
    // Only the system roots: the proxy's self-signed certificate is unknown.
    expect_err(try_connect(tls_cfg(tls_port())).await, "invalid peer certificate");
    // A CA file that is not the one that signed the certificate.
    expect_err(
        try_connect(tls_cfg(tls_port()).tls_ca_file(&certs().other.cert_path)).await,
        "invalid peer certificate",
    );
}

#[tokio::test]
async fn a_certificate_for_another_name_is_refused_unless_explicitly_allowed() {
    let cert = proxy_cert();
    let cfg = tls_cfg(tls_port()).tls_ca_file(&cert).tls_server_name("db.example.org");
    expect_err(try_connect(cfg.clone()).await, "not valid for name");
    assert_eq!(try_connect(cfg.danger_disable_hostname_verification()).await.unwrap(), 1);
    // The loud option skips the name only, never the chain.
    let cfg = tls_cfg(tls_port()).tls_server_name("db.example.org").danger_disable_hostname_verification();
    expect_err(try_connect(cfg).await, "invalid peer certificate");
}

#[tokio::test]
async fn an_expired_certificate_is_refused() {
    let c = certs();
    let proxy = TlsProxy::start(server().tcp_port, &c.expired, None);
    let cfg = tls_cfg(proxy.port()).tls_ca_file(&c.expired.cert_path);
    expect_err(try_connect(cfg).await, "certificate expired");
}

#[tokio::test]
async fn mutual_tls_with_a_client_certificate() {
    let c = certs();
    let proxy = TlsProxy::start(server().tcp_port, &c.server, Some(&c.client));
    let cfg = tls_cfg(proxy.port()).tls_ca_file(&c.server.cert_path);
    // Without a client certificate the server side refuses the handshake.
    let e = try_connect(cfg.clone()).await.expect_err("a client certificate is required");
    eprintln!("no client certificate: {e}");
    assert!(e.is_connect(), "{e:?}");
    let cfg = cfg.tls_client_cert(&c.client.cert_path, &c.client.key_path);
    assert_eq!(try_connect(cfg).await.unwrap(), 1);
}

#[tokio::test]
async fn plaintext_to_the_tls_port_and_tls_to_the_plaintext_port_fail_fast() {
    let plain_to_tls = Config::from_url(&format!("clickhouse://default@127.0.0.1:{}/default", tls_port())).unwrap();
    let e = try_connect(plain_to_tls).await.expect_err("plaintext to a TLS port");
    eprintln!("plaintext client to the TLS port: {e}");
    assert!(e.to_string().contains("secure=true") || e.kind() == chnative::ErrorKind::Timeout, "{e}");
    let cert = proxy_cert();
    let tls_to_plain = tls_cfg(server().tcp_port).tls_ca_file(&cert);
    let e = try_connect(tls_to_plain).await.expect_err("TLS to a plaintext port");
    eprintln!("TLS client to the plaintext port: {e}");
    assert!(e.to_string().contains("TLS") || e.kind() == chnative::ErrorKind::Timeout, "{e}");
}

#[test]
fn bad_tls_files_are_config_errors() {
    let cfg = tls_cfg(1).tls_ca_file("/nonexistent/ca.pem");
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let e = rt.block_on(Client::connect_with(cfg)).unwrap_err();
    assert!(e.kind() == chnative::ErrorKind::Config, "{e:?}");
    let empty = std::env::temp_dir().join(format!("chn-empty-{}.pem", std::process::id()));
    std::fs::write(&empty, "not a certificate\n").unwrap();
    let e = rt.block_on(Client::connect_with(tls_cfg(1).tls_ca_file(&empty))).unwrap_err();
    assert!(e.to_string().contains("no certificate"), "{e}");
    let _ = std::fs::remove_file(empty);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tls_connection_closed_while_idle_is_replaced_at_checkout() {
    let c = certs();
    let first = TlsProxy::start(server().tcp_port, &c.server, None);
    let port = first.port();
    // No health-check ping: the dead connection must be noticed without one.
    let cfg = tls_cfg(port).tls_ca_file(&c.server.cert_path).pool_max_size(1).pool_health_check_after(None);
    let client = Client::connect_with(cfg).await.unwrap();
    assert_eq!(client.fetch_scalar::<u8>("SELECT 1").await.unwrap(), 1);
    // The proxy dies, closing every connection it carries: the idle TLS
    // connection is closed. Another one takes over the same port.
    drop(first);
    let second = TlsProxy::start_at(port, server().tcp_port, &c.server, None);
    // Loopback delivers the close at once; this only lets the runtime see it.
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(client.fetch_scalar::<u8>("SELECT 2").await.unwrap(), 2, "the stale connection was reused");
    assert_eq!(second.accepted(), 1, "the query did not run on a new connection");
}
