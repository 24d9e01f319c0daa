//! `INSERT INTO t [(columns)] [SETTINGS …] FORMAT CSV|TSV|JSONEachRow` with the
//! data on standard input (or after the format name): parsed client-side
//! into columns of the table's types and sent in blocks of
//! `--insert-batch-rows` rows, so memory stays bounded whatever the input's size.
//!
//! A value that does not parse stops the load with an error naming its line
//! and column; the batch it is in is never sent, and the INSERT is aborted
//! (see [`chnative::BlockInsert`]): the server drops the rows of earlier
//! batches it has not yet written to a part. It writes a part every
//! `min_insert_block_size_rows` (about a million) rows, so an input that
//! fails within its first million rows stores nothing; a longer one may keep
//! the parts written before the error.

use std::io::BufRead;
use std::sync::Arc;

use chnative::row::{ColumnBuffer, ToColumn};
use chnative::{DataType, Value};

use crate::parse::{self, default_value, parse_text};
use crate::split::{words, Word};

/// An input format of `INSERT … FORMAT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InFormat {
    /// TabSeparated.
    Tsv,
    /// TabSeparatedWithNames: the first line names the columns.
    TsvWithNames,
    /// CSV.
    Csv,
    /// CSVWithNames: the first line names the columns.
    CsvWithNames,
    /// JSONEachRow: JSON objects (one or several a line).
    JsonEachRow,
    /// JSONStringsEachRow: JSON objects whose values are strings holding the
    /// values' text.
    JsonStringsEachRow,
    /// Any other format: the data goes to the server as it is, after the
    /// statement, and the server parses it (see [`InsertStatement::head`]).
    Server,
}

impl InFormat {
    fn parse(name: &str) -> Option<InFormat> {
        Some(match name.to_ascii_lowercase().as_str() {
            "tsv" | "tabseparated" => InFormat::Tsv,
            "tsvwithnames" | "tabseparatedwithnames" => InFormat::TsvWithNames,
            "csv" => InFormat::Csv,
            "csvwithnames" => InFormat::CsvWithNames,
            "jsoneachrow" | "jsonlines" | "ndjson" => InFormat::JsonEachRow,
            "jsonstringseachrow" => InFormat::JsonStringsEachRow,
            _ => return None,
        })
    }
}

/// A parsed `INSERT … FORMAT` statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InsertStatement {
    /// The table as written (`db.t`, quoted parts kept).
    pub table: String,
    /// The column list as written, if any.
    pub columns: Vec<String>,
    /// `SETTINGS name = value` of the statement.
    pub settings: Vec<(String, String)>,
    /// The input format.
    pub format: InFormat,
    /// Data written after the format name (else it comes from stdin).
    pub inline: Option<String>,
    /// The statement up to and including the format name (what the server
    /// gets before the data of a [`InFormat::Server`] format).
    pub head: String,
}

fn unquote(w: &str) -> String {
    let b = w.as_bytes();
    if b.len() >= 2 && (b[0] == b'\'' || b[0] == b'"' || b[0] == b'`') && b[b.len() - 1] == b[0] {
        let mut out = String::new();
        let mut chars = w[1..w.len() - 1].chars();
        while let Some(c) = chars.next() {
            if c == '\\' {
                if let Some(e) = chars.next() {
                    out.push(parse::unescape(e as u8) as char);
                }
            } else {
                out.push(c);
            }
        }
        out
    } else {
        w.to_string()
    }
}

