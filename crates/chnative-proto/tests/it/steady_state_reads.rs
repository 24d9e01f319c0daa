//! A warm connection decodes a result with no allocation, however the reads
//! fall: driven without a socket, as the tokio layer drives it (reads into the
//! spare capacity of `recv_buffer`, vectored reads into `direct_slots` while a
//! fixed-width column is filled straight from the socket), with read sizes
//! from adversarial schedules. Allocations are counted on the test's own
//! thread only, so the other tests of this file running alongside don't count.
//!
//! The result has the shape of `SELECT number, toString(number)` without
//! compression: blocks of 65,409 rows, a 523 KB UInt64 column and a String
//! column of seven-digit numbers (981 KB with the sizes stream of revision
//! 54492, 523 KB with the VarUInt lengths of older ones), in either order.
//!
//! Before the input let go of each column as the block took it, it held the
//! whole block when a read brought the head of a block with enough of its
//! UInt64 column that no direct fill started, and only the String column
//! otherwise: a warm connection grew its input from 1 MiB to 2 MiB (1,046,594
//! bytes in one allocation, as `tests/alloc.rs` saw) on the first such read.

use chnative_proto::connection::{BlockSink, Connection, Event, Options, Poll, State};
use chnative_proto::packet::{BlockKind, ClientHello, ClientInfo, Query};
use chnative_proto::wire::WriteExt;
use chnative_proto::{Block, Column, ColumnData};
use chnative_testkit::alloc;

fn allocated() -> u64 {
    alloc::bytes()
}

const REV: u64 = 54492;
const ROWS: u64 = 65_409;
const BLOCKS: u64 = 6;

const HELLO: ClientHello<'static> = ClientHello {
    client_name: "test",
    version_major: 0,
    version_minor: 1,
    revision: REV,
    database: "",
    user: "default",
    password: "",
};

const QUERY: Query<'static> = Query {
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
    sql: "SELECT number, toString(number) FROM numbers(N)",
    parameters: &[],
};

fn sent(c: &mut Connection) {
    let n = c.transmit().len();
    c.advance(n);
}

/// What the server sends for the query at `revision`: `BLOCKS` Data packets,
/// then EndOfStream. `string_first` puts the String column first.
fn result(revision: u64, string_first: bool) -> Vec<u8> {
    let mut wire = Vec::new();
    for b in 0..BLOCKS {
        // Seven digits, as most of `numbers(10000000)` has.
        let first = 1_000_000 + b * ROWS;
        let n: Vec<u64> = (first..first + ROWS).collect();
        let s: Vec<String> = n.iter().map(u64::to_string).collect();
        let mut columns = vec![
            Column::new("number", "UInt64", ColumnData::from_values(&n)).unwrap(),
            Column::new("toString(number)", "String", ColumnData::from_strings(&s)).unwrap(),
        ];
        if string_first {
            columns.reverse();
        }
        wire.put_varuint(1); // Data
        wire.put_string("");
        Block::from_columns(columns).unwrap().write(&mut wire, revision).unwrap();
    }
    wire.put_varuint(5); // EndOfStream
    wire
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

/// The socket: `wire`, handed out in reads of the sizes `sizes` yields.
struct Socket<'a, I> {
    wire: &'a [u8],
    at: usize,
    sizes: I,
}

impl<I: Iterator<Item = usize>> Socket<'_, I> {
    /// One read into `dst` (at most the next scheduled size).
    fn read(&mut self, dst: &mut [u8]) -> usize {
        self.read_pair(dst, &mut [])
    }

    /// One vectored read into `a`, then `b`.
    fn read_pair(&mut self, a: &mut [u8], b: &mut [u8]) -> usize {
        let size = self.sizes.next().unwrap_or(usize::MAX).max(1);
        let n = size.min(a.len() + b.len()).min(self.wire.len() - self.at);
        let in_a = n.min(a.len());
        a[..in_a].copy_from_slice(&self.wire[self.at..self.at + in_a]);
        b[..n - in_a].copy_from_slice(&self.wire[self.at + in_a..self.at + n]);
        self.at += n;
        n
    }
}

/// Runs the query on `c` and decodes its result as the tokio layer does,
/// reading from a socket that hands out reads of the sizes `sizes` gives.
/// Returns the bytes this thread allocated meanwhile, and the rows decoded.
fn run(c: &mut Connection, sink: &mut Keep, wire: &[u8], sizes: impl Iterator<Item = usize>) -> (u64, u64) {
    let mut sock = Socket { wire, at: 0, sizes };
    let before = allocated();
    c.query(&QUERY).unwrap();
    sent(c);
    let mut rows = 0;
    loop {
        match c.poll(sink).unwrap() {
            Poll::Event(Event::Data) => {
                check(&sink.data, rows);
                rows += sink.data.rows() as u64;
            }
            Poll::Event(Event::EndOfStream) => break,
            Poll::Event(e) => panic!("unexpected {e:?}"),
            Poll::Idle => panic!("idle"),
            Poll::NeedInput { needed } => {
                // driver.rs `fill`: one vectored read into the column and the buffer after it.
                if c.direct_pending() {
                    if let Some((slot, tail)) = c.direct_slots(sink) {
                        let n = sock.read_pair(slot, tail);
                        assert!(n > 0, "the machine wants more than the server sent");
                        c.direct_filled(sink, n);
                    }
                    continue;
                }
                // Otherwise reads into the input's spare capacity until `needed` is there.
                while c.buffered() < needed {
                    let want = needed - c.buffered();
                    let buf = c.recv_buffer(want);
                    let len = buf.len();
                    let cap = buf.capacity();
                    // tokio's `read_buf` on a full Vec makes room for 64 bytes.
                    if cap == len {
                        buf.reserve(64);
                    }
                    let spare = buf.capacity() - len;
                    buf.resize(len + spare, 0);
                    let n = sock.read(&mut buf[len..]);
                    buf.truncate(len + n);
                    assert!(n > 0, "the machine wants more than the server sent");
                }
            }
            other => panic!("a poll result this test does not know: {other:?}"),
        }
    }
    assert_eq!(sock.at, wire.len(), "the result ends where the server's bytes do");
    assert_eq!(c.state(), State::Idle);
    (allocated() - before, rows)
}

