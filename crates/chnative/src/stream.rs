//! The column tier's read side: a SELECT streamed as borrowed blocks.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use chnative_proto::connection::Event;
use chnative_proto::packet::{ProfileInfo, Progress};
use chnative_proto::Block;
use tokio::sync::Notify;

use crate::blocks::{present, Blocks};
use crate::driver::{Driver, QueryId};
use crate::error::{Error, ErrorKind, Result};
use crate::via::Home;

#[derive(Debug, Default)]
struct CancelState {
    requested: AtomicBool,
    notify: Notify,
}

/// Cancels a running query from anywhere (another task, a signal handler).
///
/// The stream sends the Cancel packet, drains the server's answer to its end and
/// then yields an [`ErrorKind::Cancelled`](crate::ErrorKind::Cancelled) error.
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
/// let mut stream = client.fetch_blocks("SELECT 1").await?;
/// let first = stream.next().await?;
/// let second = stream.next().await?; // error: `stream` is still borrowed by `first`
/// println!("{:?}", first.map(|b| b.rows()));
/// # Ok(()) }
/// ```
pub struct QueryStream<'c> {
    /// The connection, owned while the query runs; `None` only inside `drop`.
    conn: Option<Box<Driver>>,
    /// Where the connection goes back when the stream ends.
    home: Home<'c>,
    query_id: QueryId,
    /// Borrowed from the connection for the query, given back on drop
    /// (`None` only inside `drop`).
    blocks: Option<Box<Blocks>>,
    log_lines: u64,
    progress: Progress,
    profile_info: Option<ProfileInfo>,
    finished: bool,
    /// Made when first asked for: a query nobody can cancel from elsewhere
    /// neither allocates one nor listens for it.
    cancel: OnceLock<CancelHandle>,
    cancel_sent: bool,
    span: crate::trace::OpSpan,
    observer: crate::observe::ObserverSlot,
    compression: crate::config::Compression,
}

impl<'c> QueryStream<'c> {
    pub(crate) fn new(mut conn: Box<Driver>, home: Home<'c>, query_id: QueryId) -> Self {
        let span = crate::trace::OpSpan::query(&query_id);
        let compression = conn.compression_used();
        span.compression(compression);
        let mut blocks = conn.blocks.take().unwrap_or_default();
        blocks.start();
        QueryStream {
            conn: Some(conn),
            home,
            query_id,
            blocks: Some(blocks),
            log_lines: 0,
            progress: Progress::default(),
            profile_info: None,
            finished: false,
            cancel: OnceLock::new(),
            cancel_sent: false,
            span,
            observer: Default::default(),
            compression,
        }
    }

    pub(crate) fn observed(mut self, observer: crate::observe::ObserverSlot) -> Self {
        self.observer = observer;
        self
    }

    /// The query id sent to the server (visible in `system.processes`).
    pub fn query_id(&self) -> &str {
        self.query_id.as_str()
    }

    /// A handle that cancels this query from elsewhere.
    pub fn cancel_handle(&self) -> CancelHandle {
        self.cancel.get_or_init(CancelHandle::default).clone()
    }

    /// What the result's blocks are compressed with: the configured codec, or
    /// under [`Compression::Auto`](crate::config::Compression::Auto) the one chosen for
    /// this query.
    pub fn compression(&self) -> crate::config::Compression {
        self.compression
    }

    /// Progress so far, summed from the server's Progress packets.
    pub fn progress(&self) -> &Progress {
        &self.progress
    }

    /// Final statistics, once the server sent them (at the end).
    pub fn profile_info(&self) -> Option<&ProfileInfo> {
        self.profile_info.as_ref()
    }

