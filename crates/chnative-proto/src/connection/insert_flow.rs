//! The INSERT sequence over the machine's events, with no I/O.
//!
//! An INSERT is: the query ([`Connection::insert`]); the server describes
//! the table (TableColumns, possibly ProfileEvents) and sends its header
//! block; the client sends Data packets ([`Connection::send_data`]) and their
//! end ([`Connection::end_data`]), watching for an Exception meanwhile; the
//! server confirms with EndOfStream. [`InsertFlow`] is the [`BlockSink`] the
//! driver lends the machine for all of it, and it reads every event: the
//! driver only moves bytes and asks [`InsertFlow::on_event`] what an event
//! means for the INSERT.

use super::{BlockSink, Connection, Error, Event};
use crate::block::Block;
use crate::error::ProtoError;
use crate::insert::TypedInsert;
use crate::packet::{BlockKind, Exception, Progress};

/// One column of the table an INSERT goes into, as the server's TableColumns
/// packet describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TableColumn {
    /// The column's name.
    pub name: String,
    /// Whether it has a DEFAULT, MATERIALIZED, ALIAS or EPHEMERAL expression
    /// (an INSERT may leave it out).
    pub has_default: bool,
}

/// The columns of a TableColumns packet's `ColumnsDescription` text (format
/// version 1: two header lines, then a line per column: the backquoted name
/// and type, then a tab and the default kind if any).
pub fn parse_table_columns(description: &str) -> Vec<TableColumn> {
    let mut out = Vec::new();
    parse_table_columns_into(description, &mut out);
    out
}

/// [`parse_table_columns`] into `out`, reusing its columns' names (an INSERT
/// into the table of the INSERT before allocates nothing here).
fn parse_table_columns_into(description: &str, out: &mut Vec<TableColumn>) {
    let mut n = 0;
    for line in description.lines().skip(2) {
        let mut parts = line.split('\t');
        let head = parts.next().unwrap_or("");
        if n == out.len() {
            out.push(TableColumn { name: String::new(), has_default: false });
        }
        let col = &mut out[n];
        n += 1;
        col.name.clear();
        if let Some(rest) = head.strip_prefix('`') {
            let mut chars = rest.chars();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => col.name.extend(chars.next()),
                    '`' => break,
                    c => col.name.push(c),
                }
            }
        } else {
            col.name.push_str(head.split(' ').next().unwrap_or(""));
        }
        col.has_default = matches!(parts.next(), Some("DEFAULT" | "MATERIALIZED" | "ALIAS" | "EPHEMERAL"));
    }
    out.truncate(n);
}

/// The InsertedRows and InsertedBytes increments in a ProfileEvents block
/// (columns `type` Enum8, 1 = increment; `name` String; `value` Int64; other
/// rows are other counters). 26.9 sends one row per counter, thread 0. A
/// block of another shape counts nothing.
pub fn inserted_counters(block: &Block) -> (u64, u64) {
    let (Some(kinds), Some(names), Some(values)) = (block.column("type"), block.column("name"), block.column("value"))
    else {
        return (0, 0);
    };
    let (Ok(kinds), Ok(names), Ok((values, 8))) =
        (kinds.view().values::<i8>(), names.view().as_strings(), values.view().raw_fixed())
    else {
        return (0, 0);
    };
    let mut out = (0u64, 0u64);
    for (i, v) in values.chunks_exact(8).enumerate() {
        if kinds.get(i) != Some(&1) {
            continue;
        }
        let v = u64::from_le_bytes(v.try_into().unwrap_or_default());
        match names.bytes(i) {
            b"InsertedRows" => out.0 = out.0.saturating_add(v),
            b"InsertedBytes" => out.1 = out.1.saturating_add(v),
            _ => {}
        }
    }
    out
}

