//! Bound parameters: `{name:Type}` placeholders filled from a bound batch's row,
//! as query parameters (text the server parses for the placeholder's type).

use adbc_core::error::{Error, Result, Status};
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType as A, TimeUnit};

use crate::invalid;

/// The names of the `{name:Type}` placeholders in `sql`, in order of first appearance.
/// Placeholders inside quotes or comments are not skipped: ClickHouse itself only
/// substitutes real ones, and an unmatched name is an error there, not a wrong value.
pub(crate) fn placeholders(sql: &str) -> Vec<String> {
    let b = sql.as_bytes();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'{' {
            let start = i + 1;
            let mut j = start;
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                j += 1;
            }
            if j > start && j < b.len() && b[j] == b':' {
                let name = &sql[start..j];
                if !out.iter().any(|n| n == name) {
                    out.push(name.to_string());
                }
            }
        }
        i += 1;
    }
    out
}

/// The `{name:Type}` placeholders of `sql` with their types, in order of first appearance.
pub(crate) fn typed_placeholders(sql: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for name in placeholders(sql) {
        let head = format!("{{{name}:");
        let Some(at) = sql.find(&head) else { continue };
        let rest = &sql[at + head.len()..];
        let Some(end) = rest.find('}') else { continue };
        out.push((name, rest[..end].trim().to_string()));
    }
    out
}

/// The parameters of row `row` of `batch` for `sql`: a column per placeholder name,
/// or, when none of the columns is named after a placeholder (DB-API's positional
/// parameters), the columns in order for the placeholders in order. `by_name` (the
/// statement's `adbc.statement.bind_by_name`) allows only the former.
pub(crate) fn row_params(sql: &str, batch: &RecordBatch, row: usize, by_name: bool) -> Result<Vec<(String, String)>> {
    let names = placeholders(sql);
    let schema = batch.schema();
    let by_name = by_name || names.iter().any(|n| schema.column_with_name(n).is_some());
    let mut out = Vec::with_capacity(names.len());
    if by_name {
        for n in &names {
            let (i, _) = schema
                .column_with_name(n)
                .ok_or_else(|| invalid(format!("no bound column for the placeholder {{{n}:…}}")))?;
            out.push((n.clone(), render(batch.column(i).as_ref(), row)?));
        }
    } else {
        if batch.num_columns() != names.len() {
            return Err(invalid(format!(
                "{} parameters bound for {} placeholders ({})",
                batch.num_columns(),
                names.len(),
                names.join(", ")
            )));
        }
        for (n, col) in names.iter().zip(batch.columns()) {
            out.push((n.clone(), render(col.as_ref(), row)?));
        }
    }
    Ok(out)
}

fn date_text(days: i64) -> String {
    let (y, m, d) = chnative::convert::calendar::civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}")
}

fn timestamp_text(ticks: i64, digits: u32) -> String {
    let per = 10i64.pow(digits);
    let (secs, frac) = (ticks.div_euclid(per), ticks.rem_euclid(per));
    let (days, rem) = (secs.div_euclid(86400), secs.rem_euclid(86400));
    let mut s = format!("{} {:02}:{:02}:{:02}", date_text(days), rem / 3600, rem % 3600 / 60, rem % 60);
    if digits > 0 {
        s.push_str(&format!(".{:0width$}", frac, width = digits as usize));
    }
    s
}

fn decimal_text(v: String, scale: i8) -> String {
    if scale <= 0 {
        return format!("{v}{}", "0".repeat((-scale) as usize));
    }
    let (neg, digits) = match v.strip_prefix('-') {
        Some(d) => (true, d.to_string()),
        None => (false, v),
    };
    let scale = scale as usize;
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (int, frac) = padded.split_at(padded.len() - scale);
    format!("{}{int}.{frac}", if neg { "-" } else { "" })
}

