//! Dynamic rows: [`Value`], one variant per ClickHouse value kind, and
//! [`ValueRow`], a row of them with the result's column names.
//!
//! For tools that do not know the schema at compile time (CLIs, admin tools,
//! migrations). Values are exact: Decimals and 128/256-bit integers keep every
//! digit, DateTimes keep their time zone, Maps keep their order, Strings keep
//! their bytes. `Display` renders a value the way the server's `toString` does.
//!
//! The client (`chnative`) re-exports this module as `chnative::value` and
//! streams a result as `ValueRow`s; [`Value`] is also a field type of typed rows
//! (it reads any column).

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::Arc;

use crate::convert::{self, calendar, Decimal, I256, U256};
use crate::view::WireUuid;

use crate::row::{RowError as Error, RowResult as Result};

/// One ClickHouse value.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Value {
    /// NULL (of a Nullable, LowCardinality(Nullable), Variant or Dynamic column).
    Null,
    /// Bool.
    Bool(bool),
    /// Int8.
    Int8(i8),
    /// Int16.
    Int16(i16),
    /// Int32.
    Int32(i32),
    /// Int64.
    Int64(i64),
    /// Int128.
    Int128(i128),
    /// Int256.
    Int256(I256),
    /// UInt8.
    UInt8(u8),
    /// UInt16.
    UInt16(u16),
    /// UInt32.
    UInt32(u32),
    /// UInt64.
    UInt64(u64),
    /// UInt128.
    UInt128(u128),
    /// UInt256.
    UInt256(U256),
    /// Float32.
    Float32(f32),
    /// Float64.
    Float64(f64),
    /// BFloat16, widened exactly to f32.
    BFloat16(f32),
    /// Decimal(P, S), exact.
    Decimal(Decimal),
    /// String: its bytes (not necessarily UTF-8).
    String(Vec<u8>),
    /// FixedString(N): exactly N bytes.
    FixedString(Vec<u8>),
    /// Date: days since 1970-01-01.
    Date(u16),
    /// Date32: days since 1970-01-01.
    Date32(i32),
    /// DateTime: Unix seconds and the zone it is shown in (the column's, else the server's).
    DateTime {
        /// Seconds since the epoch.
        secs: u32,
        /// IANA zone name.
        tz: Arc<str>,
    },
    /// DateTime64(p): ticks of 10^-p seconds since the epoch, and the zone.
    DateTime64 {
        /// Ticks since the epoch.
        ticks: i64,
        /// Digits after the point, 0..=9.
        precision: u8,
        /// IANA zone name.
        tz: Arc<str>,
    },
    /// Time: signed seconds.
    Time(i32),
    /// Time64(p): signed ticks of 10^-p seconds.
    Time64 {
        /// Ticks.
        ticks: i64,
        /// Digits after the point.
        precision: u8,
    },
    /// UUID.
    Uuid(WireUuid),
    /// IPv4.
    Ipv4(Ipv4Addr),
    /// IPv6.
    Ipv6(Ipv6Addr),
    /// Enum8 / Enum16: the label and the value.
    Enum {
        /// The label.
        label: Arc<str>,
        /// The number stored.
        value: i16,
    },
    /// Array (also Nested and the geo types).
    Array(Vec<Value>),
    /// Tuple (of unnamed elements).
    Tuple(Vec<Value>),
    /// Tuple of named elements (`Tuple(a Int32, b String)`): shown as a
    /// [`Value::Tuple`] (`(42,'str')`), and in JSON as an object of its names
    /// (`{"a":42,"b":"str"}`), as the server writes it.
    NamedTuple {
        /// The element names, in order (shared by the values of a column).
        names: Arc<[String]>,
        /// The values, one per name.
        values: Vec<Value>,
    },
    /// Map, in the server's order.
    Map(Vec<(Value, Value)>),
    /// An `Interval*` value (`INTERVAL 1 SECOND`): a count of its unit, shown
    /// as the count (as the server's `toString` does).
    Interval {
        /// The unit.
        kind: crate::types::IntervalKind,
        /// How many of it.
        value: i64,
    },
}

