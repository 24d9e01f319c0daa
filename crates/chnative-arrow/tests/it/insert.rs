//! INSERT from record batches built in Arrow (not read from the server): the
//! conversions from Arrow types other than the ones reads produce, the checks made
//! before anything is sent, and many batches in one INSERT.

use crate::common;
use common::*;

use std::sync::Arc;

use arrow_array::builder::{ListBuilder, StringDictionaryBuilder, UInt32Builder};
use arrow_array::types::Int32Type;
use arrow_array::{
    ArrayRef, BooleanArray, Date32Array, Decimal128Array, FixedSizeBinaryArray, Float32Array, Int64Array,
    LargeStringArray, RecordBatch, StringArray, StringViewArray, TimestampNanosecondArray, UInt64Array,
};
use arrow_schema::{DataType, Field, Schema};
use chnative_arrow::{insert_arrow, query_arrow, ArrowInsert, Error};

fn batch(cols: Vec<(&str, ArrayRef)>) -> RecordBatch {
    let fields: Vec<Field> =
        cols.iter().map(|(n, a)| Field::new(*n, a.data_type().clone(), a.null_count() > 0)).collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), cols.into_iter().map(|(_, a)| a).collect()).unwrap()
}

struct Table(String);
impl Table {
    fn new(name: &str, columns: &str) -> Table {
        http(&format!("DROP TABLE IF EXISTS {name}"));
        http(&format!("CREATE TABLE {name} ({columns}) ENGINE = Memory"));
        Table(name.to_string())
    }
    fn tsv(&self, cols: &str) -> String {
        http(&format!("SELECT {cols} FROM {} ORDER BY id FORMAT TSV", self.0))
    }
}
impl Drop for Table {
    fn drop(&mut self) {
        let _ = chnative_testkit::server::http_try(&format!("DROP TABLE IF EXISTS {}", self.0));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_arrow_types_convert_exactly() {
    if !chnative_testkit::server::requires(25, 1, "the BFloat16 column") {
        return;
    }
    let client = client().await;
    let t = Table::new(
        "arrow_ins_foreign",
        "id UInt64, ts DateTime64(3, 'UTC'), dt DateTime('UTC'), e Enum8('a' = 1, 'b' = 2), \
         ls String, vs String, lc LowCardinality(String), fs FixedString(4), d Date, dec Decimal32(2), \
         u UUID, b Bool, bf BFloat16, arr Array(Nullable(UInt32)), n Nullable(Int64)",
    );
    let mut lc = StringDictionaryBuilder::<Int32Type>::new();
    lc.append_value("x");
    lc.append_value("y");
    lc.append_value("x");
    let mut arr = ListBuilder::new(UInt32Builder::new());
    arr.append_value([Some(1), None]);
    arr.append_value([]);
    arr.append_value([Some(7)]);
    let uuid = FixedSizeBinaryArray::try_from_iter(
        [
            [0x55u8, 0x0e, 0x84, 0x00, 0xe2, 0x9b, 0x41, 0xd4, 0xa7, 0x16, 0x44, 0x66, 0x55, 0x44, 0, 0],
            [0; 16],
            [0xff; 16],
        ]
        .into_iter(),
    )
    .unwrap();
    let b = batch(vec![
        ("id", Arc::new(UInt64Array::from(vec![1, 2, 3]))),
        (
            "ts",
            Arc::new(
                TimestampNanosecondArray::from(vec![1_700_000_000_123_000_000, 0, -1_000_000]).with_timezone("UTC"),
            ),
        ),
        ("dt", Arc::new(TimestampNanosecondArray::from(vec![1_700_000_000_000_000_000, 0, 5_000_000_000]))),
        ("e", Arc::new(StringArray::from(vec!["a", "b", "a"]))),
        ("ls", Arc::new(LargeStringArray::from(vec!["large", "", "ü"]))),
        ("vs", Arc::new(StringViewArray::from(vec!["short", "a view longer than twelve", ""]))),
        ("lc", Arc::new(lc.finish())),
        ("fs", Arc::new(StringArray::from(vec!["ab", "abcd", ""]))),
        ("d", Arc::new(Date32Array::from(vec![0, 19000, 65535]))),
        ("dec", Arc::new(Decimal128Array::from(vec![150, -1, 9_999_999]).with_precision_and_scale(9, 2).unwrap())),
        ("u", Arc::new(uuid)),
        ("b", Arc::new(BooleanArray::from(vec![true, false, true]))),
        ("bf", Arc::new(Float32Array::from(vec![1.5, -2.0, 0.1]))),
        ("arr", Arc::new(arr.finish())),
        ("n", Arc::new(Int64Array::from(vec![Some(-5), None, Some(i64::MAX)]))),
    ]);
    let s = insert_arrow(&client, &t.0, &[b]).await.unwrap();
    assert_eq!(s.rows, 3);
    let got = t.tsv("*");
    let want = "1\t2023-11-14 22:13:20.123\t2023-11-14 22:13:20\ta\tlarge\tshort\tx\tab\\0\\0\t1970-01-01\t1.5\t550e8400-e29b-41d4-a716-446655440000\ttrue\t1.5\t[1,NULL]\t-5\n\
                2\t1970-01-01 00:00:00.000\t1970-01-01 00:00:00\tb\t\ta view longer than twelve\ty\tabcd\t2022-01-08\t-0.01\t00000000-0000-0000-0000-000000000000\tfalse\t-2\t[]\t\\N\n\
                3\t1969-12-31 23:59:59.999\t1970-01-01 00:00:05\ta\tü\t\tx\t\\0\\0\\0\\0\t2149-06-06\t99999.99\tffffffff-ffff-ffff-ffff-ffffffffffff\ttrue\t0.099609375\t[7]\t9223372036854775807\n";
    assert_eq!(got, want);
}

/// Everything wrong with a batch is found before anything is sent: the table
/// stays empty and the client stays usable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_batches_are_refused_before_sending() {
    let client = client().await;
    let t = Table::new("arrow_ins_refused", "id UInt64, e Enum8('a' = 1), ts DateTime64(3, 'UTC'), s String");
    let good = || -> Vec<(&str, ArrayRef)> {
        vec![
            ("id", Arc::new(UInt64Array::from(vec![1, 2]))),
            ("e", Arc::new(StringArray::from(vec!["a", "a"]))),
            ("ts", Arc::new(TimestampNanosecondArray::from(vec![0, 1_000_000]))),
            ("s", Arc::new(StringArray::from(vec!["x", "y"]))),
        ]
    };
    let with = |name: &str, a: ArrayRef| {
        let mut cols = good();
        for c in &mut cols {
            if c.0 == name {
                c.1 = a.clone();
            }
        }
        batch(cols)
    };
    let cases: Vec<(RecordBatch, &str)> = vec![
        (with("e", Arc::new(StringArray::from(vec!["a", "zz"]))), "'zz' is not one of the Enum's labels"),
        (with("ts", Arc::new(TimestampNanosecondArray::from(vec![0, 1_000_001]))), "more precision"),
        (with("s", Arc::new(StringArray::from(vec![Some("x"), None]))), "1 NULLs, but String is not Nullable"),
        (with("id", Arc::new(Int64Array::from(vec![1, 2]))), "Arrow Int64 cannot go into UInt64"),
        (batch(vec![("nope", Arc::new(UInt64Array::from(vec![1])) as ArrayRef)]), "has no column `nope`"),
    ];
    for (b, want) in cases {
        // A good batch first: a later bad one must still leave nothing behind.
        let err = insert_arrow(&client, &t.0, &[batch(good()), b]).await.unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains(want), "{want}: {msg}");
        assert!(matches!(err, Error::Mismatch { .. } | Error::Usage(_)), "{err:?}");
    }
    assert_eq!(http(&format!("SELECT count() FROM {}", t.0)), "0\n", "nothing stored");
    // A value refused in the first batch: its INSERT had been started (to check
    // the table's header) but had sent nothing; it is ended unsent, the
    // connection stays in use, and the same ArrowInsert takes a good batch.
    let mut ins = ArrowInsert::open(&client, &t.0).await.unwrap();
    let bad = with("e", Arc::new(StringArray::from(vec!["a", "zz"])));
    assert!(ins.write(&bad).await.unwrap_err().to_string().contains("'zz' is not one of the Enum's labels"));
    assert!(client.is_usable());
    ins.write(&batch(good())).await.unwrap();
    assert_eq!(ins.end().await.unwrap().rows, 2);
    assert!(client.is_usable());
    http(&format!("TRUNCATE TABLE {}", t.0));
    // Dropped after such a refusal, it leaves the connection open too.
    let mut ins = ArrowInsert::open(&client, &t.0).await.unwrap();
    assert!(ins.write(&bad).await.is_err());
    drop(ins);
    assert!(client.is_usable(), "the connection was closed");
    // The schema alone is refused by check_schema, before a single row is prepared.
    let ins = ArrowInsert::open(&client, &t.0).await.unwrap();
    let schema = Schema::new(vec![Field::new("e", DataType::Float64, false)]);
    assert!(ins.check_schema(&schema).unwrap_err().to_string().contains("Float64"));
    ins.end().await.unwrap();
    insert_arrow(&client, &t.0, &[batch(good())]).await.unwrap();
    assert_eq!(t.tsv("id, e, ts, s"), "1\ta\t1970-01-01 00:00:00.000\tx\n2\ta\t1970-01-01 00:00:00.001\ty\n");
}

