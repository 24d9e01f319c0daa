//! Per-query observers see progress (increments and totals), profile info,
//! profile events, server logs, totals and extremes, for streams, `execute`
//! and inserts alike.

use crate::common;

use std::sync::{Arc, Mutex};

use chnative::{Block, Client, Observer, Progress, Query};
use common::{http, unique_table, url};

#[derive(Default)]
struct Seen {
    increments: u64,
    last_total: u64,
    progress_calls: u64,
    profile_info_rows: Option<u64>,
    profile_events: u64,
    log_lines: u64,
    totals: Option<usize>,
    extremes: Option<usize>,
}

#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Seen>>);

impl Observer for Recorder {
    fn progress(&self, increment: &Progress, total: &Progress) {
        let mut s = self.0.lock().unwrap();
        s.increments += increment.read_rows;
        s.last_total = total.read_rows;
        s.progress_calls += 1;
    }
    fn profile_info(&self, info: &chnative::ProfileInfo) {
        self.0.lock().unwrap().profile_info_rows = Some(info.rows);
    }
    fn profile_events(&self, _block: &Block) {
        self.0.lock().unwrap().profile_events += 1;
    }
    fn log(&self, block: &Block) {
        self.0.lock().unwrap().log_lines += block.rows() as u64;
    }
    fn totals(&self, block: &Block) {
        self.0.lock().unwrap().totals = Some(block.rows());
    }
    fn extremes(&self, block: &Block) {
        self.0.lock().unwrap().extremes = Some(block.rows());
    }
}

#[tokio::test]
async fn a_query_reports_everything_it_produces() {
    let client = Client::connect(&url("")).await.unwrap();
    let rec = Recorder::default();
    let q = Query::new("SELECT number % 3 AS k, count() AS c FROM numbers(100000) GROUP BY k WITH TOTALS ORDER BY k")
        .setting("extremes", "1")
        .setting("send_logs_level", "trace")
        .observer(rec.clone());
    let mut st = client.fetch_blocks(q).await.unwrap();
    let mut rows = 0;
    while let Some(b) = st.next().await.unwrap() {
        rows += b.rows();
    }
    let stream_log_lines = st.logs().1;
    drop(st);
    assert_eq!(rows, 3);
    let s = rec.0.lock().unwrap();
    assert!(s.progress_calls > 0);
    assert_eq!(s.increments, 100_000, "increments add up to the rows read");
    assert_eq!(s.last_total, 100_000, "the running total is passed along");
    assert_eq!(s.profile_info_rows, Some(3));
    assert!(s.profile_events > 0);
    assert_eq!(s.log_lines, stream_log_lines, "every log line reaches the observer");
    // (The test server logs at `information`, so it may have no lines to send.)
    assert_eq!(s.totals, Some(1));
    assert_eq!(s.extremes, Some(2));
}

#[tokio::test]
async fn execute_and_insert_are_observed_too() {
    let client = Client::connect(&url("")).await.unwrap();
    let rec = Recorder::default();
    client.execute(Query::new("SELECT sum(number) FROM numbers(50000)").observer(rec.clone())).await.unwrap();
    assert_eq!(rec.0.lock().unwrap().last_total, 50_000);

    let t = unique_table("chn_observe");
    http(&format!("CREATE TABLE {t} (id UInt64) ENGINE = MergeTree ORDER BY id"));
    let rec = Recorder::default();
    let ids: Vec<u64> = (0..1000).collect();
    client.insert(&t).column("id", &ids).observer(rec.clone()).send().await.unwrap();
    assert!(rec.0.lock().unwrap().profile_events > 0, "the insert's profile events were observed");
    http(&format!("DROP TABLE {t}"));
}
