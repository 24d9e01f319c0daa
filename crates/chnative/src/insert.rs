//! The column tier's write side: INSERT from borrowed columns.
//!
//! Columns are checked against the server's header block before any data is
//! sent; the data, its type rules and its encoding are
//! [`chnative_proto::insert`]'s.

pub use chnative_proto::insert::{fixed, InsertData, IntoInsertData};
use chnative_proto::insert::{InsertColumns, TypedInsert};
use chnative_proto::packet::{BlockKind, Progress, ServerPacket};
use chnative_proto::Block;

use crate::conn::{new_query_id, Conn, ConnSlot, Pending, QueryWire};
use crate::error::{Error, Result};

/// What an INSERT did.
#[derive(Debug, Clone, Copy, Default)]
pub struct InsertSummary {
    /// Rows sent.
    pub rows: u64,
    /// Data packets sent.
    pub blocks: u64,
    /// Progress counters the server sent. ClickHouse 26.9 sends none for an
    /// INSERT whose data comes from the client, so expect zeros there.
    pub progress: Progress,
}

/// An INSERT being assembled: `client.insert("t").column("a", &a[..]).send().await`.
pub struct Insert<'c, 'a> {
    conn: &'c mut ConnSlot,
    table: String,
    columns: Vec<(String, InsertData<'a>)>,
    settings: Vec<(String, String, u64)>,
    allow_missing: bool,
    error: Option<Error>,
}

fn quote_ident(name: &str) -> String {
    let mut s = String::with_capacity(name.len() + 2);
    s.push('`');
    for c in name.chars() {
        if c == '`' || c == '\\' {
            s.push('\\');
        }
        s.push(c);
    }
    s.push('`');
    s
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
    pub(crate) fn new(conn: &'c mut ConnSlot, table: &str) -> Self {
        Insert {
            conn,
            table: table.to_string(),
            columns: Vec::new(),
            settings: Vec::new(),
            allow_missing: false,
            error: None,
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
        self.settings.push((name.into(), value.into(), chnative_proto::packet::SETTING_IMPORTANT));
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

    /// Lets table columns without a DEFAULT expression be left out (they get
    /// their type's default value). Without this, leaving one out is an error.
    pub fn allow_missing_columns(mut self) -> Self {
        self.allow_missing = true;
        self
    }

    /// Sends the data and waits for the server to confirm.
    pub async fn send(self) -> Result<InsertSummary> {
        let Insert { conn: slot, table, columns, mut settings, allow_missing, error } = self;
        if let Some(e) = error {
            return Err(e);
        }
        if columns.is_empty() {
            return Err(Error::Usage("an INSERT needs at least one column".into()));
        }
        let checked = InsertColumns::new(&columns)?;
        let rows = checked.rows();
        let list: Vec<String> = columns.iter().map(|(n, _)| quote_ident(n)).collect();
        let sql = format!("INSERT INTO {table} ({}) VALUES", list.join(", "));
        if !settings.iter().any(|(k, _, _)| k == "async_insert") {
            // Synchronous by default so that a returned INSERT is stored and
            // deduplication tokens apply as documented.
            settings.push(("async_insert".into(), "0".into(), 0));
        }
        let q = QueryWire { id: new_query_id(), sql, settings, params: Vec::new() };
        let conn: &mut Conn = slot.get().await?;
        conn.send_query(&q).await?;

        // Wait for the header; the server describes the table first.
        let mut described: Vec<(String, bool)> = Vec::new();
        let mut header = Block::new();
        loop {
            match conn.read_packet().await? {
                ServerPacket::TableColumns { description, .. } => described = columns_with_defaults(&description),
                ServerPacket::Block { kind: BlockKind::Data, .. } => {
                    conn.read_block(BlockKind::Data, &mut header).await?;
                    break;
                }
                ServerPacket::Block { kind, .. } => conn.skip_block(kind).await?,
                ServerPacket::Progress(_) | ServerPacket::TimezoneUpdate(_) => {}
                ServerPacket::Exception(e) => {
                    conn.pending = Pending::Nothing;
                    return Err(Error::Server(e.into()));
                }
                ServerPacket::EndOfStream => {
                    conn.pending = Pending::Nothing;
                    return Err(Error::Usage("the server sent no INSERT header".into()));
                }
                other => {
                    return Err(conn.poison(Error::Protocol(chnative_proto::ProtoError::violation(format!(
                        "unexpected packet before the INSERT header: {other:?}"
                    )))))
                }
            }
        }

        let checked = check_against_header(checked, &header, &described, allow_missing);
        header.recycle(&mut conn.pool);
        let typed = match checked {
            Ok(t) => t,
            Err(e) => {
                // End the INSERT cleanly with no data so the connection stays usable.
                conn.put_empty_data()?;
                conn.flush().await?;
                finish_insert(conn).await?;
                return Err(e);
            }
        };

        let step = if typed.splittable() { conn.cfg.insert_block_rows } else { rows.max(1) };
        let rev = conn.revision;
        let mut blocks = 0u64;
        let mut lo = 0usize;
        while lo < rows {
            let hi = (lo + step).min(rows);
            let mut stage = std::mem::take(&mut conn.stage);
            stage.clear();
            let res = typed.write_block(&mut stage, rev, lo, hi).map_err(Error::from);
            let res = res.and_then(|_| conn.put_data_packet("", &stage));
            conn.stage = stage;
            if let Err(e) = res {
                return Err(conn.poison(e));
            }
            conn.flush().await?;
            blocks += 1;
            lo = hi;
        }
        conn.put_empty_data()?;
        conn.flush().await?;
        let progress = finish_insert(conn).await?;
        Ok(InsertSummary { rows: rows as u64, blocks, progress })
    }
}

fn check_against_header<'s, 'a>(
    checked: InsertColumns<'s, 'a>,
    header: &Block,
    described: &[(String, bool)],
    allow_missing: bool,
) -> Result<TypedInsert<'s, 'a>> {
    let typed = checked.with_header(header)?;
    if !allow_missing {
        let missing: Vec<&str> = described
            .iter()
            .filter(|(n, has_default)| !has_default && !typed.has_column(n))
            .map(|(n, _)| n.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(Error::Usage(format!(
                "missing column(s) without a DEFAULT: {} (use allow_missing_columns() to insert type defaults)",
                missing.join(", ")
            )));
        }
    }
    Ok(typed)
}

async fn finish_insert(conn: &mut Conn) -> Result<Progress> {
    let mut progress = Progress::default();
    loop {
        match conn.read_packet().await? {
            ServerPacket::EndOfStream => {
                conn.pending = Pending::Nothing;
                return Ok(progress);
            }
            ServerPacket::Exception(e) => {
                conn.pending = Pending::Nothing;
                return Err(Error::Server(e.into()));
            }
            ServerPacket::Progress(p) => progress.accumulate(&p),
            ServerPacket::Block { kind, .. } => conn.skip_block(kind).await?,
            ServerPacket::TableColumns { .. } | ServerPacket::TimezoneUpdate(_) | ServerPacket::ProfileInfo(_) => {}
            other => {
                return Err(conn.poison(Error::Protocol(chnative_proto::ProtoError::violation(format!(
                    "unexpected packet after INSERT data: {other:?}"
                )))))
            }
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
