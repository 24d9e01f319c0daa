//! The pooled `Client`: many tasks, calls dropped at every kind of await
//! point, and afterwards a full pool, no leftover queries or sockets on the
//! server, and correct data from every call that completed.
//!
//! The test has a server of its own (`OwnServer`), so what it counts is its own
//! while the other tests of this binary run: the sockets are counted on this side
//! (this process's established connections to that server's native port, which
//! no other test knows), and the running queries on that server.

use crate::common;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use chnative::{params, Client, Config, Error};
use common::own_server::OwnServer;
use common::{eventually, Rng};

/// Polls a future at most `polls` times, then drops it (returning `None`):
/// a drop at a point that depends only on how often the future waited.
struct DropAfter<F> {
    fut: Pin<Box<F>>,
    polls: u32,
}

impl<F: Future> Future for DropAfter<F> {
    type Output = Option<F::Output>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if self.polls == 0 {
            return Poll::Ready(None);
        }
        self.polls -= 1;
        match self.fut.as_mut().poll(cx) {
            Poll::Ready(v) => Poll::Ready(Some(v)),
            Poll::Pending if self.polls == 0 => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }
}

fn drop_after<F: Future>(fut: F, polls: u32) -> DropAfter<F> {
    DropAfter { fut: Box::pin(fut), polls }
}

/// This process's established TCP connections to `port` (the own server's
/// native port): the socket inodes of /proc/self/fd found in /proc/net/tcp{,6}
/// with that remote port. Unlike the server's TCPConnection metric, another
/// process connected to the same server does not count; and as the server is
/// this test's own, neither do the other tests of this binary.
fn own_sockets(port: u16) -> i64 {
    let mut mine = std::collections::HashSet::new();
    for fd in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
        if let Ok(target) = std::fs::read_link(fd.path()) {
            let t = target.to_string_lossy();
            if let Some(inode) = t.strip_prefix("socket:[").and_then(|r| r.strip_suffix(']')) {
                mine.insert(inode.to_string());
            }
        }
    }
    let mut n = 0;
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else { continue };
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
            let (Some(remote), Some(state), Some(inode)) = (f.get(2), f.get(3), f.get(9)) else { continue };
            let remote_port = remote.rsplit(':').next().and_then(|p| u16::from_str_radix(p, 16).ok());
            if *state == "01" && remote_port == Some(port) && mine.contains(*inode) {
                n += 1;
            }
        }
    }
    n
}

fn running_queries(server: &OwnServer, client_name: &str) -> u64 {
    let sql = format!("SELECT count() FROM system.processes WHERE client_name = '{client_name}'");
    server.http(&sql).trim().parse().unwrap()
}

#[derive(Default)]
struct Counts {
    completed: AtomicU64,
    dropped: AtomicU64,
    inserted_batches: AtomicU64,
}

