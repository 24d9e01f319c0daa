//! One connection: the socket, and the bytes between it and the protocol
//! state machine ([`chnative_proto::connection::Connection`]).
//!
//! This layer only moves bytes and sleeps: it writes what the machine has
//! queued, reads at least what the machine asks for (the machine bounds it),
//! bounds a wait by the read timeout (silence on the socket) and by the
//! machine's timer (`poll_timeout`), and when that passes reports the time
//! (`handle_timeout`): what a passed query deadline or Cancel bound does is
//! the machine's decision. Sequencing, framing, timers and the state live in
//! the machine; the rest of the crate reaches it only through `Driver`.
//!
//! Every await point is cancel-safe: a write is recorded as it happens
//! (`advance`), and read bytes land in the machine's input buffer (or the
//! column buffer it lends, committed with `direct_filled` only once the read
//! returned), so a dropped future loses nothing. The next operation finds the machine Busy
//! and calls `abandon`, which undoes, drains or closes (see the machine's
//! docs); a half-written packet is never re-sent or followed by another one.

use std::io::IoSlice;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use chnative_proto::compression::Method;
use chnative_proto::connection::{self, BlockSink, Connection, Discard, Event, Options, Poll};
use chnative_proto::packet::{ClientHello, ClientInfo, Query, ServerHello};
use chnative_proto::splice::Splices;
use chnative_proto::{BlockLimits, ProtoError};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::config::{Compression, Config};
use crate::error::{Error, Repr, Result};
use crate::transport::{Shut, Transport};

mod auto;
use auto::AutoRun;

/// A query's settings and parameters in wire form.
#[derive(Debug, Clone)]
pub(crate) struct QueryWire {
    pub id: QueryId,
    pub sql: String,
    pub settings: Vec<(String, String, u64)>,
    pub params: Vec<(String, String)>,
    /// W3C trace context for ClientInfo.
    pub trace: Option<chnative_proto::packet::TraceContext>,
}

/// Length of a generated query id: `chn-` and 16 hex digits, `-` and 8 more.
/// I/O slices per vectored write (a spliced block takes a few per column;
/// what does not fit goes in the next write).
const IOV_MAX: usize = 256;
const GENERATED_ID_LEN: usize = 4 + 16 + 1 + 8;

/// A query id: generated (kept inline, so a query costs no allocation for
/// it) or given by the user.
#[derive(Clone)]
pub(crate) enum QueryId {
    Generated([u8; GENERATED_ID_LEN]),
    Given(String),
}

impl QueryId {
    pub(crate) fn as_str(&self) -> &str {
        match self {
            // Only ASCII is ever written into a generated id.
            QueryId::Generated(b) => std::str::from_utf8(b).unwrap_or_default(),
            QueryId::Given(s) => s,
        }
    }
}

