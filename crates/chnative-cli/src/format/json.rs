//! The JSON formats written from dynamic values: JSON, JSONCompact and their
//! Strings variants (one document with meta, data, totals, extremes and
//! statistics), JSONStringsEachRow, the WithProgress line formats, and
//! JSONEachRow as an array (`output_format_json_array_of_rows`).

use chnative::{DataType, Value};

use super::{adjust, plain, Header, Trailer, Writer};
use crate::render::{self, FormatSettings};

/// One value: as JSON, or (the Strings formats) its text as a JSON string.
fn value(out: &mut Vec<u8>, v: &Value, ty: &chnative::DataType, strings: bool, s: &FormatSettings) {
    let v = adjust(v.clone(), &s.ext);
    if strings {
        let mut text = Vec::new();
        plain(&mut text, &v, s);
        render::write_json_string(out, &text, s.json_escape_forward_slashes);
    } else {
        render::write_json(out, &v, Some(ty), s);
    }
}

/// The type under Nullable, LowCardinality and SimpleAggregateFunction.
fn bare(t: &DataType) -> &DataType {
    match t {
        DataType::Nullable(t) | DataType::LowCardinality(t) | DataType::SimpleAggregateFunction(_, t) => bare(t),
        t => t,
    }
}

/// A value as the JSON format writes it (`output_format_json_pretty_print`):
/// tuples, maps and arrays of those over several lines at `indent` tabs,
/// arrays of scalars on one line.
fn pretty(out: &mut Vec<u8>, v: &Value, ty: &DataType, indent: usize, s: &FormatSettings) {
    pretty_in(out, v, ty, indent, false, s)
}

/// [`pretty`] with tabs, or (`spaces`: a Pretty cell) with `depth + 1`
/// spaces below the top and named tuples always objects.
fn pretty_in(out: &mut Vec<u8>, v: &Value, ty: &DataType, indent: usize, spaces: bool, s: &FormatSettings) {
    let tabs = |out: &mut Vec<u8>, n: usize| {
        if spaces {
            out.extend(std::iter::repeat_n(b' ', if n == 0 { 0 } else { n + 1 }))
        } else {
            out.extend(std::iter::repeat_n(b'\t', n))
        }
    };
    // Geo types and Nested are the tuples and arrays they are made of.
    let shape = bare(ty).wire_shape();
    match (v, shape.as_ref()) {
        (Value::Array(items), DataType::Array(inner))
            if !items.is_empty()
                && matches!(bare(inner), DataType::Array(_) | DataType::Tuple(_) | DataType::Map(..)) =>
        {
            out.extend_from_slice(b"[\n");
            for (k, item) in items.iter().enumerate() {
                tabs(out, indent + 1);
                pretty_in(out, item, inner, indent + 1, spaces, s);
                out.extend_from_slice(if k + 1 < items.len() { b",\n" } else { b"\n" });
            }
            tabs(out, indent);
            out.push(b']');
        }
        (Value::Tuple(items) | Value::NamedTuple { values: items, .. }, DataType::Tuple(_)) if items.is_empty() => {
            out.extend_from_slice(b"[\n\n");
            tabs(out, indent);
            out.push(b']');
        }
        (Value::Tuple(items) | Value::NamedTuple { values: items, .. }, DataType::Tuple(elems))
            if elems.len() == items.len() =>
        {
            let named = (spaces || s.json_named_tuples_as_objects) && elems.iter().all(|(n, _)| n.is_some());
            out.extend_from_slice(if named { b"{\n" } else { b"[\n" });
            for (k, (item, (name, t))) in items.iter().zip(elems.iter()).enumerate() {
                tabs(out, indent + 1);
                if let (true, Some(name)) = (named, name) {
                    key(out, name, s);
                    out.extend_from_slice(b": ");
                }
                pretty_in(out, item, t, indent + 1, spaces, s);
                out.extend_from_slice(if k + 1 < items.len() { b",\n" } else { b"\n" });
            }
            tabs(out, indent);
            out.push(if named { b'}' } else { b']' });
        }
        (Value::Map(pairs), DataType::Map(_, vt)) if !pairs.is_empty() => {
            out.extend_from_slice(b"{\n");
            for (k, (mk, mv)) in pairs.iter().enumerate() {
                tabs(out, indent + 1);
                let mut text = Vec::new();
                render::write_plain(&mut text, mk);
                render::write_json_string(out, &text, s.json_escape_forward_slashes);
                out.extend_from_slice(b": ");
                pretty_in(out, mv, vt, indent + 1, spaces, s);
                out.extend_from_slice(if k + 1 < pairs.len() { b",\n" } else { b"\n" });
            }
            tabs(out, indent);
            out.push(b'}');
        }
        (v, _) if !spaces && pretty_json_column(out, v, ty, indent, b"\t", s) => {}
        (v, _) => render::write_json(out, v, Some(ty), s),
    }
}