/// Recognises `INSERT INTO t … FORMAT X`: `Ok(None)` for any other statement
/// (sent to the server as it is), an error for a FORMAT chn does not read.
pub fn parse_statement(sql: &str) -> Result<Option<InsertStatement>, String> {
    let w = words(sql);
    let is = |k: usize, s: &str| w.get(k).is_some_and(|x| x.text == s);
    if !is(0, "INSERT") || !is(1, "INTO") {
        return Ok(None);
    }
    let mut k = 2;
    if is(k, "FUNCTION") {
        return Ok(None);
    }
    if is(k, "TABLE") {
        k += 1;
    }
    let table_start = k;
    let stop = |x: &Word| ["(", "SETTINGS", "FORMAT", "VALUES", "SELECT", "WITH"].contains(&x.text.as_str());
    while k < w.len() && !stop(&w[k]) {
        k += 1;
    }
    if k == table_start {
        return Ok(None);
    }
    let table = sql[w[table_start].start..w[k - 1].end].trim().to_string();
    let mut columns = Vec::new();
    if is(k, "(") {
        k += 1;
        while k < w.len() && !is(k, ")") {
            if !is(k, ",") {
                columns.push(sql[w[k].start..w[k].end].to_string());
            }
            k += 1;
        }
        k += 1;
    }
    let mut settings = Vec::new();
    if is(k, "SETTINGS") {
        k += 1;
        while k + 2 < w.len() && is(k + 1, "=") {
            let name = sql[w[k].start..w[k].end].to_string();
            settings.push((name, unquote(&sql[w[k + 2].start..w[k + 2].end])));
            k += 3;
            if is(k, ",") {
                k += 1;
            } else {
                break;
            }
        }
    }
    if !is(k, "FORMAT") {
        return Ok(None);
    }
    let Some(name) = w.get(k + 1) else {
        return Err("INSERT … FORMAT needs a format name".into());
    };
    let fname = &sql[name.start..name.end];
    // A format chn does not read: the server parses the data.
    let format = InFormat::parse(fname).unwrap_or(InFormat::Server);
    let head = sql[..name.end].to_string();
    let rest = &sql[name.end..];
    let rest = rest.trim_start_matches([' ', '\t', '\r']);
    let rest = rest.strip_prefix('\n').unwrap_or(rest);
    let inline = (!rest.trim().is_empty()).then(|| {
        let mut d = rest.to_string();
        if !d.ends_with('\n') {
            d.push('\n');
        }
        d
    });
    Ok(Some(InsertStatement { table, columns, settings, format, inline, head }))
}

/// One field as read from the input, before its column's type is applied.
#[derive(Debug)]
enum Field {
    /// `\N` (or JSON null).
    Null,
    /// An empty unquoted CSV field, or a JSON key left out: the column's default.
    Default,
    /// Text (unescaped, unquoted).
    Text(Vec<u8>),
    /// A TabSeparated field as written: a string column resolves its escapes,
    /// an array or tuple reads them as part of its quoted strings.
    Escaped(Vec<u8>),
    /// A JSON value.
    Json(Json),
}

/// A JSON value (numbers kept as their text).
#[derive(Debug, Clone)]
pub enum Json {
    /// null
    Null,
    /// true / false
    Bool(bool),
    /// A number's text.
    Number(String),
    /// A string's bytes.
    Str(Vec<u8>),
    /// A JSONStringsEachRow string: the text of a value of the column's type.
    Text(Vec<u8>),
    /// An array.
    Array(Vec<Json>),
    /// An object, keys in order.
    Object(Vec<(Vec<u8>, Json)>),
}

