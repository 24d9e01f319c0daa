//! A quick check against a running server: handshake, ping, `SELECT 1`, and a
//! 100,000-row stream.
//!
//! `cargo run -p chnative --example smoke [-- clickhouse://user@host:port/db]`; without a
//! URL it connects to 127.0.0.1:19000, the test server that `scripts/server.sh start` runs.

#[tokio::main(flavor = "current_thread")]
async fn main() -> chnative::Result<()> {
    let url = std::env::args().nth(1).unwrap_or("clickhouse://default@127.0.0.1:19000/default".into());
    let c = chnative::Client::connect(&url).await?;
    println!("{:?}", c.server_info());
    c.ping().await?;
    let v: u8 = c.fetch_scalar("SELECT 1").await?;
    println!("select 1 = {v}");
    let mut s = c.fetch_blocks("SELECT number, toString(number) AS s FROM numbers(100000)").await?;
    let mut n = 0;
    while let Some(b) = s.next().await? {
        n += b.rows();
        let st = b.column("s").unwrap().view();
        let st = st.as_strings()?;
        assert_eq!(st.str(0).unwrap().parse::<u64>().unwrap(), b.column("number").unwrap().view().values::<u64>()?[0]);
    }
    println!("rows {n} progress {:?}", s.progress());
    drop(s);
    Ok(())
}
