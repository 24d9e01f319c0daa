//! One connection: the socket, its buffers, and the packet loop.
//!
//! Decoding is done by `chnative-proto` on bytes already buffered here. When a
//! decoder reports `Incomplete { needed }`, this layer reads at least that many
//! bytes (bounded by `max_block_bytes`) and decodes again. Any protocol error
//! marks the connection broken: there is no resync point in this protocol.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use chnative_proto::compression::{self, FrameHeader, FRAME_PREFIX_LEN};
use chnative_proto::packet::{self, BlockKind, ClientHello, ClientInfo, Query, ServerHello, ServerPacket};
use chnative_proto::wire::Reader;
use chnative_proto::{revision, Block, BlockLimits, BufferPool, ProtoError};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::config::Config;
use crate::error::{Error, Result};

/// A byte stream to a server (plain TCP now; TLS fits here later).
pub(crate) trait Transport: AsyncRead + AsyncWrite + Unpin + Send {
    /// Writes without waiting, if the transport can (used from `Drop`).
    fn try_write_now(&self, _buf: &[u8]) -> std::io::Result<usize> {
        Err(std::io::ErrorKind::WouldBlock.into())
    }
}

impl Transport for TcpStream {
    fn try_write_now(&self, buf: &[u8]) -> std::io::Result<usize> {
        self.try_write(buf)
    }
}

/// What must happen before the connection can run the next query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pending {
    /// Nothing: the last query ended with EndOfStream or Exception.
    Nothing,
    /// A query was abandoned and Cancel was already written: drain to its end.
    Drain,
    /// A query was abandoned and Cancel could not be written yet.
    CancelAndDrain,
}

/// A query's settings and parameters in wire form.
#[derive(Debug, Clone, Default)]
pub(crate) struct QueryWire {
    pub id: String,
    pub sql: String,
    pub settings: Vec<(String, String, u64)>,
    pub params: Vec<(String, String)>,
}

static QUERY_COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A query id unique enough to find the query in `system.processes`.
pub(crate) fn new_query_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let n = QUERY_COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(n);
    let t = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_nanos() as u64;
    h.write_u64(t);
    let a = h.finish();
    format!("chn-{:016x}-{:08x}", a, n as u32)
}

pub(crate) struct Conn {
    io: Box<dyn Transport>,
    rbuf: Vec<u8>,
    rpos: usize,
    pub(crate) wbuf: Vec<u8>,
    pub(crate) stage: Vec<u8>,
    dbuf: Vec<u8>,
    pub(crate) cfg: Config,
    pub(crate) server: ServerHello,
    /// min(ours, server's)
    pub(crate) revision: u64,
    /// Whether the running query compresses blocks.
    pub(crate) compressing: bool,
    pub(crate) pending: Pending,
    /// Set while a packet's body is only partly consumed; if a future is dropped
    /// there, the byte stream is mid-packet and the connection cannot be reused.
    mid_packet: bool,
    broken: Option<String>,
    pub(crate) pool: BufferPool,
    pub(crate) limits: BlockLimits,
    hostname: String,
    os_user: String,
}

impl Conn {
    pub(crate) async fn connect(cfg: Config) -> Result<Conn> {
        let deadline = cfg.connect_timeout;
        match tokio::time::timeout(deadline, Self::connect_inner(cfg)).await {
            Ok(r) => r,
            Err(_) => Err(Error::Timeout("connecting")),
        }
    }

    async fn connect_inner(cfg: Config) -> Result<Conn> {
        let tcp = TcpStream::connect(cfg.address()).await?;
        let limits = BlockLimits {
            max_rows: cfg.max_block_rows,
            max_bytes: cfg.max_block_bytes as u64,
            ..BlockLimits::default()
        };
        tcp.set_nodelay(true)?;
        let mut c = Conn {
            io: Box::new(tcp),
            rbuf: Vec::with_capacity(64 << 10),
            rpos: 0,
            wbuf: Vec::with_capacity(16 << 10),
            stage: Vec::new(),
            dbuf: Vec::new(),
            revision: cfg.revision,
            cfg,
            server: ServerHello::default(),
            compressing: false,
            pending: Pending::Nothing,
            mid_packet: false,
            broken: None,
            pool: BufferPool::new(),
            limits,
            hostname: std::env::var("HOSTNAME").unwrap_or_default(),
            os_user: std::env::var("USER").unwrap_or_default(),
        };
        c.handshake().await?;
        Ok(c)
    }

