//! Typed rows allocate nothing per row that the row type itself does not need:
//! reading borrowed rows (`&str`, `&[u32]` fields) of 2M rows allocates no more
//! than reading 200k on the same warm connection, apart from a small amount per
//! block (the per-block field readers). Counted with a global allocator, as in
//! `alloc.rs`: this thread's counters, on a current-thread runtime, so other tests don't count.

use crate::common;
use chnative_testkit::alloc;

#[derive(chnative::Row)]
struct Borrowed<'a> {
    id: u64,
    name: &'a str,
    nums: &'a [u32],
    opt: Option<&'a str>,
    lc: &'a str,
}

/// Allocation calls while reading `n` rows (after the query is sent).
async fn read(c: &mut chnative::Client, n: u64) -> u64 {
    let sql = format!(
        "SELECT number AS id, toString(number) AS name, range(number % 4)::Array(UInt32) AS nums, \
         if(number % 2 = 0, NULL, 'x') AS opt, toLowCardinality(toString(number % 7)) AS lc FROM numbers({n})"
    );
    let mut rows = c.fetch::<Borrowed<'_>>(sql).await.unwrap();
    let start = alloc::calls();
    let mut seen = 0u64;
    let mut sum = 0usize;
    while let Some(r) = rows.next().await.unwrap() {
        assert_eq!(r.id, seen);
        sum += r.name.len() + r.nums.len() + r.opt.map_or(0, str::len) + r.lc.len();
        seen += 1;
    }
    drop(rows);
    assert_eq!(seen, n);
    assert!(sum > 0);
    alloc::calls() - start
}

#[tokio::test(flavor = "current_thread")]
async fn borrowed_typed_rows_allocate_per_block_not_per_row() {
    let mut c = chnative::Client::connect(&common::url("compression=lz4")).await.unwrap();
    read(&mut c, 2_000_000).await; // warm the connection's buffers
    let small = read(&mut c, 200_000).await;
    let large = read(&mut c, 2_000_000).await;
    println!("allocations: 200k rows {small}, 2M rows {large}");
    // 10x the rows; the difference is per-block work only (about 30 more blocks; measured 101 vs 234 calls).
    assert!(large < small + 500, "200k rows: {small} allocations, 2M rows: {large}");
    assert!(large < 1_000, "2M rows: {large} allocations");
}

#[derive(chnative::Row)]
struct Event<'a> {
    id: u64,
    name: &'a str,
    tags: Vec<&'a str>,
}

/// Bytes this thread allocates while a new inserter (or `insert_rows`) writes
/// and sends `rows`.
async fn insert_bytes(c: &chnative::Client, table: &str, rows: &[Event<'_>], inserter: bool) -> u64 {
    let start = alloc::bytes();
    if inserter {
        let mut ins = c.inserter::<Event<'_>>(table).await.unwrap();
        for r in rows {
            ins.write(r).await.unwrap();
        }
        ins.end().await.unwrap();
    } else {
        c.insert_rows(table, rows).await.unwrap();
    }
    alloc::bytes() - start
}

/// A typed INSERT takes the column buffers an earlier one of the same row type
/// and column types gave back (an inserter when dropped, `insert_rows` when
/// done): a new inserter of 50k rows allocates a small part of what the first
/// one did, which grew its buffers from empty. Every row still arrives.
#[tokio::test(flavor = "current_thread")]
async fn new_typed_inserts_reuse_the_last_ones_buffers() {
    let t = common::unique_table("rows_alloc_kept");
    common::http(&format!(
        "CREATE TABLE {t} (id UInt64, name String, tags Array(String)) ENGINE = MergeTree ORDER BY id"
    ));
    let names: Vec<String> = (0..50_000).map(|i| format!("name-{i}-{}", "x".repeat(i % 40))).collect();
    let rows: Vec<Event<'_>> =
        names.iter().enumerate().map(|(i, n)| Event { id: i as u64, name: n, tags: vec!["a", &n[..4]] }).collect();
    let c = chnative::Client::connect(&common::url("compression=none")).await.unwrap();
    let first = insert_bytes(&c, &t, &rows, true).await;
    let second = insert_bytes(&c, &t, &rows, true).await;
    let rows_call = insert_bytes(&c, &t, &rows, false).await;
    println!("bytes allocated: first inserter {first}, second {second}, insert_rows {rows_call}");
    assert!(second * 4 < first, "second inserter allocated {second} bytes, the first {first}");
    assert!(rows_call * 4 < first, "insert_rows allocated {rows_call} bytes, the first inserter {first}");
    let stored = common::http(&format!("SELECT count(), sum(id), sum(length(name)), sum(length(tags)) FROM {t}"));
    let name_bytes: usize = names.iter().map(String::len).sum();
    assert_eq!(stored.trim(), format!("150000,{},{},300000", 3 * (49_999u64 * 50_000 / 2), 3 * name_bytes));
}

#[derive(chnative::Row)]
struct Named<'a> {
    id: u64,
    name: &'a str,
}

/// `insert_rows` transposes a chunk of rows at a time and sends each as a block
/// of one INSERT: a fresh client inserting 300k rows (about 25 MB of column
/// data) allocates a few MiB of buffers (measured 5.0 MB), not the whole
/// transposition (40 MB before, its buffers doubling up to 25 MB). Every row
/// arrives, in one INSERT.
#[tokio::test(flavor = "current_thread")]
async fn insert_rows_holds_one_chunk_of_rows() {
    let t = common::unique_table("rows_alloc_chunks");
    common::http(&format!("CREATE TABLE {t} (id UInt64, name String) ENGINE = MergeTree ORDER BY id"));
    let names: Vec<String> = (0..300_000).map(|i| format!("{i:>8}-{}", "n".repeat(50 + i % 20))).collect();
    let rows: Vec<Named<'_>> = names.iter().enumerate().map(|(i, n)| Named { id: i as u64, name: n }).collect();
    let c = chnative::Client::connect(&common::url("compression=none")).await.unwrap();
    let start = alloc::bytes();
    let s = c.insert_rows(&t, &rows).await.unwrap();
    let bytes = alloc::bytes() - start;
    println!("insert_rows of 300k rows allocated {bytes} bytes in {} blocks", s.blocks);
    assert_eq!(s.rows, 300_000);
    assert!(s.blocks > 1, "{} blocks", s.blocks);
    assert!(bytes < 16 << 20, "insert_rows allocated {bytes} bytes");
    let name_bytes: usize = names.iter().map(String::len).sum();
    let stored = common::http(&format!("SELECT count(), sum(id), sum(length(name)) FROM {t}"));
    assert_eq!(stored.trim(), format!("300000,{},{name_bytes}", 299_999u64 * 300_000 / 2));
}