/// A bad input: where, and why.
#[derive(Debug)]
pub struct InputError {
    /// 1-based line of the input.
    pub line: u64,
    /// 1-based column (field) number and the column's name, when known.
    pub column: Option<(usize, String)>,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "input line {}", self.line)?;
        if let Some((n, name)) = &self.column {
            write!(f, ", column {n} (`{name}`)")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// Reads rows of one format from a byte stream.
pub struct RowReader<R: BufRead> {
    input: R,
    format: InFormat,
    delimiter: u8,
    /// Lines read so far.
    line: u64,
    buf: Vec<u8>,
    /// Rows already parsed from the current line (several JSON objects on one line).
    pending: std::collections::VecDeque<(u64, Row)>,
}

impl<R: BufRead> RowReader<R> {
    /// A reader of `format` rows.
    pub fn new(input: R, format: InFormat, delimiter: u8) -> Self {
        RowReader { input, format, delimiter, line: 0, buf: Vec::new(), pending: Default::default() }
    }

    fn read_line(&mut self) -> std::io::Result<bool> {
        self.buf.clear();
        let n = self.input.read_until(b'\n', &mut self.buf)?;
        if n == 0 {
            return Ok(false);
        }
        self.line += 1;
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
            if self.buf.last() == Some(&b'\r') {
                self.buf.pop();
            }
        }
        Ok(true)
    }

    fn err(&self, line: u64, message: impl Into<String>) -> InputError {
        InputError { line, column: None, message: message.into() }
    }

    /// The next row's fields (by position, or by name for JSON) and the line
    /// it starts on; `None` at the end.
    fn next_row(&mut self) -> Result<Option<(u64, Row)>, InputError> {
        if let Some(r) = self.pending.pop_front() {
            return Ok(Some(r));
        }
        loop {
            let read = self.read_line().map_err(|e| self.err(self.line + 1, format!("reading the input: {e}")))?;
            if !read {
                return Ok(None);
            }
            let line = self.line;
            match self.format {
                InFormat::Server => return Err(self.err(line, "chn does not read this format (the server does)")),
                InFormat::Tsv | InFormat::TsvWithNames => {
                    if self.buf.is_empty() && self.peek_eof() {
                        return Ok(None);
                    }
                    return Ok(Some((line, Row::Positional(tsv_fields(&self.buf)))));
                }
                InFormat::Csv | InFormat::CsvWithNames => {
                    if self.buf.is_empty() {
                        continue;
                    }
                    let fields = self.csv_fields(line)?;
                    return Ok(Some((line, Row::Positional(fields))));
                }
                InFormat::JsonEachRow | InFormat::JsonStringsEachRow => {
                    // One or several objects (the server reads `{…} {…}` and `{…},{…}` on a line), or
                    // the `[` and `]` of an array of them.
                    let strings = self.format == InFormat::JsonStringsEachRow;
                    let mut p = JsonParser { s: &self.buf, i: 0 };
                    loop {
                        p.ws();
                        while p.i < p.s.len() && matches!(p.s[p.i], b',' | b'[' | b']') {
                            p.i += 1;
                            p.ws();
                        }
                        if p.i == p.s.len() {
                            break;
                        }
                        let v = p.value().map_err(|m| self.err(line, m))?;
                        let Json::Object(pairs) = v else {
                            return Err(self.err(line, "a JSONEachRow row must be a JSON object"));
                        };
                        let pairs = if strings {
                            pairs.into_iter().map(|(k, v)| (k, strings_value(v))).collect()
                        } else {
                            pairs
                        };
                        self.pending.push_back((line, Row::Named(pairs)));
                    }
                    if let Some(r) = self.pending.pop_front() {
                        return Ok(Some(r));
                    }
                }
            }
        }
    }

    fn peek_eof(&mut self) -> bool {
        self.input.fill_buf().map(|b| b.is_empty()).unwrap_or(true)
    }

    /// Splits the CSV record starting in `self.buf`, reading more lines while
    /// a quoted field is open.
    fn csv_fields(&mut self, start_line: u64) -> Result<Vec<Field>, InputError> {
        let mut fields = Vec::new();
        let mut i = 0;
        let d = self.delimiter;
        loop {
            // One field at `i`.
            if self.buf.get(i) == Some(&b'"') {
                let mut text = Vec::new();
                i += 1;
                loop {
                    match self.buf.get(i) {
                        Some(b'"') if self.buf.get(i + 1) == Some(&b'"') => {
                            text.push(b'"');
                            i += 2;
                        }
                        Some(b'"') => {
                            i += 1;
                            break;
                        }
                        Some(&c) => {
                            text.push(c);
                            i += 1;
                        }
                        None => {
                            // The field goes on on the next line.
                            let rest = self.buf.len();
                            let mut more = Vec::new();
                            let n = self
                                .input
                                .read_until(b'\n', &mut more)
                                .map_err(|e| self.err(self.line + 1, format!("reading the input: {e}")))?;
                            if n == 0 {
                                return Err(self.err(start_line, "a quoted field is not closed before the end"));
                            }
                            self.line += 1;
                            if more.last() == Some(&b'\n') {
                                more.pop();
                                if more.last() == Some(&b'\r') {
                                    more.pop();
                                }
                            }
                            self.buf.push(b'\n');
                            self.buf.extend_from_slice(&more);
                            i = rest;
                        }
                    }
                }
                fields.push(Field::Text(text));
                match self.buf.get(i) {
                    None => return Ok(fields),
                    Some(&c) if c == d => i += 1,
                    Some(&c) => {
                        return Err(InputError {
                            line: self.line,
                            column: Some((fields.len(), String::new())),
                            message: format!("`{}` after a closing quote (expected `{}`)", c as char, d as char),
                        })
                    }
                }
            } else {
                let end = self.buf[i..].iter().position(|&c| c == d).map_or(self.buf.len(), |p| i + p);
                // Spaces and tabs around an unquoted field are not part of it
                // (the server's input_format_csv_trim_whitespaces = 1).
                let raw = self.buf[i..end].trim_ascii_start();
                let raw = &raw[..raw.len() - raw.iter().rev().take_while(|c| matches!(c, b' ' | b'\t')).count()];
                fields.push(match raw {
                    b"" => Field::Default,
                    b"\\N" => Field::Null,
                    raw => Field::Text(raw.to_vec()),
                });
                if end == self.buf.len() {
                    return Ok(fields);
                }
                i = end + 1;
            }
        }
    }
}

