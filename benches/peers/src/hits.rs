//! The hits schema (shared/data/hits_columns.tsv) and an owned, columnar copy
//! of some of its rows that every client's insert starts from.

/// The column types the hits schema uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    I16,
    I32,
    I64,
    Str,
    Date,
    DateTime,
}

/// `(name, ClickHouse type, kind)` of the 105 columns, in table order.
pub fn schema() -> Vec<(&'static str, &'static str, Kind)> {
    include_str!("../hits_columns.tsv")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let mut f = l.split('\t');
            let name = f.next().unwrap();
            let ty = f.next().unwrap();
            let kind = match ty {
                "Int16" => Kind::I16,
                "Int32" => Kind::I32,
                "Int64" => Kind::I64,
                "String" => Kind::Str,
                "Date" => Kind::Date,
                "DateTime" => Kind::DateTime,
                other => panic!("hits_columns.tsv: type {other} is not handled by the bench"),
            };
            (name, ty, kind)
        })
        .collect()
}

/// `name Type, …` for CREATE TABLE and generateRandom.
pub fn structure() -> String {
    schema().iter().map(|(n, t, _)| format!("{n} {t}")).collect::<Vec<_>>().join(", ")
}

/// One owned column.
#[derive(Clone)]
pub enum Col {
    I16(Vec<i16>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    Str(Vec<String>),
    /// Days since 1970-01-01.
    Date(Vec<u16>),
    /// Unix seconds.
    DateTime(Vec<u32>),
}

/// Some rows of hits, column by column.
pub struct HitsData {
    pub cols: Vec<Col>,
    pub rows: usize,
}

impl HitsData {
    pub fn i16(&self, c: usize) -> &[i16] {
        match &self.cols[c] {
            Col::I16(v) => v,
            _ => panic!("column {c} is not Int16"),
        }
    }
    pub fn i32(&self, c: usize) -> &[i32] {
        match &self.cols[c] {
            Col::I32(v) => v,
            _ => panic!("column {c} is not Int32"),
        }
    }
    pub fn i64(&self, c: usize) -> &[i64] {
        match &self.cols[c] {
            Col::I64(v) => v,
            _ => panic!("column {c} is not Int64"),
        }
    }
    pub fn str(&self, c: usize) -> &[String] {
        match &self.cols[c] {
            Col::Str(v) => v,
            _ => panic!("column {c} is not String"),
        }
    }
    pub fn date(&self, c: usize) -> &[u16] {
        match &self.cols[c] {
            Col::Date(v) => v,
            _ => panic!("column {c} is not Date"),
        }
    }
    pub fn datetime(&self, c: usize) -> &[u32] {
        match &self.cols[c] {
            Col::DateTime(v) => v,
            _ => panic!("column {c} is not DateTime"),
        }
    }

