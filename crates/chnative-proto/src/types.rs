//! ClickHouse type names: the parser and the parsed form.
//!
//! Enum labels, Decimal scales, DateTime64 precision and time zones exist only in
//! the type string the server sends with every column, so the parser is strict:
//! a string it does not understand is an error, never a guess.

use crate::error::{ProtoError, Result};

/// The unit of an `Interval*` type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum IntervalKind {
    Nanosecond,
    Microsecond,
    Millisecond,
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Quarter,
    Year,
}

/// A parsed ClickHouse data type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum DataType {
    Int8,
    Int16,
    Int32,
    Int64,
    Int128,
    Int256,
    UInt8,
    UInt16,
    UInt32,
    UInt64,
    UInt128,
    UInt256,
    Float32,
    Float64,
    BFloat16,
    Bool,
    String,
    FixedString(usize),
    Date,
    Date32,
    /// Optional explicit time zone.
    DateTime(Option<String>),
    /// Precision (0..=9) and optional time zone.
    DateTime64(u8, Option<String>),
    Time,
    Time64(u8),
    Uuid,
    Ipv4,
    Ipv6,
    /// Precision and scale. `Decimal32(S)` etc. are normalised to their precision.
    Decimal {
        precision: u8,
        scale: u8,
    },
    /// Label → value pairs in declaration order.
    Enum8(Vec<(String, i8)>),
    Enum16(Vec<(String, i16)>),
    Nullable(Box<DataType>),
    Array(Box<DataType>),
    LowCardinality(Box<DataType>),
    /// Elements with optional names.
    Tuple(Vec<(Option<String>, DataType)>),
    Map(Box<DataType>, Box<DataType>),
    /// `Nested(a T, …)` sent as a single column (flatten_nested = 0): Array(Tuple(...)).
    Nested(Vec<(String, DataType)>),
    Nothing,
    Interval(IntervalKind),
    /// Function text (with its parameters) and the value type.
    SimpleAggregateFunction(String, Box<DataType>),
    Point,
    Ring,
    LineString,
    MultiLineString,
    Polygon,
    MultiPolygon,
    /// QBit(element, dimension): a vector stored as bit planes (BFloat16, Float32 or Float64 elements).
    QBit(Box<DataType>, usize),
    /// QBit(element, dimension, stride): bit planes split into groups of `stride` elements.
    QBitStrided(Box<DataType>, usize, usize),
    /// `Variant(T1, …)`: the alternatives in the order the server lists them (sorted by
    /// name), which is also the order of the discriminators on the wire.
    Variant(Vec<DataType>),
    /// `Dynamic` / `Dynamic(max_types=N)`.
    Dynamic {
        /// The `max_types` parameter when the type names one.
        max_types: Option<u64>,
    },
    /// The JSON object type with its parameters.
    Json(Box<JsonType>),
    /// A syntactically valid type this crate has no codec for (kept verbatim).
    Unsupported(String),
}

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

    /// Bytes per row of a fixed-width type, or `None` for variable-width types.
    pub fn fixed_width(&self) -> Option<usize> {
        use DataType::*;
        Some(match self {
            Int8 | UInt8 | Bool | Enum8(_) | Nothing => 1,
            Int16 | UInt16 | Date | Enum16(_) | BFloat16 => 2,
            Int32 | UInt32 | Float32 | Date32 | DateTime(_) | Ipv4 | Time => 4,
            Int64 | UInt64 | Float64 | DateTime64(..) | Time64(_) | Interval(_) => 8,
            Int128 | UInt128 | Uuid | Ipv6 => 16,
            Int256 | UInt256 => 32,
            Decimal { precision, .. } => match precision {
                0..=9 => 4,
                10..=18 => 8,
                19..=38 => 16,
                _ => 32,
            },
            FixedString(n) => *n,
            SimpleAggregateFunction(_, t) => return t.fixed_width(),
            _ => return None,
        })
    }

    /// The type with geo aliases, Nested and SimpleAggregateFunction replaced by
    /// the structure that is on the wire.
    pub fn wire_shape(&self) -> std::borrow::Cow<'_, DataType> {
        use std::borrow::Cow;
        let point = || DataType::Tuple(vec![(None, DataType::Float64), (None, DataType::Float64)]);
        let arr = |t: DataType| DataType::Array(Box::new(t));
        match self {
            DataType::Point => Cow::Owned(point()),
            DataType::Ring | DataType::LineString => Cow::Owned(arr(point())),
            DataType::Polygon | DataType::MultiLineString => Cow::Owned(arr(arr(point()))),
            DataType::MultiPolygon => Cow::Owned(arr(arr(arr(point())))),
            DataType::Nested(fields) => {
                Cow::Owned(arr(DataType::Tuple(fields.iter().map(|(n, t)| (Some(n.clone()), t.clone())).collect())))
            }
            DataType::SimpleAggregateFunction(_, t) => Cow::Owned((**t).clone()),
            // One FixedString bit plane per bit of the element, most significant first.
            DataType::QBit(elem, dim) => {
                Cow::Owned(DataType::Tuple(vec![(None, DataType::FixedString(dim.div_ceil(8))); qbit_bits(elem)]))
            }
            // Groups of `stride` elements, each with its own planes, group-major.
            DataType::QBitStrided(elem, dim, stride) => {
                Cow::Owned(DataType::Tuple(vec![
                    (None, DataType::FixedString(stride.div_ceil(8)));
                    qbit_bits(elem) * dim.div_ceil(*stride)
                ]))
            }
            _ => Cow::Borrowed(self),
        }
    }
}

