//! Values as text, the way the server writes them in each output format.
//!
//! [`Value`]'s `Display` is the server's `toString`; these functions add what
//! the formats do on top of it: TabSeparated escaping, CSV quoting, JSON
//! strings and number quoting, and the raw bytes of strings that are not UTF-8
//! (the server writes them as they are; `Display` cannot).

use chnative::{DataType, Value};

/// The format settings that change how values are written (the server's
/// defaults in 26.9; a `--name=value` setting flag overrides them).
#[derive(Debug, Clone)]
pub struct FormatSettings {
    /// `output_format_json_quote_64bit_integers` (default 0).
    pub json_quote_64bit_integers: bool,
    /// `output_format_json_quote_64bit_floats` (default 0).
    pub json_quote_64bit_floats: bool,
    /// `output_format_json_quote_denormals` (default 0: nan and inf are `null`).
    pub json_quote_denormals: bool,
    /// `output_format_json_quote_decimals` (default 0).
    pub json_quote_decimals: bool,
    /// `output_format_json_escape_forward_slashes` (default 1).
    pub json_escape_forward_slashes: bool,
    /// `output_format_json_named_tuples_as_objects` (default 1).
    pub json_named_tuples_as_objects: bool,
    /// `format_csv_delimiter` (default `,`).
    pub csv_delimiter: u8,
    /// `output_format_pretty_single_large_number_tip_threshold` (default 1,000,000; 0: off).
    pub number_tip_threshold: f64,
    /// `output_format_pretty_row_numbers` (default 1).
    pub pretty_row_numbers: bool,
    /// The other settings of the server's format layer (see `format::settings`).
    pub ext: crate::format::Ext,
}

impl Default for FormatSettings {
    fn default() -> Self {
        FormatSettings {
            json_quote_64bit_integers: false,
            json_quote_64bit_floats: false,
            json_quote_denormals: false,
            json_quote_decimals: false,
            json_escape_forward_slashes: true,
            json_named_tuples_as_objects: true,
            csv_delimiter: b',',
            number_tip_threshold: 1_000_000.0,
            pretty_row_numbers: true,
            ext: crate::format::Ext::default(),
        }
    }
}

impl FormatSettings {
    /// Applies one setting given on the command line; settings that do not
    /// change the client-side rendering are ignored (they still go to the server).
    pub fn apply(&mut self, name: &str, value: &str) -> Result<(), String> {
        if self.ext.apply(name, value)? {
            return Ok(());
        }
        let flag = || -> Result<bool, String> {
            match value.to_ascii_lowercase().as_str() {
                "1" | "true" => Ok(true),
                "0" | "false" => Ok(false),
                _ => Err(format!("setting {name}: `{value}` is not 0 or 1")),
            }
        };
        match name {
            "output_format_json_quote_64bit_integers" => self.json_quote_64bit_integers = flag()?,
            "output_format_json_quote_64bit_floats" => self.json_quote_64bit_floats = flag()?,
            "output_format_json_quote_denormals" => self.json_quote_denormals = flag()?,
            "output_format_json_quote_decimals" => self.json_quote_decimals = flag()?,
            "output_format_json_escape_forward_slashes" => self.json_escape_forward_slashes = flag()?,
            "output_format_json_named_tuples_as_objects" => self.json_named_tuples_as_objects = flag()?,
            "output_format_pretty_row_numbers" => self.pretty_row_numbers = flag()?,
            "format_csv_delimiter" => match value.as_bytes() {
                [b] => self.csv_delimiter = *b,
                _ => return Err(format!("setting {name}: `{value}` is not one character")),
            },
            "output_format_pretty_single_large_number_tip_threshold" => {
                self.number_tip_threshold =
                    value.parse::<f64>().map_err(|_| format!("setting {name}: `{value}` is not a number"))?
            }
            _ => {}
        }
        Ok(())
    }
}

/// Appends a value's `Display` text.
fn display(out: &mut Vec<u8>, v: &impl std::fmt::Display) {
    use std::io::Write;
    let _ = write!(out, "{v}");
}

