#[tokio::main(flavor = "current_thread")]
async fn main() -> chnative::Result<()> {
    let url = std::env::args().nth(1).unwrap();
    let sql = std::env::args().nth(2).unwrap();
    let mut c = chnative::Client::connect(&url).await?;
    let mut s = c.stream(sql.as_str()).await?;
    while let Some(b) = s.next().await? {
        for col in b.columns() {
            println!("{} {} rows={} {:?}", col.name(), col.type_name(), col.rows(), col.data());
        }
    }
    Ok(())
}
