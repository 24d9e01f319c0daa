//! Spans for connect, query and insert carry ids, counts and times, and no
//! secret ever reaches a span, an event or a `Debug` output.
//! The capture is the test's own thread's subscriber (`common::capture`).

use crate::common;

use chnative::{Client, Connection, Query, TraceContext};
use common::capture::Capture;
use common::{http, server, unique_table, url};

/// A wrong password, and the right one of `chn_pw`.
const SECRET: &str = "Sw0rdf1sh-xyzzy";
const GOOD: &str = "secret";

// Current-thread runtime: the subscriber set for this thread sees every span and event of the test.
#[tokio::test]
async fn spans_carry_ids_counts_and_times_and_never_a_password() {
    let (capture, _capturing) = Capture::on_this_thread();
    let s = server();

    // The server's password user (see scripts/server.sh), and a wrong password.
    let good = format!("clickhouse://chn_pw:{GOOD}@{}:{}/default", s.host, s.tcp_port);
    let client = Client::connect(&good).await.unwrap();
    let n: u64 = client.fetch_scalar("SELECT count() FROM numbers(1234)").await.unwrap();
    assert_eq!(n, 1234);
    let t = unique_table("chn_trace");
    http(&format!("CREATE TABLE {t} (id UInt64) ENGINE = MergeTree ORDER BY id"));
    client.insert(&t).column("id", &(0..500u64).collect::<Vec<_>>()).send().await.unwrap();
    let mut st =
        client.fetch_blocks("SELECT number FROM numbers(100000) SETTINGS max_block_size = 10000").await.unwrap();
    let qid = st.query_id().to_string();
    let mut rows = 0;
    while let Some(b) = st.next().await.unwrap() {
        rows += b.rows();
    }
    drop(st);
    assert_eq!(rows, 100_000);
    let bad = format!("clickhouse://chn_pw:{SECRET}@{}:{}/default", s.host, s.tcp_port);
    let e = Client::connect(&bad).await.unwrap_err();
    let e2 = Connection::connect(&bad).await.unwrap_err();
    // A query with a trace context, which must not print the secret either.
    let tc = TraceContext::from_w3c("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "").unwrap();
    client.execute(Query::new("SELECT 1").trace_context(tc)).await.unwrap();

    let lines = capture.lines();
    let text = lines.join("\n");
    assert!(!text.contains(SECRET) && !text.contains(GOOD), "a password reached tracing:\n{text}");
    for shown in [format!("{e}"), format!("{e:?}"), format!("{e2:?}"), format!("{client:?}")] {
        assert!(!shown.contains(SECRET) && !shown.contains(GOOD), "a password reached an error or Debug: {shown}");
    }
    // The spans are there, with their fields.
    assert!(lines.iter().any(|l| l.starts_with("span chnative.connect") && l.contains("port=")), "{text}");
    assert!(lines.iter().any(|l| l.starts_with("span chnative.query") && l.contains(&qid)), "{text}");
    assert!(lines.iter().any(|l| l.starts_with("span chnative.insert")), "{text}");
    assert!(lines.iter().any(|l| l.contains("rows=100000") && l.contains("outcome=\"ok\"")), "{text}");
    assert!(lines.iter().any(|l| l.contains("rows=500") && l.contains("elapsed_us=")), "{text}");
    drop(client);
    http(&format!("DROP TABLE {t}"));
}

/// The server continues the trace given with a query: its spans carry our
/// trace id and hang under our span id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_records_spans_under_the_given_trace() {
    // The 24.8 server (chdb 3.0.1) records no span at all: system.opentelemetry_span_log
    // is never created, also with its config section.
    if !common::requires(25, 1, "server spans under a client's trace context") {
        return;
    }
    let client = Client::connect(&url("")).await.unwrap();
    // A fresh trace id per run, so older runs' spans do not count.
    let trace_id = format!("{:016x}{:016x}", 0x0af7_6519_16cd_43ddu64, std::process::id() as u64 | 1 << 40);
    let span_id = "b7ad6b7169203331";
    let tc = TraceContext::from_w3c(&format!("00-{trace_id}-{span_id}-01"), "chn=1").unwrap();
    client.execute(Query::new("SELECT sum(number) FROM numbers(1000)").trace_context(tc)).await.unwrap();
    let (all, children) = spans_under(&trace_id, span_id).await;
    assert!(all > 0, "the server recorded no span for trace {trace_id}");
    assert!(children > 0, "no server span has our span {span_id} as its parent ({all} spans)");
}

/// The server's spans of trace `trace_hex` (32 hex digits): how many in all, and how many
/// hang under `span_hex`. The query's own span is logged when the query is finalized,
/// which can be after the client has its EndOfStream: flush and look again for a while.
async fn spans_under(trace_hex: &str, span_hex: &str) -> (u64, u64) {
    let uuid = format!(
        "{}-{}-{}-{}-{}",
        &trace_hex[..8],
        &trace_hex[8..12],
        &trace_hex[12..16],
        &trace_hex[16..20],
        &trace_hex[20..]
    );
    let mut found = (0, 0);
    for _ in 0..100 {
        http("SYSTEM FLUSH LOGS");
        let text = http(&format!(
            "SELECT count(), countIf(parent_span_id = reinterpretAsUInt64(reverse(unhex('{span_hex}')))) \
             FROM system.opentelemetry_span_log WHERE trace_id = toUUID('{uuid}') FORMAT TSV"
        ));
        let (all, children) = text.trim().split_once('\t').unwrap();
        found = (all.parse().unwrap(), children.parse().unwrap());
        if found.1 > 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    found
}

/// With the `opentelemetry` feature, a query made inside an OpenTelemetry span carries
/// that span's context: the server records its spans under the caller's trace, and
/// `TraceContext::current()` renders the same traceparent.
#[cfg(feature = "opentelemetry")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queries_inside_an_opentelemetry_span_continue_its_trace() {
    use opentelemetry::trace::{SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState};
    let client = Client::connect(&url("")).await.unwrap();
    let trace_hex = format!("{:016x}{:016x}", 0x5eed_0000_0000_0001u64, std::process::id() as u64 | 2 << 40);
    let span_hex = "00f067aa0ba902b7";
    let sc = SpanContext::new(
        TraceId::from_hex(&trace_hex).unwrap(),
        SpanId::from_hex(span_hex).unwrap(),
        TraceFlags::SAMPLED,
        true,
        TraceState::from_key_value([("chn", "otel")]).unwrap(),
    );
    let cx = opentelemetry::Context::current().with_remote_span_context(sc);
    let query = {
        let _attached = cx.attach();
        let tc = TraceContext::current().expect("a current span context");
        assert_eq!(tc.traceparent(), format!("00-{trace_hex}-{span_hex}-01"));
        assert_eq!(tc.tracestate(), "chn=otel");
        Query::new("SELECT sum(number) FROM numbers(1000)")
    };
    // Outside any span: nothing to continue.
    assert!(TraceContext::current().is_none());
    client.execute(query).await.unwrap();
    let (all, children) = spans_under(&trace_hex, span_hex).await;
    assert!(children > 0, "no server span under {trace_hex}/{span_hex} ({all} spans)");
}