fn tsv_fields(line: &[u8]) -> Vec<Field> {
    line.split(|&c| c == b'\t')
        .map(|raw| if raw == b"\\N" { Field::Null } else { Field::Escaped(raw.to_vec()) })
        .collect()
}

/// A TabSeparated field's text with its backslash escapes resolved.
fn tsv_unescape(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len());
    let mut it = raw.iter();
    while let Some(&c) = it.next() {
        if c == b'\\' {
            match it.next() {
                Some(&e) => out.push(parse::unescape(e)),
                None => out.push(b'\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether a column's text is a bare string (TSV escapes resolved first) rather
/// than a value whose own syntax holds the escapes (an array's quoted strings).
fn is_string_like(ty: &DataType) -> bool {
    match ty {
        DataType::Nullable(t) | DataType::LowCardinality(t) | DataType::SimpleAggregateFunction(_, t) => {
            is_string_like(t)
        }
        DataType::String | DataType::FixedString(_) | DataType::Enum8(_) | DataType::Enum16(_) => true,
        _ => false,
    }
}

fn cannot(text: &[u8], ty: &DataType, why: &str) -> String {
    let shown: String = String::from_utf8_lossy(text).chars().take(80).collect();
    format!("cannot read `{shown}` as {ty}: {why}")
}

/// A row's fields: by position (CSV, TSV) or by key (JSON).
enum Row {
    Positional(Vec<Field>),
    Named(Vec<(Vec<u8>, Json)>),
}

/// Minimal JSON reader (RFC 8259) for JSONEachRow rows.
/// Parses one JSON value (the whole text).
pub fn parse_json(text: &[u8]) -> Result<Json, String> {
    let mut p = JsonParser { s: text, i: 0 };
    let v = p.value()?;
    p.ws();
    if p.i != p.s.len() {
        return Err("text after the JSON value".into());
    }
    Ok(v)
}

struct JsonParser<'a> {
    s: &'a [u8],
    i: usize,
}

impl JsonParser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn value(&mut self) -> Result<Json, String> {
        self.ws();
        let Some(&c) = self.s.get(self.i) else { return Err("the JSON ends early".into()) };
        match c {
            b'{' => {
                self.i += 1;
                let mut pairs = Vec::new();
                self.ws();
                if self.s.get(self.i) == Some(&b'}') {
                    self.i += 1;
                    return Ok(Json::Object(pairs));
                }
                loop {
                    self.ws();
                    if self.s.get(self.i) != Some(&b'"') {
                        return Err(format!("expected a key in quotes at byte {}", self.i + 1));
                    }
                    let k = self.string()?;
                    self.ws();
                    if self.s.get(self.i) != Some(&b':') {
                        return Err(format!("expected `:` at byte {}", self.i + 1));
                    }
                    self.i += 1;
                    let v = self.value()?;
                    pairs.push((k, v));
                    self.ws();
                    match self.s.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            return Ok(Json::Object(pairs));
                        }
                        _ => return Err(format!("expected `,` or `}}` at byte {}", self.i + 1)),
                    }
                }
            }
            b'[' => {
                self.i += 1;
                let mut items = Vec::new();
                self.ws();
                if self.s.get(self.i) == Some(&b']') {
                    self.i += 1;
                    return Ok(Json::Array(items));
                }
                loop {
                    items.push(self.value()?);
                    self.ws();
                    match self.s.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            return Ok(Json::Array(items));
                        }
                        _ => return Err(format!("expected `,` or `]` at byte {}", self.i + 1)),
                    }
                }
            }
            b'"' => Ok(Json::Str(self.string()?)),
            b't' if self.s[self.i..].starts_with(b"true") => {
                self.i += 4;
                Ok(Json::Bool(true))
            }
            b'f' if self.s[self.i..].starts_with(b"false") => {
                self.i += 5;
                Ok(Json::Bool(false))
            }
            b'n' if self.s[self.i..].starts_with(b"null") => {
                self.i += 4;
                Ok(Json::Null)
            }
            b'-' | b'0'..=b'9' => {
                let start = self.i;
                while self.i < self.s.len() && matches!(self.s[self.i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    self.i += 1;
                }
                Ok(Json::Number(String::from_utf8_lossy(&self.s[start..self.i]).into_owned()))
            }
            c => Err(format!("unexpected `{}` at byte {}", c as char, self.i + 1)),
        }
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let h = self.s.get(self.i..self.i + 4).ok_or("a short \\u escape")?;
        self.i += 4;
        u32::from_str_radix(std::str::from_utf8(h).map_err(|_| "a bad \\u escape")?, 16)
            .map_err(|_| "a bad \\u escape".to_string())
    }

    fn string(&mut self) -> Result<Vec<u8>, String> {
        self.i += 1;
        let mut out = Vec::new();
        loop {
            let Some(&c) = self.s.get(self.i) else { return Err("a string is not closed".into()) };
            self.i += 1;
            match c {
                b'"' => return Ok(out),
                b'\\' => {
                    let Some(&e) = self.s.get(self.i) else { return Err("a string is not closed".into()) };
                    self.i += 1;
                    match e {
                        b'u' => {
                            let mut cp = self.hex4()?;
                            if (0xD800..0xDC00).contains(&cp) && self.s[self.i..].starts_with(b"\\u") {
                                self.i += 2;
                                let lo = self.hex4()?;
                                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo.wrapping_sub(0xDC00) & 0x3FF);
                            }
                            let ch = char::from_u32(cp).unwrap_or(char::REPLACEMENT_CHARACTER);
                            let mut b = [0u8; 4];
                            out.extend_from_slice(ch.encode_utf8(&mut b).as_bytes());
                        }
                        e => out.push(parse::unescape(e)),
                    }
                }
                c => out.push(c),
            }
        }
    }
}

