//! The client side of one native-protocol connection as a state machine, with no I/O.
//!
//! [`Connection`] takes user commands (handshake, query, insert data, ping,
//! cancel) and the server's bytes, and gives back [`Event`]s and the bytes to
//! write. The caller owns the socket: it writes [`Connection::transmit`] and
//! reports what went out with [`Connection::advance`], and when
//! [`Connection::poll`] answers [`Poll::NeedInput`] it appends at least that
//! many bytes to [`Connection::recv_buffer`]. Blocks are decoded into
//! [`Block`]s the caller lends through a [`BlockSink`], so their buffers are
//! reused from one block to the next.
//!
//! # States
//!
//! - **Start**: nothing sent. [`Connection::start_handshake`] writes Hello and
//!   moves to **Handshake**.
//! - **Handshake**: waiting for the server's Hello. Hello (with a usable
//!   revision and chunked framing both sides accept, see [`crate::chunked`])
//!   writes the Addendum, turns on the chunked framing negotiated for each
//!   direction and moves to **Idle**; an Exception is reported and moves to
//!   **Closed** (the server closes after a failed handshake). Anything else is
//!   a violation.
//! - **Idle**: nothing outstanding. [`Connection::query`] writes Query and the
//!   empty external-tables block and moves to **Busy(Query)**;
//!   [`Connection::insert`] does the same and moves to **Busy(InsertHeader)**;
//!   [`Connection::ping`] writes Ping and moves to **Busy(Ping)**. A Cancel is
//!   accepted and ignored (the server ignores it too). Any server packet is a
//!   violation.
//! - **Busy(Query)**: result packets arrive (header, data, totals, extremes,
//!   log, profile events, progress, profile info, table columns, time zone).
//!   [`Connection::cancel`] writes Cancel and moves to **Busy(Cancelled)**,
//!   where the same packets are accepted until the end. EndOfStream or an
//!   Exception moves to **Idle**.
//! - **Busy(InsertHeader)**: TableColumns, Progress, Log and ProfileEvents may
//!   come; the first Data block is the table's header ([`Event::Header`]) and
//!   moves to **Busy(InsertData)**. EndOfStream (a statement with inline data)
//!   or an Exception moves to **Idle**.
//! - **Busy(InsertData)**: [`Connection::send_data`] writes Data packets;
//!   [`Connection::end_data`] writes the empty block and moves to
//!   **Busy(InsertEnd)**. An Exception from the server (it rejected the data)
//!   writes the empty block the server waits for, so it stops discarding, and
//!   moves to **Idle**.
//! - **Busy(InsertEnd)**: packets until EndOfStream or Exception, then **Idle**.
//! - **Busy(Ping)**: Pong moves to **Idle** (Progress and blocks left over are
//!   accepted).
//! - **Closed**: terminal. Every later call fails with [`Error::Closed`]
//!   carrying the *first* cause. Entered on any protocol violation or decode
//!   error, on an Exception after which the server closes the connection
//!   (e.g. an unknown setting), when the caller reports the end of the byte
//!   stream or another failure with [`Connection::close`], when
//!   [`Connection::abandon`] finds a half-written packet or an unfinished
//!   INSERT, and after too many consecutive packets without rows.
//!
//! In any Busy state, [`Connection::abandon`] is what the caller does when the
//! user gave up on the operation: if none of its bytes went out it is undone
//! (back to **Idle**); a query gets a Cancel and is drained (the caller polls
//! until **Idle**); a ping or a finished INSERT is drained; anything else closes.
//!
//! A new command is refused with [`Error::State`] (and changes nothing) unless
//! the machine is in the state that command needs.
//!
//! # Chunked framing
//!
//! When negotiated, the framing is applied here and nowhere else: every packet
//! written is one chunked message in [`Connection::transmit`], and received
//! bytes lose their chunk headers before the packet decoder sees them (see
//! [`Connection::buffered`]). A malformed chunk header closes the connection.
//!
//! # Direct fills
//!
//! Without compression, a query's Data block lets go of the input as it takes
//! it: when the input runs out, the columns decoded so far leave it, and a
//! plain fixed-width column takes the input's part of its values into its
//! buffer and the rest as it arrives. The input then only ever holds the
//! column being decoded (a String column whole, until it is decoded), so how
//! large it grows depends on the result, not on how the reads fell: a
//! connection that read a result once reads it again without allocating.
//!
//! Without chunked framing either, the values of a plain fixed-width column
//! that is still missing at least 256 KiB when the input runs out are received
//! straight into the column's buffer: [`Connection::direct_slot`] lends the
//! rest of the buffer for the caller to read the socket into (exactly the
//! column's missing bytes, so what follows still goes through
//! [`Connection::recv_buffer`]). This saves copying the column out of the
//! input buffer. A caller that never asks for the slot loses nothing: bytes
//! appended to the input finish the column as before.
//! [`Connection::direct_slots`] adds a small buffer for the bytes after the
//! column, so one vectored read per column suffices. Reads into the input are
//! not capped: a read that brings a whole column leaves nothing to fill
//! directly, but a cap multiplied the reads of a wide table (1M hits rows:
//! 13,571 recvfrom with a 64 KiB cap against 1,666 without).

use std::collections::VecDeque;

use crate::block::{write_empty_block, Block, BlockLimits};
use crate::buffer::BufferPool;
use crate::chunked::{self, Dechunker, Negotiated};
use crate::compression::{self, FrameHeader, Method, FRAME_PREFIX_LEN};
use crate::error::ProtoError;
use crate::packet::{self, BlockKind, ClientHello, Exception, ProfileInfo, Progress, Query, ServerHello, ServerPacket};
use crate::revision;
use crate::wire::Reader;

/// Settings of a [`Connection`] that do not change while it lives.
#[derive(Debug, Clone)]
pub struct Options {
    /// The revision we announce.
    pub revision: u64,
    /// How our Data blocks are compressed when a query asks for compression.
    pub compression: Option<Method>,
    /// The largest block (decompressed) or packet accepted from the server.
    pub max_block_bytes: usize,
    /// Bounds checked before a block's columns are allocated.
    pub limits: BlockLimits,
    /// How many packets without rows may follow each other before the server
    /// is taken to be stuck and the connection is closed.
    pub max_silent_packets: u64,
    /// Chunked framing of the packets we send (revision 54470 and later).
    pub chunked_send: chunked::Mode,
    /// Chunked framing of the packets the server sends.
    pub chunked_recv: chunked::Mode,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            revision: revision::DEFAULT,
            compression: Some(Method::Lz4),
            max_block_bytes: crate::block::DEFAULT_MAX_BLOCK_BYTES as usize,
            limits: BlockLimits::default(),
            max_silent_packets: DEFAULT_MAX_SILENT_PACKETS,
            chunked_send: chunked::Mode::default(),
            chunked_recv: chunked::Mode::default(),
        }
    }
}

