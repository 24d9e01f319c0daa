//! A warm `query_arrow` reuses the memory of the buffers it converted for earlier
//! batches once the caller has dropped them (string offsets, widened dates and
//! times): reading a result again allocates a small fraction of what its
//! converted buffers hold, instead of all of it. A counting global allocator
//! measures the second of two reads on one connection, on a current-thread runtime
//! (the test kit's counters are per thread, so other tests running meanwhile do not count).

use crate::common;
use common::*;

use arrow_array::Array;
use chnative_testkit::alloc;

const ROWS: u64 = 400_000;

#[test]
fn a_warm_read_reuses_the_converted_buffers_of_dropped_batches() {
    let table = "arrowbench_alloc_read";
    http(&format!("DROP TABLE IF EXISTS {table}"));
    http(&format!(
        "CREATE TABLE {table} (a String, b String, d Date, t DateTime, n Int32) ENGINE = MergeTree ORDER BY tuple()"
    ));
    http(&format!(
        "INSERT INTO {table} SELECT * FROM generateRandom('a String, b String, d Date, t DateTime, n Int32', 7, 12) \
         LIMIT {ROWS}"
    ));
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let sql = format!("SELECT * FROM {table} SETTINGS max_block_size = 65536, max_threads = 1");
    let client = rt.block_on(client());
    let read = || {
        rt.block_on(async {
            let mut s = chnative_arrow::query_arrow(&client, sql.as_str()).await.unwrap();
            let (mut rows, mut bytes) = (0u64, 0usize);
            while let Some(b) = s.next().await.unwrap() {
                rows += b.num_rows() as u64;
                bytes += b.columns().iter().map(|c| c.get_buffer_memory_size()).sum::<usize>();
            }
            (rows, bytes)
        })
    };
    read();
    let before = alloc::bytes();
    let (rows, _) = read();
    let allocated = alloc::bytes() - before;
    http(&format!("DROP TABLE {table}"));
    assert_eq!(rows, ROWS);
    // Converted per row: two i32 offsets (8 bytes), a Date32 (4), an i64 time (8): 20 bytes,
    // 8 MB for the whole read when nothing is reused. A warm read makes only the first
    // batch's and the ones whose block sizes differ.
    let converted = ROWS * 20;
    assert!(allocated < converted / 3, "a warm read allocated {allocated} bytes (converted buffers: {converted})");
}
