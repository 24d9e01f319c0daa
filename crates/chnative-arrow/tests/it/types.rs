//! Every mapped type both ways against the real server:
//!
//! - read: `query_arrow` of an expression gives the Arrow type the mapping documents,
//!   and its values equal the server's own `FORMAT Arrow` rendering of the same
//!   values (or of an equivalent expression where the server's Arrow output carries
//!   the value differently: DateTime as its epoch count, Enum as its label);
//! - write: the batches read go back with `insert_arrow` into a table of the same
//!   type, and the server renders the table's values exactly as it renders the
//!   original expression (TSV).

use crate::common;
use common::*;

use chnative_arrow::{insert_arrow, query_arrow, query_arrow_with, ArrowOptions, StringType};

struct Case {
    /// The expression over `number` (20 rows).
    expr: &'static str,
    /// What the server renders as the same values in its Arrow output (None: `expr`).
    server: Option<&'static str>,
    /// The Arrow type the column must have (Display form).
    arrow: &'static str,
}

const fn c(expr: &'static str, arrow: &'static str) -> Case {
    Case { expr, server: None, arrow }
}

const fn cs(expr: &'static str, server: &'static str, arrow: &'static str) -> Case {
    Case { expr, server: Some(server), arrow }
}

const CASES: &[Case] = &[
    cs("CAST(multiIf(number % 4 = 0, NULL, number % 4 = 1, toString(number) || 'x', number % 4 = 2, number, [toUInt8(number), 7]) AS Variant(UInt64, String, Array(UInt8)))", "if(isNull(CAST(multiIf(number % 4 = 0, NULL, number % 4 = 1, toString(number) || 'x', number % 4 = 2, number, [toUInt8(number), 7]) AS Variant(UInt64, String, Array(UInt8)))), NULL, toString(CAST(multiIf(number % 4 = 0, NULL, number % 4 = 1, toString(number) || 'x', number % 4 = 2, number, [toUInt8(number), 7]) AS Variant(UInt64, String, Array(UInt8)))))", "Union(Dense, 0: (\"Array(UInt8)\": non-null List(non-null UInt8)), 1: (\"String\": non-null Utf8), 2: (\"UInt64\": non-null UInt64), 3: (\"null\": Null))"),
    c("CAST(arrayMap(x -> toString(x % 3), range(number % 4)) AS Array(LowCardinality(String)))", "List(non-null Dictionary(Int32, Utf8))"),
    c("CAST(mapFromArrays(arrayMap(x -> toString(x), range(number % 3)), arrayMap(x -> if(x = 1, NULL, x), range(number % 3))) AS Map(LowCardinality(String), Nullable(UInt64)))", "Map(\"entries\": non-null Struct(\"key\": non-null Dictionary(Int32, Utf8), \"value\": UInt64), unsorted)"),
    cs("arrayMap(x -> if(x = 0, NULL, CAST(['a', 'b'][x % 2 + 1] AS Enum8('a' = 1, 'b' = 2))), range(number % 3))", "arrayMap(x -> toString(x), arrayMap(x -> if(x = 0, NULL, CAST(['a', 'b'][x % 2 + 1] AS Enum8('a' = 1, 'b' = 2))), range(number % 3)))", "List(Dictionary(Int16, Utf8))"),
    c("CAST((if(number % 2 = 0, NULL, toDecimal256(-number, 30)), [toUUID('550e8400-e29b-41d4-a716-446655440000')], toFixedString('ab', 2)) AS Tuple(d Nullable(Decimal256(30)), u Array(UUID), f FixedString(2)))", "Struct(\"d\": Decimal256(76, 30), \"u\": non-null List(non-null FixedSizeBinary(16), metadata: {\"ARROW:extension:metadata\": \"\", \"ARROW:extension:name\": \"arrow.uuid\"}), \"f\": non-null FixedSizeBinary(2))"),
    c("toInt8(number * 37)", "Int8"),
    c("toInt16(number * 3001 - 30000)", "Int16"),
    c("toInt32(number * 200000001 - 2000000000)", "Int32"),
    c("toInt64(number * 922337203685477 - 9223372036854775)", "Int64"),
    c("toUInt8(number * 13)", "UInt8"),
    c("toUInt16(number * 3001)", "UInt16"),
    c("toUInt32(number * 214748364)", "UInt32"),
    c("toUInt64(number * 922337203685477580)", "UInt64"),
    c("toFloat32(toFloat32(number) / 7 - 1)", "Float32"),
    c("if(number = 3, inf, if(number = 4, -0., toFloat64(number) / 3 - 2))", "Float64"),
    c("toInt128(number) * toInt128('-1000000000000000000000000000000000001')", "FixedSizeBinary(16)"),
    c("toUInt128(number) * toUInt128('17014118346046923173168730371588410572')", "FixedSizeBinary(16)"),
    c(
        "toInt256(number) * toInt256('-5789604461865809771178549250434395392663499233282028201972879200395656481996')",
        "FixedSizeBinary(32)",
    ),
    c(
        "toUInt256(number) * toUInt256('5789604461865809771178549250434395392663499233282028201972879200395656481996')",
        "FixedSizeBinary(32)",
    ),
    cs("toBFloat16(toFloat32(number) / 3 - 2)", "CAST(toBFloat16(toFloat32(number) / 3 - 2) AS Float32)", "Float32"),
    c("(number % 3 = 0)::Bool", "Boolean"),
    c("concat('s', toString(number), repeat('é', number % 4), repeat('long string ', number % 3))", "Utf8"),
    c("toFixedString(toString(number * 7), 5)", "FixedSizeBinary(5)"),
    c("toDate('2020-01-01') + number * 97", "Date32"),
    c("toDate32('1950-01-01') + number * 3001", "Date32"),
    cs(
        "toDateTime('2024-01-01 00:00:00', 'Asia/Tokyo') + number * 3671",
        "toUnixTimestamp(toDateTime('2024-01-01 00:00:00', 'Asia/Tokyo') + number * 3671)",
        r#"Timestamp(s, "Asia/Tokyo")"#,
    ),
    cs(
        "toDateTime('2024-01-01 00:00:00') + number * 3671",
        "toUnixTimestamp(toDateTime('2024-01-01 00:00:00') + number * 3671)",
        r#"Timestamp(s, "Etc/UTC")"#,
    ),
    c(
        "toDateTime64('1969-07-20 20:17:40.123', 3, 'Europe/Berlin') + toIntervalMillisecond(number * 1234567)",
        r#"Timestamp(ms, "Europe/Berlin")"#,
    ),
    c(
        "toDateTime64('2000-02-29 23:59:59.123456', 6, 'UTC') + toIntervalMicrosecond(number * 123456789)",
        r#"Timestamp(µs, "UTC")"#,
    ),
    c(
        "toDateTime64('2200-01-01 00:00:00.123456789', 9, 'UTC') + toIntervalNanosecond(number * 1234567891)",
        r#"Timestamp(ns, "UTC")"#,
    ),
    c(
        "toDateTime64('2024-06-01 12:00:00.12', 2, 'UTC') + toIntervalMillisecond(number * 10)",
        r#"Timestamp(ms, "UTC")"#,
    ),
    cs("toTime(number * 3671 - 5000)", "toInt32(toTime(number * 3671 - 5000))", "Duration(s)"),
    cs(
        "CAST(toDecimal64(number * 1.5 - 3, 3) AS Time64(3))",
        "toInt64(toDecimal64(CAST(toDecimal64(number * 1.5 - 3, 3) AS Time64(3)), 3) * 1000)",
        "Duration(ms)",
    ),
    c("toIntervalSecond(number * 3 - 7)", "Duration(s)"),
    c(
        "toUUID(concat('550e8400-e29b-41d4-a716-', leftPad(toString(number * 1234567), 12, '0')))",
        "FixedSizeBinary(16)",
    ),
    c("toIPv4(toUInt32(number * 214748367))", "UInt32"),
    c("IPv4ToIPv6(toIPv4(toUInt32(number * 214748367)))", "FixedSizeBinary(16)"),
    c("toDecimal32((toInt64(number) - 10) / 7, 2)", "Decimal128(9, 2)"),
    c("toDecimal64((toInt64(number) - 10) / 7, 5)", "Decimal128(18, 5)"),
    c("toDecimal128((toInt64(number) - 10) / 7, 10) * toDecimal128('100000000000000', 0)", "Decimal128(38, 10)"),
    c(
        "toDecimal256((toInt64(number) - 10) / 7, 20) * toDecimal256('1000000000000000000000000000000000000000', 0)",
        "Decimal256(76, 20)",
    ),
    cs(
        "CAST(['a', 'b', 'c'][number % 3 + 1] AS Enum8('a' = 1, 'b' = -3, 'c' = 100))",
        "toString(CAST(['a', 'b', 'c'][number % 3 + 1] AS Enum8('a' = 1, 'b' = -3, 'c' = 100)))",
        "Dictionary(Int16, Utf8)",
    ),
    cs(
        "CAST(['x', 'y'][number % 2 + 1] AS Enum16('x' = -1000, 'y' = 30000))",
        "toString(CAST(['x', 'y'][number % 2 + 1] AS Enum16('x' = -1000, 'y' = 30000)))",
        "Dictionary(Int32, Utf8)",
    ),
    cs(
        "if(number % 3 = 0, NULL, CAST(['a', 'b'][number % 2 + 1] AS Enum8('a' = 1, 'b' = 2)))",
        "toString(if(number % 3 = 0, NULL, CAST(['a', 'b'][number % 2 + 1] AS Enum8('a' = 1, 'b' = 2))))",
        "Dictionary(Int16, Utf8)",
    ),
    c("toLowCardinality(toString(number % 5))", "Dictionary(Int32, Utf8)"),
    c(
        "CAST(if(number % 4 = 0, NULL, toString(number % 3)) AS LowCardinality(Nullable(String)))",
        "Dictionary(Int32, Utf8)",
    ),
    c("if(number % 3 = 0, NULL, toInt32(number))", "Int32"),
    c("if(number % 3 = 1, NULL, concat('n', toString(number)))", "Utf8"),
    cs(
        "if(number % 2 = 0, NULL, toDateTime('2024-01-01 00:00:00', 'UTC') + number)",
        "toUnixTimestamp(if(number % 2 = 0, NULL, toDateTime('2024-01-01 00:00:00', 'UTC') + number))",
        r#"Timestamp(s, "UTC")"#,
    ),
    c("if(number % 2 = 0, NULL, toDecimal32(number / 4, 2))", "Decimal128(9, 2)"),
    c("range(number % 4)", "List(non-null UInt8)"),
    c("arrayMap(x -> if(x % 2 = 0, NULL, toString(x)), range(number % 5))", "List(Utf8)"),
    c("[range(number % 3), [toUInt64(number)]]", "List(non-null List(non-null UInt64))"),
    c(
        "mapFromArrays(arrayMap(x -> toString(x), range(number % 3)), range(number % 3))",
        "Map(\"entries\": non-null Struct(\"key\": non-null Utf8, \"value\": non-null UInt8), unsorted)",
    ),
    c("tuple(toUInt8(number), toString(number))", "Struct(\"1\": non-null UInt8, \"2\": non-null Utf8)"),
    c(
        "CAST((number, if(number % 2 = 0, NULL, 'x')) AS Tuple(a UInt64, b Nullable(String)))",
        "Struct(\"a\": non-null UInt64, \"b\": Utf8)",
    ),
    c("(toFloat64(number) / 2, 1.5)::Point", "Struct(\"1\": non-null Float64, \"2\": non-null Float64)"),
    c(
        "[(toFloat64(number), 1.5), (2.5, toFloat64(number) / 4)]::Ring",
        "List(non-null Struct(\"1\": non-null Float64, \"2\": non-null Float64))",
    ),
    c(
        "CAST([(number, [toString(number)])] AS Nested(a UInt64, b Array(String)))",
        "List(non-null Struct(\"a\": non-null UInt64, \"b\": non-null List(non-null Utf8)))",
    ),
    cs(
        "CAST([toFloat32(number) / 3, -2, 1.5, 0, 1e30, -0.1, 7, 8, 9] AS QBit(Float32, 9))",
        "CAST([toFloat32(number) / 3, -2, 1.5, 0, 1e30, -0.1, 7, 8, 9] AS Array(Float32))",
        "FixedSizeList(9 x non-null Float32)",
    ),
    cs(
        "CAST([toFloat64(number) / 3, -2e300] AS QBit(Float64, 2))",
        "CAST([toFloat64(number) / 3, -2e300] AS Array(Float64))",
        "FixedSizeList(2 x non-null Float64)",
    ),
    cs(
        "CAST([toFloat32(number) / 3, -2.5] AS QBit(BFloat16, 2))",
        "CAST(CAST([toFloat32(number) / 3, -2.5] AS Array(BFloat16)) AS Array(Float32))",
        "FixedSizeList(2 x non-null Float32)",
    ),
    cs(
        "CAST(concat('{\"a\":', toString(number), ',\"b\":\"x\"}') AS JSON)",
        "toString(CAST(concat('{\"a\":', toString(number), ',\"b\":\"x\"}') AS JSON))",
        "Utf8",
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_type_read_and_written_back() {
    if !chnative_testkit::server::requires(25, 10, "QBit, BFloat16, Time64, JSON and Variant columns") {
        return;
    }
    let client = client().await;
    let mut failures = Vec::new();
    for (k, case) in CASES.iter().enumerate() {
        if let Err(e) = one_case(&client, k, case).await {
            failures.push(format!("{}: {e}", case.expr));
        }
    }
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), CASES.len(), failures.join("\n"));
}

