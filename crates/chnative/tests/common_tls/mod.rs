//! TLS for the integration tests without any program outside the test binary:
//! certificates made in-process (rcgen, ring), and a TLS terminator (rustls)
//! on a loopback port in front of a server's plaintext native port.
//!
//! The terminator runs on a thread and tokio runtime of its own, so it serves
//! `#[test]`s and `#[tokio::test]`s alike (a current-thread test runtime does
//! not run anything while its test blocks), and outlives any one test's runtime.
//! Dropping a [`TlsProxy`] stops it and closes every connection it carries.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rcgen::{date_time_ymd, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair, KeyUsagePurpose};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;
use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::rustls::server::WebPkiClientVerifier;
use tokio_rustls::rustls::{RootCertStore, ServerConfig};
use tokio_rustls::TlsAcceptor;

/// A certificate and its private key, in memory and as PEM files.
pub struct Identity {
    pub cert: CertificateDer<'static>,
    key: Vec<u8>,
    pub cert_path: PathBuf,
    pub key_path: PathBuf,
}

impl Identity {
    /// The private key (PKCS#8 DER).
    pub fn key(&self) -> PrivateKeyDer<'static> {
        PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(self.key.clone()))
    }

    /// The certificate file's path as a string (for URLs).
    pub fn cert_file(&self) -> String {
        self.cert_path.display().to_string()
    }

    /// The key file's path as a string.
    pub fn key_file(&self) -> String {
        self.key_path.display().to_string()
    }
}

/// What a certificate is for.
#[derive(Clone, Copy)]
enum Kind {
    /// A TLS server named `localhost` and `127.0.0.1`, valid now.
    Server,
    /// The same, but its validity ended in 2020.
    ExpiredServer,
    /// A TLS client.
    Client,
}

/// Makes a self-signed end-entity certificate (`CA:FALSE`, ECDSA P-256) and
/// writes `<name>_cert.pem` and `<name>_key.pem` into `dir`.
///
/// `CA:FALSE` matters: rustls refuses a CA certificate used as a server's
/// certificate (`CaUsedAsEndEntity`), but trusts a self-signed `CA:FALSE`
/// certificate that is given as a root.
fn make(dir: &Path, name: &str, common_name: &str, kind: Kind) -> Identity {
    let key = KeyPair::generate().expect("generate a key");
    let sans = match kind {
        Kind::Server | Kind::ExpiredServer => vec!["localhost".to_string(), "127.0.0.1".to_string()],
        Kind::Client => Vec::new(),
    };
    let mut p = CertificateParams::new(sans).expect("certificate names");
    p.distinguished_name.push(DnType::CommonName, common_name);
    p.is_ca = IsCa::ExplicitNoCa;
    p.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    p.extended_key_usages = vec![match kind {
        Kind::Server | Kind::ExpiredServer => ExtendedKeyUsagePurpose::ServerAuth,
        Kind::Client => ExtendedKeyUsagePurpose::ClientAuth,
    }];
    (p.not_before, p.not_after) = match kind {
        Kind::ExpiredServer => (date_time_ymd(2020, 1, 1), date_time_ymd(2020, 2, 1)),
        _ => (date_time_ymd(2024, 1, 1), date_time_ymd(2124, 1, 1)),
    };
    let cert = p.self_signed(&key).expect("self-sign a certificate");
    let cert_path = dir.join(format!("{name}_cert.pem"));
    let key_path = dir.join(format!("{name}_key.pem"));
    std::fs::write(&cert_path, cert.pem()).expect("write a certificate");
    std::fs::write(&key_path, key.serialize_pem()).expect("write a key");
    Identity { cert: cert.der().clone(), key: key.serialize_der(), cert_path, key_path }
}

/// The certificates of one test run, made once per process.
pub struct Certs {
    /// The server's: CN and SAN `localhost`, SAN `127.0.0.1`, `serverAuth`.
    pub server: Identity,
    /// A valid server certificate for the same names that nobody trusts (the "wrong CA").
    pub other: Identity,
    /// A server certificate that expired in 2020.
    pub expired: Identity,
    /// A client certificate (`clientAuth`) for mutual TLS.
    pub client: Identity,
}

/// The certificates, generated on first use into a directory of this process.
pub fn certs() -> &'static Certs {
    static CERTS: OnceLock<Certs> = OnceLock::new();
    CERTS.get_or_init(|| {
        // In the target directory (cargo's scratch space for integration tests),
        // one directory per process: test binaries run side by side.
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("chn-tls-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("certificate directory");
        Certs {
            server: make(&dir, "server", "localhost", Kind::Server),
            other: make(&dir, "other", "chn-other", Kind::Server),
            expired: make(&dir, "expired", "localhost", Kind::ExpiredServer),
            client: make(&dir, "client", "chn-client", Kind::Client),
        }
    })
}

