//! Text into a [`Value`] of a column's type, client-side, for `INSERT … FORMAT`
//! from standard input. The library converts a `Value` to its column type
//! exactly; this is the step before: reading text as the server's input
//! formats write it.
//!
//! Supported: Int*/UInt* (to 256 bits), Float32/64, BFloat16, Bool, Decimal,
//! String, FixedString, Date, Date32, DateTime, DateTime64, UUID, IPv4, IPv6,
//! Enum8/16, and Nullable, LowCardinality, Array, Tuple and Map of these.
//! Anything else is refused with a message naming the type.

use std::str::FromStr;
use std::sync::Arc;

use chnative::convert::{self, calendar, Decimal, I256, U256};
use chnative::proto::WireUuid;
use chnative::{DataType as D, Value};

pub use chnative::convert::text::unescape;

/// Why a type cannot be parsed client-side, or `None` when it can.
pub fn unsupported(ty: &D) -> Option<String> {
    match ty {
        D::Nullable(t) | D::LowCardinality(t) | D::Array(t) | D::SimpleAggregateFunction(_, t) => unsupported(t),
        D::Tuple(elems) => elems.iter().find_map(|(_, t)| unsupported(t)),
        D::Map(k, v) => unsupported(k).or_else(|| unsupported(v)),
        t if t.is_number() => None,
        D::BFloat16
        | D::Bool
        | D::Decimal { .. }
        | D::String
        | D::FixedString(_)
        | D::Date
        | D::Date32
        | D::DateTime(_)
        | D::DateTime64(..)
        | D::Uuid
        | D::Ipv4
        | D::Ipv6
        | D::Enum8(_)
        | D::Enum16(_)
        | D::Json(_) => None,
        t => Some(format!(
            "chn cannot read {t} values from text yet (it reads numbers, Bool, Decimal, String, FixedString, \
             Date, Date32, DateTime, DateTime64, UUID, IPv4, IPv6, Enum and Nullable, LowCardinality, Array, \
             Tuple and Map of these); insert with INSERT … SELECT or over HTTP instead"
        )),
    }
}

/// The type under LowCardinality and SimpleAggregateFunction.
fn plain(ty: &D) -> &D {
    match ty {
        D::LowCardinality(t) | D::SimpleAggregateFunction(_, t) => plain(t),
        t => t,
    }
}

/// The value a column gets for a missing field or a NULL in a column that is
/// not Nullable (the server's `input_format_null_as_default = 1`).
pub fn default_value(ty: &D, server_tz: &Arc<str>) -> Value {
    match plain(ty) {
        D::Nullable(_) => Value::Null,
        D::Int8 => Value::Int8(0),
        D::Int16 => Value::Int16(0),
        D::Int32 => Value::Int32(0),
        D::Int64 => Value::Int64(0),
        D::Int128 => Value::Int128(0),
        D::Int256 => Value::Int256(I256::from(0i128)),
        D::UInt8 => Value::UInt8(0),
        D::UInt16 => Value::UInt16(0),
        D::UInt32 => Value::UInt32(0),
        D::UInt64 => Value::UInt64(0),
        D::UInt128 => Value::UInt128(0),
        D::UInt256 => Value::UInt256(U256::from(0u128)),
        D::Float32 => Value::Float32(0.0),
        D::BFloat16 => Value::BFloat16(0.0),
        D::Float64 => Value::Float64(0.0),
        D::Bool => Value::Bool(false),
        D::Decimal { .. } => Value::Decimal(Decimal::from_str("0").expect("zero is a Decimal")),
        D::FixedString(_) => Value::FixedString(Vec::new()),
        D::Date => Value::Date(0),
        D::Date32 => Value::Date32(0),
        D::DateTime(tz) => Value::DateTime { secs: 0, tz: zone(tz, server_tz) },
        D::DateTime64(p, tz) => Value::DateTime64 { ticks: 0, precision: *p, tz: zone(tz, server_tz) },
        D::Uuid => Value::Uuid(WireUuid::default()),
        D::Ipv4 => Value::Ipv4(std::net::Ipv4Addr::UNSPECIFIED),
        D::Ipv6 => Value::Ipv6(std::net::Ipv6Addr::UNSPECIFIED),
        D::Enum8(labels) => Value::String(labels.first().map(|(l, _)| l.as_bytes().to_vec()).unwrap_or_default()),
        D::Enum16(labels) => Value::String(labels.first().map(|(l, _)| l.as_bytes().to_vec()).unwrap_or_default()),
        D::Array(_) => Value::Array(Vec::new()),
        D::Map(..) => Value::Map(Vec::new()),
        D::Tuple(elems) => Value::Tuple(elems.iter().map(|(_, t)| default_value(t, server_tz)).collect()),
        D::Json(_) => Value::String(b"{}".to_vec()),
        _ => Value::String(Vec::new()),
    }
}

