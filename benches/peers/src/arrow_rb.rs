//! Workloads (j) and (k): hits as Arrow RecordBatches (issue 17, part 4).
//!
//! (j) reads the hits rows into RecordBatches with chnative-arrow (`query_arrow`),
//! clickhouse-arrow, and the server's own HTTP `FORMAT ArrowStream` read by
//! pyarrow (arrow_http.py, one process per round: its CPU and allocations are
//! measured inside it, after start-up), next to chnative's column tier. (k)
//! inserts the same rows from RecordBatches (chnative-arrow's `ArrowInsert`,
//! many batches in one INSERT; clickhouse-arrow: one batch, its insert's input)
//! next to the column tier's `insert_blocks`. Both need the `arrow` feature.

#[cfg(feature = "arrow")]
pub use real::*;

#[cfg(not(feature = "arrow"))]
pub async fn run(
    _o: &crate::Opts,
    _env: &crate::Env,
    _res: &mut crate::Results,
    _admin: &mut chnative::Client,
    _kinds: &[crate::Kind],
) -> crate::Res<()> {
    Err("workloads (j) and (k) need the `arrow` feature: cargo run --release --features arrow".into())
}

#[cfg(feature = "arrow")]
mod real {
    use arrow_array_59::cast::AsArray;
    use arrow_array_59::types::*;
    use arrow_array_59::{Array, RecordBatch};
    use arrow_schema_59::{DataType as A, TimeUnit};

    use crate::hits::sum_ints;
    use crate::{ch_block_sum, human_count, peer_arrow, stored_sum, table_sum, Env, Kind, Meter, Opts, Res, Results};
    use crate::{Sample, ARW_LZ4, ARW_NONE};

    /// The pyarrow reader's label.
    pub const PYARROW: &str = "pyarrow (server's HTTP ArrowStream)";
    /// chnative-arrow's labels, by compression.
    pub const CHA: [(&str, &str); 2] = [("chnative-arrow, no compression", "none"), ("chnative-arrow, LZ4", "lz4")];
    /// The column tier's labels, by compression.
    pub const COLS: [(&str, &str); 2] =
        [("chnative columns, no compression", "none"), ("chnative columns, LZ4", "lz4")];

    /// The bench checksum over a chnative-arrow batch (every value touched, as the
    /// other clients do): integers sign-extended, dates in days, times in seconds,
    /// string lengths.
    pub fn batch_sum(b: &RecordBatch) -> Res<u64> {
        let mut s = 0u64;
        for a in b.columns() {
            s = s.wrapping_add(match a.data_type() {
                A::Int16 => sum_ints(a.as_primitive::<Int16Type>().values().iter().map(|&x| x as i64)),
                A::Int32 => sum_ints(a.as_primitive::<Int32Type>().values().iter().map(|&x| x as i64)),
                A::Int64 => sum_ints(a.as_primitive::<Int64Type>().values().iter().copied()),
                A::Date32 => a.as_primitive::<Date32Type>().values().iter().map(|&x| x as u64).sum(),
                A::Timestamp(TimeUnit::Second, _) => {
                    a.as_primitive::<TimestampSecondType>().values().iter().map(|&x| x as u64).sum()
                }
                A::Utf8 => {
                    let v = a.as_string::<i32>();
                    (0..v.len()).map(|i| v.value(i).len() as u64).sum()
                }
                other => return Err(format!("chnative-arrow: type {other} not handled by the bench").into()),
            });
        }
        Ok(s)
    }

    fn python() -> String {
        std::env::var("CHNATIVE_PYTHON").unwrap_or_else(|_| {
            let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
            format!("{home}/.cache/chnative/venv-chdb-26.9.0/bin/python")
        })
    }

