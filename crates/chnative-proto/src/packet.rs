//! Packets: what the client writes and what the server sends.
//!
//! Packets that carry a block (Data, Totals, Extremes, Log, ProfileEvents) are
//! decoded in two steps: [`read_server_packet`] returns their kind and table name,
//! and the caller decodes the [`crate::Block`] that follows, decompressing first
//! when the query asked for compression.

use crate::chunked::Negotiated;
use crate::error::{ProtoError, Result};
use crate::revision as rev;
use crate::wire::{Reader, WriteExt};

/// Longest string accepted in packet metadata (names, messages, settings).
pub const MAX_META_STRING: u64 = 64 << 20;

/// Client packet codes.
pub mod client_code {
    #![allow(missing_docs)]
    pub const HELLO: u64 = 0;
    pub const QUERY: u64 = 1;
    pub const DATA: u64 = 2;
    pub const CANCEL: u64 = 3;
    pub const PING: u64 = 4;
}

/// Server packet codes.
pub mod server_code {
    #![allow(missing_docs)]
    pub const HELLO: u64 = 0;
    pub const DATA: u64 = 1;
    pub const EXCEPTION: u64 = 2;
    pub const PROGRESS: u64 = 3;
    pub const PONG: u64 = 4;
    pub const END_OF_STREAM: u64 = 5;
    pub const PROFILE_INFO: u64 = 6;
    pub const TOTALS: u64 = 7;
    pub const EXTREMES: u64 = 8;
    pub const TABLES_STATUS_RESPONSE: u64 = 9;
    pub const LOG: u64 = 10;
    pub const TABLE_COLUMNS: u64 = 11;
    pub const PART_UUIDS: u64 = 12;
    pub const READ_TASK_REQUEST: u64 = 13;
    pub const PROFILE_EVENTS: u64 = 14;
    pub const TIMEZONE_UPDATE: u64 = 17;
    pub const SSH_CHALLENGE: u64 = 18;
}

/// The client's greeting.
#[derive(Debug, Clone)]
pub struct ClientHello<'a> {
    /// Shown in `system.processes.client_name`.
    pub client_name: &'a str,
    /// Client version, major.
    pub version_major: u64,
    /// Client version, minor.
    pub version_minor: u64,
    /// The revision we announce.
    pub revision: u64,
    /// Default database ("" for the user's default).
    pub database: &'a str,
    /// User name.
    pub user: &'a str,
    /// Password (sent in clear; use TLS).
    pub password: &'a str,
}

impl ClientHello<'_> {
    /// Appends the Hello packet.
    pub fn write(&self, out: &mut Vec<u8>) {
        out.put_varuint(client_code::HELLO);
        out.put_string(self.client_name);
        out.put_varuint(self.version_major);
        out.put_varuint(self.version_minor);
        out.put_varuint(self.revision);
        out.put_string(self.database);
        out.put_string(self.user);
        out.put_string(self.password);
    }
}

/// Appends the Addendum sent right after the server's Hello (revision ≥ 54458),
/// announcing no chunked framing.
pub fn write_addendum(out: &mut Vec<u8>, revision: u64, quota_key: &str) {
    write_addendum_chunked(out, revision, quota_key, Negotiated::default());
}

/// [`write_addendum`] announcing the chunked framing decided for each
/// direction (`chunked` or `notchunked`; the server takes it as the client's
/// choice, and refuses it if the server insists on the other).
pub fn write_addendum_chunked(out: &mut Vec<u8>, revision: u64, quota_key: &str, chunking: Negotiated) {
    if revision < rev::ADDENDUM {
        return;
    }
    out.put_string(quota_key);
    if revision >= rev::CHUNKED_PACKETS {
        let word = |c: bool| if c { "chunked" } else { "notchunked" };
        out.put_string(word(chunking.send));
        out.put_string(word(chunking.recv));
    }
    if revision >= rev::VERSIONED_PARALLEL_REPLICAS_PROTOCOL {
        out.put_varuint(rev::PARALLEL_REPLICAS_PROTOCOL_VERSION);
    }
}

