//! The typed-row tier: `#[derive(Row)]` structs, read and inserted.
//!
//! `cargo run -p chnative --example tier_typed_rows -- clickhouse://default@127.0.0.1:19000/default`
//!
//! Without a URL it connects to 127.0.0.1:19000, the test server that
//! `scripts/server.sh start` runs; pass your own server's URL (port 9000 by default).

use chnative::Row;

/// Borrows `name` from the block: no allocation per row.
#[derive(Row, Debug)]
struct User<'a> {
    id: u64,
    name: &'a str,
    score: Option<f64>,
}

/// Owned, for keeping rows and for inserting.
#[derive(Row, Debug, Clone)]
struct Event {
    id: u64,
    kind: String,
    tags: Vec<String>,
}

const QUERY: &str = "SELECT number AS id, concat('user', toString(number)) AS name, \
                     if(number % 3 = 0, NULL, number / 4) AS score FROM numbers(10)";

#[tokio::main(flavor = "current_thread")]
async fn main() -> chnative::Result<()> {
    let url = std::env::args().nth(1).unwrap_or("clickhouse://default@127.0.0.1:19000/default".into());
    let client = chnative::Client::connect(&url).await?;

    let mut rows = client.fetch::<User<'_>>(QUERY).await?;
    while let Some(user) = rows.next().await? {
        println!("{user:?}");
    }
    drop(rows);

    client.execute("DROP TABLE IF EXISTS chnative_example_events").await?;
    client
        .execute("CREATE TABLE chnative_example_events (id UInt64, kind String, tags Array(String)) ENGINE = Memory")
        .await?;
    let events: Vec<Event> =
        (0..5).map(|id| Event { id, kind: format!("k{}", id % 2), tags: vec!["a".into(); id as usize] }).collect();
    client.insert_rows("chnative_example_events", &events).await?;

    // A long-lived writer: one INSERT per 1000 rows, buffers reused.
    let mut inserter = client.inserter::<Event>("chnative_example_events").await?.max_rows(1000);
    for id in 5..2500 {
        inserter.write(&Event { id, kind: "bulk".into(), tags: Vec::new() }).await?;
    }
    let summary = inserter.end().await?;
    println!("inserter sent {} rows", summary.rows);

    let back: Vec<Event> = client.fetch_all("SELECT * FROM chnative_example_events WHERE id < 5 ORDER BY id").await?;
    println!("{back:?}");
    client.execute("DROP TABLE chnative_example_events").await?;
    Ok(())
}
