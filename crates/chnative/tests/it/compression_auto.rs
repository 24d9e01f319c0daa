//! `compression=auto` against the real server: the codec each query runs with,
//! as reported, and the values it moves. Whether loopback counts as a fast link
//! depends on the machine's speed, so these tests set the threshold to the two
//! ends (every link fast, every link slow) and never depend on time; the
//! choices themselves are unit-tested in `chnative_proto::compression::auto`.

use crate::common::own_server::OwnServer;
use crate::common::*;

use chnative::{Client, Compression, Config};

const N: u64 = 2_000_000; // 16 MB of UInt64: above the 4 MiB a sample needs
const SELECT: &str = "SELECT number FROM numbers(2000000)";

async fn client(fast_link: f64) -> Client {
    let cfg = Config::from_url(&url("")).unwrap().compression(Compression::Auto).auto_fast_link(fast_link);
    Client::connect_with(cfg).await.unwrap()
}

/// Reads `SELECT`: the codec it ran with, after checking every value.
async fn read(c: &Client) -> Compression {
    read_sql(c, SELECT).await
}

/// Reads `sql` (N numbers from 0, as `number`): the codec it ran with, after checking every value.
async fn read_sql(c: &Client, sql: &str) -> Compression {
    let mut s = c.fetch_blocks(sql).await.unwrap();
    let (mut rows, mut sum) = (0u64, 0u64);
    while let Some(b) = s.next().await.unwrap() {
        let v: &[u64] = b.column("number").unwrap().view().values().unwrap();
        rows += v.len() as u64;
        sum += v.iter().sum::<u64>();
    }
    assert_eq!((rows, sum), (N, N * (N - 1) / 2));
    s.compression()
}

#[tokio::test]
async fn auto_on_a_fast_link_never_compresses() {
    let c = client(0.0).await;
    // First unmeasured, then measured fast.
    for _ in 0..3 {
        assert_eq!(read(&c).await, Compression::None);
    }
}

#[tokio::test]
async fn auto_on_a_slow_link_tries_each_codec_per_statement_and_keeps_one() {
    let c = client(f64::INFINITY).await;
    // Unmeasured: none; its measurement shows a slow link, so the statement
    // then tries LZ4 and ZSTD(1), and keeps one of the three.
    assert_eq!(read(&c).await, Compression::None);
    assert_eq!(read(&c).await, Compression::Lz4);
    assert_eq!(read(&c).await, Compression::Zstd(1));
    let kept = read(&c).await;
    assert!(matches!(kept, Compression::None | Compression::Lz4 | Compression::Zstd(1)), "{kept:?}");
    assert_eq!(read(&c).await, kept, "a learned choice stays");

    // An INSERT statement is learned on its own, starting with LZ4 on a link known to be slow.
    let t = unique_table("auto_insert");
    c.execute(format!("CREATE TABLE {t} (n UInt64) ENGINE = MergeTree ORDER BY n")).await.unwrap();
    let values: Vec<u64> = (0..N).collect();
    let mut used = Vec::new();
    for _ in 0..4 {
        let s = c.insert(&t).column("n", &values[..]).send().await.unwrap();
        assert_eq!(s.rows, N);
        used.push(s.compression);
    }
    assert_eq!(&used[..3], &[Compression::Lz4, Compression::None, Compression::Zstd(1)]);
    let (count, sum): (u64, u64) = c.fetch_one(format!("SELECT count(), sum(n) FROM {t}")).await.unwrap();
    assert_eq!((count, sum), (4 * N, 4 * (N * (N - 1) / 2)));
    c.execute(format!("DROP TABLE {t}")).await.unwrap();
}

/// What auto learns of a server is the process's, not one client's: a second
/// client, made from a config of its own, goes on with the exploration the
/// first one started (before, it started from nothing; 16 clients inserting at
/// once each judged their own transfer against a busy server, saw 16 slow
/// links, and explored codecs).
///
/// The server is this test's own: the process-wide table is keyed by host and
/// port, so no other test of the binary has taught it anything, and with the
/// threshold at infinity every large transfer is evidence of a slow link,
/// however busy the machine is. (It used the shared server with a threshold of
/// `f64::MAX` before: a finite threshold lets a client busy with its rows
/// judge the link fast, and inside a loaded `cargo test --workspace` on two
/// cores the first read did, so the second stayed uncompressed.)
#[tokio::test]
async fn clients_of_one_process_share_what_auto_learned() {
    let own = tokio::task::spawn_blocking(|| OwnServer::start("auto-shared")).await.unwrap();
    let connect = || {
        let cfg = Config::from_url(&own.url("")).unwrap().compression(Compression::Auto).auto_fast_link(f64::INFINITY);
        Client::connect_with(cfg)
    };
    let sql = "SELECT number + 0 AS number FROM numbers(2000000)";
    let first = connect().await.unwrap();
    assert_eq!(read_sql(&first, sql).await, Compression::None, "unmeasured");
    assert_eq!(read_sql(&first, sql).await, Compression::Lz4, "slow: explores");
    let second = connect().await.unwrap();
    assert_eq!(read_sql(&second, sql).await, Compression::Zstd(1), "goes on where the first client was");
}

#[tokio::test]
async fn fixed_codecs_report_themselves() {
    for (option, expected) in [
        ("compression=lz4", Compression::Lz4),
        ("compression=zstd", Compression::Zstd(1)),
        ("compression=none", Compression::None),
    ] {
        let c = Client::connect(&url(option)).await.unwrap();
        let mut s = c.fetch_blocks("SELECT 1").await.unwrap();
        while s.next().await.unwrap().is_some() {}
        assert_eq!(s.compression(), expected, "{option}");
    }
    // The default (auto) reports the codec it ran with, never `Auto`: which one
    // depends on what the other tests of this process taught it of the server.
    let c = Client::connect(&url("")).await.unwrap();
    let mut s = c.fetch_blocks("SELECT 1").await.unwrap();
    while s.next().await.unwrap().is_some() {}
    assert!(
        matches!(s.compression(), Compression::None | Compression::Lz4 | Compression::Zstd(1)),
        "{:?}",
        s.compression()
    );
    // Display is the connection string's spelling.
    assert_eq!(Compression::Auto.to_string(), "auto");
    assert_eq!(Compression::Zstd(3).to_string(), "zstd:3");
    let c = Config::from_url("clickhouse://default@127.0.0.1:9000/default?compression=auto").unwrap();
    assert!(format!("{c:?}").contains("Auto"));
}
