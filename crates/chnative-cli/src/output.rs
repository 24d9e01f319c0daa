//! Output formats: each block is written as it arrives (Pretty holds up to
//! [`PRETTY_MAX_ROWS`] rows to size its columns, then prints them).

use std::io::Write;

use chnative::proto::StrView;
use chnative::row::{ReadContext, Reader};
use chnative::{Block, DataType, Value};
use unicode_width::UnicodeWidthStr;

use crate::render::{self, FormatSettings};

/// Rows a Pretty table holds before it is printed (the next rows start a new table).
pub const PRETTY_MAX_ROWS: usize = 10_000;
/// The output buffer is written out when it holds this much.
const FLUSH_AT: usize = 1 << 20;

/// An output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// TabSeparated.
    Tsv,
    /// TabSeparatedWithNames.
    TsvWithNames,
    /// TabSeparatedWithNamesAndTypes.
    TsvWithNamesAndTypes,
    /// CSV.
    Csv,
    /// CSVWithNames.
    CsvWithNames,
    /// JSONEachRow.
    JsonEachRow,
    /// Vertical.
    Vertical,
    /// Pretty.
    Pretty,
    /// PrettyCompact.
    PrettyCompact,
    /// Null: nothing is written.
    Null,
}

impl Format {
    /// Parses a format name as the server spells it (any case), with the usual aliases.
    pub fn parse(name: &str) -> Option<Format> {
        Some(match name.to_ascii_lowercase().as_str() {
            "tsv" | "tabseparated" => Format::Tsv,
            "tsvwithnames" | "tabseparatedwithnames" => Format::TsvWithNames,
            "tsvwithnamesandtypes" | "tabseparatedwithnamesandtypes" => Format::TsvWithNamesAndTypes,
            "csv" => Format::Csv,
            "csvwithnames" => Format::CsvWithNames,
            "jsoneachrow" | "jsonlines" | "ndjson" => Format::JsonEachRow,
            "vertical" => Format::Vertical,
            "pretty" => Format::Pretty,
            "prettycompact" => Format::PrettyCompact,
            "null" => Format::Null,
            _ => return None,
        })
    }

    /// The names `--format` takes.
    pub const NAMES: &'static str = "TSV (TabSeparated), TSVWithNames, TSVWithNamesAndTypes, CSV, CSVWithNames, \
                                     JSONEachRow, Vertical, Pretty, PrettyCompact, Null";
}

