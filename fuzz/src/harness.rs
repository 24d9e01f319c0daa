//! What each fuzz target does with its input, as plain functions.
//!
//! Every function returns the decoder's verdict (`Ok` or the `ProtoError` it raised); a
//! panic, an abort on allocation, or a hang is the finding. The few `assert!`s check
//! contracts the client relies on (see each one), so breaking them is a finding too.
//!
//! This file is also compiled into `crates/chnative-proto/tests/fuzz_regressions.rs`
//! (through `#[path]`), so it may use only `chnative_proto` and `std`.

use chnative_proto::chunked;
use chnative_proto::cityhash::city_hash128;
use chnative_proto::column::{Layout, SerInfo};
use chnative_proto::compression::{self, FrameHeader, Method, CHECKSUM_LEN, FRAME_PREFIX_LEN, HEADER_LEN};
use chnative_proto::connection::{self, BlockSink, Connection, Discard, Event, InsertFlow, InsertStep, Options, Poll};
use chnative_proto::packet::{
    read_server_packet, read_table_columns_body, BlockKind, ClientHello, ClientInfo, Query, ServerPacket,
};
use chnative_proto::revision;
use chnative_proto::wire::{Budget, Reader};
use chnative_proto::{Block, BlockLimits, BufferPool, ColumnData, DataType, ProtoError, Result};

/// The revisions whose layouts differ for blocks: before sparse serialization, with it,
/// with the 54483 additions, and with sized strings (54492, the newest).
pub const REVISIONS: [u64; 4] = [54460, 54465, 54483, 54492];

/// Block limits small enough that a block which is legitimately big for its row count
/// (rows x a wide type) stays far below the fuzzer's RSS limit, so an OOM means an
/// allocation the limits did not bound. They do not replace any bound the decoder must
/// apply itself (expansion, dictionaries, counts inside a column). Other fields keep their
/// defaults (a fn, not a const, so fields added later need no change here).
pub fn limits() -> BlockLimits {
    // A 64 MiB decoded budget keeps legitimate large blocks far below the runs' 2 GiB RSS limit,
    // so an OOM report is a real unbounded allocation.
    BlockLimits { max_columns: 64, max_rows: 1 << 16, max_bytes: 64 << 20 }
}

/// Largest decompressed body accepted for one block, like the client's `max_block_bytes`.
pub const MAX_PLAIN: usize = 16 << 20;

/// Options of [`server_packets`], taken from the input's first byte.
#[derive(Debug, Clone, Copy)]
pub struct StreamOptions {
    /// Negotiated revision (and the one announced).
    pub revision: u64,
    /// The query asked for compression.
    pub compressed: bool,
    /// Rewrite each frame's checksum before checking it, so mutated frames reach the
    /// decompressors and the block decoder instead of stopping at the checksum. The
    /// machine checks checksums, so these inputs also go through [`decode_frames_fixed`].
    pub fix_checksums: bool,
    /// Deliver the bytes in the smallest pieces the machine asks for (as a slow socket
    /// does) instead of all at once, so every resumable decode is exercised.
    pub pieces: bool,
    /// The server sends chunked framing (revisions from 54470): the bytes after the
    /// Hello are chunks, which the machine strips.
    pub chunked: bool,
    /// Receive what the machine lends through `direct_slots` there (a fixed-width
    /// column filled straight from the socket; uncompressed and unchunked only).
    pub direct: bool,
    /// Run an INSERT (table header, end of data, confirmation) instead of a SELECT.
    pub insert: bool,
}

impl StreamOptions {
    /// Options from a flags byte: bits 0-1 revision, 2 compression, 3 checksum fix-up,
    /// 4 piecewise delivery, 5 chunked framing, 6 direct fills, 7 INSERT.
    pub fn from_byte(b: u8) -> StreamOptions {
        StreamOptions {
            revision: REVISIONS[usize::from(b & 3)],
            compressed: b & 4 != 0,
            fix_checksums: b & 8 != 0,
            pieces: b & 16 != 0,
            chunked: b & 32 != 0,
            direct: b & 64 != 0,
            insert: b & 128 != 0,
        }
    }
}

/// Target `server_packets`: the first byte is [`StreamOptions`], the rest is what the
/// server sent after the handshake.
pub fn server_packets(data: &[u8]) -> Result<()> {
    let Some((&flags, stream)) = data.split_first() else { return Ok(()) };
    let opt = StreamOptions::from_byte(flags);
    if opt.fix_checksums && opt.compressed {
        // Frame bodies the checksum would stop, straight to the decoders.
        let _ = decode_frames_fixed(stream, opt);
    }
    decode_stream(stream, opt)
}

