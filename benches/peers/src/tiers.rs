//! Workloads (h) and (i): the same hits rows through chnative's three tiers (columns,
//! typed rows with owned or borrowed strings, dynamic `Value` rows) next to the official
//! crate's derive Row, uncompressed, so the difference is the row mapping itself.

use crate::ch_rows::{ChBorrowed, ChOwned};
use crate::hits::Kind;
use crate::rows::OfficialRow;
use crate::{ch_block_sum, human_count, off_insert, stored_sum, table_sum, Env, Meter, Opts, Res, Results, OFF_NONE};

const COLUMNS: &str = "chnative columns (borrowed blocks), no compression";
const TYPED_OWNED: &str = "chnative typed rows (String fields), no compression";
const TYPED_BORROWED: &str = "chnative typed rows (&str fields), no compression";
const DYNAMIC: &str = "chnative dynamic rows (Value), no compression";
const INSERTER: &str = "chnative inserter::<T> (typed rows), no compression";
const INSERT_COLUMNS: &str = "chnative insert of columns, no compression";

/// The bench checksum of a dynamic row (the same rule as the other clients').
fn value_sum(row: &chnative::ValueRow) -> Res<u64> {
    use chnative::Value as V;
    let mut s = 0u64;
    for v in row.values() {
        s = s.wrapping_add(match v {
            V::Int16(x) => *x as i64 as u64,
            V::Int32(x) => *x as i64 as u64,
            V::Int64(x) => *x as u64,
            V::String(b) => b.len() as u64,
            V::Date(d) => *d as u64,
            V::DateTime { secs, .. } => *secs as u64,
            v => return Err(format!("unexpected value {v:?} in hits").into()),
        });
    }
    Ok(s)
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
        if o.runs(TYPED_OWNED) {
            let m = Meter::start();
            let mut s = c.query::<ChOwned>(sql.as_str()).await?;
            let (mut rows, mut sum) = (0u64, 0u64);
            while let Some(r) = s.next().await? {
                sum = sum.wrapping_add(r.checksum());
                rows += 1;
            }
            drop(s);
            res.add(&w, TYPED_OWNED, m.stop(rows), sum);
        }
        if o.runs(TYPED_BORROWED) {
            let m = Meter::start();
            let mut s = c.query::<ChBorrowed<'_>>(sql.as_str()).await?;
            let (mut rows, mut sum) = (0u64, 0u64);
            while let Some(r) = s.next().await? {
                sum = sum.wrapping_add(r.checksum());
                rows += 1;
            }
            drop(s);
            res.add(&w, TYPED_BORROWED, m.stop(rows), sum);
        }
        if o.runs(DYNAMIC) {
            let m = Meter::start();
            let mut s = c.query_rows(sql.as_str()).await?;
            let (mut rows, mut sum) = (0u64, 0u64);
            while let Some(r) = s.next().await? {
                sum = sum.wrapping_add(value_sum(&r)?);
                rows += 1;
            }
            drop(s);
            res.add(&w, DYNAMIC, m.stop(rows), sum);
        }
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
    }
    let (rows, want) = table_sum(admin, &format!("(SELECT * FROM hits LIMIT {n})"), kinds).await?;
    if rows != n {
        return Err(format!("hits has {rows} rows, expected {n}").into());
    }
    res.verify(&w, want)
}

async fn inserter(c: &chnative::Client, table: &str, rows: &[ChBorrowed<'_>]) -> Res<u64> {
    let mut ins = c.inserter::<ChBorrowed<'_>>(table).await?;
    for r in rows {
        ins.write(r).await?;
    }
    Ok(ins.end().await?.rows)
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
    let ch_rows: Vec<ChBorrowed<'_>> = (0..data.rows).map(|i| ChBorrowed::of(&data, i)).collect();
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