impl std::ops::Deref for QueryId {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl std::fmt::Debug for QueryId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

static QUERY_COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A query id unique enough to find the query in `system.processes`:
/// `chn-<16 hex digits of a keyed hash of a counter and the time>-<counter>`.
pub(crate) fn new_query_id() -> QueryId {
    use std::hash::{BuildHasher, Hasher};
    let n = QUERY_COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(n);
    let t = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_nanos() as u64;
    h.write_u64(t);
    let a = h.finish();
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut id = *b"chn-0000000000000000-00000000";
    for (i, d) in id[4..20].iter_mut().enumerate() {
        *d = HEX[((a >> (60 - 4 * i)) & 0xf) as usize];
    }
    let low = n as u32;
    for (i, d) in id[21..].iter_mut().enumerate() {
        *d = HEX[((low >> (28 - 4 * i)) & 0xf) as usize];
    }
    QueryId::Generated(id)
}

/// The settings sent with every query of a connection made with `cfg`: the
/// compression method, then the config's own (marked important).
fn base_settings(cfg: &Config) -> Vec<(String, String, u64)> {
    let mut settings = Vec::with_capacity(cfg.settings.len() + 2);
    if let Some(method) = cfg.compression.method() {
        push_method_settings(&mut settings, method);
    }
    for (k, v) in &cfg.settings {
        settings.push((k.clone(), v.clone(), chnative_proto::packet::SETTING_IMPORTANT));
    }
    settings
}

/// The settings that make the server compress with `method`.
fn push_method_settings(settings: &mut Vec<(String, String, u64)>, method: Method) {
    match method {
        Method::Lz4 => settings.push(("network_compression_method".into(), "LZ4".into(), 0)),
        Method::Zstd { level } => {
            settings.push(("network_compression_method".into(), "ZSTD".into(), 0));
            settings.push(("network_zstd_compression_level".into(), level.to_string(), 0));
        }
        _ => {}
    }
}

/// Maps a state-machine error to the client's.
pub(crate) fn map_err(e: connection::Error) -> Error {
    match e {
        connection::Error::Proto(p) => Error::from(p),
        connection::Error::Unsupported(s) => Error::config(s),
        connection::Error::Closed(s) => Error::closed(s),
        // The client drives the machine: a call it refuses is a bug here.
        e @ connection::Error::State { .. } => Error::internal(e.to_string()),
        e => Error::internal(format!("a machine error unknown to this client: {e}")),
    }
}

impl From<connection::Error> for Error {
    fn from(e: connection::Error) -> Self {
        map_err(e)
    }
}

/// When a query started now must be over: its own timeout if it has one
/// (zero: none), else the config's. The clock is read only when there is one.
pub(crate) fn query_deadline(
    per_query: Option<std::time::Duration>,
    config: Option<std::time::Duration>,
) -> Option<Instant> {
    per_query.or(config).filter(|d| !d.is_zero()).and_then(|d| Instant::now().checked_add(d))
}

/// Runs the start of a query (getting a connection, sending the Query) within
/// its deadline. Every step is cancel-safe: a step cut short leaves the
/// connection where the next call finds it (and finishes or closes it).
///
/// `start` is pinned by the caller and borrowed here: taken by value, it would
/// be held twice in this future (as the argument and as the awaited value),
/// and every query's future would carry and copy both.
pub(crate) async fn within<T, F: std::future::Future<Output = Result<T>>>(
    deadline: Option<Instant>,
    start: std::pin::Pin<&mut F>,
) -> Result<T> {
    let Some(at) = deadline else { return start.await };
    match tokio::time::timeout_at(at.into(), start).await {
        Ok(r) => r,
        Err(_) => Err(Error::timeout("the query deadline passed while waiting for a connection to send it on")),
    }
}

/// What ended a wait for the socket early.
#[derive(Clone, Copy)]
enum Expired {
    /// The read timeout (silence) passed.
    Read,
    /// The machine's timer ([`Connection::poll_timeout`]) passed: the query
    /// deadline or the Cancel bound, for the machine to handle.
    Machine,
}

pub(crate) struct Driver {
    io: Box<dyn Transport>,
    proto: Connection,
    pub(crate) cfg: Config,
    hostname: String,
    os_user: String,
    /// The settings every query sends (compression, the config's), built once.
    base_settings: Vec<(String, String, u64)>,
    /// The blocks this connection's queries decode into, kept between queries
    /// (a stream takes them and puts them back): a repeated query reuses its
    /// columns' names, types and buffers instead of building them again.
    pub(crate) blocks: Option<Box<crate::blocks::Blocks>>,
    /// The last INSERT's flow (the table's header and description), lent to
    /// the next INSERT: one into the same table decodes its header into the
    /// same columns instead of building them again.
    insert_flow: Option<Box<KeptInsert>>,
    /// The one timer a read that has to wait is bounded by, made on the
    /// first wait and reset for each (cheaper than a new timer per read).
    timer: Option<std::pin::Pin<Box<tokio::time::Sleep>>>,
    /// Bytes read from and written to the socket, ever (for `compression=auto`).
    wire_bytes: u64,
    /// The codec of the running (or last) query.
    used: Option<Method>,
    /// The running query's measurement, under `compression=auto`.
    auto: Option<AutoRun>,
    /// The `session_timezone` the last successful `SET` on this connection gave
    /// (`""`: back to the server's zone); `None` when no SET named it.
    set_zone: Option<String>,
    /// The zone a running `SET` statement gives, kept when it succeeds.
    pending_set_zone: Option<String>,
    /// The zone the running (or last) query shows DateTime columns in whose
    /// type names none, when it is not the server's.
    query_zone: Option<String>,
}

/// What a connection keeps of its last INSERT for the next one.
#[derive(Default)]
struct KeptInsert {
    flow: chnative_proto::connection::InsertFlow,
    sql: String,
    types: Vec<std::borrow::Cow<'static, str>>,
}

/// Runs `io`, bounded by the earlier of the machine's timer (`machine`) and
/// `timeout` from when `io` first has to wait. `io` is polled first, so an operation that is
/// ready at once costs no clock read and no timer; the one `timer` of the
/// connection is reset rather than a new one registered for each wait.
async fn bounded<F: std::future::Future>(
    timer: &mut Option<std::pin::Pin<Box<tokio::time::Sleep>>>,
    machine: Option<Instant>,
    timeout: Option<std::time::Duration>,
    io: F,
) -> std::result::Result<F::Output, Expired> {
    use std::future::Future;
    use std::task::Poll;
    if machine.is_none() && timeout.is_none() {
        return Ok(io.await);
    }
    let timer = timer.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(tokio::time::Instant::now())));
    let mut io = std::pin::pin!(io);
    let mut armed: Option<Expired> = None;
    std::future::poll_fn(|cx| {
        if let Poll::Ready(r) = io.as_mut().poll(cx) {
            return Poll::Ready(Ok(r));
        }
        let which = match armed {
            Some(which) => which,
            None => {
                let mut best = machine.map(|at| (at, Expired::Machine));
                if let Some(at) = timeout.and_then(|d| Instant::now().checked_add(d)) {
                    if best.is_none_or(|(b, _)| at < b) {
                        best = Some((at, Expired::Read));
                    }
                }
                let Some((at, which)) = best else { return Poll::Pending };
                timer.as_mut().reset(at.into());
                armed = Some(which);
                which
            }
        };
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(which)),
            Poll::Pending => Poll::Pending,
        }
    })
    .await
}

