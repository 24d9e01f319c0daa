//! An `ArrowInsert` of many batches converts into the memory of its first one:
//! string offsets go to the wire from the Arrow arrays as they are (no u64 copy
//! per batch), narrowed dates and times reuse the vectors of the batch before,
//! and the per-block lists (prepared columns, (name, data) pairs, wire type
//! names) are kept. A counting global allocator measures the writes after the
//! first, on a current-thread runtime (the test kit's counters are per thread).

use std::sync::Arc;

use crate::common;
use common::*;

use arrow_array::{ArrayRef, Date32Array, Int32Array, RecordBatch, StringArray, TimestampSecondArray};
use chnative_testkit::alloc;

const BATCHES: usize = 30;
const ROWS: usize = 8_000;

fn batch(k: usize) -> RecordBatch {
    let base = k * ROWS;
    let a: ArrayRef = Arc::new(StringArray::from_iter_values((0..ROWS).map(|i| format!("a{}", base + i))));
    let b: ArrayRef = Arc::new(StringArray::from_iter_values((0..ROWS).map(|i| "x".repeat((base + i) % 7))));
    let d: ArrayRef = Arc::new(Date32Array::from_iter_values((0..ROWS).map(|i| ((base + i) % 40_000) as i32)));
    let t: ArrayRef =
        Arc::new(TimestampSecondArray::from_iter_values((0..ROWS).map(|i| 1_700_000_000 + (base + i) as i64)));
    let n: ArrayRef = Arc::new(Int32Array::from_iter_values((0..ROWS).map(|i| (base + i) as i32)));
    RecordBatch::try_from_iter([("a", a), ("b", b), ("d", d), ("t", t), ("n", n)]).unwrap()
}

#[test]
fn writes_after_the_first_batch_allocate_almost_nothing() {
    let table = "arrow_alloc_insert";
    http(&format!("DROP TABLE IF EXISTS {table}"));
    http(&format!("CREATE TABLE {table} (a String, b String, d Date, t DateTime, n Int32) ENGINE = Memory"));
    let batches: Vec<RecordBatch> = (0..BATCHES).map(batch).collect();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let client = rt.block_on(client());
    let allocated = rt.block_on(async {
        let mut ins = chnative_arrow::ArrowInsert::open(&client, table).await.unwrap();
        ins.write(&batches[0]).await.unwrap();
        let before = alloc::bytes();
        for b in &batches[1..] {
            ins.write(b).await.unwrap();
        }
        let allocated = alloc::bytes() - before;
        ins.end().await.unwrap();
        allocated
    });
    let stored = http(&format!(
        "SELECT count(), sum(length(a)), sum(length(b)), sum(toUInt32(d)), sum(toUInt32(t)), sum(n) FROM {table} FORMAT TabSeparated"
    ));
    http(&format!("DROP TABLE {table}"));
    let rows = BATCHES * ROWS;
    let want = {
        let (mut la, mut lb, mut d, mut t, mut n) = (0usize, 0usize, 0u64, 0u64, 0i64);
        for i in 0..rows {
            la += format!("a{i}").len();
            lb += i % 7;
            d += (i % 40_000) as u64;
            t += 1_700_000_000 + i as u64;
            n += i as i64;
        }
        format!("{rows}\t{la}\t{lb}\t{d}\t{t}\t{n}\n")
    };
    assert_eq!(stored, want);
    // What converting each batch anew would allocate: u64 end offsets for the two
    // string columns (16 bytes a row), Date as u16 (2) and DateTime as u32 (4).
    let per_batch_conversions = ROWS * 22;
    let after_first = (BATCHES - 1) * per_batch_conversions;
    eprintln!("{} writes after the first allocated {allocated} bytes", BATCHES - 1);
    assert!(
        (allocated as usize) < per_batch_conversions / 4,
        "{} writes after the first allocated {allocated} bytes (converting anew: {after_first})",
        BATCHES - 1
    );
}

/// A table as wide as the benchmark's (hits: 105 columns): what an INSERT costs
/// apart from its rows (the table's types, the statement, the header, the
/// conversion vectors) shows only with many columns.
const WIDE: usize = 100;

fn wide_batch(rows: usize) -> RecordBatch {
    let cols: Vec<(String, ArrayRef)> = (0..WIDE)
        .map(|c| {
            let a: ArrayRef = match c % 4 {
                0 => Arc::new(StringArray::from_iter_values((0..rows).map(|i| format!("s{i}")))),
                1 => Arc::new(Date32Array::from_iter_values((0..rows).map(|i| i as i32))),
                2 => Arc::new(TimestampSecondArray::from_iter_values((0..rows).map(|i| 1_700_000_000 + i as i64))),
                _ => Arc::new(Int32Array::from_iter_values((0..rows).map(|i| i as i32))),
            };
            (format!("column_number_{c}"), a)
        })
        .collect();
    RecordBatch::try_from_iter(cols).unwrap()
}

fn wide_table_ddl(table: &str) -> String {
    let cols: Vec<String> = (0..WIDE)
        .map(|c| {
            let ty = ["String", "Date", "DateTime", "Int32"][c % 4];
            format!("column_number_{c} {ty}")
        })
        .collect();
    format!("CREATE TABLE {table} ({}) ENGINE = Memory", cols.join(", "))
}

/// The second and later INSERTs into the same table on a warm client allocate
/// next to nothing: the table's types, the INSERT's header and the conversion
/// vectors of the first are kept (and checked against each INSERT's header).
#[test]
fn later_inserts_into_a_wide_table_allocate_almost_nothing() {
    let table = "arrow_alloc_insert_wide";
    http(&format!("DROP TABLE IF EXISTS {table}"));
    http(&wide_table_ddl(table));
    let batches = [wide_batch(1000), wide_batch(1000)];
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let client = rt.block_on(client());
    let per_insert: Vec<u64> = rt.block_on(async {
        let mut out = Vec::new();
        for _ in 0..4 {
            let before = alloc::bytes();
            let mut ins = chnative_arrow::ArrowInsert::open(&client, table).await.unwrap();
            for b in &batches {
                ins.write(b).await.unwrap();
            }
            ins.end().await.unwrap();
            out.push(alloc::bytes() - before);
        }
        out
    });
    let stored = http(&format!("SELECT count(), sum(column_number_3) FROM {table} FORMAT TabSeparated"));
    http(&format!("DROP TABLE {table}"));
    assert_eq!(stored, format!("8000\t{}\n", 4 * 2 * (0..1000u64).sum::<u64>()));
    eprintln!("bytes allocated per INSERT of 2 × 1000 rows × {WIDE} columns: {per_insert:?}");
    let bound = 4 * 1024;
    for (i, &b) in per_insert.iter().enumerate().skip(1) {
        assert!(b < bound, "INSERT {} allocated {b} bytes (bound {bound}; all: {per_insert:?})", i + 1);
    }
}