/// A JSON value as a value of `ty`, as the server's JSONEachRow reads it
/// (numbers in quotes, numbers into String columns, true/false as 1/0).
/// A JSONStringsEachRow value: a string is the text of the value (read as
/// CSV text would be), null is NULL.
fn strings_value(v: Json) -> Json {
    match v {
        Json::Str(s) => Json::Text(s),
        v => v,
    }
}

/// A JSON value as JSON text (a JSON column's input: the server parses it).
fn json_text(out: &mut Vec<u8>, j: &Json) {
    match j {
        Json::Null => out.extend_from_slice(b"null"),
        Json::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Json::Number(n) => out.extend_from_slice(n.as_bytes()),
        Json::Str(s) | Json::Text(s) => crate::render::write_json_string(out, s, false),
        Json::Array(items) => {
            out.push(b'[');
            for (k, i) in items.iter().enumerate() {
                if k > 0 {
                    out.push(b',');
                }
                json_text(out, i);
            }
            out.push(b']');
        }
        Json::Object(pairs) => {
            out.push(b'{');
            for (k, (key, v)) in pairs.iter().enumerate() {
                if k > 0 {
                    out.push(b',');
                }
                crate::render::write_json_string(out, key, false);
                out.push(b':');
                json_text(out, v);
            }
            out.push(b'}');
        }
    }
}