/// Default for [`Options::max_silent_packets`]: at the server's default cadence
/// (Progress and ProfileEvents every 100 ms) more than five days of a query
/// that returns nothing, yet a few seconds of a server spinning on empty packets.
pub const DEFAULT_MAX_SILENT_PACKETS: u64 = 10_000_000;

/// Size of [`Connection::direct_slots`]'s second buffer: room for the next
/// column's or packet's head (a read that brings more just leaves it on the
/// socket for the next one).
const DIRECT_TAIL: usize = 4 << 10;

/// The input buffer's first capacity (64 KiB), and the least room a read into
/// it gets while it holds less than that.
const INPUT_MIN_CAPACITY: usize = 64 << 10;

/// Room beyond `max_block_bytes` for a packet's own fields (names, headers).
const PACKET_SLACK: usize = 1 << 20;

/// Where the connection is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum State {
    /// Nothing sent yet.
    Start,
    /// Hello sent, waiting for the server's.
    Handshake,
    /// Ready for a command.
    Idle,
    /// A command is outstanding.
    Busy(Phase),
    /// Unusable; see [`Connection::close_reason`].
    Closed,
}

/// What a busy connection is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Phase {
    /// A query's answer is arriving.
    Query,
    /// Cancel was written; the answer is read to its end.
    Cancelled,
    /// An INSERT was sent; waiting for the table's header block.
    InsertHeader,
    /// The client sends Data blocks.
    InsertData,
    /// The end of data was sent; waiting for the server's confirmation.
    InsertEnd,
    /// Ping was sent; waiting for Pong.
    Ping,
}

/// What the server said, decoded. Blocks are in the [`BlockSink`] given to
/// [`Connection::poll`]; their events say which one was filled.
///
/// Non-exhaustive: an event added later only informs (a new kind of server
/// packet); the answer's data, its end and its exceptions keep the events here,
/// so a driver may skip events it does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// The handshake is done; see [`Connection::server`].
    Hello,
    /// A query's first Data block without rows (the result's columns), or the
    /// table's header block of an INSERT. Decoded into the Data slot.
    Header,
    /// A Data block (possibly without rows), in the Data slot.
    Data,
    /// The WITH TOTALS block, in the Totals slot.
    Totals,
    /// The extremes block, in the Extremes slot.
    Extremes,
    /// Server log lines, in the Log slot.
    Log,
    /// Profile event counters, in the ProfileEvents slot.
    ProfileEvents,
    /// A progress increment.
    Progress(Progress),
    /// Final statistics of a query.
    ProfileInfo(ProfileInfo),
    /// The columns of the table an INSERT goes into.
    TableColumns {
        /// Table name.
        table: String,
        /// `ColumnsDescription` text.
        description: String,
    },
    /// The session time zone (for `input()`).
    TimezoneUpdate(String),
    /// The command failed on the server. The state is Idle afterwards, or
    /// Closed when the server closes the connection after this exception.
    Exception(Exception),
    /// The query or INSERT is finished.
    EndOfStream,
    /// The answer to Ping.
    Pong,
}

/// Why a call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server's bytes broke the protocol or a limit; the connection is now closed.
    #[error(transparent)]
    Proto(#[from] ProtoError),
    /// The server cannot be spoken to (revision, framing); the connection is now closed.
    #[error("{0}")]
    Unsupported(String),
    /// The connection was closed earlier; the text is the first cause.
    #[error("connection is closed: {0}")]
    Closed(String),
    /// The command is not allowed in the current state; nothing changed.
    #[error("{command} is not allowed while the connection is {state:?}")]
    State {
        /// The command refused.
        command: &'static str,
        /// The state it was refused in.
        state: State,
    },
}

/// What [`Connection::poll`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Poll {
    /// The server said something.
    Event(Event),
    /// At least `needed` unconsumed input bytes (counted from the first one not
    /// yet consumed, see [`Connection::buffered`]) are needed to go on.
    NeedInput {
        /// Lower bound on the unconsumed input needed.
        needed: usize,
    },
    /// Nothing is expected from the server (Idle or Start).
    Idle,
}

/// Lends the blocks server blocks are decoded into.
///
/// A slot that returns `None` has its blocks decoded into a scratch block of
/// the connection and discarded. A block cut short by missing input keeps its
/// progress in the `Block`, so until the block's event arrives the sink must
/// lend the same `Block` for that kind (another one, holding no unfinished
/// decode, makes the decode start over from the block's first byte). Once a
/// fixed-width column of the block is being received straight into its buffer
/// ([`Connection::direct_slot`]) the input no longer holds the block's start,
/// so lending another block then closes the connection.
pub trait BlockSink {
    /// The block to decode a block of `kind` into.
    fn block(&mut self, kind: BlockKind) -> Option<&mut Block>;
}

/// A sink that keeps nothing (draining, pings).
#[derive(Debug, Default, Clone, Copy)]
pub struct Discard;

impl BlockSink for Discard {
    fn block(&mut self, _kind: BlockKind) -> Option<&mut Block> {
        None
    }
}

/// Server error codes after which the server closes the connection.
///
/// 115 UNKNOWN_SETTING (the query's settings are applied before the server has
/// read the client's external-tables block, so it cannot resynchronise),
/// 100 UNKNOWN_PACKET_FROM_CLIENT, 101 UNEXPECTED_PACKET_FROM_CLIENT,
/// 193 USER_EXPIRED (checked on 26.9 for 115; the others from the server's
/// TCPHandler), and 210 NETWORK_ERROR: a server that requires chunked framing
/// refuses an older client with it and then closes (seen on 26.9), and in general
/// it says the server's side of the socket failed, so the connection's state is
/// unknown and it is not reused.
pub const CLOSING_EXCEPTION_CODES: [i32; 5] = [100, 101, 115, 193, 210];

/// Where ClickHouse serves which protocol by default, for the messages about a
/// port that does not speak the native protocol.
pub const PORTS_HINT: &str =
    "ClickHouse's native protocol is on port 9000 (9440 with TLS), its HTTP interface on 8123 (8443 with TLS)";

