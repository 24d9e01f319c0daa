//! One INSERT over one connection, as the machine sequences it
//! ([`chnative_proto::connection::InsertFlow`]): the statement, the table's
//! header, the Data packets (watching for the server's refusal meanwhile),
//! the end of data and the server's confirmation. [`Insert`](crate::Insert)
//! and [`BlockInsert`](crate::BlockInsert) both send through here.

use chnative_proto::connection::{BlockSink, Event, InsertFlow, InsertStep};
use chnative_proto::insert::{InsertColumns, TypedInsert};
use chnative_proto::packet::{BlockKind, Exception, Progress};
use chnative_proto::splice::Splices;
use chnative_proto::Block;

use crate::driver::{map_err, Driver, QueryWire};
use crate::error::{Error, Result};
use crate::ident::push_quoted_ident;

/// What an INSERT did.
#[derive(Debug, Clone, Copy)]
pub struct InsertSummary {
    /// Rows sent.
    pub rows: u64,
    /// Data packets sent.
    pub blocks: u64,
    /// What the server reported. ClickHouse 26.9 sends no Progress for an
    /// INSERT whose data comes from the client; it sends ProfileEvents, and
    /// `written_rows` / `written_bytes` then hold the sum of their
    /// `InsertedRows` / `InsertedBytes` increments (the rows the server wrote).
    pub progress: Progress,
    /// What the blocks were compressed with (under [`Compression::Auto`](crate::config::Compression::Auto),
    /// the codec chosen for this INSERT).
    pub compression: crate::config::Compression,
}

/// Nothing sent, uncompressed.
impl Default for InsertSummary {
    fn default() -> Self {
        InsertSummary {
            rows: 0,
            blocks: 0,
            progress: Progress::default(),
            compression: crate::config::Compression::None,
        }
    }
}

/// `INSERT INTO <table> (<columns>) VALUES` (the table already quoted).
pub(crate) fn insert_sql<'n>(quoted_table: &str, columns: impl Iterator<Item = &'n str> + Clone) -> String {
    let mut sql = String::new();
    insert_sql_into(&mut sql, quoted_table, columns);
    sql
}

/// [`insert_sql`] written into `sql` (empty; its memory reused, else one
/// allocation: the statement is sized first).
pub(crate) fn insert_sql_into<'n>(
    sql: &mut String,
    quoted_table: &str,
    columns: impl Iterator<Item = &'n str> + Clone,
) {
    let len = columns.clone().map(|c| c.len() + 4).sum::<usize>() + quoted_table.len() + 32;
    sql.reserve(len);
    sql.push_str("INSERT INTO ");
    sql.push_str(quoted_table);
    sql.push_str(" (");
    for (i, c) in columns.enumerate() {
        if i > 0 {
            sql.push_str(", ");
        }
        push_quoted_ident(sql, c);
    }
    sql.push_str(") VALUES");
}

/// Sends an INSERT's query and reads what the server sends up to the table's
/// header block (left in `sink.flow`, with the table's description).
pub(crate) async fn start_insert(conn: &mut Driver, q: &QueryWire, sink: &mut InsertBlocks) -> Result<()> {
    let deadline = crate::driver::query_deadline(None, conn.cfg.query_timeout);
    conn.lend_insert_flow(&mut sink.flow);
    conn.send_query(q, true, deadline).await?;
    loop {
        let event = conn.next_event(sink).await?;
        match sink.step(event)? {
            InsertStep::Header => return Ok(()),
            InsertStep::Exception(e) => return Err(Error::server(e)),
            _ => {}
        }
    }
}

/// Ends an INSERT that has sent no data with the empty block, so that nothing
/// is inserted and the connection stays usable.
pub(crate) async fn refuse_insert(conn: &mut Driver, sink: &mut InsertBlocks) -> Result<()> {
    conn.end_data()?;
    finish_insert(conn, sink).await
}

/// Sends the rows of `typed` as Data packets (split by the connection's
/// `insert_block_bytes` / `insert_block_rows` where the data can be split);
/// returns how many packets went out.
///
/// An encoding failure after the first packet closes the connection (sent
/// blocks cannot be taken back, so the INSERT must not end); a server
/// exception is returned as a server error ([`ErrorKind::Server`](crate::ErrorKind::Server)) with the connection usable.
///
/// `keep` lends the memory of the splices' vector (see [`Splices::recycle`])
/// and gets it back.
pub(crate) async fn send_rows<N: AsRef<str>>(
    conn: &mut Driver,
    typed: &TypedInsert<'_, '_, N>,
    sink: &mut InsertBlocks,
    keep: &mut Splices<'static>,
) -> Result<u64> {
    let mut splices = std::mem::take(keep).recycle();
    let res = send_blocks(conn, typed, sink, &mut splices).await;
    *keep = splices.recycle();
    res
}

