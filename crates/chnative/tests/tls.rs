//! TLS through scripts/tls-proxy.sh (socat with a generated certificate in
//! front of the real server), and through short-lived socat proxies with
//! certificates made here by openssl: a wrong CA, a wrong name, an expired
//! certificate, a client certificate, and the two port mix-ups. Every failure
//! is a clear error that arrives well within the connect timeout.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use chnative::{Client, Config, Connection, Error};
use common::server;

fn script(name: &str) -> String {
    format!("{}/../../scripts/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn tls_port() -> u16 {
    std::env::var("CHNATIVE_TLS_PORT").ok().and_then(|p| p.parse().ok()).unwrap_or(19440)
}

/// The proxy of scripts/tls-proxy.sh, started if needed; its certificate.
fn proxy_cert() -> &'static PathBuf {
    static CERT: OnceLock<PathBuf> = OnceLock::new();
    CERT.get_or_init(|| {
        server();
        let run = |arg: &str| {
            let out = Command::new("bash").arg(script("tls-proxy.sh")).arg(arg).output().expect("run tls-proxy.sh");
            assert!(
                out.status.success(),
                "tls-proxy.sh {arg}: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8_lossy(&out.stdout).trim().to_string()
        };
        run("start");
        PathBuf::from(run("cert"))
    })
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl").args(args).current_dir(dir).output().expect("openssl");
    assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// Certificates for the failure cases, made once per run.
struct Certs {
    dir: PathBuf,
}

fn certs() -> &'static Certs {
    static CERTS: OnceLock<Certs> = OnceLock::new();
    CERTS.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("chn-tls-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("db")).unwrap();
        let server_ext = [
            "-addext",
            "subjectAltName=DNS:localhost,IP:127.0.0.1",
            "-addext",
            "basicConstraints=critical,CA:FALSE",
            "-addext",
            "extendedKeyUsage=serverAuth",
        ];
        // A valid server certificate nobody here trusts (the "wrong CA").
        let mut a = vec!["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "30", "-subj", "/CN=chn-other"];
        a.extend(["-keyout", "other_key.pem", "-out", "other_cert.pem"]);
        a.extend(server_ext);
        openssl(&dir, &a);
        // An expired one: `openssl ca` takes explicit validity dates.
        std::fs::write(dir.join("db/index.txt"), "").unwrap();
        std::fs::write(dir.join("db/serial"), "01\n").unwrap();
        std::fs::write(
            dir.join("ca.cnf"),
            "[ca]\ndefault_ca = d\n[d]\ndatabase = db/index.txt\nserial = db/serial\nnew_certs_dir = db\n\
             default_md = sha256\npolicy = p\ncopy_extensions = copy\nunique_subject = no\n[p]\ncommonName = supplied\n",
        )
        .unwrap();
        let mut a = vec!["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost"];
        a.extend(["-keyout", "expired_key.pem", "-out", "expired.csr"]);
        a.extend(server_ext);
        openssl(&dir, &a);
        openssl(
            &dir,
            &[
                "ca", "-batch", "-config", "ca.cnf", "-selfsign", "-keyfile", "expired_key.pem", "-in", "expired.csr",
                "-out", "expired_cert.pem", "-startdate", "20200101000000Z", "-enddate", "20200201000000Z",
            ],
        );
        // A client certificate for mutual TLS.
        openssl(
            &dir,
            &[
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "30", "-subj", "/CN=chn-client", "-keyout",
                "client_key.pem", "-out", "client_cert.pem", "-addext", "basicConstraints=critical,CA:FALSE",
                "-addext", "extendedKeyUsage=clientAuth",
            ],
        );
        Certs { dir }
    })
}

impl Certs {
    fn path(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }
}

/// A socat TLS proxy of our own in front of the server's TCP port.
struct Socat {
    child: Child,
    port: u16,
}

impl Socat {
    fn start(cert: &str, key: &str, client_ca: Option<&str>) -> Socat {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        Self::start_at(port, cert, key, client_ca, true)
    }

    /// `fork`: serve many connections; without, serve one and exit (killing
    /// the process then cuts that connection).
    fn start_at(port: u16, cert: &str, key: &str, client_ca: Option<&str>, fork: bool) -> Socat {
        let fork = if fork { ",fork" } else { "" };
        let verify = match client_ca {
            Some(ca) => format!("verify=1,cafile={ca}"),
            None => "verify=0".into(),
        };
        let spawn = || {
            Command::new("socat")
                .arg(format!("OPENSSL-LISTEN:{port},bind=127.0.0.1,reuseaddr{fork},cert={cert},key={key},{verify}"))
                .arg(format!("TCP:127.0.0.1:{}", server().tcp_port))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("socat (apt-get install socat)")
        };
        let mut child = spawn();
        for _ in 0..200 {
            // A socat that could not bind yet (the previous one on this port still
            // closing, on a loaded machine) has exited: start it again.
            if matches!(child.try_wait(), Ok(Some(_))) {
                child = spawn();
            }
            // A single-connection socat is ready once its port is bound (a probe would use it up).
            let ready = if fork.is_empty() {
                std::net::TcpListener::bind(("127.0.0.1", port)).is_err()
            } else {
                std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
            };
            if ready {
                return Socat { child, port };
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        let _ = child.kill();
        let _ = child.wait();
        panic!("socat did not listen on {port}");
    }
}

impl Drop for Socat {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Connects (through the pool, then one socket) and runs a query; the error
/// must come back within the connect timeout, never hang.
async fn try_connect(cfg: Config) -> chnative::Result<u8> {
    let cfg = cfg.connect_timeout(CONNECT_TIMEOUT);
    let r = tokio::time::timeout(CONNECT_TIMEOUT * 3, async {
        let client = Client::connect_with(cfg.clone()).await?;
        let one: u8 = client.query_scalar("SELECT 1").await?;
        let mut conn = Connection::connect_with(cfg).await?;
        assert_eq!(conn.query_scalar::<u8>("SELECT 2").await?, 2);
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
    let cert = proxy_cert().display().to_string();
    let url = format!("clickhouse://default@127.0.0.1:{}/default?secure=true&tls_ca_file={cert}", tls_port());
    assert_eq!(try_connect(Config::from_url(&url).unwrap()).await.unwrap(), 1);
    // By name: the certificate names localhost too.
    let cfg = Config::from_url(&format!("clickhouses://default@localhost:{}/default", tls_port()))
        .unwrap()
        .tls_ca_file(&cert);
    assert_eq!(try_connect(cfg).await.unwrap(), 1);
    // Streams and inserts run over TLS like over TCP.
    let client = Client::connect_with(tls_cfg(tls_port()).tls_ca_file(&cert)).await.unwrap();
    let n: u64 = client.query_scalar("SELECT sum(number) FROM numbers(100000)").await.unwrap();
    assert_eq!(n, 4_999_950_000);
}

#[tokio::test]
async fn uncompressed_columns_arrive_straight_from_the_tls_stream() {
    // Fixed-width values are read from the TLS stream into the column's buffer.
    let cert = proxy_cert();
    let cfg = tls_cfg(tls_port()).tls_ca_file(cert).compression(chnative::Compression::None);
    let client = Client::connect_with(cfg).await.unwrap();
    let mut s = client.stream("SELECT number FROM numbers(3000000)").await.unwrap();
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
    proxy_cert();
    // Only the system roots: the proxy's self-signed certificate is unknown.
    expect_err(try_connect(tls_cfg(tls_port())).await, "invalid peer certificate");
    // A CA file that is not the one that signed the certificate.
    expect_err(
        try_connect(tls_cfg(tls_port()).tls_ca_file(certs().path("other_cert.pem"))).await,
        "invalid peer certificate",
    );
}

#[tokio::test]
async fn a_certificate_for_another_name_is_refused_unless_explicitly_allowed() {
    let cert = proxy_cert().display().to_string();
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
    let proxy = Socat::start(&c.path("expired_cert.pem"), &c.path("expired_key.pem"), None);
    let cfg = tls_cfg(proxy.port).tls_ca_file(c.path("expired_cert.pem"));
    expect_err(try_connect(cfg).await, "certificate expired");
}

#[tokio::test]
async fn mutual_tls_with_a_client_certificate() {
    let c = certs();
    let cert = proxy_cert().display().to_string();
    let key = cert.replace("cert.pem", "key.pem");
    let proxy = Socat::start(&cert, &key, Some(&c.path("client_cert.pem")));
    let cfg = tls_cfg(proxy.port).tls_ca_file(&cert);
    // Without a client certificate the server side refuses the handshake.
    let e = try_connect(cfg.clone()).await.expect_err("a client certificate is required");
    eprintln!("no client certificate: {e}");
    assert!(matches!(e, Error::Connect(_)), "{e:?}");
    let cfg = cfg.tls_client_cert(c.path("client_cert.pem"), c.path("client_key.pem"));
    assert_eq!(try_connect(cfg).await.unwrap(), 1);
}

#[tokio::test]
async fn plaintext_to_the_tls_port_and_tls_to_the_plaintext_port_fail_fast() {
    proxy_cert();
    let plain_to_tls = Config::from_url(&format!("clickhouse://default@127.0.0.1:{}/default", tls_port())).unwrap();
    let e = try_connect(plain_to_tls).await.expect_err("plaintext to a TLS port");
    eprintln!("plaintext client to the TLS port: {e}");
    assert!(e.to_string().contains("secure=true") || matches!(e, Error::Timeout(_)), "{e}");
    let cert = proxy_cert().display().to_string();
    let tls_to_plain = tls_cfg(server().tcp_port).tls_ca_file(&cert);
    let e = try_connect(tls_to_plain).await.expect_err("TLS to a plaintext port");
    eprintln!("TLS client to the plaintext port: {e}");
    assert!(e.to_string().contains("TLS") || matches!(e, Error::Timeout(_)), "{e}");
}

#[test]
fn bad_tls_files_are_config_errors() {
    let cfg = tls_cfg(1).tls_ca_file("/nonexistent/ca.pem");
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let e = rt.block_on(Client::connect_with(cfg)).unwrap_err();
    assert!(matches!(e, Error::Config(_)), "{e:?}");
    let empty = std::env::temp_dir().join(format!("chn-empty-{}.pem", std::process::id()));
    std::fs::write(&empty, "not a certificate\n").unwrap();
    let e = rt.block_on(Client::connect_with(tls_cfg(1).tls_ca_file(&empty))).unwrap_err();
    assert!(e.to_string().contains("no certificate"), "{e}");
    let _ = std::fs::remove_file(empty);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tls_connection_closed_while_idle_is_replaced_at_checkout() {
    let cert = proxy_cert().display().to_string();
    let key = cert.replace("cert.pem", "key.pem");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let first = Socat::start_at(port, &cert, &key, None, false);
    // No health-check ping: the dead connection must be noticed without one.
    let cfg = tls_cfg(port).tls_ca_file(&cert).pool_max_size(1).pool_health_check_after(None);
    let client = Client::connect_with(cfg).await.unwrap();
    assert_eq!(client.query_scalar::<u8>("SELECT 1").await.unwrap(), 1);
    drop(first); // the connection's only proxy dies: the idle TLS connection is closed
    let _second = Socat::start_at(port, &cert, &key, None, false);
    // Loopback delivers the close at once; this only lets the runtime see it.
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(client.query_scalar::<u8>("SELECT 2").await.unwrap(), 2, "the stale connection was reused");
}