/// Appends an unsigned integer in decimal (the hot path of numeric columns).
pub fn write_u64(out: &mut Vec<u8>, mut v: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

/// `YYYY-MM-DD hh:mm:ss` of a DateTime, rendered a column at a time: the date
/// part of the last day is kept (consecutive rows mostly fall on the same day).
#[derive(Debug)]
pub struct DateTimeText {
    day: i64,
    date: [u8; 10],
}

impl Default for DateTimeText {
    fn default() -> Self {
        DateTimeText { day: i64::MIN, date: [0; 10] }
    }
}

impl DateTimeText {
    /// Appends the wall-clock text of `local_secs` (seconds since 1970-01-01 00:00 of the
    /// local calendar), as `toString` writes a DateTime.
    #[inline]
    pub fn write(&mut self, out: &mut Vec<u8>, local_secs: i64) {
        let day = local_secs.div_euclid(86_400);
        if day != self.day {
            let (y, m, d) = chnative::proto::convert::calendar::civil_from_days(day);
            let mut date = Vec::with_capacity(10);
            use std::io::Write;
            let _ = write!(date, "{y:04}-{m:02}-{d:02}");
            if date.len() != 10 {
                // A year past 9999 (not a DateTime's): no cache, the text as it is.
                out.extend_from_slice(&date);
                self.day = i64::MIN;
                return self.write_time(out, local_secs);
            }
            self.date.copy_from_slice(&date);
            self.day = day;
        }
        out.extend_from_slice(&self.date);
        self.write_time(out, local_secs);
    }

    #[inline]
    fn write_time(&self, out: &mut Vec<u8>, local_secs: i64) {
        let s = local_secs.rem_euclid(86_400) as u32;
        let (h, m, s) = (s / 3600, s / 60 % 60, s % 60);
        let two = |x: u32| [b'0' + (x / 10) as u8, b'0' + (x % 10) as u8];
        let (h, m, s) = (two(h), two(m), two(s));
        out.extend_from_slice(&[b' ', h[0], h[1], b':', m[0], m[1], b':', s[0], s[1]]);
    }
}

/// Appends a signed integer in decimal.
pub fn write_i64(out: &mut Vec<u8>, v: i64) {
    if v < 0 {
        out.push(b'-');
    }
    write_u64(out, v.unsigned_abs());
}

/// Backslash escapes of TabSeparated (and of strings quoted inside arrays,
/// tuples and maps): `\b \f \n \r \t \0 \\` and the quote `'`.
pub fn write_escaped(out: &mut Vec<u8>, bytes: &[u8]) {
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let esc: &[u8] = match b {
            b'\\' => b"\\\\",
            b'\'' => b"\\'",
            b'\n' => b"\\n",
            b'\t' => b"\\t",
            b'\r' => b"\\r",
            0 => b"\\0",
            8 => b"\\b",
            12 => b"\\f",
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i]);
        out.extend_from_slice(esc);
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
}