/// Recognises an answer to the client's Hello in another protocol than the
/// native one, from its first bytes: `Ok(Some(why))` for HTTP (a wrong port)
/// or TLS (a TLS port spoken to in plaintext), `Ok(None)` when the bytes may
/// be a Hello or an Exception, `Err(needed)` when more bytes are needed to tell.
pub fn foreign_answer(b: &[u8]) -> Result<Option<String>, usize> {
    const HTTP: &[u8] = b"HTTP/";
    match b.first() {
        None => Ok(None),
        Some(&c) if c as u64 == packet::server_code::HELLO || c as u64 == packet::server_code::EXCEPTION => Ok(None),
        Some(b'H') if b.len() < HTTP.len() && HTTP.starts_with(b) => Err(HTTP.len()),
        Some(b'H') if b.starts_with(HTTP) => {
            // The status line as far as it has arrived, printable ASCII only.
            let line: String = b
                .iter()
                .take_while(|&&c| c != b'\r' && c != b'\n')
                .take(80)
                .map(|&c| if c.is_ascii_graphic() || c == b' ' { c as char } else { '?' })
                .collect();
            Ok(Some(format!(
                "the server answered in HTTP (`{line}`), not in ClickHouse's native protocol: \
                 this is an HTTP port; {PORTS_HINT}"
            )))
        }
        // A TLS record: an alert (21) or a handshake (22), version 3.x.
        Some(21 | 22) if b.len() < 2 => Err(2),
        Some(21 | 22) if b[1] == 3 => Ok(Some(format!(
            "the server answered in TLS: this port expects TLS, so set secure=true (URL option, or \
             connect with clickhouses://) or Config::secure; {PORTS_HINT}"
        ))),
        Some(_) => Ok(None),
    }
}

/// Whether the server closes the connection after sending this exception.
pub fn exception_closes_connection(e: &Exception) -> bool {
    CLOSING_EXCEPTION_CODES.contains(&e.code)
}

/// What the input decoder is in the middle of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reading {
    /// A packet's code and fields.
    Head,
    /// A block body (uncompressed, or from frames into the decompression buffer).
    Block { kind: BlockKind, compressed: bool },
    /// A TableColumns body in compressed frames.
    TableColumns,
}

/// The sans-IO connection. See the module documentation for the states.
#[derive(Debug)]
pub struct Connection {
    options: Options,
    state: State,
    closed: Option<String>,
    server: ServerHello,
    /// min(ours, the server's), once the handshake is done.
    revision: u64,
    quota_key: String,
    /// Whether the running query compresses blocks.
    compressing: bool,
    /// Whether the running query has shown its header.
    header_seen: bool,
    silent: u64,
    /// The exception that ended the last command, for the reason given when
    /// the server then closes the connection.
    last_exception: Option<String>,

    /// Received bytes: consumed ones up to `ipos`, packet bytes up to `iend`,
    /// then (with chunked input) a chunk header not complete yet.
    input: Vec<u8>,
    ipos: usize,
    iend: usize,
    /// Strips chunk framing from received bytes, once negotiated.
    dechunker: Option<Dechunker>,
    /// Why [`Connection::buffered`] closed the connection, for the next poll.
    input_error: Option<Error>,
    chunking: Negotiated,
    reading: Reading,
    /// Decompressed bytes of the body being read.
    plain: Vec<u8>,
    /// How many decompressed bytes the body needs before it is decoded again.
    plain_needed: usize,
    pool: BufferPool,
    scratch: Block,
    /// Numbers the block packets, so a direct fill knows its block (see [`Block::holds_direct`]).
    block_seq: u64,
    /// The kind and packet number of the block being decoded once the input
    /// no longer holds its start (it let go of what the block had taken), so
    /// the decode can only go on in that block.
    direct: Option<(BlockKind, u64)>,
    /// Whether that block's fixed-width column is being filled straight from
    /// the socket ([`Connection::direct_slot`]).
    lend: bool,
    /// Bytes received through [`Connection::direct_slot`], ever.
    direct_bytes: u64,
    /// Where the bytes after a direct fill's column land in the same read
    /// ([`Connection::direct_slots`]); zeroed once, so it can be lent as `&mut [u8]`.
    direct_tail: Vec<u8>,

    output: Vec<u8>,
    opos: usize,
    /// Bytes ever appended to / written from the output.
    queued_total: u64,
    sent_total: u64,
    /// Where the packets in the output end, as `queued_total` values.
    packet_ends: VecDeque<u64>,
    /// The end of the last packet written completely.
    last_boundary: u64,
    /// `queued_total` before the outstanding command's first byte.
    command_start: u64,
    stage: Vec<u8>,
}

impl Connection {
    /// A connection in the Start state.
    pub fn new(options: Options) -> Connection {
        Connection {
            revision: options.revision,
            options,
            state: State::Start,
            closed: None,
            server: ServerHello::default(),
            quota_key: String::new(),
            compressing: false,
            header_seen: false,
            silent: 0,
            last_exception: None,
            input: Vec::with_capacity(INPUT_MIN_CAPACITY),
            ipos: 0,
            iend: 0,
            dechunker: None,
            input_error: None,
            chunking: Negotiated::default(),
            reading: Reading::Head,
            plain: Vec::new(),
            plain_needed: 0,
            pool: BufferPool::new(),
            scratch: Block::new(),
            block_seq: 0,
            direct: None,
            lend: false,
            direct_bytes: 0,
            direct_tail: Vec::new(),
            output: Vec::with_capacity(16 << 10),
            opos: 0,
            queued_total: 0,
            sent_total: 0,
            packet_ends: VecDeque::new(),
            last_boundary: 0,
            command_start: 0,
            stage: Vec::new(),
        }
    }

    /// The current state.
    pub fn state(&self) -> State {
        self.state
    }

    /// Whether a new command may start.
    pub fn is_idle(&self) -> bool {
        self.state == State::Idle
    }

    /// Whether the connection is unusable.
    pub fn is_closed(&self) -> bool {
        self.state == State::Closed
    }

    /// The first reason the connection was closed.
    pub fn close_reason(&self) -> Option<&str> {
        self.closed.as_deref()
    }

    /// The server's Hello (default values before the handshake).
    pub fn server(&self) -> &ServerHello {
        &self.server
    }

    /// The revision in use: min(ours, the server's) after the handshake.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// Which directions are chunked (both false before the handshake).
    pub fn chunking(&self) -> Negotiated {
        self.chunking
    }

    /// The options the connection was made with.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The buffer pool blocks are decoded with; give a sink's blocks back here
    /// ([`Block::recycle`]) when they are no longer needed.
    pub fn pool(&mut self) -> &mut BufferPool {
        &mut self.pool
    }

    /// Marks the connection unusable. The first reason given is kept.
    pub fn close(&mut self, reason: impl std::fmt::Display) {
        if self.closed.is_none() {
            self.closed = Some(reason.to_string());
        }
        self.state = State::Closed;
        self.output.clear();
        self.opos = 0;
        self.packet_ends.clear();
        self.queued_total = self.sent_total;
        self.last_boundary = self.sent_total;
    }

    /// The server closed its end of the connection (the caller read end of
    /// stream). The reason names the exception that preceded it, if any.
    pub fn peer_closed(&mut self) {
        let why = match &self.last_exception {
            Some(e) => format!("the server closed the connection after {e}"),
            None => "the server closed the connection".to_string(),
        };
        self.close(why);
    }