/// What an event means for the INSERT ([`InsertFlow::on_event`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum InsertStep {
    /// Nothing for the driver: go on.
    Continue,
    /// The table's header block is in [`InsertFlow::header`] (and its
    /// description in [`InsertFlow::columns`]): check the data against it,
    /// then send it or end it unsent.
    Header,
    /// A progress increment (the sum so far is [`InsertFlow::progress`]).
    Progress(Progress),
    /// A ProfileEvents block, in [`InsertFlow::profile_events`] (already counted).
    ProfileEvents,
    /// The server refused the INSERT. The machine has ended the data for it
    /// (when data was being sent), so the connection is usable unless it is
    /// closed.
    Exception(Exception),
    /// The server confirmed the INSERT.
    Done,
}

/// The blocks an INSERT lends the machine (the table's header, profile
/// events) and what the server has said about the INSERT so far.
#[derive(Debug, Default)]
pub struct InsertFlow {
    header: Block,
    profile_events: Block,
    columns: Vec<TableColumn>,
    progress: Progress,
    written_rows: u64,
    written_bytes: u64,
    header_seen: bool,
    /// Whether `columns` are this INSERT's (the server described the table).
    columns_described: bool,
    /// The TableColumns packet's strings, whose memory goes back to the
    /// connection for the next INSERT's.
    text: (String, String),
}

impl BlockSink for InsertFlow {
    fn block(&mut self, kind: BlockKind) -> Option<&mut Block> {
        match kind {
            BlockKind::Data => Some(&mut self.header),
            BlockKind::ProfileEvents => Some(&mut self.profile_events),
            _ => None,
        }
    }
}

impl InsertFlow {
    /// A flow for a new INSERT.
    pub fn new() -> InsertFlow {
        InsertFlow::default()
    }

    /// What `event` (polled with this flow as the sink) means for the INSERT.
    ///
    /// The server's EndOfStream before the table's header (the statement
    /// carried its data inline, or the server broke the sequence) is an error.
    pub fn on_event(&mut self, event: Event) -> Result<InsertStep, Error> {
        Ok(match event {
            Event::TableColumns { table, description } => {
                parse_table_columns_into(&description, &mut self.columns);
                self.columns_described = true;
                self.text = (table, description);
                InsertStep::Continue
            }
            Event::Header => {
                self.header_seen = true;
                InsertStep::Header
            }
            Event::ProfileEvents => {
                let (rows, bytes) = inserted_counters(&self.profile_events);
                self.written_rows = self.written_rows.saturating_add(rows);
                self.written_bytes = self.written_bytes.saturating_add(bytes);
                InsertStep::ProfileEvents
            }
            Event::Progress(p) => {
                self.progress.accumulate(&p);
                InsertStep::Progress(p)
            }
            Event::Exception(e) => InsertStep::Exception(e),
            Event::EndOfStream if !self.header_seen => {
                return Err(Error::Proto(ProtoError::violation("the server sent no INSERT header")))
            }
            Event::EndOfStream => InsertStep::Done,
            _ => InsertStep::Continue,
        })
    }

    /// Readies a flow that has served an INSERT for the next one on `conn`.
    /// The header and profile events blocks keep their columns, so an INSERT
    /// into the same table decodes its header into them without allocating
    /// (a header of other names or types replaces them), and `conn` reads the
    /// table's description into the memory of the last one; what the server
    /// said about the last INSERT is forgotten.
    pub fn restart(&mut self, conn: &mut Connection) {
        if self.text.1.capacity() > 0 {
            conn.table_columns_text = std::mem::take(&mut self.text);
        }
        self.header.forget_partial();
        self.profile_events.forget_partial();
        self.progress = Progress::default();
        self.written_rows = 0;
        self.written_bytes = 0;
        self.header_seen = false;
        self.columns_described = false;
    }

    /// The table's header block (empty until [`InsertStep::Header`]).
    pub fn header(&self) -> &Block {
        &self.header
    }

    /// The last ProfileEvents block.
    pub fn profile_events(&self) -> &Block {
        &self.profile_events
    }

