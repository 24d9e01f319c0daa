//! The input side: received bytes (dechunked, decompressed, or straight into
//! a column buffer) decoded into events.

use super::*;

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
                    let text = &mut self.table_columns_text;
                    match packet::read_server_packet_in(&mut r, self.options.revision, self.revision, compressing, text)
                    {
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
            match packet::read_table_columns_body_in(&mut r, &mut self.table_columns_text) {
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
        self.deadline = None;
        self.cancel_by = None;
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
