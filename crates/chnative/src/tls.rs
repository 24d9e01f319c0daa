//! TLS with rustls.
//!
//! The crypto provider is *ring*: it builds with only a C compiler (aws-lc-rs,
//! rustls' default, needs cmake and takes minutes to build), and the native
//! protocol needs nothing ring lacks. Trust roots are by default the operating
//! system's store (rustls-native-certs), so the certificates an administrator
//! installs (a company CA, a cloud provider's chain) are trusted like
//! everywhere else on the machine; a bundled list would ignore them and go
//! stale with the binary. For containers without a store, the `webpki-roots`
//! feature bundles Mozilla's roots, used with `tls_roots=webpki` (or `both`).
//! A CA file given in the config is trusted in addition.

use std::sync::Arc;

use tokio::net::TcpStream;
use tokio_rustls::rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use tokio_rustls::rustls::client::WebPkiServerVerifier;
use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use tokio_rustls::rustls::{
    self, CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use tokio_rustls::TlsConnector;

use crate::error::{Error, Result};
use crate::netopts::{TlsOptions, TlsRoots};
use crate::transport::Transport;

/// A ready TLS client configuration (built once per client: reading the
/// system's roots costs milliseconds).
#[derive(Clone)]
pub(crate) struct Tls {
    connector: TlsConnector,
    server_name: Option<String>,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls").field("server_name", &self.server_name).finish_non_exhaustive()
    }
}

fn tls_config_error(what: &str, e: impl std::fmt::Display) -> Error {
    Error::config(format!("TLS: {what}: {e}"))
}

impl Tls {
    /// Builds the client configuration, or `None` when TLS is off.
    pub(crate) fn new(o: &TlsOptions) -> Result<Option<Tls>> {
        if !o.enabled {
            return Ok(None);
        }
        let provider = Arc::new(ring::default_provider());
        let mut roots = RootCertStore::empty();
        let mut system_problem = None;
        if matches!(o.roots, TlsRoots::System | TlsRoots::Both) {
            // Unreadable system certificates are skipped: one bad file in
            // /etc/ssl/certs must not stop a client that trusts a custom CA.
            let native = rustls_native_certs::load_native_certs();
            for cert in native.certs {
                let _ = roots.add(cert);
            }
            if roots.is_empty() {
                system_problem = Some(match native.errors.first() {
                    Some(e) => format!("the system's certificates could not be loaded ({e})"),
                    None => "the system has no certificate store (no CA certificates installed)".to_string(),
                });
            }
        }
        if matches!(o.roots, TlsRoots::WebPki | TlsRoots::Both) {
            add_webpki_roots(&mut roots)?;
        }
        if let Some(path) = &o.ca_file {
            let mut n = 0;
            for cert in
                CertificateDer::pem_file_iter(path).map_err(|e| tls_config_error(&path.display().to_string(), e))?
            {
                let cert = cert.map_err(|e| tls_config_error(&path.display().to_string(), e))?;
                roots.add(cert).map_err(|e| tls_config_error(&path.display().to_string(), e))?;
                n += 1;
            }
            if n == 0 {
                return Err(tls_config_error(&path.display().to_string(), "no certificate in the file"));
            }
        }
        if roots.is_empty() {
            let why = system_problem.unwrap_or_else(|| "no roots".into());
            return Err(Error::config(format!("TLS: no trusted root certificates: {why}; {NO_ROOTS_HINT}")));
        }
        let roots = Arc::new(roots);
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| tls_config_error("protocol versions", e))?;
        let builder = if o.danger_no_hostname_check {
            let inner = WebPkiServerVerifier::builder_with_provider(roots, provider)
                .build()
                .map_err(|e| tls_config_error("verifier", e))?;
            builder.dangerous().with_custom_certificate_verifier(Arc::new(AnyName(inner)))
        } else {
            builder.with_root_certificates(roots)
        };
        let config = match (&o.cert_file, &o.key_file) {
            (Some(cert), Some(key)) => {
                let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
                    .map_err(|e| tls_config_error(&cert.display().to_string(), e))?
                    .collect::<std::result::Result<_, _>>()
                    .map_err(|e| tls_config_error(&cert.display().to_string(), e))?;
                let key =
                    PrivateKeyDer::from_pem_file(key).map_err(|e| tls_config_error(&key.display().to_string(), e))?;
                builder.with_client_auth_cert(chain, key).map_err(|e| tls_config_error("client certificate", e))?
            }
            _ => builder.with_no_client_auth(),
        };
        Ok(Some(Tls { connector: TlsConnector::from(Arc::new(config)), server_name: o.server_name.clone() }))
    }

    /// Runs the TLS handshake over `tcp` to `host`.
    pub(crate) async fn connect(&self, host: &str, tcp: TcpStream) -> Result<Box<dyn Transport>> {
        let name = self.server_name.as_deref().unwrap_or(host);
        let name = ServerName::try_from(name.to_string())
            .map_err(|_| Error::config(format!("TLS: `{name}` is not a valid server name")))?;
        match self.connector.connect(name, tcp).await {
            Ok(s) => Ok(Box::new(s)),
            Err(e) => Err(handshake_error(e)),
        }
    }
}

