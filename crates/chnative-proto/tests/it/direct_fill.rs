//! Fixed-width column values received straight into the column's buffer
//! (`Connection::direct_slot`), driven without a socket: the same bytes, fed in
//! small pieces through the input buffer and through the direct slot, decode
//! to the same block; a sink that changes mid-fill, a server that goes away
//! mid-fill and a hostile row count are refused cleanly.

use chnative_proto::connection::{BlockSink, Connection, Discard, Error, Event, Options, Poll, State};
use chnative_proto::packet::{BlockKind, ClientHello, ClientInfo, Query};
use chnative_proto::wire::WriteExt;
use chnative_proto::{Block, BlockInfo, BlockLimits, Column, ColumnData, ProtoError};
use chnative_testkit::packets::data_packet;

const REV: u64 = 54492;

const HELLO: ClientHello<'static> = ClientHello {
    client_name: "test",
    version_major: 0,
    version_minor: 1,
    revision: REV,
    database: "",
    user: "default",
    password: "",
};

fn feed(c: &mut Connection, bytes: &[u8]) {
    c.recv_buffer(bytes.len()).extend_from_slice(bytes);
}

fn sent(c: &mut Connection) {
    let n = c.transmit().len();
    c.advance(n);
}

/// A connection running an uncompressed query, after the handshake.
fn running(options: Options) -> Connection {
    let mut c = Connection::new(options);
    c.start_handshake(&HELLO, "").unwrap();
    sent(&mut c);
    let hello = std::fs::read(format!("{}/tests/data/captures/hello_54492.bin", env!("CARGO_MANIFEST_DIR"))).unwrap();
    feed(&mut c, &hello);
    assert_eq!(c.poll(&mut Discard).unwrap(), Poll::Event(Event::Hello));
    sent(&mut c);
    let q = Query {
        query_id: "q",
        client_info: ClientInfo {
            client_name: "test",
            version_major: 0,
            version_minor: 1,
            version_patch: 0,
            our_revision: REV,
            os_user: "",
            hostname: "",
            quota_key: "",
            trace: None,
            start_time_us: 0,
        },
        settings: &[],
        compression: false,
        sql: "SELECT wide",
        parameters: &[],
    };
    c.query(&q).unwrap();
    sent(&mut c);
    c
}

fn options() -> Options {
    Options { revision: REV, compression: None, ..Options::default() }
}

#[derive(Default)]
struct Keep {
    data: Block,
    other: Block,
}

impl BlockSink for Keep {
    fn block(&mut self, kind: BlockKind) -> Option<&mut Block> {
        Some(if kind == BlockKind::Data { &mut self.data } else { &mut self.other })
    }
}

const ROWS: usize = 100_000;