impl Driver {
    /// Connects to `cfg`'s first host (see `hosts::Connector` for the rest).
    ///
    /// A deadline passing (the connect timeout, or the read timeout during the
    /// handshake) is an I/O error of kind `TimedOut`, so that the caller names
    /// the host and port in it like any other connect failure.
    pub(crate) async fn connect(cfg: Config, tls: Option<&crate::tls::Tls>) -> Result<Driver> {
        let limit = cfg.connect_deadline();
        let r = match limit {
            None => Self::connect_inner(cfg, tls).await,
            Some(d) => match tokio::time::timeout(d, Self::connect_inner(cfg, tls)).await {
                Ok(r) => r,
                Err(_) => Err(Error::timeout("connecting")),
            },
        };
        r.map_err(|e| match e.repr() {
            &Repr::Timeout(what) => {
                let why = match limit {
                    Some(d) if what == "connecting" => {
                        format!("timed out after {d:?} (TCP connect and handshake; connect_timeout sets the limit)")
                    }
                    _ => format!("timed out {what} during the handshake (read_timeout sets the limit)"),
                };
                Error::from(std::io::Error::new(std::io::ErrorKind::TimedOut, why))
            }
            _ => e,
        })
    }

    async fn connect_inner(cfg: Config, tls: Option<&crate::tls::Tls>) -> Result<Driver> {
        let io = crate::dial::open(&cfg, tls).await?;
        let options = Options {
            revision: cfg.revision,
            compression: cfg.compression.method(),
            max_block_bytes: cfg.max_block_bytes,
            limits: BlockLimits {
                max_rows: cfg.max_block_rows,
                max_bytes: cfg.max_block_bytes as u64,
                ..BlockLimits::default()
            },
            max_silent_packets: cfg.max_silent_packets,
            chunked_send: cfg.chunked_send,
            chunked_recv: cfg.chunked_recv,
            cancel_timeout: Some(cfg.cancel_timeout),
        };
        let base_settings = base_settings(&cfg);
        let mut c = Driver {
            io,
            proto: Connection::new(options),
            cfg,
            hostname: std::env::var("HOSTNAME").unwrap_or_default(),
            os_user: std::env::var("USER").unwrap_or_default(),
            base_settings,
            blocks: None,
            insert_flow: None,
            timer: None,
            wire_bytes: 0,
            used: None,
            auto: None,
            set_zone: None,
            pending_set_zone: None,
            query_zone: None,
        };
        // A port that does not answer the Hello may be an HTTP port: ask it.
        let probe = crate::dial::http_probe(c.cfg.host.clone(), c.cfg.effective_port(), tls.cloned());
        tokio::select! {
            biased;
            r = c.handshake() => r?,
            Some(e) = probe => return Err(e),
        }
        Ok(c)
    }

    async fn handshake(&mut self) -> Result<()> {
        let hello = ClientHello {
            client_name: &self.cfg.client_name,
            version_major: 0,
            version_minor: 1,
            revision: self.cfg.revision,
            database: &self.cfg.database,
            user: &self.cfg.user,
            password: &self.cfg.password,
        };
        let started = Instant::now();
        self.proto.start_handshake(&hello, &self.cfg.quota_key).map_err(map_err)?;
        match self.next_event(&mut Discard).await? {
            Event::Hello => {
                if self.cfg.compression == Compression::Auto {
                    let rtt = started.elapsed();
                    self.cfg.auto_links.with(&self.cfg, |a, _| a.note_handshake(rtt));
                    tracing::debug!(rtt_us = rtt.as_micros() as u64, "compression=auto: handshake round trip");
                }
            }
            Event::Exception(e) => return Err(Error::server(e)),
            other => {
                let e = ProtoError::violation(format!("unexpected {other:?} in the handshake"));
                return Err(self.poison(Error::from(e)));
            }
        }
        self.write_out().await?;
        tracing::debug!(server = %self.proto.server().display_name, revision = self.proto.revision(), "connected");
        Ok(())
    }