    async fn handshake(&mut self) -> Result<()> {
        self.wbuf.clear();
        ClientHello {
            client_name: &self.cfg.client_name,
            version_major: 0,
            version_minor: 1,
            revision: self.cfg.revision,
            database: &self.cfg.database,
            user: &self.cfg.user,
            password: &self.cfg.password,
        }
        .write(&mut self.wbuf);
        self.flush().await?;
        match self.read_packet().await? {
            ServerPacket::Hello(h) => {
                self.revision = self.cfg.revision.min(h.revision);
                if self.revision < revision::MIN_SUPPORTED {
                    return Err(Error::Config(format!(
                        "server revision {} is older than the oldest supported ({})",
                        h.revision,
                        revision::MIN_SUPPORTED
                    )));
                }
                if h.chunked_send.starts_with("chunked") && !h.chunked_send.ends_with("_optional") {
                    return Err(Error::Config("server requires chunked packets, which chnative does not speak".into()));
                }
                self.server = h;
            }
            ServerPacket::Exception(e) => return Err(Error::Server(e.into())),
            other => return Err(self.violation(format!("expected Hello, got {other:?}"))),
        }
        self.wbuf.clear();
        packet::write_addendum(&mut self.wbuf, self.revision, &self.cfg.quota_key);
        self.flush().await?;
        tracing::debug!(server = %self.server.display_name, revision = self.revision, "connected");
        Ok(())
    }

    pub(crate) fn is_broken(&self) -> bool {
        self.broken.is_some()
    }

    /// Marks the connection unusable and returns the error to report.
    pub(crate) fn poison(&mut self, e: Error) -> Error {
        if self.broken.is_none() {
            self.broken = Some(e.to_string());
        }
        e
    }

    fn violation(&mut self, msg: String) -> Error {
        self.poison(Error::Protocol(ProtoError::Violation(msg)))
    }

    fn check_usable(&mut self) -> Result<()> {
        if self.mid_packet {
            self.mid_packet = false;
            let e = Error::Closed("an operation was abandoned in the middle of a packet".into());
            return Err(self.poison(e));
        }
        match &self.broken {
            Some(why) => Err(Error::Closed(why.clone())),
            None => Ok(()),
        }
    }

    fn timeout(&self) -> Option<Duration> {
        self.cfg.read_timeout
    }

    pub(crate) async fn flush(&mut self) -> Result<()> {
        self.check_usable()?;
        let fut = async {
            self.io.write_all(&self.wbuf).await?;
            self.io.flush().await
        };
        let res = match self.cfg.read_timeout {
            Some(d) => tokio::time::timeout(d, fut)
                .await
                .map_err(|_| Error::Timeout("writing"))
                .and_then(|r| r.map_err(Error::Io)),
            None => fut.await.map_err(Error::Io),
        };
        self.wbuf.clear();
        res.map_err(|e| self.poison(e))
    }

    /// Best-effort immediate Cancel from a synchronous context.
    pub(crate) fn try_cancel_now(&mut self) -> bool {
        let mut b = Vec::new();
        packet::write_cancel(&mut b);
        matches!(self.io.try_write_now(&b), Ok(1))
    }

