//! One INSERT statement fed with any number of blocks: the write side of an
//! ETL pipe (SELECT on one server → INSERT on another), without one INSERT per
//! source block.

use chnative_proto::insert::{InsertColumns, InsertData, IntoInsertData, TypedInsert};
use chnative_proto::Block;

use crate::driver::{Driver, QueryWire};
use crate::error::{Error, Repr, Result};
use crate::insert_send::{
    check_against_header, check_missing, end_insert, insert_sql_into, refuse_insert, send_rows, start_insert,
    InsertBlocks, InsertSummary,
};
use crate::via::Home;

/// An open INSERT: [`BlockInsert::write`] sends blocks, any number of them,
/// and [`BlockInsert::end`] ends the statement and waits for the server to
/// confirm it. Made by [`Client::insert_blocks`](crate::Client::insert_blocks)
/// or [`Insert::open`](crate::Insert::open) (which takes settings, a query id
/// and a deduplication token); [`Insert::from_stream`](crate::Insert::from_stream)
/// pipes a [`QueryStream`](crate::QueryStream) through one.
///
/// ```no_run
/// # async fn demo(source: chnative::Client, target: chnative::Client) -> chnative::Result<()> {
/// let mut stream = source.fetch_blocks("SELECT number AS id, toString(number) AS name FROM numbers(1000000)").await?;
/// let mut ins = target.insert_blocks("copy").await?;
/// while let Some(block) = stream.next().await? {
///     ins.write(block).await?;
/// }
/// let summary = ins.end().await?;
/// assert_eq!(summary.rows, 1_000_000);
/// # Ok(()) }
/// ```
///
/// **Columns.** The INSERT names the columns of the first block written (the
/// statement goes out with that block). Every later block must have the same
/// column names, in any order (they are sent in the first block's order), and
/// every block is checked against the table's types before any of it is
/// sent. Table columns a block leaves out must have a DEFAULT unless
/// [`Insert::allow_missing_columns`](crate::Insert::allow_missing_columns) was
/// given. Blocks without rows are skipped (an empty block would end the
/// INSERT on the wire). A block read from a SELECT is sent as one Data packet;
/// [`BlockInsert::write_columns`] data is split like [`Insert`](crate::Insert)'s.
///
/// **Errors and what the server keeps.** The server stores rows as it receives
/// them: it gathers the blocks of an INSERT into parts of
/// `min_insert_block_size_rows` rows (1,048,449 by default) or
/// `min_insert_block_size_bytes` (256 MiB) and writes each part when it is
/// full; the rest is written when the INSERT ends. So:
///
/// - A first block that does not fit the table fails before any data is sent:
///   the INSERT is ended empty, nothing is stored and the connection stays usable.
/// - A later block that does not fit (other column names, a wrong type, columns
///   of different lengths), a failed source stream in
///   [`Insert::from_stream`](crate::Insert::from_stream), [`BlockInsert::abort`],
///   a dropped `BlockInsert` or a cancelled `write`/`end` future **abort** the
///   INSERT: the connection is closed without ending it (the protocol has no
///   other way: a Cancel during an INSERT ends it like the end of data, and
///   stores it). The server then discards the rows it had not written yet;
///   parts it had already written stay. (Measured on 26.9 with 65,536-row
///   blocks into a MergeTree: an INSERT aborted after 3,000,000 rows stored
///   nothing, one aborted after 12,000,000 kept 7,340,032.) A pooled client
///   opens a new connection for its next call; a
///   [`Connection`](crate::Connection) or [`Session`](crate::Session) reports
///   [`ErrorKind::Closed`](crate::ErrorKind::Closed) from then on.
/// - A server exception (a constraint, a value the table refuses) ends the
///   INSERT on the server with nothing more stored; the connection stays usable.
///
/// For an all-or-nothing load of more rows than one part holds, load into a
/// staging table and move it with one `INSERT … SELECT`, or retry the whole
/// INSERT with a deduplication token on a table that deduplicates.
///
/// The server waits for the next block for at most its `receive_timeout`
/// (300 s by default), so a source slower than that fails the INSERT.
///
/// After any error the `BlockInsert` refuses further calls; start a new one.
/// Dropping it without [`BlockInsert::end`] after rows were written logs a
/// warning through `tracing`.
pub struct BlockInsert<'c> {
    home: Home<'c>,
    table: String,
    quoted: String,
    /// The query without its SQL until the first block, then as sent.
    q: QueryWire,
    allow_missing: bool,
    sink: InsertBlocks,
    /// Whether the statement went out (its columns are the header's).
    started: bool,
    /// The type names the last block was sent with, kept for the next one's.
    wire_types: Vec<std::borrow::Cow<'static, str>>,
    /// The (name, data) list of the last [`BlockInsert::write`], kept empty for the next one's.
    block_data: Vec<(&'static str, InsertData<'static>)>,
    /// The spliced runs' vector of the last block, kept empty for the next one's.
    splices: chnative_proto::splice::Splices<'static>,
    state: State,
    rows: u64,
    packets: u64,
    span: crate::trace::OpSpan,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Ready for a call.
    Ready,
    /// A call is under way (still set when its future was dropped halfway).
    InCall,
    /// A call failed; the INSERT is over.
    Failed,
    /// Ended or aborted.
    Done,
}

