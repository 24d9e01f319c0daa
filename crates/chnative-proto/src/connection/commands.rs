//! The commands: what the user asks the connection to do, written as packets.

use std::time::Instant;

use super::{Connection, Error, Phase, State};
use crate::block::write_empty_block;
use crate::compression::{self, Method};
use crate::packet::{self, ClientHello, Query};

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