    /// Reads until `needed` bytes are buffered after `rpos`.
    async fn fill(&mut self, needed: usize) -> Result<()> {
        if needed > self.cfg.max_block_bytes.saturating_add(1 << 20) {
            return Err(self.poison(Error::Protocol(ProtoError::TooLarge {
                what: "packet",
                got: needed as u64,
                limit: self.cfg.max_block_bytes as u64,
            })));
        }
        if self.rbuf.len() - self.rpos >= needed {
            return Ok(());
        }
        if self.rpos == self.rbuf.len() {
            // Everything consumed: start over without moving a byte.
            self.rbuf.clear();
            self.rpos = 0;
        } else if self.rpos > 0
            && self.rbuf.capacity() - self.rbuf.len() < needed.saturating_sub(self.rbuf.len() - self.rpos).max(64 << 10)
        {
            // Out of room at the tail: move the unconsumed bytes to the front
            // rather than growing the buffer.
            self.rbuf.drain(..self.rpos);
            self.rpos = 0;
        }
        while self.rbuf.len() - self.rpos < needed {
            let want = needed - (self.rbuf.len() - self.rpos);
            self.rbuf.reserve(want.max(64 << 10));
            let timeout = self.timeout();
            let read = self.io.read_buf(&mut self.rbuf);
            let n = match timeout {
                Some(d) => match tokio::time::timeout(d, read).await {
                    Ok(r) => r,
                    Err(_) => return Err(self.poison(Error::Timeout("waiting for the server"))),
                },
                None => read.await,
            };
            match n {
                Ok(0) => {
                    return Err(self.poison(Error::Io(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        "server closed the connection",
                    ))))
                }
                Ok(_) => {}
                Err(e) => return Err(self.poison(Error::Io(e))),
            }
        }
        Ok(())
    }

    /// Reads one packet head (the whole packet unless it carries a block).
    pub(crate) async fn read_packet(&mut self) -> Result<ServerPacket> {
        self.check_usable()?;
        loop {
            let mut r = Reader::new(&self.rbuf[self.rpos..]);
            match packet::read_server_packet(&mut r, self.cfg.revision, self.revision, self.compressing) {
                Ok(ServerPacket::TableColumnsCompressed) => {
                    self.rpos += r.position();
                    self.mid_packet = true;
                    let p = self.read_compressed(packet::read_table_columns_body).await?;
                    self.mid_packet = false;
                    return Ok(p);
                }
                Ok(p) => {
                    self.rpos += r.position();
                    return Ok(p);
                }
                Err(ProtoError::Incomplete { needed }) => self.fill(needed).await?,
                Err(e) => return Err(self.poison(e.into())),
            }
        }
    }

    /// Decodes the block that follows a block packet head into `block`.
    pub(crate) async fn read_block(&mut self, kind: BlockKind, block: &mut Block) -> Result<()> {
        self.mid_packet = true;
        let res = self.read_block_body(kind, block).await;
        if res.is_ok() {
            self.mid_packet = false;
        }
        res
    }

    async fn read_block_body(&mut self, kind: BlockKind, block: &mut Block) -> Result<()> {
        block.forget_partial();
        if self.compressing && kind.compressed(self.revision) {
            self.read_compressed_block(block).await
        } else {
            loop {
                let mut r = Reader::new(&self.rbuf[self.rpos..]);
                match block.read(&mut r, self.revision, &self.limits, &mut self.pool) {
                    Ok(()) => {
                        self.rpos += r.position();
                        return Ok(());
                    }
                    Err(ProtoError::Incomplete { needed }) => self.fill(needed).await?,
                    Err(e) => return Err(self.poison(e.into())),
                }
            }
        }
    }

    async fn read_frame(&mut self) -> Result<()> {
        self.fill(FRAME_PREFIX_LEN).await?;
        let prefix: &[u8; FRAME_PREFIX_LEN] = self.rbuf[self.rpos..self.rpos + FRAME_PREFIX_LEN]
            .try_into()
            .map_err(|_| Error::Protocol(ProtoError::violation("short frame prefix")))?;
        let max = u32::try_from(self.cfg.max_block_bytes).unwrap_or(u32::MAX).min(compression::MAX_FRAME_SIZE);
        let header = FrameHeader::parse(prefix, max).map_err(|e| self.poison(e.into()))?;
        if self.dbuf.len() + header.uncompressed_size as usize > self.cfg.max_block_bytes {
            return Err(self.poison(Error::Protocol(ProtoError::TooLarge {
                what: "block",
                got: (self.dbuf.len() + header.uncompressed_size as usize) as u64,
                limit: self.cfg.max_block_bytes as u64,
            })));
        }
        let len = header.frame_len();
        self.fill(len).await?;
        let res = compression::decompress_frame(&header, &self.rbuf[self.rpos..self.rpos + len], &mut self.dbuf);
        res.map_err(|e| self.poison(e.into()))?;
        self.rpos += len;
        Ok(())
    }

    async fn read_compressed_block(&mut self, block: &mut Block) -> Result<()> {
        let (revision, limits) = (self.revision, self.limits);
        let mut pool = std::mem::take(&mut self.pool);
        let res = self.read_compressed(|r| block.read(r, revision, &limits, &mut pool)).await;
        self.pool = pool;
        res
    }

    /// Decompresses frames until `parse` succeeds on their bytes. A compressed
    /// body always ends on a frame boundary, and the decoder's `Incomplete`
    /// bound says how many more frames to read before trying again.
    async fn read_compressed<T>(
        &mut self,
        mut parse: impl FnMut(&mut Reader<'_>) -> chnative_proto::Result<T>,
    ) -> Result<T> {
        self.dbuf.clear();
        self.read_frame().await?;
        loop {
            let mut r = Reader::new(&self.dbuf);
            match parse(&mut r) {
                Ok(v) => {
                    if r.position() != self.dbuf.len() {
                        return Err(self.violation("compressed body does not end at a frame boundary".into()));
                    }
                    return Ok(v);
                }
                Err(ProtoError::Incomplete { needed }) => {
                    while self.dbuf.len() < needed {
                        self.read_frame().await?;
                    }
                }
                Err(e) => return Err(self.poison(e.into())),
            }
        }
    }

    /// Appends a client Data packet holding `body` (an encoded block) to `wbuf`.
    pub(crate) fn put_data_packet(&mut self, table: &str, body: &[u8]) -> Result<()> {
        packet::write_data_head(&mut self.wbuf, table);
        match (self.compressing, self.cfg.compression.method()) {
            (true, Some(m)) => compression::compress_frames(m, body, 1 << 20, &mut self.wbuf)?,
            _ => self.wbuf.extend_from_slice(body),
        }
        Ok(())
    }

    /// Appends the empty Data block that ends external tables or insert data.
    pub(crate) fn put_empty_data(&mut self) -> Result<()> {
        let mut body = std::mem::take(&mut self.stage);
        body.clear();
        chnative_proto::block::write_empty_block(&mut body, self.revision);
        let res = self.put_data_packet("", &body);
        self.stage = body;
        res
    }

    /// Brings the connection back to idle: finishes an abandoned query.
    pub(crate) async fn prepare(&mut self) -> Result<()> {
        self.check_usable()?;
        if self.pending == Pending::Nothing {
            return Ok(());
        }
        if self.pending == Pending::CancelAndDrain {
            packet::write_cancel(&mut self.wbuf);
            self.flush().await?;
        }
        self.pending = Pending::Drain;
        self.drain().await?;
        self.pending = Pending::Nothing;
        Ok(())
    }

    /// Reads and discards the block that follows a block packet head.
    pub(crate) async fn skip_block(&mut self, kind: BlockKind) -> Result<()> {
        let mut scratch = Block::new();
        let res = self.read_block(kind, &mut scratch).await;
        scratch.recycle(&mut self.pool);
        res
    }

    /// Reads and discards packets until the query ends. Server exceptions end it too.
    pub(crate) async fn drain(&mut self) -> Result<()> {
        loop {
            match self.read_packet().await? {
                ServerPacket::EndOfStream | ServerPacket::Exception(_) => return Ok(()),
                ServerPacket::Block { kind, .. } => self.skip_block(kind).await?,
                ServerPacket::Hello(_) | ServerPacket::Pong => {
                    return Err(self.violation("unexpected packet while finishing a query".into()))
                }
                _ => {}
            }
        }
    }

    /// Sends a Query packet and the empty external-tables block.
    pub(crate) async fn send_query(&mut self, q: &QueryWire) -> Result<()> {
        self.prepare().await?;
        let method = self.cfg.compression.method();
        self.compressing = method.is_some();
        let mut settings: Vec<(String, String, u64)> =
            Vec::with_capacity(self.cfg.settings.len() + q.settings.len() + 2);
        match self.cfg.compression {
            crate::Compression::Lz4 => settings.push(("network_compression_method".into(), "LZ4".into(), 0)),
            crate::Compression::Zstd(level) => {
                settings.push(("network_compression_method".into(), "ZSTD".into(), 0));
                settings.push(("network_zstd_compression_level".into(), level.to_string(), 0));
            }
            crate::Compression::None => {}
        }
        for (k, v) in &self.cfg.settings {
            settings.push((k.clone(), v.clone(), packet::SETTING_IMPORTANT));
        }
        settings.extend(q.settings.iter().cloned());
        let start_time_us = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_micros() as u64;
        let query = Query {
            query_id: &q.id,
            client_info: ClientInfo {
                client_name: &self.cfg.client_name,
                version_major: 0,
                version_minor: 1,
                version_patch: 0,
                our_revision: self.cfg.revision,
                os_user: &self.os_user,
                hostname: &self.hostname,
                quota_key: &self.cfg.quota_key,
                trace: None,
                start_time_us,
            },
            settings: &settings,
            compression: self.compressing,
            sql: &q.sql,
            parameters: &q.params,
        };
        let mut out = std::mem::take(&mut self.wbuf);
        query.write(&mut out, self.revision);
        self.wbuf = out;
        self.put_empty_data()?;
        // From here until EndOfStream/Exception the connection is mid-query.
        self.pending = Pending::CancelAndDrain;
        self.flush().await
    }

    /// Ping/Pong round trip (only when idle).
    pub(crate) async fn ping(&mut self) -> Result<()> {
        self.prepare().await?;
        packet::write_ping(&mut self.wbuf);
        self.flush().await?;
        loop {
            match self.read_packet().await? {
                ServerPacket::Pong => return Ok(()),
                ServerPacket::Block { kind, .. } => self.skip_block(kind).await?,
                ServerPacket::Progress(_) => {}
                other => return Err(self.violation(format!("expected Pong, got {other:?}"))),
            }
        }
    }
}