fn zone(tz: &Option<String>, server_tz: &Arc<str>) -> Arc<str> {
    tz.as_deref().map_or_else(|| server_tz.clone(), Arc::from)
}

/// Parses a field's text (already unescaped or unquoted) as a value of `ty`.
/// `server_tz`: the zone of DateTime columns that name none.
pub fn parse_text(ty: &D, text: &[u8], server_tz: &Arc<str>) -> Result<Value, String> {
    let ty = plain(ty);
    match ty {
        // A JSON column takes its JSON text; the server parses it.
        D::String | D::Json(_) => return Ok(Value::String(text.to_vec())),
        D::FixedString(n) => {
            if text.len() > *n {
                return Err(format!("{} bytes are too long for {ty}", text.len()));
            }
            return Ok(Value::FixedString(text.to_vec()));
        }
        D::Nullable(t) => return parse_text(t, text, server_tz),
        D::Array(_) | D::Tuple(_) | D::Map(..) => {
            let s = std::str::from_utf8(text).map_err(|_| "not UTF-8".to_string())?;
            let mut p = Literal { s: s.as_bytes(), i: 0, tz: server_tz };
            let v = p.value(ty)?;
            p.ws();
            if p.i != p.s.len() {
                return Err(format!("unexpected `{}` after the value", &s[p.i..]));
            }
            return Ok(v);
        }
        _ => {}
    }
    let s = std::str::from_utf8(text).map_err(|_| "not UTF-8".to_string())?;
    scalar(ty, s, server_tz)
}

/// A number written with an exponent (`4.4E+5`, `-1.5e-3`) as plain digits
/// (`440000`, `-0.0015`); `None` when it has no exponent or is not a number.
fn expand_exponent(s: &str) -> Option<String> {
    let (mantissa, exp) = s.split_once(['e', 'E'])?;
    let exp: i64 = exp.strip_prefix('+').unwrap_or(exp).parse().ok()?;
    let (sign, m) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa.strip_prefix('+').unwrap_or(mantissa)),
    };
    let (int, frac) = m.split_once('.').unwrap_or((m, ""));
    if int.is_empty() && frac.is_empty() || !int.bytes().chain(frac.bytes()).all(|c| c.is_ascii_digit()) {
        return None;
    }
    if exp.abs() > 100 {
        return None;
    }
    let digits = format!("{int}{frac}");
    // The point's place in `digits` after the shift.
    let point = int.len() as i64 + exp;
    let text = if point <= 0 {
        format!("0.{}{digits}", "0".repeat((-point) as usize))
    } else if point as usize >= digits.len() {
        format!("{digits}{}", "0".repeat(point as usize - digits.len()))
    } else {
        format!("{}.{}", &digits[..point as usize], &digits[point as usize..])
    };
    Some(format!("{sign}{text}"))
}

fn int<T: FromStr>(s: &str, name: &str) -> Result<T, String> {
    let t = s.strip_prefix('+').unwrap_or(s);
    t.parse::<T>().map_err(|_| {
        if !t.is_empty() && t.bytes().enumerate().all(|(k, c)| c.is_ascii_digit() || k == 0 && c == b'-') {
            format!("out of range for {name}")
        } else {
            format!("not a number of type {name}")
        }
    })
}

