//! The type-name parser: text as the server spells it to [`DataType`].

use super::display::{JsonPath, Quoted};
use super::{DataType, IntervalKind, JsonType};
use crate::error::{ProtoError, Result};

impl DataType {
    /// Parses a type name as the server spells it.
    pub fn parse(s: &str) -> Result<DataType> {
        // Parsing, conversion and decoding all recurse on the nesting; bound it
        // before any of them so a hostile name cannot overflow the stack.
        if nesting_depth(s) > MAX_NESTING {
            return Err(ProtoError::ty(
                s.chars().take(64).collect::<String>(),
                format!("nested deeper than {MAX_NESTING}"),
            ));
        }
        let mut p = Parser { s, pos: 0 };
        let node = p.node()?;
        p.skip_ws();
        if p.pos != s.len() {
            return Err(ProtoError::ty(s, format!("trailing input at byte {}", p.pos)));
        }
        Ok(match convert(&node, s)? {
            // Verbatim, less the blanks the parser skipped: nested in another name the same
            // text would lose them, and a type must print to a name that parses back to it.
            DataType::Unsupported(_) => DataType::Unsupported(s.trim_matches([' ', '\t', '\n', '\r']).to_string()),
            t => t,
        })
    }
}

/// Generic syntax tree of a type name: `Name(arg, …)`.
#[derive(Debug)]
struct Node {
    name: String,
    args: Vec<Arg>,
}

#[derive(Debug)]
enum Arg {
    Type(Node),
    /// `name Type` inside Tuple/Nested.
    Named(String, Node),
    Str(String),
    Num(String),
    /// `'label' = value` inside Enum.
    EnumPair(String, i64),
    /// `name = value` (Dynamic(max_types=N)).
    Setting(String, u64),
    /// The unparsed text between the parentheses of `JSON(...)`.
    Raw(String),
}

/// Deepest type nesting accepted (ClickHouse's own limit for type ASTs is far lower in practice).
const MAX_NESTING: usize = 128;

/// Deepest parenthesis nesting outside quotes.
fn nesting_depth(s: &str) -> usize {
    let (mut depth, mut max, mut quote, mut escaped) = (0usize, 0usize, None::<u8>, false);
    for &b in s.as_bytes() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if b == b'\\' {
                    escaped = true;
                } else if b == q {
                    quote = None;
                }
            }
            None => match b {
                b'\'' | b'`' | b'"' => quote = Some(b),
                b'(' => {
                    depth += 1;
                    max = max.max(depth);
                }
                b')' => depth = depth.saturating_sub(1),
                _ => {}
            },
        }
    }
    max
}

struct Parser<'a> {
    s: &'a str,
    pos: usize,
}

