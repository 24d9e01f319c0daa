//! Failures: server exceptions mid-stream, corrupted and cut connections,
//! timeouts and oversized blocks. None may panic, hang or yield wrong values,
//! and a connection in an unknown state must not be reused.

use crate::common;
use std::time::Duration;

use common::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[tokio::test]
async fn exception_in_the_middle_of_a_stream() {
    for rev in REVISIONS {
        let c = client_at(rev, "lz4").await;
        let mut s = c
            .fetch_blocks(
                chnative::Query::new("SELECT throwIf(number = 50000, 'mid-stream') AS x FROM numbers(100000)")
                    .setting("max_block_size", "1000"),
            )
            .await
            .unwrap();
        let mut rows = 0;
        let err = loop {
            match s.next().await {
                Ok(Some(b)) => rows += b.rows(),
                Ok(None) => panic!("expected an exception"),
                Err(e) => break e,
            }
        };
        assert!(rows > 0 && rows <= 50000, "{rows}");
        assert_eq!(err.server_code(), Some(395), "{err}");
        drop(s);
        assert!(c.is_usable());
        let v: u8 = c.fetch_scalar("SELECT 7").await.unwrap();
        assert_eq!(v, 7);
    }
}

/// A proxy in front of the real server that damages the server→client bytes:
/// flips the byte at `flip_at`, or closes the connection after `cut_at` bytes.
async fn damaging_proxy(flip_at: Option<usize>, cut_at: Option<usize>) -> u16 {
    proxy(flip_at, cut_at, None).await
}

/// Like [`damaging_proxy`], and `stall_at` stops forwarding (without closing) after that many bytes.
async fn proxy(flip_at: Option<usize>, cut_at: Option<usize>, stall_at: Option<usize>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let upstream = format!("127.0.0.1:{}", server().tcp_port);
    tokio::spawn(async move {
        let Ok((client, _)) = listener.accept().await else { return };
        let Ok(server) = TcpStream::connect(&upstream).await else { return };
        let (mut cr, mut cw) = client.into_split();
        let (mut sr, mut sw) = server.into_split();
        tokio::spawn(async move {
            let _ = tokio::io::copy(&mut cr, &mut sw).await;
        });
        let mut seen = 0usize;
        let mut buf = vec![0u8; 64 << 10];
        loop {
            let n = match sr.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let chunk = &mut buf[..n];
            if let Some(at) = flip_at {
                if at >= seen && at < seen + n {
                    chunk[at - seen] ^= 0x5a;
                }
            }
            if let Some(stall) = stall_at {
                if seen + n >= stall {
                    let _ = cw.write_all(&chunk[..stall - seen]).await;
                    tokio::time::sleep(Duration::from_secs(30)).await;
                    break;
                }
            }
            if let Some(cut) = cut_at {
                if seen + n >= cut {
                    let _ = cw.write_all(&chunk[..cut - seen]).await;
                    break; // dropping both halves closes the connection
                }
            }
            if cw.write_all(chunk).await.is_err() {
                break;
            }
            seen += n;
        }
    });
    port
}

#[tokio::test]
async fn corrupted_compressed_frame_is_a_checksum_error() {
    let port = damaging_proxy(Some(300_000), None).await;
    // One socket: the check below is that *this* connection stays closed.
    let mut c =
        chnative::Connection::connect(&format!("clickhouse://default@127.0.0.1:{port}/default?compression=lz4"))
            .await
            .unwrap();
    // Random strings do not compress, so byte 300000 lies inside a frame body.
    let mut s =
        c.fetch_blocks("SELECT randomString(100) FROM numbers(20000) SETTINGS max_block_size = 20000").await.unwrap();
    let err = loop {
        match s.next().await {
            Ok(Some(_)) => {}
            Ok(None) => panic!("corruption went unnoticed"),
            Err(e) => break e,
        }
    };
    assert!(
        matches!(err.as_protocol(), Some(chnative_proto::ProtoError::Checksum { .. })),
        "expected a checksum error, got {err:?}"
    );
    drop(s);
    assert!(!c.is_usable());
    assert!(matches!(c.ping().await, Err(ref e) if e.kind() == chnative::ErrorKind::Closed));
}