/// The server's greeting.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerHello {
    /// Usually "ClickHouse".
    pub name: String,
    /// Version, major.
    pub version_major: u64,
    /// Version, minor.
    pub version_minor: u64,
    /// Version, patch.
    pub version_patch: u64,
    /// The server's protocol revision.
    pub revision: u64,
    /// Server time zone.
    pub timezone: String,
    /// `display_name` from the server config.
    pub display_name: String,
    /// Chunked framing the server sends with ("notchunked" by default).
    pub chunked_send: String,
    /// Chunked framing the server expects.
    pub chunked_recv: String,
    /// Password complexity rules (pattern, message).
    pub password_rules: Vec<(String, String)>,
    /// Interserver nonce.
    pub nonce: u64,
    /// Settings the server asks clients to apply (name, value).
    pub settings: Vec<(String, String)>,
}

impl ServerHello {
    /// Reads the Hello body (after the packet code), gating on `min(ours, theirs)`.
    /// The field order is not the revision order (see the notes in the module docs).
    pub fn read(r: &mut Reader<'_>, our_revision: u64) -> Result<ServerHello> {
        let mut h = ServerHello { name: r.string_owned(4096)?, ..Default::default() };
        h.version_major = r.varuint()?;
        h.version_minor = r.varuint()?;
        h.revision = r.varuint()?;
        let v = our_revision.min(h.revision);
        if v >= rev::VERSIONED_PARALLEL_REPLICAS_PROTOCOL {
            r.varuint()?;
        }
        if v >= rev::SERVER_TIMEZONE {
            h.timezone = r.string_owned(4096)?;
        }
        if v >= rev::SERVER_DISPLAY_NAME {
            h.display_name = r.string_owned(4096)?;
        }
        if v >= rev::VERSION_PATCH {
            h.version_patch = r.varuint()?;
        } else {
            h.version_patch = h.revision;
        }
        if v >= rev::CHUNKED_PACKETS {
            h.chunked_send = r.string_owned(64)?;
            h.chunked_recv = r.string_owned(64)?;
        }
        if v >= rev::PASSWORD_COMPLEXITY_RULES {
            let n = r.varuint_bounded("password rules", 256)?;
            for _ in 0..n {
                let p = r.string_owned(4096)?;
                let m = r.string_owned(4096)?;
                h.password_rules.push((p, m));
            }
        }
        if v >= rev::INTERSERVER_SECRET_V2 {
            h.nonce = r.u64_le()?;
        }
        if v >= rev::SERVER_SETTINGS {
            read_settings(r, |name, _flags, value| h.settings.push((name.to_owned(), value.to_owned())))?;
        }
        if v >= rev::QUERY_PLAN_SERIALIZATION {
            r.varuint()?;
        }
        if v >= rev::VERSIONED_CLUSTER_FUNCTION_PROTOCOL {
            r.varuint()?;
        }
        Ok(h)
    }
}

/// Reads a settings list (name, flags, value) ended by an empty name.
pub fn read_settings(r: &mut Reader<'_>, mut f: impl FnMut(&str, u64, &str)) -> Result<()> {
    for _ in 0..100_000 {
        let name = r.string(MAX_META_STRING)?;
        if name.is_empty() {
            return Ok(());
        }
        let flags = r.varuint()?;
        let value = r.string(MAX_META_STRING)?;
        f(name, flags, value);
    }
    Err(ProtoError::violation("settings list too long"))
}

/// Setting flag: unknown names fail instead of being ignored.
pub const SETTING_IMPORTANT: u64 = 0x01;
/// Setting flag: the value is a quoted Field dump (custom settings, parameters).
pub const SETTING_CUSTOM: u64 = 0x02;

