//! Uncompressed fixed-width columns received straight from the socket into the
//! column's buffer, against the real server: exact values for wide and mixed
//! blocks, the same results with LZ4 (which does not take the path; neither
//! does chunked framing, which needs a server of its own, see chunked.rs), and a stream cancelled or dropped mid-column leaving a usable
//! connection. A fake server cuts the connection and goes silent mid-column.

use crate::common;
use crate::common::fake_server;

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll};

use chnative::{Client, Config, Connection, QueryStream};
use chnative_proto::wire::WriteExt;
use chnative_testkit::packets::{block, data_packet};
use common::*;
use fake_server::FakeServer;

async fn sum_numbers(s: &mut QueryStream<'_>) -> (u64, u64) {
    let (mut rows, mut sum) = (0u64, 0u64);
    while let Some(b) = s.next().await.unwrap() {
        let v: &[u64] = b.column("number").unwrap().view().values().unwrap();
        for (i, &x) in v.iter().enumerate() {
            assert_eq!(x, rows + i as u64, "values arrive in order with no gap");
        }
        rows += v.len() as u64;
        sum += v.iter().sum::<u64>();
    }
    (rows, sum)
}

#[tokio::test]
async fn ten_million_numbers_arrive_straight_into_the_column() {
    const N: u64 = 10_000_000;
    for (options, direct) in [("compression=none", true), ("compression=lz4", false)] {
        let c = Client::connect(&url(options)).await.unwrap();
        let mut s = c.fetch_blocks(format!("SELECT number FROM numbers({N})")).await.unwrap();
        let (rows, sum) = sum_numbers(&mut s).await;
        assert_eq!((rows, sum), (N, N * (N - 1) / 2), "{options}");
        let got = s.direct_bytes();
        if direct {
            // Most of the 80 MB: all but what the input buffer held when a column began.
            assert!(got > N * 8 / 2, "{options}: only {got} bytes came straight from the socket");
        } else {
            assert_eq!(got, 0, "{options}: the direct path needs uncompressed bytes");
        }
    }
}

#[tokio::test]
async fn mixed_blocks_keep_every_value() {
    const N: u64 = 3_000_000;
    let sql = format!(
        "SELECT number, toString(number) AS s, toUInt32(number) AS u, toNullable(number) AS n, \
         toFloat64(number) AS f, toLowCardinality(toString(number % 10)) AS lc, \
         if(number % 3 = 0, NULL, number) AS sparse_null FROM numbers({N})"
    );
    for (options, direct) in [("compression=none", true), ("compression=lz4", false)] {
        let c = Client::connect(&url(options)).await.unwrap();
        let mut s = c.fetch_blocks(sql.as_str()).await.unwrap();
        let mut next = 0u64;
        while let Some(b) = s.next().await.unwrap() {
            let numbers: &[u64] = b.column("number").unwrap().view().values().unwrap();
            let strings = b.column("s").unwrap().view().as_strings().unwrap();
            let u: &[u32] = b.column("u").unwrap().view().values().unwrap();
            let f: &[f64] = b.column("f").unwrap().view().values().unwrap();
            let n_view = b.column("n").unwrap().view();
            let n = n_view.as_nullable().unwrap();
            let n_values: &[u64] = n.inner().values().unwrap();
            let lc_view = b.column("lc").unwrap().view();
            let lc = lc_view.as_low_cardinality().unwrap();
            let lc_dict = lc.dictionary().as_strings().unwrap();
            let sn_view = b.column("sparse_null").unwrap().view();
            let sn = sn_view.as_nullable().unwrap();
            let sn_values: &[u64] = sn.inner().values().unwrap();
            for i in 0..b.rows() {
                let x = next + i as u64;
                assert_eq!(numbers[i], x);
                assert_eq!(strings.str(i).unwrap(), x.to_string());
                assert_eq!(u[i], x as u32);
                assert_eq!(f[i], x as f64);
                assert_eq!((n.is_null(i), n_values[i]), (false, x));
                assert_eq!(lc_dict.str(lc.keys().get(i)).unwrap(), (x % 10).to_string());
                assert_eq!(sn.is_null(i), x.is_multiple_of(3));
                if !x.is_multiple_of(3) {
                    assert_eq!(sn_values[i], x);
                }
            }
            next += b.rows() as u64;
        }
        assert_eq!(next, N, "{options}");
        let got = s.direct_bytes();
        assert_eq!(got > 0, direct, "{options}: {got} bytes came straight from the socket");
    }
}

