//! A hostile or pathological server: expansion bombs, huge exceptions, blocks
//! split into many frames. A real server cannot send these bytes, so they come
//! from a fake (chnative_testkit::fake_server) that speaks the protocol.
//!
//! Every refused reply ends in a clear error with bounded memory, the client then
//! says it is unusable, and nothing more is sent on that connection. The last test
//! checks, against the real server, that a legitimately huge column name works.

use crate::common;
use crate::common::fake_server;

use chnative::{params, Config, Connection as Client, Error};
use chnative_proto::column::var_string_rows_stepped;
use chnative_proto::wire::WriteExt;
use chnative_proto::ProtoError;
use chnative_testkit::packets::{block, data_packet, end_of_stream, exception_chain};
use fake_server::FakeServer;

const MIB: usize = 1 << 20;
const SQL: &str = "SELECT hostile";

/// Runs SQL to its end; returns the Data rows seen.
async fn select(client: &mut Client) -> chnative::Result<usize> {
    let mut stream = client.fetch_blocks(SQL).await?;
    let mut rows = 0;
    while let Some(b) = stream.next().await? {
        rows += b.rows();
    }
    Ok(rows)
}

/// Connects to a fake that sends `reply`, runs a SELECT that must fail, and
/// checks the client is then unusable and sends nothing more. Returns the error.
async fn refused(revision: u64, compression: &str, max_block_bytes: Option<usize>, reply: Vec<u8>) -> Error {
    let fake = FakeServer::start(revision, compression != "none", reply);
    let mut cfg = Config::from_url(&fake.url(revision, compression)).unwrap();
    if let Some(n) = max_block_bytes {
        cfg = cfg.max_block_bytes(n);
    }
    let mut client = Client::connect_with(cfg).await.unwrap();
    let err = select(&mut client).await.expect_err("the reply must be refused");
    assert!(!client.is_usable(), "still usable after {err}");
    let again = client.ping().await.expect_err("a broken connection is not reused");
    assert!(again.kind() == chnative::ErrorKind::Closed, "{again}");
    drop(client);
    let got = fake.finish();
    assert!(got.query.windows(SQL.len()).any(|w| w == SQL.as_bytes()));
    assert!(got.after.is_empty(), "the client sent {} more bytes after {err}: {:?}", got.after.len(), got.after);
    err
}

fn assert_budget(err: &Error) {
    match err.as_protocol() {
        Some(ProtoError::TooLarge { what: "decoded block bytes", .. }) => {}
        _ => panic!("expected the decoded-bytes budget to refuse the block, got {err}"),
    }
}

#[tokio::test]
async fn replicated_bomb_is_refused() {
    // 4096 rows pointing at one 16 KiB string: 20 KB on the wire, 64 MiB decoded.
    let rows = 4096u64;
    let mut data = Vec::new();
    data.put_varuint(rows);
    data.put_u8(1);
    data.extend(std::iter::repeat_n(0u8, rows as usize));
    data.put_varuint(1);
    data.put_u64_le(16 << 10);
    data.extend(std::iter::repeat_n(b'x', 16 << 10));
    let reply = data_packet(&block(54492, rows, &[("s", "String", &[1, 4], &data)]), None);
    assert_budget(&refused(54492, "none", Some(MIB), reply).await);
}

#[tokio::test]
async fn replicated_bomb_is_refused_at_the_default_limit() {
    // 1.05 MB on the wire, 4 GiB decoded: used to abort the process on allocation.
    let rows = 1u64 << 20;
    let mut data = Vec::new();
    data.put_varuint(rows);
    data.put_u8(1);
    data.extend(std::iter::repeat_n(0u8, rows as usize));
    data.put_varuint(1);
    data.put_u64_le(4096);
    data.extend(std::iter::repeat_n(b'x', 4096));
    let b = block(54492, rows, &[("s", "String", &[1, 4], &data)]);
    assert_budget(&refused(54492, "lz4", None, data_packet(&b, Some(MIB))).await);
}

#[tokio::test]
async fn sparse_bomb_is_refused() {
    // Two all-default sparse UInt64 columns of 2^26 rows in 57 bytes.
    let rows = 1u64 << 26;
    let mut data = Vec::new();
    data.put_varuint(rows | (1 << 62));
    let b = block(54492, rows, &[("a", "UInt64", &[1, 1], &data), ("b", "UInt64", &[1, 1], &data)]);
    let reply = data_packet(&b, None);
    assert!(reply.len() <= 57, "{}", reply.len());
    assert_budget(&refused(54492, "none", Some(MIB), reply).await);
}

#[tokio::test]
async fn compact_variant_bomb_is_refused() {
    // One COMPACT granule of 2^26 NULL rows.
    let rows = 1u64 << 26;
    let mut data = Vec::new();
    data.put_u64_le(1);
    data.put_varuint(rows);
    data.put_u8(1);
    data.put_u8(255);
    let reply = data_packet(&block(54492, rows, &[("v", "Variant(UInt64, String)", &[0], &data)]), None);
    assert!(reply.len() <= 81, "{}", reply.len());
    assert_budget(&refused(54492, "none", Some(MIB), reply).await);
}