async fn one_case(client: &chnative::Client, k: usize, case: &Case) -> Result<(), String> {
    let sql = format!("SELECT number AS id, {} AS v FROM numbers(20)", case.expr);
    let batches = query_arrow(client, sql.as_str())
        .await
        .map_err(|e| e.to_string())?
        .collect()
        .await
        .map_err(|e| e.to_string())?;
    let schema = batches.first().ok_or("no batch")?.schema();
    let field = schema.field_with_name("v").map_err(|e| e.to_string())?;
    if field.data_type().to_string() != case.arrow {
        return Err(format!("Arrow type {} (expected {})", field.data_type(), case.arrow));
    }
    // Read: the values equal the server's own Arrow rendering.
    let server_sql = format!("SELECT number AS id, {} AS v FROM numbers(20)", case.server.unwrap_or(case.expr));
    let theirs = column_canon(&http_arrow(&server_sql), "v");
    let ours = column_canon(&batches, "v");
    if ours != theirs {
        return Err(format!("read differs from the server's Arrow:\n  ours   {ours:?}\n  theirs {theirs:?}"));
    }
    // Write: into a table of the column's type, then rendered by the server.
    let ty = field.metadata().get("clickhouse.type").ok_or("no clickhouse.type")?;
    let table = format!("arrow_types_{k}");
    http(&format!("DROP TABLE IF EXISTS {table}"));
    http(&format!("CREATE TABLE {table} (id UInt64, v {ty}) ENGINE = Memory"));
    let res = insert_arrow(client, &table, &batches).await;
    let back = res
        .map_err(|e| format!("insert: {e}"))
        .map(|s| (s.rows, http(&format!("SELECT v FROM {table} ORDER BY id FORMAT TSV"))));
    http(&format!("DROP TABLE IF EXISTS {table}"));
    let (rows, back) = back?;
    let want = http(&format!("SELECT {} FROM numbers(20) ORDER BY number FORMAT TSV", case.expr));
    if rows != 20 || back != want {
        return Err(format!("written back differs ({rows} rows):\n  back {back:?}\n  want {want:?}"));
    }
    Ok(())
}

