//! clickhouse-arrow as a peer, behind the `arrow` feature (its build is the
//! longest by far). Without the feature the same functions exist but no
//! client is ever made (`AVAILABLE` is false).

#[cfg(feature = "arrow")]
pub use real::*;
#[cfg(not(feature = "arrow"))]
pub use stub::*;

#[cfg(feature = "arrow")]
mod real {
    use std::sync::Arc;

    use futures_util::StreamExt;

    use crate::hits::{self, sum_ints, Col, HitsData};
    use crate::Res;

    pub const AVAILABLE: bool = true;
    pub type Client = clickhouse_arrow::ArrowClient;
    pub type Batch = arrow::record_batch::RecordBatch;

    pub async fn connect(host: &str, tcp: u16, lz4: bool) -> Res<Client> {
        use clickhouse_arrow::CompressionMethod;
        let mut b = clickhouse_arrow::Client::<clickhouse_arrow::ArrowFormat>::builder()
            .with_endpoint(format!("{host}:{tcp}"))
            .with_username("default")
            .with_compression(if lz4 { CompressionMethod::LZ4 } else { CompressionMethod::None });
        if lz4 {
            // clickhouse-arrow 0.2.1 sends `network_compression_method` only for ZSTD; 26.9's
            // default is ZSTD, so without this the server answers an "LZ4" client in ZSTD frames
            // and its reader fails ("No active connection", 2026-12-02).
            b = b.with_setting("network_compression_method", "lz4");
        }
        Ok(b.build::<clickhouse_arrow::ArrowFormat>().await?)
    }

    /// Runs `sql` and returns (rows, bench checksum of every value).
    pub async fn read_sum(c: &Client, sql: &str) -> Res<(u64, u64)> {
        let mut st = c.query(sql, None).await?;
        let (mut rows, mut sum) = (0u64, 0u64);
        while let Some(b) = st.next().await {
            let b = b?;
            sum = sum.wrapping_add(batch_sum(&b)?);
            rows += b.num_rows() as u64;
        }
        Ok((rows, sum))
    }

    /// Reads `sql` into one batch (its insert's input in workload (k)).
    pub async fn read_batch(c: &Client, sql: &str) -> Res<Batch> {
        let mut st = c.query(sql, None).await?;
        let mut batches = Vec::new();
        while let Some(b) = st.next().await {
            batches.push(b?);
        }
        let schema = batches.first().ok_or("no batches")?.schema();
        Ok(arrow::compute::concat_batches(&schema, &batches)?)
    }

    pub fn batch_sum(batch: &Batch) -> Res<u64> {
        use arrow::array::{Array, AsArray};
        use arrow::datatypes::*;
        let mut s = 0u64;
        for a in batch.columns() {
            s = s.wrapping_add(match a.data_type() {
                DataType::Int16 => sum_ints(a.as_primitive::<Int16Type>().values().iter().map(|&x| x as i64)),
                DataType::Int32 => sum_ints(a.as_primitive::<Int32Type>().values().iter().map(|&x| x as i64)),
                DataType::Int64 => sum_ints(a.as_primitive::<Int64Type>().values().iter().copied()),
                DataType::UInt64 => {
                    a.as_primitive::<UInt64Type>().values().iter().fold(0u64, |x, &y| x.wrapping_add(y))
                }
                DataType::UInt8 => a.as_primitive::<UInt8Type>().values().iter().map(|&x| x as u64).sum(),
                DataType::Date32 => a.as_primitive::<Date32Type>().values().iter().map(|&x| x as u64).sum(),
                DataType::Timestamp(TimeUnit::Second, _) => {
                    a.as_primitive::<TimestampSecondType>().values().iter().map(|&x| x as u64).sum()
                }
                DataType::Binary => {
                    let b = a.as_binary::<i32>();
                    (0..b.len()).map(|i| b.value(i).len() as u64).sum()
                }
                DataType::Utf8 => {
                    let b = a.as_string::<i32>();
                    (0..b.len()).map(|i| b.value(i).len() as u64).sum()
                }
                other => return Err(format!("clickhouse-arrow: type {other} not handled by the bench").into()),
            });
        }
        Ok(s)
    }

    /// The natural insert input of clickhouse-arrow: a RecordBatch.
    pub fn batch(d: &HitsData) -> Res<Batch> {
        use arrow::array::*;
        use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
        let mut fields = Vec::new();
        let mut arrays: Vec<ArrayRef> = Vec::new();
        for ((name, _, _), col) in hits::schema().iter().zip(&d.cols) {
            let (dt, a): (DataType, ArrayRef) = match col {
                Col::I16(v) => (DataType::Int16, Arc::new(Int16Array::from(v.clone()))),
                Col::I32(v) => (DataType::Int32, Arc::new(Int32Array::from(v.clone()))),
                Col::I64(v) => (DataType::Int64, Arc::new(Int64Array::from(v.clone()))),
                Col::Str(v) => {
                    (DataType::Binary, Arc::new(BinaryArray::from_iter_values(v.iter().map(|s| s.as_bytes()))))
                }
                Col::Date(v) => {
                    (DataType::Date32, Arc::new(Date32Array::from(v.iter().map(|&x| x as i32).collect::<Vec<_>>())))
                }
                Col::DateTime(v) => (
                    DataType::Timestamp(TimeUnit::Second, Some("UTC".into())),
                    Arc::new(
                        TimestampSecondArray::from(v.iter().map(|&x| x as i64).collect::<Vec<_>>())
                            .with_timezone("UTC"),
                    ),
                ),
            };
            fields.push(Field::new(*name, dt, false));
            arrays.push(a);
        }
        Ok(Batch::try_new(Arc::new(Schema::new(fields)), arrays)?)
    }

    pub async fn insert(c: &Client, table: &str, b: Batch) -> Res<u64> {
        let n = b.num_rows() as u64;
        let mut st = c.insert(format!("INSERT INTO {table} FORMAT Native"), b, None).await?;
        while let Some(r) = st.next().await {
            r?;
        }
        Ok(n)
    }
}

#[cfg(not(feature = "arrow"))]
mod stub {
    use crate::hits::HitsData;
    use crate::Res;

    pub const AVAILABLE: bool = false;
    pub type Client = ();
    pub type Batch = ();

    pub async fn connect(_host: &str, _tcp: u16, _lz4: bool) -> Res<Client> {
        Err("built without the `arrow` feature".into())
    }

    pub async fn read_sum(_c: &Client, _sql: &str) -> Res<(u64, u64)> {
        Err("built without the `arrow` feature".into())
    }

    pub fn batch(_d: &HitsData) -> Res<Batch> {
        Ok(())
    }

    pub async fn insert(_c: &Client, _table: &str, _b: Batch) -> Res<u64> {
        Err("built without the `arrow` feature".into())
    }
}