/// OpenTelemetry trace context propagated to the server.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceContext {
    /// 128-bit trace id.
    pub trace_id: u128,
    /// 64-bit parent span id.
    pub span_id: u64,
    /// W3C tracestate.
    pub tracestate: String,
    /// W3C trace flags.
    pub trace_flags: u8,
}

/// Who is asking: the ClientInfo block of a Query.
#[derive(Debug, Clone)]
pub struct ClientInfo<'a> {
    /// Same as in Hello.
    pub client_name: &'a str,
    /// Same as in Hello.
    pub version_major: u64,
    /// Same as in Hello.
    pub version_minor: u64,
    /// Client version, patch.
    pub version_patch: u64,
    /// The revision we announced (not the negotiated one).
    pub our_revision: u64,
    /// OS user name.
    pub os_user: &'a str,
    /// Host name.
    pub hostname: &'a str,
    /// Quota key.
    pub quota_key: &'a str,
    /// Trace context to continue on the server.
    pub trace: Option<&'a TraceContext>,
    /// Query start time in microseconds since the epoch.
    pub start_time_us: u64,
}

/// No names, version 0.0.0, the [`rev::DEFAULT`] revision, no trace, start time 0:
/// fill in what a test or tool needs with `..ClientInfo::default()`.
impl Default for ClientInfo<'_> {
    fn default() -> Self {
        ClientInfo {
            client_name: "",
            version_major: 0,
            version_minor: 0,
            version_patch: 0,
            our_revision: rev::DEFAULT,
            os_user: "",
            hostname: "",
            quota_key: "",
            trace: None,
            start_time_us: 0,
        }
    }
}

impl ClientInfo<'_> {
    /// Appends ClientInfo for an initial TCP query at the negotiated revision `v`.
    pub fn write(&self, out: &mut Vec<u8>, v: u64) {
        out.put_u8(1); // INITIAL_QUERY
        out.put_string(""); // initial_user
        out.put_string(""); // initial_query_id
        out.put_string("[::ffff:127.0.0.1]:0"); // initial_address (the server replaces it)
        if v >= rev::INITIAL_QUERY_START_TIME {
            out.put_u64_le(self.start_time_us);
        }
        out.put_u8(1); // interface TCP
        out.put_string(self.os_user);
        out.put_string(self.hostname);
        out.put_string(self.client_name);
        out.put_varuint(self.version_major);
        out.put_varuint(self.version_minor);
        out.put_varuint(self.our_revision);
        if v >= rev::QUOTA_KEY_IN_CLIENT_INFO {
            out.put_string(self.quota_key);
        }
        if v >= rev::DISTRIBUTED_DEPTH {
            out.put_varuint(0);
        }
        if v >= rev::VERSION_PATCH {
            out.put_varuint(self.version_patch);
        }
        if v >= rev::OPENTELEMETRY {
            match self.trace {
                Some(t) => {
                    out.put_u8(1);
                    // Trace id in the UUID wire layout: high half, then low half, each LE.
                    out.put_u64_le((t.trace_id >> 64) as u64);
                    out.put_u64_le(t.trace_id as u64);
                    out.put_u64_le(t.span_id);
                    out.put_string(&t.tracestate);
                    out.put_u8(t.trace_flags);
                }
                None => out.put_u8(0),
            }
        }
        if v >= rev::PARALLEL_REPLICAS {
            out.put_varuint(0);
            out.put_varuint(0);
            out.put_varuint(0);
        }
        if v >= rev::QUERY_AND_LINE_NUMBERS {
            out.put_varuint(0);
            out.put_varuint(0);
        }
        if v >= rev::JWT_IN_INTERSERVER {
            out.put_u8(0);
        }
        if v >= rev::CLIENT_AGENT_IN_CLIENT_INFO {
            out.put_string("");
        }
        if v >= rev::INTERNAL_QUERY_FLAG {
            out.put_u8(0);
        }
        if v >= rev::INTERSERVER_CURRENT_ROLES {
            out.put_u8(0);
        }
    }
}

/// Query processing stage: run to completion.
pub const STAGE_COMPLETE: u64 = 2;

