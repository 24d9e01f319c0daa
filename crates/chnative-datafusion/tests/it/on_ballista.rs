//! A Ballista cluster over the local 2-shard ClickHouse cluster: Ballista's own scheduler
//! and two executors on loopback (in this process), the provider shipped to them by the
//! crate's codecs, every scan partition a task on an executor that connects to its shard
//! from there. Answers compared with ClickHouse's own through a `Distributed` table.
//!
//! Run: `cargo test -p chnative-datafusion --features ballista --test it -- --include-ignored on_ballista::`

use std::sync::Arc;

use ballista::prelude::SessionContextExt;
use chnative_datafusion::ballista::{session_state, LocalCluster};
use chnative_datafusion::ClickHouseTable;
use chnative_testkit::cluster::NAME;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::{CsvReadOptions, SessionContext};

use crate::pushdown::{clickhouse, same, tables, tsv, url, DIST, LOCAL};

fn names(plan: &Arc<dyn ExecutionPlan>, out: &mut Vec<String>) {
    out.push(plan.name().to_string());
    for c in plan.children() {
        names(c, out);
    }
}

// Ignored: through Ballista 55.0.0 some ClickHouse rows come back 2-4 times (see the README's
// Ballista section: not yet explained; leaf restriction in Ballista's task builder is a suspect,
// a memory-source index child under the scan did not fix it). Run it with
// `-- --include-ignored on_ballista::` (CHN_DEBUG=1 prints the plans).
#[ignore = "through Ballista 55 some ClickHouse rows come back 2-4 times (not yet explained)"]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ballista_runs_a_join_and_aggregates_over_the_cluster() {
    tables();
    let cluster = LocalCluster::start(2, 2).await.unwrap();
    let ctx = SessionContext::remote_with_state(&cluster.url(), session_state()).await.unwrap();
    let t = ClickHouseTable::builder(url(1), LOCAL).cluster(NAME).key_ranges(2).build().await.unwrap();
    ctx.register_table("t", Arc::new(t)).unwrap();
    let raw =
        ClickHouseTable::builder(url(1), LOCAL).cluster(NAME).key_ranges(2).pushdown(false).build().await.unwrap();
    ctx.register_table("raw", Arc::new(raw)).unwrap();
    // A CSV file that only DataFusion's side has.
    let dir = std::env::temp_dir().join(format!("chnative-ballista-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("labels.csv");
    let mut text = String::from("g_id,label\n");
    let mut values = Vec::new();
    for g in (0..50).step_by(3) {
        text.push_str(&format!("{g},label {}\n", g % 4));
        values.push(format!("({g}, 'label {}')", g % 4));
    }
    std::fs::write(&csv, text).unwrap();
    ctx.register_csv("labels", csv.to_str().unwrap(), CsvReadOptions::new()).await.unwrap();
    if std::env::var("CHN_DEBUG").is_ok() {
        for q in [
            "SELECT COUNT(*) FROM labels",
            "EXPLAIN SELECT COUNT(*) FROM raw",
            "SELECT g, COUNT(*) FROM raw GROUP BY g ORDER BY g LIMIT 3",
        ] {
            let b = ctx.sql(q).await.unwrap().collect().await.unwrap();
            eprintln!("{q}: {}", tsv(&b).join("\n"));
        }
    }
    let labels = format!("(SELECT * FROM values('g_id UInt16, label String', {}))", values.join(", "));

    for (table, ours, theirs) in [
        // The join: rows of every shard (no pushdown: each scan partition a task) against
        // the CSV, aggregated by DataFusion on the executors.
        (
            "raw",
            "SELECT l.label, COUNT(*), SUM(x.i), COUNT(DISTINCT x.s), MAX(x.d) FROM raw x JOIN labels l \
             ON x.g = l.g_id WHERE x.k IS NOT NULL GROUP BY l.label ORDER BY l.label",
            format!(
                "SELECT l.label, count(), sum(x.i), uniqExact(x.s), max(x.d) FROM {DIST} x JOIN {labels} l \
                 ON x.g = l.g_id WHERE x.k IS NOT NULL GROUP BY l.label ORDER BY l.label"
            ),
        ),
        // The same join over the pushdown table: the aggregate is above the join, so the
        // scan is a plain one.
        (
            "t",
            "SELECT l.label, COUNT(*) FROM t x JOIN labels l ON x.g = l.g_id GROUP BY l.label ORDER BY l.label",
            format!(
                "SELECT l.label, count() FROM {DIST} x JOIN {labels} l ON x.g = l.g_id \
                 GROUP BY l.label ORDER BY l.label"
            ),
        ),
        // An aggregate pushed to the shards (partial), merged on the executors.
        (
            "t",
            "SELECT k, COUNT(*), SUM(big), MIN(s), AVG(i) FROM t GROUP BY k ORDER BY k NULLS FIRST",
            format!("SELECT k, count(), sum(big), min(s), avg(i) FROM {DIST} GROUP BY k ORDER BY k NULLS FIRST"),
        ),
        // The same aggregate, computed by DataFusion on the executors from the rows.
        (
            "raw",
            "SELECT k, COUNT(*), SUM(big), MIN(s), AVG(i) FROM raw GROUP BY k ORDER BY k NULLS FIRST",
            format!("SELECT k, count(), sum(big), min(s), avg(i) FROM {DIST} GROUP BY k ORDER BY k NULLS FIRST"),
        ),
        // A top-N.
        (
            "t",
            "SELECT id, s FROM t ORDER BY s DESC NULLS LAST, id LIMIT 5",
            format!("SELECT id, s FROM {DIST} ORDER BY s DESC NULLS LAST, id LIMIT 5"),
        ),
    ] {
        let df = ctx.sql(ours).await.unwrap_or_else(|e| panic!("{ours}: {e}"));
        let plan = df.clone().create_physical_plan().await.unwrap();
        let mut ns = Vec::new();
        names(&plan, &mut ns);
        assert_eq!(ns.first().map(String::as_str), Some("DistributedQueryExec"), "{table}: {ns:?}");
        let got = tsv(&df.collect().await.unwrap_or_else(|e| panic!("{ours}: {e}")));
        let want = clickhouse(1, &theirs);
        assert!(!want.is_empty());
        assert!(same(&got, &want), "{ours}\nBallista:   {got:?}\nClickHouse: {want:?}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The codecs alone: the provider and the scan go through bytes and come back the same,
/// and the scan that came back runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codecs_ship_the_table_and_the_scan() {
    use chnative_datafusion::ballista::{LogicalCodec, PhysicalCodec};
    use chnative_datafusion::{register_table, ClickHouseScanExec};
    use datafusion::catalog::TableProvider;
    use datafusion_proto::logical_plan::LogicalExtensionCodec;
    use datafusion_proto::physical_plan::{DefaultPhysicalProtoConverter, PhysicalExtensionCodec};

    tables();
    let t =
        ClickHouseTable::builder(url(1), LOCAL).cluster(NAME).key_ranges(2).sharding_key("g").build().await.unwrap();
    let ctx = SessionContext::new();
    let name = datafusion::common::TableReference::from("t");
    let mut buf = Vec::new();
    LogicalCodec::default().try_encode_table_provider(&name, Arc::new(t.clone()), &mut buf).unwrap();
    let back = LogicalCodec::default().try_decode_table_provider(&buf, &name, t.schema(), &ctx.task_ctx()).unwrap();
    let back = back.downcast_ref::<ClickHouseTable>().expect("our provider");
    assert_eq!(back.config(), t.config());
    assert_eq!(back.sharding_key(), Some("g"));
    assert!(back.pushdown_enabled());

    register_table(&ctx, "t", t).unwrap();
    let sql = "SELECT k, COUNT(*), SUM(i) FROM t GROUP BY k ORDER BY k NULLS FIRST";
    let plan = ctx.sql(sql).await.unwrap().create_physical_plan().await.unwrap();
    fn swap(plan: Arc<dyn ExecutionPlan>) -> Arc<dyn ExecutionPlan> {
        if let Some(scan) = plan.downcast_ref::<ClickHouseScanExec>() {
            let mut buf = Vec::new();
            let conv = DefaultPhysicalProtoConverter {};
            PhysicalCodec::default().try_encode(plan.clone(), &mut buf, &conv).unwrap();
            let back =
                PhysicalCodec::default().try_decode(&buf, &[], &SessionContext::new().task_ctx(), &conv).unwrap();
            let b = back.downcast_ref::<ClickHouseScanExec>().expect("our scan");
            assert_eq!(b.config(), scan.config());
            assert!(b.config().aggregate.is_some(), "the pushed aggregate travels too");
            return back;
        }
        let children: Vec<_> = plan.children().into_iter().map(|c| swap(c.clone())).collect();
        if children.is_empty() {
            plan
        } else {
            #[allow(deprecated)]
            let p = datafusion::physical_plan::with_new_children_if_necessary(plan, children).unwrap();
            p
        }
    }
    let shipped = swap(plan);
    let got = tsv(&datafusion::physical_plan::collect(shipped, ctx.task_ctx()).await.unwrap());
    let want = clickhouse(1, &format!("SELECT k, count(), sum(i) FROM {DIST} GROUP BY k ORDER BY k NULLS FIRST"));
    assert_eq!(got, want);
}
