//! Server packets built by hand, for bytes a real server cannot be made to send (hostile
//! lengths, packets out of order, truncated frames). Prefer a capture from a real server
//! (chnative-proto's `tests/data/captures`) where one can show the case.
//!
//! Packet codes are the native protocol's: Data 1, Exception 2, Progress 3, EndOfStream 5,
//! Totals 7, Log 10, ProfileEvents 14.

use chnative_proto::compression::{compress_frame, compress_frames, Method};
use chnative_proto::wire::WriteExt;
use chnative_proto::BlockInfo;

/// A packet holding only its code (EndOfStream, Pong, …); append the body to it.
pub fn packet(code: u64) -> Vec<u8> {
    let mut b = Vec::new();
    b.put_varuint(code);
    b
}

/// EndOfStream.
pub fn end_of_stream() -> Vec<u8> {
    packet(5)
}

/// A Progress packet (one row, one byte read) at `revision`.
pub fn progress(revision: u64) -> Vec<u8> {
    use chnative_proto::revision as rev;
    let mut p = vec![3, 1, 1, 0];
    if revision >= rev::TOTAL_BYTES_IN_PROGRESS {
        p.push(0);
    }
    if revision >= rev::CLIENT_WRITE_INFO {
        p.extend_from_slice(&[0, 0]);
    }
    if revision >= rev::SERVER_QUERY_TIME_IN_PROGRESS {
        p.push(0);
    }
    p
}

/// An Exception packet: one exception, `code` and `message`, no stack trace, nothing nested.
pub fn exception(code: i32, message: &str) -> Vec<u8> {
    let mut b = packet(2);
    b.put_i32_le(code);
    b.put_string("DB::Exception");
    b.put_string(message);
    b.put_string("");
    b.put_u8(0);
    b
}

/// An Exception packet with `levels` nested exceptions (codes 1000, 1001, …), each with a
/// message of `message_len` bytes and no stack trace.
pub fn exception_chain(levels: usize, message_len: usize) -> Vec<u8> {
    let mut b = packet(2);
    for i in 0..levels {
        b.put_i32_le(1000 + i as i32);
        b.put_string("DB::Exception");
        b.put_string("m".repeat(message_len));
        b.put_string("");
        b.put_u8(u8::from(i + 1 < levels));
    }
    b
}

/// One column of [`block`]: name, type, the custom-serialization byte(s), the data bytes.
pub type ColumnBytes<'a> = (&'a str, &'a str, &'a [u8], &'a [u8]);

/// A block body at `revision`: BlockInfo, column and row counts, then per column its name,
/// type, serialization byte(s) (`[0]` for plain at revision ≥ 54454, `[]` below) and data,
/// all as given (nothing is checked).
pub fn block(revision: u64, rows: u64, columns: &[ColumnBytes<'_>]) -> Vec<u8> {
    let mut b = Vec::new();
    BlockInfo::default().write(&mut b, revision);
    b.put_varuint(columns.len() as u64);
    b.put_varuint(rows);
    for (name, ty, ser, data) in columns {
        b.put_string(name);
        b.put_string(ty);
        b.extend_from_slice(ser);
        b.extend_from_slice(data);
    }
    b
}

/// A block body with one UInt64 column named `n` holding `values`.
pub fn u64_block(revision: u64, values: &[u64]) -> Vec<u8> {
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    block(revision, values.len() as u64, &[("n", "UInt64", &[0], &data)])
}

/// A block packet (Data 1, Totals 7, Log 10, ProfileEvents 14, …) with an empty table name
/// carrying `body`, in one LZ4 frame when `compressed`.
pub fn block_packet(code: u64, body: &[u8], compressed: bool) -> Vec<u8> {
    let mut b = packet(code);
    b.put_string("");
    if compressed {
        compress_frame(Method::Lz4, body, &mut b).expect("LZ4 frame");
    } else {
        b.extend_from_slice(body);
    }
    b
}

/// A Data packet carrying `body`, compressed in LZ4 frames of at most `frame` bytes when
/// `frame` is `Some`.
pub fn data_packet(body: &[u8], frame: Option<usize>) -> Vec<u8> {
    let mut p = packet(1);
    p.put_string("");
    match frame {
        Some(n) => compress_frames(Method::Lz4, body, n, &mut p).expect("LZ4 frames"),
        None => p.extend_from_slice(body),
    }
    p
}
