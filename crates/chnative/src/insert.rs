//! The column tier's write side: INSERT from borrowed columns.
//!
//! Columns are checked against the server's header block before any data is
//! sent; each fixed-width column is then copied once, from the caller's slice
//! into the outgoing block.

use chnative_proto::column::write_strings;
use chnative_proto::connection::{BlockSink, Event, Poll};
use chnative_proto::convert::{I256, U256};
use chnative_proto::packet::{BlockKind, Exception, Progress};
use chnative_proto::view::{FixedValue, StrView, WireUuid};
use chnative_proto::wire::WriteExt;
use chnative_proto::{revision, Block, Column, DataType};

use crate::conn::{map_err, new_query_id, Conn, QueryWire};
use crate::error::{Error, Result};
use crate::ident::{check_setting_name, quote_ident, quote_table};
use crate::pool::Target;

/// Column data borrowed for an INSERT.
#[derive(Debug, Clone)]
pub enum InsertData<'a> {
    /// Fixed-width values as their wire bytes.
    Fixed {
        /// `rows × width` little-endian bytes.
        bytes: &'a [u8],
        /// Bytes per row.
        width: usize,
        /// Rust element type, for errors.
        rust: &'static str,
        /// Which ClickHouse types the values may go into.
        accepts: fn(&DataType) -> bool,
    },
    /// FixedString(N) values back to back, `rows × N` bytes (no per-value prefix).
    FixedStrings {
        /// The bytes.
        bytes: &'a [u8],
        /// N.
        width: usize,
    },
    /// Strings from `&str`s.
    Strs(&'a [&'a str]),
    /// Strings from `String`s.
    Strings(&'a [String]),
    /// Strings as end offsets into one blob (the layout a SELECT returns).
    Blob {
        /// u64 end offset of each row.
        offsets: &'a [u64],
        /// All bytes.
        data: &'a [u8],
    },
    /// Nullable: one byte per row (1 = NULL) and the values.
    Nullable {
        /// Null map.
        nulls: &'a [u8],
        /// Values (anything at NULL rows).
        inner: Box<InsertData<'a>>,
    },
    /// Array: u64 end offsets into the flattened elements.
    Array {
        /// End offset per row.
        offsets: &'a [u64],
        /// Elements.
        inner: Box<InsertData<'a>>,
    },
    /// A column read from a SELECT, sent as it is.
    Column(&'a Column),
}

impl<'a> InsertData<'a> {
    /// Nullable data from a null map (1 = NULL) and values.
    pub fn nullable(nulls: &'a [u8], inner: impl IntoInsertData<'a>) -> Self {
        InsertData::Nullable { nulls, inner: Box::new(inner.into_insert_data()) }
    }

    /// FixedString(N) data: `bytes.len()` must be a multiple of `n` (pad short values with NULs).
    pub fn fixed_strings(bytes: &'a [u8], n: usize) -> Self {
        InsertData::FixedStrings { bytes, width: n }
    }

    /// Array data from u64 end offsets and the flattened elements.
    pub fn array(offsets: &'a [u64], inner: impl IntoInsertData<'a>) -> Self {
        InsertData::Array { offsets, inner: Box::new(inner.into_insert_data()) }
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        match self {
            InsertData::Fixed { bytes, width, .. } | InsertData::FixedStrings { bytes, width } => {
                bytes.len() / (*width).max(1)
            }
            InsertData::Strs(s) => s.len(),
            InsertData::Strings(s) => s.len(),
            InsertData::Blob { offsets, .. } | InsertData::Array { offsets, .. } => offsets.len(),
            InsertData::Nullable { nulls, .. } => nulls.len(),
            InsertData::Column(c) => c.rows(),
        }
    }

    /// Checks the data fits a column of type `ty` and returns the type name to send.
    fn wire_type(&self, column: &str, ty: &DataType, type_name: &str) -> Result<String> {
        let mismatch = |requested: &str| Error::TypeMismatch {
            column: column.to_string(),
            requested: requested.to_string(),
            actual: type_name.to_string(),
        };
        let ty_plain = match ty {
            DataType::SimpleAggregateFunction(_, t) => t.as_ref(),
            t => t,
        };
        match self {
            InsertData::Fixed { rust, accepts, .. } => {
                // LowCardinality(T) columns take plain T; the server builds the dictionary.
                let target = match ty_plain {
                    DataType::LowCardinality(t) if accepts(t) => t.as_ref(),
                    t => t,
                };
                if accepts(target) {
                    Ok(target.to_string())
                } else {
                    Err(mismatch(rust))
                }
            }
            InsertData::FixedStrings { width, .. } => match ty_plain {
                DataType::FixedString(n) if n == width => Ok(ty_plain.to_string()),
                DataType::LowCardinality(t) if **t == DataType::FixedString(*width) => Ok(t.to_string()),
                _ => Err(mismatch(&format!("FixedString({width}) bytes"))),
            },
            InsertData::Strs(_) | InsertData::Strings(_) | InsertData::Blob { .. } => match ty_plain {
                DataType::String => Ok("String".into()),
                DataType::LowCardinality(t) if **t == DataType::String => Ok("String".into()),
                _ => Err(mismatch("strings")),
            },
            InsertData::Nullable { inner, .. } => match ty_plain {
                DataType::Nullable(t) => Ok(format!("Nullable({})", inner.wire_type(column, t, type_name)?)),
                DataType::LowCardinality(t) => match t.as_ref() {
                    DataType::Nullable(t) => Ok(format!("Nullable({})", inner.wire_type(column, t, type_name)?)),
                    _ => Err(mismatch("Nullable values")),
                },
                _ => Err(mismatch("Nullable values")),
            },
            InsertData::Array { inner, .. } => match ty_plain {
                DataType::Array(t) => Ok(format!("Array({})", inner.wire_type(column, t, type_name)?)),
                _ => Err(mismatch("arrays")),
            },
            InsertData::Column(c) => {
                let same = c.type_name() == type_name
                    || c.data_type() == ty
                    || matches!(ty, DataType::LowCardinality(t) if **t == *c.data_type());
                if same {
                    Ok(c.type_name().to_string())
                } else {
                    Err(mismatch(c.type_name()))
                }
            }
        }
    }

    /// Validates offsets and lengths so encoding cannot fail half-way.
    fn validate(&self, column: &str) -> Result<()> {
        let bad = |what: &str| Error::Usage(format!("column `{column}`: {what}"));
        match self {
            InsertData::Fixed { bytes, width, .. } | InsertData::FixedStrings { bytes, width }
                if *width == 0 || bytes.len() % width != 0 =>
            {
                return Err(bad("byte length is not a multiple of the value width"));
            }
            InsertData::Blob { offsets, data }
                if !offsets.windows(2).all(|w| w[0] <= w[1])
                    || offsets.last().is_some_and(|&l| l as usize > data.len()) =>
            {
                return Err(bad("string offsets are not monotonic or exceed the data"));
            }
            InsertData::Nullable { nulls, inner } => {
                if inner.rows() != nulls.len() {
                    return Err(bad("null map and values differ in length"));
                }
                inner.validate(column)?;
            }
            InsertData::Array { offsets, inner } => {
                if !offsets.windows(2).all(|w| w[0] <= w[1])
                    || offsets.last().map_or(0, |&l| l as usize) != inner.rows()
                {
                    return Err(bad("array offsets are not monotonic or do not end at the element count"));
                }
                inner.validate(column)?;
            }
            _ => {}
        }
        Ok(())
    }

    /// Rejects values of the right width that the column type cannot hold: Enum8 and
    /// Enum16 values outside the enum, Bool bytes other than 0 and 1 (rows that are
    /// NULL are skipped). The server stores such values unchecked, and then cannot
    /// read the column back ("Unexpected value 5 in enum", code 691) or compares
    /// wrongly (a Bool 2 renders as true but is not `= true`).
    fn check_values(&self, column: &str, ty: &DataType, nulls: Option<&[u8]>) -> Result<()> {
        let ty = match ty {
            DataType::SimpleAggregateFunction(_, t) | DataType::LowCardinality(t) => t.as_ref(),
            t => t,
        };
        let null = |i: usize| nulls.is_some_and(|n| n.get(i).is_some_and(|&b| b != 0));
        let bad = |i: usize, v: i64| Error::Usage(format!("column `{column}`: value #{i} is {v}, not a value of {ty}"));
        match (self, ty) {
            (InsertData::Fixed { bytes, width: 1, .. }, DataType::Enum8(items)) => {
                let mut ok = [false; 256];
                for (_, v) in items {
                    ok[usize::from(*v as u8)] = true;
                }
                if let Some(i) = (0..bytes.len()).find(|&i| !ok[usize::from(bytes[i])] && !null(i)) {
                    return Err(bad(i, i64::from(bytes[i] as i8)));
                }
            }
            (InsertData::Fixed { bytes, width: 2, .. }, DataType::Enum16(items)) => {
                let mut ok: Vec<i16> = items.iter().map(|(_, v)| *v).collect();
                ok.sort_unstable();
                for (i, c) in bytes.chunks_exact(2).enumerate() {
                    let v = i16::from_le_bytes([c[0], c[1]]);
                    if ok.binary_search(&v).is_err() && !null(i) {
                        return Err(bad(i, i64::from(v)));
                    }
                }
            }
            (InsertData::Fixed { bytes, width: 1, .. }, DataType::Bool) => {
                if let Some(i) = (0..bytes.len()).find(|&i| bytes[i] > 1 && !null(i)) {
                    return Err(bad(i, i64::from(bytes[i])));
                }
            }
            (InsertData::Nullable { nulls, inner }, DataType::Nullable(t)) => {
                inner.check_values(column, t, Some(nulls))?
            }
            (InsertData::Array { inner, .. }, DataType::Array(t)) => inner.check_values(column, t, None)?,
            _ => {}
        }
        Ok(())
    }

    /// Encodes rows `lo..hi` (after the type header) for revision `rev`.
    fn encode(&self, lo: usize, hi: usize, out: &mut Vec<u8>, rev: u64) -> Result<()> {
        let sized = rev >= revision::STRING_WITH_SIZE_STREAM;
        match self {
            InsertData::Fixed { bytes, width, .. } | InsertData::FixedStrings { bytes, width } => {
                out.extend_from_slice(&bytes[lo * width..hi * width])
            }
            InsertData::Strs(s) => encode_strs(s[lo..hi].iter().map(|s| s.as_bytes()), hi - lo, out, sized),
            InsertData::Strings(s) => encode_strs(s[lo..hi].iter().map(|s| s.as_bytes()), hi - lo, out, sized),
            InsertData::Blob { offsets, data } => {
                let base = if lo == 0 { 0 } else { offsets[lo - 1] };
                let end = if hi == 0 { 0 } else { offsets[hi - 1] };
                let data = &data[base as usize..end as usize];
                if base == 0 {
                    write_strings(out, &offsets[lo..hi], data, sized)?;
                } else {
                    let rebased: Vec<u64> = offsets[lo..hi].iter().map(|o| o - base).collect();
                    write_strings(out, &rebased, data, sized)?;
                }
            }
            InsertData::Nullable { nulls, inner } => {
                out.extend_from_slice(&nulls[lo..hi]);
                inner.encode(lo, hi, out, rev)?;
            }
            InsertData::Array { offsets, inner } => {
                let base = if lo == 0 { 0 } else { offsets[lo - 1] };
                for o in &offsets[lo..hi] {
                    out.put_u64_le(o - base);
                }
                let end = if hi == 0 { 0 } else { offsets[hi - 1] };
                inner.encode(base as usize, end as usize, out, rev)?;
            }
            InsertData::Column(c) => {
                debug_assert!(lo == 0 && hi == c.rows());
                c.data().write_prefix(out);
                c.data().write_data(out, chnative_proto::column::Layout::for_revision(rev))?;
            }
        }
        Ok(())
    }

    fn splittable(&self) -> bool {
        match self {
            InsertData::Column(_) => false,
            InsertData::Nullable { inner, .. } | InsertData::Array { inner, .. } => inner.splittable(),
            _ => true,
        }
    }
}

fn encode_strs<'s>(items: impl Iterator<Item = &'s [u8]> + Clone, n: usize, out: &mut Vec<u8>, sized: bool) {
    if sized {
        out.reserve(n * 8);
        let mut end = 0u64;
        for s in items.clone() {
            end += s.len() as u64;
            out.put_u64_le(end);
        }
        for s in items {
            out.extend_from_slice(s);
        }
    } else {
        for s in items {
            out.put_string(s);
        }
    }
}