#[tokio::test]
async fn exception_chain_too_deep_is_refused() {
    let err = refused(54492, "none", None, exception_chain(65, 10)).await;
    assert!(matches!(err.as_protocol(), Some(ProtoError::Violation(m)) if m.contains("deeper")), "{err}");
}

#[tokio::test]
async fn exception_too_large_is_refused() {
    // 64 messages of 30 MiB (1.9 GB) once cost minutes of CPU: refused from the
    // third message's length, after 60 MiB.
    let mut reply = Vec::new();
    reply.put_varuint(2);
    for i in 0..3 {
        reply.put_i32_le(1);
        reply.put_string("DB::Exception");
        reply.put_varuint(30 << 20);
        if i < 2 {
            reply.extend(std::iter::repeat_n(b'm', 30 << 20));
            reply.put_string("");
            reply.put_u8(1);
        }
    }
    let err = refused(54492, "none", None, reply).await;
    assert!(matches!(err.as_protocol(), Some(ProtoError::TooLarge { what: "exception text", .. })), "{err}");
}

#[tokio::test]
async fn large_exception_in_pieces_is_reported() {
    // 16 nested exceptions of 1 MiB each: within the bounds, reported whole.
    let fake = FakeServer::start(54492, false, exception_chain(16, MIB));
    let mut client = Client::connect(&fake.url(54492, "none")).await.unwrap();
    match select(&mut client).await.as_ref().map_err(Error::as_server) {
        Err(Some(e)) => {
            assert_eq!((e.code, e.nested.len(), e.message.len()), (1000, 15, MIB));
            assert_eq!(e.nested[14].message.len(), MIB);
        }
        other => panic!("{other:?}"),
    }
    // An exception ends the query normally: the connection stays usable.
    assert!(client.is_usable());
    drop(client);
    assert!(fake.finish().after.is_empty());
}

fn legacy_strings(rows: usize) -> Vec<u8> {
    let mut data = Vec::new();
    for i in 0..rows {
        data.put_string(format!("row {i:>8}"));
    }
    data
}

/// A block in many small compressed frames decodes, and each VarUInt-prefixed
/// string is stepped over at most twice (measured, then decoded), not once per frame.
async fn decoded_once(revision: u64, b: Vec<u8>, rows: usize) {
    let mut reply = data_packet(&b, Some(4096));
    reply.extend(end_of_stream());
    let fake = FakeServer::start(revision, true, reply);
    let mut client = Client::connect(&fake.url(revision, "lz4")).await.unwrap();
    // A current-thread runtime: the decode runs on this thread, where the counter is.
    let before = var_string_rows_stepped();
    assert_eq!(select(&mut client).await.unwrap(), rows);
    let stepped = var_string_rows_stepped() - before;
    assert!(stepped <= 2 * rows as u64, "{stepped} string rows stepped over for {rows} rows");
    assert!(client.is_usable());
    drop(client);
    fake.finish();
}

#[tokio::test]
async fn legacy_strings_in_many_frames_are_decoded_once() {
    let rows = 200_000;
    decoded_once(54460, block(54460, rows as u64, &[("s", "String", &[0], &legacy_strings(rows))]), rows).await;
}

#[tokio::test]
async fn low_cardinality_dictionary_in_many_frames_is_decoded_once() {
    let rows = 200_000usize;
    let mut data = Vec::new();
    data.put_u64_le(1);
    data.put_u64_le(0x600 | 2);
    data.put_u64_le(rows as u64);
    data.extend_from_slice(&legacy_strings(rows));
    data.put_u64_le(rows as u64);
    for i in 0..rows as u32 {
        data.put_u32_le(i);
    }
    decoded_once(54492, block(54492, rows as u64, &[("lc", "LowCardinality(String)", &[0], &data)]), rows).await;
}

/// Against the real server: the column of `SELECT length({s:String})` is named
/// after the expression, parameter included, so a 1.5 MiB parameter makes a
/// 1.5 MiB column name.
#[tokio::test]
async fn huge_expression_names_work() {
    let s = "z".repeat(3 * MIB / 2);
    let mut client = Client::connect(&common::url("")).await.unwrap();
    let n: u64 = client.fetch_scalar(("SELECT length({s:String})", params! {"s" => s.as_str()})).await.unwrap();
    assert_eq!(n, s.len() as u64);
    let mut stream = client.fetch_blocks(("SELECT length({s:String})", params! {"s" => s.as_str()})).await.unwrap();
    let mut seen = false;
    while let Some(b) = stream.next().await.unwrap() {
        if b.rows() > 0 {
            assert!(b.columns()[0].name().len() > s.len(), "{}", b.columns()[0].name().len());
            seen = true;
        }
    }
    assert!(seen);
    drop(stream);
    assert!(client.is_usable());
}