/// The server's Hello as a server at `revision` writes it, with the chunked framing it
/// uses to send (`chunked_send`) and wants to receive.
pub fn server_hello(revision: u64, chunked_send: bool) -> Vec<u8> {
    use chnative_proto::wire::WriteExt;
    let mut b = Vec::new();
    b.put_varuint(0); // Hello
    b.put_string("ClickHouse");
    b.put_varuint(26);
    b.put_varuint(9);
    b.put_varuint(revision);
    if revision >= revision::VERSIONED_PARALLEL_REPLICAS_PROTOCOL {
        b.put_varuint(revision::PARALLEL_REPLICAS_PROTOCOL_VERSION);
    }
    b.put_string("UTC");
    b.put_string("fuzz");
    b.put_varuint(1); // version patch
    if revision >= revision::CHUNKED_PACKETS {
        b.put_string(if chunked_send { "chunked" } else { "notchunked" });
        b.put_string("notchunked");
    }
    if revision >= revision::PASSWORD_COMPLEXITY_RULES {
        b.put_varuint(0);
    }
    if revision >= revision::INTERSERVER_SECRET_V2 {
        b.extend_from_slice(&0u64.to_le_bytes());
    }
    if revision >= revision::SERVER_SETTINGS {
        b.put_string(""); // no settings
    }
    if revision >= revision::QUERY_PLAN_SERIALIZATION {
        b.put_varuint(0);
    }
    if revision >= revision::VERSIONED_CLUSTER_FUNCTION_PROTOCOL {
        b.put_varuint(0);
    }
    b
}

/// The sink of a SELECT: every block kind in a block of its own, reused from packet to
/// packet as a stream reuses them (exercises column reuse), and lent again until its
/// event (as the machine requires of a sink).
#[derive(Default)]
struct Blocks {
    data: Block,
    totals: Block,
    extremes: Block,
    log: Block,
    profile_events: Block,
}

impl BlockSink for Blocks {
    fn block(&mut self, kind: BlockKind) -> Option<&mut Block> {
        Some(match kind {
            BlockKind::Data => &mut self.data,
            BlockKind::Totals => &mut self.totals,
            BlockKind::Extremes => &mut self.extremes,
            BlockKind::Log => &mut self.log,
            BlockKind::ProfileEvents => &mut self.profile_events,
            _ => return None,
        })
    }
}

/// The machine's errors as the decoders' ([`ProtoError`]), for one verdict type.
fn proto_error(e: connection::Error) -> ProtoError {
    match e {
        connection::Error::Proto(p) => p,
        e => ProtoError::violation(e),
    }
}