/// Things that can be inserted as a column.
pub trait IntoInsertData<'a> {
    /// Borrows `self` as insert data.
    fn into_insert_data(self) -> InsertData<'a>;
}

impl<'a> IntoInsertData<'a> for InsertData<'a> {
    fn into_insert_data(self) -> InsertData<'a> {
        self
    }
}

/// Borrows a slice of fixed-width values as insert data.
pub fn fixed<T: FixedValue>(values: &[T]) -> InsertData<'_> {
    InsertData::Fixed {
        bytes: bytemuck::cast_slice(values),
        width: std::mem::size_of::<T>(),
        rust: T::RUST_NAME,
        accepts: T::accepts,
    }
}

macro_rules! fixed_insert {
    ($($t:ty),*) => {$(
        impl<'a> IntoInsertData<'a> for &'a [$t] {
            fn into_insert_data(self) -> InsertData<'a> {
                fixed(self)
            }
        }
        impl<'a> IntoInsertData<'a> for &'a Vec<$t> {
            fn into_insert_data(self) -> InsertData<'a> {
                fixed(self.as_slice())
            }
        }
    )*};
}
fixed_insert!(u8, i8, u16, i16, u32, i32, u64, i64, u128, i128, f32, f64, WireUuid, [u8; 16], [u8; 32], I256, U256);

