//! Chunked framing against real servers configured with `proto_caps`.
//!
//! Each test starts servers of its own (`OwnServer`: scripts/server.sh with a run
//! dir and ports of its own, CHNATIVE_SERVER_PROTO_CAPS_SEND/RECV) and stops them
//! when the test ends, whether it passes or not.

use crate::common;
use crate::common_tls;

use std::time::{Duration, Instant};

use chnative::{ChunkMode, Client, Compression, Config, ErrorKind};
use common::own_server::OwnServer;
use common_tls::{certs, TlsProxy};

/// A server of this test's own with `proto_caps` send and recv as given.
fn chunk_server(name: &str, send: &str, recv: &str) -> OwnServer {
    let caps = [("CHNATIVE_SERVER_PROTO_CAPS_SEND", send), ("CHNATIVE_SERVER_PROTO_CAPS_RECV", recv)];
    tokio::task::block_in_place(|| OwnServer::start_with(name, &caps))
}

/// Starts a TLS terminator (tests/common_tls) in front of the server's native
/// port; returns it (it stops when dropped) and a config for it.
fn tls(server: &OwnServer) -> (TlsProxy, Config) {
    let cert = &certs().server;
    let proxy = TlsProxy::start(server.tcp_port, cert, None);
    let url =
        format!("clickhouse://default@127.0.0.1:{}/default?secure=true&tls_ca_file={}", proxy.port(), cert.cert_file());
    (proxy, Config::from_url(&url).unwrap())
}

const SLEEPY: &str = "SELECT sleepEachRow(0.2), number FROM numbers(1000) \
                      SETTINGS max_block_size = 1, function_sleep_max_microseconds_per_block = 0";

/// Everything a client does, on `config`, checked against the server.
async fn workload(server: &OwnServer, config: Config, what: &str) {
    for compression in [Compression::None, Compression::Lz4, Compression::Zstd(3)] {
        let what = format!("{what}, {compression:?}");
        let c = Client::connect_with(config.clone().compression(compression).insert_block_rows(1000))
            .await
            .unwrap_or_else(|e| panic!("{what}: connect: {e}"));

        // Many blocks, and blocks far larger than one chunk of the server (its
        // write buffer), so packets span chunks.
        for (rows, block) in [(100_000u64, 1_000u64), (300_000, 300_000)] {
            let sql = format!(
                "SELECT number, repeat(toString(number), 3) AS s FROM numbers({rows}) SETTINGS max_block_size = {block}"
            );
            let mut s = c.fetch_blocks(sql.as_str()).await.unwrap_or_else(|e| panic!("{what}: {e}"));
            let (mut n, mut sum, mut bytes, mut blocks) = (0u64, 0u64, 0usize, 0);
            while let Some(b) = s.next().await.unwrap_or_else(|e| panic!("{what}: {e}")) {
                blocks += 1;
                let number = b.column("number").unwrap().view();
                let nums: &[u64] = number.values().unwrap();
                let s_col = b.column("s").unwrap().view();
                let strs = s_col.as_strings().unwrap();
                assert_eq!(strs.len(), nums.len());
                for (i, x) in nums.iter().enumerate() {
                    assert_eq!(strs.str(i).unwrap(), x.to_string().repeat(3), "{what}");
                    bytes += strs.bytes(i).len();
                }
                n += nums.len() as u64;
                sum += nums.iter().sum::<u64>();
            }
            assert_eq!((n, sum), (rows, rows * (rows - 1) / 2), "{what}");
            assert!(blocks >= (rows / block) as usize, "{what}: {blocks} blocks");
            assert!(bytes > 0);
        }

        // An INSERT of several Data packets.
        let table = format!("chunked_{}_{}", std::process::id(), what.len() + compression_tag(compression));
        c.execute(format!("DROP TABLE IF EXISTS {table}").as_str()).await.unwrap();
        c.execute(format!("CREATE TABLE {table} (id UInt64, s String) ENGINE = MergeTree ORDER BY id").as_str())
            .await
            .unwrap();
        let ids: Vec<u64> = (0..10_500).collect();
        let strs: Vec<String> = ids.iter().map(|i| format!("row-{i}")).collect();
        let sum = c.insert(&table).column("id", ids.as_slice()).column("s", strs.as_slice()).send().await;
        let sum = sum.unwrap_or_else(|e| panic!("{what}: insert: {e}"));
        assert_eq!(sum.rows, 10_500, "{what}");
        let check = server.http(&format!("SELECT count(), sum(id), sum(length(s)) FROM {table} FORMAT TSV"));
        let expect_len: usize = strs.iter().map(String::len).sum();
        assert_eq!(check.trim(), format!("10500\t{}\t{expect_len}", 10_499 * 10_500 / 2), "{what}");
        let via_client: u64 = c.fetch_scalar(format!("SELECT count() FROM {table}").as_str()).await.unwrap();
        assert_eq!(via_client, 10_500);
        c.execute(format!("DROP TABLE {table}").as_str()).await.unwrap();

        // Ping.
        c.ping().await.unwrap_or_else(|e| panic!("{what}: ping: {e}"));

        // Cancel mid-stream: the query stops on the server and the connection
        // goes on.
        let mut s = c.fetch_blocks(SLEEPY).await.unwrap();
        let id = s.query_id().to_string();
        assert!(s.next().await.unwrap().is_some());
        s.cancel().await.unwrap_or_else(|e| panic!("{what}: cancel: {e}"));
        let start = Instant::now();
        while server.http(&format!("SELECT count() FROM system.processes WHERE query_id = '{id}'")).trim() != "0" {
            assert!(start.elapsed() < Duration::from_secs(10), "{what}: cancelled query still running");
            std::thread::sleep(Duration::from_millis(50));
        }
        let one: u8 = c.fetch_scalar("SELECT 1").await.unwrap_or_else(|e| panic!("{what}: after cancel: {e}"));
        assert_eq!(one, 1);

        // An exception after some blocks, and one before any.
        let mut s = c
            .fetch_blocks("SELECT throwIf(number = 5000, 'boom') FROM numbers(10000) SETTINGS max_block_size = 100")
            .await
            .unwrap();
        let err = loop {
            match s.next().await {
                Ok(Some(_)) => {}
                Ok(None) => panic!("{what}: the query should fail"),
                Err(e) => break e,
            }
        };
        drop(s);
        assert_eq!(err.server_code(), Some(395), "{what}: {err}");
        let err = c.execute("SELEC 1").await.unwrap_err();
        assert_eq!(err.server_code(), Some(62), "{what}: {err}");
        let v: u64 = c.fetch_scalar("SELECT 42::UInt64").await.unwrap_or_else(|e| panic!("{what}: after errors: {e}"));
        assert_eq!(v, 42);
        assert!(c.is_usable(), "{what}");
    }
}