impl Parser<'_> {
    fn err(&self, msg: &str) -> ProtoError {
        ProtoError::ty(self.s, format!("{msg} at byte {}", self.pos))
    }
    fn peek(&self) -> Option<u8> {
        self.s.as_bytes().get(self.pos).copied()
    }
    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }
    fn eat(&mut self, c: u8) -> bool {
        self.skip_ws();
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn ident(&mut self) -> Option<String> {
        self.skip_ws();
        let start = self.pos;
        while matches!(self.peek(), Some(c) if c.is_ascii_alphanumeric() || c == b'_') {
            self.pos += 1;
        }
        (self.pos > start).then(|| self.s[start..self.pos].to_string())
    }
    fn quoted(&mut self, q: u8) -> Result<String> {
        // Opening quote already checked by the caller.
        self.pos += 1;
        let mut out = Vec::new();
        let b = self.s.as_bytes();
        loop {
            let c = *b.get(self.pos).ok_or_else(|| self.err("unterminated quote"))?;
            self.pos += 1;
            if c == q {
                if b.get(self.pos) == Some(&q) {
                    // SQL-style doubled quote
                    out.push(q);
                    self.pos += 1;
                    continue;
                }
                break;
            }
            if c == b'\\' {
                let e = *b.get(self.pos).ok_or_else(|| self.err("unterminated escape"))?;
                self.pos += 1;
                out.push(match e {
                    b'x' => {
                        let h = self.s.get(self.pos..self.pos + 2).ok_or_else(|| self.err("bad \\x escape"))?;
                        self.pos += 2;
                        u8::from_str_radix(h, 16).map_err(|_| self.err("bad \\x escape"))?
                    }
                    other => crate::convert::text::unescape(other),
                });
                continue;
            }
            out.push(c);
        }
        String::from_utf8(out).map_err(|_| self.err("quoted text is not UTF-8"))
    }
    fn number(&mut self) -> Option<String> {
        self.skip_ws();
        let start = self.pos;
        if matches!(self.peek(), Some(b'-' | b'+')) {
            self.pos += 1;
        }
        while matches!(self.peek(), Some(c) if c.is_ascii_digit() || c == b'.' || c == b'e' || c == b'E') {
            self.pos += 1;
        }
        if self.pos > start && self.s.as_bytes()[start..self.pos].iter().any(u8::is_ascii_digit) {
            Some(self.s[start..self.pos].to_string())
        } else {
            self.pos = start;
            None
        }
    }
    /// Text up to the parenthesis that closes the one just eaten (quotes respected).
    fn raw_until_close(&mut self) -> Result<String> {
        let b = self.s.as_bytes();
        let start = self.pos;
        let mut depth = 0usize;
        while let Some(&c) = b.get(self.pos) {
            match c {
                b'\'' | b'`' | b'"' => {
                    self.quoted(c)?;
                    continue;
                }
                b'(' => depth += 1,
                b')' if depth == 0 => {
                    let raw = self.s[start..self.pos].to_string();
                    self.pos += 1;
                    return Ok(raw);
                }
                b')' => depth -= 1,
                _ => {}
            }
            self.pos += 1;
        }
        Err(self.err("unbalanced parentheses"))
    }
    fn node(&mut self) -> Result<Node> {
        let name = self.ident().ok_or_else(|| self.err("expected a type name"))?;
        // As an argument a leading digit makes a number, so a type name never has one.
        if name.as_bytes()[0].is_ascii_digit() {
            return Err(self.err("a type name starts with a letter"));
        }
        let mut args = Vec::new();
        if name == "JSON" && self.eat(b'(') {
            let raw = self.raw_until_close()?;
            if !raw.trim().is_empty() {
                args.push(Arg::Raw(raw));
            }
            return Ok(Node { name, args });
        }
        if self.eat(b'(') && !self.eat(b')') {
            loop {
                args.push(self.arg()?);
                if self.eat(b')') {
                    break;
                }
                if !self.eat(b',') {
                    return Err(self.err("expected `,` or `)`"));
                }
            }
        }
        Ok(Node { name, args })
    }
    fn arg(&mut self) -> Result<Arg> {
        self.skip_ws();
        match self.peek() {
            Some(b'\'') => {
                let s = self.quoted(b'\'')?;
                if self.eat(b'=') {
                    let n = self.number().ok_or_else(|| self.err("expected enum value"))?;
                    let v = n.parse::<i64>().map_err(|_| self.err("bad enum value"))?;
                    Ok(Arg::EnumPair(s, v))
                } else {
                    Ok(Arg::Str(s))
                }
            }
            Some(b'`') | Some(b'"') => {
                let q = self.peek().unwrap_or(b'`');
                let name = self.quoted(q)?;
                Ok(Arg::Named(name, self.node()?))
            }
            Some(c) if c.is_ascii_digit() || c == b'-' || c == b'+' => {
                Ok(Arg::Num(self.number().ok_or_else(|| self.err("expected a number"))?))
            }
            _ => {
                let first = self.node()?;
                // `name = value`: a setting (Dynamic(max_types=N)).
                if first.args.is_empty() && self.eat(b'=') {
                    let n = self.number().ok_or_else(|| self.err("expected a number"))?;
                    let v = n.parse::<u64>().map_err(|_| self.err("expected an unsigned integer"))?;
                    return Ok(Arg::Setting(first.name, v));
                }
                // `name Type`: an identifier followed by another identifier.
                self.skip_ws();
                if first.args.is_empty() && matches!(self.peek(), Some(c) if c.is_ascii_alphabetic() || c == b'_') {
                    let ty = self.node()?;
                    Ok(Arg::Named(first.name, ty))
                } else {
                    Ok(Arg::Type(first))
                }
            }
        }
    }
}