impl<'a> IntoInsertData<'a> for &'a [&'a str] {
    fn into_insert_data(self) -> InsertData<'a> {
        InsertData::Strs(self)
    }
}

impl<'a> IntoInsertData<'a> for &'a Vec<&'a str> {
    fn into_insert_data(self) -> InsertData<'a> {
        InsertData::Strs(self)
    }
}

impl<'a> IntoInsertData<'a> for &'a [String] {
    fn into_insert_data(self) -> InsertData<'a> {
        InsertData::Strings(self)
    }
}

impl<'a> IntoInsertData<'a> for &'a Vec<String> {
    fn into_insert_data(self) -> InsertData<'a> {
        InsertData::Strings(self)
    }
}

impl<'a> IntoInsertData<'a> for StrView<'a> {
    fn into_insert_data(self) -> InsertData<'a> {
        InsertData::Blob { offsets: self.offsets(), data: self.blob() }
    }
}

impl<'a> IntoInsertData<'a> for &'a Column {
    fn into_insert_data(self) -> InsertData<'a> {
        InsertData::Column(self)
    }
}

/// What an INSERT did.
#[derive(Debug, Clone, Copy, Default)]
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
}

/// An INSERT being assembled: `client.insert("t").column("a", &a[..]).send().await`.
pub struct Insert<'c, 'a> {
    conn: Target<'c>,
    table: String,
    columns: Vec<(String, InsertData<'a>)>,
    settings: Vec<(String, String, u64)>,
    allow_missing: bool,
    error: Option<Error>,
    trace: Option<crate::trace::TraceContext>,
    observer: crate::observe::ObserverSlot,
}

/// Columns with a default expression, from a TableColumns description.
fn columns_with_defaults(description: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    for line in description.lines().skip(2) {
        let mut parts = line.split('\t');
        let head = parts.next().unwrap_or("");
        let name = if let Some(rest) = head.strip_prefix('`') {
            let mut name = String::new();
            let mut chars = rest.chars();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => name.extend(chars.next()),
                    '`' => break,
                    c => name.push(c),
                }
            }
            name
        } else {
            head.split(' ').next().unwrap_or("").to_string()
        };
        let has_default = matches!(parts.next(), Some("DEFAULT" | "MATERIALIZED" | "ALIAS" | "EPHEMERAL"));
        out.push((name, has_default));
    }
    out
}