/// A JSON column's object as the server pretty-prints it: objects over
/// several lines (keys one level deeper than the object), arrays on one line
/// (their elements one level deeper). `unit` is one level's indentation.
pub fn pretty_json_text(out: &mut Vec<u8>, j: &crate::insert::Json, depth: usize, unit: &[u8], s: &FormatSettings) {
    use crate::insert::Json;
    let pad = |out: &mut Vec<u8>, n: usize| {
        for _ in 0..n {
            out.extend_from_slice(unit);
        }
    };
    match j {
        Json::Object(pairs) if !pairs.is_empty() => {
            out.extend_from_slice(b"{\n");
            for (k, (key, v)) in pairs.iter().enumerate() {
                pad(out, depth + 1);
                render::write_json_string(out, key, s.json_escape_forward_slashes);
                out.extend_from_slice(b": ");
                pretty_json_text(out, v, depth + 1, unit, s);
                out.extend_from_slice(if k + 1 < pairs.len() { b",\n" } else { b"\n" });
            }
            pad(out, depth);
            out.push(b'}');
        }
        Json::Object(_) => out.extend_from_slice(b"{}"),
        Json::Array(items) => {
            out.push(b'[');
            for (k, v) in items.iter().enumerate() {
                if k > 0 {
                    out.push(b',');
                }
                pretty_json_text(out, v, depth + 1, unit, s);
            }
            out.push(b']');
        }
        Json::Null => out.extend_from_slice(b"null"),
        Json::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Json::Number(n) => out.extend_from_slice(n.as_bytes()),
        Json::Str(t) | Json::Text(t) => render::write_json_string(out, t, s.json_escape_forward_slashes),
    }
}

/// A JSON column's value (its JSON text) pretty-printed, or `false` when
/// the value is not a JSON column's.
pub fn pretty_json_column(
    out: &mut Vec<u8>,
    v: &Value,
    ty: &DataType,
    depth: usize,
    unit: &[u8],
    s: &FormatSettings,
) -> bool {
    let (DataType::Json(_), Value::String(text)) = (bare(ty), v) else { return false };
    match crate::insert::parse_json(text) {
        Ok(crate::insert::Json::Object(pairs)) if pairs.is_empty() => {
            // An empty object at the top is written over two lines.
            out.extend_from_slice(b"{\n\n");
            for _ in 0..depth {
                out.extend_from_slice(unit);
            }
            out.push(b'}');
            true
        }
        Ok(j) => {
            pretty_json_text(out, &j, depth, unit, s);
            true
        }
        Err(_) => false,
    }
}

/// Whether a type is a Tuple whose elements all have names.
fn is_named_tuple(t: &DataType) -> bool {
    matches!(bare(t), DataType::Tuple(e) if !e.is_empty() && e.iter().all(|(n, _)| n.is_some()))
}

/// A Pretty cell's text for a named tuple (an indented JSON object over
/// several lines, as the server's Pretty formats show it) or an array of
/// them (`[{…},{…}]`); `false` for any other value.
pub fn pretty_cell(out: &mut Vec<u8>, v: &Value, ty: &DataType, s: &FormatSettings) -> bool {
    let shape = bare(ty).wire_shape();
    match (v, shape.as_ref()) {
        (Value::Tuple(items) | Value::NamedTuple { values: items, .. }, t)
            if !items.is_empty() && is_named_tuple(t) =>
        {
            pretty_in(out, v, t, 0, true, s);
            true
        }
        (Value::Array(items), DataType::Array(inner)) if is_named_tuple(inner) => {
            out.push(b'[');
            for (k, item) in items.iter().enumerate() {
                if k > 0 {
                    out.push(b',');
                }
                pretty_in(out, item, inner, 0, true, s);
            }
            out.push(b']');
            true
        }
        _ => false,
    }
}

fn key(out: &mut Vec<u8>, name: &str, s: &FormatSettings) {
    render::write_json_string(out, name.as_bytes(), s.json_escape_forward_slashes);
}

/// The layout of a JSON document's rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// JSON: each row an object.
    Objects,
    /// JSONCompact: each row an array.
    Arrays,
}