    /// The time zone this query's DateTime and DateTime64 columns are shown in
    /// when their type names none, as the server decides it: the query's own
    /// `SETTINGS session_timezone = …` clause, else the setting sent with the
    /// query ([`Query::setting`](crate::Query::setting), then the
    /// [`Config`](crate::Config)'s settings), else the zone a `SET
    /// session_timezone = …` on this connection gave, else the user's profile
    /// (the settings the server sends in its Hello), else the server's zone
    /// ([`ServerInfo::timezone`](crate::ServerInfo)). The server does not name
    /// it for a SELECT (its TimezoneUpdate packet comes only for `input()`), so
    /// the client reads the statements; a zone set some other way (a
    /// `SETTINGS` clause inside a subquery, a `SET` through another client of
    /// the same session) is not seen.
    pub fn timezone(&self) -> &str {
        self.conn().query_zone()
    }

    /// [`Self::timezone`] when it is not the server's zone.
    pub(crate) fn session_zone(&self) -> Option<&str> {
        self.conn().session_zone()
    }

    fn conn(&self) -> &Driver {
        match self.conn.as_deref() {
            Some(c) => c,
            None => unreachable!("the connection leaves the stream only in drop"),
        }
    }

    /// The result's header: column names and types, no rows (once received).
    pub fn header(&self) -> Option<&Block> {
        present(self.b().has_header, &self.b().header)
    }

    /// The WITH TOTALS row, available after the last block.
    pub fn totals(&self) -> Option<&Block> {
        present(self.b().has_totals, &self.b().totals)
    }

    /// The extremes (min and max rows) with `extremes = 1`, after the last block.
    pub fn extremes(&self) -> Option<&Block> {
        present(self.b().has_extremes, &self.b().extremes)
    }

    /// The latest ProfileEvents block (counters since the previous one).
    pub fn profile_events(&self) -> &Block {
        present(self.b().has_profile_events, &self.b().profile_events).unwrap_or(&self.b().empty)
    }

    /// The latest block of server log lines (`send_logs_level`), and the total count so far.
    pub fn logs(&self) -> (&Block, u64) {
        let logs = present(self.b().has_logs, &self.b().logs).unwrap_or(&self.b().empty);
        (logs, self.log_lines)
    }

    /// Bytes the connection has ever received straight into column buffers
    /// (a statistic for tests and benchmarks; 0 inside `drop`).
    #[doc(hidden)]
    pub fn direct_bytes(&self) -> u64 {
        self.conn.as_deref().map_or(0, |c| c.direct_bytes())
    }