/// A CSV string: double-quoted, `"` doubled, everything else as it is.
pub fn write_csv_string(out: &mut Vec<u8>, bytes: &[u8]) {
    out.push(b'"');
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'"' {
            out.extend_from_slice(&bytes[start..=i]);
            out.push(b'"');
            start = i + 1;
        }
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// A JSON string as the server writes it: `"` and `\` escaped, `/` as `\/`
/// (by default), control characters as `\b \f \n \r \t` or `\u00XX`,
/// U+2028 and U+2029 as `\u2028` `\u2029`; other bytes (invalid UTF-8
/// included) as they are.
pub fn write_json_string(out: &mut Vec<u8>, bytes: &[u8], escape_slash: bool) {
    out.push(b'"');
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let esc: Option<&[u8]> = match b {
            b'"' => Some(b"\\\""),
            b'\\' => Some(b"\\\\"),
            b'/' if escape_slash => Some(b"\\/"),
            8 => Some(b"\\b"),
            12 => Some(b"\\f"),
            b'\n' => Some(b"\\n"),
            b'\r' => Some(b"\\r"),
            b'\t' => Some(b"\\t"),
            0xE2 if bytes.get(i + 1) == Some(&0x80) && matches!(bytes.get(i + 2), Some(0xA8 | 0xA9)) => {
                out.extend_from_slice(&bytes[start..i]);
                out.extend_from_slice(if bytes[i + 2] == 0xA8 { b"\\u2028" } else { b"\\u2029" });
                i += 3;
                start = i;
                continue;
            }
            c if c < 0x20 => {
                out.extend_from_slice(&bytes[start..i]);
                out.extend_from_slice(format!("\\u{:04X}", c).as_bytes());
                i += 1;
                start = i;
                continue;
            }
            _ => None,
        };
        if let Some(e) = esc {
            out.extend_from_slice(&bytes[start..i]);
            out.extend_from_slice(e);
            start = i + 1;
        }
        i += 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// The bytes of a String or FixedString (all of them, padding included) or an
/// Enum's label.
fn string_bytes(v: &Value) -> Option<&[u8]> {
    match v {
        Value::String(b) | Value::FixedString(b) => Some(b),
        Value::Enum { label, .. } => Some(label.as_bytes()),
        _ => None,
    }
}

/// Whether a value is written quoted inside arrays (and in CSV): everything
/// but numbers, Bool and NULL.
fn is_quoted_kind(v: &Value) -> bool {
    !(is_integer(v)
        || matches!(
            v,
            Value::Null
                | Value::Bool(_)
                | Value::Float32(_)
                | Value::Float64(_)
                | Value::BFloat16(_)
                | Value::Decimal(_)
                | Value::Array(_)
                | Value::Tuple(_)
                | Value::NamedTuple { .. }
                | Value::Map(_)
        ))
}

/// Whether a value is one of the integer kinds, 8 to 256 bits.
fn is_integer(v: &Value) -> bool {
    matches!(
        v,
        Value::Int8(_)
            | Value::Int16(_)
            | Value::Int32(_)
            | Value::Int64(_)
            | Value::Int128(_)
            | Value::Int256(_)
            | Value::UInt8(_)
            | Value::UInt16(_)
            | Value::UInt32(_)
            | Value::UInt64(_)
            | Value::UInt128(_)
            | Value::UInt256(_)
            | Value::Interval { .. }
    )
}

/// A value inside an array, tuple or map: strings (and dates, UUIDs, …) in
/// single quotes with backslash escapes, as `toString` writes them.
pub fn write_nested(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Array(items) => write_list(out, b'[', items, b']'),
        Value::Tuple(items) | Value::NamedTuple { values: items, .. } => write_list(out, b'(', items, b')'),
        Value::Map(pairs) => {
            out.push(b'{');
            for (k, (key, val)) in pairs.iter().enumerate() {
                if k > 0 {
                    out.push(b',');
                }
                write_nested(out, key);
                out.push(b':');
                write_nested(out, val);
            }
            out.push(b'}');
        }
        v => match string_bytes(v) {
            Some(b) => {
                // Inside an array a FixedString keeps its padding, escaped.
                out.push(b'\'');
                write_escaped(out, b);
                out.push(b'\'');
            }
            None if is_quoted_kind(v) => {
                out.push(b'\'');
                display(out, v);
                out.push(b'\'');
            }
            None => display(out, v),
        },
    }
}

/// `items` between `open` and `close`, comma-separated, each as [`write_nested`].
fn write_list(out: &mut Vec<u8>, open: u8, items: &[Value], close: u8) {
    out.push(open);
    for (k, item) in items.iter().enumerate() {
        if k > 0 {
            out.push(b',');
        }
        write_nested(out, item);
    }
    out.push(close);
}

/// The value as `toString` shows it, strings with all their bytes (Vertical,
/// Pretty).
pub fn write_plain(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Array(_) | Value::Tuple(_) | Value::NamedTuple { .. } | Value::Map(_) => write_nested(out, v),
        v => match string_bytes(v) {
            Some(b) => out.extend_from_slice(b),
            None => display(out, v),
        },
    }
}