fn convert(n: &Node, full: &str) -> Result<DataType> {
    use DataType as T;
    let bad = |why: &str| ProtoError::ty(full, format!("{}: {why}", n.name));
    let no_args = |t: DataType| if n.args.is_empty() { Ok(t) } else { Err(bad("takes no arguments")) };
    let one_type = || -> Result<DataType> {
        match n.args.as_slice() {
            [Arg::Type(t)] => convert(t, full),
            _ => Err(bad("expects one type argument")),
        }
    };
    let num = |a: &Arg| -> Result<u64> {
        match a {
            Arg::Num(s) => s.parse().map_err(|_| bad("expects an integer")),
            _ => Err(bad("expects an integer")),
        }
    };
    let tz = |a: Option<&Arg>| -> Result<Option<String>> {
        match a {
            None => Ok(None),
            Some(Arg::Str(s)) => Ok(Some(s.clone())),
            _ => Err(bad("expects a quoted time zone")),
        }
    };
    let interval = |k| no_args(T::Interval(k));
    Ok(match n.name.as_str() {
        "Int8" => no_args(T::Int8)?,
        "Int16" => no_args(T::Int16)?,
        "Int32" => no_args(T::Int32)?,
        "Int64" => no_args(T::Int64)?,
        "Int128" => no_args(T::Int128)?,
        "Int256" => no_args(T::Int256)?,
        "UInt8" => no_args(T::UInt8)?,
        "UInt16" => no_args(T::UInt16)?,
        "UInt32" => no_args(T::UInt32)?,
        "UInt64" => no_args(T::UInt64)?,
        "UInt128" => no_args(T::UInt128)?,
        "UInt256" => no_args(T::UInt256)?,
        "Float32" => no_args(T::Float32)?,
        "Float64" => no_args(T::Float64)?,
        "BFloat16" => no_args(T::BFloat16)?,
        "Bool" => no_args(T::Bool)?,
        "String" => no_args(T::String)?,
        "UUID" => no_args(T::Uuid)?,
        "IPv4" => no_args(T::Ipv4)?,
        "IPv6" => no_args(T::Ipv6)?,
        "Date" => no_args(T::Date)?,
        "Date32" => no_args(T::Date32)?,
        "Time" => no_args(T::Time)?,
        "Nothing" => no_args(T::Nothing)?,
        "Point" => no_args(T::Point)?,
        "Ring" => no_args(T::Ring)?,
        "LineString" => no_args(T::LineString)?,
        "MultiLineString" => no_args(T::MultiLineString)?,
        "Polygon" => no_args(T::Polygon)?,
        "MultiPolygon" => no_args(T::MultiPolygon)?,
        "FixedString" => match n.args.as_slice() {
            [a] => {
                let w = num(a)?;
                if w == 0 || w > (1 << 20) {
                    return Err(bad("width out of range"));
                }
                T::FixedString(w as usize)
            }
            _ => return Err(bad("expects a width")),
        },
        "DateTime" => {
            if n.args.len() > 1 {
                return Err(bad("too many arguments"));
            }
            T::DateTime(tz(n.args.first())?)
        }
        "DateTime64" => {
            let p = n.args.first().ok_or_else(|| bad("expects a precision")).and_then(num)?;
            if p > 9 || n.args.len() > 2 {
                return Err(bad("bad precision or arguments"));
            }
            T::DateTime64(p as u8, tz(n.args.get(1))?)
        }
        "Time64" => match n.args.as_slice() {
            [a] => {
                let p = num(a)?;
                if p > 9 {
                    return Err(bad("precision out of range"));
                }
                T::Time64(p as u8)
            }
            _ => return Err(bad("expects a precision")),
        },
        "Decimal" => {
            let (p, s) = match n.args.as_slice() {
                [p] => (num(p)?, 0),
                [p, s] => (num(p)?, num(s)?),
                _ => return Err(bad("expects precision and scale")),
            };
            if !(1..=76).contains(&p) || s > p {
                return Err(bad("precision or scale out of range"));
            }
            T::Decimal { precision: p as u8, scale: s as u8 }
        }
        name @ ("Decimal32" | "Decimal64" | "Decimal128" | "Decimal256") => {
            let p = match name {
                "Decimal32" => 9,
                "Decimal64" => 18,
                "Decimal128" => 38,
                _ => 76,
            };
            let s = match n.args.as_slice() {
                [s] => num(s)?,
                _ => return Err(bad("expects a scale")),
            };
            if s > p {
                return Err(bad("scale out of range"));
            }
            T::Decimal { precision: p as u8, scale: s as u8 }
        }
        "Enum8" | "Enum16" => {
            let mut pairs = Vec::with_capacity(n.args.len());
            for a in &n.args {
                match a {
                    Arg::EnumPair(l, v) => pairs.push((l.clone(), *v)),
                    _ => return Err(bad("expects 'label' = value pairs")),
                }
            }
            if n.name == "Enum8" {
                let mut out = Vec::with_capacity(pairs.len());
                for (l, v) in pairs {
                    out.push((l, i8::try_from(v).map_err(|_| bad("value out of Int8 range"))?));
                }
                T::Enum8(out)
            } else {
                let mut out = Vec::with_capacity(pairs.len());
                for (l, v) in pairs {
                    out.push((l, i16::try_from(v).map_err(|_| bad("value out of Int16 range"))?));
                }
                T::Enum16(out)
            }
        }
        "Nullable" => T::Nullable(Box::new(one_type()?)),
        "Array" => T::Array(Box::new(one_type()?)),
        "LowCardinality" => T::LowCardinality(Box::new(one_type()?)),
        "Map" => match n.args.as_slice() {
            [Arg::Type(k), Arg::Type(v)] => T::Map(Box::new(convert(k, full)?), Box::new(convert(v, full)?)),
            _ => return Err(bad("expects key and value types")),
        },
        "Tuple" => {
            let mut elems = Vec::with_capacity(n.args.len());
            for a in &n.args {
                match a {
                    Arg::Type(t) => elems.push((None, convert(t, full)?)),
                    Arg::Named(name, t) => elems.push((Some(name.clone()), convert(t, full)?)),
                    _ => return Err(bad("expects types")),
                }
            }
            T::Tuple(elems)
        }
        "Nested" => {
            let mut elems = Vec::with_capacity(n.args.len());
            for a in &n.args {
                match a {
                    Arg::Named(name, t) => elems.push((name.clone(), convert(t, full)?)),
                    _ => return Err(bad("expects named fields")),
                }
            }
            T::Nested(elems)
        }
        "QBit" => {
            let (t, dim, stride) = match n.args.as_slice() {
                [Arg::Type(t), dim] => (t, num(dim)?, None),
                [Arg::Type(t), dim, stride] => (t, num(dim)?, Some(num(stride)?)),
                _ => return Err(bad("expects an element type, a dimension and an optional stride")),
            };
            let elem = convert(t, full)?;
            if !matches!(elem, T::BFloat16 | T::Float32 | T::Float64 | T::Int8) {
                return Err(bad("element must be BFloat16, Float32, Float64 or Int8"));
            }
            if dim == 0 || dim > (1 << 24) {
                return Err(bad("dimension out of range"));
            }
            match stride {
                None => T::QBit(Box::new(elem), dim as usize),
                Some(st) if st == 0 || dim % st != 0 => return Err(bad("stride must divide the dimension")),
                Some(st) => T::QBitStrided(Box::new(elem), dim as usize, st as usize),
            }
        }
        "SimpleAggregateFunction" => match n.args.as_slice() {
            [f, Arg::Type(t)] => {
                let fname = match f {
                    Arg::Type(f) => render(f),
                    _ => return Err(bad("expects a function name")),
                };
                T::SimpleAggregateFunction(fname, Box::new(convert(t, full)?))
            }
            _ => return Err(bad("expects a function and a type")),
        },
        // A leading number is the state's version (`AggregateFunction(1, sumMap, …)`):
        // such states keep the Unsupported form.
        "AggregateFunction" if matches!(n.args.first(), Some(Arg::Type(_))) => {
            let fname = match &n.args[0] {
                Arg::Type(f) => render(f),
                _ => return Err(bad("expects a function name")),
            };
            let mut args = Vec::with_capacity(n.args.len() - 1);
            for a in &n.args[1..] {
                match a {
                    Arg::Type(t) => args.push(convert(t, full)?),
                    _ => return Err(bad("expects types after the function")),
                }
            }
            T::AggregateFunction(fname, args)
        }
        "Variant" => {
            let mut alts = Vec::with_capacity(n.args.len());
            for a in &n.args {
                match a {
                    Arg::Type(t) => alts.push(convert(t, full)?),
                    _ => return Err(bad("expects types")),
                }
            }
            if alts.is_empty() || alts.len() > 255 {
                return Err(bad("expects 1 to 255 alternatives"));
            }
            T::Variant(alts)
        }
        "Dynamic" => match n.args.as_slice() {
            [] => T::Dynamic { max_types: None },
            [Arg::Setting(k, v)] if k == "max_types" => T::Dynamic { max_types: Some(*v) },
            _ => return Err(bad("expects max_types=N")),
        },
        "JSON" => match n.args.as_slice() {
            [] => T::Json(Box::default()),
            [Arg::Raw(raw)] => T::Json(Box::new(parse_json_args(raw, full)?)),
            _ => return Err(bad("bad arguments")),
        },
        "IntervalNanosecond" => interval(IntervalKind::Nanosecond)?,
        "IntervalMicrosecond" => interval(IntervalKind::Microsecond)?,
        "IntervalMillisecond" => interval(IntervalKind::Millisecond)?,
        "IntervalSecond" => interval(IntervalKind::Second)?,
        "IntervalMinute" => interval(IntervalKind::Minute)?,
        "IntervalHour" => interval(IntervalKind::Hour)?,
        "IntervalDay" => interval(IntervalKind::Day)?,
        "IntervalWeek" => interval(IntervalKind::Week)?,
        "IntervalMonth" => interval(IntervalKind::Month)?,
        "IntervalQuarter" => interval(IntervalKind::Quarter)?,
        "IntervalYear" => interval(IntervalKind::Year)?,
        // Nested unknown types keep their own spelling; the root keeps the server's verbatim.
        _ => T::Unsupported(render(n)),
    })
}