    fn closed_error(&self) -> Error {
        Error::Closed(self.closed.clone().unwrap_or_else(|| "closed".into()))
    }

    /// Closes with `e` as the cause and returns it.
    fn fail(&mut self, e: Error) -> Error {
        self.close(&e);
        e
    }

    fn violation(&mut self, msg: String) -> Error {
        self.fail(Error::Proto(ProtoError::Violation(msg)))
    }

    fn require(&self, command: &'static str, state: State) -> Result<(), Error> {
        match self.state {
            State::Closed => Err(self.closed_error()),
            s if s == state => Ok(()),
            s => Err(Error::State { command, state: s }),
        }
    }

    // ---- output ----

    /// The bytes waiting to be written, in order.
    pub fn transmit(&self) -> &[u8] {
        &self.output[self.opos..]
    }

    /// Whether bytes are waiting to be written.
    pub fn has_output(&self) -> bool {
        self.opos < self.output.len()
    }

    /// Records that the first `n` bytes of [`Connection::transmit`] were written.
    pub fn advance(&mut self, n: usize) {
        let n = n.min(self.output.len() - self.opos);
        self.opos += n;
        self.sent_total += n as u64;
        while let Some(end) = self.packet_ends.front().copied().filter(|&end| end <= self.sent_total) {
            self.last_boundary = end;
            self.packet_ends.pop_front();
        }
        if self.opos == self.output.len() {
            self.output.clear();
            self.opos = 0;
        }
    }

    /// Whether a packet has been written in part: the byte stream to the server
    /// then ends inside a packet, and nothing else may follow until it is complete.
    pub fn is_mid_packet(&self) -> bool {
        self.sent_total != self.last_boundary
    }

    /// Appends one whole packet with `write`.
    fn put_packet(&mut self, write: impl FnOnce(&mut Vec<u8>)) {
        let start = self.begin_packet();
        write(&mut self.output);
        self.end_packet(start);
    }

    /// Starts a packet written straight into `output`; returns where it starts.
    fn begin_packet(&mut self) -> usize {
        if self.chunking.send {
            chunked::begin(&mut self.output)
        } else {
            self.output.len()
        }
    }

    /// Ends the packet begun at `start`: frames it, and records where it ends.
    fn end_packet(&mut self, start: usize) {
        if self.chunking.send {
            chunked::frame(&mut self.output, start, chunked::MAX_CHUNK);
        }
        self.queued_total = self.sent_total + (self.output.len() - self.opos) as u64;
        self.packet_ends.push_back(self.queued_total);
    }
}

// ---- commands ----

impl Connection {
    /// Writes the client's Hello: Start → Handshake.
    pub fn start_handshake(&mut self, hello: &ClientHello<'_>, quota_key: &str) -> Result<(), Error> {
        self.require("handshake", State::Start)?;
        self.quota_key = quota_key.to_owned();
        self.command_start = self.queued_total;
        self.put_packet(|out| hello.write(out));
        self.state = State::Handshake;
        Ok(())
    }

    /// Writes a Query packet and the empty external-tables block: Idle → Busy(Query).
    ///
    /// `query.compression` says whether blocks are compressed in both directions;
    /// it needs [`Options::compression`] for the blocks the client sends.
    pub fn query(&mut self, query: &Query<'_>) -> Result<(), Error> {
        self.start_query("query", query, Phase::Query)
    }

    /// Writes an INSERT's Query packet (its SQL ends before the data, e.g.
    /// `INSERT INTO t (a, b) VALUES`) and the empty external-tables block:
    /// Idle → Busy(InsertHeader).
    pub fn insert(&mut self, query: &Query<'_>) -> Result<(), Error> {
        self.start_query("insert", query, Phase::InsertHeader)
    }

    fn start_query(&mut self, command: &'static str, query: &Query<'_>, phase: Phase) -> Result<(), Error> {
        self.require(command, State::Idle)?;
        self.compressing = query.compression;
        self.header_seen = false;
        self.silent = 0;
        self.last_exception = None;
        self.command_start = self.queued_total;
        let v = self.revision;
        self.put_packet(|out| query.write(out, v));
        if let Err(e) = self.put_empty_data() {
            return Err(self.fail(e));
        }
        self.state = State::Busy(phase);
        Ok(())
    }

    /// Writes one INSERT Data packet whose block body `encode` appends to the
    /// buffer it is given, at the revision it is given. In Busy(InsertData) only.
    ///
    /// If `encode` fails nothing is written and the state is unchanged.
    pub fn send_data<E: From<Error>>(
        &mut self,
        encode: impl FnOnce(&mut Vec<u8>, u64) -> Result<(), E>,
    ) -> Result<(), E> {
        self.require("send_data", State::Busy(Phase::InsertData))?;
        self.silent = 0;
        if !self.compressing {
            // Uncompressed, the block is encoded straight into the output, one copy
            // fewer than staging it; a failed encode leaves the output as it was.
            let start = self.output.len();
            let packet_start = self.begin_packet();
            packet::write_data_head(&mut self.output, "");
            let revision = self.revision;
            if let Err(e) = encode(&mut self.output, revision) {
                self.output.truncate(start);
                return Err(e);
            }
            self.end_packet(packet_start);
            return Ok(());
        }
        let mut stage = std::mem::take(&mut self.stage);
        stage.clear();
        let res = encode(&mut stage, self.revision);
        let res = res.and_then(|()| self.put_data_packet(&stage).map_err(E::from));
        self.stage = stage;
        res
    }

    /// Writes the empty block that ends an INSERT's data: Busy(InsertData) → Busy(InsertEnd).
    pub fn end_data(&mut self) -> Result<(), Error> {
        self.require("end_data", State::Busy(Phase::InsertData))?;
        self.put_empty_data()?;
        self.silent = 0;
        self.state = State::Busy(Phase::InsertEnd);
        Ok(())
    }

    /// Writes Ping: Idle → Busy(Ping).
    pub fn ping(&mut self) -> Result<(), Error> {
        self.require("ping", State::Idle)?;
        self.last_exception = None;
        self.command_start = self.queued_total;
        self.silent = 0;
        self.put_packet(packet::write_ping);
        self.state = State::Busy(Phase::Ping);
        Ok(())
    }

    /// Writes Cancel for a running query: Busy(Query) → Busy(Cancelled). A
    /// no-op when idle or already cancelled; refused during an INSERT or a ping.
    pub fn cancel(&mut self) -> Result<(), Error> {
        match self.state {
            State::Closed => Err(self.closed_error()),
            State::Idle | State::Busy(Phase::Cancelled) => Ok(()),
            State::Busy(Phase::Query) => {
                self.put_packet(packet::write_cancel);
                self.state = State::Busy(Phase::Cancelled);
                Ok(())
            }
            state => Err(Error::State { command: "cancel", state }),
        }
    }