    pub(crate) fn server(&self) -> &ServerHello {
        self.proto.server()
    }

    /// The `session_timezone` of the user's profile, from the server's Hello
    /// (a revision of 54474 or later); `None` when the profile leaves it unset.
    pub(crate) fn profile_zone(&self) -> Option<&str> {
        self.proto.server().settings.iter().rev().find(|(k, _)| k == "session_timezone").map(|(_, v)| v.as_str())
    }

    /// Decides the zone of zone-less DateTime columns for the query about to
    /// be sent, as the server decides it: the query's own SETTINGS clause, else
    /// the settings sent with it (the query's over the config's), else the
    /// session's SET, else the user's profile (the settings in the server's
    /// Hello), else the server's zone. Notes a SET of the zone, kept if it succeeds.
    fn decide_zone(&mut self, q: &QueryWire) {
        let sent = |s: &[(String, String, u64)]| {
            s.iter().rev().find(|(k, ..)| k == "session_timezone").map(|(_, v, _)| v.clone())
        };
        let sql = q.sql.as_str();
        let zone = crate::sql_zone::settings_clause_zone(sql)
            .or_else(|| sent(&q.settings))
            .or_else(|| sent(&self.base_settings))
            .or_else(|| self.set_zone.clone())
            .or_else(|| self.profile_zone().map(str::to_string));
        self.query_zone = zone.filter(|z| !z.is_empty());
        self.pending_set_zone = crate::sql_zone::set_statement_zone(sql);
    }

    /// The zone the running (or last) query shows DateTime columns in whose
    /// type names none (see `decide_zone`).
    pub(crate) fn query_zone(&self) -> &str {
        self.session_zone().unwrap_or(&self.proto.server().timezone)
    }

    /// The running (or last) query's zone when it is not the server's.
    pub(crate) fn session_zone(&self) -> Option<&str> {
        self.query_zone.as_deref()
    }

    pub(crate) fn revision(&self) -> u64 {
        self.proto.revision()
    }

    pub(crate) fn is_broken(&self) -> bool {
        self.proto.is_closed()
    }

    /// Whether no command is outstanding (a new one may start).
    pub(crate) fn is_idle(&self) -> bool {
        self.proto.is_idle()
    }

    /// Whether the connection can go back to a pool as it is: idle, open, the
    /// server has not closed its end, and nothing unread arrived.
    pub(crate) fn is_reusable(&mut self) -> bool {
        self.read_now().is_ok() && !self.is_broken() && self.proto.is_idle() && self.proto.buffered() == 0
    }

    /// Which directions use chunked framing.
    pub(crate) fn chunking(&self) -> chnative_proto::chunked::Negotiated {
        self.proto.chunking()
    }

    /// Bytes received straight into column buffers (a statistic).
    pub(crate) fn direct_bytes(&self) -> u64 {
        self.proto.direct_bytes()
    }

    /// Whether bytes are queued for the server.
    pub(crate) fn has_output(&self) -> bool {
        self.proto.has_output()
    }

    /// Queues one INSERT Data packet whose block `encode` writes, leaving the
    /// runs it records in `splices` where they are (see
    /// `Connection::send_data_spliced`): write it with the same `splices`.
    pub(crate) fn send_data_spliced<'a>(
        &mut self,
        splices: &mut Splices<'a>,
        encode: impl FnOnce(&mut Vec<u8>, &mut Splices<'a>, u64) -> Result<()>,
    ) -> Result<()> {
        if self.auto.is_none() {
            return self.proto.send_data_spliced(splices, encode);
        }
        // Under `compression=auto`, the block's uncompressed size: what the
        // encoder wrote plus the runs it left in place.
        let mut raw = 0;
        let res = self.proto.send_data_spliced(splices, |out, runs, revision| {
            let start = out.len();
            let r = encode(out, runs, revision);
            raw = (out.len() - start + runs.runs().iter().map(|(_, b)| b.len()).sum::<usize>()) as u64;
            r
        });
        if let Some(run) = &mut self.auto {
            run.raw = run.raw.saturating_add(raw);
        }
        res
    }

    /// Queues the end of an INSERT's data.
    pub(crate) fn end_data(&mut self) -> Result<()> {
        self.proto.end_data().map_err(map_err)
    }

    /// Lends `flow` the flow of this connection's last INSERT (restarted),
    /// for an INSERT about to start.
    pub(crate) fn lend_insert_flow(&mut self, flow: &mut chnative_proto::connection::InsertFlow) {
        if let Some(kept) = self.insert_flow.as_deref_mut() {
            std::mem::swap(&mut kept.flow, flow);
            flow.restart(&mut self.proto);
        }
    }