/// Splits `s` at top-level commas (outside parentheses and quotes).
fn split_top_level(s: &str, full: &str) -> Result<Vec<String>> {
    let b = s.as_bytes();
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut start = 0usize;
    let mut i = 0usize;
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'`' | b'"') => {
                i += 1;
                loop {
                    match b.get(i) {
                        None => return Err(ProtoError::ty(full, "JSON: unterminated quote")),
                        Some(b'\\') => i += 2,
                        Some(&c) if c == q => {
                            if b.get(i + 1) == Some(&q) {
                                i += 2;
                            } else {
                                break;
                            }
                        }
                        _ => i += 1,
                    }
                }
            }
            b'(' => depth += 1,
            b')' => depth = depth.saturating_sub(1),
            b',' if depth == 0 => {
                parts.push(s[start..i].to_string());
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    parts.push(s[start..].to_string());
    Ok(parts)
}

/// Reads a JSON path (`a.b`, `` `a.b` ``, `` `a`.b ``) at the parser's position.
fn json_path(p: &mut Parser<'_>) -> Result<String> {
    let mut path = String::new();
    loop {
        p.skip_ws();
        match p.peek() {
            Some(q @ (b'`' | b'"')) => path.push_str(&p.quoted(q)?),
            _ => {
                let start = p.pos;
                while matches!(p.peek(), Some(c) if c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80) {
                    p.pos += 1;
                }
                if p.pos == start {
                    return Err(p.err("expected a JSON path"));
                }
                path.push_str(&p.s[start..p.pos]);
            }
        }
        if p.peek() == Some(b'.') {
            p.pos += 1;
            path.push('.');
        } else {
            return Ok(path);
        }
    }
}

