//! Helpers for chnative-arrow's integration tests: the real server on loopback
//! (started by scripts/server.sh when it is not running), its HTTP interface for
//! the server's own renderings, and a canonical text form of Arrow values.
#![allow(dead_code)]

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType as A, TimeUnit};

pub use chnative_testkit::server::server;

pub fn url() -> String {
    format!("clickhouse://default@127.0.0.1:{}/default", server().tcp_port)
}

pub async fn client() -> chnative::Client {
    chnative::Client::connect(&url()).await.expect("connect")
}

/// The body of an HTTP query (Arrow output uncompressed, Nested not flattened); panics on an
/// HTTP error.
pub fn http_bytes(sql: &str) -> Vec<u8> {
    chnative_testkit::server::http_bytes_at("/?output_format_arrow_compression_method=none&flatten_nested=0", sql)
}

pub fn http(sql: &str) -> String {
    String::from_utf8(http_bytes(sql)).expect("UTF-8 response")
}

/// The server's own `FORMAT Arrow` rendering of a query, read with arrow-ipc.
pub fn http_arrow(sql: &str) -> Vec<RecordBatch> {
    let body = http_bytes(&format!("{sql} FORMAT Arrow"));
    let reader = arrow_ipc::reader::FileReader::try_new(std::io::Cursor::new(body), None).expect("Arrow file");
    reader.map(|b| b.expect("Arrow batch")).collect()
}

/// Every value of column `name` across `batches`, in canonical text.
pub fn column_canon(batches: &[RecordBatch], name: &str) -> Vec<String> {
    let mut out = Vec::new();
    for b in batches {
        let c = b.column_by_name(name).unwrap_or_else(|| panic!("no column {name}"));
        for i in 0..c.len() {
            out.push(canon(c, i));
        }
    }
    out
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// One value in a canonical text: the same value in two Arrow types that carry it
/// the same way (a Timestamp and its epoch count, a dictionary and its values)
/// gives the same text.
pub fn canon(a: &ArrayRef, i: usize) -> String {
    if a.is_null(i) {
        return "NULL".into();
    }
    macro_rules! p {
        ($t:ty) => {
            format!("{:?}", a.as_primitive::<$t>().value(i))
        };
    }
    match a.data_type() {
        A::Int8 => p!(Int8Type),
        A::Int16 => p!(Int16Type),
        A::Int32 => p!(Int32Type),
        A::Int64 => p!(Int64Type),
        A::UInt8 => p!(UInt8Type),
        A::UInt16 => p!(UInt16Type),
        A::UInt32 => p!(UInt32Type),
        A::UInt64 => p!(UInt64Type),
        A::Float32 => p!(Float32Type),
        A::Float64 => p!(Float64Type),
        A::Boolean => a.as_boolean().value(i).to_string(),
        A::Date32 => p!(Date32Type),
        A::Timestamp(TimeUnit::Second, _) => p!(TimestampSecondType),
        A::Timestamp(TimeUnit::Millisecond, _) => p!(TimestampMillisecondType),
        A::Timestamp(TimeUnit::Microsecond, _) => p!(TimestampMicrosecondType),
        A::Timestamp(TimeUnit::Nanosecond, _) => p!(TimestampNanosecondType),
        A::Duration(TimeUnit::Second) => p!(DurationSecondType),
        A::Duration(TimeUnit::Millisecond) => p!(DurationMillisecondType),
        A::Duration(TimeUnit::Microsecond) => p!(DurationMicrosecondType),
        A::Duration(TimeUnit::Nanosecond) => p!(DurationNanosecondType),
        A::Time32(TimeUnit::Second) => p!(Time32SecondType),
        A::Time32(TimeUnit::Millisecond) => p!(Time32MillisecondType),
        A::Time64(TimeUnit::Microsecond) => p!(Time64MicrosecondType),
        A::Time64(TimeUnit::Nanosecond) => p!(Time64NanosecondType),
        A::Decimal128(_, s) => format!("{}e-{s}", a.as_primitive::<Decimal128Type>().value(i)),
        A::Decimal256(_, s) => format!("{}e-{s}", a.as_primitive::<Decimal256Type>().value(i)),
        A::Utf8 => a.as_string::<i32>().value(i).to_string(),
        A::LargeUtf8 => a.as_string::<i64>().value(i).to_string(),
        A::Utf8View => a.as_string_view().value(i).to_string(),
        A::Binary => String::from_utf8_lossy(a.as_binary::<i32>().value(i)).into_owned(),
        A::FixedSizeBinary(_) => hex(a.as_fixed_size_binary().value(i)),
        A::Dictionary(..) => {
            let d = a.as_any_dictionary();
            let k = d.normalized_keys()[i];
            canon(d.values(), k)
        }
        A::List(_) => {
            let v = a.as_list::<i32>().value(i);
            format!("[{}]", (0..v.len()).map(|j| canon(&v, j)).collect::<Vec<_>>().join(","))
        }
        A::FixedSizeList(..) => {
            let v = a.as_fixed_size_list().value(i);
            format!("[{}]", (0..v.len()).map(|j| canon(&v, j)).collect::<Vec<_>>().join(","))
        }
        A::Map(..) => {
            let m = a.as_map().value(i);
            let (k, v) = (m.column(0).clone(), m.column(1).clone());
            format!(
                "{{{}}}",
                (0..m.len()).map(|j| format!("{}:{}", canon(&k, j), canon(&v, j))).collect::<Vec<_>>().join(",")
            )
        }
        A::Struct(_) => {
            let s = a.as_struct();
            format!("({})", s.columns().iter().map(|c| canon(c, i)).collect::<Vec<_>>().join(","))
        }
        A::Null => "NULL".into(),
        A::Union(..) => {
            let u = a.as_union();
            let id = u.type_id(i);
            canon(u.child(id), u.value_offset(i))
        }
        other => panic!("no canonical form for {other}"),
    }
}
