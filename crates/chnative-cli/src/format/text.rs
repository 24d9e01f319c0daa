//! Markdown, Values, XML, TSKV and ODBCDriver2, written from dynamic values
//! the way the server writes them.

use chnative::Value;

use super::{adjust, aligns_right, plain, tsv_field, Header, Trailer, Writer};
use crate::render::{self, FormatSettings};

/// Markdown: a table of TabSeparated-escaped cells; numbers and dates are
/// right-aligned (`-:`). Totals and extremes are not written (the server's
/// rule too).
pub struct Markdown;

impl Writer for Markdown {
    fn begin(&mut self, out: &mut Vec<u8>, h: &Header, _s: &FormatSettings) {
        out.push(b'|');
        for n in &h.names {
            out.push(b' ');
            render::write_escaped(out, n.as_bytes());
            out.extend_from_slice(b" |");
        }
        out.extend_from_slice(b"\n|");
        for t in &h.types {
            out.extend_from_slice(if aligns_right(t) { b"-:|" } else { b":-|" });
        }
        out.push(b'\n');
    }

    fn row(&mut self, out: &mut Vec<u8>, _h: &Header, row: &[Value], _first: bool, s: &FormatSettings) {
        out.push(b'|');
        for v in row {
            out.push(b' ');
            tsv_field(out, &adjust(v.clone(), &s.ext), s);
            out.extend_from_slice(b" |");
        }
        out.push(b'\n');
    }

    fn end(&mut self, _out: &mut Vec<u8>, _h: &Header, _t: &Trailer, _s: &FormatSettings) {}
}

/// Values: `(1,'a'),(2,'b')`, strings quoted and escaped, no line end.
pub struct Values;

impl Writer for Values {
    fn begin(&mut self, _out: &mut Vec<u8>, _h: &Header, _s: &FormatSettings) {}

    fn row(&mut self, out: &mut Vec<u8>, _h: &Header, row: &[Value], first: bool, s: &FormatSettings) {
        if !first {
            out.push(b',');
        }
        out.push(b'(');
        for (k, v) in row.iter().enumerate() {
            if k > 0 {
                out.push(b',');
            }
            match adjust(v.clone(), &s.ext) {
                Value::Null => out.extend_from_slice(b"NULL"),
                v => render::write_nested(out, &v),
            }
        }
        out.push(b')');
    }

    fn end(&mut self, _out: &mut Vec<u8>, _h: &Header, _t: &Trailer, _s: &FormatSettings) {}
}

/// A TSKV name: `\\`, tab, line feed and `=` escaped (quotes stay).
fn tskv_name(out: &mut Vec<u8>, name: &[u8]) {
    for &b in name {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'=' => out.extend_from_slice(b"\\="),
            b => out.push(b),
        }
    }
}

/// TSKV: `name=value` fields, TabSeparated-escaped, one row a line.
pub struct Tskv;

impl Writer for Tskv {
    fn begin(&mut self, _out: &mut Vec<u8>, _h: &Header, _s: &FormatSettings) {}

    fn row(&mut self, out: &mut Vec<u8>, h: &Header, row: &[Value], _first: bool, s: &FormatSettings) {
        for (k, v) in row.iter().enumerate() {
            if k > 0 {
                out.push(b'\t');
            }
            tskv_name(out, h.names[k].as_bytes());
            out.push(b'=');
            tsv_field(out, &adjust(v.clone(), &s.ext), s);
        }
        // TSKV ends lines with \n whatever output_format_tsv_crlf_end_of_line says.
        out.push(b'\n');
    }

    fn end(&mut self, _out: &mut Vec<u8>, _h: &Header, _t: &Trailer, _s: &FormatSettings) {}
}

/// XML text: `<` and `&` escaped (the server's rule; `>` and quotes stay).
fn xml_escape(out: &mut Vec<u8>, text: &[u8]) {
    for &b in text {
        match b {
            b'<' => out.extend_from_slice(b"&lt;"),
            b'&' => out.extend_from_slice(b"&amp;"),
            b => out.push(b),
        }
    }
}

/// A value inside an XML element: arrays, tuples and maps as elements of
/// their own, NULL as `\N`.
fn xml_value(out: &mut Vec<u8>, v: &Value) {
    let list = |out: &mut Vec<u8>, tag: &str, items: &[Value]| {
        out.extend_from_slice(format!("<{tag}>").as_bytes());
        for item in items {
            out.extend_from_slice(b"<elem>");
            xml_value(out, item);
            out.extend_from_slice(b"</elem>");
        }
        out.extend_from_slice(format!("</{tag}>").as_bytes());
    };
    match v {
        Value::Null => out.extend_from_slice(b"\\N"),
        Value::Array(items) => list(out, "array", items),
        Value::Tuple(items) | Value::NamedTuple { values: items, .. } => list(out, "tuple", items),
        Value::Map(pairs) => {
            out.extend_from_slice(b"<map>");
            for (k, x) in pairs {
                out.extend_from_slice(b"<elem><key>");
                xml_value(out, k);
                out.extend_from_slice(b"</key><value>");
                xml_value(out, x);
                out.extend_from_slice(b"</value></elem>");
            }
            out.extend_from_slice(b"</map>");
        }
        v => {
            let mut text = Vec::new();
            render::write_plain(&mut text, v);
            xml_escape(out, &text);
        }
    }
}