/// Value `row` of `a` as parameter text (the placeholder's type parses it).
pub(crate) fn render(a: &dyn Array, row: usize) -> Result<String> {
    use chnative::ToParam;
    // A Null array (Python's None as a parameter) has no validity buffer: every value is null.
    if a.data_type() == &A::Null || a.is_null(row) {
        return Ok("\\N".into());
    }
    macro_rules! p {
        ($t:ty) => {
            a.as_primitive::<$t>().value(row).to_string()
        };
    }
    Ok(match a.data_type() {
        A::Int8 => p!(Int8Type),
        A::Int16 => p!(Int16Type),
        A::Int32 => p!(Int32Type),
        A::Int64 => p!(Int64Type),
        A::UInt8 => p!(UInt8Type),
        A::UInt16 => p!(UInt16Type),
        A::UInt32 => p!(UInt32Type),
        A::UInt64 => p!(UInt64Type),
        A::Float32 => p!(Float32Type),
        A::Float64 => p!(Float64Type),
        A::Boolean => a.as_boolean().value(row).to_string(),
        A::Utf8 => a.as_string::<i32>().value(row).to_param(),
        A::LargeUtf8 => a.as_string::<i64>().value(row).to_param(),
        A::Utf8View => a.as_string_view().value(row).to_param(),
        A::Date32 => date_text(i64::from(a.as_primitive::<Date32Type>().value(row))),
        A::Timestamp(TimeUnit::Second, _) => timestamp_text(a.as_primitive::<TimestampSecondType>().value(row), 0),
        A::Timestamp(TimeUnit::Millisecond, _) => {
            timestamp_text(a.as_primitive::<TimestampMillisecondType>().value(row), 3)
        }
        A::Timestamp(TimeUnit::Microsecond, _) => {
            timestamp_text(a.as_primitive::<TimestampMicrosecondType>().value(row), 6)
        }
        A::Timestamp(TimeUnit::Nanosecond, _) => {
            timestamp_text(a.as_primitive::<TimestampNanosecondType>().value(row), 9)
        }
        A::Decimal128(_, s) => decimal_text(a.as_primitive::<Decimal128Type>().value(row).to_string(), *s),
        A::Decimal256(_, s) => decimal_text(a.as_primitive::<Decimal256Type>().value(row).to_string(), *s),
        A::List(_) | A::LargeList(_) | A::FixedSizeList(..) => literal(a, row)?,
        other => {
            return Err(Error::with_message_and_status(
                format!(
                "a parameter of Arrow type {other} (bind numbers, strings, booleans, dates, timestamps, decimals or lists of them)"
            ),
                Status::NotImplemented,
            ))
        }
    })
}

/// Value `row` of `a` as a literal inside an array parameter (`[1,'a',NULL]`): strings,
/// dates and timestamps quoted, NULL for nulls, nested lists in brackets.
fn literal(a: &dyn Array, row: usize) -> Result<String> {
    if a.data_type() == &A::Null || a.is_null(row) {
        return Ok("NULL".into());
    }
    let list = |values: ArrayRef| -> Result<String> {
        let items = (0..values.len()).map(|i| literal(values.as_ref(), i)).collect::<Result<Vec<_>>>()?;
        Ok(format!("[{}]", items.join(",")))
    };
    match a.data_type() {
        A::List(_) => list(a.as_list::<i32>().value(row)),
        A::LargeList(_) => list(a.as_list::<i64>().value(row)),
        A::FixedSizeList(..) => list(a.as_fixed_size_list().value(row)),
        A::Utf8 | A::LargeUtf8 | A::Utf8View | A::Date32 | A::Timestamp(..) => {
            let text = match a.data_type() {
                A::Utf8 => a.as_string::<i32>().value(row).to_string(),
                A::LargeUtf8 => a.as_string::<i64>().value(row).to_string(),
                A::Utf8View => a.as_string_view().value(row).to_string(),
                _ => render(a, row)?,
            };
            let mut q = String::with_capacity(text.len() + 2);
            q.push('\'');
            for c in text.chars() {
                match c {
                    '\\' => q.push_str("\\\\"),
                    '\'' => q.push_str("\\'"),
                    '\n' => q.push_str("\\n"),
                    '\t' => q.push_str("\\t"),
                    c => q.push(c),
                }
            }
            q.push('\'');
            Ok(q)
        }
        _ => render(a, row),
    }
}

