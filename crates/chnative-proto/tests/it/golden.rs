//! Decoding bytes captured from a real ClickHouse 26.9 server (scripts/capture.py).
//!
//! Each capture holds the server's bytes after the handshake for one query.

use chnative_proto::connection::{BlockSink, Connection, Discard, Event, Options, Poll};
use chnative_proto::packet::{BlockKind, ClientHello, ClientInfo, Query, ServerHello};
use chnative_proto::wire::Reader;
use chnative_proto::{Block, BlockLimits, BufferPool, ProtoError, WireUuid};

fn capture(name: &str) -> Vec<u8> {
    std::fs::read(format!("{}/tests/data/captures/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// A connection at `revision` that has sent a query and waits for its answer
/// (the handshake is the captured server Hello for that revision).
fn querying(revision: u64, compressed: bool) -> Connection {
    let mut c = Connection::new(Options { revision, ..Options::default() });
    let hello = ClientHello {
        client_name: "golden",
        version_major: 0,
        version_minor: 1,
        revision,
        database: "",
        user: "default",
        password: "",
    };
    c.start_handshake(&hello, "").unwrap();
    let server_hello = capture(&format!("hello_{}.bin", if revision == 54460 { 54460 } else { 54492 }));
    c.recv_buffer(server_hello.len()).extend_from_slice(&server_hello);
    assert_eq!(c.poll(&mut Discard).unwrap(), Poll::Event(Event::Hello));
    let info = ClientInfo {
        client_name: "golden",
        version_major: 0,
        version_minor: 1,
        version_patch: 0,
        our_revision: revision,
        os_user: "",
        hostname: "",
        quota_key: "",
        trace: None,
        start_time_us: 0,
    };
    let q = Query { query_id: "", client_info: info, settings: &[], compression: compressed, sql: "", parameters: &[] };
    c.query(&q).unwrap();
    let n = c.transmit().len();
    c.advance(n);
    c
}

/// Lends a fresh Data block each time the previous one was taken.
#[derive(Default)]
struct Data(Block);

impl BlockSink for Data {
    fn block(&mut self, kind: BlockKind) -> Option<&mut Block> {
        (kind == BlockKind::Data).then_some(&mut self.0)
    }
}

/// Decodes a whole captured response through the state machine; returns the
/// Data blocks with rows, and the event that ended it.
fn decode_all(bytes: &[u8], revision: u64, compressed: bool) -> (Vec<Block>, Event) {
    let mut c = querying(revision, compressed);
    c.recv_buffer(bytes.len()).extend_from_slice(bytes);
    let mut sink = Data::default();
    let mut blocks = Vec::new();
    loop {
        match c.poll(&mut sink).unwrap() {
            Poll::Event(Event::Data) if sink.0.rows() > 0 => blocks.push(std::mem::take(&mut sink.0)),
            Poll::Event(e @ (Event::EndOfStream | Event::Exception(_))) => {
                assert_eq!(c.buffered(), 0, "bytes after the end");
                assert!(c.is_idle());
                return (blocks, e);
            }
            Poll::Event(_) => {}
            other => panic!("capture ended early: {other:?}"),
        }
    }
}

#[test]
fn server_hello_at_three_revisions() {
    for (rev, file) in [(54460, "hello_54460.bin"), (54485, "hello_54485.bin"), (54492, "hello_54492.bin")] {
        let b = capture(file);
        let mut r = Reader::new(&b);
        assert_eq!(r.varuint().unwrap(), 0);
        let h = ServerHello::read(&mut r, rev).unwrap();
        assert_eq!(r.remaining(), 0, "{file}");
        assert_eq!(h.name, "ClickHouse");
        assert_eq!((h.version_major, h.version_minor), (26, 9));
        assert_eq!(h.revision, 54492);
        assert_eq!(h.timezone, "Etc/UTC");
        if rev >= 54474 {
            assert!(h.settings.iter().any(|(k, v)| k == "default_format" && v == "CSV"), "{:?}", h.settings);
        }
        // Every strict prefix is incomplete, never misread.
        for cut in 1..b.len() {
            let mut r = Reader::new(&b[1..cut]);
            assert!(matches!(ServerHello::read(&mut r, rev), Err(ProtoError::Incomplete { .. })));
        }
    }
}

#[test]
fn select_one_at_three_revisions() {
    for (rev, file) in [(54460, "select1_54460.bin"), (54485, "select1_54485.bin"), (54492, "select1_54492.bin")] {
        let (blocks, end) = decode_all(&capture(file), rev, false);
        assert_eq!(end, Event::EndOfStream);
        assert_eq!(blocks.len(), 1);
        assert_eq!(blocks[0].column("1").unwrap().view().values::<u8>().unwrap(), &[1]);
    }
}

#[test]
fn many_types_old_and_new_string_layout() {
    for rev in [54460, 54492] {
        let (blocks, end) = decode_all(&capture(&format!("types_{rev}.bin")), rev, false);
        assert_eq!(end, Event::EndOfStream);
        let b = &blocks[0];
        let v = |n: &str| b.column(n).unwrap().view();
        assert_eq!(v("i8").values::<i8>().unwrap(), &[-1]);
        assert_eq!(v("u64").values::<u64>().unwrap(), &[u64::MAX]);
        assert_eq!(v("i128").values::<i128>().unwrap(), &[-2]);
        assert_eq!(v("f64").values::<f64>().unwrap(), &[1.5]);
        assert_eq!(v("b").values::<u8>().unwrap(), &[1]);
        assert_eq!(v("s").as_strings().unwrap().str(0).unwrap(), "héllo");
        assert_eq!(v("fs").as_fixed_strings().unwrap(), (&b"ab\0"[..], 3));
        assert_eq!(v("d").values::<u16>().unwrap(), &[19782]);
        assert_eq!(v("dt").values::<u32>().unwrap(), &[1709210096]);
        assert_eq!(v("dt64").values::<i64>().unwrap(), &[1709210096789]);
        assert_eq!(v("u").values::<WireUuid>().unwrap()[0].to_string(), "550e8400-e29b-41d4-a716-446655440000");
        let ns = v("ns").as_nullable().unwrap();
        assert!(ns.is_null(0));
        let aa = v("aa").as_array().unwrap();
        assert_eq!(aa.offsets(), &[2]);
        let inner = aa.inner().as_array().unwrap();
        assert_eq!(inner.offsets(), &[2, 3]);
        assert_eq!(inner.inner().values::<u8>().unwrap(), &[1, 2, 3]);
        let lc = v("lc").as_low_cardinality().unwrap();
        assert_eq!(lc.strings().unwrap().str(lc.key(0)).unwrap(), "x");
        assert_eq!(v("e").values::<i8>().unwrap(), &[-2]);
        let lcn = v("lcn").as_low_cardinality().unwrap();
        assert!(lcn.is_null(0));
        // Re-encoding the block gives the server's bytes back.
        let mut out = Vec::new();
        b.write(&mut out, rev).unwrap();
        let mut again = Block::new();
        again.read(&mut Reader::new(&out), rev, &BlockLimits::default(), &mut BufferPool::new()).unwrap();
        let mut out2 = Vec::new();
        again.write(&mut out2, rev).unwrap();
        assert_eq!(out, out2);
    }
}

/// `AggregateFunction` states of count, sum, min, max and any, as 26.9 sends them
/// for `...State()` grouped by k (the values are what `hex(state)` printed for the
/// same query), and a min that saw no value.
#[test]
fn aggregate_function_states() {
    use chnative_proto::column::{AggregateState, StateValue};
    let (blocks, end) = decode_all(&capture("aggregate_states_54492.bin"), 54492, false);
    assert_eq!(end, Event::EndOfStream);
    let b = &blocks[0];
    assert_eq!(b.column("k").unwrap().view().values::<u8>().unwrap(), &[0, 1, 2]);
    let states = |n: &str, i: usize| b.column(n).unwrap().view().as_aggregate_states().unwrap().state(i).to_vec();
    assert_eq!(states("c", 0), [0x04]);
    assert_eq!(states("s", 1), 12u64.to_le_bytes());
    assert_eq!(states("mi", 2), [&[1u8][..], &(-3i64).to_le_bytes()].concat());
    assert_eq!(states("ma", 0), [&[1u8][..], &9u64.to_le_bytes()].concat());
    assert_eq!(states("a", 1), [1, 4, 0]);
    assert_eq!(states("e", 1), [0]);
    let e = b.column("e").unwrap().view();
    let e = e.as_aggregate_states().unwrap();
    assert_eq!(e.layout(), AggregateState::Single { width: 8 });
    assert_eq!(e.value(1).unwrap(), None);
    assert_eq!(e.value(2).unwrap(), Some(StateValue::Bytes(&2u64.to_le_bytes())));
    let c = b.column("c").unwrap().view();
    assert_eq!(c.as_aggregate_states().unwrap().value(2).unwrap(), Some(StateValue::Count(3)));
    // Written back byte for byte.
    let mut out = Vec::new();
    b.write(&mut out, 54492).unwrap();
    let mut again = Block::new();
    again.read(&mut Reader::new(&out), 54492, &BlockLimits::default(), &mut BufferPool::new()).unwrap();
    let mut out2 = Vec::new();
    again.write(&mut out2, 54492).unwrap();
    assert_eq!(out, out2);
    assert_eq!(again.column("mi").unwrap().view().as_aggregate_states().unwrap().state(0), states("mi", 0));
}

#[test]
fn lz4_compressed_response() {
    let (blocks, end) = decode_all(&capture("numbers3_lz4_54492.bin"), 54492, true);
    assert_eq!(end, Event::EndOfStream);
    let b = &blocks[0];
    assert_eq!(b.column("number").unwrap().view().values::<u64>().unwrap(), &[0, 1, 2]);
    let s = b.column("s").unwrap().view();
    let s = s.as_strings().unwrap();
    assert_eq!((s.str(0).unwrap(), s.str(2).unwrap()), ("0", "2"));
}

#[test]
fn exception_packet() {
    let (_, end) = decode_all(&capture("exception_54492.bin"), 54492, false);
    match end {
        Event::Exception(e) => {
            assert_eq!(e.code, 395);
            assert!(e.message.contains("boom"), "{}", e.message);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn truncated_captures_never_panic() {
    for file in ["types_54492.bin", "types_54460.bin", "select1_54492.bin", "aggregate_states_54492.bin"] {
        let b = capture(file);
        let rev = if file.contains("54460") { 54460 } else { 54492 };
        for cut in (0..b.len()).step_by(7) {
            let mut c = querying(rev, false);
            c.recv_buffer(cut).extend_from_slice(&b[..cut]);
            let mut sink = Data::default();
            loop {
                match c.poll(&mut sink) {
                    Ok(Poll::Event(_)) => {}
                    Ok(Poll::NeedInput { needed }) => {
                        assert!(needed > c.buffered());
                        break;
                    }
                    Ok(Poll::Idle) => panic!("{file} cut at {cut}: idle before the end"),
                    Err(e) => panic!("{file} cut at {cut}: {e}"),
                    Ok(other) => panic!("a poll result this test does not know: {other:?}"),
                }
            }
        }
    }
}
