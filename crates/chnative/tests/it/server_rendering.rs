//! Issue 29: what chnative shows equals what the server shows (its own `toString`
//! of the same value, in the same query), for the defects found by running
//! ClickHouse's test queries through chn and the server's HTTP interface.

use crate::common;

use chnative::{Query, Row, Value};
use common::{client, url};

/// The zone-less DateTime of the issue, with the server's own text of it.
const T: &str = "SELECT date '2001-09-29' + INTERVAL 12345 SECOND AS t, toString(t) AS s";

#[derive(Row)]
struct Shown {
    t: Value,
    s: String,
}

/// Every read path of one query shows `t` as the server's `toString` (`s`),
/// which must be `want`: dynamic rows, a `Value` field of a typed row, a
/// scalar, and the stream's zone.
async fn check_zone(db: &mut impl chnative::Executor, q: impl Fn() -> Query, want: &str, zone: &str) {
    let rows = db.fetch_all_values(q()).await.unwrap();
    assert_eq!(rows[0]["s"].to_string(), want, "the server's text");
    assert_eq!(rows[0]["t"].to_string(), want, "dynamic row");
    let typed: Vec<Shown> = db.fetch_all(q()).await.unwrap();
    assert_eq!((typed[0].t.to_string(), typed[0].s.as_str()), (want.to_string(), want), "typed row");
    let v: Value = db.fetch_scalar(q()).await.unwrap();
    assert_eq!(v.to_string(), want, "scalar");
    let mut s = db.fetch_blocks(q()).await.unwrap();
    assert_eq!(s.timezone(), zone);
    while s.next().await.unwrap().is_some() {}
}

#[tokio::test]
async fn session_timezone_whichever_way_it_is_set() {
    // Regression (issue 29): only Query::setting was followed; the query's own
    // SETTINGS clause, a SET in the session and the config's settings gave
    // the server's zone (01:25:45 UTC).
    let c = client().await;
    let server_tz = c.server_info().timezone;
    // The date is midnight in the zone in force, so the server always shows
    // 03:25:45; the instant differs, and shown in any other zone it would not.
    let want = "2001-09-29 03:25:45";
    let mut s = c.session().await.unwrap();
    check_zone(&mut s, || Query::new(T), want, &server_tz).await;
    // Query::setting.
    check_zone(&mut s, || Query::new(T).setting("session_timezone", "Europe/Amsterdam"), want, "Europe/Amsterdam")
        .await;
    // The query's own SETTINGS clause (also before a FORMAT, after other settings).
    let own = format!("{T} SETTINGS max_threads = 1, session_timezone = 'Asia/Tokyo'");
    check_zone(&mut s, || Query::new(own.clone()), want, "Asia/Tokyo").await;
    // A SET in the session, then reset to the server's zone.
    s.execute("SET session_timezone = 'America/New_York'").await.unwrap();
    check_zone(&mut s, || Query::new(T), want, "America/New_York").await;
    // The query's clause beats the session's SET.
    check_zone(&mut s, || Query::new(own.clone()), want, "Asia/Tokyo").await;
    // A SET that fails changes nothing.
    assert!(s.execute("SET session_timezone = 'No/Such_Zone'").await.is_err());
    check_zone(&mut s, || Query::new(T), want, "America/New_York").await;
    s.execute("SET session_timezone = ''").await.unwrap();
    check_zone(&mut s, || Query::new(T), want, &server_tz).await;
    // The config's settings (sent with every query).
    let cfg = chnative::Client::connect(&url("set_session_timezone=Australia/Lord_Howe")).await.unwrap();
    check_zone(&mut cfg.clone(), || Query::new(T), want, "Australia/Lord_Howe").await;
}

#[derive(Row)]
struct Wide {
    id: u8,
    v: chnative::convert::I256,
}

#[derive(Row)]
struct WideU {
    id: u8,
    v: chnative::convert::U256,
}