    /// The bench checksum: every integer (sign-extended), date and time value
    /// plus every string's length, wrapping.
    pub fn checksum(&self) -> u64 {
        let mut s = 0u64;
        for c in &self.cols {
            s = s.wrapping_add(match c {
                Col::I16(v) => sum_ints(v.iter().map(|&x| x as i64)),
                Col::I32(v) => sum_ints(v.iter().map(|&x| x as i64)),
                Col::I64(v) => sum_ints(v.iter().copied()),
                Col::Str(v) => v.iter().map(|x| x.len() as u64).sum(),
                Col::Date(v) => v.iter().map(|&x| x as u64).sum(),
                Col::DateTime(v) => v.iter().map(|&x| x as u64).sum(),
            });
        }
        s
    }
}

pub fn sum_ints(it: impl Iterator<Item = i64>) -> u64 {
    it.fold(0u64, |a, x| a.wrapping_add(x as u64))
}

/// The first `rows` rows of the hits table as owned columns (the insert workloads' input).
pub async fn load(c: &chnative::Client, rows: usize) -> chnative::Result<HitsData> {
    let schema = schema();
    let mut cols: Vec<Col> = schema
        .iter()
        .map(|(_, _, k)| match k {
            Kind::I16 => Col::I16(Vec::new()),
            Kind::I32 => Col::I32(Vec::new()),
            Kind::I64 => Col::I64(Vec::new()),
            Kind::Str => Col::Str(Vec::new()),
            Kind::Date => Col::Date(Vec::new()),
            Kind::DateTime => Col::DateTime(Vec::new()),
        })
        .collect();
    let mut s = c.fetch_blocks(format!("SELECT * FROM hits LIMIT {rows}")).await?;
    let mut n = 0;
    while let Some(block) = s.next().await? {
        for (col, dst) in block.columns().iter().zip(cols.iter_mut()) {
            let v = col.view();
            match dst {
                Col::I16(d) => d.extend_from_slice(v.values::<i16>()?),
                Col::I32(d) => d.extend_from_slice(v.values::<i32>()?),
                Col::I64(d) => d.extend_from_slice(v.values::<i64>()?),
                Col::Date(d) => d.extend_from_slice(v.values::<u16>()?),
                Col::DateTime(d) => d.extend_from_slice(v.values::<u32>()?),
                Col::Str(d) => {
                    let strs = v.as_strings()?;
                    d.extend((0..strs.len()).map(|i| String::from_utf8_lossy(strs.bytes(i)).into_owned()));
                }
            }
        }
        n += block.rows();
    }
    Ok(HitsData { cols, rows: n })
}

/// The bench checksum of a hits block read by chnative: integers summed, strings by length.
pub fn block_sum(block: &chnative::Block, kinds: &[Kind]) -> chnative::Result<u64> {
    let mut s = 0u64;
    for (col, kind) in block.columns().iter().zip(kinds) {
        let v = col.view();
        s = s.wrapping_add(match kind {
            Kind::I16 => sum_ints(v.values::<i16>()?.iter().map(|&x| x as i64)),
            Kind::I32 => sum_ints(v.values::<i32>()?.iter().map(|&x| x as i64)),
            Kind::I64 => sum_ints(v.values::<i64>()?.iter().copied()),
            Kind::Date => v.values::<u16>()?.iter().map(|&x| x as u64).sum(),
            Kind::DateTime => v.values::<u32>()?.iter().map(|&x| x as u64).sum(),
            Kind::Str => {
                let strs = v.as_strings()?;
                (0..strs.len()).map(|i| strs.bytes(i).len() as u64).sum()
            }
        });
    }
    Ok(s)
}

/// Inserts `d` into `table` through chnative's column tier; returns the rows sent.
pub async fn insert_columns(c: &chnative::Client, table: &str, d: &HitsData) -> chnative::Result<u64> {
    Ok(insert_summary(c, table, d).await?.rows)
}

/// Inserts `d` into `table` through chnative's column tier; returns what the INSERT did.
pub async fn insert_summary(
    c: &chnative::Client,
    table: &str,
    d: &HitsData,
) -> chnative::Result<chnative::InsertSummary> {
    let schema = schema();
    let mut ins = c.insert(table);
    for ((name, _, _), col) in schema.iter().zip(&d.cols) {
        ins = match col {
            Col::I16(v) => ins.column(name, v.as_slice()),
            Col::I32(v) => ins.column(name, v.as_slice()),
            Col::I64(v) => ins.column(name, v.as_slice()),
            Col::Str(v) => ins.column(name, v.as_slice()),
            Col::Date(v) => ins.column(name, v.as_slice()),
            Col::DateTime(v) => ins.column(name, v.as_slice()),
        };
    }
    ins.send().await
}

/// Creates and fills `hits` with exactly `rows` rows unless it has them
/// (`SELECT * … LIMIT n` of a bigger table is not the same rows every time).
pub async fn ensure(c: &chnative::Client, rows: u64) -> chnative::Result<()> {
    let exists: u64 = c
        .fetch_scalar("SELECT count() FROM system.tables WHERE database = currentDatabase() AND name = 'hits'")
        .await?;
    let have: u64 = if exists > 0 { c.fetch_scalar("SELECT count() FROM hits").await? } else { 0 };
    if have == rows {
        return Ok(());
    }
    eprintln!("filling hits with {rows} rows (generateRandom, seed 42)…");
    let s = structure();
    c.execute("DROP TABLE IF EXISTS hits").await?;
    c.execute(format!("CREATE TABLE hits ({s}) ENGINE = MergeTree ORDER BY tuple()").as_str()).await?;
    c.execute(format!("INSERT INTO hits SELECT * FROM generateRandom('{s}', 42, 40, 4) LIMIT {rows}").as_str()).await?;
    Ok(())
}
