//! chnative's row tiers in every workload: typed rows (`#[derive(Row)]`, owned or borrowed
//! strings) and dynamic `Value` rows, next to the column tier, always uncompressed so the
//! difference is the row mapping itself. Workload (h) reads hits by tier next to the
//! official crate's derive Row, (i) inserts hits from typed rows; the other workloads call
//! the per-round helpers here with labels of their own.

use std::sync::Arc;

use crate::ch_rows::{ChBorrowed, ChOwned};
use crate::hits::{Col, HitsData, Kind};
use crate::rows::OfficialRow;
use crate::{ch_block_sum, human_count, off_insert, stored_sum, table_sum, Env, Meter, Opts, Res, Results, OFF_NONE};

const COLUMNS: &str = "chnative columns (borrowed blocks), no compression";
/// Typed rows with owned `String` fields (hits, strings).
pub const TYPED_OWNED: &str = "chnative typed rows (String fields), no compression";
/// Typed rows with borrowed `&str` fields (hits, strings).
pub const TYPED_BORROWED: &str = "chnative typed rows (&str fields), no compression";
/// Typed rows with borrowed `&str` fields, a block at a time (`next_block`).
pub const TYPED_BORROWED_BLOCKS: &str = "chnative typed rows (&str fields, next_block), no compression";
/// Typed rows of one `u64` field (numbers).
pub const TYPED_U64: &str = "chnative typed rows (u64 field), no compression";
/// Typed rows of one `u64` field, a block at a time (`next_block`).
pub const TYPED_U64_BLOCKS: &str = "chnative typed rows (u64 field, next_block), no compression";
/// Dynamic rows, read with `query_rows`.
pub const DYNAMIC: &str = "chnative dynamic rows (Value), no compression";
/// `SELECT 1` as a typed row of one `u8` field (`fetch_one`).
pub const FETCH_ONE: &str = "chnative typed rows (fetch_one), no compression";
/// `SELECT 1` as dynamic rows (`fetch_all_rows`).
pub const FETCH_ALL_ROWS: &str = "chnative dynamic rows (fetch_all_rows), no compression";
/// Insert through `inserter::<T>` (its default block of 100,000 rows).
pub const INSERTER: &str = "chnative inserter::<T> (typed rows), no compression";
/// Insert through one `inserter::<T>` kept open across inserts (`flush` after the rows;
/// the buffers of the previous insert are reused).
pub const INSERTER_KEPT: &str = "chnative inserter::<T> kept open (buffers reused), no compression";
/// Insert through `insert_rows` (one INSERT of all the rows).
pub const INSERT_ROWS: &str = "chnative insert_rows (typed rows), no compression";
/// Insert through `insert_value_rows` (dynamic rows).
pub const INSERT_VALUES: &str = "chnative insert_value_rows (dynamic rows), no compression";
const INSERT_COLUMNS: &str = "chnative insert of columns, no compression";

/// The row tiers of the hits reads, in the order they run.
pub const HITS_READS: [&str; 4] = [TYPED_OWNED, TYPED_BORROWED, TYPED_BORROWED_BLOCKS, DYNAMIC];
/// The row tiers of the one-column reads (numbers, strings).
pub const NUMBER_READS: [&str; 3] = [TYPED_U64, TYPED_U64_BLOCKS, DYNAMIC];
/// The row tiers of the string reads.
pub const STRING_READS: [&str; 4] = [TYPED_OWNED, TYPED_BORROWED, TYPED_BORROWED_BLOCKS, DYNAMIC];
/// The row tiers of the hits inserts.
pub const INSERTS: [&str; 3] = [INSERTER, INSERT_ROWS, INSERT_VALUES];
/// The row tiers of `SELECT 1`.
pub const SELECT1: [&str; 2] = [FETCH_ONE, FETCH_ALL_ROWS];

#[derive(chnative::Row)]
struct Number {
    number: u64,
}

#[derive(chnative::Row)]
struct StrBorrowed<'a> {
    s: &'a str,
}

#[derive(chnative::Row)]
struct StrOwned {
    s: String,
}

#[derive(chnative::Row)]
struct One {
    x: u8,
}