/// A Query packet.
#[derive(Debug, Clone)]
pub struct Query<'a> {
    /// Query id; empty lets the server choose.
    pub query_id: &'a str,
    /// Who is asking.
    pub client_info: ClientInfo<'a>,
    /// Settings as (name, value, flags); values in their plain text form.
    pub settings: &'a [(String, String, u64)],
    /// Whether Data blocks are compressed in both directions.
    pub compression: bool,
    /// The SQL text.
    pub sql: &'a str,
    /// Query parameters (name, already-encoded wire value); see [`encode_parameter`].
    pub parameters: &'a [(String, String)],
}

impl Query<'_> {
    /// Appends the packet at negotiated revision `v`.
    pub fn write(&self, out: &mut Vec<u8>, v: u64) {
        out.put_varuint(client_code::QUERY);
        out.put_string(self.query_id);
        if v >= rev::CLIENT_INFO {
            self.client_info.write(out, v);
        }
        for (name, value, flags) in self.settings {
            out.put_string(name);
            out.put_varuint(*flags);
            out.put_string(value);
        }
        out.put_string("");
        if v >= rev::INTERSERVER_EXTERNALLY_GRANTED_ROLES {
            out.put_string("");
        }
        if v >= rev::INTERSERVER_SECRET {
            out.put_string("");
        }
        out.put_varuint(STAGE_COMPLETE);
        out.put_varuint(self.compression as u64);
        out.put_string(self.sql);
        if v >= rev::PARAMETERS {
            for (name, value) in self.parameters {
                out.put_string(name);
                out.put_varuint(SETTING_CUSTOM);
                out.put_string(value);
            }
            out.put_string("");
        }
    }
}

/// Escapes text the way ClickHouse's TSV reader unescapes it.
///
/// A `String` placeholder's value is parsed with the TSV escaping rules, so raw
/// tabs, newlines and backslashes in a string parameter must be escaped first.
/// Compound values (arrays, tuples) are parsed as literals and must not be.
pub fn escape_tsv(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\0' => out.push_str("\\0"),
            c => out.push(c),
        }
    }
    out
}

/// Single-quotes text with backslash escapes: how a query parameter's text goes
/// on the wire (the server reads parameter values as quoted Field dumps), and
/// how a string is written inside an array or tuple parameter literal.
pub fn encode_parameter(text: &str) -> String {
    let mut q = String::with_capacity(text.len() + 2);
    q.push('\'');
    for c in text.chars() {
        match c {
            '\\' => q.push_str("\\\\"),
            '\'' => q.push_str("\\'"),
            c => q.push(c),
        }
    }
    q.push('\'');
    q
}

/// Appends the head of a client Data packet (the block follows, compressed or not).
pub fn write_data_head(out: &mut Vec<u8>, table: &str) {
    out.put_varuint(client_code::DATA);
    out.put_string(table);
}

/// Appends a Cancel packet.
pub fn write_cancel(out: &mut Vec<u8>) {
    out.put_varuint(client_code::CANCEL);
}

/// Appends a Ping packet.
pub fn write_ping(out: &mut Vec<u8>) {
    out.put_varuint(client_code::PING);
}

/// A server exception, with the nested chain flattened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exception {
    /// ClickHouse error code.
    pub code: i32,
    /// Error name, e.g. `DB::Exception`.
    pub name: String,
    /// Message text.
    pub message: String,
    /// Server stack trace (may be empty).
    pub stack_trace: String,
    /// Nested exceptions, outermost first (current servers send none).
    pub nested: Vec<Exception>,
}

/// Most nested exceptions accepted in one Exception packet.
pub const MAX_EXCEPTION_DEPTH: usize = 64;
/// Most bytes of names, messages and stack traces accepted in one Exception packet.
pub const MAX_EXCEPTION_BYTES: u64 = 64 << 20;