    /// Keeps an ended INSERT's flow for the next INSERT on this connection
    /// (`flow` gets the one kept before, if any).
    pub(crate) fn keep_insert_flow(&mut self, flow: &mut chnative_proto::connection::InsertFlow) {
        std::mem::swap(&mut self.kept_insert().flow, flow);
    }

    /// The last INSERT's statement and wire type names, emptied, for the
    /// next one to write its own into (their memory reused).
    pub(crate) fn lend_insert_text(&mut self) -> (String, Vec<std::borrow::Cow<'static, str>>) {
        let kept = self.kept_insert();
        let (mut sql, mut types) = (std::mem::take(&mut kept.sql), std::mem::take(&mut kept.types));
        sql.clear();
        types.clear();
        (sql, types)
    }

    /// Keeps an ended INSERT's statement and wire type names' memory.
    pub(crate) fn keep_insert_text(&mut self, sql: String, types: Vec<std::borrow::Cow<'static, str>>) {
        let kept = self.kept_insert();
        kept.sql = sql;
        kept.types = types;
    }

    fn kept_insert(&mut self) -> &mut KeptInsert {
        self.insert_flow.get_or_insert_with(Default::default)
    }

    /// The next event among the bytes the server has sent already, without
    /// waiting (`None` when a whole one is not there yet).
    pub(crate) fn ready_event(&mut self, sink: &mut dyn BlockSink) -> Result<Option<Event>> {
        // A server that closed its end may have sent packets before it did (24.8
        // sends an exception and closes): those come out first, the close after.
        let at_end = self.read_available()?;
        if let Some(event) = self.buffered_event(sink)? {
            return Ok(Some(event));
        }
        if at_end {
            self.proto.peer_closed();
            return Err(self.closed());
        }
        Ok(None)
    }

    /// Marks the connection unusable (keeping the first cause), closes the
    /// socket at once (so the server ends its side of the query now, not when
    /// the client is dropped) and returns `e`.
    pub(crate) fn poison(&mut self, e: Error) -> Error {
        self.proto.close(&e);
        self.io = Box::new(Shut);
        e
    }

    /// Writes everything the machine has queued.
    pub(crate) async fn write_out(&mut self) -> Result<()> {
        self.write_out_spliced(&Splices::new()).await
    }

    /// Writes everything the machine has queued, the runs of a spliced block
    /// from `splices` (see `Connection::send_data_spliced`).
    pub(crate) async fn write_out_spliced(&mut self, splices: &Splices<'_>) -> Result<()> {
        while self.proto.has_output() {
            self.write_some_spliced(splices).await?;
        }
        let flush = self.io.flush();
        flush.await.map_err(|e| self.poison(Error::from(e)))
    }

    /// One write of queued bytes (waits until the socket takes some); the runs
    /// of a queued spliced block come from `splices`, in one vectored write
    /// with the output's own bytes.
    ///
    /// Bounded by the write timeout and by the running command's deadline: a
    /// write that cannot finish by the query deadline (a server that stopped
    /// reading) closes the connection, as a half-written packet cannot be
    /// followed by a Cancel.
    pub(crate) async fn write_some_spliced(&mut self, splices: &Splices<'_>) -> Result<()> {
        match self.try_write_some(splices).await? {
            Ok(()) => Ok(()),
            Err(e) => Err(self.poison(Error::from(e))),
        }
    }

    /// [`Driver::write_some_spliced`], but a write the socket failed comes back
    /// as its IO error with the connection not yet poisoned: the caller may first
    /// look for what the server sent before it closed its end
    /// ([`Driver::read_before_close`]), and must then poison the connection.
    pub(crate) async fn try_write_some(&mut self, splices: &Splices<'_>) -> Result<std::io::Result<()>> {
        // Under `compression=auto`, the time the socket took to take the bytes.
        let started = self.auto.is_some().then(Instant::now);
        let machine = self.proto.poll_timeout();
        let n = if self.proto.has_spliced_output() {
            let mut iov = [IoSlice::new(&[]); IOV_MAX];
            let k = match self.proto.transmit_spliced(splices, &mut iov) {
                Ok(k) => k,
                Err(e) => return Err(self.poison(map_err(e))),
            };
            let write = self.io.write_vectored(&iov[..k]);
            bounded(&mut self.timer, machine, self.cfg.read_timeout, write).await
        } else {
            let write = self.io.write(self.proto.transmit());
            bounded(&mut self.timer, machine, self.cfg.read_timeout, write).await
        };
        let n = match n {
            Ok(r) => r,
            Err(Expired::Read) => return Err(self.poison(Error::timeout("writing"))),
            Err(Expired::Machine) => return Err(self.timed_out()),
        };
        match n {
            Ok(0) => Ok(Err(std::io::ErrorKind::WriteZero.into())),
            Ok(n) => {
                self.wire_bytes += n as u64;
                self.add_io_wait(started);
                self.proto.advance(n);
                Ok(Ok(()))
            }
            Err(e) => Ok(Err(e)),
        }
    }