impl<'c> BlockInsert<'c> {
    pub(crate) fn new(
        home: Home<'c>,
        table: String,
        quoted: String,
        q: QueryWire,
        allow_missing: bool,
        observer: crate::observe::ObserverSlot,
    ) -> Self {
        let span = crate::trace::OpSpan::insert(&q.id);
        BlockInsert {
            home,
            table,
            quoted,
            q,
            allow_missing,
            sink: InsertBlocks::observed(observer),
            started: false,
            wire_types: Vec::new(),
            block_data: Vec::new(),
            splices: Default::default(),
            state: State::Ready,
            rows: 0,
            packets: 0,
            span,
        }
    }

    /// The query id the INSERT is sent with.
    pub fn query_id(&self) -> &str {
        self.q.id.as_str()
    }

    /// Rows sent so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Sends the INSERT statement naming `columns` and waits for the table's
    /// header, without sending any data: the server's names and types of the
    /// columns (the header block) can be checked before a row goes out.
    /// Every block written afterwards must have these columns. To give up
    /// after looking at the header, call [`BlockInsert::end`]: the INSERT ends
    /// with nothing stored and the connection stays usable.
    ///
    /// Fails like the first [`BlockInsert::write`] does when a column is left
    /// out that has no DEFAULT (unless
    /// [`Insert::allow_missing_columns`](crate::Insert::allow_missing_columns)
    /// was given), and when the INSERT was started already.
    pub async fn start(&mut self, columns: &[&str]) -> Result<&Block> {
        let span = self.span.span().clone();
        tracing::Instrument::instrument(self.start_inner(columns), span).await?;
        Ok(self.sink.flow.header())
    }

    async fn start_inner(&mut self, columns: &[&str]) -> Result<()> {
        self.enter()?;
        let res = match self.started {
            true => Err(Error::invalid_input(format!("the INSERT into {} was started already", self.table))),
            false => self.begin(columns.iter().copied()).await,
        };
        let res = match res {
            Ok(()) if !self.allow_missing => {
                match check_missing(self.sink.flow.missing_without_default_of(|n| columns.contains(&n))) {
                    Ok(()) => Ok(()),
                    Err(e) => Err(self.refuse(e).await),
                }
            }
            res => res,
        };
        self.settle(&res);
        res
    }

    /// Ready for the next write after `res` succeeded; failed (and the span
    /// closed) after it did not.
    fn settle(&mut self, res: &Result<()>) {
        match res {
            Ok(()) => self.state = State::Ready,
            Err(_) => {
                self.state = State::Failed;
                self.span.finish(Some(self.rows), 0, "error");
            }
        }
    }

    /// The table's header block: the INSERT's columns with the server's
    /// types (empty until the INSERT is started by [`BlockInsert::start`] or
    /// the first write).
    pub fn header(&self) -> &Block {
        self.sink.flow.header()
    }