impl Exception {
    /// Reads an Exception body.
    ///
    /// The whole chain is measured before anything is copied: a large exception
    /// arriving in pieces costs a walk over its length fields per piece, not a copy
    /// of everything received so far, and its `Incomplete` bound covers every
    /// string whose length is known.
    pub fn read(r: &mut Reader<'_>) -> Result<Exception> {
        Self::measure(&mut r.clone())?;
        let mut chain = Vec::new();
        loop {
            let code = r.i32_le()?;
            let name = r.string_lossy(MAX_EXCEPTION_BYTES)?;
            let message = r.string_lossy(MAX_EXCEPTION_BYTES)?;
            let stack_trace = r.string_lossy(MAX_EXCEPTION_BYTES)?;
            let has_nested = r.bool()?;
            chain.push(Exception { code, name, message, stack_trace, nested: Vec::new() });
            if !has_nested {
                break;
            }
        }
        let mut first = chain.remove(0);
        first.nested = chain;
        Ok(first)
    }

    /// Steps over a whole chain, checking its depth and size, without copying.
    fn measure(r: &mut Reader<'_>) -> Result<()> {
        let mut total = 0u64;
        for _ in 0..MAX_EXCEPTION_DEPTH {
            r.i32_le()?;
            for _ in 0..3 {
                let n = r.varuint()?;
                total = total.saturating_add(n);
                if total > MAX_EXCEPTION_BYTES {
                    return Err(ProtoError::TooLarge {
                        what: "exception text",
                        got: total,
                        limit: MAX_EXCEPTION_BYTES,
                    });
                }
                // The rest of this level (two more lengths at least, and the flag)
                // must follow as well.
                r.need(n as usize + 1)?;
                r.bytes(n as usize)?;
            }
            if !r.bool()? {
                return Ok(());
            }
        }
        Err(ProtoError::violation(format!("exception chain deeper than {MAX_EXCEPTION_DEPTH}")))
    }
}

/// Progress increments since the previous Progress packet.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Progress {
    /// Rows read.
    pub read_rows: u64,
    /// Bytes read (uncompressed).
    pub read_bytes: u64,
    /// Estimate of rows to read in total (increment).
    pub total_rows_to_read: u64,
    /// Estimate of bytes to read in total (increment).
    pub total_bytes_to_read: u64,
    /// Rows written.
    pub written_rows: u64,
    /// Bytes written.
    pub written_bytes: u64,
    /// Server-side elapsed time, nanoseconds.
    pub elapsed_ns: u64,
}

impl Progress {
    /// Reads a Progress body at negotiated revision `v`.
    pub fn read(r: &mut Reader<'_>, v: u64) -> Result<Progress> {
        let mut p = Progress {
            read_rows: r.varuint()?,
            read_bytes: r.varuint()?,
            total_rows_to_read: r.varuint()?,
            ..Default::default()
        };
        if v >= rev::TOTAL_BYTES_IN_PROGRESS {
            p.total_bytes_to_read = r.varuint()?;
        }
        if v >= rev::CLIENT_WRITE_INFO {
            p.written_rows = r.varuint()?;
            p.written_bytes = r.varuint()?;
        }
        if v >= rev::SERVER_QUERY_TIME_IN_PROGRESS {
            p.elapsed_ns = r.varuint()?;
        }
        Ok(p)
    }

    /// Adds an increment (the server resets every counter, elapsed time included,
    /// after each packet).
    pub fn accumulate(&mut self, d: &Progress) {
        // Counters come from the wire: saturate rather than overflow.
        self.read_rows = self.read_rows.saturating_add(d.read_rows);
        self.read_bytes = self.read_bytes.saturating_add(d.read_bytes);
        self.total_rows_to_read = self.total_rows_to_read.saturating_add(d.total_rows_to_read);
        self.total_bytes_to_read = self.total_bytes_to_read.saturating_add(d.total_bytes_to_read);
        self.written_rows = self.written_rows.saturating_add(d.written_rows);
        self.written_bytes = self.written_bytes.saturating_add(d.written_bytes);
        self.elapsed_ns = self.elapsed_ns.saturating_add(d.elapsed_ns);
    }
}

