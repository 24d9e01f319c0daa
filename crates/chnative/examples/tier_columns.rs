//! The column tier: borrowed blocks, one typed slice or view per column.
//!
//! `cargo run -p chnative --example tier_columns -- clickhouse://default@127.0.0.1:19000/default`
//!
//! Without a URL it connects to 127.0.0.1:19000, the test server that
//! `scripts/server.sh start` runs; pass your own server's URL (port 9000 by default).

const QUERY: &str = "SELECT number AS id, concat('user', toString(number)) AS name, \
                     if(number % 3 = 0, NULL, number / 4) AS score FROM numbers(10)";

#[tokio::main(flavor = "current_thread")]
async fn main() -> chnative::Result<()> {
    let url = std::env::args().nth(1).unwrap_or("clickhouse://default@127.0.0.1:19000/default".into());
    let client = chnative::Client::connect(&url).await?;
    let mut stream = client.fetch_blocks(QUERY).await?;
    while let Some(block) = stream.next().await? {
        let ids: &[u64] = block.column("id").unwrap().view().values()?;
        let names = block.column("name").unwrap().view();
        let names = names.as_strings()?;
        let scores = block.column("score").unwrap().view();
        let scores = scores.as_nullable()?;
        let values: &[f64] = scores.inner().values()?;
        for i in 0..block.rows() {
            let score = (!scores.is_null(i)).then(|| values[i]);
            println!("{} {} {:?}", ids[i], names.str(i).unwrap_or("<not UTF-8>"), score);
        }
    }
    Ok(())
}
