//! The column tier in miniature: create a table, insert a million rows by
//! columns, stream them back with the server's progress, and report speed and
//! bytes allocated.
//!
//! `cargo run --release -p chnative --example demo [clickhouse://user@host:port/db]`
//!
//! With no URL (and no `CHNATIVE_URL`), it starts the embedded test server
//! (`scripts/server.sh start`: ClickHouse 26.9 from the chdb-core wheel).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

struct Counting;
static ALLOCATED: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards to the system allocator unchanged; only counts bytes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCATED.fetch_add(l.size() as u64, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        ALLOCATED.fetch_add(new.saturating_sub(l.size()) as u64, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(p, l, new) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const ROWS: usize = 1_000_000;

fn start_embedded_server() -> String {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/server.sh");
    eprintln!("no server given: starting the embedded one ({script} start; the first run installs chdb-core)");
    let status = std::process::Command::new("bash").arg(script).arg("start").status().expect("run server.sh");
    assert!(status.success(), "could not start the embedded server");
    let port = std::env::var("CHNATIVE_TCP_PORT").unwrap_or_else(|_| "19000".into());
    format!("clickhouse://default@127.0.0.1:{port}/default")
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> chnative::Result<()> {
    let url =
        std::env::args().nth(1).or_else(|| std::env::var("CHNATIVE_URL").ok()).unwrap_or_else(start_embedded_server);
    let client = chnative::Client::connect(&url).await?;
    let info = client.server_info();
    println!(
        "connected to {} {}.{}.{} (revision {}, negotiated {}); compression as the URL says (`auto` by default: chosen per query from what the link does)",
        info.name, info.version.0, info.version.1, info.version.2, info.revision, info.negotiated_revision
    );

    client.execute("DROP TABLE IF EXISTS chnative_demo").await?;
    client
        .execute("CREATE TABLE chnative_demo (id UInt64, name String, score Float64) ENGINE = MergeTree ORDER BY id")
        .await?;

    // Columns as an application would hold them.
    let ids: Vec<u64> = (0..ROWS as u64).collect();
    let names: Vec<String> = ids.iter().map(|i| format!("user-{i}")).collect();
    let scores: Vec<f64> = ids.iter().map(|&i| (i % 1000) as f64 / 10.0).collect();

    let before = ALLOCATED.load(Ordering::Relaxed);
    let t = Instant::now();
    let summary = client
        .insert("chnative_demo")
        .column("id", &ids)
        .column("name", &names)
        .column("score", &scores)
        .send()
        .await?;
    let secs = t.elapsed().as_secs_f64();
    println!(
        "inserted {} rows in {} blocks (compression: {}): {:.2} s, {:.1} M rows/s, {:.1} MiB allocated by the client",
        summary.rows,
        summary.blocks,
        summary.compression,
        secs,
        summary.rows as f64 / secs / 1e6,
        (ALLOCATED.load(Ordering::Relaxed) - before) as f64 / (1 << 20) as f64
    );

    let before = ALLOCATED.load(Ordering::Relaxed);
    let t = Instant::now();
    let mut stream = client
        .fetch_blocks(
            chnative::Query::new("SELECT id, name, score FROM chnative_demo ORDER BY id")
                .setting("max_block_size", "65536")
                // Progress packets every 10 ms instead of 100 ms, so a fast query shows some.
                .setting("interactive_delay", "10000"),
        )
        .await?;
    let (mut rows, mut id_sum, mut name_bytes, mut score_sum, mut last_shown) = (0usize, 0u64, 0usize, 0f64, 0u64);
    while let Some(block) = stream.next().await? {
        // Borrowed views: no copy, nothing allocated per row.
        let ids: &[u64] = block.column("id").expect("id").view().values()?;
        let names = block.column("name").expect("name").view().as_strings()?;
        let scores: &[f64] = block.column("score").expect("score").view().values()?;
        id_sum += ids.iter().sum::<u64>();
        name_bytes += names.blob().len();
        score_sum += scores.iter().sum::<f64>();
        rows += block.rows();
        let p = stream.progress();
        if p.read_rows > last_shown {
            last_shown = p.read_rows;
            println!(
                "  progress: server read {} of {} rows ({} bytes)",
                p.read_rows, p.total_rows_to_read, p.read_bytes
            );
        }
    }
    let secs = t.elapsed().as_secs_f64();
    let allocated = ALLOCATED.load(Ordering::Relaxed) - before;
    let p = stream.progress();
    println!(
        "  final progress: server read {} rows, {} bytes in {:.3} s",
        p.read_rows,
        p.read_bytes,
        p.elapsed_ns as f64 / 1e9
    );
    drop(stream);
    assert_eq!(rows, ROWS);
    assert_eq!(id_sum, ids.iter().sum::<u64>());
    println!(
        "streamed {rows} rows in {secs:.3} s: {:.1} M rows/s, {name_bytes} string bytes, score sum {score_sum:.1}",
        rows as f64 / secs / 1e6
    );
    println!(
        "bytes allocated by the client while streaming: {} ({:.1} bytes per row)",
        allocated,
        allocated as f64 / rows as f64
    );
    client.execute("DROP TABLE chnative_demo").await?;
    Ok(())
}