/// Drives the client's real state machine ([`Connection`]) as the client does: a
/// handshake with a well-formed Hello, then a SELECT (or an INSERT: the table's
/// header, the end of data, the confirmation), with `stream` as everything the server
/// sends after the Hello. The bytes arrive whole or in the pieces the machine asks for,
/// through the input buffer or (direct fills) the column buffer the machine lends; a
/// SELECT is cancelled after its first event when delivered in pieces.
///
/// `Ok` when the command ended and nothing followed; the input running out while the
/// machine waits for more is `Incomplete` (the client would wait, bounded by its
/// `max_block_bytes`).
pub fn decode_stream(stream: &[u8], opt: StreamOptions) -> Result<()> {
    let v = opt.revision;
    let chunked = opt.chunked && v >= revision::CHUNKED_PACKETS;
    let options = Options {
        revision: v,
        compression: opt.compressed.then_some(Method::Lz4),
        max_block_bytes: MAX_PLAIN,
        limits: limits(),
        chunked_send: chunked::Mode::NotChunkedOptional,
        chunked_recv: if chunked { chunked::Mode::ChunkedOptional } else { chunked::Mode::NotChunkedOptional },
        ..Options::default()
    };
    let mut c = Connection::new(options);
    let hello = ClientHello {
        client_name: "fuzz",
        version_major: 0,
        version_minor: 1,
        revision: v,
        database: "",
        user: "default",
        password: "",
    };
    c.start_handshake(&hello, "").expect("a new machine takes the handshake");
    let server_hello = server_hello(v, chunked);
    c.recv_buffer(server_hello.len()).extend_from_slice(&server_hello);
    assert_eq!(c.poll(&mut Discard), Ok(Poll::Event(Event::Hello)), "the harness's Hello is refused");
    assert_eq!(c.chunking().recv, chunked);
    let query = Query {
        query_id: "fuzz",
        client_info: ClientInfo {
            client_name: "fuzz",
            version_major: 0,
            version_minor: 1,
            version_patch: 0,
            our_revision: v,
            os_user: "",
            hostname: "",
            quota_key: "",
            trace: None,
            start_time_us: 0,
        },
        settings: &[],
        compression: opt.compressed,
        sql: "SELECT",
        parameters: &[],
    };
    if opt.insert {
        c.insert(&query).expect("an idle machine takes an INSERT");
    } else {
        c.query(&query).expect("an idle machine takes a query");
    }
    let out = c.transmit().len();
    c.advance(out);

    let mut blocks = Blocks::default();
    let mut flow = InsertFlow::new();
    let mut fed = 0usize;
    let mut events = 0u64;
    loop {
        let sink: &mut dyn BlockSink = if opt.insert { &mut flow } else { &mut blocks };
        let polled = c.poll(sink).map_err(proto_error)?;
        match polled {
            Poll::Event(event) => {
                events += 1;
                if opt.insert {
                    match flow.on_event(event).map_err(proto_error)? {
                        InsertStep::Header => c.end_data().expect("the header allows the end of data"),
                        InsertStep::Done | InsertStep::Exception(_) => {}
                        _ => {}
                    }
                } else if opt.pieces && events == 1 {
                    c.cancel(std::time::Instant::now()).map_err(proto_error)?;
                }
                let out = c.transmit().len();
                c.advance(out);
            }
            Poll::Idle => {
                return if fed < stream.len() {
                    // Bytes after the end: the next poll refuses them (the test asks it to).
                    c.recv_buffer(stream.len() - fed).extend_from_slice(&stream[fed..]);
                    c.poll(&mut Discard).map(drop).map_err(proto_error)
                } else {
                    Ok(())
                };
            }
            Poll::NeedInput { needed } => {
                let rest = &stream[fed..];
                if rest.is_empty() {
                    return Err(ProtoError::Incomplete { needed });
                }
                let before = fed;
                if opt.direct && c.direct_pending() {
                    let sink: &mut dyn BlockSink = if opt.insert { &mut flow } else { &mut blocks };
                    if let Some((slot, tail)) = c.direct_slots(sink) {
                        let n = rest.len().min(slot.len() + tail.len());
                        let n = if opt.pieces { n.min(slot.len().div_ceil(2).max(1)) } else { n };
                        let in_slot = n.min(slot.len());
                        slot[..in_slot].copy_from_slice(&rest[..in_slot]);
                        tail[..n - in_slot].copy_from_slice(&rest[in_slot..n]);
                        fed += n;
                        c.direct_filled(sink, n);
                        continue;
                    }
                    // No slot: the column has its bytes, or the next poll says why not.
                    continue;
                }
                let buffered = c.buffered();
                // Asking for bytes that are there already would make the client
                // read forever: that is a bug, not an error.
                assert!(needed > buffered || c.is_closed(), "NeedInput {needed} with {buffered} buffered");
                let n = if opt.pieces { (needed - buffered.min(needed)).max(1) } else { rest.len() };
                let n = n.min(rest.len());
                c.recv_buffer(n).extend_from_slice(&rest[..n]);
                fed += n;
                assert!(fed > before);
            }
            _ => return Ok(()),
        }
    }
}

/// The uncompressed body of each block packet, decoded from frames whose checksums
/// are rewritten first (the machine stops at a bad checksum, so mutated frames would
/// reach no decompressor and no column decoder through it). Packets are read as in
/// [`decode_stream`]'s SELECT; the first error ends it.
pub fn decode_frames_fixed(stream: &[u8], opt: StreamOptions) -> Result<()> {
    let v = opt.revision;
    let mut pool = BufferPool::new();
    let mut block = Block::new();
    let mut pos = 0;
    while pos < stream.len() {
        let mut r = Reader::new(&stream[pos..]);
        let packet = read_server_packet(&mut r, v, v, true);
        let packet = check_incomplete(packet, r.remaining() + r.position())?;
        pos += r.position();
        match packet {
            ServerPacket::Block { kind, .. } if kind.compressed(v) => {
                block.forget_partial();
                pos += read_compressed(&stream[pos..], true, |r| block.read(r, v, &limits(), &mut pool))?;
            }
            ServerPacket::Block { .. } => return Ok(()),
            ServerPacket::TableColumnsCompressed => {
                pos += read_compressed(&stream[pos..], true, read_table_columns_body)?;
            }
            ServerPacket::Exception(_) | ServerPacket::EndOfStream => return Ok(()),
            _ => {}
        }
    }
    Ok(())
}

