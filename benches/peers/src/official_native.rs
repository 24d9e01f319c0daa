//! The official `clickhouse` crate's Native-over-HTTP mode (0.15.2+): reads with
//! `query(..).fetch_native()` (a `NativeCursor` of `native::Block`s, decoded a value at a time
//! through `Column::iter::<T>()`), inserts with `insert_native(table)` from a
//! `native::builder::BlockBuilder`.
//!
//! No compression: in 0.15.3 both `fetch_native` and `insert_native` switch the client's
//! compression off (`with_compression(Compression::None)`, a FIXME in query.rs and
//! insert_native.rs to use HTTP body compression instead), so an LZ4 client sends and receives
//! the same uncompressed bytes. The bench has one label for this mode.
//!
//! The crate decodes and encodes only the types it maps (mod.md): `Date` and `DateTime` have no
//! Rust type of their own, so the bench declares two newtypes through the crate's public
//! `Decode`/`Encode` traits (days as `u16`, seconds as `u32`, the wire layout).

use clickhouse::native::builder::BlockBuilder;
use clickhouse::native::decode::{Decode, ValueReader};
use clickhouse::native::encode::{Encode, ValueWriter};
use clickhouse::native::{Block, DataTypeNode};

use crate::hits::{Col, HitsData};
use crate::Res;

/// The label of this peer in every workload.
pub const LABEL: &str = "clickhouse (official, Native over HTTP), no compression (its only mode)";
/// (d) only: the `Block` built before timing, so only the send is measured.
pub const LABEL_PREBUILT: &str = "clickhouse (official, Native over HTTP), block built before timing";

type BoxedError = Box<dyn std::error::Error + Send + Sync>;

/// `Date`: days since 1970-01-01.
pub struct Days(pub u16);
/// `DateTime` (no time zone): Unix seconds.
pub struct Secs(pub u32);

impl<'a> Decode<'a> for Days {
    fn compatible(t: &DataTypeNode) -> bool {
        matches!(t.remove_compatible_wrappers(), DataTypeNode::Date)
    }
    fn decode(r: &mut ValueReader<'a>) -> Result<Self, BoxedError> {
        Ok(Days(u16::from_le_bytes(*r.read_bytes_fixed()?)))
    }
}

impl<'a> Decode<'a> for Secs {
    fn compatible(t: &DataTypeNode) -> bool {
        matches!(t.remove_compatible_wrappers(), DataTypeNode::DateTime(_))
    }
    fn decode(r: &mut ValueReader<'a>) -> Result<Self, BoxedError> {
        Ok(Secs(u32::from_le_bytes(*r.read_bytes_fixed()?)))
    }
}

impl Encode for Days {
    fn produces() -> DataTypeNode {
        DataTypeNode::Date
    }
    fn encode(&self, w: &mut ValueWriter<'_>) -> Result<(), BoxedError> {
        Ok(w.write_fixed(&self.0.to_le_bytes())?)
    }
}

impl Encode for Secs {
    fn produces() -> DataTypeNode {
        DataTypeNode::DateTime(None)
    }
    fn encode(&self, w: &mut ValueWriter<'_>) -> Result<(), BoxedError> {
        Ok(w.write_fixed(&self.0.to_le_bytes())?)
    }
}

/// Sums a column's values, each decoded through the crate's column iterator.
fn fold<'a, T: Decode<'a>>(col: &'a clickhouse::native::Column, f: impl Fn(T) -> u64) -> Res<u64> {
    let mut s = 0u64;
    for v in col.iter::<T>()? {
        s = s.wrapping_add(f(v?));
    }
    Ok(s)
}

/// The bench checksum of one block, every value decoded through the crate's column iterator:
/// integers sign-extended, dates as days, times as seconds, strings by length (as `&str`,
/// which the crate checks for UTF-8), exactly as the other clients sum them.
pub fn block_sum(b: &Block) -> Res<u64> {
    let mut s = 0u64;
    for col in b.columns() {
        s = s.wrapping_add(match col.data_type().remove_compatible_wrappers() {
            DataTypeNode::Int16 => fold(col, |x: i16| x as i64 as u64)?,
            DataTypeNode::Int32 => fold(col, |x: i32| x as i64 as u64)?,
            DataTypeNode::Int64 => fold(col, |x: i64| x as u64)?,
            DataTypeNode::UInt8 => fold(col, |x: u8| x as u64)?,
            DataTypeNode::UInt64 => fold(col, |x: u64| x)?,
            DataTypeNode::String => fold(col, |x: &str| x.len() as u64)?,
            DataTypeNode::Date => fold(col, |x: Days| x.0 as u64)?,
            DataTypeNode::DateTime(_) => fold(col, |x: Secs| x.0 as u64)?,
            other => return Err(format!("official Native: type {other} not handled by the bench").into()),
        });
    }
    Ok(s)
}

/// Runs `sql` through `fetch_native` and returns (rows, checksum of every value).
pub async fn read_sum(c: &clickhouse::Client, sql: &str) -> Res<(u64, u64)> {
    let mut cur = c.query(sql).fetch_native()?;
    let (mut rows, mut sum) = (0u64, 0u64);
    while let Some(b) = cur.next().await? {
        sum = sum.wrapping_add(block_sum(&b)?);
        rows += b.num_rows() as u64;
    }
    Ok((rows, sum))
}

/// Builds one `Block` of all of `d`'s rows from its borrowed columns (the crate copies every
/// value into its wire-layout buffers: this is its encoding step).
pub fn build(d: &HitsData) -> Res<Block> {
    let mut b = BlockBuilder::new();
    for ((name, _, _), col) in crate::hits::schema().iter().zip(&d.cols) {
        match col {
            Col::I16(v) => {
                b.upsert_column::<i16>(*name)?.add_all(v.iter().copied())?;
            }
            Col::I32(v) => {
                b.upsert_column::<i32>(*name)?.add_all(v.iter().copied())?;
            }
            Col::I64(v) => {
                b.upsert_column::<i64>(*name)?.add_all(v.iter().copied())?;
            }
            Col::Str(v) => {
                b.upsert_column::<&str>(*name)?.add_all(v.iter().map(String::as_str))?;
            }
            Col::Date(v) => {
                b.upsert_column::<Days>(*name)?.add_all(v.iter().map(|&x| Days(x)))?;
            }
            Col::DateTime(v) => {
                b.upsert_column::<Secs>(*name)?.add_all(v.iter().map(|&x| Secs(x)))?;
            }
        }
    }
    Ok(b.build()?)
}

/// Sends `block` with `insert_native` into `table`; returns its rows.
pub async fn send(c: &clickhouse::Client, table: &str, block: &Block) -> Res<u64> {
    let mut ins = c.insert_native(table).with_setting("async_insert", "0");
    ins.write(block).await?;
    ins.end().await?;
    Ok(block.num_rows() as u64)
}

/// Builds the block from `d` and sends it (what the measured insert does).
pub async fn insert(c: &clickhouse::Client, table: &str, d: &HitsData) -> Res<u64> {
    let block = build(d)?;
    send(c, table, &block).await
}
