//! Output formats: each block is written as it arrives (Pretty holds the rows
//! it shows, at most `output_format_pretty_max_rows`, to size its columns).

use std::cell::RefCell;
use std::io::Write;
use std::sync::Arc;

use chnative::proto::StrView;
use chnative::row::{ReadContext, Reader};
use chnative::{Block, DataType, Value};
use unicode_width::UnicodeWidthStr;

use crate::format::{self, Header, Trailer};
use crate::render::{self, FormatSettings};
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
    /// TabSeparatedRaw: strings as they are.
    TsvRaw,
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
    /// PrettyNoEscapes: Pretty without colours.
    PrettyNoEscapes,
    /// PrettyCompactNoEscapes.
    PrettyCompactNoEscapes,
    /// A format written from dynamic values by `format::writer` (its name as the server spells it).
    Values(&'static str),
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
            "prettynoescapes" => Format::PrettyNoEscapes,
            "prettycompactnoescapes" => Format::PrettyCompactNoEscapes,
            "tsvraw" | "tabseparatedraw" | "raw" => Format::TsvRaw,
            "null" => Format::Null,
            lower => {
                let name = WRITERS.iter().find(|w| w.to_ascii_lowercase() == lower)?;
                Format::Values(name)
            }
        })
    }

    /// The names `--format` takes.
    pub const NAMES: &'static str = "TSV (TabSeparated), TSVWithNames, TSVWithNamesAndTypes, TSVRaw, CSV, \
                                     CSVWithNames, JSON, JSONCompact, JSONStrings, JSONCompactStrings, JSONEachRow, \
                                     JSONStringsEachRow, JSONCompactEachRow, JSONCompactStringsEachRow, \
                                     JSONCompactEachRowWithNames, JSONEachRowWithProgress, \
                                     JSONStringsEachRowWithProgress, Vertical, Pretty, PrettyCompact, \
                                     PrettyNoEscapes, PrettyCompactNoEscapes, Markdown, Values, XML, TSKV, \
                                     ODBCDriver2, Null";

    fn is_pretty(self) -> bool {
        matches!(
            self,
            Format::Pretty | Format::PrettyCompact | Format::PrettyNoEscapes | Format::PrettyCompactNoEscapes
        )
    }

    fn is_tsv(self) -> bool {
        matches!(self, Format::Tsv | Format::TsvWithNames | Format::TsvWithNamesAndTypes | Format::TsvRaw)
    }
}