    /// Sends the rows of `block` (e.g. one read from a SELECT) as part of this
    /// INSERT. The first block fixes the INSERT's columns; see [`BlockInsert`]
    /// for the checks and for what a failure leaves.
    pub async fn write(&mut self, block: &Block) -> Result<()> {
        if block.rows() == 0 {
            return self.check_open();
        }
        let mut cols: Vec<(&str, InsertData<'_>)> = recycle(std::mem::take(&mut self.block_data));
        cols.extend(block.columns().iter().map(|c| (c.name(), c.into_insert_data())));
        let res = self.write_columns(&cols).await;
        self.block_data = recycle(cols);
        res
    }

    /// Sends columns given as data, `(name, data)` like
    /// [`Insert::column`](crate::Insert::column), as part of this INSERT
    /// (split into Data packets by [`Config::insert_block_rows`](crate::Config::insert_block_rows)
    /// and [`Config::insert_block_bytes`](crate::Config::insert_block_bytes)).
    pub async fn write_columns(&mut self, columns: &[(&str, InsertData<'_>)]) -> Result<()> {
        let span = self.span.span().clone();
        tracing::Instrument::instrument(self.write_inner(columns), span).await
    }

    async fn write_inner(&mut self, columns: &[(&str, InsertData<'_>)]) -> Result<()> {
        self.enter()?;
        let res = self.send(columns).await;
        self.settle(&res);
        res
    }

    /// Ends the INSERT and waits for the server to confirm it; returns what
    /// it did. An INSERT that was given no rows sends nothing and returns an
    /// empty summary.
    pub async fn end(mut self) -> Result<InsertSummary> {
        let span = self.span.span().clone();
        let res = tracing::Instrument::instrument(self.end_inner(), span).await;
        match &res {
            Ok(s) => self.span.finish(Some(s.rows), s.progress.written_bytes, "ok"),
            Err(_) => self.span.finish(Some(self.rows), 0, "error"),
        }
        res
    }

    async fn end_inner(&mut self) -> Result<InsertSummary> {
        self.enter()?;
        if !self.started {
            self.state = State::Done;
            return Ok(InsertSummary::default());
        }
        let conn = match self.home.slot().get().await {
            Ok(c) => c,
            Err(e) => {
                self.state = State::Failed;
                return Err(e);
            }
        };
        let res = end_insert(conn, &mut self.sink).await;
        conn.keep_insert_flow(&mut self.sink.flow);
        conn.keep_insert_text(std::mem::take(&mut self.q.sql), std::mem::take(&mut self.wire_types));
        self.state = if res.is_ok() { State::Done } else { State::Failed };
        let compression = conn.compression_used();
        self.span.compression(compression);
        Ok(InsertSummary { rows: self.rows, blocks: self.packets, progress: res?, compression })
    }

    /// Aborts the INSERT: closes its connection without ending it, so the
    /// server discards what it has not written yet (see [`BlockInsert`]).
    /// Does nothing when no rows were sent (the connection is then kept).
    pub fn abort(mut self) {
        self.close("the INSERT was aborted");
        self.state = State::Done;
    }

    /// Ok while further calls are allowed (for an empty block, which sends nothing).
    fn check_open(&self) -> Result<()> {
        match self.state {
            State::Ready => Ok(()),
            _ => Err(self.refused()),
        }
    }

    fn refused(&self) -> Error {
        match self.state {
            State::InCall => {
                Error::closed("a write() or end() of this INSERT was cancelled halfway; the INSERT was aborted")
            }
            _ => Error::invalid_input(format!(
                "the INSERT into {} failed or ended earlier; start a new one (rows are not resent)",
                self.table
            )),
        }
    }

    /// Starts a call: refused after a failure, and after a call whose future
    /// was dropped halfway (its connection may hold half a packet).
    fn enter(&mut self) -> Result<()> {
        match self.state {
            State::Ready => {
                self.state = State::InCall;
                Ok(())
            }
            State::InCall => {
                let e = self.refused();
                self.close("a write() or end() of the INSERT was cancelled halfway");
                self.state = State::Failed;
                Err(e)
            }
            State::Failed | State::Done => Err(self.refused()),
        }
    }

    /// Closes the connection if the INSERT is under way on it.
    fn close(&mut self, why: &str) {
        if let Some(conn) = self.home.slot().peek_mut() {
            if !conn.is_idle() && !conn.is_broken() {
                conn.poison(Error::closed(why.to_string()));
            }
        }
    }

    /// Aborts the INSERT under way and returns `e` with a word on what happened.
    fn abort_with(&mut self, e: Error) -> Error {
        self.close("an INSERT was aborted after an invalid block");
        let note = format!(
            "; the INSERT into {} was aborted after {} rows by closing its connection \
             (the server discards the rows it has not written into parts yet)",
            self.table, self.rows
        );
        let mut e = e;
        match e.repr_mut() {
            Repr::InvalidInput(m) => m.push_str(&note),
            // Displayed as "column `c` is <actual>, not <requested>": the note reads last.
            Repr::TypeMismatch(m) => m.requested.push_str(&note),
            _ => {}
        }
        e
    }

    /// `columns` in the INSERT's column order, or why they do not fit it.
    fn ordered<'n, 'a>(&self, columns: &[(&'n str, InsertData<'a>)]) -> Result<Vec<(&'n str, InsertData<'a>)>> {
        let mut out = Vec::with_capacity(self.columns().len());
        for name in self.columns().iter().map(|c| c.name()) {
            match columns.iter().filter(|(n, _)| *n == name).count() {
                1 => {}
                0 => {
                    return Err(Error::invalid_input(format!(
                        "block {}: no column `{name}` (this INSERT's columns are {})",
                        self.packets + 1,
                        self.column_list()
                    )))
                }
                _ => {
                    return Err(Error::invalid_input(format!(
                        "block {}: column `{name}` given twice",
                        self.packets + 1
                    )))
                }
            }
            let (n, data) = columns.iter().find(|(n, _)| *n == name).expect("counted above");
            out.push((*n, data.clone()));
        }
        if let Some((extra, _)) = columns.iter().find(|(n, _)| !self.columns().iter().any(|c| c.name() == *n)) {
            return Err(Error::invalid_input(format!(
                "block {}: column `{extra}` is not one of this INSERT's columns ({}, fixed by its first block)",
                self.packets + 1,
                self.column_list()
            )));
        }
        Ok(out)
    }

    /// The INSERT's columns (the header's, once started).
    fn columns(&self) -> &[chnative_proto::Column] {
        self.sink.flow.header().columns()
    }

    fn column_list(&self) -> String {
        self.columns().iter().map(|c| format!("`{}`", c.name())).collect::<Vec<_>>().join(", ")
    }

    /// Ends the INSERT, which has sent no data yet, with nothing stored (the
    /// connection stays usable), and returns `e`.
    async fn refuse(&mut self, e: Error) -> Error {
        let conn: &mut Driver = match self.home.slot().get().await {
            Ok(c) => c,
            Err(e2) => return e2,
        };
        match refuse_insert(conn, &mut self.sink).await {
            Ok(()) => {
                conn.keep_insert_flow(&mut self.sink.flow);
                conn.keep_insert_text(std::mem::take(&mut self.q.sql), std::mem::take(&mut self.wire_types));
                e
            }
            Err(e2) => e2,
        }
    }

    /// Refuses `e`'s block: ends the INSERT unsent when no data went out yet,
    /// aborts it otherwise.
    async fn refuse_block(&mut self, e: Error) -> Error {
        if self.packets == 0 {
            self.refuse(e).await
        } else {
            self.abort_with(e)
        }
    }

    async fn send(&mut self, columns: &[(&str, InsertData<'_>)]) -> Result<()> {
        if columns.is_empty() {
            let e = Error::invalid_input("a block to insert needs at least one column");
            return Err(if !self.started { e } else { self.refuse_block(e).await });
        }
        if !self.started {
            return self.send_first(columns).await;
        }
        // Blocks usually come with the INSERT's columns in its order: then they
        // are used as given, and the type names' vector of the last block is
        // reused, so a block allocates nothing here.
        let in_order = columns.len() == self.columns().len()
            && columns.iter().zip(self.columns()).all(|((n, _), c)| *n == c.name());
        let reordered;
        let cols = if in_order {
            columns
        } else {
            reordered = match self.ordered(columns) {
                Ok(o) => o,
                Err(e) => return Err(self.refuse_block(e).await),
            };
            &reordered[..]
        };
        let types = std::mem::take(&mut self.wire_types);
        let typed = match InsertColumns::new(cols).and_then(|c| c.with_header_in(self.sink.flow.header(), types)) {
            Ok(t) => t,
            Err(e) => return Err(self.refuse_block(e.into()).await),
        };
        self.send_typed(typed).await
    }

    /// Sends a checked block's rows (nothing when it has none) and keeps its
    /// vector of type names for the next block.
    async fn send_typed<N: AsRef<str>>(&mut self, typed: TypedInsert<'_, '_, N>) -> Result<()> {
        if typed.rows() > 0 {
            let conn: &mut Driver = self.home.slot().get().await?;
            let n = send_rows(conn, &typed, &mut self.sink, &mut self.splices).await?;
            self.rows += typed.rows() as u64;
            self.packets += n;
        }
        self.wire_types = typed.into_wire_types();
        Ok(())
    }

    /// Sends the INSERT statement naming `names` and reads the table's header.
    async fn begin<'n>(&mut self, names: impl Iterator<Item = &'n str> + Clone) -> Result<()> {
        for (i, name) in names.clone().enumerate() {
            if names.clone().take(i).any(|n| n == name) {
                return Err(Error::invalid_input(format!("column `{name}` given twice")));
            }
        }
        let conn: &mut Driver = self.home.slot().get().await?;
        // The statement and type names go into the last INSERT's memory.
        (self.q.sql, self.wire_types) = conn.lend_insert_text();
        insert_sql_into(&mut self.q.sql, &self.quoted, names);
        start_insert(conn, &self.q, &mut self.sink).await?;
        self.started = true;
        Ok(())
    }

    /// Sends the INSERT with the first block's columns, then the block.
    async fn send_first(&mut self, columns: &[(&str, InsertData<'_>)]) -> Result<()> {
        let checked = InsertColumns::new(columns)?;
        if checked.rows() == 0 {
            return Ok(());
        }
        self.begin(columns.iter().map(|(n, _)| *n)).await?;
        let types = std::mem::take(&mut self.wire_types);
        let typed = match check_against_header(checked, &self.sink, self.allow_missing, types) {
            Ok(t) => t,
            // Nothing was sent: end the INSERT empty, the connection stays usable.
            Err(e) => return Err(self.refuse(e).await),
        };
        self.send_typed(typed).await
    }
}

/// An empty vector with `v`'s memory, for elements of another lifetime. The
/// standard library collects a mapped `into_iter()` in place when the element
/// layouts agree (they do: only lifetimes differ), so no allocation.
fn recycle<T, U>(mut v: Vec<T>) -> Vec<U> {
    v.clear();
    v.into_iter().map(|_| unreachable!("the vector was cleared")).collect()
}

impl std::fmt::Debug for BlockInsert<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockInsert")
            .field("table", &self.table)
            .field("query_id", &self.q.id)
            .field("columns", &self.columns().iter().map(|c| c.name()).collect::<Vec<_>>())
            .field("rows", &self.rows)
            .field("state", &self.state)
            .finish()
    }
}

impl Drop for BlockInsert<'_> {
    fn drop(&mut self) {
        if !matches!(self.state, State::Ready | State::InCall) || !self.started {
            return;
        }
        tracing::warn!(
            table = %self.table,
            rows = self.rows,
            "a BlockInsert was dropped without end(): the INSERT was aborted and the {} rows sent \
             are discarded (call end() to store them)",
            self.rows
        );
        self.close("a BlockInsert was dropped without end()");
    }
}