impl<'c, 'a> Insert<'c, 'a> {
    pub(crate) fn new(conn: Target<'c>, table: &str) -> Self {
        Insert {
            conn,
            table: table.to_string(),
            columns: Vec::new(),
            settings: Vec::new(),
            allow_missing: false,
            error: None,
            trace: None,
            observer: Default::default(),
        }
    }

    /// Adds a column by name.
    pub fn column(mut self, name: &str, data: impl IntoInsertData<'a>) -> Self {
        if self.columns.iter().any(|(n, _)| n == name) {
            self.error.get_or_insert(Error::Usage(format!("column `{name}` given twice")));
        }
        self.columns.push((name.to_string(), data.into_insert_data()));
        self
    }

    /// Adds every column of a block (e.g. one read from a SELECT), unchanged.
    pub fn block(mut self, block: &'a Block) -> Self {
        for c in block.columns() {
            self = self.column(c.name(), c);
        }
        self
    }

    /// A server setting for this INSERT only.
    pub fn setting(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        let name = name.into();
        if let Err(e) = check_setting_name(&name) {
            self.error.get_or_insert(e);
        }
        self.settings.push((name, value.into(), chnative_proto::packet::SETTING_IMPORTANT));
        self
    }

    /// Sets `insert_deduplication_token`: a retried INSERT with the same token is
    /// stored once (on tables that deduplicate).
    ///
    /// The server keys deduplication on the token *and* the sequence of Data
    /// packets, so a retry must send the same rows split the same way (same
    /// [`crate::Config::insert_block_rows`]).
    pub fn deduplication_token(self, token: impl Into<String>) -> Self {
        self.setting("insert_deduplication_token", token)
    }

