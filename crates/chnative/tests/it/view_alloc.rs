//! Views build nothing: walking a block's Map, Point and Ring columns down to
//! their values allocates no memory, although their key/value tuples and geo
//! parts are not spelled in the type (the column resolves its shape once).
//!
//! Counted with a global allocator; one test in this file so nothing else
//! allocates meanwhile. Not timed.

use crate::common;
use chnative_testkit::alloc;

#[test]
fn nested_views_of_maps_and_geo_types_allocate_nothing() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let c = chnative::Client::connect(&common::url("")).await.unwrap();
        let mut s = c
            .fetch_blocks(
                "SELECT map('k', number, 'l', number + 1) AS m, \
                 (toFloat64(number), 2.5)::Point AS p, \
                 [(toFloat64(number), 1.0), (3.0, 4.0)]::Ring AS r \
                 FROM numbers(1000)",
            )
            .await
            .unwrap();
        let mut rows = 0;
        while let Some(b) = s.next().await.unwrap() {
            let before = alloc::calls();
            let (mut sum, mut keys) = (0.0f64, 0usize);
            for _ in 0..100 {
                let m = b.column("m").unwrap().view();
                let entries = m.as_array().unwrap();
                let k = entries.inner().tuple_element(0).unwrap();
                let v = entries.inner().tuple_element(1).unwrap();
                keys += k.as_strings().unwrap().len();
                sum += v.values::<u64>().unwrap().iter().sum::<u64>() as f64;
                let p = b.column("p").unwrap().view();
                sum += p.tuple_element(0).unwrap().values::<f64>().unwrap().iter().sum::<f64>();
                let r = b.column("r").unwrap().view();
                let points = r.as_array().unwrap();
                sum += points.inner().tuple_element(1).unwrap().values::<f64>().unwrap().iter().sum::<f64>();
            }
            let made = alloc::calls() - before;
            assert_eq!(made, 0, "walking the views 100 times allocated {made} times");
            assert_eq!(keys, 100 * 2 * b.rows());
            assert!(sum > 0.0);
            rows += b.rows();
        }
        assert_eq!(rows, 1000);
    });
}
