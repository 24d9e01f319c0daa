//! Every error a new user meets first says what happened and what to do:
//! server errors carry the code's name, `Debug` holds no stack trace dump,
//! a wrong port (HTTP, TLS) is named as such at once, connect errors name the
//! host and port, and an untrusted certificate names `tls_ca_file`.

use crate::common;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chnative::{Client, Config, Connection, Error, ErrorKind};
use common::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Connects with the default connect timeout (10 s), returning the error and
/// how long it took to come (printed, never asserted on: that a wrong port is named
/// at once shows in the error itself, as waiting out the connect timeout ends in a
/// timeout error instead).
async fn connect_err(cfg: Config) -> (Error, Duration) {
    let started = Instant::now();
    let r = tokio::time::timeout(Duration::from_secs(30), Client::connect_with(cfg)).await;
    let e = r.expect("connecting hung").expect_err("connecting should fail");
    (e, started.elapsed())
}

fn cfg_at(host: &str, port: u16) -> Config {
    Config::new().host(host).port(port)
}

// ---- server errors ----

#[tokio::test]
async fn server_errors_show_the_code_name_and_the_message_on_one_line() {
    let c = client().await;
    let e = c.execute("SELECT * FROM default.errors_hints_no_such_table").await.unwrap_err();
    let Some(s) = e.as_server() else { panic!("{e:?}") };
    assert_eq!((s.code, s.code_name()), (60, Some("UNKNOWN_TABLE")));
    // The server's own message, without the class name it starts with.
    let text = s.message.strip_prefix("DB::Exception: ").expect("the server's message starts with its class");
    assert!(text.contains("errors_hints_no_such_table"), "{text}");
    assert_eq!(e.to_string(), format!("server error UNKNOWN_TABLE (60): {text}"));
    assert_eq!(s.to_string(), format!("UNKNOWN_TABLE (60): {text}"));

    let e = c.execute("SELEC 1").await.unwrap_err();
    assert_eq!(e.server_code(), Some(62));
    let shown = e.to_string();
    assert!(shown.starts_with("server error SYNTAX_ERROR (62): Syntax error"), "{shown}");
    assert!(!shown.contains('\n') && !shown.contains("DB::Exception"), "{shown}");
}

#[tokio::test]
async fn debug_of_a_server_error_has_no_stack_trace() {
    let c = client().await;
    let e = c.execute("SELECT throwIf(1, 'errors_hints debug')").await.unwrap_err();
    let Some(s) = e.as_server() else { panic!("{e:?}") };
    let trace_lines = s.stack_trace.lines().count();
    assert!(trace_lines > 1, "the server sends a stack trace: {:?}", s.stack_trace);
    let first_frame = s.stack_trace.lines().next().unwrap();
    for shown in [format!("{e:?}"), format!("{e:#?}"), format!("{s:?}"), format!("{:?}", Err::<(), _>(&e))] {
        assert!(!shown.contains(first_frame), "{shown}");
        assert!(!shown.contains(" @ 0x"), "{shown}");
        assert!(shown.contains(&format!("<{trace_lines} lines>")), "{shown}");
        assert!(
            shown.contains("FUNCTION_THROW_IF_VALUE_IS_NON_ZERO") && shown.contains("errors_hints debug"),
            "{shown}"
        );
    }
    assert_eq!(format!("{e:?}").lines().count(), 1);
}

// ---- wrong ports ----

#[tokio::test]
async fn the_http_port_is_named_as_such_at_once() {
    let s = server();
    let (e, took) = connect_err(cfg_at(&s.host, s.http_port)).await;
    eprintln!("HTTP port ({took:?}): {e}");
    assert_eq!(e.kind(), ErrorKind::Config, "{e:?}");
    let shown = e.to_string();
    assert!(shown.contains(&format!("connecting to 127.0.0.1:{} failed", s.http_port)), "{shown}");
    assert!(shown.contains("this is ClickHouse's HTTP port"), "{shown}");
    assert!(shown.contains("native protocol is on port 9000 (9440 with TLS)"), "{shown}");
    // The single-socket Connection says the same.
    let e = Connection::connect_with(cfg_at(&s.host, s.http_port)).await.unwrap_err();
    assert!(e.to_string().contains("this is ClickHouse's HTTP port"), "{e}");
}