/// The bench checksum of a dynamic row (the same rule as the other clients').
fn value_sum(row: &chnative::ValueRow) -> Res<u64> {
    use chnative::Value as V;
    let mut s = 0u64;
    for v in row.values() {
        s = s.wrapping_add(match v {
            V::Int16(x) => *x as i64 as u64,
            V::Int32(x) => *x as i64 as u64,
            V::Int64(x) => *x as u64,
            V::UInt8(x) => *x as u64,
            V::UInt64(x) => *x,
            V::String(b) => b.len() as u64,
            V::Date(d) => *d as u64,
            V::DateTime { secs, .. } => *secs as u64,
            v => return Err(format!("unexpected value {v:?}").into()),
        });
    }
    Ok(s)
}

/// Reads `sql` as dynamic rows: (rows, checksum).
async fn read_dynamic(c: &chnative::Client, sql: &str) -> Res<(u64, u64)> {
    let mut s = c.query_rows(sql).await?;
    let (mut rows, mut sum) = (0u64, 0u64);
    while let Some(r) = s.next().await? {
        sum = sum.wrapping_add(value_sum(&r)?);
        rows += 1;
    }
    Ok((rows, sum))
}

/// Measures each row tier in `labels` that `--filter` selects reading `sql` (hits
/// rows) on `c` once, as workload `w`.
pub async fn read_hits_round(o: &Opts, c: &chnative::Client, sql: &str, w: &str, res: &mut Results) -> Res<()> {
    for label in HITS_READS {
        if !o.runs(label) {
            continue;
        }
        let m = Meter::start();
        let (mut rows, mut sum) = (0u64, 0u64);
        match label {
            TYPED_OWNED => {
                let mut s = c.query::<ChOwned>(sql).await?;
                while let Some(r) = s.next().await? {
                    sum = sum.wrapping_add(r.checksum());
                    rows += 1;
                }
            }
            TYPED_BORROWED => {
                let mut s = c.query::<ChBorrowed<'_>>(sql).await?;
                while let Some(r) = s.next().await? {
                    sum = sum.wrapping_add(r.checksum());
                    rows += 1;
                }
            }
            TYPED_BORROWED_BLOCKS => {
                let mut s = c.query::<ChBorrowed<'_>>(sql).await?;
                while let Some(block) = s.next_block().await? {
                    for r in block {
                        sum = sum.wrapping_add(r?.checksum());
                        rows += 1;
                    }
                }
            }
            _ => (rows, sum) = read_dynamic(c, sql).await?,
        }
        res.add(w, label, m.stop(rows), sum);
    }
    Ok(())
}

/// Like [`read_hits_round`] for the one-column results of (b) (`number UInt64`) and
/// (c) (`s String`; the checksum sums the lengths).
pub async fn read_column_round(
    o: &Opts,
    c: &chnative::Client,
    sql: &str,
    w: &str,
    res: &mut Results,
    strings: bool,
) -> Res<()> {
    let labels: &[&str] = if strings { &STRING_READS } else { &NUMBER_READS };
    for &label in labels {
        if !o.runs(label) {
            continue;
        }
        let m = Meter::start();
        let (mut rows, mut sum) = (0u64, 0u64);
        match label {
            TYPED_U64 => {
                let mut s = c.query::<Number>(sql).await?;
                while let Some(r) = s.next().await? {
                    sum = sum.wrapping_add(r.number);
                    rows += 1;
                }
            }
            TYPED_U64_BLOCKS => {
                let mut s = c.query::<Number>(sql).await?;
                while let Some(block) = s.next_block().await? {
                    for r in block {
                        sum = sum.wrapping_add(r?.number);
                        rows += 1;
                    }
                }
            }
            TYPED_OWNED => {
                let mut s = c.query::<StrOwned>(sql).await?;
                while let Some(r) = s.next().await? {
                    sum = sum.wrapping_add(r.s.len() as u64);
                    rows += 1;
                }
            }
            TYPED_BORROWED => {
                let mut s = c.query::<StrBorrowed<'_>>(sql).await?;
                while let Some(r) = s.next().await? {
                    sum = sum.wrapping_add(r.s.len() as u64);
                    rows += 1;
                }
            }
            TYPED_BORROWED_BLOCKS => {
                let mut s = c.query::<StrBorrowed<'_>>(sql).await?;
                while let Some(block) = s.next_block().await? {
                    for r in block {
                        sum = sum.wrapping_add(r?.s.len() as u64);
                        rows += 1;
                    }
                }
            }
            _ => (rows, sum) = read_dynamic(c, sql).await?,
        }
        res.add(w, label, m.stop(rows), sum);
    }
    Ok(())
}

