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