#[tokio::test]
async fn int256_values_into_a_uint128_column() {
    // Regression (issue 29): an Int256 narrowed to UInt128 through i128, so
    // every value at or above 2^127 was refused ("does not fit a UInt128
    // column exactly").
    let c = client().await;
    let t = common::Table::create("conflib_u128", "(id UInt8, v UInt128) ENGINE = Memory");
    let vals = [
        "0",
        "170141183460469231731687303715884105728",
        "340282366920938463463374607431768211000",
        "340282366920938463463374607431768211455",
    ];
    let rows: Vec<Wide> = vals.iter().enumerate().map(|(k, v)| Wide { id: k as u8, v: v.parse().unwrap() }).collect();
    c.insert_rows(&t, &rows).await.unwrap();
    let rows: Vec<WideU> =
        vals.iter().enumerate().map(|(k, v)| WideU { id: 10 + k as u8, v: v.parse().unwrap() }).collect();
    c.insert_rows(&t, &rows).await.unwrap();
    let back = common::http(&format!("SELECT v FROM {} ORDER BY id FORMAT TSV", &*t));
    assert_eq!(back, vals.repeat(2).join("\n") + "\n");
    // Out of range is still refused, naming the column type.
    let too_big: chnative::convert::I256 = "340282366920938463463374607431768211456".parse().unwrap();
    let e = c.insert_rows(&t, &[Wide { id: 0, v: too_big }]).await.unwrap_err();
    assert!(e.to_string().contains("does not fit a UInt128 column exactly"), "{e}");
    let e = c.insert_rows(&t, &[Wide { id: 0, v: (-1i8).into() }]).await.unwrap_err();
    assert!(e.to_string().contains("does not fit a UInt128 column exactly"), "{e}");
}

/// Each expression's dynamic Value (and a typed row's `Value` field) shows as
/// the server's `toString` of it, in the same query.
async fn check_to_string(exprs: &[&str]) {
    let c = client().await;
    let cols: Vec<String> =
        exprs.iter().enumerate().map(|(k, e)| format!("{e} AS v{k}, toString(v{k}) AS s{k}")).collect();
    let sql = format!("SELECT {}", cols.join(", "));
    let rows = c.fetch_all_values(sql.as_str()).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    for (k, e) in exprs.iter().enumerate() {
        let (v, s) = (&rows[0][format!("v{k}").as_str()], &rows[0][format!("s{k}").as_str()]);
        assert_eq!(v.to_string(), s.to_string(), "{e}: {v:?}");
    }
}

#[tokio::test]
async fn maps_inside_maps_arrays_variants_and_dynamic() {
    // The cases inside Variant and Dynamic need them (experimental before 25.3).
    if !common::requires(25, 3, "Variant and Dynamic") {
        return;
    }
    // Regression (issue 29): a Map's key or value that is itself a Map was read
    // by its wire shape, an array of tuples: `{[(1,2)]:4}` for `{{1:2}:4}`.
    check_to_string(&[
        "map(map(1,2),4)",
        "map(1,map(2,3))",
        "map(map('a',map(1,2)),[map(3,4)])",
        "[map(1,2), map(3,4)]",
        "[map(1,map(2,3))]",
        "CAST(map(map(1,2),3) AS Variant(Map(Map(UInt8,UInt8),UInt8), String))",
        "CAST(map(1,map(2,3)) AS Dynamic)",
        "CAST([map(1,map(2,3))] AS Dynamic)",
        "map(1,(map(2,3),'x'))",
        "map(1,tuple(map(2,3),'x')::Tuple(a Map(UInt8,UInt8), b String))",
        "map(1, map(2,3)::Map(UInt8, Nullable(UInt8)))",
        "map('k', map(toLowCardinality('a'), [map(1, 'x')]))",
        "[(map(1,2), [map(3,4)])]",
    ])
    .await;
}

#[cfg(feature = "serde_json")]
#[tokio::test]
async fn named_tuples_are_json_objects() {
    // Regression (issue 29): a named Tuple inside Dynamic (and anywhere) came
    // out of Value's JSON as an array, `[42,"str"]`; the server writes
    // `{"a":42,"b":"str"}` (output_format_json_named_tuples_as_objects).
    let c = client().await;
    let sql = "SELECT CAST(tuple(42,'str')::Tuple(a Int32, b String) AS Dynamic) AS d, \
               tuple(42,'str')::Tuple(a Int32, b String) AS t, [tuple(1,'x')::Tuple(a Int32, b String)] AS arr, \
               tuple(1, 2) AS u, map('k', tuple(1,'x')::Tuple(a Int32, b String)) AS mm, \
               CAST(tuple(7, tuple(8)::Tuple(c UInt8))::Tuple(a UInt8, b Tuple(c UInt8)) AS Dynamic) AS nested";
    let rows = c.fetch_all_values(sql).await.unwrap();
    let ours = serde_json::to_value(&rows[0]).unwrap();
    let theirs: serde_json::Value = serde_json::from_str(&common::http(&format!(
        "{sql} FORMAT JSONEachRow SETTINGS output_format_json_quote_64bit_integers = 0"
    )))
    .unwrap();
    assert_eq!(ours, theirs);
    // Shown as a tuple, as toString does.
    assert_eq!(rows[0]["d"].to_string(), "(42,'str')");
    let Value::NamedTuple { names, values } = &rows[0]["t"] else { panic!("{:?}", rows[0]["t"]) };
    assert_eq!((&names[..], values.len()), (&["a".to_string(), "b".to_string()][..], 2));
}