/// The parameters of a `JSON(...)` type.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct JsonType {
    /// `max_dynamic_paths=N`.
    pub max_dynamic_paths: Option<u64>,
    /// `max_dynamic_types=N`.
    pub max_dynamic_types: Option<u64>,
    /// Typed paths (`a.b UInt32`), sorted by path: the order their columns have on the wire.
    pub typed_paths: Vec<(String, DataType)>,
    /// `SKIP path` entries.
    pub skip: Vec<String>,
    /// `SKIP REGEXP 're'` entries.
    pub skip_regexp: Vec<String>,
}

impl JsonType {
    /// The type of the Dynamic columns that hold this object's dynamic paths.
    pub fn dynamic_type(&self) -> DataType {
        DataType::Dynamic { max_types: self.max_dynamic_types }
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

/// Bit planes of a QBit element type.
fn qbit_bits(elem: &DataType) -> usize {
    match elem {
        DataType::Int8 => 8,
        DataType::BFloat16 => 16,
        DataType::Float32 => 32,
        _ => 64,
    }
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
                    b'n' => b'\n',
                    b't' => b'\t',
                    b'r' => b'\r',
                    b'0' => 0,
                    b'b' => 8,
                    b'f' => 12,
                    b'a' => 7,
                    b'v' => 11,
                    b'x' => {
                        let h = self.s.get(self.pos..self.pos + 2).ok_or_else(|| self.err("bad \\x escape"))?;
                        self.pos += 2;
                        u8::from_str_radix(h, 16).map_err(|_| self.err("bad \\x escape"))?
                    }
                    other => other,
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
        assert_eq!(
            DataType::parse("AggregateFunction(uniq, UInt64)").unwrap(),
            T::Unsupported("AggregateFunction(uniq, UInt64)".into())
        );
    }

    #[test]
    fn malformed_names_fail() {
        for s in ["", "Array(", "Array(UInt8", "UInt8)", "Nullable()", "Decimal(100, 2)", "FixedString(x)", "Enum8(1)"]
        {
            assert!(DataType::parse(s).is_err(), "{s}");
        }
    }
}

fn quote_into(f: &mut std::fmt::Formatter<'_>, s: &str, q: char) -> std::fmt::Result {
    use std::fmt::Write;
    f.write_char(q)?;
    for c in s.chars() {
        if c == q || c == '\\' {
            f.write_char('\\')?;
        }
        f.write_char(c)?;
    }
    f.write_char(q)
}

/// A JSON path as the server prints it: bare when it is an identifier, else backquoted.
struct JsonPath<'a>(&'a str);

