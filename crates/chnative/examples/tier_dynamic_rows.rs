//! The dynamic-row tier: rows of `Value`s for queries whose shape is not known
//! at compile time. `Display` prints each value like the server's `toString`.
//!
//! `cargo run -p chnative --example tier_dynamic_rows -- clickhouse://default@127.0.0.1:19000/default "SELECT …"`
//!
//! Without a URL it connects to 127.0.0.1:19000, the test server that
//! `scripts/server.sh start` runs; pass your own server's URL (port 9000 by default).

const QUERY: &str = "SELECT number AS id, concat('user', toString(number)) AS name, \
                     if(number % 3 = 0, NULL, number / 4) AS score FROM numbers(10)";

#[tokio::main(flavor = "current_thread")]
async fn main() -> chnative::Result<()> {
    let mut args = std::env::args().skip(1);
    let url = args.next().unwrap_or("clickhouse://default@127.0.0.1:19000/default".into());
    let query = args.next().unwrap_or(QUERY.into());
    let client = chnative::Client::connect(&url).await?;
    let mut rows = client.fetch_values(query).await?;
    let mut first = true;
    while let Some(row) = rows.next().await? {
        if first {
            println!("{}", row.names().join("\t"));
            first = false;
        }
        let cells: Vec<String> = row.values().iter().map(|v| v.to_string()).collect();
        println!("{}", cells.join("\t"));
    }
    Ok(())
}