/// Ticks of 10^-p s split into seconds and nanoseconds (floor).
fn split_ticks(ticks: i64, precision: u8) -> (i64, u32) {
    let per = 10i64.pow(u32::from(precision.min(9)));
    let secs = ticks.div_euclid(per);
    let frac = ticks.rem_euclid(per);
    (secs, (frac * 10i64.pow(9 - u32::from(precision.min(9)))) as u32)
}

/// The days of 0000-01-01 and 9999-12-31: the server shows a date (or a
/// date-time's local date) outside them as the nearer one.
const SHOWN_DAYS: (i64, i64) = (-719_528, 2_932_896);
/// The local seconds of 0000-01-01 00:00:00 and 9999-12-31 23:59:59.
const SHOWN_SECS: (i64, i64) = (SHOWN_DAYS.0 * 86_400, SHOWN_DAYS.1 * 86_400 + 86_399);
/// The last Unix second whose UTC offset the time zone database gives in
/// every zone (jiff's latest timestamp, 9999-12-30 22:00:00 UTC).
const LAST_OFFSET_SECS: i64 = 253_402_207_200;

fn write_days(f: &mut impl fmt::Write, days: i64) -> fmt::Result {
    let (y, m, d) = calendar::civil_from_days(days.clamp(SHOWN_DAYS.0, SHOWN_DAYS.1));
    write!(f, "{y:04}-{m:02}-{d:02}")
}

fn write_frac(f: &mut impl fmt::Write, nanos: u32, precision: u8) -> fmt::Result {
    if precision == 0 {
        return Ok(());
    }
    let p = precision.min(9);
    let digits = nanos / 10u32.pow(9 - u32::from(p));
    write!(f, ".{digits:0w$}", w = usize::from(p))
}