    /// The user gave up on the outstanding command (its future was dropped).
    ///
    /// Afterwards the connection is Idle (none of the command's bytes were
    /// written, so it is undone), Busy and to be drained by polling until Idle
    /// (a query, now cancelled; a ping; an INSERT whose data was all sent), or
    /// Closed (a packet half written, an INSERT cut short, a handshake).
    pub fn abandon(&mut self) {
        let phase = match self.state {
            State::Start | State::Idle | State::Closed => return,
            State::Handshake => return self.close("the handshake was abandoned"),
            State::Busy(phase) => phase,
        };
        if self.is_mid_packet() {
            return self.close("an operation was abandoned while a packet was half written");
        }
        let nothing_sent = self.sent_total <= self.command_start;
        if nothing_sent && matches!(phase, Phase::Query | Phase::InsertHeader | Phase::Ping) {
            // Everything from command_start on is still in the buffer: drop it.
            let keep = self.output.len() - (self.queued_total - self.command_start) as usize;
            self.output.truncate(keep);
            self.queued_total = self.command_start;
            while self.packet_ends.back().is_some_and(|&end| end > self.command_start) {
                self.packet_ends.pop_back();
            }
            if self.opos == self.output.len() {
                self.output.clear();
                self.opos = 0;
            }
            self.state = State::Idle;
            return;
        }
        match phase {
            Phase::Query => {
                self.put_packet(packet::write_cancel);
                self.state = State::Busy(Phase::Cancelled);
            }
            Phase::Cancelled | Phase::Ping | Phase::InsertEnd => {}
            Phase::InsertHeader | Phase::InsertData => {
                self.close("an INSERT was abandoned before the server confirmed it (its data may or may not be stored)")
            }
        }
    }

    fn put_data_packet(&mut self, body: &[u8]) -> Result<(), Error> {
        let start = self.output.len();
        let packet_start = self.begin_packet();
        packet::write_data_head(&mut self.output, "");
        if self.compressing {
            let method = self.options.compression.unwrap_or(Method::Lz4);
            if let Err(e) = compression::compress_frames(method, body, 1 << 20, &mut self.output) {
                self.output.truncate(start);
                return Err(e.into());
            }
        } else {
            self.output.extend_from_slice(body);
        }
        self.end_packet(packet_start);
        Ok(())
    }

    fn put_empty_data(&mut self) -> Result<(), Error> {
        let mut stage = std::mem::take(&mut self.stage);
        stage.clear();
        write_empty_block(&mut stage, self.revision);
        let res = self.put_data_packet(&stage);
        self.stage = stage;
        res
    }
}

/// How decoding a body went.
enum Body {
    /// More input is needed: at least this many unconsumed bytes.
    Need(usize),
    /// Decoded: the block's rows and whether it has columns.
    Block { rows: usize, has_columns: bool },
    /// Decoded TableColumns.
    Packet(ServerPacket),
}

// ---- input ----

impl Connection {
    /// How many received packet bytes are not consumed yet.
    ///
    /// With chunked input, the bytes appended to [`Connection::recv_buffer`]
    /// since the last call lose their chunk framing here first, so only packet
    /// bytes are counted. A malformed chunk header closes the connection (the
    /// count is then 0 and [`Connection::poll`] reports why).
    pub fn buffered(&mut self) -> usize {
        if self.state != State::Closed {
            if let Err(e) = self.take_input() {
                self.input_error = Some(e);
            }
        }
        self.iend - self.ipos
    }

    /// Packet bytes received and not consumed (as of the last `take_input`).
    fn avail(&self) -> usize {
        self.iend - self.ipos
    }

    /// Makes newly received bytes packet bytes: strips chunk framing, if any.
    fn take_input(&mut self) -> Result<(), Error> {
        if self.state == State::Closed {
            return Err(self.closed_error());
        }
        match &mut self.dechunker {
            None => self.iend = self.input.len(),
            Some(d) => match d.strip(&mut self.input, self.iend) {
                Ok(end) => self.iend = end,
                Err(e) => return Err(self.fail(e.into())),
            },
        }
        Ok(())
    }

    /// The buffer received bytes are appended to (never overwrite what is in
    /// it), with room for at least `additional` more.
    ///
    /// It grows only when the bytes not consumed yet and the `additional` ones
    /// do not fit: what [`Poll::NeedInput`] asks for is what a decode needs
    /// to hold at once (a column, a compressed frame, a small packet whole), so
    /// once a result has been read the input is large enough to read it again,
    /// however the reads fall. The room beyond `additional` (at least 64 KiB
    /// in all while little is held) is for reads to take more.
    pub fn recv_buffer(&mut self, additional: usize) -> &mut Vec<u8> {
        if self.ipos == self.input.len() {
            self.input.clear();
            self.ipos = 0;
            self.iend = 0;
        } else if self.ipos > 0 && self.input.capacity() - self.input.len() < additional.max(INPUT_MIN_CAPACITY) {
            // Out of room at the tail: move the unconsumed bytes to the front
            // rather than growing the buffer. (Decoders resume relative to the
            // first unconsumed byte, so this moves nothing they remember.)
            self.input.drain(..self.ipos);
            self.iend -= self.ipos;
            self.ipos = 0;
        }
        // Grows only a buffer with less than `additional` free (or less than
        // 64 KiB in all).
        self.input.reserve(additional.max(INPUT_MIN_CAPACITY.saturating_sub(self.input.len())));
        &mut self.input
    }

    /// Where the next received bytes go when they belong to a fixed-width
    /// column being filled straight from the socket: exactly the bytes that
    /// column still misses (later bytes go through [`Connection::recv_buffer`]).
    /// `None` when no such column is being read; the caller then reads into
    /// [`Connection::recv_buffer`] as usual. Received bytes not consumed yet
    /// are moved into the column first.
    ///
    /// Write into the slot, then report how many bytes were written with
    /// [`Connection::direct_filled`], passing the same `sink` as here and to
    /// [`Connection::poll`]. Nothing counts as received until then, so a read
    /// abandoned half way leaves the machine as it was.
    pub fn direct_slot<'a>(&'a mut self, sink: &'a mut dyn BlockSink) -> Option<&'a mut [u8]> {
        self.direct_slots(sink).map(|(slot, _)| slot)
    }

