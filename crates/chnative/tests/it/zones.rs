//! Honest time zones: a DateTime/DateTime64 in a named zone is shown (dynamic
//! `Value`'s Display, the text every tool prints) in the zone's local wall-clock
//! time exactly as the server's `toString` shows it, across daylight-saving
//! changes, with the default features. Without a time zone database (built with
//! `--no-default-features`) the value is shown in UTC and says so.

use crate::common;

use chnative::convert::zone::HAS_DATABASE;
use chnative::{Client, Value};
use common::client;

/// Checks every row of `SELECT x, toString(x), toString(x, 'UTC') FROM (<inner>)`:
/// `x` (a dynamic Value) must render as the server's local text, or, without a
/// database, as the UTC text followed by ` UTC`. Returns the number of rows.
async fn check(c: &Client, inner: &str) -> usize {
    let sql = format!("SELECT x, toString(x) AS s, toString(x, 'UTC') AS u FROM ({inner})");
    let rows = c.fetch_all_values(sql.as_str()).await.unwrap_or_else(|e| panic!("{inner}: {e}"));
    assert!(!rows.is_empty(), "{inner}: no rows");
    for r in &rows {
        let (local, utc) = (r["s"].as_str().unwrap(), r["u"].as_str().unwrap());
        let want = if HAS_DATABASE { local.to_string() } else { format!("{utc} UTC") };
        assert_eq!(r[0].to_string(), want, "{inner}: {:?}", r[0]);
    }
    rows.len()
}

/// Seconds around each of `changes` (Unix seconds of a DST change): a step
/// before and after, and the change itself.
fn around(changes: &[i64]) -> String {
    let mut v = Vec::new();
    for c in changes {
        for d in [-3601, -3600, -1800, -1, 0, 1, 1799, 1800, 3599, 3600, 7200] {
            v.push((c + d).to_string());
        }
    }
    v.join(", ")
}

#[tokio::test]
async fn paris_new_york_and_kolkata_match_to_string() {
    if !common::requires(26, 7, "DateTime64 beyond 1900-01-01..2299-12-31") {
        return;
    }
    let c = client().await;
    // Europe/Paris, 2024: 03-31 01:00 UTC (02:00 -> 03:00 local), 10-27 01:00 UTC
    // (03:00 -> 02:00 local, the hour shown twice); and 1996's autumn change.
    let paris = around(&[1_711_846_800, 1_729_990_800, 846_378_000]);
    let mut n = check(&c, &format!("SELECT toDateTime(arrayJoin([{paris}]), 'Europe/Paris') AS x")).await;
    // America/New_York in DateTime64(3): 2024-03-10 07:00 UTC, 2024-11-03 06:00 UTC,
    // with milliseconds, and one change before 1970 (1965-04-25 07:00 UTC).
    let ny = around(&[1_710_054_000, 1_730_613_600, -147_178_800]);
    n += check(
        &c,
        &format!(
            "SELECT toDateTime64(s + 0.123, 3, 'America/New_York') AS x FROM \
             (SELECT arrayJoin([{ny}]) AS s)"
        ),
    )
    .await;
    // Asia/Kolkata: +05:30, no DST.
    n +=
        check(&c, "SELECT toDateTime(number * 7919 * 3001 % 4294967295, 'Asia/Kolkata') AS x FROM numbers(1000)").await;
    // Sweeps over the whole DateTime range in each zone, and DateTime64 at two precisions.
    for zone in ["Europe/Paris", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe", "America/St_Johns"] {
        n += check(&c, &format!("SELECT toDateTime(number * 4294967 % 4294967295, '{zone}') AS x FROM numbers(1000)"))
            .await;
        n += check(
            &c,
            &format!(
                "SELECT toDateTime64(toInt64(number) * 15485863 - 1000000000, 6, '{zone}') + number / 7 AS x \
                 FROM numbers(1000)"
            ),
        )
        .await;
    }
    assert!(n > 10_000, "{n}");
}