/// JSON, JSONStrings, JSONCompact, JSONCompactStrings.
pub struct Json {
    shape: Shape,
    strings: bool,
}

impl Json {
    /// The writer of one of the four.
    pub fn new(shape: Shape, strings: bool) -> Json {
        Json { shape, strings }
    }

    /// A row at `indent` tabs: an object over several lines, or an array on
    /// one. The values of the data rows are pretty-printed, those of the
    /// totals and extremes are not (the server's layout).
    fn write_row(&self, out: &mut Vec<u8>, h: &Header, row: &[Value], indent: usize, data: bool, s: &FormatSettings) {
        let tabs = |out: &mut Vec<u8>, n: usize| out.extend(std::iter::repeat_n(b'\t', n));
        match self.shape {
            Shape::Objects => {
                out.extend_from_slice(b"{\n");
                for (k, v) in row.iter().enumerate() {
                    tabs(out, indent + 1);
                    key(out, &h.names[k], s);
                    out.extend_from_slice(b": ");
                    if self.strings || !data {
                        value(out, v, &h.types[k], self.strings, s);
                    } else {
                        pretty(out, &adjust(v.clone(), &s.ext), &h.types[k], indent + 1, s);
                    }
                    if k + 1 < row.len() {
                        out.push(b',');
                    }
                    out.push(b'\n');
                }
                tabs(out, indent);
                out.push(b'}');
            }
            Shape::Arrays => {
                out.push(b'[');
                for (k, v) in row.iter().enumerate() {
                    if k > 0 {
                        out.extend_from_slice(b", ");
                    }
                    value(out, v, &h.types[k], self.strings, s);
                }
                out.push(b']');
            }
        }
    }
}

impl Writer for Json {
    fn begin(&mut self, out: &mut Vec<u8>, h: &Header, s: &FormatSettings) {
        out.extend_from_slice(b"{\n\t\"meta\":\n\t[\n");
        for k in 0..h.names.len() {
            out.extend_from_slice(b"\t\t{\n\t\t\t\"name\": ");
            key(out, &h.names[k], s);
            out.extend_from_slice(b",\n\t\t\t\"type\": ");
            key(out, &h.type_names[k], s);
            out.extend_from_slice(if k + 1 < h.names.len() { b"\n\t\t},\n" } else { b"\n\t\t}\n" });
        }
        out.extend_from_slice(b"\t],\n\n\t\"data\":\n\t[\n");
    }

    fn row(&mut self, out: &mut Vec<u8>, h: &Header, row: &[Value], first: bool, s: &FormatSettings) {
        if !first {
            out.extend_from_slice(b",\n");
        }
        out.extend_from_slice(b"\t\t");
        self.write_row(out, h, row, 2, true, s);
    }

    fn end(&mut self, out: &mut Vec<u8>, h: &Header, t: &Trailer, s: &FormatSettings) {
        out.extend_from_slice(b"\n\t],\n\n");
        if let Some(totals) = &t.totals {
            out.extend_from_slice(b"\t\"totals\":");
            out.extend_from_slice(if self.shape == Shape::Objects { b"\n\t" } else { b" " });
            self.write_row(out, h, totals, 1, false, s);
            out.extend_from_slice(b",\n\n");
        }
        if let Some((min, max)) = &t.extremes {
            out.extend_from_slice(b"\t\"extremes\":\n\t{\n");
            for (name, row, last) in [("min", min, false), ("max", max, true)] {
                out.extend_from_slice(format!("\t\t\"{name}\":").as_bytes());
                out.extend_from_slice(if self.shape == Shape::Objects { b"\n\t\t" } else { b" " });
                self.write_row(out, h, row, 2, false, s);
                out.extend_from_slice(if last { b"\n" } else { b",\n" });
            }
            out.extend_from_slice(b"\t},\n\n");
        }
        out.extend_from_slice(format!("\t\"rows\": {}", t.rows).as_bytes());
        if let Some(n) = t.rows_before_limit {
            out.extend_from_slice(format!(",\n\n\t\"rows_before_limit_at_least\": {n}").as_bytes());
        }
        if s.ext.write_statistics {
            out.extend_from_slice(
                format!(
                    ",\n\n\t\"statistics\":\n\t{{\n\t\t\"elapsed\": {},\n\t\t\"rows_read\": {},\n\t\t\"bytes_read\": {}\n\t}}",
                    t.elapsed, t.rows_read, t.bytes_read
                )
                .as_bytes(),
            );
        }
        out.extend_from_slice(b"\n}\n");
    }
}

