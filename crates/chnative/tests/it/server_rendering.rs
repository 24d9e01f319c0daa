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