    /// Whether the server has finished the query.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    fn b(&self) -> &Blocks {
        match self.blocks.as_deref() {
            Some(b) => b,
            None => unreachable!("the blocks leave the stream only in drop"),
        }
    }

    fn b_mut(&mut self) -> &mut Blocks {
        match self.blocks.as_deref_mut() {
            Some(b) => b,
            None => unreachable!("the blocks leave the stream only in drop"),
        }
    }

    fn c(&mut self) -> &mut Driver {
        match self.conn.as_deref_mut() {
            Some(c) => c,
            None => unreachable!("the connection leaves the stream only in drop"),
        }
    }

    async fn send_cancel(&mut self) -> Result<()> {
        if !self.cancel_sent {
            self.cancel_sent = true;
            self.c().cancel();
            self.c().write_out().await?;
        }
        Ok(())
    }

    async fn next_event(&mut self) -> Result<Event> {
        let Some(state) = self.cancel.get().map(|h| h.0.clone()) else {
            // No handle was given out, so nothing else can cancel: no need to listen.
            let (Some(conn), Some(blocks)) = (self.conn.as_deref_mut(), self.blocks.as_deref_mut()) else {
                unreachable!("the connection and blocks leave the stream only in drop")
            };
            return conn.next_event(blocks).await;
        };
        if state.requested.load(Ordering::SeqCst) && !self.cancel_sent {
            self.send_cancel().await?;
        }
        let (Some(conn), Some(blocks)) = (self.conn.as_deref_mut(), self.blocks.as_deref_mut()) else {
            unreachable!("the connection and blocks leave the stream only in drop")
        };
        if self.cancel_sent {
            return conn.next_event(blocks).await;
        }
        tokio::select! {
            biased;
            e = conn.next_event(blocks) => e,
            _ = state.notify.notified() => {
                self.send_cancel().await?;
                let (Some(conn), Some(blocks)) = (self.conn.as_deref_mut(), self.blocks.as_deref_mut()) else {
                    unreachable!("the connection and blocks leave the stream only in drop")
                };
                conn.next_event(blocks).await
            }
        }
    }

    /// The block the last [`Self::next`] returned (until the next call).
    pub(crate) fn current(&self) -> &Block {
        &self.b().data
    }

    /// The next block with rows, or `None` at the end of the result.
    pub async fn next(&mut self) -> Result<Option<&Block>> {
        if self.finished {
            return Ok(None);
        }
        loop {
            let event = match self.next_event().await {
                Ok(e) => e,
                Err(e) => {
                    self.finished = true;
                    self.span.finish(None, self.progress.read_bytes, "error");
                    return Err(e);
                }
            };
            match event {
                Event::Header => self.b_mut().keep_header(),
                Event::Data => {
                    let rows = self.b().data.rows();
                    if rows > 0 && !self.cancel_sent {
                        self.span.add_rows(rows);
                        break;
                    }
                }
                Event::Log => {
                    self.b_mut().has_logs = true;
                    self.log_lines += self.b().logs.rows() as u64;
                    self.observe(|o, b| o.log(&b.logs));
                }
                Event::Progress(p) => {
                    self.progress.accumulate(&p);
                    if let Some(o) = &self.observer.0 {
                        o.progress(&p, &self.progress);
                    }
                }
                Event::ProfileInfo(p) => {
                    if let Some(o) = &self.observer.0 {
                        o.profile_info(&p);
                    }
                    self.profile_info = Some(p);
                }
                Event::Totals => {
                    self.b_mut().has_totals = true;
                    self.observe(|o, b| o.totals(&b.totals));
                }
                Event::Extremes => {
                    self.b_mut().has_extremes = true;
                    self.observe(|o, b| o.extremes(&b.extremes));
                }
                Event::ProfileEvents => {
                    self.b_mut().has_profile_events = true;
                    self.observe(|o, b| o.profile_events(&b.profile_events));
                }
                Event::TableColumns { .. } | Event::TimezoneUpdate(_) => {}
                Event::EndOfStream => {
                    self.finished = true;
                    let outcome = if self.cancel_sent { "cancelled" } else { "ok" };
                    self.span.finish(None, self.progress.read_bytes, outcome);
                    return if self.cancel_sent { Err(Error::cancelled()) } else { Ok(None) };
                }
                Event::Exception(e) => {
                    self.finished = true;
                    self.span.finish(None, self.progress.read_bytes, "error");
                    return Err(Error::server(e));
                }
                other @ (Event::Hello | Event::Pong) => {
                    // The state machine refuses these during a query; never reached.
                    self.finished = true;
                    let e = Error::from(chnative_proto::ProtoError::violation(format!(
                        "unexpected {other:?} during a query"
                    )));
                    return Err(self.c().poison(e));
                }
                // An event added to the machine after this client: informational (see
                // `Event`), so there is nothing to do with it.
                _ => {}
            }
        }
        Ok(Some(&self.b().data))
    }

    fn observe(&self, f: impl FnOnce(&dyn crate::observe::Observer, &Blocks)) {
        if let Some(o) = &self.observer.0 {
            f(o.as_ref(), self.b());
        }
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
                Ok(None) => return Ok(()),
                Err(e) if matches!(e.kind(), ErrorKind::Cancelled | ErrorKind::Server) => return Ok(()),
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
        // The blocks stay with the connection for its next query.
        conn.blocks = self.blocks.take();
        if conn.is_idle() || conn.is_broken() {
            self.home.put(conn);
            return;
        }
        // The query still runs on the server (or its answer is not read to the
        // end). Send Cancel now if the socket takes the byte without waiting,
        // then read the rest of the answer in the background: a server blocked
        // writing to us cannot see the Cancel.
        conn.abandon();
        conn.write_now();
        if conn.is_idle() || conn.is_broken() {
            self.home.put(conn);
        } else {
            self.home.drain_in_background(conn);
        }
    }
}
