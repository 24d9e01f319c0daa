//! The column tier's read side: a SELECT streamed as borrowed blocks.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use chnative_proto::packet::{BlockKind, ProfileInfo, Progress, ServerPacket};
use chnative_proto::Block;
use tokio::sync::Notify;

use crate::conn::{Conn, ConnSlot, Pending};
use crate::error::{Error, Result};

#[derive(Debug, Default)]
struct CancelState {
    requested: AtomicBool,
    notify: Notify,
}

/// Cancels a running query from anywhere (another task, a signal handler).
///
/// The stream sends the Cancel packet, drains the server's answer to its end and
/// then yields [`Error::Cancelled`].
#[derive(Debug, Clone, Default)]
pub struct CancelHandle(Arc<CancelState>);

impl CancelHandle {
    /// Asks the server to stop the query.
    pub fn cancel(&self) {
        self.0.requested.store(true, Ordering::SeqCst);
        self.0.notify.notify_waiters();
        self.0.notify.notify_one();
    }

    /// Whether cancellation was requested.
    pub fn is_cancelled(&self) -> bool {
        self.0.requested.load(Ordering::SeqCst)
    }
}

/// A running SELECT. Each [`QueryStream::next`] lends out the next block; the
/// borrow ends before the following call, so a block cannot outlive its turn and
/// its buffers are reused for the next one.
///
/// Dropping the stream before the end cancels the query on the server.
///
/// Keeping a block across `next()` does not compile:
///
/// ```compile_fail
/// # async fn f(client: &mut chnative::Client) -> chnative::Result<()> {
/// let mut stream = client.stream("SELECT 1").await?;
/// let first = stream.next().await?;
/// let second = stream.next().await?; // error: `stream` is still borrowed by `first`
/// println!("{:?}", first.map(|b| b.rows()));
/// # Ok(()) }
/// ```
pub struct QueryStream<'c> {
    /// The connection, owned while the query runs; `None` only inside `drop`.
    conn: Option<Box<Conn>>,
    /// Where the connection goes back when the stream ends.
    home: &'c mut ConnSlot,
    query_id: String,
    block: Block,
    header: Option<Block>,
    totals: Option<Block>,
    extremes: Option<Block>,
    profile_events: Block,
    logs: Block,
    log_lines: u64,
    progress: Progress,
    profile_info: Option<ProfileInfo>,
    finished: bool,
    cancel: CancelHandle,
    cancel_sent: bool,
}

impl<'c> QueryStream<'c> {
    pub(crate) fn new(conn: Box<Conn>, home: &'c mut ConnSlot, query_id: String) -> Self {
        QueryStream {
            conn: Some(conn),
            home,
            query_id,
            block: Block::new(),
            header: None,
            totals: None,
            extremes: None,
            profile_events: Block::new(),
            logs: Block::new(),
            log_lines: 0,
            progress: Progress::default(),
            profile_info: None,
            finished: false,
            cancel: CancelHandle::default(),
            cancel_sent: false,
        }
    }

    /// The query id sent to the server (visible in `system.processes`).
    pub fn query_id(&self) -> &str {
        &self.query_id
    }

    /// A handle that cancels this query from elsewhere.
    pub fn cancel_handle(&self) -> CancelHandle {
        self.cancel.clone()
    }

    /// Progress so far, summed from the server's Progress packets.
    pub fn progress(&self) -> &Progress {
        &self.progress
    }

    /// Final statistics, once the server sent them (at the end).
    pub fn profile_info(&self) -> Option<&ProfileInfo> {
        self.profile_info.as_ref()
    }

    /// The result's header: column names and types, no rows (once received).
    pub fn header(&self) -> Option<&Block> {
        self.header.as_ref()
    }

    /// The WITH TOTALS row, available after the last block.
    pub fn totals(&self) -> Option<&Block> {
        self.totals.as_ref()
    }

    /// The extremes (min and max rows) with `extremes = 1`, after the last block.
    pub fn extremes(&self) -> Option<&Block> {
        self.extremes.as_ref()
    }

    /// The latest ProfileEvents block (counters since the previous one).
    pub fn profile_events(&self) -> &Block {
        &self.profile_events
    }

    /// The latest block of server log lines (`send_logs_level`), and the total count so far.
    pub fn logs(&self) -> (&Block, u64) {
        (&self.logs, self.log_lines)
    }