/// Where a client keeps its connection. While a stream runs, the stream owns the
/// connection; an abandoned stream hands it to a background task that finishes
/// the query, and the next call waits for that task to give it back.
#[derive(Default)]
pub(crate) struct ConnSlot {
    conn: Option<Box<Conn>>,
    draining: Option<tokio::sync::oneshot::Receiver<Box<Conn>>>,
}

impl ConnSlot {
    pub(crate) fn new(conn: Conn) -> Self {
        ConnSlot { conn: Some(Box::new(conn)), draining: None }
    }

    /// Gives the connection back to the slot.
    pub(crate) fn put(&mut self, conn: Box<Conn>) {
        self.conn = Some(conn);
    }

    /// Finishes an abandoned query off the caller's path, when a runtime is at hand.
    pub(crate) fn drain_in_background(&mut self, mut conn: Box<Conn>) {
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                let (tx, rx) = tokio::sync::oneshot::channel();
                handle.spawn(async move {
                    // Errors poison the connection; the next call reports them.
                    let _ = conn.prepare().await;
                    let _ = tx.send(conn);
                });
                self.draining = Some(rx);
            }
            // No runtime (dropped outside one): the next call drains first.
            Err(_) => self.conn = Some(conn),
        }
    }

    async fn settle(&mut self) -> Result<()> {
        if let Some(rx) = self.draining.take() {
            match rx.await {
                Ok(conn) => self.conn = Some(conn),
                Err(_) => {
                    return Err(Error::Closed("the connection was lost while finishing a cancelled query".into()))
                }
            }
        }
        Ok(())
    }

    /// The connection, once any background drain has finished.
    pub(crate) async fn get(&mut self) -> Result<&mut Conn> {
        self.settle().await?;
        self.conn.as_deref_mut().ok_or_else(|| Error::Closed("the connection is gone".into()))
    }

    /// Takes the connection out (for a stream to own).
    pub(crate) async fn take(&mut self) -> Result<Box<Conn>> {
        self.settle().await?;
        self.conn.take().ok_or_else(|| Error::Closed("the connection is gone".into()))
    }

    /// The connection if it is here right now.
    pub(crate) fn peek(&self) -> Option<&Conn> {
        self.conn.as_deref()
    }
}