    /// After a write that failed because the server closed its end (a broken
    /// pipe, a reset): takes in, without waiting, what the server sent before
    /// it closed, for [`Driver::buffered_event`]. A server that refuses data and
    /// then closes (24.8 after a refused INSERT block) sends its reason first.
    pub(crate) fn read_before_close(&mut self) {
        while let Ok(n @ 1..) = self.io.try_read_now(self.proto.recv_buffer(0)) {
            self.wire_bytes += n as u64;
        }
    }

    /// The next event among the bytes already taken in, without reading.
    pub(crate) fn buffered_event(&mut self, sink: &mut dyn BlockSink) -> Result<Option<Event>> {
        if self.proto.buffered() == 0 {
            return Ok(None);
        }
        match self.proto.poll(sink).map_err(map_err)? {
            Poll::Event(e) => Ok(Some(e)),
            _ => Ok(None),
        }
    }

    /// Writes what the socket takes right now, without waiting (from `Drop`).
    pub(crate) fn write_now(&mut self) {
        while self.proto.has_output() {
            match self.io.try_write_now(self.proto.transmit()) {
                Ok(n) if n > 0 => self.proto.advance(n),
                _ => return,
            }
        }
    }

    /// Takes in what the server has sent already, without waiting; notices a
    /// server that has closed its end.
    pub(crate) fn read_now(&mut self) -> Result<()> {
        if self.read_available()? {
            self.proto.peer_closed();
            return Err(self.closed());
        }
        Ok(())
    }

    /// Takes in what the server has sent already, without waiting; `true` when
    /// the server has closed its end (the machine is not told: bytes it sent
    /// before closing may still be waiting to be parsed).
    fn read_available(&mut self) -> Result<bool> {
        match self.io.try_read_now(self.proto.recv_buffer(0)) {
            Ok(0) => Ok(true),
            Ok(n) => {
                self.wire_bytes += n as u64;
                Ok(false)
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(false),
            Err(e) => Err(self.poison(Error::from(e))),
        }
    }

    fn closed(&self) -> Error {
        Error::closed(self.proto.close_reason().unwrap_or("closed").to_string())
    }

    /// Reads until the machine has `needed` unconsumed bytes; or, while the
    /// machine fills a fixed-width column straight from the socket, reads once
    /// into that column (`sink` lends it, as to `poll`).
    async fn fill(&mut self, needed: usize, sink: &mut (dyn BlockSink + Send)) -> Result<()> {
        if self.proto.direct_pending() {
            let machine = self.proto.poll_timeout();
            let Some((slot, tail)) = self.proto.direct_slots(sink) else { return Ok(()) };
            // Cancel-safe: a dropped read took no bytes off the socket, and
            // none count as received before `direct_filled`.
            let io = &mut self.io;
            let read = std::future::poll_fn(|cx| io.poll_read_pair(cx, slot, tail));
            let n = bounded(&mut self.timer, machine, self.cfg.read_timeout, read).await;
            let n = match n {
                Ok(r) => r,
                Err(which) => return Err(self.expired(which)),
            };
            return match n {
                Ok(0) => Err(self.eof()),
                Ok(n) => {
                    self.wire_bytes += n as u64;
                    self.proto.direct_filled(sink, n);
                    Ok(())
                }
                Err(e) => Err(self.poison(Error::from(e))),
            };
        }
        // A connection closed while taking in bytes (bad chunk framing) has
        // nothing more to wait for: the next poll says why.
        while self.proto.buffered() < needed && !self.proto.is_closed() {
            let want = needed - self.proto.buffered();
            let machine = self.proto.poll_timeout();
            let read = self.io.read_buf(self.proto.recv_buffer(want));
            let n = bounded(&mut self.timer, machine, self.cfg.read_timeout, read).await;
            let n = match n {
                Ok(r) => r,
                Err(which) => return Err(self.expired(which)),
            };
            match n {
                Ok(0) => return Err(self.eof()),
                Ok(n) => self.wire_bytes += n as u64,
                Err(e) => return Err(self.poison(Error::from(e))),
            }
        }
        Ok(())
    }

    /// The server closed its end while a reply was expected.
    fn eof(&mut self) -> Error {
        self.proto.peer_closed();
        Error::from(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            self.proto.close_reason().unwrap_or("server closed the connection").to_string(),
        ))
    }

    fn expired(&mut self, which: Expired) -> Error {
        match which {
            Expired::Read => self.poison(Error::timeout("waiting for the server")),
            Expired::Machine => self.timed_out(),
        }
    }