#[tokio::test]
async fn zones_inside_arrays_tuples_and_without_a_zone_in_the_type() {
    let c = client().await;
    // Nested values are quoted; the local time is the same.
    let rows = c
        .fetch_all_values(
            "SELECT [toDateTime(1711846800, 'Europe/Paris'), toDateTime(1711846799, 'Europe/Paris')] AS a, \
             toString(a) AS s, (toDateTime64(1730613600.5, 1, 'America/New_York'), 1) AS t, toString(t) AS ts",
        )
        .await
        .unwrap();
    if HAS_DATABASE {
        assert_eq!(rows[0]["a"].to_string(), rows[0]["s"].as_str().unwrap());
        assert_eq!(rows[0]["a"].to_string(), "['2024-03-31 03:00:00','2024-03-31 01:59:59']");
        assert_eq!(rows[0]["t"].to_string(), rows[0]["ts"].as_str().unwrap());
    } else {
        assert_eq!(rows[0]["a"].to_string(), "['2024-03-31 01:00:00 UTC','2024-03-31 00:59:59 UTC']");
    }
    // A column without a zone is shown in the session's zone, as the server does,
    // when the query sets it (the server does not tell a SELECT's client the
    // session's zone): dynamic rows, a `Value` in a typed row, and query_scalar.
    let sql = "SELECT toDateTime(1711846800) AS x, toString(x) AS s, toString(x, 'UTC') AS u";
    let q = || chnative::Query::new(sql).setting("session_timezone", "Asia/Kolkata");
    let rows = c.fetch_all_values(q()).await.unwrap();
    let want = if HAS_DATABASE {
        rows[0]["s"].as_str().unwrap().to_string()
    } else {
        format!("{} UTC", rows[0]["u"].as_str().unwrap())
    };
    assert_eq!(rows[0]["s"].as_str(), Some("2024-03-31 06:30:00"));
    let x = &rows[0]["x"];
    assert!(matches!(x, Value::DateTime { tz, .. } if &**tz == "Asia/Kolkata"), "{x:?}");
    assert_eq!(x.to_string(), want);
    let (v, _, _) = c.fetch_one::<(Value, String, String)>(q()).await.unwrap();
    assert_eq!(v, *x);
    let v = c.fetch_scalar::<Value>(q()).await.unwrap();
    assert_eq!(v, *x);
    // Without the setting: the server's zone.
    let v = c.fetch_scalar::<Value>("SELECT toDateTime(0)").await.unwrap();
    assert!(matches!(&v, Value::DateTime { tz, .. } if **tz == *c.server_info().timezone), "{v:?}");
}

#[test]
fn an_unknown_zone_is_shown_in_utc_and_says_so() {
    let v = Value::DateTime { secs: 1_711_846_800, tz: "Mars/Olympus_Mons".into() };
    assert_eq!(v.to_string(), "2024-03-31 01:00:00 UTC");
    let v = Value::DateTime64 { ticks: 1_711_846_800_123, precision: 3, tz: "Mars/Olympus_Mons".into() };
    assert_eq!(v.to_string(), "2024-03-31 01:00:00.123 UTC");
    let v = Value::Array(vec![Value::DateTime { secs: 0, tz: "Mars/Olympus_Mons".into() }]);
    assert_eq!(v.to_string(), "['1970-01-01 00:00:00 UTC']");
    // UTC itself is known without a database and shown like toString, unmarked.
    let v = Value::DateTime { secs: 1_711_846_800, tz: "UTC".into() };
    assert_eq!(v.to_string(), "2024-03-31 01:00:00");
    let v = Value::DateTime { secs: 1_711_846_800, tz: "Europe/Paris".into() };
    assert_eq!(v.to_string(), if HAS_DATABASE { "2024-03-31 03:00:00" } else { "2024-03-31 01:00:00 UTC" });
}