fn float(s: &str) -> Result<f64, String> {
    let t = s.strip_prefix('+').unwrap_or(s);
    t.parse::<f64>().map_err(|_| "not a number".to_string())
}

/// A scalar (not Array/Tuple/Map, not a String) from its text.
fn scalar(ty: &D, s: &str, server_tz: &Arc<str>) -> Result<Value, String> {
    Ok(match ty {
        D::Int8 => Value::Int8(int(s, "Int8")?),
        D::Int16 => Value::Int16(int(s, "Int16")?),
        D::Int32 => Value::Int32(int(s, "Int32")?),
        D::Int64 => Value::Int64(int(s, "Int64")?),
        D::Int128 => Value::Int128(int(s, "Int128")?),
        D::Int256 => Value::Int256(int(s, "Int256")?),
        D::UInt8 => Value::UInt8(int(s, "UInt8")?),
        D::UInt16 => Value::UInt16(int(s, "UInt16")?),
        D::UInt32 => Value::UInt32(int(s, "UInt32")?),
        D::UInt64 => Value::UInt64(int(s, "UInt64")?),
        D::UInt128 => Value::UInt128(int(s, "UInt128")?),
        D::UInt256 => Value::UInt256(int(s, "UInt256")?),
        D::Float32 => Value::Float32(float(s)? as f32),
        D::Float64 => Value::Float64(float(s)?),
        D::BFloat16 => Value::BFloat16(convert::bf16::to_f32(convert::bf16::from_f32(float(s)? as f32))),
        D::Bool => Value::Bool(match s.to_ascii_lowercase().as_str() {
            "true" | "1" | "t" | "y" | "yes" | "on" | "enable" | "enabled" => true,
            "false" | "0" | "f" | "n" | "no" | "off" | "disable" | "disabled" => false,
            _ => return Err("not a Bool (true or false)".into()),
        }),
        D::Decimal { scale, .. } => {
            // Read as the server reads it: `4.4E+5` (the exponent moves the point), and digits
            // past the scale cut off (toward zero).
            let expanded = expand_exponent(s);
            let mut text = expanded.as_deref().unwrap_or(s);
            if let Some((int, frac)) = text.split_once('.') {
                if frac.len() > usize::from(*scale) && frac.bytes().all(|c| c.is_ascii_digit()) {
                    text = &text[..int.len() + usize::from(*scale) + usize::from(*scale > 0)];
                }
            }
            Value::Decimal(Decimal::from_str(text).map_err(|e| e.to_string())?)
        }
        D::String => Value::String(s.as_bytes().to_vec()),
        D::FixedString(_) => return parse_text(ty, s.as_bytes(), server_tz),
        D::Date => {
            let days = date(s)?;
            Value::Date(u16::try_from(days).map_err(|_| "outside the range of Date (1970-01-01 to 2149-06-06)")?)
        }
        D::Date32 => {
            let days = date(s)?;
            if !(calendar::DATE32_MIN_DAYS..=calendar::DATE32_MAX_DAYS).contains(&days) {
                return Err("outside the range of Date32".into());
            }
            Value::Date32(days as i32)
        }
        D::DateTime(tz) => {
            let tz = zone(tz, server_tz);
            let (secs, nanos) = date_time(s, &tz, 0)?;
            if nanos != 0 {
                return Err("DateTime has no fraction of a second".into());
            }
            Value::DateTime { secs: u32::try_from(secs).map_err(|_| "outside the range of DateTime")?, tz }
        }
        D::DateTime64(p, tz) => {
            let tz = zone(tz, server_tz);
            let (secs, nanos) = date_time(s, &tz, *p)?;
            let ticks =
                calendar::join_ticks(secs, nanos, *p).ok_or_else(|| format!("outside the range of DateTime64({p})"))?;
            Value::DateTime64 { ticks, precision: *p, tz }
        }
        D::Uuid => Value::Uuid(uuid(s)?),
        D::Ipv4 => Value::Ipv4(s.parse().map_err(|_| "not an IPv4 address")?),
        D::Ipv6 => Value::Ipv6(match s.parse::<std::net::Ipv6Addr>() {
            Ok(a) => a,
            Err(_) => s.parse::<std::net::Ipv4Addr>().map_err(|_| "not an IPv6 address")?.to_ipv6_mapped(),
        }),
        D::Enum8(labels) => enum_value(labels.iter().map(|(l, v)| (l.as_str(), i16::from(*v))), s)?,
        D::Enum16(labels) => enum_value(labels.iter().map(|(l, v)| (l.as_str(), *v)), s)?,
        t => return Err(unsupported(t).unwrap_or_else(|| format!("cannot read {t} here"))),
    })
}