    /// Whether the server has finished the query.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    fn c(&mut self) -> &mut Conn {
        match self.conn.as_deref_mut() {
            Some(c) => c,
            None => unreachable!("the connection leaves the stream only in drop"),
        }
    }

    async fn send_cancel(&mut self) -> Result<()> {
        if !self.cancel_sent {
            self.cancel_sent = true;
            chnative_proto::packet::write_cancel(&mut self.c().wbuf);
            self.c().flush().await?;
        }
        Ok(())
    }

    async fn next_packet(&mut self) -> Result<ServerPacket> {
        if self.cancel.is_cancelled() && !self.cancel_sent {
            self.send_cancel().await?;
        }
        if self.cancel_sent {
            return self.c().read_packet().await;
        }
        let state = self.cancel.0.clone();
        tokio::select! {
            biased;
            p = self.c().read_packet() => p,
            _ = state.notify.notified() => {
                self.send_cancel().await?;
                self.c().read_packet().await
            }
        }
    }

    /// The next block with rows, or `None` at the end of the result.
    pub async fn next(&mut self) -> Result<Option<&Block>> {
        if self.finished {
            return Ok(None);
        }
        loop {
            let packet = match self.next_packet().await {
                Ok(p) => p,
                Err(e) => {
                    self.finished = true;
                    return Err(e);
                }
            };
            match packet {
                ServerPacket::Block { kind: BlockKind::Data, .. } => {
                    let mut block = std::mem::take(&mut self.block);
                    let res = self.c().read_block(BlockKind::Data, &mut block).await;
                    self.block = block;
                    self.fail_on(res)?;
                    if self.block.rows() == 0 {
                        if self.header.is_none() && !self.block.columns().is_empty() {
                            // Keep the decoded block (its columns and pooled buffers are
                            // reused by the data blocks); the header is a buffer-less copy.
                            self.header = Some(self.block.empty_like());
                        }
                        continue;
                    }
                    if self.cancel_sent {
                        continue;
                    }
                    break;
                }
                ServerPacket::Block { kind, .. } => {
                    let mut block = match kind {
                        BlockKind::Totals => self.totals.take().unwrap_or_default(),
                        BlockKind::Extremes => self.extremes.take().unwrap_or_default(),
                        BlockKind::ProfileEvents => std::mem::take(&mut self.profile_events),
                        _ => std::mem::take(&mut self.logs),
                    };
                    let res = self.c().read_block(kind, &mut block).await;
                    match kind {
                        BlockKind::Totals => self.totals = Some(block),
                        BlockKind::Extremes => self.extremes = Some(block),
                        BlockKind::ProfileEvents => self.profile_events = block,
                        _ => {
                            self.log_lines += block.rows() as u64;
                            self.logs = block;
                        }
                    }
                    self.fail_on(res)?;
                }
                ServerPacket::Progress(p) => self.progress.accumulate(&p),
                ServerPacket::ProfileInfo(p) => self.profile_info = Some(p),
                ServerPacket::TableColumns { .. }
                | ServerPacket::TableColumnsCompressed
                | ServerPacket::TimezoneUpdate(_)
                | ServerPacket::PartUuids => {}
                ServerPacket::EndOfStream => {
                    self.finish();
                    return if self.cancel_sent { Err(Error::Cancelled) } else { Ok(None) };
                }
                ServerPacket::Exception(e) => {
                    self.finish();
                    return Err(Error::Server(e.into()));
                }
                other @ (ServerPacket::Hello(_) | ServerPacket::Pong) => {
                    self.finished = true;
                    let e = Error::Protocol(chnative_proto::ProtoError::violation(format!(
                        "unexpected packet during a query: {other:?}"
                    )));
                    return Err(self.c().poison(e));
                }
            }
        }
        Ok(Some(&self.block))
    }

    fn fail_on(&mut self, res: Result<()>) -> Result<()> {
        if res.is_err() {
            self.finished = true;
        }
        res
    }

    fn finish(&mut self) {
        self.finished = true;
        self.c().pending = Pending::Nothing;
    }

    /// Stops the query: sends Cancel and reads the server's answer to its end,
    /// so the connection is ready for the next query.
    pub async fn cancel(mut self) -> Result<()> {
        if self.finished {
            return Ok(());
        }
        self.send_cancel().await?;
        loop {
            match self.next().await {
                Ok(Some(_)) => {}
                Ok(None) | Err(Error::Cancelled) | Err(Error::Server(_)) => return Ok(()),
                Err(e) => return Err(e),
            }
        }
    }

    /// Reads the remaining blocks, discarding them; returns the final progress.
    pub async fn finish_all(mut self) -> Result<Progress> {
        while self.next().await?.is_some() {}
        Ok(self.progress)
    }
}

impl Drop for QueryStream<'_> {
    fn drop(&mut self) {
        let Some(mut conn) = self.conn.take() else { return };
        let pool = &mut conn.pool;
        // The data block last: its (large) buffers are handed out first by the
        // next query's first block.
        self.logs.recycle(pool);
        self.profile_events.recycle(pool);
        self.block.recycle(pool);
        if self.finished || conn.is_broken() {
            self.home.put(conn);
            return;
        }
        // The query still runs on the server. Send Cancel now if the socket takes
        // the byte without waiting, then read the rest of the answer in the
        // background: a server blocked writing to us cannot see the Cancel.
        conn.pending = if self.cancel_sent || conn.try_cancel_now() { Pending::Drain } else { Pending::CancelAndDrain };
        self.home.drain_in_background(conn);
    }
}