fn json_value(ty: &DataType, j: &Json, tz: &Arc<str>) -> Result<Value, String> {
    let plain = match ty {
        DataType::LowCardinality(t) | DataType::SimpleAggregateFunction(_, t) => return json_value(t, j, tz),
        t => t,
    };
    match (plain, j) {
        (_, Json::Text(s)) => parse_text(plain, s, tz),
        (DataType::Json(_), j) => {
            let mut text = Vec::new();
            json_text(&mut text, j);
            Ok(Value::String(text))
        }
        (DataType::Nullable(_), Json::Null) => Ok(Value::Null),
        (_, Json::Null) => Ok(default_value(plain, tz)),
        (DataType::Nullable(t), j) => json_value(t, j, tz),
        (DataType::Array(t), Json::Array(items)) => {
            Ok(Value::Array(items.iter().map(|i| json_value(t, i, tz)).collect::<Result<_, _>>()?))
        }
        (DataType::Tuple(elems), Json::Array(items)) if elems.len() == items.len() => {
            Ok(Value::Tuple(elems.iter().zip(items).map(|((_, t), i)| json_value(t, i, tz)).collect::<Result<_, _>>()?))
        }
        (DataType::Tuple(elems), Json::Object(pairs)) => Ok(Value::Tuple(
            elems
                .iter()
                .map(|(name, t)| {
                    match pairs.iter().find(|(k, _)| Some(k.as_slice()) == name.as_ref().map(|n| n.as_bytes())) {
                        Some((_, v)) => json_value(t, v, tz),
                        None => Ok(default_value(t, tz)),
                    }
                })
                .collect::<Result<_, _>>()?,
        )),
        (DataType::Map(kt, vt), Json::Object(pairs)) => Ok(Value::Map(
            pairs
                .iter()
                .map(|(k, v)| Ok((parse_text(kt, k, tz)?, json_value(vt, v, tz)?)))
                .collect::<Result<_, String>>()?,
        )),
        (DataType::Bool, Json::Bool(b)) => Ok(Value::Bool(*b)),
        (t, Json::Bool(b)) if !matches!(t, DataType::String | DataType::FixedString(_)) => {
            parse_text(t, if *b { b"1" } else { b"0" }, tz)
        }
        (t, Json::Bool(b)) => parse_text(t, if *b { b"true" } else { b"false" }, tz),
        (t, Json::Number(n)) => parse_text(t, n.as_bytes(), tz),
        (t, Json::Str(s)) => parse_text(t, s, tz),
        (t, Json::Array(_) | Json::Object(_)) => Err(format!("a JSON array or object where {t} was expected")),
    }
}

/// The target columns: name and type, in the order the INSERT sends them.
pub type Columns = Vec<(String, DataType)>;

/// Fills column buffers from rows, a batch at a time.
pub struct Batcher {
    columns: Columns,
    buffers: Vec<<Value as ToColumn>::Buffer>,
    /// For CSVWithNames/TSVWithNames: the column of each input field.
    order: Option<Vec<usize>>,
    tz: Arc<str>,
}

impl Batcher {
    /// Buffers for `columns` (every type checked first: an unsupported one is
    /// refused before anything is read).
    pub fn new(columns: Columns, tz: Arc<str>) -> Result<Batcher, String> {
        let mut buffers = Vec::with_capacity(columns.len());
        for (name, ty) in &columns {
            if let Some(why) = parse::unsupported(ty) {
                return Err(format!("column `{name}` is {ty}: {why}"));
            }
            buffers.push(<Value as ToColumn>::buffer(ty).map_err(|e| format!("column `{name}`: {e}"))?);
        }
        Ok(Batcher { columns, buffers, order: None, tz })
    }

    /// Rows buffered.
    pub fn len(&self) -> usize {
        self.buffers.first().map_or(0, |b| b.len())
    }

