//! What chn renders beyond the row formats of `output.rs`: the output-format
//! settings the server honours (and where they come from), the formats
//! written from dynamic values (JSON, XML, Markdown, Values, …), and the
//! totals and extremes of a result.

pub mod json;
pub mod settings;
pub mod text;

use chnative::{DataType, Value};

use crate::render::FormatSettings;
pub use settings::Ext;

/// A result's columns: names (their bytes as sent), types and type names.
#[derive(Debug, Clone, Default)]
pub struct Header {
    /// Column names.
    pub names: Vec<String>,
    /// Column types.
    pub types: Vec<DataType>,
    /// The types as the server spells them.
    pub type_names: Vec<String>,
}

impl Header {
    /// The columns of a block (its rows are not read).
    pub fn of(block: &chnative::Block) -> Header {
        Header {
            names: block.columns().iter().map(|c| c.name().to_string()).collect(),
            types: block.columns().iter().map(|c| c.data_type().clone()).collect(),
            type_names: block.columns().iter().map(|c| c.type_name().to_string()).collect(),
        }
    }
}

/// What the formats with a trailer write after the rows (JSON, XML, …).
#[derive(Debug, Clone, Default)]
pub struct Trailer {
    /// The WITH TOTALS row.
    pub totals: Option<Vec<Value>>,
    /// The extremes: the min row and the max row.
    pub extremes: Option<(Vec<Value>, Vec<Value>)>,
    /// Rows written.
    pub rows: u64,
    /// `rows_before_limit_at_least`, when the server applied a LIMIT.
    pub rows_before_limit: Option<u64>,
    /// Seconds since the query was sent.
    pub elapsed: f64,
    /// Rows the server read.
    pub rows_read: u64,
    /// Bytes the server read.
    pub bytes_read: u64,
}

/// A format written row by row from dynamic values.
pub trait Writer: Send {
    /// What comes before the rows (once; also for a result without rows).
    fn begin(&mut self, out: &mut Vec<u8>, h: &Header, s: &FormatSettings);
    /// One row (`first`: the first of the result).
    fn row(&mut self, out: &mut Vec<u8>, h: &Header, row: &[Value], first: bool, s: &FormatSettings);
    /// What comes after the rows: totals, extremes, statistics.
    fn end(&mut self, out: &mut Vec<u8>, h: &Header, t: &Trailer, s: &FormatSettings);
}

/// A value as the settings of the query show it: with
/// `date_time_output_format` other than `simple`, every DateTime and
/// DateTime64 (nested ones too) becomes the text the server writes.
pub fn adjust(v: Value, ext: &Ext) -> Value {
    if ext.date_time == settings::DateTimeOutput::Simple {
        return v;
    }
    match v {
        Value::DateTime { secs, .. } => Value::String(settings::date_time_text(i64::from(secs), 0, 0, ext.date_time)),
        Value::DateTime64 { ticks, precision, .. } => {
            let scale = 10i64.pow(u32::from(precision));
            let (secs, frac) = (ticks.div_euclid(scale), ticks.rem_euclid(scale));
            Value::String(settings::date_time_text(secs, frac, precision, ext.date_time))
        }
        Value::Array(items) => Value::Array(items.into_iter().map(|x| adjust(x, ext)).collect()),
        Value::Tuple(items) => Value::Tuple(items.into_iter().map(|x| adjust(x, ext)).collect()),
        Value::NamedTuple { names, values } => {
            Value::NamedTuple { names, values: values.into_iter().map(|x| adjust(x, ext)).collect() }
        }
        Value::Map(pairs) => Value::Map(pairs.into_iter().map(|(k, x)| (adjust(k, ext), adjust(x, ext))).collect()),
        v => v,
    }
}

/// Whether a column's values are right-aligned in Pretty and Markdown
/// (numbers, dates and times, under Nullable and LowCardinality too).
pub fn aligns_right(t: &DataType) -> bool {
    match t {
        DataType::Nullable(t) | DataType::LowCardinality(t) | DataType::SimpleAggregateFunction(_, t) => {
            aligns_right(t)
        }
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
        | DataType::Decimal { .. }
        | DataType::Date
        | DataType::Date32
        | DataType::DateTime(_)
        | DataType::DateTime64(..)
        | DataType::Time
        | DataType::Time64(_)
        | DataType::Interval(_) => true,
        _ => false,
    }
}

/// A top-level TabSeparated field (TSV, TSKV, Markdown): NULL and Bool as
/// the settings spell them.
pub fn tsv_field(out: &mut Vec<u8>, v: &Value, s: &FormatSettings) {
    match v {
        Value::Null => out.extend_from_slice(&s.ext.tsv_null),
        Value::Bool(b) => crate::render::write_escaped(out, s.ext.bool_text(*b)),
        v => crate::render::write_tsv(out, v),
    }
}