fn enum_value<'l>(mut labels: impl Iterator<Item = (&'l str, i16)> + Clone, s: &str) -> Result<Value, String> {
    if labels.clone().any(|(l, _)| l == s) {
        return Ok(Value::String(s.as_bytes().to_vec()));
    }
    if let Ok(n) = s.parse::<i16>() {
        if let Some((l, _)) = labels.clone().find(|(_, v)| *v == n) {
            return Ok(Value::String(l.as_bytes().to_vec()));
        }
    }
    let names: Vec<String> = labels.by_ref().map(|(l, _)| format!("'{l}'")).collect();
    Err(format!("not one of the enum's labels ({})", names.join(", ")))
}

fn uuid(s: &str) -> Result<WireUuid, String> {
    let hex: String = s.chars().filter(|&c| c != '-').collect();
    let shape_ok = s.len() == 36 && [8, 13, 18, 23].iter().all(|&k| s.as_bytes()[k] == b'-') || s.len() == 32;
    if !shape_ok || hex.len() != 32 {
        return Err("not a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)".into());
    }
    u128::from_str_radix(&hex, 16).map(WireUuid::from_u128).map_err(|_| "not a UUID".into())
}

fn digits(s: &str, what: &str) -> Result<u32, String> {
    if s.is_empty() || !s.bytes().all(|c| c.is_ascii_digit()) {
        return Err(format!("bad {what}"));
    }
    s.parse().map_err(|_| format!("bad {what}"))
}

/// `YYYY-MM-DD` as days since 1970-01-01.
fn date(s: &str) -> Result<i64, String> {
    let bad = || format!("not a date (YYYY-MM-DD): `{s}`");
    let mut parts = s.split('-');
    let (Some(y), Some(m), Some(d), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
        return Err(bad());
    };
    if y.len() != 4 || m.is_empty() || m.len() > 2 || d.is_empty() || d.len() > 2 {
        return Err(bad());
    }
    let (y, m, d) = (digits(y, "year")?, digits(m, "month")?, digits(d, "day")?);
    if !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) {
        return Err(bad());
    }
    Ok(calendar::days_from_civil(i64::from(y), m, d))
}

fn days_in_month(y: u32, m: u32) -> u32 {
    match m {
        4 | 6 | 9 | 11 => 30,
        2 if y.is_multiple_of(4) && (!y.is_multiple_of(100) || y.is_multiple_of(400)) => 29,
        2 => 28,
        _ => 31,
    }
}

/// `YYYY-MM-DD[ hh:mm:ss[.fff…]]` in `tz`'s local time (or `T` for the space),
/// or a Unix timestamp; returns Unix seconds and nanoseconds.
fn date_time(s: &str, tz: &str, precision: u8) -> Result<(i64, u32), String> {
    if !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit()) {
        return Ok((s.parse::<i64>().map_err(|_| "timestamp out of range")?, 0));
    }
    let (day, time) = match s.split_once([' ', 'T']) {
        Some((d, t)) => (d, t),
        None => (s, "00:00:00"),
    };
    let days = date(day)?;
    let (hms, frac) = time.split_once('.').unwrap_or((time, ""));
    let bad = || format!("not a date and time (YYYY-MM-DD hh:mm:ss): `{s}`");
    let mut parts = hms.split(':');
    let (Some(h), Some(mi), Some(se), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
        return Err(bad());
    };
    let (h, mi, se) = (digits(h, "hour")?, digits(mi, "minute")?, digits(se, "second")?);
    if h > 23 || mi > 59 || se > 59 {
        return Err(bad());
    }
    if frac.len() > usize::from(precision) {
        return Err(if precision == 0 {
            "a fraction of a second for a type without one".to_string()
        } else {
            format!("more than {precision} digits after the second")
        });
    }
    let nanos = if frac.is_empty() { 0 } else { digits(frac, "fraction")? * 10u32.pow(9 - frac.len() as u32) };
    let local = days * 86_400 + i64::from(h * 3600 + mi * 60 + se);
    Ok((to_utc(tz, local)?, nanos))
}