/// A TabSeparated field.
pub fn write_tsv(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Null => out.extend_from_slice(b"\\N"),
        Value::Array(_) | Value::Tuple(_) | Value::NamedTuple { .. } | Value::Map(_) => write_nested(out, v),
        v => match string_bytes(v) {
            Some(b) => write_escaped(out, b),
            None => display(out, v),
        },
    }
}

/// A CSV field (a bare tuple becomes one field per element).
pub fn write_csv(out: &mut Vec<u8>, v: &Value, delimiter: u8) {
    match v {
        Value::Null => out.extend_from_slice(b"\\N"),
        Value::Tuple(items) | Value::NamedTuple { values: items, .. } => {
            for (k, item) in items.iter().enumerate() {
                if k > 0 {
                    out.push(delimiter);
                }
                write_csv(out, item, delimiter);
            }
        }
        Value::Array(_) | Value::Map(_) => {
            let mut text = Vec::new();
            write_nested(&mut text, v);
            write_csv_string(out, &text);
        }
        v => match string_bytes(v) {
            Some(b) => write_csv_string(out, b),
            None if is_quoted_kind(v) => {
                let mut text = Vec::new();
                display(&mut text, v);
                write_csv_string(out, &text);
            }
            None => display(out, v),
        },
    }
}

/// The type under Nullable, LowCardinality and SimpleAggregateFunction.
fn bare(ty: Option<&DataType>) -> Option<&DataType> {
    match ty? {
        DataType::Nullable(t) | DataType::LowCardinality(t) | DataType::SimpleAggregateFunction(_, t) => bare(Some(t)),
        t => Some(t),
    }
}

/// A JSON value as JSONEachRow writes it. `ty` is the column's type where
/// known (named tuples become objects); numbers are quoted by the settings.
pub fn write_json(out: &mut Vec<u8>, v: &Value, ty: Option<&DataType>, s: &FormatSettings) {
    // Nested and the geo types as the arrays and tuples they are made of.
    let shape = bare(ty).map(DataType::wire_shape);
    let ty = shape.as_deref();
    // A JSON column arrives as its JSON text (output_format_native_write_json_as_string): written as it is.
    if let (Some(DataType::Json(_)), Value::String(text)) = (ty, v) {
        out.extend_from_slice(text);
        return;
    }
    let quoted_number = |out: &mut Vec<u8>, quote: bool| {
        if quote {
            out.push(b'"');
        }
        display(out, v);
        if quote {
            out.push(b'"');
        }
    };
    match v {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        // An interval is never quoted, as the server writes it.
        Value::Int8(_)
        | Value::Int16(_)
        | Value::Int32(_)
        | Value::UInt8(_)
        | Value::UInt16(_)
        | Value::UInt32(_)
        | Value::Interval { .. } => display(out, v),
        Value::Int64(_)
        | Value::Int128(_)
        | Value::Int256(_)
        | Value::UInt64(_)
        | Value::UInt128(_)
        | Value::UInt256(_) => quoted_number(out, s.json_quote_64bit_integers),
        Value::Float32(x) | Value::BFloat16(x) => json_float(out, f64::from(*x), v, false, s),
        Value::Float64(x) => json_float(out, *x, v, s.json_quote_64bit_floats, s),
        Value::Decimal(_) => quoted_number(out, s.json_quote_decimals),
        Value::Array(items) => {
            let inner = match ty {
                Some(DataType::Array(t)) => Some(t.as_ref()),
                _ => None,
            };
            out.push(b'[');
            for (k, item) in items.iter().enumerate() {
                if k > 0 {
                    out.push(b',');
                }
                write_json(out, item, inner, s);
            }
            out.push(b']');
        }
        // A named tuple's names come with it (inside Dynamic the type has none).
        Value::NamedTuple { names, values } if s.json_named_tuples_as_objects => {
            let elems = match ty {
                Some(DataType::Tuple(e)) if e.len() == values.len() => Some(e),
                _ => None,
            };
            out.push(b'{');
            for (k, (name, item)) in names.iter().zip(values).enumerate() {
                if k > 0 {
                    out.push(b',');
                }
                write_json_string(out, name.as_bytes(), s.json_escape_forward_slashes);
                out.push(b':');
                write_json(out, item, elems.map(|e| &e[k].1), s);
            }
            out.push(b'}');
        }
        Value::Tuple(items) | Value::NamedTuple { values: items, .. } => {
            let elems = match ty {
                Some(DataType::Tuple(e)) if e.len() == items.len() => Some(e),
                _ => None,
            };
            let named = s.json_named_tuples_as_objects
                && elems.is_some_and(|e| !e.is_empty() && e.iter().all(|(n, _)| n.is_some()));
            out.push(if named { b'{' } else { b'[' });
            for (k, item) in items.iter().enumerate() {
                if k > 0 {
                    out.push(b',');
                }
                let elem = elems.map(|e| &e[k]);
                if named {
                    if let Some((Some(name), _)) = elem {
                        write_json_string(out, name.as_bytes(), s.json_escape_forward_slashes);
                        out.push(b':');
                    }
                }
                write_json(out, item, elem.map(|(_, t)| t), s);
            }
            out.push(if named { b'}' } else { b']' });
        }
        Value::Map(pairs) => {
            let vt = match ty {
                Some(DataType::Map(_, vt)) => Some(vt.as_ref()),
                _ => None,
            };
            out.push(b'{');
            for (k, (key, val)) in pairs.iter().enumerate() {
                if k > 0 {
                    out.push(b',');
                }
                let mut text = Vec::new();
                write_plain(&mut text, key);
                write_json_string(out, &text, s.json_escape_forward_slashes);
                out.push(b':');
                write_json(out, val, vt, s);
            }
            out.push(b'}');
        }
        v => match string_bytes(v) {
            Some(b) => write_json_string(out, b, s.json_escape_forward_slashes),
            None => {
                let mut text = Vec::new();
                display(&mut text, v);
                write_json_string(out, &text, s.json_escape_forward_slashes);
            }
        },
    }
}

