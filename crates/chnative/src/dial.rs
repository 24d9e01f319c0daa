//! Dialing one host: TCP with its options, then TLS when configured
//! ([`open`]), and the HTTP probe that names a port that does not speak the
//! native protocol ([`http_probe`]).

use std::time::Duration;

use tokio::net::TcpStream;

use crate::config::Config;
use crate::error::{Error, Result};
use crate::tls::Tls;
use crate::transport::Transport;

/// A TCP connection with the options set, wrapped in TLS when configured.
pub(crate) async fn open(cfg: &Config, tls: Option<&Tls>) -> Result<Box<dyn Transport>> {
    let tcp = TcpStream::connect((cfg.host.as_str(), cfg.effective_port())).await?;
    tcp.set_nodelay(true)?;
    if let Some(idle) = cfg.net.keepalive {
        let ka = socket2::TcpKeepalive::new().with_time(idle).with_interval(idle);
        socket2::SockRef::from(&tcp).set_tcp_keepalive(&ka)?;
    }
    match tls {
        Some(tls) => {
            let handshake = tls.connect(&cfg.host, tcp);
            let probe = plaintext_probe(cfg.host.clone(), cfg.effective_port());
            tokio::pin!(handshake, probe);
            tokio::select! {
                r = &mut handshake => r,
                Some(e) = &mut probe => Err(e),
            }
        }
        None => Ok(Box::new(tcp)),
    }
}

/// Waits [`PROBE_AFTER`], then asks `host:port` in plaintext (`GET /ping`) whether it speaks
/// HTTP: the error to report when it does, as the TLS handshake there is unanswered. A
/// plaintext ClickHouse port may leave a ClientHello unanswered past the connect timeout: its
/// HTTP port reads it as the start of a request line and, depending on the hello's random
/// bytes, waits for the rest (seen once in a full run of the suite). `None` (the handshake goes
/// on) when nothing answers in HTTP: a TLS port answers a plaintext request with no HTTP.
pub(crate) async fn plaintext_probe(host: String, port: u16) -> Option<Error> {
    tokio::time::sleep(PROBE_AFTER).await;
    let answer = ask_ping(&host, port, None).await?;
    let text = String::from_utf8_lossy(&answer);
    if !text.starts_with("HTTP/") {
        return None;
    }
    let head = text.split("\r\n\r\n").next().unwrap_or("").to_ascii_lowercase();
    let what = if text.contains("for clickhouse-client") {
        "ClickHouse's native protocol in plaintext"
    } else if head.contains("\nx-clickhouse-") {
        "ClickHouse's HTTP port, in plaintext"
    } else {
        "a plaintext HTTP port"
    };
    Some(Error::from(std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!(
            "TLS handshake failed: the server did not answer in TLS, and the port answers plaintext HTTP: \
             this is {what} (is this a plaintext port? ClickHouse's native protocol over TLS is usually on \
             9440, in plaintext on 9000)"
        ),
    )))
}

/// `GET /ping` to `host:port` on a connection of its own (over TLS with `tls`): the first
/// 4 KiB of the answer, or `None` when none comes within [`PROBE_TIMEOUT`].
async fn ask_ping(host: &str, port: u16, tls: Option<&Tls>) -> Option<Vec<u8>> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let ask = async {
        let tcp = TcpStream::connect((host, port)).await.ok()?;
        let mut io: Box<dyn Transport> = match tls {
            Some(tls) => tls.connect(host, tcp).await.ok()?,
            None => Box::new(tcp),
        };
        io.write_all(b"GET /ping HTTP/1.0\r\n\r\n").await.ok()?;
        let mut answer = Vec::new();
        // HTTP/1.0: the server closes after its answer.
        (&mut io).take(4096).read_to_end(&mut answer).await.ok()?;
        Some(answer)
    };
    tokio::time::timeout(PROBE_TIMEOUT, ask).await.ok()?
}

/// How long the server may leave the client's Hello unanswered before
/// [`http_probe`] asks the port whether it speaks HTTP. A native server
/// answers at once, after checking the password; ClickHouse's HTTP port reads
/// the Hello (about 25 bytes, no line end) as the start of a request line and
/// waits for the rest of it, past the connect timeout (measured on 26.9).
const PROBE_AFTER: Duration = Duration::from_secs(1);

/// Bounds the probe's own connection, request and answer.
const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// Waits [`PROBE_AFTER`], then sends `GET /ping` to `host:port` on a second
/// connection (over TLS when the client uses it) and returns the error to
/// report if the port speaks HTTP: ClickHouse's HTTP port (or any HTTP
/// server) does not answer the native Hello until its own timeout, but it
/// answers a request at once. `None` (and the handshake goes on) when the
/// probe fails or finds the native port, which answers `GET` with an HTTP 400
/// saying it is "for clickhouse-client program".
pub(crate) async fn http_probe(host: String, port: u16, tls: Option<Tls>) -> Option<Error> {
    tokio::time::sleep(PROBE_AFTER).await;
    let answer = ask_ping(&host, port, tls.as_ref()).await?;
    tracing::debug!(answer = %String::from_utf8_lossy(&answer[..answer.len().min(200)]), "HTTP probe answered");
    http_answer(&answer)
}

/// The error for a probe's answer that is HTTP from something else than the
/// native port.
fn http_answer(answer: &[u8]) -> Option<Error> {
    let text = String::from_utf8_lossy(answer);
    if !text.starts_with("HTTP/") || text.contains("for clickhouse-client") {
        return None;
    }
    let status: String = text.lines().next().unwrap_or("").chars().take(80).filter(|c| !c.is_control()).collect();
    let head = text.split("\r\n\r\n").next().unwrap_or("").to_ascii_lowercase();
    let what = if head.contains("\nx-clickhouse-") { "ClickHouse's HTTP port" } else { "an HTTP port" };
    Some(Error::config(format!(
        "the server did not answer the native protocol's Hello, and the port answers HTTP (`{status}`): \
         this is {what}; {}",
        chnative_proto::connection::PORTS_HINT
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_answers() {
        // What ClickHouse 26.9's native port answers to `GET /ping`: not an HTTP port.
        let native = b"HTTP/1.0 400 Bad Request\r\n\r\nPort 19000 is for clickhouse-client program\r\n\
            You must use port 18123 for HTTP.\r\n";
        assert!(http_answer(native).is_none());
        // Its HTTP port.
        let http = b"HTTP/1.0 200 OK\r\nX-ClickHouse-Summary: {}\r\nConnection: Close\r\n\r\nOk.\n";
        let e = http_answer(http).unwrap().to_string();
        assert!(e.contains("(`HTTP/1.0 200 OK`): this is ClickHouse's HTTP port"), "{e}");
        let e = http_answer(b"HTTP/1.1 301 Moved\r\nLocation: /\r\n\r\n").unwrap().to_string();
        assert!(e.contains("this is an HTTP port"), "{e}");
        assert!(http_answer(b"").is_none());
        assert!(http_answer(b"SSH-2.0-x\r\n").is_none());
    }
}
