//! Dynamic columns read as a dense Union of declared types (`DynamicMode::Union`),
//! checked value by value against the server's own rendering (`toString`,
//! `dynamicType`), over several blocks whose type lists differ; and the errors
//! when a type is not declared or nothing is declared.

use crate::common;
use common::*;

use arrow_array::cast::AsArray;
use arrow_array::{Array, RecordBatch};
use chnative_arrow::{query_arrow, query_arrow_with, ArrowOptions, DynamicMode};

fn declared(types: &[&str]) -> ArrowOptions {
    ArrowOptions { dynamic: DynamicMode::Union(types.iter().map(|t| t.to_string()).collect()), ..Default::default() }
}

/// A table whose Dynamic columns hold, by `id`: NULL, Int64, String, Array(Int64),
/// Float64 (cycling), one INSERT (one part) per type, so a read part by part
/// (`max_threads = 1`, no ORDER BY) brings blocks whose type lists differ. `s`
/// keeps at most one type in its own column: in a block that mixes types (the
/// sorted read) the rest is in the shared variant.
fn make_table(table: &str) {
    http(&format!("DROP TABLE IF EXISTS {table}"));
    http(&format!(
        "CREATE TABLE {table} (id UInt64, d Dynamic, s Dynamic(max_types = 1)) ENGINE = MergeTree ORDER BY id"
    ));
    for (rem, expr) in [
        (0, "NULL"),
        (1, "toInt64(number) * -1000000007"),
        (2, "concat('v', toString(number))"),
        (3, "[toInt64(number), -2]"),
        (4, "toFloat64(number) + 0.5"),
    ] {
        http(&format!("INSERT INTO {table} SELECT number, {expr}, {expr} FROM numbers(40) WHERE number % 5 = {rem}"));
    }
}

/// Each row's `id` and the union's value in column `col`, as (member name, canonical
/// text), sorted by `id`.
fn union_values(batches: &[RecordBatch], col: &str) -> Vec<(u64, String, String)> {
    let mut out = Vec::new();
    for b in batches {
        let ids = b.column_by_name("id").unwrap().as_primitive::<arrow_array::types::UInt64Type>().clone();
        let a = b.column_by_name(col).unwrap().clone();
        let u = a.as_union();
        let arrow_schema::DataType::Union(fields, _) = a.data_type() else { panic!("not a union") };
        for i in 0..u.len() {
            let id = u.type_id(i);
            let name = fields.iter().find(|(t, _)| *t == id).unwrap().1.name().clone();
            out.push((ids.value(i), name, canon(&a, i)));
        }
    }
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamic_reads_as_a_union_of_the_declared_types() {
    if !chnative_testkit::server::requires(25, 3, "Dynamic without allow_experimental_dynamic_type") {
        return;
    }
    let client = client().await;
    let table = "arrowbench_dynamic_union";
    make_table(table);
    // Date is declared but never present: an empty member.
    let options = declared(&["Int64", "String", "Array(Int64)", "Float64", "Date"]);
    let server = http(&format!(
        "SELECT dynamicType(d), if(isNull(d), 'NULL', toString(d)), dynamicType(s), if(isNull(s), 'NULL', toString(s)) \
         FROM {table} ORDER BY id FORMAT TSV"
    ));
    let want: Vec<Vec<&str>> = server.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(want.len(), 40);
    // Part by part (one type per block, blocks differ), then sorted (one block mixing all types).
    for sql in [
        format!("SELECT id, d, s FROM {table} SETTINGS max_threads = 1"),
        format!("SELECT id, d, s FROM {table} ORDER BY id"),
    ] {
        let batches = query_arrow_with(&client, sql.as_str(), &options).await.unwrap().collect().await.unwrap();
        let schema = batches[0].schema();
        assert_eq!(
            schema.field_with_name("d").unwrap().data_type().to_string(),
            "Union(Dense, 0: (\"Int64\": non-null Int64), 1: (\"String\": non-null Utf8), 2: (\"Array(Int64)\": \
             non-null List(non-null Int64)), 3: (\"Float64\": non-null Float64), 4: (\"Date\": non-null Date32), 5: \
             (\"null\": Null))"
        );
        assert_eq!(schema.field_with_name("d").unwrap().metadata().get("clickhouse.type").unwrap(), "Dynamic");
        for (k, col) in [(0, "d"), (2, "s")] {
            let ours = union_values(&batches, col);
            assert_eq!(ours.len(), 40, "{sql}");
            for (i, (w, (id, member, value))) in want.iter().zip(&ours).enumerate() {
                let member_want = if w[k] == "None" { "null" } else { w[k] };
                assert_eq!(*id, i as u64);
                assert_eq!((member.as_str(), value.as_str()), (member_want, w[k + 1]), "{sql}: {col}, row {i}");
            }
        }
    }
    http(&format!("DROP TABLE {table}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_undeclared_dynamic_type_is_an_error_naming_it() {
    if !chnative_testkit::server::requires(25, 3, "Dynamic without allow_experimental_dynamic_type") {
        return;
    }
    let client = client().await;
    let table = "arrowbench_dynamic_undeclared";
    make_table(table);
    // Part by part: the NULL rows' block first, then Int64's, then String's.
    let sql = format!("SELECT id, d FROM {table} SETTINGS max_threads = 1");
    let mut s = query_arrow_with(&client, sql.as_str(), &declared(&["Int64", "Float64"])).await.unwrap();
    let first = s.next().await.unwrap().unwrap();
    assert_eq!(first.num_rows(), 8);
    let err = loop {
        match s.next().await {
            Ok(Some(_)) => continue,
            Ok(None) => panic!("no error"),
            Err(e) => break e.to_string(),
        }
    };
    assert!(
        err.contains("type String") && err.contains("[Int64, Float64]") && err.contains("DynamicMode::Union"),
        "{err}"
    );
    drop(s);
    http(&format!("DROP TABLE {table}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamic_without_declared_types_is_refused_with_the_ways_out() {
    if !chnative_testkit::server::requires(25, 3, "Dynamic without allow_experimental_dynamic_type") {
        return;
    }
    let client = client().await;
    let err = query_arrow(&client, "SELECT 1::Dynamic AS x").await.unwrap().collect().await.unwrap_err().to_string();
    assert!(
        err.contains("`x`")
            && err.contains("DynamicMode::Union")
            && err.contains("dynamicType")
            && err.contains("CAST"),
        "{err}"
    );
    for (types, what) in
        [(&["Nullable(Int64)"][..], "Nullable"), (&["Int64", "Int64"][..], "twice"), (&["Int65"], "Int65")]
    {
        let err = query_arrow_with(&client, "SELECT 1::Dynamic AS x", &declared(types))
            .await
            .unwrap()
            .collect()
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("`x`") && err.contains(what), "{types:?}: {err}");
    }
}

/// Inside an Array and a Tuple the same declaration applies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nested_dynamic_uses_the_same_declaration() {
    if !chnative_testkit::server::requires(25, 3, "Dynamic without allow_experimental_dynamic_type") {
        return;
    }
    let client = client().await;
    let sql = "SELECT [1::Dynamic, 'a'::Dynamic, NULL::Dynamic] AS a, tuple(2.5::Dynamic) AS t";
    let b = query_arrow_with(&client, sql, &declared(&["UInt8", "String", "Float64"]))
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let a = b[0].column(0).clone();
    assert_eq!(canon(&a, 0), "[1,a,NULL]");
    assert_eq!(canon(b[0].column(1), 0), "(2.5)");
}
