//! One INSERT fed with many blocks ([`chnative::BlockInsert`]): a SELECT
//! streamed from one connection into an INSERT on another, blocks checked
//! against the table before they are sent, and aborts (a block that does not
//! fit, a failed source, a drop) that leave nothing stored and no connection
//! in an unknown state.

use crate::common;
use common::*;

use std::time::{Duration, Instant};

use chnative::{fixed, Client, Connection, ErrorKind, InsertData, IntoInsertData};

/// Waits (up to 20 s) until the server no longer runs query `id`, so that
/// whatever it was going to store is stored.
async fn wait_gone(id: &str) {
    let start = Instant::now();
    while q(&format!("SELECT count() FROM system.processes WHERE query_id = '{id}'")) != "0" {
        assert!(start.elapsed() < Duration::from_secs(20), "query {id} still runs on the server");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A query id unique to this run.
fn qid(what: &str) -> String {
    unique_table(&format!("insert_{what}"))
}

const SOURCE: &str = "SELECT number AS id, toString(number) AS s, number * 0.5 AS f FROM numbers(1000000) \
                      SETTINGS max_block_size = 65536, max_threads = 1";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_select_streams_into_one_insert_of_many_blocks() {
    let source = client().await;
    for comp in ["none", "lz4", "zstd"] {
        let t = Table::create("insert_pipe", "(id UInt64, s String, f Float64) ENGINE = MergeTree ORDER BY id");
        let target = Client::connect(&url(&format!("compression={comp}"))).await.unwrap();
        let mut stream = source.fetch_blocks(SOURCE).await.unwrap();
        let sum = target.insert(&t).from_stream(&mut stream).await.unwrap_or_else(|e| panic!("{comp}: {e}"));
        assert_eq!(sum.rows, 1_000_000, "{comp}");
        assert!(sum.blocks >= 15, "{comp}: {} Data packets, expected one per source block", sum.blocks);
        assert_eq!(
            q(&format!("SELECT count(), sum(id), countIf(s = toString(id)), countIf(f = id * 0.5) FROM {}", &*t)),
            "1000000\t499999500000\t1000000\t1000000",
            "{comp}"
        );
        // One INSERT: one part made from one block number (a part merged from
        // several INSERTs spans several).
        assert_eq!(
            q(&format!(
                "SELECT count(), sum(rows), countIf(min_block_number = max_block_number) FROM system.parts \
                 WHERE database = currentDatabase() AND table = '{}' AND active",
                &*t
            )),
            "1\t1000000\t1",
            "{comp}"
        );
        // The source's connection went back to its pool, the target's too.
        assert_eq!(target.fetch_scalar::<u64>("SELECT toUInt64(7)").await.unwrap(), 7);
    }
    assert_eq!(source.pool_status().in_use, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocks_with_their_columns_in_another_order_are_reordered() {
    for comp in ["none", "lz4", "zstd"] {
        let t =
            Table::create("insert_order", "(id UInt64, s String, d UInt8 DEFAULT 9) ENGINE = MergeTree ORDER BY id");
        let mut conn = Connection::connect(&url(&format!("compression={comp}"))).await.unwrap();
        let id = qid("order");
        let mut ins = conn.insert(&t).query_id(id.as_str()).open().await.unwrap();
        assert_eq!(ins.query_id(), id);
        let ids: Vec<u64> = (0..1000).collect();
        let strs: Vec<String> = ids.iter().map(|i| format!("v{i}")).collect();
        let ids2: Vec<u64> = (1000..1500).collect();
        let strs2: Vec<String> = ids2.iter().map(|i| format!("v{i}")).collect();
        ins.write_columns(&[("id", fixed(&ids)), ("s", strs.as_slice().into_insert_data())]).await.unwrap();
        // The INSERT is open on the server with the id given.
        assert_eq!(q(&format!("SELECT count() FROM system.processes WHERE query_id = '{id}'")), "1", "{comp}");
        ins.write_columns(&[("s", strs2.as_slice().into_insert_data()), ("id", fixed(&ids2))]).await.unwrap();
        // A block read from the server, its columns in yet another order.
        let source = client().await;
        let mut src =
            source.fetch_blocks("SELECT toString(number) AS s, number AS id FROM numbers(1500, 500)").await.unwrap();
        let b = src.next().await.unwrap().unwrap().clone();
        drop(src);
        ins.write(&b).await.unwrap();
        // An empty block is skipped (it would end the INSERT on the wire).
        let none: Vec<u64> = Vec::new();
        let none_s: Vec<String> = Vec::new();
        ins.write_columns(&[("id", fixed(&none)), ("s", none_s.as_slice().into_insert_data())]).await.unwrap();
        assert_eq!(ins.rows(), 2000);
        let sum = ins.end().await.unwrap();
        assert_eq!((sum.rows, sum.blocks), (2000, 3), "{comp}");
        assert_eq!(
            q(&format!(
                "SELECT count(), sum(id), countIf(s = concat('v', toString(id)) OR s = toString(id)), sum(d) FROM {}",
                &*t
            )),
            "2000\t1999000\t2000\t18000",
            "{comp}"
        );
        assert!(conn.is_usable());
        assert_eq!(conn.fetch_scalar::<u64>("SELECT toUInt64(1)").await.unwrap(), 1);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_block_that_does_not_fit_mid_way_aborts_the_insert() {
    let source = client().await;
    for comp in ["none", "lz4", "zstd"] {
        for bad in ["extra column", "missing column", "wrong type", "ragged"] {
            let what = format!("{comp}, {bad}");
            let t = Table::create("insert_abort", "(id UInt64, s String) ENGINE = MergeTree ORDER BY id");
            let target = Client::connect(&url(&format!("compression={comp}"))).await.unwrap();
            let id = qid("abort");
            let mut ins = target.insert(&t).query_id(id.as_str()).open().await.unwrap();
            let mut st = source
                .fetch_blocks(
                    "SELECT number AS id, toString(number) AS s FROM numbers(300000) SETTINGS max_block_size = 65536",
                )
                .await
                .unwrap();
            while let Some(b) = st.next().await.unwrap() {
                ins.write(b).await.unwrap();
            }
            assert_eq!(ins.rows(), 300_000);
            let ids: Vec<u64> = vec![1, 2, 3];
            let strs: Vec<String> = vec!["a".into(), "b".into(), "c".into()];
            let short: Vec<String> = vec!["a".into()];
            let wrong: Vec<u32> = vec![1, 2, 3];
            let cols: Vec<(&str, InsertData<'_>)> = match bad {
                "extra column" => {
                    vec![("id", fixed(&ids)), ("s", strs.as_slice().into_insert_data()), ("z", fixed(&ids))]
                }
                "missing column" => vec![("id", fixed(&ids))],
                "wrong type" => vec![("id", fixed(&wrong)), ("s", strs.as_slice().into_insert_data())],
                _ => vec![("id", fixed(&ids)), ("s", short.as_slice().into_insert_data())],
            };
            let e = ins.write_columns(&cols).await.unwrap_err();
            let kind = if bad == "wrong type" { ErrorKind::TypeMismatch } else { ErrorKind::InvalidInput };
            assert_eq!(e.kind(), kind, "{what}: {e}");
            assert!(e.to_string().contains("aborted after 300000 rows"), "{what}: {e}");
            // The INSERT is over: nothing more is taken.
            let again =
                ins.write_columns(&[("id", fixed(&ids)), ("s", strs.as_slice().into_insert_data())]).await.unwrap_err();
            assert!(again.to_string().contains("failed or ended earlier"), "{what}: {again}");
            drop(ins);
            wait_gone(&id).await;
            assert_eq!(t.count(), 0, "{what}: the aborted INSERT stored rows");
            // The pool opens a new connection; the client carries on.
            assert_eq!(target.fetch_scalar::<u64>("SELECT toUInt64(5)").await.unwrap(), 5, "{what}");
            target.insert(&t).column("id", &ids).column("s", &strs).send().await.unwrap();
            assert_eq!(t.count(), 3, "{what}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_single_connection_is_closed_by_an_abort_and_kept_by_a_first_block_refusal() {
    let t = Table::create("insert_conn", "(id UInt64, s String) ENGINE = MergeTree ORDER BY id");
    let mut conn = Connection::connect(&url("")).await.unwrap();
    let ids: Vec<u64> = vec![1, 2, 3];
    let strs: Vec<String> = vec!["a".into(), "b".into(), "c".into()];
    let wrong: Vec<u32> = vec![1, 2, 3];

    // The first block does not fit: the INSERT ends empty, the connection stays.
    let mut ins = conn.insert_blocks(&t).await.unwrap();
    let e = ins.write_columns(&[("id", fixed(&wrong)), ("s", strs.as_slice().into_insert_data())]).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TypeMismatch, "{e}");
    assert!(!e.to_string().contains("aborted"), "{e}");
    drop(ins);
    assert!(conn.is_usable());
    assert_eq!(conn.fetch_scalar::<u64>("SELECT toUInt64(1)").await.unwrap(), 1);
    // Nor does a column the table lacks, nor one left out without a default.
    let mut ins = conn.insert_blocks(&t).await.unwrap();
    let e = ins.write_columns(&[("id", fixed(&ids))]).await.unwrap_err();
    assert!(e.to_string().contains("missing column"), "{e}");
    drop(ins);
    assert!(conn.is_usable());

    // A later block does not fit: the connection is closed, not reused.
    let id = qid("conn");
    let mut ins = conn.insert(&t).query_id(id.as_str()).open().await.unwrap();
    ins.write_columns(&[("id", fixed(&ids)), ("s", strs.as_slice().into_insert_data())]).await.unwrap();
    let e = ins.write_columns(&[("id", fixed(&wrong)), ("s", strs.as_slice().into_insert_data())]).await.unwrap_err();
    assert!(e.to_string().contains("aborted"), "{e}");
    drop(ins);
    assert!(!conn.is_usable());
    let e = conn.fetch_scalar::<u64>("SELECT toUInt64(1)").await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Closed, "{e}");
    wait_gone(&id).await;
    assert_eq!(t.count(), 0);

    // abort() does the same on purpose.
    let mut conn = Connection::connect(&url("")).await.unwrap();
    let id = qid("conn_abort");
    let mut ins = conn.insert(&t).query_id(id.as_str()).open().await.unwrap();
    ins.write_columns(&[("id", fixed(&ids)), ("s", strs.as_slice().into_insert_data())]).await.unwrap();
    ins.abort();
    assert!(!conn.is_usable());
    wait_gone(&id).await;
    assert_eq!(t.count(), 0);

    // An INSERT given nothing sends nothing.
    let mut conn = Connection::connect(&url("")).await.unwrap();
    let ins = conn.insert_blocks(&t).await.unwrap();
    let sum = ins.end().await.unwrap();
    assert_eq!(sum.rows, 0);
    assert!(conn.is_usable());
    // A server exception ends the INSERT on the server; the connection stays.
    let mut ins = conn.insert_blocks("insert_no_such_table_anywhere").await.unwrap();
    let e = ins.write_columns(&[("id", fixed(&ids))]).await.unwrap_err();
    assert_eq!(e.server_code(), Some(60), "{e}");
    drop(ins);
    assert!(conn.is_usable());
    assert_eq!(conn.fetch_scalar::<u64>("SELECT toUInt64(1)").await.unwrap(), 1);
    // Columns given before open() are refused.
    let e = conn.insert(&t).column("id", &ids).open().await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_source_aborts_the_insert() {
    let source = client().await;
    let target = client().await;
    let t = Table::create("insert_src_err", "(id UInt64, s String) ENGINE = MergeTree ORDER BY id");
    let id = qid("src");
    let sql = "SELECT number AS id, toString(number) AS s FROM numbers(1000000) WHERE throwIf(number = 400000) = 0 \
               SETTINGS max_block_size = 65536, max_threads = 1";
    // The source delivers blocks before it fails, so the INSERT has rows when it is aborted.
    let mut stream = source.fetch_blocks(sql).await.unwrap();
    let mut before = 0;
    while let Ok(Some(b)) = stream.next().await {
        before += b.rows();
    }
    assert!(before >= 65536, "{before} rows before the error");
    drop(stream);
    let mut stream = source.fetch_blocks(sql).await.unwrap();
    let e = target.insert(&t).query_id(id.as_str()).from_stream(&mut stream).await.unwrap_err();
    assert_eq!(e.server_code(), Some(395), "{e}");
    wait_gone(&id).await;
    assert_eq!(t.count(), 0, "rows of an INSERT whose source failed were stored");
    assert_eq!(target.fetch_scalar::<u64>("SELECT toUInt64(2)").await.unwrap(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_blocks_with_the_same_token_are_stored_once() {
    let t = Table::create(
        "insert_blocks_dedup",
        "(id UInt64, s String) ENGINE = MergeTree ORDER BY id SETTINGS non_replicated_deduplication_window = 100",
    );
    let c = client().await;
    let run = |token: &'static str| {
        let c = c.clone();
        let t = t.0.clone();
        async move {
            let mut src = c
                .fetch_blocks(
                    "SELECT number AS id, toString(number) AS s FROM numbers(200000) SETTINGS max_block_size = 65536",
                )
                .await
                .unwrap();
            // Another client: the source holds one connection of `c`'s pool, and the INSERT another.
            c.insert(&t).deduplication_token(token).from_stream(&mut src).await.unwrap()
        }
    };
    assert_eq!(run("etl-1").await.rows, 200_000);
    assert_eq!(t.count(), 200_000);
    // The same blocks again with the same token: deduplicated.
    assert_eq!(run("etl-1").await.rows, 200_000);
    assert_eq!(t.count(), 200_000);
    // With another token they are stored again (so it was the token).
    run("etl-2").await;
    assert_eq!(t.count(), 400_000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_cancelled_halfway_aborts_the_insert() {
    let t = Table::create("insert_cancel", "(id UInt64) ENGINE = MergeTree ORDER BY id");
    // Through a proxy that stops forwarding what the client sends, so the big
    // write surely waits (straight to the server, a fast server could take
    // 32 MB within one poll: the test used to fail so on a loaded machine).
    let proxy = crate::common_proxy::Proxy::to_server().await;
    let c = Client::connect(&proxy.url("")).await.unwrap();
    let small: Vec<u64> = (0..10).collect();
    let big: Vec<u64> = (0..4_000_000).collect();
    for first in [true, false] {
        let id = qid("cancel");
        let mut ins = c.insert(&t).query_id(id.as_str()).open().await.unwrap();
        if !first {
            ins.write_columns(&[("id", fixed(&small))]).await.unwrap();
        }
        proxy.stall(crate::common_proxy::Dir::Up);
        // Polled once, then dropped: 32 MB do not fit in the sockets at once.
        let cols = [("id", fixed(&big))];
        tokio::select! {
            biased;
            r = ins.write_columns(&cols) => panic!("the write finished at once: {r:?}"),
            _ = std::future::ready(()) => {}
        }
        let e = ins.write_columns(&[("id", fixed(&small))]).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Closed, "{e}");
        assert!(e.to_string().contains("cancelled halfway"), "{e}");
        drop(ins);
        // The server gets the half packet, then the end of the connection.
        proxy.resume(crate::common_proxy::Dir::Up);
        wait_gone(&id).await;
        assert_eq!(t.count(), 0, "first: {first}");
        assert_eq!(c.fetch_scalar::<u64>("SELECT toUInt64(3)").await.unwrap(), 3);
    }
}

/// Blocks that come with the INSERT's columns in its order are sent as they
/// are: once the first block has sized the INSERT's vectors (the wire type
/// names, the (name, data) list, the spliced runs), a block allocates nothing
/// on its way out. This thread's allocations (a current-thread runtime, so
/// other tests do not count), not a time.
#[tokio::test(flavor = "current_thread")]
async fn blocks_in_the_insert_order_allocate_nothing_once_warm() {
    let source = client().await;
    let mut blocks = Vec::new();
    let mut s = source
        .fetch_blocks(
            "SELECT number AS id, toString(number) AS s, toDateTime(number) AS t, toInt32(number) AS n \
             FROM numbers(200000) SETTINGS max_block_size = 2048, max_threads = 1",
        )
        .await
        .unwrap();
    while let Some(b) = s.next().await.unwrap() {
        blocks.push(b.clone());
    }
    drop(s);
    assert!(blocks.len() >= 90, "{} blocks", blocks.len());
    let t = Table::create("insert_warm", "(id UInt64, s String, t DateTime, n Int32) ENGINE = Null");
    for comp in ["none", "lz4"] {
        let target = Client::connect(&url(&format!("compression={comp}"))).await.unwrap();
        let mut ins = target.insert_blocks(&t).await.unwrap();
        ins.write(&blocks[0]).await.unwrap();
        let before = chnative_testkit::alloc::calls();
        for b in &blocks[1..] {
            ins.write(b).await.unwrap();
        }
        let calls = chnative_testkit::alloc::calls() - before;
        let sum = ins.end().await.unwrap();
        assert_eq!(sum.rows, 200_000, "{comp}");
        println!("{comp}: {} writes after the first made {calls} allocations", blocks.len() - 1);
        // A block's own encoding takes none (it took eleven before). What the
        // server sends meanwhile may take a few, independent of the block
        // count: a ProfileEvents block with more rows than any before grows
        // its reused columns (up to ~50 allocations when the server is busy).
        assert!(calls < blocks.len() as u64, "{comp}: {calls} allocations for {} blocks", blocks.len() - 1);
    }
}