/// A top-level TSVRaw field: strings as they are.
pub fn tsv_raw_field(out: &mut Vec<u8>, v: &Value, s: &FormatSettings) {
    match v {
        Value::Null => out.extend_from_slice(&s.ext.tsv_null),
        Value::Bool(b) => out.extend_from_slice(s.ext.bool_text(*b)),
        Value::String(b) | Value::FixedString(b) => out.extend_from_slice(b),
        Value::Enum { label, .. } => out.extend_from_slice(label.as_bytes()),
        v => crate::render::write_tsv(out, v),
    }
}

/// A top-level CSV field: NULL and Bool as the settings spell them (a bare
/// tuple is one field per element).
pub fn csv_field(out: &mut Vec<u8>, v: &Value, s: &FormatSettings) {
    match v {
        Value::Null => out.extend_from_slice(&s.ext.csv_null),
        Value::Bool(b) => out.extend_from_slice(s.ext.bool_text(*b)),
        Value::Tuple(items) | Value::NamedTuple { values: items, .. } => {
            for (k, item) in items.iter().enumerate() {
                if k > 0 {
                    out.push(s.csv_delimiter);
                }
                csv_field(out, item, s);
            }
        }
        v => crate::render::write_csv(out, v, s.csv_delimiter),
    }
}

/// A top-level value as `serializeText` writes it (Pretty, Vertical,
/// JSONStrings, ODBCDriver2): strings as they are, Bool as the settings say.
pub fn plain(out: &mut Vec<u8>, v: &Value, s: &FormatSettings) {
    match v {
        v if s.ext.color && s.ext.highlight_digit_groups && crate::render::as_f64(v).is_some() => {
            let mut text = Vec::new();
            crate::render::write_plain(&mut text, v);
            out.extend_from_slice(&highlight_digits(&text));
        }
        Value::Null => out.extend_from_slice("ᴺᵁᴸᴸ".as_bytes()),
        Value::Bool(b) => out.extend_from_slice(s.ext.bool_text(*b)),
        v => crate::render::write_plain(out, v),
    }
}

/// The readable-number tip of a number (Pretty, Vertical): ` -- 12.35
/// million` past `output_format_pretty_single_large_number_tip_threshold`;
/// none for a number of 18 to 20 digits (the server's rule: those are ids
/// and hashes more often than quantities); grey with colours.
pub fn tip(v: &Value, s: &FormatSettings) -> Option<String> {
    const UNITS: [&str; 22] = [
        "",
        " thousand",
        " million",
        " billion",
        " trillion",
        " quadrillion",
        " quintillion",
        " sextillion",
        " septillion",
        " octillion",
        " nonillion",
        " decillion",
        " undecillion",
        " duodecillion",
        " tredecillion",
        " quattuordecillion",
        " quindecillion",
        " sexdecillion",
        " septendecillion",
        " octodecillion",
        " novemdecillion",
        " vigintillion",
    ];
    let threshold = s.number_tip_threshold;
    if threshold <= 0.0 {
        return None;
    }
    let mut x = crate::render::as_f64(v)?;
    if !x.is_finite() || x.abs() <= threshold {
        return None;
    }
    let mut text = Vec::new();
    crate::render::write_plain(&mut text, v);
    let digits = text.iter().take_while(|&&c| c != b'.' && c != b'e').filter(|c| c.is_ascii_digit()).count();
    if (18..=20).contains(&digits) {
        return None;
    }
    let mut i = 0;
    while i + 1 < UNITS.len() && x.abs() >= 1000.0 {
        x /= 1000.0;
        i += 1;
    }
    // Two decimals, in exponent form from 1e60 on (where the server's fixed notation gives up).
    let tip = if x.abs() >= 1e60 { format!(" -- {x:e}{}", UNITS[i]) } else { format!(" -- {x:.2}{}", UNITS[i]) };
    Some(if s.ext.color { format!("\x1b[90m{tip}\x1b[0m") } else { tip })
}

/// A number's text with the lowest digit of each group of three (but the
/// last) underlined, as the server's Pretty formats show numbers of five
/// digits or more with colours (`output_format_pretty_highlight_digit_groups`).
pub fn highlight_digits(text: &[u8]) -> Vec<u8> {
    let start = usize::from(text.first() == Some(&b'-'));
    let end = text.iter().position(|&c| c == b'.' || c == b'e').unwrap_or(text.len());
    let int = &text[start..end];
    if int.len() < 5 || !int.iter().all(u8::is_ascii_digit) {
        return text.to_vec();
    }
    let mut out = text[..start].to_vec();
    for (k, &d) in int.iter().enumerate() {
        let from_right = int.len() - k - 1;
        if from_right > 0 && from_right.is_multiple_of(3) {
            out.extend_from_slice(b"\x1b[4m");
            out.push(d);
            out.extend_from_slice(b"\x1b[0m");
        } else {
            out.push(d);
        }
    }
    out.extend_from_slice(&text[end..]);
    out
}

