//! Faults injected between the client and the real server by a proxy: the
//! connection cut (FIN) or reset (RST) in the middle of a block in either
//! direction, and a stall past the read timeout. Each case checks the error the
//! user sees, that it comes within a bounded time, that the broken connection
//! is never used again (`is_usable()` is false and the next call reports the
//! first cause without touching the socket), and that a new client works.
//! Server kills and restarts are in `faults_restart.rs` (on servers of their own).

use crate::common;
use crate::common_proxy;

use std::time::{Duration, Instant};

use chnative::{Compression, Config, Connection as Client, Error, ErrorKind};
use common::*;
use common_proxy::{Dir, Proxy};

/// Longest any step may take before the test calls it a hang.
const BOUND: Duration = Duration::from_secs(60);

async fn within<T>(what: &str, fut: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(BOUND, fut).await.unwrap_or_else(|_| panic!("{what}: no answer within {BOUND:?}"))
}

async fn connect(cfg: Config) -> Client {
    within("connect", Client::connect_with(cfg)).await.expect("connect")
}

/// The connection broke with `first`: it must not be used again. The next call
/// fails at once with an `ErrorKind::Closed` error, and a new client works.
async fn assert_not_reused(p: &Proxy, c: &mut Client, first: &Error, fresh: Config) {
    assert_not_reused_with(p, c, first, fresh, false).await
}

/// [`assert_not_reused`], and with `check_writes` also that the next call writes
/// nothing: where the proxy still holds the connection open, a written byte
/// would reach it. Only for cases where the client had nothing left in its
/// socket buffer when the fault hit (else those bytes flow once the proxy resumes).
async fn assert_not_reused_with(p: &Proxy, c: &mut Client, first: &Error, fresh: Config, check_writes: bool) {
    assert!(!c.is_usable(), "is_usable() is true after {first}");
    let up_before = p.forwarded(Dir::Up);
    let next = within("the call after a broken connection", c.fetch_scalar::<u64>("SELECT 1")).await;
    assert!(
        matches!(next, Err(ref e) if e.kind() == ErrorKind::Closed),
        "the call after `{first}` returned {next:?}, not a Closed error"
    );
    assert!(!c.is_usable());
    if check_writes {
        // Give a stray write time to cross the proxy (this can only miss a defect, never invent one).
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(p.forwarded(Dir::Up), up_before, "the call after `{first}` wrote to the broken connection");
    }
    let mut fresh = connect(fresh).await;
    let v: u64 = within("a new client", fresh.fetch_scalar("SELECT 7::UInt64")).await.expect("a new client works");
    assert_eq!(v, 7);
}

/// What is wrong with the call after a broken connection, if it does not
/// name what broke it.
async fn next_call_misnames(c: &mut Client, first: &Error, case: &str) -> Option<String> {
    // The cause itself, without the "I/O: " of the first error's own message.
    let cause = match first.as_io() {
        Some(io) => io.to_string(),
        None => first.to_string(),
    };
    match within("the call after a broken connection", c.fetch_scalar::<u64>("SELECT 1")).await {
        Err(e) if e.kind() == ErrorKind::Closed && e.to_string().contains(&cause) => None,
        Err(e) if e.kind() == ErrorKind::Closed => {
            Some(format!("{case}: the next call says `{e}`, not the first cause `{first}`"))
        }
        other => {
            Some(format!("{case}: the call after `{first}` returned {other:?}, not a Closed error naming the cause"))
        }
    }
}

fn is_io(e: &Error) -> bool {
    e.kind() == ErrorKind::Io
}

/// Streams `sql` to the end or the first error; returns the error and the rows seen.
async fn stream_until_error(c: &mut Client, sql: &str) -> (Error, u64) {
    let mut rows = 0u64;
    let res: chnative::Result<()> = within("streaming", async {
        let mut s = c.fetch_blocks(sql).await?;
        while let Some(b) = s.next().await? {
            rows += b.rows() as u64;
        }
        Ok(())
    })
    .await;
    (res.expect_err("the stream should fail"), rows)
}

/// One large block: the first Data packet with rows is many MB, so a cut
/// 1 MB into the result lands inside it.
const BIG_BLOCK: &str = "SELECT number, toString(number) AS s FROM numbers(1000000) \
                         SETTINGS max_block_size = 1000000, max_threads = 1";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cut_server_to_client_mid_data_block() {
    for compression in [Compression::None, Compression::Lz4] {
        let p = Proxy::to_server().await;
        let cfg = p.config().compression(compression);
        let mut c = connect(cfg.clone()).await;
        p.cut_after(Dir::Down, 1 << 20);
        let (e, rows) = stream_until_error(&mut c, BIG_BLOCK).await;
        assert_eq!(rows, 0, "{compression:?}: no row of a block cut in the middle may be returned");
        assert!(is_io(&e), "{compression:?}: a cut gave {e:?}, not an I/O error");
        assert!(
            e.to_string().contains("closed"),
            "{compression:?}: `{e}` does not say the server closed the connection"
        );
        p.clear();
        assert_not_reused(&p, &mut c, &e, cfg).await;
    }
}