impl std::fmt::Display for JsonPath<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // `SKIP` bare would read back as the JSON type's SKIP clause.
        let plain = !self.0.is_empty()
            && !self.0.as_bytes()[0].is_ascii_digit()
            && self.0.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
            && !self.0.eq_ignore_ascii_case("skip");
        if plain {
            f.write_str(self.0)
        } else {
            quote_into(f, self.0, '`')
        }
    }
}

/// A single-quoted string literal.
struct Quoted<'a>(&'a str);

impl std::fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        quote_into(f, self.0, '\'')
    }
}

impl std::fmt::Display for IntervalKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self:?}")
    }
}

fn write_enum<V: std::fmt::Display>(
    f: &mut std::fmt::Formatter<'_>,
    name: &str,
    pairs: &[(String, V)],
) -> std::fmt::Result {
    f.write_str(name)?;
    f.write_str("(")?;
    for (i, (l, v)) in pairs.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        quote_into(f, l, '\'')?;
        write!(f, " = {v}")?;
    }
    f.write_str(")")
}

/// Renders the type name the way the server spells it.
impl std::fmt::Display for DataType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use DataType as T;
        match self {
            T::FixedString(n) => write!(f, "FixedString({n})"),
            T::DateTime(None) => f.write_str("DateTime"),
            T::DateTime(Some(tz)) => {
                f.write_str("DateTime(")?;
                quote_into(f, tz, '\'')?;
                f.write_str(")")
            }
            T::DateTime64(p, None) => write!(f, "DateTime64({p})"),
            T::DateTime64(p, Some(tz)) => {
                write!(f, "DateTime64({p}, ")?;
                quote_into(f, tz, '\'')?;
                f.write_str(")")
            }
            T::Time64(p) => write!(f, "Time64({p})"),
            T::Uuid => f.write_str("UUID"),
            T::Ipv4 => f.write_str("IPv4"),
            T::Ipv6 => f.write_str("IPv6"),
            T::Decimal { precision, scale } => write!(f, "Decimal({precision}, {scale})"),
            T::Enum8(pairs) => write_enum(f, "Enum8", pairs),
            T::Enum16(pairs) => write_enum(f, "Enum16", pairs),
            T::Nullable(t) => write!(f, "Nullable({t})"),
            T::Array(t) => write!(f, "Array({t})"),
            T::LowCardinality(t) => write!(f, "LowCardinality({t})"),
            T::Map(k, v) => write!(f, "Map({k}, {v})"),
            T::Tuple(elems) => {
                f.write_str("Tuple(")?;
                for (i, (n, t)) in elems.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    if let Some(n) = n {
                        quote_into(f, n, '`')?;
                        f.write_str(" ")?;
                    }
                    write!(f, "{t}")?;
                }
                f.write_str(")")
            }
            T::Nested(elems) => {
                f.write_str("Nested(")?;
                for (i, (n, t)) in elems.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    quote_into(f, n, '`')?;
                    write!(f, " {t}")?;
                }
                f.write_str(")")
            }
            T::Interval(k) => write!(f, "Interval{k}"),
            T::SimpleAggregateFunction(func, t) => write!(f, "SimpleAggregateFunction({func}, {t})"),
            T::QBit(elem, dim) => write!(f, "QBit({elem}, {dim})"),
            T::QBitStrided(elem, dim, stride) => write!(f, "QBit({elem}, {dim}, {stride})"),
            T::Variant(alts) => {
                f.write_str("Variant(")?;
                for (i, t) in alts.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{t}")?;
                }
                f.write_str(")")
            }
            T::Dynamic { max_types: None } => f.write_str("Dynamic"),
            T::Dynamic { max_types: Some(n) } => write!(f, "Dynamic(max_types={n})"),
            T::Json(j) => {
                let mut args: Vec<String> = Vec::new();
                if let Some(n) = j.max_dynamic_types {
                    args.push(format!("max_dynamic_types={n}"));
                }
                if let Some(n) = j.max_dynamic_paths {
                    args.push(format!("max_dynamic_paths={n}"));
                }
                for (p, t) in &j.typed_paths {
                    args.push(format!("{} {t}", JsonPath(p)));
                }
                for p in &j.skip {
                    args.push(format!("SKIP {}", JsonPath(p)));
                }
                for r in &j.skip_regexp {
                    args.push(format!("SKIP REGEXP {}", Quoted(r)));
                }
                if args.is_empty() {
                    f.write_str("JSON")
                } else {
                    write!(f, "JSON({})", args.join(", "))
                }
            }
            T::Unsupported(s) => f.write_str(s),
            other => write!(f, "{other:?}"),
        }
    }
}