/// Wall-clock `YYYY-MM-DD hh:mm:ss` of a local-time second count.
///
/// A time before 0000-01-01 00:00:00 or after 9999-12-31 23:59:59 is shown as
/// that bound, as the server shows it (a DateTime64's fraction is kept).
fn write_local(f: &mut impl fmt::Write, local_secs: i64) -> fmt::Result {
    let local_secs = local_secs.clamp(SHOWN_SECS.0, SHOWN_SECS.1);
    write_days(f, local_secs.div_euclid(86_400))?;
    let s = local_secs.rem_euclid(86_400);
    write!(f, " {:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// A zoned wall-clock time: `secs` (Unix seconds) in `zone`, as `toString` shows
/// it, or — when the zone's offset is unknown (no time zone database compiled in,
/// or a name the database lacks) — the UTC time followed by ` UTC`, never a UTC
/// time passed off as local. `frac`: the nanoseconds and precision of a DateTime64.
fn write_zoned(f: &mut impl fmt::Write, zone: &str, secs: i64, frac: Option<(u32, u8)>) -> fmt::Result {
    // An instant past either end of what is shown takes the offset of one
    // near that end (the database knows no offset for far instants).
    let probe = secs.clamp(SHOWN_SECS.0 - 2 * 86_400, LAST_OFFSET_SECS);
    let local = convert::zone::local_seconds(zone, probe).map(|l| secs.saturating_add(l - probe));
    write_local(f, local.unwrap_or(secs))?;
    if let Some((nanos, precision)) = frac {
        write_frac(f, nanos, precision)?;
    }
    match local {
        Some(_) => Ok(()),
        None => f.write_str(" UTC"),
    }
}

/// The shortest round-trip digits of a float in scientific form (`[-]d[.ddd]e[-]x`),
/// with ties between two equally close shortest candidates broken to the even
/// digit, as the server's formatter does (Rust's breaks them upwards).
fn shortest_sci(shortest: String, exact: impl Fn(usize) -> String) -> String {
    let (mantissa, exp) = shortest.split_once('e').unwrap_or((&shortest, "0"));
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: Vec<u8> = mantissa.bytes().filter(|c| *c != b'.').collect();
    let n = digits.len();
    let Ok(exp) = exp.parse::<i32>() else { return shortest.clone() };
    // A tie: the exact value has n + 1 significant digits, the last a 5.
    let long = exact(n + 60);
    let (lm, le) = long.split_once('e').unwrap_or((&long, "0"));
    let ld: Vec<u8> = lm.trim_start_matches('-').bytes().filter(|c| *c != b'.').collect();
    if le.parse::<i32>().ok() != Some(exp)
        || ld.len() < n + 1
        || ld[n] != b'5'
        || ld[n + 1..].iter().any(|&d| d != b'0')
    {
        return shortest.clone();
    }
    let mut t = ld[..n].to_vec();
    // An odd truncated candidate is rounded up (carrying); an even one is kept.
    if !t.last().is_some_and(|d| (d - b'0').is_multiple_of(2)) {
        let mut k = n;
        loop {
            if k == 0 {
                t.insert(0, b'1');
                t.pop();
                return render_sci(sign, &t, exp + 1);
            }
            k -= 1;
            if t[k] == b'9' {
                t[k] = b'0';
            } else {
                t[k] += 1;
                break;
            }
        }
    }
    render_sci(sign, &t, exp)
}

fn render_sci(sign: &str, digits: &[u8], exp: i32) -> String {
    let digits = std::str::from_utf8(digits).unwrap_or("0").trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    if digits.len() == 1 {
        format!("{sign}{digits}e{exp}")
    } else {
        format!("{sign}{}.{}e{exp}", &digits[..1], &digits[1..])
    }
}

/// Formats a float the way ClickHouse does: the shortest digits that read back
/// to the same value, positional from 1e-6 up to 1e21, else `1e21` / `1.5e-7`.
fn write_float(f: &mut impl fmt::Write, sci: &str, is_nan: bool, is_inf: bool, negative: bool) -> fmt::Result {
    if is_nan {
        return f.write_str("nan");
    }
    if is_inf {
        return f.write_str(if negative { "-inf" } else { "inf" });
    }
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if digits == "0" {
        return write!(f, "{sign}0");
    }
    if (-6..21).contains(&exp) {
        let n = digits.len() as i32;
        if exp < 0 {
            write!(f, "{sign}0.{}{digits}", "0".repeat((-exp - 1) as usize))
        } else if exp + 1 >= n {
            write!(f, "{sign}{digits}{}", "0".repeat((exp + 1 - n) as usize))
        } else {
            let (a, b) = digits.split_at((exp + 1) as usize);
            write!(f, "{sign}{a}.{b}")
        }
    } else {
        write!(f, "{sign}{mantissa}e{exp}")
    }
}

fn write_quoted(f: &mut impl fmt::Write, bytes: &[u8]) -> fmt::Result {
    f.write_char('\'')?;
    write_escaped(f, bytes)?;
    f.write_char('\'')
}

fn write_escaped(f: &mut impl fmt::Write, bytes: &[u8]) -> fmt::Result {
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\'' => f.write_str("\\'")?,
                '\\' => f.write_str("\\\\")?,
                '\n' => f.write_str("\\n")?,
                '\t' => f.write_str("\\t")?,
                '\r' => f.write_str("\\r")?,
                '\0' => f.write_str("\\0")?,
                '\x08' => f.write_str("\\b")?,
                '\x0c' => f.write_str("\\f")?,
                c => f.write_char(c)?,
            }
        }
        if !chunk.invalid().is_empty() {
            f.write_char(char::REPLACEMENT_CHARACTER)?;
        }
    }
    Ok(())
}