fn compression_tag(c: Compression) -> usize {
    match c {
        Compression::None => 0,
        Compression::Lz4 => 1000,
        Compression::Zstd(_) => 2000,
        _ => 3000,
    }
}

async fn negotiated(config: Config) -> (bool, bool) {
    let c = Client::connect_with(config).await.expect("connect");
    let info = c.server_info();
    (info.chunked_send, info.chunked_recv)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_that_requires_chunking() {
    if !common::requires_revision(
        common::server_revision().await,
        chnative_proto::revision::CHUNKED_PACKETS,
        "chunked packets",
    ) {
        return;
    }
    let server = chunk_server("chunked", "chunked", "chunked");

    // The default (not chunked unless required) and every client setting that
    // allows it end up chunked in both directions.
    for mode in [ChunkMode::NotChunkedOptional, ChunkMode::ChunkedOptional, ChunkMode::Chunked] {
        assert_eq!(negotiated(server.config().chunked(mode)).await, (true, true), "{mode}");
    }
    let c = Client::connect(&server.url("compression=lz4")).await.unwrap();
    assert!(c.server_info().chunked_send && c.server_info().chunked_recv);

    workload(&server, server.config(), "strict server").await;
    // Under TLS the framing is inside the TLS stream, as any other byte.
    let (_proxy, tls) = tls(&server);
    assert_eq!(negotiated(tls.clone()).await, (true, true));
    workload(&server, tls, "strict server through TLS").await;

    // A client that refuses chunking is refused before anything is sent.
    for (url_opt, dir) in [("chunked=notchunked", "send"), ("chunked_recv=notchunked", "receive")] {
        let err = Client::connect(&server.url(url_opt)).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Config, "{err}");
        let msg = err.to_string();
        assert!(msg.contains("requires chunked") && msg.contains(dir), "{msg}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_with_optional_chunking() {
    if !common::requires_revision(
        common::server_revision().await,
        chnative_proto::revision::CHUNKED_PACKETS,
        "chunked packets",
    ) {
        return;
    }
    let server = chunk_server("chunked-optional", "chunked_optional", "chunked_optional");

    // The server lets the client choose, per direction.
    let cases = [
        (ChunkMode::NotChunkedOptional, ChunkMode::NotChunkedOptional, (false, false)),
        (ChunkMode::ChunkedOptional, ChunkMode::ChunkedOptional, (true, true)),
        (ChunkMode::Chunked, ChunkMode::Chunked, (true, true)),
        (ChunkMode::NotChunked, ChunkMode::NotChunked, (false, false)),
        (ChunkMode::Chunked, ChunkMode::NotChunked, (true, false)),
        (ChunkMode::NotChunkedOptional, ChunkMode::ChunkedOptional, (false, true)),
    ];
    for (send, recv, want) in cases {
        assert_eq!(negotiated(server.config().chunked_send(send).chunked_recv(recv)).await, want, "{send}/{recv}");
    }

    workload(&server, server.config().chunked(ChunkMode::ChunkedOptional), "optional server, client prefers chunked")
        .await;
    workload(&server, server.config(), "optional server, client prefers not").await;
    let mixed = server.config().chunked_send(ChunkMode::Chunked).chunked_recv(ChunkMode::NotChunked);
    workload(&server, mixed, "optional server, chunked send only").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_that_chunks_one_direction() {
    if !common::requires_revision(
        common::server_revision().await,
        chnative_proto::revision::CHUNKED_PACKETS,
        "chunked packets",
    ) {
        return;
    }
    // Each direction is negotiated on its own. Before, the client looked at the
    // server's sending side only: it refused the first server, and told the
    // second one "notchunked" for a direction it requires chunked, which the
    // server answers by closing the connection.
    for (name, send, recv, want) in [
        ("chunked-send", "chunked", "notchunked", (false, true)),
        ("chunked-recv", "notchunked", "chunked", (true, false)),
    ] {
        let server = chunk_server(name, send, recv);
        assert_eq!(negotiated(server.config()).await, want, "{name}");
        workload(&server, server.config(), name).await;
        let refuse = if want.0 { "chunked_send=notchunked" } else { "chunked_send=chunked" };
        let err = Client::connect(&server.url(refuse)).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Config, "{name}: {err}");
        assert!(err.to_string().contains("incompatible chunked framing"), "{name}: {err}");
    }
}

/// A fake server for framing a real one never sends: it greets with the Hello
/// of a 26.9 server configured `chunked` both ways, waits for the query whose
/// SQL contains `marker`, writes `reply`, then reads until the client closes.
fn fake_chunked_server(marker: &'static str, reply: Vec<u8>) -> (u16, std::thread::JoinHandle<()>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let handle = std::thread::spawn(move || {
        let (mut sock, _) = listener.accept().unwrap();
        let hello =
            concat!(env!("CARGO_MANIFEST_DIR"), "/../chnative-proto/tests/data/captures/hello_chunked_54492.bin");
        sock.write_all(&std::fs::read(hello).unwrap()).unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        while !got.windows(marker.len()).any(|w| w == marker.as_bytes()) {
            match sock.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
        sock.write_all(&reply).unwrap();
        while matches!(sock.read(&mut buf), Ok(n) if n > 0) {}
    });
    (port, handle)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_chunk_headers_are_protocol_errors_not_hangs() {
    let progress_message = [&[3u8, 0, 0, 0][..], &[3, 0, 0], &[0, 0, 0, 0]].concat();
    let cases: [(&str, Vec<u8>); 3] = [
        ("u32::MAX chunk", vec![0xff, 0xff, 0xff, 0xff]),
        ("empty message", vec![0, 0, 0, 0]),
        ("empty message after a packet", [&progress_message[..], &[0, 0, 0, 0]].concat()),
    ];
    for (what, reply) in cases {
        let marker = "SELECT 'fake chunked'";
        let (port, server) = fake_chunked_server(marker, reply);
        // No read timeout: only the framing check can end the wait.
        let config = Config::new().host("127.0.0.1").port(port).read_timeout(None).compression(Compression::None);
        let c = Client::connect_with(config).await.unwrap_or_else(|e| panic!("{what}: connect: {e}"));
        assert!(c.server_info().chunked_recv);
        let run = async {
            let mut s = c.fetch_blocks(marker).await?;
            while s.next().await?.is_some() {}
            Ok::<(), chnative::Error>(())
        };
        let res = tokio::time::timeout(Duration::from_secs(60), run).await;
        let err = res.unwrap_or_else(|_| panic!("{what}: the client hung on a malformed chunk header")).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Protocol, "{what}: {err}");
        assert!(err.to_string().contains("chunk"), "{what}: {err}");
        drop(c);
        server.join().unwrap();
    }
}
