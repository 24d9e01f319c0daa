//! The connection state machine driven without a socket: golden captures from a
//! real 26.9 server and hand-built bytes, through every transition and the
//! illegal ones.

use std::time::Instant;

use chnative_proto::compression::{compress_frame, decompress_frame, FrameHeader, Method, FRAME_PREFIX_LEN};
use chnative_proto::connection::{BlockSink, Connection, Discard, Error, Event, Options, Phase, Poll, State};
use chnative_proto::packet::{BlockKind, ClientHello, ClientInfo, Query};
use chnative_proto::splice::{Splices, MIN_SPLICE};
use chnative_proto::wire::WriteExt;
use chnative_proto::{Block, BlockInfo, ProtoError};
use chnative_testkit::packets::{block_packet, end_of_stream, exception, packet, progress, u64_block};

fn capture(name: &str) -> Vec<u8> {
    std::fs::read(format!("{}/tests/data/captures/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn options(revision: u64) -> Options {
    Options { revision, compression: None, ..Options::default() }
}

const HELLO: ClientHello<'static> = ClientHello {
    client_name: "test",
    version_major: 0,
    version_minor: 1,
    revision: 54492,
    database: "",
    user: "default",
    password: "",
};

fn hello_capture(revision: u64) -> Vec<u8> {
    capture(match revision {
        54460 => "hello_54460.bin",
        54485 => "hello_54485.bin",
        _ => "hello_54492.bin",
    })
}

/// Appends server bytes.
fn feed(c: &mut Connection, bytes: &[u8]) {
    c.recv_buffer(bytes.len()).extend_from_slice(bytes);
}

/// Marks everything queued as written and returns it.
fn sent(c: &mut Connection) -> Vec<u8> {
    let out = c.transmit().to_vec();
    c.advance(out.len());
    out
}

/// A connection after the handshake at `revision` (the captures' server is at 54492).
fn idle_at(revision: u64) -> Connection {
    let mut c = Connection::new(options(revision));
    c.start_handshake(&HELLO, "").unwrap();
    assert_eq!(c.state(), State::Handshake);
    sent(&mut c);
    feed(&mut c, &hello_capture(revision));
    assert_eq!(c.poll(&mut Discard).unwrap(), Poll::Event(Event::Hello));
    assert_eq!(c.state(), State::Idle);
    sent(&mut c);
    c
}

fn idle() -> Connection {
    idle_at(54492)
}

fn query<'a>(sql: &'a str, compression: bool) -> Query<'a> {
    Query {
        query_id: "q",
        client_info: ClientInfo {
            client_name: "test",
            version_major: 0,
            version_minor: 1,
            version_patch: 0,
            our_revision: 54492,
            os_user: "",
            hostname: "",
            quota_key: "",
            trace: None,
            start_time_us: 0,
        },
        settings: &[],
        compression,
        sql,
        parameters: &[],
    }
}

/// A sink that keeps every kind of block.
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

/// Polls until the machine needs input or is idle; returns the events and,
/// for each Data event, the rows of the block.
fn events(c: &mut Connection, sink: &mut Keep) -> Vec<Event> {
    let mut out = Vec::new();
    loop {
        match c.poll(sink).unwrap() {
            Poll::Event(e) => out.push(e),
            Poll::NeedInput { .. } | Poll::Idle => return out,
            other => panic!("a poll result this test does not know: {other:?}"),
        }
    }
}

// ---- hand-built server packets: chnative_testkit::packets ----

fn running_query() -> Connection {
    let mut c = idle();
    c.query(&query("SELECT 1", false)).unwrap();
    sent(&mut c);
    c
}

fn inserting() -> (Connection, Keep) {
    let mut c = idle();
    c.insert(&query("INSERT INTO t (n) VALUES", false)).unwrap();
    assert_eq!(c.state(), State::Busy(Phase::InsertHeader));
    sent(&mut c);
    let mut sink = Keep::default();
    feed(&mut c, &block_packet(1, &u64_block(54492, &[]), false));
    assert_eq!(events(&mut c, &mut sink), [Event::Header]);
    assert_eq!(c.state(), State::Busy(Phase::InsertData));
    (c, sink)
}

fn is_violation(e: &Error) -> bool {
    matches!(e, Error::Proto(ProtoError::Violation(_)))
}

// ---- handshake ----

#[test]
fn start_to_handshake_to_idle_at_three_revisions() {
    for rev in [54460, 54485, 54492] {
        let c = idle_at(rev);
        assert_eq!(c.revision(), rev);
        assert_eq!(c.server().revision, 54492);
        assert_eq!((c.server().version_major, c.server().version_minor), (26, 9));
    }
}

