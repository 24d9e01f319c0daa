//! A fake server for bytes a real server cannot send (hostile lengths, expansion
//! bombs, pathological framing).
//!
//! It accepts one connection on 127.0.0.1, answers the client's Hello with a
//! ServerHello captured from ClickHouse 26.9 at the client's revision, reads the
//! Addendum and the Query (up to the empty Data block that ends it), writes the
//! scripted reply, and then records everything the client sends until it closes
//! the connection: a client that found the reply broken must send nothing more.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread::JoinHandle;
use std::time::Duration;

use chnative_proto::compression::{self, Method};
use chnative_proto::wire::Reader;
use chnative_proto::ProtoError;

/// Revisions there is a captured ServerHello for.
pub const REVISIONS: [u64; 3] = [54460, 54485, 54492];

/// What the client sent.
#[derive(Debug)]
pub struct Received {
    /// The Query packet and the empty Data block after it.
    pub query: Vec<u8>,
    /// Everything after the Query, until the client closed the connection.
    pub after: Vec<u8>,
}

/// A fake server serving one scripted connection.
pub struct FakeServer {
    /// The port it listens on.
    pub port: u16,
    handle: JoinHandle<Received>,
}

impl FakeServer {
    /// Starts a fake that talks `revision` and, once the Query has arrived,
    /// writes `reply`. `compressed` says whether the client compresses blocks
    /// (it decides how the client's empty Data block looks).
    pub fn start(revision: u64, compressed: bool, reply: Vec<u8>) -> FakeServer {
        assert!(REVISIONS.contains(&revision), "no captured ServerHello for {revision}");
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the fake server");
        let port = listener.local_addr().unwrap().port();
        let handle = std::thread::spawn(move || {
            let (sock, _) = listener.accept().expect("accept");
            serve(sock, revision, compressed, &reply, false)
        });
        FakeServer { port, handle }
    }

    /// Like [`FakeServer::start`], but the fake closes its end right after the reply.
    pub fn start_closing(revision: u64, compressed: bool, reply: Vec<u8>) -> FakeServer {
        assert!(REVISIONS.contains(&revision), "no captured ServerHello for {revision}");
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the fake server");
        let port = listener.local_addr().unwrap().port();
        let handle = std::thread::spawn(move || {
            let (sock, _) = listener.accept().expect("accept");
            serve(sock, revision, compressed, &reply, true)
        });
        FakeServer { port, handle }
    }

    /// A connection string to the fake.
    pub fn url(&self, revision: u64, compression: &str) -> String {
        format!("clickhouse://default@127.0.0.1:{}/default?revision={revision}&compression={compression}", self.port)
    }

    /// Waits for the client to close the connection; returns what it sent.
    pub fn finish(self) -> Received {
        self.handle.join().expect("fake server thread")
    }
}

