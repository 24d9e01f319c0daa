//! `INSERT … FORMAT CSV|TSV|JSONEachRow` with the data on stdin, checked
//! against what the server stores (read back over HTTP).

use crate::common;
use common::*;

const COLUMNS: &str = "id UInt32, name String, score Nullable(Float64), day Date, at DateTime('UTC'), \
                       tags Array(String), price Decimal(10, 2), flag Bool, big Int64, u UUID";

fn stored(t: &Table) -> String {
    http(&format!("SELECT * FROM {} ORDER BY id FORMAT TSV", t.0))
}

const EXPECTED: &str = "1\tsemi;colon, \"quoted\"\t1.5\t2024-01-02\t2024-01-02 03:04:05\t['a','b\\'c']\t3.14\ttrue\t-9223372036854775808\t61f0c404-5cb3-11e7-907b-a6006ad3dba0\n\
                        2\ttab\\there\\nnewline\t\\N\t1970-01-01\t2024-01-02 03:04:06\t[]\t0\tfalse\t9223372036854775807\t00000000-0000-0000-0000-000000000000\n";

#[test]
fn csv_from_stdin() {
    let t = Table::create("csv", COLUMNS);
    let data = "1,\"semi;colon, \"\"quoted\"\"\",1.5,2024-01-02,2024-01-02 03:04:05,\"['a','b\\'c']\",3.14,true,-9223372036854775808,61f0c404-5cb3-11e7-907b-a6006ad3dba0\n\
                2,\"tab\there\nnewline\",\\N,,2024-01-02 03:04:06,[],,false,9223372036854775807,\n";
    chn_ok(&["--query", &format!("INSERT INTO {} FORMAT CSV", t.0)], Some(data.as_bytes()));
    assert_eq!(stored(&t), EXPECTED);
}

#[test]
fn tsv_from_stdin_with_names_in_another_order() {
    let t = Table::create("tsv", COLUMNS);
    let data = "id\tname\tscore\tday\tat\ttags\tprice\tflag\tbig\tu\n\
                1\tsemi;colon, \"quoted\"\t1.5\t2024-01-02\t2024-01-02 03:04:05\t['a','b\\'c']\t3.14\ttrue\t-9223372036854775808\t61f0c404-5cb3-11e7-907b-a6006ad3dba0\n\
                2\ttab\\there\\nnewline\t\\N\t1970-01-01\t1704164646\t[]\t0\tfalse\t9223372036854775807\t00000000-0000-0000-0000-000000000000\n";
    chn_ok(&["--query", &format!("INSERT INTO {} FORMAT TSVWithNames", t.0)], Some(data.as_bytes()));
    assert_eq!(stored(&t), EXPECTED);
    // TSV without names, a column list in the statement.
    let t2 = Table::create("tsv2", "a String, b UInt8, c Nullable(String)");
    chn_ok(&["--query", &format!("INSERT INTO {} (b, a) FORMAT TSV", t2.0)], Some(b"7\tx\\\\y\n8\t\n"));
    assert_eq!(http(&format!("SELECT * FROM {} ORDER BY b FORMAT TSV", t2.0)), "x\\\\y\t7\t\\N\n\t8\t\\N\n");
}

#[test]
fn json_each_row_from_stdin() {
    let t = Table::create("json", COLUMNS);
    let data = r#"{"id":1,"name":"semi;colon, \"quoted\"","score":1.5,"day":"2024-01-02","at":"2024-01-02 03:04:05","tags":["a","b'c"],"price":"3.14","flag":true,"big":"-9223372036854775808","u":"61f0c404-5cb3-11e7-907b-a6006ad3dba0","unknown":"skipped"}
{"id":2,"name":"tab\there\nnewline","at":1704164646,"flag":false,"big":9223372036854775807}
"#;
    chn_ok(&["--query", &format!("INSERT INTO {} FORMAT JSONEachRow", t.0)], Some(data.as_bytes()));
    assert_eq!(stored(&t), EXPECTED);
}

#[test]
fn many_rows_go_in_bounded_batches() {
    let t = Table::create("many", "n UInt64, s String");
    let data: String = (0..200_000u64).map(|n| format!("{n},\"v{n}\"\n")).collect();
    chn_ok(
        &["--query", &format!("INSERT INTO {} FORMAT CSV", t.0), "--insert-batch-rows", "10000"],
        Some(data.as_bytes()),
    );
    assert_eq!(
        http(&format!("SELECT count(), sum(n), countIf(s = concat('v', toString(n))) FROM {} FORMAT TSV", t.0)),
        "200000\t19999900000\t200000\n"
    );
}