#[cfg(test)]
mod display_tests {
    use super::DataType;

    #[test]
    fn display_round_trips() {
        for s in [
            "UInt64",
            "Nullable(String)",
            "Array(LowCardinality(Nullable(String)))",
            "DateTime64(3, 'Europe/Moscow')",
            "Decimal(18, 4)",
            "Enum8('a' = 1, 'it\\'s' = 2)",
            "Map(String, Array(UInt8))",
            "Tuple(`a` UInt8, `b c` String)",
            "IntervalSecond",
            "UUID",
            "IPv6",
            "FixedString(3)",
        ] {
            let t = DataType::parse(s).unwrap();
            assert_eq!(DataType::parse(&t.to_string()).unwrap(), t, "{s}");
        }
    }
}

/// `Dynamic`'s default `max_types`, and JSON's default `max_dynamic_types` / `max_dynamic_paths`:
/// the binary encoding always carries them, the type names only when they differ.
const DEFAULT_MAX_DYNAMIC_TYPES: u64 = 32;
const DEFAULT_MAX_DYNAMIC_PATHS: u64 = 1024;
/// Bound on element counts inside a binary type encoding (the server's own limit).
const MAX_BINARY_TYPE_ELEMENTS: u64 = 1_000_000;
/// Bound on the nesting of a binary type encoding.
const MAX_BINARY_TYPE_DEPTH: usize = 64;

impl DataType {
    /// Decodes a binary type encoding (`DataTypesBinaryEncoding.cpp`): the form the
    /// shared variant of `Dynamic` and the shared data of `JSON` prefix each value with.
    ///
    /// Types whose encoding carries aggregate-function parameters (AggregateFunction,
    /// SimpleAggregateFunction), and Set/Function, are a [`ProtoError::Type`]: their
    /// length cannot be known without the server's field codec.
    pub fn decode_binary(r: &mut crate::wire::Reader<'_>) -> Result<DataType> {
        decode_binary_at(r, 0)
    }
}

