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
use std::time::{Duration, Instant};

use crate::block::{Block, BlockLimits};
use crate::buffer::BufferPool;
use crate::chunked::{self, Dechunker, Negotiated};
use crate::compression::{self, FrameHeader, Method, FRAME_PREFIX_LEN};
use crate::error::ProtoError;
use crate::packet::{self, BlockKind, Exception, ProfileInfo, Progress, ServerHello, ServerPacket};
use crate::revision;
use crate::splice::Splices;
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
    /// How long a cancelled query may take to end (its server's answer read to
    /// EndOfStream or an Exception) before the connection is closed instead;
    /// `None`: unbounded. See [`Connection::poll_timeout`].
    pub cancel_timeout: Option<Duration>,
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
            cancel_timeout: Some(DEFAULT_CANCEL_TIMEOUT),
        }
    }
}

/// Default for [`Options::max_silent_packets`]: at the server's default cadence
/// (Progress and ProfileEvents every 100 ms) more than five days of a query
/// that returns nothing, yet a few seconds of a server spinning on empty packets.
pub const DEFAULT_MAX_SILENT_PACKETS: u64 = 10_000_000;

/// Default for [`Options::cancel_timeout`].
pub const DEFAULT_CANCEL_TIMEOUT: Duration = Duration::from_secs(30);

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
    /// The memory of an earlier TableColumns packet's strings, for the next
    /// one's (given back by [`InsertFlow::restart`]).
    table_columns_text: (String, String),
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
    /// Caller-held runs between the output's bytes, in order
    /// ([`Connection::send_data_spliced`]).
    gaps: VecDeque<Gap>,
    /// Bytes of the first gap already written.
    gap_done: usize,
    /// Bytes in the gaps not yet written.
    gap_bytes: usize,
    /// Small pieces of a spliced block gathered into one compressed frame.
    frame_stage: Vec<u8>,

    /// When the outstanding command must be over ([`Connection::set_deadline`]).
    deadline: Option<Instant>,
    /// When the cancelled query must have ended (the Cancel bound).
    cancel_by: Option<Instant>,
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
            table_columns_text: Default::default(),
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
            gaps: VecDeque::new(),
            gap_done: 0,
            gap_bytes: 0,
            frame_stage: Vec::new(),
            deadline: None,
            cancel_by: None,
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
        self.deadline = None;
        self.cancel_by = None;
        self.output.clear();
        self.opos = 0;
        self.clear_gaps();
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

    /// The bytes waiting to be written, in order; with a spliced block queued
    /// ([`Connection::send_data_spliced`]), only those before its first
    /// caller-held run (write them all with [`Connection::transmit_spliced`]).
    pub fn transmit(&self) -> &[u8] {
        let end = self.gaps.front().map_or(self.output.len(), |g| g.at);
        &self.output[self.opos..end]
    }

    /// Whether bytes are waiting to be written.
    pub fn has_output(&self) -> bool {
        self.opos < self.output.len() || !self.gaps.is_empty()
    }

    /// Whether caller-held runs are waiting to be written: the caller must
    /// keep their [`Splices`] and write with [`Connection::transmit_spliced`].
    pub fn has_spliced_output(&self) -> bool {
        !self.gaps.is_empty()
    }

    /// The bytes waiting to be written, in order, as I/O slices into `iov`
    /// (as many as fit; returns how many): the output's own bytes and the runs
    /// of `splices`, which must be the [`Splices`] given to the
    /// [`Connection::send_data_spliced`] whose runs are still queued. Without
    /// such runs, `splices` is not read and this is [`Connection::transmit`].
    ///
    /// A `splices` that does not hold the queued runs is an error (nothing is
    /// written).
    pub fn transmit_spliced<'b>(
        &'b self,
        splices: &Splices<'b>,
        iov: &mut [std::io::IoSlice<'b>],
    ) -> Result<usize, Error> {
        let mut n = 0;
        let mut pos = self.opos;
        let mut skip = self.gap_done;
        for g in &self.gaps {
            if n == iov.len() {
                return Ok(n);
            }
            if pos < g.at {
                iov[n] = std::io::IoSlice::new(&self.output[pos..g.at]);
                n += 1;
                pos = g.at;
                if n == iov.len() {
                    return Ok(n);
                }
            }
            let run = match splices.runs().get(g.index) {
                Some(&(_, bytes)) if bytes.len() == g.len => bytes,
                _ => {
                    return Err(Error::Proto(ProtoError::violation(
                        "the splices given are not the ones of the queued block",
                    )))
                }
            };
            iov[n] = std::io::IoSlice::new(&run[skip..]);
            skip = 0;
            n += 1;
        }
        if n < iov.len() && pos < self.output.len() {
            iov[n] = std::io::IoSlice::new(&self.output[pos..]);
            n += 1;
        }
        Ok(n)
    }

    /// Records that the first `n` bytes waiting ([`Connection::transmit`], or
    /// those of [`Connection::transmit_spliced`]) were written.
    pub fn advance(&mut self, n: usize) {
        let mut n = n;
        while n > 0 {
            let end = self.gaps.front().map_or(self.output.len(), |g| g.at);
            if self.opos < end {
                let k = n.min(end - self.opos);
                self.opos += k;
                self.sent_total += k as u64;
                n -= k;
                continue;
            }
            let Some(g) = self.gaps.front() else { break };
            let k = n.min(g.len - self.gap_done);
            self.gap_done += k;
            self.gap_bytes -= k;
            self.sent_total += k as u64;
            n -= k;
            if self.gap_done == g.len {
                self.gaps.pop_front();
                self.gap_done = 0;
            }
        }
        while let Some(end) = self.packet_ends.front().copied().filter(|&end| end <= self.sent_total) {
            self.last_boundary = end;
            self.packet_ends.pop_front();
        }
        if self.opos == self.output.len() && self.gaps.is_empty() {
            self.output.clear();
            self.opos = 0;
        }
    }

    fn clear_gaps(&mut self) {
        self.gaps.clear();
        self.gap_done = 0;
        self.gap_bytes = 0;
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
        self.queued_total = self.sent_total + (self.output.len() - self.opos + self.gap_bytes) as u64;
        self.packet_ends.push_back(self.queued_total);
    }
}

/// A caller-held run queued between the output's bytes.
#[derive(Debug, Clone, Copy)]
struct Gap {
    /// The output position it goes before.
    at: usize,
    /// Which run of the caller's [`Splices`] it is.
    index: usize,
    len: usize,
}

mod commands;
mod input;
mod insert_flow;
mod timer;

pub use insert_flow::{inserted_counters, parse_table_columns, InsertFlow, InsertStep, TableColumn};
pub use timer::Timeout;