#[tokio::test]
async fn cut_connection_is_an_io_error_not_a_hang() {
    for cut in [10, 190, 5_000, 150_000] {
        let port = damaging_proxy(None, Some(cut)).await;
        let res = async {
            let c = chnative::Client::connect(&format!(
                "clickhouse://default@127.0.0.1:{port}/default?compression=none&read_timeout=10s"
            ))
            .await?;
            let mut s = c.fetch_blocks("SELECT number, toString(number) FROM numbers(100000)").await?;
            while s.next().await?.is_some() {}
            Ok::<_, chnative::Error>(())
        };
        let res = tokio::time::timeout(Duration::from_secs(20), res).await.expect("must not hang");
        match res {
            // A cut inside the handshake is a connect failure.
            Err(e) if e.as_io().is_some() => {
                assert_eq!(e.as_io().unwrap().kind(), std::io::ErrorKind::UnexpectedEof, "cut at {cut}: {e}")
            }
            other => panic!("cut at {cut}: expected an I/O error, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn read_timeout_closes_the_connection() {
    let c = chnative::Client::connect(&url("read_timeout=300ms&set_interactive_delay=10000000")).await.unwrap();
    let err = c.execute("SELECT sleep(2)").await.unwrap_err();
    assert!(err.kind() == chnative::ErrorKind::Timeout, "{err:?}");
    assert!(!c.is_usable());
}

#[tokio::test]
async fn block_larger_than_the_limit_is_refused_before_allocating() {
    for comp in ["none", "lz4"] {
        let cfg = chnative::Config::from_url(&url(&format!("compression={comp}"))).unwrap().max_block_bytes(100_000);
        let c = chnative::Client::connect_with(cfg).await.unwrap();
        let err = c.execute("SELECT number FROM numbers(1000000) SETTINGS max_block_size = 1000000").await.unwrap_err();
        assert!(matches!(err.as_protocol(), Some(chnative_proto::ProtoError::TooLarge { .. })), "{comp}: {err:?}");
        assert!(!c.is_usable());
    }
}

#[tokio::test]
async fn type_mismatch_names_column_and_both_types() {
    let c = client().await;
    let mut s = c.fetch_blocks("SELECT toUInt64(1) AS id").await.unwrap();
    let b = s.next().await.unwrap().unwrap();
    let err = b.column("id").unwrap().view().values::<u32>().map_err(chnative::Error::from).unwrap_err();
    assert_eq!(err.kind(), chnative::ErrorKind::TypeMismatch, "{err:?}");
    let m = err.as_type_mismatch().unwrap();
    assert_eq!((m.column.as_str(), m.requested.as_str(), m.actual.as_str()), ("id", "u32", "UInt64"));
}

#[tokio::test]
async fn query_parameters_are_sent_not_spliced() {
    let c = client().await;
    let tricky = "it's a\ttab\\and\nnewline '; DROP TABLE x; --";
    let q =
        chnative::Query::new("SELECT {s:String} AS s, {n:UInt64} + 1 AS n, {a:Array(String)} AS a, {f:Float64} AS f")
            .bind("s", tricky)
            .bind("n", 41u64)
            .bind("a", vec!["x'y", "z"])
            .bind("f", 1.25f64);
    let mut s = c.fetch_blocks(q).await.unwrap();
    let b = s.next().await.unwrap().unwrap();
    assert_eq!(b.column("s").unwrap().view().as_strings().unwrap().str(0).unwrap(), tricky);
    assert_eq!(b.column("n").unwrap().view().values::<u64>().unwrap(), &[42]);
    let a = b.column("a").unwrap().view();
    let a = a.as_array().unwrap();
    let strs = a.inner().as_strings().unwrap();
    assert_eq!((strs.str(0).unwrap(), strs.str(1).unwrap()), ("x'y", "z"));
    assert_eq!(b.column("f").unwrap().view().values::<f64>().unwrap(), &[1.25]);
    drop(s);
    let p = chnative::params! {"min" => 5u64};
    let n: u64 = c.fetch_scalar(("SELECT count() FROM numbers(10) WHERE number > {min:UInt64}", p)).await.unwrap();
    assert_eq!(n, 4);
}

#[tokio::test]
async fn abandoning_a_read_mid_packet_closes_the_connection() {
    let port = proxy(None, None, Some(150_000)).await;
    let mut c = chnative::Connection::connect(&format!(
        "clickhouse://default@127.0.0.1:{port}/default?compression=none&read_timeout=2s"
    ))
    .await
    .unwrap();
    let mut s = c
        .fetch_blocks("SELECT number, toString(number) FROM numbers(100000) SETTINGS max_block_size = 100000")
        .await
        .unwrap();
    // The server's block stalls half-way; give up on it.
    let r = tokio::time::timeout(Duration::from_millis(300), s.next()).await;
    assert!(r.is_err(), "the read should still be waiting");
    drop(s);
    // Whatever comes next must not read the rest of that block as a new answer.
    let next = tokio::time::timeout(Duration::from_secs(10), c.fetch_scalar::<u8>("SELECT 1")).await.expect("no hang");
    let kind = next.as_ref().err().map(chnative::Error::kind);
    assert!(matches!(kind, Some(chnative::ErrorKind::Closed | chnative::ErrorKind::Timeout)), "{next:?}");
    assert!(!c.is_usable());
}

/// Row counts have kinds of their own: a query that must return a row and
/// returned none is `NoRows` (not invalid input: the call was well formed), one
/// that returned a row too many is `TooManyRows`. The connection stays usable.
#[tokio::test]
async fn row_counts_have_their_own_kinds() {
    use chnative::ErrorKind;
    let c = client().await;
    let e = c.fetch_one::<u64>("SELECT number FROM numbers(0)").await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoRows, "{e:?}");
    assert_eq!(e.to_string(), "the query returned no rows, expected one");
    let e = c.fetch_scalar::<u64>("SELECT number FROM numbers(0)").await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoRows, "{e:?}");
    assert_eq!(c.fetch_optional::<u64>("SELECT number FROM numbers(0)").await.unwrap(), None);
    for e in [
        c.fetch_one::<u64>("SELECT number FROM numbers(2)").await.unwrap_err(),
        c.fetch_optional::<u64>("SELECT number FROM numbers(2)").await.unwrap_err(),
    ] {
        assert_eq!(e.kind(), ErrorKind::TooManyRows, "{e:?}");
        assert!(!e.is_closed() && !e.is_retryable(), "{e:?}");
    }
    // A type mismatch on an empty result is still reported as one.
    let e = c.fetch_scalar::<String>("SELECT number FROM numbers(0)").await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TypeMismatch, "{e:?}");
    assert_eq!(c.fetch_scalar::<u8>("SELECT 7").await.unwrap(), 7);
}