    /// Continues this W3C trace on the server (sent in ClientInfo).
    pub fn trace_context(mut self, trace: crate::trace::TraceContext) -> Self {
        self.trace = Some(trace);
        self
    }

    /// Watches the INSERT's progress and profile events as it runs.
    pub fn observer(mut self, observer: impl crate::observe::Observer + 'static) -> Self {
        self.observer = crate::observe::ObserverSlot(Some(std::sync::Arc::new(observer)));
        self
    }

    /// Lets table columns without a DEFAULT expression be left out (they get
    /// their type's default value). Without this, leaving one out is an error.
    pub fn allow_missing_columns(mut self) -> Self {
        self.allow_missing = true;
        self
    }

    /// Sends the data and waits for the server to confirm.
    pub async fn send(self) -> Result<InsertSummary> {
        let id = new_query_id();
        let mut span = crate::trace::OpSpan::insert(&id);
        let res = tracing::Instrument::instrument(self.send_as(id), span.span().clone()).await;
        match &res {
            Ok(s) => span.finish(Some(s.rows), s.progress.written_bytes, "ok"),
            Err(_) => span.finish(None, 0, "error"),
        }
        res
    }

    async fn send_as(self, id: String) -> Result<InsertSummary> {
        let Insert { conn: slot, table, columns, mut settings, allow_missing, error, trace, observer } = self;
        if let Some(e) = error {
            return Err(e);
        }
        if columns.is_empty() {
            return Err(Error::Usage("an INSERT needs at least one column".into()));
        }
        let rows = columns[0].1.rows();
        for (name, data) in &columns {
            if data.rows() != rows {
                return Err(Error::Usage(format!(
                    "column `{name}` has {} rows, `{}` has {rows}",
                    data.rows(),
                    columns[0].0
                )));
            }
            data.validate(name)?;
        }
        let list: Vec<String> = columns.iter().map(|(n, _)| quote_ident(n)).collect();
        let sql = format!("INSERT INTO {} ({}) VALUES", quote_table(&table)?, list.join(", "));
        if !settings.iter().any(|(k, _, _)| k == "async_insert") {
            // Synchronous by default so that a returned INSERT is stored and
            // deduplication tokens apply as documented.
            settings.push(("async_insert".into(), "0".into(), 0));
        }
        let q = QueryWire { id, sql, settings, params: Vec::new(), trace: trace.map(|t| t.0) };
        // A pooled connection is held until `send` ends; dropped halfway, the
        // lease finishes or closes it (see pool.rs).
        let mut lease;
        let slot = match slot {
            Target::Slot(s) => s,
            Target::Pool(pool) => {
                lease = pool.acquire().await?;
                &mut lease.slot
            }
        };
        let conn: &mut Conn = slot.get().await?;
        conn.send_query(&q, true).await?;

        // Wait for the header; the server describes the table first.
        let mut described: Vec<(String, bool)> = Vec::new();
        let mut sink = InsertBlocks { observer, ..InsertBlocks::default() };
        loop {
            match conn.next_event(&mut sink).await? {
                Event::TableColumns { description, .. } => described = columns_with_defaults(&description),
                Event::Header => break,
                Event::ProfileEvents => sink.count_written(),
                Event::Exception(e) => return Err(Error::Server(e.into())),
                Event::EndOfStream => return Err(Error::Usage("the server sent no INSERT header".into())),
                _ => {}
            }
        }

        let checked = check_against_header(&columns, &sink.header, &described, allow_missing);
        sink.header.recycle(conn.proto.pool());
        let wire_types = match checked {
            Ok(t) => t,
            Err(e) => {
                // End the INSERT cleanly with no data so the connection stays usable.
                conn.proto.end_data().map_err(map_err)?;
                finish_insert(conn, &mut sink).await?;
                return Err(e);
            }
        };

        let step = if columns.iter().all(|(_, d)| d.splittable()) { conn.cfg.insert_block_rows } else { rows.max(1) };
        let mut blocks = 0u64;
        let mut lo = 0usize;
        while lo < rows {
            let hi = (lo + step).min(rows);
            let res = conn.proto.send_data(|stage: &mut Vec<u8>, rev| -> Result<()> {
                chnative_proto::BlockInfo::default().write(stage, rev);
                stage.put_varuint(columns.len() as u64);
                stage.put_varuint((hi - lo) as u64);
                for ((name, data), ty) in columns.iter().zip(&wire_types) {
                    stage.put_string(name);
                    stage.put_string(ty);
                    if rev >= revision::CUSTOM_SERIALIZATION {
                        stage.put_u8(0);
                    }
                    data.encode(lo, hi, stage, rev)?;
                }
                Ok(())
            });
            if let Err(e) = res {
                // Blocks already sent cannot be taken back: the INSERT must not end.
                return Err(conn.poison(e));
            }
            if let Some(e) = send_watching(conn, &mut sink).await? {
                // The server refused the data; the machine queued the end of
                // data the server now waits for, so the connection stays usable.
                conn.write_out().await?;
                return Err(Error::Server(e.into()));
            }
            blocks += 1;
            lo = hi;
        }
        conn.proto.end_data().map_err(map_err)?;
        let mut progress = finish_insert(conn, &mut sink).await?;
        if progress.written_rows == 0 {
            progress.written_rows = sink.written_rows;
            progress.written_bytes = sink.written_bytes;
        }
        Ok(InsertSummary { rows: rows as u64, blocks, progress })
    }
}