/// Many batches go in one INSERT; a SELECT streamed as Arrow goes back the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_batches_one_insert() {
    let client = client().await;
    let t = Table::new("arrow_ins_many", "id UInt64, s String, a Array(UInt32)");
    let sql = "SELECT number AS id, toString(number) AS s, range(toUInt32(number % 5)) AS a FROM numbers(300000) SETTINGS max_block_size = 10000";
    let mut stream = query_arrow(&client, sql).await.unwrap();
    let mut ins = ArrowInsert::open(&client, &t.0).await.unwrap();
    let mut batches = 0;
    while let Some(b) = stream.next().await.unwrap() {
        assert!(b.num_rows() <= 10000);
        ins.write(&b).await.unwrap();
        batches += 1;
    }
    assert!(batches >= 30, "{batches}");
    let s = ins.end().await.unwrap();
    assert_eq!(s.rows, 300000);
    let got = http(&format!("SELECT count(), sum(id), sum(length(s)), sum(length(a)) FROM {}", t.0));
    let want = http(&format!(
        "SELECT count(), sum(id), sum(length(s)), sum(length(a)) FROM ({})",
        sql.split(" SETTINGS").next().unwrap()
    ));
    assert_eq!(got, want);
}

/// An empty result still has its schema; dropping a stream halfway cancels the
/// query and the client goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_results_and_early_drop() {
    let client = client().await;
    let mut s =
        query_arrow(&client, "SELECT number AS n, toString(number) AS s FROM numbers(10) WHERE n > 100").await.unwrap();
    let schema = s.schema().await.unwrap();
    assert_eq!(schema.fields().len(), 2);
    assert_eq!(schema.field(1).data_type(), &DataType::Utf8);
    assert!(s.next().await.unwrap().is_none());
    {
        let mut s =
            query_arrow(&client, "SELECT number FROM numbers(100000000) SETTINGS max_block_size = 1000").await.unwrap();
        assert_eq!(s.next().await.unwrap().unwrap().num_rows(), 1000);
    }
    let b = query_arrow(&client, "SELECT 42::UInt8 AS x").await.unwrap().collect().await.unwrap();
    assert_eq!(b[0].num_rows(), 1);
}