fn json_float(out: &mut Vec<u8>, x: f64, v: &Value, quote: bool, s: &FormatSettings) {
    if !x.is_finite() {
        if s.json_quote_denormals {
            out.push(b'"');
            display(out, v);
            out.push(b'"');
        } else if quote {
            // The server quotes the `null` of a Float64 too under output_format_json_quote_64bit_floats.
            out.extend_from_slice(b"\"null\"");
        } else {
            out.extend_from_slice(b"null");
        }
        return;
    }
    if quote {
        out.push(b'"');
    }
    display(out, v);
    if quote {
        out.push(b'"');
    }
}

/// The value of a number as f64, for the readable-number tip.
pub fn as_f64(v: &Value) -> Option<f64> {
    match v {
        Value::Float32(x) | Value::BFloat16(x) => Some(f64::from(*x)),
        Value::Float64(x) => Some(*x),
        Value::Decimal(_) => v.to_string().parse().ok(),
        v if is_integer(v) => v.to_string().parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(f: impl Fn(&mut Vec<u8>)) -> String {
        let mut out = Vec::new();
        f(&mut out);
        String::from_utf8_lossy(&out).into_owned()
    }

    #[test]
    fn integers_in_decimal() {
        let mut cases = vec![0, 1, 9, 10, 99, 100, 101, u64::MAX, u64::MAX - 1];
        for k in 1..20 {
            let p = 10u64.pow(k);
            cases.extend([p - 1, p, p + 1]);
        }
        for v in cases {
            assert_eq!(s(|o| write_u64(o, v)), v.to_string());
            assert_eq!(s(|o| write_i64(o, -(v as i64))), (-(v as i64)).to_string());
        }
        assert_eq!(s(|o| write_i64(o, i64::MIN)), i64::MIN.to_string());
    }

    #[test]
    fn tsv_escapes_like_the_server() {
        assert_eq!(s(|o| write_escaped(o, b"q'z\x08\x0c\0\r\t\\\n\x01")), "q\\'z\\b\\f\\0\\r\\t\\\\\\n\x01");
    }

    #[test]
    fn json_strings() {
        assert_eq!(s(|o| write_json_string(o, "a/b\"\u{2028}\u{1}é".as_bytes(), true)), "\"a\\/b\\\"\\u2028\\u0001é\"");
    }
}