    /// The machine's timer passed: it applies its policy (see
    /// `chnative_proto::connection::Timeout`) and this reports it. A query
    /// cancelled by its deadline fails now; the rest of its answer is read by
    /// whoever owns the connection next, off the caller's path (a dropped
    /// stream drains it in the background), bounded by the Cancel bound.
    fn timed_out(&mut self) -> Error {
        // The timer fires at or after the machine's time; the clock is read
        // once, and never taken earlier than the time the machine asked for.
        let now = Instant::now();
        let now = self.proto.poll_timeout().map_or(now, |at| now.max(at));
        match self.proto.handle_timeout(now) {
            Some(t) if t.closed() => {
                self.io = Box::new(Shut);
                Error::timeout(t.what())
            }
            Some(t) => {
                self.write_now();
                Error::timeout(t.what())
            }
            None => Error::internal("a timer passed that the connection did not set"),
        }
    }

    /// Whether the machine's timer has passed (the clock is read only while one runs).
    fn timer_passed(&self) -> bool {
        self.proto.poll_timeout().is_some_and(|at| Instant::now() >= at)
    }

    /// The next event of the outstanding command, writing queued bytes first.
    ///
    /// When the query deadline passes (while waiting for the server, or before
    /// this call: the rest of the answer may already be here), the query is
    /// cancelled and the timeout is returned at once; the connection is left
    /// Busy(Cancelled) for its owner to drain (see `prepare`).
    pub(crate) async fn next_event(&mut self, sink: &mut (dyn BlockSink + Send)) -> Result<Event> {
        if self.timer_passed() {
            return Err(self.timed_out());
        }
        loop {
            if self.proto.has_output() {
                self.write_out().await?;
            }
            let polled = self.proto.poll(sink);
            if self.proto.is_closed() {
                // The machine gave up on the connection: let the server know now.
                self.io = Box::new(Shut);
            }
            match polled.map_err(map_err)? {
                Poll::Event(e) => {
                    if self.auto.is_some() {
                        self.observe_auto(&e);
                    }
                    match &e {
                        Event::EndOfStream => {
                            if let Some(z) = self.pending_set_zone.take() {
                                self.set_zone = Some(z);
                            }
                        }
                        Event::Exception(_) => self.pending_set_zone = None,
                        // The server names the session's zone (for `input()`).
                        Event::TimezoneUpdate(z) => {
                            self.query_zone = Some(z.clone()).filter(|z| !z.is_empty());
                        }
                        _ => {}
                    }
                    return Ok(e);
                }
                Poll::NeedInput { needed } => {
                    // Under `compression=auto`, the time the socket took to bring the bytes.
                    let started = self.auto.is_some().then(Instant::now);
                    self.fill(needed, sink).await?;
                    self.add_io_wait(started);
                }
                Poll::Idle => return Err(Error::internal("waiting for the server with no command outstanding")),
                other => return Err(Error::internal(format!("the machine polled {other:?}, unknown to this client"))),
            }
        }
    }

    /// Asks the server to stop the running query (once), starting the bound on its answer.
    pub(crate) fn cancel(&mut self) {
        // A cancelled query's time says nothing of the link.
        self.auto = None;
        // Refused only outside a query (an INSERT, a ping), where there is nothing to cancel.
        let _ = self.proto.cancel(Instant::now());
    }

    /// The user gave up on the outstanding command (see `Connection::abandon`).
    pub(crate) fn abandon(&mut self) {
        self.auto = None;
        self.proto.abandon(Instant::now());
    }

    /// Reads and discards the rest of the outstanding command.
    pub(crate) async fn drain(&mut self) -> Result<()> {
        // Into the blocks a dropped stream left here rather than a `Discard`:
        // a Data block half decoded (its start no longer in the input: the
        // block took it, or it came straight from the socket) can only be
        // finished in the block it started in (the machine closes the
        // connection otherwise).
        let mut blocks = self.blocks.take();
        let mut res = Ok(());
        while res.is_ok() && !self.proto.is_idle() {
            res = match blocks.as_deref_mut() {
                Some(b) => self.next_event(b).await.map(drop),
                None => self.next_event(&mut Discard).await.map(drop),
            };
        }
        self.blocks = blocks;
        res?;
        self.write_out().await
    }

    /// Brings the connection to Idle before a new command: finishes (or
    /// closes on) whatever an abandoned operation left.
    pub(crate) async fn prepare(&mut self) -> Result<()> {
        if self.proto.is_closed() {
            return Err(self.closed());
        }
        if !self.proto.is_idle() {
            self.abandon();
            if self.proto.is_closed() {
                return Err(self.closed());
            }
            // Boxed: the rare path, which inline would double this future (and
            // every query's, which holds it).
            Box::pin(self.drain()).await?;
        }
        self.write_out().await?;
        // Notice a server that closed the connection while we were idle (as it
        // does after some exceptions), or that sent bytes nobody asked for.
        self.read_now()?;
        if self.proto.buffered() > 0 {
            self.proto.poll(&mut Discard).map_err(map_err)?;
        }
        Ok(())
    }