impl Value {
    /// Whether this is NULL.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The string bytes of a String or FixedString value.
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Value::String(b) | Value::FixedString(b) => Some(b),
            _ => None,
        }
    }

    /// A String value as `&str`, when it is UTF-8.
    pub fn as_str(&self) -> Option<&str> {
        self.as_bytes().and_then(|b| std::str::from_utf8(b).ok())
    }

    /// Any integer value (and Bool, Enum) that fits in an i128.
    pub fn as_i128(&self) -> Option<i128> {
        Some(match self {
            Value::Bool(b) => i128::from(*b),
            Value::Int8(v) => i128::from(*v),
            Value::Int16(v) => i128::from(*v),
            Value::Int32(v) => i128::from(*v),
            Value::Int64(v) => i128::from(*v),
            Value::Int128(v) => *v,
            Value::UInt8(v) => i128::from(*v),
            Value::UInt16(v) => i128::from(*v),
            Value::UInt32(v) => i128::from(*v),
            Value::UInt64(v) => i128::from(*v),
            Value::UInt128(v) => i128::try_from(*v).ok()?,
            Value::Enum { value, .. } => i128::from(*value),
            _ => return None,
        })
    }

    /// Renders like `toString`, with strings (and dates, UUIDs, …) quoted as inside
    /// an Array or Tuple when `nested`.
    fn render(&self, f: &mut impl fmt::Write, nested: bool) -> fmt::Result {
        macro_rules! quoted {
            ($($t:tt)*) => {{
                if nested {
                    f.write_char('\'')?;
                }
                $($t)*;
                if nested {
                    f.write_char('\'')?;
                }
                Ok(())
            }};
        }
        match self {
            Value::Null => f.write_str("NULL"),
            Value::Bool(b) => f.write_str(if *b { "true" } else { "false" }),
            Value::Int8(v) => write!(f, "{v}"),
            Value::Int16(v) => write!(f, "{v}"),
            Value::Int32(v) => write!(f, "{v}"),
            Value::Int64(v) => write!(f, "{v}"),
            Value::Int128(v) => write!(f, "{v}"),
            Value::Int256(v) => write!(f, "{v}"),
            Value::UInt8(v) => write!(f, "{v}"),
            Value::UInt16(v) => write!(f, "{v}"),
            Value::UInt32(v) => write!(f, "{v}"),
            Value::UInt64(v) => write!(f, "{v}"),
            Value::UInt128(v) => write!(f, "{v}"),
            Value::UInt256(v) => write!(f, "{v}"),
            Value::Float32(v) | Value::BFloat16(v) => {
                let sci =
                    if v.is_finite() { shortest_sci(format!("{v:e}"), |p| format!("{v:.p$e}")) } else { String::new() };
                write_float(f, &sci, v.is_nan(), v.is_infinite(), v.is_sign_negative())
            }
            Value::Float64(v) => {
                let sci =
                    if v.is_finite() { shortest_sci(format!("{v:e}"), |p| format!("{v:.p$e}")) } else { String::new() };
                write_float(f, &sci, v.is_nan(), v.is_infinite(), v.is_sign_negative())
            }
            Value::Decimal(d) => write!(f, "{d}"),
            Value::String(b) | Value::FixedString(b) => {
                // toString drops a FixedString's NUL padding.
                let b = match self {
                    Value::FixedString(b) => &b[..b.iter().rposition(|&c| c != 0).map_or(0, |p| p + 1)],
                    _ => &b[..],
                };
                if nested {
                    write_quoted(f, b)
                } else {
                    for chunk in b.utf8_chunks() {
                        f.write_str(chunk.valid())?;
                        if !chunk.invalid().is_empty() {
                            f.write_char(char::REPLACEMENT_CHARACTER)?;
                        }
                    }
                    Ok(())
                }
            }
            Value::Date(d) => quoted!(write_days(f, i64::from(*d))?),
            Value::Date32(d) => quoted!(write_days(f, i64::from(*d))?),
            Value::DateTime { secs, tz } => quoted!(write_zoned(f, tz, i64::from(*secs), None)?),
            Value::DateTime64 { ticks, precision, tz } => {
                let (secs, nanos) = split_ticks(*ticks, *precision);
                quoted!(write_zoned(f, tz, secs, Some((nanos, *precision)))?)
            }
            Value::Interval { value, .. } => write!(f, "{value}"),
            Value::Time(s) => quoted!(write_duration(f, i128::from(*s), 0)?),
            Value::Time64 { ticks, precision } => quoted!(write_duration(f, i128::from(*ticks), *precision)?),
            Value::Uuid(u) => quoted!(write!(f, "{u}")?),
            Value::Ipv4(a) => quoted!(write!(f, "{a}")?),
            Value::Ipv6(a) => quoted!(write!(f, "{a}")?),
            Value::Enum { label, .. } => {
                if nested {
                    write_quoted(f, label.as_bytes())
                } else {
                    f.write_str(label)
                }
            }
            Value::Array(items) => {
                f.write_char('[')?;
                for (k, v) in items.iter().enumerate() {
                    if k > 0 {
                        f.write_char(',')?;
                    }
                    v.render(f, true)?;
                }
                f.write_char(']')
            }
            Value::Tuple(items) | Value::NamedTuple { values: items, .. } => {
                f.write_char('(')?;
                for (k, v) in items.iter().enumerate() {
                    if k > 0 {
                        f.write_char(',')?;
                    }
                    v.render(f, true)?;
                }
                f.write_char(')')
            }
            Value::Map(pairs) => {
                f.write_char('{')?;
                for (k, (key, v)) in pairs.iter().enumerate() {
                    if k > 0 {
                        f.write_char(',')?;
                    }
                    key.render(f, true)?;
                    f.write_char(':')?;
                    v.render(f, true)?;
                }
                f.write_char('}')
            }
        }
    }
}