/// Parses the arguments of `JSON(...)`: settings, typed paths, SKIP and SKIP REGEXP.
fn parse_json_args(raw: &str, full: &str) -> Result<JsonType> {
    let mut j = JsonType::default();
    for part in split_top_level(raw, full)? {
        let t = part.trim();
        if t.is_empty() {
            return Err(ProtoError::ty(full, "JSON: empty argument"));
        }
        let mut p = Parser { s: t, pos: 0 };
        let setting = |name: &str| -> Option<&str> {
            let rest = t.strip_prefix(name)?.trim_start();
            rest.strip_prefix('=').map(str::trim)
        };
        if let Some(v) = setting("max_dynamic_paths") {
            j.max_dynamic_paths = Some(v.parse().map_err(|_| ProtoError::ty(full, "JSON: bad max_dynamic_paths"))?);
            continue;
        }
        if let Some(v) = setting("max_dynamic_types") {
            j.max_dynamic_types = Some(v.parse().map_err(|_| ProtoError::ty(full, "JSON: bad max_dynamic_types"))?);
            continue;
        }
        let upper = t.to_ascii_uppercase();
        // Any whitespace the parser skips ends the keyword (a newline too).
        if upper.starts_with("SKIP") && matches!(t.as_bytes().get(4), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            p.pos = 4;
            p.skip_ws();
            let rest = &t[p.pos..];
            // Bytes, not `str` slices: byte 6 need not be a char boundary.
            let rb = rest.as_bytes();
            if rb.len() > 6 && rb[..6].eq_ignore_ascii_case(b"REGEXP") && !rb[6].is_ascii_alphanumeric() {
                p.pos += 6;
                p.skip_ws();
                if p.peek() != Some(b'\'') {
                    return Err(ProtoError::ty(full, "JSON: SKIP REGEXP expects a quoted expression"));
                }
                j.skip_regexp.push(p.quoted(b'\'')?);
            } else {
                j.skip.push(json_path(&mut p)?);
            }
        } else {
            let path = json_path(&mut p)?;
            let node = p.node()?;
            j.typed_paths.push((path, convert(&node, full)?));
        }
        p.skip_ws();
        if p.pos != t.len() {
            return Err(ProtoError::ty(full, format!("JSON: trailing input in `{t}`")));
        }
    }
    j.typed_paths.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(j)
}