    /// [`Connection::direct_slot`] and a small buffer for the bytes that follow
    /// the column, to be filled by the same read (a vectored read: one system
    /// call per column instead of two, the second of which would otherwise
    /// fetch the next packet's head). [`Connection::direct_filled`] takes the
    /// bytes beyond the slot from this buffer into the input, in order.
    pub fn direct_slots<'a>(&'a mut self, sink: &'a mut dyn BlockSink) -> Option<(&'a mut [u8], &'a mut [u8])> {
        let (kind, token) = self.direct?;
        if !self.lend || self.state == State::Closed || self.input_error.is_some() {
            return None;
        }
        let block = match sink.block(kind) {
            Some(b) => b,
            None => &mut self.scratch,
        };
        if !block.holds_direct(token) {
            // The next poll closes the connection and says why.
            return None;
        }
        // Without a dechunker every received byte is a packet byte.
        self.iend = self.input.len();
        self.ipos += block.direct_absorb(&self.input[self.ipos..self.iend]);
        let spare = block.direct_spare();
        if spare.is_empty() {
            return None;
        }
        if self.direct_tail.is_empty() {
            self.direct_tail = vec![0; DIRECT_TAIL];
        }
        Some((spare, &mut self.direct_tail))
    }

    /// Whether a fixed-width column is being filled straight from the socket:
    /// the caller then reads into [`Connection::direct_slot`], and when that is
    /// `None`, polls again without reading (the column has all its bytes, or
    /// the poll says why not).
    pub fn direct_pending(&self) -> bool {
        self.lend && self.direct.is_some() && self.state != State::Closed
    }

    /// Records that `n` bytes were received into the last
    /// [`Connection::direct_slot`], and beyond it (after
    /// [`Connection::direct_slots`]) into the buffer that follows it.
    pub fn direct_filled(&mut self, sink: &mut dyn BlockSink, n: usize) {
        let Some((kind, token)) = self.direct.filter(|_| self.lend) else { return };
        let block = match sink.block(kind) {
            Some(b) => b,
            None => &mut self.scratch,
        };
        if !block.holds_direct(token) {
            return;
        }
        let taken = block.direct_commit(n);
        self.direct_bytes += taken as u64;
        let rest = (n - taken).min(self.direct_tail.len());
        if rest > 0 {
            if self.ipos == self.input.len() {
                // Everything before was consumed (the slot took the input's part of
                // the column): start over rather than append, or a full input
                // would double here on every fill.
                self.input.clear();
                self.ipos = 0;
                self.iend = 0;
            }
            self.input.extend_from_slice(&self.direct_tail[..rest]);
        }
    }

    /// Bytes this connection has received straight into column buffers (a
    /// statistic for tests and benchmarks).
    #[doc(hidden)]
    pub fn direct_bytes(&self) -> u64 {
        self.direct_bytes
    }

    fn need(&mut self, needed: usize) -> Result<Poll, Error> {
        let limit = self.options.max_block_bytes.saturating_add(PACKET_SLACK);
        if needed > limit {
            return Err(self.fail(Error::Proto(ProtoError::TooLarge {
                what: "packet",
                got: needed as u64,
                limit: self.options.max_block_bytes as u64,
            })));
        }
        Ok(Poll::NeedInput { needed })
    }

    /// Decodes what the server sent, as far as the input goes.
    ///
    /// Returns the next event, or how much input is needed, or [`Poll::Idle`]
    /// when nothing is expected. Blocks go into `sink`'s slots.
    pub fn poll(&mut self, sink: &mut dyn BlockSink) -> Result<Poll, Error> {
        if let Some(e) = self.input_error.take() {
            return Err(e);
        }
        self.take_input()?;
        loop {
            match self.state {
                State::Closed => return Err(self.closed_error()),
                State::Start | State::Idle => {
                    if self.avail() == 0 {
                        return Ok(Poll::Idle);
                    }
                    // A server that refuses the connection after the handshake
                    // (e.g. one requiring chunked framing from a client below
                    // revision 54470) says why in an Exception: keep its text.
                    let mut r = Reader::new(&self.input[self.ipos..self.iend]);
                    let why = match packet::read_server_packet(&mut r, self.options.revision, self.revision, false) {
                        Ok(ServerPacket::Exception(e)) => format!("exception code {}: {}", e.code, e.message),
                        _ => format!("{} bytes", self.avail()),
                    };
                    return Err(self.violation(format!("the server sent {why} while no command was outstanding")));
                }
                State::Handshake | State::Busy(_) => {}
            }
            let body = match self.reading {
                Reading::Head => {
                    let handshake = self.state == State::Handshake;
                    if handshake {
                        match foreign_answer(&self.input[self.ipos..self.iend]) {
                            Ok(None) => {}
                            Ok(Some(why)) => return Err(self.fail(Error::Unsupported(why))),
                            Err(needed) => return self.need(needed),
                        }
                    }
                    let compressing = self.compressing && matches!(self.state, State::Busy(_));
                    let mut r = Reader::new(&self.input[self.ipos..self.iend]);
                    match packet::read_server_packet(&mut r, self.options.revision, self.revision, compressing) {
                        Ok(p) => {
                            self.ipos += r.position();
                            match self.on_packet(p, sink)? {
                                Some(event) => return Ok(Poll::Event(event)),
                                None => continue,
                            }
                        }
                        Err(ProtoError::Incomplete { needed }) => return self.need(needed),
                        Err(ProtoError::Violation(why)) if handshake => {
                            return Err(self.violation(format!(
                                "{why} where the server's Hello was expected: is this ClickHouse's native \
                                 protocol port? {PORTS_HINT}"
                            )))
                        }
                        Err(e) => return Err(self.fail(e.into())),
                    }
                }
                Reading::Block { kind, compressed } => self.read_block(kind, compressed, sink)?,
                Reading::TableColumns => self.read_table_columns()?,
            };
            match body {
                Body::Need(needed) => return self.need(needed),
                Body::Block { rows, has_columns } => {
                    let Reading::Block { kind, .. } = self.reading else { unreachable!("a block was being read") };
                    self.reading = Reading::Head;
                    return self.on_block(kind, rows, has_columns).map(Poll::Event);
                }
                Body::Packet(p) => {
                    self.reading = Reading::Head;
                    if let Some(event) = self.on_packet(p, sink)? {
                        return Ok(Poll::Event(event));
                    }
                }
            }
        }
    }

    /// Decompresses frames until `plain_needed` bytes are there.
    fn read_frames(&mut self) -> Result<Option<usize>, Error> {
        while self.plain.len() < self.plain_needed {
            if self.avail() < FRAME_PREFIX_LEN {
                return Ok(Some(FRAME_PREFIX_LEN));
            }
            let mut prefix = [0u8; FRAME_PREFIX_LEN];
            prefix.copy_from_slice(&self.input[self.ipos..self.ipos + FRAME_PREFIX_LEN]);
            let max_block = self.options.max_block_bytes;
            let max_frame = u32::try_from(max_block).unwrap_or(u32::MAX).min(compression::MAX_FRAME_SIZE);
            let header = FrameHeader::parse(&prefix, max_frame).map_err(|e| self.fail(e.into()))?;
            let total = self.plain.len().saturating_add(header.uncompressed_size as usize);
            if total > max_block {
                return Err(self.fail(Error::Proto(ProtoError::TooLarge {
                    what: "block",
                    got: total as u64,
                    limit: max_block as u64,
                })));
            }
            let len = header.frame_len();
            if self.avail() < len {
                return Ok(Some(len));
            }
            let frame = &self.input[self.ipos..self.ipos + len];
            let res = compression::decompress_frame(&header, frame, &mut self.plain);
            res.map_err(|e| self.fail(e.into()))?;
            self.ipos += len;
        }
        Ok(None)
    }

    fn read_block(&mut self, kind: BlockKind, compressed: bool, sink: &mut dyn BlockSink) -> Result<Body, Error> {
        loop {
            if compressed {
                if let Some(needed) = self.read_frames()? {
                    return Ok(Body::Need(needed));
                }
            }
            let to_scratch;
            let block = match sink.block(kind) {
                Some(b) => {
                    to_scratch = false;
                    b
                }
                None => {
                    to_scratch = true;
                    &mut self.scratch
                }
            };
            if let Some((_, token)) = self.direct {
                if !block.holds_direct(token) {
                    // The input no longer holds this block's start, so the decode
                    // cannot start over in another block.
                    if to_scratch {
                        self.scratch.recycle(&mut self.pool);
                    }
                    return Err(self.violation(
                        "the block being decoded was not lent again: its start went into it, straight from \
                         the socket or out of the input (a BlockSink must lend the same block until its event)"
                            .into(),
                    ));
                }
            }
            // Without compression a query's Data block takes its bytes from the
            // input, which then lets go of them as the decode goes (see
            // `release_input`). Only there: the decode can then go on in no other
            // block, and only a query's stream keeps lending its Data block when
            // it is dropped half way (other blocks are small: the input holds
            // them whole, whatever the reads).
            let anchored = !compressed
                && kind == BlockKind::Data
                && matches!(self.state, State::Busy(Phase::Query | Phase::Cancelled));
            let direct = anchored.then_some(self.block_seq);
            let src: &[u8] = if compressed { &self.plain } else { &self.input[self.ipos..self.iend] };
            let mut r = Reader::new(src);
            match block.read_with(&mut r, self.revision, &self.options.limits, &mut self.pool, direct) {
                Ok(()) => {
                    self.direct = None;
                    self.lend = false;
                    let (rows, has_columns) = (block.rows(), !block.columns().is_empty());
                    let used = r.position();
                    if to_scratch {
                        self.scratch.recycle(&mut self.pool);
                    }
                    if compressed {
                        if used != self.plain.len() {
                            return Err(self.violation("compressed body does not end at a frame boundary".into()));
                        }
                    } else {
                        self.ipos += used;
                    }
                    return Ok(Body::Block { rows, has_columns });
                }
                Err(ProtoError::Incomplete { needed }) if compressed => self.plain_needed = needed,
                Err(ProtoError::Incomplete { needed }) => {
                    // The input lets go of what the block has taken, so it only
                    // ever holds the column being decoded: how large it grows
                    // does not depend on how the reads fell.
                    let Some((consumed, fill)) = block.release_input() else {
                        self.direct = None;
                        self.lend = false;
                        return Ok(Body::Need(needed));
                    };
                    self.ipos += consumed;
                    self.direct = Some((kind, self.block_seq));
                    // Chunk headers sit between the socket's bytes: no slot then.
                    self.lend = matches!(fill, Some((_, true))) && self.dechunker.is_none();
                    return Ok(Body::Need(match fill {
                        Some((missing, _)) if self.lend => missing,
                        // Taken into the column piece by piece: any bytes do, and
                        // asking for no more than the input's first capacity
                        // never makes it grow.
                        Some((missing, _)) => missing.min(INPUT_MIN_CAPACITY),
                        None => needed.saturating_sub(consumed),
                    }));
                }
                Err(e) => {
                    if to_scratch {
                        self.scratch.recycle(&mut self.pool);
                    }
                    return Err(self.fail(e.into()));
                }
            }
        }
    }

    fn read_table_columns(&mut self) -> Result<Body, Error> {
        loop {
            if let Some(needed) = self.read_frames()? {
                return Ok(Body::Need(needed));
            }
            let mut r = Reader::new(&self.plain);
            match packet::read_table_columns_body(&mut r) {
                Ok(p) => {
                    if r.position() != self.plain.len() {
                        return Err(self.violation("compressed body does not end at a frame boundary".into()));
                    }
                    return Ok(Body::Packet(p));
                }
                Err(ProtoError::Incomplete { needed }) => self.plain_needed = needed,
                Err(e) => return Err(self.fail(e.into())),
            }
        }
    }

    /// Counts a packet without rows; too many in a row close the connection.
    fn count_silent(&mut self) -> Result<(), Error> {
        self.silent += 1;
        if self.silent > self.options.max_silent_packets {
            let n = self.options.max_silent_packets;
            return Err(self.violation(format!("the server sent more than {n} packets in a row without rows")));
        }
        Ok(())
    }

    /// The command is over: back to Idle, or Closed if the server closes now.
    fn finish(&mut self) {
        self.state = State::Idle;
        self.silent = 0;
    }

    fn on_packet(&mut self, p: ServerPacket, sink: &mut dyn BlockSink) -> Result<Option<Event>, Error> {
        let phase = match self.state {
            State::Handshake => return self.on_handshake_packet(p).map(Some),
            State::Busy(phase) => phase,
            state => return Err(self.violation(format!("unexpected {} while {state:?}", name(&p)))),
        };
        let insert_data = phase == Phase::InsertData;
        match p {
            ServerPacket::Hello(_) => Err(self.violation(format!("Hello during {phase:?}"))),
            ServerPacket::Pong if phase == Phase::Ping => {
                self.finish();
                Ok(Some(Event::Pong))
            }
            ServerPacket::Pong => Err(self.violation(format!("Pong during {phase:?}"))),
            ServerPacket::EndOfStream if insert_data || phase == Phase::Ping => {
                Err(self.violation(format!("EndOfStream during {phase:?}")))
            }
            ServerPacket::EndOfStream => {
                self.finish();
                Ok(Some(Event::EndOfStream))
            }
            ServerPacket::Exception(e) => {
                self.finish();
                if insert_data {
                    // The server discards Data packets until an empty one: end
                    // the data so that it listens again.
                    if let Err(err) = self.put_empty_data() {
                        return Err(self.fail(err));
                    }
                }
                let what = format!("exception code {}: {}", e.code, e.message);
                if exception_closes_connection(&e) {
                    self.close(format!("the server closed the connection after {what}"));
                }
                self.last_exception = Some(what);
                Ok(Some(Event::Exception(e)))
            }
            ServerPacket::Block { kind, .. } => {
                let allowed = match kind {
                    BlockKind::Data => !insert_data,
                    BlockKind::Totals | BlockKind::Extremes => matches!(phase, Phase::Query | Phase::Cancelled),
                    BlockKind::Log | BlockKind::ProfileEvents => true,
                };
                if !allowed {
                    return Err(self.violation(format!("a {kind:?} block during {phase:?}")));
                }
                let compressed = self.compressing && kind.compressed(self.revision);
                if let Some(b) = sink.block(kind) {
                    b.forget_partial();
                }
                self.scratch.forget_partial();
                self.block_seq += 1;
                self.direct = None;
                self.lend = false;
                self.plain.clear();
                self.plain_needed = 1;
                self.reading = Reading::Block { kind, compressed };
                Ok(None)
            }
            ServerPacket::TableColumnsCompressed => {
                self.plain.clear();
                self.plain_needed = 1;
                self.reading = Reading::TableColumns;
                Ok(None)
            }
            ServerPacket::PartUuids => {
                self.count_silent()?;
                Ok(None)
            }
            ServerPacket::Progress(p) => {
                self.count_silent()?;
                Ok(Some(Event::Progress(p)))
            }
            ServerPacket::ProfileInfo(p) => {
                self.count_silent()?;
                Ok(Some(Event::ProfileInfo(p)))
            }
            ServerPacket::TableColumns { table, description } => {
                self.count_silent()?;
                Ok(Some(Event::TableColumns { table, description }))
            }
            ServerPacket::TimezoneUpdate(tz) => {
                self.count_silent()?;
                Ok(Some(Event::TimezoneUpdate(tz)))
            }
        }
    }

    fn on_handshake_packet(&mut self, p: ServerPacket) -> Result<Event, Error> {
        match p {
            ServerPacket::Hello(h) => {
                let v = self.options.revision.min(h.revision);
                if v < revision::MIN_SUPPORTED {
                    return Err(self.fail(Error::Unsupported(format!(
                        "server revision {} is older than the oldest supported ({})",
                        h.revision,
                        revision::MIN_SUPPORTED
                    ))));
                }
                let chunking = match self.negotiate_chunking(&h, v) {
                    Ok(c) => c,
                    Err(why) => return Err(self.fail(Error::Unsupported(why))),
                };
                self.revision = v;
                self.server = h;
                let quota_key = std::mem::take(&mut self.quota_key);
                let before = self.output.len();
                packet::write_addendum_chunked(&mut self.output, v, &quota_key, chunking);
                if self.output.len() > before {
                    self.put_packet(|_| {});
                }
                self.quota_key = quota_key;
                // Framing starts with the first byte after the Addendum, in
                // both directions. The server sends nothing before it has read
                // the Addendum, so every byte after Hello is framed.
                self.chunking = chunking;
                if chunking.recv {
                    let max_chunk = self.options.max_block_bytes.saturating_add(PACKET_SLACK);
                    self.dechunker = Some(Dechunker::new(max_chunk));
                    self.iend = self.ipos;
                }
                self.state = State::Idle;
                Ok(Event::Hello)
            }
            ServerPacket::Exception(e) => {
                self.close(format!("the server refused the handshake: code {}: {}", e.code, e.message));
                Ok(Event::Exception(e))
            }
            other => Err(self.violation(format!("expected Hello, got {}", name(&other)))),
        }
    }

    /// The chunking of each direction, from the server's Hello and our options;
    /// the reason when the two sides cannot agree.
    fn negotiate_chunking(&self, h: &ServerHello, revision: u64) -> Result<Negotiated, String> {
        let (send, recv) = (self.options.chunked_send, self.options.chunked_recv);
        if revision < revision::CHUNKED_PACKETS {
            if send == chunked::Mode::Chunked || recv == chunked::Mode::Chunked {
                return Err(format!(
                    "chunked framing is required by the client options but needs protocol revision {} \
                     (the connection uses {revision})",
                    revision::CHUNKED_PACKETS
                ));
            }
            return Ok(Negotiated::default());
        }
        // Our sending side meets the server's receiving side and the other way round.
        Ok(Negotiated {
            send: chunked::negotiate(&h.chunked_recv, send, "send")?,
            recv: chunked::negotiate(&h.chunked_send, recv, "receive")?,
        })
    }

    fn on_block(&mut self, kind: BlockKind, rows: usize, has_columns: bool) -> Result<Event, Error> {
        let phase = match self.state {
            State::Busy(phase) => phase,
            state => return Err(self.violation(format!("a block while {state:?}"))),
        };
        if kind == BlockKind::Data && rows > 0 {
            self.silent = 0;
        } else {
            self.count_silent()?;
        }
        Ok(match kind {
            BlockKind::Data if phase == Phase::InsertHeader => {
                self.state = State::Busy(Phase::InsertData);
                self.silent = 0;
                Event::Header
            }
            BlockKind::Data => {
                let first = !self.header_seen;
                self.header_seen = true;
                if first && rows == 0 && has_columns && matches!(phase, Phase::Query | Phase::Cancelled) {
                    Event::Header
                } else {
                    Event::Data
                }
            }
            BlockKind::Totals => Event::Totals,
            BlockKind::Extremes => Event::Extremes,
            BlockKind::Log => Event::Log,
            BlockKind::ProfileEvents => Event::ProfileEvents,
        })
    }
}

/// A packet's name for error messages (without its possibly huge contents).
fn name(p: &ServerPacket) -> &'static str {
    match p {
        ServerPacket::Hello(_) => "Hello",
        ServerPacket::Block { kind: BlockKind::Data, .. } => "Data",
        ServerPacket::Block { kind: BlockKind::Totals, .. } => "Totals",
        ServerPacket::Block { kind: BlockKind::Extremes, .. } => "Extremes",
        ServerPacket::Block { kind: BlockKind::Log, .. } => "Log",
        ServerPacket::Block { kind: BlockKind::ProfileEvents, .. } => "ProfileEvents",
        ServerPacket::Exception(_) => "Exception",
        ServerPacket::Progress(_) => "Progress",
        ServerPacket::Pong => "Pong",
        ServerPacket::EndOfStream => "EndOfStream",
        ServerPacket::ProfileInfo(_) => "ProfileInfo",
        ServerPacket::TableColumns { .. } | ServerPacket::TableColumnsCompressed => "TableColumns",
        ServerPacket::TimezoneUpdate(_) => "TimezoneUpdate",
        ServerPacket::PartUuids => "PartUuids",
    }
}