#[tokio::test]
async fn intervals_are_values() {
    // The cases inside Variant and Dynamic need them (experimental before 25.3).
    if !common::requires(25, 3, "Variant and Dynamic") {
        return;
    }
    // Regression (issue 29): "column `toIntervalSecond(1)` is IntervalSecond,
    // not a dynamic Value".
    check_to_string(&[
        "INTERVAL 1 SECOND",
        "toIntervalNanosecond(-5)",
        "INTERVAL 3 MONTH",
        "[INTERVAL 2 DAY, INTERVAL 3 DAY]",
        "(INTERVAL 1 YEAR, 'x')",
        "CAST(INTERVAL 2 WEEK AS Dynamic)",
        "toIntervalQuarter(9223372036854775807)",
    ])
    .await;
    let c = client().await;
    let v: Value = c.fetch_scalar("SELECT INTERVAL 7 MINUTE").await.unwrap();
    assert_eq!(v, Value::Interval { kind: chnative::proto::IntervalKind::Minute, value: 7 });
    // A typed row reads it as its count.
    let n: i64 = c.fetch_scalar("SELECT INTERVAL -3 HOUR").await.unwrap();
    assert_eq!(n, -3);
    // Both write back: into an Interval column (of its own unit) and Dynamic.
    let t = common::Table::create("conflib_interval", "(id UInt8, i IntervalSecond, d Dynamic) ENGINE = Memory");
    let rows = c
        .fetch_all_values("SELECT 1 AS id, INTERVAL 5 SECOND AS i, CAST(INTERVAL 6 DAY AS Dynamic) AS d")
        .await
        .unwrap();
    c.insert_values(&t, &rows).await.unwrap();
    let back = common::http(&format!("SELECT i, d, dynamicType(d) FROM {} FORMAT TSV", &*t));
    assert_eq!(back, "5\t6\tIntervalDay\n");
    #[cfg(feature = "serde_json")]
    {
        let sql = "SELECT INTERVAL 1 SECOND AS a, [INTERVAL 2 DAY] AS b";
        let rows = c.fetch_all_values(sql).await.unwrap();
        let theirs: serde_json::Value =
            serde_json::from_str(&common::http(&format!("{sql} FORMAT JSONEachRow"))).unwrap();
        assert_eq!(serde_json::to_value(&rows[0]).unwrap(), theirs);
    }
}

/// Every row's `x` (a dynamic Value) shows as the server's `toString(x)`.
async fn check_rows(c: &chnative::Client, inner: &str) -> usize {
    let sql = format!("SELECT x, toString(x) AS s FROM ({inner})");
    let rows = c.fetch_all_values(sql.as_str()).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    for r in &rows {
        assert_eq!(r["x"].to_string(), r["s"].to_string(), "{inner}: {:?}", r["x"]);
    }
    rows.len()
}