/// What to do when no root certificate is trusted.
#[cfg(feature = "webpki-roots")]
const NO_ROOTS_HINT: &str = "set tls_ca_file=<path to the CA certificate> (URL option) or Config::tls_ca_file, \
     or tls_roots=webpki to trust the bundled web PKI roots";
#[cfg(not(feature = "webpki-roots"))]
const NO_ROOTS_HINT: &str = "set tls_ca_file=<path to the CA certificate> (URL option) or Config::tls_ca_file, \
     or build chnative with the `webpki-roots` cargo feature and set tls_roots=webpki to trust the bundled web PKI roots";

/// Adds Mozilla's roots (the `webpki-roots` crate).
#[cfg(feature = "webpki-roots")]
fn add_webpki_roots(roots: &mut RootCertStore) -> Result<()> {
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    Ok(())
}

#[cfg(not(feature = "webpki-roots"))]
fn add_webpki_roots(_: &mut RootCertStore) -> Result<()> {
    Err(Error::config(
        "TLS: tls_roots=webpki needs chnative built with the `webpki-roots` cargo feature \
         (the bundled roots are not compiled in)",
    ))
}

/// The hint for a server certificate the trusted roots do not vouch for.
const UNTRUSTED_HINT: &str = "the server's certificate is not signed by a trusted CA (self-signed or a private CA?): \
     set tls_ca_file=<path to the CA certificate> (URL option) or Config::tls_ca_file";

/// A TLS handshake failure, with a hint when the peer is not speaking TLS or
/// its certificate is not trusted.
fn handshake_error(e: std::io::Error) -> Error {
    let hint = match e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
        Some(rustls::Error::InvalidMessage(_)) => {
            " (the server did not answer in TLS: is this a plaintext port? ClickHouse's native protocol \
             over TLS is usually on 9440, in plaintext on 9000)"
        }
        Some(rustls::Error::InvalidCertificate(c)) => match c {
            CertificateError::UnknownIssuer | CertificateError::BadSignature => return untrusted(e),
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
                " (the certificate is for another name: connect by the name it carries, or set \
                 tls_server_name=<that name> (URL option) or Config::tls_server_name)"
            }
            CertificateError::Expired
            | CertificateError::ExpiredContext { .. }
            | CertificateError::NotValidYet
            | CertificateError::NotValidYetContext { .. } => {
                " (check the server's certificate dates and this machine's clock)"
            }
            _ => "",
        },
        Some(_) => "",
        None if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            " (the server closed the connection during the TLS handshake)"
        }
        None => "",
    };
    Error::from(std::io::Error::new(e.kind(), format!("TLS handshake failed: {e}{hint}")))
}

fn untrusted(e: std::io::Error) -> Error {
    Error::from(std::io::Error::new(e.kind(), format!("TLS handshake failed: {e} ({UNTRUSTED_HINT})")))
}

// Writes from `Drop` are left to the background drain: a TLS record half
// flushed there would need the session's care. Reads poll once with a waker
// that does nothing, so a server that closed an idle connection (a restart,
// its idle timeout) is noticed at checkout, as with plain TCP.
impl Transport for tokio_rustls::client::TlsStream<TcpStream> {
    fn try_read_now(&mut self, buf: &mut Vec<u8>) -> std::io::Result<usize> {
        use tokio::io::AsyncRead;
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        let mut tmp = [0u8; 4096];
        let mut rb = tokio::io::ReadBuf::new(&mut tmp);
        match std::pin::Pin::new(self).poll_read(&mut cx, &mut rb) {
            std::task::Poll::Ready(Ok(())) => {
                buf.extend_from_slice(rb.filled());
                Ok(rb.filled().len())
            }
            std::task::Poll::Ready(Err(e)) => Err(e),
            std::task::Poll::Pending => Err(std::io::ErrorKind::WouldBlock.into()),
        }
    }
}

/// Verifies the chain and everything else, except that the certificate
/// names the host (see [`crate::Config::danger_disable_hostname_verification`]).
#[derive(Debug)]
struct AnyName(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for AnyName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        match self.0.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}