#[test]
fn a_tls_answer_to_the_hello_says_the_port_expects_tls() {
    // What a rustls server sends a plaintext client: a fatal alert record
    // (decode_error), or for some servers a handshake record.
    for answer in [&[0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x32][..], &[0x16, 0x03, 0x01, 0x00, 0x05], &[0x15, 0x03]] {
        let mut c = Connection::new(options(54492));
        c.start_handshake(&HELLO, "").unwrap();
        sent(&mut c);
        feed(&mut c, answer);
        let e = c.poll(&mut Discard).unwrap_err();
        assert!(matches!(e, Error::Unsupported(_)), "{e:?}");
        assert!(e.to_string().contains("answered in TLS") && e.to_string().contains("secure=true"), "{e}");
        assert!(c.is_closed());
    }
    // Any other undecodable answer keeps the decoder's own error.
    let mut c = Connection::new(options(54492));
    c.start_handshake(&HELLO, "").unwrap();
    sent(&mut c);
    feed(&mut c, &[0x15, 0x04]);
    let e = c.poll(&mut Discard).unwrap_err();
    assert!(e.to_string().contains("unexpected server packet code 21"), "{e}");
}

#[test]
fn handshake_writes_hello_then_the_addendum() {
    let mut c = Connection::new(options(54492));
    assert_eq!(c.poll(&mut Discard).unwrap(), Poll::Idle, "nothing expected before the handshake");
    c.start_handshake(&HELLO, "qk").unwrap();
    let mut expected = Vec::new();
    HELLO.write(&mut expected);
    assert_eq!(sent(&mut c), expected);
    let hello = hello_capture(54492);
    // Byte by byte: never an event before the whole Hello is there.
    for (i, b) in hello.iter().enumerate() {
        feed(&mut c, &[*b]);
        let p = c.poll(&mut Discard).unwrap();
        if i + 1 < hello.len() {
            assert!(matches!(p, Poll::NeedInput { needed } if needed > c.buffered()), "{p:?}");
        } else {
            assert_eq!(p, Poll::Event(Event::Hello));
        }
    }
    let mut addendum = Vec::new();
    chnative_proto::packet::write_addendum(&mut addendum, 54492, "qk");
    assert_eq!(sent(&mut c), addendum);
}

#[test]
fn handshake_exception_closes() {
    let mut c = Connection::new(options(54492));
    c.start_handshake(&HELLO, "").unwrap();
    feed(&mut c, &exception(516, "Authentication failed"));
    match c.poll(&mut Discard).unwrap() {
        Poll::Event(Event::Exception(e)) => assert_eq!(e.code, 516),
        other => panic!("{other:?}"),
    }
    assert!(c.is_closed());
    assert!(c.close_reason().unwrap().contains("516"));
    assert!(matches!(c.query(&query("SELECT 1", false)), Err(Error::Closed(r)) if r.contains("516")));
}

#[test]
fn packet_other_than_hello_in_handshake_is_a_violation() {
    let mut c = Connection::new(options(54492));
    c.start_handshake(&HELLO, "").unwrap();
    feed(&mut c, &packet(4)); // Pong
    assert!(is_violation(&c.poll(&mut Discard).unwrap_err()));
    assert!(c.is_closed());
}

#[test]
fn an_http_answer_to_hello_names_the_native_port() {
    let mut c = Connection::new(options(54492));
    c.start_handshake(&HELLO, "").unwrap();
    // A prefix of `HTTP/` is not enough to tell: more is asked for.
    feed(&mut c, b"HT");
    assert_eq!(c.poll(&mut Discard).unwrap(), Poll::NeedInput { needed: 5 });
    feed(&mut c, b"TP/1.1 400 Bad Request\r\nConnection: Close\r\n\r\n");
    match c.poll(&mut Discard) {
        Err(Error::Unsupported(why)) => {
            assert!(why.contains("answered in HTTP (`HTTP/1.1 400 Bad Request`)"), "{why}");
            assert!(why.contains("native protocol is on port 9000 (9440 with TLS)"), "{why}");
        }
        other => panic!("{other:?}"),
    }
    assert!(c.is_closed());
}