const PARTITION_MAGIC: &[u8] = b"chnative-adbc-partition-1\n";

/// A partition: the query and its parameters, for `read_partition`.
pub(crate) fn encode_partition(sql: &str, params: &[(String, String)]) -> Vec<u8> {
    let mut out = PARTITION_MAGIC.to_vec();
    out.extend_from_slice(&(params.len() as u32).to_le_bytes());
    for (n, v) in params {
        for s in [n, v] {
            out.extend_from_slice(&(s.len() as u32).to_le_bytes());
            out.extend_from_slice(s.as_bytes());
        }
    }
    out.extend_from_slice(sql.as_bytes());
    out
}

pub(crate) fn decode_partition(mut b: &[u8]) -> Result<(String, Vec<(String, String)>)> {
    let bad = || invalid("not a partition of this driver");
    b = b.strip_prefix(PARTITION_MAGIC).ok_or_else(bad)?;
    let mut take = |n: usize| -> Result<&[u8]> {
        if b.len() < n {
            return Err(bad());
        }
        let (h, t) = b.split_at(n);
        b = t;
        Ok(h)
    };
    let u32_at = |s: &[u8]| u32::from_le_bytes([s[0], s[1], s[2], s[3]]) as usize;
    let count = u32_at(take(4)?);
    let mut params = Vec::with_capacity(count.min(1024));
    for _ in 0..count {
        let mut two = [String::new(), String::new()];
        for s in &mut two {
            let len = u32_at(take(4)?);
            *s = String::from_utf8(take(len)?.to_vec()).map_err(|_| bad())?;
        }
        let [n, v] = two;
        params.push((n, v));
    }
    let sql = String::from_utf8(b.to_vec()).map_err(|_| bad())?;
    Ok((sql, params))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_in_order() {
        assert_eq!(placeholders("SELECT {a:UInt8}, {b:String}, {a:UInt8}, '{x}' {"), vec!["a", "b"]);
        assert_eq!(
            typed_placeholders("SELECT {a:UInt8}, {m: Map(String, Array(UInt8)) }"),
            vec![("a".to_string(), "UInt8".to_string()), ("m".to_string(), "Map(String, Array(UInt8))".to_string())]
        );
    }

    #[test]
    fn texts() {
        assert_eq!(date_text(0), "1970-01-01");
        assert_eq!(date_text(-1), "1969-12-31");
        assert_eq!(timestamp_text(1_700_000_000_123, 3), "2023-11-14 22:13:20.123");
        assert_eq!(timestamp_text(-1, 0), "1969-12-31 23:59:59");
        assert_eq!(decimal_text("-5".into(), 2), "-0.05");
        assert_eq!(decimal_text("12345".into(), 2), "123.45");
    }

    #[test]
    fn nulls_and_lists() {
        use arrow_array::builder::{ListBuilder, StringBuilder};
        use arrow_array::{ListArray, NullArray};
        // Python's None binds as a Null array, which has no validity buffer.
        assert_eq!(render(&NullArray::new(1), 0).unwrap(), "\\N");
        let l = ListArray::from_iter_primitive::<Int32Type, _, _>([Some(vec![Some(1), None, Some(-3)]), None]);
        assert_eq!(render(&l, 0).unwrap(), "[1,NULL,-3]");
        assert_eq!(render(&l, 1).unwrap(), "\\N");
        let mut b = ListBuilder::new(StringBuilder::new());
        b.values().append_value("it's a \\ \t");
        b.values().append_null();
        b.append(true);
        assert_eq!(render(&b.finish(), 0).unwrap(), "['it\\'s a \\\\ \\t',NULL]");
    }

    #[test]
    fn partitions_round_trip() {
        let p = encode_partition("SELECT {a:String}", &[("a".into(), "x\ty".into())]);
        assert_eq!(decode_partition(&p).unwrap(), ("SELECT {a:String}".into(), vec![("a".into(), "x\ty".into())]));
        assert!(decode_partition(b"junk").is_err());
        assert!(decode_partition(&p[..p.len() - 20]).is_err());
    }
}
