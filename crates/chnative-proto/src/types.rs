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
    /// A syntactically valid type this crate has no codec for (kept verbatim).
    Unsupported(String),
}

impl DataType {
    /// Parses a type name as the server spells it.
    pub fn parse(s: &str) -> Result<DataType> {
        let mut p = Parser { s, pos: 0 };
        let node = p.node()?;
        p.skip_ws();
        if p.pos != s.len() {
            return Err(ProtoError::ty(s, format!("trailing input at byte {}", p.pos)));
        }
        convert(&node, s)
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
                let bits = match elem.as_ref() {
                    DataType::BFloat16 => 16,
                    DataType::Float32 => 32,
                    _ => 64,
                };
                Cow::Owned(DataType::Tuple(vec![(None, DataType::FixedString(dim.div_ceil(8))); bits]))
            }
            _ => Cow::Borrowed(self),
        }
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
    fn node(&mut self) -> Result<Node> {
        let name = self.ident().ok_or_else(|| self.err("expected a type name"))?;
        let mut args = Vec::new();
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
        "QBit" => match n.args.as_slice() {
            [Arg::Type(t), dim] => {
                let elem = convert(t, full)?;
                if !matches!(elem, T::BFloat16 | T::Float32 | T::Float64) {
                    return Err(bad("element must be BFloat16, Float32 or Float64"));
                }
                let d = num(dim)?;
                if d == 0 || d > (1 << 24) {
                    return Err(bad("dimension out of range"));
                }
                T::QBit(Box::new(elem), d as usize)
            }
            _ => return Err(bad("expects an element type and a dimension")),
        },
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
        _ => T::Unsupported(full.to_string()),
    })
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
                Arg::Str(x) => {
                    s.push('\'');
                    s.push_str(x);
                    s.push('\'');
                }
                Arg::Named(x, t) => {
                    s.push_str(x);
                    s.push(' ');
                    s.push_str(&render(t));
                }
                Arg::EnumPair(l, v) => s.push_str(&format!("'{l}' = {v}")),
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

impl std::fmt::Display for IntervalKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self:?}")
    }
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
            T::Enum8(pairs) => {
                f.write_str("Enum8(")?;
                for (i, (l, v)) in pairs.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    quote_into(f, l, '\'')?;
                    write!(f, " = {v}")?;
                }
                f.write_str(")")
            }
            T::Enum16(pairs) => {
                f.write_str("Enum16(")?;
                for (i, (l, v)) in pairs.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    quote_into(f, l, '\'')?;
                    write!(f, " = {v}")?;
                }
                f.write_str(")")
            }
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