    /// One pyarrow read in its own process; its figures come from inside it.
    fn pyarrow_read(env: &Env, sql: &str) -> Res<(Sample, u64)> {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/arrow_http.py");
        let out = std::process::Command::new(python())
            .args([script, &env.host, &env.http.to_string(), sql])
            .output()
            .map_err(|e| format!("{}: {e} (set CHNATIVE_PYTHON to a python with pyarrow and numpy)", python()))?;
        if !out.status.success() {
            return Err(format!("arrow_http.py: {}", String::from_utf8_lossy(&out.stderr)).into());
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let field = |name: &str| -> Res<f64> {
            let key = format!("\"{name}\": ");
            let at = text.find(&key).ok_or_else(|| format!("arrow_http.py printed no {name}: {text}"))? + key.len();
            let end = text[at..].find([',', '}']).map(|e| at + e).unwrap_or(text.len());
            Ok(text[at..end].trim().trim_matches('"').parse::<f64>()?)
        };
        // The checksum is a u64: parse it as an integer, not through f64.
        let sum_at = text.find("\"sum\": ").ok_or("arrow_http.py printed no sum")? + 7;
        let sum_end = text[sum_at..].find([',', '}']).map(|e| sum_at + e).unwrap_or(text.len());
        let sum: u64 = text[sum_at..sum_end].trim().parse()?;
        let s = Sample {
            wall: field("wall")?,
            cpu: field("cpu")?,
            // Arrow's pool, plus the Python bytes objects the body arrived in.
            bytes: (field("pool_bytes")? + field("body_bytes")?) as u64,
            allocs: field("pool_allocs")? as u64,
            ops: field("rows")? as u64,
            wire: None,
            lat: None,
        };
        Ok((s, sum))
    }

    /// (j) and (k).
    pub async fn run(o: &Opts, env: &Env, res: &mut Results, admin: &mut chnative::Client, kinds: &[Kind]) -> Res<()> {
        if o.only.contains('j') {
            read(o, env, res, admin, kinds).await?;
        }
        if o.only.contains('k') {
            insert(o, env, res, admin, kinds).await?;
        }
        Ok(())
    }

    async fn read(o: &Opts, env: &Env, res: &mut Results, admin: &mut chnative::Client, kinds: &[Kind]) -> Res<()> {
        let n = o.hits_rows;
        let sql = format!("SELECT * FROM hits LIMIT {n}");
        let w = format!("(j) read {} hits rows into RecordBatches", human_count(n));
        eprintln!("{w}");
        let mut cols = Vec::new();
        for (label, mode) in COLS {
            if o.runs(label) {
                cols.push((label, env.chnative(mode).await?));
            }
        }
        let mut cha = Vec::new();
        for (label, mode) in CHA {
            if o.runs(label) {
                cha.push((label, env.chnative(mode).await?));
            }
        }
        let mut arw = Vec::new();
        for (label, lz4) in [(ARW_NONE, false), (ARW_LZ4, true)] {
            if o.runs(label) {
                arw.push((label, peer_arrow::connect(&env.host, env.tcp, lz4).await?));
            }
        }
        for _ in 0..o.rounds {
            for (label, c) in &cols {
                let m = Meter::start();
                let mut s = c.stream(sql.as_str()).await?;
                let (mut rows, mut sum) = (0u64, 0u64);
                while let Some(block) = s.next().await? {
                    sum = sum.wrapping_add(ch_block_sum(block, kinds)?);
                    rows += block.rows() as u64;
                }
                drop(s);
                res.add(&w, label, m.stop(rows), sum);
            }
            for (label, c) in &cha {
                let m = Meter::start();
                let mut s = chnative_arrow::query_arrow(c, sql.as_str()).await?;
                let (mut rows, mut sum) = (0u64, 0u64);
                while let Some(b) = s.next().await? {
                    sum = sum.wrapping_add(batch_sum(&b)?);
                    rows += b.num_rows() as u64;
                }
                drop(s);
                res.add(&w, label, m.stop(rows), sum);
            }
            for (label, c) in &arw {
                let m = Meter::start();
                let (rows, sum) = peer_arrow::read_sum(c, &sql).await?;
                res.add(&w, label, m.stop(rows), sum);
            }
            if o.runs(PYARROW) {
                let (s, sum) = pyarrow_read(env, &sql)?;
                res.add(&w, PYARROW, s, sum);
            }
        }
        let (rows, want) = table_sum(admin, &format!("(SELECT * FROM hits LIMIT {n})"), kinds).await?;
        if rows != n {
            return Err(format!("hits has {rows} rows, expected {n}").into());
        }
        res.verify(&w, want)
    }

    async fn insert(o: &Opts, env: &Env, res: &mut Results, admin: &mut chnative::Client, kinds: &[Kind]) -> Res<()> {
        let n = o.hits_rows;
        let sql = format!("SELECT * FROM hits LIMIT {n}");
        let w = format!("(k) insert {} hits rows from RecordBatches", human_count(n));
        eprintln!("{w}");
        let (_, want) = table_sum(admin, &format!("({sql})"), kinds).await?;
        // Each client's input in its own form, made before any measurement.
        let src = env.chnative("none").await?;
        let mut blocks = Vec::new();
        {
            let mut s = src.stream(sql.as_str()).await?;
            while let Some(b) = s.next().await? {
                blocks.push(b.clone());
            }
        }
        let batches = chnative_arrow::query_arrow(&src, sql.as_str()).await?.collect().await?;
        let arw_batch = peer_arrow::read_batch(&peer_arrow::connect(&env.host, env.tcp, false).await?, &sql).await?;

        let s = crate::hits::structure();
        let null = format!("arrowbench_null_{}", std::process::id());
        let check = format!("arrowbench_check_{}", std::process::id());
        admin.execute(format!("CREATE TABLE {null} ({s}) ENGINE = Null").as_str()).await?;
        admin.execute(format!("CREATE TABLE {check} ({s}) ENGINE = Memory").as_str()).await?;
        let r = rounds(o, env, res, admin, kinds, &w, want, &null, &check, &blocks, &batches, &arw_batch).await;
        admin.execute(format!("DROP TABLE IF EXISTS {null}").as_str()).await?;
        admin.execute(format!("DROP TABLE IF EXISTS {check}").as_str()).await?;
        r
    }

    /// (k)'s verification inserts and measured rounds.
    #[allow(clippy::too_many_arguments)]
    async fn rounds(
        o: &Opts,
        env: &Env,
        res: &mut Results,
        admin: &mut chnative::Client,
        kinds: &[Kind],
        w: &str,
        want: u64,
        null: &str,
        check: &str,
        blocks: &[chnative::Block],
        batches: &[RecordBatch],
        arw_batch: &peer_arrow::Batch,
    ) -> Res<()> {
        let n = o.hits_rows;
        {
            // Once into a Memory table each, read back: what the server stored must sum to `want`.
            let mut verified: Vec<(&str, u64)> = Vec::new();
            for (label, mode) in COLS {
                if o.runs(label) {
                    admin.execute(format!("TRUNCATE TABLE {check}").as_str()).await?;
                    insert_blocks(&env.chnative(mode).await?, check, blocks).await?;
                    verified.push((label, stored_sum(admin, check, kinds, n).await?));
                }
            }
            for (label, mode) in CHA {
                if o.runs(label) {
                    admin.execute(format!("TRUNCATE TABLE {check}").as_str()).await?;
                    insert_batches(&env.chnative(mode).await?, check, batches).await?;
                    verified.push((label, stored_sum(admin, check, kinds, n).await?));
                }
            }
            for (label, lz4) in [(ARW_NONE, false), (ARW_LZ4, true)] {
                if o.runs(label) {
                    admin.execute(format!("TRUNCATE TABLE {check}").as_str()).await?;
                    let c = peer_arrow::connect(&env.host, env.tcp, lz4).await?;
                    peer_arrow::insert(&c, check, arw_batch.clone()).await?;
                    verified.push((label, stored_sum(admin, check, kinds, n).await?));
                }
            }
            admin.execute(format!("TRUNCATE TABLE {check}").as_str()).await?;
            let sum_of = |l: &str| verified.iter().find(|v| v.0 == l).map(|v| v.1).unwrap_or(u64::MAX);

            // The measured rounds, into the Null table, clients interleaved.
            let mut cols = Vec::new();
            for (label, mode) in COLS {
                if o.runs(label) {
                    cols.push((label, env.chnative(mode).await?));
                }
            }
            let mut cha = Vec::new();
            for (label, mode) in CHA {
                if o.runs(label) {
                    cha.push((label, env.chnative(mode).await?));
                }
            }
            let mut arw = Vec::new();
            for (label, lz4) in [(ARW_NONE, false), (ARW_LZ4, true)] {
                if o.runs(label) {
                    arw.push((label, peer_arrow::connect(&env.host, env.tcp, lz4).await?));
                }
            }
            for _ in 0..o.rounds {
                for (label, c) in &cols {
                    let m = Meter::start();
                    let rows = insert_blocks(c, null, blocks).await?;
                    res.add(w, label, m.stop(rows), sum_of(*label));
                }
                for (label, c) in &cha {
                    let m = Meter::start();
                    let rows = insert_batches(c, null, batches).await?;
                    res.add(w, label, m.stop(rows), sum_of(*label));
                }
                for (label, c) in &arw {
                    // Its insert takes the batch by value: the clone (Arc'd buffers) is outside the measurement.
                    let input = arw_batch.clone();
                    let m = Meter::start();
                    let rows = peer_arrow::insert(c, null, input).await?;
                    res.add(w, label, m.stop(rows), sum_of(*label));
                }
            }
            res.verify(w, want)
        }
    }

    async fn insert_blocks(c: &chnative::Client, table: &str, blocks: &[chnative::Block]) -> Res<u64> {
        let mut ins = c.insert_blocks(table).await?;
        for b in blocks {
            ins.write(b).await?;
        }
        Ok(ins.end().await?.rows)
    }

    async fn insert_batches(c: &chnative::Client, table: &str, batches: &[RecordBatch]) -> Res<u64> {
        let mut ins = chnative_arrow::ArrowInsert::open(c, table).await?;
        for b in batches {
            ins.write(b).await?;
        }
        Ok(ins.end().await?.rows)
    }
}