#[test]
fn a_tls_answer_to_hello_says_secure() {
    // A TLS alert record (21, version 3.1), as a TLS port answers plaintext.
    let mut c = Connection::new(options(54492));
    c.start_handshake(&HELLO, "").unwrap();
    feed(&mut c, &[21, 3, 1, 0, 2, 2, 70]);
    match c.poll(&mut Discard) {
        Err(Error::Unsupported(why)) => {
            assert!(why.contains("answered in TLS") && why.contains("secure=true"), "{why}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_unknown_first_byte_in_the_handshake_asks_about_the_port() {
    let mut c = Connection::new(options(54492));
    c.start_handshake(&HELLO, "").unwrap();
    feed(&mut c, b"SSH-2.0-OpenSSH_9.6\r\n");
    let e = c.poll(&mut Discard).unwrap_err();
    assert!(is_violation(&e), "{e:?}");
    let e = e.to_string();
    assert!(e.contains("unexpected server packet code 83") && e.contains("native protocol port"), "{e}");
    // `H` not followed by `TTP/` is not HTTP.
    let mut c = Connection::new(options(54492));
    c.start_handshake(&HELLO, "").unwrap();
    feed(&mut c, b"Hello");
    assert!(c.poll(&mut Discard).unwrap_err().to_string().contains("code 72"));
}

#[test]
fn handshake_twice_is_refused() {
    let mut c = idle();
    assert!(matches!(c.start_handshake(&HELLO, ""), Err(Error::State { state: State::Idle, .. })));
    assert!(!c.has_output());
}

#[test]
fn hello_twice_is_a_violation() {
    let mut c = running_query();
    feed(&mut c, &hello_capture(54492));
    assert!(is_violation(&c.poll(&mut Discard).unwrap_err()));
    assert!(c.is_closed());
}

#[test]
fn revision_below_the_oldest_supported_is_refused() {
    let mut c = Connection::new(options(54400));
    c.start_handshake(&HELLO, "").unwrap();
    feed(&mut c, &hello_capture(54460));
    assert!(matches!(c.poll(&mut Discard), Err(Error::Unsupported(_))));
    assert!(c.is_closed());
}

// ---- queries from golden captures ----

#[test]
fn select_one_at_three_revisions() {
    for (rev, file) in [(54460, "select1_54460.bin"), (54485, "select1_54485.bin"), (54492, "select1_54492.bin")] {
        let mut c = idle_at(rev);
        c.query(&query("SELECT 1", false)).unwrap();
        assert_eq!(c.state(), State::Busy(Phase::Query));
        sent(&mut c);
        feed(&mut c, &capture(file));
        let mut sink = Keep::default();
        let mut rows = Vec::new();
        let mut evs = Vec::new();
        while let Poll::Event(e) = c.poll(&mut sink).unwrap() {
            if e == Event::Data {
                rows.push(sink.data.rows());
            }
            evs.push(e);
        }
        assert_eq!(evs.first(), Some(&Event::Header), "{file}: {evs:?}");
        assert_eq!(evs.last(), Some(&Event::EndOfStream), "{file}");
        assert_eq!(rows.iter().filter(|&&r| r > 0).count(), 1, "{file}: {rows:?}");
        assert_eq!(c.state(), State::Idle);
        assert_eq!(c.poll(&mut sink).unwrap(), Poll::Idle);
    }
}

#[test]
fn input_in_pieces_of_exactly_the_bytes_asked_for() {
    let bytes = capture("types_54492.bin");
    let mut c = idle();
    c.query(&query("SELECT …", false)).unwrap();
    sent(&mut c);
    let mut sink = Keep::default();
    let mut fed = 0;
    let mut data_rows = 0;
    loop {
        match c.poll(&mut sink).unwrap() {
            Poll::Event(Event::EndOfStream) => break,
            Poll::Event(Event::Data) if sink.data.rows() > 0 => {
                data_rows += sink.data.rows();
                assert_eq!(sink.data.column("s").unwrap().view().as_strings().unwrap().str(0).unwrap(), "héllo");
            }
            Poll::Event(_) => {}
            Poll::NeedInput { needed } => {
                assert!(needed > c.buffered());
                let more = needed - c.buffered();
                assert!(fed + more <= bytes.len(), "asked beyond the capture");
                feed(&mut c, &bytes[fed..fed + more]);
                fed += more;
            }
            Poll::Idle => panic!("idle before EndOfStream"),
            other => panic!("a poll result this test does not know: {other:?}"),
        }
    }
    assert_eq!(fed, bytes.len());
    assert_eq!(data_rows, 1);
}

#[test]
fn lz4_frames_are_decompressed() {
    let mut c = idle();
    c.query(&query("SELECT number, toString(number) AS s FROM numbers(3)", true)).unwrap();
    sent(&mut c);
    let bytes = capture("numbers3_lz4_54492.bin");
    let mut sink = Keep::default();
    // Fed in 7-byte pieces: frames cross every boundary.
    let mut got = None;
    for chunk in bytes.chunks(7) {
        feed(&mut c, chunk);
        while let Poll::Event(e) = c.poll(&mut sink).unwrap() {
            if e == Event::Data && sink.data.rows() > 0 {
                got = Some(sink.data.column("number").unwrap().view().values::<u64>().unwrap().to_vec());
            }
        }
    }
    assert_eq!(got.unwrap(), [0, 1, 2]);
    assert_eq!(c.state(), State::Idle);
}

#[test]
fn exception_ends_the_query() {
    let mut c = running_query();
    feed(&mut c, &capture("exception_54492.bin"));
    let evs = events(&mut c, &mut Keep::default());
    match evs.last() {
        Some(Event::Exception(e)) => assert_eq!(e.code, 395),
        other => panic!("{other:?}"),
    }
    assert!(c.is_idle());
    c.ping().unwrap();
}

// ---- illegal commands and packets ----

#[test]
fn second_query_while_busy_is_refused_and_changes_nothing() {
    let mut c = running_query();
    feed(&mut c, &progress(54492));
    let before = c.state();
    assert!(matches!(c.query(&query("SELECT 2", false)), Err(Error::State { command: "query", .. })));
    assert!(matches!(c.insert(&query("INSERT", false)), Err(Error::State { .. })));
    assert!(matches!(c.ping(), Err(Error::State { command: "ping", .. })));
    assert_eq!(c.state(), before);
    assert!(!c.has_output());
    assert!(matches!(c.poll(&mut Discard).unwrap(), Poll::Event(Event::Progress(_))));
}

#[test]
fn data_before_the_header_is_refused() {
    let mut c = idle();
    c.insert(&query("INSERT INTO t VALUES", false)).unwrap();
    sent(&mut c);
    let r = c.send_data(|out: &mut Vec<u8>, _| -> Result<(), Error> {
        out.push(0);
        Ok(())
    });
    assert!(matches!(r, Err(Error::State { command: "send_data", state: State::Busy(Phase::InsertHeader) })));
    assert!(matches!(c.end_data(), Err(Error::State { command: "end_data", .. })));
    assert!(!c.has_output());
    // And in a SELECT there is no data to send at all.
    let mut c = running_query();
    assert!(matches!(c.end_data(), Err(Error::State { .. })));
}

#[test]
fn pong_during_a_query_is_a_violation_and_the_first_cause_stays() {
    let mut c = running_query();
    feed(&mut c, &packet(4));
    let first = c.poll(&mut Discard).unwrap_err();
    assert!(is_violation(&first), "{first:?}");
    let reason = c.close_reason().unwrap().to_string();
    assert!(reason.contains("Pong"), "{reason}");
    // Later calls name the real cause, not a generic one.
    for e in [c.poll(&mut Discard).unwrap_err(), c.ping().unwrap_err(), c.query(&query("SELECT 1", false)).unwrap_err()]
    {
        assert_eq!(e, Error::Closed(reason.clone()));
    }
    c.close("something later");
    assert_eq!(c.close_reason().unwrap(), reason);
}

#[test]
fn packets_while_idle_are_violations() {
    for bytes in [end_of_stream(), progress(54492), packet(4), block_packet(1, &u64_block(54492, &[1]), false)] {
        let mut c = idle();
        feed(&mut c, &bytes);
        assert!(is_violation(&c.poll(&mut Discard).unwrap_err()));
        assert!(c.is_closed());
    }
}

#[test]
fn bytes_after_close_are_refused() {
    let mut c = running_query();
    c.close("the socket failed");
    feed(&mut c, &end_of_stream());
    assert_eq!(c.poll(&mut Discard), Err(Error::Closed("the socket failed".into())));
    assert!(!c.has_output());
    assert!(matches!(c.cancel(Instant::now()), Err(Error::Closed(_))));
}

#[test]
fn decode_error_closes_and_is_the_reported_cause() {
    let mut c = running_query();
    feed(&mut c, &[99, 0, 0]);
    let e = c.poll(&mut Discard).unwrap_err();
    assert!(e.to_string().contains("unexpected server packet code 99"), "{e}");
    match c.poll(&mut Discard) {
        Err(Error::Closed(r)) => assert!(r.contains("unexpected server packet code 99"), "{r}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_block_decode_error_closes() {
    let mut c = running_query();
    let mut body = Vec::new();
    BlockInfo::default().write(&mut body, 54492);
    body.put_varuint(1);
    body.put_varuint(1);
    body.put_string("n");
    body.put_string("NoSuchType");
    body.put_u8(0);
    feed(&mut c, &block_packet(1, &body, false));
    assert!(c.poll(&mut Keep::default()).is_err());
    assert!(c.is_closed());
}

// ---- insert lifecycle ----

#[test]
fn insert_header_data_end_and_confirmation() {
    let (mut c, _sink) = inserting();
    c.send_data(|out: &mut Vec<u8>, rev| -> Result<(), Error> {
        out.extend_from_slice(&u64_block(rev, &[7, 8]));
        Ok(())
    })
    .unwrap();
    let mut expected = packet(2);
    expected.put_string("");
    expected.extend_from_slice(&u64_block(54492, &[7, 8]));
    assert_eq!(sent(&mut c), expected);
    c.end_data().unwrap();
    assert_eq!(c.state(), State::Busy(Phase::InsertEnd));
    let mut end = packet(2);
    end.put_string("");
    chnative_proto::block::write_empty_block(&mut end, 54492);
    assert_eq!(sent(&mut c), end);
    let mut bytes = progress(54492);
    bytes.extend(end_of_stream());
    feed(&mut c, &bytes);
    let evs = events(&mut c, &mut Keep::default());
    assert!(matches!(evs[..], [Event::Progress(_), Event::EndOfStream]), "{evs:?}");
    assert!(c.is_idle());
}

#[test]
fn table_columns_then_header() {
    let mut c = idle();
    c.insert(&query("INSERT INTO t VALUES", false)).unwrap();
    let mut b = packet(11);
    b.put_string("t");
    b.put_string("columns format version: 1\n1 columns:\n`n` UInt64\n");
    b.extend(block_packet(1, &u64_block(54492, &[]), false));
    feed(&mut c, &b);
    let mut sink = Keep::default();
    let evs = events(&mut c, &mut sink);
    assert!(matches!(&evs[..], [Event::TableColumns { table, .. }, Event::Header] if table == "t"), "{evs:?}");
    assert_eq!(sink.data.columns()[0].name(), "n");
}

#[test]
fn compressed_table_columns_and_profile_events_from_54481() {
    for rev in [54460, 54492] {
        let mut c = idle_at(rev);
        c.insert(&query("INSERT INTO t VALUES", true)).unwrap();
        let mut body = Vec::new();
        body.put_string("t");
        body.put_string("columns format version: 1\n1 columns:\n`n` UInt64\n");
        let newer = rev >= 54481;
        let mut b = packet(11);
        if newer {
            compress_frame(Method::Lz4, &body, &mut b).unwrap();
        } else {
            b.extend_from_slice(&body);
        }
        b.extend(block_packet(14, &u64_block(rev, &[5]), newer));
        b.extend(block_packet(1, &u64_block(rev, &[]), true));
        let mut sink = Keep::default();
        for chunk in b.chunks(5) {
            feed(&mut c, chunk);
            for e in events(&mut c, &mut sink) {
                if e == Event::ProfileEvents {
                    assert_eq!(sink.other.column("n").unwrap().view().values::<u64>().unwrap(), &[5]);
                }
            }
        }
        assert_eq!(c.state(), State::Busy(Phase::InsertData), "revision {rev}");
    }
}

#[test]
fn insert_with_inline_values_ends_without_a_header() {
    let mut c = idle();
    c.insert(&query("INSERT INTO t VALUES (1)", false)).unwrap();
    feed(&mut c, &end_of_stream());
    assert_eq!(events(&mut c, &mut Keep::default()), [Event::EndOfStream]);
    assert!(c.is_idle());
}

#[test]
fn exception_during_insert_data_ends_the_data() {
    let (mut c, mut sink) = inserting();
    c.send_data(|out: &mut Vec<u8>, rev| -> Result<(), Error> {
        out.extend_from_slice(&u64_block(rev, &[1]));
        Ok(())
    })
    .unwrap();
    // The first bytes are written, the rest is not yet.
    c.advance(3);
    assert!(c.is_mid_packet());
    feed(&mut c, &exception(53, "type mismatch"));
    assert!(matches!(events(&mut c, &mut sink)[..], [Event::Exception(_)]));
    assert!(c.is_idle());
    // The rest of the Data packet, then the empty block the server waits for.
    let rest = sent(&mut c);
    let mut end = packet(2);
    end.put_string("");
    chnative_proto::block::write_empty_block(&mut end, 54492);
    assert!(rest.ends_with(&end));
    assert!(!c.is_mid_packet());
    assert!(matches!(c.send_data(|_: &mut Vec<u8>, _| -> Result<(), Error> { Ok(()) }), Err(Error::State { .. })));
}

#[test]
fn end_of_stream_or_data_during_insert_data_is_a_violation() {
    for bytes in [
        end_of_stream(),
        block_packet(1, &u64_block(54492, &[1]), false),
        block_packet(7, &u64_block(54492, &[1]), false),
    ] {
        let (mut c, mut sink) = inserting();
        feed(&mut c, &bytes);
        assert!(is_violation(&c.poll(&mut sink).unwrap_err()));
    }
}

#[test]
fn a_failed_encode_sends_nothing() {
    let (mut c, _) = inserting();
    let r = c.send_data(|out: &mut Vec<u8>, _| {
        out.extend_from_slice(b"half");
        Err(Error::Unsupported("bad column".into()))
    });
    assert!(r.is_err());
    assert!(!c.has_output());
    assert_eq!(c.state(), State::Busy(Phase::InsertData));
}

// ---- ping, cancel ----

#[test]
fn ping_pong() {
    let mut c = idle();
    c.ping().unwrap();
    assert_eq!(sent(&mut c), [4]);
    feed(&mut c, &progress(54492));
    feed(&mut c, &packet(4));
    let evs = events(&mut c, &mut Keep::default());
    assert!(matches!(evs[..], [Event::Progress(_), Event::Pong]), "{evs:?}");
    assert!(c.is_idle());
}

#[test]
fn end_of_stream_answering_a_ping_is_a_violation() {
    let mut c = idle();
    c.ping().unwrap();
    feed(&mut c, &end_of_stream());
    assert!(is_violation(&c.poll(&mut Discard).unwrap_err()));
}

#[test]
fn cancel_then_drain_to_end_of_stream() {
    let mut c = running_query();
    c.cancel(Instant::now()).unwrap();
    assert_eq!(c.state(), State::Busy(Phase::Cancelled));
    assert_eq!(sent(&mut c), [3]);
    c.cancel(Instant::now()).unwrap(); // once only
    assert!(!c.has_output());
    let mut b = block_packet(1, &u64_block(54492, &[1, 2]), false);
    b.extend(progress(54492));
    b.extend(end_of_stream());
    feed(&mut c, &b);
    let evs = events(&mut c, &mut Keep::default());
    assert_eq!(evs.last(), Some(&Event::EndOfStream));
    assert!(c.is_idle());
    c.cancel(Instant::now()).unwrap(); // idle: ignored, like the server does
    assert!(!c.has_output());
}

#[test]
fn cancel_during_insert_or_ping_is_refused() {
    let (mut c, _) = inserting();
    assert!(matches!(c.cancel(Instant::now()), Err(Error::State { command: "cancel", .. })));
    let mut c = idle();
    c.ping().unwrap();
    assert!(matches!(c.cancel(Instant::now()), Err(Error::State { .. })));
}

// ---- abandon ----

#[test]
fn abandon_before_any_byte_went_out_undoes_the_command() {
    let mut c = idle();
    c.query(&query("SELECT 1", false)).unwrap();
    c.abandon(Instant::now());
    assert!(c.is_idle());
    assert!(!c.has_output());
    c.insert(&query("INSERT", false)).unwrap();
    c.abandon(Instant::now());
    assert!(c.is_idle() && !c.has_output());
    c.ping().unwrap();
    c.abandon(Instant::now());
    assert!(c.is_idle() && !c.has_output());
}

#[test]
fn abandon_mid_packet_closes() {
    let mut c = idle();
    c.query(&query("SELECT 1", false)).unwrap();
    c.advance(2);
    assert!(c.is_mid_packet());
    c.abandon(Instant::now());
    assert!(c.is_closed());
    assert!(!c.has_output(), "the rest of a half-written packet is never sent");
    assert!(c.close_reason().unwrap().contains("half written"));
}

#[test]
fn abandon_a_running_query_cancels_and_drains() {
    let mut c = running_query();
    c.abandon(Instant::now());
    assert_eq!(c.state(), State::Busy(Phase::Cancelled));
    assert_eq!(sent(&mut c), [3]);
    feed(&mut c, &end_of_stream());
    events(&mut c, &mut Keep::default());
    assert!(c.is_idle());
}

#[test]
fn abandon_an_insert_closes_unless_its_data_is_all_sent() {
    let (mut c, _) = inserting();
    c.abandon(Instant::now());
    assert!(c.is_closed());
    assert!(c.close_reason().unwrap().contains("INSERT was abandoned"));

    let mut c = idle();
    c.insert(&query("INSERT", false)).unwrap();
    sent(&mut c);
    c.abandon(Instant::now()); // waiting for the header
    assert!(c.is_closed());

    let (mut c, _) = inserting();
    c.end_data().unwrap();
    sent(&mut c);
    c.abandon(Instant::now()); // all data sent: read the confirmation
    assert_eq!(c.state(), State::Busy(Phase::InsertEnd));
    feed(&mut c, &end_of_stream());
    events(&mut c, &mut Keep::default());
    assert!(c.is_idle());
}

#[test]
fn abandon_a_sent_ping_waits_for_pong() {
    let mut c = idle();
    c.ping().unwrap();
    sent(&mut c);
    c.abandon(Instant::now());
    assert_eq!(c.state(), State::Busy(Phase::Ping));
}

#[test]
fn abandon_the_handshake_closes() {
    let mut c = Connection::new(options(54492));
    c.start_handshake(&HELLO, "").unwrap();
    c.abandon(Instant::now());
    assert!(c.is_closed());
}

// ---- server-side closing, limits ----

#[test]
fn unknown_setting_exception_closes_with_its_cause() {
    let mut c = running_query();
    feed(&mut c, &exception(115, "Setting bogus is neither a builtin setting nor started with a prefix"));
    assert!(matches!(c.poll(&mut Discard).unwrap(), Poll::Event(Event::Exception(_))));
    assert!(c.is_closed());
    match c.query(&query("SELECT 1", false)) {
        Err(Error::Closed(r)) => assert!(r.contains("code 115") && r.contains("bogus"), "{r}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn network_error_exception_closes() {
    // 26.9 with <proto_caps> requiring chunked framing answers an older client's
    // first query with 210 NETWORK_ERROR and closes; the connection is not reused.
    let mut c = running_query();
    feed(&mut c, &exception(210, "The client requires chunked framing, the server does not allow it"));
    assert!(matches!(c.poll(&mut Discard).unwrap(), Poll::Event(Event::Exception(_))));
    assert!(c.is_closed());
    assert!(matches!(c.query(&query("SELECT 1", false)), Err(Error::Closed(r)) if r.contains("code 210")));
}

#[test]
fn peer_closed_after_an_exception_names_it() {
    let mut c = running_query();
    feed(&mut c, &exception(62, "Syntax error"));
    events(&mut c, &mut Keep::default());
    assert!(c.is_idle());
    c.peer_closed();
    assert!(c.close_reason().unwrap().contains("code 62"));
}

#[test]
fn endless_packets_without_rows_are_capped() {
    let mut c = Connection::new(Options { max_silent_packets: 5, ..options(54492) });
    c.start_handshake(&HELLO, "").unwrap();
    feed(&mut c, &hello_capture(54492));
    c.poll(&mut Discard).unwrap();
    c.query(&query("SELECT 1", false)).unwrap();
    let mut sink = Keep::default();
    for _ in 0..5 {
        feed(&mut c, &progress(54492));
        assert!(matches!(c.poll(&mut sink).unwrap(), Poll::Event(Event::Progress(_))));
    }
    // Rows reset the count.
    feed(&mut c, &block_packet(1, &u64_block(54492, &[1]), false));
    assert_eq!(c.poll(&mut sink).unwrap(), Poll::Event(Event::Data));
    for _ in 0..5 {
        feed(&mut c, &block_packet(1, &u64_block(54492, &[]), false));
        assert_eq!(c.poll(&mut sink).unwrap(), Poll::Event(Event::Data));
    }
    feed(&mut c, &progress(54492));
    let e = c.poll(&mut sink).unwrap_err();
    assert!(e.to_string().contains("without rows"), "{e}");
    assert!(c.is_closed());
}

#[test]
fn a_packet_larger_than_the_limit_is_refused_before_reading_it() {
    let mut c = Connection::new(Options { max_block_bytes: 1000, ..options(54492) });
    c.start_handshake(&HELLO, "").unwrap();
    feed(&mut c, &hello_capture(54492));
    c.poll(&mut Discard).unwrap();
    c.query(&query("SELECT 1", false)).unwrap();
    // A UInt64 column of 4M rows: 32 MiB of values announced by a few bytes.
    let mut body = Vec::new();
    BlockInfo::default().write(&mut body, 54492);
    body.put_varuint(1);
    body.put_varuint(4 << 20);
    body.put_string("n");
    body.put_string("UInt64");
    body.put_u8(0);
    feed(&mut c, &block_packet(1, &body, false));
    let e = c.poll(&mut Keep::default()).unwrap_err();
    assert!(matches!(e, Error::Proto(ProtoError::TooLarge { .. })), "{e:?}");
    assert!(c.is_closed());
}

#[test]
fn totals_extremes_and_header_events() {
    let mut c = running_query();
    let mut b = block_packet(1, &u64_block(54492, &[]), false);
    b.extend(block_packet(1, &u64_block(54492, &[3]), false));
    b.extend(block_packet(7, &u64_block(54492, &[9]), false));
    b.extend(block_packet(8, &u64_block(54492, &[1, 9]), false));
    b.extend(block_packet(1, &u64_block(54492, &[]), false));
    b.extend(end_of_stream());
    feed(&mut c, &b);
    let evs = events(&mut c, &mut Keep::default());
    assert_eq!(evs, [Event::Header, Event::Data, Event::Totals, Event::Extremes, Event::Data, Event::EndOfStream]);
}

#[test]
fn blocks_nobody_wants_go_to_scratch() {
    let mut c = running_query();
    let mut b = block_packet(1, &u64_block(54492, &[1, 2, 3]), false);
    b.extend(end_of_stream());
    feed(&mut c, &b);
    let mut evs = Vec::new();
    while let Poll::Event(e) = c.poll(&mut Discard).unwrap() {
        evs.push(e);
    }
    assert_eq!(evs, [Event::Data, Event::EndOfStream]);
}

#[test]
fn output_accounting_across_partial_writes() {
    let mut c = idle();
    c.ping().unwrap();
    assert!(!c.is_mid_packet());
    feed(&mut c, &packet(4));
    c.poll(&mut Discard).unwrap();
    c.query(&query("SELECT 1", false)).unwrap();
    // Ping (1 byte) is whole; the query is being written.
    c.advance(1);
    assert!(!c.is_mid_packet());
    c.advance(1);
    assert!(c.is_mid_packet());
    let rest = c.transmit().len();
    c.advance(rest);
    assert!(!c.is_mid_packet());
    assert!(!c.has_output());
}

// ---- spliced INSERT blocks (runs of the caller's buffers sent from where they lie) ----

/// An insert-data connection, compressed or not.
fn inserting_with(compression: bool) -> Connection {
    let mut c = idle();
    c.insert(&query("INSERT INTO t (n) VALUES", compression)).unwrap();
    sent(&mut c);
    let mut sink = Keep::default();
    feed(&mut c, &block_packet(1, &u64_block(54492, &[]), compression));
    assert_eq!(events(&mut c, &mut sink), [Event::Header]);
    c
}

/// Writes everything queued through `transmit_spliced`, `iov_len` slices and
/// at most `step` bytes at a time (a socket that takes little).
fn sent_spliced(c: &mut Connection, splices: &Splices<'_>, iov_len: usize, step: usize) -> Vec<u8> {
    let mut out = Vec::new();
    while c.has_output() {
        let mut iov = vec![std::io::IoSlice::new(&[]); iov_len];
        let k = c.transmit_spliced(splices, &mut iov).unwrap();
        assert!(k > 0);
        let mut n = 0;
        'outer: for s in &iov[..k] {
            for &b in s.iter() {
                if n == step {
                    break 'outer;
                }
                out.push(b);
                n += 1;
            }
        }
        c.advance(n);
    }
    out
}

/// The encoder's own bytes and two long runs between them, as a spliced
/// encoder writes them, and the same bytes whole.
fn spliced_body<'a>(runs: &'a [Vec<u8>; 2], out: &mut Vec<u8>, sp: &mut Splices<'a>) -> Vec<u8> {
    out.extend_from_slice(b"head");
    sp.push(out, &runs[0]);
    sp.push(out, b"short run, copied");
    out.extend_from_slice(b"middle");
    sp.push(out, &runs[1]);
    sp.push(out, &runs[1]);
    out.extend_from_slice(b"tail");
    let mut whole = b"head".to_vec();
    whole.extend_from_slice(&runs[0]);
    whole.extend_from_slice(b"short run, copiedmiddle");
    whole.extend_from_slice(&runs[1]);
    whole.extend_from_slice(&runs[1]);
    whole.extend_from_slice(b"tail");
    whole
}

fn two_runs() -> [Vec<u8>; 2] {
    let a: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
    let b: Vec<u8> = (0..(MIN_SPLICE as u32 + 3)).map(|i| (i % 7) as u8).collect();
    [a, b]
}

#[test]
fn a_spliced_block_goes_out_as_the_same_bytes() {
    let runs = two_runs();
    for (iov_len, step) in [(256, usize::MAX), (1, usize::MAX), (2, 1000), (3, 7)] {
        let mut c = inserting_with(false);
        let mut splices = Splices::new();
        let mut whole = Vec::new();
        c.send_data_spliced(&mut splices, |out, sp, _| -> Result<(), Error> {
            whole = spliced_body(&runs, out, sp);
            Ok(())
        })
        .unwrap();
        assert_eq!(splices.len(), 3);
        assert!(c.has_spliced_output());
        // The end of data queues behind the block.
        c.end_data().unwrap();
        let mut want = packet(2);
        want.put_string("");
        want.extend_from_slice(&whole);
        let mut end = packet(2);
        end.put_string("");
        chnative_proto::block::write_empty_block(&mut end, 54492);
        want.extend_from_slice(&end);
        assert_eq!(sent_spliced(&mut c, &splices, iov_len, step), want, "{iov_len} {step}");
        assert!(!c.has_output() && !c.has_spliced_output() && !c.is_mid_packet());
        assert_eq!(c.state(), State::Busy(Phase::InsertEnd));
    }
}

#[test]
fn plain_transmit_stops_before_the_first_run() {
    let runs = two_runs();
    let mut c = inserting_with(false);
    let mut splices = Splices::new();
    c.send_data_spliced(&mut splices, |out, sp, _| -> Result<(), Error> {
        spliced_body(&runs, out, sp);
        Ok(())
    })
    .unwrap();
    let head = c.transmit().to_vec();
    assert!(head.ends_with(b"head"));
    c.advance(head.len());
    assert!(c.transmit().is_empty() && c.has_output());
    // The wrong splices are refused, nothing is consumed.
    let mut iov = [std::io::IoSlice::new(&[]); 4];
    assert!(c.transmit_spliced(&Splices::new(), &mut iov).is_err());
    // Another spliced block waits for this one.
    let r = c.send_data_spliced(&mut Splices::new(), |_, _, _| -> Result<(), Error> { Ok(()) });
    assert!(is_violation(&r.unwrap_err()));
    let rest = sent_spliced(&mut c, &splices, 8, usize::MAX);
    assert!(rest.starts_with(&runs[0]) && rest.ends_with(b"tail"));
}

#[test]
fn a_failed_spliced_encode_sends_nothing() {
    let runs = two_runs();
    let mut c = inserting_with(false);
    let mut splices = Splices::new();
    let r = c.send_data_spliced(&mut splices, |out, sp, _| {
        spliced_body(&runs, out, sp);
        Err(Error::Proto(ProtoError::violation("no")))
    });
    assert!(r.is_err());
    assert!(splices.is_empty() && !c.has_output());
    assert_eq!(c.state(), State::Busy(Phase::InsertData));
}

#[test]
fn abandoning_an_insert_with_runs_unwritten_closes() {
    let runs = two_runs();
    let (mut c, _) = inserting();
    let mut splices = Splices::new();
    c.send_data_spliced(&mut splices, |out, sp, _| -> Result<(), Error> {
        spliced_body(&runs, out, sp);
        Ok(())
    })
    .unwrap();
    c.end_data().unwrap();
    c.abandon(Instant::now());
    assert!(c.is_closed());
    assert!(!c.has_output() && !c.has_spliced_output());
}

/// The decompressed body of a compressed Data packet (after its head).
fn decompressed(packet_bytes: &[u8], head: usize) -> (Vec<u8>, usize) {
    let mut frames = &packet_bytes[head..];
    let (mut plain, mut n) = (Vec::new(), 0);
    while !frames.is_empty() {
        let prefix: &[u8; FRAME_PREFIX_LEN] = frames[..FRAME_PREFIX_LEN].try_into().unwrap();
        let h = FrameHeader::parse(prefix, 1 << 30).unwrap();
        decompress_frame(&h, &frames[..h.frame_len()], &mut plain).unwrap();
        frames = &frames[h.frame_len()..];
        n += 1;
    }
    (plain, n)
}

#[test]
fn a_compressed_spliced_block_holds_the_same_bytes() {
    let runs = two_runs();
    let mut c = inserting_with(true);
    let mut splices = Splices::new();
    let mut whole = Vec::new();
    c.send_data_spliced(&mut splices, |out, sp, _| -> Result<(), Error> {
        whole = spliced_body(&runs, out, sp);
        Ok(())
    })
    .unwrap();
    // Compressed, the runs are read once, into frames: the splices are done with.
    assert!(splices.is_empty() && !c.has_spliced_output());
    let bytes = sent(&mut c);
    let mut head = packet(2);
    head.put_string("");
    assert!(bytes.starts_with(&head));
    let (plain, frames) = decompressed(&bytes, head.len());
    assert_eq!(plain, whole);
    // "head", the 100 kB run on its own, then the rest gathered.
    assert_eq!(frames, 3);
}