/// Statistics of a finished SELECT.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProfileInfo {
    /// Rows in the result.
    pub rows: u64,
    /// Blocks in the result.
    pub blocks: u64,
    /// Bytes in the result.
    pub bytes: u64,
    /// Whether LIMIT was applied.
    pub applied_limit: bool,
    /// Rows before LIMIT.
    pub rows_before_limit: u64,
    /// Whether aggregation happened.
    pub applied_aggregation: bool,
    /// Rows before aggregation.
    pub rows_before_aggregation: u64,
}

impl ProfileInfo {
    /// Reads a ProfileInfo body.
    pub fn read(r: &mut Reader<'_>, v: u64) -> Result<ProfileInfo> {
        let mut p = ProfileInfo { rows: r.varuint()?, blocks: r.varuint()?, bytes: r.varuint()?, ..Default::default() };
        p.applied_limit = r.bool()?;
        p.rows_before_limit = r.varuint()?;
        let _calculated_rows_before_limit = r.bool()?;
        if v >= rev::ROWS_BEFORE_AGGREGATION {
            p.applied_aggregation = r.bool()?;
            p.rows_before_aggregation = r.varuint()?;
        }
        Ok(p)
    }
}

/// Which block-carrying packet a block arrived in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BlockKind {
    /// Query result or INSERT header.
    Data,
    /// WITH TOTALS row.
    Totals,
    /// min/max rows (`extremes = 1`).
    Extremes,
    /// Server log lines (`send_logs_level`).
    Log,
    /// Profile event counters.
    ProfileEvents,
}

impl BlockKind {
    /// Whether the block is compressed when the query asked for compression at revision `v`.
    pub fn compressed(self, v: u64) -> bool {
        match self {
            BlockKind::Data | BlockKind::Totals | BlockKind::Extremes => true,
            BlockKind::Log | BlockKind::ProfileEvents => v >= rev::COMPRESSED_LOGS_PROFILE_EVENTS_COLUMNS,
        }
    }
}

/// A decoded server packet (block bodies excepted).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerPacket {
    /// Handshake answer.
    Hello(ServerHello),
    /// A block follows: decode it next.
    Block {
        /// Packet kind.
        kind: BlockKind,
        /// Table name (external tables; "" otherwise).
        table: String,
    },
    /// The query failed.
    Exception(Exception),
    /// Progress increment.
    Progress(Progress),
    /// Answer to Ping.
    Pong,
    /// The query finished.
    EndOfStream,
    /// Final statistics.
    ProfileInfo(ProfileInfo),
    /// Column descriptions before an INSERT.
    TableColumns {
        /// Table name.
        table: String,
        /// `ColumnsDescription` text.
        description: String,
    },
    /// TableColumns whose body (table name, description) follows in compressed
    /// frames (revision ≥ 54481 with compression on): decompress, then
    /// [`read_table_columns_body`].
    TableColumnsCompressed,
    /// Session time zone for `input()`.
    TimezoneUpdate(String),
    /// Part UUIDs (obsolete; skipped).
    PartUuids,
}

/// Reads a TableColumns body: table name and column description.
pub fn read_table_columns_body(r: &mut Reader<'_>) -> Result<ServerPacket> {
    read_table_columns_body_in(r, &mut Default::default())
}

/// [`read_table_columns_body`] into the memory of `text` (table name and
/// description strings kept from an earlier TableColumns packet), which is
/// taken.
pub(crate) fn read_table_columns_body_in(r: &mut Reader<'_>, text: &mut (String, String)) -> Result<ServerPacket> {
    let table = r.string(MAX_META_STRING)?;
    let description = r.string(MAX_META_STRING)?;
    let (mut t, mut d) = std::mem::take(text);
    t.clear();
    t.push_str(table);
    d.clear();
    d.push_str(description);
    Ok(ServerPacket::TableColumns { table: t, description: d })
}