fn decode_binary_at(r: &mut crate::wire::Reader<'_>, depth: usize) -> Result<DataType> {
    use DataType as T;
    if depth > MAX_BINARY_TYPE_DEPTH {
        return Err(ProtoError::violation("binary type encoding nests too deeply"));
    }
    let count = |r: &mut crate::wire::Reader<'_>| r.varuint_bounded("binary type elements", MAX_BINARY_TYPE_ELEMENTS);
    let string = |r: &mut crate::wire::Reader<'_>| r.string_owned(1 << 20);
    let sub = |r: &mut crate::wire::Reader<'_>| decode_binary_at(r, depth + 1);
    let code = r.u8()?;
    Ok(match code {
        0x00 => T::Nothing,
        0x01 => T::UInt8,
        0x02 => T::UInt16,
        0x03 => T::UInt32,
        0x04 => T::UInt64,
        0x05 => T::UInt128,
        0x06 => T::UInt256,
        0x07 => T::Int8,
        0x08 => T::Int16,
        0x09 => T::Int32,
        0x0A => T::Int64,
        0x0B => T::Int128,
        0x0C => T::Int256,
        0x0D => T::Float32,
        0x0E => T::Float64,
        0x0F => T::Date,
        0x10 => T::Date32,
        0x11 => T::DateTime(None),
        0x12 => T::DateTime(Some(string(r)?)),
        0x13 => T::DateTime64(r.u8()?.min(9), None),
        0x14 => {
            let p = r.u8()?.min(9);
            T::DateTime64(p, Some(string(r)?))
        }
        0x15 => T::String,
        0x16 => {
            let n = r.varuint_bounded("FixedString width", 1 << 20)?;
            if n == 0 {
                return Err(ProtoError::violation("FixedString(0) in a binary type encoding"));
            }
            T::FixedString(n)
        }
        0x17 => {
            let n = count(r)?;
            let mut items = Vec::with_capacity(n.min(256));
            for _ in 0..n {
                let name = string(r)?;
                items.push((name, r.u8()? as i8));
            }
            T::Enum8(items)
        }
        0x18 => {
            let n = count(r)?;
            let mut items = Vec::with_capacity(n.min(256));
            for _ in 0..n {
                let name = string(r)?;
                let v = i16::from_le_bytes(r.array()?);
                items.push((name, v));
            }
            T::Enum16(items)
        }
        0x19..=0x1C => {
            let precision = r.u8()?;
            let scale = r.u8()?;
            if !(1..=76).contains(&precision) || scale > precision {
                return Err(ProtoError::violation("bad Decimal in a binary type encoding"));
            }
            T::Decimal { precision, scale }
        }
        0x1D => T::Uuid,
        0x1E => T::Array(Box::new(sub(r)?)),
        0x1F => {
            let n = count(r)?;
            let mut elems = Vec::with_capacity(n.min(256));
            for _ in 0..n {
                elems.push((None, sub(r)?));
            }
            T::Tuple(elems)
        }
        0x20 => {
            let n = count(r)?;
            let mut elems = Vec::with_capacity(n.min(256));
            for _ in 0..n {
                let name = string(r)?;
                elems.push((Some(name), sub(r)?));
            }
            T::Tuple(elems)
        }
        0x22 => {
            use IntervalKind as K;
            let kinds = [
                K::Nanosecond,
                K::Microsecond,
                K::Millisecond,
                K::Second,
                K::Minute,
                K::Hour,
                K::Day,
                K::Week,
                K::Month,
                K::Quarter,
                K::Year,
            ];
            let k = r.u8()?;
            T::Interval(*kinds.get(usize::from(k)).ok_or_else(|| ProtoError::violation(format!("interval kind {k}")))?)
        }
        0x23 => T::Nullable(Box::new(sub(r)?)),
        0x26 => T::LowCardinality(Box::new(sub(r)?)),
        0x27 => {
            let k = sub(r)?;
            let v = sub(r)?;
            T::Map(Box::new(k), Box::new(v))
        }
        0x28 => T::Ipv4,
        0x29 => T::Ipv6,
        0x2A => {
            let n = count(r)?;
            // The same bound as the text form, so a decoded type always has a name.
            if n == 0 || n > 255 {
                return Err(ProtoError::violation(format!("binary Variant type with {n} alternatives (1 to 255)")));
            }
            let mut alts = Vec::with_capacity(n.min(256));
            for _ in 0..n {
                alts.push(sub(r)?);
            }
            T::Variant(alts)
        }
        0x2B => {
            let n = u64::from(r.u8()?);
            T::Dynamic { max_types: (n != DEFAULT_MAX_DYNAMIC_TYPES).then_some(n) }
        }
        0x2C => {
            let name = string(r)?;
            DataType::parse(&name)?
        }
        0x2D => T::Bool,
        0x2F => {
            let n = count(r)?;
            let mut fields = Vec::with_capacity(n.min(256));
            for _ in 0..n {
                let name = string(r)?;
                fields.push((name, sub(r)?));
            }
            T::Nested(fields)
        }
        0x30 => {
            let version = r.u8()?;
            if version != 0 {
                return Err(ProtoError::violation(format!("JSON binary type encoding version {version}")));
            }
            let paths = r.varuint()?;
            let types = u64::from(r.u8()?);
            let mut j = JsonType {
                max_dynamic_paths: (paths != DEFAULT_MAX_DYNAMIC_PATHS).then_some(paths),
                max_dynamic_types: (types != DEFAULT_MAX_DYNAMIC_TYPES).then_some(types),
                ..JsonType::default()
            };
            for _ in 0..count(r)? {
                let path = string(r)?;
                j.typed_paths.push((path, sub(r)?));
            }
            for _ in 0..count(r)? {
                j.skip.push(string(r)?);
            }
            for _ in 0..count(r)? {
                j.skip_regexp.push(string(r)?);
            }
            j.typed_paths.sort_by(|a, b| a.0.cmp(&b.0));
            T::Json(Box::new(j))
        }
        0x31 => T::BFloat16,
        0x32 => T::Time,
        0x33 => T::Time64(r.u8()?.min(9)),
        0x21 | 0x24 | 0x25 | 0x2E => {
            return Err(ProtoError::ty(
                format!("binary type code 0x{code:02x}"),
                "Set, Function and aggregate-function types cannot be decoded from a binary type encoding",
            ))
        }
        other => return Err(ProtoError::violation(format!("unknown binary type code 0x{other:02x}"))),
    })
}