/// An `Incomplete` that asks for no more than `available` bytes would make the client
/// retry the same bytes forever: that is a bug, not an error.
fn check_incomplete<T>(res: Result<T>, available: usize) -> Result<T> {
    if let Err(ProtoError::Incomplete { needed }) = &res {
        assert!(*needed > available, "Incomplete asks for {needed} bytes with {available} available");
    }
    res
}

/// Decompresses frames until `parse` succeeds on their bytes, as the client does.
/// Returns the compressed bytes consumed.
fn read_compressed<T>(
    input: &[u8],
    fix_checksums: bool,
    mut parse: impl FnMut(&mut Reader<'_>) -> Result<T>,
) -> Result<usize> {
    let mut plain = Vec::new();
    let mut pos = read_frame(input, fix_checksums, &mut plain)?;
    loop {
        let mut r = Reader::new(&plain);
        match check_incomplete(parse(&mut r), plain.len()) {
            Ok(_) => {
                if r.position() != plain.len() {
                    return Err(ProtoError::violation("compressed body does not end at a frame boundary"));
                }
                return Ok(pos);
            }
            Err(ProtoError::Incomplete { needed }) => {
                while plain.len() < needed {
                    pos += read_frame(&input[pos..], fix_checksums, &mut plain)?;
                }
            }
            Err(e) => return Err(e),
        }
    }
}

/// One frame from the start of `input`, decompressed onto `plain`; returns its length.
fn read_frame(input: &[u8], fix_checksums: bool, plain: &mut Vec<u8>) -> Result<usize> {
    let prefix: &[u8; FRAME_PREFIX_LEN] =
        input.first_chunk().ok_or(ProtoError::Incomplete { needed: FRAME_PREFIX_LEN })?;
    let header = FrameHeader::parse(prefix, MAX_PLAIN as u32)?;
    if plain.len() + header.uncompressed_size as usize > MAX_PLAIN {
        return Err(ProtoError::TooLarge { what: "block", got: 0, limit: MAX_PLAIN as u64 });
    }
    let len = header.frame_len();
    let frame = input.get(..len).ok_or(ProtoError::Incomplete { needed: len })?;
    if fix_checksums {
        let mut fixed = frame.to_vec();
        with_checksum(&mut fixed);
        let header =
            FrameHeader::parse(fixed.first_chunk().expect("frame is longer than its prefix"), MAX_PLAIN as u32)?;
        compression::decompress_frame(&header, &fixed, plain)?;
    } else {
        compression::decompress_frame(&header, frame, plain)?;
    }
    Ok(len)
}

/// Overwrites a frame's checksum with the right one.
pub fn with_checksum(frame: &mut [u8]) {
    if frame.len() >= CHECKSUM_LEN {
        let sum = city_hash128(&frame[CHECKSUM_LEN..]);
        frame[..CHECKSUM_LEN].copy_from_slice(&sum.to_le_bytes());
    }
}

/// Type names the column target picks from (byte 1 of its input): every codec family,
/// nested the ways the tests and captures use them.
pub const COLUMN_TYPES: &[&str] = &[
    "UInt8",
    "UInt16",
    "UInt32",
    "UInt64",
    "UInt128",
    "UInt256",
    "Int8",
    "Int64",
    "Int128",
    "Int256",
    "Float32",
    "Float64",
    "BFloat16",
    "Bool",
    "Date",
    "Date32",
    "DateTime",
    "DateTime('UTC')",
    "DateTime64(3)",
    "DateTime64(9, 'UTC')",
    "Time",
    "Time64(3)",
    "Decimal(9, 2)",
    "Decimal(18, 4)",
    "Decimal(38, 10)",
    "Decimal256(40)",
    "UUID",
    "IPv4",
    "IPv6",
    "Enum8('a' = 1, 'b' = 2)",
    "Enum16('x' = -32768, 'y' = 1, 'z' = 32767)",
    "IntervalDay",
    "Nothing",
    "String",
    "FixedString(3)",
    "FixedString(16)",
    "Nullable(UInt64)",
    "Nullable(String)",
    "Nullable(FixedString(3))",
    "Nullable(Nothing)",
    "Nullable(Decimal64(4))",
    "Array(UInt8)",
    "Array(String)",
    "Array(Nullable(String))",
    "Array(Array(Nullable(UInt8)))",
    "Array(Nothing)",
    "Array(Tuple())",
    "Array(Tuple(UInt8, String))",
    "Array(LowCardinality(String))",
    "Array(Map(String, UInt64))",
    "Array(Dynamic)",
    "Array(JSON(a UInt32))",
    "Tuple(UInt8, String)",
    "Tuple(a Nullable(String), b Array(UInt8))",
    "Tuple(LowCardinality(String), Nullable(Int8))",
    "Tuple(Nullable(Nothing), UInt8)",
    "Map(String, UInt64)",
    "Map(String, Array(Nullable(String)))",
    "Map(LowCardinality(String), Nullable(UInt8))",
    "Map(UInt64, Nullable(String))",
    "LowCardinality(String)",
    "LowCardinality(Nullable(String))",
    "LowCardinality(FixedString(3))",
    "LowCardinality(UInt32)",
    "Variant(String, UInt64)",
    "Variant(Array(UInt8), String, UInt64)",
    "Variant(UInt64, String, Array(UInt64), Date)",
    "Dynamic",
    "Dynamic(max_types=2)",
    "JSON",
    "JSON(a UInt32)",
    "JSON(max_dynamic_paths=2, a UInt32, t.u Nullable(String))",
    "JSON(max_dynamic_paths=2, `a.b` JSON(x UInt8), `a.b.c` Nullable(UInt8))",
    "Point",
    "Ring",
    "Polygon",
    "MultiPolygon",
    "LineString",
    "MultiLineString",
    "Nested(a UInt8, b String)",
    "SimpleAggregateFunction(sum, UInt64)",
    "SimpleAggregateFunction(anyLast, Nullable(String))",
    "QBit(Float32, 8)",
    "QBit(BFloat16, 3)",
    "QBit(Float64, 5)",
];

/// Target `column_codecs`: one column body decoded on its own.
///
/// Input: byte 0 = revision (bits 0-1) and whether a serialization-kind header follows
/// (bit 2, honoured from 54454 as in a block header); byte 1 = an index into
/// [`COLUMN_TYPES`], or for an index past its end the type name is the input up to the
/// first NUL; then a VarUInt row count (bounded by [`limits`]); then the column bytes
/// (kinds header, prefix, data).
///
/// A column that decodes is encoded again and decoded again: the two encodings must
/// be equal (the decoder and encoder agree on the layout).
pub fn column_codecs(data: &[u8]) -> Result<()> {
    let [flags, pick, rest @ ..] = data else { return Ok(()) };
    let v = REVISIONS[usize::from(flags & 3)];
    let with_kinds = flags & 4 != 0 && v >= revision::CUSTOM_SERIALIZATION;
    let (name, body) = match COLUMN_TYPES.get(usize::from(*pick)) {
        Some(name) => (*name, rest),
        None => {
            let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
            let Ok(name) = std::str::from_utf8(&rest[..end]) else { return Ok(()) };
            (name, rest.get(end + 1..).unwrap_or_default())
        }
    };
    let ty = DataType::parse(name)?;
    let mut pool = BufferPool::new();
    let mut col = ColumnData::for_type(&ty, &mut pool)?;
    let mut r = Reader::new(body);
    // A column is only ever decoded inside Block::read, which gives its reader the block's
    // decoded-bytes budget; without one, a hostile count is bounded by nothing.
    r.set_budget(Budget::new(limits().max_bytes));
    let rows = r.varuint_bounded("row count", limits().max_rows)?;
    let info = if with_kinds && r.bool()? { Some(SerInfo::read(&mut r, &col)?) } else { None };
    let layout = Layout::for_revision(v);
    let available = body.len() - r.position();
    check_incomplete(
        col.read_prefix(&mut r).and_then(|()| col.read_data(&mut r, rows, info.as_ref(), layout, &mut pool)),
        available,
    )?;
    let _ = col.rows();

    // Decode(encode(x)) encodes to the same bytes.
    let mut once = Vec::new();
    col.write_prefix(&mut once);
    if col.write_data(&mut once, layout).is_err() {
        return Ok(());
    }
    let mut again = ColumnData::for_type(&ty, &mut pool)?;
    let mut r = Reader::new(&once);
    let decoded = again.read_prefix(&mut r).and_then(|()| again.read_data(&mut r, rows, None, layout, &mut pool));
    if let Err(e) = decoded {
        panic!("{name} at {v}: our own encoding does not decode: {e}");
    }
    assert_eq!(r.remaining(), 0, "{name} at {v}: our own encoding has trailing bytes");
    let mut twice = Vec::new();
    again.write_prefix(&mut twice);
    again.write_data(&mut twice, layout).expect("a decoded column encodes");
    assert!(once == twice, "{name} at {v}: encode(decode(encode(x))) differs from encode(x)");
    Ok(())
}

/// Target `compression_frames`.
///
/// Byte 0 picks the mode:
/// * bit 0-1 = 0: the rest is a frame as it arrives (checksum included);
/// * 1: the same with the checksum fixed up, so mutations reach the decompressors;
/// * 2: the rest is `method byte, u32 LE uncompressed size, body`, assembled into a
///   frame with consistent sizes and the right checksum (method from 0x02/0x82/0x90
///   by bits 2-3 when bit 4 is set, else the byte as given);
/// * 3: the rest is data compressed with None/LZ4/ZSTD (bits 2-3) and decompressed
///   again: the round trip must give it back.
pub fn compression_frames(data: &[u8]) -> Result<()> {
    let Some((&mode, rest)) = data.split_first() else { return Ok(()) };
    let method_byte = [0x02, 0x82, 0x90, 0x02][usize::from((mode >> 2) & 3)];
    match mode & 3 {
        0 => decode_frame(rest),
        1 => {
            let mut frame = rest.to_vec();
            with_checksum(&mut frame);
            decode_frame(&frame)
        }
        2 => {
            let [method, s0, s1, s2, s3, body @ ..] = rest else { return Ok(()) };
            let method = if mode & 16 != 0 { method_byte } else { *method };
            let mut frame = vec![0u8; CHECKSUM_LEN];
            frame.push(method);
            frame.extend_from_slice(&((HEADER_LEN + body.len()) as u32).to_le_bytes());
            frame.extend_from_slice(&[*s0, *s1, *s2, *s3]);
            frame.extend_from_slice(body);
            with_checksum(&mut frame);
            decode_frame(&frame)
        }
        _ => {
            let method = match method_byte {
                0x82 => Method::Lz4,
                0x90 => Method::Zstd { level: 1 },
                _ => Method::None,
            };
            let mut frame = Vec::new();
            compression::compress_frame(method, rest, &mut frame).expect("compressing a small input works");
            let mut out = Vec::new();
            let header =
                FrameHeader::parse(frame.first_chunk().expect("a frame has a prefix"), compression::MAX_FRAME_SIZE)
                    .expect("our own frame header parses");
            compression::decompress_frame(&header, &frame, &mut out).expect("our own frame decompresses");
            assert!(out == rest, "{method:?} round trip changed the data");
            Ok(())
        }
    }
}

/// Parses and decompresses one frame; on error the output must be left untouched.
fn decode_frame(frame: &[u8]) -> Result<()> {
    let Some(prefix) = frame.first_chunk::<FRAME_PREFIX_LEN>() else { return Ok(()) };
    let header = FrameHeader::parse(prefix, MAX_PLAIN as u32)?;
    let mut out = b"kept".to_vec();
    let res = compression::decompress_frame(&header, frame, &mut out);
    match &res {
        Ok(()) => assert_eq!(out.len(), 4 + header.uncompressed_size as usize, "decompressed length"),
        Err(_) => assert_eq!(out, b"kept", "a failed frame changed the output"),
    }
    res
}

/// Target `type_names`: the input as a type name (if UTF-8) and as a binary type encoding.
///
/// A name that parses is printed and parsed again: it must give the same type.
pub fn type_names(data: &[u8]) -> Result<()> {
    let binary = DataType::decode_binary(&mut Reader::new(data));
    if let Ok(t) = &binary {
        round_trip_name(t);
    }
    let Ok(name) = std::str::from_utf8(data) else { return binary.map(drop) };
    let t = DataType::parse(name)?;
    round_trip_name(&t);
    let mut pool = BufferPool::new();
    let _ = ColumnData::for_type(&t, &mut pool);
    Ok(())
}

fn round_trip_name(t: &DataType) {
    let printed = t.to_string();
    match DataType::parse(&printed) {
        Ok(again) => assert!(again == *t, "`{printed}` parses to {again:?}, printed from {t:?}"),
        Err(e) => panic!("`{printed}` (printed from {t:?}) does not parse: {e}"),
    }
}