/// A TLS terminator on 127.0.0.1 forwarding the decrypted bytes to a plaintext
/// port on 127.0.0.1, one upstream connection per accepted connection.
pub struct TlsProxy {
    port: u16,
    accepted: Arc<AtomicUsize>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// How long a client may take over its handshake before the proxy drops it.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

impl TlsProxy {
    /// Starts a proxy on a free port presenting `identity`, in front of
    /// `127.0.0.1:target_port`. With `client_ca`, a client must present a
    /// certificate that chains to it.
    pub fn start(target_port: u16, identity: &Identity, client_ca: Option<&Identity>) -> TlsProxy {
        Self::start_at(0, target_port, identity, client_ca)
    }

    /// [`TlsProxy::start`] on a given port (0: any free one), e.g. to replace a
    /// proxy that was dropped.
    pub fn start_at(port: u16, target_port: u16, identity: &Identity, client_ca: Option<&Identity>) -> TlsProxy {
        let provider = Arc::new(ring::default_provider());
        let builder = ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .expect("protocol versions");
        let builder = match client_ca {
            Some(ca) => {
                let mut roots = RootCertStore::empty();
                roots.add(ca.cert.clone()).expect("client CA");
                let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                    .build()
                    .expect("client certificate verifier");
                builder.with_client_cert_verifier(verifier)
            }
            None => builder.with_no_client_auth(),
        };
        let config = builder.with_single_cert(vec![identity.cert.clone()], identity.key()).expect("server certificate");
        let acceptor = TlsAcceptor::from(Arc::new(config));
        let listener = bind(port);
        let port = listener.local_addr().expect("proxy address").port();
        let target = SocketAddr::from(([127, 0, 0, 1], target_port));
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let accepted = Arc::new(AtomicUsize::new(0));
        let counter = accepted.clone();
        let thread = std::thread::Builder::new()
            .name(format!("tls-proxy-{port}"))
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("proxy runtime");
                rt.block_on(accept_loop(listener, acceptor, target, stopped, counter));
            })
            .expect("proxy thread");
        TlsProxy { port, accepted, stop: Some(stop), thread: Some(thread) }
    }

    /// The proxy's port (host 127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Connections accepted so far (handshakes that failed included).
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

impl Drop for TlsProxy {
    fn drop(&mut self) {
        drop(self.stop.take());
        // Joined: once this returns, the port and every connection are closed.
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A listening socket (SO_REUSEADDR, so a port whose previous proxy's
/// connections linger in TIME_WAIT can be bound again at once). It listens
/// before the proxy's thread runs: a client may connect right away.
fn bind(port: u16) -> std::net::TcpListener {
    use socket2::{Domain, Socket, Type};
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let mut last = None;
    // Bounded retries: a port given back a moment ago can still be busy on a loaded machine.
    for _ in 0..100 {
        let s = Socket::new(Domain::IPV4, Type::STREAM, None).expect("proxy socket");
        s.set_reuse_address(true).expect("SO_REUSEADDR");
        match s.bind(&addr.into()).and_then(|()| s.listen(64)) {
            Ok(()) => {
                s.set_nonblocking(true).expect("non-blocking listener");
                return s.into();
            }
            Err(e) => last = Some(e),
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("TLS proxy could not listen on {addr}: {last:?}");
}

async fn accept_loop(
    listener: std::net::TcpListener,
    acceptor: TlsAcceptor,
    target: SocketAddr,
    mut stopped: tokio::sync::oneshot::Receiver<()>,
    accepted: Arc<AtomicUsize>,
) {
    let listener = TcpListener::from_std(listener).expect("tokio listener");
    let mut conns = JoinSet::new();
    // Bounded: no test opens anywhere near this many connections.
    for _ in 0..100_000 {
        tokio::select! {
            _ = &mut stopped => break,
            r = listener.accept() => {
                if let Ok((tcp, _)) = r {
                    accepted.fetch_add(1, Ordering::SeqCst);
                    conns.spawn(serve(tcp, acceptor.clone(), target));
                }
            }
        }
        while conns.try_join_next().is_some() {}
    }
    // Every connection ends here, before the thread (and `Drop`) returns.
    drop(listener);
    conns.shutdown().await;
}

/// One connection: the TLS handshake (a failed one drops the connection after
/// rustls sent its alert), then bytes both ways until either side closes.
async fn serve(tcp: TcpStream, acceptor: TlsAcceptor, target: SocketAddr) {
    let _ = tcp.set_nodelay(true);
    let mut tls = match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
        Ok(Ok(tls)) => tls,
        _ => return,
    };
    let Ok(mut upstream) = TcpStream::connect(target).await else { return };
    let _ = upstream.set_nodelay(true);
    let _ = tokio::io::copy_bidirectional(&mut tls, &mut upstream).await;
}
