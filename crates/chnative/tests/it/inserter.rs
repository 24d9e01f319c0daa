//! The typed-row [`chnative::Inserter`] as a service uses it: a time-based
//! flush, per-inserter settings, query ids and deduplication tokens that reach
//! the server, and a warning when rows are dropped unsent.

use crate::common;
use common::*;

use std::time::Duration;

use chnative::{fixed, Client, ErrorKind, IntoInsertData, Row};

#[derive(Row, Debug, Clone)]
struct Ev {
    id: u64,
    s: String,
}

fn ev(i: u64) -> Ev {
    Ev { id: i, s: format!("s{i}") }
}

const EV_TABLE: &str = "(id UInt64, s String) ENGINE = MergeTree ORDER BY id";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_older_than_the_period_go_with_the_next_write_or_commit() {
    let t = Table::create("inserter_period", EV_TABLE);
    let c = client().await;
    let period = Duration::from_millis(200);
    let mut ins = c.inserter::<Ev>(&t).await.unwrap().max_rows(1_000_000).period(period);
    assert_eq!(ins.time_left(), None, "nothing buffered, nothing due");
    for i in 0..10 {
        ins.write(&ev(i)).await.unwrap();
    }
    assert!(ins.time_left().is_some_and(|t| t <= period));
    tokio::time::sleep(period * 2).await;
    assert_eq!(ins.time_left(), Some(Duration::ZERO));
    // The first rows are past the period: the next write sends them (with its own row).
    ins.write(&ev(10)).await.unwrap();
    assert_eq!(ins.pending(), 0);
    assert_eq!(t.count(), 11);
    assert_eq!(ins.time_left(), None);

    // commit() sends rows that are due, without a write.
    for i in 11..16 {
        ins.write(&ev(i)).await.unwrap();
    }
    tokio::time::sleep(period * 2).await;
    assert!(ins.commit().await.unwrap());
    assert_eq!(t.count(), 16);
    assert!(!ins.commit().await.unwrap(), "nothing buffered");
    assert_eq!(ins.end().await.unwrap().rows, 16);

    // Rows within the period stay (a period no test run comes near).
    let mut ins = c.inserter::<Ev>(&t).await.unwrap().period(Duration::from_secs(3600));
    for i in 100..103 {
        ins.write(&ev(i)).await.unwrap();
    }
    assert!(!ins.commit().await.unwrap());
    assert_eq!((ins.pending(), t.count()), (3, 16));
    assert!(ins.time_left().is_some_and(|t| t > Duration::from_secs(60)));
    // A row limit still applies with a period.
    let mut ins2 = c.inserter::<Ev>(&t).await.unwrap().period(Duration::from_secs(3600)).max_rows(2);
    ins2.write(&ev(200)).await.unwrap();
    ins2.write(&ev(201)).await.unwrap();
    assert_eq!((ins2.pending(), t.count()), (0, 18));
    assert_eq!(ins2.end().await.unwrap().rows, 2);
    assert_eq!(ins.end().await.unwrap().rows, 3);
    assert_eq!(
        q(&format!("SELECT count(), sum(id), countIf(s = concat('s', toString(id))) FROM {}", &*t)),
        "21\t824\t21"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_and_query_ids_reach_the_server() {
    let t =
        Table::create("inserter_settings", "(id UInt64, s String) ENGINE = MergeTree PARTITION BY id % 10 ORDER BY id");
    let c = client().await;
    // A setting that changes what the server does: one partition per INSERT at most.
    let mut ins = c.inserter::<Ev>(&t).await.unwrap().setting("max_partitions_per_insert_block", "1");
    for i in 0..10 {
        ins.write(&ev(i)).await.unwrap();
    }
    let e = ins.end().await.unwrap_err();
    assert_eq!(e.server_code(), Some(252), "{e}");
    assert_eq!(t.count(), 0);
    // Without it the same rows go in.
    let mut ins = c.inserter::<Ev>(&t).await.unwrap();
    for i in 0..10 {
        ins.write(&ev(i)).await.unwrap();
    }
    assert_eq!(ins.end().await.unwrap().rows, 10);

    // Query ids: hold an INSERT open under `<p>-1`; the inserter's first INSERT
    // has that id and the server refuses it as already running, its second is `<p>-2`.
    let p = unique_table("inserter_qid");
    let one = [1u64];
    let one_s = ["x".to_string()];
    let mut held = c.insert(&t).query_id(format!("{p}-1")).open().await.unwrap();
    held.write_columns(&[("id", fixed(&one)), ("s", one_s.as_slice().into_insert_data())]).await.unwrap();
    assert_eq!(q(&format!("SELECT count() FROM system.processes WHERE query_id = '{p}-1'")), "1");
    let mut ins = c.inserter::<Ev>(&t).await.unwrap().query_id(p.as_str());
    ins.write(&ev(20)).await.unwrap();
    let e = ins.flush().await.unwrap_err();
    assert_eq!(e.server_code(), Some(216), "{e}");
    ins.write(&ev(21)).await.unwrap();
    assert_eq!(ins.end().await.unwrap().rows, 1);
    // A one-shot INSERT with the held id is refused the same way.
    let e = c
        .insert(&t)
        .column("id", &one[..])
        .column("s", &one_s[..])
        .query_id(format!("{p}-1"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(e.server_code(), Some(216), "{e}");
    held.end().await.unwrap();
    assert_eq!(
        q(&format!("SELECT groupArray(id) FROM (SELECT id FROM {} WHERE id IN (1, 20, 21) ORDER BY id)", &*t)),
        "[1,1,21]"
    );

    // A setting name that cannot be one is refused before anything is buffered.
    let mut ins = c.inserter::<Ev>(&t).await.unwrap().setting("no such; name", "1");
    let e = ins.write(&ev(1)).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
    assert_eq!(ins.pending(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rerun_with_the_same_token_is_stored_once() {
    let t = Table::create(
        "inserter_dedup",
        "(id UInt64, s String) ENGINE = MergeTree ORDER BY id SETTINGS non_replicated_deduplication_window = 100",
    );
    let c = client().await;
    async fn run(c: &Client, t: &str, token: &str, offset: u64, settings: &[(&str, &str)]) -> u64 {
        let mut ins = c.inserter::<Ev>(t).await.unwrap().max_rows(1000).deduplication_token(token);
        for (k, v) in settings {
            ins = ins.setting(*k, *v);
        }
        for i in 0..2500 {
            ins.write(&ev(offset + i)).await.unwrap();
        }
        ins.end().await.unwrap().rows
    }
    // Three INSERTs (1000 + 1000 + 500), tokens job-1, job-2, job-3.
    assert_eq!(run(&c, &t, "job", 0, &[]).await, 2500);
    assert_eq!(t.count(), 2500);
    // The same run again is deduplicated ...
    run(&c, &t, "job", 0, &[]).await;
    assert_eq!(t.count(), 2500);
    // ... and so is any run with those tokens: the server keys on the token, not the rows.
    run(&c, &t, "job", 10_000, &[]).await;
    assert_eq!(t.count(), 2500);
    // Other tokens, the same rows: stored.
    run(&c, &t, "job-b", 0, &[]).await;
    assert_eq!(t.count(), 5000);
    // async_insert = 1 (the server's default, which the client overrides with 0):
    // 26.9 deduplicates it too (deduplicate_insert = 'enable' by default; this
    // server also has no async insert queue and runs such INSERTs at once).
    run(&c, &t, "job-b", 0, &[("async_insert", "1"), ("wait_for_async_insert", "1")]).await;
    assert_eq!(t.count(), 5000);
    run(&c, &t, "job-c", 0, &[("async_insert", "1"), ("wait_for_async_insert", "1")]).await;
    assert_eq!(t.count(), 7500);
}

// Current-thread runtime: the subscriber set for this thread sees every event.
#[tokio::test]
async fn dropping_an_inserter_that_holds_rows_warns() {
    let (capture, _capturing) = common::capture::Capture::on_this_thread();
    let t = Table::create("inserter_drop", EV_TABLE);
    let c = client().await;

    let mut ins = c.inserter::<Ev>(&t).await.unwrap();
    for i in 0..10 {
        ins.write(&ev(i)).await.unwrap();
    }
    drop(ins);
    let w = capture.warnings();
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].contains("rows=10") && w[0].contains("call end()") && w[0].contains(&t.0), "{w:?}");
    assert_eq!(t.count(), 0);

    // Ended, or holding nothing: no warning.
    let mut ins = c.inserter::<Ev>(&t).await.unwrap();
    for i in 0..10 {
        ins.write(&ev(i)).await.unwrap();
    }
    assert_eq!(ins.end().await.unwrap().rows, 10);
    let mut ins = c.inserter::<Ev>(&t).await.unwrap().max_rows(5);
    for i in 10..15 {
        ins.write(&ev(i)).await.unwrap();
    }
    drop(ins);
    assert_eq!(capture.warnings().len(), 1, "{:?}", capture.warnings());
    assert_eq!(t.count(), 15);

    // A BlockInsert dropped with rows sent warns too, and stores nothing.
    let ids = [100u64, 101, 102];
    let strs = ["a".to_string(), "b".to_string(), "c".to_string()];
    let id = unique_table("inserter_drop_q");
    let mut b = c.insert(&t).query_id(id.as_str()).open().await.unwrap();
    b.write_columns(&[("id", fixed(&ids)), ("s", strs.as_slice().into_insert_data())]).await.unwrap();
    drop(b);
    let w = capture.warnings();
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(w[1].contains("rows=3") && w[1].contains("call end()"), "{w:?}");
    // The INSERT dies with its connection; nothing of it is stored.
    let start = std::time::Instant::now();
    while q(&format!("SELECT count() FROM system.processes WHERE query_id = '{id}'")) != "0" {
        assert!(start.elapsed() < Duration::from_secs(20), "the dropped INSERT still runs on the server");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(t.count(), 15);
    assert_eq!(c.fetch_scalar::<u64>("SELECT count() FROM ".to_string() + &t.0).await.unwrap(), 15);
}

#[derive(Row, Debug, Clone)]
struct Wide {
    id: u64,
    s: String,
    ns: Option<String>,
    a: Vec<i32>,
    d: f64,
}

fn wide(i: u64) -> Wide {
    Wide {
        id: i,
        s: format!("s{i}"),
        ns: (!i.is_multiple_of(3)).then(|| "x".repeat((i % 17) as usize)),
        a: (0..(i % 5) as i32).collect(),
        d: i as f64 / 4.0,
    }
}

/// Large typed inserts send their column buffers (fixed values, string bytes
/// and offsets, null maps, array offsets) from where they lie, in blocks split
/// mid-buffer (offsets rebased), compressed or not: the server stores what it
/// would have stored from the same values computed by SQL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_typed_inserts_from_their_buffers_store_the_same_rows() {
    const COLS: &str =
        "(id UInt64, s String, ns Nullable(String), a Array(Int32), d Float64) ENGINE = MergeTree ORDER BY id";
    let n = 200_000u64;
    let rows: Vec<Wide> = (0..n).map(wide).collect();
    let want = Table::create("ins_splice_want", COLS);
    q(&format!(
        "INSERT INTO {} SELECT number, concat('s', toString(number)), \
         if(number % 3 = 0, NULL, repeat('x', number % 17)), range(toUInt32(number % 5)), number / 4 FROM numbers({n})",
        &*want
    ));
    for comp in ["none", "lz4", "zstd"] {
        let cfg = chnative::Config::from_url(&url(&format!("compression={comp}"))).unwrap().insert_block_rows(70_000);
        let c = Client::connect_with(cfg).await.unwrap();
        let t = Table::create("ins_splice", COLS);
        let mut ins = c.inserter::<Wide>(&t).await.unwrap().max_rows(150_000);
        for r in &rows {
            ins.write(r).await.unwrap();
        }
        let s = ins.end().await.unwrap();
        assert_eq!((s.rows, s.blocks), (n, 4), "{comp}: 150k rows in 3 blocks, then 50k in 1");
        let proj = "id, s, ns, a, d";
        for (x, y) in [(&*t, &*want), (&*want, &*t)] {
            let diff =
                q(&format!("SELECT count() FROM (SELECT {proj} FROM {x} EXCEPT DISTINCT SELECT {proj} FROM {y})"));
            assert_eq!(diff, "0", "{comp}: rows of {x} missing from {y}");
        }
        assert_eq!(t.count(), n, "{comp}");
        // insert_rows takes the same path, in one call.
        let t2 = Table::create("ins_splice_rows", COLS);
        assert_eq!(c.insert_rows(&t2, &rows).await.unwrap().rows, n, "{comp}");
        assert_eq!(
            q(&format!(
                "SELECT count() FROM (SELECT {proj} FROM {} EXCEPT DISTINCT SELECT {proj} FROM {})",
                &*t2, &*want
            )),
            "0",
            "{comp}"
        );
        assert_eq!(t2.count(), n, "{comp}");
        // The connection is usable after the vectored writes.
        assert_eq!(c.fetch_scalar::<u64>("SELECT 42").await.unwrap(), 42);
    }
}
