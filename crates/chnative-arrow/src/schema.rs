//! Arrow fields → ClickHouse column types (for `CREATE TABLE` from an Arrow schema).

use arrow_schema::{DataType as A, Field, TimeUnit};

use crate::read::{CLICKHOUSE_TYPE_KEY, EXTENSION_NAME_KEY};
use crate::{Error, Result};

/// The ClickHouse type a column made for Arrow field `field` should have.
///
/// A field this crate produced carries its ClickHouse type in the metadata key
/// `clickhouse.type`, which is used as it is (so a table copied through Arrow gets
/// the same types). Otherwise:
///
/// | Arrow | ClickHouse |
/// |---|---|
/// | Int8…Int64, UInt8…UInt64, Float32, Float64 | the same |
/// | Float16 | Float32 |
/// | Boolean | Bool |
/// | Utf8, LargeUtf8, Utf8View, Binary, LargeBinary, BinaryView | String |
/// | FixedSizeBinary(16) with `arrow.uuid` | UUID |
/// | FixedSizeBinary(N) | FixedString(N) |
/// | Date32, Date64 | Date32 |
/// | Timestamp(unit, tz) | DateTime64(0/3/6/9, tz) |
/// | Duration(unit) | Int64 |
/// | Decimal32/64/128/256(P, S) | Decimal(P, S) |
/// | List, LargeList, FixedSizeList | Array |
/// | Map | Map |
/// | Struct | Tuple (named) |
/// | Dictionary(K, V) | LowCardinality(V) for strings, else V |
/// | Null | Nullable(Nothing) |
///
/// A nullable field becomes `Nullable(T)` where ClickHouse allows it (not for
/// Array, Map or Tuple, whose elements carry their own nullability).
pub fn clickhouse_type(field: &Field) -> Result<String> {
    if let Some(t) = field.metadata().get(CLICKHOUSE_TYPE_KEY) {
        return Ok(t.clone());
    }
    let base = base_type(field)?;
    let nullable_ok = !matches!(
        field.data_type(),
        A::List(_) | A::LargeList(_) | A::FixedSizeList(..) | A::Map(..) | A::Struct(_) | A::Null
    );
    Ok(match (field.is_nullable() && nullable_ok, field.data_type()) {
        (true, A::Dictionary(_, v)) if is_string(v) => "LowCardinality(Nullable(String))".into(),
        (true, _) => format!("Nullable({base})"),
        (false, _) => base,
    })
}

fn is_string(a: &A) -> bool {
    matches!(a, A::Utf8 | A::LargeUtf8 | A::Utf8View | A::Binary | A::LargeBinary | A::BinaryView)
}

fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        if c == '\'' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('\'');
    out
}

/// A name for a Tuple element: backquoted.
fn ident(s: &str) -> String {
    format!("`{}`", s.replace('\\', "\\\\").replace('`', "\\`"))
}

fn base_type(field: &Field) -> Result<String> {
    let unsupported =
        || Error::Usage(format!("no ClickHouse type for Arrow {} (field `{}`)", field.data_type(), field.name()));
    let digits = |u: &TimeUnit| match u {
        TimeUnit::Second => 0,
        TimeUnit::Millisecond => 3,
        TimeUnit::Microsecond => 6,
        TimeUnit::Nanosecond => 9,
    };
    Ok(match field.data_type() {
        A::Int8 => "Int8".into(),
        A::Int16 => "Int16".into(),
        A::Int32 => "Int32".into(),
        A::Int64 => "Int64".into(),
        A::UInt8 => "UInt8".into(),
        A::UInt16 => "UInt16".into(),
        A::UInt32 => "UInt32".into(),
        A::UInt64 => "UInt64".into(),
        A::Float16 | A::Float32 => "Float32".into(),
        A::Float64 => "Float64".into(),
        A::Boolean => "Bool".into(),
        a if is_string(a) => "String".into(),
        A::FixedSizeBinary(16) if field.metadata().get(EXTENSION_NAME_KEY).is_some_and(|n| n == "arrow.uuid") => {
            "UUID".into()
        }
        A::FixedSizeBinary(n) => format!("FixedString({n})"),
        A::Date32 | A::Date64 => "Date32".into(),
        A::Timestamp(u, tz) => match tz {
            Some(tz) => format!("DateTime64({}, {})", digits(u), quote(tz)),
            None => format!("DateTime64({})", digits(u)),
        },
        A::Duration(_) => "Int64".into(),
        A::Decimal32(p, s) | A::Decimal64(p, s) | A::Decimal128(p, s) | A::Decimal256(p, s) => {
            format!("Decimal({p}, {s})")
        }
        A::List(f) | A::LargeList(f) | A::FixedSizeList(f, _) => format!("Array({})", clickhouse_type(f)?),
        A::Map(entries, _) => match entries.data_type() {
            A::Struct(kv) if kv.len() == 2 => {
                format!("Map({}, {})", clickhouse_type(&kv[0])?, clickhouse_type(&kv[1])?)
            }
            _ => return Err(unsupported()),
        },
        A::Struct(fields) => {
            let parts: Result<Vec<String>> =
                fields.iter().map(|f| Ok(format!("{} {}", ident(f.name()), clickhouse_type(f)?))).collect();
            format!("Tuple({})", parts?.join(", "))
        }
        A::Dictionary(_, v) => {
            let inner = base_type(&Field::new(field.name(), v.as_ref().clone(), false))?;
            if is_string(v) {
                format!("LowCardinality({inner})")
            } else {
                inner
            }
        }
        A::Null => "Nullable(Nothing)".into(),
        _ => return Err(unsupported()),
    })
}