/// Renders a function node back to text (for SimpleAggregateFunction names).
fn render(n: &Node) -> String {
    let mut s = n.name.clone();
    if !n.args.is_empty() {
        s.push('(');
        for (i, a) in n.args.iter().enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            match a {
                Arg::Type(t) => s.push_str(&render(t)),
                Arg::Num(x) => s.push_str(x),
                // Quoted as the parser reads them back: an unknown type's rendering is
                // its name, and must parse again.
                Arg::Str(x) => s.push_str(&Quoted(x).to_string()),
                Arg::Named(x, t) => {
                    s.push_str(&JsonPath(x).to_string());
                    s.push(' ');
                    s.push_str(&render(t));
                }
                Arg::EnumPair(l, v) => s.push_str(&format!("{} = {v}", Quoted(l))),
                Arg::Setting(k, v) => s.push_str(&format!("{k}={v}")),
                Arg::Raw(x) => s.push_str(x),
            }
        }
        s.push(')');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use DataType as T;

    #[test]
    fn scalars_and_wrappers() {
        assert_eq!(DataType::parse("UInt64").unwrap(), T::UInt64);
        assert_eq!(
            DataType::parse("Array(LowCardinality(Nullable(String)))").unwrap(),
            T::Array(Box::new(T::LowCardinality(Box::new(T::Nullable(Box::new(T::String))))))
        );
        assert_eq!(
            DataType::parse("DateTime64(3, 'Europe/Moscow')").unwrap(),
            T::DateTime64(3, Some("Europe/Moscow".into()))
        );
        assert_eq!(DataType::parse("DateTime('UTC')").unwrap(), T::DateTime(Some("UTC".into())));
        assert_eq!(DataType::parse("Decimal(38, 10)").unwrap(), T::Decimal { precision: 38, scale: 10 });
        assert_eq!(DataType::parse("FixedString(16)").unwrap(), T::FixedString(16));
    }

    #[test]
    fn enums_with_escapes() {
        let t = DataType::parse(r"Enum8('a' = 1, 'it\'s' = -2, 'x=y, z' = 3)").unwrap();
        assert_eq!(t, T::Enum8(vec![("a".into(), 1), ("it's".into(), -2), ("x=y, z".into(), 3)]));
        assert!(DataType::parse("Enum8('a' = 300)").is_err());
    }

    #[test]
    fn named_tuples_and_maps() {
        let t = DataType::parse("Tuple(a UInt8, `b c` Array(String), Map(String, UInt64))").unwrap();
        assert_eq!(
            t,
            T::Tuple(vec![
                (Some("a".into()), T::UInt8),
                (Some("b c".into()), T::Array(Box::new(T::String))),
                (None, T::Map(Box::new(T::String), Box::new(T::UInt64))),
            ])
        );
        let t = DataType::parse("SimpleAggregateFunction(anyLast, Nullable(UInt8))").unwrap();
        assert_eq!(t, T::SimpleAggregateFunction("anyLast".into(), Box::new(T::Nullable(Box::new(T::UInt8)))));
    }

    #[test]
    fn unknown_types_are_kept_verbatim() {
        assert_eq!(DataType::parse("Object('json')").unwrap(), T::Unsupported("Object('json')".into()));
        assert_eq!(
            DataType::parse("AggregateFunction(1, sumMap, Array(UInt8), Array(UInt64))").unwrap(),
            T::Unsupported("AggregateFunction(1, sumMap, Array(UInt8), Array(UInt64))".into())
        );
    }

    #[test]
    fn aggregate_function_states() {
        assert_eq!(
            DataType::parse("AggregateFunction(uniq, UInt64)").unwrap(),
            T::AggregateFunction("uniq".into(), vec![T::UInt64])
        );
        assert_eq!(DataType::parse("AggregateFunction(count)").unwrap(), T::AggregateFunction("count".into(), vec![]));
        let t = DataType::parse("AggregateFunction(quantiles(0.5, 0.9), Nullable(Float64))").unwrap();
        assert_eq!(t, T::AggregateFunction("quantiles(0.5, 0.9)".into(), vec![T::Nullable(Box::new(T::Float64))]));
        for s in [
            "AggregateFunction(count)",
            "AggregateFunction(sum, UInt64)",
            "AggregateFunction(argMax, String, DateTime)",
        ] {
            assert_eq!(DataType::parse(s).unwrap().to_string(), s);
        }
    }

    #[test]
    fn malformed_names_fail() {
        for s in ["", "Array(", "Array(UInt8", "UInt8)", "Nullable()", "Decimal(100, 2)", "FixedString(x)", "Enum8(1)"]
        {
            assert!(DataType::parse(s).is_err(), "{s}");
        }
    }
}