/// Unix seconds of a local wall-clock time in `tz` (the earlier one when the
/// time repeats at a DST change).
fn to_utc(tz: &str, local: i64) -> Result<i64, String> {
    if convert::zone::is_utc(tz) {
        return Ok(local);
    }
    let offset =
        |t: i64| convert::zone::utc_offset(tz, t).map(i64::from).ok_or_else(|| format!("unknown time zone `{tz}`"));
    let mut guess = local - offset(local)?;
    for _ in 0..2 {
        guess = local - offset(guess)?;
    }
    Ok(guess)
}

/// A ClickHouse literal inside an Array, Tuple or Map: `[1,'a',NULL]`.
struct Literal<'a> {
    s: &'a [u8],
    i: usize,
    tz: &'a Arc<str>,
}

impl Literal<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn expect(&mut self, c: u8) -> Result<(), String> {
        self.ws();
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            Ok(())
        } else {
            Err(format!("expected `{}` at offset {}", c as char, self.i))
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.s.get(self.i).copied()
    }

    /// A list of items between `open` and `close`, separated by commas.
    fn list(
        &mut self,
        open: u8,
        close: u8,
        mut item: impl FnMut(&mut Self) -> Result<(), String>,
    ) -> Result<(), String> {
        self.expect(open)?;
        if self.peek() == Some(close) {
            self.i += 1;
            return Ok(());
        }
        loop {
            item(self)?;
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(c) if c == close => {
                    self.i += 1;
                    return Ok(());
                }
                _ => return Err(format!("expected `,` or `{}` at offset {}", close as char, self.i)),
            }
        }
    }

    fn value(&mut self, ty: &D) -> Result<Value, String> {
        let ty = plain(ty);
        match ty {
            D::Array(t) => {
                let mut items = Vec::new();
                self.list(b'[', b']', |p| {
                    items.push(p.value(t)?);
                    Ok(())
                })?;
                Ok(Value::Array(items))
            }
            D::Tuple(elems) => {
                let mut items = Vec::new();
                self.list(b'(', b')', |p| {
                    let t = elems.get(items.len()).ok_or("too many tuple elements")?;
                    items.push(p.value(&t.1)?);
                    Ok(())
                })?;
                if items.len() != elems.len() {
                    return Err(format!("{} tuple elements for {ty}", items.len()));
                }
                Ok(Value::Tuple(items))
            }
            D::Map(kt, vt) => {
                let mut pairs = Vec::new();
                self.list(b'{', b'}', |p| {
                    let k = p.value(kt)?;
                    p.expect(b':')?;
                    pairs.push((k, p.value(vt)?));
                    Ok(())
                })?;
                Ok(Value::Map(pairs))
            }
            D::Nullable(t) => {
                self.ws();
                let rest = &self.s[self.i..];
                if rest.len() >= 4 && rest[..4].eq_ignore_ascii_case(b"NULL") {
                    self.i += 4;
                    return Ok(Value::Null);
                }
                self.value(t)
            }
            t => {
                let text = self.atom()?;
                match t {
                    D::String | D::FixedString(_) => parse_text(t, &text, self.tz),
                    t => {
                        let s = std::str::from_utf8(&text).map_err(|_| "not UTF-8".to_string())?;
                        scalar(t, s, self.tz)
                    }
                }
            }
        }
    }

    /// A quoted string (unescaped) or an unquoted token.
    fn atom(&mut self) -> Result<Vec<u8>, String> {
        self.ws();
        if self.s.get(self.i) == Some(&b'\'') {
            self.i += 1;
            let mut out = Vec::new();
            while let Some(&c) = self.s.get(self.i) {
                self.i += 1;
                match c {
                    b'\\' => {
                        let e = *self.s.get(self.i).ok_or("a backslash at the end")?;
                        self.i += 1;
                        out.push(unescape(e));
                    }
                    b'\'' if self.s.get(self.i) == Some(&b'\'') => {
                        self.i += 1;
                        out.push(b'\'');
                    }
                    b'\'' => return Ok(out),
                    c => out.push(c),
                }
            }
            return Err("an unclosed quote".into());
        }
        let start = self.i;
        while let Some(&c) = self.s.get(self.i) {
            if matches!(c, b',' | b']' | b')' | b'}' | b':') || c.is_ascii_whitespace() {
                break;
            }
            self.i += 1;
        }
        if self.i == start {
            return Err(format!("expected a value at offset {start}"));
        }
        Ok(self.s[start..self.i].to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(ty: &str, text: &str) -> Result<String, String> {
        let ty = D::parse(ty).unwrap();
        let tz: Arc<str> = Arc::from("UTC");
        parse_text(&ty, text.as_bytes(), &tz).map(|v| v.to_string())
    }

    #[test]
    fn exponents() {
        assert_eq!(expand_exponent("4.4E+5").as_deref(), Some("440000"));
        assert_eq!(expand_exponent("-1.5e-3").as_deref(), Some("-0.0015"));
        assert_eq!(expand_exponent("12.345e1").as_deref(), Some("123.45"));
        assert_eq!(expand_exponent("1.5"), None);
        assert_eq!(p("Decimal(10, 2)", "4.4E+5").unwrap(), "440000");
        assert_eq!(p("Decimal(10, 2)", "-0.125").unwrap(), "-0.12");
        assert_eq!(p("Decimal(10, 2)", "1.5e-3").unwrap(), "0");
        assert_eq!(p("Decimal(10, 0)", "7.9").unwrap(), "7");
    }

    #[test]
    fn scalars() {
        assert_eq!(p("UInt8", "255").unwrap(), "255");
        assert!(p("UInt8", "256").unwrap_err().contains("out of range"));
        assert!(p("Int32", "x1").unwrap_err().contains("not a number"));
        assert_eq!(p("Float64", "-1.5e3").unwrap(), "-1500");
        assert_eq!(p("Date", "2024-02-29").unwrap(), "2024-02-29");
        assert!(p("Date", "2023-02-29").is_err());
        assert_eq!(p("DateTime('Asia/Tokyo')", "2024-01-01 09:00:00").unwrap(), "2024-01-01 09:00:00");
        assert_eq!(p("DateTime64(3, 'UTC')", "2024-01-01 00:00:00.5").unwrap(), "2024-01-01 00:00:00.500");
        assert_eq!(p("UUID", "61f0c404-5cb3-11e7-907b-a6006ad3dba0").unwrap(), "61f0c404-5cb3-11e7-907b-a6006ad3dba0");
        assert_eq!(p("Decimal(10, 2)", "3.14").unwrap(), "3.14");
        assert!(p("Enum8('a' = 1)", "b").unwrap_err().contains("'a'"));
    }

    #[test]
    fn literals() {
        assert_eq!(p("Array(String)", "['a\\'b', 'c']").unwrap(), "['a\\'b','c']");
        assert_eq!(p("Array(Nullable(Int32))", "[1, NULL,-3]").unwrap(), "[1,NULL,-3]");
        assert_eq!(p("Map(String, Array(UInt8))", "{'k':[1,2]}").unwrap(), "{'k':[1,2]}");
        assert_eq!(p("Tuple(UInt8, String)", "(1,'x')").unwrap(), "(1,'x')");
        assert!(p("Array(UInt8)", "[1,2").is_err());
    }
}