/// One task: `ops` calls, about half dropped at a random point.
async fn worker(
    client: Client,
    table: Arc<String>,
    task: u64,
    ops: u64,
    counts: Arc<Counts>,
    batches: Arc<std::sync::Mutex<Vec<u64>>>,
) {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (task + 1));
    for op in 0..ops {
        let drop_it = rng.below(2) == 0;
        let polls = 1 + rng.below(12) as u32;
        let kind = rng.below(4);
        let done = match kind {
            // A scalar with a parameter: the answer proves the right query ran.
            0 => {
                let i = rng.below(1 << 40);
                let f = client.fetch_scalar::<u64>(("SELECT {i:UInt64} * 2", params! {"i" => i}));
                let r = if drop_it { drop_after(f, polls).await } else { Some(f.await) };
                if let Some(r) = r {
                    assert_eq!(r.unwrap(), i * 2);
                }
                true
            }
            // A multi-block stream, read in full or dropped between blocks.
            1 => {
                let n = 2_000 + rng.below(6_000);
                let stop_at = if drop_it { Some(rng.below(4)) } else { None };
                let f = async {
                    let mut s = client
                        .fetch_blocks(
                            chnative::Query::new(format!("SELECT number FROM numbers({n})"))
                                .setting("max_block_size", "1000"),
                        )
                        .await?;
                    let (mut sum, mut blocks) = (0u64, 0u64);
                    while let Some(b) = s.next().await? {
                        if Some(blocks) == stop_at {
                            return Ok::<_, Error>(None);
                        }
                        sum += b.column("number").unwrap().view().values::<u64>()?.iter().sum::<u64>();
                        blocks += 1;
                    }
                    Ok(Some(sum))
                };
                let r = if drop_it && rng.below(2) == 0 { drop_after(f, polls).await } else { Some(f.await) };
                if let Some(Some(sum)) = r.map(|r| r.unwrap()) {
                    assert_eq!(sum, n * (n - 1) / 2);
                }
                true
            }
            // An insert in several blocks, dropped mid-send or completed.
            2 => {
                let batch = (task + 1) * 1_000_000 + op;
                let rows = 100 + rng.below(1_000) as usize;
                let ids = vec![batch; rows];
                let vals: Vec<u64> = (0..rows as u64).collect();
                let f = client.insert(&table).column("batch", &ids).column("v", &vals).send();
                let r = if drop_it { drop_after(f, polls).await } else { Some(f.await) };
                if let Some(r) = r {
                    assert_eq!(r.unwrap().rows, rows as u64);
                    batches.lock().unwrap().push(batch * 100_000 + rows as u64);
                    counts.inserted_batches.fetch_add(1, Ordering::Relaxed);
                }
                true
            }
            // A ping, possibly dropped while still waiting for a free slot.
            _ => {
                let f = client.ping();
                let r = if drop_it { drop_after(f, 1 + polls % 2).await } else { Some(f.await) };
                if let Some(r) = r {
                    r.unwrap();
                }
                true
            }
        };
        let _ = done;
        if drop_it {
            counts.dropped.fetch_add(1, Ordering::Relaxed);
        } else {
            counts.completed.fetch_add(1, Ordering::Relaxed);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_acquisitions_half_dropped_leave_a_full_clean_pool() {
    let server = tokio::task::block_in_place(|| OwnServer::start("pool-stress"));
    let port = server.tcp_port;
    let client_name = format!("chn-pool-stress-{}", std::process::id());
    let table = "pool_stress".to_string();
    server.http(&format!("CREATE TABLE {table} (batch UInt64, v UInt64) ENGINE = MergeTree ORDER BY batch"));
    let baseline = own_sockets(port);
    assert_eq!(baseline, 0, "connections to a server just started");
    let max = 12;
    let cfg = Config::from_url(&server.url(&format!("client_name={client_name}")))
        .unwrap()
        .pool_max_size(max)
        .insert_block_rows(250);
    let client = Client::connect_with(cfg).await.unwrap();

    let counts = Arc::new(Counts::default());
    let batches = Arc::new(std::sync::Mutex::new(Vec::new()));
    let table = Arc::new(table);
    let (tasks, ops) = (64u64, 160u64);
    let mut handles = Vec::new();
    for t in 0..tasks {
        handles.push(tokio::spawn(worker(client.clone(), table.clone(), t, ops, counts.clone(), batches.clone())));
    }
    for h in handles {
        h.await.unwrap();
    }
    let (completed, dropped) = (counts.completed.load(Ordering::Relaxed), counts.dropped.load(Ordering::Relaxed));
    assert_eq!(completed + dropped, tasks * ops);
    assert!(completed + dropped >= 10_000);
    assert!(dropped > 4_000 && completed > 4_000, "{completed} completed, {dropped} dropped");

    // Abandoned calls finish in the background; then every slot is free.
    assert!(eventually(|| client.pool_status().in_use == 0).await, "{:?}", client.pool_status());
    let status = client.pool_status();
    assert!(status.size <= max && status.idle == status.size, "{status:?}");
    assert!(eventually(|| running_queries(&server, &client_name) == 0).await, "queries left running on the server");

    // This process holds exactly the pool's sockets, no more.
    assert!(
        eventually(|| own_sockets(port) == baseline + client.pool_status().size as i64).await,
        "{} sockets vs baseline {baseline} + pool {:?}",
        own_sockets(port),
        client.pool_status()
    );

    // Full capacity: `max` calls can hold a connection at once, and each works.
    let mut held = Vec::new();
    for _ in 0..max {
        held.push(client.session().await.unwrap());
    }
    for s in &mut held {
        assert_eq!(s.fetch_scalar::<u8>("SELECT 1").await.unwrap(), 1);
    }
    drop(held);

    // Every insert that reported success is there, once.
    let expected = batches.lock().unwrap().clone();
    let got = server.http(&format!("SELECT batch * 100000 + count() FROM {table} GROUP BY batch FORMAT TSV"));
    let got: std::collections::HashSet<u64> = got.lines().map(|l| l.parse().unwrap()).collect();
    for b in &expected {
        assert!(got.contains(b), "completed insert {b} missing or partial");
    }
    assert_eq!(counts.inserted_batches.load(Ordering::Relaxed), expected.len() as u64);

    drop(client);
    assert!(eventually(|| own_sockets(port) == baseline).await, "sockets left open after the client was dropped");
    tokio::task::block_in_place(|| drop(server));
}