/// The element name of a column: its name when that is an identifier, else `field`.
fn tag(name: &str) -> &str {
    let mut b = name.bytes();
    let ok = matches!(b.next(), Some(c) if c.is_ascii_alphabetic() || c == b'_')
        && b.all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'));
    if ok {
        name
    } else {
        "field"
    }
}

/// XML: a document with meta, data, totals, extremes and statistics.
pub struct Xml;

impl Xml {
    fn fields(out: &mut Vec<u8>, h: &Header, row: &[Value], indent: &str, s: &FormatSettings) {
        for (k, v) in row.iter().enumerate() {
            let t = tag(&h.names[k]);
            out.extend_from_slice(format!("{indent}<{t}>").as_bytes());
            xml_value(out, &adjust(v.clone(), &s.ext));
            out.extend_from_slice(format!("</{t}>\n").as_bytes());
        }
    }
}

impl Writer for Xml {
    fn begin(&mut self, out: &mut Vec<u8>, h: &Header, _s: &FormatSettings) {
        out.extend_from_slice(b"<?xml version='1.0' encoding='UTF-8' ?>\n<result>\n\t<meta>\n\t\t<columns>\n");
        for (n, t) in h.names.iter().zip(&h.type_names) {
            out.extend_from_slice(b"\t\t\t<column>\n\t\t\t\t<name>");
            xml_escape(out, n.as_bytes());
            out.extend_from_slice(b"</name>\n\t\t\t\t<type>");
            xml_escape(out, t.as_bytes());
            out.extend_from_slice(b"</type>\n\t\t\t</column>\n");
        }
        out.extend_from_slice(b"\t\t</columns>\n\t</meta>\n\t<data>\n");
    }

    fn row(&mut self, out: &mut Vec<u8>, h: &Header, row: &[Value], _first: bool, s: &FormatSettings) {
        out.extend_from_slice(b"\t\t<row>\n");
        Xml::fields(out, h, row, "\t\t\t", s);
        out.extend_from_slice(b"\t\t</row>\n");
    }

    fn end(&mut self, out: &mut Vec<u8>, h: &Header, t: &Trailer, s: &FormatSettings) {
        out.extend_from_slice(b"\t</data>\n");
        if let Some(totals) = &t.totals {
            out.extend_from_slice(b"\t<totals>\n");
            Xml::fields(out, h, totals, "\t\t", s);
            out.extend_from_slice(b"\t</totals>\n");
        }
        if let Some((min, max)) = &t.extremes {
            out.extend_from_slice(b"\t<extremes>\n");
            for (name, row) in [("min", min), ("max", max)] {
                out.extend_from_slice(format!("\t\t<{name}>\n").as_bytes());
                Xml::fields(out, h, row, "\t\t\t", s);
                out.extend_from_slice(format!("\t\t</{name}>\n").as_bytes());
            }
            out.extend_from_slice(b"\t</extremes>\n");
        }
        out.extend_from_slice(format!("\t<rows>{}</rows>\n", t.rows).as_bytes());
        if let Some(n) = t.rows_before_limit {
            out.extend_from_slice(
                format!("\t<rows_before_limit_at_least>{n}</rows_before_limit_at_least>\n").as_bytes(),
            );
        }
        if s.ext.write_statistics {
            out.extend_from_slice(
                format!(
                    "\t<statistics>\n\t\t<elapsed>{}</elapsed>\n\t\t<rows_read>{}</rows_read>\n\t\t<bytes_read>{}</bytes_read>\n\t</statistics>\n",
                    t.elapsed, t.rows_read, t.bytes_read
                )
                .as_bytes(),
            );
        }
        out.extend_from_slice(b"</result>\n");
    }
}

/// ODBCDriver2: a binary table for the ODBC driver. Two header rows (`name`
/// and the names, `type` and the types), then each cell as a 32-bit
/// little-endian length and its text; NULL is the length -1. The totals row
/// comes after the rows.
pub struct OdbcDriver2;

fn odbc_string(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b);
}

impl Writer for OdbcDriver2 {
    fn begin(&mut self, out: &mut Vec<u8>, h: &Header, _s: &FormatSettings) {
        out.extend_from_slice(&2u32.to_le_bytes());
        // The types without a LowCardinality around them (the server's ODBC header).
        let types: Vec<String> = h
            .type_names
            .iter()
            .map(|t| match t.strip_prefix("LowCardinality(").and_then(|t| t.strip_suffix(')')) {
                Some(inner) => inner.to_string(),
                None => t.clone(),
            })
            .collect();
        for (title, items) in [("name", &h.names), ("type", &types)] {
            out.extend_from_slice(&(items.len() as u32 + 1).to_le_bytes());
            odbc_string(out, title.as_bytes());
            for x in items.iter() {
                odbc_string(out, x.as_bytes());
            }
        }
    }

    fn row(&mut self, out: &mut Vec<u8>, _h: &Header, row: &[Value], _first: bool, s: &FormatSettings) {
        for v in row {
            match adjust(v.clone(), &s.ext) {
                Value::Null => out.extend_from_slice(&(-1i32).to_le_bytes()),
                v => {
                    let mut text = Vec::new();
                    plain(&mut text, &v, s);
                    odbc_string(out, &text);
                }
            }
        }
    }

    fn end(&mut self, out: &mut Vec<u8>, h: &Header, t: &Trailer, s: &FormatSettings) {
        // The totals row follows the rows (the extremes are not written).
        if let Some(totals) = &t.totals {
            self.row(out, h, totals, false, s);
        }
    }
}
