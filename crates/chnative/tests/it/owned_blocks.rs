//! Owned blocks: `block.clone()` (or `to_owned()`) keeps a streamed block after the
//! stream moves on, sharing its buffers instead of copying them. The stream then
//! decodes into fresh buffers for the shared columns, so kept blocks never change.
//!
//! Counted on this thread only (`chnative_testkit::alloc`), so other tests don't count.

use crate::common;
use chnative_testkit::alloc;

#[test]
fn kept_blocks_share_buffers_and_outlive_the_stream() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let kept: Vec<chnative::Block> = rt.block_on(async {
        let c = chnative::Client::connect(&common::url("compression=lz4")).await.unwrap();
        let mut s = c
            .fetch_blocks(
                "SELECT number AS n, toString(number) AS s, [number, 7] AS a, \
                 if(number % 3 = 0, NULL, number) AS o FROM numbers(300000) SETTINGS max_block_size = 65536",
            )
            .await
            .unwrap();
        let mut kept = Vec::new();
        while let Some(b) = s.next().await.unwrap() {
            let before = alloc::bytes();
            let owned = b.clone();
            let cost = alloc::bytes() - before;
            // Names, types and the column list: a few hundred bytes, whatever the rows
            // (a copy of a 65,536-row block would be over 2 MB).
            assert!(cost < 4096, "cloning a block of {} rows allocated {cost} bytes", b.rows());
            kept.push(owned);
        }
        kept
    });
    assert!(kept.len() >= 5, "{} blocks", kept.len());
    // Sent to another thread, after the stream and its connection are gone: intact.
    let total = std::thread::spawn(move || {
        let mut next = 0u64;
        for b in &kept {
            let n = b.column("n").unwrap().view();
            let n = n.values::<u64>().unwrap();
            let s = b.column("s").unwrap().view().as_strings().unwrap();
            let a = b.column("a").unwrap().view().as_array().unwrap();
            let o = b.column("o").unwrap().view().as_nullable().unwrap();
            for (i, &value) in n.iter().enumerate() {
                assert_eq!(value, next);
                assert_eq!(s.str(i).unwrap(), next.to_string());
                assert_eq!(a.offsets()[i], 2 * (i as u64 + 1));
                assert_eq!(o.is_null(i), next.is_multiple_of(3));
                next += 1;
            }
            assert_eq!(n.len(), b.rows());
            assert_eq!(a.inner().values::<u64>().unwrap().len(), 2 * b.rows());
        }
        next
    })
    .join()
    .unwrap();
    assert_eq!(total, 300_000);

    // Kept blocks dropped later, on another thread, give their buffers back to the
    // connection's pool: the next stream on that connection allocates no column memory.
    rt.block_on(async {
        let c = chnative::Client::connect(&common::url("compression=lz4&pool_max_size=1")).await.unwrap();
        let q = "SELECT number AS n, toString(number) AS s FROM numbers(300000) SETTINGS max_block_size = 65536";
        let drain = |keep: bool| {
            let c = c.clone();
            async move {
                let mut s = c.fetch_blocks(q).await.unwrap();
                let mut kept = Vec::new();
                while let Some(b) = s.next().await.unwrap() {
                    if keep {
                        kept.push(b.clone());
                    }
                }
                kept
            }
        };
        drain(false).await; // warms the connection's pool
        let kept = drain(true).await;
        std::thread::spawn(move || drop(kept)).join().unwrap();
        let before = alloc::bytes();
        drain(false).await;
        let cost = alloc::bytes() - before;
        // One 65,536-row block of these columns is about 1.4 MB.
        assert!(cost < 256 * 1024, "a stream after kept blocks were dropped allocated {cost} bytes");
    });
}