/// The blocks an INSERT lends the connection: the table's header, and the
/// profile events that count the rows the server wrote.
#[derive(Default)]
struct InsertBlocks {
    header: Block,
    profile_events: Block,
    written_rows: u64,
    written_bytes: u64,
    observer: crate::observe::ObserverSlot,
}

impl BlockSink for InsertBlocks {
    fn block(&mut self, kind: BlockKind) -> Option<&mut Block> {
        match kind {
            BlockKind::Data => Some(&mut self.header),
            BlockKind::ProfileEvents => Some(&mut self.profile_events),
            _ => None,
        }
    }
}

impl InsertBlocks {
    /// Adds the InsertedRows / InsertedBytes increments of a ProfileEvents block.
    fn count_written(&mut self) {
        if let Some(o) = &self.observer.0 {
            o.profile_events(&self.profile_events);
        }
        let (rows, bytes) = inserted_counters(&self.profile_events);
        self.written_rows += rows;
        self.written_bytes += bytes;
    }
}

/// The InsertedRows and InsertedBytes increments in a ProfileEvents block
/// (columns `type` Enum8, 1 = increment; `name` String; `value` Int64; other
/// rows are other counters). 26.9 sends one row per counter, thread 0.
fn inserted_counters(block: &Block) -> (u64, u64) {
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
            b"InsertedRows" => out.0 += v,
            b"InsertedBytes" => out.1 += v,
            _ => {}
        }
    }
    out
}