/// A row as one JSON object on a line: `{"a":1,"b":"x"}`.
fn object(out: &mut Vec<u8>, h: &Header, row: &[Value], strings: bool, s: &FormatSettings) {
    out.push(b'{');
    for (k, v) in row.iter().enumerate() {
        if k > 0 {
            out.push(b',');
        }
        key(out, &h.names[k], s);
        out.push(b':');
        value(out, v, &h.types[k], strings, s);
    }
    out.push(b'}');
}

/// JSONEachRow written from values (as an array of rows), JSONStringsEachRow,
/// and the WithProgress formats (meta, rows, totals, extremes and the
/// rows-before-limit as lines of their own; chn writes no progress lines:
/// the server's depend on timing).
pub struct EachRow {
    strings: bool,
    progress: bool,
}

impl EachRow {
    /// JSONEachRow (`progress`: JSONEachRowWithProgress).
    pub fn values(progress: bool) -> EachRow {
        EachRow { strings: false, progress }
    }

    /// JSONStringsEachRow (`progress`: JSONStringsEachRowWithProgress).
    pub fn strings(progress: bool) -> EachRow {
        EachRow { strings: true, progress }
    }
}

impl Writer for EachRow {
    fn begin(&mut self, out: &mut Vec<u8>, h: &Header, s: &FormatSettings) {
        if self.progress {
            out.extend_from_slice(b"{\"meta\":[");
            for k in 0..h.names.len() {
                if k > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(b"{\"name\":");
                key(out, &h.names[k], s);
                out.extend_from_slice(b",\"type\":");
                key(out, &h.type_names[k], s);
                out.push(b'}');
            }
            out.extend_from_slice(b"]}\n");
        } else if s.ext.json_array_of_rows {
            out.extend_from_slice(b"[\n");
        }
    }

    fn row(&mut self, out: &mut Vec<u8>, h: &Header, row: &[Value], first: bool, s: &FormatSettings) {
        if self.progress {
            out.extend_from_slice(b"{\"row\":");
            object(out, h, row, self.strings, s);
            out.extend_from_slice(b"}\n");
        } else if s.ext.json_array_of_rows {
            if !first {
                out.extend_from_slice(b",\n");
            }
            object(out, h, row, self.strings, s);
        } else {
            object(out, h, row, self.strings, s);
            out.push(b'\n');
        }
    }

    fn end(&mut self, out: &mut Vec<u8>, h: &Header, t: &Trailer, s: &FormatSettings) {
        if self.progress {
            if let Some(totals) = &t.totals {
                out.extend_from_slice(b"{\"totals\":");
                object(out, h, totals, self.strings, s);
                out.extend_from_slice(b"}\n");
            }
            if let Some((min, max)) = &t.extremes {
                for (name, row) in [("min", min), ("max", max)] {
                    out.extend_from_slice(format!("{{\"{name}\":").as_bytes());
                    object(out, h, row, self.strings, s);
                    out.extend_from_slice(b"}\n");
                }
            }
            if let Some(n) = t.rows_before_limit {
                out.extend_from_slice(format!("{{\"rows_before_limit_at_least\":{n}}}\n").as_bytes());
            }
        } else if s.ext.json_array_of_rows {
            out.extend_from_slice(b"\n]\n");
        }
    }
}

/// JSONCompactEachRow, JSONCompactStringsEachRow, JSONCompactEachRowWithNames.
pub struct CompactEachRow {
    strings: bool,
    names: bool,
}

impl CompactEachRow {
    /// The writer (`names`: a first line of the column names).
    pub fn new(strings: bool, names: bool) -> CompactEachRow {
        CompactEachRow { strings, names }
    }
}

impl Writer for CompactEachRow {
    fn begin(&mut self, out: &mut Vec<u8>, h: &Header, s: &FormatSettings) {
        if self.names {
            out.push(b'[');
            for (k, n) in h.names.iter().enumerate() {
                if k > 0 {
                    out.extend_from_slice(b", ");
                }
                key(out, n, s);
            }
            out.extend_from_slice(b"]\n");
        }
    }

    fn row(&mut self, out: &mut Vec<u8>, h: &Header, row: &[Value], _first: bool, s: &FormatSettings) {
        out.push(b'[');
        for (k, v) in row.iter().enumerate() {
            if k > 0 {
                out.extend_from_slice(b", ");
            }
            value(out, v, &h.types[k], self.strings, s);
        }
        out.extend_from_slice(b"]\n");
    }

    fn end(&mut self, _out: &mut Vec<u8>, _h: &Header, _t: &Trailer, _s: &FormatSettings) {}
}