/// Checks a decoded block against what `result` made (its first row is the
/// result's row `at`): the numbers' sum, and some of the strings.
fn check(block: &Block, at: u64) {
    let first = 1_000_000 + at;
    let rows = block.rows() as u64;
    assert_eq!(rows, ROWS);
    let n = block.column("number").unwrap().view();
    let n: &[u64] = n.values().unwrap();
    assert_eq!(n.iter().sum::<u64>(), rows * first + rows * (rows - 1) / 2);
    let s = block.column("toString(number)").unwrap().view();
    let s = s.as_strings().unwrap();
    for i in [0, 1, 2, 4095, 32_768, ROWS as usize - 2, ROWS as usize - 1] {
        assert_eq!(s.bytes(i), decimal(&mut [0; 20], first + i as u64));
    }
    let total: usize = (0..s.len()).map(|i| s.bytes(i).len()).sum();
    assert_eq!(total, 7 * ROWS as usize);
}

/// `x` in decimal, written into `buf` (without allocating: `check` runs
/// inside the measured window).
fn decimal(buf: &mut [u8; 20], mut x: u64) -> &[u8] {
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (x % 10) as u8;
        x /= 10;
        if x == 0 {
            return &buf[at..];
        }
    }
}

/// A connection after the handshake at `revision`, without compression.
fn connection(revision: u64) -> Connection {
    let mut c = Connection::new(Options { revision, compression: None, ..Options::default() });
    c.start_handshake(&HELLO, "").unwrap();
    sent(&mut c);
    // The server's Hello has fields that depend on the client's revision.
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/captures");
    let hello = std::fs::read(format!("{dir}/hello_{revision}.bin")).unwrap();
    c.recv_buffer(hello.len()).extend_from_slice(&hello);
    assert_eq!(c.poll(&mut Keep::default()).unwrap(), Poll::Event(Event::Hello));
    sent(&mut c);
    c
}

/// A deterministic stream of pseudo-random numbers (xorshift64*).
fn rng(seed: u64) -> impl Iterator<Item = u64> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    std::iter::from_fn(move || {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        Some(x.wrapping_mul(0x2545_f491_4f6c_dd1d))
    })
}

/// Read sizes from tiny to larger than a block, mixed.
fn mixed(seed: u64) -> impl Iterator<Item = usize> {
    rng(seed).map(|r| match r % 4 {
        0 => (r >> 8) as usize % 200 + 1,
        1 => (r >> 8) as usize % (64 << 10) + 1,
        2 => (r >> 8) as usize % (600 << 10) + 1,
        _ => (r >> 8) as usize % (3 << 20) + 1,
    })
}

/// The read schedules a warm connection is put through.
fn schedules() -> Vec<(String, Box<dyn Iterator<Item = usize>>)> {
    let fixed: Vec<(String, Box<dyn Iterator<Item = usize>>)> = vec![
        ("1 MiB reads".into(), Box::new(std::iter::repeat(1 << 20))),
        ("whole-result reads".into(), Box::new(std::iter::repeat(usize::MAX))),
        ("64 KiB reads".into(), Box::new(std::iter::repeat(64 << 10))),
        ("4 KiB reads".into(), Box::new(std::iter::repeat(4 << 10))),
        ("1000-byte reads".into(), Box::new(std::iter::repeat(1000))),
        ("odd reads".into(), Box::new([7, 300_001, 13, 1 << 19, 65_537].into_iter().cycle())),
        ("600 KB reads".into(), Box::new(std::iter::repeat(600_000))),
    ];
    let seeded =
        (1..=16u64).map(|s| (format!("mixed reads, seed {s}"), Box::new(mixed(s)) as Box<dyn Iterator<Item = usize>>));
    fixed.into_iter().chain(seeded).collect()
}

#[test]
fn a_warm_connection_decodes_without_allocating_whatever_the_read_sizes() {
    for revision in [REV, 54460] {
        for string_first in [false, true] {
            let wire = result(revision, string_first);
            for first in [1 << 20, 4 << 10] {
                let case =
                    format!("revision {revision}, string first: {string_first}, first run in {first}-byte reads");
                let mut c = connection(revision);
                let mut sink = Keep::default();
                // The first run grows the buffers.
                let (_, rows) = run(&mut c, &mut sink, &wire, std::iter::repeat(first));
                assert_eq!(rows, BLOCKS * ROWS, "{case}");
                // Every later run allocates nothing, whatever sizes the reads have.
                for (what, sizes) in schedules() {
                    let (bytes, rows) = run(&mut c, &mut sink, &wire, sizes);
                    assert_eq!(rows, BLOCKS * ROWS, "{case}, {what}");
                    assert_eq!(bytes, 0, "{case}, {what}: a warm connection allocated {bytes} bytes");
                }
            }
        }
    }
}
