//! The safe retry of an INSERT: when the connection dies mid-insert the
//! client cannot know whether the server stored the rows, so it retries with
//! the same deduplication token and the same rows, and the table holds
//! exactly one copy either way.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use chnative::{Client, Config};
use common::{http, server, unique_table, url};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A proxy that kills the connection once the client has sent `cut_after`
/// bytes: from then on nothing more reaches the client, and its socket is
/// closed as soon as the server says anything. With `cut_upstream` the server
/// gets only those bytes; without, it gets everything the client sends (so it
/// may store the rows while the client never hears that it did).
async fn killing_proxy(cut_after: usize, cut_upstream: bool) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let upstream = format!("127.0.0.1:{}", server().tcp_port);
    tokio::spawn(async move {
        let Ok((client, _)) = listener.accept().await else { return };
        let Ok(server) = TcpStream::connect(&upstream).await else { return };
        let (mut cr, mut cw) = client.into_split();
        let (mut sr, mut sw) = server.into_split();
        let sent = Arc::new(AtomicUsize::new(0));
        let sent2 = sent.clone();
        let up = tokio::spawn(async move {
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                let n = match cr.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                let before = sent2.fetch_add(n, Ordering::SeqCst);
                // Forward only up to the cut: the server sees a cut mid-stream.
                let keep = if cut_upstream { n.min(cut_after.saturating_sub(before)) } else { n };
                if keep > 0 && sw.write_all(&buf[..keep]).await.is_err() {
                    return;
                }
                if cut_upstream && before + n >= cut_after {
                    // Let the server finish reading what it got, then hang up on it.
                    let _ = sw.shutdown().await;
                    return;
                }
            }
        });
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = match sr.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            if sent.load(Ordering::SeqCst) >= cut_after || cw.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
        // Dropping both halves closes the client's socket.
        drop(cw);
        up.abort();
    });
    port
}

fn count(t: &str) -> u64 {
    http(&format!("SELECT count() FROM {t}")).trim().parse().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_insert_retried_with_its_token_is_stored_exactly_once() {
    let t = unique_table("chn_retry");
    http(&format!(
        "CREATE TABLE {t} (id UInt64, s String) ENGINE = MergeTree ORDER BY id \
         SETTINGS non_replicated_deduplication_window = 1000"
    ));
    let rows = 100_000u64;
    let ids: Vec<u64> = (0..rows).collect();
    let strs: Vec<String> = ids.iter().map(|i| format!("row-{i}")).collect();
    let retry_client = Client::connect(&url("compression=none")).await.unwrap();
    let mut expected = 0;
    // Cut before the data and inside it (nothing stored); let all data through
    // but lose the answer (1.5 MB: the server stores the rows, the client sees
    // an error); no cut (stored and confirmed, the retry is a duplicate).
    let cases = [(200usize, true), (300_000, true), (1_000_000, true), (1_500_000, false), (100_000_000, true)];
    for (attempt, (cut, cut_upstream)) in cases.into_iter().enumerate() {
        let token = format!("chn-retry-{}-{attempt}", std::process::id());
        let port = killing_proxy(cut, cut_upstream).await;
        let cfg = Config::from_url(&format!("clickhouse://default@127.0.0.1:{port}/default?compression=none"))
            .unwrap()
            .insert_block_rows(rows as usize);
        let first = async {
            let c = Client::connect_with(cfg).await?;
            c.insert(&t).column("id", &ids).column("s", &strs).deduplication_token(&token).send().await
        }
        .await;
        let before_retry = count(&t);
        eprintln!(
            "cut at {cut} (upstream too: {cut_upstream}): first attempt {:?}, stored {} rows",
            first.as_ref().map(|s| s.rows),
            before_retry - expected
        );
        // Whatever happened, retry once with the same token and the same rows.
        let retry =
            retry_client.insert(&t).column("id", &ids).column("s", &strs).deduplication_token(&token).send().await;
        retry.unwrap();
        expected += rows;
        assert_eq!(
            count(&t),
            expected,
            "cut at {cut}: first attempt {:?}, {before_retry} rows before the retry",
            first.as_ref().map(|s| s.rows)
        );
    }
    http(&format!("DROP TABLE {t}"));
}
