//! Every output format of `chn` against the server's own output of the same
//! query over HTTP.

use crate::common;
use common::*;

/// A result with values of most types and the characters each format escapes
/// (tabs, quotes, backslashes, newlines, control bytes, U+2028, bytes that are
/// not UTF-8, `/`), NULLs, nan and inf, named and unnamed tuples, large integers.
/// The columns of [`MIXED`] that every client here reads (`cpp_client` leaves out BFloat16).
macro_rules! mixed_columns {
    () => {
        "number AS n, ['a\\tb', 'c\\'d', 'e\\\\f', 'n\\nl'] AS a, \
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
    toLowCardinality(toString(number)) AS lc, toIPv4('1.2.3.4') AS ip4, toIPv6('::1') AS ip6"
    };
}
pub(crate) use mixed_columns;

const MIXED: &str = concat!("SELECT ", mixed_columns!(), ", toBFloat16(1.5) AS bf, 1234567 AS tip FROM numbers(3)");

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

/// `"elapsed": …` (JSON) and `<elapsed>…</elapsed>` (XML) replaced by 0: each
/// side measures its own time (clickhouse-client prints its own watch's too).
fn without_elapsed(out: &[u8]) -> String {
    String::from_utf8_lossy(out)
        .lines()
        .map(|l| match (l.find("\"elapsed\": "), l.find("<elapsed>")) {
            (Some(at), _) => format!("{}\"elapsed\": 0,", &l[..at]),
            (_, Some(at)) => format!("{}<elapsed>0</elapsed>", &l[..at]),
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Issue 29: the WITH TOTALS row and the extremes were dropped in every format.
#[test]
fn totals_and_extremes_are_written_as_the_server_writes_them() {
    let sql = "SELECT number % 3 AS k, count() AS c, 'a/b' AS s, toDate('2024-01-01') + k AS d FROM numbers(10) \
               GROUP BY k WITH TOTALS ORDER BY k LIMIT 2 SETTINGS extremes = 1";
    for f in [
        "JSON",
        "JSONCompact",
        "JSONStrings",
        "XML",
        "TSV",
        "TSVWithNames",
        "CSV",
        "Pretty",
        "PrettyCompact",
        "Vertical",
        "JSONEachRowWithProgress",
        "ODBCDriver2",
    ] {
        let ours = chn_ok(&["--query", sql, "--format", f], None);
        let mut theirs = http_bytes(&format!("{sql} FORMAT {f}"));
        if f.ends_with("WithProgress") {
            // The server's progress lines depend on timing; chn writes none.
            let text = String::from_utf8_lossy(&theirs).into_owned();
            theirs = text
                .lines()
                .filter(|l| !l.starts_with("{\"progress\":"))
                .map(|l| format!("{l}\n"))
                .collect::<String>()
                .into_bytes();
        }
        assert_eq!(without_elapsed(&ours), without_elapsed(&theirs), "{f}: totals and extremes differ");
    }
}

/// Issue 29: the output-format settings were ignored; they come from the
/// query's SETTINGS, from SET, and from the command line.
#[test]
fn output_format_settings_from_set_the_command_line_and_the_query() {
    let sql = "SELECT true AS b, NULL AS n, toDateTime('2024-01-02 03:04:05', 'UTC') AS t, number FROM numbers(2)";
    let set = "SET bool_true_representation = 'yes'; SET date_time_output_format = 'iso'";
    let server = "SETTINGS bool_true_representation = 'yes', date_time_output_format = 'iso'";
    for f in ["TSV", "CSV", "JSONEachRow", "Pretty", "Vertical"] {
        let theirs = http_bytes(&format!("{sql} FORMAT {f} {server}"));
        let by_set = chn_ok(&["--query", &format!("{set}; {sql}"), "--format", f], None);
        assert_eq!(String::from_utf8_lossy(&by_set), String::from_utf8_lossy(&theirs), "{f} after SET");
        let by_flag = chn_ok(
            &["--query", sql, "--format", f, "--bool_true_representation=yes", "--date_time_output_format=iso"],
            None,
        );
        assert_eq!(by_flag, theirs, "{f} with the settings as flags");
        let by_query = chn_ok(&["--query", &format!("{sql} {server}"), "--format", f], None);
        assert_eq!(by_query, theirs, "{f} with the query's SETTINGS");
    }
    // CRLF line ends, NULL spelling, JSON as one array.
    for (f, s) in [
        ("CSV", "output_format_csv_crlf_end_of_line"),
        ("TSV", "output_format_tsv_crlf_end_of_line"),
        ("JSONEachRow", "output_format_json_array_of_rows"),
    ] {
        let theirs = http_bytes(&format!("{sql} FORMAT {f} SETTINGS {s} = 1, format_csv_null_representation = 'NUL'"));
        let ours =
            chn_ok(&["--query", sql, "--format", f, &format!("--{s}=1"), "--format_csv_null_representation=NUL"], None);
        assert_eq!(String::from_utf8_lossy(&ours), String::from_utf8_lossy(&theirs), "{f} with {s}");
    }
}

/// Issue 29: session_timezone set by SET, by a flag or in the query was
/// ignored by chn (its DateTime columns were shown in the server's zone).
#[test]
fn session_timezone_is_the_zone_of_date_times_without_one() {
    let sql = "SELECT date '2001-09-29' + INTERVAL 12345 SECOND AS t";
    let theirs = http_bytes(&format!("{sql} SETTINGS session_timezone = 'Europe/Amsterdam' FORMAT TSV"));
    assert_eq!(String::from_utf8_lossy(&theirs), "2001-09-29 03:25:45\n");
    let by_set = chn_ok(&["--query", &format!("SET session_timezone = 'Europe/Amsterdam'; {sql}")], None);
    let by_flag = chn_ok(&["--query", sql, "--session_timezone=Europe/Amsterdam"], None);
    let by_query = chn_ok(&["--query", &format!("{sql} SETTINGS session_timezone = 'Europe/Amsterdam'")], None);
    for (how, ours) in [("SET", by_set), ("a flag", by_flag), ("the query's SETTINGS", by_query)] {
        assert_eq!(String::from_utf8_lossy(&ours), String::from_utf8_lossy(&theirs), "session_timezone by {how}");
    }
}

/// Issue 29 (as fast as the C++ client): integers, Strings and DateTimes are
/// written straight from their columns in TSV, CSV and JSONEachRow, and from a
/// Pretty table's 11th row on; rows Pretty does not show are only counted.
/// Those paths must follow the settings as the dynamic values do: the zone of
/// `session_timezone` (across a DST change), `date_time_output_format`, the
/// rows kept by `output_format_pretty_max_rows`, values cut at
/// `output_format_pretty_max_value_width`, values of two lines, bytes that are
/// not UTF-8.
#[test]
fn the_fast_paths_follow_the_settings() {
    let sql = "SELECT number AS n, toString(number * 3) AS s, toDateTime(1710053000 + number * 97) AS t, \
               toDateTime(1710053000 + number * 97, 'Asia/Kolkata') AS k, toDateTime(number * 86399, 'UTC') AS u, \
               if(number = 40, 'a\\nb', if(number = 41, unhex('FF41'), repeat('x', number % 30))) AS m \
               FROM numbers(100)";
    for settings in [
        "",
        "SETTINGS session_timezone = 'America/New_York'",
        "SETTINGS session_timezone = 'America/New_York', date_time_output_format = 'iso'",
        "SETTINGS date_time_output_format = 'unix_timestamp'",
        "SETTINGS output_format_pretty_max_rows = 20, output_format_pretty_max_value_width = 12",
        "SETTINGS output_format_pretty_max_rows = 7",
        "SETTINGS output_format_pretty_color = 1, session_timezone = 'Asia/Kolkata'",
    ] {
        for f in ["TSV", "TSVRaw", "CSV", "JSONEachRow", "Pretty", "PrettyCompact"] {
            let ours = chn_ok(&["--query", &format!("{sql} {settings}"), "--format", f], None);
            let theirs = http_bytes(&format!("{sql} {settings} FORMAT {f}"));
            assert_eq!(String::from_utf8_lossy(&ours), String::from_utf8_lossy(&theirs), "{f} {settings}");
            assert_eq!(ours, theirs, "{f} {settings}: same text, different bytes");
        }
    }
}

/// Issue 29: formats chn did not write.
#[test]
fn the_formats_chn_did_not_write() {
    let sql = "SELECT number AS n, toString(number) AS s, [number] AS a, if(number = 1, NULL, 'x<&y') AS nl, \
               (number, 'q''z') AS t, true AS b FROM numbers(3)";
    for f in [
        "JSON",
        "JSONCompact",
        "JSONStringsEachRow",
        "Markdown",
        "PrettyNoEscapes",
        "PrettyCompactNoEscapes",
        "Values",
        "XML",
        "TSVRaw",
        "TSKV",
        "ODBCDriver2",
    ] {
        let ours = chn_ok(&["--query", sql, "--format", f], None);
        let theirs = http_bytes(&format!("{sql} FORMAT {f}"));
        assert_eq!(without_elapsed(&ours), without_elapsed(&theirs), "{f}");
    }
}