#[cfg(test)]
mod dynamic_type_tests {
    use super::*;
    use crate::wire::Reader;
    use DataType as T;

    #[test]
    fn variant_dynamic_json_names() {
        assert_eq!(
            DataType::parse("Variant(Array(UInt8), String, UInt64)").unwrap(),
            T::Variant(vec![T::Array(Box::new(T::UInt8)), T::String, T::UInt64])
        );
        assert_eq!(DataType::parse("Dynamic").unwrap(), T::Dynamic { max_types: None });
        assert_eq!(DataType::parse("Dynamic(max_types=5)").unwrap(), T::Dynamic { max_types: Some(5) });
        assert_eq!(DataType::parse("Dynamic(max_types = 5)").unwrap(), T::Dynamic { max_types: Some(5) });
        assert_eq!(DataType::parse("JSON").unwrap(), T::Json(Box::default()));
        // As the server prints it (system.columns of a table declared with every kind of argument).
        let s = "JSON(max_dynamic_types=3, max_dynamic_paths=10, `a.b` UInt32, `c.d` String, `we ird` Array(String), \
                 z Dynamic(max_types=3), SKIP `we ird.z`, SKIP `x.y`, SKIP REGEXP 'r.*')";
        let T::Json(j) = DataType::parse(s).unwrap() else { panic!() };
        assert_eq!(j.max_dynamic_types, Some(3));
        assert_eq!(j.max_dynamic_paths, Some(10));
        assert_eq!(
            j.typed_paths,
            vec![
                ("a.b".to_string(), T::UInt32),
                ("c.d".to_string(), T::String),
                ("we ird".to_string(), T::Array(Box::new(T::String))),
                ("z".to_string(), T::Dynamic { max_types: Some(3) }),
            ]
        );
        assert_eq!(j.skip, ["we ird.z", "x.y"]);
        assert_eq!(j.skip_regexp, ["r.*"]);
        assert_eq!(DataType::parse(s).unwrap().to_string(), s.split_whitespace().collect::<Vec<_>>().join(" "));
        // Unquoted dotted paths (the form users write), typed paths sorted, nested JSON.
        let t = DataType::parse("JSON(max_dynamic_paths = 2, a.b.c Nullable(UInt8), a.b JSON(x UInt8))").unwrap();
        let T::Json(j) = &t else { panic!() };
        assert_eq!(j.typed_paths[0].0, "a.b");
        assert!(matches!(j.typed_paths[0].1, T::Json(_)));
        assert_eq!(j.typed_paths[1], ("a.b.c".to_string(), T::Nullable(Box::new(T::UInt8))));
        assert_eq!(t.to_string(), "JSON(max_dynamic_paths=2, `a.b` JSON(x UInt8), `a.b.c` Nullable(UInt8))");
        assert_eq!(DataType::parse(&t.to_string()).unwrap(), t);
        assert_eq!(
            DataType::parse("Array(JSON(a UInt32))").unwrap(),
            T::Array(Box::new(T::Json(Box::new(JsonType {
                typed_paths: vec![("a".into(), T::UInt32)],
                ..JsonType::default()
            }))))
        );
        for bad in
            ["Variant()", "Dynamic(5)", "Dynamic(max_types=x)", "JSON(a)", "JSON(a UInt32", "JSON(SKIP REGEXP x)"]
        {
            assert!(DataType::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn display_round_trips() {
        for s in ["Variant(String, UInt64)", "Dynamic", "Dynamic(max_types=7)", "JSON", "JSON(a UInt32, SKIP b)"] {
            let t = DataType::parse(s).unwrap();
            assert_eq!(t.to_string(), s);
            assert_eq!(DataType::parse(&t.to_string()).unwrap(), t);
        }
    }

    #[test]
    fn binary_type_encodings() {
        let cases: &[(&[u8], &str)] = &[
            (&[0x1e, 0x01], "Array(UInt8)"),
            (&[0x0f], "Date"),
            (&[0x1f, 0x02, 0x01, 0x15], "Tuple(UInt8, String)"),
            (&[0x20, 0x01, 0x01, b'a', 0x09], "Tuple(a Int32)"),
            (&[0x27, 0x15, 0x0e], "Map(String, Float64)"),
            (&[0x23, 0x0a], "Nullable(Int64)"),
            (&[0x26, 0x23, 0x15], "LowCardinality(Nullable(String))"),
            (&[0x2a, 0x02, 0x15, 0x02], "Variant(String, UInt16)"),
            (&[0x12, 0x03, b'U', b'T', b'C'], "DateTime('UTC')"),
            (&[0x14, 0x03, 0x03, b'U', b'T', b'C'], "DateTime64(3, 'UTC')"),
            (&[0x1a, 0x12, 0x04], "Decimal(18, 4)"),
            (&[0x16, 0x05], "FixedString(5)"),
            (&[0x17, 0x02, 0x01, b'a', 0x01, 0x01, b'b', 0xff], "Enum8('a' = 1, 'b' = -1)"),
            (&[0x22, 0x03], "IntervalSecond"),
            (&[0x2b, 0x20], "Dynamic"),
            (&[0x2b, 0x05], "Dynamic(max_types=5)"),
            (&[0x2d], "Bool"),
            (&[0x2c, 0x05, b'P', b'o', b'i', b'n', b't'], "Point"),
            // JSON: version 0, max_dynamic_paths 0x400 (default), max_dynamic_types 16, one typed path.
            (
                &[0x30, 0x00, 0x80, 0x08, 0x10, 0x01, 0x01, b'a', 0x03, 0x00, 0x00],
                "JSON(max_dynamic_types=16, a UInt32)",
            ),
        ];
        for (bytes, name) in cases {
            let mut r = Reader::new(bytes);
            assert_eq!(DataType::decode_binary(&mut r).unwrap(), DataType::parse(name).unwrap(), "{name}");
            assert_eq!(r.remaining(), 0, "{name}");
        }
        assert!(matches!(DataType::decode_binary(&mut Reader::new(&[0x25])), Err(ProtoError::Type { .. })));
        assert!(matches!(DataType::decode_binary(&mut Reader::new(&[0x7f])), Err(ProtoError::Violation(_))));
        assert!(matches!(DataType::decode_binary(&mut Reader::new(&[0x1e])), Err(ProtoError::Incomplete { .. })));
        // Deep nesting is bounded.
        let deep = vec![0x1e; 1000];
        assert!(DataType::decode_binary(&mut Reader::new(&deep)).is_err());
    }
}