    /// The table's columns, as described before its header (empty if the
    /// server did not describe them).
    pub fn columns(&self) -> &[TableColumn] {
        if self.columns_described {
            &self.columns
        } else {
            &[]
        }
    }

    /// The table's columns without a default expression that `typed` leaves out.
    pub fn missing_without_default<N: AsRef<str>>(&self, typed: &TypedInsert<'_, '_, N>) -> Vec<&str> {
        self.missing_without_default_of(|n| typed.has_column(n))
    }

    /// The table's columns without a default expression for which `given` is false.
    pub fn missing_without_default_of(&self, given: impl Fn(&str) -> bool) -> Vec<&str> {
        self.columns().iter().filter(|c| !c.has_default && !given(&c.name)).map(|c| c.name.as_str()).collect()
    }

    /// The sum of the Progress increments so far.
    pub fn progress_sum(&self) -> &Progress {
        &self.progress
    }

    /// What the server reported. ClickHouse 26.9 sends no Progress for an
    /// INSERT whose data comes from the client; it sends ProfileEvents, and
    /// `written_rows` / `written_bytes` then hold the sum of their
    /// `InsertedRows` / `InsertedBytes` increments.
    pub fn progress(&self) -> Progress {
        let mut p = self.progress;
        if p.written_rows == 0 {
            p.written_rows = self.written_rows;
            p.written_bytes = self.written_bytes;
        }
        p
    }

    /// Gives the header's and profile events' buffers back to `conn`'s pool.
    pub fn recycle(&mut self, conn: &mut Connection) {
        self.header.recycle(conn.pool());
        self.profile_events.recycle(conn.pool());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Exception;

    #[test]
    fn table_columns_description() {
        let d = "columns format version: 1\n3 columns:\n`id` UInt64\n`a b` String\tDEFAULT\t'x'\n`m` UInt8\tMATERIALIZED\t1\n`e\\`q` UInt8\n";
        let got: Vec<(String, bool)> = parse_table_columns(d).into_iter().map(|c| (c.name, c.has_default)).collect();
        let want = [("id", false), ("a b", true), ("m", true), ("e`q", false)];
        assert_eq!(got, want.map(|(n, d)| (n.to_string(), d)));
        assert!(parse_table_columns("").is_empty());
    }

    #[test]
    fn sequence() {
        let mut f = InsertFlow::new();
        let d = "columns format version: 1\n1 columns:\n`id` UInt64\n".to_string();
        let e = Event::TableColumns { table: "t".into(), description: d };
        assert_eq!(f.on_event(e).unwrap(), InsertStep::Continue);
        assert_eq!(f.columns().len(), 1);
        assert_eq!(f.on_event(Event::Header).unwrap(), InsertStep::Header);
        let p = Progress { written_rows: 3, written_bytes: 24, ..Progress::default() };
        assert_eq!(f.on_event(Event::Progress(p)).unwrap(), InsertStep::Progress(p));
        assert_eq!(f.on_event(Event::EndOfStream).unwrap(), InsertStep::Done);
        assert_eq!(f.progress().written_rows, 3);
        let ex = Exception {
            code: 60,
            name: "DB::Exception".into(),
            message: "x".into(),
            stack_trace: String::new(),
            nested: vec![],
        };
        assert!(matches!(f.on_event(Event::Exception(ex)).unwrap(), InsertStep::Exception(e) if e.code == 60));
    }

    #[test]
    fn end_before_the_header_is_a_violation() {
        let mut f = InsertFlow::new();
        assert!(matches!(f.on_event(Event::EndOfStream), Err(Error::Proto(ProtoError::Violation(_)))));
    }

    #[test]
    fn profile_events_of_another_shape_count_nothing() {
        let mut f = InsertFlow::new();
        assert_eq!(f.on_event(Event::ProfileEvents).unwrap(), InsertStep::ProfileEvents);
        assert_eq!(f.progress(), Progress::default());
    }
}