/// The line end of TSV-like formats.
pub fn tsv_eol(out: &mut Vec<u8>, s: &FormatSettings) {
    if s.ext.tsv_crlf {
        out.push(b'\r');
    }
    out.push(b'\n');
}

/// The line end of CSV.
pub fn csv_eol(out: &mut Vec<u8>, s: &FormatSettings) {
    if s.ext.csv_crlf {
        out.push(b'\r');
    }
    out.push(b'\n');
}

/// Makes the writer of a format rendered from dynamic values, `None` for the
/// formats of `output.rs`.
pub fn writer(name: &str) -> Option<Box<dyn Writer>> {
    Some(match name {
        "JSON" => Box::new(ValidUtf8(json::Json::new(json::Shape::Objects, false))),
        "JSONStrings" => Box::new(ValidUtf8(json::Json::new(json::Shape::Objects, true))),
        "JSONCompact" => Box::new(ValidUtf8(json::Json::new(json::Shape::Arrays, false))),
        "JSONCompactStrings" => Box::new(ValidUtf8(json::Json::new(json::Shape::Arrays, true))),
        "JSONStringsEachRow" => Box::new(json::EachRow::strings(false)),
        "JSONStringsEachRowWithProgress" => Box::new(json::EachRow::strings(true)),
        "JSONEachRowWithProgress" => Box::new(json::EachRow::values(true)),
        "JSONCompactEachRow" => Box::new(json::CompactEachRow::new(false, false)),
        "JSONCompactStringsEachRow" => Box::new(json::CompactEachRow::new(true, false)),
        "JSONCompactEachRowWithNames" => Box::new(json::CompactEachRow::new(false, true)),
        "Markdown" => Box::new(text::Markdown),
        "Values" => Box::new(text::Values),
        "XML" => Box::new(ValidUtf8(text::Xml)),
        "TSKV" => Box::new(text::Tskv),
        "ODBCDriver2" => Box::new(text::OdbcDriver2),
        _ => return None,
    })
}

/// Appends `bytes` with each run of bytes that are not UTF-8 replaced by one
/// U+FFFD, as the server's JSON and XML documents are written.
pub fn push_valid_utf8(out: &mut Vec<u8>, bytes: &[u8]) {
    let mut replaced = false;
    for chunk in bytes.utf8_chunks() {
        if !chunk.valid().is_empty() {
            out.extend_from_slice(chunk.valid().as_bytes());
            replaced = false;
        }
        if !chunk.invalid().is_empty() && !replaced {
            out.extend_from_slice("\u{FFFD}".as_bytes());
            replaced = true;
        }
    }
}

/// A writer whose output is made valid UTF-8 (JSON, JSONCompact, … and XML).
struct ValidUtf8<W>(W);

impl<W: Writer> Writer for ValidUtf8<W> {
    fn begin(&mut self, out: &mut Vec<u8>, h: &Header, s: &FormatSettings) {
        let mut tmp = Vec::new();
        self.0.begin(&mut tmp, h, s);
        push_valid_utf8(out, &tmp);
    }
    fn row(&mut self, out: &mut Vec<u8>, h: &Header, row: &[Value], first: bool, s: &FormatSettings) {
        let mut tmp = Vec::new();
        self.0.row(&mut tmp, h, row, first, s);
        push_valid_utf8(out, &tmp);
    }
    fn end(&mut self, out: &mut Vec<u8>, h: &Header, t: &Trailer, s: &FormatSettings) {
        let mut tmp = Vec::new();
        self.0.end(&mut tmp, h, t, s);
        push_valid_utf8(out, &tmp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tips() {
        let s = FormatSettings::default();
        assert_eq!(tip(&Value::UInt64(1_000_000), &s), None);
        assert_eq!(tip(&Value::Int64(-5_000_000), &s).unwrap(), " -- -5.00 million");
        assert_eq!(tip(&Value::UInt64(12_345_678_901), &s).unwrap(), " -- 12.35 billion");
        assert_eq!(tip(&Value::UInt64(u64::MAX), &s), None);
        assert_eq!(tip(&Value::Float64(1e308), &s).unwrap(), " -- 9.999999999999997e244 vigintillion");
    }

    #[test]
    fn invalid_runs_become_one_replacement() {
        let mut out = Vec::new();
        super::push_valid_utf8(&mut out, b"\xff\xfea\xc3\xe2\x82\xc3\xa9");
        assert_eq!(String::from_utf8(out).unwrap(), "\u{FFFD}a\u{FFFD}é");
    }
}
