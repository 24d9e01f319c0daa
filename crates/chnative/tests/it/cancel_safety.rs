//! Cancel safety: every public async call is dropped after its first, second,
//! third … poll, against the real server behind a proxy that delivers bytes in
//! small pieces (so the drops land at many different points of the exchange),
//! until the call completes. After each drop the next call on the same client
//! must either work and return the right answer, or fail with an `ErrorKind::Closed` error
//! (the connection was left mid-exchange and is not reused) — never with a
//! stray I/O error, a server error or a protocol error caused by bytes the
//! abandoned call left behind, and never hang. Inserted rows are counted over
//! HTTP: nothing is duplicated, and an insert reported successful has landed.
//!
//! Which poll a drop lands on depends on timing, so these tests assert only
//! what must hold at *every* drop point.

use crate::common;
use crate::common_proxy;

use std::future::Future;
use std::pin::pin;
use std::task::Poll;
use std::time::{Duration, Instant};

use chnative::{Compression, Config, Connection as Client, Error};
use common::*;
use common_proxy::{Dir, Proxy};

/// The longest any single call may take before the test calls it a hang.
const HANG: Duration = Duration::from_secs(30);

/// Polls `fut` at most `n` times (each time it is woken), then drops it.
/// `None` means it was dropped unfinished.
async fn poll_at_most<F: Future>(fut: F, n: usize) -> Option<F::Output> {
    let mut fut = pin!(fut);
    let mut left = n;
    let polled = std::future::poll_fn(|cx| {
        left -= 1;
        match fut.as_mut().poll(cx) {
            Poll::Ready(v) => Poll::Ready(Some(v)),
            Poll::Pending if left == 0 => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    });
    // A future that is never woken again counts as dropped too.
    tokio::time::timeout(HANG, polled).await.unwrap_or(None)
}

/// N = 1, 2, … 48 one by one, then growing by an eighth each step (so a call
/// that needs thousands of polls is still cut at a few hundred points), up to `max`.
fn poll_counts(max: usize) -> impl Iterator<Item = usize> {
    let mut n = 0usize;
    std::iter::from_fn(move || {
        n = if n < 48 { n + 1 } else { n + n / 8 };
        (n <= max).then_some(n)
    })
}

/// Most polls any call here needs through the throttled proxy (a bound, not a goal).
const MAX_POLLS: usize = 20_000;

/// Whether `e` is an acceptable failure of the call after a drop: the
/// connection was closed because an earlier call was abandoned.
fn names_abandonment(e: &Error) -> bool {
    match e.kind() {
        // "the connection is gone" says nothing of why: that is the slot losing
        // the connection, not a report of the abandoned call.
        chnative::ErrorKind::Closed => !e.to_string().contains("is gone"),
        chnative::ErrorKind::Cancelled => true,
        _ => false,
    }
}

/// A proxy that hands the client its server's bytes a few at a time.
async fn throttled_proxy(chunk: usize) -> Proxy {
    let p = Proxy::to_server().await;
    p.throttle(Dir::Down, chunk, Duration::from_millis(1));
    p
}

async fn connect(cfg: Config) -> Client {
    tokio::time::timeout(HANG, Client::connect_with(cfg)).await.expect("connect hung").expect("connect")
}

/// The call after a drop: a query whose answer is unique to this attempt, so a
/// stale result from the abandoned call cannot pass for it. Returns whether the
/// client is still usable.
async fn next_call_works_or_names_cause(c: &mut Client, what: &str, n: usize) -> bool {
    let tag = 1_000_000 + n as u64;
    let res = tokio::time::timeout(HANG, c.fetch_scalar::<u64>(format!("SELECT toUInt64({tag})")))
        .await
        .unwrap_or_else(|_| panic!("{what} dropped after {n} polls: the next call hung"));
    match res {
        Ok(v) => {
            assert_eq!(v, tag, "{what} dropped after {n} polls: the next call got another query's answer");
            true
        }
        Err(e) => {
            assert!(
                names_abandonment(&e),
                "{what} dropped after {n} polls: the next call failed with an error that does not name the cause: {e:?} \
                 (is_usable() = {})",
                c.is_usable()
            );
            assert!(!c.is_usable(), "{what} dropped after {n} polls: next call failed ({e}) but is_usable() is true");
            false
        }
    }
}

/// Runs `attempt(client, n)` for growing n until it completes, checking the
/// client after each drop. `attempt` returns `Some(result)` when it completed;
/// `after` runs once the next call has settled the connection.
macro_rules! drop_at_every_poll {
    ($what:expr, $proxy:expr, $cfg:expr, |$c:ident, $n:ident| $attempt:expr, |$res:ident| $on_done:expr) => {
        drop_at_every_poll!($what, $proxy, $cfg, |$c, $n| $attempt, |$res| $on_done, |_n| ())
    };
    ($what:expr, $proxy:expr, $cfg:expr, |$c:ident, $n:ident| $attempt:expr, |$res:ident| $on_done:expr, |$an:ident| $after:expr) => {{
        let proxy: &Proxy = $proxy;
        let cfg: Config = $cfg;
        let mut client = {
            let _fast = proxy.full_speed();
            connect(cfg.clone()).await
        };
        let mut completed_at = None;
        let (mut attempts, mut reconnects) = (0u32, 0u32);
        let started = Instant::now();
        for n in poll_counts(MAX_POLLS) {
            attempts += 1;
            let outcome = {
                let $c = &mut client;
                let $n = n;
                $attempt
            };
            if let Some($res) = outcome {
                $on_done;
                completed_at = Some(n);
            }
            // The throttle only serves to cut the attempt at many points; the
            // rest (finishing the abandoned call, the checks) runs at full speed.
            let _fast = proxy.full_speed();
            if !next_call_works_or_names_cause(&mut client, $what, n).await {
                client = connect(cfg.clone()).await;
                reconnects += 1;
            }
            {
                let $an = n;
                $after;
            }
            if completed_at.is_some() {
                break;
            }
        }
        let n = completed_at.unwrap_or_else(|| panic!("{} did not complete within {MAX_POLLS} polls", $what));
        eprintln!(
            "{}: completed at {n} polls; {attempts} attempts, {reconnects} of them closed the connection, {:?}",
            $what,
            started.elapsed()
        );
    }};
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ping_dropped_at_every_poll() {
    let p = throttled_proxy(1).await;
    drop_at_every_poll!("ping", &p, p.config(), |c, n| poll_at_most(c.ping(), n).await, |res| res.expect("ping"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_scalar_dropped_at_every_poll() {
    let p = throttled_proxy(64).await;
    drop_at_every_poll!(
        "query_scalar",
        &p,
        p.config(),
        |c, n| poll_at_most(c.fetch_scalar::<u64>("SELECT sum(number) FROM numbers(100000)"), n).await,
        |res| assert_eq!(res.expect("query_scalar"), 4_999_950_000)
    );
}

/// A query the server produces slowly (ten rows every 10 ms), so little is in
/// flight when it is cancelled and draining it through the throttle is quick.
const PACED: &str = "SELECT sleepEachRow(0.001), number FROM numbers(1000000) \
                     SETTINGS max_block_size = 10, function_sleep_max_microseconds_per_block = 0";

/// Rows of the stream test and their sum.
const STREAM_SQL: &str = "SELECT number FROM numbers(20000) SETTINGS max_block_size = 2000";
const STREAM_SUM: u64 = 20000 * 19999 / 2;

async fn stream_sum(c: &mut Client) -> chnative::Result<u64> {
    let mut s = c.fetch_blocks(STREAM_SQL).await?;
    let mut sum = 0u64;
    while let Some(b) = s.next().await? {
        sum += b.column("number").unwrap().view().values::<u64>()?.iter().sum::<u64>();
    }
    Ok(sum)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_and_next_dropped_at_every_poll() {
    for compression in [Compression::Lz4, Compression::None] {
        let p = throttled_proxy(256).await;
        drop_at_every_poll!(
            "stream + next",
            &p,
            p.config().compression(compression),
            |c, n| poll_at_most(stream_sum(c), n).await,
            |res| assert_eq!(res.expect("stream"), STREAM_SUM)
        );
    }
}

/// Dropping one `next()` and calling `next()` again on the same stream: the
/// stream goes on with no block lost or repeated, or fails with `Closed`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn next_dropped_then_next_again_on_the_same_stream() {
    let p = throttled_proxy(256).await;
    let cfg = p.config();
    let mut client = connect(cfg.clone()).await;
    for n in poll_counts(64) {
        let mut s = client.fetch_blocks(STREAM_SQL).await.expect("stream");
        let mut sum = 0u64;
        let mut failed = None;
        // Drop every other next() after n polls; the rest run to completion.
        for round in 0..10_000 {
            let step = if round % 2 == 0 {
                match poll_at_most(s.next(), n).await {
                    None => continue,
                    Some(r) => r.map(|b| {
                        b.map(|b| b.column("number").unwrap().view().values::<u64>().unwrap().iter().sum::<u64>())
                    }),
                }
            } else {
                tokio::time::timeout(HANG, s.next())
                    .await
                    .expect("next hung")
                    .map(|b| b.map(|b| b.column("number").unwrap().view().values::<u64>().unwrap().iter().sum::<u64>()))
            };
            match step {
                Ok(Some(x)) => sum += x,
                Ok(None) => break,
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        drop(s);
        match failed {
            None => assert_eq!(sum, STREAM_SUM, "n = {n}: blocks lost or repeated after a dropped next()"),
            Some(e) => assert!(names_abandonment(&e), "n = {n}: next() after a dropped next() failed with {e:?}"),
        }
        if !next_call_works_or_names_cause(&mut client, "next", n).await {
            client = connect(cfg.clone()).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_cancel_dropped_at_every_poll() {
    let p = Proxy::to_server().await;
    let cfg = p.config();
    let mut client = connect(cfg.clone()).await;
    let mut completed_at = None;
    for n in poll_counts(MAX_POLLS) {
        p.resume(Dir::Down);
        {
            let mut s = client.fetch_blocks(PACED).await.unwrap();
            assert!(s.next().await.unwrap().is_some());
            p.throttle(Dir::Down, 256, Duration::from_millis(1));
            if let Some(res) = poll_at_most(s.cancel(), n).await {
                res.expect("cancel");
                completed_at = Some(n);
            }
        }
        p.resume(Dir::Down);
        if !next_call_works_or_names_cause(&mut client, "stream.cancel", n).await {
            client = connect(cfg.clone()).await;
        }
        if completed_at.is_some() {
            break;
        }
    }
    assert!(completed_at.is_some(), "cancel never completed");
}

/// A dropped stream is finished in the background; the next call waits for
/// that. Dropping that next call while it waits must not lose the connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_dropped_while_a_dropped_stream_drains() {
    let p = Proxy::to_server().await;
    let cfg = p.config();
    let mut client = connect(cfg.clone()).await;
    let mut completed_at = None;
    for n in poll_counts(MAX_POLLS) {
        p.resume(Dir::Down);
        {
            let mut s = client.fetch_blocks(PACED).await.unwrap();
            assert!(s.next().await.unwrap().is_some());
            p.throttle(Dir::Down, 256, Duration::from_millis(1));
        } // dropped: Cancel goes out and the rest is drained in the background
        if let Some(res) = poll_at_most(client.ping(), n).await {
            res.expect("ping after a dropped stream");
            completed_at = Some(n);
        }
        p.resume(Dir::Down);
        if !next_call_works_or_names_cause(&mut client, "ping waiting for a drain", n).await {
            client = connect(cfg.clone()).await;
        }
        if completed_at.is_some() {
            break;
        }
    }
    assert!(completed_at.is_some(), "ping after a dropped stream never completed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_dropped_at_every_poll() {
    let p = Proxy::to_server().await;
    p.throttle(Dir::Down, 1, Duration::from_millis(1));
    let mut completed_at = None;
    for n in poll_counts(MAX_POLLS) {
        if let Some(res) = poll_at_most(Client::connect_with(p.config()), n).await {
            let mut c = res.expect("connect");
            assert!(next_call_works_or_names_cause(&mut c, "connect", n).await, "a completed connect must be usable");
            completed_at = Some(n);
        }
        // The abandoned connection's socket is closed, not leaked.
        assert!(p.wait_all_closed(HANG).await, "connect dropped after {n} polls left its socket open");
        if completed_at.is_some() {
            break;
        }
    }
    assert!(completed_at.is_some(), "connect never completed");
}

/// Waits until no query touching `table` is running on the server, so its
/// rows can be counted for good.
fn wait_quiet(table: &str) {
    let start = Instant::now();
    loop {
        let running = http(&format!(
            "SELECT count() FROM system.processes WHERE query LIKE '%{table}%' AND query NOT LIKE '%system.processes%'"
        ));
        if running.trim() == "0" {
            return;
        }
        assert!(start.elapsed() < HANG, "a query on {table} is still running on the server");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Per attempt: (attempt, rows, distinct ids) of `table`, ids being `attempt * per + i`.
fn rows_by_attempt(table: &str, per: u64) -> Vec<(u64, u64, u64)> {
    http(&format!(
        "SELECT intDiv(id, {per}) AS k, count(), uniqExact(id) FROM {table} GROUP BY k ORDER BY k FORMAT TSV"
    ))
    .lines()
    .map(|l| {
        let v: Vec<u64> = l.split('\t').map(|x| x.parse().unwrap()).collect();
        (v[0], v[1], v[2])
    })
    .collect()
}

struct DropTable(String);
impl Drop for DropTable {
    fn drop(&mut self) {
        http_try(&format!("DROP TABLE IF EXISTS {}", self.0));
    }
}

/// After each abandoned attempt: nothing duplicated, no attempt with more rows
/// than it sent (an abandoned insert may have landed in part or in full), and
/// a completed attempt stored exactly its rows.
fn check_rows(table: &str, per: u64, completed: Option<u64>, what: &str, n: usize) {
    wait_quiet(table);
    for (k, rows, distinct) in rows_by_attempt(table, per) {
        assert_eq!(rows, distinct, "{what} dropped after {n} polls: attempt {k} has duplicated rows");
        assert!(rows <= per, "{what} dropped after {n} polls: attempt {k} stored {rows} rows of {per}");
        if Some(k) == completed {
            assert_eq!(rows, per, "{what} reported success after {n} polls but stored {rows} of {per} rows");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn execute_dropped_at_every_poll() {
    let table = unique_table("cs_exec");
    let _cleanup = DropTable(table.clone());
    http(&format!("CREATE TABLE {table} (id UInt64) ENGINE = MergeTree ORDER BY id"));
    let per = 1000u64;
    let p = throttled_proxy(64).await;
    let mut attempt = 0u64;
    let mut succeeded: Option<u64>;
    drop_at_every_poll!(
        "execute",
        &p,
        p.config(),
        |c, n| {
            attempt += 1;
            let sql = format!("INSERT INTO {table} SELECT {attempt} * {per} + number FROM numbers({per})");
            let out = poll_at_most(c.execute(sql), n).await;
            succeeded = out.as_ref().and_then(|r| r.is_ok().then_some(attempt));
            out
        },
        |res| {
            res.expect("execute");
        },
        |n| tokio::task::block_in_place(|| check_rows(&table, per, succeeded, "execute", n))
    );
}

/// Rows per insert attempt and per Data packet: several packets, each larger
/// than the proxy lets through at once, so drops land mid-packet too.
/// 9.6 MB in 1.6 MB packets: more than the client's socket send buffer (at
/// most 4 MB on Linux by default) holds, so its writes wait and drops land
/// mid-packet.
const INSERT_ROWS: u64 = 600_000;
const INSERT_BLOCK_ROWS: usize = 100_000;

async fn insert_attempt(c: &mut Client, table: &str, attempt: u64, n: usize) -> Option<chnative::Result<u64>> {
    let ids: Vec<u64> = (attempt * INSERT_ROWS..(attempt + 1) * INSERT_ROWS).collect();
    let pad: Vec<u64> = ids.iter().map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
    let fut = async { c.insert(table).column("id", &ids).column("pad", &pad).send().await.map(|s| s.rows) };
    poll_at_most(fut, n).await
}

/// The reported defect: an insert dropped mid-send leaves a half-written packet
/// that the next call sends again ("Connection reset by peer" on the next call).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn insert_dropped_at_every_poll() {
    let table = unique_table("cs_insert");
    let _cleanup = DropTable(table.clone());
    http(&format!("CREATE TABLE {table} (id UInt64, pad UInt64) ENGINE = MergeTree ORDER BY id"));
    let p = Proxy::to_server().await;
    // Client→server bytes are let through slowly, so the client's writes wait.
    p.throttle(Dir::Up, 16 << 10, Duration::from_millis(1));
    let mut attempt = 0u64;
    let mut succeeded: Option<u64>;
    drop_at_every_poll!(
        "insert",
        &p,
        p.config().compression(Compression::None).insert_block_rows(INSERT_BLOCK_ROWS),
        |c, n| {
            attempt += 1;
            let out = insert_attempt(c, &table, attempt, n).await;
            succeeded = out.as_ref().and_then(|r| r.is_ok().then_some(attempt));
            out
        },
        |res| assert_eq!(res.expect("insert"), INSERT_ROWS),
        |n| tokio::task::block_in_place(|| check_rows(&table, INSERT_ROWS, succeeded, "insert", n))
    );
}

/// The reported case: an insert abandoned while its data is being written (as
/// under `tokio::time::timeout`). The next call must not send the rest of the
/// half-written packet, nor anything after it on that connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn insert_dropped_mid_packet_is_not_resent() {
    let table = unique_table("cs_insert_mid");
    let _cleanup = DropTable(table.clone());
    http(&format!("CREATE TABLE {table} (id UInt64, pad UInt64) ENGINE = MergeTree ORDER BY id"));
    let p = Proxy::to_server().await;
    p.throttle(Dir::Up, 16 << 10, Duration::from_millis(1));
    let cfg = p.config().compression(Compression::None).insert_block_rows(INSERT_BLOCK_ROWS);
    let mut c = connect(cfg.clone()).await;
    for (attempt, cut_at) in [(1u64, 1u64 << 20), (2, 3 << 20), (3, 5 << 20)] {
        let ids: Vec<u64> = (attempt * INSERT_ROWS..(attempt + 1) * INSERT_ROWS).collect();
        let sent = p.forwarded(Dir::Up);
        let insert = c.insert(&table).column("id", &ids).column("pad", &ids).send();
        // Dropped once `cut_at` bytes reached the server; the client has written
        // several MB more into its socket buffer by then, ending mid-packet.
        let finished = tokio::select! {
            r = insert => Some(r),
            _ = p.wait_forwarded(Dir::Up, sent + cut_at, HANG) => None,
        };
        assert!(finished.is_none(), "the insert finished before {cut_at} bytes went through the throttle");
        let usable = next_call_works_or_names_cause(&mut c, "insert mid-packet", attempt as usize).await;
        if !usable {
            c = connect(cfg.clone()).await;
        }
        tokio::task::block_in_place(|| check_rows(&table, INSERT_ROWS, None, "insert mid-packet", attempt as usize));
    }
}

/// A Query packet larger than the socket buffers (a 6 MB parameter), so
/// `stream()` itself is dropped while its packet is half written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_dropped_while_sending_a_large_query() {
    const LEN: usize = 6 << 20;
    let big = "x".repeat(LEN);
    let p = Proxy::to_server().await;
    p.throttle(Dir::Up, 16 << 10, Duration::from_millis(1));
    drop_at_every_poll!(
        "stream with a 6 MB parameter",
        &p,
        p.config(),
        |c, n| {
            let q = chnative::Query::new("SELECT length({s:String}) AS n").bind("s", big.as_str());
            poll_at_most(c.fetch_scalar::<u64>(q), n).await
        },
        |res| assert_eq!(res.expect("large query"), LEN as u64)
    );
}