#[test]
fn a_bad_value_names_its_line_and_column_and_nothing_is_inserted() {
    let t = Table::create("bad", "id UInt32, name String, score Float64");
    let data = "1,a,1.5\n2,b,2.5\n3,c,not-a-number\n4,d,4.5\n";
    let out = chn(&["--query", &format!("INSERT INTO {} FORMAT CSV", t.0)], Some(data.as_bytes()));
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("line 3, column 3 (`score`)"), "{err}");
    assert!(err.contains("not-a-number"), "{err}");
    assert_eq!(http(&format!("SELECT count() FROM {} FORMAT TSV", t.0)), "0\n");

    // A later batch failing aborts the INSERT: the earlier batch (well under the
    // size of a part) is not stored either.
    let data = "1,a,1.5\n2,b,2.5\n3,c,3.5\n4,d,x\n";
    let out = chn(
        &["--query", &format!("INSERT INTO {} FORMAT CSV", t.0), "--insert-batch-rows", "2"],
        Some(data.as_bytes()),
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 4, column 3"));
    assert_eq!(http(&format!("SELECT count() FROM {} FORMAT TSV", t.0)), "0\n");

    for (format, data, place) in [
        ("TSV", "1\ta\t1\n2\tb\n", "line 2: 2 fields"),
        ("JSONEachRow", "{\"id\":1}\n{\"id\":\"x\"}\n", "line 2, column 1 (`id`)"),
        ("JSONEachRow", "{\"id\":1}\n{\"id\":2,}\n", "line 2"),
        ("CSV", "1,\"open quote\n", "line 1"),
    ] {
        let out = chn(&["--query", &format!("INSERT INTO {} FORMAT {format}", t.0)], Some(data.as_bytes()));
        assert_eq!(out.status.code(), Some(1), "{format} {data:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(place), "{format} {data:?}: {err}");
    }
    assert_eq!(http(&format!("SELECT count() FROM {} FORMAT TSV", t.0)), "0\n");
}

#[test]
fn types_chn_cannot_read_are_refused_before_reading() {
    let t = Table::create("unsup", "id UInt32, p Point");
    let out = chn(&["--query", &format!("INSERT INTO {} FORMAT CSV", t.0)], Some(b"1,\"(1,2)\"\n"));
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("column `p`") && err.contains("Point"), "{err}");
}

#[test]
fn insert_with_values_and_inline_data() {
    let t = Table::create("values", "a UInt8, b String");
    chn_ok(&["--query", &format!("INSERT INTO {} VALUES (1, 'x'); INSERT INTO {} FORMAT CSV 2,y", t.0, t.0)], None);
    assert_eq!(http(&format!("SELECT * FROM {} ORDER BY a FORMAT TSV", t.0)), "1\tx\n2\ty\n");
}

/// The same bytes inserted by chn and by the server itself (over HTTP) into
/// twin tables store the same rows.
fn same_as_the_servers_parse(columns: &str, format: &str, data: &[u8]) {
    let ours = Table::create("lenient", columns);
    let theirs = Table::create("lenient_ref", columns);
    chn_ok(&["--query", &format!("INSERT INTO {} FORMAT {format}", ours.0)], Some(data));
    let resp = chnative_testkit::server::http_raw(
        &format!("/?query=INSERT%20INTO%20{}%20FORMAT%20{format}", theirs.0),
        std::str::from_utf8(data).expect("UTF-8 test data"),
    )
    .expect("HTTP insert");
    assert!(
        String::from_utf8_lossy(&resp).starts_with("HTTP/1.0 200"),
        "the server refused the data: {}",
        String::from_utf8_lossy(&resp)
    );
    let read = |t: &Table| http(&format!("SELECT * FROM {} ORDER BY ALL FORMAT TSV", t.0));
    assert_eq!(read(&ours), read(&theirs), "{format}: chn stored other rows than the server's own parse");
    assert!(!read(&ours).is_empty());
}

/// Issue 29: chn refused data the server accepts: `0.2 ` with a trailing
/// space and `4.4E+5` into a Decimal (CSV), several JSONEachRow objects on a
/// line, JSONStringsEachRow input, and JSON columns.
#[test]
fn input_as_lenient_as_the_servers() {
    let cols = "a Float64, d Decimal(12, 2), s String, j JSON, n Nullable(Int32)";
    same_as_the_servers_parse(cols, "CSV", b"0.2 ,4.4E+5, x ,\"{\"\"k\"\":1}\",\\N\n1.5,-1.25e-1,y,{},7\n");
    same_as_the_servers_parse(
        cols,
        "JSONEachRow",
        b"{\"a\":1,\"d\":\"1.5\",\"s\":\"q\",\"j\":{\"z\":[1,2]},\"n\":null} {\"a\":2,\"d\":3,\"s\":\"r\",\"j\":{},\"n\":5}\n\
          {\"a\":3,\"s\":\"w\"},{\"a\":4,\"s\":\"v\"}\n",
    );
    same_as_the_servers_parse(
        cols,
        "JSONStringsEachRow",
        b"{\"a\":\"5.5\",\"d\":\"7.25\",\"s\":\"str\",\"j\":\"{\\\"y\\\":2}\",\"n\":\"7\"}\n",
    );
}

/// Formats chn does not parse (Values, TSKV, …) go to the server with the
/// data after the statement; a bad row is the server's error, and nothing of
/// that INSERT is stored.
#[test]
fn formats_chn_does_not_read_are_parsed_by_the_server() {
    same_as_the_servers_parse("a Int32, s String", "Values", b"(1,'x'),(2,'y\\'z')");
    same_as_the_servers_parse("a Int32, s String", "TSKV", b"a=4\ts=w\na=5\ts=v\n");
    let t = Table::create("raw_bad", "a Int32, s String");
    let out = chn(&["--query", &format!("INSERT INTO {} FORMAT Values", t.0)], Some(b"(1,'ok'),(5,'bad"));
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("SYNTAX_ERROR"), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(http(&format!("SELECT count() FROM {}", t.0)), "0\n");
}
