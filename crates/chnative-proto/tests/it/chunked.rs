//! Chunked framing through the connection state machine, against bytes
//! captured from a ClickHouse 26.9 server configured with
//! `<proto_caps><send>chunked</send><recv>chunked</recv></proto_caps>`
//! (`scripts/capture.py --chunked --compress 1 --sql "SELECT number,
//! toString(number) AS s FROM numbers(5) SETTINGS max_block_size = 2"`).
//! Each `.bin` has a `.hex` twin for reading; a test keeps them equal.

use chnative_proto::chunked::{self, Mode};
use chnative_proto::connection::{BlockSink, Connection, Discard, Error, Event, Options, Poll, State};
use chnative_proto::packet::{self, BlockKind, ClientHello, ClientInfo, Query};
use chnative_proto::{Block, ProtoError};

fn capture(name: &str) -> Vec<u8> {
    std::fs::read(format!("{}/tests/data/captures/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
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

fn query(compression: bool) -> Query<'static> {
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
        sql: "SELECT number, toString(number) AS s FROM numbers(5) SETTINGS max_block_size = 2",
        parameters: &[],
    }
}

fn sent(c: &mut Connection) -> Vec<u8> {
    let out = c.transmit().to_vec();
    c.advance(out.len());
    out
}

fn feed(c: &mut Connection, bytes: &[u8]) {
    c.recv_buffer(bytes.len()).extend_from_slice(bytes);
}

/// A connection with `options` after the handshake with `hello`; returns it
/// and the Addendum it wrote.
fn handshaken(options: Options, hello: &[u8]) -> (Connection, Vec<u8>) {
    let mut c = Connection::new(options);
    c.start_handshake(&HELLO, "").unwrap();
    sent(&mut c);
    feed(&mut c, hello);
    assert_eq!(c.poll(&mut Discard).unwrap(), Poll::Event(Event::Hello));
    let addendum = sent(&mut c);
    (c, addendum)
}

fn chunked_options(mode: Mode) -> Options {
    Options { chunked_send: mode, chunked_recv: mode, ..Options::default() }
}

/// Splits chunked bytes into messages, each the concatenated chunk payloads.
fn messages(mut wire: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut cur = Vec::new();
    while !wire.is_empty() {
        let size = u32::from_le_bytes(wire[..4].try_into().unwrap()) as usize;
        wire = &wire[4..];
        if size == 0 {
            assert!(!cur.is_empty(), "empty message");
            out.push(std::mem::take(&mut cur));
        } else {
            cur.extend_from_slice(&wire[..size]);
            wire = &wire[size..];
        }
    }
    assert!(cur.is_empty(), "unterminated message");
    out
}

#[test]
fn the_server_hello_names_its_modes_and_the_addendum_answers() {
    let (c, addendum) = handshaken(Options::default(), &capture("hello_chunked_54492.bin"));
    assert_eq!((c.server().chunked_send.as_str(), c.server().chunked_recv.as_str()), ("chunked", "chunked"));
    let n = c.chunking();
    assert!(n.send && n.recv, "a server that requires chunking gets it from the default client");
    // The Addendum itself is not framed; it says "chunked" for both directions.
    let mut want = Vec::new();
    packet::write_addendum_chunked(&mut want, 54492, "", n);
    assert_eq!(addendum, want);
    assert!(addendum.windows(7).filter(|w| w == b"chunked").count() == 2);
}

#[test]
fn packets_sent_are_one_message_each_and_otherwise_unchanged() {
    let (mut c, _) = handshaken(Options::default(), &capture("hello_chunked_54492.bin"));
    let (mut plain, _) = handshaken(Options::default(), &capture("hello_54492.bin"));
    assert!(!plain.chunking().send);
    for compression in [false, true] {
        c.query(&query(compression)).unwrap();
        plain.query(&query(compression)).unwrap();
        let framed = sent(&mut c);
        let unframed = sent(&mut plain);
        let msgs = messages(&framed);
        assert_eq!(msgs.len(), 2, "Query and the empty Data block");
        assert_eq!(msgs.concat(), unframed);
        assert_eq!(msgs[1][0], 2, "the second message is a Data packet");
        c.abandon_for_test();
        plain.abandon_for_test();
    }
    // Ping is one message of one byte.
    c.ping().unwrap();
    assert_eq!(sent(&mut c), [1, 0, 0, 0, 4, 0, 0, 0, 0]);
}

/// Helpers to get a test connection back to Idle without a server.
trait AbandonForTest {
    fn abandon_for_test(&mut self);
}

impl AbandonForTest for Connection {
    fn abandon_for_test(&mut self) {
        // A cancelled query is drained by EndOfStream.
        self.abandon(std::time::Instant::now());
        let eos = if self.chunking().recv { vec![1, 0, 0, 0, 5, 0, 0, 0, 0] } else { vec![5] };
        feed(self, &eos);
        assert_eq!(self.poll(&mut Discard).unwrap(), Poll::Event(Event::EndOfStream));
        assert!(self.is_idle());
        sent(self);
    }
}

#[derive(Default)]
struct Data(Block);

impl BlockSink for Data {
    fn block(&mut self, kind: BlockKind) -> Option<&mut Block> {
        (kind == BlockKind::Data).then_some(&mut self.0)
    }
}

/// What the capture decodes to: the events, and the rows of each Data block.
fn decode(c: &mut Connection, wire: &[u8], cuts: &[usize]) -> (Vec<String>, Vec<(u64, String)>) {
    let mut sink = Data::default();
    let mut events = Vec::new();
    let mut rows = Vec::new();
    let mut at = 0;
    let mut cuts = cuts.iter().copied().chain(std::iter::once(wire.len()));
    loop {
        match c.poll(&mut sink).unwrap() {
            Poll::Event(e) => {
                if e == Event::Data && sink.0.rows() > 0 {
                    let b = &sink.0;
                    let nums: &[u64] = b.column("number").unwrap().view().values().unwrap();
                    let s = b.column("s").unwrap().view();
                    let strs = s.as_strings().unwrap();
                    for (i, n) in nums.iter().enumerate() {
                        rows.push((*n, strs.str(i).unwrap().to_string()));
                    }
                }
                let done = e == Event::EndOfStream;
                events.push(match e {
                    Event::Progress(_) => "Progress".to_string(),
                    Event::ProfileInfo(_) => "ProfileInfo".to_string(),
                    Event::Data => format!("Data({})", sink.0.rows()),
                    e => format!("{e:?}"),
                });
                if done {
                    assert!(c.is_idle());
                    assert_eq!(c.buffered(), 0);
                    return (events, rows);
                }
            }
            Poll::NeedInput { needed } => {
                assert!(needed > c.buffered());
                let cut = cuts.next().expect("the capture ended before EndOfStream");
                feed(c, &wire[at..cut]);
                at = cut;
            }
            Poll::Idle => panic!("idle before EndOfStream"),
            other => panic!("a poll result this test does not know: {other:?}"),
        }
    }
}

fn querying() -> Connection {
    let (mut c, _) = handshaken(Options::default(), &capture("hello_chunked_54492.bin"));
    c.query(&query(true)).unwrap();
    sent(&mut c);
    c
}

#[test]
fn a_captured_chunked_answer_decodes_at_every_split() {
    let wire = capture("chunked_numbers5_lz4_54492.bin");
    let want_events = [
        "Header",
        "Data(2)",
        "Data(2)",
        "Data(1)",
        "ProfileInfo",
        "Progress",
        "ProfileEvents",
        "Data(0)",
        "Progress",
        "EndOfStream",
    ];
    let want_rows: Vec<(u64, String)> = (0..5).map(|i| (i, i.to_string())).collect();
    let (events, rows) = decode(&mut querying(), &wire, &[]);
    assert_eq!(events, want_events);
    assert_eq!(rows, want_rows);
    for cut in 1..wire.len() {
        let (events, rows) = decode(&mut querying(), &wire, &[cut]);
        assert_eq!(events, want_events, "cut at {cut}");
        assert_eq!(rows, want_rows, "cut at {cut}");
    }
    // A byte at a time.
    let every: Vec<usize> = (1..wire.len()).collect();
    assert_eq!(decode(&mut querying(), &wire, &every).1, want_rows);
    // The connection is reusable afterwards, still chunked.
    let mut c = querying();
    decode(&mut c, &wire, &[]);
    c.ping().unwrap();
    assert_eq!(sent(&mut c), [1, 0, 0, 0, 4, 0, 0, 0, 0]);
    feed(&mut c, &[1, 0, 0, 0, 4, 0, 0, 0, 0]);
    assert_eq!(c.poll(&mut Discard).unwrap(), Poll::Event(Event::Pong));
}

#[test]
fn unframed_bytes_from_a_chunked_server_are_refused() {
    // The same answer without its framing: the first "header" is garbage.
    let wire = capture("chunked_numbers5_lz4_54492.bin");
    let plain: Vec<u8> = messages(&wire).concat();
    let mut c = querying();
    feed(&mut c, &plain);
    let e = loop {
        match c.poll(&mut Discard) {
            Ok(Poll::Event(_)) => {}
            Ok(other) => panic!("{other:?}"),
            Err(e) => break e,
        }
    };
    assert!(matches!(e, Error::Proto(ProtoError::TooLarge { what: "chunk", .. })), "{e}");
    assert!(c.is_closed());
}

#[test]
fn malformed_chunk_headers_close_the_connection() {
    let wire = capture("chunked_numbers5_lz4_54492.bin");
    let first = 4 + u32::from_le_bytes(wire[..4].try_into().unwrap()) as usize + 4;
    let cases: [(&str, Vec<u8>); 3] = [
        ("u32::MAX length", [&[0xff, 0xff, 0xff, 0xff][..], &wire[4..]].concat()),
        ("empty message", [&wire[..first], &[0, 0, 0, 0], &wire[first..]].concat()),
        ("empty message first", [&[0, 0, 0, 0][..], &wire[..]].concat()),
    ];
    for (what, bad) in cases {
        let mut c = querying();
        feed(&mut c, &bad);
        // buffered() strips what has arrived; the error comes with the next poll.
        let _ = c.buffered();
        let e = loop {
            match c.poll(&mut Discard) {
                Ok(Poll::Event(_)) => {}
                Ok(other) => panic!("{what}: {other:?}"),
                Err(e) => break e,
            }
        };
        match what {
            "u32::MAX length" => assert!(
                matches!(e, Error::Proto(ProtoError::TooLarge { what: "chunk", got: 0xffff_ffff, .. })),
                "{what}: {e}"
            ),
            _ => assert!(
                matches!(&e, Error::Proto(ProtoError::Violation(m)) if m.contains("empty chunked message")),
                "{what}: {e}"
            ),
        }
        assert_eq!(c.state(), State::Closed, "{what}");
        assert!(c.close_reason().unwrap().contains("chunk"), "{what}");
        assert!(matches!(c.ping(), Err(Error::Closed(_))), "{what}");
    }
}

#[test]
fn a_client_that_refuses_chunking_refuses_the_server() {
    for (mode, send, recv) in [
        (Mode::NotChunked, Mode::NotChunked, Mode::NotChunked),
        (Mode::NotChunked, Mode::NotChunked, Mode::ChunkedOptional),
        (Mode::NotChunked, Mode::ChunkedOptional, Mode::NotChunked),
    ] {
        let mut c = Connection::new(Options { chunked_send: send, chunked_recv: recv, ..Options::default() });
        c.start_handshake(&HELLO, "").unwrap();
        sent(&mut c);
        feed(&mut c, &capture("hello_chunked_54492.bin"));
        let e = c.poll(&mut Discard).unwrap_err();
        assert!(matches!(&e, Error::Unsupported(m) if m.contains("requires chunked")), "{mode}: {e}");
        assert!(c.is_closed());
        assert!(c.transmit().is_empty(), "no Addendum after a refusal");
    }
    // Requiring chunking needs revision 54470.
    let mut c = Connection::new(Options { revision: 54460, ..chunked_options(Mode::Chunked) });
    c.start_handshake(&HELLO, "").unwrap();
    sent(&mut c);
    feed(&mut c, &capture("hello_54460.bin"));
    let e = c.poll(&mut Discard).unwrap_err();
    assert!(matches!(&e, Error::Unsupported(m) if m.contains("54470")), "{e}");
}

#[test]
fn a_default_server_is_not_chunked_even_when_the_client_prefers_it() {
    // The default server says "notchunked" both ways; only `chunked` (strict)
    // on the client makes that an error.
    let (c, _) = handshaken(chunked_options(Mode::ChunkedOptional), &capture("hello_54492.bin"));
    assert_eq!(c.server().chunked_send, "notchunked");
    assert!(!c.chunking().send && !c.chunking().recv);
    let mut c = Connection::new(chunked_options(Mode::Chunked));
    c.start_handshake(&HELLO, "").unwrap();
    feed(&mut c, &capture("hello_54492.bin"));
    let e = c.poll(&mut Discard).unwrap_err();
    assert!(matches!(&e, Error::Unsupported(m) if m.contains("requires notchunked")), "{e}");
    assert_eq!(chunked::Mode::default(), Mode::NotChunkedOptional);
}

#[test]
fn an_exception_while_idle_is_reported_with_its_text() {
    // What a server requiring chunking sends a client below revision 54470
    // after the Addendum, before closing (seen on 26.9).
    let (mut c, _) = handshaken(Options { revision: 54460, ..Options::default() }, &capture("hello_54460.bin"));
    let mut e = Vec::new();
    e.push(2u8);
    for (i, s) in ["DB::NetException", "Incompatible protocol: send is chunked, client requested notchunked", ""]
        .iter()
        .enumerate()
    {
        if i == 0 {
            e.extend_from_slice(&210i32.to_le_bytes());
        }
        e.push(s.len() as u8);
        e.extend_from_slice(s.as_bytes());
    }
    e.push(0); // no nested exception
    feed(&mut c, &e);
    let err = c.poll(&mut Discard).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("code 210") && msg.contains("Incompatible protocol"), "{msg}");
    assert!(c.is_closed());
}