/// A union built in Arrow (sparse, members matched by name and by type) goes into
/// a Variant column; a member that is none of the alternatives is refused by name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unions_into_variants() {
    if !chnative_testkit::server::requires(25, 3, "Variant without allow_experimental_variant_type") {
        return;
    }
    use arrow_array::UnionArray;
    use arrow_schema::UnionFields;
    let client = client().await;
    let t = Table::new("arrow_ins_variant", "id UInt64, v Variant(String, UInt64)");
    let fields = UnionFields::try_new(
        vec![0, 1, 2],
        vec![
            Field::new("String", DataType::Utf8, true),
            Field::new("count", DataType::UInt64, true),
            Field::new("nothing", DataType::Null, true),
        ],
    )
    .unwrap();
    let union = UnionArray::try_new(
        fields,
        vec![0i8, 1, 2, 0, 1].into(),
        None,
        vec![
            Arc::new(StringArray::from(vec![Some("a"), None, None, None, None])) as ArrayRef,
            Arc::new(UInt64Array::from(vec![0, 7, 0, 0, 9])),
            Arc::new(arrow_array::NullArray::new(5)),
        ],
    )
    .unwrap();
    let b = batch(vec![("id", Arc::new(UInt64Array::from(vec![1, 2, 3, 4, 5]))), ("v", Arc::new(union))]);
    insert_arrow(&client, &t.0, &[b]).await.unwrap();
    assert_eq!(
        t.tsv("id, v, variantType(v)"),
        "1\ta\tString\n2\t7\tUInt64\n3\t\\N\tNone\n4\t\\N\tNone\n5\t9\tUInt64\n"
    );
    let bad = UnionFields::try_new(vec![0], vec![Field::new("f", DataType::Float32, false)]).unwrap();
    let union =
        UnionArray::try_new(bad, vec![0i8].into(), None, vec![Arc::new(Float32Array::from(vec![1.0])) as ArrayRef])
            .unwrap();
    let b = batch(vec![("id", Arc::new(UInt64Array::from(vec![1]))), ("v", Arc::new(union))]);
    let err = insert_arrow(&client, &t.0, &[b]).await.unwrap_err().to_string();
    assert!(err.contains("union member `f`") && err.contains("String, UInt64"), "{err}");
}