    /// The buffered columns as INSERT data.
    pub fn data(&self) -> Vec<(&str, chnative::InsertData<'_>)> {
        self.columns.iter().zip(&self.buffers).map(|((n, _), b)| (n.as_str(), b.data())).collect()
    }

    /// Empties the buffers (keeping their memory) for the next batch.
    pub fn clear(&mut self) {
        self.buffers.iter_mut().for_each(|b| b.truncate(0));
    }

    /// Bytes buffered.
    pub fn bytes(&self) -> usize {
        self.buffers.iter().map(|b| b.bytes()).sum()
    }

    fn put(&mut self, k: usize, field: &Field, line: u64) -> Result<(), InputError> {
        let (name, ty) = &self.columns[k];
        let at = |message: String| InputError { line, column: Some((k + 1, name.clone())), message };
        let v = match field {
            Field::Null => match ty {
                DataType::Nullable(_) => Value::Null,
                DataType::LowCardinality(t) if matches!(**t, DataType::Nullable(_)) => Value::Null,
                t => default_value(t, &self.tz),
            },
            Field::Default => default_value(ty, &self.tz),
            Field::Escaped(raw) if is_string_like(ty) => {
                let t = tsv_unescape(raw);
                parse_text(ty, &t, &self.tz).map_err(|m| at(cannot(&t, ty, &m)))?
            }
            Field::Text(t) | Field::Escaped(t) => parse_text(ty, t, &self.tz).map_err(|m| at(cannot(t, ty, &m)))?,
            Field::Json(j) => {
                json_value(ty, j, &self.tz).map_err(|m| at(format!("cannot read the value as {ty}: {m}")))?
            }
        };
        v.write_to(&mut self.buffers[k]).map_err(|e| at(e.to_string()))
    }