/// Strings in each of the four Arrow string types read the same values, and each
/// writes back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn string_types() {
    let client = client().await;
    let expr = "concat(repeat('ab', number % 9), if(number % 5 = 0, 'ü', ''), toString(number))";
    let want = http(&format!("SELECT {expr} FROM numbers(50) FORMAT TSV"));
    for (kind, name) in [
        (StringType::Utf8, "Utf8"),
        (StringType::LargeUtf8, "LargeUtf8"),
        (StringType::Utf8View, "Utf8View"),
        (StringType::Binary, "Binary"),
    ] {
        let options = ArrowOptions { strings: kind, ..Default::default() };
        let sql = format!("SELECT number AS id, {expr} AS v FROM numbers(50)");
        let batches = query_arrow_with(&client, sql.as_str(), &options).await.unwrap().collect().await.unwrap();
        assert_eq!(batches[0].schema().field(1).data_type().to_string(), name);
        let theirs = column_canon(&http_arrow(&format!("SELECT {expr} AS v FROM numbers(50)")), "v");
        assert_eq!(column_canon(&batches, "v"), theirs, "{name}");
        let table = format!("arrow_strings_{name}");
        http(&format!("DROP TABLE IF EXISTS {table}"));
        http(&format!("CREATE TABLE {table} (id UInt64, v String) ENGINE = Memory"));
        insert_arrow(&client, &table, &batches).await.unwrap();
        let back = http(&format!("SELECT v FROM {table} ORDER BY id FORMAT TSV"));
        http(&format!("DROP TABLE {table}"));
        assert_eq!(back, want, "{name}");
    }
}