/// Accepts connections on loopback and answers each with `answer` once it has
/// read `until` (or, when `until` is empty, once any bytes arrived).
async fn http_responder(until: &'static [u8], answer: &'static [u8]) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else { return };
            tokio::spawn(async move {
                let mut got = Vec::new();
                let mut buf = [0u8; 1024];
                loop {
                    let Ok(n) = sock.read(&mut buf).await else { return };
                    if n == 0 {
                        return;
                    }
                    got.extend_from_slice(&buf[..n]);
                    if until.is_empty() || got.windows(until.len()).any(|w| w == until) {
                        break;
                    }
                }
                let _ = sock.write_all(answer).await;
                let _ = sock.shutdown().await;
                // Hold the socket until the client is done with it.
                let _ = sock.read(&mut buf).await;
            });
        }
    });
    port
}

#[tokio::test]
async fn an_http_server_that_answers_at_once_is_named() {
    let port = http_responder(b"", b"HTTP/1.1 404 Not Found\r\nServer: nginx\r\nContent-Length: 0\r\n\r\n").await;
    let (e, took) = connect_err(cfg_at("127.0.0.1", port)).await;
    eprintln!("HTTP answer ({took:?}): {e}");
    assert_eq!(e.kind(), ErrorKind::Config, "{e:?}");
    let shown = e.to_string();
    assert!(shown.contains(&format!("connecting to 127.0.0.1:{port} failed")), "{shown}");
    assert!(shown.contains("answered in HTTP (`HTTP/1.1 404 Not Found`)"), "{shown}");
    assert!(shown.contains("this is an HTTP port") && shown.contains("port 9000"), "{shown}");
    assert!(!shown.contains("packet code 72"), "{shown}");
}

#[tokio::test]
async fn an_http_server_that_waits_for_a_request_is_found_by_the_probe() {
    // Like most HTTP servers, it says nothing until a request's head is complete.
    let port = http_responder(b"\r\n\r\n", b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi").await;
    let (e, took) = connect_err(cfg_at("127.0.0.1", port)).await;
    eprintln!("silent HTTP server ({took:?}): {e}");
    let shown = e.to_string();
    assert!(shown.contains("the port answers HTTP (`HTTP/1.1 200 OK`): this is an HTTP port"), "{shown}");
}

/// A proxy to the real native port that holds the server's first answer back
/// for `delay`, as a slow server would (for each connection, the HTTP probe's too).
async fn slow_native_proxy(delay: Duration) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let upstream = format!("127.0.0.1:{}", server().tcp_port);
    tokio::spawn(async move {
        loop {
            let Ok((client, _)) = listener.accept().await else { return };
            let upstream = upstream.clone();
            tokio::spawn(async move {
                let Ok(server) = TcpStream::connect(&upstream).await else { return };
                let (mut cr, mut cw) = client.into_split();
                let (mut sr, mut sw) = server.into_split();
                tokio::spawn(async move {
                    let _ = tokio::io::copy(&mut cr, &mut sw).await;
                    let _ = sw.shutdown().await;
                });
                tokio::time::sleep(delay).await;
                let _ = tokio::io::copy(&mut sr, &mut cw).await;
                let _ = cw.shutdown().await;
            });
        }
    });
    port
}

#[tokio::test]
async fn a_slow_native_server_is_not_taken_for_an_http_port() {
    // Past the moment the client starts asking whether the port speaks HTTP.
    let port = slow_native_proxy(Duration::from_millis(2500)).await;
    let c = Client::connect_with(cfg_at("127.0.0.1", port)).await.expect("a slow native server still connects");
    assert_eq!(c.fetch_scalar::<u8>("SELECT 3").await.unwrap(), 3);
}

// ---- connect errors name the host ----

/// A loopback port nothing listens on.
fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

#[tokio::test]
async fn a_refused_connect_names_the_host_and_port() {
    let port = closed_port();
    let (e, _) = connect_err(cfg_at("127.0.0.1", port)).await;
    assert!(e.is_connect() && e.is_retryable(), "{e:?}");
    let shown = e.to_string();
    assert!(shown.starts_with(&format!("connecting to 127.0.0.1:{port} failed: ")), "{shown}");
    assert!(shown.to_lowercase().contains("refused"), "{shown}");
    // The OS error stays reachable under the text.
    let io = e.as_io().unwrap();
    assert_eq!(io.kind(), std::io::ErrorKind::ConnectionRefused);
    let source = std::error::Error::source(io.get_ref().unwrap()).unwrap();
    assert!(source.downcast_ref::<std::io::Error>().is_some(), "{source:?}");

    // The host as configured, not the address it resolved to.
    let (e, _) = connect_err(cfg_at("localhost", port)).await;
    assert!(e.to_string().starts_with(&format!("connecting to localhost:{port} failed: ")), "{e}");
}