/// A block with wide fixed-width columns between String and Nullable ones.
fn wide_block() -> Vec<u8> {
    let a: Vec<u64> = (0..ROWS as u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
    let b: Vec<u32> = (0..ROWS as u32).collect();
    let s: Vec<String> = (0..ROWS).map(|i| format!("s{i}")).collect();
    let nulls: Vec<u8> = (0..ROWS).map(|i| u8::from(i % 7 == 0)).collect();
    let block = Block::from_columns(vec![
        Column::new("a", "UInt64", ColumnData::from_values(&a)).unwrap(),
        Column::new("s", "String", ColumnData::from_strings(&s)).unwrap(),
        Column::new("b", "UInt32", ColumnData::from_values(&b)).unwrap(),
        Column::new("n", "Nullable(UInt64)", ColumnData::nullable(&nulls, ColumnData::from_values(&a))).unwrap(),
        Column::new("f", "Float64", ColumnData::from_values(&a.iter().map(|&x| x as f64).collect::<Vec<_>>())).unwrap(),
    ])
    .unwrap();
    let mut out = Vec::new();
    block.write(&mut out, REV).unwrap();
    out
}

/// How `decode` hands bytes to the machine.
#[derive(Clone, Copy, PartialEq)]
enum Feed {
    /// Through the input buffer only.
    Input,
    /// Into the direct slot when there is one.
    Slot,
    /// Into the direct slot and the buffer after it, as a vectored read does.
    Slots,
}

/// Feeds `wire` in pieces of `piece` bytes until the Data event, as `how`
/// says. Returns the connection and the sink.
fn decode(wire: &[u8], piece: usize, how: Feed) -> (Connection, Keep) {
    let mut c = running(options());
    let mut sink = Keep::default();
    let mut at = 0;
    loop {
        match c.poll(&mut sink).unwrap() {
            Poll::Event(Event::Data) => break,
            Poll::Event(e) => panic!("unexpected {e:?}"),
            Poll::Idle => panic!("idle"),
            Poll::NeedInput { .. } => {
                assert!(at < wire.len(), "the machine wants more than the packet");
                let n = piece.min(wire.len() - at);
                if how == Feed::Slots && c.direct_pending() {
                    if let Some((slot, tail)) = c.direct_slots(&mut sink) {
                        let a = n.min(slot.len());
                        slot[..a].copy_from_slice(&wire[at..at + a]);
                        let b = (n - a).min(tail.len()).min(wire.len() - at - a);
                        tail[..b].copy_from_slice(&wire[at + a..at + a + b]);
                        c.direct_filled(&mut sink, a + b);
                        at += a + b;
                    }
                } else if how == Feed::Slot && c.direct_pending() {
                    // `None`: the column has all it needs; poll again.
                    if let Some(slot) = c.direct_slot(&mut sink) {
                        let n = n.min(slot.len());
                        slot[..n].copy_from_slice(&wire[at..at + n]);
                        c.direct_filled(&mut sink, n);
                        at += n;
                    }
                } else {
                    feed(&mut c, &wire[at..at + n]);
                    at += n;
                }
            }
            other => panic!("a poll result this test does not know: {other:?}"),
        }
    }
    assert_eq!(at, wire.len(), "the block ends where the packet does");
    (c, sink)
}

#[test]
fn direct_and_buffered_reads_decode_the_same_block() {
    let body = wide_block();
    let wire = data_packet(&body, None);
    for piece in [4096, 100_000, 1 << 20] {
        let (plain, plain_sink) = decode(&wire, piece, Feed::Input);
        let (direct, direct_sink) = decode(&wire, piece, Feed::Slot);
        let (vectored, vectored_sink) = decode(&wire, piece, Feed::Slots);
        assert_eq!(plain.direct_bytes(), 0);
        // With small pieces most of the fixed-width columns go through the slot;
        // with large ones only a column a piece cut short by at least 256 KiB
        // (1 MiB pieces cut none of these that much).
        let least = match piece {
            4096 => ROWS * 8 * 2,
            100_000 => 1,
            _ => 0,
        };
        assert!(vectored.direct_bytes() >= least as u64, "piece {piece}: {}", vectored.direct_bytes());
        assert!(direct.direct_bytes() >= least as u64, "piece {piece}: {}", direct.direct_bytes());
        for sink in [&plain_sink, &direct_sink, &vectored_sink] {
            let mut again = Vec::new();
            sink.data.write(&mut again, REV).unwrap();
            assert!(again == body, "piece {piece}: the block decodes to other bytes");
            assert_eq!(sink.data.rows(), ROWS);
        }
        let a = direct_sink.data.column("a").unwrap().view();
        assert_eq!(a.values::<u64>().unwrap()[ROWS - 1], (ROWS as u64 - 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    }
}

#[test]
fn the_next_block_reuses_the_buffers_and_the_machine_goes_on() {
    let body = wide_block();
    let mut wire = data_packet(&body, None);
    wire.extend_from_slice(&data_packet(&body, None));
    wire.push(5); // EndOfStream
    let mut c = running(options());
    let mut sink = Keep::default();
    let (mut at, mut data) = (0, 0);
    loop {
        match c.poll(&mut sink).unwrap() {
            Poll::Event(Event::Data) => {
                data += 1;
                let mut again = Vec::new();
                sink.data.write(&mut again, REV).unwrap();
                assert!(again == body);
            }
            Poll::Event(Event::EndOfStream) => break,
            Poll::Event(e) => panic!("unexpected {e:?}"),
            Poll::Idle => panic!("idle"),
            Poll::NeedInput { .. } => {
                let n = 70_000.min(wire.len() - at);
                if let Some(slot) = c.direct_slot(&mut sink) {
                    let n = n.min(slot.len());
                    slot[..n].copy_from_slice(&wire[at..at + n]);
                    c.direct_filled(&mut sink, n);
                    at += n;
                } else {
                    feed(&mut c, &wire[at..at + n]);
                    at += n;
                }
            }
            other => panic!("a poll result this test does not know: {other:?}"),
        }
    }
    assert_eq!((data, c.state()), (2, State::Idle));
}

/// Feeds the packet until a direct fill is under way, then fills 1000 bytes of it.
fn start_direct(c: &mut Connection, sink: &mut Keep, wire: &[u8]) {
    let mut at = 0;
    while !c.direct_pending() {
        assert!(matches!(c.poll(sink).unwrap(), Poll::NeedInput { .. }));
        if !c.direct_pending() {
            feed(c, &wire[at..at + 4096]);
            at += 4096;
        }
    }
    let slot = c.direct_slot(sink).expect("a slot");
    slot[..1000].copy_from_slice(&wire[at..at + 1000]);
    c.direct_filled(sink, 1000);
    assert_eq!(c.direct_bytes(), 1000);
}

#[test]
fn a_different_sink_mid_fill_closes_the_connection() {
    let wire = data_packet(&wide_block(), None);
    let mut c = running(options());
    let mut sink = Keep::default();
    start_direct(&mut c, &mut sink, &wire);
    // The input no longer holds the block's start: it cannot start over elsewhere.
    assert!(c.direct_slot(&mut Keep::default()).is_none());
    let err = c.poll(&mut Discard).unwrap_err();
    assert!(matches!(&err, Error::Proto(ProtoError::Violation(m)) if m.contains("not lent again")), "{err}");
    assert_eq!(c.state(), State::Closed);
    assert!(!c.direct_pending());
}

#[test]
fn a_server_gone_mid_fill_closes_the_connection() {
    let wire = data_packet(&wide_block(), None);
    let mut c = running(options());
    let mut sink = Keep::default();
    start_direct(&mut c, &mut sink, &wire);
    c.peer_closed();
    assert!(!c.direct_pending());
    assert!(c.direct_slot(&mut sink).is_none());
    let err = c.poll(&mut sink).unwrap_err();
    assert_eq!(err, Error::Closed("the server closed the connection".into()));
}

#[test]
fn a_hostile_row_count_is_refused_before_the_buffer_is_reserved() {
    // 2^26 UInt64 rows announced (512 MiB) with a 1 MiB limit: refused by the
    // budget before the column's buffer grows, with 100 KB of values in hand.
    let mut body = Vec::new();
    BlockInfo::default().write(&mut body, REV);
    body.put_varuint(1);
    body.put_varuint(1 << 26);
    body.put_string("x");
    body.put_string("UInt64");
    body.put_u8(0);
    body.extend(std::iter::repeat_n(7u8, 100_000));
    let limits = BlockLimits { max_bytes: 1 << 20, ..BlockLimits::default() };
    let mut c = running(Options { max_block_bytes: 1 << 20, limits, ..options() });
    let mut sink = Keep::default();
    feed(&mut c, &data_packet(&body, None));
    let err = c.poll(&mut sink).unwrap_err();
    assert!(
        matches!(err, Error::Proto(ProtoError::TooLarge { what: "decoded block bytes", .. })),
        "expected the block budget to refuse it, got {err}"
    );
    assert_eq!(c.state(), State::Closed);
    if let Some(ColumnData::Fixed(f)) = sink.data.column("x").map(|c| c.data()) {
        assert!(f.data().capacity() < 1 << 20, "reserved {} bytes", f.data().capacity());
    }
}
