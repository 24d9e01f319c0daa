//! The commands: what the user asks the connection to do, written as packets.

use std::time::Instant;

use super::{Connection, Error, Gap, Phase, State};
use crate::block::write_empty_block;
use crate::compression::{self, Method};
use crate::error::ProtoError;
use crate::packet::{self, ClientHello, Query};
use crate::splice::Splices;

/// A spliced run at least this long is compressed from where it lies, in
/// frames of its own; shorter pieces are gathered into shared frames.
const DIRECT_FRAME: usize = 64 << 10;

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
    /// it needs [`Options::compression`](super::Options::compression) for the blocks the client sends.
    pub fn query(&mut self, query: &Query<'_>) -> Result<(), Error> {
        self.start_query("query", query, Phase::Query)
    }

    /// Sets the codec of the blocks the client sends from the next command on
    /// ([`Options::compression`](super::Options::compression)): a driver that
    /// chooses compression per query (`compression::auto`) sets it before each.
    /// Refused while a command runs (its blocks must not change codec midway).
    pub fn set_compression(&mut self, method: Option<Method>) -> Result<(), Error> {
        self.require("set_compression", State::Idle)?;
        self.options.compression = method;
        Ok(())
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
        self.deadline = None;
        self.cancel_by = None;
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

    /// Writes one INSERT Data packet like [`Connection::send_data`], except that
    /// `encode` may leave runs of the caller's data where they are: it records
    /// them in the [`Splices`] it is given (`splices`, cleared first) at their
    /// place among the bytes it writes ([`Splices::push`]).
    ///
    /// Uncompressed (and unchunked), the runs are not copied: the connection
    /// queues their places and lengths, and the caller writes the output with
    /// [`Connection::transmit_spliced`], giving it the same `splices`, until
    /// [`Connection::has_spliced_output`] is false. Compressed, each long run is
    /// compressed from where it lies into frames of its own, and `splices` is
    /// not needed afterwards (it is cleared). Another spliced block may not be
    /// queued while runs of this one are still unwritten.
    pub fn send_data_spliced<'a, E: From<Error>>(
        &mut self,
        splices: &mut Splices<'a>,
        encode: impl FnOnce(&mut Vec<u8>, &mut Splices<'a>, u64) -> Result<(), E>,
    ) -> Result<(), E> {
        self.require("send_data", State::Busy(Phase::InsertData))?;
        if !self.gaps.is_empty() {
            return Err(Error::Proto(ProtoError::violation("the previous spliced block is not written yet")).into());
        }
        splices.clear();
        self.silent = 0;
        let revision = self.revision;
        if !self.compressing && !self.chunking.send {
            let start = self.output.len();
            let packet_start = self.begin_packet();
            packet::write_data_head(&mut self.output, "");
            if let Err(e) = encode(&mut self.output, splices, revision) {
                self.output.truncate(start);
                splices.clear();
                return Err(e);
            }
            for (index, &(at, bytes)) in splices.runs().iter().enumerate() {
                self.gaps.push_back(Gap { at, index, len: bytes.len() });
                self.gap_bytes += bytes.len();
            }
            self.end_packet(packet_start);
            return Ok(());
        }
        let mut stage = std::mem::take(&mut self.stage);
        stage.clear();
        let res = encode(&mut stage, splices, revision).and_then(|()| {
            if self.compressing {
                self.put_spliced_compressed(&stage, splices).map_err(E::from)
            } else {
                // Chunked framing is written over the output's own bytes: put the runs in.
                let mut whole = std::mem::take(&mut self.frame_stage);
                whole.clear();
                splices.materialize(&stage, &mut whole);
                let res = self.put_data_packet(&whole).map_err(E::from);
                self.frame_stage = whole;
                res
            }
        });
        splices.clear();
        self.stage = stage;
        res
    }

    /// A Data packet whose body is `own` with the runs of `splices` put in,
    /// compressed: long pieces from where they lie, short ones gathered.
    fn put_spliced_compressed(&mut self, own: &[u8], splices: &Splices<'_>) -> Result<(), Error> {
        const FRAME: usize = 1 << 20;
        let method = self.options.compression.unwrap_or(Method::Lz4);
        let start = self.output.len();
        let packet_start = self.begin_packet();
        packet::write_data_head(&mut self.output, "");
        let mut small = std::mem::take(&mut self.frame_stage);
        small.clear();
        let mut res = Ok(());
        for piece in splices.pieces(own) {
            if piece.len() >= DIRECT_FRAME {
                if !small.is_empty() {
                    res = compression::compress_frames(method, &small, FRAME, &mut self.output);
                    small.clear();
                    if res.is_err() {
                        break;
                    }
                }
                res = compression::compress_frames(method, piece, FRAME, &mut self.output);
                if res.is_err() {
                    break;
                }
            } else {
                small.extend_from_slice(piece);
                if small.len() >= FRAME {
                    res = compression::compress_frames(method, &small, FRAME, &mut self.output);
                    small.clear();
                    if res.is_err() {
                        break;
                    }
                }
            }
        }
        if res.is_ok() && !small.is_empty() {
            res = compression::compress_frames(method, &small, FRAME, &mut self.output);
        }
        self.frame_stage = small;
        if let Err(e) = res {
            self.output.truncate(start);
            return Err(e.into());
        }
        self.end_packet(packet_start);
        Ok(())
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
        self.deadline = None;
        self.cancel_by = None;
        self.command_start = self.queued_total;
        self.silent = 0;
        self.put_packet(packet::write_ping);
        self.state = State::Busy(Phase::Ping);
        Ok(())
    }

    /// Writes Cancel for a running query: Busy(Query) → Busy(Cancelled), and
    /// starts the Cancel bound ([`Options::cancel_timeout`](super::Options::cancel_timeout) from `now`, see
    /// [`Connection::poll_timeout`]). A no-op when idle or already cancelled;
    /// refused during an INSERT or a ping.
    pub fn cancel(&mut self, now: Instant) -> Result<(), Error> {
        match self.state {
            State::Closed => Err(self.closed_error()),
            State::Idle | State::Busy(Phase::Cancelled) => Ok(()),
            State::Busy(Phase::Query) => {
                self.write_cancel(now);
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
    /// Closed (a packet half written, an INSERT cut short, a handshake). A
    /// query cancelled here is bounded by the Cancel bound from `now`.
    pub fn abandon(&mut self, now: Instant) {
        let phase = match self.state {
            State::Start | State::Idle | State::Closed => return,
            State::Handshake => return self.close("the handshake was abandoned"),
            State::Busy(phase) => phase,
        };
        if self.is_mid_packet() {
            return self.close("an operation was abandoned while a packet was half written");
        }
        if !self.gaps.is_empty() {
            // The caller's runs go with the abandoned operation: the block cannot be finished.
            return self.close("an INSERT was abandoned before its data was written");
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
            Phase::Query => self.write_cancel(now),
            Phase::Cancelled | Phase::Ping | Phase::InsertEnd => {}
            Phase::InsertHeader | Phase::InsertData => {
                self.close("an INSERT was abandoned before the server confirmed it (its data may or may not be stored)")
            }
        }
    }

    /// Busy(Query) → Busy(Cancelled): Cancel queued, the Cancel bound started.
    pub(super) fn write_cancel(&mut self, now: Instant) {
        self.put_packet(packet::write_cancel);
        self.state = State::Busy(Phase::Cancelled);
        self.deadline = None;
        self.cancel_by = self.options.cancel_timeout.and_then(|d| now.checked_add(d));
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

    pub(super) fn put_empty_data(&mut self) -> Result<(), Error> {
        let mut stage = std::mem::take(&mut self.stage);
        stage.clear();
        write_empty_block(&mut stage, self.revision);
        let res = self.put_data_packet(&stage);
        self.stage = stage;
        res
    }
}
