//! A connection reuses the blocks its queries decode into (for the small-query
//! cost, see `select1_alloc.rs`). Nothing of one query may show through in the
//! next: header, totals, extremes, ProfileEvents and logs are this query's or
//! absent, even when the shapes differ from one query to the next.

use crate::common;

use chnative::{Connection, Query};

async fn conn() -> Connection {
    Connection::connect(&common::url("compression=lz4")).await.unwrap()
}

fn header_of(s: &chnative::QueryStream<'_>) -> Vec<(String, String)> {
    s.header()
        .map(|h| h.columns().iter().map(|c| (c.name().to_string(), c.type_name().to_string())).collect())
        .unwrap_or_default()
}

#[tokio::test]
async fn nothing_of_a_query_shows_in_the_next_on_the_same_connection() {
    let mut c = conn().await;

    // Totals, extremes and server logs on the first query.
    let q = Query::new("SELECT number % 2 AS k, count() AS n FROM numbers(10) GROUP BY k WITH TOTALS ORDER BY k")
        .setting("extremes", "1")
        .setting("send_logs_level", "trace");
    let mut s = c.fetch_blocks(q).await.unwrap();
    let mut rows = 0;
    while let Some(b) = s.next().await.unwrap() {
        rows += b.rows();
    }
    assert_eq!(rows, 2);
    assert_eq!(header_of(&s), [("k".into(), "UInt8".into()), ("n".into(), "UInt64".into())]);
    assert_eq!(s.totals().map(|t| t.rows()), Some(1));
    assert!(s.extremes().is_some_and(|e| e.rows() == 2));
    // (The test server may have no log lines to send at its level; if it does, they must not carry over.)
    assert!(s.profile_events().rows() > 0);
    drop(s);

    // A fresh stream on the same connection starts empty.
    let mut s = c.fetch_blocks("SELECT 'a' AS k").await.unwrap();
    assert!(s.header().is_none());
    assert!(s.totals().is_none() && s.extremes().is_none());
    assert_eq!(s.profile_events().rows(), 0);
    assert_eq!((s.logs().0.rows(), s.logs().1), (0, 0));
    let b = s.next().await.unwrap().unwrap();
    // Same column name as before, another type: decoded as this query's.
    assert_eq!((b.columns()[0].name(), b.columns()[0].type_name()), ("k", "String"));
    assert_eq!(b.columns().len(), 1);
    while s.next().await.unwrap().is_some() {}
    assert_eq!(header_of(&s), [("k".into(), "String".into())]);
    assert!(s.totals().is_none() && s.extremes().is_none());
    assert_eq!(s.logs().1, 0);
    drop(s);

    // Back to a wider shape, then the same shape twice: the header follows.
    for _ in 0..2 {
        let mut s = c.fetch_blocks("SELECT toUInt16(7) AS a, 'x' AS b, [1, 2] AS c").await.unwrap();
        let b = s.next().await.unwrap().unwrap();
        assert_eq!(b.rows(), 1);
        assert_eq!(b.columns().len(), 3);
        while s.next().await.unwrap().is_some() {}
        assert_eq!(
            header_of(&s),
            [("a".into(), "UInt16".into()), ("b".into(), "String".into()), ("c".into(), "Array(UInt8)".into())]
        );
    }
    assert_eq!(c.fetch_scalar::<u8>("SELECT 1").await.unwrap(), 1);
    assert_eq!(c.fetch_scalar::<u64>("SELECT sum(number) FROM numbers(100)").await.unwrap(), 4950);
}