/// A `Time`/`Time64(p)` duration of `ticks` (10^-p s): `[-]h:mm:ss[.fff]`, hours unbounded.
fn write_duration(f: &mut impl fmt::Write, ticks: i128, precision: u8) -> fmt::Result {
    let per = 10i128.pow(u32::from(precision.min(9)));
    let neg = ticks < 0;
    let abs = ticks.unsigned_abs();
    let secs = abs / per as u128;
    let frac = abs % per as u128;
    write!(f, "{}{:02}:{:02}:{:02}", if neg { "-" } else { "" }, secs / 3600, secs / 60 % 60, secs % 60)?;
    if precision > 0 {
        write!(f, ".{frac:0w$}", w = usize::from(precision.min(9)))?;
    }
    Ok(())
}

/// Renders the value as the server's `toString` does (strings unquoted at the top
/// level, quoted inside arrays, tuples and maps). A DateTime is shown in its
/// zone's local time, which needs a time zone database: the default `tz` feature
/// (or `jiff`, or `chrono`). Without one, or for a zone the database does not
/// know, it is shown in UTC followed by ` UTC` (`2024-03-31 01:30:00 UTC`), never
/// as a UTC time that looks local.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.render(f, false)
    }
}

/// One row of [`Value`]s with the result's column names (shared by all rows of a block).
#[derive(Debug, Clone, PartialEq)]
pub struct ValueRow {
    names: Arc<[String]>,
    values: Vec<Value>,
}

impl ValueRow {
    /// A row from names and values of the same length.
    pub fn new(names: Arc<[String]>, values: Vec<Value>) -> Result<ValueRow> {
        if names.len() != values.len() {
            return Err(Error::invalid_input(format!("{} names for {} values", names.len(), values.len())));
        }
        Ok(ValueRow { names, values })
    }

    /// A row from a caller that made one value per name (the dynamic row
    /// stream, from a block's columns): no check on the hot path.
    #[doc(hidden)]
    #[inline]
    pub fn from_parts(names: Arc<[String]>, values: Vec<Value>) -> ValueRow {
        debug_assert_eq!(names.len(), values.len());
        ValueRow { names, values }
    }
    /// The column names.
    pub fn names(&self) -> &[String] {
        &self.names
    }
    /// The values, in column order.
    pub fn values(&self) -> &[Value] {
        &self.values
    }
    /// The values, taken.
    pub fn into_values(self) -> Vec<Value> {
        self.values
    }
    /// Number of columns.
    pub fn len(&self) -> usize {
        self.values.len()
    }
    /// True for a row with no columns.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
    /// The value of the column called `name`.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.names.iter().position(|n| n == name).map(|k| &self.values[k])
    }
    /// Iterates `(name, value)`.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.names.iter().map(String::as_str).zip(&self.values)
    }
}

impl std::ops::Index<usize> for ValueRow {
    type Output = Value;
    fn index(&self, k: usize) -> &Value {
        &self.values[k]
    }
}

impl std::ops::Index<&str> for ValueRow {
    type Output = Value;
    /// Panics if there is no such column; [`ValueRow::get`] does not.
    fn index(&self, name: &str) -> &Value {
        self.get(name).unwrap_or_else(|| panic!("no column `{name}`"))
    }
}

mod insert;
mod read;
#[cfg(feature = "serde")]
mod serialize;
pub use insert::ValueBuffer;
#[doc(hidden)]
pub use insert::{clear_value_rows, push_value_rows, Buffer as ValueColumnBuffer};
#[doc(hidden)]
pub use read::ColumnReader;
#[cfg(feature = "serde_json")]
pub use read::JsonValueReader;
pub use read::ValueReader;

/// Renders a value to a `String` like `toString` (see [`Value`]'s `Display`).
pub fn to_string(v: &Value) -> String {
    let mut s = String::new();
    let _ = v.render(&mut s, false);
    s
}