/// `q` queries of `sql` (which returns one row, one UInt8 column `x`) through the row tier
/// `label` (one of [`SELECT1`]); returns the client and the sum of what they returned.
pub async fn select1(
    c: chnative::Client,
    q: usize,
    sql: &'static str,
    label: &'static str,
) -> (chnative::Client, Res<u64>) {
    let mut s = 0u64;
    let mut lat = crate::LAT.take();
    for _ in 0..q {
        let r: Res<u64> = if label == FETCH_ONE {
            crate::timed(&mut lat, c.fetch_one::<One>(sql)).await.map(|r| r.x as u64).map_err(Into::into)
        } else {
            match crate::timed(&mut lat, c.fetch_all_rows(sql)).await {
                Ok(rows) => rows.iter().try_fold(0u64, |a, r| value_sum(r).map(|x| a.wrapping_add(x))),
                Err(e) => Err(e.into()),
            }
        };
        match r {
            Ok(x) => s = s.wrapping_add(x),
            Err(e) => return (c, Err(e)),
        }
    }
    crate::LAT.give(lat);
    (c, Ok(s))
}

/// The input of the typed-row inserts: one borrowed row per row of `d`.
pub fn typed_rows(d: &HitsData) -> Vec<ChBorrowed<'_>> {
    (0..d.rows).map(|i| ChBorrowed::of(d, i)).collect()
}

/// The input of the dynamic-row insert: one `ValueRow` per row of `d`, named by the schema.
pub fn value_rows(d: &HitsData) -> Res<Vec<chnative::ValueRow>> {
    use chnative::Value as V;
    let names: Arc<[String]> = crate::hits::schema().iter().map(|c| c.0.to_string()).collect();
    let utc: Arc<str> = Arc::from("UTC");
    let mut rows: Vec<Vec<V>> = (0..d.rows).map(|_| Vec::with_capacity(d.cols.len())).collect();
    for col in &d.cols {
        for (i, row) in rows.iter_mut().enumerate() {
            row.push(match col {
                Col::I16(v) => V::Int16(v[i]),
                Col::I32(v) => V::Int32(v[i]),
                Col::I64(v) => V::Int64(v[i]),
                Col::Str(v) => V::String(v[i].as_bytes().to_vec()),
                Col::Date(v) => V::Date(v[i]),
                Col::DateTime(v) => V::DateTime { secs: v[i], tz: utc.clone() },
            });
        }
    }
    Ok(rows.into_iter().map(|v| chnative::ValueRow::new(names.clone(), v)).collect::<chnative::row::RowResult<Vec<_>>>()?)
}

async fn inserter(c: &chnative::Client, table: &str, rows: &[ChBorrowed<'_>]) -> Res<u64> {
    let mut ins = c.inserter::<ChBorrowed<'_>>(table).await?;
    for r in rows {
        ins.write(r).await?;
    }
    Ok(ins.end().await?.rows)
}

/// Writes the rows to a kept-open inserter and flushes; returns the rows written.
pub async fn write_all<'a>(ins: &mut chnative::Inserter<'_, ChBorrowed<'a>>, rows: &[ChBorrowed<'a>]) -> Res<u64> {
    for r in rows {
        ins.write(r).await?;
    }
    ins.flush().await?;
    Ok(rows.len() as u64)
}