#[tokio::test]
async fn a_connect_timeout_names_the_host_and_port() {
    // A port that accepts the TCP connection and never says anything: the
    // handshake runs into the connect timeout.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let cfg = cfg_at("localhost", port).connect_timeout(Duration::from_millis(1500));
    let (e, _) = connect_err(cfg.clone()).await;
    assert!(e.is_connect() && e.is_retryable(), "{e:?}");
    assert_eq!(e.kind(), ErrorKind::Timeout);
    let shown = e.to_string();
    assert!(shown.starts_with(&format!("connecting to localhost:{port} failed: timed out after 1.5s")), "{shown}");
    assert!(shown.contains("connect_timeout"), "{shown}");

    // With a second host, both are named, whatever each failure was.
    let closed = closed_port();
    let (e, _) = connect_err(cfg.add_host("127.0.0.1", Some(closed))).await;
    let shown = e.to_string();
    assert!(shown.contains(&format!("connecting to localhost:{port} failed: timed out")), "{shown}");
    assert!(shown.contains(&format!("connecting to 127.0.0.1:{closed} failed: ")), "{shown}");
    drop(silent);
}

#[tokio::test]
async fn with_several_hosts_each_failure_is_named() {
    let (p1, p2) = (closed_port(), closed_port());
    let cfg = cfg_at("127.0.0.1", p1).add_host("localhost", Some(p2));
    let (e, _) = connect_err(cfg).await;
    assert!(e.is_connect(), "{e:?}");
    let shown = e.to_string();
    assert!(shown.starts_with("no host answered: "), "{shown}");
    assert!(shown.contains(&format!("connecting to 127.0.0.1:{p1} failed: ")), "{shown}");
    assert!(shown.contains(&format!("; connecting to localhost:{p2} failed: ")), "{shown}");
}

// ---- TLS ----

/// A self-signed certificate for `localhost` and its key, in PEM.
fn self_signed() -> (String, String) {
    let ck = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    (ck.cert.pem(), ck.signing_key.serialize_pem())
}

/// A TLS server on loopback with the given certificate that only does handshakes.
async fn tls_acceptor(cert_pem: &str, key_pem: &str) -> u16 {
    use tokio_rustls::rustls::pki_types::pem::PemObject;
    use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
    use tokio_rustls::rustls::ServerConfig;
    let cert = CertificateDer::from_pem_slice(cert_pem.as_bytes()).unwrap();
    let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes()).unwrap();
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert], key)
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let Ok((sock, _)) = listener.accept().await else { return };
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                if let Ok(mut tls) = acceptor.accept(sock).await {
                    let mut buf = [0u8; 1024];
                    let _ = tls.read(&mut buf).await;
                }
            });
        }
    });
    port
}

fn temp_pem(name: &str, pem: &str) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("chn-errors-{}-{name}.pem", std::process::id()));
    std::fs::write(&path, pem).unwrap();
    path
}

#[tokio::test]
async fn an_untrusted_certificate_names_tls_ca_file() {
    let (cert, key) = self_signed();
    let port = tls_acceptor(&cert, &key).await;
    // Trust another CA (so the roots are not empty on a machine without a system store).
    let mut params = rcgen::CertificateParams::new(vec!["other.invalid".to_string()]).unwrap();
    params.distinguished_name.push(rcgen::DnType::CommonName, "chnative errors_hints other CA");
    let other = params.self_signed(&rcgen::KeyPair::generate().unwrap()).unwrap();
    let other = temp_pem("other-ca", &other.pem());
    let cfg = cfg_at("localhost", port).secure(true).tls_ca_file(&other);
    let (e, took) = connect_err(cfg).await;
    eprintln!("untrusted certificate ({took:?}): {e}");
    assert!(e.is_connect(), "{e:?}");
    let shown = e.to_string();
    assert!(shown.starts_with(&format!("connecting to localhost:{port} failed: TLS handshake failed: ")), "{shown}");
    assert!(shown.contains("UnknownIssuer"), "{shown}");
    assert!(shown.contains("tls_ca_file=<path to the CA certificate> (URL option) or Config::tls_ca_file"), "{shown}");

    // With the right CA file the same server is trusted: the TLS handshake
    // passes, and this TLS-only server then hangs up on the native Hello.
    let ca = temp_pem("ca", &cert);
    let (e, _) = connect_err(cfg_at("localhost", port).secure(true).tls_ca_file(&ca)).await;
    assert!(!e.to_string().contains("certificate"), "{e}");
    let _ = std::fs::remove_file(other);
    let _ = std::fs::remove_file(ca);
}