/// A String that is not UTF-8 is an error naming the column and the way out
/// (Binary), never a silently wrong value; as Binary it reads exactly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_utf8_is_a_clear_error() {
    let client = client().await;
    let sql = "SELECT unhex('61ff62') AS bad";
    let err = query_arrow(&client, sql).await.unwrap().collect().await.unwrap_err().to_string();
    assert!(err.contains("`bad`") && err.contains("UTF-8") && err.contains("Binary"), "{err}");
    let options = ArrowOptions { strings: StringType::Binary, ..Default::default() };
    let b = query_arrow_with(&client, sql, &options).await.unwrap().collect().await.unwrap();
    let v = b[0].column(0).as_any().downcast_ref::<arrow_array::BinaryArray>().unwrap().value(0).to_vec();
    assert_eq!(v, vec![0x61, 0xff, 0x62]);
}

/// Types with no Arrow mapping are refused up front with the column and type named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unmapped_types_are_refused_by_name() {
    if !chnative_testkit::server::requires(25, 3, "Dynamic without allow_experimental_dynamic_type") {
        return;
    }
    let client = client().await;
    for (sql, ty) in
        [("SELECT 1::Dynamic AS x", "Dynamic"), ("SELECT sumState(number) AS x FROM numbers(3)", "AggregateFunction")]
    {
        let err = query_arrow(&client, sql).await.unwrap().collect().await.unwrap_err().to_string();
        assert!(
            err.contains("`x`") && err.contains(ty) && err.contains("CAST") || err.contains("finalize"),
            "{sql}: {err}"
        );
    }
}