/// The client keeps the types of a table it inserted into, and the next
/// INSERT checks its batches against them without asking the server; but the
/// INSERT's header (the server's types, sent before any data) decides. A table
/// changed since gives the error a fresh client gives, nothing is stored, and
/// the connection stays in use.
#[tokio::test]
async fn a_table_changed_since_the_last_insert_is_checked_by_the_header() {
    let t = Table::new("arrow_changed_table", "id Int64, a Int64");
    let c = client().await;
    let ints = || {
        batch(vec![
            ("id", Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef),
            ("a", Arc::new(Int64Array::from(vec![5, 6]))),
        ])
    };
    insert_arrow(&c, &t.0, &[ints()]).await.unwrap();

    // a: Int64 → String. The kept types still say Int64.
    http(&format!("DROP TABLE {}", t.0));
    http(&format!("CREATE TABLE {} (id Int64, a String) ENGINE = Memory", t.0));
    let fresh = insert_arrow(&client().await, &t.0, &[ints()]).await.unwrap_err().to_string();
    assert!(fresh.contains("column `a`: Arrow Int64 does not fit String"), "{fresh}");
    for round in 0..2 {
        let mut ins = ArrowInsert::open(&c, &t.0).await.unwrap();
        let err = ins.write(&ints()).await.unwrap_err();
        assert!(matches!(err, Error::Mismatch { .. }), "round {round}: {err:?}");
        assert_eq!(err.to_string(), fresh, "round {round}");
        assert!(ins.write(&ints()).await.is_err());
        if round == 0 {
            // Found from the header: the INSERT was ended without data.
            assert!(ins.end().await.is_err());
        } else {
            // Found from the types the first round learned: nothing was started.
            assert_eq!(ins.end().await.unwrap().rows, 0);
        }
        assert!(c.is_usable(), "round {round}: the connection was closed");
        assert_eq!(c.pool_status().size, 1, "round {round}");
    }
    let strings = batch(vec![
        ("id", Arc::new(Int64Array::from(vec![3])) as ArrayRef),
        ("a", Arc::new(StringArray::from(vec!["x"]))),
    ]);
    assert_eq!(insert_arrow(&c, &t.0, &[strings]).await.unwrap().rows, 1);
    assert_eq!(t.tsv("id, a"), "3\tx\n");

    // A column dropped: the server refuses the statement; the error names the
    // table's columns as for a fresh client.
    http(&format!("DROP TABLE {}", t.0));
    http(&format!("CREATE TABLE {} (id Int64) ENGINE = Memory", t.0));
    let one = batch(vec![
        ("id", Arc::new(Int64Array::from(vec![4])) as ArrayRef),
        ("a", Arc::new(StringArray::from(vec!["y"]))),
    ]);
    let mut ins = ArrowInsert::open(&c, &t.0).await.unwrap();
    let err = ins.write(&one).await.unwrap_err().to_string();
    assert!(err.contains("has no column `a` (it has id)"), "{err}");
    drop(ins);
    assert!(c.is_usable());
    let only_id = batch(vec![("id", Arc::new(Int64Array::from(vec![5])) as ArrayRef)]);
    assert_eq!(insert_arrow(&c, &t.0, &[only_id]).await.unwrap().rows, 1);
    assert_eq!(t.tsv("id"), "5\n");
    assert_eq!(c.pool_status().size, 1);
}