#[tokio::test]
async fn a_certificate_for_another_name_names_tls_server_name() {
    let (cert, key) = self_signed();
    let port = tls_acceptor(&cert, &key).await;
    let ca = temp_pem("name-ca", &cert);
    let (e, _) = connect_err(cfg_at("127.0.0.1", port).secure(true).tls_ca_file(&ca)).await;
    let shown = e.to_string();
    assert!(shown.contains("not valid for name") && shown.contains("tls_server_name=<that name>"), "{shown}");
    let _ = std::fs::remove_file(ca);
}

#[tokio::test]
async fn plaintext_to_a_tls_port_says_secure() {
    let (cert, key) = self_signed();
    let port = tls_acceptor(&cert, &key).await;
    let (e, took) = connect_err(cfg_at("localhost", port)).await;
    eprintln!("plaintext to TLS ({took:?}): {e}");
    let shown = e.to_string();
    assert!(shown.contains(&format!("connecting to localhost:{port} failed: ")), "{shown}");
    assert!(shown.contains("secure=true"), "{shown}");
}

#[tokio::test]
async fn tls_to_a_plaintext_port_says_so() {
    let (e, took) = connect_err(cfg_at("127.0.0.1", server().tcp_port).secure(true)).await;
    eprintln!("TLS to plaintext ({took:?}): {e}");
    let shown = e.to_string();
    assert!(shown.contains("did not answer in TLS") && shown.contains("plaintext port"), "{shown}");
}

/// Without system roots (`SSL_CERT_FILE` pointing nowhere, in a child process
/// so no other test sees it) the error names both ways out.
#[test]
fn no_trusted_roots_hints_at_tls_ca_file_and_webpki_roots() {
    const CHILD: &str = "CHNATIVE_ERRORS_HINTS_CHILD";
    if std::env::var_os(CHILD).is_none() {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "errors_hints::no_trusted_roots_hints_at_tls_ca_file_and_webpki_roots", "--nocapture"])
            .env(CHILD, "1")
            .env("SSL_CERT_FILE", "/nonexistent/chnative-no-roots.pem")
            .env("SSL_CERT_DIR", "/nonexistent/chnative-no-roots")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && text.contains("1 passed"), "{text}");
        return;
    }
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let e = rt.block_on(Client::connect_with(cfg_at("localhost", 1).secure(true))).unwrap_err();
    eprintln!("no roots: {e}");
    assert_eq!(e.kind(), ErrorKind::Config, "{e:?}");
    let shown = e.to_string();
    assert!(shown.contains("no trusted root certificates: the system's certificates could not be loaded"), "{shown}");
    assert!(shown.contains("tls_ca_file=<path to the CA certificate>"), "{shown}");
    assert!(shown.contains("tls_roots=webpki"), "{shown}");
    if cfg!(not(feature = "webpki-roots")) {
        assert!(shown.contains("`webpki-roots` cargo feature"), "{shown}");
    }
}

#[tokio::test]
async fn webpki_roots_need_their_feature() {
    let cfg = Config::from_url("clickhouses://localhost:1?tls_roots=webpki").unwrap();
    let (e, _) = connect_err(cfg).await;
    if cfg!(feature = "webpki-roots") {
        // The roots load; connecting to the closed port fails after them.
        assert!(e.is_connect(), "{e:?}");
    } else {
        assert_eq!(e.kind(), ErrorKind::Config, "{e:?}");
        assert!(e.to_string().contains("needs chnative built with the `webpki-roots` cargo feature"), "{e}");
    }
}

#[tokio::test]
async fn tls_to_an_http_port_that_never_answers_the_hello_is_found_by_the_probe() {
    // Regression: ClickHouse's HTTP port reads a ClientHello as the start of a request line
    // and, depending on the hello's random bytes, may wait for the rest past the connect
    // timeout (seen once in a full run of the suite): the client then reported a timeout.
    // This server is that case every time: it answers only a complete request head.
    let port = http_responder(b"\r\n\r\n", b"HTTP/1.0 200 OK\r\nX-ClickHouse-Summary: {}\r\n\r\nOk.\n").await;
    let (e, took) = connect_err(cfg_at("127.0.0.1", port).secure(true)).await;
    eprintln!("TLS to a silent HTTP port ({took:?}): {e}");
    let shown = e.to_string();
    assert!(shown.contains("did not answer in TLS") && shown.contains("plaintext port"), "{shown}");
    assert!(shown.contains("this is ClickHouse's HTTP port, in plaintext"), "{shown}");
}

#[tokio::test]
async fn tls_to_the_http_port_says_so() {
    let s = server();
    let (e, took) = connect_err(cfg_at(&s.host, s.http_port).secure(true)).await;
    eprintln!("TLS to the HTTP port ({took:?}): {e}");
    let shown = e.to_string();
    assert!(shown.contains("did not answer in TLS") && shown.contains("plaintext port"), "{shown}");
}