/// Reads a server packet's code and body. A code a normal client never receives
/// is a protocol violation: the caller must drop the connection.
///
/// `compressed` says whether the running query asked for compression; at
/// revision ≥ 54481 it also covers TableColumns bodies (seen on 26.9).
pub fn read_server_packet(r: &mut Reader<'_>, our_revision: u64, v: u64, compressed: bool) -> Result<ServerPacket> {
    read_server_packet_in(r, our_revision, v, compressed, &mut Default::default())
}

/// [`read_server_packet`], a TableColumns packet read into the memory of `text`
/// (see [`read_table_columns_body_in`]).
pub(crate) fn read_server_packet_in(
    r: &mut Reader<'_>,
    our_revision: u64,
    v: u64,
    compressed: bool,
    text: &mut (String, String),
) -> Result<ServerPacket> {
    let code = r.varuint()?;
    Ok(match code {
        server_code::HELLO => ServerPacket::Hello(ServerHello::read(r, our_revision)?),
        server_code::DATA => ServerPacket::Block { kind: BlockKind::Data, table: r.string_owned(MAX_META_STRING)? },
        server_code::TOTALS => ServerPacket::Block { kind: BlockKind::Totals, table: r.string_owned(MAX_META_STRING)? },
        server_code::EXTREMES => {
            ServerPacket::Block { kind: BlockKind::Extremes, table: r.string_owned(MAX_META_STRING)? }
        }
        server_code::LOG => ServerPacket::Block { kind: BlockKind::Log, table: r.string_owned(MAX_META_STRING)? },
        server_code::PROFILE_EVENTS => {
            ServerPacket::Block { kind: BlockKind::ProfileEvents, table: r.string_owned(MAX_META_STRING)? }
        }
        server_code::EXCEPTION => ServerPacket::Exception(Exception::read(r)?),
        server_code::PROGRESS => ServerPacket::Progress(Progress::read(r, v)?),
        server_code::PONG => ServerPacket::Pong,
        server_code::END_OF_STREAM => ServerPacket::EndOfStream,
        server_code::PROFILE_INFO => ServerPacket::ProfileInfo(ProfileInfo::read(r, v)?),
        server_code::TABLE_COLUMNS if compressed && v >= rev::COMPRESSED_LOGS_PROFILE_EVENTS_COLUMNS => {
            ServerPacket::TableColumnsCompressed
        }
        server_code::TABLE_COLUMNS => read_table_columns_body_in(r, text)?,
        server_code::TIMEZONE_UPDATE => ServerPacket::TimezoneUpdate(r.string_owned(4096)?),
        server_code::PART_UUIDS => {
            let n = r.varuint_bounded("part uuids", 1 << 24)?;
            r.bytes(n * 16)?;
            ServerPacket::PartUuids
        }
        other => return Err(ProtoError::violation(format!("unexpected server packet code {other}"))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_encoding() {
        assert_eq!(encode_parameter("42"), "'42'");
        assert_eq!(encode_parameter(&escape_tsv("a\tb")), r"'a\\tb'");
        assert_eq!(encode_parameter("it's"), r"'it\'s'");
        assert_eq!(encode_parameter(&escape_tsv(r"c:\x")), r"'c:\\\\x'");
    }

    #[test]
    fn unexpected_codes_are_violations() {
        for code in [13u8, 15, 16, 18, 19, 99] {
            let b = [code, 0, 0, 0];
            assert!(matches!(
                read_server_packet(&mut Reader::new(&b), 54492, 54492, false),
                Err(ProtoError::Violation(_))
            ));
        }
    }

    #[test]
    fn empty_data_packet_bytes_from_notes() {
        let mut b = Vec::new();
        write_data_head(&mut b, "");
        crate::block::write_empty_block(&mut b, 54479);
        assert_eq!(b, [0x02, 0x00, 0x01, 0x00, 0x02, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00]);
    }
}