    /// Sends a Query packet (and the empty external-tables block). The query
    /// must be over by `deadline` (see `query_deadline`).
    pub(crate) async fn send_query(&mut self, q: &QueryWire, insert: bool, deadline: Option<Instant>) -> Result<()> {
        self.prepare().await?;
        self.decide_zone(q);
        let chosen = match self.cfg.compression {
            Compression::Auto => Some(self.choose_compression(&q.sql, insert)?),
            _ => None,
        };
        self.used = chosen.or(self.cfg.compression.method()).filter(|m| *m != Method::None);
        let compression = self.used.is_some();
        let combined: Vec<(String, String, u64)>;
        let settings = if q.settings.is_empty() && !(chosen.is_some() && compression) {
            &self.base_settings
        } else {
            let mut all = self.base_settings.clone();
            if let (Some(method), true) = (chosen, compression) {
                push_method_settings(&mut all, method);
            }
            all.extend(q.settings.iter().cloned());
            combined = all;
            &combined
        };
        let start_time_us = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_micros() as u64;
        let query = Query {
            query_id: q.id.as_str(),
            client_info: ClientInfo {
                client_name: &self.cfg.client_name,
                version_major: 0,
                version_minor: 1,
                version_patch: 0,
                our_revision: self.cfg.revision,
                os_user: &self.os_user,
                hostname: &self.hostname,
                quota_key: &self.cfg.quota_key,
                trace: q.trace.as_ref(),
                start_time_us,
            },
            settings,
            compression,
            sql: &q.sql,
            parameters: &q.params,
        };
        let res = if insert { self.proto.insert(&query) } else { self.proto.query(&query) };
        res.map_err(map_err)?;
        if let Some(run) = &mut self.auto {
            run.started = Instant::now();
            run.wire_at_start = self.wire_bytes;
            run.io_wait = std::time::Duration::ZERO;
        }
        self.proto.set_deadline(deadline);
        self.write_out().await
    }

    /// Ping/Pong round trip (only when idle).
    pub(crate) async fn ping(&mut self) -> Result<()> {
        self.prepare().await?;
        self.proto.ping().map_err(map_err)?;
        loop {
            match self.next_event(&mut Discard).await? {
                Event::Pong => return Ok(()),
                Event::Exception(e) => return Err(Error::server(e)),
                _ => {}
            }
        }
    }
}

/// Facts the server told us at the handshake.
#[derive(Debug, Clone)]
pub struct ServerInfo {
    /// Server name ("ClickHouse").
    pub name: String,
    /// `major.minor.patch`.
    pub version: (u64, u64, u64),
    /// The server's protocol revision.
    pub revision: u64,
    /// The revision in use: min(ours, server's).
    pub negotiated_revision: u64,
    /// Server time zone.
    pub timezone: String,
    /// The server's display name.
    pub display_name: String,
    /// Whether the packets the client sends are chunked (negotiated in the
    /// handshake from the server's `proto_caps` and [`Config::chunked_send`]).
    pub chunked_send: bool,
    /// Whether the packets the client receives are chunked ([`Config::chunked_recv`]).
    pub chunked_recv: bool,
}

impl ServerInfo {
    pub(crate) fn of(conn: &Driver) -> ServerInfo {
        let h = conn.server();
        ServerInfo {
            name: h.name.clone(),
            version: (h.version_major, h.version_minor, h.version_patch),
            revision: h.revision,
            negotiated_revision: conn.revision(),
            timezone: h.timezone.clone(),
            display_name: h.display_name.clone(),
            chunked_send: conn.chunking().send,
            chunked_recv: conn.chunking().recv,
        }
    }

    /// Whether the server's version is `major.minor` or later.
    ///
    /// ```
    /// # fn f(info: &chnative::ServerInfo) {
    /// if info.version_at_least(25, 3) {
    ///     // JSON, Variant and Dynamic need no `allow_experimental_*` setting
    /// }
    /// # }
    /// ```
    pub fn version_at_least(&self, major: u64, minor: u64) -> bool {
        (self.version.0, self.version.1) >= (major, minor)
    }

    /// Whether the server knows `output_format_native_write_json_as_string` (24.10 and
    /// later), which the library sends with typed and dynamic rows so that JSON columns
    /// arrive as text. An older server is not sent it: settings go out as important, and a
    /// server refuses an important setting it does not know (UNKNOWN_SETTING).
    pub fn sends_json_as_text(&self) -> bool {
        self.version_at_least(24, 10)
    }
}