/// The formats written by `format::writer`, as the server spells them.
const WRITERS: &[&str] = &[
    "JSON",
    "JSONStrings",
    "JSONCompact",
    "JSONCompactStrings",
    "JSONStringsEachRow",
    "JSONStringsEachRowWithProgress",
    "JSONEachRowWithProgress",
    "JSONCompactEachRow",
    "JSONCompactStringsEachRow",
    "JSONCompactEachRowWithNames",
    "Markdown",
    "Values",
    "XML",
    "TSKV",
    "ODBCDriver2",
];

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
    /// A DateTime written as `YYYY-MM-DD hh:mm:ss` (`date_time_output_format`
    /// simple): Unix seconds, the zone it is rendered in (the column's, or the
    /// read context's: the same as the dynamic Value's), whether that zone is
    /// UTC, and the last day's text.
    DateTime(&'a [u32], Arc<str>, bool, RefCell<render::DateTimeText>),
    Any(Reader<'a, Value>),
}

impl<'a> Col<'a> {
    /// The column read for the output; `plain_datetime`: DateTime columns are
    /// written in their plain form (`date_time_output_format` simple), so they
    /// may skip the dynamic [`Value`].
    fn new(col: &'a chnative::Column, ctx: &ReadContext, plain_datetime: bool) -> chnative::Result<Col<'a>> {
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
            DataType::DateTime(tz) if plain_datetime => {
                // The zone the dynamic Value's reader gives the column (the library's rule).
                let zone = tz.as_deref().unwrap_or(&ctx.server_timezone);
                let utc = chnative::proto::convert::zone::is_utc(zone);
                Col::DateTime(view.values()?, Arc::from(zone), utc, RefCell::default())
            }
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
            Col::DateTime(v, tz, _, _) => Value::DateTime { secs: *v.get(i).ok_or_else(oob)?, tz: tz.clone() },
            Col::Any(r) => r.get(i)?,
        })
    }

    /// Appends a DateTime cell's text as the value's `Display` writes it
    /// (`quote`: in double quotes) and says so, or `false` for the other kinds.
    #[inline]
    fn datetime(&self, i: usize, out: &mut Vec<u8>, quote: bool) -> chnative::Result<bool> {
        let Col::DateTime(v, zone, utc, text) = self else { return Ok(false) };
        let secs = i64::from(*v.get(i).ok_or_else(|| bad_row(i))?);
        // The wall-clock time in the zone, or (a zone without a known offset) the UTC time
        // marked ` UTC`, as the value's `Display` writes it.
        let local = if *utc { Some(secs) } else { chnative::proto::convert::zone::local_seconds(zone, secs) };
        if quote {
            out.push(b'"');
        }
        text.borrow_mut().write(out, local.unwrap_or(secs));
        if local.is_none() {
            out.extend_from_slice(b" UTC");
        }
        if quote {
            out.push(b'"');
        }
        Ok(true)
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
    /// The writer of a format rendered from dynamic values, and the result's columns.
    writer: Option<(Box<dyn format::Writer>, Header)>,
    /// The WITH TOTALS row and the extremes, written at the end.
    totals: Option<Vec<Value>>,
    extremes: Option<(Vec<Value>, Vec<Value>)>,
    /// Pretty and Vertical use colours (`output_format_pretty_color`).
    color: bool,
}

impl<W: Write> Output<W> {
    /// An output in `format` writing to `out`; `server_tz` is the zone of
    /// DateTime columns that name none.
    pub fn new(format: Format, settings: FormatSettings, server_tz: &str, out: W, width: Option<usize>) -> Self {
        let color = settings.ext.pretty_color.unwrap_or(width.is_some())
            && matches!(format, Format::Pretty | Format::PrettyCompact | Format::Vertical);
        // JSONEachRow as one array is written from values.
        let format = match format {
            Format::JsonEachRow if settings.ext.json_array_of_rows => Format::Values("JSONEachRowArray"),
            f => f,
        };
        let mut settings = settings;
        settings.ext.color = color;
        Output {
            writer: None,
            totals: None,
            extremes: None,
            color,
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
        let (tsv_crlf, csv_crlf) = (self.settings.ext.tsv_crlf, self.settings.ext.csv_crlf);
        match self.format {
            Format::Values(name) => {
                let mut w = if name == "JSONEachRowArray" {
                    Box::new(format::json::EachRow::values(false))
                } else {
                    format::writer(name).expect("Format::parse knows the name")
                };
                let h = Header::of(header);
                w.begin(&mut self.buf, &h, &self.settings);
                self.writer = Some((w, h));
            }
            Format::TsvWithNames | Format::TsvWithNamesAndTypes => {
                self.line(names(), render::write_escaped, b'\t', tsv_crlf);
                if self.format == Format::TsvWithNamesAndTypes {
                    let types: Vec<&[u8]> = header.columns().iter().map(|c| c.type_name().as_bytes()).collect();
                    self.line(types.into_iter(), render::write_escaped, b'\t', tsv_crlf);
                }
            }
            Format::CsvWithNames => {
                // A bare Tuple is one CSV field per element, and so is its name.
                let mut flat = Vec::new();
                for c in header.columns() {
                    flatten_tuple_names(c.name(), c.data_type(), &mut flat);
                }
                let d = self.settings.csv_delimiter;
                self.line(flat.iter().map(|n| n.as_bytes()), render::write_csv_string, d, csv_crlf);
            }
            f if f.is_pretty() => {
                let compact = matches!(f, Format::PrettyCompact | Format::PrettyCompactNoEscapes);
                self.pretty = Some(Pretty::new(header, compact, &self.settings));
            }
            _ => {}
        }
        self.flush_if_full()
    }

    fn line<'n>(
        &mut self,
        items: impl Iterator<Item = &'n [u8]>,
        f: impl Fn(&mut Vec<u8>, &[u8]),
        sep: u8,
        crlf: bool,
    ) {
        for (k, item) in items.enumerate() {
            if k > 0 {
                self.buf.push(sep);
            }
            f(&mut self.buf, item);
        }
        if crlf {
            self.buf.push(b'\r');
        }
        self.buf.push(b'\n');
    }

    /// The rows of a block as dynamic values (totals, extremes).
    fn value_rows(&self, block: &Block) -> chnative::Result<Vec<Vec<Value>>> {
        let cols: Vec<Col<'_>> =
            block.columns().iter().map(|c| Col::new(c, &self.ctx, false)).collect::<Result<_, _>>()?;
        (0..block.rows()).map(|i| cols.iter().map(|c| c.value(i)).collect()).collect()
    }

    /// Keeps the WITH TOTALS row, written at the end.
    pub fn totals(&mut self, block: &Block) -> chnative::Result<()> {
        self.totals = self.value_rows(block)?.into_iter().next();
        Ok(())
    }

    /// Keeps the extremes (a min row and a max row), written at the end.
    pub fn extremes(&mut self, block: &Block) -> chnative::Result<()> {
        let mut rows = self.value_rows(block)?.into_iter();
        if let (Some(min), Some(max)) = (rows.next(), rows.next()) {
            self.extremes = Some((min, max));
        }
        Ok(())
    }

    /// A row of values in TSV, TSVRaw or CSV (totals, extremes).
    fn text_row(&mut self, row: &[Value]) {
        let s = &self.settings;
        for (k, v) in row.iter().enumerate() {
            let v = format::adjust(v.clone(), &s.ext);
            match self.format {
                Format::Csv | Format::CsvWithNames => {
                    if k > 0 {
                        self.buf.push(s.csv_delimiter);
                    }
                    format::csv_field(&mut self.buf, &v, s);
                }
                f => {
                    if k > 0 {
                        self.buf.push(b'\t');
                    }
                    if f == Format::TsvRaw {
                        format::tsv_raw_field(&mut self.buf, &v, s);
                    } else {
                        format::tsv_field(&mut self.buf, &v, s);
                    }
                }
            }
        }
        match self.format {
            Format::Csv | Format::CsvWithNames => format::csv_eol(&mut self.buf, s),
            _ => format::tsv_eol(&mut self.buf, s),
        }
    }

    /// Vertical's fields of one row.
    fn vertical_fields(&mut self, names: &[String], row: &[Value]) {
        let width = names.iter().map(|n| n.width()).max().unwrap_or(0);
        for (name, v) in names.iter().zip(row) {
            self.vertical_name(name, width);
            let v = format::adjust(v.clone(), &self.settings.ext);
            format::plain(&mut self.buf, &v, &self.settings);
            if let Some(tip) = format::tip(&v, &self.settings) {
                self.buf.extend_from_slice(tip.as_bytes());
            }
            self.buf.push(b'\n');
        }
    }

    /// `name:` and the padding to `width`, in bold with colours.
    fn vertical_name(&mut self, name: &str, width: usize) {
        if self.color {
            self.buf.extend_from_slice(b"\x1b[1m");
        }
        self.buf.extend_from_slice(name.as_bytes());
        self.buf.push(b':');
        if self.color {
            self.buf.extend_from_slice(b"\x1b[0m");
        }
        self.buf.resize(self.buf.len() + width - name.width() + 1, b' ');
    }

    /// Totals and extremes in the formats of this module, after the rows.
    fn write_totals_and_extremes(&mut self, header: &Block) -> std::io::Result<()> {
        let (totals, extremes) = (self.totals.take(), self.extremes.take());
        if totals.is_none() && extremes.is_none() {
            return Ok(());
        }
        match self.format {
            f if f.is_tsv() || matches!(f, Format::Csv | Format::CsvWithNames) => {
                if let Some(t) = &totals {
                    self.buf.push(b'\n');
                    self.text_row(t);
                }
                if let Some((min, max)) = &extremes {
                    self.buf.push(b'\n');
                    self.text_row(min);
                    self.text_row(max);
                }
            }
            Format::Vertical => {
                let names: Vec<String> = header.columns().iter().map(|c| c.name().to_string()).collect();
                self.buf.push(b'\n');
                if let Some(t) = &totals {
                    self.buf.extend_from_slice("\nTotals:\n───────\n".as_bytes());
                    self.vertical_fields(&names, t);
                }
                if let Some((min, max)) = &extremes {
                    self.buf.extend_from_slice("\nMin:\n────\n".as_bytes());
                    self.vertical_fields(&names, min);
                    self.buf.extend_from_slice("\nMax:\n────\n".as_bytes());
                    self.vertical_fields(&names, max);
                }
            }
            f if f.is_pretty() => {
                let compact = matches!(f, Format::PrettyCompact | Format::PrettyCompactNoEscapes);
                let mut tables = Vec::new();
                if let Some(t) = totals {
                    tables.push(("Totals", vec![t]));
                }
                if let Some((min, max)) = extremes {
                    tables.push(("Extremes", vec![min, max]));
                }
                // The tables after the result share what is left of output_format_pretty_max_rows
                // (the server's rule: none is left once the result reached it).
                let mut budget = self.settings.ext.pretty_max_rows.saturating_sub(self.rows);
                for (title, rows) in tables {
                    let mut p = Pretty::new(header, compact, &self.settings);
                    let keep = (budget as usize).min(rows.len());
                    budget -= keep as u64;
                    for (k, row) in rows.into_iter().enumerate() {
                        let cells: Vec<Cell> = row
                            .into_iter()
                            .zip(header.columns())
                            .map(|(v, c)| {
                                Cell::of(&format::adjust(v, &self.settings.ext), c.data_type(), &self.settings)
                            })
                            .collect();
                        // Rows left out still size the columns (the server's layout).
                        for (w, c) in p.min_widths.iter_mut().zip(&cells) {
                            *w = (*w).max(c.width());
                        }
                        if k < keep {
                            p.push(cells);
                        }
                    }
                    self.buf.extend_from_slice(format!("\n{title}:\n").as_bytes());
                    p.render(&mut self.buf, self.width, &self.settings, self.color);
                }
            }
            _ => {}
        }
        self.flush_if_full()
    }

    /// Writes the rows of one block.
    pub fn block(&mut self, block: &Block) -> anyhow_like::Result<()> {
        self.begin(block)?;
        if self.format == Format::Null || block.rows() == 0 {
            return Ok(());
        }
        // DateTimes skip the dynamic Value only when written in their plain form.
        let plain_datetime = self.settings.ext.date_time == format::settings::DateTimeOutput::Simple;
        let cols: Vec<Col<'_>> =
            block.columns().iter().map(|c| Col::new(c, &self.ctx, plain_datetime)).collect::<Result<_, _>>()?;
        let types: Vec<&DataType> = block.columns().iter().map(|c| c.data_type()).collect();
        let names: Vec<&str> = block.columns().iter().map(|c| c.name()).collect();
        let n = block.rows();
        let ext = self.settings.ext.clone();
        let ext = &ext;
        // The value of a cell with `date_time_output_format` applied.
        let value = |c: &Col<'_>, i: usize| c.value(i).map(|v| format::adjust(v, ext));
        match self.format {
            Format::Tsv | Format::TsvWithNames | Format::TsvWithNamesAndTypes | Format::TsvRaw => {
                let raw = self.format == Format::TsvRaw;
                for i in 0..n {
                    for (k, c) in cols.iter().enumerate() {
                        if k > 0 {
                            self.buf.push(b'\t');
                        }
                        if let Some(x) = c.int(i) {
                            write_int(&mut self.buf, x.map_err(|()| bad_row(i))?);
                        } else if let Some(b) = c.str_bytes(i) {
                            if raw {
                                self.buf.extend_from_slice(b);
                            } else {
                                render::write_escaped(&mut self.buf, b);
                            }
                        } else if c.datetime(i, &mut self.buf, false)? {
                        } else if raw {
                            format::tsv_raw_field(&mut self.buf, &value(c, i)?, &self.settings);
                        } else {
                            format::tsv_field(&mut self.buf, &value(c, i)?, &self.settings);
                        }
                    }
                    format::tsv_eol(&mut self.buf, &self.settings);
                    if self.buf.len() >= FLUSH_AT {
                        self.out.write_all(&self.buf)?;
                        self.buf.clear();
                    }
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
                        } else if c.datetime(i, &mut self.buf, true)? {
                        } else {
                            format::csv_field(&mut self.buf, &value(c, i)?, &self.settings);
                        }
                    }
                    format::csv_eol(&mut self.buf, &self.settings);
                    if self.buf.len() >= FLUSH_AT {
                        self.out.write_all(&self.buf)?;
                        self.buf.clear();
                    }
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
                        } else if c.datetime(i, &mut self.buf, true)? {
                        } else {
                            render::write_json(&mut self.buf, &value(c, i)?, Some(types[k]), &self.settings);
                        }
                    }
                    self.buf.extend_from_slice(b"}\n");
                    if self.buf.len() >= FLUSH_AT {
                        self.out.write_all(&self.buf)?;
                        self.buf.clear();
                    }
                }
            }
            Format::Vertical => {
                let width = names.iter().map(|n| n.width()).max().unwrap_or(0);
                // Rows past output_format_pretty_max_rows are counted, not shown.
                let shown = self.settings.ext.pretty_max_rows.saturating_sub(self.rows).min(n as u64) as usize;
                for i in 0..shown {
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
                        let v = value(c, i)?;
                        self.vertical_name(names[k], width);
                        // A JSON column's object over several lines, 4 spaces a level (the server's Vertical).
                        if !format::json::pretty_json_column(&mut self.buf, &v, types[k], 0, b"    ", &self.settings) {
                            format::plain(&mut self.buf, &v, &self.settings);
                        }
                        if !v.is_null() {
                            if let Some(tip) = format::tip(&v, &self.settings) {
                                self.buf.extend_from_slice(tip.as_bytes());
                            }
                        }
                        self.buf.push(b'\n');
                    }
                    self.flush_if_full()?;
                }
            }
            f if f.is_pretty() => {
                let max_width = self.settings.ext.pretty_max_value_width;
                // Integers are written as they are unless their digit groups are highlighted.
                let plain_ints = !(self.settings.ext.color && self.settings.ext.highlight_digit_groups);
                let p = self.pretty.as_mut().expect("begin made the table");
                for i in 0..n {
                    // A row past the table's head that a later row of this block pushes out of
                    // its tail is never shown (nor does it size the columns): only counted.
                    if p.total >= p.head_max && (n - i) as u64 > p.tail_max {
                        p.total += 1;
                        continue;
                    }
                    // Past the table's 10th row neither the fallback to Vertical nor the tip of
                    // a single value can apply: the common kinds skip the dynamic Value there.
                    let fast = p.total >= 10;
                    let mut row = Vec::with_capacity(cols.len());
                    for (k, c) in cols.iter().enumerate() {
                        let cell = if fast { Cell::fast(c, i, plain_ints, max_width)? } else { None };
                        let cell = match cell {
                            Some(cell) => cell,
                            None => Cell::of(&value(c, i)?, types[k], &self.settings),
                        };
                        row.push(cell);
                    }
                    p.push(row);
                }
            }
            Format::Values(_) => {
                let (w, h) = self.writer.as_mut().expect("begin made the writer");
                for i in 0..n {
                    let row: Vec<Value> = cols.iter().map(|c| c.value(i)).collect::<Result<_, _>>()?;
                    w.row(&mut self.buf, h, &row, self.rows == 0 && i == 0, &self.settings);
                    if self.buf.len() >= FLUSH_AT {
                        self.out.write_all(&self.buf)?;
                        self.buf.clear();
                    }
                }
            }
            _ => {}
        }
        self.rows += n as u64;
        self.flush()?;
        Ok(())
    }

    /// Writes what is still held (a Pretty table), the totals and extremes
    /// kept, the trailer of the formats that have one, and flushes; `header`
    /// is the result's header for a result without rows (the WithNames formats
    /// still print the names).
    pub fn finish(&mut self, header: Option<&Block>, mut trailer: Trailer) -> std::io::Result<()> {
        if let Some(h) = header {
            if !self.started && !h.columns().is_empty() {
                self.begin(h)?;
            }
        }
        if let Some(p) = self.pretty.as_ref() {
            if p.total > 0 {
                p.render(&mut self.buf, self.width, &self.settings, self.color);
            }
        }
        if self.format == Format::Vertical && self.rows > self.settings.ext.pretty_max_rows {
            self.buf.extend_from_slice(format!("\nShowed first {}.\n", self.settings.ext.pretty_max_rows).as_bytes());
        }
        if let Some((w, h)) = self.writer.as_mut() {
            trailer.totals = self.totals.take();
            trailer.extremes = self.extremes.take();
            trailer.rows = self.rows;
            w.end(&mut self.buf, h, &trailer, &self.settings);
        } else if let Some(h) = header {
            self.write_totals_and_extremes(h)?;
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
        DataType::Point => {
            out.push(format!("{name}.1"));
            out.push(format!("{name}.2"));
        }
        DataType::Tuple(elems) if !elems.is_empty() => {
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

/// One Pretty cell: its text lines, and the readable-number tip of a single
/// large number.
struct Cell {
    /// The lines' bytes (not necessarily UTF-8: the server writes them as they are).
    lines: Vec<Vec<u8>>,
    tip: Option<String>,
    /// A line was cut at `output_format_pretty_max_value_width`.
    cut: bool,
    /// The lines cut (a `⋯` goes in the padding after them).
    cut_lines: Vec<bool>,
    /// The lines before the cut (a result of one value is shown whole).
    uncut: Option<Vec<Vec<u8>>>,
}

/// `line` cut to `max` columns when wider (`output_format_pretty_max_value_width`), and whether it was.
fn cut_value(line: Vec<u8>, max: usize) -> (Vec<u8>, bool) {
    if text_width(&line) <= max {
        return (line, false);
    }
    let text = String::from_utf8_lossy(&line);
    let mut out = String::new();
    let mut w = 0;
    for c in text.chars() {
        let cw = text_width(c.encode_utf8(&mut [0; 4]).as_bytes());
        if w + cw > max {
            break;
        }
        out.push(c);
        w += cw;
    }
    (out.into_bytes(), true)
}

/// The columns of terminal a text takes, as the server counts them: control
/// characters and bytes that are not UTF-8 take none, emoji past U+FFFF one.
fn text_width(b: &[u8]) -> usize {
    let mut w = 0;
    for c in b.utf8_chunks() {
        let mut chars = c.valid().chars();
        while let Some(ch) = chars.next() {
            if ch == '\x1b' {
                // A colour escape (`ESC [ … m`) takes no room.
                for e in chars.by_ref() {
                    if e == 'm' {
                        break;
                    }
                }
                continue;
            }
            let cw = unicode_width::UnicodeWidthChar::width(ch).unwrap_or(0);
            // The server's width table counts the emoji beyond the first plane (U+1F389 and
            // the like) one column wide; the CJK planes stay two.
            w += if u32::from(ch) > 0xFFFF && !(0x20000..=0x3FFFD).contains(&u32::from(ch)) { cw.min(1) } else { cw };
        }
    }
    w
}

impl Cell {
    /// A cell of a column of type `ty`.
    fn of(v: &Value, ty: &DataType, s: &FormatSettings) -> Cell {
        if v.is_null() {
            return Cell {
                lines: vec!["ᴺᵁᴸᴸ".as_bytes().to_vec()],
                tip: None,
                cut: false,
                cut_lines: vec![false],
                uncut: None,
            };
        }
        let mut b = Vec::new();
        if !format::json::pretty_cell(&mut b, v, ty, s) {
            format::plain(&mut b, v, s);
        }
        let tip = format::tip(v, s);
        let (lines, cut_lines): (Vec<Vec<u8>>, Vec<bool>) =
            b.split(|&c| c == b'\n').map(|l| cut_value(l.to_vec(), s.ext.pretty_max_value_width)).unzip();
        let cut = cut_lines.contains(&true);
        let uncut = cut.then(|| b.split(|&c| c == b'\n').map(<[u8]>::to_vec).collect());
        Cell { lines, tip, cut, cut_lines, uncut }
    }

    /// The cell of an integer, String or plain DateTime written straight from
    /// the column, as [`Cell::of`] makes it for a row where no tip is shown;
    /// `None` for the other kinds, and for a value of several lines or wider
    /// than `max_width` (`output_format_pretty_max_value_width`).
    /// `plain_ints`: integers are written without highlighted digit groups.
    fn fast(c: &Col<'_>, i: usize, plain_ints: bool, max_width: usize) -> chnative::Result<Option<Cell>> {
        let mut text = Vec::new();
        if let Some(x) = c.int(i) {
            if !plain_ints {
                return Ok(None);
            }
            write_int(&mut text, x.map_err(|()| bad_row(i))?);
        } else if let Some(b) = c.str_bytes(i) {
            text.extend_from_slice(b);
        } else if !c.datetime(i, &mut text, false)? {
            return Ok(None);
        }
        // No character takes more columns than it has bytes.
        if text.contains(&b'\n') || (text.len() > max_width && text_width(&text) > max_width) {
            return Ok(None);
        }
        Ok(Some(Cell { lines: vec![text], tip: None, cut: false, cut_lines: vec![false], uncut: None }))
    }
    fn width(&self) -> usize {
        self.lines.iter().map(|l| text_width(l)).max().unwrap_or(0)
    }
}

/// The rows of one Pretty table: the first half of
/// `output_format_pretty_max_rows` and the last half (the rows between are
/// counted, not kept).
struct Pretty {
    names: Vec<String>,
    /// Whether the column is right-aligned (numbers, dates and times).
    numeric: Vec<bool>,
    head: Vec<Vec<Cell>>,
    tail: std::collections::VecDeque<Vec<Cell>>,
    head_max: u64,
    tail_max: u64,
    /// Rows pushed.
    total: u64,
    compact: bool,
    /// Widths the columns take at least (from rows not shown).
    min_widths: Vec<usize>,
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
    fn new(header: &Block, compact: bool, s: &FormatSettings) -> Pretty {
        let max = s.ext.pretty_max_rows;
        Pretty {
            names: header.columns().iter().map(|c| c.name().to_string()).collect(),
            numeric: header.columns().iter().map(|c| format::aligns_right(c.data_type())).collect(),
            head: Vec::new(),
            tail: std::collections::VecDeque::new(),
            head_max: max.div_ceil(2),
            tail_max: max / 2,
            total: 0,
            compact,
            min_widths: vec![0; header.columns().len()],
        }
    }

    fn push(&mut self, row: Vec<Cell>) {
        self.total += 1;
        if (self.head.len() as u64) < self.head_max {
            self.head.push(row);
        } else if self.tail_max > 0 {
            if self.tail.len() as u64 == self.tail_max {
                self.tail.pop_front();
            }
            self.tail.push_back(row);
        }
    }

    /// The rows shown, each with its number.
    fn shown(&self) -> impl Iterator<Item = (u64, &Vec<Cell>)> {
        let tail_first = self.total - self.tail.len() as u64 + 1;
        self.head
            .iter()
            .enumerate()
            .map(|(k, r)| (k as u64 + 1, r))
            .chain(self.tail.iter().enumerate().map(move |(k, r)| (tail_first + k as u64, r)))
    }

    fn cut_rows(&self) -> bool {
        self.total > (self.head.len() + self.tail.len()) as u64
    }

    /// Column widths: the widest value or name, narrowed (widest first) until
    /// the table fits `limit` columns of terminal.
    fn widths(&self, prefix: usize, limit: Option<usize>) -> Vec<usize> {
        let mut w: Vec<usize> = self.names.iter().zip(&self.min_widths).map(|(n, m)| n.width().max(*m)).collect();
        for (_, row) in self.shown() {
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
        if self.total > 10 || self.names.len() < 5 {
            return false;
        }
        let width: usize = self.widths(0, None).iter().sum();
        width >= 250 || self.head.iter().flatten().any(|c| c.lines.len() > 1)
    }

    fn render_vertical(&self, out: &mut Vec<u8>, color: bool) {
        let width = self.names.iter().map(|n| n.width()).max().unwrap_or(0);
        for (number, row) in self.shown() {
            if number > 1 {
                out.push(b'\n');
            }
            out.extend_from_slice(format!("Row {number}:\n").as_bytes());
            out.extend_from_slice("─".repeat((number + 1).to_string().len() + 5).as_bytes());
            out.push(b'\n');
            for (name, c) in self.names.iter().zip(row) {
                if color {
                    out.extend_from_slice(b"\x1b[1m");
                }
                out.extend_from_slice(name.as_bytes());
                out.push(b':');
                if color {
                    out.extend_from_slice(b"\x1b[0m");
                }
                out.extend_from_slice(" ".repeat(width - name.width() + 1).as_bytes());
                out.extend_from_slice(&c.lines.join(&b'\n'));
                if let Some(tip) = &c.tip {
                    out.extend_from_slice(tip.as_bytes());
                }
                out.push(b'\n');
            }
        }
    }

    fn render(&self, out: &mut Vec<u8>, limit: Option<usize>, s: &FormatSettings, color: bool) {
        if self.falls_back_to_vertical() {
            return self.render_vertical(out, color);
        }
        let last = self.total;
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
        // A cell's line: its bytes as they are, cut (as text) only when wider than the column.
        let align_bytes = |text: &[u8], width: usize, right: bool| -> Vec<u8> {
            let tw = text_width(text);
            if tw > width {
                return align(&String::from_utf8_lossy(text), width, right).into_bytes();
            }
            let gap = vec![b' '; width - tw];
            if right {
                [gap.as_slice(), text].concat()
            } else {
                [text, gap.as_slice()].concat()
            }
        };
        let bold = |name: &str| if color { format!("\x1b[1m{name}\x1b[0m") } else { name.to_string() };
        // The compact header (or footer): names inside the top (bottom) border.
        let compact_names = |out: &mut Vec<u8>, l: &str, mid: &str, r: &str| {
            out.extend_from_slice(pad.as_bytes());
            out.extend_from_slice(l.as_bytes());
            for (k, x) in w.iter().enumerate() {
                if k > 0 {
                    out.extend_from_slice(mid.as_bytes());
                }
                let name = cut(&self.names[k], *x);
                let dashes = x + 2 - name.width() - 1;
                let (left, right) = if self.numeric[k] { (dashes, 1) } else { (1, dashes) };
                out.extend_from_slice("─".repeat(left).as_bytes());
                out.extend_from_slice(bold(&name).as_bytes());
                out.extend_from_slice("─".repeat(right).as_bytes());
            }
            out.extend_from_slice(r.as_bytes());
            out.push(b'\n');
        };
        let names_line = |out: &mut Vec<u8>| {
            out.extend_from_slice(pad.as_bytes());
            for (k, x) in w.iter().enumerate() {
                out.extend_from_slice("┃ ".as_bytes());
                let text = align(&self.names[k], *x, self.numeric[k]);
                let name = cut(&self.names[k], *x);
                out.extend_from_slice(text.replacen(&name, &bold(&name), 1).as_bytes());
                out.push(b' ');
            }
            out.extend_from_slice("┃\n".as_bytes());
        };
        if self.compact {
            compact_names(out, "┌", "┬", "┐");
        } else {
            rule(out, "┏", "━", "┳", "┓");
            names_line(out);
            rule(out, "┡", "━", "╇", "┩");
        }
        // The readable-number tip of a one-row result: its last column's.
        let single = self.total == 1;
        let gap_after = if self.cut_rows() { Some(self.head.len() as u64) } else { None };
        for (r, (number, row)) in self.shown().enumerate() {
            if r > 0 && !self.compact {
                rule(out, "├", "─", "┼", "┤");
            }
            let height = row.iter().map(|c| c.lines.len()).max().unwrap_or(1);
            for line in 0..height {
                if line == 0 && s.pretty_row_numbers {
                    // Right-aligned; with colours the padding goes before the grey (the server's).
                    let num = format!("{number}. ");
                    out.resize(out.len() + prefix.saturating_sub(num.len()), b' ');
                    if color {
                        out.extend_from_slice(format!("\x1b[90m{num}\x1b[0m").as_bytes());
                    } else {
                        out.extend_from_slice(num.as_bytes());
                    }
                } else {
                    out.extend_from_slice(pad.as_bytes());
                }
                for (k, c) in row.iter().enumerate() {
                    // A result of one value is shown whole, in a column as wide as the cut value
                    // (the server's layout).
                    if let (true, Some(whole)) = (single && self.names.len() == 1, &c.uncut) {
                        out.extend_from_slice("│ ".as_bytes());
                        let text = whole.get(line).map_or(&[][..], Vec::as_slice);
                        out.extend_from_slice(text);
                        out.extend(std::iter::repeat_n(b' ', w[k].saturating_sub(text_width(text)) + 1));
                        continue;
                    }
                    let text = c.lines.get(line).map_or(&[][..], Vec::as_slice);
                    let more = line + 1 < c.lines.len();
                    let cont = line > 0 && line < c.lines.len();
                    out.extend_from_slice("│".as_bytes());
                    let grey = |m: &str| if color { format!("\x1b[90m{m}\x1b[0m") } else { m.to_string() };
                    out.extend_from_slice(if cont { grey("↳") } else { " ".into() }.as_bytes());
                    out.extend_from_slice(&align_bytes(text, w[k], self.numeric[k] && c.lines.len() == 1));
                    let cut_line = c.cut_lines.get(line).copied().unwrap_or(false);
                    let end = if more {
                        grey("↴")
                    } else if cut_line && color {
                        "\x1b[31;1m⋯\x1b[0m".into()
                    } else if cut_line {
                        "⋯".into()
                    } else {
                        " ".into()
                    };
                    out.extend_from_slice(end.as_bytes());
                }
                out.extend_from_slice("│".as_bytes());
                // The tip of the last column: for a one-row result, or when its number was cut.
                if line == 0 && (single || row.last().is_some_and(|c| c.cut)) {
                    if let Some(tip) = row.last().and_then(|c| c.tip.as_ref()) {
                        out.extend_from_slice(tip.as_bytes());
                    }
                }
                out.push(b'\n');
            }
            if gap_after == Some(r as u64 + 1) {
                // The rows left out: a dashed line as wide as the table.
                if !self.compact {
                    rule(out, "├", "─", "┼", "┤");
                }
                let width = 1 + w.iter().map(|x| x + 3).sum::<usize>();
                out.extend_from_slice(pad.as_bytes());
                for k in 0..width {
                    out.extend_from_slice(if k % 2 == 0 { "─" } else { " " }.as_bytes());
                }
                out.push(b'\n');
            }
        }
        if s.ext.pretty_footer && self.total >= s.ext.pretty_footer_min_rows.max(1) {
            if self.compact {
                compact_names(out, "└", "┴", "┘");
            } else {
                rule(out, "┢", "━", "╈", "┪");
                names_line(out);
                rule(out, "┗", "━", "┻", "┛");
            }
        } else {
            rule(out, "└", "─", "┴", "┘");
        }
        // The server says so once the result reaches output_format_pretty_max_rows.
        if self.total >= self.head_max + self.tail_max && self.total > 0 {
            out.extend_from_slice(
                format!("Showed {} out of {} rows.\n", self.head.len() + self.tail.len(), self.total).as_bytes(),
            );
        }
    }
}