async fn send_blocks<'a, N: AsRef<str>>(
    conn: &mut Driver,
    typed: &TypedInsert<'_, 'a, N>,
    sink: &mut InsertBlocks,
    splices: &mut Splices<'a>,
) -> Result<u64> {
    let rows = typed.rows();
    let step = if typed.splittable() {
        typed.block_rows(conn.cfg.insert_block_bytes, conn.cfg.insert_block_rows)
    } else {
        rows.max(1)
    };
    let mut blocks = 0u64;
    let mut lo = 0usize;
    // Runs of the caller's buffers that are already in wire layout go to the
    // socket from where they lie (one vectored write), not through the packet.
    while lo < rows {
        let hi = (lo + step).min(rows);
        let encode = |out: &mut Vec<u8>, sp: &mut Splices<'a>, rev: u64| {
            typed.write_block_spliced(out, sp, rev, lo, hi).map_err(Error::from)
        };
        if let Err(e) = conn.send_data_spliced(splices, encode) {
            // Blocks already sent cannot be taken back: the INSERT must not end.
            return Err(conn.poison(e));
        }
        if let Some(e) = send_watching(conn, sink, splices).await? {
            // The server refused the data; the machine queued the end of
            // data the server now waits for, so the connection stays usable.
            // A server that closes after refusing (24.8) fails that write: the
            // connection is then closed, and the refusal is still the answer.
            let _closed_if_failed = conn.write_out_spliced(splices).await;
            return Err(Error::server(e));
        }
        blocks += 1;
        lo = hi;
    }
    Ok(blocks)
}

/// Sends the end of data and waits for the server to confirm the INSERT.
pub(crate) async fn end_insert(conn: &mut Driver, sink: &mut InsertBlocks) -> Result<Progress> {
    conn.end_data()?;
    finish_insert(conn, sink).await?;
    Ok(sink.flow.progress())
}

/// The sink an INSERT lends the connection: the machine's INSERT sequence
/// ([`InsertFlow`]), and the observer its progress and profile events go to.
#[derive(Default)]
pub(crate) struct InsertBlocks {
    pub(crate) flow: InsertFlow,
    observer: crate::observe::ObserverSlot,
}

impl BlockSink for InsertBlocks {
    fn block(&mut self, kind: BlockKind) -> Option<&mut Block> {
        self.flow.block(kind)
    }
}

impl InsertBlocks {
    pub(crate) fn observed(observer: crate::observe::ObserverSlot) -> Self {
        InsertBlocks { observer, ..InsertBlocks::default() }
    }

    /// What `event` means for the INSERT; tells the observer.
    fn step(&mut self, event: Event) -> Result<InsertStep> {
        let step = self.flow.on_event(event).map_err(map_err)?;
        if let Some(o) = &self.observer.0 {
            match &step {
                InsertStep::Progress(p) => o.progress(p, self.flow.progress_sum()),
                InsertStep::ProfileEvents => o.profile_events(self.flow.profile_events()),
                _ => {}
            }
        }
        Ok(step)
    }
}

/// Writes the queued Data packet while watching for what the server sends
/// meanwhile; stops at the first Exception (the rest of the packet and the end
/// of data still go out, see the caller).
async fn send_watching(conn: &mut Driver, sink: &mut InsertBlocks, splices: &Splices<'_>) -> Result<Option<Exception>> {
    loop {
        while let Some(event) = conn.ready_event(sink)? {
            if let InsertStep::Exception(e) = sink.step(event)? {
                return Ok(Some(e));
            }
        }
        if !conn.has_output() {
            return Ok(None);
        }
        if let Err(e) = conn.try_write_some(splices).await? {
            return Err(refused_by_close(conn, sink, e));
        }
    }
}

/// The error of a Data write the socket failed: the server's own exception when
/// it sent one before closing its end (24.8 refuses a block with an exception and
/// closes the connection, and the write that was under way fails with a broken
/// pipe or a reset), else the write's own error. The connection is closed either way.
fn refused_by_close(conn: &mut Driver, sink: &mut InsertBlocks, e: std::io::Error) -> Error {
    use std::io::ErrorKind::{BrokenPipe, ConnectionAborted, ConnectionReset};
    if matches!(e.kind(), BrokenPipe | ConnectionReset | ConnectionAborted) {
        conn.read_before_close();
        while let Ok(Some(event)) = conn.buffered_event(sink) {
            if let Ok(InsertStep::Exception(ex)) = sink.step(event) {
                return conn.poison(Error::server(ex));
            }
        }
    }
    conn.poison(Error::from(e))
}

/// The columns checked against the table's header, and against its
/// description: a column without a default may be left out only with
/// `allow_missing`.
/// The wire type names go into `types` (see [`InsertColumns::with_header_in`]).
pub(crate) fn check_against_header<'s, 'a, N: AsRef<str>>(
    checked: InsertColumns<'s, 'a, N>,
    sink: &InsertBlocks,
    allow_missing: bool,
    types: Vec<std::borrow::Cow<'static, str>>,
) -> Result<TypedInsert<'s, 'a, N>> {
    let typed = checked.with_header_in(sink.flow.header(), types)?;
    if !allow_missing {
        check_missing(sink.flow.missing_without_default(&typed))?;
    }
    Ok(typed)
}

/// Refuses table columns without a default that an INSERT leaves out.
pub(crate) fn check_missing(missing: Vec<&str>) -> Result<()> {
    if missing.is_empty() {
        return Ok(());
    }
    Err(Error::invalid_input(format!(
        "missing column(s) without a DEFAULT: {} (use allow_missing_columns() to insert type defaults)",
        missing.join(", ")
    )))
}

/// Reads the server's answer to the end of data, to its EndOfStream.
async fn finish_insert(conn: &mut Driver, sink: &mut InsertBlocks) -> Result<()> {
    loop {
        let event = conn.next_event(sink).await?;
        match sink.step(event)? {
            InsertStep::Done => return Ok(()),
            InsertStep::Exception(e) => return Err(Error::server(e)),
            _ => {}
        }
    }
}
