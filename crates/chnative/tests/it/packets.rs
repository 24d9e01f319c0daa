//! Side packets of a SELECT: totals, extremes, profile info, progress, profile events.

use crate::common;
use common::*;

#[tokio::test]
async fn totals_extremes_profile_info_and_progress() {
    for rev in REVISIONS {
        for comp in ["lz4", "none"] {
            let c = client_at(rev, comp).await;
            let q = chnative::Query::new(
                "SELECT number % 3 AS k, count() AS n FROM numbers(10) GROUP BY k WITH TOTALS ORDER BY k LIMIT 2",
            )
            .setting("extremes", "1");
            let mut s = c.fetch_blocks(q).await.unwrap();
            let mut ks = Vec::new();
            while let Some(b) = s.next().await.unwrap() {
                ks.extend_from_slice(b.column("k").unwrap().view().values::<u8>().unwrap());
            }
            assert_eq!(ks, vec![0, 1]);
            let totals = s.totals().expect("totals");
            assert_eq!(totals.column("n").unwrap().view().values::<u64>().unwrap(), &[10]);
            let ext = s.extremes().expect("extremes");
            assert_eq!(ext.rows(), 2);
            assert_eq!(ext.column("k").unwrap().view().values::<u8>().unwrap(), &[0, 1]);
            let pi = s.profile_info().expect("profile info");
            assert!(pi.applied_limit);
            assert_eq!(pi.rows, 2);
            assert_eq!(s.progress().read_rows, 10);
            let header = s.header().expect("header");
            assert_eq!(header.columns().iter().map(|c| c.name()).collect::<Vec<_>>(), ["k", "n"]);
            assert!(s.profile_events().columns().iter().any(|c| c.name() == "name"), "profile events decoded");
        }
    }
}

#[tokio::test]
async fn progress_accumulates_over_a_long_query() {
    let c = client().await;
    let q = chnative::Query::new("SELECT sum(number) FROM numbers(20000000)").setting("max_block_size", "100000");
    let mut s = c.fetch_blocks(q).await.unwrap();
    let mut sum = 0u64;
    while let Some(b) = s.next().await.unwrap() {
        sum = b.columns()[0].view().values::<u64>().unwrap()[0];
    }
    assert_eq!(sum, 20000000 * 19999999 / 2);
    assert_eq!(s.progress().read_rows, 20_000_000);
    assert_eq!(s.progress().read_bytes, 160_000_000);
}