    /// Appends one row; on error the batch must be dropped (some columns may
    /// hold the row already).
    fn push(&mut self, line: u64, row: Row) -> Result<(), InputError> {
        match row {
            Row::Positional(fields) => {
                let n = self.columns.len();
                if fields.len() != n {
                    return Err(InputError {
                        line,
                        column: None,
                        message: format!(
                            "{} fields, the INSERT has {n} column{}",
                            fields.len(),
                            if n == 1 { "" } else { "s" }
                        ),
                    });
                }
                let order = self.order.clone();
                for (i, f) in fields.iter().enumerate() {
                    let k = order.as_ref().map_or(i, |o| o[i]);
                    self.put(k, f, line)?;
                }
            }
            Row::Named(pairs) => {
                let mut seen = vec![false; self.columns.len()];
                for (key, v) in pairs {
                    // Unknown keys are skipped, as the server does (input_format_skip_unknown_fields = 1).
                    if let Some(k) = self.columns.iter().position(|(n, _)| n.as_bytes() == key.as_slice()) {
                        seen[k] = true;
                        self.put(k, &Field::Json(v), line)?;
                    }
                }
                for (k, s) in seen.iter().enumerate() {
                    if !s {
                        self.put(k, &Field::Default, line)?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// Reads the whole input in batches: `send` gets each full batch (and the
/// last, partial one). A bad row stops the reading with its error; the batch
/// it was in is not sent.
pub async fn load<R: BufRead, F>(
    reader: &mut RowReader<R>,
    batcher: &mut Batcher,
    batch_rows: usize,
    mut send: F,
) -> Result<u64, LoadError>
where
    F: AsyncFnMut(&Batcher) -> Result<(), chnative::Error>,
{
    let mut rows = 0u64;
    if matches!(reader.format, InFormat::CsvWithNames | InFormat::TsvWithNames) {
        let Some((line, Row::Positional(names))) = reader.next_row().map_err(LoadError::Input)? else {
            return Ok(0);
        };
        let mut order = Vec::new();
        for f in &names {
            let n = match f {
                Field::Text(n) => n.clone(),
                Field::Escaped(n) => tsv_unescape(n),
                _ => Vec::new(),
            };
            if n.is_empty() {
                return Err(LoadError::Input(InputError {
                    line,
                    column: None,
                    message: "an empty column name".into(),
                }));
            }
            let k = batcher.columns.iter().position(|(c, _)| *c.as_bytes() == *n).ok_or_else(|| {
                LoadError::Input(InputError {
                    line,
                    column: None,
                    message: format!(
                        "the header names `{}`, which the INSERT has no column for",
                        String::from_utf8_lossy(&n)
                    ),
                })
            })?;
            order.push(k);
        }
        if order.len() != batcher.columns.len() {
            return Err(LoadError::Input(InputError {
                line,
                column: None,
                message: format!("the header names {} columns, the INSERT has {}", order.len(), batcher.columns.len()),
            }));
        }
        batcher.order = Some(order);
    }
    while let Some((line, row)) = reader.next_row().map_err(LoadError::Input)? {
        batcher.push(line, row).map_err(LoadError::Input)?;
        rows += 1;
        if batcher.len() >= batch_rows {
            send(batcher).await.map_err(LoadError::Client)?;
            batcher.clear();
        }
    }
    if batcher.len() > 0 {
        send(batcher).await.map_err(LoadError::Client)?;
        batcher.clear();
    }
    Ok(rows)
}

/// Why a load stopped.
#[derive(Debug)]
pub enum LoadError {
    /// The input is bad.
    Input(InputError),
    /// The server or the connection failed.
    Client(chnative::Error),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_statements() {
        let s =
            parse_statement("INSERT INTO db.`my t` (a, `b c`) SETTINGS async_insert = 0 FORMAT CSV").unwrap().unwrap();
        assert_eq!(s.table, "db.`my t`");
        assert_eq!(s.columns, ["a", "`b c`"]);
        assert_eq!(s.settings, [("async_insert".to_string(), "0".to_string())]);
        assert_eq!(s.format, InFormat::Csv);
        assert_eq!(s.inline, None);
        let s = parse_statement("insert into t format JSONEachRow {\"a\":1}").unwrap().unwrap();
        assert_eq!(s.inline.as_deref(), Some("{\"a\":1}\n"));
        assert_eq!(parse_statement("INSERT INTO t VALUES (1)").unwrap(), None);
        assert_eq!(parse_statement("INSERT INTO t SELECT 1 FORMAT CSV").unwrap(), None);
        assert_eq!(parse_statement("SELECT 1").unwrap(), None);
        // A format chn does not read goes to the server with its data.
        let s = parse_statement("INSERT INTO t FORMAT Values (1)").unwrap().unwrap();
        assert_eq!(
            (s.format, s.head.as_str(), s.inline.as_deref()),
            (InFormat::Server, "INSERT INTO t FORMAT Values", Some("(1)\n"))
        );
    }

    fn rows(format: InFormat, text: &str) -> Result<Vec<Vec<String>>, String> {
        let mut r = RowReader::new(text.as_bytes(), format, b',');
        let mut out = Vec::new();
        while let Some((_, row)) = r.next_row().map_err(|e| e.to_string())? {
            let Row::Positional(fields) = row else { panic!() };
            out.push(
                fields
                    .into_iter()
                    .map(|f| match f {
                        Field::Null => "NULL".to_string(),
                        Field::Default => "DEFAULT".to_string(),
                        Field::Text(t) => String::from_utf8(t).unwrap(),
                        Field::Escaped(t) => String::from_utf8(tsv_unescape(&t)).unwrap(),
                        Field::Json(_) => unreachable!(),
                    })
                    .collect(),
            );
        }
        Ok(out)
    }

    #[test]
    fn csv_and_tsv_fields() {
        assert_eq!(
            rows(InFormat::Csv, "1,\"a,\"\"b\"\"\",\\N,\n\n2,\"multi\nline\",x,y\n").unwrap(),
            [vec!["1", "a,\"b\"", "NULL", "DEFAULT"], vec!["2", "multi\nline", "x", "y"]]
        );
        assert!(rows(InFormat::Csv, "1,\"open\n").unwrap_err().contains("line 1"));
        assert_eq!(rows(InFormat::Tsv, "1\ta\\tb\\\\\t\\N\n").unwrap(), [vec!["1", "a\tb\\", "NULL"]]);
    }
}