/// One column of a block, resolved once: the common types read straight from
/// the column, the others through the library's dynamic [`Value`].
enum Col<'a> {
    U8(&'a [u8]),
    U16(&'a [u16]),
    U32(&'a [u32]),
    U64(&'a [u64]),
    I8(&'a [i8]),
    I16(&'a [i16]),
    I32(&'a [i32]),
    I64(&'a [i64]),
    Str(StrView<'a>),
    Any(Reader<'a, Value>),
}

impl<'a> Col<'a> {
    fn new(col: &'a chnative::Column, ctx: &ReadContext) -> chnative::Result<Col<'a>> {
        let view = col.view();
        Ok(match col.data_type() {
            DataType::UInt8 => Col::U8(view.values()?),
            DataType::UInt16 => Col::U16(view.values()?),
            DataType::UInt32 => Col::U32(view.values()?),
            DataType::UInt64 => Col::U64(view.values()?),
            DataType::Int8 => Col::I8(view.values()?),
            DataType::Int16 => Col::I16(view.values()?),
            DataType::Int32 => Col::I32(view.values()?),
            DataType::Int64 => Col::I64(view.values()?),
            DataType::String => Col::Str(view.as_strings()?),
            _ => Col::Any(Reader::new(&view, ctx)?),
        })
    }

    /// An integer cell (the fast path), or `None` for the other kinds.
    #[inline]
    fn int(&self, i: usize) -> Option<Result<i128, ()>> {
        let get = |o: Option<i128>| Some(o.ok_or(()));
        match self {
            Col::U8(v) => get(v.get(i).map(|&x| x.into())),
            Col::U16(v) => get(v.get(i).map(|&x| x.into())),
            Col::U32(v) => get(v.get(i).map(|&x| x.into())),
            Col::U64(v) => get(v.get(i).map(|&x| x.into())),
            Col::I8(v) => get(v.get(i).map(|&x| x.into())),
            Col::I16(v) => get(v.get(i).map(|&x| x.into())),
            Col::I32(v) => get(v.get(i).map(|&x| x.into())),
            Col::I64(v) => get(v.get(i).map(|&x| x.into())),
            _ => None,
        }
    }

    fn is_64bit(&self) -> bool {
        matches!(self, Col::U64(_) | Col::I64(_))
    }

    /// The value of row `i` as a dynamic [`Value`].
    fn value(&self, i: usize) -> chnative::Result<Value> {
        let oob = || bad_row(i);
        Ok(match self {
            Col::U8(v) => Value::UInt8(*v.get(i).ok_or_else(oob)?),
            Col::U16(v) => Value::UInt16(*v.get(i).ok_or_else(oob)?),
            Col::U32(v) => Value::UInt32(*v.get(i).ok_or_else(oob)?),
            Col::U64(v) => Value::UInt64(*v.get(i).ok_or_else(oob)?),
            Col::I8(v) => Value::Int8(*v.get(i).ok_or_else(oob)?),
            Col::I16(v) => Value::Int16(*v.get(i).ok_or_else(oob)?),
            Col::I32(v) => Value::Int32(*v.get(i).ok_or_else(oob)?),
            Col::I64(v) => Value::Int64(*v.get(i).ok_or_else(oob)?),
            Col::Str(s) => {
                if i >= s.len() {
                    return Err(oob());
                }
                Value::String(s.bytes(i).to_vec())
            }
            Col::Any(r) => r.get(i)?,
        })
    }

    fn str_bytes(&self, i: usize) -> Option<&'a [u8]> {
        match self {
            Col::Str(s) if i < s.len() => Some(s.bytes(i)),
            _ => None,
        }
    }
}

fn write_int(out: &mut Vec<u8>, x: i128) {
    if let Ok(u) = u64::try_from(x) {
        render::write_u64(out, u);
    } else {
        render::write_i64(out, x as i64);
    }
}

/// Where the rows go, in one format.
pub struct Output<W: Write> {
    format: Format,
    settings: FormatSettings,
    ctx: ReadContext,
    out: W,
    buf: Vec<u8>,
    started: bool,
    /// Rows written so far (Vertical's and Pretty's row numbers).
    rows: u64,
    pretty: Option<Pretty>,
    /// The terminal's width, for Pretty (`None`: not a terminal, no limit).
    width: Option<usize>,
}

impl<W: Write> Output<W> {
    /// An output in `format` writing to `out`; `server_tz` is the zone of
    /// DateTime columns that name none.
    pub fn new(format: Format, settings: FormatSettings, server_tz: &str, out: W, width: Option<usize>) -> Self {
        Output {
            format,
            settings,
            ctx: ReadContext { server_timezone: server_tz.to_string() },
            out,
            buf: Vec::with_capacity(FLUSH_AT + 4096),
            started: false,
            rows: 0,
            pretty: None,
            width,
        }
    }

    /// Rows written.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Writes what the format puts before the rows (names, types), once.
    pub fn begin(&mut self, header: &Block) -> std::io::Result<()> {
        if self.started {
            return Ok(());
        }
        self.started = true;
        let names = || header.columns().iter().map(|c| c.name_bytes());
        match self.format {
            Format::TsvWithNames | Format::TsvWithNamesAndTypes => {
                self.line(names(), render::write_escaped, b'\t');
                if self.format == Format::TsvWithNamesAndTypes {
                    let types: Vec<&[u8]> = header.columns().iter().map(|c| c.type_name().as_bytes()).collect();
                    self.line(types.into_iter(), render::write_escaped, b'\t');
                }
            }
            Format::CsvWithNames => {
                // A bare Tuple is one CSV field per element, and so is its name.
                let mut flat = Vec::new();
                for c in header.columns() {
                    flatten_tuple_names(c.name(), c.data_type(), &mut flat);
                }
                let d = self.settings.csv_delimiter;
                self.line(flat.iter().map(|n| n.as_bytes()), render::write_csv_string, d);
            }
            Format::Pretty | Format::PrettyCompact => {
                self.pretty = Some(Pretty::new(header, self.format == Format::PrettyCompact));
            }
            _ => {}
        }
        self.flush_if_full()
    }

    fn line<'n>(&mut self, items: impl Iterator<Item = &'n [u8]>, f: impl Fn(&mut Vec<u8>, &[u8]), sep: u8) {
        for (k, item) in items.enumerate() {
            if k > 0 {
                self.buf.push(sep);
            }
            f(&mut self.buf, item);
        }
        self.buf.push(b'\n');
    }

    /// Writes the rows of one block.
    pub fn block(&mut self, block: &Block) -> anyhow_like::Result<()> {
        self.begin(block)?;
        if self.format == Format::Null || block.rows() == 0 {
            return Ok(());
        }
        let cols: Vec<Col<'_>> = block.columns().iter().map(|c| Col::new(c, &self.ctx)).collect::<Result<_, _>>()?;
        let types: Vec<&DataType> = block.columns().iter().map(|c| c.data_type()).collect();
        let names: Vec<&str> = block.columns().iter().map(|c| c.name()).collect();
        let n = block.rows();
        match self.format {
            Format::Tsv | Format::TsvWithNames | Format::TsvWithNamesAndTypes => {
                for i in 0..n {
                    for (k, c) in cols.iter().enumerate() {
                        if k > 0 {
                            self.buf.push(b'\t');
                        }
                        if let Some(x) = c.int(i) {
                            write_int(&mut self.buf, x.map_err(|()| bad_row(i))?);
                        } else if let Some(b) = c.str_bytes(i) {
                            render::write_escaped(&mut self.buf, b);
                        } else {
                            render::write_tsv(&mut self.buf, &c.value(i)?);
                        }
                    }
                    self.buf.push(b'\n');
                    self.flush_if_full()?;
                }
            }
            Format::Csv | Format::CsvWithNames => {
                let d = self.settings.csv_delimiter;
                for i in 0..n {
                    for (k, c) in cols.iter().enumerate() {
                        if k > 0 {
                            self.buf.push(d);
                        }
                        if let Some(x) = c.int(i) {
                            write_int(&mut self.buf, x.map_err(|()| bad_row(i))?);
                        } else if let Some(b) = c.str_bytes(i) {
                            render::write_csv_string(&mut self.buf, b);
                        } else {
                            render::write_csv(&mut self.buf, &c.value(i)?, d);
                        }
                    }
                    self.buf.push(b'\n');
                    self.flush_if_full()?;
                }
            }
            Format::JsonEachRow => {
                let keys: Vec<Vec<u8>> = names
                    .iter()
                    .map(|name| {
                        let mut k = Vec::new();
                        render::write_json_string(&mut k, name.as_bytes(), self.settings.json_escape_forward_slashes);
                        k.push(b':');
                        k
                    })
                    .collect();
                for i in 0..n {
                    self.buf.push(b'{');
                    for (k, c) in cols.iter().enumerate() {
                        if k > 0 {
                            self.buf.push(b',');
                        }
                        self.buf.extend_from_slice(&keys[k]);
                        if let Some(x) = c.int(i) {
                            let q = c.is_64bit() && self.settings.json_quote_64bit_integers;
                            if q {
                                self.buf.push(b'"');
                            }
                            write_int(&mut self.buf, x.map_err(|()| bad_row(i))?);
                            if q {
                                self.buf.push(b'"');
                            }
                        } else if let Some(b) = c.str_bytes(i) {
                            render::write_json_string(&mut self.buf, b, self.settings.json_escape_forward_slashes);
                        } else {
                            render::write_json(&mut self.buf, &c.value(i)?, Some(types[k]), &self.settings);
                        }
                    }
                    self.buf.extend_from_slice(b"}\n");
                    self.flush_if_full()?;
                }
            }
            Format::Vertical => {
                let width = names.iter().map(|n| n.width()).max().unwrap_or(0);
                for i in 0..n {
                    if self.rows > 0 || i > 0 {
                        self.buf.push(b'\n');
                    }
                    let number = self.rows + i as u64 + 1;
                    self.buf.extend_from_slice(format!("Row {number}:\n").as_bytes());
                    // The server's rule: as many dashes as the digits of number + 1, plus 5
                    // (one more than the title's width for 9, 99, …).
                    let dashes = (number + 1).to_string().len() + 5;
                    self.buf.extend_from_slice("─".repeat(dashes).as_bytes());
                    self.buf.push(b'\n');
                    for (k, c) in cols.iter().enumerate() {
                        self.buf.extend_from_slice(names[k].as_bytes());
                        self.buf.push(b':');
                        self.buf.resize(self.buf.len() + width - names[k].width() + 1, b' ');
                        let v = c.value(i)?;
                        if v.is_null() {
                            self.buf.extend_from_slice("ᴺᵁᴸᴸ".as_bytes());
                        } else {
                            render::write_plain(&mut self.buf, &v);
                            if let Some(tip) = render::number_tip(&v, self.settings.number_tip_threshold) {
                                self.buf.extend_from_slice(tip.as_bytes());
                            }
                        }
                        self.buf.push(b'\n');
                    }
                    self.flush_if_full()?;
                }
            }
            Format::Pretty | Format::PrettyCompact => {
                for i in 0..n {
                    let mut row = Vec::with_capacity(cols.len());
                    for c in &cols {
                        let v = c.value(i)?;
                        row.push(Cell::of(&v, &self.settings));
                    }
                    let p = self.pretty.as_mut().expect("begin made the table");
                    p.rows.push(row);
                    if p.rows.len() >= PRETTY_MAX_ROWS {
                        self.print_pretty()?;
                    }
                }
            }
            Format::Null => {}
        }
        self.rows += n as u64;
        self.flush()?;
        Ok(())
    }

    fn print_pretty(&mut self) -> std::io::Result<()> {
        if let Some(p) = self.pretty.as_mut() {
            p.render(&mut self.buf, p.printed + 1, self.width, &self.settings);
            p.printed += p.rows.len() as u64;
            p.rows.clear();
        }
        self.flush()
    }

    /// Writes what is still held (a Pretty table) and flushes; `header` is the
    /// result's header for a result without rows (the WithNames formats still
    /// print the names).
    pub fn finish(&mut self, header: Option<&Block>) -> std::io::Result<()> {
        if let Some(h) = header {
            if !self.started && !h.columns().is_empty() {
                self.begin(h)?;
            }
        }
        if self.pretty.as_ref().is_some_and(|p| !p.rows.is_empty()) {
            self.print_pretty()?;
        }
        self.flush()
    }

    fn flush_if_full(&mut self) -> std::io::Result<()> {
        if self.buf.len() >= FLUSH_AT {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if !self.buf.is_empty() {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        self.out.flush()
    }
}

/// `t.1`, `t.2` (or `t.name`) for the elements of a bare Tuple column, as CSV
/// headers name them; the name itself for any other column.
fn flatten_tuple_names(name: &str, ty: &DataType, out: &mut Vec<String>) {
    match ty {
        DataType::Tuple(elems) => {
            for (k, (elem, t)) in elems.iter().enumerate() {
                let sub = match elem {
                    Some(e) => format!("{name}.{e}"),
                    None => format!("{name}.{}", k + 1),
                };
                flatten_tuple_names(&sub, t, out);
            }
        }
        _ => out.push(name.to_string()),
    }
}

fn bad_row(i: usize) -> chnative::Error {
    chnative::Error::from(chnative::proto::ProtoError::violation(format!("row {i} is past the end of its column")))
}

/// The error type of [`Output::block`]: the library's, or the output's I/O.
pub mod anyhow_like {
    /// A failed write or a block that could not be read.
    #[derive(Debug)]
    pub enum Error {
        /// Writing the output failed (a closed pipe, a full disk).
        Io(std::io::Error),
        /// Reading a value failed.
        Client(chnative::Error),
    }
    impl From<std::io::Error> for Error {
        fn from(e: std::io::Error) -> Self {
            Error::Io(e)
        }
    }
    impl From<chnative::Error> for Error {
        fn from(e: chnative::Error) -> Self {
            Error::Client(e)
        }
    }
    /// The result of [`super::Output::block`].
    pub type Result<T> = std::result::Result<T, Error>;
}

/// One Pretty cell: its text lines, whether it is right-aligned (numbers),
/// and the readable-number tip of a single large number.
struct Cell {
    lines: Vec<String>,
    right: bool,
    tip: Option<String>,
}

impl Cell {
    fn of(v: &Value, s: &FormatSettings) -> Cell {
        if v.is_null() {
            return Cell { lines: vec!["ᴺᵁᴸᴸ".to_string()], right: true, tip: None };
        }
        let mut b = Vec::new();
        render::write_plain(&mut b, v);
        let text = String::from_utf8_lossy(&b);
        let right = render::as_f64(v).is_some();
        let tip = render::number_tip(v, s.number_tip_threshold);
        Cell { lines: text.split('\n').map(str::to_string).collect(), right, tip }
    }
    fn width(&self) -> usize {
        self.lines.iter().map(|l| l.width()).max().unwrap_or(0)
    }
}

/// Rows held for one Pretty table.
struct Pretty {
    names: Vec<String>,
    /// Whether the column holds numbers (its name is right-aligned).
    numeric: Vec<bool>,
    rows: Vec<Vec<Cell>>,
    compact: bool,
    /// Rows printed in earlier tables (row numbers go on from there).
    printed: u64,
}

fn is_numeric(t: &DataType) -> bool {
    match t {
        DataType::Nullable(t) | DataType::LowCardinality(t) | DataType::SimpleAggregateFunction(_, t) => is_numeric(t),
        DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::Int128
        | DataType::Int256
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::UInt64
        | DataType::UInt128
        | DataType::UInt256
        | DataType::Float32
        | DataType::Float64
        | DataType::BFloat16
        | DataType::Decimal { .. } => true,
        _ => false,
    }
}

/// `text` cut to `width` columns, with `…` at the end when cut.
fn cut(text: &str, width: usize) -> String {
    if text.width() <= width {
        return text.to_string();
    }
    let mut out = String::new();
    let mut w = 0;
    for c in text.chars() {
        let cw = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if w + cw + 1 > width {
            break;
        }
        out.push(c);
        w += cw;
    }
    out.push('…');
    out
}

impl Pretty {
    fn new(header: &Block, compact: bool) -> Pretty {
        Pretty {
            names: header.columns().iter().map(|c| c.name().to_string()).collect(),
            numeric: header.columns().iter().map(|c| is_numeric(c.data_type())).collect(),
            rows: Vec::new(),
            compact,
            printed: 0,
        }
    }

    /// Column widths: the widest value or name, narrowed (widest first) until
    /// the table fits `limit` columns of terminal.
    fn widths(&self, prefix: usize, limit: Option<usize>) -> Vec<usize> {
        let mut w: Vec<usize> = self.names.iter().map(|n| n.width()).collect();
        for row in &self.rows {
            for (k, c) in row.iter().enumerate() {
                w[k] = w[k].max(c.width());
            }
        }
        if let Some(limit) = limit {
            // Each column takes its width plus 3 (a border and two spaces); one more border.
            let total = |w: &[usize]| prefix + 1 + w.iter().map(|x| x + 3).sum::<usize>();
            while total(&w) > limit {
                let Some((k, &max)) = w.iter().enumerate().max_by_key(|(_, x)| **x) else { break };
                if max <= 5 {
                    break;
                }
                w[k] = max - 1;
            }
        }
        w
    }

    /// The server's fallback to Vertical (`output_format_pretty_fallback_to_vertical`):
    /// at most 10 rows, at least 5 columns, and a table 250 columns wide or a
    /// value of several lines.
    fn falls_back_to_vertical(&self) -> bool {
        if self.rows.len() > 10 || self.names.len() < 5 {
            return false;
        }
        let width: usize = self.widths(0, None).iter().sum();
        width >= 250 || self.rows.iter().flatten().any(|c| c.lines.len() > 1)
    }

    fn render_vertical(&self, out: &mut Vec<u8>, first_row: u64) {
        let width = self.names.iter().map(|n| n.width()).max().unwrap_or(0);
        for (r, row) in self.rows.iter().enumerate() {
            let number = first_row + r as u64;
            if number > 1 {
                out.push(b'\n');
            }
            out.extend_from_slice(format!("Row {number}:\n").as_bytes());
            out.extend_from_slice("─".repeat((number + 1).to_string().len() + 5).as_bytes());
            out.push(b'\n');
            for (name, c) in self.names.iter().zip(row) {
                out.extend_from_slice(name.as_bytes());
                out.push(b':');
                out.extend_from_slice(" ".repeat(width - name.width() + 1).as_bytes());
                out.extend_from_slice(c.lines.join("\n").as_bytes());
                if let Some(tip) = &c.tip {
                    out.extend_from_slice(tip.as_bytes());
                }
                out.push(b'\n');
            }
        }
    }

    fn render(&self, out: &mut Vec<u8>, first_row: u64, limit: Option<usize>, s: &FormatSettings) {
        if self.falls_back_to_vertical() {
            return self.render_vertical(out, first_row);
        }
        let last = first_row + self.rows.len() as u64 - 1;
        let prefix = if s.pretty_row_numbers { last.to_string().len() + 2 } else { 0 };
        let w = self.widths(prefix, limit);
        let pad = " ".repeat(prefix);
        let rule = |out: &mut Vec<u8>, l: &str, fill: &str, mid: &str, r: &str| {
            out.extend_from_slice(pad.as_bytes());
            out.extend_from_slice(l.as_bytes());
            for (k, x) in w.iter().enumerate() {
                if k > 0 {
                    out.extend_from_slice(mid.as_bytes());
                }
                out.extend_from_slice(fill.repeat(x + 2).as_bytes());
            }
            out.extend_from_slice(r.as_bytes());
            out.push(b'\n');
        };
        let align = |text: &str, width: usize, right: bool| {
            let text = cut(text, width);
            let gap = " ".repeat(width.saturating_sub(text.width()));
            if right {
                format!("{gap}{text}")
            } else {
                format!("{text}{gap}")
            }
        };
        if self.compact {
            out.extend_from_slice(pad.as_bytes());
            out.extend_from_slice("┌".as_bytes());
            for (k, x) in w.iter().enumerate() {
                if k > 0 {
                    out.extend_from_slice("┬".as_bytes());
                }
                let name = cut(&self.names[k], *x);
                let dashes = x + 2 - name.width() - 1;
                let (left, right) = if self.numeric[k] { (dashes, 1) } else { (1, dashes) };
                out.extend_from_slice("─".repeat(left).as_bytes());
                out.extend_from_slice(name.as_bytes());
                out.extend_from_slice("─".repeat(right).as_bytes());
            }
            out.extend_from_slice("┐\n".as_bytes());
        } else {
            rule(out, "┏", "━", "┳", "┓");
            out.extend_from_slice(pad.as_bytes());
            for (k, x) in w.iter().enumerate() {
                out.extend_from_slice("┃ ".as_bytes());
                out.extend_from_slice(align(&self.names[k], *x, self.numeric[k]).as_bytes());
                out.push(b' ');
            }
            out.extend_from_slice("┃\n".as_bytes());
            rule(out, "┡", "━", "╇", "┩");
        }
        let single = self.rows.len() == 1 && self.names.len() == 1;
        for (r, row) in self.rows.iter().enumerate() {
            if r > 0 && !self.compact {
                rule(out, "├", "─", "┼", "┤");
            }
            let height = row.iter().map(|c| c.lines.len()).max().unwrap_or(1);
            for line in 0..height {
                if line == 0 && s.pretty_row_numbers {
                    let num = format!("{}.", first_row + r as u64);
                    out.extend_from_slice(format!("{num:>width$} ", width = prefix - 1).as_bytes());
                } else {
                    out.extend_from_slice(pad.as_bytes());
                }
                for (k, c) in row.iter().enumerate() {
                    let text = c.lines.get(line).map_or("", String::as_str);
                    let more = line + 1 < c.lines.len();
                    let cont = line > 0 && line < c.lines.len();
                    out.extend_from_slice("│".as_bytes());
                    out.extend_from_slice(if cont { "↳" } else { " " }.as_bytes());
                    out.extend_from_slice(align(text, w[k], c.right && c.lines.len() == 1).as_bytes());
                    out.extend_from_slice(if more { "↴" } else { " " }.as_bytes());
                }
                out.extend_from_slice("│".as_bytes());
                if single && line == 0 {
                    if let Some(tip) = &row[0].tip {
                        out.extend_from_slice(tip.as_bytes());
                    }
                }
                out.push(b'\n');
            }
        }
        rule(out, "└", "─", "┴", "┘");
    }
}