/// Inserts the rows into `table` through the row tier `label` (one of [`INSERTS`]):
/// `typed` for the typed tiers, `values` for the dynamic one.
pub async fn insert_hits(
    label: &str,
    c: &chnative::Client,
    table: &str,
    typed: &[ChBorrowed<'_>],
    values: &[chnative::ValueRow],
) -> Res<u64> {
    Ok(match label {
        INSERTER => inserter(c, table, typed).await?,
        INSERT_ROWS => c.insert_rows(table, typed).await?.rows,
        INSERT_VALUES => c.insert_value_rows(table, values).await?.rows,
        other => return Err(format!("{other}: not a row insert").into()),
    })
}

/// (h): read `hits_rows` rows by tier.
pub async fn read(o: &Opts, env: &Env, res: &mut Results, admin: &mut chnative::Client, kinds: &[Kind]) -> Res<()> {
    let n = o.hits_rows;
    let sql = format!("SELECT * FROM hits LIMIT {n}");
    let w = format!("(h) read {} hits rows × 105 columns, by tier", human_count(n));
    eprintln!("{w}");
    let c = env.chnative("none").await?;
    let off = env.official(false);
    for _ in 0..o.rounds {
        if o.runs(COLUMNS) {
            let m = Meter::start();
            let mut s = c.stream(sql.as_str()).await?;
            let (mut rows, mut sum) = (0u64, 0u64);
            while let Some(block) = s.next().await? {
                sum = sum.wrapping_add(ch_block_sum(block, kinds)?);
                rows += block.rows() as u64;
            }
            drop(s);
            res.add(&w, COLUMNS, m.stop(rows), sum);
        }
        read_hits_round(o, &c, &sql, &w, res).await?;
        if o.runs(OFF_NONE) {
            let m = Meter::start();
            let mut cur = off.query(&sql).fetch::<OfficialRow<'_>>()?;
            let (mut rows, mut sum) = (0u64, 0u64);
            while let Some(r) = cur.next().await? {
                sum = sum.wrapping_add(r.checksum());
                rows += 1;
            }
            res.add(&w, OFF_NONE, m.stop(rows), sum);
        }
        if o.runs(crate::official_native::LABEL) {
            let m = Meter::start();
            let (rows, sum) = crate::official_native::read_sum(&off, &sql).await?;
            res.add(&w, crate::official_native::LABEL, m.stop(rows), sum);
        }
    }
    let (rows, want) = table_sum(admin, &format!("(SELECT * FROM hits LIMIT {n})"), kinds).await?;
    if rows != n {
        return Err(format!("hits has {rows} rows, expected {n}").into());
    }
    res.verify(&w, want)
}

/// (i): insert `insert_rows` rows from a `Vec` of typed rows (chnative's inserter with its
/// default block of 100,000 rows, the official crate's inserter), into a Null table.
pub async fn insert(o: &Opts, env: &Env, res: &mut Results, admin: &mut chnative::Client, kinds: &[Kind]) -> Res<()> {
    let data = crate::hits::load(admin, o.insert_rows).await?;
    let n = data.rows as u64;
    let want = data.checksum();
    let s = crate::hits::structure();
    let null = format!("hits_tiers_null_{}", std::process::id());
    let check = format!("hits_tiers_check_{}", std::process::id());
    admin.execute(format!("CREATE TABLE {null} ({s}) ENGINE = Null").as_str()).await?;
    admin.execute(format!("CREATE TABLE {check} ({s}) ENGINE = Memory").as_str()).await?;
    let ch_rows = typed_rows(&data);
    let off_rows: Vec<OfficialRow<'_>> = (0..data.rows).map(|i| OfficialRow::of(&data, i)).collect();
    let w = format!("(i) insert {} hits rows from typed rows", human_count(n));
    eprintln!("{w}");
    let c = env.chnative("none").await?;
    let admin_c = env.chnative("none").await?;
    let off = env.official(false);
    let result: Res<()> = async {
        // Each path once into a Memory table, read back: what the rounds' checksum claims.
        let mut verified = Vec::new();
        for label in [INSERTER, INSERT_COLUMNS, OFF_NONE] {
            if !o.runs(label) {
                continue;
            }
            admin.execute(format!("TRUNCATE TABLE {check}").as_str()).await?;
            match label {
                INSERTER => inserter(&c, &check, &ch_rows).await?,
                INSERT_COLUMNS => crate::hits::insert_columns(&admin_c, &check, &data).await?,
                _ => off_insert(&off, &check, &off_rows).await?,
            };
            verified.push((label, stored_sum(admin, &check, kinds, n).await?));
        }
        for _ in 0..o.rounds {
            for &(label, sum) in &verified {
                let m = Meter::start();
                let rows = match label {
                    INSERTER => inserter(&c, &null, &ch_rows).await?,
                    INSERT_COLUMNS => crate::hits::insert_columns(&admin_c, &null, &data).await?,
                    _ => off_insert(&off, &null, &off_rows).await?,
                };
                res.add(&w, label, m.stop(rows), sum);
            }
        }
        res.verify(&w, want)
    }
    .await;
    admin.execute(format!("DROP TABLE IF EXISTS {null}").as_str()).await?;
    admin.execute(format!("DROP TABLE IF EXISTS {check}").as_str()).await?;
    result
}