/// Writes the queued Data packet while watching for what the server sends
/// meanwhile; stops at the first Exception (the rest of the packet and the end
/// of data still go out, see the caller).
async fn send_watching(conn: &mut Conn, sink: &mut InsertBlocks) -> Result<Option<Exception>> {
    loop {
        conn.read_now()?;
        while conn.proto.buffered() > 0 {
            match conn.proto.poll(sink).map_err(map_err)? {
                Poll::Event(Event::Exception(e)) => return Ok(Some(e)),
                Poll::Event(Event::ProfileEvents) => sink.count_written(),
                Poll::Event(_) => {}
                Poll::NeedInput { .. } | Poll::Idle => break,
            }
        }
        if !conn.proto.has_output() {
            return Ok(None);
        }
        conn.write_some().await?;
    }
}

fn check_against_header(
    columns: &[(String, InsertData<'_>)],
    header: &Block,
    described: &[(String, bool)],
    allow_missing: bool,
) -> Result<Vec<String>> {
    let mut types = Vec::with_capacity(columns.len());
    for (name, data) in columns {
        let h = header.column(name).ok_or_else(|| Error::Usage(format!("table has no column `{name}`")))?;
        types.push(data.wire_type(name, h.data_type(), h.type_name())?);
        data.check_values(name, h.data_type(), None)?;
    }
    if !allow_missing {
        let missing: Vec<&str> = described
            .iter()
            .filter(|(n, has_default)| !has_default && !columns.iter().any(|(c, _)| c == n))
            .map(|(n, _)| n.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(Error::Usage(format!(
                "missing column(s) without a DEFAULT: {} (use allow_missing_columns() to insert type defaults)",
                missing.join(", ")
            )));
        }
    }
    Ok(types)
}

async fn finish_insert(conn: &mut Conn, sink: &mut InsertBlocks) -> Result<Progress> {
    let mut progress = Progress::default();
    loop {
        match conn.next_event(sink).await? {
            Event::EndOfStream => return Ok(progress),
            Event::Exception(e) => return Err(Error::Server(e.into())),
            Event::Progress(p) => {
                progress.accumulate(&p);
                if let Some(o) = &sink.observer.0 {
                    o.progress(&p, &progress);
                }
            }
            Event::ProfileEvents => sink.count_written(),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_columns_description() {
        let d = "columns format version: 1\n3 columns:\n`id` UInt64\n`a b` String\tDEFAULT\t'x'\n`m` UInt8\tMATERIALIZED\t1\n";
        assert_eq!(
            columns_with_defaults(d),
            vec![("id".to_string(), false), ("a b".to_string(), true), ("m".to_string(), true)]
        );
    }
}