fn hello_capture(revision: u64) -> Vec<u8> {
    let path = format!("{}/../chnative-proto/tests/data/captures/hello_{revision}.bin", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Reads until `parse` accepts the bytes received so far; returns what it consumed.
fn read_until(
    sock: &mut TcpStream,
    buf: &mut Vec<u8>,
    mut parse: impl FnMut(&mut Reader<'_>) -> Result<(), ProtoError>,
) {
    loop {
        let mut r = Reader::new(buf);
        match parse(&mut r) {
            Ok(()) => {
                let used = r.position();
                buf.drain(..used);
                return;
            }
            Err(ProtoError::Incomplete { .. }) => {}
            Err(e) => panic!("fake server: cannot parse the client's bytes: {e}"),
        }
        let mut chunk = [0u8; 64 << 10];
        let n = sock.read(&mut chunk).expect("fake server read");
        assert!(n > 0, "client closed the connection during the handshake");
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// The bytes that end a client's Query: the empty external-tables Data block.
fn query_tail(revision: u64, compressed: bool) -> Vec<u8> {
    let mut block = Vec::new();
    chnative_proto::block::write_empty_block(&mut block, revision);
    let mut tail = vec![2u8, 0];
    if compressed {
        compression::compress_frames(Method::Lz4, &block, 1 << 20, &mut tail).unwrap();
    } else {
        tail.extend_from_slice(&block);
    }
    tail
}

fn serve(mut sock: TcpStream, revision: u64, compressed: bool, reply: &[u8], close: bool) -> Received {
    let query = handshake_and_query(&mut sock, revision, compressed);
    // The client may stop reading (and close) before the whole reply is written.
    let _ = sock.write_all(reply);
    if close {
        let _ = sock.shutdown(std::net::Shutdown::Write);
    }
    let mut after = Vec::new();
    let _ = sock.read_to_end(&mut after);
    Received { query, after }
}

/// Answers the client's Hello and reads its Addendum and Query; returns the
/// Query's bytes.
fn handshake_and_query(sock: &mut TcpStream, revision: u64, compressed: bool) -> Vec<u8> {
    // Only a guard against a test that never closes its client.
    sock.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut buf = Vec::new();
    read_until(sock, &mut buf, |r| {
        assert_eq!(r.varuint()?, 0, "client Hello");
        r.string(1 << 20)?;
        r.varuint()?;
        r.varuint()?;
        r.varuint()?;
        for _ in 0..3 {
            r.string(1 << 20)?;
        }
        Ok(())
    });
    sock.write_all(&hello_capture(revision)).unwrap();
    read_until(sock, &mut buf, |r| {
        r.string(1 << 20)?;
        if revision >= 54470 {
            r.string(64)?;
            r.string(64)?;
        }
        if revision >= 54471 {
            r.varuint()?;
        }
        Ok(())
    });
    let tail = query_tail(revision, compressed);
    while !buf.ends_with(&tail) {
        let mut chunk = [0u8; 64 << 10];
        let n = sock.read(&mut chunk).expect("fake server read");
        assert!(n > 0, "client closed the connection before its query was complete");
        buf.extend_from_slice(&chunk[..n]);
    }
    buf
}

/// A fake server that accepts any number of connections and, after each one's
/// handshake and Query, runs `script` with the connection's number (from 0, in
/// the order they were accepted) and its socket. It counts the connections it
/// accepted and those the client closed.
pub struct ScriptedServer {
    /// The port it listens on.
    pub port: u16,
    accepted: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    closed: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl ScriptedServer {
    /// Starts the fake (its threads live until the test process ends).
    pub fn start(
        revision: u64,
        compressed: bool,
        script: impl Fn(usize, &mut TcpStream) + Send + Sync + 'static,
    ) -> ScriptedServer {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::Arc;
        assert!(REVISIONS.contains(&revision), "no captured ServerHello for {revision}");
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the fake server");
        let port = listener.local_addr().unwrap().port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let closed = Arc::new(AtomicUsize::new(0));
        let script = Arc::new(script);
        let (a, c) = (accepted.clone(), closed.clone());
        std::thread::spawn(move || {
            for sock in listener.incoming() {
                let Ok(mut sock) = sock else { return };
                let n = a.fetch_add(1, Ordering::SeqCst);
                let (script, closed) = (script.clone(), c.clone());
                std::thread::spawn(move || {
                    handshake_and_query(&mut sock, revision, compressed);
                    script(n, &mut sock);
                    // Wait for the client to close its end (or the read guard).
                    let _ = sock.set_read_timeout(Some(Duration::from_secs(60)));
                    let _ = sock.read_to_end(&mut Vec::new());
                    closed.fetch_add(1, Ordering::SeqCst);
                });
            }
        });
        ScriptedServer { port, accepted, closed }
    }

    /// Connections accepted so far.
    pub fn accepted(&self) -> usize {
        self.accepted.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Connections the client has closed so far (after their script ended).
    pub fn closed(&self) -> usize {
        self.closed.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// A connection string to the fake.
    pub fn url(&self, revision: u64, compression: &str) -> String {
        format!("clickhouse://default@127.0.0.1:{}/default?revision={revision}&compression={compression}", self.port)
    }
}

/// Writes `packet` every `every` (ignoring whatever the client sends, Cancel
/// included) until the client closes the connection or `max` has passed.
/// Returns what the client sent meanwhile.
pub fn trickle(sock: &mut TcpStream, packet: &[u8], every: Duration, max: Duration) -> Vec<u8> {
    let start = std::time::Instant::now();
    let mut got = Vec::new();
    let mut next = start;
    while start.elapsed() < max {
        if std::time::Instant::now() >= next {
            if sock.write_all(packet).is_err() {
                break;
            }
            next += every;
        }
        let wait = next.saturating_duration_since(std::time::Instant::now()).max(Duration::from_millis(1));
        sock.set_read_timeout(Some(wait)).unwrap();
        let mut chunk = [0u8; 4096];
        match sock.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&chunk[..n]),
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(_) => break,
        }
    }
    got
}