/// Regression (issue 29): a DateTime column that names no zone is read in the
/// zone the server shows it in (the `session_timezone` of the query's own
/// SETTINGS clause here, which the server reports as `timezone()`), not the
/// server's own zone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zone_less_datetimes_take_the_session_timezone() {
    let client = client().await;
    for settings in ["", " SETTINGS session_timezone = 'Asia/Tokyo'", " SETTINGS session_timezone = 'America/New_York'"]
    {
        let sql = format!("SELECT date '2001-09-29' + INTERVAL 12345 SECOND AS t, toDateTime64(t, 3) AS t3, timezone() AS z{settings}");
        let batches = query_arrow(&client, sql.as_str()).await.unwrap().collect().await.unwrap();
        let zone = column_canon(&batches, "z").remove(0);
        let schema = batches[0].schema();
        for (col, unit) in [("t", "s"), ("t3", "ms")] {
            let ty = schema.field_with_name(col).unwrap().data_type().to_string();
            assert_eq!(ty, format!("Timestamp({unit}, {zone:?})"), "{sql}");
        }
        // The instants are the server's (its Arrow has them as epoch counts).
        let theirs = http_arrow(&sql);
        assert_eq!(column_canon(&batches, "t"), column_canon(&theirs, "t"), "{sql}");
        assert_eq!(column_canon(&batches, "t3"), column_canon(&theirs, "t3"), "{sql}");
    }
}