#[tokio::test]
async fn dates_and_times_past_the_shown_range_are_clamped_as_the_server_does() {
    // Regression (issue 29): a DateTime64 past 9999 showed as
    // `52757-11-01 00:02:03.000 UTC` where the server shows
    // `9999-12-31 23:59:59.000`: the server clamps the local time to
    // 0000-01-01 00:00:00 .. 9999-12-31 23:59:59, keeping the fraction.
    // Servers before 26.7 keep DateTime64 within 1900..2299 and show what lies
    // past it by another rule: the client shows 26.7's.
    if !common::requires(26, 7, "DateTime64 beyond 1900-01-01..2299-12-31") {
        return;
    }
    let c = client().await;
    let ms = [
        "1602666666666000",
        "253402300799000",
        "253402300800123",
        "253402297199999",
        "253402297200000",
        "253402318799000",
        "253402318800000",
        "253402387200999",
        "10413792000000",
        "32519318400000",
        "-2208988801000",
        "-30000000000000",
        "-62135596800001",
        "-62167219200000",
        "-62167219200001",
        "-62167222800001",
        "-99999999999999",
        "9223372036854775807",
        "-9223372036854775808",
    ]
    .join(",");
    let mut n = 0;
    for zone in ["UTC", "Europe/Paris", "America/New_York", "Asia/Kolkata", "Pacific/Kiritimati", "Pacific/Pago_Pago"] {
        n += check_rows(&c, &format!("SELECT fromUnixTimestamp64Milli(arrayJoin([{ms}]), '{zone}') AS x")).await;
        n += check_rows(&c, &format!("SELECT fromUnixTimestamp64Nano(arrayJoin([{ms}]), '{zone}') AS x")).await;
        n += check_rows(&c, &format!("SELECT [fromUnixTimestamp64Micro(arrayJoin([{ms}]), '{zone}')] AS x")).await;
    }
    // A zone-less column, in the session's zone.
    n += check_rows(
        &c,
        &format!(
            "SELECT fromUnixTimestamp64Milli(arrayJoin([{ms}])) AS x SETTINGS session_timezone = 'Pacific/Kiritimati'"
        ),
    )
    .await;
    assert_eq!(n, 19 * 19);
    // Date32 past its range (written raw: the server stores the days as sent).
    let t = common::Table::create("conflib_date32", "(id UInt8, x Date32) ENGINE = Memory");
    let names: std::sync::Arc<[String]> = vec!["id".to_string(), "x".to_string()].into();
    let days =
        [-25567, -25568, -100000, 120529, 120530, 2000000, i32::MIN, i32::MAX, -719528, -719529, 2932896, 2932897];
    let rows: Vec<chnative::ValueRow> = days
        .iter()
        .enumerate()
        .map(|(k, d)| chnative::ValueRow::new(names.clone(), vec![Value::UInt8(k as u8), Value::Date32(*d)]).unwrap())
        .collect();
    c.insert_values(&t, &rows).await.unwrap();
    assert_eq!(check_rows(&c, &format!("SELECT x, id FROM {} ORDER BY id", &*t)).await, days.len());
}

#[tokio::test]
async fn column_names_that_are_not_utf8() {
    // Regression (issue 29): a name with a byte that is not UTF-8 (an
    // expression's name is its text, a string literal's bytes included) failed
    // the whole query with "protocol violation: string is not UTF-8".
    let c = client().await;
    let sql = r#"SELECT 1 AS "\xAA", hex('a\xAA') AS h, hex('b\xFF') FORMAT TSVWithNames"#;
    // The server's names and values, as bytes.
    let theirs = common::http_bytes(sql);
    let mut lines = theirs.split(|b| *b == b'\n');
    let names: Vec<&[u8]> = lines.next().unwrap().split(|b| *b == b'\t').collect();
    assert_eq!(names[0], b"\xAA");
    let sql = sql.trim_end_matches(" FORMAT TSVWithNames");
    let mut s = c.fetch_blocks(sql).await.unwrap();
    let mut seen = 0;
    while let Some(b) = s.next().await.unwrap() {
        let ours: Vec<&[u8]> = b.columns().iter().map(|c| c.name_bytes()).collect();
        // TSV escapes the backslash and quote of `hex(\'b…\')`.
        let ours_escaped: Vec<Vec<u8>> = ours
            .iter()
            .map(|n| n.iter().flat_map(|&c| if c == b'\'' { vec![b'\\', c] } else { vec![c] }).collect())
            .collect();
        assert_eq!(ours_escaped, names);
        assert_eq!(b.columns()[0].name(), "\u{FFFD}");
        assert_eq!(b.columns()[1].name_bytes(), b"h");
        seen += b.rows();
    }
    assert_eq!(seen, 1);
    // Dynamic and typed rows read it too; the lossy name finds the column.
    let rows = c.fetch_all_values(sql).await.unwrap();
    assert_eq!((rows[0]["\u{FFFD}"].to_string().as_str(), rows[0]["h"].to_string().as_str()), ("1", "61AA"));
    let (one, h, _): (u8, String, String) = c.fetch_one(sql).await.unwrap();
    assert_eq!((one, h.as_str()), (1, "61AA"));
}
