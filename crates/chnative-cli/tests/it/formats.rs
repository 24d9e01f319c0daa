//! Every output format of `chn` against the server's own output of the same
//! query over HTTP.

use crate::common;
use common::*;

/// A result with values of most types and the characters each format escapes
/// (tabs, quotes, backslashes, newlines, control bytes, U+2028, bytes that are
/// not UTF-8, `/`), NULLs, nan and inf, named and unnamed tuples, large integers.
const MIXED: &str = "SELECT number AS n, ['a\\tb', 'c\\'d', 'e\\\\f', 'n\\nl'] AS a, \
    concat('x\\ty\\\\', toString(number)) AS s, 'q\\'z\"/' AS q, toFixedString('ab', 4) AS f, (number, 'a') AS t, \
    map('k', 'v', 'k2', toString(number)) AS m, [NULL, number] AS an, \
    if(number = 1, NULL, toInt32(number) - 1) AS nl, number / 3 AS fl, toFloat32(number) / 7 AS f32, \
    toDate('2024-01-02') + number AS d, toDate32('1900-01-01') AS d32, \
    toDateTime('2024-01-02 03:04:05', 'Asia/Tokyo') AS dt, toDateTime64('2024-01-02 03:04:05.123456', 6, 'UTC') AS dt64, \
    [toDate('2024-01-02')] AS ad, number % 2 = 0 AS b, true AS bo, '\\x01\\x7f\\xe2\\x80\\xa8' AS ctl, \
    toInt64(-5) - number AS i64, toUInt64(18446744073709551615) - number AS u64, 12::UInt8 AS u8, \
    1e100 AS big, nan AS nn, -inf AS ii, toDecimal64(1.5, 3) AS dec, toDecimal128('-12345678901234567890.123', 3) AS dec128, \
    [(1, 'x')] AS at, CAST((1, 'y') AS Tuple(a Int32, b String)) AS nt, \
    toUUID('61f0c404-5cb3-11e7-907b-a6006ad3dba0') AS u, unhex('FF00') AS bad, toUInt128(5) AS u128, \
    toInt256(-7) AS i256, CAST('a' AS Enum8('a' = 1, 'b\\'c' = 2)) AS e, [[1], []] AS aa, map('k', [1]) AS mm, \
    toLowCardinality(toString(number)) AS lc, toIPv4('1.2.3.4') AS ip4, toIPv6('::1') AS ip6, \
    toBFloat16(1.5) AS bf, 1234567 AS tip FROM numbers(3)";

fn same_as_server(sql: &str, format: &str, extra: &[&str], server_settings: &str) {
    let ours = chn_ok(&[&["--query", sql, "--format", format], extra].concat(), None);
    let theirs = http_bytes(&format!("{sql} FORMAT {format} {server_settings}"));
    assert_eq!(
        String::from_utf8_lossy(&ours),
        String::from_utf8_lossy(&theirs),
        "chn --format {format} differs from the server's output of {sql}"
    );
    assert_eq!(ours, theirs, "same text, different bytes (invalid UTF-8?) in {format}");
}

#[test]
fn tsv_is_byte_for_byte_the_servers() {
    for f in ["TSV", "TabSeparated", "TSVWithNames", "TSVWithNamesAndTypes"] {
        same_as_server(MIXED, f, &[], "");
    }
}

#[test]
fn tsv_is_the_default_without_a_terminal() {
    let ours = chn_ok(&["--query", MIXED], None);
    assert_eq!(ours, http_bytes(&format!("{MIXED} FORMAT TSV")));
}

#[test]
fn csv_is_byte_for_byte_the_servers() {
    same_as_server(MIXED, "CSV", &[], "");
    same_as_server(MIXED, "CSVWithNames", &[], "");
}

#[test]
fn json_each_row_is_byte_for_byte_the_servers() {
    same_as_server(MIXED, "JSONEachRow", &[], "");
}

#[test]
fn json_each_row_follows_the_quoting_settings() {
    // The flags go to the server and change chn's own rendering the same way.
    same_as_server(
        MIXED,
        "JSONEachRow",
        &[
            "--output_format_json_quote_64bit_integers=1",
            "--output_format_json_quote_denormals=1",
            "--output_format_json_quote_decimals=1",
            "--output_format_json_escape_forward_slashes=0",
        ],
        "SETTINGS output_format_json_quote_64bit_integers=1, output_format_json_quote_denormals=1, \
         output_format_json_quote_decimals=1, output_format_json_escape_forward_slashes=0",
    );
}

#[test]
fn vertical_is_the_servers_and_g_asks_for_it() {
    same_as_server(MIXED, "Vertical", &[], "");
    let sql = "SELECT number, toString(number) AS s FROM numbers(12)";
    let ours = chn_ok(&[], Some(format!("{sql}\\G").as_bytes()));
    assert_eq!(String::from_utf8_lossy(&ours), http(&format!("{sql} FORMAT Vertical")));
}

#[test]
fn pretty_tables_are_the_servers() {
    for sql in [
        "SELECT number * 1000 AS x, 'ab' AS longname_here, if(number = 3, NULL, number) AS nn, [1] AS arr, \
         'a\\nb' AS ml FROM numbers(11)",
        "SELECT number, toString(number) AS s, 'é' AS `naïve` FROM numbers(3)",
        "SELECT 12345678 AS single",
        // Few rows, five columns and a value of two lines: the server switches to Vertical.
        "SELECT 1 a, 2 b, 3 c, 4 d, 'x\\ny' ml",
    ] {
        same_as_server(sql, "Pretty", &[], "");
        same_as_server(sql, "PrettyCompact", &[], "");
    }
}

#[test]
fn a_format_clause_in_the_query_chooses_the_format() {
    let sql = "SELECT number, 'a/b' AS s FROM numbers(2) FORMAT JSONEachRow";
    assert_eq!(String::from_utf8_lossy(&chn_ok(&["--query", sql], None)), http(sql));
    let out = chn(&["--query", "SELECT 1 FORMAT Parquet"], None);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("Parquet"));
}

#[test]
fn a_large_result_streams_identically() {
    let sql = "SELECT number, toString(number), number % 7 = 0 AS b FROM numbers(1000000)";
    let ours = chn_ok(&["--query", sql], None);
    let theirs = http_bytes(&format!("{sql} FORMAT TSV"));
    assert_eq!(ours.len(), theirs.len());
    assert!(ours == theirs, "1M-row TSV differs");
}

#[test]
fn a_result_without_rows_still_has_its_header() {
    let sql = "SELECT number AS n, 'x' AS s FROM numbers(0)";
    for f in ["TSVWithNames", "CSVWithNames", "TSV", "JSONEachRow"] {
        same_as_server(sql, f, &[], "");
    }
}