/// Polls `next()` until it has to wait with part of a column in hand, then
/// drops that call: the block is left mid-column.
async fn leave_mid_column(s: &mut QueryStream<'_>) {
    let mut polls = 0;
    loop {
        let before = s.direct_bytes();
        {
            let mut next = pin!(s.next());
            let waker = std::task::Waker::noop();
            match next.as_mut().poll(&mut Context::from_waker(waker)) {
                Poll::Ready(r) => {
                    r.unwrap().expect("the result is longer than this");
                }
                Poll::Pending => {}
            }
        }
        if s.direct_bytes() > before {
            return;
        }
        polls += 1;
        assert!(polls < 100_000, "never caught a column arriving");
        tokio::task::yield_now().await;
    }
}

const WIDE: &str = "SELECT number, toUInt32(number) AS u FROM numbers(50000000) SETTINGS max_block_size = 1000000";

#[tokio::test]
async fn cancel_mid_column_then_reuse() {
    let c = Client::connect(&url("compression=none")).await.unwrap();
    let mut s = c.fetch_blocks(WIDE).await.unwrap();
    leave_mid_column(&mut s).await;
    s.cancel().await.unwrap();
    let (rows, sum) = sum_numbers(&mut c.fetch_blocks("SELECT number FROM numbers(2000000)").await.unwrap()).await;
    assert_eq!((rows, sum), (2_000_000, 2_000_000 * 1_999_999 / 2));
}

#[tokio::test]
async fn dropping_a_stream_mid_column_drains_and_the_connection_is_reused() {
    // A single socket: the drain must finish the cut column, not close.
    let mut c = Connection::connect(&url("compression=none")).await.unwrap();
    {
        let mut s = c.fetch_blocks(WIDE).await.unwrap();
        leave_mid_column(&mut s).await;
    }
    let (rows, sum) = sum_numbers(&mut c.fetch_blocks("SELECT number FROM numbers(2000000)").await.unwrap()).await;
    assert_eq!((rows, sum), (2_000_000, 2_000_000 * 1_999_999 / 2));
    assert!(c.is_usable());
    // The pooled client too.
    let c = Client::connect(&url("compression=none")).await.unwrap();
    {
        let mut s = c.fetch_blocks(WIDE).await.unwrap();
        leave_mid_column(&mut s).await;
    }
    let v: u64 = c.fetch_scalar("SELECT sum(number) FROM numbers(1000)").await.unwrap();
    assert_eq!(v, 499_500);
}

/// A Data block of 1M UInt64 rows cut after `keep` bytes of its values.
fn cut_block(keep: usize) -> Vec<u8> {
    let mut values = Vec::new();
    for i in 0..1_000_000u64 {
        values.put_u64_le(i);
    }
    let body = block(54492, 1_000_000, &[("number", "UInt64", &[0], &values)]);
    let mut p = data_packet(&body, None);
    p.truncate(p.len() - values.len() + keep);
    p
}

#[tokio::test]
async fn a_server_that_closes_mid_column_is_a_clear_error() {
    let fake = FakeServer::start_closing(54492, false, cut_block(3 << 20));
    let mut c = Connection::connect(&fake.url(54492, "none")).await.unwrap();
    let mut s = c.fetch_blocks("SELECT number").await.unwrap();
    let err = s.next().await.map(|_| ()).expect_err("the column was cut");
    assert!(s.direct_bytes() > 0, "the cut came during a direct read");
    drop(s);
    assert_eq!(err.kind(), chnative::ErrorKind::Io, "{err}");
    assert_eq!(err.as_io().map(std::io::Error::kind), Some(std::io::ErrorKind::UnexpectedEof), "{err}");
    assert!(err.to_string().contains("server closed the connection"), "{err}");
    assert!(!c.is_usable());
    assert!(matches!(c.ping().await, Err(ref e) if e.kind() == chnative::ErrorKind::Closed));
    drop(c);
    assert!(fake.finish().after.is_empty(), "nothing is sent after the cut");
}

#[tokio::test]
async fn a_server_silent_mid_column_times_out_and_is_closed() {
    let fake = FakeServer::start(54492, false, cut_block(3 << 20));
    let cfg =
        Config::from_url(&fake.url(54492, "none")).unwrap().read_timeout(Some(std::time::Duration::from_millis(300)));
    let mut c = Connection::connect_with(cfg).await.unwrap();
    let mut s = c.fetch_blocks("SELECT number").await.unwrap();
    let err = s.next().await.map(|_| ()).expect_err("the server went silent");
    assert!(s.direct_bytes() > 0, "the silence came during a direct read");
    drop(s);
    assert!(err.kind() == chnative::ErrorKind::Timeout, "{err}");
    assert!(!c.is_usable());
    drop(c);
    assert!(fake.finish().after.is_empty(), "nothing is sent after the timeout");
}