async fn reset_mid_data_block() -> (Proxy, Client, Error, Config) {
    let p = Proxy::to_server().await;
    let cfg = p.config().compression(Compression::None);
    let mut c = connect(cfg.clone()).await;
    p.reset_after(Dir::Down, 1 << 20);
    let (e, rows) = stream_until_error(&mut c, BIG_BLOCK).await;
    assert_eq!(rows, 0);
    match e.as_io() {
        Some(io) if e.kind() == ErrorKind::Io => assert_eq!(io.kind(), std::io::ErrorKind::ConnectionReset, "{e}"),
        _ => panic!("a reset gave {e:?}, not an I/O error"),
    }
    p.clear();
    (p, c, e, cfg)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reset_server_to_client_mid_data_block() {
    let (p, mut c, e, cfg) = reset_mid_data_block().await;
    assert_not_reused(&p, &mut c, &e, cfg).await;
}

async fn stall_stream_past_timeout() -> (Proxy, Client, Error, Config) {
    let p = Proxy::to_server().await;
    let cfg = p.config().read_timeout(Some(Duration::from_millis(500)));
    let mut c = connect(cfg.clone()).await;
    let res: chnative::Result<u64> = within("a stalled stream", async {
        let mut s = c.fetch_blocks("SELECT number FROM system.numbers SETTINGS max_block_size = 1000").await?;
        let mut blocks = 0u64;
        while s.next().await?.is_some() {
            blocks += 1;
            if blocks == 3 {
                p.stall(Dir::Down);
            }
        }
        Ok(blocks)
    })
    .await;
    let e = res.expect_err("an endless stream stalled must time out");
    assert!(e.kind() == ErrorKind::Timeout, "a stall gave {e:?}, not a timeout");
    p.clear();
    (p, c, e, cfg)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stall_past_the_read_timeout_while_streaming() {
    let (p, mut c, e, cfg) = stall_stream_past_timeout().await;
    assert_not_reused_with(&p, &mut c, &e, cfg, true).await;
}

async fn cut_mid_data_block() -> (Proxy, Client, Error) {
    let p = Proxy::to_server().await;
    let mut c = connect(p.config()).await;
    p.cut_after(Dir::Down, 1 << 20);
    let (e, _) = stream_until_error(&mut c, BIG_BLOCK).await;
    p.clear();
    (p, c, e)
}

/// After a fault, every later call names the fault, not a generic
/// "abandoned" state: the user must learn what broke the connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_call_after_a_fault_names_the_fault() {
    let mut wrong = Vec::new();
    let (_p, mut c, e) = cut_mid_data_block().await;
    wrong.extend(next_call_misnames(&mut c, &e, "cut mid-block").await);
    let (_p, mut c, e, _) = reset_mid_data_block().await;
    wrong.extend(next_call_misnames(&mut c, &e, "reset mid-block").await);
    let (_p, mut c, e, _) = stall_stream_past_timeout().await;
    wrong.extend(next_call_misnames(&mut c, &e, "stream stalled past the read timeout").await);
    let t = Table::new("fault_names_insert");
    let (_p, mut c, e, _) = stall_insert_past_timeout(&t).await;
    wrong.extend(next_call_misnames(&mut c, &e, "insert stalled past the timeout").await);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A connection known to be broken is closed at once, not when the `Client`
/// is dropped: otherwise the server keeps the query (an INSERT waiting for
/// data waits for its receive timeout, 300 s by default).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_connection_is_closed_at_once() {
    let (p, c, e, _) = stall_stream_past_timeout().await;
    assert!(p.wait_all_closed(Duration::from_secs(10)).await, "the socket is still open after `{e}`");
    drop(c);
    let t = Table::new("fault_closed_insert");
    let (p, c, e, _) = stall_insert_past_timeout(&t).await;
    assert!(p.wait_all_closed(Duration::from_secs(10)).await, "the socket is still open after `{e}`");
    drop(c);
}

fn wait_quiet(table: &str) {
    let start = Instant::now();
    loop {
        let running = http(&format!(
            "SELECT count() FROM system.processes WHERE query LIKE '%{table}%' AND query NOT LIKE '%system.processes%'"
        ));
        if running.trim() == "0" {
            return;
        }
        assert!(start.elapsed() < BOUND, "a query on {table} is still running on the server");
        std::thread::sleep(Duration::from_millis(20));
    }
}

struct Table(String);

impl Table {
    fn new(prefix: &str) -> Table {
        let t = Table(unique_table(prefix));
        http(&format!("CREATE TABLE {} (id UInt64, pad UInt64) ENGINE = MergeTree ORDER BY id", t.0));
        t
    }

    /// (rows, distinct ids) once no query on the table runs any more.
    fn rows(&self) -> (u64, u64) {
        tokio::task::block_in_place(|| {
            wait_quiet(&self.0);
            let out = http(&format!("SELECT count(), uniqExact(id) FROM {} FORMAT TSV", self.0));
            let v: Vec<u64> = out.trim().split('\t').map(|x| x.parse().unwrap()).collect();
            (v[0], v[1])
        })
    }
}

impl Drop for Table {
    fn drop(&mut self) {
        http_try(&format!("DROP TABLE IF EXISTS {}", self.0));
    }
}

const INSERT_ROWS: u64 = 1_000_000;

/// Inserts 1M rows (16 MB uncompressed) in packets of 100k rows.
async fn big_insert(c: &mut Client, table: &str) -> chnative::Result<chnative::InsertSummary> {
    let ids: Vec<u64> = (0..INSERT_ROWS).collect();
    let pad: Vec<u64> = ids.iter().map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
    within("an insert", c.insert(table).column("id", &ids).column("pad", &pad).send()).await
}

fn insert_config(p: &Proxy) -> Config {
    p.config().compression(Compression::None).insert_block_rows(100_000)
}

/// A failed insert stored no more rows than it sent and none twice.
fn assert_partial_at_most(t: &Table, what: &str) {
    let (rows, distinct) = t.rows();
    assert_eq!(rows, distinct, "{what}: duplicated rows");
    assert!(rows <= INSERT_ROWS, "{what}: {rows} rows stored");
    eprintln!("{what}: {rows} of {INSERT_ROWS} rows landed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cut_client_to_server_mid_insert_block() {
    let t = Table::new("fault_cut_insert");
    let p = Proxy::to_server().await;
    let cfg = insert_config(&p);
    let mut c = connect(cfg.clone()).await;
    // 3 MB in: inside the fourth 1.6 MB packet.
    p.cut_after(Dir::Up, 5 << 20);
    let e = big_insert(&mut c, &t.0).await.expect_err("a cut insert must fail");
    assert!(is_io(&e), "a cut mid-insert gave {e:?}, not an I/O error");
    p.clear();
    assert_not_reused(&p, &mut c, &e, cfg).await;
    drop(c);
    assert_partial_at_most(&t, "cut mid-insert");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reset_during_insert() {
    let t = Table::new("fault_reset_insert");
    let p = Proxy::to_server().await;
    let cfg = insert_config(&p);
    let mut c = connect(cfg.clone()).await;
    p.reset_after(Dir::Up, 5 << 20);
    let e = big_insert(&mut c, &t.0).await.expect_err("a reset insert must fail");
    match e.as_io() {
        Some(io) if e.kind() == ErrorKind::Io => assert!(
            matches!(io.kind(), std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe),
            "a reset gave {e}"
        ),
        _ => panic!("a reset gave {e:?}, not an I/O error"),
    }
    p.clear();
    assert_not_reused(&p, &mut c, &e, cfg).await;
    drop(c);
    assert_partial_at_most(&t, "reset mid-insert");
}

async fn stall_insert_past_timeout(t: &Table) -> (Proxy, Client, Error, Config) {
    let p = Proxy::to_server().await;
    let cfg = insert_config(&p).read_timeout(Some(Duration::from_millis(500)));
    let mut c = connect(cfg.clone()).await;
    // Stalled 2 MB into the data: the client's writes then wait on full buffers.
    p.stall_after(Dir::Up, 2 << 20);
    let e = big_insert(&mut c, &t.0).await.expect_err("a stalled insert must time out");
    assert!(e.kind() == ErrorKind::Timeout, "a stall mid-insert gave {e:?}, not a timeout");
    eprintln!("insert stalled mid-data: {e}");
    p.clear();
    (p, c, e, cfg)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stall_past_the_timeout_while_sending_an_insert() {
    let t = Table::new("fault_stall_insert");
    let (p, mut c, e, cfg) = stall_insert_past_timeout(&t).await;
    assert_not_reused(&p, &mut c, &e, cfg).await;
    drop(c);
    assert_partial_at_most(&t, "stalled insert");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stall_past_the_timeout_waiting_for_the_insert_header() {
    let t = Table::new("fault_stall_header");
    let p = Proxy::to_server().await;
    let cfg = insert_config(&p).read_timeout(Some(Duration::from_millis(500)));
    let mut c = connect(cfg.clone()).await;
    p.stall(Dir::Down);
    let ids = [1u64, 2, 3];
    let res = within(
        "an insert waiting for its header",
        c.insert(&t.0).column("id", &ids[..]).column("pad", &ids[..]).send(),
    )
    .await;
    let e = res.expect_err("an insert whose header never comes must time out");
    assert!(e.kind() == ErrorKind::Timeout, "gave {e:?}, not a timeout");
    p.clear();
    assert_not_reused_with(&p, &mut c, &e, cfg, true).await;
    drop(c);
    let (rows, _) = t.rows();
    assert_eq!(rows, 0, "an insert that never sent its data stored rows");
}
